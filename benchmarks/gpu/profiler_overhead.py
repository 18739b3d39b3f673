"""What the PyTorch profiler adds to the gaps between launches, and what capturing a burst
in a CUDA graph saves without it (issue 29 item 3; docs/validation.md).

    PYTHONPATH=. python3 benchmarks/gpu/profiler_overhead.py OUT_DIR      # on the lent GPU machine

Three workloads, each a burst of short launches a user writes: ``ops`` (100 small eager
tensor ops on 4,096 floats), ``mlp`` (a 16-layer MLP's forward on a batch of 8, eager),
``cupy`` (100 small CuPy elementwise kernels); and ``attn`` (25 steps of a 64 x 64
attention-like product, softmax and sum: cuBLAS and ATen kernels), added after the ratios
in occlint.judgement.cost were set from the first three. For each: the time of one call without the
profiler (synchronised wall time, median of 50), the same captured in a CUDA graph and
replayed (torch's graphs; a CuPy stream's capture), and the call recorded by the
profiler under each option set (none, ``record_shapes``, ``with_stack``,
``profile_memory``, all three): its wall time and its trace
(OUT_DIR/<workload>-<options>.pt.trace.json.gz), from which the gaps between the burst's
kernels are read offline. Prints one JSON document (summary.json).

    python3 -m benchmarks.gpu.profiler_overhead --summarize DIR   # here, on the results

reads each trace's kernels (their busy time and the idle time between the first's start
and the last's end) and sets them beside the times without the profiler: the idle time
a call really has (its time without the profiler less its kernels' busy time), what the
trace shows under each option set, their ratio, and what a CUDA graph saved.
"""

from __future__ import annotations

import gzip
import json
import statistics
import sys
import time
from pathlib import Path

from benchmarks.gpu import timers

OPTIONS = {
    "none": {},
    "shapes": {"record_shapes": True},
    "stack": {"with_stack": True},
    "memory": {"profile_memory": True},
    "all": {"record_shapes": True, "with_stack": True, "profile_memory": True},
}


def workloads():
    import cupy as cp
    import torch

    x = torch.randn(4096, device="cuda")

    def ops():
        y = x
        for i in range(100):
            y = y * 1.0001 + 0.5 if i % 2 else torch.relu(y - 0.25)
        return y

    layers = torch.nn.Sequential(*[m for _ in range(16) for m in
                                   (torch.nn.Linear(256, 256), torch.nn.ReLU())]).cuda()
    batch = torch.randn(8, 256, device="cuda")

    def mlp():
        with torch.no_grad():
            return layers(batch)

    k = cp.ElementwiseKernel("float32 a", "float32 b", "b = a * 1.0001f + 0.5f", "axpb")
    a = cp.random.standard_normal(4096, dtype=cp.float32)

    def cupy_ops():
        y = a
        for _ in range(100):
            y = k(y)
        return y

    q = torch.randn(64, 64, device="cuda")

    def attn():  # recorded after the ratios were set from the three above (a held-out one)
        y = q
        for _ in range(25):
            y = torch.softmax(y @ q.T * 0.125, dim=-1) @ q + y
        return y

    return {"ops": (ops, True), "mlp": (mlp, True), "cupy": (cupy_ops, "cupy"),
            "attn": (attn, True)}


def wall(fn, reps: int = 50) -> float:
    """Seconds of one call, without the profiler (the workload is warm already)."""
    return timers.wall(fn, reps, warm=0) / 1e3


def graphed(fn, how):
    """``fn`` captured in a CUDA graph (torch's, or a CuPy stream's capture), its replay."""

    if how == "cupy":
        import cupy as cp

        stream = cp.cuda.Stream(non_blocking=True)
        with stream:
            fn()
            stream.begin_capture()
            fn()
            graph = stream.end_capture()
        return lambda: graph.launch(stream)

    return timers.graphed(fn)


def summarize(run: Path) -> dict:
    summary = json.loads((run / "summary.json").read_text())
    out = {}
    for name, row in summary["runs"].items():
        per = {}
        for opt in OPTIONS:
            with gzip.open(run / f"{name}-{opt}.pt.trace.json.gz") as f:
                events = json.load(f)["traceEvents"]
            kernels = sorted((e for e in events if e.get("cat") == "kernel"),
                             key=lambda e: e["ts"])
            busy = sum(e["dur"] for e in kernels)
            span = kernels[-1]["ts"] + kernels[-1]["dur"] - kernels[0]["ts"]
            per[opt] = {"kernels": len(kernels), "busy_us": round(busy, 1),
                        "idle_us": round(span - busy, 1)}
        busy = per["none"]["busy_us"]
        real_idle = row["eager_s"] * 1e6 - busy
        out[name] = {"eager_us": round(row["eager_s"] * 1e6, 1),
                     "graph_us": round(row["graph_s"] * 1e6, 1) if "graph_s" in row else None,
                     "real_idle_us": round(real_idle, 1),
                     "traced_idle_us": {k: v["idle_us"] for k, v in per.items()},
                     "traced_over_real": {k: round(v["idle_us"] / real_idle, 2)
                                          for k, v in per.items()}}
    return out


def main(argv: list[str]) -> int:
    only = None
    if "--only" in argv:  # --only NAME[,NAME]: those workloads
        i = argv.index("--only")
        only, argv = argv[i + 1].split(","), argv[:i] + argv[i + 2:]
    if argv[:1] == ["--summarize"]:
        print(json.dumps(summarize(Path(argv[1])), indent=1))
        return 0
    import torch
    from torch.profiler import ProfilerActivity, profile

    out = Path(argv[0] if argv else "/tmp/profiler-overhead")
    out.mkdir(parents=True, exist_ok=True)
    summary = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "runs": {}}
    for name, (fn, graphable) in workloads().items():
        if only and name not in only:
            continue
        for _ in range(5):
            fn()
        row = {"eager_s": wall(fn)}
        if graphable:
            row["graph_s"] = wall(graphed(fn, graphable))
        for opt, kwargs in OPTIONS.items():
            times = []
            for rep in range(4):  # the first is the profiler's warm-up: not kept
                torch.cuda.synchronize()
                with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                             **kwargs) as prof:
                    t = time.perf_counter()
                    fn()
                    torch.cuda.synchronize()
                    if rep:
                        times.append(time.perf_counter() - t)
                if rep == 1:
                    timers.save_trace(prof, out / f"{name}-{opt}.pt.trace.json")
            row[f"profiled_{opt}_s"] = statistics.median(times)
        summary["runs"][name] = row
        print(name, json.dumps(row), flush=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
