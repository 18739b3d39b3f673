"""Template kernels' instantiations launched, traced and timed (issue 28: each instantiation's
facts from the template's text with its arguments; tests/test_named_types_facts.py).

    python benchmarks/gpu/template_launches.py OUT_DIR        (on the GPU machine)

Compiles fixtures/sources/templates.cu with CuPy's RawModule (NVRTC, ``--std=c++17``, as
the held-out sweep does), its instantiations named by ``name_expressions``, and over 2^24
elements:

* records three launches of each instantiation with the PyTorch profiler, as a user's run
  would be: its kernels' names are the demangled instantiations (``void poly_n<64>(float
  const*, float*, float, long)``); the per-element ones in blocks of ``DEFECT`` threads,
  the grid-stride ones ``LOOP_DEFECT``, ``axpy_b`` in its own block (its index steps by
  it);
* times each per-element instantiation at every block that is a multiple of 32 (grid
  covering the elements) and each grid-stride one over the held-out sweep's loop blocks x
  grids (generate.py's LOOP_BLOCKS x LOOP_GRID_FACTORS SMs) (CUDA events, the median of 15
  launches after 3).

Writes OUT_DIR/templates.pt.trace.json (the profiler's trace) and OUT_DIR/templates.json
(the times, the instantiations, the device).
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import numpy as np

from benchmarks.gpu.heldout.generate import LOOP_BLOCKS, LOOP_GRID_FACTORS

SOURCE = Path(__file__).resolve().parents[2] / "fixtures" / "sources" / "templates.cu"
N = 1 << 24
DEFECT = 32
LOOP_DEFECT = ((1024, 1, 1), (132, 1, 1))
# name expression -> (element dtype, elements per item, kind, scalar dtypes after the arrays)
KERNELS = {
    "copy_t<float>": ("float32", 1, "element", ()),
    "copy_t<float4>": ("float32", 4, "element", ()),
    "copy_t<short>": ("int16", 1, "element", ()),
    "poly_n<8>": ("float32", 1, "element", ("float32",)),
    "poly_n<64>": ("float32", 1, "element", ("float32",)),
    "poly_t<float, 32>": ("float32", 1, "loop", ("float32",)),
    "poly_t<double, 16>": ("float64", 1, "loop", ("float64",)),
    "axpy_b<256u, float>": ("float32", 1, "fixed", ("float32",)),
    "axpy_b<128u, double>": ("float64", 1, "fixed", ("float64",)),
}


def main(argv: list[str]) -> int:
    import cupy as cp
    import torch
    from torch.profiler import ProfilerActivity, profile

    out_dir = Path(argv[0])
    out_dir.mkdir(parents=True, exist_ok=True)
    torch.cuda.init()
    torch.zeros(1, device="cuda")  # one primary context for torch, CuPy and the profiler
    module = cp.RawModule(code=SOURCE.read_text(), options=("--std=c++17",),
                          name_expressions=list(KERNELS))
    arrays, functions = {}, {}
    for expr, (dtype, width, _, _) in KERNELS.items():
        functions[expr] = module.get_function(expr)
        a = cp.arange(N * width, dtype=dtype) % 7
        arrays[expr] = (a, cp.zeros_like(a))

    def args(expr: str) -> tuple:
        a, b = arrays[expr]
        scalars = tuple(getattr(np, t)(0.5) for t in KERNELS[expr][3])
        return (a, b, *scalars, np.int64(N))

    def launch(expr: str, block: tuple, grid: tuple) -> None:
        functions[expr](grid, block, args(expr))

    def defect(expr: str) -> tuple[tuple, tuple]:
        kind = KERNELS[expr][2]
        if kind == "loop":
            return LOOP_DEFECT
        block = int(expr.split("<")[1].split("u")[0]) if kind == "fixed" else DEFECT
        return (block, 1, 1), (-(-N // block), 1, 1)

    def timed(expr: str, block: tuple, grid: tuple) -> float:
        times = []
        for k in range(18):
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            launch(expr, block, grid)
            stop.record()
            stop.synchronize()
            if k >= 3:
                times.append(cp.cuda.get_elapsed_time(start, stop))
        return statistics.median(times)

    rows = {}
    for expr, (_, _, kind, _) in KERNELS.items():
        configs = [defect(expr)]
        if kind == "element":
            configs += [((b, 1, 1), (-(-N // b), 1, 1)) for b in range(32, 1025, 32)]
        elif kind == "loop":
            sms = cp.cuda.Device().attributes["MultiProcessorCount"]
            configs += [((b, 1, 1), (f * sms, 1, 1)) for b in LOOP_BLOCKS
                        for f in LOOP_GRID_FACTORS]
        rows[expr] = [{"block": list(b), "grid": list(g), "ms": timed(expr, b, g)}
                      for b, g in configs]
        best = min(rows[expr], key=lambda r: r["ms"])
        print(f"{expr:22s} defect {rows[expr][0]['ms']:.4f} ms, best {best['ms']:.4f} ms "
              f"at {best['block'][0]} x {best['grid'][0]}", flush=True)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for expr in KERNELS:
            for _ in range(3):
                launch(expr, *defect(expr))
        cp.cuda.Device().synchronize()
    prof.export_chrome_trace(str(out_dir / "templates.pt.trace.json"))
    props = cp.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    (out_dir / "templates.json").write_text(json.dumps(
        {"gpu": name, "n": N, "source": str(SOURCE.relative_to(SOURCE.parents[2])),
         "kernels": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
