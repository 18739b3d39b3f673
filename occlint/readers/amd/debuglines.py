"""Kernel source lines of an AMD code object from its DWARF, without walking every DIE.

A kernel's definition is a ``DW_TAG_subprogram`` DIE whose ``DW_AT_low_pc`` is the kernel
symbol's address. ``.debug_info`` of a ROCm library's code object is megabytes of DIEs;
decoding them all in Python costs seconds per code object. Instead, for each subprogram
abbreviation that carries ``DW_AT_low_pc`` after attributes of a fixed size, one regular
expression finds every place where that abbreviation's code is followed (at the right
distance) by a value of the form ``DW_AT_low_pc`` uses; the value is compared with the
kernels' addresses (as ``.debug_addr`` indexes them, for ``DW_FORM_addrx``), and only the
matching DIEs are decoded and checked (tag, address). Their ``DW_AT_decl_file`` /
``DW_AT_decl_line`` (or those of the DIE they complete, through ``DW_AT_specification`` /
``DW_AT_abstract_origin``) are the kernel's source line, as llvm-dwarfdump prints them.

Raises :class:`~occlint.readers.dwarf.DwarfError` when the DWARF is not laid out so (an
abbreviation with a variable-size attribute before ``DW_AT_low_pc``): the caller may then
walk the DIEs, for small debug information only.
"""

from __future__ import annotations

import array
import bisect
import re
import sys
from collections.abc import Iterable

from occlint.errors import FormatError
from occlint.readers import dwarf
from occlint.readers.amd.bundle import decompress_capped
from occlint.readers.debuginfo import MAX_DEBUG_BYTES
from occlint.readers.dwarf import DwarfError, FileTable, Unit
from occlint.readers.elf import ElfImage
from occlint.readers.span import Span

STT_FUNC = 2
MAX_HOPS = 4  # DW_AT_specification / DW_AT_abstract_origin followed at most this often
DECODES_PER_KERNEL, DECODES_BASE = 16, 4096  # candidate DIEs decoded per unit, at most
SCANS_MOST = 32  # kernels whose .debug_addr indexes are searched for; more: a dict per unit
DEBUG_SECTIONS = (".debug_info", ".debug_abbrev", ".debug_addr", ".debug_line",
                  ".debug_line_str", ".debug_str", ".debug_str_offsets")
VIEWED = {".debug_line", ".debug_str", ".debug_line_str"}
NAME_ATTRIBUTES = (dwarf.AT_LINKAGE_NAME, dwarf.AT_MIPS_LINKAGE_NAME, dwarf.AT_NAME)
_ULEB_VALUE = rb"([\x80-\xff]{0,9}[\x00-\x7f])"
_DATA_SIZES = {0x0B: 1, 0x05: 2, 0x06: 4, 0x07: 8}  # DW_FORM_data1 / 2 / 4 / 8


class _Sections:
    """The debug sections: those read whole or often copied, the others views into the file
    (a few bytes of each are read: copying them would cost more than the search); compressed
    ones (``SHF_COMPRESSED``, as Debian trixie's ROCm libraries have them) decompressed."""

    def __init__(self, elf: ElfImage):
        self.data: dict[str, bytes | memoryview] = {}
        self._places: dict[bytes, list[int]] = {}
        for name in DEBUG_SECTIONS:
            section = elf.section(name)
            span = elf.section_span(section) if section is not None else None
            compressed = elf.compression(section) if section is not None else None
            if span is None:
                self.data[name] = b""
            elif compressed is not None:
                self.data[name] = _decompressed(name, *compressed)
            elif name not in VIEWED:
                self.data[name] = span.bytes(0, len(span), name)
            else:
                self.data[name] = span.view(0, len(span), name)

    def __getitem__(self, name: str) -> bytes:
        return self.data[name]  # type: ignore[return-value]  # bytes-like either way

    def places(self, value: bytes) -> list[int]:
        """Every offset in .debug_addr where ``value`` starts (searched once: the units'
        tables are parts of one section)."""
        places = self._places.get(value)
        if places is None:
            data, places, at = self[".debug_addr"], [], -1
            while (at := data.find(value, at + 1)) >= 0:
                places.append(at)
            self._places[value] = places
        return places


