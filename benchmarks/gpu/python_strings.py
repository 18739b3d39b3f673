"""A kernel held in a Python string, traced and timed (a script passed with its trace).

    python benchmarks/gpu/python_strings.py OUT_DIR          (on the GPU machine)
    python benchmarks/gpu/python_strings.py --score RUN_DIR  (here)

fixtures/sources/python/saxpy_raw.py launches its CuPy RawKernel over 2^24 floats in
blocks of 100 threads. On the GPU: the launch is recorded with the PyTorch profiler
(OUT_DIR/python.pt.trace.json.gz, 20 launches) and timed at its block and at every block
of whole warps to 1,024 (CUDA events, the median of 15 launches after 3, two interleaved
rounds, the faster kept): OUT_DIR/times.json.

``--score``: occlint reads the trace with the script; the launch group's facts come from
the script's string (not assumed), its fix and claimed saving are set against the times.
"""

from __future__ import annotations

import json
import runpy
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "fixtures" / "sources" / "python" / "saxpy_raw.py"
N = 1 << 24
BLOCK = 100
BLOCKS = (BLOCK, *range(32, 1025, 32))


def sweep(out: Path) -> int:
    import cupy as cp
    import torch
    from torch.profiler import ProfilerActivity, profile

    out.mkdir(parents=True, exist_ok=True)
    script = runpy.run_path(str(SCRIPT))
    x = cp.random.random(N, dtype=cp.float32)
    y = cp.random.random(N, dtype=cp.float32)
    for _ in range(5):
        script["run"](x, y, 2.0, BLOCK)
    cp.cuda.Device().synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(20):
            script["run"](x, y, 2.0, BLOCK)
        cp.cuda.Device().synchronize()
    trace = out / "python.pt.trace.json"
    prof.export_chrome_trace(str(trace))
    subprocess.run(["gzip", "-f", str(trace)], check=True)

    def timed(block: int) -> float:
        times = []
        for k in range(18):
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            script["run"](x, y, 2.0, block)
            stop.record()
            stop.synchronize()
            if k >= 3:
                times.append(cp.cuda.get_elapsed_time(start, stop))
        return statistics.median(times)

    times: dict[int, float] = {}
    for _ in range(2):
        for b in BLOCKS:
            t = timed(b)
            times[b] = min(t, times.get(b, t))
    (out / "times.json").write_text(json.dumps({
        "device": torch.cuda.get_device_name(0), "elements": N, "block": BLOCK,
        "ms": {str(b): round(t, 5) for b, t in sorted(times.items())}}, indent=1) + "\n")
    print(json.dumps({b: round(t * 1e3, 1) for b, t in sorted(times.items())}))
    return 0


def score(run: Path) -> dict:
    """occlint's advice on the traced launch against the times (shares of the time at the
    traced block)."""
    times = json.loads((run / "times.json").read_text())
    ms = {int(b): t for b, t in times["ms"].items()}
    doc = json.loads(subprocess.run(
        [sys.executable, "-m", "occlint", str(run / "python.pt.trace.json.gz"), str(SCRIPT),
         "--format", "json", "--exit-zero", "--isolated"],
        capture_output=True, text=True, check=True, cwd=REPO).stdout)
    group = next(g for g in doc["launches"] if g["kernel"] == "saxpy_raw")
    found = [f for f in group["findings"] if f.get("fix")]
    best = min(ms.values())
    out = {"kernel_facts": group.get("kernel_facts"), "best_block": min(ms, key=ms.get),
           "best_saving": 1 - best / ms[BLOCK]}
    if found:
        f = max(found, key=lambda f: f["saving"]["high"])
        block = f["fix"]["block"][0]
        out.update(rule=f["rule"], severity=f["severity"], block=block,
                   low=f["saving"]["low"], high=f["saving"]["high"],
                   saving=1 - ms[block] / ms[BLOCK], of_best=best / ms[block])
    return out


if __name__ == "__main__":
    if sys.argv[1:2] == ["--score"]:
        print(json.dumps(score(Path(sys.argv[2])), indent=1))
    else:
        sys.exit(sweep(Path(sys.argv[1])))
