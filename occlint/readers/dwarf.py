"""Just enough DWARF (versions 2 to 5) to read single DIEs and a line program's file table.

Nothing here walks a whole ``.debug_info``: :mod:`occlint.readers.debuginfo` finds the few
DIEs it needs and decodes only those. Every read is bounds-checked (``DwarfError``, which
callers turn into "no source location", never into a failed input).
"""

from __future__ import annotations

import functools
import posixpath
import struct
from dataclasses import dataclass, field

TAG_SUBPROGRAM = 0x2E
AT_NAME, AT_STMT_LIST, AT_LOW_PC, AT_HIGH_PC = 0x03, 0x10, 0x11, 0x12
AT_ABSTRACT_ORIGIN, AT_DECL_FILE, AT_DECL_LINE, AT_SPECIFICATION = 0x31, 0x3A, 0x3B, 0x47
AT_LINKAGE_NAME, AT_MIPS_LINKAGE_NAME = 0x6E, 0x2007
AT_STR_OFFSETS_BASE, AT_ADDR_BASE, AT_GNU_ADDR_BASE = 0x72, 0x73, 0x2133

FORM_ADDR, FORM_STRING, FORM_STRP, FORM_LINE_STRP = 0x01, 0x08, 0x0E, 0x1F
FORM_INDIRECT, FORM_IMPLICIT_CONST, FORM_UDATA, FORM_SDATA = 0x16, 0x21, 0x0F, 0x0D
FORM_DATA16 = 0x1E
ADDRX_FORMS = {0x1B: None, 0x29: 1, 0x2A: 2, 0x2B: 3, 0x2C: 4, 0x1F01: None}  # size or LEB
STRX_FORMS = {0x1A: None, 0x25: 1, 0x26: 2, 0x27: 3, 0x28: 4, 0x1F02: None}
REF_CU_FORMS = {0x11: 1, 0x12: 2, 0x13: 4, 0x14: 8, 0x15: None}  # offsets in the unit
# forms of a fixed size; "offset" / "address" mean the unit's offset / address size
_FIXED = {0x05: 2, 0x06: 4, 0x07: 8, 0x0B: 1, 0x0C: 1, 0x11: 1, 0x12: 2, 0x13: 4, 0x14: 8,
          0x19: 0, 0x1C: 4, 0x1D: 4, 0x1E: 16, 0x20: 8, 0x21: 0, 0x24: 8, 0x25: 1, 0x26: 2,
          0x27: 3, 0x28: 4, 0x29: 1, 0x2A: 2, 0x2B: 3, 0x2C: 4, 0x1F20: 4, 0x1F21: 4}
_OFFSET_SIZED = {0x0E, 0x10, 0x17, 0x1F}  # strp, ref_addr (v3+), sec_offset, line_strp
_LEB = {0x0D, 0x0F, 0x15, 0x1A, 0x1B, 0x22, 0x23, 0x1F01, 0x1F02}
_BLOCKS = {0x03: 2, 0x04: 4, 0x09: None, 0x0A: 1, 0x18: None}  # length size, None: LEB
MAX_ABBREVS = 1 << 16


class DwarfError(Exception):
    """Debug information this module cannot read (malformed, or a form it does not know)."""