def _decompressed(name: str, method: str, size: int, stream: Span) -> bytes:
    """A compressed section's contents: all ``size`` bytes its header announces, at most
    ``MAX_DEBUG_BYTES`` (memory stays bounded whatever the header claims)."""
    if size > MAX_DEBUG_BYTES:
        raise DwarfError(f"{name}: {size} bytes once decompressed")
    try:
        data, ended, _ = decompress_capped(method, stream.view(), size)
    except FormatError as exc:
        raise DwarfError(f"{name}: {exc}") from None
    if not ended or len(data) != size:
        raise DwarfError(f"{name}: decompressed to other than the {size} bytes announced")
    return data


def kernel_lines(elf: ElfImage, names: set[str] | None = None) -> dict[str, tuple[str, int]]:
    """``{symbol: (file, line)}`` of the function symbols (of ``names``, when given)."""
    by_address: dict[int, list[str]] = {}
    sizes: dict[int, int] = {}
    for symbol in elf.symbols_where(
            lambda info, other, shndx, size: info & 0xF == STT_FUNC and shndx):
        if names is None or symbol.name in names:
            by_address.setdefault(symbol.value, []).append(symbol.name)
            sizes.setdefault(symbol.value, symbol.size)
    if not by_address:
        return {}
    sections = _Sections(elf)
    out: dict[str, tuple[str, int]] = {}
    for unit in dwarf.parse_units(sections[".debug_info"], sections[".debug_abbrev"]):
        _unit_lines(sections, unit, by_address, sizes, out)
    return out


def _unit_lines(sections: _Sections, unit: Unit, by_address: dict[int, list[str]],
                sizes: dict[int, int], out: dict[str, tuple[str, int]]) -> None:
    info = sections[".debug_info"]
    searches = []
    indexes: dict[int, int] | None = None  # .debug_addr indexes of the kernels' addresses
    for code, abbrev in unit.abbrevs.items():
        layout = _low_pc_layout(unit, abbrev) if abbrev.tag == dwarf.TAG_SUBPROGRAM else None
        if layout is not None:
            prefix, form, length = layout
            if form != dwarf.FORM_ADDR and indexes is None:  # once per unit, not per abbrev
                indexes = _address_indexes(sections, unit, by_address)
            wanted = _wanted_values(unit, form, by_address, indexes or {})
            if wanted:
                pattern = re.compile(re.escape(dwarf.encode_uleb(code)) + b".{%d}" % prefix +
                                     _value_pattern(unit, form) + b"(?=(.{%d}))" % length, re.S)
                searches.append((pattern, wanted, length))
    located = _Located(sections, unit, by_address, out)
    tried: set[int] = set()
    # Matches do not overlap (one pass in C); each takes the code and the address (the
    # high_pc is only looked at), so that a false match rarely hides a true one.
    for pattern, wanted, length in searches:
        for match in pattern.finditer(info, unit.die_start, unit.end):
            address = wanted.get(match.group(1))
            if address is not None and _sized(match, length, sizes[address]):
                tried.add(match.start())
                located.visit(match.start(), address)
    if all(located.found.issuperset(wanted.values()) for _, wanted, _ in searches):
        return
    for pattern, wanted, length in searches:  # a false match may hide one that overlaps it
        pos = unit.die_start
        while (match := pattern.search(info, pos, unit.end)) is not None:
            pos = match.start() + 1
            address = wanted.get(match.group(1))
            if address is not None and match.start() not in tried and \
                    _sized(match, length, sizes[address]):
                located.visit(match.start(), address)


def _sized(match: re.Match, length: int, size: int) -> bool:
    """Is the DW_AT_high_pc constant after the low_pc (if the DIE has one) the symbol's
    size? (A cheap test that rules out most matches inside other DIEs.)"""
    return not length or size == int.from_bytes(match.group(2), "little")


