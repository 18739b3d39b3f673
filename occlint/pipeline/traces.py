"""The traces of one run: read, analyse every launch group, run the rules, make records.

Called by occlint.pipeline.run after the binaries, so that launches can be joined to the kernels the
same run read. Everything here runs in the main process: a trace is read as a stream into
launch groups (see occlint.model.launch), and a million launches make a few hundred groups.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from occlint.analysis.launches import (
    BinaryIndex,
    LaunchReport,
    analyse_group,
    idle_elsewhere_busy,
    kernel_from_record,
    match_device,
    overhead_bursts,
)
from occlint.analysis.regions import Busy, Region, host_regions
from occlint.devices.launch_params import launch_model, reference_model
from occlint.devices.models import Device
from occlint.judgement.cost import (
    OVERHEAD_BASIS,
    REGION_BASIS,
    Saving,
    lost_fraction,
    overhead_saving,
    region_saving,
)
from occlint.model.demangle import base_name
from occlint.model.finding import OVERHEAD_RULES, find_under
from occlint.model.kernel import InputError
from occlint.model.launch import LaunchCollector, StreamTimeline, TraceDevice, in_start_order
from occlint.pipeline.document import occupancy_record, overhead_savings
from occlint.pipeline.facts_index import embedded_facts, resolved
from occlint.pipeline.ranks import rank_summary, trace_rank
from occlint.readers.traces import TraceError
from occlint.rules.engine import checks, finish_findings, judge
from occlint.rules.registry import Context, Finding


@dataclass
class TraceOutcome:
    inputs: list[dict[str, Any]] = field(default_factory=list)
    launches: list[dict[str, Any]] = field(default_factory=list)
    findings: list[list[Finding]] = field(default_factory=list)  # per launch record
    errors: list[InputError] = field(default_factory=list)
    analysed: bool = False


def binary_index(records) -> BinaryIndex:
    """The run's kernel records (JSON text or dicts) by name, for joining launches."""
    index = BinaryIndex()
    for i, rec in enumerate(records):
        if isinstance(rec, (str, bytes)):
            rec = json.loads(rec)
        if rec.get("status") == "ptx-only":
            continue
        kernel = kernel_from_record(rec)
        if kernel is not None:
            index.add(i, kernel)
    return index


def _device_for(td: TraceDevice | None, devices: list[Device], db) -> tuple[Device | None, str]:
    if devices:  # --device / configuration: the first of the trace device's vendor
        vendor = td.vendor if td else None
        same = [d for d in devices if vendor is None or d.vendor == vendor]
        if same:
            return same[0], "--device"
        if td is None:
            return None, "unknown"
    if td is None:
        return None, "unknown"
    return match_device(td, db)  # (--device names another vendor's: the trace's own)


