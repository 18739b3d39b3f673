"""A/B of two checkouts on issue 21's cubin figure, each beside cuobjdump in the same rounds.

    python benchmarks/cubins_ab.py --base /path/to/other/checkout [--repeats 5]
        [--jobs 1,auto] [--cubins DIR] [--cuobjdump PATH]

The input is every 10th ``.cubin`` of the flashinfer-cubin 0.6.13 wheel, extracted into
``~/.cache/occlint-bench/flashinfer-every-10`` (1,597 files), and the reference is
``cuobjdump --dump-resource-usage`` run one process per file, one after the other (the
comparison of issue 8). Every round runs, in turn: cuobjdump over all the files, then
``python -m occlint DIR --format json -o OUT --exit-zero --isolated --jobs J`` with the base
checkout and with this one first on ``PYTHONPATH``, for every ``J`` of ``--jobs``. Each run's
CPU time (user + system of the process and the workers it waited for, from ``wait4`` /
``RUSAGE_CHILDREN``) and wall time are printed, then the medians, this checkout's CPU ratio
to the base, and each checkout's wall-time speed against cuobjdump (cuobjdump's wall / its
wall, both medians of the same rounds), with the one-minute load average before and after.
The JSON reports of the two checkouts must be byte-identical (checked on every run).
occlint runs as installed, its modules' bytecode cached (``PYTHONDONTWRITEBYTECODE`` is
dropped: where it is set and a checkout has no ``__pycache__`` yet, every process would
compile occlint's modules again, about 0.14 s of CPU).
"""

from __future__ import annotations

import argparse
import filecmp
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

CACHE = Path.home() / ".cache" / "occlint-bench"
REPO_ROOT = Path(__file__).resolve().parent.parent


def occlint_run(root: Path, cubins: Path, jobs: str, out: Path) -> tuple[float, float]:
    """(wall s, CPU s) of one occlint run with ``root`` first on PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(root)
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "occlint", str(cubins), "--format", "json",
                             "-o", str(out), "--exit-zero", "--isolated", "--jobs", jobs],
                            env=env, cwd=root, stdin=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if status:
        raise SystemExit(f"occlint exited with status {status} ({root})")
    return wall, usage.ru_utime + usage.ru_stime


def cuobjdump_run(tool: Path, files: list[Path]) -> tuple[float, float]:
    """(wall s, CPU s) of ``cuobjdump --dump-resource-usage FILE`` for every file in turn."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    for path in files:
        subprocess.run([str(tool), "--dump-resource-usage", str(path)], check=True,
                       stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--jobs", default="1,auto")
    parser.add_argument("--cubins", type=Path, default=CACHE / "flashinfer-every-10")
    parser.add_argument("--cuobjdump", type=Path, default=CACHE / "cuobjdump" / "cuobjdump")
    args = parser.parse_args()
    files = sorted(args.cubins.rglob("*.cubin"))
    roots = {"base": args.base.resolve(), "this": REPO_ROOT}
    outs = {name: CACHE / f"cubins-ab-{name}.json" for name in roots}
    runs: dict[str, list[tuple[float, float]]] = {"cuobjdump": []}
    load = os.getloadavg()[0]
    print(f"{len(files)} cubins; one-minute load average {load:.2f} at the start")
    for _ in range(args.repeats):
        runs["cuobjdump"].append(cuobjdump_run(args.cuobjdump, files))
        print(f"cuobjdump: {runs['cuobjdump'][-1][0]:.3f} s wall, "
              f"{runs['cuobjdump'][-1][1]:.3f} s CPU", flush=True)
        for jobs in args.jobs.split(","):
            for name, root in roots.items():
                runs.setdefault(f"{name} -j {jobs}", []).append(
                    occlint_run(root, args.cubins, jobs, outs[name]))
                wall, cpu = runs[f"{name} -j {jobs}"][-1]
                print(f"{name} -j {jobs}: {wall:.3f} s wall, {cpu:.3f} s CPU", flush=True)
            if not filecmp.cmp(outs["base"], outs["this"], shallow=False):
                raise SystemExit(f"the JSON reports differ (-j {jobs})")
    print(f"one-minute load average {os.getloadavg()[0]:.2f} at the end")
    report(runs)


def report(runs: dict[str, list[tuple[float, float]]]) -> None:
    wall = {k: statistics.median(w for w, _ in v) for k, v in runs.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in runs.items()}
    print("\n| run | wall s (median) | CPU s (median) | CPU vs base | speed vs cuobjdump |")
    print("|---|---:|---:|---:|---:|")
    for key in runs:
        base = key.replace("this", "base")
        vs_base = f"{cpu[key] / cpu[base]:.3f}" if key.startswith("this") else ""
        speed = f"{wall['cuobjdump'] / wall[key]:.2f}x" if key != "cuobjdump" else ""
        print(f"| {key} | {wall[key]:.3f} | {cpu[key]:.3f} | {vs_base} | {speed} |")


if __name__ == "__main__":
    main()
