"""Byte-for-byte snapshots of occlint's output on the fixtures, for refactors.

``python -m benchmarks.snapshot write DIR`` runs a fixed set of invocations (every fixture
kind, every format, devices, launch facts, baselines, sources with binaries, traces) and
writes each one's stdout, stderr and exit code under DIR; ``compare DIR`` runs them again
and lists every invocation whose output differs. A change that must not alter behaviour
(issue 17) is checked with ``write`` before it and ``compare`` after it.

Invocations run in this checkout (``python -m occlint`` from the repository root), in
parallel (``-j``), each with ``--jobs 1`` unless it tests workers, and with the environment
pinned (no colour, C locale, no configuration from above the repository).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FORMATS = ("text", "json", "sarif", "github", "gitlab", "junit", "html")


def _cases(base: Path) -> list[tuple[str, list[str]]]:
    """(name, arguments) of every invocation."""
    fx = "fixtures"
    traces = sorted(str(p.relative_to(ROOT)) for p in (ROOT / fx / "traces").rglob("*")
                    if p.is_file() and not p.name.endswith((".md", ".txt", ".cubin"))
                    and "triton-cache" not in p.parts)
    cases: list[tuple[str, list[str]]] = []
    for fmt in FORMATS:
        cases.append((f"fixtures-{fmt}", [fx, "--format", fmt]))
        cases.append((f"fixtures-2dev-{fmt}", [fx, "--device", "h100", "--device", "mi300x",
                                              "--format", fmt]))
    cases += [
        ("fixtures-w7800-json", [fx, "--device", "w7800", "--format", "json"]),
        ("fixtures-w7800-mi300x-text", [fx, "--device", "w7800", "--device", "mi300x"]),
        ("fixtures-statistics", [fx, "--statistics"]),
        ("fixtures-jobs2-json", [fx, "--format", "json", "--jobs", "2"]),
        ("gamma-launch", [f"{fx}/amd/co/gamma.gfx1100.hsaco", "--device", "w7800",
                          "--block", "256", "--grid", "1000"]),
        ("gamma-problem", [f"{fx}/amd/co/gamma.gfx1100.hsaco", "--device", "w7800",
                           "--problem-size", "1000000", "--format", "json"]),
        ("nvidia-select", [f"{fx}/nvidia", "--device", "h100", "--select", "OCC,SPL",
                           "--ignore", "SPL102", "--format", "json"]),
        ("sources-text", ["tests/sources", f"{fx}/nvidia/src", f"{fx}/amd/src"]),
        ("sources-json", ["tests/sources", f"{fx}/nvidia/src", f"{fx}/amd/src",
                          "--format", "json"]),
        ("sources-w7800-sarif", [f"{fx}/amd/src", "--device", "w7800", "--format", "sarif"]),
        ("sources-binaries-json", [f"{fx}/amd/src", f"{fx}/amd/co", "--device", "w7800",
                                   "--format", "json"]),
        ("sources-binaries-nv-text", [f"{fx}/nvidia/src", f"{fx}/nvidia/cubin",
                                      "--device", "h100"]),
        ("traces-binaries-json", [f"{fx}/traces/kineto", "--format", "json"]),
        ("traces-h100-text", [f"{fx}/traces", "--device", "h100"]),
        ("traces-html", [f"{fx}/traces/kineto", "--format", "html"]),
        ("write-baseline", [fx, "--write-baseline", str(base / "baseline.json")]),
        ("use-baseline", [fx, "--baseline", str(base / "baseline.json"),
                          "--format", "json"]),
        ("bad-input", ["README.md", "no-such-file", f"{fx}/amd/co/gamma.gfx1100.hsaco"]),
        ("nothing", ["no-such-file"]),
    ]
    for i, trace in enumerate(traces):
        cases.append((f"trace{i:02d}-text", [trace]))
        cases.append((f"trace{i:02d}-json", [trace, "--format", "json"]))
    return cases


def _run(args: list[str], tmp: Path) -> bytes:
    env = {**os.environ, "NO_COLOR": "1", "LC_ALL": "C.UTF-8", "COLUMNS": "100"}
    env.pop("OCCLINT_CACHE", None)
    full = [sys.executable, "-m", "occlint", *args, "--isolated"]
    if "--jobs" not in args:
        full += ["--jobs", "1"]
    done = subprocess.run(full, cwd=ROOT, env=env, capture_output=True, timeout=900)
    text = done.stdout.replace(str(tmp).encode(), b"$TMP")
    err = done.stderr.replace(str(tmp).encode(), b"$TMP")
    return b"exit %d\n--- stdout\n%s\n--- stderr\n%s" % (done.returncode, text, err)


def _all(jobs: int) -> dict[str, bytes]:
    with tempfile.TemporaryDirectory(prefix="occlint-snapshot-") as tmp:
        base = Path(tmp)
        cases = _cases(base)
        # the baseline is written before it is used
        first = [c for c in cases if c[0] == "write-baseline"]
        rest = [c for c in cases if c[0] != "write-baseline"]
        out = {name: _run(args, base) for name, args in first}
        out["baseline-file"] = (base / "baseline.json").read_bytes()
        with ThreadPoolExecutor(jobs) as pool:
            for (name, _), data in zip(rest, pool.map(lambda c: _run(c[1], base), rest),
                                       strict=True):
                out[name] = data
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["write", "compare"])
    parser.add_argument("directory", type=Path)
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ns = parser.parse_args()
    outputs = _all(ns.jobs)
    if ns.action == "write":
        ns.directory.mkdir(parents=True, exist_ok=True)
        for name, data in outputs.items():
            (ns.directory / name).write_bytes(data)
        print(f"{len(outputs)} snapshots in {ns.directory}")
        return 0
    differ = []
    for name, data in sorted(outputs.items()):
        path = ns.directory / name
        if not path.exists() or path.read_bytes() != data:
            differ.append(name)
            (ns.directory / (name + ".new")).write_bytes(data)
    missing = sorted({p.name for p in ns.directory.iterdir() if not p.name.endswith(".new")}
                     - set(outputs))
    for name in differ:
        digest = hashlib.sha256(outputs[name]).hexdigest()[:12]
        print(f"differs: {name} (new output in {name}.new, {digest})")
    for name in missing:
        print(f"missing: {name}")
    print(f"{len(outputs) - len(differ)} of {len(outputs)} snapshots identical")
    return 1 if differ or missing else 0


if __name__ == "__main__":
    sys.exit(main())
