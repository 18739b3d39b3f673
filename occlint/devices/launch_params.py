"""Each device's launch-model parameters (occlint.judgement.timing.DeviceModel).

Measured devices are entries of device_db/launch_model.toml (benchmarks/gpu/characterize.py
on the device). Every other device with a bandwidth and a clock in the product table gets
each parameter derived from its specifications and the measured reference's (the H100):

* bandwidth curves: the reference's, bandwidth scaled by the datasheet bandwidth ratio,
  bytes in flight by the ratio of bandwidth per SM / CU (Little's law at the reference's
  latency); the most one unit draws, likewise;
* block start rate: the reference's per unit and per clock, times units and clock;
* FMA rate: the reference's share of its peak (SMs x FP32 lanes x clock), times the
  device's peak (``[lanes]``); the warps at half rate as the reference's;
* atomics and a block's reduction tree: the reference's ns / us, per clock; launch floor
  and costs: the reference's (they are the host's and the driver's as much as the chip's).

A derived device's ranges are widened by ``DERIVED_SPREAD`` of the saving.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from occlint.devices.db import _db_root
from occlint.devices.models import AmdArch, Device
from occlint.tomlfile import read_shipped_toml

REFERENCE = "NVIDIA H100 80GB HBM3 (SXM5)"
DERIVED_SPREAD = 0.5


Curve = tuple[tuple[float, float], ...]  # (bytes in flight per SM, GB/s), X ascending


class LaunchParamsError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class DeviceModel:
    """A device's launch-time parameters (device_db/launch_model.toml)."""

    name: str
    basis: str  # "measured" or "derived"
    source: str
    sms: int
    read_curve: Curve  # DRAM reads: GB/s against bytes of loads in flight per SM
    copy_curve: Curve  # DRAM copies (read + write traffic) against loads in flight per SM
    sm_bandwidth_gbs: float  # the most one SM draws
    block_rate: float  # blocks started per second, whole chip (blocks up to 512 threads)
    block_rate_1024: float  # ... of 1024 threads
    fma_per_s: float  # FP32 FMAs per second, whole chip, at best
    # the FP32 FMA rate over the FP64 one (2 on data-centre GPUs, 32-64 on others)
    fp64_ratio: float
    half_rate_warps: float  # resident warps per SM (one dependent FMA chain each) at which
    # an SM issues half its peak: rate = peak * w / (w + half_rate_warps)
    atomic_one_ns: float  # one atomicAdd to a single address, serialised
    atomic_spread_ns: float  # per atomicAdd when each block has its own address
    floor_us: float  # the shortest kernel's duration
    stream_launch_us: float  # back-to-back launches in a stream, per launch
    graph_node_us: float  # per node of a CUDA graph
    spread: float = 0.0  # how much wider a derived device's ranges are (share)
    l2_curve: Curve = ()  # L2 reads: GB/s against bytes in flight per SM (a 16 MiB set)
    # the share of a launch's data the L2 keeps from the launch before, against the
    # launch's bytes read and written over the L2's size (l2_bytes); () where not measured
    # (nothing kept: every byte DRAM's)
    l2_kept_curve: Curve = ()
    l2_bytes: float = 0.0
    # a copy's gain when the L2 keeps all of its data (cold time over warm; its writes
    # gain less than the L2's read curve over DRAM's); 0 where not measured (the read
    # curves' gain)
    l2_copy_gain: float = 0.0
    latency_ns: float | None = None  # one thread's dependent loads over 1 GiB
    # one element per thread (a copy): GB/s against the resident threads' bytes of loads
    # per SM; () where not measured (the copy curve stands in)
    element_curve: Curve = ()
    # a grid-stride copy's bandwidth in many waves of blocks over one wave, against the
    # waves (1 wave: 1.0); () where not measured
    wave_curve: Curve = ()
    # the same with one block resident per SM (more waves lose); () where not measured
    wave_curve_one: Curve = ()
    # FP32 FMA issue: share of the peak against resident warps per SM x independent chains
    # each, in steady waves; measured, not used by the model (docs/validation.md: tried in
    # place of half_rate_warps' curve, it advised worse on the fit halves)
    issue_curve: Curve = ()
    # atomicAdd to each block's own address: ns per atomic against threads per block (more
    # threads, more atomics on each address); () where not measured (atomic_spread_ns)
    atomic_block_curve: Curve = ()
    # a block's reduction tree in shared memory (a barrier each halving): us it adds to the
    # block's lifetime, against threads per block; measured, not used by the model
    # (docs/validation.md: as a cost per wave it advised the block-reduce family worse)
    reduce_curve: Curve = ()
    # ns of the chip's time a block's tree (or scan) over its threads in shared memory
    # costs, a barrier a step, when such trees are what the SMs do (blocks of one element
    # per thread), against threads per block; () where not measured (not priced)
    tree_curve: Curve = ()
    # ... the same after a grid-stride loop: ns of the chip's time each more block ending in
    # a tree costs a loop over 256 MB (reduce_stream: the slope of its time over the
    # blocks); () where not measured (the tree curve's)
    loop_tree_curve: Curve = ()
    # ... and each more block ending in a sum by warp shuffles through shared memory (a
    # barrier; reduce_stream's sum_shfl_*); () where not measured (not priced)
    loop_sum_curve: Curve = ()
    # a block per row: us a pass over its row costs the block (a load's wait from DRAM and
    # a block's sum by warp shuffles; the wait is priced by the memory term too:
    # timing._row_passes), two blocks per SM, against threads per block; () where not
    # measured
    pass_curve: Curve = ()
    # us the shuffle sum alone adds (two barriers); measured, not used by the model (a
    # pass's cost holds it)
    warp_reduce_curve: Curve = ()
    # a block per row's second read of its row: the share of its bytes the SM's cache
    # serves, against the resident blocks' bytes of rows per SM; () where not measured
    reread_curve: Curve = ()
    # ns an SM's L1 takes per 128-byte line a warp's request touches (a table the caches
    # hold, read by many threads); 0 where not measured (such loads then count as DRAM's)
    l1_line_ns: float = 0.0
    # ns each word of a set every block adds to (a privatised histogram's flush) queues
    # for one block's atomic; 0 where not measured (such atomics not priced)
    atomic_set_ns: float = 0.0
    # ns an integer atomicMax / atomicMin request on one address takes (a warp's lanes
    # merge into one request); 0 where not measured (atomic_one_ns an atomic)
    atomic_max_ns: float = 0.0
    # 2-D blocks: a copy's bandwidth over the same copy's in rows of the whole block,
    # against the bytes a block's row holds, of 4- and 16-byte elements; measured, not
    # used by the model (docs/validation.md: in place of its rows' sectors and row_bytes
    # the advice tied and the band refitted narrower warned a calibration pair)
    row_curve: Curve = ()
    row_curve_16: Curve = ()
    # random 4-byte gathers from DRAM: GB/s of the 32-byte sectors they move (a lane's
    # own sector each; flat in the block); 0 where not measured (sectors stream as the
    # read curve has it)
    gather_gbs: float = 0.0
    # FP32 FMAs' issue a call of each single-precision math function costs (expf, tanhf,
    # ...; characterize.py math_ops); () where not measured (such calls cost nothing)
    math_fma: tuple[tuple[str, float], ...] = ()


