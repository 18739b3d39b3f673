"""Read any input path into kernels: sniff the format, unwrap containers, collect errors.

Containers nest: a host ELF holds ``.hip_fatbin`` sections with (compressed) offload bundles
back to back; a bundle holds code objects. Files are memory-mapped and walked section by
section, so a 1 GB library is never read whole. Every problem becomes an
:class:`InputError` (one line for the user) and reading goes on with the next part.
"""

from __future__ import annotations

import hashlib
import mmap
import os
from pathlib import Path

from occlint.errors import FormatError, NoGpuCode
from occlint.model.kernel import InputError, ReadResult
from occlint.readers.formats import (
    ARCHIVE_SUFFIXES,
    BUNDLE_MAGIC,
    CCOB_MAGIC,
    ELF_MAGIC,
    EM_AMDGPU,
    EM_CUDA,
    FATBIN_MAGIC,
    ZIP_MAGIC,
    ReadOptions,
    close_map,
)
from occlint.readers.span import Span
from occlint.readers.walker import ContainerWalker

__all__ = ["ReadOptions", "looks_like_gpu_binary", "read_bytes", "read_head", "read_path",
           "sniff"]

def read_head(path: Path) -> bytes | None:
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


def _read_mapped(fh, display: str, options: ReadOptions, result: ReadResult,
                 hash_it: bool, group: int | None = None) -> None:
    mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        _read_buffer(mm, fh, display, options, result, hash_it, group)
    finally:
        close_map(mm)


def _read_buffer(buf, fh, display: str, options: ReadOptions, result: ReadResult,
                 hash_it: bool, group: int | None = None) -> None:
    """Read a whole input held in ``buf`` (``fh``: the same bytes as a file, for zip);
    ``group``: only that member group of a zip archive (occlint.readers.archive)."""
    if hash_it:
        result.sha256 = hashlib.sha256(buf).hexdigest()
    if buf[:4] == ZIP_MAGIC:
        from occlint.readers.archive import read_archive

        read_archive(fh, display, options, result, group)
    elif not group:  # (a group of a file that is no longer an archive: nothing)
        ContainerWalker(display, options, result).read(Span(buf), None, 0)


def read_bytes(data: bytes, display: str, options: ReadOptions) -> ReadResult:
    """:func:`read_path` for an input already in memory (no Triton sidecar lookup).

    The fuzzer (benchmarks/fuzz.py) and tests use it; problems end up in ``errors``."""
    import io

    result = ReadResult(path=display, size=len(data))
    try:
        if not data:
            raise FormatError("empty file")
        _read_buffer(data, io.BytesIO(data), display, options, result, options.hash_inputs)
    except FormatError as exc:
        result.errors.append(InputError(display, str(exc)))
    return result


def read_path(path: Path, display: str, options: ReadOptions,
              group: int | None = None, listed: bool = True) -> ReadResult:
    """Read one file. ``group``: read only that member group of a zip archive (a worker's
    share of a large wheel; the other groups' workers neither hash the file nor report
    what is wrong with the archive as a whole). ``listed``: named on the command line, where
    a file without GPU code is an error; else (found in a directory) ``no_gpu_code`` says
    so, and the run counts it as skipped."""
    result = ReadResult(path=display)
    try:
        with path.open("rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            result.size = size
            if size == 0:
                raise FormatError("empty file")
            _read_mapped(fh, display, options, result, options.hash_inputs and not group,
                         group)
        if result.kernels:
            from occlint.readers.sidecars import triton_hint

            hint = triton_hint(path)
            if hint:
                for kernel in result.kernels:
                    if hint.get("kernel") in (None, kernel.name):
                        kernel.launch_hint = hint
            from occlint.readers import aoti

            hints = aoti.directory_hints(path)  # a file of an extracted AOTInductor package
            if hints:
                aoti.apply(result.kernels, hints)
    except NoGpuCode as exc:
        if listed:
            result.errors.append(InputError(display, str(exc)))
        else:
            result.no_gpu_code = True
    except FormatError as exc:
        result.errors.append(InputError(display, str(exc)))
    except IsADirectoryError:
        result.errors.append(InputError(display, "is a directory"))
    except PermissionError:
        result.errors.append(InputError(display, "permission denied"))
    except FileNotFoundError:
        result.errors.append(InputError(display, "no such file"))
    except OSError as exc:
        result.errors.append(InputError(display, f"cannot read: {exc.strerror or exc}"))
    return result
