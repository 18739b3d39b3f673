"""Raw device ELF images embedded in the data sections of host ELFs.

Some packagers put GPU code objects or cubins straight into a host library's read-only data
with no container around them: AOTInductor (``embed_kernel_binary``: cubins in ``.lrodata``
between ``__<kernel>_start`` / ``__<kernel>_end`` symbols), Mojo (over a thousand gfx942
code objects back to back in ``.rodata``, no symbols). This module finds them:

* :func:`data_sections`: the allocated, non-executable PROGBITS sections (``.rodata``,
  ``.lrodata``, ``.data.rel.ro``, ``.data``, ...) other than those named for GPU code;
* :func:`image_extent`: whether a ``\\x7fELF`` found there starts a plausible device image
  (ELF64 little-endian, e_machine AMDGPU 224 or CUDA 190, the header sizes, a section table
  inside the enclosing section, a string table for the section names) and how many bytes
  it spans; random ``\\x7fELF`` bytes fail these checks and are skipped silently;
* :func:`image_symbols`: ``__<name>_start`` / ``_end`` / ``_size`` symbols that name and
  bound an image, read only once an image was found;
* :func:`find_images`: every image of a section, back to back or at any alignment, outside
  the byte ranges already claimed by bundles or fatbins found there.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import NamedTuple

from occlint.errors import FormatError
from occlint.readers.elf import ELF_MAGIC, Section
from occlint.readers.span import Span

EM_AMDGPU = 224
EM_CUDA = 190
SHT_PROGBITS = 1
SHT_SYMTAB = 2
SHT_STRTAB = 3
SHT_NOBITS = 8
SHT_DYNSYM = 11
SHF_ALLOC = 0x2
SHF_EXECINSTR = 0x4
SHN_ABS = 0xFFF1
MAX_IMAGE_SECTIONS = 1 << 16
MAX_NAME = 4096  # bytes of a symbol name
MAX_CANDIDATES = 1 << 20  # '\x7fELF' matches looked at per input, valid or not
TABLE_RATIO = 2  # section-table bytes examined per input byte (+ TABLE_SLACK), all candidates
TABLE_SLACK = 16 << 20


class ScanBudget:
    """What the scan of one input may still look at: ``\x7fELF`` candidates, and bytes of
    candidate section tables. Without the second, fake headers at every offset of a section,
    each claiming a table over the rest of it, cost quadratic time."""

    __slots__ = ("candidates", "table_bytes")

    def __init__(self, input_size: int):
        self.candidates = MAX_CANDIDATES
        self.table_bytes = TABLE_RATIO * input_size + TABLE_SLACK

_EHDR = struct.Struct("<4sBBB9xHHIQQQIHHHHHH")
_SHDR = struct.Struct("<IIQQQQIIQQ")
_SYM = struct.Struct("<IBBHQQ")
BOUND_SUFFIXES = (b"_start\0", b"_end\0", b"_size\0")


class Image(NamedTuple):
    offset: int  # within its section
    span: Span


def data_sections(sections: list[Section], skip: tuple[str, ...]) -> list[Section]:
    """Allocated, non-executable PROGBITS sections, less those named in ``skip``."""
    return [s for s in sections
            if s.type == SHT_PROGBITS and s.flags & SHF_ALLOC and
            not s.flags & SHF_EXECINSTR and s.size and s.name not in skip and
            not s.name.startswith("__CLANG_OFFLOAD_BUNDLE__")]


def image_extent(section: Span, pos: int, budget: ScanBudget | None = None) -> int | None:
    """Bytes of the device ELF image at ``pos`` of ``section``, or None when no plausible
    one starts there. Everything the image's headers point at lies inside the section.
    ``budget``: charged the section table's bytes before they are read."""
    room = len(section) - pos
    if room < _EHDR.size:
        return None
    (magic, klass, data, version, _, machine, e_version, _, phoff, shoff, _, ehsize,
     phentsize, phnum, shentsize, shnum, shstrndx) = section.unpack(_EHDR, pos, "ELF header")
    if magic != ELF_MAGIC or klass != 2 or data != 1 or version != 1 or e_version != 1:
        return None
    if machine not in (EM_AMDGPU, EM_CUDA) or ehsize != _EHDR.size:
        return None
    if shentsize != _SHDR.size or not 0 < shnum <= MAX_IMAGE_SECTIONS or shstrndx >= shnum:
        return None
    end = shoff + shnum * _SHDR.size
    if shoff < _EHDR.size or end > room:
        return None
    if phnum:
        if phentsize != 56 or phoff < _EHDR.size or phoff + phnum * 56 > room:
            return None
        end = max(end, phoff + phnum * 56)
    if budget is not None:
        budget.table_bytes -= shnum * _SHDR.size
        if budget.table_bytes < 0:
            budget.candidates = 0  # the scan stops here
            return None
    table = section.bytes(pos + shoff, shnum * _SHDR.size, "section header table")
    headers = list(_SHDR.iter_unpack(table))
    for _, sh_type, _, _, offset, size, *_ in headers:
        if sh_type != SHT_NOBITS and size:
            if offset + size > room:
                return None
            end = max(end, offset + size)
    _, sh_type, _, _, offset, size, *_ = headers[shstrndx]
    if sh_type != SHT_STRTAB or not size or offset < _EHDR.size:
        return None
    names = section.bytes(pos + offset, size, "section name table")
    if names[:1] != b"\0" or names[-1:] != b"\0":
        return None
    if any(h[0] >= size for h in headers):
        return None
    return end


