"""Score occlint's launch advice on the held-out kernels against the GPU's times (issue 28).

    python -m benchmarks.gpu.heldout.score [RUN_DIR] [--no-source | --ptx | --fatbin] [--net] [-v]

RUN_DIR holds heldout.json and heldout.pt.trace.json.gz (sweep.py; committed under
fixtures/traces/heldout/). occlint reads the trace with kernels.cu, the kernels' source
(``--ptx``: with nvcc's PTX of it instead, kernels.sm_90.ptx.gz; ``--no-source``: the
trace alone); for every kernel the launch group of its defect gives occlint's
advice: the finding with a ``fix`` that claims the most, or none (keep the launch). The fix
is looked up among the configurations the sweep timed. Per split (fit / score /
post-fit), the targets of docs/validation.md:

* the advised configuration's time against the best measured (geometric mean);
* no advice more than 3 % slower than the launch as traced;
* the measured saving of the advice inside the claimed range (1.5 points of timing
  noise allowed), the median width of the ranges;
* Spearman rank correlation of the claimed midpoint with the best measured saving;
* no warning where no configuration saves 2 %; no launch whose best saves 10 % unwarned.

``--net``: every time less the run's launch cost (the defects' event times less their
durations in the trace, the median: about 9 us in sweeps before stop 43, 2.5 us since),
so that savings are shares of the kernels' own durations, as occlint claims them.

Nothing here feeds occlint: it reads occlint's JSON and the measured times only.
"""

from __future__ import annotations

import gzip
import json
import math
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.gpu.calibration.score import spearman
from benchmarks.gpu.heldout.generate import LOOP_FAMILIES

REPO = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
SOURCE = REPO / "fixtures/traces/heldout/kernels.cu"
PTX = REPO / "fixtures/traces/heldout/kernels.sm_90.ptx.gz"  # generate.py --ptx
TOLERANCE = 0.015


def load(path: Path) -> dict:
    """A JSON document, or its gzip'd copy (``path`` + ".gz")."""
    if path.exists():
        return json.loads(path.read_text())
    return json.loads(gzip.decompress(path.with_name(path.name + ".gz").read_bytes()))


_SECTION = re.compile(r"^  (\w+) \(\d+, \d+, \d+\)x\(\d+, \d+, \d+\), Context", re.M)
_SPEEDUP = re.compile(r"Est\. (Local )?Speedup: ([\d.]+)%")


def nsight(run: Path) -> dict[str, float]:
    """Nsight Compute's estimated speedup per kernel (its text report, ncu.txt.gz): the
    largest "Est. Speedup" of its rules (else the largest "Est. Local Speedup"), a share."""
    path = run / "ncu.txt.gz"
    if not path.exists():
        return {}
    text = gzip.decompress(path.read_bytes()).decode("utf-8", "replace")
    heads = list(_SECTION.finditer(text))
    out = {}
    for i, m in enumerate(heads):
        body = text[m.end():heads[i + 1].start() if i + 1 < len(heads) else len(text)]
        found = _SPEEDUP.findall(body)
        overall = [float(v) for is_local, v in found if not is_local]
        local = [float(v) for is_local, v in found if is_local]
        out[m[1]] = (max(overall) if overall else max(local, default=0.0)) / 100
    return out


def suite_of(run: Path) -> tuple[Path, Path]:
    """(suite.json, kernels.cu) of a run: its parent folder's when it has them (a suite
    generated with another seed, ``generate.py --seed S --out DIR``, swept into DIR/h100),
    else seed 28's (benchmarks/gpu/heldout/suite.json, fixtures/traces/heldout/)."""
    if (run.parent / "suite.json").exists():
        return run.parent / "suite.json", run.parent / "kernels.cu"
    return HERE / "suite.json", SOURCE


