"""Time every configuration of the held-out kernels and record their defects (issue 28).

    python3 benchmarks/gpu/heldout/sweep.py OUTDIR [--suite DIR] [--only NAME ...]
    ncu ... python3 benchmarks/gpu/heldout/sweep.py --ncu [--suite DIR]

(on the lent GPU; ``--suite DIR``: the suite.json and kernels.cu of ``generate.py --seed S
--out DIR``, else seed 28's)

For every kernel of suite.json (generate.py): checks the defective launch's output against
the habit launch (256 threads; 8 blocks per SM for loops), times every configuration the
sweep covers (one element per thread: every block of whole warps; loops: blocks of 1 to
32 warps x grids of whole multiples of the SM count; 2-D images: every shape of whole
warps up to 1024 threads), each the median of CUDA-event timings (since stop 43 each
launch queued behind a spinning kernel: the GPU's time, without the ~9 us the CPU takes
to submit it, which the earlier sweeps' times hold), and records the
defective launches with the PyTorch profiler, as a user's run would be recorded:

    OUTDIR/heldout.json            every kernel's configurations and times
    OUTDIR/heldout.pt.trace.json   the Kineto trace of the defective launches

Nothing here reads occlint.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

from benchmarks.gpu.heldout.generate import LOOP_FAMILIES

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parents[2] / "fixtures/traces/heldout/kernels.cu"  # generate.py writes it
SUITE = HERE / "suite.json"
KB = 1024
# a kernel that holds the stream for HEAD_START_NS while the timed launch is submitted
HEAD_START_NS = 50_000
SPIN = r"""
extern "C" __global__ void sweep_spin(long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < (unsigned long long)ns);
}
"""


def configs(k: dict, suite: dict, sms: int) -> list[dict]:
    """(block, grid, smem) of every configuration timed for kernel ``k``; the first is the
    defect."""
    fam, facts, n = k["family"], k["facts"], k["n"]
    d = k["defect"]
    out: list[dict] = []

    def smem(block: int) -> int:
        if fam == "tile":
            return (block + 2 * facts["radius"]) * facts["smem_per_thread"]
        return facts["smem"]

    def add(block: list[int], grid: list[int]) -> None:
        c = {"block": block, "grid": grid, "smem": smem(block[0] * block[1])}
        if c not in out:
            out.append(c)

    if fam in LOOP_FAMILIES:
        add(d["block"], [max(1, round(d["grid_sms"] * sms)), 1, 1])
        for b in suite["loop_blocks"]:
            for g in suite["loop_grid_factors"]:
                add([b, 1, 1], [g * sms, 1, 1])
    elif fam == "image":
        w, h = k["width"], k["height"]
        for x, y in [tuple(d["block"][:2])] + [tuple(s) for s in suite["shapes_2d"]]:
            add([x, y, 1], [-(-w // x), -(-h // y), 1])
    elif fam == "block-per-row":
        add(d["block"], [k["rows"], 1, 1])
        for b in range(32, 1025, 32):
            add([b, 1, 1], [k["rows"], 1, 1])
    else:
        add(d["block"], [-(-n // d["block"][0]), 1, 1])
        for b in range(32, 1025, 32):
            add([b, 1, 1], [-(-n // b), 1, 1])
    return out


def habit(k: dict, sms: int) -> dict:
    """The fixed habit: 256 threads (16 x 16 for images); loops 8 blocks per SM."""
    if k["family"] in LOOP_FAMILIES:
        return {"block": [256, 1, 1], "grid": [8 * sms, 1, 1]}
    if k["family"] == "image":
        return {"block": [16, 16, 1], "grid": [-(-k["width"] // 16), -(-k["height"] // 16), 1]}
    if k["family"] == "block-per-row":
        return {"block": [256, 1, 1], "grid": [k["rows"], 1, 1]}
    return {"block": [256, 1, 1], "grid": [-(-k["n"] // 256), 1, 1]}


class Runner:
    def __init__(self, suite: dict) -> None:
        import cupy as cp

        self.cp = cp
        src = SOURCE.read_text()
        self.module = cp.RawModule(code=src, options=("--std=c++17",))
        floats = max(k["n"] * k["facts"]["vector"] for k in suite["kernels"])
        rng = cp.random.default_rng(3)
        self.a = rng.standard_normal(floats, dtype=cp.float32)
        self.b = rng.standard_normal(floats, dtype=cp.float32)
        self.c = cp.empty(floats, dtype=cp.float32)
        self.sum = cp.zeros(1 << 20, dtype=cp.float32)
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.functions: dict[str, object] = {}
        self.spin = cp.RawModule(code=SPIN).get_function("sweep_spin")

    def function(self, k: dict, smem: int):
        f = self.functions.get(k["name"])
        if f is None:
            f = self.functions[k["name"]] = self.module.get_function(k["name"])
        if smem > 48 * KB and f.max_dynamic_shared_size_bytes < smem:
            f.max_dynamic_shared_size_bytes = smem
        return f

    def args(self, k: dict) -> tuple:
        cp = self.cp
        s, n = cp.float32(0.999), cp.int64(k["n"])
        if k["family"] == "tile":
            return (self.a, self.c, self.sum, s, n)
        base = (self.a, self.b, self.c, self.sum, s, n)
        if k["family"] == "image":
            return (*base, cp.int32(k["width"]), cp.int32(k["height"]))
        if k["family"] == "block-per-row":
            return (*base, cp.int64(k["cols"]))
        return base

    def launch(self, k: dict, c: dict) -> None:
        f = self.function(k, c["smem"])
        f(tuple(c["grid"]), tuple(c["block"]), self.args(k), shared_mem=c["smem"])

    def launches(self, k: dict, c: dict) -> bool:
        """Whether the configuration can launch at all (a block of 1024 threads of a kernel
        past 64 registers cannot)."""
        block = c["block"][0] * c["block"][1] * c["block"][2]
        if block > self.function(k, c["smem"]).max_threads_per_block:
            return False  # asked of the function, not launched (a failed launch ends ncu)
        try:
            with self.stream:
                self.launch(k, c)
            self.stream.synchronize()
            return True
        except self.cp.cuda.driver.CUDADriverError:
            return False

    def time_ms(self, k: dict, c: dict, reps: int) -> list[float]:
        """CUDA-event times of ``reps`` launches, each queued behind a kernel that spins
        for HEAD_START_NS, so that the GPU has the events and the launch before it is free:
        the kernel's time on the GPU, not the CPU's time to submit it (without the spin
        every time holds about 9 us of the launch's submission: stop 43)."""
        cp = self.cp
        out = []
        with self.stream:
            self.launch(k, c)  # warm-up
            for _ in range(reps):
                a, b = cp.cuda.Event(), cp.cuda.Event()
                self.spin((1,), (1,), (cp.int64(HEAD_START_NS),))
                a.record(self.stream)
                self.launch(k, c)
                b.record(self.stream)
                b.synchronize()
                out.append(cp.cuda.get_elapsed_time(a, b))
        return out

    def output(self, k: dict, c: dict):
        cp = self.cp
        with self.stream:
            self.c.fill(cp.nan)
            self.launch(k, c)
        self.stream.synchronize()
        n = k["rows"] * k["cols"] if k["family"] == "block-per-row" else k["n"]
        return self.c[: n * k["facts"]["vector"]].copy()


def _suite(argv: list[str]) -> list[str]:
    """``--suite DIR``: another seed's suite.json and kernels.cu; the other arguments."""
    global SOURCE, SUITE
    if "--suite" not in argv:
        return argv
    i = argv.index("--suite")
    folder = Path(argv[i + 1])
    SOURCE, SUITE = folder / "kernels.cu", folder / "suite.json"
    return argv[:i] + argv[i + 2:]


def ncu_launches() -> int:
    """Launch every defect once (under ``ncu``: its estimated speedups, issue 28)."""
    import cupy as cp

    sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    suite = json.loads(SUITE.read_text())
    r = Runner(suite)
    for k in suite["kernels"]:
        r.launches(k, configs(k, suite, sms)[0])  # a defect that cannot launch: not tried
    return 0


def main(argv: list[str]) -> int:
    import cupy as cp
    import torch
    from torch.profiler import ProfilerActivity, profile

    argv = _suite(argv)
    out = Path(argv[0])
    only = set(argv[2:]) if len(argv) > 1 and argv[1] == "--only" else None
    out.mkdir(parents=True, exist_ok=True)
    torch.cuda.init()
    torch.zeros(1, device="cuda")  # one primary context for torch, CuPy and the profiler
    props = cp.cuda.runtime.getDeviceProperties(0)
    sms = props["multiProcessorCount"]
    suite = json.loads(SUITE.read_text())
    kernels = [k for k in suite["kernels"] if only is None or k["name"] in only
               or k["family"] in only]
    t0 = time.time()
    r = Runner(suite)
    print(f"compiled and allocated in {time.time() - t0:.1f} s", flush=True)
    results = []
    for k in kernels:
        t = time.time()
        todo = configs(k, suite, sms)
        h = habit(k, sms)
        h["smem"] = todo[0]["smem"] if k["family"] != "tile" else \
            (256 + 2 * k["facts"]["radius"]) * k["facts"]["smem_per_thread"]
        check = None
        if k["facts"]["store"] and k["facts"]["atomic"] is None:
            ref = r.output(k, h)
            got = r.output(k, todo[0])
            # a reduction whose order follows the block (zoo.py's "close") rounds apart
            same = cp.allclose(ref, got, rtol=1e-5, atol=1e-6) \
                if k.get("check") == "close" else cp.array_equal(ref, got)
            check = bool(same) and not bool(cp.isnan(got).any())
            if not check:
                print(f"{k['name']}: the defect's output differs from the habit's", flush=True)
        todo = [c for c in todo if r.launches(k, c)]  # blocks past the registers: not timed
        if not todo or todo[0] != configs(k, suite, sms)[0]:
            print(f"{k['name']}: its defect cannot launch; skipped", flush=True)
            continue
        rows = []
        first = r.time_ms(k, todo[0], 3)
        reps = 7 if statistics.median(first) < 2.0 else 3
        for c in todo:
            ms = r.time_ms(k, c, reps)
            rows.append({**c, "ms": statistics.median(ms), "min_ms": min(ms), "reps": reps})
        # the defect, the three fastest and the habit again, interleaved: the final figures
        best = sorted(range(len(rows)), key=lambda i: rows[i]["ms"])[:3]
        final = {0, *best}
        hi = next((i for i, c in enumerate(rows) if c["block"] == h["block"]
                   and c["grid"] == h["grid"]), None)
        if hi is not None:
            final.add(hi)
        again: dict[int, list[float]] = {i: [] for i in final}
        for _ in range(3):
            for i in sorted(final):
                again[i] += r.time_ms(k, rows[i], reps)
        for i, ms in again.items():
            rows[i]["final_ms"] = statistics.median(ms)
        f = r.functions[k["name"]]
        results.append({"name": k["name"], "registers": f.num_regs, "check": check,
                        "habit": h, "configs": rows, "seconds": round(time.time() - t, 2)})
        print(f"{k['name']:18s} regs {f.num_regs:3d} configs {len(rows):4d} "
              f"defect {rows[0]['ms']:8.4f} best {min(x['ms'] for x in rows):8.4f} ms "
              f"{time.time() - t:5.1f} s", flush=True)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for k in kernels:
            c = configs(k, suite, sms)[0]
            for _ in range(3):
                r.launches(k, c)
            time.sleep(0.002)
    prof.export_chrome_trace(str(out / "heldout.pt.trace.json"))
    env = {"gpu": props["name"].decode() if isinstance(props["name"], bytes) else props["name"],
           "sms": sms, "torch": torch.__version__, "cupy": cp.__version__,
           "cuda_runtime": cp.cuda.runtime.runtimeGetVersion(),
           "driver": cp.cuda.runtime.driverGetVersion(),
           "date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
           "seconds": round(time.time() - t0, 1)}
    (out / "heldout.json").write_text(json.dumps({"env": env, "kernels": results}) + "\n")
    print(f"done in {time.time() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(ncu_launches() if _suite(sys.argv[1:]) == ["--ncu"] else main(sys.argv[1:]))
