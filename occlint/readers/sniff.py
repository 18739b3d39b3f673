"""What a directory walk makes of a file from its first bytes, without the binary readers:
:func:`read_head`, :func:`sniff` (``gpu``, ``host`` or ``other``) and
:func:`looks_like_gpu_binary`. Only the rare host ELF or PE file is opened further (its
section table), importing the readers it needs then; a run over a source tree, whose other
files are text, never imports the binary readers (occlint.readers.loader)."""

from __future__ import annotations

import mmap
import os
from pathlib import Path

from occlint.errors import FormatError
from occlint.readers.formats import (
    ARCHIVE_SUFFIXES,
    BUNDLE_MAGIC,
    CCOB_MAGIC,
    ELF_MAGIC,
    EM_AMDGPU,
    EM_CUDA,
    FATBIN_MAGIC,
    ZIP_MAGIC,
    close_map,
    hashed_prefix,
)
from occlint.readers.span import Span


def read_head(path: str | Path) -> bytes | None:
    """The first 64 bytes of a file (None when it cannot be read)."""
    try:  # os-level calls: this runs for every file of a directory tree
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        try:
            return os.read(fd, 64)
        finally:
            os.close(fd)
    except OSError:
        return None


def looks_like_gpu_binary(path: Path, head: bytes | None = None) -> bool:
    """Cheap test used when recursing into directories: a known magic at the start
    (``head``: the file's first 64 bytes when the caller has read them)."""
    return sniff(path, head) == "gpu"


def sniff(path: Path, head: bytes | None = None) -> str:
    """What a directory walk makes of a file, cheaply: ``gpu`` (read it), ``host`` (a host
    ELF without GPU code: skipped and counted) or ``other`` (not GPU code of any kind).
    ``head``: the file's first 64 bytes when the caller has read them."""
    if head is None:
        head = read_head(path)
    if head is None:
        return "gpu"  # let the reader report the problem
    if head.startswith((BUNDLE_MAGIC, CCOB_MAGIC, FATBIN_MAGIC)):
        return "gpu"
    skip = hashed_prefix(head)  # a CuPy kernel cache file
    if skip:
        head = head[skip:]
    if head.startswith(ELF_MAGIC) and len(head) >= 20:
        machine = int.from_bytes(head[18:20], "little" if head[5] == 1 else "big")
        if machine in (EM_AMDGPU, EM_CUDA):
            return "gpu"
        return _sniff_host_elf(path)
    if head.startswith(ZIP_MAGIC):
        return "gpu" if path.suffix in ARCHIVE_SUFFIXES else "other"
    if head.startswith(b"MZ") and path.suffix.lower() in (".dll", ".exe", ".pyd"):
        return _sniff_pe(path)
    return "gpu" if path.suffix in (".hsaco", ".co", ".cubin", ".fatbin", ".hipfb") else "other"


def _sniff_pe(path: Path) -> str:
    """``gpu`` for a PE file with a section named for GPU code, or a data section holding a
    container magic or a device ELF image (the reader validates them); ``host`` for another
    PE file; ``other`` when it is not one."""
    from occlint.readers.embedded import ScanBudget, find_images
    from occlint.readers.host import SCAN_MAGICS
    from occlint.readers.pe import GPU_SECTIONS, WRAPPER_SECTIONS, is_pe, pe_sections

    try:
        with path.open("rb") as fh:
            mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            try:
                span = Span(mm)
                if not is_pe(span):
                    return "other"
                for s in pe_sections(span):
                    if s.name in GPU_SECTIONS:
                        return "gpu"
                    if s.data and s.name not in WRAPPER_SECTIONS:
                        data = span.sub(s.offset, s.size)
                        if any(data.find(magic) >= 0 for magic in SCAN_MAGICS) or \
                                any(True for _ in find_images(data, [], ScanBudget(len(span)))):
                            return "gpu"
                return "host"
            finally:
                close_map(mm)
    except (OSError, ValueError, FormatError):
        return "other"


def _sniff_host_elf(path: Path) -> str:
    """``gpu`` when a host ELF has a section named for GPU code, a data section that holds
    a container magic (the reader validates it) or a device ELF image; ``host`` when not;
    ``other`` when its section headers cannot be read."""
    from occlint.readers.embedded import images_in
    from occlint.readers.host import gpu_sections, section_table

    try:
        with path.open("rb") as fh:
            mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            try:
                span = Span(mm)
                table = section_table(span)
                found = any(True for _ in gpu_sections(span, table)) or \
                    any(True for _ in images_in(span, table, []))
            finally:
                close_map(mm)
    except (OSError, ValueError, FormatError):  # not something we recognise
        return "other"
    return "gpu" if found else "host"