class _Located:
    """The source lines of the DIEs found so far, by kernel symbol."""

    def __init__(self, sections: _Sections, unit: Unit, by_address: dict[int, list[str]],
                 out: dict[str, tuple[str, int]]):
        self.sections, self.unit, self.by_address, self.out = sections, unit, by_address, out
        self.found: set[int] = set()
        self.budget = DECODES_BASE + DECODES_PER_KERNEL * len(by_address)
        self.table: FileTable | None = None
        self.paths: dict[int, str | None] = {}

    def visit(self, pos: int, address: int) -> None:
        """Record the DIE at ``pos`` if it is the definition of the kernel at ``address``."""
        self.budget -= 1
        if self.budget < 0:  # hostile: every match a candidate
            raise DwarfError("too many candidate DIEs")
        names = self.by_address[address]
        location = _definition(self.sections, self.unit, pos, names)
        if location is None:
            return
        self.found.add(address)
        file, line = location
        if file not in self.paths:
            if self.table is None:
                self.table = _file_table(self.sections, self.unit)
            self.paths[file] = dwarf.file_name(self.table, file)
        path = self.paths[file]
        if path is not None:
            for name in names:
                self.out.setdefault(name, (path, line))


def _low_pc_layout(unit: Unit, abbrev: dwarf.Abbrev) -> tuple[int, int, int] | None:
    """(bytes before DW_AT_low_pc's value, its form, the size of a DW_AT_high_pc constant
    right after it (the function's size in bytes; 0: none)); None when there is no low_pc."""
    prefix = 0
    for i, (name, form, _) in enumerate(abbrev.attrs):
        if name == dwarf.AT_LOW_PC:
            if form != dwarf.FORM_ADDR and form not in dwarf.ADDRX_FORMS:
                raise DwarfError(f"DW_AT_low_pc in form {form:#x}")
            after = abbrev.attrs[i + 1] if i + 1 < len(abbrev.attrs) else (0, 0, 0)
            length = _DATA_SIZES.get(after[1], 0) if after[0] == dwarf.AT_HIGH_PC else 0
            return prefix, form, length
        size = unit.form_size(form)
        if size is None:
            raise DwarfError("an attribute of variable size precedes DW_AT_low_pc")
        prefix += size
    return None


def _value_pattern(unit: Unit, form: int) -> bytes:
    size = unit.address_size if form == dwarf.FORM_ADDR else dwarf.ADDRX_FORMS[form]
    return _ULEB_VALUE if size is None else b"(.{%d})" % size


def _wanted_values(unit: Unit, form: int, addresses: Iterable[int],
                   indexes: dict[int, int]) -> dict[bytes, int]:
    """{the bytes DW_AT_low_pc holds in ``form`` for an address: the address}
    (``indexes``: the addresses' first indexes in the unit's .debug_addr table, for the
    DW_FORM_addrx forms)."""
    if form == dwarf.FORM_ADDR:
        return {address.to_bytes(unit.address_size, "little"): address
                for address in addresses}
    width = dwarf.ADDRX_FORMS[form]
    wanted = {}
    for address, i in indexes.items():
        raw = dwarf.encode_uleb(i) if width is None else \
            i.to_bytes(width, "little") if i < 1 << 8 * width else None
        if raw is not None:
            wanted[raw] = address
    return wanted


