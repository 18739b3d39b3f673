"""A textbook block reduction timed at the blocks it can run, and one it cannot run right
(issue 28: the advice keeps to blocks the kernel can run; tests/test_block_validity.py).

    python benchmarks/gpu/block_validity.py OUT_DIR        (on the GPU machine)

The kernel (``SOURCE``: ``__shared__ float sdata[256]`` written at each thread's index, a
tree halving the block, one ``atomicAdd`` a block) sums 2^26 ones in blocks of 64, 128,
192 and 256 threads (never more: past 256 its threads write past the array). Each block
size is timed with CUDA events (the median of 20 launches after 3), and its sum read back:
192 threads, not a power of two, leaves threads out of the tree. The 128-thread launch is
also recorded with the PyTorch profiler, as a user's run would be (three launches).

Writes OUT_DIR/block_validity.json (times, sums, the source) and
OUT_DIR/reduce.pt.trace.json (the profiler's trace).
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

SOURCE = """__global__ void reduce_sum(const float* in, float* out, int n) {
    __shared__ float sdata[256];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) atomicAdd(out, sdata[0]);
}
"""
N = 1 << 26
BLOCKS = (64, 128, 192, 256)


def main(argv: list[str]) -> int:
    import cupy as cp
    import torch
    from torch.profiler import ProfilerActivity, profile

    out_dir = Path(argv[0])
    out_dir.mkdir(parents=True, exist_ok=True)
    torch.cuda.init()
    torch.zeros(1, device="cuda")  # one primary context for torch, CuPy and the profiler
    fn = cp.RawModule(code='extern "C" {\n' + SOURCE + "}\n").get_function("reduce_sum")
    data = cp.ones(N, dtype=cp.float32)
    total = cp.zeros(1, dtype=cp.float32)
    rows = []
    for block in BLOCKS:
        grid = -(-N // block)

        def launch(block: int = block, grid: int = grid) -> None:
            fn((grid,), (block,), (data, total, cp.int32(N)))

        total.fill(0)
        launch()
        cp.cuda.Device().synchronize()
        got = float(total.get()[0])
        times = []
        for k in range(23):
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            launch()
            stop.record()
            stop.synchronize()
            if k >= 3:
                times.append(cp.cuda.get_elapsed_time(start, stop))
        rows.append({"block": block, "grid": grid, "ms": statistics.median(times),
                     "sum": got, "exact": got == float(N)})
        print(rows[-1], flush=True)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(3):
            fn((N // 128,), (128,), (data, total, cp.int32(N)))
        cp.cuda.Device().synchronize()
    prof.export_chrome_trace(str(out_dir / "reduce.pt.trace.json"))
    props = cp.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    (out_dir / "block_validity.json").write_text(json.dumps(
        {"gpu": name, "n": N, "source": SOURCE, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
