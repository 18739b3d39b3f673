#!/usr/bin/env python3
"""Source-linting speed through the CLI, on public trees and on CuPy's sdist.

    python3 benchmarks/source_scale.py [--sdist cupy-13.6.0.tar.gz] [NAME=PATH ...]
                                       [--repeat 3] [--jobs auto,1] [--baseline DIR]

Inputs: the CUDA / HIP sources of CuPy's pinned sdist (downloaded with ``pip download
--no-binary :all: --no-deps`` unless given), and each ``NAME=PATH``: a checkout of a public
tree pinned by commit in ``benchmarks.source_trees.SPEED_TREES`` (``hecbench-cuda``, the
kernel-heavy tree of issue 20's speed target: 8.9 MB, 541 of its 817 files naming kernels
or launches) or ``benchmarks.source_recall.TREES`` (the six recall trees); nothing is
downloaded for them: bring one with ``python benchmarks/source_trees.py NAME GIT_DIR
PATH`` from a clone. ``all`` as a NAME runs the PATHs given before it together, as one
input list.

occlint runs as users run it: ``python -m occlint PATH --device h100 -q --isolated
--exit-zero --format json -o FILE`` in a new process (started in this checkout, which
``-m`` puts first on the path, and on PYTHONPATH;
Python may write and use its bytecode caches, as an installed package has them: one run
before the timed ones writes them), with each ``--jobs`` setting (``auto``: occlint's
default, one process per core for 2 MiB or more of sources past the byte test, the main
process reading sources too, or one worker per core for 256 binary inputs;
occlint.pipeline.workers). For each: the best wall time
of ``--repeat`` runs, start-up and imports included, as MB/s of the ``.cu .cuh .hip .cpp
.cc .cxx .h .hpp`` bytes of the input; and the CPU seconds of that run (``os.wait4``: the
process and the workers it waited for; with ``-j 1``, MB per CPU second is the wall rate
of an idle core). Then, in this process, the parse-only rate of the files that can hold a
kernel or a launch (the others are read and tested with ``bytes.find``, not parsed). The
machine's load average is recorded with the figures (other work on a shared machine slows
every figure).

``--baseline DIR``: a checkout of another commit (``git worktree add`` or ``git archive``),
run the same way, each of its runs alternating with this checkout's, so that both see the
same load; ``ratio`` is this checkout's best over the baseline's (below 1: faster).

Results are printed as JSON (docs/performance.md quotes them).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

PACKAGE, VERSION = "cupy", "13.6.0"  # pinned: the numbers in docs/performance.md
REPO = Path(__file__).resolve().parent.parent


def download(directory: Path) -> Path:
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-binary", ":all:",
                    "--no-deps", f"{PACKAGE}=={VERSION}", "-d", str(directory)], check=True,
                   capture_output=True)
    (sdist,) = directory.glob(f"{PACKAGE}-{VERSION}.tar.gz")
    return sdist


def source_files(paths: list[Path]) -> list[Path]:
    from occlint.readers.source import SUFFIXES

    return sorted(p for root in paths for p in root.rglob("*")
                  if p.is_file() and p.name.lower().endswith(SUFFIXES))


def cli_run(paths: list[Path], jobs: str, out: Path, repo: Path = REPO
            ) -> tuple[float, float, dict]:
    """(wall seconds, CPU seconds, document) of one run of the CLI of the checkout
    ``repo``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(repo)
    command = [sys.executable, "-m", "occlint", *(str(p.resolve()) for p in paths),
               "--device", "h100", "-q", "--isolated", "--exit-zero", "--format", "json",
               "-o", str(out.resolve())]
    if jobs != "auto":
        command += ["-j", jobs]
    start = time.perf_counter()
    # run from the checkout: `python -m` puts the working directory before PYTHONPATH
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, cwd=repo)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"occlint failed on {paths}")
    return wall, usage.ru_utime + usage.ru_stime, json.loads(out.read_text())


