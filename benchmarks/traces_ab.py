"""A/B of two checkouts on the trace scale benchmark's input, by CPU time (shared machines).

    python benchmarks/traces_ab.py --base /path/to/other/checkout [--launches 300000] [--repeats 5]

Builds (once) the libkineto-layout trace of benchmarks/traces_scale.py, plain and gzip'd,
then runs ``python -m occlint TRACE --format json -o OUT --exit-zero --jobs 1`` with each
checkout first on PYTHONPATH, alternating base and this checkout ``--repeats`` times per
input, and prints each run's CPU time (user + system of the process and its threads, from
wait4) and the ratio of the medians. CPU time, unlike wall time, barely moves when other
processes share the cores; the ratio is what to compare.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

from benchmarks.traces_scale import CACHE, REPO, build, warm


def cpu_seconds(root: Path, trace: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.Popen([sys.executable, "-m", "occlint", str(trace), "--format", "json",
                             "-o", str(CACHE / "ab.json"), "--exit-zero", "--jobs", "1"],
                            env=env, cwd=root)
    _, status, usage = os.wait4(proc.pid, 0)
    if status:
        raise SystemExit(f"occlint exited with status {status} ({root})")
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, required=True)
    parser.add_argument("--launches", type=int, default=300_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    plain, packed, total = build(args.launches)
    for trace in (plain, packed):
        warm(trace)
        runs: dict[str, list[float]] = {"base": [], "this": []}
        for _ in range(args.repeats):
            runs["base"].append(cpu_seconds(args.base.resolve(), trace))
            runs["this"].append(cpu_seconds(REPO, trace))
        for name, times in runs.items():
            median = statistics.median(times)
            print(f"{trace.name} {name}: CPU s {', '.join(f'{t:.2f}' for t in times)}; "
                  f"median {median:.2f} ({total / median:,.0f} launches per CPU-second)")
        ratio = statistics.median(runs["this"]) / statistics.median(runs["base"])
        print(f"{trace.name}: this / base CPU time {ratio:.3f}")


if __name__ == "__main__":
    main()
