"""Terminal output: findings in compiler style, then a short summary per kernel."""

from __future__ import annotations

from typing import Any

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


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%" if x in (0, 1) else f"{100 * x:.1f}%"


BLOCK_SOURCES = {
    "launch": "launch configuration",
    "reqd_workgroup_size": "required workgroup size",
    "max_flat_workgroup_size": "max flat workgroup size",
    "reqntid": "required block size",
    "launch_bounds": "launch bound",
    "max_potential_block_size": "best block size; pass --block",
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
        return k["message"] or k["status"]
    source = BLOCK_SOURCES.get(o["block_source"], o["block_source"])
    block = f"block {o['block_size']} ({source})"
    if o["blocks_per_cu"] == 0:
        return f"{block}: cannot launch — {o.get('reason') or ', '.join(o['limiters'])}"
    if k["vendor"] == "amd":
        core = (f"{o['waves_per_simd']}/{o['max_waves_per_simd']} waves per SIMD "
                f"({_pct(o['occupancy'])}), {o['blocks_per_cu']} blocks per {o['unit']}")
    else:
        core = (f"{o['warps_per_sm']}/{o['max_warps_per_sm']} warps per SM "
                f"({_pct(o['occupancy'])}), {o['blocks_per_sm']} blocks per SM")
    return f"{block}: {core}; limited by {', '.join(o['limiters'])}"


def render(doc: dict[str, Any], color: bool = False) -> str:
    lines: list[str] = []
    for k in doc["kernels"]:
        for f in k["findings"]:
            fg, bold = SEVERITY_STYLE.get(f["severity"], (None, False))
            lines.append(f"{k['file']}: {k['demangled']}: "
                         f"{_style(f['rule'], color, bold=True)} "
                         f"{_style(f['severity'], color, fg, bold)}: {f['message']}")
    if lines:
        lines.append("")
    current = None
    for k in doc["kernels"]:
        if k["file"] != current:
            current = k["file"]
            lines.append(_style(current, color, bold=True))
        where = k["target_id"] + (f" on {k['device']}" if k["device"] else "")
        entry = f" [{k['entry']}]" if k["entry"] else ""
        lines.append(f"  {_style(k['demangled'], color, bold=True)}  ({where}){entry}")
        lines.append(f"    {resource_line(k)}")
        lines.append(f"    {occupancy_line(k)}")
    for a in doc["artifacts"]:
        entry = f"[{a['entry']}]" if a["entry"] else ""
        lines.append(f"{a['file']}{entry}: {a['kind']}: {a['message']}")
    s = doc["summary"]
    if s["reports"] or s["errors"]:
        lines.append("")
        lines.append(f"{s['kernels']} kernel{'s' if s['kernels'] != 1 else ''} in "
                     f"{s['inputs']} input{'s' if s['inputs'] != 1 else ''}"
                     + (f", {s['errors']} error{'s' if s['errors'] != 1 else ''}"
                        if s["errors"] else ""))
    return "\n".join(lines) + ("\n" if lines else "")
