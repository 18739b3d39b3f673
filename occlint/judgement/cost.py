"""What a finding costs: the share of a launch's time its fix would save, as a range.

Launch findings on launches the launch-time model plans (a user's traced launch group, or
a kernel with a launch and its source: occlint.judgement.fastest) are priced by that model
instead; what follows prices the rest (no plan: a binary without its source, a device
without bandwidth figures) and the findings that are not a launch configuration.

Two numbers per finding, both shares of the kernel's (or launch group's) time:

* :func:`lost_fraction` — the upper bound Nsight Compute's estimated speedups give (idle
  lanes of every wave, the partial last wave, idle units, theoretical occupancy); kept as
  the JSON's ``lost_fraction`` / ``time_at_stake_ns``;
* :func:`saving` — what timing the advised fix on a GPU says it saves: ``low`` to ``high``,
  from what is known of the kernel (its body: one element per thread or a grid-stride
  loop; its work: memory- or compute-bound, from its source; occupancy, waves), wider
  where that is not known. The models and the measurements behind them (an H100, the
  calibration suite of benchmarks/gpu/calibration/) are in docs/validation.md; each
  model's ``basis`` says which applies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from occlint.analysis.kernels import KernelReport
from occlint.model.finding import Finding
from occlint.occupancy import amd

# A finding on traced launches whose fix may save less than this share of their time (the
# low end of its range) is not worth a warning: it is info (docs/validation.md).
WARN_MIN_SAVING = 0.02
# ... unless the launch-time model, given the kernel's own facts, predicts its fix to save
# at least this share: the least threshold that, on the held-out suites' fit halves, warns
# no launch where nothing saves 2 % and none whose advice was measured slower (0.10 and
# 0.12 did both); on the score halves it warns 7 more of the 107 launches saving 10 % or
# more that were infos, on the block-per-row and block-reduce families 44 of 127, and
# nothing else (docs/validation.md)
WARN_PREDICTED = 0.15
# the noise of a timed fix: what the ranges allow beyond the model
SLACK = 0.01

# memory-bound kernels: time ~ 1 + c / occupancy (Little's law with a latency-bound part).
# c measured (docs/validation.md): grid-stride loops 0.40 on an H100, 0.49-0.66 on an H200;
# one element per thread 0.83-1.12 on an H100, 1.98-2.09 on an H200 (more bandwidth needs
# more bytes in flight)
MEMORY_C = {"grid-stride": (0.3, 0.75), "per-element": (0.6, 2.3), None: (0.3, 2.3)}
# compute-bound kernels stop gaining from occupancy at o_sat of the warp slots
COMPUTE_SATURATION = (0.17, 0.29)
COMPUTE_SLACK = 0.02  # what more blocks still balance at full occupancy


@dataclass(frozen=True, slots=True)
class Saving:
    low: float  # share of the time the fix saves, at least ...
    high: float  # ... and at most
    basis: str  # the model (docs/validation.md)

    @property
    def mid(self) -> float:
        return (self.low + self.high) / 2

    def to_dict(self, total_ns: float | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"low": round(self.low, 4), "high": round(self.high, 4),
                               "basis": self.basis}
        if total_ns is not None:
            out["low_ns"] = round(self.low * total_ns)
            out["high_ns"] = round(self.high * total_ns)
        return out


def _range(low: float, high: float, basis: str) -> Saving:
    low, high = max(0.0, min(low, 1.0)), max(0.0, min(high + SLACK, 1.0))
    return Saving(min(low, high), high, basis)


def _memory(o: float, o_fix: float, body: str | None) -> tuple[float, float]:
    lo_c, hi_c = MEMORY_C.get(body, MEMORY_C[None])
    if o >= o_fix:
        return 0.0, 0.0
    return tuple(1 - (1 + c / o_fix) / (1 + c / o) for c in (lo_c, hi_c))  # type: ignore


def _compute(o: float, o_fix: float) -> tuple[float, float]:
    lo_sat, hi_sat = COMPUTE_SATURATION
    return (max(0.0, 1 - o / min(lo_sat, o_fix)) if o < o_fix else 0.0,
            max(0.0, 1 - o / min(hi_sat, o_fix)) + COMPUTE_SLACK if o < o_fix else 0.0)


def occupancy_saving(o: float, o_fix: float, work: str | None, body: str | None
                     ) -> Saving | None:
    """Raising occupancy from ``o`` to ``o_fix`` (None: no occupancy to raise from)."""
    if o <= 0 or o_fix <= 0:
        return None
    if work == "memory":
        lo, hi = _memory(o, o_fix, body)
        return _range(lo, hi, f"memory-bound ({body or 'body unknown'}): time ~ 1 + c/occupancy")
    if work == "compute":
        lo, hi = _compute(o, o_fix)
        return _range(lo, hi, "compute-bound: no gain past 17-29% occupancy")
    m, c = _memory(o, o_fix, body), _compute(o, o_fix)
    return _range(min(m[0], c[0]), max(m[1], c[1]),
                  "memory- or compute-bound not known (no source): both models")


def _tail(report: KernelReport, grid_advice: dict[str, Any], capacity: dict[str, Any]
          ) -> Saving | None:
    """A grid-stride loop's grid cut to whole waves: the blocks of the partial wave run
    alone on their units, from as fast as a whole unit lets them (compute-bound) to no
    faster than in a full wave (memory-bound, at worst)."""
    grid, cap = report.launch.grid, capacity.get("concurrent_blocks")
    units, per_unit = capacity["units"], capacity.get("blocks_per_unit")
    if not grid or not cap or not per_unit or not units or grid <= cap:
        return None
    full, rest = divmod(grid, cap)
    if rest == 0:
        return None
    fix = full * per_unit / (full * cap)
    alone = (full * per_unit + math.ceil(rest / units)) / grid  # the partial wave at speed
    shared = (full + 1) * per_unit / grid  # the partial wave as slow as a full one
    lo, hi = 1 - fix / alone, 1 - fix / shared
    work, body = report.launch.work, report.launch.body
    if body != "grid-stride":
        return _range(0.0, hi, "grid follows the problem size (not a grid-stride loop "
                               "known from source): the tail may cost nothing to all of it")
    if work == "compute":
        return _range(0.5 * lo, lo + 0.01, "compute-bound grid-stride loop: the partial "
                                           "wave runs alone on its units")
    if work == "memory":
        return _range(lo, lo + 0.6 * (hi - lo), "memory-bound grid-stride loop")
    return _range(lo, hi, "grid-stride loop, memory- or compute-bound not known")


def saving(f: Finding, report: KernelReport | None, advice: dict[str, Any]
           ) -> Saving | None:
    """What the fix of ``f`` saves, as shares of the kernel's time; None: no estimate."""
    d = f.data
    launch = report.launch if report is not None else None
    work = launch.work if launch is not None else None
    body = launch.body if launch is not None else None
    if launch is not None and not launch.blocks_split_work and f.rule.startswith("OCC"):
        return None  # every block does the same work: more at once do not finish it sooner
    if f.rule == "LCH001" and d.get("idle_lanes") is not None:
        idle = d["idle_lanes"] / (-(-d["block"] // d["wave_size"]) * d["wave_size"])
        return _range(0.85 * idle - 0.02, 1.1 * idle + 0.02,
                      "idle lanes of every warp (one element per thread: the grid shrinks "
                      "with them)")
    if f.rule == "LCH102" and d.get("units"):
        idle = (d["units"] - d["grid"]) / d["units"]
        low = 0.9 if work == "compute" else 0.75
        return _range(low * idle, idle, "idle units; memory-bound kernels draw more than "
                                        "their share of bandwidth on the busy ones")
    if f.rule in ("LCH101", "LCH105") and report is not None:
        if advice.get("grid") and advice.get("capacity"):
            return _tail(report, advice["grid"], advice["capacity"])
        return None
    if report is None or report.occupancy is None:
        return None
    o = report.occupancy.occupancy
    if f.rule == "LCH103" and advice.get("capacity"):
        cap = advice["capacity"]
        slots = cap.get("wave_slots") or 0
        o_grid = min(o, d["waves"] / slots) if slots else o
        s = occupancy_saving(o_grid, o, work, "grid-stride")
        if s is not None and work != "memory":  # more blocks balance the last iterations
            s = _range(s.low, s.high + 0.04, s.basis)
        if s is not None and body != "grid-stride":  # a larger grid helps only if it loops
            s = Saving(0.0, s.high, "if it is a grid-stride loop (its source would tell): "
                                    + s.basis)
        return s
    if f.rule == "LCH003" and d.get("best"):
        return occupancy_saving(d["occupancy"], d["best"], work, body)
    if f.rule == "OCC108":  # what the limit costs: against a full SM
        return occupancy_saving(o, 1.0, work, body)
    if f.rule.startswith("OCC") and d.get("next"):  # the advised cut: the next step
        occ = report.occupancy
        if isinstance(occ, amd.AmdOccupancy):
            then = d["next"] / occ.max_waves_per_simd
        else:
            then = d["next"] * occ.warps_per_block / occ.max_warps_per_sm
        return occupancy_saving(o, max(then, o), work, body)
    return None


# What the PyTorch profiler makes of the idle time between short launches: the idle time
# a trace shows over what capturing the burst in a CUDA graph saves without the profiler
# (fixtures/traces/profiler-overhead/h100*: three H100 hosts, each option set: none,
# record_shapes, with_stack, profile_memory, all). Bursts of framework ops (each launch
# inside an aten op the profiler records): 1.34-2.41 on the first two hosts, from which
# (1.3, 2.5) was set; the third host and a workload added then (attn) gave 1.04-2.03, so
# the low end is 1.0 (the profiler may add nothing that a graph would not also remove).
# Launches straight through the runtime (CuPy's): 0.797-1.19, where a graph also saves
# host time the trace does not show as idle; a claim never exceeds the idle time, so the
# 0.80-0.85 of profile_memory runs are missed.
PROFILED_IDLE_OVER_SAVING = {"framework": (1.0, 2.5), "runtime": (0.75, 1.25)}
OVERHEAD_BASIS = ("idle time between short launches, net of what the profiler adds to it: "
                  "a graph replays them back to back")


def overhead_saving(idle_ns: float, span_ns: float, framework: float = 0.0) -> Saving:
    """Launch overhead (LCH201): what capturing the bursts in a CUDA graph saves, from the
    idle time the trace shows between their launches, net of what the profiler adds to it
    (:data:`PROFILED_IDLE_OVER_SAVING`; ``framework``: the share of the launches issued
    inside a framework's ops), as a share of ``span_ns``; never more than the idle time."""
    if not span_ns:
        return Saving(0.0, 0.0, "no span")
    idle = min(idle_ns / span_ns, 1.0)
    fw_lo, fw_hi = PROFILED_IDLE_OVER_SAVING["framework"]
    rt_lo, rt_hi = PROFILED_IDLE_OVER_SAVING["runtime"]
    low = idle * (framework / fw_hi + (1 - framework) / rt_hi)
    high = min(idle, idle * (framework / fw_lo + (1 - framework) / rt_lo))
    return Saving(low, high, OVERHEAD_BASIS)


# What the profiler leaves of a call's host time (its duration less the time the GPU
# was busy inside it): eager host time without the profiler over the traced host time,
# measured for 16 recorded calls (fixtures/traces/profiler-overhead/h100*: the with_stack
# and "all" traces of every workload, timed eager without the profiler, on three H100
# hosts) at 0.149-0.718 (the least: an MLP's forward, 105 Python frames for 12 launches).
# The low end is that least share less a tenth. The high end is 1: the profiler never
# makes a host faster, and no claim exceeds the idle time the trace shows. A host's speed
# also moves between a recording and a later run, which no trace foresees: in the
# held-out check (fixtures/traces/regions) one function timed eager took 1.35 times its
# traced host time on a fresh machine (its claim missed: docs/validation.md).
PROFILED_HOST_SHARE = (0.13, 1.0)
REGION_BASIS = ("the host time of each call, net of what the profiler adds to it (it "
                "multiplied it by 1.4 to 6.7 where measured): a graph replays the call's "
                "kernels back to back")


def region_saving(duration_ns: float, busy_ns: float, launches: int, graph_node_ns: float,
                  graph_launch_ns: float) -> tuple[float, float]:
    """What replaying one call of a function from a CUDA graph saves (ns, low and high),
    from the call as traced: its duration and the time a kernel ran inside it (``busy``).
    Eager, untraced, the call takes its busy time plus :data:`PROFILED_HOST_SHARE` of its
    host time; replayed, its kernels back to back, each graph node costing
    ``graph_node_ns`` (between ``max(busy, nodes)`` and ``busy + nodes``), plus one launch
    of the graph."""
    host = max(duration_ns - busy_ns, 0.0)
    nodes = launches * graph_node_ns
    fastest = max(busy_ns, nodes) + graph_launch_ns
    slowest = busy_ns + nodes + graph_launch_ns
    lo_share, hi_share = PROFILED_HOST_SHARE
    low = max(busy_ns + lo_share * host - slowest, 0.0)
    high = max(busy_ns + hi_share * host - fastest, 0.0)
    return low, high


def lost_fraction(f: Finding, report: KernelReport | None) -> float | None:
    """The share of a launch group's time a finding says is lost (upper bounds)."""
    d = f.data
    if f.rule == "LCH001" and report is not None:
        lanes = -(-d["block"] // d["wave_size"]) * d["wave_size"]
        return d["idle_lanes"] / lanes  # idle lanes of every wave (Nsight: the same)
    if f.rule == "LCH101":
        return d["cost"] / (1 + d["cost"])  # the busiest unit's extra blocks
    if f.rule == "LCH102":
        return (d["units"] - d["grid"]) / d["units"]  # idle units (Nsight's "Small Grid")
    if f.rule == "LCH105":
        return d["partial_share"]  # the partial wave's share (Nsight's tail effect)
    if f.rule in ("LCH003",):
        return 1 - d["occupancy"] / d["best"] if d.get("best") else None
    if f.rule.startswith("OCC") and report is not None and report.occupancy is not None:
        return 1 - report.occupancy.occupancy  # Nsight's theoretical-occupancy estimate
    return None
