"""Triton kernels of a user's, traced at one tile and timed at every other: the held-out
check of the launch-time model's tile space (issue 28; written after the model's
constants and the tile space were fixed: docs/validation.md).

    PYTHONPATH=. python3 benchmarks/gpu/record_triton.py OUT_DIR      # on the lent GPU machine

Four ``@triton.jit`` kernels over 2^24 elements, each launched at a tile (BLOCK) and
``num_warps`` a user might pick: ``gelu_half`` (fp16 GELU, tanh form; BLOCK 256, 8 warps:
one element per thread), ``horner`` (a degree-24 polynomial, float32, one dependent
chain; BLOCK 4096, 4 warps: 32 elements per thread), ``double_it`` (a float32 copy times
two; BLOCK 64, 2 warps) and ``sum3`` (three float32 inputs; BLOCK 2048, 16 warps), under
the PyTorch profiler: OUT_DIR/triton.pt.trace.json.gz. Triton's cache as the traced run
left it: OUT_DIR/triton-cache. Then every BLOCK of 128 to 8192 x num_warps of 1 to 16 with
1 to 64 elements per thread is timed (CUDA events, median of 20, ms): OUT_DIR/times.json,
with the traced configuration of each kernel.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from benchmarks.gpu.timers import events, save_trace

TRACED = {"gelu_half": (256, 8), "horner": (4096, 4), "double_it": (64, 2),
          "sum3": (2048, 16)}


def main(argv: list[str]) -> int:
    out = Path(argv[0] if argv else "/tmp/triton")
    out.mkdir(parents=True, exist_ok=True)
    os.environ["TRITON_CACHE_DIR"] = str(out / "cache-all")
    import torch
    import triton
    import triton.language as tl
    from torch.profiler import ProfilerActivity, profile

    @triton.jit
    def gelu_half(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
        inner = 0.7978845608 * (x + 0.044715 * x * x * x)
        t = 2.0 / (1.0 + tl.exp(-2.0 * inner)) - 1.0
        tl.store(out_ptr + offs, (0.5 * x * (1.0 + t)).to(tl.float16), mask=mask)

    @triton.jit
    def horner(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        acc = x * 0.0 + 1.0
        for i in tl.static_range(24):
            acc = acc * x + (0.5 + 0.01 * i)
        tl.store(out_ptr + offs, acc, mask=mask)

    @triton.jit
    def double_it(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, 2.0 * tl.load(x_ptr + offs, mask=mask), mask=mask)

    @triton.jit
    def sum3(a_ptr, b_ptr, c_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        s = tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, s + tl.load(c_ptr + offs, mask=mask), mask=mask)

    n = 1 << 24
    h = torch.randn(n, device="cuda", dtype=torch.float16)
    h_out = torch.empty_like(h)
    f = [torch.rand(n, device="cuda") for _ in range(3)]
    f_out = torch.empty_like(f[0])
    calls = {
        "gelu_half": lambda b, w: gelu_half[(triton.cdiv(n, b),)](h, h_out, n, BLOCK=b,
                                                                  num_warps=w),
        "horner": lambda b, w: horner[(triton.cdiv(n, b),)](f[0], f_out, n, BLOCK=b,
                                                            num_warps=w),
        "double_it": lambda b, w: double_it[(triton.cdiv(n, b),)](f[0], f_out, n, BLOCK=b,
                                                                  num_warps=w),
        "sum3": lambda b, w: sum3[(triton.cdiv(n, b),)](f[0], f[1], f[2], f_out, n, BLOCK=b,
                                                        num_warps=w),
    }
    for _ in range(3):
        for name, (b, w) in TRACED.items():
            calls[name](b, w)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            for name, (b, w) in TRACED.items():
                calls[name](b, w)
        torch.cuda.synchronize()
    save_trace(prof, out / "triton.pt.trace.json")
    shutil.copytree(out / "cache-all", out / "triton-cache")  # only the traced variants
    times: dict[str, dict[str, float]] = {}
    for name, call in calls.items():
        times[name] = {}
        for b in (128, 256, 512, 1024, 2048, 4096, 8192):
            for w in (1, 2, 4, 8, 16):
                if 1 <= b // (32 * w) <= 64:
                    times[name][f"{b}x{w}"] = events(lambda b=b, w=w, call=call: call(b, w),
                                                     reps=20)
        b, w = TRACED[name]
        times[name][f"{b}x{w}"] = events(lambda b=b, w=w, call=call: call(b, w), reps=20)
    shutil.rmtree(out / "cache-all")
    (out / "times.json").write_text(json.dumps(
        {"n": n, "traced": {k: f"{b}x{w}" for k, (b, w) in TRACED.items()}, "ms": times},
        indent=1))
    for name, t in times.items():
        best = min(t.items(), key=lambda kv: kv[1])
        b, w = TRACED[name]
        print(name, "traced", f"{b}x{w}", round(t[f"{b}x{w}"], 4), "best", best)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
