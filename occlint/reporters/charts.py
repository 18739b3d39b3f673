"""Chart data and SVG geometry for the HTML report (occupancy calculator graphs).

Every curve comes from the occupancy engines, never from a formula written here: the
kernel's analysis is rebuilt from the report document (``analysis.analyse_kernel`` on the
document's resources, device and block), checked against the document's own numbers, and
then the engine is evaluated while one input varies:

* occupancy vs block size (``advice`` block sweeps, memoised),
* occupancy vs VGPRs per wave / registers per thread,
* occupancy vs LDS per workgroup / shared memory per block,
* occupancy vs SGPRs (GFX9 only, where SGPRs limit waves),
* predicted relative time vs grid size, when a grid or problem size is known.

Occupancy is monotone in every resource, so a resource curve is found by bisecting for the
points where the engine's answer changes (to half a pixel), and the marked cliffs exactly
(the search ``occupancy.steps`` does for the next step). Curves and engine answers are
memoised on the kernel's resource profile with the varied resource zeroed, because
libraries hold thousands of kernels with the same few profiles.

The grid chart uses a simple model, documented in docs/html-report.md: for a fixed amount
of work split into ``g`` equal blocks over ``U`` units holding ``C`` blocks at once,

    relative time(g) = max(C / g, ceil(g / U) * U / g)   for g < recommended grid
                     = 1                                  from the recommended grid on

(``C / g``: fewer blocks than the device holds leave slots idle; ``ceil(g / U) * U / g``:
the busiest unit runs ``ceil(g / U)`` blocks, the tail effect of ``advice.tail``; past the
oversubscription target, a grid-stride kernel's time is taken as flat).

The module returns plain :class:`Chart` objects (pixel geometry, labels, captions); the
template ``chart.svg.j2`` draws them with SVG presentation attributes only.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from occlint.analysis.kernels import KernelReport, LaunchConfig, analyse_kernel
from occlint.devices.models import AmdArch, NvArch
from occlint.judgement import advice as advice_mod
from occlint.model.kernel import AmdResources, Kernel, NvResources
from occlint.occupancy import amd, nvidia, steps

# Geometry of one chart (pixels): the SVG box and the plot area inside it.
# Room on the left for the y ticks and the y-axis title, on the right for half of the last
# x tick's label ("128KiB"), below for the x ticks and the x-axis title.
WIDTH, HEIGHT = 360, 186
LEFT, RIGHT, TOP, BOTTOM = 48, 330, 22, 150

# Colours (presentation attributes; they survive a CSP that blocks all CSS).
CURVE = "#1c7ed6"
CURRENT = "#e8590c"
GAIN = "#2f9e44"
DROP = "#c92a2a"
GUIDE = "#868e96"
SHADE = "#fff8ef"
LIMITER_TITLE = "#c92a2a"


class ChartsUnavailable(Exception):
    """The document's kernel cannot be re-analysed (why: the message)."""


@dataclass(frozen=True)
class Marker:
    kind: str  # current | gain | drop | best | chosen | recommended
    x: int
    y: int
    label: str  # tooltip


@dataclass(frozen=True)
class Guide:
    kind: str  # gain | drop | recommended | capacity
    x: int
    label: str


@dataclass
class Chart:
    key: str  # block | vgpr | agpr | sgpr | lds | registers | shared | grid
    title: str
    x_label: str
    limiter: bool  # the resource limits the kernel now (title drawn red)
    path: str  # the curve, as SVG path data in pixel coordinates
    caption: str  # the chart in one or two sentences (also the accessible description)
    y_label: str = ""  # waves/SIMD, warps/SM, time vs best
    x_ticks: list[tuple[int, str]] = field(default_factory=list)
    y_ticks: list[tuple[int, str]] = field(default_factory=list)
    markers: list[Marker] = field(default_factory=list)
    guides: list[Guide] = field(default_factory=list)
    shade: tuple[int, int] | None = None  # x range drawn shaded (grid below the target)
    shade_label: str = ""
    stroke_width: float = 2
    frame: str = ""  # id of the shared frame (axes, ticks, titles) the template draws once
    body: str = ""  # id of the shared drawing (the page draws identical charts once)
    # The data behind the marks, in the chart's own units: (x, y) or None.
    current: tuple[float, float] | None = None
    gain: tuple[int, int] | None = None  # next step up: largest smaller x with a higher y
    drop: tuple[int, int] | None = None  # next cliff: smallest larger x with a lower y
    best: tuple[int, int] | None = None  # recommended block / grid

    def frame_key(self) -> tuple:
        """What the chart's frame is drawn from: equal keys share one ``<use>``d frame."""
        return (self.title, self.limiter, self.x_label, self.y_label, tuple(self.x_ticks),
                tuple(self.y_ticks))


