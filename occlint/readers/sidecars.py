"""Launch metadata that compilers leave beside binaries.

Triton (and torch.compile's Inductor, which uses Triton) caches each compiled kernel as
``<hash>/<name>.cubin`` or ``.hsaco`` next to ``<name>.json`` holding, among others,
``num_warps``, ``shared`` (the dynamic shared memory the launcher passes) and ``target``
({"backend": "cuda"|"hip", "arch": ..., "warp_size": ...}). The real block size is
``num_warps x warp_size``. Its Triton IR (``<name>.ttir``; ``<name>.source`` in newer
caches) tells the tile each program works on: the extent of ``tt.make_range``.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

MAX_SIDECAR_BYTES = 1 << 20
MAX_IR_BYTES = 16 << 20
_RANGE = re.compile(r"tt\.make_range \{end = (\d{1,9}) : i32, start = 0 : i32\}")
_TENSOR = re.compile(r"tensor<(\d+)x\d+")  # a tensor of two or more dimensions


def triton_tile(ptx: Path) -> int | None:
    """The elements each program of a one-dimensional Triton kernel works on (its
    ``BLOCK`` constexpr: every ``tt.make_range`` from 0 ends there), from the IR beside
    ``ptx`` in a Triton cache; None for a kernel of 2-D tiles, of several ranges, or
    without IR."""
    for suffix in (".ttir", ".source"):
        ir = ptx.with_suffix(suffix)
        try:
            if not ir.is_file() or ir.stat().st_size > MAX_IR_BYTES:
                continue
            text = ir.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        ends = set(_RANGE.findall(text))
        if len(ends) != 1 or _TENSOR.search(text):
            return None
        return int(ends.pop())
    return None


def triton_hint(binary: Path) -> dict[str, Any] | None:
    """Launch hint from a Triton metadata file beside ``binary``, or None."""
    # (one stat of a string path, not pathlib's: this runs for every binary a run reads)
    sidecar = os.path.splitext(binary)[0] + ".json"
    try:
        info = os.stat(sidecar)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SIDECAR_BYTES:
            return None
        with open(sidecar, encoding="utf-8") as fh:
            meta = json.loads(fh.read())
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):  # deeply nested JSON
        return None
    return hint_from_metadata(meta)


def hint_from_metadata(meta: Any) -> dict[str, Any] | None:
    if not isinstance(meta, dict):
        return None
    warps, shared = meta.get("num_warps"), meta.get("shared", 0)
    if not isinstance(warps, int) or isinstance(warps, bool) or not 0 < warps <= 64:
        return None
    if not isinstance(shared, int) or isinstance(shared, bool) or shared < 0:
        shared = 0
    target = meta.get("target") if isinstance(meta.get("target"), dict) else {}
    warp_size = target.get("warp_size")
    if not isinstance(warp_size, int) or warp_size not in (32, 64):
        warp_size = 64 if target.get("backend") == "hip" else 32
    hint: dict[str, Any] = {"block": warps * warp_size, "dynamic_lds": shared,
                            "source": "triton"}
    name = meta.get("name")
    if isinstance(name, str):
        hint["kernel"] = name
    return hint