@cache
def _table() -> tuple[dict[str, DeviceModel], dict[str, int], dict[str, float]]:
    path = _db_root() / "launch_model.toml"
    data = read_shipped_toml(path, LaunchParamsError)
    out = {}
    for entry in data.get("device", []):
        e = dict(entry)
        for key in ("read_curve", "copy_curve", "l2_curve", "l2_kept_curve", "element_curve",
                    "atomic_block_curve", "issue_curve", "wave_curve", "wave_curve_one",
                    "reduce_curve", "tree_curve", "loop_tree_curve", "loop_sum_curve", "row_curve",
                    "row_curve_16", "pass_curve", "warp_reduce_curve", "reread_curve"):
            e[key] = tuple((float(x), float(y)) for x, y in e.get(key, ()))
        e["math_fma"] = tuple(sorted((str(k), float(v))
                                     for k, v in dict(e.get("math_fma", {})).items()))
        out[e["name"]] = DeviceModel(**e)
    return out, dict(data.get("lanes", {})), dict(data.get("fp64", {}))


def _fp64_ratio(device: Device, table: dict[str, float]) -> float:
    """The FP32 FMA rate over the FP64 one of the device's architecture (the table's entry
    for its SM, its gfx processor, or the processor's family), else the data-centre 2."""
    arch = device.arch
    if isinstance(arch, AmdArch):
        name = arch.name
        for key in (name, name[:-1] + "x", name[:-2] + "xx"):
            if key in table:
                return float(table[key])
        return float(table.get("amd", 2.0))
    return float(table.get(arch.name, 2.0))


