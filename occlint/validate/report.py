"""Render a validation result (text, or an HTML page with the measured curves)."""

from __future__ import annotations

from typing import Any


def _cfg(m: dict[str, Any]) -> str:
    return f"block {m['block']:>4}, grid {m['grid']:>7}: {m['ms']:9.4f} ms"


def text(r: dict[str, Any]) -> str:
    d = r["device"]
    lines = [f"{r['demangled']} ({r['arch']}) on {d['name']} ({d['arch']}, {d['units']} units, "
             f"{d['driver']})"]
    attrs = " · ".join(f"{a['field']} {a['static']}{' = ' if a['equal'] else ' != '}"
                       f"{a['driver']}" for a in r["attributes"])
    lines.append(f"  resources      {attrs}  (occlint vs driver)")
    rows = r["occupancy"]
    agree = sum(row["equal"] for row in rows)
    lines.append(f"  occupancy      static = driver for {agree}/{len(rows)} block sizes"
                 + ("" if agree == len(rows) else "  MISMATCH: " + ", ".join(
                     f"{x['block']}: {x['static']} vs {x['driver']}"
                     for x in rows if not x["equal"])))
    bad_db = [c for c in r["database_check"] if not c["equal"]]
    if r["database_check"]:
        lines.append("  device db      " + ("matches the driver" if not bad_db else "differs: "
                     + ", ".join(f"{c['field']} {c['database']} vs {c['driver']}"
                                 for c in bad_db)))
    if r["mode"] == "static only":
        return "\n".join(lines) + "\n"
    if r["mode"] == "fix":
        lines.append(f"  as it is       {_cfg(r['as_is'])}")
        lines.append(f"  fix            {_cfg(r['fix'])}  (saves {100 * r['saving']:.1f}%, "
                     f"{r['fix']['samples']} interleaved rounds)")
        return "\n".join(lines) + "\n"
    lines.append(f"  mode           {r['mode']}"
                 + (f", N = {r['problem_size']:,}" if r["problem_size"] else ""))
    lines.append(f"  best measured  {_cfg(r['best'])}")
    rec = r["recommended"]
    lines.append(f"  occlint        {_cfg(rec)}  ({100 * rec['ratio']:.1f}% of best)")
    names = {"fixed_128": "fixed 128", "fixed_256": "fixed 256",
             "max_potential": "max potential"}
    for key, m in r["baselines"].items():
        lines.append(f"  {names.get(key, key):<14} {_cfg(m)}  ({100 * m['ratio']:.1f}% of best)")
    if r.get("grid_sweep"):
        points = r["grid_sweep"]["points"]
        fastest = min(points, key=lambda p: p["ms"])
        g = r["grid_sweep"]
        lines.append(f"  grid sweep     block {g['block']}: {len(points)} grids, "
                     f"fastest {fastest['grid']} ({fastest['ms']:.4f} ms)")
        worst = max(g.get("jumps") or [], key=lambda j: j["increase"], default=None)
        if worst and worst["increase"] > 0:
            lines.append(f"  tail effect    largest jump {worst['grid']} -> {worst['grid'] + 1} "
                         f"blocks: +{100 * worst['increase']:.1f}%")
        if g.get("saturation_grid"):
            lines.append(f"  saturation     within {100 * g['tolerance']:g}% of the fastest from "
                         f"{g['saturation_grid']} blocks; occlint's grid {g['recommended_grid']}"
                         f" is {'on' if g['recommended_on_plateau'] else 'NOT on'} the plateau")
    if r["zero_inputs"]:
        lines.append("  note           some inputs are zeros: timings may not reflect real data")
    t = r["timing"]
    rounds = r["final"][0]["samples"] if r.get("final") else 0
    lines.append(f"  timing         median of >= {t['repeats']} launches (more for short "
                 f"kernels) after {t['warmup']} warm-up, fresh data each launch; ratios from "
                 f"{rounds} interleaved rounds of the final comparison ({t['seconds']} s)")
    return "\n".join(lines) + "\n"


def render(r: dict[str, Any], fmt: str) -> str:
    if fmt == "html":
        from occlint.validate.page import page

        return page(r)
    return text(r)
