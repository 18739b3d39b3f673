"""Terminal output: findings in compiler style, then a short summary per kernel."""

from __future__ import annotations

import math
from typing import Any

from occlint.model.demangle import demangle
from occlint.model.finding import OVERHEAD_RULES
from occlint.model.kernel import one_line as _safe  # names and messages come from binaries
from occlint.pipeline.document import overhead_savings
from occlint.pipeline.ranks import rank_order
from occlint.reporters.units import duration as _us
from occlint.reporters.units import launch_dims as _dims
from occlint.reporters.units import launched_by, natural_key

SEVERITY_STYLE = {"error": ("red", True), "warning": ("yellow", True), "info": ("cyan", False)}


def _style(text: str, color: bool, fg: str | None = None, bold: bool = False,
           dim: bool = False) -> str:
    if not color:
        return text
    import click

    return click.style(text, fg=fg, bold=bold, dim=dim)


def _bytes(n: int | None) -> str:
    if n is None:
        return "?"
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024} KiB"
    return f"{n} B"


def _blocks(n: int) -> str:
    return f"{n} block{'' if n == 1 else 's'}"


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%" if x in (0, 1) else f"{100 * x:.1f}%"


BLOCK_SOURCES = {
    "launch": "launch configuration",
    "source": "its source launch",
    "reqd_workgroup_size": "required workgroup size",
    "max_flat_workgroup_size": "max flat workgroup size",
    "reqntid": "required block size",
    "launch_bounds": "launch bound",
    "max_potential_block_size": "CUDA's max-potential block size; pass --block",
}


def resource_line(k: dict[str, Any]) -> str:
    r = k["resources"]
    if k["vendor"] == "amd":
        vgpr = f"VGPRs {r['vgpr']}{'' if r['vgpr_exact'] else '≤'}"
        if r["agpr"]:
            vgpr += f" + AGPRs {r['agpr']}"
        if r["vgpr_alloc"] != r["vgpr_count"]:
            vgpr += f" (allocates {r['vgpr_alloc']})"
        parts = [f"wave{k['wavefront_size']}", vgpr, f"SGPRs {r['sgpr']}",
                 f"LDS {_bytes(r['lds_bytes'])}" + (" + dynamic" if r["uses_dynamic_lds"] else ""),
                 f"scratch {_bytes(r['scratch_bytes'])}" + (" + dynamic stack"
                                                            if r["dynamic_stack"] else ""),
                 f"max block {r['max_block_size']}"]
        if r["vgpr_spill"] or r["sgpr_spill"]:
            parts.append(f"spills {r['vgpr_spill']} VGPR / {r['sgpr_spill']} SGPR")
    else:
        parts = [f"registers {r['registers']}", f"shared {_bytes(r['shared_bytes'])}",
                 f"local {_bytes(r['local_bytes'])}"]
        if r["spill_instructions"]:
            parts.append(f"{r['spill_instructions']} spill instructions")
        if r["max_block_size"]:
            parts.append(f"max block {r['max_block_size']}")
        if r["cluster_dims"]:
            parts.append("cluster " + "x".join(map(str, r["cluster_dims"])))
    return " · ".join(parts)


def occupancy_line(k: dict[str, Any]) -> str:
    o = k["occupancy"]
    if o is None:
        return _safe(k["message"] or k["status"])
    source = BLOCK_SOURCES.get(o["block_source"], o["block_source"])
    block = f"block {o['block_size']} ({source})"
    if o["blocks_per_cu"] == 0:
        return f"{block}: cannot launch — {o.get('reason') or ', '.join(o['limiters'])}"
    if k["vendor"] == "amd":
        core = (f"{o['waves_per_simd']}/{o['max_waves_per_simd']} waves per SIMD "
                f"({_pct(o['occupancy'])}), {_blocks(o['blocks_per_cu'])} per {o['unit']}")
    else:
        core = (f"{o['warps_per_sm']}/{o['max_warps_per_sm']} warps per SM "
                f"({_pct(o['occupancy'])}), {_blocks(o['blocks_per_sm'])} per SM")
    return f"{block}: {core}; limited by {', '.join(o['limiters'])}"