def analyse_traces(candidates: list, setup, records, settings, jobs: int = 1) -> TraceOutcome:
    out = TraceOutcome()
    index = binary_index(records) if len(records) else None

    def embedded(kernel: Any) -> Any:
        return _embedded(kernel, settings.owners)

    for candidate in _inputs(candidates):
        try:
            read, size = _read(candidate, jobs)
        except OSError as exc:
            out.errors.append(InputError(candidate.display, f"cannot read: "
                                         f"{exc.strerror or exc}"))
            continue
        except TraceError as exc:
            out.errors.append(InputError(candidate.display, str(exc)))
            continue
        collector = read.collector
        out.errors.extend(read.errors)
        devices: dict[str, tuple[Device | None, str]] = {}
        reports: list[LaunchReport] = []
        for group in collector.group_list:
            key = group.key.device
            if key not in devices:
                td = collector.devices.get(key)
                devices[key] = _device_for(td, setup.devices, setup.db)
                if setup.devices and td is not None and devices[key][1] != "--device":
                    vendor = {"amd": "AMD", "nvidia": "NVIDIA"}.get(td.vendor, td.vendor)
                    collector.notes.append(f"--device names no {vendor} device: the trace's "
                                           f"own ({td.name or td.arch}) is used")
            device, source = devices[key]
            facts = setup.source_index.get(base_name(group.key.kernel)) \
                if setup.source_index else None
            if facts:  # a template's instantiation's, or its PTX's, read now
                facts = resolved(facts, group.key.kernel)
            reports.append(analyse_group(group, collector, device, source, index, setup.db,
                                         facts, embedded))
        if any(lr.report is not None for lr in reports):
            out.analysed = True
        elif reports:  # launches, none of them analysable: say why, once (exit 2 if alone)
            out.errors.append(InputError(candidate.display, f"none of its "
                                         f"{collector.launches:,} launches could be analysed: "
                                         f"{reports[0].message}"))
        judge(reports, settings)
        regions = _regions(collector, reports, settings)
        _overhead(collector, reports, settings, regions)
        first = len(out.launches)
        for i, lr in enumerate(reports):
            _locate(lr, first + i)
        savings = [group_saving(lr.findings) for lr in reports]
        order = sorted(range(len(reports)), key=lambda i: (
            -_mid(savings[i]), -reports[i].stake_ns, -reports[i].group.total_ns, i))
        for rank, i in enumerate(order):  # records ranked by what their fixes would save
            lr = reports[i]
            for f in lr.findings:
                f.launch["group"] = first + rank
            out.launches.append(launch_record(lr))
            out.findings.append(lr.findings)
        out.inputs.append({"path": candidate.display, "size": size, "sha256": None,
                           "kernels": 0, "format": collector.format,
                           "launches": collector.launches,
                           "launch_groups": len(collector.group_list),
                           **({"ungrouped_kernel_time_ns": round(collector.loose_ns)}
                              if collector.loose_ns else {}),
                           "notes": list(collector.notes),
                           **({"profiler_options": collector.profiler_options}
                              if collector.profiler_options is not None else {}),
                           "rank": trace_rank(Path(candidate.path), candidate.kind)
                           if candidate.member is None else None})
    return out


def _inputs(candidates: list) -> list:
    """The traces to read: an agent_info.csv that a kernel trace of the run reads beside it
    is part of that trace, not an input of its own."""
    kernel_csvs = [Path(c.path) for c in candidates
                   if c.kind == "rocprofv3-csv" and c.member is None]
    if not kernel_csvs:
        return candidates  # (the rocprof reader loads with a rocprof trace)
    from occlint.readers.traces.rocprof import used_agent_info

    used = used_agent_info(kernel_csvs)
    return [c for c in candidates if not (c.kind == "rocprofv3-agent-info" and c.member is None
                                          and Path(c.path).resolve() in used)]


def _read(candidate, jobs: int) -> tuple:
    """Read one trace: a file, or a member of a zip archive (``member`` set)."""
    from occlint.readers.traces import extracted, read_trace, trace_kind

    if candidate.member is None:
        path = Path(candidate.path)
        return (read_trace(path, candidate.display, candidate.kind, jobs),
                os.stat(path).st_size)
    with extracted(candidate.path, candidate.member) as path:
        kind = trace_kind(path) if candidate.kind == "sqlite" else candidate.kind
        if kind is None:
            raise TraceError("an SQLite database of neither Nsight Systems nor rocprofv3")
        return read_trace(path, candidate.display, kind, jobs), os.stat(path).st_size