def uleb(data: bytes, pos: int) -> tuple[int, int]:
    """(value, next position) of the unsigned LEB128 at ``pos``."""
    if pos < len(data) and data[pos] < 0x80:  # most values: one byte
        return data[pos], pos + 1
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise DwarfError("LEB128 runs past its data")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def encode_uleb(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _uint(data: bytes, pos: int, size: int) -> int:
    if pos + size > len(data):
        raise DwarfError("value runs past its section")
    return int.from_bytes(data[pos:pos + size], "little")


def cstring(data: bytes | memoryview, pos: int) -> str:
    """The NUL-terminated string at ``pos``."""
    return bytes(data[pos:string_end(data, pos)]).decode("utf-8", "replace")


def string_end(data: bytes | memoryview, pos: int, limit: int = 1 << 20) -> int:
    """Offset of the NUL that ends the string at ``pos`` (strings of ``limit`` bytes at most;
    a view is searched in growing windows, so that a large section is not copied)."""
    if isinstance(data, bytes):
        end = data.find(b"\0", pos, pos + limit) if pos < len(data) else -1
        if end < 0:
            raise DwarfError("string runs past its section")
        return end
    window = 512
    while pos < len(data):
        end = bytes(data[pos:pos + window]).find(b"\0")
        if end >= 0:
            return pos + end
        if pos + window >= len(data) or window >= limit:
            break
        window *= 8
    raise DwarfError("string runs past its section")


@dataclass(frozen=True)
class Abbrev:
    tag: int
    attrs: tuple[tuple[int, int, int], ...]  # (attribute, form, implicit constant)


@functools.lru_cache(maxsize=16)
def parse_abbrevs(data: bytes, offset: int) -> dict[int, Abbrev]:
    """The abbreviation table at ``offset`` of ``.debug_abbrev``: ``{code: Abbrev}`` (the
    code objects of one bundle often share theirs: the last few are kept)."""
    table: dict[int, Abbrev] = {}
    pos = offset
    while len(table) < MAX_ABBREVS:
        code, pos = uleb(data, pos)
        if code == 0:
            return table
        tag, pos = uleb(data, pos)
        pos += 1  # DW_CHILDREN_yes / _no
        attrs = []
        while True:
            name, pos = uleb(data, pos)
            form, pos = uleb(data, pos)
            const = 0
            if form == FORM_IMPLICIT_CONST:
                const, pos = _sleb(data, pos)
            if name == 0 and form == 0:
                break
            attrs.append((name, form, const))
        table[code] = Abbrev(tag, tuple(attrs))
    raise DwarfError("abbreviation table too large")


def _sleb(data: bytes, pos: int) -> tuple[int, int]:
    start = pos
    value, pos = uleb(data, pos)
    bits = 7 * (pos - start)
    return (value - (1 << bits) if value >> (bits - 1) & 1 else value), pos


@dataclass
class Unit:
    """One compilation unit's header, its abbreviations and its top DIE's base offsets."""
    offset: int  # of the unit header in .debug_info
    end: int
    version: int
    offset_size: int
    address_size: int
    die_start: int  # first DIE
    abbrevs: dict[int, Abbrev]
    top: dict[int, int | str] = field(default_factory=dict)

    def form_size(self, form: int) -> int | None:
        """Bytes a value of ``form`` takes in this unit, None when it varies."""
        if form in _FIXED:
            return _FIXED[form]
        if form in _OFFSET_SIZED:
            return self.offset_size if form != 0x10 or self.version > 2 else self.address_size
        if form == FORM_ADDR:
            return self.address_size
        return None


def parse_units(info: bytes, abbrev_section: bytes, limit: int = 1 << 16) -> list[Unit]:
    units = []
    pos = 0
    while pos + 11 <= len(info) and len(units) < limit:
        length = _uint(info, pos, 4)
        offset_size, head = (8, pos + 12) if length == 0xFFFFFFFF else (4, pos + 4)
        if offset_size == 8:
            length = _uint(info, pos + 4, 8)
        end = head + length
        version = _uint(info, head, 2)
        if not 2 <= version <= 5 or end > len(info):
            raise DwarfError(f"unit at {pos:#x}: version {version} or length unreadable")
        if version >= 5:
            unit_type, address_size = info[head + 2], info[head + 3]
            abbrev_offset = _uint(info, head + 4, offset_size)
            die_start = head + 4 + offset_size + (8 if unit_type in (2, 6) else 0) + \
                (offset_size if unit_type in (2, 6) else 0) + (8 if unit_type in (4, 5) else 0)
        else:
            abbrev_offset = _uint(info, head + 2, offset_size)
            address_size = info[head + 2 + offset_size]
            die_start = head + 3 + offset_size
        unit = Unit(pos, end, version, offset_size, address_size, die_start,
                    parse_abbrevs(abbrev_section, abbrev_offset))
        unit.top = read_die(info, unit, die_start)[1]
        units.append(unit)
        pos = end
    return units


def read_die(info: bytes, unit: Unit, pos: int) -> tuple[int, dict[int, int | str]]:
    """(tag, {attribute: raw value}) of the DIE at ``pos``: numbers as stored (indexes,
    offsets, constants), inline strings as str; blocks and expressions are skipped."""
    code, pos = uleb(info, pos)
    abbrev = unit.abbrevs.get(code)
    if abbrev is None:
        raise DwarfError(f"DIE with unknown abbreviation {code}")
    return abbrev.tag, read_attrs(info, unit, abbrev.attrs, pos)[0]


def read_attrs(data: bytes, unit: Unit, attrs: tuple[tuple[int, int, int], ...], pos: int
               ) -> tuple[dict[int, int | str], int]:
    """({attribute: raw value}, next position) of values laid out as ``attrs`` say."""
    values: dict[int, int | str] = {}
    for step in _plan(attrs, unit.version, unit.offset_size, unit.address_size):
        if isinstance(step, _Run):
            if pos + step.layout.size > len(data):
                raise DwarfError("DIE runs past its section")
            for name, value in zip(step.names, step.layout.unpack_from(data, pos), strict=True):
                values.setdefault(name, int.from_bytes(value, "little")
                                  if isinstance(value, bytes) else value)
            pos += step.layout.size
            continue
        name, form, const = step
        while form == FORM_INDIRECT:
            form, pos = uleb(data, pos)
        value: int | str
        size = unit.form_size(form)
        if form == FORM_IMPLICIT_CONST:
            value = const
        elif size is not None:
            value, pos = _uint(data, pos, size), pos + size
        elif form in _LEB:
            value, pos = (_sleb if form == FORM_SDATA else uleb)(data, pos)
        elif form == FORM_STRING:
            value = cstring(data, pos)
            pos = string_end(data, pos) + 1
        elif form in _BLOCKS:
            width = _BLOCKS[form]
            length, pos = uleb(data, pos) if width is None else \
                (_uint(data, pos, width), pos + width)
            value, pos = 0, pos + length
        else:
            raise DwarfError(f"unknown attribute form {form:#x}")
        values.setdefault(name, value)
    if pos > unit.end:
        raise DwarfError("DIE runs past its unit")
    return values, pos


@dataclass(frozen=True)
class _Run:
    """Consecutive attributes of fixed sizes, unpacked at once."""
    names: tuple[int, ...]
    layout: struct.Struct


_CODES = {1: "B", 2: "H", 4: "I", 8: "Q", 3: "3s", 16: "16s"}


@functools.lru_cache(maxsize=4096)
def _plan(attrs: tuple[tuple[int, int, int], ...], version: int, offset_size: int,
          address_size: int) -> tuple:
    """``attrs`` as runs of fixed-size values (:class:`_Run`) and the other attributes."""
    unit = Unit(0, 0, version, offset_size, address_size, 0, {})
    steps: list = []
    names: list[int] = []
    codes: list[str] = []
    for name, form, const in attrs:
        size = unit.form_size(form)
        if size in _CODES and form != FORM_IMPLICIT_CONST:
            names.append(name)
            codes.append(_CODES[size])
            continue
        if names:
            steps.append(_Run(tuple(names), struct.Struct("<" + "".join(codes))))
            names, codes = [], []
        steps.append((name, form, const))
    if names:
        steps.append(_Run(tuple(names), struct.Struct("<" + "".join(codes))))
    return tuple(steps)


# -- line program headers: the file table ---------------------------------------------------
LNCT_PATH, LNCT_DIRECTORY_INDEX = 1, 2


@dataclass
class FileTable:
    version: int
    directories: list[str]
    files: list[tuple[str, int]]  # (name, directory index)


def file_table(line: bytes | memoryview, offset: int, line_str: bytes | memoryview,
               debug_str: bytes | memoryview) -> FileTable:
    """The directories and files of the line program header at ``offset`` of .debug_line."""
    length = _uint(line, offset, 4)
    offset_size, pos = (8, offset + 12) if length == 0xFFFFFFFF else (4, offset + 4)
    version = _uint(line, pos, 2)
    if not 2 <= version <= 5:
        raise DwarfError(f"line program version {version}")
    pos += 2 + (2 if version >= 5 else 0)  # address and segment selector sizes
    address_size = _uint(line, pos - 2, 1) if version >= 5 else 8
    pos += offset_size  # header_length
    pos += 4 + (1 if version >= 4 else 0)  # min_inst, (max_ops), default_is_stmt, base, range
    opcode_base = _uint(line, pos, 1)
    pos += 1 + max(opcode_base - 1, 0)
    if version < 5:
        directories: list[str] = []
        while pos < len(line) and line[pos]:
            directories.append(cstring(line, pos))
            pos = string_end(line, pos) + 1
        pos += 1
        files = []
        while pos < len(line) and line[pos]:
            name = cstring(line, pos)
            pos = string_end(line, pos) + 1
            directory, pos = uleb(line, pos)
            pos = uleb(line, uleb(line, pos)[1])[1]  # modification time, length
            files.append((name, directory))
        return FileTable(version, directories, files)
    strings = _EntryReader(line, line_str, debug_str, offset_size, address_size)
    directories = [name for name, _ in strings.entries(pos)]
    files = strings.entries(strings.pos)
    return FileTable(version, directories, files)


class _EntryReader:
    """DWARF 5 directory / file-name entries, as their format descriptions say."""

    def __init__(self, line: bytes, line_str: bytes, debug_str: bytes, offset_size: int,
                 address_size: int):
        self.line, self.line_str, self.debug_str = line, line_str, debug_str
        self.unit = Unit(0, len(line), 5, offset_size, address_size, 0, {})
        self.pos = 0

    def entries(self, pos: int) -> list[tuple[str, int]]:
        line = self.line
        if pos >= len(line):
            raise DwarfError("line program header runs past its section")
        count_formats, pos = line[pos], pos + 1
        formats = []
        for _ in range(count_formats):
            kind, pos = uleb(line, pos)
            form, pos = uleb(line, pos)
            formats.append((kind, form))
        count, pos = uleb(line, pos)
        if count > len(line):
            raise DwarfError("line program header claims more entries than it holds")
        layout = tuple((kind, form, 0) for kind, form in formats)
        out = []
        for _ in range(count):
            values, pos = read_attrs(line, self.unit, layout, pos)
            out.append((self._string(values.get(LNCT_PATH, ""), formats),
                        int(values.get(LNCT_DIRECTORY_INDEX, 0))))
        self.pos = pos
        return out

    def _string(self, value: int | str, formats: list[tuple[int, int]]) -> str:
        if isinstance(value, str):
            return value
        form = dict(formats).get(LNCT_PATH)
        if form == FORM_LINE_STRP:
            return cstring(self.line_str, value)
        if form == FORM_STRP:
            return cstring(self.debug_str, value)
        raise DwarfError(f"file name in form {form:#x}")


def file_name(table: FileTable, index: int) -> str | None:
    """The path of file ``index`` (as DW_AT_decl_file / a line row numbers it), joined with
    its directory as the compiler recorded them (DWARF 5 numbers files from 0)."""
    version, files, dirs = table.version, table.files, table.directories
    i = index if version >= 5 else index - 1
    if not 0 <= i < len(files):
        return None
    name, dir_index = files[i]
    d = dir_index if version >= 5 else dir_index - 1
    directory = dirs[d] if 0 <= d < len(dirs) else None
    path = name if not directory or posixpath.isabs(name) else posixpath.join(directory, name)
    if version >= 5 and directory is not None and d != 0 and dirs and \
            not posixpath.isabs(path):  # relative to the compilation directory
        base = dirs[0]
        path = posixpath.join(base, path) if base not in ("", ".") else path
    return posixpath.normpath(path)

