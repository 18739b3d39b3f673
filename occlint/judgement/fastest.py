"""The fastest launch the model predicts, and what moving to it saves (issue 28).

For a launch whose device has launch-model parameters (occlint.devices.launch_params) and
whose block and grid (or problem size) are known, :func:`plan` predicts the time of every
configuration that does the same work (occlint.judgement.timing) and advises the fastest:

* one element per thread: every block of whole warps (2-D blocks: every shape of whole
  warps), the grid following the elements;
* a grid-stride loop: blocks of 1 to 32 warps x grids of whole multiples of the units;
* a block-stride loop (a block per row or tile): every block of whole warps, the grid
  as it is;
* a compile-time tile (a Triton kernel: its block is its ``num_warps``, each thread does
  tile / threads elements): every tile of a power of two from 1 to :data:`TILE_PER_THREAD`
  elements per thread of 1 to 16 warps, the grid following, each thread's work (and the
  registers holding it) scaled with its elements.

A loop's work is solved from its traced duration; one element per thread's is its
threads. The saving is a range: the predicted saving widened by the model's error on the
held-out suite's fit half (:data:`BAND`) and by a derived device's spread. Without the
kernel's source every reading of :data:`SCENARIOS` that the traced time does not
contradict is tried, the advice must be faster in all of them, and the range starts at no
saving. With it, a launch of one element per thread whose predicted time the trace
contradicts is priced twice, against the model's time and against the traced one; one
whose facts predict under :data:`UNSEEN` of its traced time is not priced at all. The
advice stays the launch as it is unless the model predicts at least :data:`MIN_GAIN` from
moving.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from occlint.devices.launch_params import launch_model
from occlint.devices.models import AmdArch
from occlint.judgement import timing
from occlint.judgement.cost import Saving
from occlint.judgement.timing import (
    Breakdown,
    Config,
    Constants,
    DeviceModel,
    elements_for,
    predict,
)
from occlint.model.facts import Facts, width_pinned
from occlint.occupancy import amd, nvidia

# move only for a predicted saving of at least this share (fitted on the fit half)
MIN_GAIN = 0.08
# ... in every scenario, when the source is not in the run (fitted the same way)
MIN_GAIN_UNKNOWN = 0.05
# the model's error: measured minus predicted saving s of the advised fixes, over
# s (1 - s) + BAND_FLOOR (it errs most on savings midway, least near none and all): the 5th
# and 95th percentiles of that on the held-out suite's fit half (benchmarks/gpu/heldout/fit.py)
BAND_FLOOR = 0.05
BAND = (-0.755, 0.256)
# the block the characterisation's bandwidth curves were mostly measured in (4 of the 9
# shapes of characterize.py's bandwidth; the element curve's middle): among
# configurations the model predicts alike, the one it knows best
MEASURED_BLOCK = 256
LOOP_WARPS = (1, 2, 4, 6, 8, 12, 16, 24, 32)
LOOP_GRID_FACTORS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 80)
# 2-D blocks: rows of up to 256 threads, 1 to 32 rows
ROW_THREADS = (8, 16, 32, 64, 128, 256)
# Triton's tiles: num_warps, and the elements per thread a tile may give (powers of two);
# past 16 a thread's elements would hold more registers than the register file spares
TILE_WARPS = (1, 2, 4, 8, 16)
TILE_PER_THREAD = (1, 2, 4, 8, 16)
# atomics holding this share of a launch's predicted time make how they overlap the work
# matter: its range spans both readings (a round share, not fitted)
ATOMICS_SHARE = 0.5
# what a kernel may do per element when its source is not in the run
SCENARIOS = (
    Facts("per-element", 4.0, 4.0, 2.0, source="assumed"),
    Facts("per-element", 16.0, 16.0, 2.0, source="assumed"),
    Facts("per-element", 8.0, 4.0, 32.0, source="assumed"),
    Facts("per-element", 4.0, 4.0, 256.0, source="assumed"),
)
ASSUMED_ELEMENTS = float(1 << 26)
# one element per thread: a reading whose predicted time is off the traced time by more
# than these factors is one the trace contradicts (a loop's work is solved from the time);
# the kernel's own facts are kept, priced against the traced time too
AGREE = (0.5, 2.0)
# the kernel's own facts predicting under this share of its traced time (one element per
# thread): the source shows too little of what it does (a helper's loop it calls, a
# struct's pointers) for the model to price another launch; its findings keep the rules'
# own shares, from no saving up (data-picked atomics excepted: their queues are what the
# model does not see, and it prices them so)
UNSEEN = 0.25
# a traced duration's error: the H100 characterisation's repeat agrees within it
TRACE_ERROR = 0.03
# a loop's work read from its traced time is read at the L2's rate where the time grows at
# least half as fast as the work there (elasticity 0.5): elsewhere its fixed costs or
# atomics fill the time, the work so read is a guess and the L2 would make it cheaper still
WELL_READ = 0.5


@dataclass(frozen=True, slots=True)
class Candidate:
    block: tuple[int, int, int]
    grid: tuple[int, int, int]
    dynamic_shared: int
    resident: int
    tile: int = 0  # a tile kernel's elements per block (0: not one)
    per_thread: float = 1.0  # each thread's work over the launch as it is (tiles)

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def blocks(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]

    def config(self, wave: int) -> Config:
        return Config(self.threads, self.blocks, self.resident,
                      row=self.block[0] if self.block[1] > 1 else 0, wave=wave)

    def to_dict(self) -> dict[str, Any]:
        return {"block": list(self.block), "grid": list(self.grid),
                "dynamic_shared": self.dynamic_shared,
                **({"tile": self.tile} if self.tile else {})}

    def describe(self) -> str:
        b = "x".join(str(x) for x in self.block if x > 1) or "1"
        g = "x".join(f"{x:,}" for x in self.grid if x > 1) or "1"
        if self.tile:
            warps = self.threads // 32
            return (f"a tile of {self.tile:,} elements in {warps} warp{'s' if warps > 1 else ''} "
                    f"(BLOCK {self.tile}, num_warps {warps}: block {b} x grid {g})")
        return f"block {b} x grid {g}"


@dataclass(frozen=True, slots=True)
class Plan:
    """The model's view of one launch: now, the fastest, and the saving between."""

    device: DeviceModel
    facts: Facts | None  # None: not known (the range spans SCENARIOS)
    elements: float | None
    current: Candidate
    best: Candidate
    now: Breakdown
    fastest: Breakdown
    saving: Saving | None  # None: the launch as it is (no move predicted to pay)
    unknown: tuple[str, ...]  # what widened the range
    scenarios: tuple[Scenario, ...] = field(default=(), compare=False, repr=False)
    # the block was not searched: dynamic shared memory that may be a tile following it,
    # with no source to say (the grid alone was)
    block_held: bool = False
    # bytes of the traced shared memory that are the kernel's static arrays (a Kineto
    # trace gives static and dynamic as one sum; the source gives the static part)
    static_shared: int = 0

    @property
    def changes(self) -> bool:
        return self.best != self.current and self.saving is not None

    def fix(self) -> dict[str, Any] | None:
        """The advised launch as data: its block, grid and the dynamic shared memory to pass
        (the traced sum less the kernel's static arrays)."""
        if not self.changes:
            return None
        fix = self.best.to_dict()
        fix["dynamic_shared"] = max(0, fix["dynamic_shared"] - self.static_shared)
        return fix

    def to_dict(self) -> dict[str, Any]:
        return {"device": self.device.name, "device_basis": self.device.basis,
                "facts": self.facts.to_dict() if self.facts else None,
                "elements": round(self.elements) if self.elements else None,
                "now": _times(self.now), "fastest": _times(self.fastest),
                "fix": self.fix(), "saving": self.saving.to_dict() if self.saving else None,
                "unknown": list(self.unknown)}


