"""Summarise a GPU validation run (benchmarks/gpu/run.py) as Markdown.

    python benchmarks/gpu/summarize.py RESULTS.json[.gz] [--repeat REPEAT.json[.gz]]
        [--update docs/validation.md]

Prints the per-kernel table (resources, static vs driver occupancy, best measured launch,
occlint's recommendation and the baselines as fractions of the best, geometric means), the
targets of issue 7 and the gamma grid sweep. With ``--update`` the text replaces what lies
between the ``<!-- results:begin -->`` and ``<!-- results:end -->`` markers of that file.
"""

from __future__ import annotations

import argparse
import json
import math
import re
from pathlib import Path
from typing import Any

BASELINES = (("fixed_128", "fixed 128"), ("fixed_256", "fixed 256"),
             ("max_potential", "max potential"))


def load(path: Path) -> dict[str, Any]:
    """A results document, plain or gzip-compressed JSON."""
    data = path.read_bytes()
    if path.suffix == ".gz":
        import gzip

        data = gzip.decompress(data)
    return json.loads(data)


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _launch(m: dict[str, Any]) -> str:
    return f"{m['block']} × {m['grid']:,}"


def kernel_table(results: list[dict[str, Any]]) -> list[str]:
    lines = ["| Kernel | Regs | Shared (B) | Occupancy static = driver | Attributes | "
             "Best measured (block × grid) | Best (ms) | occlint (block × grid) | occlint | "
             "Fixed 128 | Fixed 256 | Max potential |",
             "|---|---:|---:|---|---|---|---:|---|---:|---:|---:|---:|"]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['name']} | error: {r['error']} |" + " |" * 10)
            continue
        res, occ = r["resources"], r["occupancy"]
        agree = sum(o["equal"] for o in occ)
        attrs = "equal" if r["attributes_agree"] else "DIFFER"
        base = " | ".join(pct(r["baselines"][k]["ratio"]) if k in r["baselines"] else "—"
                          for k, _ in BASELINES)
        mp = r["baselines"].get("max_potential")
        mp_block = f" ({mp['block']})" if mp else ""
        lines.append(
            f"| {r['name']} | {res['registers']} | {res['shared_bytes']:,} | "
            f"{agree}/{len(occ)} | {attrs} | {_launch(r['best'])} | {r['best']['ms']:.4f} | "
            f"{_launch(r['recommended'])} | **{pct(r['recommended']['ratio'])}** | "
            f"{base}{mp_block} |")
    ok = [r for r in results if "error" not in r]
    means = [geomean([r["recommended"]["ratio"] for r in ok])]
    means += [geomean([r["baselines"][k]["ratio"] for r in ok if k in r["baselines"]])
              for k, _ in BASELINES]
    lines.append("| **geometric mean** | | | | | | | | **" + pct(means[0]) + "** | "
                 + " | ".join(pct(m) for m in means[1:]) + " |")
    return lines


def targets(results: list[dict[str, Any]]) -> list[str]:
    ok = [r for r in results if "error" not in r]
    pairs = sum(len(r["occupancy"]) for r in ok)
    agree = sum(o["equal"] for r in ok for o in r["occupancy"])
    attrs = sum(len(r["attributes"]) for r in ok)
    attrs_ok = sum(a["equal"] for r in ok for a in r["attributes"])
    db = [c for r in ok for c in r["database_check"]]
    rec = [r["recommended"]["ratio"] for r in ok]
    worst = min(ok, key=lambda r: r["recommended"]["ratio"])
    g = geomean(rec)
    base = {label: geomean([r["baselines"][k]["ratio"] for r in ok if k in r["baselines"]])
            for k, label in BASELINES}
    gamma = next((r for r in ok if r.get("grid_sweep")), None)
    rows = [
        ("Static occupancy = driver, every (kernel, block size)", f"{agree}/{pairs}",
         agree == pairs),
        ("Registers, shared, local memory, max threads = driver attributes",
         f"{attrs_ok}/{attrs}", attrs_ok == attrs),
        ("Device database limits = driver attributes", f"{sum(c['equal'] for c in db)}/"
         f"{len(db)}", all(c["equal"] for c in db)),
        ("occlint's launch ≥ 97 % of the best (geometric mean)", pct(g), g >= 0.97),
        ("No kernel below 90 %", f"worst {pct(worst['recommended']['ratio'])} "
         f"({worst['name']})", worst["recommended"]["ratio"] >= 0.90),
    ]
    rows += [(f"Beats {label} on the mean", pct(v), g > v) for label, v in base.items()]
    if gamma:
        s = gamma["grid_sweep"]
        rows.append(("Gamma: recommended grid on the saturated plateau",
                     f"grid {s['recommended_grid']:,}: {s['recommended_ms']:.4f} ms; plateau "
                     f"from {s['saturation_grid']:,}", s["recommended_on_plateau"]))
    lines = ["| Target | Measured | Met |", "|---|---|---|"]
    lines += [f"| {name} | {value} | {'yes' if met else '**no**'} |" for name, value, met in rows]
    return lines


