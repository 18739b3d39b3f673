"""Launch advice: block and grid sizes, device capacity, oversubscription and tail effects.

Everything here is derived from a subject: a KernelReport (occupancy already computed by
the vendor engine) and the device's unit count, or a launch site in source and its targets;
the rules quote these numbers and the reporters show them. Block-size sweeps are memoised
on the kernel's resource profile, because real libraries hold thousands of kernels with the
same few profiles.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from occlint.analysis.kernels import KernelReport, potential_block_size
from occlint.devices.models import AmdArch, NvArch
from occlint.model.kernel import AmdResources
from occlint.occupancy import amd, nvidia

if TYPE_CHECKING:  # a binary's run never reads sources: their modules load with them
    from occlint.analysis.sites import SiteReport, Target
    from occlint.model.source import LaunchSite, SourceKernel


@dataclass(frozen=True)
class AdviceSettings:
    """Tunable advice parameters (``[tool.occlint]`` keys in parentheses)."""

    oversubscription: float = 10.0  # target total waves / device wave slots (oversubscription)
    preferred_block: int = 256  # recommend the largest best-occupancy block up to this
    occupancy_threshold: float = 0.5  # limiter findings below this occupancy (occupancy-threshold)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@lru_cache(maxsize=8192)
def amd_sweep(arch: AmdArch, kernel: amd.AmdKernel, wgp: bool | None, max_block: int,
              ) -> tuple[tuple[int, int, int], ...]:
    """(block, waves/SIMD, blocks/CU) for every multiple of the wave size up to max_block."""
    out = []
    for block in range(kernel.wave_size, max_block + 1, kernel.wave_size):
        r = amd.occupancy(arch, kernel, block, wgp, max_block_size=max_block)
        out.append((block, r.waves_per_simd, r.blocks_per_cu))
    return tuple(out)


@lru_cache(maxsize=8192)
def nv_sweep(arch: NvArch, func: nvidia.NvFunction, dynamic: int, max_block: int,
              ) -> tuple[tuple[int, int, int], ...]:
    """(block, warps/SM, blocks/SM) for every multiple of the warp size up to max_block."""
    out = []
    for block in range(arch.warp_size, max_block + 1, arch.warp_size):
        r = nvidia.active_blocks(arch, func, block, dynamic)
        out.append((block, r.warps_per_sm, r.blocks_per_sm))
    return tuple(out)


def block_sweep(report: KernelReport) -> list[tuple[int, float, int]]:
    """(block, occupancy 0..1, blocks per unit) for the block sizes this kernel may use."""
    arch, model, kernel = report.arch, report.input_model, report.kernel
    res = kernel.resources
    if isinstance(arch, AmdArch):
        if res.reqd_workgroup_size:
            return [(report.block_size, report.occupancy.occupancy,
                     report.occupancy.blocks_per_cu)]
        max_block = min(res.max_block_size, arch.max_workgroup_size)
        rows = amd_sweep(arch, model, res.wgp_mode, max_block)
        return [(b, w / arch.max_waves_per_simd, n) for b, w, n in rows]
    if res.required_block:
        return [(report.block_size, report.occupancy.occupancy, report.occupancy.blocks_per_sm)]
    max_block = min(model.max_threads, arch.max_threads_per_block)
    rows = nv_sweep(arch, model, report.launch.dynamic_lds, max_block)
    return [(b, w / arch.max_warps_per_sm, n) for b, w, n in rows]


def wave_size(report: KernelReport) -> int:
    return report.kernel.wavefront_size


def waves_per_block(report: KernelReport, block: int | None = None) -> int:
    return _ceil_div(block or report.block_size, wave_size(report))


def units(report: KernelReport) -> int | None:
    """Scheduling units of the device: WGPs (RDNA, WGP mode), CUs or SMs."""
    if report.device is None:
        return None
    return report.device.scheduling_units(report.wgp_mode)


def unit_name(report: KernelReport) -> str:
    if isinstance(report.arch, AmdArch):
        return "WGP" if report.wgp_mode else "CU"
    return "SM"


def wave_slots(report: KernelReport) -> int | None:
    """Wavefronts (warps) the whole device holds at once, whatever the kernel."""
    n = units(report)
    if n is None:
        return None
    occ, arch = report.occupancy, report.arch
    if isinstance(occ, amd.AmdOccupancy):
        return n * occ.simds * occ.max_waves_per_simd
    if occ is not None:
        return n * occ.max_warps_per_sm
    if isinstance(arch, AmdArch):  # the kernel's occupancy unknown: the device's slots
        return n * arch.simds_per_cu * arch.max_waves_per_simd
    return n * arch.max_warps_per_sm if isinstance(arch, NvArch) else None


def blocks_per_unit(report: KernelReport) -> int:
    occ = report.occupancy
    return occ.blocks_per_cu if isinstance(occ, amd.AmdOccupancy) else occ.blocks_per_sm


def oversubscription_grid(report: KernelReport, settings: AdviceSettings,
                         block: int | None = None) -> int | None:
    """Smallest multiple of the unit count whose waves reach the oversubscription target,
    for blocks of ``block`` threads (default: the report's block size)."""
    n, slots = units(report), wave_slots(report)
    if not n or not slots:
        return None
    return grid_for_target(n, slots, waves_per_block(report, block), settings.oversubscription)


def grid_for_target(n_units: int, slots: int, per_block: int, factor: float) -> int:
    """Smallest multiple of ``n_units`` whose blocks of ``per_block`` waves reach
    ``factor`` x ``slots`` waves."""
    target_blocks = math.ceil(factor * slots / per_block)
    return max(_ceil_div(target_blocks, n_units), 1) * n_units


def balanced_block(elements: int, n_units: int, blocks: list[int], current: int
                   ) -> tuple[int, int, float] | None:
    """For a grid that follows the problem size (one element per thread): the block size
    among ``blocks`` nearest the current one whose grid, ceil(elements / block), spreads over
    the units at half the current tail cost or less (or under 0.5 %) — (block, grid, tail
    cost); else None. A grid change alone would drop elements; a block change keeps every
    one covered."""
    def cost(b: int) -> float:
        return tail(_ceil_div(elements, b), n_units)["cost"]

    now = cost(current)
    good = [b for b in blocks if _ceil_div(elements, b) >= n_units  # no unit left idle
            and cost(b) <= max(0.005, now / 2)]
    best = min(good, key=lambda b: (abs(b - current), cost(b)), default=None)
    if best is None:
        return None
    return best, _ceil_div(elements, best), cost(best)


def tail(grid: int, n_units: int) -> dict[str, Any]:
    """Load balance of ``grid`` blocks over ``n_units`` units (the zig-zag of the sources).

    Blocks are spread over the units; the busiest unit runs ceil(grid/units) blocks while the
    average is grid/units, so a grid just past a multiple of the unit count can take up to
    ``cost`` longer than a balanced one."""
    most = _ceil_div(grid, n_units)
    cost = most * n_units / grid - 1
    below = grid // n_units * n_units
    above = most * n_units
    return {
        "units": n_units,
        "max_blocks_per_unit": most,
        "busy_units": grid - (most - 1) * n_units,
        "cost": round(cost, 4),
        "nearest_balanced": sorted({x for x in (below, above) if x > 0}),
    }


def recommend_block(report: KernelReport, sweep: list[tuple[int, float, int]],
                    settings: AdviceSettings) -> tuple[int | None, str]:
    """The block size to recommend among those at the best occupancy, and why.

    ``sweep``: (block, occupancy, blocks per unit) for every allowed block size. Calibrated
    on an H200 (docs/validation.md): occupancy alone does not separate the candidates, but
    per-block costs do.

    * Default: the largest best-occupancy block up to ``preferred_block`` (256). Tiny
      blocks pay a per-block launch and scheduling cost that short memory-bound threads
      cannot hide (vecadd: 128 threads ran 22 % slower than 192-256).
    * Per-block shared memory / LDS limits occupancy: the largest best-occupancy block,
      which amortises the allocation and the work done per block.
    * A one-element-per-thread problem that fits in one device wave (every block resident
      at once, so nothing rebalances): the block whose grid spreads most evenly over the
      units (``tail`` cost), every unit getting a block where possible; ties go to the
      larger block, whose wider contiguous span per block averages uneven work (512 x 512
      Mandelbrot: 256-thread blocks put the same half of every row on each SM, 18 % slower
      than 1024).
    """
    best = max((occ for _, occ, _ in sweep), default=0.0)
    rows = [(b, n) for b, occ, n in sweep if occ == best and best > 0]
    reaching = [b for b, _ in rows]
    if not reaching:
        return None, "nothing fits on this device"
    if len(reaching) == 1:
        return reaching[0], "the only block size at the best occupancy"
    if _shared_limits_at(report, settings.preferred_block):
        return reaching[-1], ("per-block shared memory limits occupancy: the largest block "
                              "at the best occupancy amortises it")
    at_most = [b for b in reaching if b <= settings.preferred_block]
    choice = at_most[-1] if at_most else reaching[0]
    reason = (f"the largest block at the best occupancy up to {settings.preferred_block}"
              if at_most else "the smallest block at the best occupancy")
    n, size = units(report), report.launch.problem_size
    per_unit = dict(rows)
    if not n or not size or _ceil_div(size, choice) > per_unit[choice] * n:
        return choice, reason
    filling = [b for b in reaching if _ceil_div(size, b) >= n]
    if not filling:
        return reaching[0], (f"the {size:,}-element problem cannot give all {n} "
                             f"{unit_name(report)}s a block: the smallest block at the best "
                             "occupancy")
    pick = min(filling, key=lambda b: (round(tail(_ceil_div(size, b), n)["cost"], 4), -b))
    return pick, (f"the {size:,}-element problem fits in one device wave: the block at the "
                  f"best occupancy whose grid spreads most evenly over the {n} "
                  f"{unit_name(report)}s (ties: the larger block)")


def _shared_limits_at(report: KernelReport, block: int) -> bool:
    """Whether shared memory / LDS per block is what limits occupancy at ``block``."""
    wave = report.kernel.wavefront_size
    block = max(block // wave * wave, wave)
    try:
        occ = with_block(report, block)
    except (ValueError, ZeroDivisionError):
        return False
    resident = occ.blocks_per_cu if isinstance(occ, amd.AmdOccupancy) else occ.blocks_per_sm
    return resident > 0 and bool({"shared", "lds"} & set(occ.limiters))


_ADVICE: dict[tuple, dict[str, Any]] = {}
_MAX_ADVICE = 4096


def _profile(report: KernelReport, settings: AdviceSettings) -> tuple:
    """Everything :func:`_advice` reads from a report: kernels with equal profiles get equal
    advice (the occupancy itself follows from the architecture, model, block and mode)."""
    res = report.kernel.resources
    if isinstance(res, AmdResources):
        shape: tuple = (res.reqd_workgroup_size, res.max_block_size, res.wgp_mode)
    else:
        shape = (res.required_block,)
    return (report.arch, report.input_model, report.block_size, report.launch, report.device,
            report.kernel.wavefront_size, shape, settings)


def advice(report: KernelReport, settings: AdviceSettings) -> dict[str, Any]:
    """The per-kernel advice section (JSON ``advice``), computed once per resource profile.

    Kernels of one profile share the returned dict (the report encodes it once, see
    occlint.pipeline.document): read it, never change it."""
    if report.occupancy is None:
        return grid_advice(report, settings) if report.status == "no-registers" else {}
    key = _profile(report, settings)
    out = _ADVICE.get(key)
    if out is None:
        if len(_ADVICE) >= _MAX_ADVICE:
            _ADVICE.clear()
        out = _ADVICE[key] = _advice(report, settings)
    return out


def _advice(report: KernelReport, settings: AdviceSettings) -> dict[str, Any]:
    sweep = block_sweep(report)
    best = max((occ for _, occ, _ in sweep), default=report.occupancy.occupancy)
    reaching = [b for b, occ, _ in sweep if occ == best and best > 0]
    recommended, reason = recommend_block(report, sweep, settings)
    out: dict[str, Any] = {
        "best_occupancy": round(best, 6),
        "block_sizes_at_best": reaching,
        "recommended_block": recommended,
        "recommended_reason": reason,
    }
    if isinstance(report.arch, NvArch):
        potential = potential_block_size(report.arch, report.input_model,
                                         report.launch.dynamic_lds)
        out["max_potential_block_size"] = potential.block_size
    n = units(report)
    if n:
        slots = wave_slots(report)
        per_unit = blocks_per_unit(report)
        out["capacity"] = {
            "units": n, "unit": unit_name(report), "blocks_per_unit": per_unit,
            "concurrent_blocks": n * per_unit,
            "concurrent_waves": n * per_unit * waves_per_block(report),
            "wave_slots": slots,
        }
        target = oversubscription_grid(report, settings)
        if report.launch.body == "per-element":  # its grid follows the problem size
            target = None
            out["grid_stride"] = {
                "applies": False,
                "reason": "its source processes one element per thread (a bounds check, no "
                          "grid-stride loop): the grid follows the problem size, so only the "
                          "block size is advised"}
        elif report.launch.problem_size and report.launch.body != "grid-stride":
            target = None
            out["grid_stride"] = {
                "applies": False,
                "reason": "with a problem size the grid is ceil(size / block): it follows the "
                          "problem size, so only the block size is advised"}
        out["oversubscription"] = {
            "factor": settings.oversubscription,
            "target_waves": math.ceil(settings.oversubscription * slots),
            "block": report.block_size,
            "recommended_grid": target,  # at this report's block size
            # at the recommended block size: what the advice line tells users to launch
            "recommended_block_grid": oversubscription_grid(report, settings, recommended)
            if recommended and target else target,
        }
        launch = report.launch
        if launch.grid:
            waves_total = launch.grid * waves_per_block(report)
            out["grid"] = {"grid": launch.grid, "waves": waves_total,
                           "device_waves": round(launch.grid / max(n * per_unit, 1), 4),
                           **tail(launch.grid, n)}
        if launch.problem_size:
            grid = _ceil_div(launch.problem_size, report.block_size)
            capacity = max(n * per_unit, 1)
            rounds = _ceil_div(grid, capacity)
            out["problem"] = {
                "size": launch.problem_size, "grid": grid,
                "waves": grid * waves_per_block(report),
                "device_waves": round(grid / capacity, 4),
                "tail_efficiency": round(launch.problem_size /
                                         (rounds * capacity * report.block_size), 4),
            }
    return out


def grid_advice(report: KernelReport, settings: AdviceSettings) -> dict[str, Any]:
    """The advice that needs no occupancy (a traced launch without a register count): the
    device's units and wave slots, the oversubscription target and the grid's balance over
    the units. Blocks per unit, and so waves of blocks, stay unknown (None) with their most
    (``blocks_per_unit_at_most``), unless one block per unit is all the block size and the
    LDS / shared memory allow: then they are known whatever the registers."""
    n, slots = units(report), wave_slots(report)
    if not n or not slots or not report.block_size:
        return {}
    target = grid_for_target(n, slots, waves_per_block(report), settings.oversubscription)
    most = report.blocks_per_unit_at_most
    known = most == 1
    capacity: dict[str, Any] = {
        "units": n, "unit": unit_name(report), "blocks_per_unit": 1 if known else None,
        "concurrent_blocks": n if known else None,
        "concurrent_waves": n * waves_per_block(report) if known else None, "wave_slots": slots}
    if most and not known:
        capacity["blocks_per_unit_at_most"] = most
    out: dict[str, Any] = {
        "capacity": capacity,
        "oversubscription": {"factor": settings.oversubscription,
                             "target_waves": math.ceil(settings.oversubscription * slots),
                             "block": report.block_size, "recommended_grid": target,
                             "recommended_block_grid": target},
    }
    grid = report.launch.grid
    if grid:
        out["grid"] = {"grid": grid, "waves": grid * waves_per_block(report),
                       "device_waves": round(grid / n, 4) if known else None,
                       **tail(grid, n)}
    return out


def with_block(report: KernelReport, block: int):
    """Occupancy of the same kernel at another block size (for messages)."""
    if isinstance(report.arch, AmdArch):
        return amd.occupancy(report.arch, report.input_model, block,
                             report.kernel.resources.wgp_mode,
                             max_block_size=report.kernel.resources.max_block_size)
    return nvidia.active_blocks(report.arch, replace(report.input_model), block,
                                report.launch.dynamic_lds)


# -- launch sites in source --------------------------------------------------------------------
def grid_stride(kernel: SourceKernel | None) -> bool | None:
    """True / False when the kernel's body is known to be / not to be a grid-stride loop;
    None when the run does not define it or its shape is not recognised."""
    if kernel is None or kernel.body == "other":
        return None
    return kernel.body == "grid-stride"


def site_oversubscription(site: LaunchSite, t: Target, settings: AdviceSettings
                          ) -> dict[str, int] | None:
    """Waves of the launch, the target and the recommended grid at the site's block."""
    block = site.block.total if site.block else None
    if not block or not t.units or not t.wave_slots:
        return None
    per_block = -(-block // t.wave)
    return {"waves_per_block": per_block,
            "target_waves": math.ceil(settings.oversubscription * t.wave_slots),
            "recommended_grid": grid_for_target(t.units, t.wave_slots, per_block,
                                                settings.oversubscription)}


def _where(s: SiteReport) -> str:
    k = s.kernel
    assert k is not None
    if s.source.kernel(k.name) is k or not k.file:
        return f"defined at line {k.span.line}"
    return f"defined in {k.file}:{k.span.line}"


def site_advice(s: SiteReport, settings: AdviceSettings) -> dict[str, Any]:
    """What the JSON says about a site's grid advice, and why."""
    stride, name = grid_stride(s.kernel), s.site.kernel
    body = s.kernel.body if s.kernel else None
    if s.kernel is not None and s.kernel.block_indexed is False:
        return {"kernel_body": body, "grid_stride_advice": False,
                "reason": f"{name} does not split its work by block (it reads no block "
                          f"index, or only compares one with a constant; {_where(s)}): more "
                          "blocks would repeat it, so no grid advice",
                "recommended_grid": None}
    if s.idle:
        return {"kernel_body": body, "grid_stride_advice": False,
                "reason": f"the body of {name} is empty ({_where(s)}): it does no work, so "
                          "no block or grid advice", "recommended_grid": None}
    if s.kernel is not None and s.kernel.communicates:
        return {"kernel_body": body, "grid_stride_advice": False,
                "reason": f"{name} talks to other GPUs through {s.kernel.communicates} "
                          f"({_where(s)}): its grid is its communicator's (a CTA per barrier "
                          "or channel) and its time waits on the other ranks and the links, "
                          "so no block or grid advice",
                "recommended_grid": None}
    if stride is True and s.kernel.queued_on_one_address:
        return {"kernel_body": body, "grid_stride_advice": False,
                "reason": f"{name} is a grid-stride loop whose atomics on one address queue "
                          f"longer with every thread or block ({_where(s)}): no "
                          "oversubscription grid (more threads are slower, not faster)",
                "recommended_grid": None}
    if stride is True:
        grids = {}
        for t in s.targets:
            over = site_oversubscription(s.site, t, settings)
            if over is not None and t.device is not None:
                grids[t.device.name] = over["recommended_grid"]
        return {"kernel_body": body, "grid_stride_advice": True,
                "reason": f"{name} is a grid-stride loop ({_where(s)})",
                "recommended_grid": grids or None}
    if stride is False and s.kernel.thread_indexed is False:
        reason = (f"{name} reads no thread index, or only compares one with a constant "
                  f"({_where(s)}): each of a block's threads would repeat the block's work, "
                  "so no block or grid advice")
    elif stride is False:
        reason = (f"{name} processes one element per thread (a bounds check, no "
                  f"grid-stride loop, {_where(s)}): its grid follows the problem size, so "
                  "only the block size is advised")
    elif s.serial:
        reason = (f"{name} is launched as one thread and is not defined in this file or "
                  "another source of the run: serial work by design, so no block or grid "
                  "advice")
    elif s.kernel is None:
        reason = (f"{name} is not defined in this file or another source of the run: "
                  "its body is unknown, so no grid-stride advice")
    else:
        reason = (f"the body of {name} is neither a recognised grid-stride loop nor "
                  "one element per thread: no grid-stride advice")
    return {"kernel_body": body, "grid_stride_advice": False, "reason": reason,
            "recommended_grid": None}
