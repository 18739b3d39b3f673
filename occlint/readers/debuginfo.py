"""Kernel source locations from debug information (pyelftools), when a binary carries it.

* AMD code objects built with ``-g``: ``.debug_info`` subprograms (``DW_AT_linkage_name``
  or ``DW_AT_name`` = the kernel symbol) give ``DW_AT_decl_file`` / ``DW_AT_decl_line``,
  the file resolved through the unit's line-program file table.
* NVIDIA cubins built with ``-lineinfo`` (or ``-G``): ``.debug_line`` holds one sequence
  per kernel, whose ``DW_LNE_set_address`` is relocated (``.rela.debug_line``) against the
  kernel's symbol; the sequence's first row is the kernel's first line (its ``__global__``
  line as nvcc writes it).

Returns ``{symbol: (file, line)}``; anything unexpected gives no location, never an error.
Files are as the compiler recorded them (the directory joined with the name); see
:func:`occlint.model.finding.resolve` for finding them under the repository.
"""

from __future__ import annotations

import io
import posixpath
from typing import Any

MAX_DEBUG_BYTES = 64 << 20  # larger debug sections are not read


def has_debug_lines(data: bytes | Any) -> bool:
    return bytes(data).find(b".debug_line\x00") >= 0 if len(data) < MAX_DEBUG_BYTES else False


def _join(directory: bytes | str | None, name: bytes | str) -> str:
    d = directory.decode("utf-8", "replace") if isinstance(directory, bytes) else directory
    n = name.decode("utf-8", "replace") if isinstance(name, bytes) else name
    if not d or posixpath.isabs(n):
        return n
    return posixpath.join(d, n)


def _file_name(lineprog: Any, index: int) -> str | None:
    files = lineprog["file_entry"]
    dirs = lineprog["include_directory"]
    version = lineprog["version"]
    i = index if version >= 5 else index - 1  # DWARF 5 numbers files from 0
    if not 0 <= i < len(files):
        return None
    entry = files[i]
    d = entry.dir_index if version >= 5 else entry.dir_index - 1
    directory = dirs[d] if 0 <= d < len(dirs) else None
    name = _join(directory, entry.name)
    if version >= 5 and directory is not None and d != 0 and dirs and \
            not posixpath.isabs(name):  # relative to the compilation directory
        base = dirs[0].decode("utf-8", "replace") if isinstance(dirs[0], bytes) else dirs[0]
        name = posixpath.join(base, name) if base not in ("", ".") else name
    return posixpath.normpath(name)


def _amd(elf: Any) -> dict[str, tuple[str, int]]:
    dwarf = elf.get_dwarf_info()
    out: dict[str, tuple[str, int]] = {}
    for cu in dwarf.iter_CUs():
        lineprog = dwarf.line_program_for_CU(cu)
        if lineprog is None:
            continue
        for die in cu.iter_DIEs():
            if die.tag != "DW_TAG_subprogram":
                continue
            attrs = die.attributes
            name = attrs.get("DW_AT_linkage_name") or attrs.get("DW_AT_name")
            if name is None or "DW_AT_decl_line" not in attrs:
                continue
            file = _file_name(lineprog, attrs["DW_AT_decl_file"].value) \
                if "DW_AT_decl_file" in attrs else None
            if file is not None:
                symbol = name.value.decode("utf-8", "replace") \
                    if isinstance(name.value, bytes) else str(name.value)
                out.setdefault(symbol, (file, int(attrs["DW_AT_decl_line"].value)))
    return out


def _nvidia(elf: Any) -> dict[str, tuple[str, int]]:
    from elftools.dwarf.structs import DWARFStructs

    rela = elf.get_section_by_name(".rela.debug_line")
    symtab = elf.get_section_by_name(".symtab")
    if rela is None or symtab is None:
        return {}
    symbols = [s.name for s in symtab.iter_symbols()]
    targets = sorted((r["r_offset"], symbols[r["r_info_sym"]]) for r in rela.iter_relocations()
                     if r["r_info_sym"] < len(symbols))
    dwarf = elf.get_dwarf_info(relocate_dwarf_sections=False)
    structs = DWARFStructs(little_endian=elf.little_endian, dwarf_format=32,
                           address_size=elf.elfclass // 8)
    section = dwarf.debug_line_sec
    out: dict[str, tuple[str, int]] = {}
    offset, t = 0, 0
    while offset < section.size and t < len(targets):
        program = dwarf._parse_line_program_at_offset(offset, structs)
        sequence_target = None
        for entry in program.get_entries():
            if entry.command == 2 and entry.is_extended:  # DW_LNE_set_address
                sequence_target = targets[t][1] if t < len(targets) else None
                t += 1
            elif entry.state is not None and sequence_target is not None:
                file = _file_name(program, entry.state.file)
                if file is not None:
                    out.setdefault(sequence_target, (file, entry.state.line))
                sequence_target = None
        end = program.program_end_offset
        if end <= offset:
            break
        offset = end
    return out


def kernel_lines(data: bytes | Any) -> dict[str, tuple[str, int]]:
    """``{symbol: (file, line)}`` of the functions of one ELF with debug information."""
    try:
        from elftools.elf.elffile import ELFFile

        elf = ELFFile(io.BytesIO(bytes(data)))
        if elf.get_section_by_name(".debug_line") is None:
            return {}
        if elf["e_machine"] == "EM_AMDGPU" or elf["e_machine"] == 224:
            return _amd(elf)
        return _nvidia(elf)
    except Exception:  # debug information is a bonus: never fail the input for it
        return {}