def _locate(lr: LaunchReport, index: int) -> None:
    """Findings of a launch group point at the trace and name the group; time at stake."""
    key = lr.group.key
    stakes = []
    for f in lr.findings:
        f.file, f.entry = lr.trace, None
        if f.rule in OVERHEAD_RULES:  # the GPU's idle time, not the group's kernel time
            fraction, stake = f.data["idle_fraction"], round(f.data["idle_ns"])
            if f.rule == "LCH202":  # the function's first line
                f.source = {"file": f.data["file"], "line": f.data["line"],
                            "path": f.data["path"]}
            else:  # the user's function that issued the bursts; their idle is the group's
                issuers = f.data.get("issued_by")
                if issuers and f.source is None:
                    top = issuers[0]
                    f.source = {"file": top["file"], "line": top["line"],
                                "path": top["path"]}
                lr.idle_ns += stake
        else:
            fraction = lost_fraction(f, lr.report)
            stake = None if fraction is None else round(fraction * lr.group.total_ns)
            if fraction is not None:
                fraction = round(fraction, 4)
            if stake is not None:
                stakes.append(stake)
            frame = (lr.group.launched_by or {}).get("python")
            if frame and f.source is None:  # the user's function that launched it
                f.source = {"file": frame["file"], "line": frame["line"],
                            "path": find_under(frame["file"])}
            if lr.device is not None:
                f.device = lr.device.name
        f.launch = {"trace": lr.trace, "group": index, "grid": list(key.grid),
                    "block": list(key.block), "count": lr.group.count,
                    "lost_fraction": fraction, "time_at_stake_ns": stake}
    lr.stake_ns = max(stakes, default=0)


def _regions(collector: LaunchCollector, reports: list[LaunchReport], settings
             ) -> list[Region]:
    """The region rules (LCH202: a function of the user's a graph could capture), each
    finding kept by the launch group with the most launches in the function's calls; the
    regions found, for the stream rules not to count their bursts again."""
    rules = checks(settings, "region")
    if not rules or not reports:
        return []
    regions = host_regions(collector.host, list(collector.streams.values()))
    for region in regions:
        groups = region.groups
        top = max(groups, key=lambda g: (groups[g], -g))
        lr = reports[top]
        model = launch_model(lr.device) or reference_model()
        call = region.typical
        low, high = region_saving(call.duration_ns, call.busy_ns, call.launches,
                                  model.graph_node_us * 1000, model.stream_launch_us * 1000)
        calls = len(region.calls)
        item = {"trace": collector.source, "kernel": lr.group.key.kernel,
                "arch": lr.device.arch_name if lr.device else None,
                "device": lr.device.name if lr.device else None,
                **placed({"function": region.function, "file": region.file,
                          "line": region.line}),
                "calls": calls, "launches": call.launches,
                "duration_ns": round(call.duration_ns), "busy_ns": round(call.busy_ns),
                "idle_ns": round(sum(c.duration_ns - c.busy_ns for c in region.calls)),
                "idle_fraction": round(1 - call.busy_ns / call.duration_ns, 4),
                "call_low_ns": round(low), "call_high_ns": round(high),
                "kernels_read": collector.host.kernels_read}  # type: ignore[union-attr]
        found = []
        for check in rules:
            found.extend(check(item, Context(settings.advice)))
        # over the calls read, never more than their idle time
        span = sum(c.duration_ns for c in region.calls)
        high_all = min(high * calls, item["idle_ns"])
        saving = Saving(min(low * calls, high_all) / span, high_all / span, REGION_BASIS)
        for f in found:
            f.saving = saving.to_dict(span)
        lr.findings.extend(finish_findings(found, settings))
    return regions


