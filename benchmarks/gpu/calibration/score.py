"""Score occlint's saving ranges against the savings measured on the GPU.

    python -m benchmarks.gpu.calibration.score [CALIBRATION.json TRACE]

Runs occlint on the recorded trace with the suite's source (kernels.cu) and, for every
(launch, fix) pair of the calibration, finds the launch group of its defective launch and
the finding of the pair's rule family; its saving range (occlint) is compared with the
saving measured when the fix was timed (calibrate.py). Prints one row per pair and the
targets of issue 18 / docs/validation.md.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SOURCE = REPO / "benchmarks/gpu/calibration/kernels.cu"
FIXTURES = REPO / "fixtures/traces/calibration"
# a measured saving this close to a range's ends counts as inside: twice the spread of
# repeated timings of one launch (docs/validation.md)
TOLERANCE = 0.015
FAMILIES = {"LCH001": ("LCH001",), "LCH102": ("LCH102",), "LCH101": ("LCH101", "LCH105"),
            "LCH103": ("LCH103",), "OCC": ("OCC", "LCH003"), "LCH201": ("LCH201",)}


def occlint_json(trace: Path) -> dict:
    out = subprocess.run([sys.executable, "-m", "occlint", str(trace), str(SOURCE), "--format",
                          "json", "--isolated", "--exit-zero"], capture_output=True, check=True,
                         cwd=REPO)
    return json.loads(out.stdout)


def _group(doc: dict, pair: dict) -> dict | None:
    d, res = pair["defect"], pair["results"]
    for g in doc["launches"]:
        if (g["kernel"] == d["kernel"] and g["block"][0] == d["block"]
                and g["grid"][0] == res["defect_grid"]
                and (g["dynamic_shared_bytes"] or 0) == d["smem"]):
            return g
    return None


def _fix_of(pair: dict) -> dict:
    """The pair's fix as occlint's ``fix`` writes one."""
    f, res = pair["fix"], pair["results"]
    return {"block": [f["block"], 1, 1], "grid": [res["fix_grid"], 1, 1],
            "dynamic_shared": f["smem"]}


def _claimed(f: dict, pair: dict) -> dict | None:
    """The finding's saving for the pair's own fix: its advice when that is the pair's
    fix, else the launch-time model's price of the pair's fix (``data.priced``); the
    finding's own estimate where no model priced it (occupancy by registers)."""
    fix = _fix_of(pair)
    loop = pair["fix"]["kernel"].endswith("_gs")

    def same(other: dict | None) -> bool:  # one element per thread: the grid follows
        return other is not None and all(other[k] == fix[k] for k in (
            ("block", "grid", "dynamic_shared") if loop else ("block", "dynamic_shared")))

    if same(f.get("fix")):
        return f.get("saving")
    for p in f.get("data", {}).get("priced", []):
        if same(p["fix"]):
            return p["saving"]
    if f.get("fix") is None and not f.get("data", {}).get("priced"):
        return f.get("saving")
    return None


def _finding(group: dict, family: str) -> dict | None:
    found = [f for f in group["findings"] if f["rule"].startswith(FAMILIES[family])]
    with_saving = [f for f in found if f.get("saving") or f.get("data", {}).get("priced")]
    if with_saving:
        return max(with_saving, key=lambda f: (f.get("saving") or {"low": 0, "high": 0})["low"]
                   + (f.get("saving") or {"low": 0, "high": 0})["high"])
    return found[0] if found else None


def score(calibration: Path, trace: Path) -> dict:
    pairs = json.loads(calibration.read_text())["pairs"]
    doc = occlint_json(trace)
    rows = []
    for p in pairs:
        g = _group(doc, p)
        f = _finding(g, p["finding"]) if g is not None else None
        s = None
        if g is not None:  # any finding of the family that prices the pair's own fix
            for other in [f] + [x for x in g["findings"] if x is not f
                                and x["rule"].startswith(FAMILIES[p["finding"]])]:
                if other is not None and (s := _claimed(other, p)) is not None:
                    f = other
                    break
        if s is None:  # no finding, or none with an estimate: occlint expects no saving
            low = high = 0.0
        elif p["finding"] == "LCH201":  # a share of the stream's burst, not of kernel time
            span = f["data"]["span_ns"]
            low, high = s["low_ns"] / span, s["high_ns"] / span
        else:
            low, high = s["low"], s["high"]
        measured = p["results"]["saving"]
        rows.append({"id": p["id"], "rule": f["rule"] if f else None,
                     "severity": f["severity"] if f else None, "low": low, "high": high,
                     "measured": measured,
                     # a fix that makes the launch slower saves nothing
                     "inside": low - TOLERANCE <= max(measured, 0.0) <= high + TOLERANCE})
    return {"rows": rows, **targets(rows)}


def _ranks(xs: list[float]) -> list[float]:
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    ranks = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2
        i = j + 1
    return ranks


def spearman(a: list[float], b: list[float]) -> float:
    ra, rb = _ranks(a), _ranks(b)
    ma, mb = statistics.fmean(ra), statistics.fmean(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb, strict=True))
    var = (sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb)) ** 0.5
    return cov / var if var else 0.0


def targets(rows: list[dict]) -> dict:
    return {
        "pairs": len(rows),
        "inside": sum(r["inside"] for r in rows) / len(rows),
        "median_width": statistics.median(r["high"] - r["low"] for r in rows),
        "spearman": spearman([(r["low"] + r["high"]) / 2 for r in rows],
                             [r["measured"] for r in rows]),
        "false_warnings": [r["id"] for r in rows
                           if r["severity"] == "warning" and r["measured"] < 0.02],
    }


def main(argv: list[str]) -> int:
    calibration = Path(argv[0]) if argv else FIXTURES / "h100.calibration.json"
    trace = Path(argv[1]) if len(argv) > 1 else FIXTURES / "h100.pt.trace.json.gz"
    result = score(calibration, trace)
    print(f"{'pair':20s} {'finding':8s} {'severity':8s} {'occlint':>15s} {'measured':>9s}")
    for r in result["rows"]:
        print(f"{r['id']:20s} {r['rule'] or '-':8s} {r['severity'] or '-':8s} "
              f"{100 * r['low']:6.1f}-{100 * r['high']:5.1f}% {100 * r['measured']:8.1f}% "
              f"{'' if r['inside'] else 'OUTSIDE'}")
    print(f"inside {100 * result['inside']:.0f}% of {result['pairs']} pairs; median width "
          f"{100 * result['median_width']:.1f} points; Spearman {result['spearman']:.2f}; "
          f"warnings where the fix saves < 2%: {result['false_warnings'] or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