def _kernel_name(f: dict[str, Any], name: str | None = None) -> str:
    """The kernel as the tables show it, demangled: ``name`` where the caller knows it (a
    launch group's kernel: the trace's demangled name)."""
    return _safe(demangle(name or f["demangled"] or f["kernel"]))


def finding_line(f: dict[str, Any], color: bool, show_device: bool,
                 suppressed: bool = False, name: str | None = None,
                 archs: str | None = None) -> str:
    """One finding; ``archs``: the architectures it was found for, named after the kernel
    (the images of a fat binary)."""
    fg, bold = SEVERITY_STYLE.get(f["severity"], (None, False))
    arch_text = f" [{_safe(archs)}]" if archs else ""
    if f.get("line") is not None:  # a source location: ruff's path:line:col: CODE
        where = _safe(f"{f['file']}:{f['line']}:{f['column']}")
        who = _kernel_name(f) + arch_text if f.get("kernel") else ""
        if who and show_device and f.get("device"):
            who += f" @ {_safe(f['device'])}"
        help_text = f" — help: {_safe(f['advice'])}" if f.get("advice") else ""
        label = f"{f['severity']} (suppressed)" if suppressed else f["severity"]
        return (f"{where}: {_style(f['rule'], color, bold=True)} "
                f"{_style(label, color, fg, bold)}: {who + ': ' if who else ''}"
                f"{_safe(f['message'])}{help_text}")
    where = _safe(f["file"] + (f"[{f['entry']}]" if f["kernel"] is None and f["entry"] else ""))
    # a stream's or a function's launch overhead: no one kernel's (its message says where)
    kernel = f": {_kernel_name(f, name)}{arch_text}" \
        if f["kernel"] and f["rule"] not in OVERHEAD_RULES else ""
    launch = f.get("launch")
    if launch and kernel:
        kernel += f" <<<{_dims(launch['grid'])}, {_dims(launch['block'])}>>>"
    source = f.get("source")
    if kernel and source:  # from debug information; a traced launch: who launched it
        kernel += (f" ({'launched from ' if launch else ''}"
                   f"{_safe(source.get('path') or source['file'])}:{source['line']})")
    device = f" @ {f['device']}" if show_device and f["device"] else ""
    help_text = f" — help: {_safe(f['advice'])}" if f.get("advice") else ""
    return (f"{where}{kernel}{device}: {_style(f['rule'], color, bold=True)} "
            f"{_style(f['severity'], color, fg, bold)}: {_safe(f['message'])}{help_text}")


def kernel_finding_lines(kernels: list[dict[str, Any]], color: bool,
                         show_device: bool) -> list[str]:
    """The findings of compiled kernels. In an input with images for several
    architectures (a fat binary), each line names the architectures it holds for, and a
    line that is the same for several of them is printed once: "[sm_80, sm_90, sm_100a]"."""
    archs: dict[str, set[str]] = {}
    for k in kernels:
        if k["arch"]:
            archs.setdefault(k["file"], set()).add(k["arch"])
    found: dict[tuple[str, str], tuple[dict[str, Any], list[str]]] = {}
    for k in kernels:
        for f in k["findings"]:
            _, where = found.setdefault((k["file"], finding_line(f, color, show_device)),
                                            (f, []))
            if k["arch"] and k["arch"] not in where:
                where.append(k["arch"])
    return [finding_line(f, color, show_device,
                         archs=", ".join(sorted(where, key=natural_key))
                         if len(archs.get(file, ())) > 1 else None)
            for (file, _), (f, where) in found.items()]


TOP_LAUNCHES = 10


def yours(r: dict[str, Any]) -> bool:
    """A launch group of the user's own kernel (or of unknown owner)."""
    return (r.get("owner") or {}).get("kind", "user") == "user"


def saving_span(low_ns: float, high_ns: float) -> str:
    """A saving range in one unit: 0.89-1.28 ms, 12.0-15.5 µs."""
    if not high_ns:
        return "0"
    if high_ns >= 1e6:
        return f"{low_ns / 1e6:.2f}-{high_ns / 1e6:.2f} ms"
    return f"{low_ns / 1e3:.1f}-{high_ns / 1e3:.1f} µs"


def owner_label(r: dict[str, Any]) -> str:
    o = r.get("owner") or {}
    return o.get("library") or o.get("kind") or "?"


