"""A lean reader for the 64-bit little-endian ELF files GPUs use.

AMD code objects (EM_AMDGPU) and NVIDIA cubins (EM_CUDA) are always ELFCLASS64/LSB. This
reader decodes only what occlint needs (header, section headers, symbols, notes), lazily
and with every offset bounds-checked; it is several times faster than a general reader on
the many small ELFs of a GPU library. Host executables and libraries, which can be of any
class and byte order, are read with pyelftools (occlint.readers.host).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from functools import cached_property
from typing import Any, NamedTuple

from occlint.errors import FormatError
from occlint.readers.span import Span

ELF_MAGIC = b"\x7fELF"
EM_AMDGPU = 224
EM_CUDA = 190
SHT_SYMTAB = 2
SHT_NOTE = 7
SHT_NOBITS = 8
PT_NOTE = 4
SHF_COMPRESSED = 0x800
ELF_COMPRESSION = {1: "zlib", 2: "zstd"}  # Elf64_Chdr.ch_type: ELFCOMPRESS_ZLIB / _ZSTD

_EHDR = struct.Struct("<4sBBBBB7xHHIQQQIHHHHHH")
_SHDR = struct.Struct("<IIQQQQIIQQ")
_PHDR = struct.Struct("<IIQQQQQQ")
_SYM = struct.Struct("<IBBHQQ")
_NOTE = struct.Struct("<III")
_CHDR = struct.Struct("<IIQQ")  # Elf64_Chdr: ch_type, ch_reserved, ch_size, ch_addralign
MAX_SECTIONS = 1 << 16
MAX_SYMBOLS = 1 << 22
NAME_RATIO = 16  # decoded symbol-name bytes per string-table byte (plus 1 MiB)


class Section(NamedTuple):
    index: int
    name: str
    type: int
    flags: int
    addr: int
    offset: int
    size: int
    link: int
    info: int
    addralign: int
    entsize: int


class Symbol(NamedTuple):
    index: int
    name: str
    info: int
    other: int
    shndx: int
    value: int
    size: int

    @property
    def type(self) -> int:
        return self.info & 0xF

    @property
    def bind(self) -> int:
        return self.info >> 4


class ElfImage:
    """One ELF64 little-endian image held in a :class:`Span`."""

    def __init__(self, span: Span, machine: int | None = None, what: str = "ELF file"):
        self.span = span
        if not span.startswith(ELF_MAGIC):
            raise FormatError("not an ELF file")
        (_, ei_class, ei_data, _, self.osabi, self.abi_version, self.type, self.machine, _,
         _, self.phoff, self.shoff, self.flags, _, self.phentsize, self.phnum,
         self.shentsize, self.shnum, self.shstrndx) = span.unpack(_EHDR, 0, "ELF header")
        if ei_class != 2 or ei_data != 1:
            raise FormatError(f"{what} is not a 64-bit little-endian ELF")
        if machine is not None and self.machine != machine:
            raise FormatError(f"{what} has e_machine {self.machine}, expected {machine}")
        if self.shnum and self.shentsize != _SHDR.size:
            raise FormatError(f"{what}: unexpected section header size {self.shentsize}")
        if self.phnum and self.phentsize != _PHDR.size:
            raise FormatError(f"{what}: unexpected program header size {self.phentsize}")
        span._check(self.shoff, self.shnum * _SHDR.size, "section header table")
        if self.phnum and self.phoff + (self.phnum - 1) * _PHDR.size < len(span) < \
                self.phoff + self.phnum * _PHDR.size:
            # its last entry cut short: NVRTC's cubins as CuPy's kernel cache keeps them end
            # one byte into it (the driver loads them); only whole entries are read
            self.phnum -= 1
        span._check(self.phoff, self.phnum * _PHDR.size, "program header table")

    @cached_property
    def sections(self) -> list[Section]:
        if not self.shnum:
            return []
        table = self.span.bytes(self.shoff, self.shnum * _SHDR.size, "section header table")
        raw = list(_SHDR.iter_unpack(table))
        names = b""
        if 0 < self.shstrndx < len(raw):
            strtab = raw[self.shstrndx]
            if strtab[1] != SHT_NOBITS:
                names = self.span.bytes(strtab[4], strtab[5], "section name table")
        out = []
        name_at = _Names(names)
        new = tuple.__new__
        left = NAME_RATIO * len(names) + (1 << 20)  # as for symbol names (see _symbols)
        for index, row in enumerate(raw):
            name = name_at.get(row[0])
            rest = row[1:]
            left -= len(name)
            if left < 0:
                raise FormatError("section names add up to far more than the name table "
                                  "holds: corrupted or hostile")
            out.append(new(Section, (index, name, *rest)))  # the fast NamedTuple path
        return out

    @cached_property
    def _by_name(self) -> dict[str, Section]:
        by_name: dict[str, Section] = {}
        for section in self.sections:
            by_name.setdefault(section.name, section)
        return by_name

    def section(self, name: str) -> Section | None:
        return self._by_name.get(name)

    def section_span(self, section: Section) -> Span:
        if section.type == SHT_NOBITS:
            return Span(b"")
        return self.span.sub(section.offset, section.size, f"section {section.name!r}")

    def compression(self, section: Section) -> tuple[str, int, Span] | None:
        """(method, decompressed size, the compressed stream) of an ``SHF_COMPRESSED``
        section (debug sections that ``-gz`` / ``--compress-debug-sections`` compressed);
        None for a section stored as it is."""
        if not section.flags & SHF_COMPRESSED or section.type == SHT_NOBITS:
            return None
        span = self.section_span(section)
        kind, _, size, _ = span.unpack(_CHDR, 0, "compression header")
        if kind not in ELF_COMPRESSION:
            raise FormatError(f"section {section.name!r}: unknown compression type {kind}")
        return ELF_COMPRESSION[kind], size, span.sub(_CHDR.size, len(span) - _CHDR.size)

    def contents_size(self, section: Section) -> int:
        """The size of the section's contents, once decompressed if compressed."""
        compressed = self.compression(section)
        return section.size if compressed is None else compressed[1]

    def symbols(self) -> list[Symbol]:
        """Every symbol of the first SHT_SYMTAB (decoded once, then cached)."""
        return self._symbols

    @cached_property
    def _symbols(self) -> list[Symbol]:
        return self._named(None)

    def symbols_where(self, keep: Callable[[int, int, int, int], Any]) -> list[Symbol]:
        """The symbols of the first SHT_SYMTAB whose ``(st_info, st_other, st_shndx,
        st_size)`` ``keep`` accepts, in table order, as :meth:`symbols` gives them; only
        their names are decoded (a cubin needs the names of its few entry functions; a code
        object linked from assembly, such as rocBLAS's Tensile libraries, holds a million
        local labels for some thousands of kernels)."""
        if "_symbols" in self.__dict__:  # all decoded already
            return [s for s in self._symbols if keep(s.info, s.other, s.shndx, s.size)]
        return self._named(keep)

    def _named(self, keep: Callable[[int, int, int, int], Any] | None) -> list[Symbol]:
        """The symbols ``keep`` accepts (None: all), names decoded within a budget."""
        data, name_at = self._symbol_table
        out = []
        # Names may overlap (suffix sharing) but not much more: without a bound, symbols that
        # all name one 4 KiB string would take ~170 times the file's size in memory.
        left = NAME_RATIO * len(name_at.table) + (1 << 20)
        new = tuple.__new__  # the fast NamedTuple path
        for i, (name_off, info, other, shndx, value, size) in enumerate(_SYM.iter_unpack(data)):
            if keep is not None and not keep(info, other, shndx, size):
                continue
            name = name_at.symbol(name_off) if name_off else ""
            left -= len(name)
            if left < 0:
                raise FormatError("symbol names add up to far more than the string table holds: "
                                  "corrupted or hostile")
            out.append(new(Symbol, (i, name, info, other, shndx, value, size)))
        return out

    @cached_property
    def _symbol_table(self) -> tuple[bytes, _Names]:
        """The entries of the first SHT_SYMTAB (raw: a million of them decoded would hold
        hundreds of MB) and its string table."""
        symtab = next((s for s in self.sections if s.type == SHT_SYMTAB), None)
        if symtab is None:
            return b"", _Names(b"")
        if symtab.entsize not in (0, _SYM.size):
            raise FormatError(f"unexpected symbol size {symtab.entsize}")
        count = symtab.size // _SYM.size
        if count > MAX_SYMBOLS:
            raise FormatError(f"symbol table claims {count} symbols")
        if not 0 <= symtab.link < len(self.sections):
            raise FormatError("symbol table links to a missing string table")
        strtab = self.section_span(self.sections[symtab.link])
        strings = strtab.bytes(0, len(strtab), "string table")
        return self.section_span(symtab).bytes(0, count * _SYM.size, "symbol"), _Names(strings)

    def notes(self) -> Iterator[tuple[str, int, bytes]]:
        """(owner, type, descriptor) of every note, from PT_NOTE segments else SHT_NOTE sections."""
        spans: list[Span] = []
        for i in range(self.phnum):
            p_type, _, p_offset, _, _, p_filesz, _, _ = self.span.unpack(
                _PHDR, self.phoff + i * _PHDR.size, "program header")
            if p_type == PT_NOTE:
                spans.append(self.span.sub(p_offset, p_filesz, "note segment"))
        if not spans:
            spans = [self.section_span(s) for s in self.sections if s.type == SHT_NOTE]
        for span in spans:
            yield from _iter_notes(span)

    def read_at_address(self, section: Section, address: int, size: int) -> bytes:
        """``size`` bytes at virtual ``address`` inside ``section``."""
        offset = address - section.addr
        if offset < 0 or offset + size > section.size:
            raise FormatError(f"address {address:#x} is outside section {section.name!r}")
        return self.section_span(section).bytes(offset, size, "symbol data")