def grid_section(results: list[dict[str, Any]]) -> list[str]:
    r = next((r for r in results if r.get("grid_sweep")), None)
    if r is None:
        return []
    s = r["grid_sweep"]
    lines = [f"Grid sweep of **{r['name']}** at block {s['block']} on {s['units']} SMs "
             f"({len(s['points'])} grids). Each multiple of the SM count against one block "
             "more, and the estimate of `LCH101` (the busiest SM's extra blocks):", "",
             "| Grid | Blocks/SM | Time (ms) | Grid + 1 (ms) | Measured jump | LCH101 estimate |",
             "|---:|---:|---:|---:|---:|---:|"]
    for j in s["jumps"]:
        g, u = j["grid"], s["units"]
        estimate = (g // u + 1) * u / (g + 1) - 1
        lines.append(f"| {g:,} | {g // u} | {j['ms']:.3f} | {j['next_ms']:.3f} | "
                     f"{100 * j['increase']:+.1f}% | {100 * estimate:.1f}% |")
    lines += ["", f"Fastest grid-sweep time {s['fastest_ms']:.3f} ms; the time stays within "
              f"{100 * s['tolerance']:g}% of it from grid **{s['saturation_grid']:,}** on "
              f"(the plateau). occlint's recommended grid, {s['recommended_grid']:,} "
              f"(10× the wave slots at 256 threads), measured {s['recommended_ms']:.3f} ms: "
              f"{'on' if s['recommended_on_plateau'] else 'not on'} the plateau."]
    return lines


def repeat_section(first: list[dict[str, Any]], second: list[dict[str, Any]]) -> list[str]:
    a = {r["name"]: r for r in first if "error" not in r}
    b = {r["name"]: r for r in second if "error" not in r}
    names = [n for n in a if n in b]
    diffs = [(abs(a[n]["recommended"]["ratio"] - b[n]["recommended"]["ratio"]), n)
             for n in names]
    worst = max(diffs)
    rec = [b[n]["recommended"]["ratio"] for n in names]
    same = sum(a[n]["recommended"]["block"] == b[n]["recommended"]["block"] for n in names)
    return [f"An independent second run of the whole suite: occlint's geometric mean "
            f"{pct(geomean(rec))}, worst {pct(min(rec))}; the same recommended block for "
            f"{same}/{len(names)} kernels; the largest change of a kernel's occlint ratio "
            f"between the runs {100 * worst[0]:.1f} points ({worst[1]})."]


def summary(doc: dict[str, Any], repeat: dict[str, Any] | None = None) -> str:
    results = doc["results"]
    dev = doc.get("device") or {}
    env = doc.get("environment") or {}
    lines = [f"Run of {doc['date']} on an **{dev.get('name', '?')}** ({dev.get('arch', '?')}, "
             f"{dev.get('units', '?')} SMs), {dev.get('driver', '')}"
             + (f"; `nvidia-smi`: {env['nvidia_smi']}" if env.get("nvidia_smi") else "")
             + (f"; {env['python_cuda']}" if env.get("python_cuda") else "")
             + f"; occlint {doc['occlint']}; {doc.get('seconds', '?')} s for the suite.", "",
             "### Targets", "", *targets(results), "", "### Per kernel", "",
             "Times are medians of device-event timings; every percentage is the best "
             "measured time over the configuration's time, both from the final interleaved "
             "round. Shared memory is the static allocation per block.", "",
             *kernel_table(results)]
    if repeat:
        lines += ["", *repeat_section(results, repeat["results"])]
    grid = grid_section(results)
    if grid:
        lines += ["", "### Grid sweep: tail effect and saturation", "", *grid]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--repeat", type=Path)
    parser.add_argument("--update", type=Path)
    args = parser.parse_args()
    doc = load(args.results)
    repeat = load(args.repeat) if args.repeat else None
    text = summary(doc, repeat)
    if not args.update:
        print(text, end="")
        return
    page = args.update.read_text()
    new, n = re.subn(r"(<!-- results:begin -->\n).*?(<!-- results:end -->)",
                     lambda m: m.group(1) + text + m.group(2), page, flags=re.S)
    if n != 1:
        raise SystemExit(f"{args.update}: no results markers")
    args.update.write_text(new)


if __name__ == "__main__":
    main()