def occlint_json(trace: Path, facts: str | None = "source") -> dict:
    """occlint's JSON on ``trace`` with the kernels' source ("source"), their PTX ("ptx"),
    the nvcc fatbin of SASS and PTX beside the suite ("fatbin": kernels.sm_90.fatbin,
    benchmarks/gpu/build_fatbins.sh) or nothing (None)."""
    with tempfile.TemporaryDirectory() as tmp:
        extra = []
        if facts == "source":
            extra = [str(suite_of(trace.parent)[1])]
        elif facts == "ptx":
            ptx = Path(tmp) / "kernels.sm_90.ptx"
            ptx.write_bytes(gzip.decompress(PTX.read_bytes()))
            extra = [str(ptx)]
        elif facts == "fatbin":
            extra = [str(suite_of(trace.parent)[1].with_name("kernels.sm_90.fatbin"))]
        cmd = [sys.executable, "-m", "occlint", str(trace), *extra, "--format", "json",
               "--isolated", "--exit-zero"]
        out = subprocess.run(cmd, capture_output=True, check=True, cwd=REPO)
    return json.loads(out.stdout)


def _time(c: dict) -> float:
    return c.get("final_ms", c["ms"])


def _claim(group: dict | None) -> tuple[dict | None, dict | None, str | None]:
    """(fix, saving, severity) of the group's finding that claims the most."""
    if group is None:
        return None, None, None
    with_fix = [f for f in group["findings"] if f.get("fix") and f.get("saving")]
    if not with_fix:
        return None, None, None
    f = max(with_fix, key=lambda f: f["saving"]["low"] + f["saving"]["high"])
    return f["fix"], f["saving"], f["severity"]


def _same(c: dict, fix: dict, family: str) -> bool:
    """The timed configuration a fix names: its block, and its grid where the grid is a
    choice (loops over the grid); elsewhere the grid follows the problem, which the sweep
    covers exactly (a traced grid may cover a few elements more)."""
    if family in LOOP_FAMILIES:
        return c["block"] == fix["block"] and c["grid"] == fix["grid"]
    return c["block"] == fix["block"]


def rows(run: Path, facts: str | None = "source", doc: dict | None = None,
         net: bool = False) -> list[dict]:
    """One row per measured kernel: occlint's claim (from ``doc``, else occlint run on the
    run's trace) against the times (``net``: each less the run's launch cost, what a
    timed launch holds besides the kernel's duration in the trace)."""
    suite = {k["name"]: k for k in json.loads(suite_of(run)[0].read_text())["kernels"]}
    measured = load(run / "heldout.json")
    if doc is None:
        doc = occlint_json(run / "heldout.pt.trace.json.gz", facts)
    if net:
        cost = launch_cost(run, measured)
        for k in measured["kernels"]:
            for c in k["configs"]:
                for key in ("ms", "final_ms"):
                    if key in c:
                        c[key] = max(c[key] - cost, 1e-4)
    groups = {g["kernel"]: g for g in doc["launches"]}
    ncu = nsight(run)
    out = []
    for k in measured["kernels"]:
        spec, configs = suite[k["name"]], k["configs"]
        defect, best = configs[0], min(configs, key=_time)
        group = groups.get(k["name"])
        fix, saving, severity = _claim(group)
        warned = any(f["severity"] == "warning" for f in (group or {}).get("findings", []))
        advised = defect if fix is None else next((c for c in configs
                                                     if _same(c, fix, spec["family"])), None)
        habit = next((c for c in configs if c["block"] == k["habit"]["block"]
                      and c["grid"] == k["habit"]["grid"]), None)
        row = {"name": k["name"], "family": spec["family"], "split": spec["split"],
               "defect_ms": _time(defect), "best_ms": _time(best),
               "best": {"block": best["block"], "grid": best["grid"]},
               "best_saving": 1 - _time(best) / _time(defect),
               "fix": fix, "low": saving["low"] if saving else 0.0,
               "high": saving["high"] if saving else 0.0, "severity": severity,
               "warned": warned, "measured": advised is not None,
               "habit_ratio": _time(best) / _time(habit) if habit else None,
               "model": (group or {}).get("model"), "nsight": ncu.get(k["name"])}
        if advised is not None:
            row["advised_ms"] = _time(advised)
            row["ratio"] = _time(best) / _time(advised)
            row["saving"] = 1 - _time(advised) / _time(defect)
            row["inside"] = (row["low"] - TOLERANCE <= max(row["saving"], 0.0)
                             <= row["high"] + TOLERANCE)
        out.append(row)
    return out