def _overhead(collector: LaunchCollector, reports: list[LaunchReport], settings,
              regions: list[Region]) -> None:
    """The stream rules (LCH201: launch overhead), one finding per stream at most, kept by
    the launch group with the most launches in its bursts; a burst inside a call of a
    region (LCH202) is listed, its saving counted there."""
    rules = checks(settings, "stream")
    if not rules:
        return
    for (device, stream), timeline in sorted(collector.streams.items()):
        starts, durations, groups = in_start_order(timeline.starts, timeline.durations,
                                                   timeline.groups)
        bursts = overhead_bursts(starts, durations, groups)
        if bursts:
            bursts = idle_elsewhere_busy(bursts, starts, durations,
                                         _elsewhere(collector, device, stream, bursts))
        if not bursts:
            continue
        parts = [_burst_part(b, reports) for b in bursts]
        for p, b in zip(parts, bursts, strict=True):  # a burst that overlaps a region's call
            region = next((r for r in regions
                           if r.overlaps(b["start_ns"], b["start_ns"] + b["span_ns"])), None)
            if region is not None:
                p["in_region"] = f"{region.function}()"
        burst = merge_bursts(bursts)  # one finding per stream
        top = max(burst["groups"], key=lambda g: (burst["groups"][g], -g))
        lr = reports[top]
        kernels = {reports[g].group.key.kernel for g in burst["groups"]}
        burst.update(
            trace=collector.source, stream=stream, kernel=lr.group.key.kernel,
            demangled=lr.group.key.kernel, kernels=len(kernels),
            groups_count=len(burst["groups"]),
            arch=lr.device.arch_name if lr.device else None,
            device=lr.device.name if lr.device else None,
            idle_fraction=round(burst["idle_ns"] / burst["span_ns"], 4)
            if burst["span_ns"] else 0.0,
            framework_launches=sum(p["framework_launches"] for p in parts),
            issued_by=_issuers(parts), parts=parts)
        found = []
        for check in rules:
            found.extend(check(burst, Context(settings.advice)))
        span = burst["span_ns"]
        own = [p for p in parts if "in_region" not in p]
        saving = Saving(sum(p["low_ns"] for p in own) / span,
                        sum(p["high_ns"] for p in own) / span, OVERHEAD_BASIS)
        held = sorted({p["in_region"] for p in parts if "in_region" in p})
        for f in found:
            if own:
                f.saving = saving.to_dict(span)
            else:  # a fact: capturing the functions is the fix, priced there
                f.severity = "info"
            if held:
                f.message += (f"; {len(parts) - len(own)} of its {len(parts)} runs inside "
                              f"the calls of {', '.join(held)} (LCH202)")
        lr.findings.extend(finish_findings(found, settings))


def _burst_part(burst: dict[str, Any], reports: list[LaunchReport]) -> dict[str, Any]:
    """One burst of a stream: what issued most of its launches (the user's Python frame,
    as the trace links each launch group's first launch), how many went through a
    framework's ops, and what capturing it in a graph would save."""
    counts: dict[tuple, int] = {}
    frames: dict[tuple, dict[str, Any]] = {}
    framework = 0
    for g, n in burst["groups"].items():
        link = reports[g].group.launched_by or {}
        if link.get("op"):
            framework += n
        frame = link.get("python")
        if frame:
            key = (frame["function"], frame["file"], frame["line"])
            counts[key] = counts.get(key, 0) + n
            frames[key] = frame
    issuer = max(counts, key=lambda k: (counts[k], str(k))) if counts else None
    saving = overhead_saving(burst["idle_ns"], burst["span_ns"],
                             framework / burst["launches"])
    return {"launches": burst["launches"], "framework_launches": framework,
            "idle_ns": round(burst["idle_ns"]), "start_ns": round(burst["start_ns"]),
            "issued_by": placed(frames[issuer]) if issuer else None,
            "low_ns": round(saving.low * burst["span_ns"]),
            "high_ns": round(saving.high * burst["span_ns"])}


