"""``occlint validate --format html``: one self-contained page for a validation result.

A view of the same result the JSON output holds, drawn with the report's charting
(``reporters.charts``: Chart objects, the SVG macros, the stylesheet): measured time vs
block size, measured time vs grid size (grid-stride kernels), static vs driver occupancy.
"""

from __future__ import annotations

import math
from typing import Any

from occlint.reporters import charts as c
from occlint.reporters import html

LABELS = {"fixed_128": "fixed 128", "fixed_256": "fixed 256",
          "max_potential": "max potential (driver)"}


def _ms_ticks(lo: float, hi: float, py) -> list[tuple[int, str]]:
    span = hi - lo
    step = 10 ** math.floor(math.log10(span / 4)) if span > 0 else 1.0
    for m in (1, 2, 5, 10):
        if span / (step * m) <= 4:
            step *= m
            break
    first = math.ceil(lo / step) * step
    digits = max(0, -math.floor(math.log10(step)))
    ticks, v = [], first
    while v <= hi + 1e-12:
        ticks.append((py(v), f"{v:.{digits}f}"))
        v += step
    return ticks


def _range(values: list[float]) -> tuple[float, float]:
    lo, hi = min(values), max(values)
    pad = (hi - lo) * 0.08 or hi * 0.05 or 1.0
    return max(lo - pad, 0.0), hi + pad


def block_chart(r: dict[str, Any]) -> c.Chart | None:
    sweep = r["block_sweep"]
    if len(sweep) < 2:
        return None
    xs = [m["block"] for m in sweep]
    lo_ms, hi_ms = _range([m["ms"] for m in sweep])
    px = c._scale(min(xs), max(xs), c.LEFT, c.RIGHT)
    py = c._scale(lo_ms, hi_ms, c.BOTTOM, c.TOP)
    path = c._poly_path([(m["block"], m["ms"]) for m in sweep], px, py)
    by_block = {m["block"]: m for m in sweep}
    best, rec = r["best"], r["recommended"]
    markers = []
    if best["block"] in by_block:
        m = by_block[best["block"]]
        markers.append(c.Marker("best", px(m["block"]), py(m["ms"]),
                                f"fastest: block {best['block']}, {best['ms']:.4f} ms"))
    if rec["block"] in by_block:
        m = by_block[rec["block"]]
        markers.append(c.Marker("current", px(m["block"]), py(m["ms"]),
                                f"occlint: block {rec['block']}, {100 * rec['ratio']:.1f}% "
                                "of the best"))
    guides = [c.Guide("capacity", px(b["block"]), f"{LABELS.get(k, k)}: block {b['block']}")
              for k, b in r["baselines"].items() if b["block"] in by_block]
    caption = (f"Measured kernel time (median) at each block size"
               f"{' with the recommended grid' if r['mode'] == 'grid-stride' else ''}; "
               f"occlint recommends {rec['block']} ({100 * rec['ratio']:.1f}% of the best, "
               f"block {best['block']}).")
    return c.Chart(key="measured-block", title="Measured time vs block size",
                   x_label="threads per block", y_label="ms (median)", limiter=False,
                   path=path, caption=caption,
                   x_ticks=c._x_ticks(min(xs), max(xs), px),
                   y_ticks=_ms_ticks(lo_ms, hi_ms, py), markers=markers, guides=guides,
                   stroke_width=1.5)


def grid_chart(r: dict[str, Any]) -> c.Chart | None:
    g = r.get("grid_sweep")
    if not g or len(g["points"]) < 2:
        return None
    points = sorted(g["points"], key=lambda p: p["grid"])
    lo, hi = points[0]["grid"], points[-1]["grid"]
    lo_ms, hi_ms = _range([p["ms"] for p in points])
    px = c._log_scale(lo, hi, c.LEFT, c.RIGHT)
    py = c._scale(lo_ms, hi_ms, c.BOTTOM, c.TOP)
    path = c._poly_path([(p["grid"], p["ms"]) for p in points], px, py)
    markers, guides = [], []
    rec = g.get("recommended_grid")
    if g.get("recommended_ms") is not None:
        markers.append(c.Marker("current", px(rec), py(g["recommended_ms"]),
                                f"occlint's grid {rec:,}: {g['recommended_ms']:.4f} ms"))
    if g.get("saturation_grid"):
        guides.append(c.Guide("recommended", px(g["saturation_grid"]),
                              f"plateau from grid {g['saturation_grid']:,} (within "
                              f"{100 * g['tolerance']:g}% of the fastest)"))
    ticks, decade = [], 10 ** math.floor(math.log10(lo))
    while decade <= hi:
        for m in (1, 2, 5):
            if lo <= decade * m <= hi:
                ticks.append((px(decade * m), c._fmt_count(decade * m)))
        decade *= 10
    worst = max(g["jumps"], key=lambda j: j["increase"], default=None)
    jump = (f" The largest jump: grid {worst['grid']:,} → {worst['grid'] + 1:,} "
            f"(+{100 * worst['increase']:.1f}%)." if worst and worst["increase"] > 0 else "")
    plateau = (f" Time saturates from {g['saturation_grid']:,} blocks; occlint's grid "
               f"{rec:,} is {'on' if g['recommended_on_plateau'] else 'not on'} the plateau."
               if g.get("saturation_grid") else "")
    return c.Chart(key="measured-grid", title=f"Measured time vs grid (block {g['block']})",
                   x_label="blocks per grid (log scale)", y_label="ms (median)",
                   limiter=False, path=path,
                   caption=f"Teeth after multiples of the {g['units']} units.{jump}{plateau}",
                   x_ticks=ticks, y_ticks=_ms_ticks(lo_ms, hi_ms, py), markers=markers,
                   guides=guides, stroke_width=1.25)


def context(r: dict[str, Any]) -> dict[str, Any]:
    measured = "best" in r  # not with --static-only
    charts = [x for x in (block_chart(r), grid_chart(r)) if x is not None] if measured else []
    frames = []
    for i, chart in enumerate(charts):
        chart.frame = f"frame-{i}"
        frames.append((chart.frame, chart))
    compared = [("occlint", r["recommended"])] + [
        (LABELS.get(k, k), v) for k, v in r["baselines"].items()] if measured else []
    return {"r": r, "charts": charts, "frames": frames, "compared": compared,
            "measured": measured,
            "rounds": r["final"][0]["samples"] if r.get("final") else 0,
            "agree": sum(row["equal"] for row in r["occupancy"]),
            **html.chart_style()}


def page(r: dict[str, Any]) -> str:
    return html.environment().get_template("validate.html.j2").render(context(r))
