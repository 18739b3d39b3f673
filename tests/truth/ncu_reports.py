"""Nsight Compute CSV reports (``ncu --csv --page details``), parsed with the standard
library only: never imports occlint, so the values are the tool's own."""

from __future__ import annotations

import csv
import gzip
from pathlib import Path

# Nsight Compute's rule texts, by what they flag (LaunchStats' LaunchConfiguration rule and
# the Occupancy section's TheoreticalOccupancy rule).
RULE_KINDS = (
    ("Threads are executed in groups of", "block-not-warp-multiple"),
    ("The grid for this launch is configured to execute only", "grid-smaller-than-sms"),
    ("A wave of thread blocks is defined as", "partial-wave"),
    ("If you execute __syncthreads()", "two-blocks-per-sm-with-barriers"),
    ("theoretical warps per scheduler", "theoretical-occupancy"),
)


def _number(text: str) -> float:
    return float(text.replace(",", ""))  # ncu groups thousands: "49,152"


def _dims(text: str) -> tuple[int, int, int]:
    x, y, z = (int(v) for v in text.strip("()").split(","))
    return x, y, z


def launches(path: Path) -> list[dict]:
    """One dict per profiled launch, in profiling order."""
    with gzip.open(path, "rt", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(line for line in fh if line.startswith('"')))
    out: dict[str, dict] = {}
    for row in rows:
        launch = out.setdefault(row["ID"], {
            "id": int(row["ID"]), "name": row["Kernel Name"], "block": _dims(row["Block Size"]),
            "grid": _dims(row["Grid Size"]), "metrics": {}, "rules": set(), "speedups": {}})
        if row["Metric Name"]:
            launch["metrics"][row["Metric Name"]] = row["Metric Value"]
        if row["Rule Name"] in ("LaunchConfiguration", "TheoreticalOccupancy"):
            for prefix, kind in RULE_KINDS:
                if prefix in row["Rule Description"]:
                    launch["rules"].add(kind)
                    if row["Estimated Speedup"]:
                        launch["speedups"][kind] = float(row["Estimated Speedup"])
    for launch in out.values():
        m = launch["metrics"]
        launch["registers"] = int(_number(m["Registers Per Thread"]))
        launch["static_shared"] = int(_number(m["Static Shared Memory Per Block"]))
        launch["dynamic_shared"] = int(_number(m["Dynamic Shared Memory Per Block"]))
        launch["theoretical_warps"] = _number(m["Theoretical Active Warps per SM"])
        launch["theoretical_occupancy"] = _number(m["Theoretical Occupancy"])
        launch["waves"] = _number(m["Waves Per SM"])
    return list(out.values())