def _address_indexes(sections: _Sections, unit: Unit, addresses: Iterable[int]
                     ) -> dict[int, int]:
    """{address: its first index in the unit's .debug_addr table}, for those of
    ``addresses`` the table holds."""
    debug_addr, size = sections[".debug_addr"], unit.address_size
    base = unit.top.get(dwarf.AT_ADDR_BASE, unit.top.get(dwarf.AT_GNU_ADDR_BASE))
    if not isinstance(base, int) or size not in (4, 8):
        return {}
    end = len(debug_addr)
    if base >= 8 and debug_addr[base - 4:base - 2] == b"\x05\x00":  # a DWARF 5 table header
        end = min(end, base - 4 + int.from_bytes(debug_addr[base - 8:base - 4], "little"))
    end = base + (max(end - base, 0) // size) * size
    addresses = list(addresses)
    if len(addresses) > SCANS_MOST:  # one dict of the table beats many searches of it
        entries = array.array("Q" if size == 8 else "I")
        entries.frombytes(debug_addr[base:end])
        if sys.byteorder != "little":
            entries.byteswap()
        index = dict(zip(reversed(entries), range(len(entries) - 1, -1, -1),
                         strict=True))  # the first index of an address wins
        return {address: index[address] for address in addresses if address in index}
    found = {}
    for address in addresses:  # where the address's bytes lie: searched once per section
        places = sections.places(address.to_bytes(size, "little"))
        for at in places[bisect.bisect_left(places, base):bisect.bisect_left(places, end)]:
            if (at - base) % size == 0:
                found[address] = (at - base) // size
                break
    return found


def _definition(sections: _Sections, unit: Unit, pos: int, names: list[str]
                ) -> tuple[int, int] | None:
    """(decl_file, decl_line) of the subprogram DIE at ``pos`` if it defines one of ``names``
    (its linkage name or name, or that of the DIE it completes, is one of them): a match of
    the search may also be bytes inside another DIE."""
    info = sections[".debug_info"]
    try:
        tag, values = dwarf.read_die(info, unit, pos)
        if tag != dwarf.TAG_SUBPROGRAM:
            return None
        named = False
        for _ in range(MAX_HOPS):
            named = named or _name(sections, unit, pos, values) in names
            file, line = values.get(dwarf.AT_DECL_FILE), values.get(dwarf.AT_DECL_LINE)
            if isinstance(file, int) and isinstance(line, int):
                return (file, line) if named or _completes(sections, unit, pos, values, names) \
                    else None
            target = _reference(info, unit, pos, values)
            if target is None:
                return None
            pos = target
            values = dwarf.read_die(info, unit, pos)[1]
    except DwarfError:
        return None
    return None


def _completes(sections: _Sections, unit: Unit, pos: int, values: dict, names: list[str]
               ) -> bool:
    """Does a DIE that the one at ``pos`` refers to carry one of ``names``?"""
    info = sections[".debug_info"]
    for _ in range(MAX_HOPS):
        target = _reference(info, unit, pos, values)
        if target is None:
            return False
        pos, values = target, dwarf.read_die(info, unit, target)[1]
        if _name(sections, unit, pos, values) in names:
            return True
    return False


def _name(sections: _Sections, unit: Unit, pos: int, values: dict) -> str | None:
    """The linkage name (else the name) of the DIE at ``pos``, whose values are ``values``."""
    forms = {name: form for name, form, _ in
             unit.abbrevs[dwarf.uleb(sections[".debug_info"], pos)[0]].attrs}
    for attribute in NAME_ATTRIBUTES:
        if attribute in values:
            return _string(sections, unit, forms[attribute], values[attribute])
    return None


def _string(sections: _Sections, unit: Unit, form: int, value: int | str) -> str:
    if isinstance(value, str):
        return value
    if form in dwarf.STRX_FORMS:
        base = unit.top.get(dwarf.AT_STR_OFFSETS_BASE, 8)
        at = int(base) + value * unit.offset_size
        offsets = sections[".debug_str_offsets"]
        if at + unit.offset_size > len(offsets):
            raise DwarfError("string index past .debug_str_offsets")
        value = int.from_bytes(offsets[at:at + unit.offset_size], "little")
    elif form == dwarf.FORM_LINE_STRP:
        return dwarf.cstring(sections[".debug_line_str"], value)
    elif form != dwarf.FORM_STRP:
        raise DwarfError(f"name in form {form:#x}")
    return dwarf.cstring(sections[".debug_str"], value)


def _reference(info: bytes, unit: Unit, pos: int, values: dict) -> int | None:
    """Offset in .debug_info of the DIE that DW_AT_specification / abstract_origin names."""
    abbrev = unit.abbrevs[dwarf.uleb(info, pos)[0]]
    for name, form, _ in abbrev.attrs:
        if name in (dwarf.AT_SPECIFICATION, dwarf.AT_ABSTRACT_ORIGIN):
            value = values[name]
            if not isinstance(value, int):
                return None
            target = unit.offset + value if form in dwarf.REF_CU_FORMS else value
            return target if unit.die_start <= target < unit.end else None
    return None


def _file_table(sections: _Sections, unit: Unit) -> FileTable:
    offset = unit.top.get(dwarf.AT_STMT_LIST)
    if not isinstance(offset, int):
        raise DwarfError("unit has no line program")
    return dwarf.file_table(sections[".debug_line"], offset, sections[".debug_line_str"],
                            sections[".debug_str"])