def _lanes(device: Device, lanes: dict[str, int]) -> int | None:
    if isinstance(device.arch, AmdArch):
        return lanes.get("amd")
    return lanes.get(device.arch.name)


def launch_model(device: Device | None) -> DeviceModel | None:
    """The device's parameters: measured, derived, or None (no bandwidth or clock known)."""
    if device is None or not device.compute_units:
        return None
    measured, _, _ = _table()
    found = measured.get(device.name)
    if found is not None:
        return found
    return _derived(device)


def reference_model() -> DeviceModel:
    """The measured device that the others are derived from (:data:`REFERENCE`)."""
    return _table()[0][REFERENCE]


@cache
def _derived(device: Device) -> DeviceModel | None:
    measured, lanes, fp64 = _table()
    ref = measured[REFERENCE]
    bw, clock, units = device.memory_bandwidth_gbs, device.max_clock_mhz, device.compute_units
    ref_device_bw, ref_clock = 3352.0, 1980.0
    lane = _lanes(device, lanes)
    if not bw or not clock or not units or not lane:
        return None
    scale_bw = bw / ref_device_bw
    scale_x = (bw / units) / (ref_device_bw / ref.sms)
    clock_ratio = clock / ref_clock

    def curve(c: tuple[tuple[float, float], ...]) -> tuple[tuple[float, float], ...]:
        return tuple((round(x * scale_x, 1), round(y * scale_bw, 1)) for x, y in c)

    def chip_ns(c: Curve) -> Curve:
        """The chip's ns a block: an SM's time over the SMs, at its clock."""
        return tuple((x, y * ref.sms / units / clock_ratio) for x, y in c)

    ref_peak = ref.sms * lanes["sm_90"] * ref_clock * 1e6
    return DeviceModel(
        name=device.name, basis="derived",
        source=f"derived from {device.name}'s specifications and the {ref.name} measured "
               f"(device_db/launch_model.toml)",
        sms=units, read_curve=curve(ref.read_curve), copy_curve=curve(ref.copy_curve),
        # the L2 against the reference's: its reads scaled as DRAM's, what it keeps of a
        # launch's data the same share of its own size
        l2_curve=curve(ref.l2_curve), l2_kept_curve=ref.l2_kept_curve,
        l2_copy_gain=ref.l2_copy_gain,
        l2_bytes=(device.l2_kib or 0) * 1024,
        element_curve=curve(ref.element_curve), wave_curve=ref.wave_curve,
        wave_curve_one=ref.wave_curve_one, row_curve=ref.row_curve,
        row_curve_16=ref.row_curve_16, gather_gbs=ref.gather_gbs * scale_bw,
        sm_bandwidth_gbs=ref.sm_bandwidth_gbs * scale_x,
        block_rate=ref.block_rate / ref.sms * units * clock_ratio,
        block_rate_1024=ref.block_rate_1024 / ref.sms * units * clock_ratio,
        fma_per_s=ref.fma_per_s / ref_peak * units * lane * clock * 1e6,
        fp64_ratio=_fp64_ratio(device, fp64),
        half_rate_warps=ref.half_rate_warps, issue_curve=ref.issue_curve,
        atomic_one_ns=ref.atomic_one_ns / clock_ratio,
        atomic_spread_ns=ref.atomic_spread_ns / clock_ratio,
        atomic_block_curve=tuple((x, y / clock_ratio) for x, y in ref.atomic_block_curve),
        reduce_curve=tuple((x, y / clock_ratio) for x, y in ref.reduce_curve),
        tree_curve=chip_ns(ref.tree_curve), loop_tree_curve=chip_ns(ref.loop_tree_curve),
        loop_sum_curve=chip_ns(ref.loop_sum_curve),
        # a pass's wait is mostly DRAM's latency, kept; its reduction follows the clock
        pass_curve=ref.pass_curve, reread_curve=ref.reread_curve,  # the SM's cache's
        l1_line_ns=ref.l1_line_ns / clock_ratio, atomic_set_ns=ref.atomic_set_ns / clock_ratio,
        atomic_max_ns=ref.atomic_max_ns / clock_ratio,
        math_fma=ref.math_fma,  # an SM's special-function units against its FMA lanes
        warp_reduce_curve=tuple((x, y / clock_ratio) for x, y in ref.warp_reduce_curve),
        floor_us=ref.floor_us, stream_launch_us=ref.stream_launch_us,
        graph_node_us=ref.graph_node_us, spread=DERIVED_SPREAD)

