"""``--format html``: one self-contained HTML file, a view of the report document.

Like coverage.py's HTML report, the data (the document of ``occlint.pipeline.document``, the
same dict ``--format json`` serialises) is kept apart from the presentation (jinja2
templates, CSS and JS under ``templates/``). The page is built to be read anywhere:

* one file, no network: no external CSS, JS, fonts or images;
* readable with JavaScript off and under a strict Content-Security-Policy (Jenkins serves
  archived HTML with ``default-src 'none'``): semantic tables, ``<details>`` per kernel and
  inline SVG charts drawn with presentation attributes only (no ``style`` attributes), so
  the page still reads when the inline ``<style>`` is blocked; the inline script only adds
  sorting and filtering;
* every string from a binary is escaped (jinja2 autoescape; ids are derived slugs);
* deterministic: the same document gives a byte-identical file (no timestamps).
"""

from __future__ import annotations

import hashlib
import re
from functools import cache
from importlib import resources
from typing import Any

from markupsafe import Markup

from occlint.model.demangle import demangle
from occlint.pipeline.ranks import rank_order
from occlint.reporters import charts as charts_mod
from occlint.reporters import text as text_mod

SEVERITIES = ("error", "warning", "info")
# Kernel details are expanded by default in small reports only (big ones stay light).
OPEN_DETAILS_UP_TO = 10
# Names longer than this may be clamped (three lines in tables, two in closed details): the
# element's title then holds the whole name.
LONG_NAME = 60


@cache
def environment():
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("occlint.reporters", "templates"),
        autoescape=True, trim_blocks=True, lstrip_blocks=True,
        undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
    )
    env.filters["bytes"] = charts_mod.fmt_bytes
    env.filters["pct"] = _pct
    env.filters["thousands"] = lambda n: f"{n:,}"
    env.filters["breakable"] = _breakable
    return env


@cache
def _asset(name: str) -> Markup:
    """CSS / JS shipped beside the templates, inlined as is (they are ours, not data)."""
    content = resources.files("occlint.reporters").joinpath("templates", name).read_text(
        encoding="utf-8")
    if re.search(r"</(style|script)", content, re.I):
        raise ValueError(f"{name} must not close its own element")
    return Markup(content.strip())


def _breakable(path: str) -> Markup:
    """A path that may wrap after each '/' (escaped, with <wbr> break opportunities)."""
    return Markup("/<wbr>").join(path.split("/"))


def _pct(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{100 * x:.0f}%" if x in (0, 1) or round(100 * x, 1) == round(100 * x) \
        else f"{100 * x:.1f}%"


def _slug(text: str, limit: int = 40) -> str:
    return re.sub(r"[^A-Za-z0-9_]+", "-", text).strip("-")[:limit].strip("-") or "kernel"


def kernel_anchor(k: dict[str, Any]) -> str:
    """A stable id: the kernel's name as a slug plus a hash of file, entry, name, device
    (the same kernel gets the same anchor whatever else the report holds)."""
    key = "\0".join(str(k.get(f) or "") for f in ("file", "entry", "name", "device"))
    digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:10]
    return f"k-{_slug(k['name'])}-{digest}"


def _counts(findings: list[dict[str, Any]]) -> dict[str, int]:
    out = dict.fromkeys(SEVERITIES, 0)
    for f in findings:
        out[f["severity"]] = out.get(f["severity"], 0) + 1
    return out


def _worst(counts: dict[str, int]) -> str:
    return next((s for s in SEVERITIES if counts.get(s)), "none")