def _issuers(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The places that issued the stream's bursts, the one with the most idle time first."""
    out: dict[tuple, dict[str, Any]] = {}
    for p in parts:
        who = p["issued_by"]
        if who is None:
            continue
        key = (who["function"], who["file"], who["line"])
        entry = out.setdefault(key, {**who, "idle_ns": 0, "launches": 0})
        entry["idle_ns"] += p["idle_ns"]
        entry["launches"] += p["launches"]
    return sorted(out.values(), key=lambda e: (-e["idle_ns"], str(e["file"]), e["line"] or 0))


def _elsewhere(collector: LaunchCollector, device: str, stream: str,
               bursts: list[dict[str, Any]]) -> Callable[[float], float]:
    """``covered(t)``: the time before ``t`` in which a kernel ran on the device other than
    ``stream``'s grouped launches (other streams', and any stream's launches in no group),
    over the bursts' span."""
    mine = collector.streams[(device, stream)]
    alone = StreamTimeline(device, stream)  # this stream's launches in no group only
    alone.loose_starts, alone.loose_durations = mine.loose_starts, mine.loose_durations
    others = [t for (d, s), t in collector.streams.items() if d == device and s != stream]
    lo = min(b["start_ns"] for b in bursts)
    hi = max(b["start_ns"] + b["span_ns"] for b in bursts)
    return Busy([*others, alone], lo, hi).covered


def merge_bursts(bursts: list[dict[str, Any]]) -> dict[str, Any]:
    """The bursts of one stream as one: sums, and means over all their launches and gaps."""
    out: dict[str, Any] = {"bursts": len(bursts), "groups": {}}
    for key in ("launches", "busy_ns", "idle_ns", "span_ns"):
        out[key] = sum(b[key] for b in bursts)
    out["start_ns"] = min(b["start_ns"] for b in bursts)
    for b in bursts:
        for g, n in b["groups"].items():
            out["groups"][g] = out["groups"].get(g, 0) + n
    out["mean_ns"] = out["busy_ns"] / out["launches"]
    out["mean_gap_ns"] = out["idle_ns"] / (out["launches"] - len(bursts))
    return out


def launch_record(lr: LaunchReport) -> dict[str, Any]:
    g, key = lr.group, lr.group.key
    res = key.resources
    resources = {k: getattr(res, k) for k in res.__slots__}  # type: ignore[attr-defined]
    report = lr.report
    occupancy = occupancy_record(report) if report is not None else None
    kernel = report.kernel if report is not None else None
    facts = report.launch.known_facts if report is not None else None
    return {
        "trace": lr.trace,
        "format": lr.format,
        "kernel": key.kernel,
        "mangled": key.mangled or (kernel.name if kernel is not None
                                   and lr.resource_source == "binary" else None),
        "kernel_record": lr.kernel_record,
        "device": lr.device.name if lr.device else None,
        "device_source": lr.device_source,
        "trace_device": lr.trace_device.name if lr.trace_device else None,
        "arch": lr.device.arch_name if lr.device else None,
        "grid": list(key.grid),
        "block": list(key.block),
        "blocks": key.grid[0] * key.grid[1] * key.grid[2],
        "threads_per_block": key.block[0] * key.block[1] * key.block[2],
        "dynamic_shared_bytes": report.launch.dynamic_lds if report is not None else None,
        "resources": {"source": lr.resource_source, "trace": resources,
                      "binary_file": kernel.file if kernel is not None
                      and lr.resource_source == "binary" else None},
        "mismatches": lr.mismatches,
        "count": g.count,
        "streams": sorted(g.streams),
        "total_ns": round(g.total_ns),
        "mean_ns": round(g.mean_ns, 1),
        "max_ns": round(g.max_ns),
        "status": report.status if report is not None else "not-analysed",
        "message": lr.message or None,
        "occupancy": occupancy,
        "waves": round(lr.waves, 4) if lr.waves is not None else None,
        "tail_efficiency": round(lr.tail_efficiency, 4)
        if lr.tail_efficiency is not None else None,
        "time_at_stake_ns": round(lr.stake_ns),
        "launched_by": launched_by(g),
        "owner": lr.owner.to_dict() if lr.owner is not None else None,
        "design": lr.design,
        "model": lr.plan.to_dict() if lr.plan is not None else None,
        "kernel_facts": facts.source if facts is not None else None,
        "saving": group_saving(lr.findings),
        "launch_overhead_idle_ns": round(lr.idle_ns),
        "findings": [f.to_dict() for f in lr.findings],
        "finding_codes": sorted({f.rule for f in lr.findings}),
    }


def launched_by(group) -> dict[str, Any] | None:
    """What launched the group's first launch, as the trace links it: the op, the runtime
    call, the user's Python frame (``python``: file, line, function; ``path``: the file
    under the working directory when it is there) and module."""
    link = group.launched_by
    if not link:
        return None
    out = {k: link.get(k) for k in ("op", "api", "cooperative", "module", "external_id",
                                     "correlation")}
    frame = link.get("python")
    out["python"] = placed(frame) if frame else None
    return out


def placed(frame: dict[str, Any]) -> dict[str, Any]:
    """A Python frame (file, line, function) with its file under the working directory
    (``path``; None when it is not there)."""
    return {**frame, "path": find_under(frame["file"])}


def _embedded(kernel: Any, owners: dict[str, str]) -> Any:
    """The facts of the PTX a user's binary embeds for ``kernel`` (a library's binary is
    not read again: its launches are not the caller's to price)."""
    from occlint.judgement.owner import owner_of

    if owner_of(kernel.name, kernel.demangled, owners, binary=kernel.file).kind != "user":
        return None
    return embedded_facts(kernel.file, kernel.name)


def group_saving(findings: list[Finding]) -> dict[str, Any] | None:
    """A launch group's saving: its finding whose fix saves the most (midpoint); fixes of
    one launch do not add up. Launch overhead (LCH201, LCH202) is not the group's: its
    saving is the GPU's idle time between many groups' launches (issue 29), which the
    summary adds apart (:func:`overhead_savings`); a group's saving is of its own time."""
    best = max((f.saving for f in findings
                if f.saving and "low_ns" in f.saving and f.rule not in OVERHEAD_RULES),
               key=lambda s: s["low_ns"] + s["high_ns"], default=None)
    return best


def _mid(s: dict[str, Any] | None) -> float:
    return (s["low_ns"] + s["high_ns"]) / 2 if s else 0.0


def summary(launches: list[dict[str, Any]], inputs: list[dict[str, Any]] | None = None
            ) -> dict[str, Any]:
    # every launch's time, in a group or not (graph replays: their inputs say how long)
    total = sum(r["total_ns"] for r in launches) + sum(
        i.get("ungrouped_kernel_time_ns", 0) for i in inputs or ())
    flagged = sum(r["total_ns"] for r in launches
                  if any(f["severity"] != "info" for f in r["findings"]))
    # the groups' own fixes, and the streams' launch overhead (the caller's to fix: graphs,
    # fusion, whoever's kernels they are)
    saved = [r["saving"] for r in launches if r["saving"]] + overhead_savings(launches)
    yours = [r["saving"] for r in launches
             if r["saving"] and (r["owner"] or {}).get("kind", "user") == "user"]
    yours += overhead_savings(launches)
    unread = [r for r in launches if (r["owner"] or {}).get("kind") == "user"
              and r["status"] != "not-analysed" and r.get("kernel_facts") is None]
    grouped = sum(r["count"] for r in launches)
    # every launch the traces hold, grouped or not (graph replays, launches whose runtime
    # call is not in the trace: no grid or block, so in no group)
    counted = max(grouped, sum(i["launches"] for i in inputs or ()
                               if isinstance(i.get("launches"), int)))
    return {"launches": counted, "groups": len(launches),
            **({"without_dimensions": counted - grouped} if counted > grouped else {}),
            "kernel_time_ns": total, "time_with_findings_ns": flagged,
            "time_at_stake_ns": sum(r["time_at_stake_ns"] for r in launches),
            "launch_overhead_idle_ns": sum(r["launch_overhead_idle_ns"] for r in launches),
            # the GPU idle in the calls of functions a graph could capture (LCH202)
            "capturable_idle_ns": sum(f["data"]["idle_ns"] for r in launches
                                      for f in r["findings"] if f["rule"] == "LCH202"),
            "saving_low_ns": sum(s["low_ns"] for s in saved),
            "saving_high_ns": sum(s["high_ns"] for s in saved),
            "user_saving_low_ns": sum(s["low_ns"] for s in yours),
            "user_saving_high_ns": sum(s["high_ns"] for s in yours),
            # the user's own kernels the run says nothing of (no source, PTX or cache):
            # their launches are priced from no saving up
            "unread_user_groups": len(unread),
            "unread_user_ns": sum(r["total_ns"] for r in unread),
            **({"ranks": ranks} if (ranks := rank_summary(launches, inputs or [])) else {})}