def parse_only(files: list[Path], repeat: int) -> dict:
    from occlint.readers.source import may_launch, parse_source

    parsed = [(p, p.read_bytes()) for p in files]
    parsed = [(p, data) for p, data in parsed if may_launch(data)]
    size = sum(len(data) for _, data in parsed)
    parse_source(b"__global__ void k() { for (;;) {} }", "warm.cu")  # queries compiled
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for p, data in parsed:
            parse_source(data, str(p))
        best = min(best, time.process_time() - start)
    return {"parsed_files": len(parsed), "parsed_bytes": size,
            "parse_cpu_seconds": round(best, 3),
            "parse_mb_per_cpu_s": round(size / best / 1e6, 1) if best else None}


def _figures(runs: list[tuple[float, float, dict]], size: int) -> dict:
    wall, cpu, _ = min(runs, key=lambda r: r[0])
    return {"seconds": round(wall, 3), "mb_per_s": round(size / wall / 1e6, 1),
            "cpu_seconds": round(cpu, 3), "mb_per_cpu_s": round(size / cpu / 1e6, 1),
            "load_average": os.getloadavg()[0]}


def measure(name: str, paths: list[Path], jobs: list[str], repeat: int,
            baseline: Path | None = None) -> dict:
    files = source_files(paths)
    size = sum(p.stat().st_size for p in files)
    result: dict = {"input": name, "files": len(files), "bytes": size}
    repos = [REPO] if baseline is None else [REPO, baseline]
    with tempfile.TemporaryDirectory(prefix="occlint-src-out-") as tmp:
        out = Path(tmp) / "out.json"
        for setting in jobs:
            runs: dict[Path, list] = {repo: [] for repo in repos}
            for _ in range(repeat):
                for repo in repos:  # alternating: both see the same load
                    runs[repo].append(cli_run(paths, setting, out, repo))
            result[f"cli_jobs_{setting}"] = figures = _figures(runs[REPO], size)
            sources = min(runs[REPO], key=lambda r: r[0])[2].get("sources") or []
            result.update({"sources_in_report": len(sources),
                           "kernels": sum(len(s["kernels"]) for s in sources),
                           "launch_sites": sum(len(s["launches"]) for s in sources)})
            if baseline is not None:
                base = _figures(runs[baseline], size)
                figures["baseline"] = base
                figures["ratio"] = {"seconds": round(figures["seconds"] / base["seconds"], 3),
                                    "cpu_seconds": round(figures["cpu_seconds"]
                                                         / base["cpu_seconds"], 3)}
    result.update(parse_only(files, repeat))
    return result


def warm_up(repos: list[Path]) -> None:
    """One run of each checkout's CLI, so that Python's bytecode caches exist."""
    with tempfile.TemporaryDirectory(prefix="occlint-src-warm-") as tmp:
        source = Path(tmp) / "warm.cu"
        source.write_text("__global__ void k() {}\nvoid f() { k<<<1, 64>>>(); }\n")
        for repo in repos:
            cli_run([source], "1", Path(tmp) / "out.json", repo)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*", help="NAME=PATH of a pinned tree; all=: together")
    parser.add_argument("--sdist", type=Path, help=f"{PACKAGE}-{VERSION}.tar.gz")
    parser.add_argument("--no-sdist", action="store_true", help="only the trees")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", default="auto,1", help="comma-separated -j settings")
    parser.add_argument("--baseline", type=Path,
                        help="a checkout of another commit, measured alternately with this one")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    jobs = args.jobs.split(",")
    baseline = args.baseline.resolve() if args.baseline else None
    warm_up([REPO] + ([baseline] if baseline else []))
    rows = []
    given: list[Path] = []
    for spec in args.trees:
        name, _, path = spec.partition("=")
        if name == "all":
            rows.append(measure("+".join(r["input"] for r in rows), given, jobs, args.repeat,
                                baseline))
            continue
        given.append(Path(path))
        rows.append(measure(name, [Path(path)], jobs, args.repeat, baseline))
    if not args.no_sdist:
        with tempfile.TemporaryDirectory(prefix="occlint-src-bench-") as tmp:
            tmpdir = Path(tmp)
            sdist = args.sdist or download(tmpdir)
            with tarfile.open(sdist) as tar:
                tar.extractall(tmpdir / "src", filter="data")
            rows.append(measure(f"{PACKAGE} {VERSION} (sdist)", [tmpdir / "src"], jobs,
                                args.repeat, baseline))
    print(json.dumps({"cpus": os.cpu_count(), "results": rows}, indent=2))


if __name__ == "__main__":
    main()
