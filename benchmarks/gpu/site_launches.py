"""Launch sites priced from source alone, timed (issue 28: occlint.judgement.site_plan).

    python benchmarks/gpu/site_launches.py OUT_DIR        (on the GPU machine)
    python benchmarks/gpu/site_launches.py --score RUN_DIR [--device h200]   (here)

fixtures/sources/sites.cu holds six kernels of one element per thread, each launched in
its ``run()`` with a grid that follows the problem's size at a block a user might write
(100, 32, 48, 64, 1,000, 64 threads). On the GPU: compiled with CuPy's RawModule (NVRTC),
each kernel is timed at its site's block and at every block of whole warps, its grid
covering the elements, over 2^20, 2^24 and 2^26 elements (CUDA events, the median of 15
launches after 3); OUT_DIR/sites.json holds the times and the device.

``--score``: occlint reads sites.cu alone (no trace, no binary) with ``--device``; each
site's claim (its plan's fix and saving, priced at the model's assumed 2^26 elements) is
set against the times at each size: the advised block's time against the best block's,
and the measured saving of the fix against the claimed range.
"""

from __future__ import annotations

import json
import math
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "fixtures" / "sources" / "sites.cu"
SIZES = (1 << 20, 1 << 24, 1 << 26)
# kernel -> (the site's block, argument kinds: arrays' dtypes and elements a thread, scalars)
KERNELS = {
    "scale": (100, (("float32", 1),), ("float32",)),
    "copy4": (32, (("float32", 4), ("float32", 4)), ()),
    "saxpy": (48, (("float32", 1), ("float32", 1)), ("float32",)),
    "widen": (64, (("int16", 1), ("float32", 1)), ()),
    "poly": (1000, (("float32", 1), ("float32", 1)), ()),
    "daxpy": (64, (("float64", 1), ("float64", 1)), ("float64",)),
}


def _timed(cp, function, args: tuple, n: int, block: int) -> float:
    """ms of one launch of ``n`` elements in blocks of ``block`` (the median of 15 after 3)."""
    times = []
    for k in range(18):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        function((-(-n // block),), (block,), args)
        stop.record()
        stop.synchronize()
        if k >= 3:
            times.append(cp.cuda.get_elapsed_time(start, stop))
    return statistics.median(times)


def sweep(out_dir: Path) -> int:
    import cupy as cp
    import numpy as np

    out_dir.mkdir(parents=True, exist_ok=True)
    module = cp.RawModule(code=SOURCE.read_text())
    rows: dict[str, dict[str, list]] = {}
    for name, (site_block, arrays, scalars) in KERNELS.items():
        function = module.get_function(name)
        rows[name] = {}
        for n in SIZES:
            data = [cp.ones(n * width, dtype=dtype) for dtype, width in arrays]
            args = (*data, *(getattr(np, t)(0.5) for t in scalars), np.int64(n))

            blocks = sorted({site_block, *range(32, 1025, 32)})
            rows[name][str(n)] = [{"block": b, "ms": _timed(cp, function, args, n, b)}
                                  for b in blocks]
            best = min(rows[name][str(n)], key=lambda r: r["ms"])
            print(f"{name:6s} n=2^{n.bit_length() - 1}: site {site_block} "
                  f"{next(r['ms'] for r in rows[name][str(n)] if r['block'] == site_block):.4f}"
                  f" ms, best {best['block']} {best['ms']:.4f} ms", flush=True)
            del data
    props = cp.cuda.runtime.getDeviceProperties(0)
    gpu = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    (out_dir / "sites.json").write_text(json.dumps(
        {"gpu": gpu, "source": str(SOURCE.relative_to(REPO)), "kernels": rows}, indent=1))
    return 0


def claims(device: str) -> dict[str, dict]:
    """Each site's plan, as occlint reads sites.cu alone on ``device``."""
    out = subprocess.run([sys.executable, "-m", "occlint", str(SOURCE), "--device", device,
                          "--format", "json", "--isolated", "--exit-zero"],
                         capture_output=True, check=True, cwd=REPO)
    (source,) = json.loads(out.stdout)["sources"]
    return {s["kernel"]: s.get("model") for s in source["launches"]}


def score(run: Path, device: str) -> dict:
    """Per kernel and size: the advised block's time over the best's, the measured saving
    of the fix and whether the claim holds it (1.5 points of timing noise, as
    heldout/score.py allows)."""
    measured = json.loads((run / "sites.json").read_text())["kernels"]
    plans = claims(device)
    out: dict[str, dict] = {}
    for name, (site_block, _, _) in KERNELS.items():
        plan = plans.get(name) or {}
        fix, saving = plan.get("fix"), plan.get("saving")
        advised = fix["block"][0] if fix else site_block
        for n, rows in measured[name].items():
            ms = {r["block"]: r["ms"] for r in rows}
            best = min(ms.values())
            now, then = ms[site_block], ms[advised]
            row = {"advised": advised, "ratio": best / then, "saved": 1 - then / now,
                   "best_saving": 1 - best / now}
            if saving:
                row |= {"low": saving["low"], "high": saving["high"],
                        "inside": saving["low"] - 0.015 <= max(row["saved"], 0.0)
                        <= saving["high"] + 0.015}
            out.setdefault(name, {})[n] = row
    return out


def main(argv: list[str]) -> int:
    if argv[:1] == ["--score"]:
        run = Path(argv[1])
        device = argv[argv.index("--device") + 1] if "--device" in argv else run.name
        result = score(run, device)
        for name, sizes in result.items():
            for n, r in sizes.items():
                claim = (f"claimed {100 * r['low']:.0f}-{100 * r['high']:.0f} %, "
                         f"{'inside' if r['inside'] else 'OUTSIDE'}") if "low" in r else "no claim"
                print(f"{name:6s} n=2^{int(n).bit_length() - 1}: advised {r['advised']:4d}: "
                      f"{r['ratio']:.3f} of the best, saved {100 * r['saved']:5.1f} % "
                      f"(best {100 * r['best_saving']:5.1f} %), {claim}")
        for n in map(str, SIZES):
            ratios = [sizes[n]["ratio"] for sizes in result.values()]
            print(f"n=2^{int(n).bit_length() - 1}: geometric mean "
                  f"{math.exp(statistics.fmean(map(math.log, ratios))):.4f} of the best")
        return 0
    return sweep(Path(argv[0]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
