"""Cooperative groups' indices read as the registers they stand for.

``cg::grid_group g = cg::this_grid(); for (i = g.thread_rank(); i < n; i += g.size())`` is
a grid-stride loop: the source reader knows the built-in registers (``blockIdx.x``,
``gridDim.x``), not the groups' methods, so a kernel body that names a grid or a block
group is read with each of those methods written as the registers it reads, for a
one-dimensional launch (a grid's ``thread_rank()`` is ``blockIdx.x * blockDim.x +
threadIdx.x``, its ``size()`` ``gridDim.x * blockDim.x``; a block's ``thread_rank()`` is
``threadIdx.x``, its ``size()`` ``blockDim.x``, its ``group_index().x`` ``blockIdx.x``).
"""

from __future__ import annotations

import re

_NS = r"(?:cg|cooperative_groups)::"
# a group variable: ``cg::grid_group g = cg::this_grid()``, ``auto b = this_thread_block()``
_DECLARED = re.compile(rf"\b(?:{_NS})?(?:grid_group|thread_block|auto)\s*&?\s*(\w+)\s*=\s*"
                       rf"(?:{_NS})?this_(grid|thread_block)\s*\(\s*\)")
# the methods each kind of group has, and the registers they read (one-dimensional)
_METHODS = {
    "grid": {"thread_rank": "(blockIdx.x * blockDim.x + threadIdx.x)",
             "size": "(gridDim.x * blockDim.x)", "num_threads": "(gridDim.x * blockDim.x)",
             "block_rank": "blockIdx.x", "num_blocks": "gridDim.x"},
    "thread_block": {"thread_rank": "threadIdx.x", "size": "blockDim.x",
                     "num_threads": "blockDim.x"},
}
# a block's index vectors: ``b.group_index().x`` and the like
_VECTORS = {"group_index": "blockIdx", "thread_index": "threadIdx", "group_dim": "blockDim",
            "dim_threads": "blockDim"}


def expand(body: str) -> str | None:
    """``body`` with the grid and block groups' index methods written as registers; None
    where it names no group."""
    if "this_grid" not in body and "this_thread_block" not in body:
        return None
    kinds = {m[1]: m[2] for m in _DECLARED.finditer(body)}
    # a group used without a name: ``cg::this_grid().size()``
    kinds.update({f"{prefix}this_{kind}()": kind for kind in ("grid", "thread_block")
                  for prefix in ("cg::", "cooperative_groups::", "")})
    names = "|".join(re.escape(n) for n in sorted(kinds, key=len, reverse=True))
    call = re.compile(rf"(?<![\w.:])({names})\s*\.\s*(\w+)\s*\(\s*\)(\s*\.\s*([xyz])\b)?")

    def written(m: re.Match[str]) -> str:
        kind = kinds[m[1]]
        if m[2] in _VECTORS and kind == "thread_block" and m[4]:
            return f"{_VECTORS[m[2]]}.{m[4]}"
        method = _METHODS[kind].get(m[2])
        return m[0] if method is None or m[3] else method

    out = call.sub(written, body)
    return out if out != body else None


__all__ = ["expand"]
