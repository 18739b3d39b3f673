"""How many of a grid-stride loop's loads are in flight at once, as compiled (issue 28).

    python benchmarks/gpu/loop_depth.py OUT_DIR        (on the GPU machine)

The launch model reads a loop's bytes in flight from the characterisation's curves, whose
loops hold one element's load a pass as written. A loop body of the held-out generator's
shape (benchmarks/gpu/heldout/generate.py: loads, a reduction, a store) is timed here at
one block per SM of 1 to 32 warps (where bytes in flight set the time) in four forms:
one or two loads of a float or a float4, each as the compiler unrolls it and with
``#pragma unroll 1``; and the same with no store. The SASS of every kernel (NVRTC's PTX as
the sweep's CuPy builds it, through ptxas and cuobjdump) is written beside: the order of its
global loads and stores in the loop shows what is in flight before the first wait.

The characterisation's own loops (benchmarks/gpu/characterize.py, whose curves the model
reads) are compiled the same way and their order recorded too: the copies written with
one load a pass hold the four the compiler unrolls, the reads written so hold fewer (the
read curve is reduced from the reads written with four, device_params.py).

Writes OUT_DIR/loop_depth.json (times, SASS orders, sources) and
OUT_DIR/loop_depth.sass.txt (the held-out bodies' SASS).
"""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE))

import characterize  # noqa: E402
import nvrtc_ptx  # noqa: E402

from benchmarks.gpu.heldout.generate import PRELUDE, VECTOR, gridstride  # noqa: E402

BLOCKS = (32, 64, 128, 256, 512, 1024)
BYTES = 1 << 28  # each array


def kernels() -> dict[str, dict]:
    out = {}
    for vector in (1, 4):
        for loads in (1, 2):
            for store in (True, False):
                for unroll in (None, 1):
                    name = f"v{vector}_l{loads}_{'st' if store else 'ro'}" + \
                        ("_u1" if unroll else "")
                    k = {"vector": vector, "loads": loads, "store": store, "fma": 0,
                         "regs_pad": 0, "atomic": None}
                    src = gridstride(name, k)
                    if unroll:
                        src = src.replace("    for (long i",
                                          "    #pragma unroll 1\n    for (long i")
                    out[name] = {**k, "unroll": unroll, "source": src}
    for vector in (1, 4):  # the characterisation's copy: one load and its store
        T = VECTOR[vector]
        name = f"copy_v{vector}"
        out[name] = {"vector": vector, "loads": 1, "store": True, "unroll": None, "source": (
            f'extern "C" __global__ void {name}(const {T}* __restrict__ a, const {T}* '
            f"__restrict__ b, {T}* __restrict__ c, float* __restrict__ sum, float s, long n) {{\n"
            "    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;\n"
            "         i += (long)blockDim.x * gridDim.x) c[i] = a[i];\n}\n")}
    return out


def sass(source: str, names: list[str]) -> tuple[dict[str, list[str]], str]:
    """Each kernel's global loads, stores and branches in SASS order, and the SASS: the PTX
    NVRTC makes of ``source`` as CuPy's RawModule does (nvrtc_ptx.py: what the sweeps and
    the characterisation run), assembled by ptxas for the device and disassembled by
    cuobjdump (NVRTC's own cubin is one cuobjdump 13.0 does not read)."""
    import cupy as cp

    major, minor = cp.cuda.Device().compute_capability
    with tempfile.TemporaryDirectory() as d:
        ptx, cubin = Path(d) / "k.ptx", Path(d) / "k.cubin"
        ptx.write_text(nvrtc_ptx.ptx(source, "k.cu"))
        subprocess.run(["ptxas", f"-arch=sm_{major}{minor}", "-o", str(cubin), str(ptx)],
                       check=True)
        text = subprocess.run(["cuobjdump", "-sass", str(cubin)], check=True,
                              capture_output=True, text=True).stdout
    out: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        m = re.search(r"Function : (\w+)", line)
        if m:
            current = m[1]
            out[current] = []
            continue
        if current and re.search(r"\b(LDG|STG|BRA)\b", line):
            op = re.search(r"\b((?:LDG|STG|BRA)[\w.]*)", line)[1]
            out[current].append(op)
    return {n: out.get(n, []) for n in names}, text


def main(out_dir: str) -> int:
    import cupy as cp

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ks = kernels()
    source = PRELUDE + "".join(k["source"] for k in ks.values())
    orders, text = sass(source, list(ks))
    (out / "loop_depth.sass.txt").write_text(text)
    curves = [f"{kind.lower()}_{t}_{u}" for kind, t, u in
              re.findall(r"(READ|COPY)\((\w+), (\d)\)", characterize.SOURCE)]
    curve_orders, _ = sass(characterize.SOURCE, curves)
    module = cp.RawModule(code=source, options=("--std=c++17",))
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    arrays = [cp.random.random(BYTES // 4, dtype=cp.float32) for _ in range(3)]
    total = cp.zeros(2, dtype=cp.float32)
    rows = []
    for name, k in ks.items():
        fn = module.get_function(name)
        n = BYTES // (4 * k["vector"])
        moved = n * 4 * k["vector"] * (k["loads"] + k["store"])
        for block in BLOCKS:
            args = (arrays[0], arrays[1], arrays[2], total, cp.float32(0.5), cp.int64(n))
            grid = sms
            for _ in range(2):
                fn((grid,), (block,), args)
            start, end = cp.cuda.Event(), cp.cuda.Event()
            times = []
            for _ in range(7):
                start.record()
                fn((grid,), (block,), args)
                end.record()
                end.synchronize()
                times.append(cp.cuda.get_elapsed_time(start, end))
            ms = statistics.median(times)
            rows.append({"kernel": name, "vector": k["vector"], "loads": k["loads"],
                         "store": k["store"], "unroll": k["unroll"], "block": block,
                         "grid": grid, "n": n, "ms": ms, "gbps": moved / ms / 1e6})
            print(f"{name:14s} {block:5d} {ms:8.3f} ms {moved / ms / 1e6:8.1f} GB/s",
                  flush=True)
    for name in ks:
        print(name, " ".join(orders[name]))
    (out / "loop_depth.json").write_text(json.dumps(
        {"sms": sms, "device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
         "rows": rows, "sass_order": orders, "characterize_sass_order": curve_orders,
         "sources": {n: k["source"] for n, k in ks.items()}},
        indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
