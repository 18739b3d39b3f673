"""Which vendor's compiler a CUDA / HIP source is written for, from the file and its includes.

A ``.hip`` file, or one that includes a HIP or ROCm header (``<hip/hip_runtime.h>``,
``<rocblas/rocblas.h>``) or uses HIP's names (``hipLaunchKernelGGL``, ``hipStream_t``), is
HIP: ``"amd"``. So is a ``.cpp`` that includes, with quotes, a local header that is HIP
(``#include "common.hpp"`` next to it, which includes ``<hip/hip_runtime.h>``): the header
is looked up as the compiler first does, next to the including file, a few levels deep and
a few bytes each (:data:`MAX_DEPTH`, :data:`MAX_HEADER_BYTES`). Else ``.cu``/``.cuh`` are
CUDA (``"nvidia"``) and other files are not known (``None``).
"""

from __future__ import annotations

import os
import re

# what makes a text HIP (is_hip): HIP's names, or an include of a HIP or ROCm header
_HIP_INCLUDE = re.compile(rb"#[ \t]*include[ \t]*[<\"](?:hip|roc)[a-z]*/")
_HIP_STREAM = re.compile(rb"hipStream_t\b")
_LOCAL_INCLUDE = re.compile(rb"#[ \t]*include[ \t]*\"([^\"\n]{1,255})\"")
MAX_DEPTH = 3  # includes followed from the file: a header, its headers, theirs
MAX_HEADER_BYTES = 256 << 10  # of each header, read from its start
MAX_HEADERS = 16  # headers read for one file
_HEADERS: dict[str, tuple[tuple[int, int], bool, list[str]]] = {}  # path -> (stamp, hip, incl)
MAX_CACHED = 4096


def is_hip(data: bytes) -> bool:
    """Whether the text names ``hipLaunch...``, ``hipStream_t`` or
    ``__HIP_PLATFORM_AMD__``, or includes ``<hip.../`` or ``<roc.../`` (the names found
    with ``bytes.find``, the includes by a pattern that starts at "#": one pattern of all
    four, tried at every "h", "_" and "#", took twice as long)."""
    if b"hipLaunch" in data or b"__HIP_PLATFORM_AMD__" in data:
        return True
    if b"hipStream_t" in data and _HIP_STREAM.search(data):
        return True
    return _HIP_INCLUDE.search(data) is not None


def vendor_hint(path: str, data: bytes) -> str | None:
    """The vendor the file's own name and text say (see the module)."""
    lower = path.lower()
    if lower.endswith(".hip") or is_hip(data):
        return "amd"
    if lower.endswith((".cu", ".cuh")):
        return "nvidia"
    return None


def includes_hip(path: str, data: bytes) -> bool:
    """Whether a local header that ``data`` (the text of the file at ``path``) includes
    with quotes is HIP, directly or through its own local headers (bounded: see the
    module). Headers that cannot be read are skipped."""
    pending = [(h, 1) for h in _local_includes(os.path.dirname(path), data)]
    seen: set[str] = set()
    while pending and len(seen) < MAX_HEADERS:
        header, depth = pending.pop(0)
        if header in seen:
            continue
        seen.add(header)
        found = _header(header)
        if found is None:
            continue
        hip, nested = found
        if hip:
            return True
        if depth < MAX_DEPTH:
            pending.extend((h, depth + 1) for h in nested)
    return False


def _local_includes(directory: str, data: bytes) -> list[str]:
    out = []
    for m in _LOCAL_INCLUDE.finditer(data):
        name = m[1].decode("utf-8", "replace")
        if not os.path.isabs(name):
            out.append(os.path.normpath(os.path.join(directory, name)))
    return out


def _header(path: str) -> tuple[bool, list[str]] | None:
    """(whether the header itself is HIP, its local includes); None if it cannot be read."""
    try:
        st = os.stat(path)
        stamp = (st.st_size, st.st_mtime_ns)
        hit = _HEADERS.get(path)
        if hit is not None and hit[0] == stamp:
            return hit[1], hit[2]
        with open(path, "rb") as fh:
            data = fh.read(MAX_HEADER_BYTES)
    except (OSError, ValueError):
        return None
    found = (is_hip(data),
             _local_includes(os.path.dirname(path), data))
    if len(_HEADERS) >= MAX_CACHED:
        _HEADERS.clear()
    _HEADERS[path] = (stamp, *found)
    return found
