"""Record a small PyTorch profiler trace with Python stacks and module scopes, a raw user
kernel and cooperative launches, on the lent GPU machine (fixtures/traces/kineto/links.*).

    nvcc -shared -Xcompiler -fPIC -arch=sm_90 -O3 -cudart shared \\
        benchmarks/traces/kernels/coop_launch.cu -o /tmp/libcoop.so
    python3 benchmarks/traces/record_links.py OUT.pt.trace.json.gz /tmp/libcoop.so

Under ``torch.profiler.profile(with_stack=True, with_modules=True)``: a tiny model's forward
(two Linear layers, a LayerNorm and a GELU in an nn.Module), a CuPy RawKernel launched with a
block of 100 threads (a user kernel with a defect), the same kernel source launched
cooperatively by CuPy (``enable_cooperative_groups``: cuLaunchCooperativeKernel), and
``coop_scale`` launched through ``cudaLaunchCooperativeKernel`` (kernels/coop_launch.cu) with
a grid of all resident blocks but a few (not a multiple of the SM count).

Beside the trace, ``OUT.truth.json``: the first line of the functions that launch (PyTorch's
Python tracer names a frame ``file(line): function`` by the line it entered the function at:
its ``def``, ``co_firstlineno``), the grids asked for, the resident-block count the CUDA
runtime gave and the libraries' versions — what the tests compare occlint with.
"""

from __future__ import annotations

import ctypes
import gzip
import json
import shutil
import sys
from pathlib import Path

SAXPY = r"""
extern "C" __global__ void saxpy(const float* x, float* y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
"""


def main(out: Path, libcoop: str) -> None:
    import cupy as cp
    import torch

    class Tiny(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1 = torch.nn.Linear(256, 512)
            self.norm = torch.nn.LayerNorm(512)
            self.fc2 = torch.nn.Linear(512, 128)

        def forward(self, x):
            x = self.fc1(x)
            x = torch.nn.functional.gelu(self.norm(x))
            return self.fc2(x)

    torch.manual_seed(0)
    model = Tiny().cuda()
    x = torch.randn(64, 256, device="cuda")
    n = 100_000
    xs = cp.arange(n, dtype=cp.float32)
    ys = cp.ones(n, dtype=cp.float32)
    saxpy = cp.RawKernel(SAXPY, "saxpy")
    coop = cp.RawKernel(SAXPY, "saxpy", enable_cooperative_groups=True)
    lib = ctypes.CDLL(libcoop)
    lib.launch_coop_scale.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_float,
                                      ctypes.c_int, ctypes.c_int]
    resident = lib.resident_blocks(256)
    coop_grid = resident - 5
    data = torch.ones(1 << 20, device="cuda")

    def step() -> int:
        with torch.no_grad():
            model(x)
        grid = (n + 99) // 100
        saxpy((grid,), (100,), (xs, ys, cp.float32(2.0), cp.int32(n)))
        coop((132,), (128,), (xs, ys, cp.float32(2.0), cp.int32(n)))
        return lib.launch_coop_scale(data.data_ptr(), data.numel(), 1.0, coop_grid, 256)

    assert step() == 0  # warm-up (and the launch works)
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                            torch.profiler.ProfilerActivity.CUDA],
                                with_stack=True, with_modules=True) as prof:
        assert step() == 0
        torch.cuda.synchronize()
    plain = out.with_suffix("")
    prof.export_chrome_trace(str(plain))
    with open(plain, "rb") as src, gzip.open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    plain.unlink()
    truth = {"script": "benchmarks/traces/record_links.py",
             "first_lines": {"forward": Tiny.forward.__code__.co_firstlineno,
                             "step": step.__code__.co_firstlineno},
             "saxpy_grid": (n + 99) // 100, "saxpy_block": 100, "cupy_coop_grid": 132,
             "coop_scale_grid": coop_grid, "coop_scale_block": 256,
             "resident_blocks_256": resident, "torch": torch.__version__,
             "cupy": cp.__version__, "gpu": torch.cuda.get_device_name()}
    Path(str(out).removesuffix(".pt.trace.json.gz") + ".truth.json").write_text(
        json.dumps(truth, indent=1) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