# --- number formatting ---------------------------------------------------------------------

def fmt_bytes(n: int) -> str:
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024} KiB"
    if n >= 10240:
        return f"{n / 1024:.1f} KiB"
    return f"{n} B"


def _fmt_count(n: float) -> str:
    if n >= 1000 and n % 1000 == 0:
        return f"{int(n) // 1000}k"
    return f"{n:g}"


# --- axes ----------------------------------------------------------------------------------

_NICE = (1, 2, 4, 5, 8, 10, 16, 20, 25, 32, 40, 50, 64, 100, 128, 200, 256, 500, 512)


def nice_step(span: float, max_ticks: int = 5) -> int:
    """A readable tick step (1-2-5 and powers of two) giving at most ``max_ticks`` intervals."""
    scale = 1
    while True:
        for base in _NICE:
            step = base * scale
            if span / step <= max_ticks:
                return step
        scale *= 1000 if scale == 1 else 1024


def _scale(lo: float, hi: float, a: int, b: int) -> Callable[[float], int]:
    span = (hi - lo) or 1

    def to_px(v: float) -> int:
        return round(a + (v - lo) / span * (b - a))

    return to_px


def _log_scale(lo: float, hi: float, a: int, b: int) -> Callable[[float], int]:
    llo, lhi = math.log10(lo), math.log10(hi)
    span = (lhi - llo) or 1

    def to_px(v: float) -> int:
        return round(a + (math.log10(max(v, lo)) - llo) / span * (b - a))

    return to_px


def _y_ticks(ymax: int, py: Callable[[float], int]) -> list[tuple[int, str]]:
    step = nice_step(ymax, 4)
    ticks = [(py(v), str(v)) for v in range(0, ymax + 1, step)]
    if ymax % step:
        ticks.append((py(ymax), str(ymax)))
    return ticks


def _byte_step(span: int, max_ticks: int = 5) -> int:
    step = 256
    while span / step > max_ticks:
        step *= 2
    return step