def _resource_rows(k: dict[str, Any]) -> list[tuple[str, str]]:
    r = k["resources"]
    fmt = charts_mod.fmt_bytes
    if k["vendor"] == "amd":
        vgpr = f"{r['vgpr']}{'' if r['vgpr_exact'] else ' (at most)'}"
        rows = [("wave size", f"wave{k['wavefront_size']}"), ("VGPRs", vgpr)]
        if r["agpr"]:
            rows.append(("AGPRs", str(r["agpr"])))
        if r["vgpr_alloc"] != r["vgpr"]:
            rows.append(("VGPRs allocated", str(r["vgpr_alloc"])))
        rows += [("SGPRs", str(r["sgpr"])),
                 ("LDS", fmt(r["lds_bytes"]) + (" + dynamic" if r["uses_dynamic_lds"] else "")),
                 ("scratch", fmt(r["scratch_bytes"]) + (" + dynamic stack"
                                                         if r["dynamic_stack"] else ""))]
        if r["vgpr_spill"] or r["sgpr_spill"]:
            rows.append(("spills", f"{r['vgpr_spill']} VGPR / {r['sgpr_spill']} SGPR"))
        if r["reqd_workgroup_size"]:
            rows.append(("required block", "×".join(map(str, r["reqd_workgroup_size"]))))
        rows.append(("max block", str(r["max_block_size"])))
        if r["wgp_mode"] is not None:
            rows.append(("mode", "WGP" if r["wgp_mode"] else "CU"))
    else:
        rows = [("registers", str(r["registers"])), ("shared", fmt(r["shared_bytes"])),
                ("local", fmt(r["local_bytes"]))]
        if r["spill_instructions"]:
            rows.append(("spill instructions", str(r["spill_instructions"])))
        if r["required_block"]:
            rows.append(("required block", "×".join(map(str, r["required_block"]))))
        if r["max_block_size"]:
            rows.append(("max block", str(r["max_block_size"])))
        if r["min_blocks"]:
            rows.append(("min blocks/SM", str(r["min_blocks"])))
        if r["max_reg_count"]:
            rows.append(("max registers", str(r["max_reg_count"])))
        if r["cluster_dims"]:
            rows.append(("cluster", "×".join(map(str, r["cluster_dims"]))))
        if r["stack_bytes"]:
            rows.append(("stack", fmt(r["stack_bytes"])))
    return rows


def _occupancy_cells(k: dict[str, Any]) -> dict[str, Any]:
    o = k["occupancy"]
    if o is None:
        return {"block": None, "units": "—", "units_sort": -1, "occupancy": None,
                "limiter": k["status"]}
    if k["vendor"] == "amd":
        units, top = o["waves_per_simd"], o["max_waves_per_simd"]
        label = "waves/SIMD"
    else:
        units, top = o["warps_per_sm"], o["max_warps_per_sm"]
        label = "warps/SM"
    limiter = ", ".join(o["limiters"])
    if o["blocks_per_cu"] == 0:
        limiter = f"cannot launch ({limiter})"
    return {"block": o["block_size"], "units": f"{units}/{top}", "units_sort": units,
            "units_label": label, "occupancy": o["occupancy"], "limiter": limiter}


def _kernel_view(k: dict[str, Any], anchor: str, db, with_charts: bool) -> dict[str, Any]:
    counts = _counts(k["findings"])
    charts, note = charts_mod.kernel_charts(k, db) if with_charts else ([], "")
    where = k["target_id"] + (f" on {k['device']}" if k["device"] else "")
    return {
        "id": anchor, "k": k, "counts": counts, "worst": _worst(counts),
        "title": k["demangled"] or k["name"], "where": where,
        "cells": _occupancy_cells(k), "resources": _resource_rows(k), "owner": _owner_cell(k),
        "occupancy_line": text_mod.occupancy_line(k),
        "advice_line": (text_mod.advice_line(k) or "").removeprefix("advice: "),
        "steps": charts_mod.next_step_sentences(k),
        "charts": charts, "chart_note": note,
    }


