"""Record a user's Triton and CuPy kernels with their caches, for the launch-time model's
facts from PTX and from saved sources (issue 28 item 2; fixtures/traces/caches/).

    PYTHONPATH=. python3 benchmarks/gpu/record_caches.py OUT_DIR      # on the lent GPU machine

A user script as users write it: a ``@triton.jit`` scale-and-add over 2^24 floats
launched with BLOCK_SIZE 128 (one element per program lane), and a CuPy ``RawKernel``
doing the same in 96-thread blocks; both run under the PyTorch profiler. Triton writes
its cache (``.cubin``, ``.ptx``, ``.json`` per kernel) to OUT_DIR/triton-cache; CuPy its
``.cubin`` and, with ``CUPY_CACHE_SAVE_CUDA_SOURCE=1``, the ``.cu`` it compiled, to
OUT_DIR/cupy-cache; both as the traced run left them are copied to OUT_DIR/run. The
trace is OUT_DIR/caches.pt.trace.json.gz. Then every block of each launch is timed (CUDA
events, median of 20), so that the advice can be checked: OUT_DIR/times.json.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from benchmarks.gpu.timers import events, save_trace

CUPY_SOURCE = r"""
extern "C" __global__ void scale_add(const float* __restrict__ x,
                                     const float* __restrict__ y, float* __restrict__ out,
                                     float a, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}
"""


def main(argv: list[str]) -> int:
    out = Path(argv[0] if argv else "/tmp/caches")
    out.mkdir(parents=True, exist_ok=True)
    os.environ["TRITON_CACHE_DIR"] = str(out / "triton-cache")
    os.environ["CUPY_CACHE_DIR"] = str(out / "cupy-cache")
    os.environ["CUPY_CACHE_SAVE_CUDA_SOURCE"] = "1"
    import cupy as cp
    import torch
    import triton
    import triton.language as tl
    from torch.profiler import ProfilerActivity, profile

    @triton.jit
    def scale_add_kernel(x_ptr, y_ptr, out_ptr, a, n, BLOCK_SIZE: tl.constexpr):
        pid = tl.program_id(axis=0)
        offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n
        x = tl.load(x_ptr + offsets, mask=mask)
        y = tl.load(y_ptr + offsets, mask=mask)
        tl.store(out_ptr + offsets, a * x + y, mask=mask)

    n = 1 << 24
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    z = torch.empty_like(x)

    def triton_launch(block: int, warps: int = 4):
        grid = (triton.cdiv(n, block),)
        scale_add_kernel[grid](x, y, z, 2.0, n, BLOCK_SIZE=block, num_warps=warps)

    kernel = cp.RawKernel(CUPY_SOURCE, "scale_add")
    cx, cy = cp.asarray(x), cp.asarray(y)
    cz = cp.empty_like(cx)

    def cupy_launch(block: int):
        kernel(((n + block - 1) // block,), (block,), (cx, cy, cz, cp.float32(2.0),
                                                        cp.int64(n)))

    for _ in range(3):
        triton_launch(128, 1)
        cupy_launch(96)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 with_stack=True) as prof:
        for _ in range(10):
            triton_launch(128, 1)
            cupy_launch(96)
        torch.cuda.synchronize()
    save_trace(prof, out / "caches.pt.trace.json")
    # the caches as the traced run left them (the timings below compile more variants)
    for name in ("triton-cache", "cupy-cache"):
        shutil.copytree(out / name, out / "run" / name)

    def time(launch) -> float:
        return events(launch, reps=20)

    times = {"cupy": {b: time(lambda b=b: cupy_launch(b)) for b in range(32, 1025, 32)},
             "triton": {f"{b}x{w}": time(lambda b=b, w=w: triton_launch(b, w))
                        for b in (128, 256, 512, 1024, 2048) for w in (1, 2, 4, 8)
                        if b >= 32 * w}}
    (out / "times.json").write_text(json.dumps(times, indent=1))
    print(json.dumps({k: min(v.items(), key=lambda kv: kv[1]) for k, v in times.items()}))
    print("triton 128x1", times["triton"]["128x1"], "cupy 96", times["cupy"][96])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
