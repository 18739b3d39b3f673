"""Read any input path into kernels: sniff the format, unwrap containers, collect errors.

Containers nest: a host ELF holds ``.hip_fatbin`` sections with (compressed) offload bundles
back to back; a bundle holds code objects. Files are memory-mapped and walked section by
section, so a 1 GB library is never read whole. Every problem becomes an
:class:`InputError` (one line for the user) and reading goes on with the next part.
"""

from __future__ import annotations

import mmap
import os
from pathlib import Path

from occlint.errors import FormatError, NoGpuCode
from occlint.model.kernel import InputError, ReadResult
from occlint.readers.formats import (
    ZIP_MAGIC,
    ReadOptions,
    close_map,
    hashed_prefix,
)
from occlint.readers.sniff import looks_like_gpu_binary, read_head, sniff
from occlint.readers.span import Span
from occlint.readers.walker import ContainerWalker

__all__ = ["ReadOptions", "looks_like_gpu_binary", "read_bytes", "read_head", "read_path",
           "sniff"]


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
        import hashlib  # (OpenSSL's load, 5 ms a worker: only the HTML report hashes)

        result.sha256 = hashlib.sha256(buf).hexdigest()
    if buf[:4] == ZIP_MAGIC:
        from occlint.readers.archive import read_archive

        read_archive(fh, display, options, result, group)
    elif not group:  # (a group of a file that is no longer an archive: nothing)
        skip = hashed_prefix(bytes(buf[:64]))  # a CuPy kernel cache file: hash, then ELF
        ContainerWalker(display, options, result).read(Span(buf, skip), None, 0)


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