def _times(b: Breakdown) -> dict[str, Any]:
    return {"ns": round(b.total * 1e9), "binding": b.binding,
            "memory_ns": round(b.memory * 1e9), "compute_ns": round(b.compute * 1e9),
            "block_starts_ns": round(b.starts * 1e9), "atomics_ns": round(b.atomics * 1e9),
            "block_reductions_ns": round(b.reductions * 1e9)}


@lru_cache(maxsize=65536)
def _resident(arch: Any, model: Any, block: int, dynamic: int, wgp: bool | None) -> int:
    try:
        if isinstance(arch, AmdArch):
            return amd.occupancy(arch, model, block, wgp).blocks_per_cu
        return nvidia.active_blocks(arch, model, block, dynamic).blocks_per_sm
    except (ValueError, ZeroDivisionError):
        return 0


def resident(report: Any, cand: Candidate) -> int:
    """``cand``'s blocks resident per unit with ``report``'s kernel (0: it cannot launch)."""
    return _resident(report.arch, report.input_model, cand.threads, cand.dynamic_shared,
                     getattr(report.kernel.resources, "wgp_mode", None))


def _dims(report: Any) -> tuple[tuple[int, int, int], tuple[int, int, int] | None]:
    trace = getattr(report, "trace", None)
    if trace is not None:
        return trace.group.key.block, trace.group.key.grid
    if report.launch.block_dims is not None:  # a launch site's, as its source writes it
        return report.launch.block_dims, report.launch.grid_dims
    grid = report.launch.grid
    return (report.block_size, 1, 1), ((grid, 1, 1) if grid else None)


