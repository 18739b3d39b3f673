"""Host executables, shared libraries and objects: find the sections holding GPU code.

pyelftools reads the section headers (host ELFs come in every class and byte order); the
section contents stay in the memory-mapped file and are handed on as spans.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Iterator

from occlint.errors import FormatError
from occlint.readers.span import Span

GPU_SECTIONS = (".hip_fatbin", ".llvm.offloading", ".nv_fatbin", "__nv_relfatbin")
SCANNED_SECTIONS = (".data", ".rodata", ".data.rel.ro", ".ldata", ".lrodata")
SCAN_MAGICS = (b"__CLANG_OFFLOAD_BUNDLE__", b"CCOB", b"\x50\xed\x55\xba")
SHT_NOBITS = 8


def _stream(span: Span):
    if span.start == 0 and span.end == len(span.buf) and hasattr(span.buf, "seek"):
        return span.buf
    return io.BytesIO(span.bytes(0, len(span)))


def gpu_sections(span: Span) -> Iterator[tuple[str, Span, bool]]:
    """(section name, contents, found-by-scanning) for every section that may hold GPU code.

    Sections named for GPU code come first; then data sections that contain a bundle or
    fatbin magic (NVIDIA libraries keep many fatbins in .data) — those magics are only
    candidates, validated by the container readers."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    try:
        elf = ELFFile(_stream(span))
        headers = [(s.name, s["sh_type"], s["sh_offset"], s["sh_size"])
                   for s in elf.iter_sections()]
    except (ELFError, struct.error, ValueError, KeyError, IndexError, AssertionError) as exc:
        raise FormatError(f"malformed ELF: {exc}") from None
    except Exception as exc:
        if type(exc).__module__.startswith(("elftools", "construct")):
            raise FormatError(f"malformed ELF: {exc}") from None
        raise
    named, scanned = [], []
    for name, sh_type, offset, size in headers:
        if sh_type == "SHT_NOBITS" or sh_type == SHT_NOBITS or size == 0:
            continue
        if name in GPU_SECTIONS or name.startswith("__CLANG_OFFLOAD_BUNDLE__"):
            named.append((name, offset, size))
        elif name in SCANNED_SECTIONS:
            scanned.append((name, offset, size))
    for name, offset, size in named:
        yield name, span.sub(offset, size, f"section {name!r}"), False
    for name, offset, size in scanned:
        section = span.sub(offset, size, f"section {name!r}")
        if any(section.find(magic) >= 0 for magic in SCAN_MAGICS):
            yield name, section, True
