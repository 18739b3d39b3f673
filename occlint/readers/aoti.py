"""Launch facts of AOTInductor packages (``.pt2`` zips of ``torch._inductor``).

A package holds, under ``<name>/data/aotinductor/model/``, the wrapper's C++ source
(``*.wrapper.cpp``) beside the wrapper library and the kernels (``*.cubin`` / ``*.hsaco``
files, or images embedded in the wrapper ``.so``). The source launches each Triton kernel
as::

    uint32_t grid_0 = xnumel;  uint32_t grid_1 = 1;  uint32_t grid_2 = 1;
    ...
    launchKernel(kernels_.<kernel>, grid_0, grid_1, grid_2, <num_warps>, <shared bytes>, ...);

and defines ``launchKernel`` to launch ``32*numWarps`` threads (the wave size times the
warps). From these come the same launch hints as Triton cache metadata
(occlint.readers.sidecars): the block, the dynamic shared memory, and the grid when all its
dimensions are constants.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

MAX_SOURCE_BYTES = 16 << 20
WRAPPER_SUFFIX = ".wrapper.cpp"

# (no argument pattern may match what the one after it matches: linear time on any text)
_LAUNCH = re.compile(
    r"launchKernel\(\s*kernels_\.(\w+)\s*,\s*([^,()\s]+)\s*,\s*([^,()\s]+)\s*,"
    r"\s*([^,()\s]+)\s*,\s*(\d+)\s*,\s*(\d+)\s*,")
_BLOCK = re.compile(r"(\d+)\s*\*\s*numWarps")
_ASSIGN = re.compile(r"\b(?:uint32_t|int64_t|int32_t|int|auto)\s+(grid_[012])\s*=\s*([^;]+);")


def _constant(expr: str, values: dict[str, str]) -> int | None:
    expr = values.get(expr, expr).strip()
    return int(expr) if expr.isdigit() else None


def launch_hints(source: str) -> dict[str, dict[str, Any]]:
    """kernel name -> launch hint, from one wrapper source. A kernel launched in several
    ways keeps only what all its launches agree on (the block and shared memory of the
    first launch when they differ are not used)."""
    factor = _BLOCK.search(source)
    wave = int(factor[1]) if factor and int(factor[1]) in (32, 64) else None
    hints: dict[str, dict[str, Any]] = {}
    conflicting: set[str] = set()
    previous = 0
    for launch in _LAUNCH.finditer(source):
        name, *grid, warps, shared = launch.groups()
        values = {m[1]: m[2] for m in _ASSIGN.finditer(source, previous, launch.start())}
        previous = launch.end()
        num_warps, shared_bytes = int(warps), int(shared)
        if not 0 < num_warps <= 64:
            continue
        hint: dict[str, Any] = {"num_warps": num_warps, "dynamic_lds": shared_bytes,
                                "source": "aotinductor", "kernel": name}
        if wave:
            hint["block"] = wave * num_warps
        dims = [_constant(g, values) for g in grid]
        if all(d is not None and d > 0 for d in dims):
            hint["grid"] = dims[0] * dims[1] * dims[2]
        if name in hints and hints[name] != hint:
            conflicting.add(name)
        hints.setdefault(name, hint)
    for name in conflicting:
        del hints[name]
    return hints


def package_dir(member: str) -> str | None:
    """The model directory of a package member (``<name>/data/aotinductor/model/``)."""
    at = member.rfind("/data/aotinductor/")
    if at < 0:
        return None
    end = member.find("/", at + len("/data/aotinductor/"))
    return member[:end + 1] if end >= 0 else None


def apply(kernels: list, hints: dict[str, dict[str, Any]]) -> None:
    """Give each kernel its launch hint (by name); the block from the kernel's own wave
    size when the source did not say it."""
    for kernel in kernels:
        hint = hints.get(kernel.name)
        if hint is None or kernel.launch_hint is not None:
            continue
        hint = dict(hint)
        hint.setdefault("block", kernel.wavefront_size * hint["num_warps"])
        kernel.launch_hint = hint


def directory_hints(binary: Path) -> dict[str, dict[str, Any]]:
    """Hints from the wrapper sources beside ``binary`` when it lies in an extracted
    package's model directory (``.../data/aotinductor/model/``); else none."""
    if package_dir(binary.as_posix()) is None:
        return {}
    hints: dict[str, dict[str, Any]] = {}
    try:
        sources = sorted(binary.parent.glob("*" + WRAPPER_SUFFIX))
        for source in sources:
            if source.stat().st_size <= MAX_SOURCE_BYTES:
                text = source.read_text(encoding="utf-8", errors="replace")
                for name, hint in launch_hints(text).items():
                    hints.setdefault(name, hint)
    except OSError:
        return {}
    return hints
