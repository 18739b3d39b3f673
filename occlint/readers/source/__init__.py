"""CUDA / HIP source reader: kernel definitions, launch sites and suppressions.

``read_source(path, display)`` parses one file with tree-sitter (``tree-sitter-cuda``) —
no headers, no preprocessor, no compiler — and returns a :class:`SourceFile`. Bounded:
files over :data:`MAX_SOURCE_BYTES` are not parsed (the caller reports it once), nothing
is read from regions with syntax errors, expressions deeper than
``parse.MAX_DEPTH`` are unknown, and no Python recursion follows the tree's depth.
"""

from __future__ import annotations

import bisect
import os
import re
from dataclasses import dataclass
from pathlib import Path

from occlint.model.source import LaunchSite, Param, SourceFile, SourceKernel, Span, Suppression
from occlint.readers.formats import SOURCE_SUFFIXES, is_python
from occlint.readers.source import kernels as kernels_mod
from occlint.readers.source import launches as launches_mod
from occlint.readers.source import markers
from occlint.readers.source.evaluate import Evaluator
from occlint.readers.source.lexical import (
    LAUNCH_MARKERS,
    Layout,
    blank_ranges,
    end_statement_macros,
    overwrite,
)
from occlint.readers.source.parse import Text, parser
from occlint.readers.source.python_launches import read as python_script
from occlint.readers.source.python_strings import cuda_in
from occlint.readers.source.vendor import includes_hip, vendor_hint

SUFFIXES = SOURCE_SUFFIXES
MAX_SOURCE_BYTES = 4 << 20
MAX_ERROR_REGIONS = 100
# only files with one of these can hold a kernel or a launch: others are not parsed (nor
# those that have them only in comments and strings: Layout.has_markers)
_MARKERS = re.compile(rb"__global__|<<<|Launch(?:Kernel|Cooperative)|KERNEL[ \t]+[A-Za-z_]")
_SUPPRESS = re.compile(r"occlint:\s*ignore(?:\[([^\]]*)\])?")
_CODE = re.compile(r"^[A-Z]+[0-9]*$")


def may_launch(data: bytes) -> bool:
    """Whether the file can hold a kernel or a launch (else it is not parsed)."""
    return (b"__global__" in data or b"<<<" in data or b"Launch" in data or
            b"KERNEL" in data) and _MARKERS.search(data) is not None


def suppressions(text: Text, layout: Layout) -> list[Suppression]:
    """``// occlint: ignore[...]`` comments (found by the lexical pass)."""
    out = []
    data = text.data
    for start, end in layout.comments:
        match = _SUPPRESS.search(data[start:start + 1600].decode("utf-8", "replace"))
        if not match or match.start() > end - start:
            continue
        codes = tuple(c.strip().upper() for c in (match[1] or "").split(",") if c.strip())
        if match[1] is not None and not codes:
            continue
        codes = tuple(c for c in codes if _CODE.match(c))
        line_start = data.rfind(b"\n", 0, start) + 1
        own = not data[line_start:start].strip()
        out.append(Suppression(data.count(b"\n", 0, start) + 1, codes, own))
    return out


@dataclass(slots=True)
class _Read:
    """What one parse of the file gives: kernels, launches and syntax-error regions."""

    kernels: list[SourceKernel]
    launches: list[LaunchSite]
    cut: bool
    errors: list[tuple[int, int, Span]]  # byte range and span of each region
    evaluator: Evaluator


def _read(parse: bytes, text: Text, layout: Layout, display: str) -> _Read:
    root = parser().parse(parse).root_node
    evaluator = Evaluator(text, root, layout)
    # the nodes at the lexical markers: no walk of the whole tree
    errors = [(node.start_byte, node.end_byte, text.span(node))
              for node in markers.error_regions(root)]
    kernels = kernels_mod.kernels(root, text, evaluator, display,
                                  markers.kernel_definitions(root, layout.code,
                                                             layout.kernel_macros()))
    sites, cut = launches_mod.launches(root, text, evaluator,
                                       markers.launch_nodes(root, layout.code))
    if errors:  # nothing from a line a syntax error touches
        starts = [e[2].line for e in errors]
        ends = [e[2].end_line for e in errors]

        def clean(first: int, last: int) -> bool:
            i = bisect.bisect_right(starts, last)
            return i == 0 or ends[i - 1] < first  # regions: disjoint, in order

        sites = [s for s in sites if clean(s.span.line, s.span.end_line)]
        kernels = [k for k in kernels if clean(k.span.line, k.span.end_line)]
    return _Read(kernels, sites, cut, errors, evaluator)


def _overlaps(errors: list[tuple[int, int, Span]], start: int, end: int) -> bool:
    return any(s < end and start < e for s, e, _ in errors)


