"""Host executables, shared libraries and objects: find the sections holding GPU code.

Host ELFs come in every class and byte order; only their section headers and names are
decoded here (bounds-checked, linear in the file size). The section contents stay in the
memory-mapped file and are handed on as spans.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from occlint.errors import FormatError
from occlint.readers.elf import NAME_RATIO, Section
from occlint.readers.span import Span

GPU_SECTIONS = (".hip_fatbin", ".llvm.offloading", ".nv_fatbin", "__nv_relfatbin")
SCANNED_SECTIONS = (".data", ".rodata", ".data.rel.ro", ".ldata", ".lrodata")
SCAN_MAGICS = (b"__CLANG_OFFLOAD_BUNDLE__", b"CCOB", b"\x50\xed\x55\xba")
SHT_NOBITS = 8


MAX_NAME = 4096


def section_headers(span: Span) -> list[tuple[str, int, int, int]]:
    """(name, sh_type, sh_offset, sh_size) of every section (see :func:`section_table`)."""
    return [(s.name, s.type, s.offset, s.size) for s in section_table(span)]


def section_table(span: Span) -> list[Section]:
    """Every section header of an ELF of any class and byte order. Every read is
    bounds-checked and names are read at most MAX_NAME bytes each, so the work is linear in
    the size of the file (pyelftools reads each section name up to the next NUL anywhere in
    the file: quadratic on a hostile string table)."""
    ident = span.bytes(0, 16, "ELF identification") if len(span) >= 16 else b""
    if len(ident) < 16 or ident[4] not in (1, 2) or ident[5] not in (1, 2):
        raise FormatError("malformed ELF: truncated, or unknown class / data encoding")
    endian = "<" if ident[5] == 1 else ">"
    if ident[4] == 2:
        (shoff,) = span.unpack(struct.Struct(endian + "Q"), 40, "ELF header")
        shentsize, shnum, shstrndx = span.unpack(struct.Struct(endian + "HHH"), 58,
                                                 "ELF header")
        shdr = struct.Struct(endian + "IIQQQQIIQQ")
    else:
        (shoff,) = span.unpack(struct.Struct(endian + "I"), 32, "ELF header")
        shentsize, shnum, shstrndx = span.unpack(struct.Struct(endian + "HHH"), 46,
                                                 "ELF header")
        shdr = struct.Struct(endian + "IIIIIIIIII")
    if shoff == 0:
        return []
    if shentsize != shdr.size:
        raise FormatError(f"malformed ELF: section header size {shentsize}, expected "
                          f"{shdr.size}")
    first = span.unpack(shdr, shoff, "section header")
    if shnum == 0:
        shnum = first[5]  # extended numbering: the count is section 0's sh_size
    if shstrndx == 0xFFFF:  # SHN_XINDEX: the index is section 0's sh_link
        shstrndx = first[6]
    table = span.bytes(shoff, shnum * shdr.size, "section header table")
    raw = list(shdr.iter_unpack(table))
    names = b""
    if 0 < shstrndx < len(raw) and raw[shstrndx][1] != SHT_NOBITS:
        strtab = raw[shstrndx]
        names = span.bytes(strtab[4], strtab[5], "section name table")
    out = []
    left = NAME_RATIO * len(names) + (1 << 20)  # memory stays proportional to the file
    for index, (name_off, *fields) in enumerate(raw):
        end = names.find(b"\0", name_off, name_off + MAX_NAME) if name_off < len(names) else -1
        name = names[name_off:end].decode("utf-8", "replace") if end >= 0 else ""
        left -= len(name)
        if left < 0:
            raise FormatError("malformed ELF: section names add up to far more than the name "
                              "table holds")
        out.append(Section(index, name, *fields))
    return out


def gpu_sections(span: Span, table: list[Section] | None = None
                 ) -> Iterator[tuple[str, Span, bool]]:
    """(section name, contents, found-by-scanning) for every section that may hold GPU code.

    Sections named for GPU code come first; then data sections that contain a bundle or
    fatbin magic (NVIDIA libraries keep many fatbins in .data) — those magics are only
    candidates, validated by the container readers. Sections that overlap are an error
    (each would be read again: a few bytes of section headers could multiply the work).
    ``table``: the ELF's section table when already read."""
    if table is None:
        table = section_table(span)
    named, scanned = [], []
    for _, name, sh_type, _, _, offset, size, *_ in table:
        if sh_type == SHT_NOBITS or size == 0:
            continue
        if name in GPU_SECTIONS or name.startswith("__CLANG_OFFLOAD_BUNDLE__"):
            named.append((name, offset, size))
        elif name in SCANNED_SECTIONS:
            scanned.append((name, offset, size))
    chosen = [(name, span.sub(offset, size, f"section {name!r}"), False)
              for name, offset, size in named]
    for name, offset, size in scanned:
        section = span.sub(offset, size, f"section {name!r}")
        if any(section.find(magic) >= 0 for magic in SCAN_MAGICS):
            chosen.append((name, section, True))
    no_overlap([(name, section) for name, section, _ in chosen])
    yield from chosen


def no_overlap(sections: list[tuple[str, Span]]) -> None:
    """FormatError when two of these sections share bytes (each would be read again)."""
    previous = None
    for name, section in sorted(sections, key=lambda c: (c[1].start, c[1].end)):
        if previous is not None and section.start < previous[1].end:
            raise FormatError(f"sections {previous[0]!r} and {name!r} overlap: corrupted or "
                              "hostile")
        previous = (name, section)
