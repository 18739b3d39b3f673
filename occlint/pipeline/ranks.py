"""Multi-rank runs: which rank (process) each trace records, and a summary comparing ranks.

A distributed job leaves one trace per rank: PyTorch's profiler writes the rank into the
trace (``"distributedInfo": {"rank": N, ...}``, libkineto's header, before ``traceEvents``)
and tools name the files after it (``rank-3.json.gz``, ``rank3.pt.trace.json``);
rocprofv3 writes one output per process, named ``<pid>_kernel_trace.csv`` /
``<pid>_results.json`` / ``<pid>_results.db`` (its JSON also carries ``metadata.pid``).
Traces of one run read together are compared by their GPU kernel time: the slowest rank
bounds every collective step, so its launch groups come first.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

HEAD_BYTES = 1 << 16  # libkineto and rocprofv3 write the rank / pid near the top
RANK_IN_NAME = re.compile(r"(?<![a-z])rank[-_]?(\d{1,7})(?!\d)", re.IGNORECASE)
PID_IN_NAME = re.compile(r"^(\d{1,10})_(?:kernel_trace\.csv|results\.(?:json|db))",
                         re.IGNORECASE)
DISTRIBUTED_RANK = re.compile(rb'"distributedInfo"\s*:\s*\{[^{}]{0,4096}?"rank"\s*:\s*(\d{1,7})')
METADATA_PID = re.compile(rb'"metadata"\s*:\s*\{.{0,8192}?"pid"\s*:\s*(\d{1,10})', re.DOTALL)


def trace_rank(path: Path, fmt: str) -> str | None:
    """"rank N" or "pid N" for a trace of one rank or process, else None."""
    name = path.name
    if fmt == "kineto":
        found = _in_head(DISTRIBUTED_RANK, path)
        if found is not None:  # (rank 0 too)
            return f"rank {found}"
    named = RANK_IN_NAME.search(name)
    if named:
        return f"rank {int(named.group(1))}"
    if fmt.startswith(("rocprofv3", "rocpd")):
        pid = PID_IN_NAME.match(name)
        if pid:
            return f"pid {int(pid.group(1))}"
        if fmt == "rocprofv3-json":
            found = _in_head(METADATA_PID, path)
            if found is not None:
                return f"pid {found}"
    return None


def _in_head(pattern: re.Pattern[bytes], path: Path) -> int | None:
    """The number ``pattern`` captures in the first bytes of a trace (gzip undone)."""
    from occlint.readers.traces import decoded_head

    try:
        found = pattern.search(decoded_head(path, HEAD_BYTES))
    except OSError:
        return None
    return int(found.group(1)) if found else None


def rank_summary(launches: list[dict[str, Any]], inputs: list[dict[str, Any]]
                 ) -> list[dict[str, Any]] | None:
    """Per rank, slowest (most GPU kernel time) first: its traces, its devices (launches and
    kernel time on each), launches, launch groups, kernel time, time at stake and how much
    more kernel time than the fastest rank it has.
    None unless the traces of the run record two ranks or more."""
    rank_of = {i["path"]: i["rank"] for i in inputs if i.get("rank")}
    if len(set(rank_of.values())) < 2:
        return None
    ranks: dict[str, dict[str, Any]] = {}
    for label in sorted(set(rank_of.values()), key=_order):
        ranks[label] = {"rank": label, "traces": sorted(p for p, r in rank_of.items()
                                                        if r == label),
                        "devices": {}, "launches": 0, "groups": 0, "kernel_time_ns": 0,
                        "time_at_stake_ns": 0}
    for r in launches:
        label = rank_of.get(r["trace"])
        if label is None:
            continue
        entry = ranks[label]
        device = entry["devices"].setdefault(
            r["device"] or r["trace_device"] or "unknown device",
            {"device": r["device"] or r["trace_device"] or "unknown device", "launches": 0,
             "kernel_time_ns": 0})
        device["launches"] += r["count"]
        device["kernel_time_ns"] += r["total_ns"]
        entry["launches"] += r["count"]
        entry["groups"] += 1
        entry["kernel_time_ns"] += r["total_ns"]
        entry["time_at_stake_ns"] += r["time_at_stake_ns"]
    out = sorted(ranks.values(), key=lambda e: -e["kernel_time_ns"])
    fastest = min(e["kernel_time_ns"] for e in out)
    for e in out:
        e["devices"] = sorted(e["devices"].values(), key=lambda d: -d["kernel_time_ns"])
        e["over_fastest"] = round(e["kernel_time_ns"] / fastest - 1, 4) if fastest else None
    return out


def _order(label: str) -> tuple[str, int]:
    kind, _, number = label.partition(" ")
    return kind, int(number) if number.isdigit() else 0


def rank_order(doc: dict[str, Any]) -> list[str]:
    """The traces of a document, those of the slowest rank first (as the summary lists the
    ranks), then the traces of no rank in reading order."""
    ranks = ((doc.get("summary") or {}).get("launches") or {}).get("ranks") or []
    ordered = [t for entry in ranks for t in entry["traces"]]
    seen = set(ordered)
    rest = [r["trace"] for r in doc.get("launches") or [] if r["trace"] not in seen]
    return ordered + list(dict.fromkeys(rest))
