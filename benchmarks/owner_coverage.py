#!/usr/bin/env python3
"""Share of kernel time whose owner occlint knows, on every trace in fixtures/ (issue 29).

    python3 benchmarks/owner_coverage.py [--json OUT.json] [TRACE ...]

Each trace is run through occlint as a user runs it (``execute``, no configuration); a
launch group's owner is *known* when its basis is not ``default`` (a configuration glob,
an input of the run, the binary it was joined to, the owner index, a name rule, the
compiler the trace names). For traces this project recorded (fixtures/traces/kineto,
calibration, the XLA profile) the truth is known too: the user's kernels are the ones
defined in the recording workloads' own sources (``__global__`` functions in
benchmarks/**/*.cu and *.py); every other kernel is a library's, the framework's or a
compiler's. ``correct`` is the share of kernel time whose owner kind agrees with that.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

from occlint.judgement.owner_index import base_name
from occlint.pipeline.run import Options, execute
from occlint.readers.traces import trace_kind

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "traces"
LAUNCH_FORMATS = ("kineto", "nsys", "rocprofv3-csv", "rocprof-csv", "rocprofv3-json", "rocpd",
                  "xla", "xplane")
# traces whose every kernel this project launched or knows the source of
RECORDED_HERE = ("kineto/", "calibration/", "xla/xla_steps")
PUBLIC = ("kineto/rocm/",)  # under kineto/, but recorded by others
GLOBAL = re.compile(r"__global__\s+void\s+(?:__\w+__\s*(?:\([^)]*\))?\s*)*(\w+)\s*\(")


def user_kernels() -> set[str]:
    """The kernels the recording workloads define themselves."""
    names: set[str] = set()
    for path in sorted((ROOT / "benchmarks").rglob("*")):
        if path.suffix in (".cu", ".py", ".cuh") and path.is_file():
            names.update(GLOBAL.findall(path.read_text(errors="replace")))
    return names


def traces(paths: list[str]) -> list[Path]:
    if paths:
        return [Path(p) for p in paths]
    return [p for p in sorted(FIXTURES.rglob("*"))
            if p.is_file() and trace_kind(p) in LAUNCH_FORMATS]


def coverage(path: Path, mine: set[str]) -> dict:
    doc = execute(Options(paths=[str(path)], isolated=True)).doc
    total, known = 0, 0
    by_basis: dict[str, int] = defaultdict(int)
    by_owner: dict[str, int] = defaultdict(int)
    unknown: dict[str, int] = defaultdict(int)
    wrong: dict[str, int] = defaultdict(int)
    right = 0
    for group in doc["launches"]:
        ns = group.get("total_ns") or 0
        owner = group.get("owner") or {"kind": "user", "library": None, "basis": "default"}
        total += ns
        by_basis[owner["basis"]] += ns
        by_owner[owner["library"] or owner["kind"]] += ns
        if owner["basis"] != "default":
            known += ns
        else:
            unknown[group["kernel"][:120]] += ns
        truly_user = base_name(group["kernel"]) in mine
        if truly_user == (owner["kind"] == "user"):
            right += ns
        else:
            wrong[f"{group['kernel'][:100]} -> {owner['library'] or owner['kind']}"] += ns
    path = path.resolve()
    rel = path.relative_to(FIXTURES) if path.is_relative_to(FIXTURES) else path
    recorded = str(rel).startswith(RECORDED_HERE) and not str(rel).startswith(PUBLIC)
    return {"trace": str(rel), "kernel_ns": total, "known_ns": known,
            "correct_ns": right if recorded else None,
            "by_basis": dict(by_basis), "by_owner": dict(by_owner),
            "unknown": sorted(unknown.items(), key=lambda kv: -kv[1])[:5],
            "wrong": sorted(wrong.items(), key=lambda kv: -kv[1])[:5] if recorded else []}


def pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "-"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces", nargs="*")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    mine = user_kernels()
    rows = [coverage(p, mine) for p in traces(args.traces)]
    print("| trace | kernel time | owner known (not by default) | owner right (kind) "
          "| by the index |")
    print("|---|---:|---:|---:|---:|")
    for r in rows:
        right = pct(r["correct_ns"], r["kernel_ns"]) if r["correct_ns"] is not None else "-"
        print(f"| {r['trace']} | {r['kernel_ns'] / 1e6:.2f} ms | "
              f"{pct(r['known_ns'], r['kernel_ns'])} | {right} | "
              f"{pct(r['by_basis'].get('index', 0), r['kernel_ns'])} |")
    total = sum(r["kernel_ns"] for r in rows)
    print(f"| all {len(rows)} traces | {total / 1e6:.2f} ms | "
          f"{pct(sum(r['known_ns'] for r in rows), total)} | | "
          f"{pct(sum(r['by_basis'].get('index', 0) for r in rows), total)} |")
    for r in rows:
        for name, ns in r["unknown"]:
            if ns * 100 >= r["kernel_ns"]:  # 1 % or more of its trace
                print(f"unknown owner, {pct(ns, r['kernel_ns'])} of {r['trace']}: {name}",
                      file=sys.stderr)
        for name, ns in r["wrong"]:
            print(f"wrong kind, {pct(ns, r['kernel_ns'])} of {r['trace']}: {name}",
                  file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