def launch_lines(doc: dict[str, Any], color: bool, show_all: bool = False) -> list[str]:
    """Per trace: the user's launch groups by what their fixes would save, then one line per
    library, framework or compiler whose kernels the user cannot change."""
    lines: list[str] = _rank_lines(doc)
    by_trace: dict[str, list[dict[str, Any]]] = {t: [] for t in rank_order(doc)}
    for r in doc.get("launches", []):
        by_trace[r["trace"]].append(r)
    inputs = {i["path"]: i for i in doc.get("inputs", [])}
    for trace, records in by_trace.items():
        read = inputs.get(trace, {})
        ungrouped = read.get("ungrouped_kernel_time_ns", 0)
        total = sum(r["total_ns"] for r in records) + ungrouped
        devices = sorted({r["device"] for r in records if r["device"]})
        count = max(sum(r["count"] for r in records), read.get("launches", 0))
        lines.append(_style(_safe(trace), color, bold=True) + f"  ({records[0]['format']}; "
                     f"{_count(count, 'launch', 'launches')} in "
                     f"{_count(len(records), 'group')} on "
                     f"{_safe(', '.join(devices) or 'an unknown device')}; "
                     f"kernel time {_us(total)}"
                     + (f", {_us(ungrouped)} of it in launches without grid or block"
                        if ungrouped else "") + ")")
        notes = read.get("notes") or []
        lines.extend(f"    note: {_safe(n)}" for n in notes)
        lines.extend(_unknown_lines(records))
        idle = sum(r["launch_overhead_idle_ns"] for r in records)
        regions = [f["data"] for r in records for f in r["findings"] if f["rule"] == "LCH202"]
        if idle or regions:
            graphs = overhead_savings(records)
            said = [f"{_us(idle)} between short launches (LCH201)" if idle else "",
                    f"{_us(sum(d['idle_ns'] for d in regions))} in the calls of "
                    + ", ".join(_safe(d["function"]) + "()" for d in regions)
                    + " (LCH202)" if regions else ""]
            lines.append("    launch overhead: the GPU idles " + " and ".join(t for t in said if t)
                         + ("; graphs or fusion may save "
                            + saving_span(sum(s["low_ns"] for s in graphs),
                                          sum(s["high_ns"] for s in graphs))
                            if graphs else ""))
        mine = [r for r in records if show_all or yours(r)]
        # the saving column as wide as its widest span (ms and us spans differ)
        width = max([12, *(len(_saving(r)) for r in mine[:TOP_LAUNCHES])])
        if mine:
            lines.append(f"    {'saving':<{width}}  share  launches  grid x block          "
                         "occupancy    waves  kernel  [findings]   (share: of the kernel "
                         "time)")
        for r in mine[:TOP_LAUNCHES]:
            lines.append("    " + _launch_row(r, total, width))
        if len(mine) > TOP_LAUNCHES:
            lines.append(f"    ... {len(mine) - TOP_LAUNCHES} more launch groups "
                         "(--format json or html for all)")
        if not show_all:
            lines.extend(_owner_lines(records, total))
    return lines


def _rank_lines(doc: dict[str, Any]) -> list[str]:
    """The ranks of a multi-rank run, slowest first: GPU kernel time, devices, traces."""
    ranks = (doc["summary"].get("launches") or {}).get("ranks")
    if not ranks:
        return []
    lines = [f"{len(ranks)} ranks, slowest first (GPU kernel time; its launch groups come "
             "first below):"]
    for e in ranks:
        over = e["over_fastest"]
        devices = ", ".join(f"{_safe(d['device'])} {_us(d['kernel_time_ns'])}"
                            for d in e["devices"])
        lines.append(f"    {_safe(e['rank']):<10} {_us(e['kernel_time_ns']):>10}"
                     + (f"  +{100 * over:.1f}% over the fastest" if over else "  fastest")
                     + f"  {_count(e['launches'], 'launch', 'launches')} in "
                     f"{_count(e['groups'], 'group')} on {devices}; "
                     f"{_safe(', '.join(e['traces']))}")
    return [*lines, ""]


