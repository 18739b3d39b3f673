#!/usr/bin/env python3
"""Source-linting speed over a real project: the CUDA / HIP sources of CuPy's sdist.

    python3 benchmarks/source_scale.py [--sdist cupy-13.6.0.tar.gz] [--repeat 3]

Downloads the pinned sdist with pip (``pip download --no-binary :all: --no-deps``) unless
given, unpacks it into a temporary directory and runs occlint over the unpacked tree, in
this process (``jobs=1``: one core), for the NVIDIA H100: every ``.cu .cuh .hip .cpp .cc
.cxx .h .hpp`` file is read; files that cannot hold a kernel or a launch (no
``__global__``, ``<<<`` or launch API) are not parsed. Reports:

* end-to-end MB/s: source bytes / wall time of the whole run (best of ``--repeat``);
* parse MB/s: the bytes of the files that were parsed / the time parse_source took on
  them (tree-sitter plus occlint's queries and evaluation);
* peak RSS of the process, the numbers of files, kernels, launch sites and findings.

Results are printed as JSON (docs/performance.md quotes them).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdist", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from occlint.pipeline.run import Options, execute
    from occlint.readers.source import SUFFIXES, may_launch, parse_source

    with tempfile.TemporaryDirectory(prefix="occlint-src-bench-") as tmp:
        tmpdir = Path(tmp)
        sdist = args.sdist or download(tmpdir)
        with tarfile.open(sdist) as tar:
            tar.extractall(tmpdir / "src", filter="data")
        tree = tmpdir / "src"
        files = sorted(p for p in tree.rglob("*") if p.is_file()
                       and p.name.lower().endswith(SUFFIXES))
        total = sum(p.stat().st_size for p in files)
        wall = []
        outcome = None
        from occlint.readers import source as source_reader

        for _ in range(args.repeat):
            source_reader._CACHE.clear()  # every repetition reads and parses everything
            start = time.perf_counter()
            outcome = execute(Options(paths=[str(tree)], devices=["h100"], jobs=1,
                                      isolated=True, exit_zero=True))
            wall.append(time.perf_counter() - start)
        doc = outcome.doc
        sources = doc.get("sources") or []
        parsed = [p for p in files if may_launch(p.read_bytes())]
        parsed_bytes = sum(p.stat().st_size for p in parsed)
        parse_times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            for p in parsed:
                parse_source(p.read_bytes(), str(p))
            parse_times.append(time.perf_counter() - start)
        best, parse_best = min(wall), min(parse_times)
        result = {
            "project": f"{PACKAGE} {VERSION} (sdist)",
            "files": len(files), "bytes": total,
            "sources_in_report": len(sources),
            "kernels": sum(len(s["kernels"]) for s in sources),
            "launch_sites": sum(len(s["launches"]) for s in sources),
            "findings": doc["summary"]["findings"]["total"],
            "seconds": round(best, 3), "mb_per_s": round(total / best / 1e6, 1),
            "parsed_files": len(parsed), "parsed_bytes": parsed_bytes,
            "parse_seconds": round(parse_best, 3),
            "parse_mb_per_s": round(parsed_bytes / parse_best / 1e6, 1),
            "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "cpus": os.cpu_count(),
        }
        print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