def _order(views: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Severity first, then impact (lowest occupancy), then the document's order."""
    def key(item: tuple[int, dict[str, Any]]):
        i, v = item
        c, occ = v["counts"], v["cells"]["occupancy"]
        return (-c["error"], -c["warning"], -c["info"], 2 if occ is None else occ, i)

    return [v for _, v in sorted(enumerate(views), key=key)]


def _rule_docs(codes: list[str]) -> dict[str, Any]:
    try:
        from occlint.rules.registry import all_rules

        rules = all_rules()
    except Exception:  # rule docs are an extra; the report stands without them
        return {}
    return {c: rules[c] for c in codes if c in rules}


# Who can change a kernel (occlint.judgement.owner): a square of its colour in the Owner
# column, the user's own first.
OWNER_KINDS = ("user", "generated", "framework", "library")
OWNER_COLOR = {"user": "#7048e8", "generated": "#1098ad", "framework": "#868e96",
               "library": "#d6336c"}


def _owner_cell(record: dict[str, Any]) -> dict[str, str]:
    """A record's owner as the table shows it: kind (for the colour) and label."""
    owner = record.get("owner") or {"kind": "user"}
    kind = owner["kind"] if owner["kind"] in OWNER_COLOR else "user"
    label = kind if kind == "user" else text_mod.owner_label(record)
    return {"kind": kind, "label": label, "basis": owner.get("basis") or ""}


def _codes(findings: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Each rule once (a group on two streams has an LCH201 per stream), its messages as
    the title."""
    messages: dict[str, list[str]] = {}
    for f in findings:
        messages.setdefault(f["rule"], []).append(f["message"])
    return [(rule, "\n".join(m)) for rule, m in messages.items()]


SEVERITY_COLOR = {"error": "#c92a2a", "warning": "#e67700", "info": "#1971c2", "none": "#2f9e44"}
CHART_KERNELS = 20  # bars in the GPU-time chart; the rest are summed in one bar
# The GPU-time chart: 1200 px wide; the longest bar 380 px, its label after it in at most
# GPU_LABEL_CHARS characters of 12 px text (at most about 7 px each in DejaVu Sans).
GPU_CHART_WIDTH, GPU_BAR_WIDTH, GPU_LABEL_CHARS = 1200, 380, 110


def _worst_severity(findings: list[dict[str, Any]]) -> str:
    for sev in SEVERITIES:
        if any(f["severity"] == sev for f in findings):
            return sev
    return "none"


def launch_views(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The launches section: one row per launch group, and a bar chart of GPU time by kernel
    (the groups of one kernel summed), each bar coloured by the kernel's worst finding."""
    from occlint.reporters.units import duration as _us
    from occlint.reporters.units import launch_dims, launched_by

    records = doc.get("launches")
    if not records:
        return None
    rows = []
    position = {t: n for n, t in enumerate(rank_order(doc))}
    # a group's share: of its trace's kernel time (the document's total for one trace)
    kernel_by_trace: dict[str, int] = {}
    for r in records:
        kernel_by_trace[r["trace"]] = kernel_by_trace.get(r["trace"], 0) + r["total_ns"]
    order = sorted(range(len(records)), key=lambda i: position[records[i]["trace"]])
    for i in order:  # the slowest rank's launch groups first
        r = records[i]
        kernel_ns = kernel_by_trace[r["trace"]]
        occ = r["occupancy"]
        saving = r.get("saving")
        rows.append({"r": r, "id": f"launch-{i}", "worst": _worst_severity(r["findings"]),
                     "name": demangle(r["kernel"]), "origin": launched_by(r),
                     "shape": f"{launch_dims(r['grid'])} × {launch_dims(r['block'])}",
                     "occupancy": occ["occupancy"] if occ else None,
                     "total": _us(r["total_ns"]), "idle": _us(r["launch_overhead_idle_ns"]),
                     "share": r["total_ns"] / kernel_ns if kernel_ns else 0.0,
                     "owner": _owner_cell(r), "codes": _codes(r["findings"]),
                     "saving": (text_mod.saving_span(saving["low_ns"], saving["high_ns"])
                                if saving else "—"),
                     "saving_mid": ((saving["low_ns"] + saving["high_ns"]) / 2
                                    if saving else 0)})
    # What the user can change first (the document's order within each part).
    rows.sort(key=lambda v: v["owner"]["kind"] != "user")
    by_kernel: dict[tuple[str, str], dict[str, Any]] = {}
    for r in records:
        k = by_kernel.setdefault((r["trace"], r["kernel"]), {
            "name": r["kernel"], "trace": r["trace"], "ns": 0, "findings": []})
        k["ns"] += r["total_ns"]
        k["findings"].extend(r["findings"])
    kernels = sorted(by_kernel.values(), key=lambda k: (-k["ns"], k["name"]))
    rest = kernels[CHART_KERNELS:]
    kernels = kernels[:CHART_KERNELS]
    if rest:
        kernels.append({"name": f"{len(rest)} other kernels", "trace": "",
                        "ns": sum(k["ns"] for k in rest), "findings": []})
    top = max((k["ns"] for k in kernels), default=0) or 1
    several = len({r["trace"] for r in records}) > 1
    bars = []
    for i, k in enumerate(kernels):
        worst = _worst_severity(k["findings"])
        where = f" — {k['trace'].rsplit('/', 1)[-1]}" if several and k["trace"] else ""
        label = f"{_us(k['ns'])} · {demangle(k['name'])}"
        room = GPU_LABEL_CHARS - len(where)  # the kernel name gives way to the trace's
        label = (label if len(label) <= room else label[:room - 1] + "…") + where
        bars.append({"y": 22 * i, "width": round(GPU_BAR_WIDTH * k["ns"] / top, 1),
                     "color": SEVERITY_COLOR[worst], "worst": worst, "label": label,
                     "title": demangle(k["name"]) + (f" ({k['trace']})" if several else ""),
                     "time": _us(k["ns"])})
    summary = doc["summary"].get("launches") or {}
    ranks = [{"rank": k["rank"], "time": _us(k["kernel_time_ns"]),
              "over": f"+{100 * k['over_fastest']:.1f}%" if k["over_fastest"] else "fastest",
              "launches": k["launches"], "groups": k["groups"],
              "devices": ", ".join(f"{d['device']} ({_us(d['kernel_time_ns'])})"
                                   for d in k["devices"]),
              "traces": ", ".join(k["traces"])} for k in summary.get("ranks") or []]
    return {"rows": rows, "bars": bars, "height": 22 * len(bars) + 4, "ranks": ranks,
            "width": GPU_CHART_WIDTH, "several_traces": several,
            "several_devices": len({r["device"] for r in records}) > 1,
            "summary": summary, "kernel_time": _us(summary.get("kernel_time_ns", 0)),
            "saving": text_mod.saving_span(summary.get("saving_low_ns", 0),
                                           summary.get("saving_high_ns", 0)),
            "user_saving": text_mod.saving_span(summary.get("user_saving_low_ns", 0),
                                                summary.get("user_saving_high_ns", 0)),
            "owners": sorted({v["owner"]["kind"] for v in rows}, key=OWNER_KINDS.index),
            "with_findings": _us(summary.get("time_with_findings_ns", 0)),
            "idle": _us(summary.get("launch_overhead_idle_ns", 0)),
            "capturable": _us(summary.get("capturable_idle_ns", 0)),
            "unread": text_mod.unread_line(summary) if summary.get("unread_user_groups")
            else None,
            "colors": SEVERITY_COLOR}


def context(doc: dict[str, Any], device_db=None) -> dict[str, Any]:
    """The template's view of the document (everything the page shows, precomputed)."""
    if device_db is None:
        from occlint.devices.db import shipped_db

        device_db = shipped_db()
    seen: dict[str, int] = {}
    views = []
    for k in doc["kernels"]:
        anchor = kernel_anchor(k)
        seen[anchor] = seen.get(anchor, 0) + 1
        if seen[anchor] > 1:  # the same kernel twice in one file: keep ids unique
            anchor = f"{anchor}-{seen[anchor]}"
        views.append(_kernel_view(k, anchor, device_db, True))
    views = _order(views)
    frames: dict[tuple, tuple[str, charts_mod.Chart]] = {}
    for v in views:  # identical frames (axes, ticks, titles) are drawn once and <use>d
        for c in v["charts"]:
            key = c.frame_key()
            if key not in frames:
                frames[key] = (f"frame-{len(frames)}", c)
            c.frame = frames[key][0]
    drawings = _shared_drawings([c for v in views for c in v["charts"]])
    details = _identical_details(views)
    summary = doc["summary"]
    findings = summary.get("findings") or {"total": 0, "by_severity": {}, "by_rule": []}
    by_severity = {s: findings["by_severity"].get(s, 0) for s in SEVERITIES}
    total = sum(by_severity.values())
    bar, x = [], 0.0
    for sev in SEVERITIES:  # the summary bar: one segment per severity, 600 px wide
        n = by_severity[sev]
        if n:
            width = 600 * n / total
            bar.append({"severity": sev, "x": round(x, 1), "width": round(width, 1), "n": n})
            x += width
    by_rule = sorted(findings.get("by_rule", []),
                     key=lambda r: (SEVERITIES.index(r["severity"]), -r["count"], r["rule"]))
    devices = [d for d in doc.get("devices", []) if d]
    return {
        "doc": doc, "version": doc["tool"]["version"], "summary": summary,
        "read": text_mod.what_was_read(doc),
        "by_severity": by_severity, "total_findings": total, "bar": bar, "by_rule": by_rule,
        "rules": _rule_docs([r["rule"] for r in by_rule]),
        "kernels": views, "details": details, "open": len(views) <= OPEN_DETAILS_UP_TO,
        "frames": list(frames.values()), "drawings": drawings,
        "devices": devices, "vendors": sorted({k["vendor"] for k in doc["kernels"]}),
        "input_findings": doc.get("findings", []), "errors": doc.get("errors", []),
        "artifacts": doc.get("artifacts", []), "baseline": doc.get("baseline"),
        "settings": doc.get("settings") or {},
        "launches": launch_views(doc),
        "js": _asset("report.js"), "long_name": LONG_NAME, "owner_colors": OWNER_COLOR,
        **chart_style(),
    }


def _identical_details(views: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The kernels whose details would read the same but for the file — one kernel built
    into several containers or libraries — share one section: the first one's, listing the
    others' files (each with its own anchor). Sets ``also`` on the views shown."""
    shown: dict[tuple, dict[str, Any]] = {}
    for v in views:
        k = v["k"]
        key = (v["title"], v["where"], k["name"], tuple(v["resources"]), v["occupancy_line"],
               v["advice_line"], tuple(v["steps"]), tuple(k["notes"]), v["chart_note"],
               tuple((f["rule"], f["severity"], f["message"], f.get("advice"))
                     for f in k["findings"]),
               tuple((c.key, c.frame, c.body, c.caption) for c in v["charts"]))
        first = shown.setdefault(key, v)
        first.setdefault("also", [])
        if first is not v:
            first["also"].append(v)
    return list(shown.values())


def _shared_drawings(charts: list[charts_mod.Chart]) -> list[tuple[str, Markup]]:
    """Identical chart drawings (curve, marks, guides: kernels of one resource profile on one
    device) drawn once as ``<g id>`` and ``<use>``d by each chart (``Chart.body``): the
    page of a library of thousands of kernels holds each distinct chart once."""
    macro = environment().get_template("chart.svg.j2").make_module().drawing
    style = chart_style()
    ids: dict[str, str] = {}
    for c in charts:
        drawing = str(macro(c, style["geometry"], style["colors"]))
        c.body = ids.setdefault(drawing, f"c-{len(ids)}")
    return [(i, Markup(d)) for d, i in ids.items()]


def chart_style() -> dict[str, Any]:
    """What the chart macros and the stylesheet need (shared with other pages)."""
    return {
        "css": _asset("report.css"),
        "geometry": {"width": charts_mod.WIDTH, "height": charts_mod.HEIGHT,
                     "left": charts_mod.LEFT, "right": charts_mod.RIGHT,
                     "top": charts_mod.TOP, "bottom": charts_mod.BOTTOM},
        "colors": {"curve": charts_mod.CURVE, "current": charts_mod.CURRENT,
                   "gain": charts_mod.GAIN, "drop": charts_mod.DROP,
                   "guide": charts_mod.GUIDE, "shade": charts_mod.SHADE,
                   "limiter": charts_mod.LIMITER_TITLE},
    }


def render(doc: dict[str, Any], device_db=None, **options: Any) -> str:
    """The report as one HTML page. ``device_db``: the database the run used (defaults to
    the shipped one; charts are left out for kernels whose numbers it does not reproduce)."""
    return environment().get_template("report.html.j2").render(context(doc, device_db))