def _unknown_lines(records: list[dict[str, Any]]) -> list[str]:
    """Why the occupancy of launch groups is unknown (the `?` of the table), per reason."""
    reasons: dict[str, int] = {}
    for r in records:
        if r["occupancy"] is None:
            why = r["message"] or r["status"]
            reasons[why] = reasons.get(why, 0) + 1
    return [f"    {n} of {len(records)} launch group{'s' if len(records) != 1 else ''} "
            f"without occupancy (?): {_safe(why)}" for why, n in reasons.items()]


def _saving(r: dict[str, Any]) -> str:
    s = r.get("saving")
    return saving_span(s["low_ns"], s["high_ns"]) if s else "-"


def _launch_row(r: dict[str, Any], total: float, width: int = 12) -> str:
    occ = r["occupancy"]
    occ_text = _pct(occ["occupancy"]) if occ else "?"
    shape = f"{_dims(r['grid'])} x {_dims(r['block'])}"
    waves = f"{r['waves']:.2f}" if r["waves"] is not None else "?"
    share = r["total_ns"] / total if total else 0.0  # the group's, of the kernel time
    codes = ",".join(r["finding_codes"])
    origin = launched_by(r)
    return (f"{_saving(r):>{width}}  {100 * share:4.1f}%  {r['count']:>8,}  {shape:<20}  "
            f"{occ_text:>9}  {waves:>7}  {_safe(demangle(r['kernel']))[:80]}"
            + (f"  [{codes}]" if codes else "") + (f"  <- {_safe(origin)}" if origin else ""))


def _owner_lines(records: list[dict[str, Any]], total: float) -> list[str]:
    """One line per library / framework / compiler: its kernel time, and the grids of its
    launches that leave units idle or waves partial (the shapes its caller chooses)."""
    owners: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        if not yours(r):
            owners.setdefault(owner_label(r), []).append(r)
    out = []
    for label, rs in sorted(owners.items(), key=lambda kv: -sum(r["total_ns"] for r in kv[1])):
        time = sum(r["total_ns"] for r in rs)
        kind = (rs[0].get("owner") or {}).get("kind", "")
        shapes = [r for r in rs if {"LCH101", "LCH102", "LCH105"} & set(r["finding_codes"])
                  and (r.get("design") or {}).get("kind") != "communication"]
        grids = ", ".join(_dims(list(g)) for g in sorted({tuple(r["grid"]) for r in shapes},
                                                           key=_blocks_then_dims)[:4])
        shape_text = (f"; {len(shapes)} launch shape"
                      f"{'s leave' if len(shapes) != 1 else ' leaves'} "
                      f"{_unit_word(rs[0])} idle or waves partial (grids {grids}"
                      f"{', ...' if len(shapes) > 4 else ''}): the shapes you call it with"
                      if shapes else "")
        knob = " (change it through the compiler)" if kind == "generated" else ""
        # (Inductor records a Triton kernel's launch as an op of the kernel's own name)
        callers = sorted({o for r in shapes if (o := _caller(r)) and o != r["kernel"]})
        if callers:
            shape_text += (f" (launched by {_safe(', '.join(callers[:3]))}"
                           f"{', ...' if len(callers) > 3 else ''})")
        out.append(f"    {_safe(label)} ({kind}): {len(rs)} launch group"
                   f"{'s' if len(rs) != 1 else ''}, {_us(time)} "
                   f"({100 * time / total if total else 0:.0f}%){knob}{shape_text}")
    return out


def _blocks_then_dims(grid: tuple[int, ...]) -> tuple[int, tuple[int, ...]]:
    """Grids in numeric order: by their number of blocks (16 before 4x4x36, 576 blocks)."""
    return math.prod(grid), grid


def _caller(r: dict[str, Any]) -> str | None:
    """The op that launched a group (else its whole launcher text), for the library lines."""
    return (r.get("launched_by") or {}).get("op") or launched_by(r)


def _unit_word(r: dict[str, Any]) -> str:
    return "CUs" if (r.get("arch") or "").startswith("gfx") else "SMs"


