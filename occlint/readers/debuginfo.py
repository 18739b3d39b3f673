"""Kernel source locations from debug information, when a binary carries it.

* AMD code objects built with ``-g``: the ``DW_TAG_subprogram`` DIE whose ``DW_AT_low_pc``
  is the kernel symbol's address gives ``DW_AT_decl_file`` / ``DW_AT_decl_line``, the file
  resolved through the unit's line-program file table. The DIE is found without walking
  the others (:mod:`occlint.readers.amd.debuglines`); DWARF laid out otherwise is walked
  DIE by DIE (pyelftools), for debug information of at most ``MAX_WALK_BYTES`` only.
* NVIDIA cubins built with ``-lineinfo`` (or ``-G``): ``.debug_line`` holds one sequence
  per kernel, whose ``DW_LNE_set_address`` is relocated (``.rela.debug_line``) against the
  kernel's symbol; the sequence's first row is the kernel's first line (its ``__global__``
  line as nvcc writes it).

Returns ``{symbol: (file, line)}``; anything unexpected gives no location, never an error.
The DWARF readers are imported only for an ELF that has debug information.
Files are as the compiler recorded them (the directory joined with the name); see
:func:`occlint.model.finding.resolve` for finding them under the repository.
"""

from __future__ import annotations

import io
from typing import Any

from occlint.readers.elf import EM_AMDGPU, ElfImage
from occlint.readers.span import Span

MAX_DEBUG_BYTES = 64 << 20  # larger debug sections are not read
MAX_WALK_BYTES = 1 << 20  # .debug_info walked DIE by DIE when it cannot be searched
# (sizes are those of the contents: of compressed sections, once decompressed)


def locate(elf: ElfImage, kernels: list) -> None:
    """Set each kernel's ``source`` from the ELF's debug information, when it has some (the
    section table says so: nothing else of the file is read otherwise)."""
    if not kernels or elf.section(".debug_line") is None:
        return
    lines = elf_kernel_lines(elf, {k.name for k in kernels})
    for kernel in kernels:
        if kernel.name in lines:
            kernel.source = lines[kernel.name]


def kernel_lines(data: bytes | Any, names: set[str] | None = None
                 ) -> dict[str, tuple[str, int]]:
    """``{symbol: (file, line)}`` of the functions (of ``names``, when given) of one ELF with
    debug information."""
    try:
        elf = ElfImage(Span(data))
        return elf_kernel_lines(elf, names)
    except Exception:  # debug information is a bonus: never fail the input for it
        return {}


def elf_kernel_lines(elf: ElfImage, names: set[str] | None = None
                     ) -> dict[str, tuple[str, int]]:
    """:func:`kernel_lines` of an ELF image already open."""
    line = elf.section(".debug_line")
    try:
        if line is None or elf.contents_size(line) > MAX_DEBUG_BYTES:
            return {}
        if elf.machine == EM_AMDGPU:
            return _amd(elf, names)
        return _nvidia(_pyelftools(elf))
    except Exception:  # debug information is a bonus: never fail the input for it
        return {}


def _pyelftools(elf: ElfImage) -> Any:
    from elftools.elf.elffile import ELFFile

    return ELFFile(io.BytesIO(elf.span.bytes(0, len(elf.span))))


def _amd(elf: ElfImage, names: set[str] | None) -> dict[str, tuple[str, int]]:
    from occlint.readers.amd.debuglines import kernel_lines as search
    from occlint.readers.dwarf import DwarfError

    info = elf.section(".debug_info")
    size = elf.contents_size(info) if info is not None else 0  # decompressed, if compressed
    if info is None or size > MAX_DEBUG_BYTES:
        return {}
    try:
        return search(elf, names)
    except DwarfError:
        if size > MAX_WALK_BYTES:
            return {}
        lines = _amd_walk(_pyelftools(elf))
        return lines if names is None else {k: v for k, v in lines.items() if k in names}


def _amd_walk(elf: Any) -> dict[str, tuple[str, int]]:
    """Every subprogram DIE with a declaration line, by linkage name (or name)."""
    from occlint.readers.dwarf import file_name

    dwarf = elf.get_dwarf_info()
    out: dict[str, tuple[str, int]] = {}
    for cu in dwarf.iter_CUs():
        lineprog = dwarf.line_program_for_CU(cu)
        if lineprog is None:
            continue
        table = _file_table(lineprog)
        for die in cu.iter_DIEs():
            if die.tag != "DW_TAG_subprogram":
                continue
            attrs = die.attributes
            name = attrs.get("DW_AT_linkage_name") or attrs.get("DW_AT_name")
            if name is None or "DW_AT_decl_line" not in attrs:
                continue
            file = file_name(table, attrs["DW_AT_decl_file"].value) \
                if "DW_AT_decl_file" in attrs else None
            if file is not None:
                out.setdefault(_text(name.value), (file, int(attrs["DW_AT_decl_line"].value)))
    return out


def _file_table(lineprog: Any) -> Any:
    """The :class:`dwarf.FileTable` of a pyelftools line program."""
    from occlint.readers.dwarf import FileTable

    files = [(_text(e.name), e.dir_index) for e in lineprog["file_entry"]]
    return FileTable(lineprog["version"], [_text(d) for d in lineprog["include_directory"]],
                     files)


def _text(value: bytes | str) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _nvidia(elf: Any) -> dict[str, tuple[str, int]]:
    from elftools.dwarf.structs import DWARFStructs

    from occlint.readers.dwarf import file_name

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
        table = _file_table(program)
        sequence_target = None
        for entry in program.get_entries():
            if entry.command == 2 and entry.is_extended:  # DW_LNE_set_address
                sequence_target = targets[t][1] if t < len(targets) else None
                t += 1
            elif entry.state is not None and sequence_target is not None:
                file = file_name(table, entry.state.file)
                if file is not None:
                    out.setdefault(sequence_target, (file, entry.state.line))
                sequence_target = None
        end = program.program_end_offset
        if end <= offset:
            break
        offset = end
    return out