def _x_ticks(lo: int, hi: int, px: Callable[[float], int], as_bytes: bool = False
             ) -> list[tuple[int, str]]:
    step = _byte_step(hi - lo) if as_bytes else nice_step(hi - lo)
    first = -(-lo // step) * step
    label = (lambda v: "0" if v == 0 else fmt_bytes(v).replace(" ", "")) if as_bytes else str
    return [(px(v), label(v)) for v in range(first, hi + 1, step)]


def _step_path(starts: list[tuple[int, int]], hi: int, px, py) -> str:
    """SVG path of a step function given by (first x, value) of each level."""
    x0, y0 = starts[0]
    parts = [f"M{px(x0)} {py(y0)}"]
    for x, y in starts[1:]:
        parts.append(f"H{px(x)}V{py(y)}")
    parts.append(f"H{px(hi)}")
    return "".join(parts)


def _poly_path(points: list[tuple[float, float]], px, py) -> str:
    out, last = [], None
    for x, y in points:
        p = (px(x), py(y))
        if p == last:
            continue
        out.append(f"{'M' if last is None else 'L'}{p[0]} {p[1]}")
        last = p
    return "".join(out)


# --- step curves from a monotone engine answer ----------------------------------------------

def step_levels(f: Callable[[int], int], lo: int, hi: int, tol: int = 1
                ) -> tuple[tuple[int, int], ...]:
    """Levels of a monotone integer function on [lo, hi]: ((first x, value), ...).

    A flat stretch is recognised from equal ends (``f`` is monotone); each change is
    located to within ``tol`` (1: exactly; the charts use half a pixel). ``f`` is called
    about ``levels x log2((hi - lo) / tol)`` times."""
    first = (lo, f(lo))
    found: list[tuple[int, int]] = [first]

    def split(a: int, fa: int, b: int, fb: int) -> None:
        if fa == fb:
            return
        if b - a <= tol:
            found.append((b, fb))
            return
        m = (a + b) // 2
        fm = f(m)
        split(a, fa, m, fm)
        split(m, fm, b, fb)

    if hi > lo:
        split(lo, first[1], hi, f(hi))
    return tuple(found)


def cliffs(f: Callable[[int], int], current: int, lo: int, hi: int
           ) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
    """(gain, drop) around ``current`` for a monotone non-increasing ``f``, exactly: the
    largest x below with a higher value (the next step, as occupancy.steps searches it) and
    the smallest x above with a lower value (the next cliff), each as (x, f(x)), or None."""
    now = f(current)
    gain = drop = None
    if current > lo and f(lo) > now:
        a, b = lo, current - 1  # f(a) > now; find the largest such x
        while a < b:
            m = (a + b + 1) // 2
            if f(m) > now:
                a = m
            else:
                b = m - 1
        gain = (a, f(a))
    if current < hi and f(hi) < now:
        a, b = current + 1, hi  # f(b) < now; find the smallest such x
        while a < b:
            m = (a + b) // 2
            if f(m) < now:
                b = m
            else:
                a = m + 1
        drop = (a, f(a))
    return gain, drop


# --- rebuilding the analysis from the document ---------------------------------------------

def _resources(vendor: str, record: dict[str, Any]) -> AmdResources | NvResources:
    cls = AmdResources if vendor == "amd" else NvResources
    names = {f.name for f in dataclasses.fields(cls)}
    values = {k: tuple(v) if isinstance(v, list) else v for k, v in record.items() if k in names}
    return cls(**values)


def rebuild(k: dict[str, Any], db) -> KernelReport:
    """The KernelReport behind a document kernel, recomputed by the analysis itself."""
    occ = k.get("occupancy")
    if k.get("status") != "ok" or not occ:
        raise ChartsUnavailable(k.get("message") or "no occupancy")
    try:
        kernel = Kernel(vendor=k["vendor"], file=k["file"], entry=k["entry"], name=k["name"],
                        arch=k["arch"], target_id=k["target_id"],
                        wavefront_size=k["wavefront_size"],
                        resources=_resources(k["vendor"], k["resources"]))
        device = db.get(k["device"]) if k.get("device") else None
    except Exception as exc:  # any gap in the document means: no charts
        raise ChartsUnavailable(f"cannot rebuild the analysis ({exc})") from None
    launch = LaunchConfig(block=occ["block_size"], dynamic_lds=occ["dynamic_shared_bytes"] or 0)
    report = analyse_kernel(kernel, device, launch, db)
    got = report.occupancy
    if got is None:
        raise ChartsUnavailable(report.message or report.status)
    same = (got.blocks_per_cu == occ["blocks_per_cu"]) if isinstance(got, amd.AmdOccupancy) \
        else (got.blocks_per_sm == occ["blocks_per_sm"])
    if not same or round(got.occupancy, 6) != occ["occupancy"]:
        raise ChartsUnavailable("the device database differs from the one the report was "
                                "made with (a --device-file?)")
    return report


# --- memoised engine curves ----------------------------------------------------------------

@lru_cache(maxsize=65536)
def _amd_waves(arch: AmdArch, model: amd.AmdKernel, block: int, wgp: bool | None,
               max_block: int) -> int:
    try:
        return amd.occupancy(arch, model, block, wgp, max_block_size=max_block).waves_per_simd
    except ValueError:
        return 0


def _tol(hi: int) -> int:
    return max(1, hi // (2 * (RIGHT - LEFT)))  # half a pixel


_AMD_FIELDS = tuple(f.name for f in dataclasses.fields(amd.AmdKernel))


def _amd_curve(arch: AmdArch, base: amd.AmdKernel, name: str, block: int, wgp: bool | None,
               max_block: int) -> Callable[[int], int]:
    values = [getattr(base, f) for f in _AMD_FIELDS]
    index = _AMD_FIELDS.index(name)

    def waves(v: int) -> int:  # dataclasses.replace, minus its per-call introspection
        values[index] = v
        return _amd_waves(arch, amd.AmdKernel(*values), block, wgp, max_block)

    return waves


@lru_cache(maxsize=16384)
def _amd_levels(arch: AmdArch, base: amd.AmdKernel, name: str, block: int, wgp: bool | None,
                max_block: int, hi: int) -> tuple[tuple[int, int], ...]:
    return step_levels(_amd_curve(arch, base, name, block, wgp, max_block), 0, hi, _tol(hi))


@lru_cache(maxsize=65536)
def _nv_warps(arch: NvArch, func: nvidia.NvFunction, block: int, dynamic: int) -> int:
    try:
        return nvidia.active_blocks(arch, func, block, dynamic).warps_per_sm
    except nvidia.OccupancyInputError:
        return 0


def _nv_register_curve(arch: NvArch, base: nvidia.NvFunction, block: int, dynamic: int
                       ) -> Callable[[int], int]:
    def warps(v: int) -> int:
        return _nv_warps(arch, replace(base, registers=v), block, dynamic)

    return warps


def _nv_shared_curve(arch: NvArch, base: nvidia.NvFunction, block: int, dynamic: int
                     ) -> Callable[[int], int]:
    """Warps/SM vs shared memory per block, split as occupancy.steps does (dynamic first),
    assuming the kernel opts in to the large per-block limit."""
    limit = arch.smem_per_block_optin

    def warps(total: int) -> int:
        dyn = min(dynamic, total)
        static = total - dyn
        func = replace(base, static_shared=static, max_dynamic_shared=max(limit - static, 0))
        return _nv_warps(arch, func, block, dyn)

    return warps


@lru_cache(maxsize=16384)
def _nv_levels(arch: NvArch, base: nvidia.NvFunction, what: str, block: int, dynamic: int,
               hi: int) -> tuple[tuple[int, int], ...]:
    make = _nv_register_curve if what == "registers" else _nv_shared_curve
    return step_levels(make(arch, base, block, dynamic), 0, hi, _tol(hi))


# --- resource charts -----------------------------------------------------------------------

def _resource_chart(key: str, title: str, x_label: str, f: Callable[[int], int], levels,
                    current: int, hi: int, ymax: int, metric: str, unit: str, limiter: bool,
                    as_bytes: bool = False) -> Chart:
    hi = max(hi, current)
    px = _scale(0, hi, LEFT, RIGHT)
    py = _scale(0, ymax, BOTTOM, TOP)
    now = f(current)
    show = fmt_bytes if as_bytes else str
    gain, drop = cliffs(f, current, 0, hi)
    markers, guides, sentences = [], [], []
    if gain is not None:
        gx, gy = gain
        guides.append(Guide("gain", px(gx), f"at most {show(gx)} {unit}: {gy} {metric}"))
        markers.append(Marker("gain", px(gx), py(gy), f"{show(gx)} {unit}: {gy} {metric}"))
        sentences.append(f"Cut to {show(gx)} (−{show(current - gx)}) for {gy} {metric}.")
    if drop is not None:
        dx, dy = drop
        guides.append(Guide("drop", px(dx), f"above {show(dx - 1)} {unit}: {dy} {metric}"))
        markers.append(Marker("drop", px(dx), py(dy), f"above {show(dx - 1)} {unit}: {dy} "
                                                       f"{metric}"))
        room = dx - 1 - current
        sentences.append(f"{dy} {metric} above {show(dx - 1)}"
                         + (f" ({show(room)} of headroom)." if room > 0 else "."))
    elif gain is None:
        sentences.append(f"Flat up to {show(hi)}.")
    markers.append(Marker("current", px(current), py(now),
                          f"current: {show(current)} {unit}, {now} {metric}"))
    caption = f"Now {show(current)} {unit}: {now} {metric}. " + " ".join(sentences)
    return Chart(key=key, title=title, x_label=x_label, y_label=metric, limiter=limiter,
                 path=_step_path(list(levels), hi, px, py), caption=caption.strip(),
                 x_ticks=_x_ticks(0, hi, px, as_bytes), y_ticks=_y_ticks(ymax, py),
                 markers=markers, guides=guides, current=(current, now), gain=gain,
                 drop=drop)


def _block_chart(sweep: list[tuple[int, int]], current: int, now: int, best: int | None,
                 ymax: int, metric: str, limiter: bool, note: str = "") -> Chart:
    hi = max([b for b, _ in sweep] + [current])
    px = _scale(0, hi, LEFT, RIGHT)
    py = _scale(0, ymax, BOTTOM, TOP)
    markers = []
    caption = f"Block {current}: {now} {metric}."
    value = dict(sweep).get(best) if best else None
    if best and best != current and value is not None:
        markers.append(Marker("best", px(best), py(value),
                              f"recommended: block {best}, {value} {metric}"))
        caption += f" Recommended block {best}: {value} {metric}."
    markers.append(Marker("current", px(current), py(now), f"current: block {current}, "
                                                           f"{now} {metric}"))
    return Chart(key="block", title="Occupancy vs block size", x_label="threads per block",
                 y_label=metric, limiter=limiter, path=_poly_path(sweep, px, py),
                 caption=(caption + (" " + note if note else "")).strip(),
                 x_ticks=_x_ticks(0, hi, px), y_ticks=_y_ticks(ymax, py), markers=markers,
                 current=(current, now), best=(best, value) if value is not None else None)


def amd_charts(report: KernelReport, k: dict[str, Any]) -> list[Chart]:
    arch, model, occ = report.arch, report.input_model, report.occupancy
    assert isinstance(arch, AmdArch) and isinstance(occ, amd.AmdOccupancy)
    res = report.kernel.resources
    wgp, block = res.wgp_mode, report.block_size
    max_block = res.max_block_size
    wmax, metric = arch.max_waves_per_simd, "waves/SIMD"
    limiters = set(occ.limiters) if occ.occupancy < 1 else set()
    charts = []

    top = min(max_block, arch.max_workgroup_size)
    rows = advice_mod.amd_sweep(arch, model, wgp, top)
    note = ""
    if res.reqd_workgroup_size:
        note = f"The kernel requires block {report.block_size}."
    best = (k.get("advice") or {}).get("recommended_block")
    charts.append(_block_chart([(b, w) for b, w, _ in rows], block, occ.waves_per_simd, best,
                               wmax, metric, bool(limiters & {"waves", "barriers", "threads"}),
                               note))

    separate_files = bool(arch.agprs) and not arch.unified_vgpr_file
    if separate_files and model.vgpr_alloc is None:
        name, current, label = "vgprs", model.vgprs, "VGPRs per wave (AGPRs separate)"
    else:
        name, current = "vgpr_alloc", model.allocated_vgprs(arch)
        label = "VGPRs per wave" + (" (incl. AGPRs)" if model.agprs else "")
    hi = 256 if separate_files else arch.addressable_vgprs

    def resource(key: str, title: str, x_label: str, name: str, current: int, hi: int,
                 unit: str, limiter: bool, as_bytes: bool = False) -> Chart:
        base = replace(model, **{name: 0})
        return _resource_chart(
            key, title, x_label, _amd_curve(arch, base, name, block, wgp, max_block),
            _amd_levels(arch, base, name, block, wgp, max_block, hi), current, hi, wmax,
            metric, unit, limiter, as_bytes)

    charts.append(resource("vgpr", "Occupancy vs VGPRs", label, name, current, hi, "VGPRs",
                           bool(limiters & {"vgpr", "agpr"})))
    if separate_files and model.agprs and model.vgpr_alloc is None:
        charts.append(resource("agpr", "Occupancy vs AGPRs", "AGPRs per wave", "agprs",
                               model.agprs, 256, "AGPRs", "agpr" in limiters))
    if arch.sgpr_limits_occupancy:
        charts.append(resource("sgpr", "Occupancy vs SGPRs", "SGPRs per wave", "sgprs",
                               model.sgprs, arch.addressable_sgprs + 12, "SGPRs",
                               "sgpr" in limiters))
    charts.append(resource("lds", "Occupancy vs LDS", "LDS per workgroup", "lds", model.lds,
                           arch.lds_per_workgroup, "LDS", "lds" in limiters, as_bytes=True))
    return charts


def nvidia_charts(report: KernelReport, k: dict[str, Any]) -> list[Chart]:
    arch, func, occ = report.arch, report.input_model, report.occupancy
    assert isinstance(arch, NvArch) and isinstance(occ, nvidia.NvOccupancy)
    block, dynamic = report.block_size, report.launch.dynamic_lds
    wmax, metric = arch.max_warps_per_sm, "warps/SM"
    limiters = set(occ.limiters) if occ.occupancy < 1 else set()
    charts = []

    top = min(func.max_threads, arch.max_threads_per_block)
    rows = advice_mod.nv_sweep(arch, func, dynamic, top)
    res = report.kernel.resources
    note = f"The kernel requires block {block}." if res.required_block else ""
    best = (k.get("advice") or {}).get("recommended_block")
    charts.append(_block_chart([(b, w) for b, w, _ in rows], block, occ.warps_per_sm, best,
                               wmax, metric, bool(limiters & {"warps", "blocks", "barriers"}),
                               note))

    base = replace(func, registers=0)
    hi = arch.max_regs_per_thread
    charts.append(_resource_chart(
        "registers", "Occupancy vs registers", "registers per thread",
        _nv_register_curve(arch, base, block, dynamic),
        _nv_levels(arch, base, "registers", block, dynamic, hi), func.registers, hi, wmax,
        metric, "registers", "registers" in limiters))

    base = replace(func, static_shared=0, max_dynamic_shared=None)
    hi = arch.smem_per_block_optin
    charts.append(_resource_chart(
        "shared", "Occupancy vs shared memory", "shared memory per block",
        _nv_shared_curve(arch, base, block, dynamic),
        _nv_levels(arch, base, "shared", block, dynamic, hi), func.static_shared + dynamic,
        hi, wmax, metric, "shared memory", "shared" in limiters, as_bytes=True))
    return charts


# --- grid chart ----------------------------------------------------------------------------

def relative_time(grid: int, units: int, concurrent: int, recommended: int) -> float:
    """The grid chart's model (see the module docstring and docs/html-report.md)."""
    if grid >= recommended:
        return 1.0
    balance = 1 + advice_mod.tail(grid, units)["cost"]
    return max(concurrent / grid, balance)


def grid_chart(k: dict[str, Any]) -> Chart | None:
    adv = k.get("advice") or {}
    cap, over = adv.get("capacity"), adv.get("oversubscription")
    chosen = (adv.get("grid") or {}).get("grid") or (adv.get("problem") or {}).get("grid")
    if not cap or not over or not chosen or not over.get("recommended_grid"):
        return None
    units, concurrent = cap["units"], cap["concurrent_blocks"]
    target = over["recommended_grid"]
    if not units or not concurrent:
        return None

    def t(g: float) -> float:
        return relative_time(int(g), units, concurrent, target)

    lo = max(1, min(chosen, concurrent) // 4)
    hi = max(chosen, target) * 2
    now = t(chosen)
    ymax = max(1.5, min(now * 1.2, 8.0))
    px = _log_scale(lo, hi, LEFT, RIGHT)
    py = _scale(1.0, ymax, BOTTOM, TOP)

    xs = {lo, hi, chosen, target, concurrent}
    n = 40
    xs.update(round(lo * (hi / lo) ** (i / n)) for i in range(n + 1))
    first = -(-concurrent // units)
    last = target // units
    k_ = first
    while k_ <= last:  # the teeth of the tail effect: balanced at k*U, worst at k*U + 1
        xs.update((k_ * units, k_ * units + 1))
        spacing = (px((k_ + 1) * units) - px(k_ * units)) or 1
        k_ += max(1, math.ceil(4 / spacing))
    enter = concurrent / ymax  # below one device-full, time is C/g: enters the plot here
    xs = sorted(x for x in xs if lo <= x <= hi and x > enter)
    points = [(x, min(t(x), ymax)) for x in xs]
    if enter >= lo:
        points.insert(0, (enter, ymax))

    cap_label = f"device full: {concurrent:,} blocks ({cap['blocks_per_unit']} per {cap['unit']})"
    factor = over["factor"]
    guides = [Guide("capacity", px(concurrent), cap_label),
              Guide("recommended", px(target), f"recommended grid {target:,}")]
    markers = [
        Marker("recommended", px(target), py(min(t(target), ymax)),
               f"recommended grid {target:,} ({factor:g}x the wave slots): relative time 1.00"),
        Marker("chosen", px(chosen), py(min(now, ymax)),
               f"chosen grid {chosen:,}: relative time {now:.2f}"),
    ]
    ticks = []
    decade = 10 ** math.floor(math.log10(lo))
    while decade <= hi:
        for m in (1, 2, 5) if math.log10(hi / lo) < 2.5 else (1,):
            v = decade * m
            if lo <= v <= hi:
                ticks.append((px(v), _fmt_count(v)))
        decade *= 10
    y_ticks = [(py(v), f"{v:g}×") for v in (1.0, 1.25, 1.5, 2, 3, 4, 6, 8) if v <= ymax]
    if len(y_ticks) > 4:
        y_ticks = y_ticks[::2]
    tail_note = ""
    if now > 1 and adv.get("grid") and adv["grid"].get("nearest_balanced") \
            and adv["grid"]["cost"]:
        options = " or ".join(f"{x:,}" for x in adv["grid"]["nearest_balanced"])
        tail_note = f" Balanced grids nearby: {options}."
    caption = (f"Chosen grid {chosen:,}: {now:.2f}× the best predicted time; recommended "
               f"{target:,} ({factor:g}× the device's wave slots); the device holds "
               f"{concurrent:,} blocks at once.{tail_note}")
    return Chart(key="grid", title="Predicted time vs grid size", x_label="blocks per grid "
                 "(log scale)", y_label="time vs best", limiter=now > 1.1,
                 path=_poly_path(points, px, py),
                 caption=caption, x_ticks=ticks, y_ticks=y_ticks, markers=markers,
                 guides=guides, shade=(LEFT, px(target)),
                 shade_label=f"below {factor:g}× target", stroke_width=1.25,
                 current=(chosen, now), best=(target, t(target)))


# --- entry point ---------------------------------------------------------------------------

def kernel_charts(k: dict[str, Any], db) -> tuple[list[Chart], str]:
    """Charts for one document kernel, and a note when they could not be drawn."""
    if k.get("status") != "ok" or not k.get("occupancy"):
        return [], ""  # the kernel's status message says why there is no occupancy
    try:
        report = rebuild(k, db)
    except ChartsUnavailable as exc:
        return [], f"No occupancy charts: {exc}."
    charts = amd_charts(report, k) if k["vendor"] == "amd" else nvidia_charts(report, k)
    grid = grid_chart(k)
    if grid is not None:
        charts.append(grid)
    return charts, ""


def next_step_sentences(k: dict[str, Any]) -> list[str]:
    """The document's next steps in words (occupancy.steps.describe)."""
    metric = "waves/SIMD" if k["vendor"] == "amd" else "blocks/SM"
    return [steps.describe(s, metric) for s in k.get("next_steps") or []]