def image_symbols(span: Span, sections: list[Section], endian: str = "<"
                  ) -> dict[str, tuple[int, int | None, int | None]]:
    """name -> (file offset of ``__<name>_start``, of ``_end`` or None, ``_size`` or None),
    from the symbol tables of a 64-bit host ELF (empty for 32-bit ones). Only names of
    that form are decoded: a large library's symbol table is walked once, cheaply."""
    if not sections or len(span) < 5 or span.bytes(4, 1) != b"\x02":
        return {}
    sym = struct.Struct(endian + "IBBHQQ")
    found: dict[str, dict[str, int]] = {}
    for table in sections:
        if table.type not in (SHT_SYMTAB, SHT_DYNSYM) or table.entsize != sym.size:
            continue
        if not 0 <= table.link < len(sections):
            continue
        strtab = sections[table.link]
        try:
            names = span.bytes(strtab.offset, strtab.size, "string table")
            symbols = span.bytes(table.offset, table.size - table.size % sym.size,
                                 "symbol table")
        except FormatError:  # a broken table names nothing
            continue
        ends = _bound_ends(names)  # NULs that end a name in _start, _end or _size
        if not ends:
            continue
        for st_name, _, _, shndx, value, _ in sym.iter_unpack(symbols):
            if names[st_name:st_name + 2] != b"__":
                continue
            nul = names.find(b"\0", st_name, st_name + MAX_NAME)
            kind = ends.get(nul)
            if kind is None:
                continue
            name = names[st_name + 2:names.rfind(b"_", st_name, nul)]
            if kind == "size":
                where = value if shndx == SHN_ABS else None
            elif 0 < shndx < len(sections):
                home = sections[shndx]
                where = home.offset + value - home.addr \
                    if home.addr <= value <= home.addr + home.size else None
            else:
                where = None
            if name and where is not None:
                found.setdefault(name.decode("utf-8", "replace"), {})[kind] = where
    return {name: (marks["start"], marks.get("end"), marks.get("size"))
            for name, marks in found.items() if "start" in marks}


def _bound_ends(names: bytes) -> dict[int, str]:
    """Offset of the NUL ending each name of ``names`` that ends in _start, _end or _size
    -> that suffix."""
    ends = {}
    for suffix in BOUND_SUFFIXES:
        at = names.find(suffix)
        while at >= 0:
            ends[at + len(suffix) - 1] = suffix[1:-1].decode()
            at = names.find(suffix, at + 1)
    return ends


def find_images(section: Span, claimed: list[tuple[int, int]], budget: ScanBudget
                ) -> Iterator[Image]:
    """Every device image of ``section``. ``claimed``: absolute byte ranges already read as
    containers (their cubins are not images of their own); ``budget``: what the scan of the
    input may still look at (shared by its sections)."""
    pos = 0
    while budget.candidates > 0:
        pos = section.find(ELF_MAGIC, pos)
        if pos < 0:
            return
        budget.candidates -= 1
        absolute = section.start + pos
        inside = next((end for start, end in claimed if start <= absolute < end), None)
        if inside is not None:
            pos = inside - section.start
            continue
        extent = image_extent(section, pos, budget)
        if extent is None:
            pos += 1
            continue
        yield Image(pos, section.sub(pos, extent, "embedded ELF image"))
        pos += extent


def images_in(span: Span, table: list[Section], claimed: list[tuple[int, int]]
              ) -> Iterator[tuple[str, Span, Image]]:
    """(section name, section span, Image) for every device ELF image in the data sections
    of the host ELF in ``span`` (see occlint.readers.embedded)."""
    from occlint.readers.host import GPU_SECTIONS, no_overlap

    chosen = [(s.name, span.sub(s.offset, s.size, f"section {s.name!r}"))
              for s in data_sections(table, GPU_SECTIONS)]
    no_overlap(chosen)
    budget = ScanBudget(len(span))
    for name, section in chosen:
        for image in find_images(section, claimed, budget):
            yield name, section, image


def read_embedded(reader, span: Span, table: list[Section]) -> bool:
    """Device ELF images stored raw in the host's data sections (occlint.readers.embedded),
    each an entry ``<section>/<name>`` (named by its ``__<name>_start`` symbol) or
    ``<section>+<offset>``. True when there was one."""
    images = list(images_in(span, table, reader.claimed))
    if not images:
        return False
    endian = "<" if span.bytes(5, 1) == b"\x01" else ">"
    symbols = {start: (name, end, size) for name, (start, end, size)
               in image_symbols(span, table, endian).items()}
    for section_name, section, image in images:
        start = section.start - span.start + image.offset  # in the file
        name, end, size = symbols.get(start, (None, None, None))
        entry = f"{section_name}/{name}" if name else f"{section_name}+{image.offset:#x}"
        try:
            bound = size if size is not None else (end - start if end is not None
                                                   else None)
            if bound is not None and bound < len(image.span):
                raise FormatError(f"embedded device image of {len(image.span)} bytes "
                                  f"runs past its __{name}_end / _size bound ({bound})")
            reader.read(image.span, entry, 1)
        except FormatError as exc:
            reader.error(str(exc), entry)
    return True
