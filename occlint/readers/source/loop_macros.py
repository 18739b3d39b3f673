"""Grid-stride loops written as a macro: ``CUDA_KERNEL_LOOP(i, n) { ... }``.

Caffe, PyTorch, mmcv, detectron2 and the code hipified from them write their grid-stride
loops through a function-like macro, most often defined in a header the kernel's file
includes. The syntax tree sees a call and a block, not a loop, so the body's shape and the
launch-time model's facts would miss the loop. A kernel body holding a call of such a
macro is read with the call replaced by the loop it expands to: the file's own
``#define`` where it has one, else the libraries' definitions below (the loop each
expands to, stepped by the grid's threads, its index of the type that says whether the
compiler unrolls it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from occlint.readers.source import access

# name -> (parameters, the loop): what the libraries' definitions compile to, as a loop
# the source reader reads so (fixtures/ptx/unroll's macro_* forms, NVRTC 13.5):
# CUDA_1D_KERNEL_LOOP (mmcv, detectron2: an int index; DeepSpeed: size_t) is not unrolled
# either way; CUDA_KERNEL_LOOP_TYPE (PyTorch's KernelUtils.h: an int64 counter beside the
# index) is unrolled as a long index is; CUDA_KERNEL_LOOP is Caffe's (an int index, not
# unrolled) or PyTorch's (CUDA_KERNEL_LOOP_TYPE of an int, unrolled): its index a type the
# reader does not know, so whether it unrolls stays unknown
KNOWN: dict[str, tuple[tuple[str, ...], str]] = {
    "CUDA_KERNEL_LOOP": (("i", "n"), "for (caffe_or_torch_index i = blockIdx.x * blockDim.x"
                                     " + threadIdx.x; i < (n); i += blockDim.x * gridDim.x)"),
    "CUDA_1D_KERNEL_LOOP": (("i", "n"), "for (int i = blockIdx.x * blockDim.x + threadIdx.x;"
                                        " i < (n); i += blockDim.x * gridDim.x)"),
    "CUDA_KERNEL_LOOP_TYPE": (("i", "n", "index_type"),
                              "for (long i = blockIdx.x * blockDim.x + threadIdx.x; "
                              "i < (n); i += blockDim.x * gridDim.x)"),
}
_FOR = re.compile(r"\bfor\s*\(")
_CALL = re.compile(r"\b([A-Z][A-Z0-9_]*LOOP[A-Z0-9_]*)\s*\(")
_WORD = re.compile(r"(?<![\w.])[A-Za-z_]\w*")  # a name, not a member


def loop_definitions(defines: Mapping[str, Sequence]) -> dict[str, tuple[tuple[str, ...], str]]:
    """The file's function-like macros that expand to a ``for`` loop's head, after any
    declarations (``defines``: the lexical layout's, each a list of ``Define``), beside the
    known ones; the file's own (its last) wins."""
    out = dict(KNOWN)
    for name, found in defines.items():
        d = found[-1]
        if d.params is None:
            continue
        value = " ".join(d.value.decode("utf-8", "replace").split())
        head = _FOR.search(value)
        if head and value.endswith(")") and \
                access.matching(value, head.end() - 1, "(") == len(value) - 1:
            out[name] = (tuple(d.params), value)  # a for head last (declarations before it)
    return out


def expand(body: str, definitions: Mapping[str, tuple[tuple[str, ...], str]]) -> str | None:
    """``body`` with each call of a loop macro replaced by its loop's head (its arguments
    put in for its parameters); None where the body calls none."""
    if "LOOP" not in body:
        return None
    out, last, found = [], 0, False
    for m in _CALL.finditer(body):
        if m.start() < last or m[1] not in definitions:
            continue
        params, value = definitions[m[1]]
        close = access.matching(body, m.end() - 1, "(")
        if close >= len(body):
            continue
        args = [a.strip() for a in access.split_top_level(body[m.end():close])]
        if len(args) != len(params):
            continue
        table = dict(zip(params, args, strict=True))
        out.append(body[last:m.start()])
        out.append(_WORD.sub(lambda w, t=table: t.get(w[0], w[0]), value))
        last, found = close + 1, True
    return "".join(out) + body[last:] if found else None


def steps_by_the_grid(expanded: str) -> bool:
    """Whether an expanded loop's head steps its index by the grid's threads."""
    return _GRID_STEP.search(expanded) is not None


_GRID_STEP = re.compile(r"\+=\s*[^;{}]*ridDim")
