"""Saving calibration: time each finding's fix on the GPU (issue 18, docs/validation.md).

    python3 benchmarks/gpu/calibration/calibrate.py OUTDIR      # on the lent GPU machine

Each *pair* is a defective launch (what a finding fires on) and its fix (what the finding
advises), doing the same work. For every pair the script checks both against a reference,
times both (CUDA events, median of interleaved rounds after warm-up), and records the
defective launches with the PyTorch profiler, as a user's run would be recorded:

    OUTDIR/calibration.json            the pairs, their launches and measured times
    OUTDIR/calibration.pt.trace.json   the Kineto trace of the defective launches

tests/test_calibration.py runs occlint on the committed trace (with kernels.cu, the source
that tells one-element-per-thread kernels from grid-stride loops) and checks its saving
ranges against the measured savings. Nothing here reads occlint's output.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
N_MEM = 1 << 26  # floats: 768 MB moved per saxpy, far past the L2
N_CMP = 1 << 23
N_TINY = 1 << 12
KB = 1024


@dataclass
class Launch:
    kernel: str
    block: int
    grid: int | None = None  # None: one element per thread, ceil(n / block)
    smem: int = 0  # dynamic shared memory per block (bytes): an occupancy limiter
    maxrreg: int | None = None  # compiled with --maxrregcount
    launches: int = 1  # > 1: that many back-to-back launches (a launch-overhead pair)
    graph: bool = False  # replay the launches as one CUDA graph


@dataclass
class Pair:
    id: str
    finding: str  # what occlint should say about the defect (the rule family)
    what: str
    n: int
    defect: Launch
    fix: Launch
    results: dict = field(default_factory=dict)


def pairs(sms: int) -> list[Pair]:
    S = sms
    p = []
    # LCH001: blocks not a multiple of the warp (one element per thread)
    for i, (k, n, bad, good) in enumerate([
            ("saxpy", N_MEM, 100, 128), ("saxpy", N_MEM, 48, 64), ("saxpy", N_MEM, 1000, 1024),
            ("fma_chain", N_CMP, 100, 128), ("fma_chain", N_CMP, 48, 64),
            ("fma_chain", N_CMP, 200, 224), ("fma_chain", N_CMP, 1000, 1024)]):
        p.append(Pair(f"warp-{i + 1}", "LCH001", f"{k}: block {bad} -> {good}", n,
                      Launch(k, bad), Launch(k, good)))
    # LCH102: grid-stride loops on fewer blocks than SMs -> at least one block per SM
    for i, (k, n, grid, block) in enumerate([
            ("saxpy_gs", N_MEM, S - 32, 256), ("saxpy_gs", N_MEM, S // 4, 1024),
            ("fma_chain_gs", N_CMP, S - 32, 256), ("fma_chain_gs", N_CMP, S // 2, 1024)]):
        p.append(Pair(f"small-grid-{i + 1}", "LCH102", f"{k}: grid {grid} -> {S}", n,
                      Launch(k, block, grid), Launch(k, block, S)))
    # LCH101/LCH105: a partial last wave of a grid-stride loop -> a balanced grid
    for i, (k, n, grid, good, block) in enumerate([
            ("fma_chain_gs", N_CMP, 8 * S + S // 2, 8 * S, 256),
            ("saxpy_gs", N_MEM, 8 * S + S // 2, 8 * S, 256),
            ("fma_chain_gs", N_CMP, 24 * S + S // 2, 24 * S, 256),
            ("fma_chain_gs", N_CMP, 2 * S + S // 4, 2 * S, 1024)]):
        p.append(Pair(f"tail-{i + 1}", "LCH101", f"{k}: grid {grid} -> {good}", n,
                      Launch(k, block, grid), Launch(k, block, good)))
    # LCH103: memory-bound grid-stride loops below the oversubscription target
    target = 10 * S * 64 // 8  # 10x the warp slots, 8 warps per 256-thread block
    for i, (k, n, grid) in enumerate([
            ("saxpy_gs", N_MEM, 2 * S), ("saxpy_gs", N_MEM, 4 * S), ("saxpy_gs", N_MEM, 8 * S),
            ("fma_chain_gs", N_CMP, 2 * S), ("fma_chain_gs", N_CMP, 8 * S)]):
        p.append(Pair(f"oversub-{i + 1}", "LCH103", f"{k}: grid {grid} -> {target}", n,
                      Launch(k, 256, grid), Launch(k, 256, target)))
    # OCC: occupancy limited by shared memory, registers or the block size
    for i, (k, n, smem) in enumerate([
            ("saxpy", N_MEM, 120 * KB), ("saxpy", N_MEM, 100 * KB), ("saxpy", N_MEM, 50 * KB),
            ("saxpy", N_MEM, 36 * KB), ("fma_chain", N_CMP, 120 * KB),
            ("fma_chain", N_CMP, 100 * KB), ("fma_chain", N_CMP, 50 * KB),
            ("fma_chain", N_CMP, 36 * KB)]):
        p.append(Pair(f"occupancy-smem-{i + 1}", "OCC", f"{k}: {smem // KB} KiB shared -> 0",
                      n, Launch(k, 256, smem=smem), Launch(k, 256)))
    p.append(Pair("occupancy-regs-1", "OCC", "fma_wide: registers capped at 64", N_CMP,
                  Launch("fma_wide", 256), Launch("fma_wide", 256, maxrreg=64)))
    p.append(Pair("occupancy-regs-2", "OCC", "fma_wide: registers capped at 40", N_CMP,
                  Launch("fma_wide", 256), Launch("fma_wide", 256, maxrreg=40)))
    for i, (k, n) in enumerate([("saxpy_rare", N_MEM), ("fma_chain_rare", N_CMP)]):
        p.append(Pair(f"occupancy-regs-{i + 3}", "OCC", f"{k}: registers capped at 32", n,
                      Launch(k, 256), Launch(k, 256, maxrreg=32)))
    for i, (k, n) in enumerate([("saxpy", N_MEM), ("fma_chain", N_CMP)]):
        p.append(Pair(f"occupancy-block-{i + 1}", "OCC", f"{k}: block 32 -> 256", n,
                      Launch(k, 32), Launch(k, 256)))
    # LCH201: many short launches -> one CUDA graph
    for i, count in enumerate([200, 50]):
        p.append(Pair(f"overhead-{i + 1}", "LCH201", f"{count} short saxpy launches -> a graph",
                      N_TINY, Launch("saxpy", 256, launches=count),
                      Launch("saxpy", 256, launches=count, graph=True)))
    return p


class Runner:
    def __init__(self) -> None:
        import cupy as cp

        self.cp = cp
        self.source = (HERE / "kernels.cu").read_text()
        self.modules: dict[int | None, object] = {}
        rng = cp.random.default_rng(1)
        self.x = rng.standard_normal(N_MEM, dtype=cp.float32)
        self.y0 = rng.standard_normal(N_MEM, dtype=cp.float32)
        self.y = cp.empty(N_MEM + 1, dtype=cp.float32)  # one past n: must stay unwritten
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.graphs: dict[tuple, object] = {}

    def function(self, launch: Launch):
        cp = self.cp
        if launch.maxrreg not in self.modules:
            opts = ("--std=c++17",) + ((f"--maxrregcount={launch.maxrreg}",)
                                       if launch.maxrreg else ())
            self.modules[launch.maxrreg] = cp.RawModule(code=self.source, options=opts)
        f = self.modules[launch.maxrreg].get_function(launch.kernel)
        if launch.smem > 48 * KB:
            f.max_dynamic_shared_size_bytes = launch.smem
        return f

    def grid(self, launch: Launch, n: int) -> int:
        return launch.grid if launch.grid is not None else -(-n // launch.block)

    def enqueue(self, launch: Launch, n: int) -> None:
        cp = self.cp
        f = self.function(launch)
        args = (self.x, self.y, cp.float32(0.999), cp.int64(n))
        for _ in range(launch.launches):
            f((self.grid(launch, n),), (launch.block,), args, shared_mem=launch.smem)

    def run(self, launch: Launch, n: int) -> None:
        if not launch.graph:
            with self.stream:
                self.enqueue(launch, n)
            return
        key = (launch.kernel, launch.block, launch.launches, n)
        if key not in self.graphs:
            with self.stream:
                self.stream.begin_capture()
                self.enqueue(launch, n)
                self.graphs[key] = self.stream.end_capture()
        self.graphs[key].launch(stream=self.stream)

    def output(self, launch: Launch, n: int):
        with self.stream:
            self.y[:n] = self.y0[:n]
            self.y[n:n + 1] = float("nan")  # an element past n must stay unwritten
        self.run(launch, n)
        self.stream.synchronize()
        return self.y[:n + 1].copy()

    def time_ms(self, launch: Launch, n: int, reps: int) -> list[float]:
        cp = self.cp
        out = []
        for _ in range(reps):
            with self.stream:  # fresh inputs, and the L2 flushed by the copy
                self.y[:n] = self.y0[:n]
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record(self.stream)
            self.run(launch, n)
            end.record(self.stream)
            end.synchronize()
            out.append(cp.cuda.get_elapsed_time(start, end))
        return out


def check(r: Runner, pair: Pair) -> float:
    """Relative difference between the fix's and the defect's outputs and a reference
    launch (block 256, one thread per element); the element past n must stay NaN."""
    cp = r.cp
    ref_kernel = pair.defect.kernel.replace("_gs", "").replace("_rare", "")
    ref = r.output(Launch(ref_kernel, 256, maxrreg=None), pair.n)
    worst = 0.0
    for launch in (pair.defect, pair.fix):
        if launch.launches > 1:
            continue  # repeated saxpy: compared below by its own reference
        out = r.output(launch, pair.n)
        if not bool(cp.isnan(out[-1])):
            raise SystemExit(f"{pair.id}: wrote past n")
        err = float(cp.linalg.norm(out[:-1] - ref[:-1]) / cp.linalg.norm(ref[:-1]))
        worst = max(worst, err)
    return worst


def main(argv: list[str]) -> int:
    import cupy as cp
    import torch
    from torch.profiler import ProfilerActivity, profile

    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    torch.cuda.init()
    torch.zeros(1, device="cuda")  # one primary context for torch, CuPy and the profiler
    props = cp.cuda.runtime.getDeviceProperties(0)
    sms = props["multiProcessorCount"]
    r = Runner()
    todo = pairs(sms)
    rounds, reps = 3, 15
    for pair in todo:  # compile and load every variant before anything is checked
        for launch in (pair.defect, pair.fix):
            r.output(launch, pair.n)
    for pair in todo:
        pair.results["max_relative_error"] = check(r, pair)
        if not pair.results["max_relative_error"] < 1e-5:
            raise SystemExit(f"{pair.id}: outputs differ from the reference: "
                             f"{pair.results['max_relative_error']:.2e}")
        for launch in (pair.defect, pair.fix):
            r.time_ms(launch, pair.n, 3)  # warm-up, graph capture
        f = r.function(pair.defect), r.function(pair.fix)
        pair.results["registers"] = [f[0].num_regs, f[1].num_regs]
    times: dict[tuple[str, str], list[float]] = {}
    for rnd in range(rounds):  # interleaved rounds: drift hits defect and fix alike
        for pair in todo:
            order = ("defect", "fix") if rnd % 2 == 0 else ("fix", "defect")
            for which in order:
                times.setdefault((pair.id, which), []).extend(
                    r.time_ms(getattr(pair, which), pair.n, reps))
    for pair in todo:
        d = statistics.median(times[(pair.id, "defect")])
        fx = statistics.median(times[(pair.id, "fix")])
        pair.results.update(defect_ms=d, fix_ms=fx, saving=1 - fx / d,
                            defect_spread=statistics.pstdev(times[(pair.id, "defect")]) / d,
                            fix_spread=statistics.pstdev(times[(pair.id, "fix")]) / fx,
                            defect_grid=r.grid(pair.defect, pair.n),
                            fix_grid=r.grid(pair.fix, pair.n))
    # the defective launches, recorded as a user's run is
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for pair in todo:
            for _ in range(1 if pair.defect.launches > 1 else 5):
                r.run(pair.defect, pair.n)
            r.stream.synchronize()
            time.sleep(0.002)  # pairs apart: no launch-overhead burst across them
    prof.export_chrome_trace(str(out / "calibration.pt.trace.json"))
    env = {"gpu": props["name"].decode() if isinstance(props["name"], bytes) else props["name"],
           "sms": sms, "torch": torch.__version__, "cupy": cp.__version__,
           "cuda_runtime": cp.cuda.runtime.runtimeGetVersion(),
           "driver": cp.cuda.runtime.driverGetVersion(),
           "date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
           "rounds": rounds, "reps_per_round": reps}
    doc = {"env": env, "pairs": [asdict(p) for p in todo]}
    (out / "calibration.json").write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{'pair':20s} {'regs':>7s} {'defect ms':>10s} {'fix ms':>9s} {'saving':>7s} err")
    for p in todo:
        res = p.results
        print(f"{p.id:20s} {res['registers']!s:>7s} {res['defect_ms']:10.4f} "
              f"{res['fix_ms']:9.4f} {100 * res['saving']:6.1f}% "
              f"{res['max_relative_error']:.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
