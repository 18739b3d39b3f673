"""CUDA / HIP source reader: kernel definitions, launch sites and suppressions.

``read_source(path, display)`` parses one file with tree-sitter (``tree-sitter-cuda``) —
no headers, no preprocessor, no compiler — and returns a :class:`SourceFile`. Bounded:
files over :data:`MAX_SOURCE_BYTES` are not parsed (the caller reports it once), nothing
is read from regions with syntax errors, expressions deeper than
``parse.MAX_DEPTH`` are unknown, and no Python recursion follows the tree's depth.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from occlint.model.source import SourceFile, Suppression
from occlint.readers.source.parse import Text, captures, parser

SUFFIXES = (".cu", ".cuh", ".hip", ".cpp", ".cc", ".cxx", ".h", ".hpp")
MAX_SOURCE_BYTES = 4 << 20
MAX_ERROR_REGIONS = 100
# only files with one of these can hold a kernel or a launch: others are not parsed
_MARKERS = re.compile(rb"__global__|<<<|Launch(?:Kernel|Cooperative)")
_SUPPRESS = re.compile(r"occlint:\s*ignore(?:\[([^\]]*)\])?")
_CODE = re.compile(r"^[A-Z]+[0-9]*$")
HIP_MARKERS = re.compile(rb"hipLaunch|hip/hip_runtime|__HIP_PLATFORM_AMD__|hipStream_t")


def may_launch(data: bytes) -> bool:
    """Whether the file can hold a kernel or a launch (else it is not parsed)."""
    return (b"__global__" in data or b"<<<" in data or b"Launch" in data) and \
        _MARKERS.search(data) is not None


def is_source(path: str | Path) -> bool:
    return str(path).lower().endswith(SUFFIXES)


def vendor_hint(path: str, data: bytes) -> str | None:
    lower = path.lower()
    if lower.endswith(".hip") or HIP_MARKERS.search(data):
        return "amd"
    if lower.endswith((".cu", ".cuh")):
        return "nvidia"
    return None


_COMMENTS = '((comment) @c (#match? @c "occlint"))'


def suppressions(root, text: Text, found: list | None = None) -> list[Suppression]:
    out = []
    if b"occlint" not in text.data:
        return []
    if found is None:
        found = captures(_COMMENTS, root).get("c", [])
    for node in found:
        match = _SUPPRESS.search(text.of(node, 400))
        if not match:
            continue
        codes = tuple(c.strip().upper() for c in (match[1] or "").split(",") if c.strip())
        if match[1] is not None and not codes:
            continue
        codes = tuple(c for c in codes if _CODE.match(c))
        row, col = node.start_point
        line_start = node.start_byte - col
        own = not text.data[line_start:node.start_byte].strip()
        out.append(Suppression(row + 1, codes, own))
    return out


def parse_source(data: bytes, display: str) -> SourceFile:
    """The source model of ``data`` (the bytes of the file shown as ``display``)."""
    from occlint.readers.source import kernels as kernels_mod
    from occlint.readers.source import launches as launches_mod
    from occlint.readers.source.evaluate import Evaluator

    result = SourceFile(display, size=len(data))
    if len(data) > MAX_SOURCE_BYTES:
        result.truncated = True
        result.vendor_hint = vendor_hint(display, b"")
        return result
    if not may_launch(data):
        return result
    result.vendor_hint = vendor_hint(display, data)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:  # invalid bytes become U+FFFD (lines stay where they are)
        data = data.decode("utf-8", "replace").encode("utf-8")
    tree = parser().parse(data)
    root = tree.root_node
    text = Text(data)
    evaluator = Evaluator(text, root)
    # one walk of the tree for every query (tree-sitter runs them together)
    patterns = [kernels_mod._KERNELS, launches_mod._TRIPLE, launches_mod._APIS]
    if b"occlint" in data:
        patterns.append(_COMMENTS)
    if root.has_error:
        patterns.append("(ERROR) @e")
    found = captures("\n".join(patterns), root)
    broken: list[tuple[int, int]] = []  # lines of the regions with syntax errors
    if root.has_error:
        end = -1
        for node in found.get("e", []):
            if node.start_byte < end:
                continue  # inside the region before
            end = node.end_byte
            broken.append((node.start_point[0] + 1, node.end_point[0] + 1))
            if len(result.error_regions) < MAX_ERROR_REGIONS:
                result.error_regions.append(text.span(node))
    result.kernels = kernels_mod.kernels(root, text, evaluator, display,
                                         found.get("kernel", []))
    result.launches, cut = launches_mod.launches(
        root, text, evaluator, {k: found.get(k, []) for k in ("config", "call")})
    if broken:  # nothing from a line a syntax error touches
        import bisect

        starts = [b[0] for b in broken]
        ends = [b[1] for b in broken]

        def clean(first: int, last: int) -> bool:
            i = bisect.bisect_right(starts, last)
            return i == 0 or ends[i - 1] < first  # regions: disjoint, in order

        result.launches = [s for s in result.launches if clean(s.span.line, s.span.end_line)]
    result.truncated = result.truncated or cut
    result.suppressions = suppressions(root, text, found.get("c", []))
    return result


_CACHE: dict[tuple[str, str], tuple[tuple[int, int], SourceFile]] = {}
MAX_CACHED = 4096


def read_source(path: str | Path, display: str) -> SourceFile:
    """Read and parse one file; OSError propagates (the caller reports it). A run reads a
    source twice when binaries are in it too (occlint.pipeline.run): the second read of an unchanged
    file (size, mtime) is the first's model."""
    st = os.stat(path)
    key, stamp = (str(path), display), (st.st_size, st.st_mtime_ns)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    if st.st_size > MAX_SOURCE_BYTES:
        result = SourceFile(display, size=st.st_size, truncated=True,
                            vendor_hint=vendor_hint(display, b""))
    else:
        with open(path, "rb") as fh:
            result = parse_source(fh.read(MAX_SOURCE_BYTES + 1), display)
    if len(_CACHE) >= MAX_CACHED:
        _CACHE.clear()
    _CACHE[key] = (stamp, result)
    return result