def _with_configurations(main: _Read, parse: bytes, text: Text, layout: Layout,
                         display: str) -> _Read:
    """Launches and kernels that a preprocessor conditional hides from the parse (a
    ``#if`` between a launch's arguments, in the middle of a condition): read again in
    the configurations of the file (every unknown condition true, then false), values
    reported where they agree; error regions kept only where no configuration parses."""
    reads = [_read(blank_ranges(parse, layout.configuration(unknown)), text, layout, display)
             for unknown in (True, False)]
    spans = {(s.span.line, s.span.column) for s in main.launches}
    sites = list(main.launches)
    extra: dict[tuple[int, int], list[LaunchSite]] = {}
    for read in reads:
        for site in read.launches:
            key = (site.span.line, site.span.column)
            if key not in spans:
                extra.setdefault(key, []).append(site)
    for found in extra.values():
        sites.append(merge_sites(found))
    sites.sort(key=lambda s: (s.span.line, s.span.column))
    names = {(k.name, k.span.line) for k in main.kernels}
    kernels = list(main.kernels)
    for read in reads:
        for k in read.kernels:
            if (k.name, k.span.line) not in names:
                names.add((k.name, k.span.line))
                kernels.append(k)
    kernels.sort(key=lambda k: (k.span.line, k.span.column))
    errors = [e for e in main.errors if all(_overlaps(r.errors, e[0], e[1]) for r in reads)]
    return _Read(kernels, sites, main.cut or any(r.cut for r in reads), errors,
                 main.evaluator)


def merge_sites(found: list[LaunchSite]) -> LaunchSite:
    """One launch read in several configurations: each value where they agree."""
    first = found[0]
    if len(found) == 1:
        return first

    def param(values: list[Param | None]) -> Param | None:
        present = [v for v in values if v is not None]
        if not present:
            return None
        if len(present) == len(values) and \
                len({(v.dims, v.ceil_div_block) for v in present}) == 1:
            return present[0]
        return Param(present[0].text, present[0].span, (None, None, None), None,
                     "it differs between the branches of a preprocessor conditional")

    return LaunchSite(first.kernel, first.kernel_text, first.api, first.span,
                      param([s.grid for s in found]), param([s.block for s in found]),
                      param([s.shared for s in found]),
                      first.stream if len({s.stream for s in found}) == 1 else None)


def _macro_launches(layout: Layout, text: Text, evaluator: Evaluator) -> list[LaunchSite]:
    """Launches written in ``#define`` bodies, each read where it is defined. A launch of a
    kernel that is a parameter of the macro is a wrapper (``#define hipLaunchKernelGGL(F,
    G, B, M, S, ...) F<<<G, B, M, S>>>(__VA_ARGS__)``): its uses are the launch sites;
    unless the macro fixes the block itself (apex's group_norm ``CALL_TWO_PASS_KERNEL``:
    ``Kernel<P, 140><<<grid, 140, 0, stream>>>``), whatever kernel it is handed."""
    out: list[LaunchSite] = []
    for defines in layout.defines.values():
        for define in defines:
            if not LAUNCH_MARKERS.search(define.value):
                continue
            start = define.value_start
            raw = layout.code[start:start + len(define.value)]
            row = layout.data.count(b"\n", 0, start)
            column = start - (layout.data.rfind(b"\n", 0, start) + 1)
            snippet = b"\n" * row + b" " * column + raw + b"\n;"
            root = parser().parse(snippet).root_node
            found = markers.launch_nodes(root, snippet)
            context = None
            node = evaluator.root.descendant_for_byte_range(define.start, define.start)
            while node is not None and node.type != "function_definition":
                node = node.parent
            if node is not None:
                context = (node, define.start)
            params = frozenset(define.params or ())
            sub = evaluator.for_macro(Text(snippet), root, params, context)
            sites, _ = launches_mod.launches(root, sub.text, sub, found)
            out.extend(s for s in sites if s.kernel not in params
                       or (s.block is not None and s.block.known))
    return out


def parse_source(data: bytes, display: str) -> SourceFile:
    """The source model of ``data`` (the bytes of the file shown as ``display``)."""
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
    text = Text(data)
    layout = Layout(data)
    result.suppressions = suppressions(text, layout)
    if not layout.has_markers():  # only comments and strings name a kernel or a launch
        return result
    # the bodies of functions that hold no launch and no kernel are not parsed
    parse = blank_ranges(blank_ranges(layout.code, layout.macro_arguments() + layout.pragmas()
                                      + layout.loop_macros() + layout.lambda_attributes()
                                      + layout.attributes() + layout.declaring_macros()
                                      + layout.attribute_macros()),
                         layout.reducible_bodies(), comments=True)
    parse = end_statement_macros(overwrite(parse, layout.kernel_macros()),
                                 layout.statement_macros())
    read = _read(parse, text, layout, display)
    if read.errors and any(layout.has_conditionals(s, e) for s, e, _ in read.errors):
        read = _with_configurations(read, parse, text, layout, display)
    macro = _macro_launches(layout, text, read.evaluator)
    sites = read.launches + macro
    if macro:
        sites.sort(key=lambda s: (s.span.line, s.span.column))
    dead = _lines(data, layout.inactive())
    if dead:  # code the file's own #if excludes is not compiled: nothing is read from it
        sites = [s for s in sites if not _inside(dead, s.span.line)]
        read.kernels = [k for k in read.kernels if not _inside(dead, k.span.line)]
    result.kernels = read.kernels
    result.launches = sites[:launches_mod.MAX_SITES]
    result.truncated = read.cut or len(sites) > launches_mod.MAX_SITES
    result.error_regions = [e[2] for e in read.errors[:MAX_ERROR_REGIONS]]
    return result


