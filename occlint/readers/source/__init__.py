"""CUDA / HIP source reader: kernel definitions, launch sites and suppressions.

``read_source(path, display)`` parses one file with tree-sitter (``tree-sitter-cuda``) —
no headers, no preprocessor, no compiler — and returns a :class:`SourceFile`. Bounded:
files over :data:`MAX_SOURCE_BYTES` are not parsed (the caller reports it once), nothing
is read from regions with syntax errors, expressions deeper than
``parse.MAX_DEPTH`` are unknown, and no Python recursion follows the tree's depth.
"""

from __future__ import annotations

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


def is_source(path: str | Path) -> bool:
    return str(path).lower().endswith(SUFFIXES)


def vendor_hint(path: str, data: bytes) -> str | None:
    lower = path.lower()
    if lower.endswith(".hip") or HIP_MARKERS.search(data):
        return "amd"
    if lower.endswith((".cu", ".cuh")):
        return "nvidia"
    return None


def suppressions(root, text: Text) -> list[Suppression]:
    out = []
    if b"occlint" not in text.data:
        return []
    found = captures('((comment) @c (#match? @c "occlint"))', root).get("c", [])
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
    from occlint.readers.source.evaluate import Evaluator
    from occlint.readers.source.kernels import kernels
    from occlint.readers.source.launches import launches

    result = SourceFile(display, size=len(data), vendor_hint=vendor_hint(display, data))
    if len(data) > MAX_SOURCE_BYTES:
        result.truncated = True
        return result
    if not _MARKERS.search(data):
        return result
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:  # invalid bytes become U+FFFD (lines stay where they are)
        data = data.decode("utf-8", "replace").encode("utf-8")
    tree = parser().parse(data)
    root = tree.root_node
    text = Text(data)
    evaluator = Evaluator(text, root)
    broken: list[tuple[int, int]] = []  # lines of the regions with syntax errors
    if root.has_error:
        end = -1
        for node in captures("(ERROR) @e", root).get("e", []):
            if node.start_byte < end:
                continue  # inside the region before
            end = node.end_byte
            broken.append((node.start_point[0] + 1, node.end_point[0] + 1))
            if len(result.error_regions) < MAX_ERROR_REGIONS:
                result.error_regions.append(text.span(node))
    result.kernels = kernels(root, text, evaluator, display)
    result.launches, cut = launches(root, text, evaluator)
    if broken:  # nothing from a line a syntax error touches
        import bisect

        starts = [b[0] for b in broken]
        ends = [b[1] for b in broken]

        def clean(first: int, last: int) -> bool:
            i = bisect.bisect_right(starts, last)
            return i == 0 or ends[i - 1] < first  # regions: disjoint, in order

        result.launches = [s for s in result.launches if clean(s.span.line, s.span.end_line)]
    result.truncated = result.truncated or cut
    result.suppressions = suppressions(root, text)
    return result


def read_source(path: str | Path, display: str) -> SourceFile:
    """Read and parse one file; OSError propagates (the caller reports it)."""
    p = Path(path)
    size = p.stat().st_size
    if size > MAX_SOURCE_BYTES:
        return SourceFile(display, size=size, truncated=True,
                          vendor_hint=vendor_hint(display, b""))
    return parse_source(p.read_bytes(), display)