def advice_line(k: dict[str, Any]) -> str | None:
    a = k.get("advice") or {}
    parts = []
    if a.get("recommended_block"):
        why = ""
        if a["recommended_block"] != (k["occupancy"] or {}).get("block_size"):
            why = f": {_safe(a['recommended_reason'])}" if a.get("recommended_reason") else ""
        parts.append(f"block {a['recommended_block']} (best occupancy "
                     f"{_pct(a['best_occupancy'])}{why})")
    over = a.get("oversubscription")
    if (a.get("grid_stride") or {}).get("applies") is False:
        parts.append(f"no grid-stride grid: {a['grid_stride']['reason']}")
    elif over and over.get("recommended_grid"):
        cap = a["capacity"]
        grid = over.get("recommended_block_grid") or over["recommended_grid"]
        at = a.get("recommended_block") or over.get("block")
        parts.append(f"grid-stride grid {grid}{f' at block {at}' if at else ''} "
                     f"({over['factor']:g}x the {cap['wave_slots']:,} wave slots of "
                     f"{cap['units']} {cap['unit']}s)")
    for step in k.get("next_steps", []):
        if step["target"] is not None and step["resource"] in (k["occupancy"] or {}).get(
                "limiters", ()):
            from occlint.occupancy.steps import UNITS

            parts.append(f"cut {step['cut']} {UNITS.get(step['resource'], step['resource'])} "
                         f"for {step['occupancy_then']} "
                         f"{'waves/SIMD' if k['vendor'] == 'amd' else 'blocks/SM'}")
    return "advice: " + "; ".join(parts) if parts else None


def statistics(doc: dict[str, Any]) -> str:
    rows = sorted(doc["summary"]["findings"]["by_rule"], key=lambda r: (-r["count"], r["rule"]))
    if not rows:
        return "no findings\n"
    width = max(len(str(r["count"])) for r in rows)
    lines = [f"{r['count']:>{width}}  {r['rule']:<7} {r['severity']:<8} {r['name']}"
             for r in rows]
    lines.append(f"{'':>{width}}  {doc['summary']['findings']['total']} findings")
    return "\n".join(lines) + "\n"


def render(doc: dict[str, Any], color: bool = False, statistics_only: bool = False,
           quiet: bool = False, **options: Any) -> str:
    if options.get("statistics"):
        return statistics(doc)
    show_device = len(doc["devices"]) > 1
    lines: list[str] = []
    for f in doc.get("findings", []):
        if f["rule"] != "IO101":  # unreadable inputs: one line each on stderr already
            lines.append(finding_line(f, color, show_device))
    if options.get("show_suppressed"):
        for source in doc.get("sources") or []:
            for f in source.get("suppressed") or []:
                lines.append(finding_line(f, color, show_device, suppressed=True))
    lines.extend(kernel_finding_lines(doc["kernels"], color, show_device))
    for r in doc.get("launches", []):
        lines.extend(finding_line(f, color, show_device, name=r["kernel"]) for f in r["findings"]
                     if options.get("show_all") or (f["severity"] != "info"
                     and (yours(r) or f["rule"] in OVERHEAD_RULES)))
    if quiet:
        return "\n".join(lines) + ("\n" if lines else "")
    if lines and doc["kernels"]:
        lines.append("")
    current = None
    for k in doc["kernels"]:
        if k["file"] != current:
            current = k["file"]
            lines.append(_style(_safe(current), color, bold=True))
        where = _safe(k["target_id"]) + (f" on {k['device']}" if k["device"] else "")
        entry = f" [{_safe(k['entry'])}]" if k["entry"] else ""
        lines.append(f"  {_style(_safe(k['demangled']), color, bold=True)}  ({where}){entry}")
        lines.append(f"    {resource_line(k)}")
        lines.append(f"    {occupancy_line(k)}")
        advice = advice_line(k)
        if advice:
            lines.append(f"    {advice}")
    if doc.get("launches"):
        if lines and lines[-1]:
            lines.append("")
        lines.extend(launch_lines(doc, color, bool(options.get("show_all"))))
    if doc.get("sources"):
        if lines and lines[-1] != "":
            lines.append("")
        lines.extend(source_lines(doc["sources"], color))
    s = doc["summary"]
    counts = s.get("findings", {}).get("by_severity", {})
    found = ", ".join(f"{n} {sev}{'s' if n != 1 else ''}" for sev, n in counts.items() if n)
    if lines:
        lines.append("")
    traced = s.get("launches")
    if traced and traced["launches"]:  # not after a trace that could not be read
        idle = [f"{_us(traced['launch_overhead_idle_ns'])} idle between launches"
                if traced["launch_overhead_idle_ns"] else "",
                f"{_us(traced['capturable_idle_ns'])} idle in calls a graph could capture"
                if traced.get("capturable_idle_ns") else ""]
        lines.append(
            f"estimated saving {saving_span(traced['saving_low_ns'], traced['saving_high_ns'])} "
            f"(of {_us(traced['kernel_time_ns'])} kernel time"
            + "".join(f", {t}" for t in idle if t) + "), of which "
            f"{saving_span(traced['user_saving_low_ns'], traced['user_saving_high_ns'])} "
            "yours to change (your kernels, launch overhead)")
        if traced.get("unread_user_groups"):
            lines.append(unread_line(traced))
    lines.append(_summary_line(doc, found))
    skipped = s.get("skipped", 0)
    if skipped:
        lines.append(f"skipped: {skipped} file{'s' if skipped != 1 else ''} without GPU code")
    return "\n".join(lines) + "\n"