def _lines(data: bytes, ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Byte ranges as (first, last) 1-based lines."""
    return [(data.count(b"\n", 0, start) + 1, data.count(b"\n", 0, end) + 1)
            for start, end in ranges]


def _inside(lines: list[tuple[int, int]], line: int) -> bool:
    return any(first < line < last or first == line == last for first, last in lines)


_CACHE: dict[tuple[str, str, bool], tuple[tuple[int, int], SourceFile]] = {}
MAX_CACHED = 4096


def read_source(path: str | Path, display: str, python_kernels: bool = True) -> SourceFile:
    """Read and parse one file; OSError propagates (the caller reports it). A run reads a
    source twice when binaries are in it too (occlint.pipeline.run): the second read of an
    unchanged file (size, mtime) is the first's model. A Python script gives the CUDA of
    its string literals (occlint.readers.source.python_strings): those launching a kernel
    (``load_inline``'s host code), and with ``python_kernels`` those that only define one
    (CuPy's ``RawKernel``, launched from Python: their facts serve a trace or binary of
    the run; a directory's scripts, read for their launches alone, skip them)."""
    st = os.stat(path)
    key, stamp = _key(path, display, python_kernels), (st.st_size, st.st_mtime_ns)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    if st.st_size > MAX_SOURCE_BYTES:
        result = SourceFile(display, size=st.st_size, truncated=True,
                            vendor_hint=vendor_hint(display, b""))
    else:
        data = _file_bytes(path, st.st_size)
        python_sites, numba_kernels = [], []
        if is_python(path):  # only the CUDA its string literals hold, and its launches
            numba_kernels, python_sites = python_script(data)
            data = cuda_in(data, python_kernels or frozenset(
                s.kernel.encode() for s in python_sites if s.api != "numba")) or b""
        result = parse_source(data, display)
        result.size = st.st_size
        if python_sites:
            result.launches = sorted([*result.launches, *python_sites],
                                     key=lambda s: (s.span.line, s.span.column))
        if numba_kernels:
            result.kernels = sorted([*result.kernels, *numba_kernels],
                                    key=lambda k: (k.span.line, k.span.column))
        if result.vendor_hint != "amd" and (result.launches or result.kernels) and \
                includes_hip(str(path), data):
            result.vendor_hint = "amd"  # through a local header (occlint.readers.source.vendor)
    _remember(key, stamp, result)
    return result


def parsed_bytes(path: str | Path, display: str) -> int:
    """How many bytes of the file :func:`read_source` would go on to parse: 0 when it is
    too large or fails the byte test (:func:`may_launch`). Such a file's model (its size)
    is kept for read_source, so that deciding this reads no file twice."""
    if is_python(path):
        return 0  # a script's CUDA is a few strings: not read to decide
    st = os.stat(path)
    if st.st_size > MAX_SOURCE_BYTES:
        return 0
    data = _file_bytes(path, st.st_size)
    if may_launch(data):
        return len(data)
    if len(data) == st.st_size:  # all of a regular file: parse_source's model of it
        _remember(_key(path, display, False), (st.st_size, st.st_mtime_ns),
                  SourceFile(display, size=len(data)))
    return 0


def _key(path: str | Path, display: str, python_kernels: bool) -> tuple[str, str, bool]:
    """A model's key in the cache: a script's models with and without the kernels only its
    strings define are two (another file's are one)."""
    return str(path), display, python_kernels and is_python(path)


def _file_bytes(path: str | Path, size: int) -> bytes:
    """The file's first MAX_SOURCE_BYTES + 1 bytes (``size``: its size as stat tells it;
    one read of that many, not a buffer of the most for every file)."""
    with open(path, "rb") as fh:
        data = fh.read(min(size, MAX_SOURCE_BYTES) + 1)
        if len(data) > size:  # it grew, or is no regular file
            data += fh.read(MAX_SOURCE_BYTES + 1 - len(data))
    return data


def _remember(key: tuple[str, str, bool], stamp: tuple[int, int], result: SourceFile) -> None:
    if len(_CACHE) >= MAX_CACHED:
        _CACHE.clear()
    _CACHE[key] = (stamp, result)
