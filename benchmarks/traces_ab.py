"""A/B of two checkouts on the trace scale benchmark's input, by CPU time (shared machines).

    python benchmarks/traces_ab.py --base /path/to/other/checkout [--launches 300000] [--repeats 5]
        [--sources resnet18,rocm-mi210,rocm6.2-mi250]

Builds (once) the libkineto-layout traces of benchmarks/traces_scale.py from each source
(resnet18's plain and gzip'd, the ROCm ones plain), then runs ``python -m occlint TRACE
--format json -o OUT --exit-zero --jobs 1`` with each checkout first on PYTHONPATH,
alternating base and this checkout ``--repeats`` times per input, and prints each run's CPU
time (user + system of the process and its threads, from wait4) and the ratio of the
medians. CPU time, unlike wall time, barely moves when other processes share the cores; the
ratio is what to compare.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))  # this checkout's benchmarks, not an installed one's

from benchmarks.traces_scale import CACHE, REPO, SOURCES, build, warm  # noqa: E402


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
    parser.add_argument("--sources", default="resnet18",
                        help=f"comma-separated, of {', '.join(SOURCES)}")
    args = parser.parse_args()
    for source in args.sources.split(","):
        plain, total = build(source, "libkineto", args.launches)
        packed = [build(source, "libkineto", args.launches, True)[0]] \
            if source == "resnet18" else []
        for trace in (plain, *packed):
            compare(args.base.resolve(), trace, total, args.repeats)


def compare(base: Path, trace: Path, total: int, repeats: int) -> None:
    """Alternating runs of ``base`` and this checkout on ``trace``; the ratio of the medians."""
    warm(trace)
    runs: dict[str, list[float]] = {"base": [], "this": []}
    for _ in range(repeats):
        runs["base"].append(cpu_seconds(base, trace))
        runs["this"].append(cpu_seconds(REPO, trace))
    for name, times in runs.items():
        median = statistics.median(times)
        print(f"{trace.name} {name}: CPU s {', '.join(f'{t:.2f}' for t in times)}; "
              f"median {median:.2f} ({total / median:,.0f} launches per CPU-second)")
    ratio = statistics.median(runs["this"]) / statistics.median(runs["base"])
    print(f"{trace.name}: this / base CPU time {ratio:.3f}")


if __name__ == "__main__":
    main()