def _max_block(report: Any) -> int:
    arch, res = report.arch, report.kernel.resources
    if isinstance(arch, AmdArch):
        return min(res.max_block_size, arch.max_workgroup_size)
    return min(report.input_model.max_threads, arch.max_threads_per_block)


def _required(report: Any) -> bool:
    res = report.kernel.resources
    return bool(getattr(res, "reqd_workgroup_size", None) or getattr(res, "required_block", None))


class _Space:
    """The configurations that do a launch's work, with their resident blocks per unit."""

    def __init__(self, report: Any, facts: Facts, units: int):
        self.report, self.facts, self.units = report, facts, units
        self.wave = report.kernel.wavefront_size
        self.block, self.grid = _dims(report)
        self.dynamic = report.launch.dynamic_lds
        self.max_block = _max_block(report)
        res = report.kernel.resources
        self.wgp = getattr(res, "wgp_mode", None)

    def candidate(self, block: tuple[int, int, int], grid: tuple[int, int, int]
                  ) -> Candidate | None:
        threads = block[0] * block[1] * block[2]
        dynamic = self.dynamic
        if self.facts.shared_per_thread and self.dynamic and threads != self._threads:
            dynamic = round(self.dynamic * threads / self._threads)
        r = _resident(self.report.arch, self.report.input_model, threads, dynamic, self.wgp)
        if r <= 0:
            return None
        return Candidate(block, grid, dynamic, r)

    @property
    def _threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    def current(self) -> Candidate | None:
        assert self.grid is not None
        now = self.candidate(self.block, self.grid)
        return replace(now, tile=self.facts.tile) if now and self.facts.tile else now

    def all(self, elements: float) -> list[Candidate]:
        if self.facts.tile and self.facts.loop == "per-element":
            return self._tiles(elements)
        if _required(self.report):
            return []
        wave, top = self.wave, self.max_block
        out: list[Candidate | None] = []
        two_d = self.block[1] > 1 or bool(self.grid and self.grid[1] > 1)
        if self.facts.loop == "grid-stride" and not two_d:
            blocks = [w * wave for w in LOOP_WARPS if w * wave <= top]
            for b in blocks:
                for f in LOOP_GRID_FACTORS:
                    out.append(self.candidate((b, 1, 1), (f * self.units, 1, 1)))
        elif self.facts.loop == "block-stride":
            assert self.grid is not None
            for b in range(wave, top + 1, wave):
                out.append(self.candidate((b, 1, 1), self.grid))
        elif two_d:
            # a 2-D launch, a grid-stride loop's too (its rows and columns each stride by
            # the grid's: a 1-D launch would walk every row in each thread): the same
            # threads over the same rectangle, in blocks of another shape
            width = self.block[0] * (self.grid[0] if self.grid else 1)
            height = self.block[1] * (self.grid[1] if self.grid else 1)
            for x in ROW_THREADS:
                for y in (1, 2, 4, 8, 16, 32):
                    if x * y % wave or x * y > top:
                        continue
                    out.append(self.candidate((x, y, 1), (-(-width // x), -(-height // y), 1)))
        else:
            for b in range(wave, top + 1, wave):
                out.append(self.candidate((b, 1, 1), (math.ceil(elements / b), 1, 1)))
        return [c for c in out if c is not None and self._valid(c)]

    def _valid(self, cand: Candidate) -> bool:
        """Whether the kernel can run in ``cand``'s block: its launch bound allows the
        block's threads, its static shared arrays hold them along x, its element index
        steps by the launch's width where it is written for it (BLOCK_PINNED), and a tree
        over the block sums them all (a power of two) where it halves the block."""
        x = cand.block[0]
        if width_pinned(self.facts) and x != self.block[0]:
            return False
        # (BLOCK_AS_IS and BLOCK_PINNED, the negative limits: the launch's own)
        limit_x, limit_y = (self.block[axis] if limit < 0 else limit
                            for axis, limit in enumerate((self.facts.block_limit,
                                                          self.facts.block_limit_y)))
        if (limit_x and x > limit_x) or (limit_y and cand.block[1] > limit_y):
            return False
        if self.facts.max_threads and cand.threads > self.facts.max_threads:
            return False  # past its launch bound: the launch would fail
        return not self.facts.pow2_block or x & (x - 1) == 0

    def _tiles(self, elements: float) -> list[Candidate]:
        """A tile kernel's configurations: tiles x warps (``elements``: its threads now,
        each doing tile / threads of the kernel's elements)."""
        now = self.facts.tile / self._threads  # elements per thread now
        if now < 1:
            return []
        total = elements * now
        # the registers a thread's elements hold: its loads and stores, 4 bytes each
        per_element = ((self.facts.load_bytes or 0) + (self.facts.store_bytes or 0)) / 4 / now
        model = self.report.input_model
        regs = getattr(model, "registers", None)  # NVIDIA's; AMD's kept as they are
        out = []
        for warps in TILE_WARPS:
            threads = warps * self.wave
            if threads > self.max_block:
                continue
            for k in TILE_PER_THREAD:
                m = model if regs is None else replace(model, registers=min(
                    255, math.ceil(regs + (k - now) * per_element)))
                r = _resident(self.report.arch, m, threads, self.dynamic, self.wgp)
                if r > 0:
                    tile = threads * k
                    out.append(Candidate((threads, 1, 1), (math.ceil(total / tile), 1, 1),
                                         self.dynamic, r, tile, k / now))
        return out


def _work(report: Any, facts: Facts, space: _Space, dm: DeviceModel, current: Candidate,
          seconds: float | None, k: Constants | None = None
          ) -> tuple[float, str | None, tuple[float, float] | None]:
    """The launch's elements, what was assumed to get them (None: nothing), and the least
    and most a loop's traced time allows where it leaves them open (None: it settles
    them, or there is no trace)."""
    launch = report.launch
    if not facts.loops:
        if launch.problem_size:
            return float(launch.problem_size), None, None
        return float(current.threads * current.blocks), None, None
    config = current.config(space.wave)
    n = elements_for(dm, facts, config, seconds, k) if seconds else None
    if n:
        return n, None, None
    if launch.problem_size:
        return float(launch.problem_size), None, None
    if seconds:
        # what the model predicts besides the work (atomics, block starts) already takes
        # the traced time: it allows one element per thread to what a time TRACE_ERROR
        # longer holds; the middle of that span (in log) is read
        least = float(current.threads * current.blocks)
        most = max(elements_for(dm, facts, config, seconds * (1 + TRACE_ERROR), k) or least,
                   least)
        return math.sqrt(least * most), (
            "the work per launch: what the model predicts besides it (atomics, block "
            f"starts) already takes the traced time, which allows {least:,.0f} (one element "
            f"per thread) to {most:,.0f} elements; assumed {math.sqrt(least * most):,.0f}"
        ), (least, most)
    return ASSUMED_ELEMENTS, ("the work per launch (no traced time, no problem size): "
                              f"assumed {ASSUMED_ELEMENTS:,.0f} elements"), None


def _least_regret(dm: DeviceModel, scenarios: tuple[Scenario, ...],
                  cands: list[Candidate], current: Candidate) -> Candidate:
    """The candidate whose worst ratio to each scenario's fastest candidate is least (the
    launch as it is where none is less; ties to the one nearest it): the advice where the
    work is unknown within a span, which no one reading of it should choose."""
    times = [_price(dm, scenarios, c)[1] for c in cands]
    fastest = [min(t[i].total for t in times) for i in range(len(scenarios))]
    best = current
    worst = max(sc.now.total / f for sc, f in zip(scenarios, fastest, strict=True))
    for cand, t in zip(cands, times, strict=True):
        ratio = max(b.total / f for b, f in zip(t, fastest, strict=True))
        if ratio < worst - 1e-12 or (ratio < worst + 1e-12
                                     and _nearness(cand, current) < _nearness(best, current)):
            best, worst = cand, ratio
    return best


def _loop_device(report: Any, facts: Facts, units: int, dm: DeviceModel, seconds: float
                 ) -> tuple[DeviceModel, DeviceModel | None]:
    """The device model a loop whose work is read from its traced time is priced on, and
    the other where the trace cannot settle between them (None: it can). As if the L2
    kept nothing (:func:`_dram`) unless the work so read is small enough for it to keep
    some and, read with what it keeps, moves the time (the time's elasticity in the work
    at least WELL_READ); where the work so read fits the L2 at all, how much of its data
    the L2 held is the trace's unknown."""
    space = _Space(report, facts, units)
    current = space.current()
    dram = _dram(dm)
    if current is None or not dm.l2_kept_curve:
        return dram, None
    config = current.config(space.wave)
    n = elements_for(dram, facts, config, seconds)
    if not n or not timing.l2_kept(dm, facts, n):
        return dram, None
    n = elements_for(dm, facts, config, seconds)
    if n:
        grown = predict(dm, facts, config, n * 1.1).total / seconds
        if math.log(grown) / math.log(1.1) >= WELL_READ:
            return dm, dram
    return dram, dm


@lru_cache(maxsize=32)
def _dram(dm: DeviceModel) -> DeviceModel:
    """The device as if its L2 kept nothing of a launch's data, for a loop whose work is
    read from its traced time: how much of it the L2 held is then unknown, and at the
    L2's rate a time its fixed costs or atomics fill allows too little work (a block per
    row of 1,024-thread blocks read as 71 busy threads a row; a grid-stride loop's atomics
    taking 99.9 % of its time left its loads at the L2's, its advice 40 % slower)."""
    return replace(dm, l2_kept_curve=())


def band_scale(gain: float) -> float:
    """The scale of the model's error about a predicted saving ``gain``: s (1 - s) +
    BAND_FLOOR, the floor alone for a reading that predicts no saving or a loss (s (1 - s)
    turns negative there and would turn the band over: the low end above the gain)."""
    return max(gain * (1 - gain), 0.0) + BAND_FLOOR


def _range(gain: float, spread: float) -> tuple[float, float]:
    """The predicted saving widened by the model's error (a derived device's more)."""
    lo, hi = BAND
    scale = band_scale(gain) * (1 + spread)
    return gain + lo * scale, gain + hi * scale


@dataclass(frozen=True, slots=True)
class Scenario:
    """One reading of the kernel's facts (the source's, or one of SCENARIOS), its work and
    the predicted time of the launch as it is."""

    facts: Facts
    wave: int
    elements: float
    now: Breakdown
    k: Constants | None = None  # the model's reading (None: its constants as they are)
    # seconds of the launch the model does not see and no configuration moves (atomics to
    # addresses the data picks): added to every configuration's time
    stays: float = 0.0


def _nearness(cand: Candidate, current: Candidate) -> tuple[float, bool, bool]:
    """How far ``cand`` is from what the model knows best and from the launch as it is:
    its threads' distance (in doublings) from MEASURED_BLOCK's, then whether it changes
    the block, the grid."""
    return (abs(math.log2(cand.threads / MEASURED_BLOCK)), cand.block != current.block,
            cand.grid != current.grid)


def _price(dm: DeviceModel, scenarios: tuple[Scenario, ...], cand: Candidate
           ) -> tuple[list[float], list[Breakdown]]:
    times = [predict(dm, _scaled(sc.facts, cand.per_thread), cand.config(sc.wave),
                     sc.elements / cand.per_thread, sc.k) for sc in scenarios]
    return [1 - (t.total + sc.stays) / sc.now.total
            for t, sc in zip(times, scenarios, strict=True)], times


def _scaled(facts: Facts, m: float) -> Facts:
    """A thread's facts when it does ``m`` times its work (a tile's elements per thread):
    its loads, stores and arithmetic, each element's an independent chain."""
    if m == 1.0:
        return facts
    return replace(facts, load_bytes=(facts.load_bytes or 0) * m,
                   store_bytes=(facts.store_bytes or 0) * m, fma=(facts.fma or 0) * m,
                   math=tuple((name, n * m) for name, n in facts.math),
                   chains=max(1, round(facts.chains * m)))


def launched_as(launch: Plan, current: Candidate) -> Plan:
    """``launch``'s plan with the launch as it is read as ``current`` (the same block and
    grid with other resident blocks: another reading of the kernel's registers), each
    scenario's time predicted again; what it prices is then against that reading."""
    scenarios = tuple(replace(sc, now=predict(launch.device, sc.facts, current.config(sc.wave),
                                              sc.elements, sc.k))
                      for sc in launch.scenarios)
    return replace(launch, current=current, now=scenarios[0].now, scenarios=scenarios)


def gains(launch: Plan, cand: Candidate) -> list[float]:
    """What moving the launch to ``cand`` saves in each of the plan's scenarios, as the
    model predicts it (no band)."""
    return _price(launch.device, launch.scenarios, cand)[0]


def price(launch: Plan, cand: Candidate) -> Saving:
    """What moving the launch to ``cand`` saves, as the model predicts it (a range over the
    scenarios, widened by the model's error): for any configuration a rule names."""
    gains, times = _price(launch.device, launch.scenarios, cand)
    lo, _ = _range(min(gains), launch.device.spread)
    _, hi = _range(max(gains), launch.device.spread)
    known = launch.facts is not None  # without the source, from no saving up (as plan's)
    return Saving(max(0.0, lo) if known else 0.0, max(0.0, min(1.0, hi)),
                  _basis(launch.scenarios[0].now, times[0], 1 if known else 2))


def variant(report: Any, launch: Plan, block: int | None = None, grid: int | None = None,
            dynamic: int | None = None) -> Candidate | None:
    """The launch with another 1-D block, grid or dynamic shared memory (what a rule's own
    suggestion names); a one-element-per-thread launch's grid follows its block."""
    cur = launch.current
    b = (block, 1, 1) if block else cur.block
    threads = b[0] * b[1] * b[2]
    g = (grid, 1, 1) if grid else cur.grid
    if block and not grid and not (launch.scenarios and launch.scenarios[0].facts.loops):
        g = (math.ceil(cur.threads * cur.blocks / threads), 1, 1)
    d = cur.dynamic_shared if dynamic is None else dynamic
    res = report.kernel.resources
    r = _resident(report.arch, report.input_model, threads, d, getattr(res, "wgp_mode", None))
    return Candidate(b, g, d, r) if r > 0 else None


def plan(report: Any, seconds: float | None = None) -> Plan | None:
    """The model's plan for ``report``'s launch (``seconds``: its traced mean duration)."""
    if report.occupancy is None or not report.block_size:
        return None
    known = report.launch.known_facts
    if not report.launch.blocks_split_work and not (known and known.loop == "block-stride"):
        return None  # every block does the same work: another grid, or (with no loop over
        # the block) another block, does other work
    dm = launch_model(report.device)
    units = report.device.scheduling_units(getattr(report, "wgp_mode", True)) \
        if report.device else None
    block, grid = _dims(report)
    if dm is None or not units or (grid is None and not report.launch.problem_size):
        return None
    facts = report.launch.known_facts
    known = facts is not None
    readings = (facts,) if known else SCENARIOS
    unsettled = None  # the device model of the reading the trace cannot settle
    if seconds and not report.launch.problem_size and readings[0].loops:
        dm, unsettled = _loop_device(report, readings[0], units, dm, seconds)
    unknown: list[str] = []
    if not known:
        unknown.append("what each thread loads, stores and computes (no source of this "
                       "kernel in the run): the range spans memory- to compute-bound")
    if dm.basis != "measured":
        unknown.append(f"the device's behaviour, derived from its specifications ({dm.name})")
    scenarios, first, current, span = [], None, None, None
    for f in readings:
        space = _Space(report, f, units)
        if grid is None:
            space.grid = (math.ceil(report.launch.problem_size / block[0]), 1, 1)
        current = space.current()
        if current is None:
            return None
        elements, assumed, span = _work(report, f, space, dm, current, seconds)
        if assumed:
            unknown.append(assumed)
        now = predict(dm, f, current.config(space.wave), elements)
        off = now.total / seconds if seconds and not f.loops else 1.0
        if not known and not AGREE[0] <= off <= AGREE[1]:
            unknown.append(f"a reading of {f.load_bytes:g} bytes and {f.fma:g} FMAs per "
                           "element: its time is far from the traced one")
            continue  # a reading the trace contradicts
        if known and off < UNSEEN and not f.atomics_data:
            return None  # its source shows too little of its work to price any other launch
        scenarios.append(Scenario(f, space.wave, elements, now))
        if seconds and not AGREE[0] <= off <= AGREE[1]:
            # the kernel's own facts, and still the model misses the traced time: where it
            # errs is unknown; the saving spans the model's and the one over the trace's
            # time (the error all in the launch as it is, none in the advice)
            # atomics to addresses the data picks queue as the data has it: a time the
            # model does not see that stays in every configuration
            stays = f.atomics_data > 0 and off < 1
            unknown.append(f"the model predicts {now.total * 1e6:,.1f} us for the launch as "
                           f"it is, {off:.1f}x the traced {seconds * 1e6:,.1f} us: the range "
                           "spans its saving and " + (
                               "the saving over the traced time, the rest of which its "
                               "atomics to addresses the data picks may take" if stays else
                               "the saving over the traced time"))
            scenarios.append(Scenario(f, space.wave, elements, replace(now, total=seconds),
                                      stays=seconds - now.total if stays else 0.0))
        if first is None:  # every reading has the same loop: the same configurations
            first = space
    if not scenarios:
        return None  # no reading of the kernel the model has agrees with its traced time
    assert current is not None and first is not None
    fixed = tuple(scenarios)
    # the configuration whose worst ratio to the launch as it is, over the scenarios, is
    # least (with the source: the fastest)
    best, best_gains, best_times = current, [0.0] * len(fixed), [sc.now for sc in fixed]
    # without the source, dynamic shared memory may be a tile that follows the block: a
    # block of other threads with the traced bytes could run slower or past its tile
    if known and facts.max_threads and facts.max_threads < first.max_block:
        unknown.append(f"blocks past its launch bound of {facts.max_threads} threads: not "
                       "advised (they need the bound raised and a recompile, which changes "
                       "its registers)")
    keep_block = not known and bool(first.dynamic)
    if keep_block:
        unknown.append("whether its dynamic shared memory follows the block (a tile; the "
                       "trace cannot tell): the block stays as it is")
    cands = [c for c in first.all(scenarios[0].elements)
             if not (keep_block and c.block != current.block)]
    # a loop whose work the trace leaves open: its span's ends price the advice, and the
    # least worst ratio to the fastest at the ends and the middle chooses it
    ends = () if not known or span is None else tuple(
        Scenario(facts, first.wave, n, predict(dm, facts, current.config(first.wave), n))
        for n in span)
    if ends:
        unknown.append("where in that span the work lies: the advice is the configuration "
                       "least slower than the fastest at its ends and middle, its range "
                       "spans them")
        best = _least_regret(dm, (fixed[0], *ends), cands, current)
        fixed += ends
        best_gains, best_times = _price(dm, fixed, best)
    else:
        for cand in cands:
            gains, times = _price(dm, fixed, cand)
            gain, top = min(gains), min(best_gains)
            # the model's equals (a loop's time set by its threads, however they are
            # blocked): the one nearest the blocks its curves were measured in, then the
            # one changing less of the launch as it is
            if gain > top + 1e-12 or (gain > top - 1e-12
                                      and _nearness(cand, current) < _nearness(best, current)):
                best, best_gains, best_times = cand, gains, times
    saving = None
    if best != current and min(best_gains) >= (MIN_GAIN if known else MIN_GAIN_UNKNOWN):
        # readings the trace cannot settle: they price the advice, they do not choose it
        for other, why in ((_atomics_beside(report, facts, first, dm, current, seconds),
                            "whether the atomics wait for the work or drain beside it (the "
                            "trace cannot tell): the range spans both"),
                           (_not_unrolled(report, facts, first, dm, current, seconds),
                            "whether the compiler unrolls its loop (its index's type is "
                            "not one occlint knows): the range spans both")):
            if other is not None:
                fixed += (other,)
                gains, _ = _price(dm, (other,), best)
                best_gains = [*best_gains, *gains]
                unknown.append(why)
        if unsettled is not None and known:
            # priced on the other device reading only (the plan's own scenarios keep
            # its device)
            gains, _ = _price(unsettled, (_reading(report, facts, first, unsettled, current,
                                                   seconds),), best)
            best_gains = [*best_gains, *gains]
            unknown.append("how much of its data the L2 held from the launch before (its "
                           "work, read from its traced time, small enough for the L2 to "
                           "hold): the range spans both")
        lo, _ = _range(min(best_gains), dm.spread)
        _, hi = _range(max(best_gains), dm.spread)
        # without the source its arithmetic's chains, its loop and its bytes are guesses:
        # the saving may be none
        saving = Saving(max(0.0, lo) if known else 0.0, min(1.0, hi),
                        _basis(fixed[0].now, best_times[0], 1 if known else len(readings)))
    else:
        best, best_times = current, [sc.now for sc in fixed]
    return Plan(dm, facts,
                fixed[0].elements if known else None, current, best, fixed[0].now,
                best_times[0], saving, tuple(dict.fromkeys(unknown)), fixed, keep_block,
                _static_in_sum(report, facts))


def _static_in_sum(report: Any, facts: Facts | None) -> int:
    """The kernel's static shared bytes where the trace gave only static and dynamic's sum
    (Kineto's "shared memory") and no binary gave the static part; else 0."""
    res = report.trace.group.key.resources if report.trace is not None else None
    if res is None or facts is None or not facts.static_shared:
        return 0
    from occlint.model.launch import NvLaunchResources  # (loaded with the trace's reader)

    if not isinstance(res, NvLaunchResources) \
            or res.shared_total is None or res.static_shared is not None \
            or getattr(report.kernel.resources, "shared_bytes", 0):
        return 0
    return min(facts.static_shared, res.shared_total)


def _reading(report: Any, facts: Facts, space: _Space, dm: DeviceModel, current: Candidate,
             seconds: float | None, k: Constants | None = None) -> Scenario:
    """Another reading of the launch as it is: its work solved again with ``facts`` and
    the model's constants ``k``, and its predicted time."""
    elements, _, _ = _work(report, facts, space, dm, current, seconds, k)
    return Scenario(facts, space.wave, elements,
                    predict(dm, facts, current.config(space.wave), elements, k), k)


def _not_unrolled(report: Any, facts: Facts | None, space: _Space, dm: DeviceModel,
                  current: Candidate, seconds: float | None) -> Scenario | None:
    """A loop's other reading where its source does not say whether the compiler unrolls
    it (the model's own reading: unrolled, as the curves' loops were): one element's loads
    a pass. None: not a loop, or known."""
    if facts is None or not facts.loops or facts.unroll is not None:
        return None
    return _reading(report, replace(facts, unroll=1), space, dm, current, seconds)


def _atomics_beside(report: Any, facts: Facts | None, space: _Space, dm: DeviceModel,
                    current: Candidate, seconds: float | None) -> Scenario | None:
    """A kernel's other reading where its atomics hold a large share of its traced time: the
    atomics drain beside the work rather than after it, so the work the trace implies is
    more (a loop's is solved from its time: where the atomics alone nearly fill it, what
    is left for the work is the least certain part); the blocks' reductions after them
    likewise (measured added to a loop of one load an element, two-thirds hidden beside
    two: docs/validation.md). None: no atomics, or they and the reductions hold under
    ATOMICS_SHARE of the time as it is."""
    if facts is None or not facts.atomics:
        return None
    other = _reading(report, facts, space, dm, current, seconds,
                     replace(timing.CONSTANTS, atomics_beside=True))
    held = other.now.atomics + other.now.reductions
    return other if held >= ATOMICS_SHARE * other.now.total else None


def _basis(now: Breakdown, fast: Breakdown, readings: int) -> str:
    if readings > 1:
        return ("launch-time model over memory- to compute-bound readings of the kernel "
                "(no source: from no saving up)")
    return (f"launch-time model: {now.binding}-bound now ({now.total * 1e6:,.1f} us), "
            f"{fast.total * 1e6:,.1f} us advised")
