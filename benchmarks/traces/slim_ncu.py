"""Keep the rows of an Nsight Compute CSV (``ncu --csv --page details``) that the trace
tests compare with, and gzip it: every launch's identity columns, the LaunchStats and
Occupancy metrics named below, and the LaunchConfiguration / TheoreticalOccupancy rule rows.
Rows are copied verbatim (no value is changed); ncu's ==PROF== lines are dropped.

    python3 benchmarks/traces/slim_ncu.py IN.ncu.csv OUT.ncu.csv.gz
"""

from __future__ import annotations

import csv
import gzip
import io
import sys

METRICS = {
    "Block Size", "Grid Size", "Registers Per Thread", "Static Shared Memory Per Block",
    "Dynamic Shared Memory Per Block", "Driver Shared Memory Per Block", "Waves Per SM",
    "Block Limit Registers", "Block Limit Shared Mem", "Block Limit Warps", "Block Limit SM",
    "Block Limit Barriers", "Theoretical Occupancy", "Theoretical Active Warps per SM",
    "Achieved Occupancy", "# SMs", "Shared Memory Configuration Size", "Threads",
}
RULES = {"LaunchConfiguration", "TheoreticalOccupancy"}


def main(src: str, dst: str) -> None:
    with open(src, newline="", encoding="utf-8") as fh:
        lines = [line for line in fh if line.startswith('"')]
    rows = list(csv.reader(lines))
    header, body = rows[0], rows[1:]
    metric, rule = header.index("Metric Name"), header.index("Rule Name")
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow(header)
    for row in body:
        if row[metric] in METRICS or row[rule] in RULES:
            writer.writerow(row)
    with gzip.open(dst, "wt", encoding="utf-8", compresslevel=9) as fh:
        fh.write(out.getvalue())


if __name__ == "__main__":
    main(*sys.argv[1:3])