def launch_cost(run: Path, measured: dict) -> float:
    """ms a timed launch holds besides the kernel's own time: the median over the run's
    kernels of the defect's event time less its duration in the trace (CUPTI)."""
    trace = load(run / "heldout.pt.trace.json")
    durations: dict[str, list[float]] = {}
    for e in trace["traceEvents"]:
        if e.get("cat") == "kernel":
            durations.setdefault(e["name"], []).append(e["dur"] / 1e3)
    gaps = [_time(k["configs"][0]) - statistics.median(durations[k["name"]])
            for k in measured["kernels"] if k["name"] in durations]
    return max(statistics.median(gaps), 0.0) if gaps else 0.0


def targets(sel: list[dict]) -> dict:
    timed = [r for r in sel if r["measured"]]
    claims = [r for r in timed if r["fix"]]
    habit = [r["habit_ratio"] for r in sel if r["habit_ratio"]]
    return {
        "kernels": len(sel), "unmeasured": [r["name"] for r in sel if not r["measured"]],
        "advised_vs_best": math.exp(statistics.fmean(math.log(r["ratio"]) for r in timed)),
        "habit_vs_best": math.exp(statistics.fmean(math.log(x) for x in habit)),
        "slower": [r["name"] for r in timed if r["saving"] < -0.03],
        "inside": (sum(r["inside"] for r in claims) / len(claims)) if claims else 1.0,
        "claims": len(claims),
        "median_width": statistics.median(r["high"] - r["low"] for r in claims)
        if claims else 0.0,
        "spearman": spearman([(r["low"] + r["high"]) / 2 for r in timed],
                             [r["best_saving"] for r in timed]),
        "false_warnings": [r["name"] for r in sel if r["severity"] == "warning"
                           and r["best_saving"] < 0.02],
        "missed": [r["name"] for r in sel if r["best_saving"] >= 0.10 and not r["warned"]],
        "within_10": sum(abs((r["low"] + r["high"]) / 2 - r["best_saving"]) <= 0.10
                         for r in timed) / len(timed),
        **_nsight_targets(sel),
    }


def _nsight_targets(sel: list[dict]) -> dict:
    """Nsight Compute's estimated speedups on the same launches: within 10 points of the
    best measured saving, rank correlation, and how often the best exceeds them."""
    rows = [r for r in sel if r["nsight"] is not None]
    if not rows:
        return {}
    return {"nsight_within_10": sum(abs(r["nsight"] - r["best_saving"]) <= 0.10
                                    for r in rows) / len(rows),
            "nsight_spearman": spearman([r["nsight"] for r in rows],
                                        [r["best_saving"] for r in rows]),
            "nsight_exceeded": sum(r["best_saving"] > r["nsight"] + 0.015
                                   for r in rows) / len(rows)}


def main(argv: list[str]) -> int:
    args = [a for a in argv if not a.startswith("--")]
    run = Path(args[0]) if args else REPO / "fixtures/traces/heldout/h100"
    result = rows(run, None if "--no-source" in argv else "ptx" if "--ptx" in argv
                  else "fatbin" if "--fatbin" in argv else "source", net="--net" in argv)
    if "-v" in argv:
        for r in result:
            print(f"{r['name']:18s} {r['split']:14s} best {r['best_saving']:6.1%} "
                  f"claim {r['low']:6.1%}-{r['high']:6.1%} "
                  f"got {r.get('saving', float('nan')):6.1%} ratio {r.get('ratio', 0):.3f} "
                  f"{'' if r.get('inside', True) else 'OUTSIDE'}")
    halves = ["fit", "score", "heldout-family", "post-fit"]
    for split in halves + sorted({r["split"] for r in result} - set(halves)):
        sel = [r for r in result if r["split"] == split]
        if sel:
            t = targets(sel)
            print(f"{split:15s} n={t['kernels']:3d} advised/best {t['advised_vs_best']:.3f} "
                  f"(habit {t['habit_vs_best']:.3f}) slower {t['slower']} inside "
                  f"{t['inside']:.0%} of {t['claims']} width {t['median_width']:.3f} "
                  f"spearman {t['spearman']:.2f} false {t['false_warnings']} "
                  f"missed {t['missed']} unmeasured {t['unmeasured']}")
            if "nsight_within_10" in t:
                print(f"{'':15s} midpoint within 10 points {t['within_10']:.0%}; Nsight "
                      f"Compute: within 10 points {t['nsight_within_10']:.0%}, spearman "
                      f"{t['nsight_spearman']:.2f}, best above it "
                      f"{t['nsight_exceeded']:.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
