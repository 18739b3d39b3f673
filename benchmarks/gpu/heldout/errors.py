"""The launch model's error on every configuration the held-out sweep timed (issue 28).

    python -m benchmarks.gpu.heldout.errors [RUN_DIR] [--split fit] [-v]

score.py judges the advice (one configuration per kernel); this looks at the model itself:
for each kernel whose launch group occlint plans (the trace with the suite's source), the
predicted time of every timed configuration over the predicted time of the defect, against
the measured ratio. The log of predicted over measured is the model's error on a saving;
printed per family and, with -v, per kernel (worst configurations first). Fit on the
"fit" split only (the default); other splits are for looking, not for tuning.
"""

from __future__ import annotations

import math
import statistics
import sys
from pathlib import Path

from benchmarks.gpu.heldout import fit, score

REPO = Path(__file__).resolve().parents[3]


def plans(run: Path) -> dict[str, tuple]:
    """(report, plan) of each planned launch group, by kernel name: occlint run in this
    process on the run's trace and the suite's source (fit.occlint_doc)."""
    from occlint.judgement import appraisal
    from occlint.rules import engine

    seen: dict[str, tuple] = {}

    def spy(subject, report, owners):
        p = appraisal.launch_plan(subject, report, owners)
        if p is not None and subject.kind == "launch":
            seen[report.kernel.name] = (report, p)
        return p

    engine.launch_plan = spy
    try:
        fit.occlint_doc(run)
    finally:
        engine.launch_plan = appraisal.launch_plan
    return seen


def candidate(report, plan, config: dict):
    from occlint.judgement.fastest import Candidate, _resident

    block, grid = tuple(config["block"]), tuple(config["grid"])
    threads = block[0] * block[1] * block[2]
    res = report.kernel.resources
    r = _resident(report.arch, report.input_model, threads, config.get("smem", 0),
                  getattr(res, "wgp_mode", None))
    return Candidate(block, grid, config.get("smem", 0), r) if r > 0 else None


def errors(run: Path, split: str | None) -> list[dict]:
    from occlint.judgement.fastest import _price

    suite = {k["name"]: k for k in score.load(score.suite_of(run)[0])["kernels"]}
    measured = score.load(run / "heldout.json")
    seen = plans(run)
    out = []
    for k in measured["kernels"]:
        spec = suite[k["name"]]
        if (split and spec["split"] != split) or k["name"] not in seen:
            continue
        report, plan = seen[k["name"]]
        defect = k["configs"][0]
        t0 = score._time(defect)
        for c in k["configs"]:
            cand = candidate(report, plan, c)
            if cand is None:
                continue
            gains, _ = _price(plan.device, plan.scenarios, cand)
            pred = 1 - gains[0]
            meas = score._time(c) / t0
            out.append({"name": k["name"], "family": spec["family"], "block": c["block"],
                        "grid": c["grid"], "pred": pred, "meas": meas,
                        "err": math.log(pred / meas),
                        "traced_over_pred": t0 * 1e-3 / plan.now.total})
    return out


def summary(rows: list[dict]) -> str:
    errs = sorted(r["err"] for r in rows)
    q = statistics.quantiles(errs, n=20) if len(errs) > 1 else [errs[0]] * 19
    return (f"n={len(errs):5d} median {statistics.median(errs):+.3f} 5% {q[0]:+.3f} "
            f"95% {q[-1]:+.3f} mean|err| {statistics.fmean(abs(e) for e in errs):.3f}")


def main(argv: list[str]) -> int:
    args = [a for a in argv if not a.startswith("-")]
    run = Path(args[0]) if args else REPO / "fixtures/traces/heldout/h100"
    split = argv[argv.index("--split") + 1] if "--split" in argv else "fit"
    if split == "all":
        split = None
    rows = errors(run, split)
    print(f"{'all':18s} {summary(rows)}")
    for fam in sorted({r["family"] for r in rows}):
        print(f"{fam:18s} {summary([r for r in rows if r['family'] == fam])}")
    if "-v" in argv:
        for name in dict.fromkeys(r["name"] for r in rows):
            sel = [r for r in rows if r["name"] == name]
            worst = sorted(sel, key=lambda r: -abs(r["err"]))[:3]
            print(f"{name:18s} {summary(sel)} traced/pred {sel[0]['traced_over_pred']:.2f} "
                  + " ".join(f"{w['block']}x{w['grid'][0]}:{w['err']:+.2f}" for w in worst))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