class _Names:
    """Names out of an ELF string table. A table of ASCII (as compilers write them) is
    decoded once and sliced; another is decoded name by name (UTF-8, errors replaced)."""

    def __init__(self, table: bytes):
        self.table = table
        self.text = table.decode("ascii") if table.isascii() else None

    def get(self, offset: int) -> str:
        """The section name at ``offset``; "" when it runs past the table."""
        if self.text is not None:
            end = self.text.find("\0", offset)
            return self.text[offset:end] if end >= 0 else ""
        end = self.table.find(b"\0", offset) if offset < len(self.table) else -1
        return self.table[offset:end].decode("utf-8", "replace") if end >= 0 else ""

    def symbol(self, offset: int, limit: int = 4096) -> str:
        """The symbol name at ``offset`` (as :func:`_cstring` reads it)."""
        if self.text is not None:
            end = self.text.find("\0", offset, offset + limit)
            if end >= 0:
                return self.text[offset:end]
        return _cstring(self.table, offset, "symbol name", limit)


def _cstring(table: bytes, offset: int, what: str, limit: int = 4096) -> str:
    """A NUL-terminated string of a string table (as :meth:`Span.cstring`, on bytes)."""
    if offset > len(table):
        raise FormatError(f"{what} at offset {offset:#x} (+0 bytes) lies beyond the end of the "
                          f"data ({len(table)} bytes): truncated or corrupted")
    end = table.find(b"\0", offset, offset + limit)
    if end < 0:
        raise FormatError(f"{what} at offset {offset:#x} is not NUL-terminated")
    return table[offset:end].decode("utf-8", "replace")


def _iter_notes(span: Span) -> Iterator[tuple[str, int, bytes]]:
    pos = 0
    while pos + _NOTE.size <= len(span):
        namesz, descsz, ntype = span.unpack(_NOTE, pos, "note header")
        pos += _NOTE.size
        name_end = pos + namesz
        desc_pos = pos + ((namesz + 3) & ~3)
        if name_end > len(span) or desc_pos + descsz > len(span):
            raise FormatError("note extends beyond its section: truncated or corrupted")
        owner = span.bytes(pos, namesz).rstrip(b"\0").decode("utf-8", "replace")
        yield owner, ntype, span.bytes(desc_pos, descsz, "note")
        pos = desc_pos + ((descsz + 3) & ~3)
