"""The launch-time model: how long a launch takes on a device, from the device's measured
behaviour and the kernel's facts (issue 28; the equations are in docs/validation.md).

A launch of ``B`` blocks of ``b`` threads, ``r`` of them resident per SM, over ``N``
elements takes

    T = T_floor + ( T'^e + ( T_memory^m + T_ends^m ) ^ (e/m) ) ^ (1/e),
    T' = ( T_rest^q + T_after^q ) ^ (1/q) + T_atomics + T_reductions,
    T_rest = ( T_work^s + T_starts^s ) ^ (1/s) + T_idle

* ``T_work``: the blocks' waves, each the slower of its memory time (bytes over the
  bandwidth the SMs' bytes in flight draw: the measured curve of bandwidth against bytes
  in flight per SM, one element per thread's own curve for short blocks; a loop's loads
  in flight as the compiler keeps them, HOIST_*_BYTES and DEPTH_EXP; a body's stores
  as its mix of reads and writes; a grid-stride
  loop's split into each warp's 128-byte requests, a partial warp's too) and its
  arithmetic (FMAs, a double's at the FP64 rate, and the per-element instructions over the
  rate the resident warps
  issue at; its loops' control takes issue slots, not the chain); a grid-stride or
  block-stride loop runs whole waves of equal blocks, so its last, partial wave runs with
  what it has in flight, and its memory draws the device's measured gain of many waves
  over one;
* ``T_starts``: blocks start at a fixed rate (measured: the same for 32- and 512-thread
  blocks); the dispatcher runs beside the SMs, so the time keeps near the larger of the
  work and the starts (``s``, :data:`STARTS_P`, above the work's own ``p``);
* ``T_idle``: a grid-stride loop's blocks past its last element start after the working
  ones and exit at once: their starts add (measured: loop_empty); ``T_starts`` is the
  working blocks';
* ``T_atomics``: atomics to one address serialise (measured ns per atomic), after the
  work that feeds them: they add to the rest; atomics to each block's own address cost
  what the device measured at the block's threads (more threads, more on one address);
  one element per thread each with an atomic on one address streams them beside the
  blocks' starts and loads instead (their p-norm with ``T_rest``, the overlap's p);
* ``T_ends``: a block's one atomic on one address after its work queues beside the other
  blocks' work, and the loads to its L2 slice behind it (``e``, :data:`BLOCK_ATOMICS_P`;
  ``m``, :data:`QUEUE_MEMORY_P`; both measured); no such atomics, no such term;
* ``T_reductions``: a block's tree or sum over its threads costs the chip what the device
  measured a block (the tree curve; after a loop the loop tree and loop sum curves);
* ``T_after``: a thread's atomic to one address after its loop waits for that loop only:
  those drain partly while other threads still work (``q``: between adding, 1, and the
  overlap's p);
* ``T_floor``: the shortest kernel's duration.

Everything device-specific is a :class:`DeviceModel` (device_db/launch_model.toml: measured
on an H100 and an H200, derived from the specifications for the rest). Nothing here knows
a rule; :mod:`occlint.judgement.fastest` searches the configurations.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from functools import lru_cache

from occlint.devices.launch_params import Curve, DeviceModel
from occlint.model.facts import OWN_LINES, Facts

# the per-element instructions besides the FMAs a body names (address arithmetic, the
# loads and stores, the bounds check or loop step), in warp instructions; and the p of the
# p-norm that overlaps the terms. Both fitted on the "fit" half of the held-out suite
# (benchmarks/gpu/heldout/fit.py), never on the half they are scored on.
OVERHEAD_INSTRUCTIONS = 12.0
OVERLAP_P = 4.0
# ... and the p that overlaps the blocks' work with their starts (the dispatcher runs
# beside the SMs' pipes and the memory: the time keeps nearer the larger of the two),
# fitted the same way
STARTS_P = 8.0
# a block keeps its slots until its last warp ends: each wave of short blocks (one
# element per thread) ends with a tail of STRAGGLERS x a load's latency x ln(busy warps
# per block / ELEMENT_WARPS): the element curve is the characterisation's blocks of up to
# 8 warps (device_params.ELEMENT_BLOCK); bigger blocks straggle more (its threads with no
# element exit at once)
STRAGGLERS = 0.7
ELEMENT_WARPS = 8
# ... and so does a loop's block, a block per row's or a grid-stride loop's, ending with its
# slowest warp: the whole tail for blocks of up to TAIL_PASSES passes of their loop, whose
# resident blocks start and end together; past them, that share of it (a long block's
# warps drift apart and the SM's other blocks, mid-loop, draw the bandwidth while its
# stragglers end). Measured: the copies of row_ragged and row_long (rows of 1 to 63
# passes, blocks of 3 to 32 warps) are predicted within 6.6 % on average with it, 9.2 %
# without; 1.5 passes to none is within 0.1 % of that (tests/test_row_tail.py); a
# grid-stride copy in 1,024-thread blocks of two elements a thread (loop_empty) 35 % fast
# without it, 21 % with it
TAIL_PASSES = 2.0
# a 2-D block's row of b bytes costs as b + ROW_BYTES would (one more request per row)
ROW_BYTES = 8.0
# the loads a pass of the characterisation's loops holds: each written with one load a
# pass and unrolled four times by the compiler (device_params.loads_per_pass, from its
# PTX); the bandwidth curves' X counts one, as a kernel's source does
CURVE_UNROLL = 4
# the bytes a copy's curve counts (read and written) per byte its loads hold in flight
COPY_TRAFFIC = 2.0
# a loop's loads in flight, as compiled (benchmarks/gpu/loop_depth.py on the H200: the
# SASS and times of the held-out generator's loop bodies, one and two loads of a float or
# a float4, with and without a store, unrolled and not, at 1 to 32 warps an SM). The bytes
# of loads a thread holds in flight at most, however far its loop is unrolled: a body
# that stores issues three 16-byte loads before its first store (a float4 body's four
# unrolled loads: three, a store, the fourth; two float4 loads an element: two elements,
# a store, one more); one that only reads issues all its loads, yet two float4 loads an
# element (eight in flight) drew no more than one. And a loop holding fewer than the
# curves' four draws more than that share of their bandwidth (one: a third, not a
# quarter): the share to the power DEPTH_EXP. The three: those whose predictions of the
# 108 timed launches err least on average (caps in steps of 8 bytes, the power of 0.05)
HOIST_STORE_BYTES = 40.0
HOIST_READ_BYTES = 48.0
DEPTH_EXP = 0.9
# atomics after a thread's loop partly drain while other threads still work: they join the
# rest of the time as a p-norm of this p (1: they wait for all of it; 4, the overlap's p:
# they drain beside it). The least error over the fit halves' grid-stride kernels ending
# in an atomic, with their true work (benchmarks/gpu/heldout/fit.py atomics_overlap)
ATOMICS_OVERLAP_P = 1.5
# a block's one atomic on one address, after its work, joins the rest of the launch as a
# p-norm of this p: the least mean error over characterize.py's block_reduce rows (a tree
# over each block ending in a store or in an atomicAdd on one address, H200 twice),
# device_params.block_atomics_p (p 1, adding them, erred by 41 % on average)
BLOCK_ATOMICS_P = 16.0
# ... and joins the launch's memory as a p-norm of this p: the least mean error over
# characterize.py's reduce_stream rows (a grid-stride sum of 256 MB whose blocks end in a
# tree and an atomicAdd on one address, against the same ending in a store, where that
# store's launch is memory-bound), device_params.queue_memory_p
QUEUE_MEMORY_P = 2.0


@dataclass(frozen=True, slots=True)
class Constants:
    """The model's free constants (above), fitted on the held-out suite's "fit" half; and a
    reading the trace cannot settle: whether the atomics wait for the work and add to it
    (``atomics_beside`` False, the model's) or drain beside other threads' work (True)."""

    overhead: float = OVERHEAD_INSTRUCTIONS
    p: float = OVERLAP_P
    stragglers: float = STRAGGLERS
    row_bytes: float = ROW_BYTES
    atomics_p: float = ATOMICS_OVERLAP_P
    starts_p: float = STARTS_P
    atomics_beside: bool = False


@dataclass(frozen=True, slots=True)
class Config:
    """A launch configuration: threads per block, blocks, resident blocks per SM."""

    block: int
    grid: int
    resident: int  # blocks per SM at once (the vendor's occupancy)
    row: int = 0  # threads along x of a 2-D block (0: a 1-D block)
    wave: int = 32  # threads per warp / wavefront

    @property
    def warps(self) -> int:
        return -(-self.block // self.wave)

    @property
    def across(self) -> int:
        """A warp's lanes along x (a 2-D block's row, or the whole warp)."""
        return min(self.row or self.block, self.wave)

    def column_efficiency(self, element: float) -> float:
        """Share of what a warp moves that is its data where its accesses are consecutive
        along y and strided along x (a column-major image read by x): each of the warp's
        x lanes reads its own run of wave / x elements, in whole 32-byte sectors (a 1-D
        block: every lane its own sector)."""
        size = min(max(element, 1.0), 16.0)  # a lane's access: a vector's at most
        run = -(-self.wave // self.across) * size
        return self.wave * size / (self.across * -(-run // 32) * 32)

    def row_efficiency(self, element: float, row_bytes: float) -> float:
        """Share of what a 2-D block's rows move that is its data: rows of ``element``-byte
        loads use whole 32-byte sectors, and each row is a request of its own."""
        if not self.row:
            return 1.0
        width = self.row * max(element, 1.0)
        return width / (-(-width // 32) * 32) / (1 + row_bytes / width)


@dataclass(frozen=True, slots=True)
class Breakdown:
    """A predicted time (seconds) and its terms."""

    total: float
    memory: float
    compute: float
    starts: float
    atomics: float
    reductions: float = 0.0  # the blocks' trees and sums over their threads

    @property
    def binding(self) -> str:
        terms = {"memory": self.memory, "compute": self.compute, "block starts": self.starts,
                 "atomics": self.atomics, "block reductions": self.reductions}
        return max(terms, key=lambda k: terms[k])


@lru_cache(maxsize=64)
def _xs(curve: Curve) -> tuple[float, ...]:
    return tuple(p[0] for p in curve)


def bandwidth(curve: Curve, x: float) -> float:
    """GB/s at ``x`` bytes in flight per SM: linear in between the measured points, through
    the origin below the first (Little's law), flat past the last."""
    if x <= 0:
        return 0.0
    if x <= curve[0][0]:
        return curve[0][1] * x / curve[0][0]
    return _along(curve, x)


def _along(curve: Curve, x: float) -> float:
    """A measured curve's value at ``x`` past its first point: linear in log x between its
    points, flat past the last."""
    i = bisect.bisect_left(_xs(curve), x)
    if i >= len(curve):
        return curve[-1][1]
    (x0, y0), (x1, y1) = curve[i - 1], curve[i]
    return y0 + math.log(x / x0) / math.log(x1 / x0) * (y1 - y0)


def _peak_issue(dm: DeviceModel, wave: int) -> float:
    """Warp instructions per second one SM issues at best."""
    return dm.fma_per_s / dm.sms / wave


def _knee_latency(dm: DeviceModel, facts: Facts) -> float:
    """A load's latency where the bandwidth curve first reaches 90 % of its plateau (past
    it, what more in flight adds is queueing, not work)."""
    return _knee(dm, (facts.store_bytes or 0) > 0)


@lru_cache(maxsize=64)
def _knee(dm: DeviceModel, stores: bool) -> float:
    curve = dm.copy_curve if stores else dm.read_curve
    top = _top(curve)
    x = next(x for x, y in curve if y >= 0.9 * top)
    return dm.sms * x / (bandwidth(curve, x) * 1e9)


@lru_cache(maxsize=16384)
def _drawn(dm: DeviceModel, stores: bool, active: float, loads: float, chain: float,
           short: bool = False, writes: float = 1.0, kept: float = 0.0
           ) -> tuple[float, float]:
    """(bytes per second, a load's latency) of ``active`` SMs whose resident threads load
    ``loads`` bytes per element and then compute for ``chain`` seconds: their loads are in
    flight while they wait, latency / (latency + chain) of the time; the latency grows
    with what is in flight (three steps of the fixed point). ``short``: blocks of one
    element per thread, which draw what the device's element curve measured (their
    ramps and tails in it) where it was measured; loops draw the read or copy curve.
    ``writes``: bytes stored per byte loaded (a copy's 1; two loads and a store 0.5; a
    widening store, a char4 read and a float4 written, 4): the loads in flight bring what
    a copy's would (Little's law) and the stores follow them, so the traffic in flight is
    the copy curve's at (1 + writes) / 2 of the loads, and its plateau the DRAM's for that
    mix of reads and writes (:func:`_plateau`). ``kept``: the share of the
    launch's data the L2 holds from the launch before (:func:`l2_kept`): those bytes come
    at the L2's rate, its read curve's over DRAM's at the same bytes in flight (a copy's
    no more than the measured copy's gain), and wait its latency (Little's law)."""
    curve = dm.element_curve if short and dm.element_curve else \
        dm.copy_curve if stores else dm.read_curve

    # Little's law on the curve: a load's latency is the bytes in flight over the rate they
    # arrive at; a copy's GB/s (the copy and element curves) counts its writes too, twice
    # the bytes its loads bring, a kernel's 1 + writes times them
    reads = curve is dm.read_curve
    traffic = 1.0 if reads else 1 + writes
    scale = 1.0 if reads or writes == 1.0 else _plateau(dm, writes) / _top(dm.copy_curve)

    def drawn_at(x: float) -> float:
        if reads:
            return bandwidth(curve, x)
        return bandwidth(curve, x * traffic / COPY_TRAFFIC) * scale

    def latency_at(x: float) -> float:
        x = max(x, curve[0][0])
        return traffic * dm.sms * x / (drawn_at(x) * 1e9)

    latency = latency_at(loads)
    in_flight = loads
    for _ in range(3):
        in_flight = loads * latency / (latency + chain)
        latency = latency_at(in_flight)
    x = active * in_flight / dm.sms
    chip = min(drawn_at(x), active * dm.sm_bandwidth_gbs)
    if kept > 0 and dm.l2_curve:
        gain = max(1.0, bandwidth(dm.l2_curve, x) / bandwidth(dm.read_curve, x))
        if stores and dm.l2_copy_gain:
            gain = min(gain, dm.l2_copy_gain)  # a copy's writes gain less (measured)
        chip /= 1 - kept + kept / gain
        latency *= 1 - kept + kept / gain
    return chip * 1e9, latency


@lru_cache(maxsize=256)
def _plateau(dm: DeviceModel, writes: float) -> float:
    """GB/s of reads and writes at DRAM's plateau for ``writes`` bytes written per byte
    read: a byte read costs what the read curve's plateau says, a byte written what a
    copy's plateau leaves after its reads (a copy's 1: the copy curve's own plateau)."""
    read, copy = _top(dm.read_curve), _top(dm.copy_curve)
    return (1 + writes) / (1 / read + writes * (COPY_TRAFFIC / copy - 1 / read))


@lru_cache(maxsize=64)
def _top(curve: Curve) -> float:
    return max(y for _, y in curve)


def _wave(dm: DeviceModel, facts: Facts, cfg: Config, blocks: float, per_thread: float,
          iterations: float, k: Constants, busy: float | None = None, gain: float = 1.0,
          kept: float = 0.0) -> tuple[float, float, float]:
    """(time, memory, compute) of ``blocks`` resident blocks, their threads doing
    ``per_thread`` elements on average in ``iterations`` passes of the body.

    A thread's loads are in flight while it waits for them, not while it computes: the
    bytes in flight per SM are the resident threads' loads times the share of an element's
    time spent waiting (latency over latency plus the dependent chain of its arithmetic)."""
    active = min(blocks, dm.sms)
    per_sm = blocks / active
    threads = cfg.block if busy is None else busy  # a block's threads that have elements
    warps = -(-threads // cfg.wave)
    load, store = (facts.load_bytes or 0.0) - facts.cached_bytes, facts.store_bytes or 0.0
    if facts.reread_bytes and dm.reread_curve:
        # a block per row's later passes find its row in the SM's cache while the resident
        # blocks' rows fit (measured): those loads move no DRAM bytes
        rows = per_sm * threads * per_thread * facts.reread_row_bytes
        load -= facts.reread_bytes * _at(dm.reread_curve, rows)
    # double precision's share of the multiply-adds issues at the FP64 pipe's rate
    fma = (facts.fma or 0.0) * (1.0 + facts.fp64 * (dm.fp64_ratio - 1.0))
    arithmetic = fma + (_math_fma(dm, facts.math) if facts.math else 0.0)
    instructions = arithmetic + k.overhead
    peak = _peak_issue(dm, cfg.wave)
    # seconds an element's dependent chain takes: the issue rate's hyperbola, peak x w /
    # (w + half_rate_warps), read at one warp of one chain
    chain = instructions * dm.half_rate_warps / peak / facts.chains
    # ... and what of it keeps the loads out of flight: the curves' kernels spend the
    # per-element overhead between their loads too (measured: a copy loop of the held-out
    # shape draws its curve's bandwidth at 1 to 32 warps, loop_depth.py)
    waits = arithmetic * dm.half_rate_warps / peak / facts.chains
    mem = latency = 0.0
    if load + store > 0:
        # accesses a warp does not make to consecutive elements move more than they use:
        # their bytes in flight and their time count what moves
        element = store or facts.load_bytes or 0.0  # an access's bytes, as written
        irregular = facts.column_bytes + facts.scattered_bytes
        moved = 1.0 if not irregular else (
            load + store - irregular + facts.column_bytes / cfg.column_efficiency(element)
            + facts.scattered_sectors * _gather_cost(dm)) / (load + store)
        # a block per row holds one pass's loads in flight at a time, whatever the cache
        # serves of the later ones
        held = (facts.load_bytes or 0.0) / facts.passes if facts.passes > 1 else load
        # a warp's loads of a byte or two a thread are one sector: what they hold in flight
        # is their bytes (zoo set 22's unsigned char image); a kernel that only stores
        # holds a word a thread
        held = max(held, 1.0) if held > 0 else 4.0
        loads = per_sm * threads * held * moved
        # a loop the compiler unrolls less than the curves' loops (CURVE_UNROLL) holds
        # fewer elements' loads a pass: that share of their X, and its wait for them set
        # against that share of the pass's chain
        # ... nor more than the compiler keeps in flight (HOIST_*_BYTES)
        depth = 1.0
        if facts.unroll and iterations > 1:
            hoist = HOIST_STORE_BYTES if store > 0 else HOIST_READ_BYTES
            depth = (min(facts.unroll, CURVE_UNROLL, max(1.0, hoist / held))
                     / CURVE_UNROLL) ** DEPTH_EXP
        writes = store / held
        bw, latency = _drawn(dm, store > 0, active, loads * depth, waits * depth,
                             iterations <= 1, writes, kept)
        if iterations > 1 and dm.element_curve:
            # a thread's first element is a short block's (the element curve: the block's
            # ramp in it), the rest the loop's: a few elements per thread, a block per
            # short row, are mostly the first
            first, _ = _drawn(dm, store > 0, active, loads, waits, True, writes, kept)
            bw = 1 / (1 / (iterations * first) + (1 - 1 / iterations) / bw)
        mem = blocks * threads * per_thread * (load + store) * moved / bw / gain \
            / cfg.row_efficiency(element, k.row_bytes)
        if iterations > 1 and facts.loop == "grid-stride":
            mem /= _request_efficiency(threads, cfg.wave, load, store)
    if facts.cached_loads and dm.l1_line_ns:
        # a table many threads read is the caches': the SM's L1 serves each warp's request
        # a line at a time (measured), beside DRAM's bytes
        lines = sum(weight * _lines(cfg, stride, down, size)
                    for stride, down, size, weight in facts.cached_loads)
        l1 = per_sm * warps * per_thread * lines * dm.l1_line_ns * 1e-9
        mem = _pnorm((mem, l1), k.p)
    busiest = math.ceil(per_sm - 1e-9)
    # warp instructions over that hyperbola, split in its two terms: every instruction's
    # issue slot, and each thread's chains one after another (a loop's control issues
    # beside the chain)
    issued = busiest * warps * iterations * (instructions + facts.control)
    cmp = issued / peak + iterations * chain
    # short blocks of one element per thread end with their slowest warp: a block of more
    # warps than the element curve's holds its slots longer, a share of a load's latency
    # each wave: DRAM's, whose loads straggle; what the L2 keeps does not (measured:
    # 1,024-thread blocks as fast as 256-thread ones on copies the L2 holds, 19 % slower on
    # those it does not: short_launches); a loop's blocks end so too, less as their passes
    # grow (TAIL_PASSES)
    tail = 0.0
    if mem and warps > ELEMENT_WARPS:
        tail = min(latency, _knee_latency(dm, facts)) * k.stragglers * math.log(
            warps / ELEMENT_WARPS) * (1 - kept)
        if iterations > 1:
            # a block ending in a tree or shuffle sum after its loop waits for its last
            # warp at the barrier: the loop tree and sum curves measured that wait
            tail *= 0.0 if facts.trees or facts.sums else min(1.0, TAIL_PASSES / iterations)
    # a block per row's reductions stop its every thread: they add to the wave
    return _pnorm((mem, cmp), k.p) + tail + _row_passes(dm, facts, cfg.block), mem, cmp


@lru_cache(maxsize=1024)
def _math_fma(dm: DeviceModel, calls: tuple[tuple[str, float], ...]) -> float:
    """FP32 FMAs' issue an element's math function calls cost (measured: math_fma; a
    function the device was not measured for costs nothing)."""
    if not dm.math_fma:
        return 0.0
    costs = dict(dm.math_fma)
    return sum(n * costs.get(name, 0.0) for name, n in calls)


def _row_passes(dm: DeviceModel, facts: Facts, block: int) -> float:
    """Seconds a block per row's reductions add to a wave: a pass ending in a block's
    reduction waits for its last load and then for the reduction, every thread of the
    block at its barriers (measured: the slope of a wave's time over passes of a load from
    DRAM and a reduction by warp shuffles); the SM's other blocks, doing the same, hide
    none of it. A pass that ends in no barrier streams into the next as a loop does. The
    slope holds the load's wait, which the wave's memory term prices too (row_phases is
    over-predicted 1.3-1.9x); readings that count it once fit the calibration kernels
    better and advised worse on kernels they were not built on (docs/validation.md,
    "The zoo's sets 9 and 10"), so it stays."""
    if not facts.reductions or not dm.pass_curve:
        return 0.0
    return facts.reductions * _at(dm.pass_curve, block) * 1e-6


def _at(curve: Curve, x: float) -> float:
    """A measured curve's value at ``x``, flat past its ends (0 where none)."""
    if not curve:
        return 0.0
    return _along(curve, max(x, curve[0][0]))


def _lines(cfg: Config, stride: int, down: bool, size: float) -> float:
    """The 128-byte lines a warp's request touches: its lanes along x read the same word
    (``stride`` 0), words ``stride`` elements apart, or each a line of its own among
    ``-stride`` (a table's lines, picked alike: the expected count of distinct ones); its
    rows along y the same words, or each row its own (``down``)."""
    lanes = cfg.across
    rows = cfg.wave // lanes if cfg.row else 1
    if stride < 0:
        table = -stride
        across = lanes if table >= OWN_LINES else table * (1 - (1 - 1 / table) ** lanes)
    else:
        across = 1 if stride == 0 else math.ceil(lanes * stride * min(size, 16.0) / 128)
    return across * (rows if down else 1)


@lru_cache(maxsize=16)
def _gather_cost(dm: DeviceModel) -> float:
    """What a byte of scattered sectors costs against a streamed one: the read curve's
    plateau over the measured random-gather bandwidth (1 where none was measured)."""
    if not dm.gather_gbs:
        return 1.0
    return max(1.0, max(y for _, y in dm.read_curve) / dm.gather_gbs)


def _request_efficiency(threads: int, wave: int, load: float, store: float) -> float:
    """Share of a grid-stride loop's memory requests that a block of whole warps would need:
    each warp's access is split into 128-byte requests however few of its lanes have
    threads (a 100-thread block's fourth warp, 4 lanes, one request like a full one).
    Measured: characterize.py block_alignment (H200), 100-thread blocks 1.36-1.48x the
    time of 96-thread ones on a 4-byte copy (requests: 1.28x), 1.11-1.20x on an 8-byte one
    (1.12x)."""
    full, rest = divmod(threads, wave)
    need = used = 0.0
    for size in (load, store):
        if size <= 0:
            continue
        width = min(size, 16.0)  # bytes an access moves per lane (a vector's at most)
        per_warp = math.ceil(wave * width / 128)
        need += threads * width / 128
        used += full * per_warp + (math.ceil(rest * width / 128) if rest else 0)
    return need / used if used else 1.0


def wave_gain(dm: DeviceModel, waves: float, resident: int = 8) -> float:
    """What a loop's memory draws in ``waves`` waves of blocks over one wave: the device's
    measured curve (a grid-stride copy, 1 to 64 waves of 8 resident blocks; with one block
    resident per SM its own curve, 1 to 80 waves, where more waves lose), log-linear in
    the waves, 1 up to one wave, flat past the last point; 1 where none was measured."""
    curve = dm.wave_curve_one if resident == 1 and dm.wave_curve_one else dm.wave_curve
    if not curve or waves <= curve[0][0]:
        return 1.0
    return _along(curve, waves)


def _pnorm(xs: tuple[float, ...], p: float) -> float:
    top = max(xs)
    if top <= 0:
        return 0.0
    return top * sum((x / top) ** p for x in xs) ** (1 / p)


CONSTANTS = Constants()


def predict(dm: DeviceModel, facts: Facts, cfg: Config, elements: float,
            k: Constants | None = None) -> Breakdown:
    """The time of one launch of ``cfg`` over ``elements`` elements (seconds)."""
    k = k or CONSTANTS
    S, B, b = dm.sms, max(cfg.grid, 1), max(cfg.block, 1)
    r = max(cfg.resident, 1)
    threads = B * b
    per_thread = elements / threads
    kept = l2_kept(dm, facts, elements)
    working = B
    if facts.loops:
        # fewer elements than threads: a grid-stride loop's blocks past the last element
        # exit at once (they only start); a block-stride loop's rows leave threads idle
        busy = None
        if per_thread < 1 and facts.loop == "grid-stride":
            working = max(1, math.ceil(elements / b))
            per_thread = elements / (working * b)
        elif per_thread < 1:
            busy, per_thread = max(per_thread * b, 1.0), 1.0
        capacity = S * r
        full, rest = divmod(working, capacity)
        gain = wave_gain(dm, working / capacity, r)
        work = mem = cmp = 0.0
        if full:
            t, m, c = _wave(dm, facts, cfg, capacity, per_thread, per_thread, k, busy, gain,
                            kept)
            work, mem, cmp = full * t, full * m, full * c
        if rest:
            t, m, c = _wave(dm, facts, cfg, rest, per_thread, per_thread, k, busy, gain, kept)
            work, mem, cmp = work + t, mem + m, cmp + c
    else:  # one element per thread: short blocks, dispatched as others finish
        resident = min(r, B / S)
        waves = B / min(B, S * resident)  # fewer blocks than SMs: one wave
        t, mem, cmp = _wave(dm, facts, cfg, min(B, S * resident), per_thread, 1.0, k,
                            kept=kept)
        work, mem, cmp = waves * t, waves * mem, waves * cmp
    rate = dm.block_rate_1024 if b > 512 else dm.block_rate
    starts = B / rate
    ns, merged = dm.atomic_one_ns * 1e-9, 1
    if facts.atomics_max and dm.atomic_max_ns:
        # an integer max / min: a warp's lanes on one address are one request (measured)
        ns, merged = dm.atomic_max_ns * 1e-9, cfg.wave
    after = (threads * facts.atomics_one_thread / merged
             + B * cfg.warps * facts.atomics_one_warp) * ns
    # one element per thread, each with an atomic on one address: the L2 takes them at its
    # rate as the threads reach them, beside the blocks' starts and loads (measured: an
    # atomicMax a thread, 0.40 ms of atomics and 0.16 ms of starts, took 0.40 ms); a
    # loop's atomics per element queue behind its passes
    per_element = elements * facts.atomics_one / merged  # atomics
    streamed = 0.0 if facts.loops else per_element * ns
    one = (per_element if facts.loops else 0.0) * ns
    # a block's one atomic on one address (its thread 0's, after the block's work) queues at
    # the L2 while other blocks work: the launch takes about the larger of the queue and
    # the rest (measured: BLOCK_ATOMICS_P)
    ends = B * facts.atomics_one_block * ns
    # a set of words every block adds to: each word's queue holds one atomic a block
    one += B * facts.atomics_set * dm.atomic_set_ns * 1e-9
    # a tree (or scan) over each block's threads in shared memory, a barrier a step: short
    # blocks doing them keep the SMs at them (measured: tree_curve); after a grid-stride
    # loop each block's tree, or its sum by warp shuffles, costs what reduce_stream
    # measured a block (loop_tree_curve, loop_sum_curve)
    reductions = 0.0
    if facts.trees:
        curve = dm.loop_tree_curve if facts.loops and dm.loop_tree_curve else dm.tree_curve
        reductions += B * facts.trees * _at(curve, b) * 1e-9
    if facts.sums and facts.loops:
        reductions += B * facts.sums * _at(dm.loop_sum_curve, b) * 1e-9
    spread = _block_atomics(dm, facts, cfg, threads)
    # atomics on one address queue at one L2 slice: they add to the time (all of them wait
    # for each other); so do those to each block's own address, queued at the L2 the loads
    # go through. A thread's atomic after its loop waits for that loop only: those drain
    # while other threads still work (the atomics' p, measured on such kernels)
    atomics = after + one + spread + streamed + ends
    # a grid-stride loop's blocks past its last element start after the working ones (the
    # dispatcher hands blocks out in order) and exit at once: their starts follow the work
    # rather than overlap it (measured: loop_empty, a copy in up to ten times more threads
    # than elements, took its work's time and then an empty kernel's of those blocks)
    idle = (B - working) / rate
    rest = _pnorm((_pnorm((work, working / rate), k.starts_p) + idle, streamed), k.p)
    if k.atomics_beside:
        total = _pnorm((rest, after + one + spread + reductions), k.p)
    else:
        total = _pnorm((rest, after), k.atomics_p) + one + spread + reductions
    if ends:
        # ... and the loads to its L2 slice wait behind it: the queue joins the launch's
        # memory as a p-norm of QUEUE_MEMORY_P, its arithmetic and trees run beside it
        total = _pnorm((total, _pnorm((mem, ends), QUEUE_MEMORY_P)), BLOCK_ATOMICS_P)
    total += dm.floor_us * 1e-6
    return Breakdown(total, mem, cmp, starts, atomics, reductions)


def l2_kept(dm: DeviceModel, facts: Facts, elements: float) -> float:
    """The share of a launch's data the L2 holds from the launch before: the device's
    measured share at the launch's bytes read and written over the L2's size (a small
    tensor a previous kernel wrote, or this kernel's own inputs launched again); 0 where
    not measured or the bytes are unknown."""
    if not dm.l2_kept_curve or not dm.l2_bytes:
        return 0.0
    footprint = elements * ((facts.load_bytes or 0.0) + (facts.store_bytes or 0.0))
    if footprint <= 0:
        return 0.0
    return _at(dm.l2_kept_curve, footprint / dm.l2_bytes)


def _block_atomics(dm: DeviceModel, facts: Facts, cfg: Config, threads: int) -> float:
    """Seconds the atomics to each block's own address take: the device's measured cost
    of one such atomic at the block's threads (more threads, more atomics queued on each
    address: 0.023 ns an atomic in 32-thread blocks, 0.2 ns in 1,024-thread ones on an
    H100), log-log between the measured block sizes."""
    if not facts.atomics_block:
        return 0.0
    return threads * facts.atomics_block * _per_block_atomic_ns(dm, cfg.block) * 1e-9


def _per_block_atomic_ns(dm: DeviceModel, block: int) -> float:
    """ns per atomic to a block's own address at ``block`` threads (the measured curve,
    clamped to its ends; the one figure where none was measured)."""
    curve = dm.atomic_block_curve
    if not curve:
        return dm.atomic_spread_ns
    xs = _xs(curve)
    i = bisect.bisect_left(xs, block)
    if i == 0:
        return curve[0][1]
    if i >= len(curve):
        return curve[-1][1]
    (x0, y0), (x1, y1) = curve[i - 1], curve[i]
    t = math.log(block / x0) / math.log(x1 / x0)
    return math.exp(math.log(y0) + t * math.log(y1 / y0))


def elements_for(dm: DeviceModel, facts: Facts, cfg: Config, seconds: float,
                 k: Constants | None = None) -> float | None:
    """The work (elements) a loop's launch must have done to take ``seconds``: the model
    solved backwards (the time grows with the elements). None: faster than the model's
    time for no work at all."""
    def time(n: float) -> float:
        return predict(dm, facts, cfg, n, k).total

    if time(1.0) >= seconds:
        return None
    # the time grows about linearly with the work: secant steps on (n, time), every other
    # step a bisection in log (a secant step alone crawls where another term hides the
    # work: the time hardly moves with it)
    lo, hi = 1.0, 1e6
    t_lo, t_hi = time(lo), time(hi)
    while t_hi < seconds and hi < 1e15:
        lo, t_lo, hi = hi, t_hi, hi * 64
        t_hi = time(hi)
    for step in range(80):
        n = lo + (seconds - t_lo) * (hi - lo) / (t_hi - t_lo) if t_hi > t_lo else 0.0
        if step % 2 or not lo < n < hi:
            n = math.sqrt(lo * hi)
        t = time(n)
        if abs(t - seconds) <= 1e-4 * seconds or hi / lo < 1 + 1e-6:
            return n
        if t < seconds:
            lo, t_lo = n, t
        else:
            hi, t_hi = n, t
    return math.sqrt(lo * hi)