def unread_line(traced: dict[str, Any]) -> str:
    """What the run lacks to price the user's own launches (their kernels' facts)."""
    n = traced["unread_user_groups"]
    return (f"{_count(n, 'launch group')} of your kernels ({_us(traced['unread_user_ns'])}) "
            f"{'has' if n == 1 else 'have'} no source, PTX or cache in the run: "
            f"{'its' if n == 1 else 'their'} savings start at none; pass the kernels' source "
            "(.cu/.hip files or folders), their PTX, the binary that launched them (when it "
            "embeds PTX) or the CuPy/Triton cache with the trace to price a launch change")


def _count(n: int, noun: str, plural: str | None = None) -> str:
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def _summary_line(doc: dict[str, Any], found: str) -> str:
    """What was read and what was found: "129 launches (8 launch groups) in 1 input:
    5 warnings"."""
    baseline = (f" ({doc['baseline']['suppressed']} in the baseline)"
                if doc.get("baseline") else "")
    return f"{what_was_read(doc)}: {found or 'no findings'}{baseline}"


def what_was_read(doc: dict[str, Any]) -> str:
    """Launches of traces, launch sites of sources, kernels of binaries: "129 launches
    (8 launch groups) and 3 kernels in 2 inputs"."""
    s = doc["summary"]
    traced, sources = s.get("launches"), doc.get("sources") or []
    sites = _count(sum(len(x["launches"]) for x in sources), "launch site")
    files = _count(len(sources), "source file")
    if sources and not traced and not s["kernels"] and s["inputs"] == len(sources):
        return f"{sites} in {files}"  # nothing but sources
    parts = []
    if traced:
        apart = (f", {traced['without_dimensions']:,} without grid or block"
                 if traced.get("without_dimensions") else "")
        parts.append(f"{_count(traced['launches'], 'launch', 'launches')} "
                     f"({_count(traced['groups'], 'launch group')}{apart})")
    if sources:
        parts.append(f"{sites} ({files})")
    if s["kernels"] or not parts:
        parts.append(_count(s["kernels"], "kernel"))
    return f"{' and '.join(parts)} in {_count(s['inputs'], 'input')}"


def _param(p: dict[str, Any] | None) -> str:
    if p is None:
        return "?"
    if p["known"]:
        x, y, z = p["dims"]
        value = str(x) if (y, z) == (1, 1) else f"{x}x{y}x{z}"
        return value + (f" (ceil division at block {p['ceil_div_block']})"
                        if p["ceil_div_block"] else "")
    if p["ceil_div_block"]:
        return f"problem size / {p['ceil_div_block']}"
    return "?"


def source_lines(sources: list[dict[str, Any]], color: bool) -> list[str]:
    """Per source file: each launch site with what the file determines and its advice."""
    lines = []
    for source in sources:
        if not source["launches"]:
            continue
        lines.append(_style(_safe(source["path"]), color, bold=True))
        for site in source["launches"]:
            lines.append(f"  {site['line']}:{site['column']}  {_safe(site['kernel_text'])}: "
                         f"grid {_param(site['grid'])}, block {_param(site['block'])} "
                         f"({_safe(site['api'])})")
            advice = site.get("advice") or {}
            if advice.get("reason"):
                lines.append(f"    {_safe(advice['reason'])}")
    return lines
