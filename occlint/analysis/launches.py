"""Launch groups read from traces -> device, resources, occupancy, waves, findings, time at stake.

Each :class:`~occlint.model.launch.LaunchGroup` becomes one :class:`LaunchReport`: the
device comes from the trace's own description (matched to the device database, or derived
from the described properties) unless ``--device`` names one; the resources come from the
trace, or from the binary holding the kernel when the run also read it (joined by name and
architecture; disagreements are reported). The kernel's occupancy is then computed by the
same vendor engines as for binaries, and the same rules run on the real grid and block.

Time at stake: each finding carries the fraction of its group's GPU time it says is lost
(:data:`LOST`), an upper-bound estimate in the manner of Nsight Compute's "estimated
speedup"; the group's time at stake is the largest of its findings' (they overlap).
"""

from __future__ import annotations

import itertools
import math
import operator
import re
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from occlint.analysis.kernels import (
    KernelReport,
    LaunchConfig,
    _product,
    analyse_kernel,
    most_blocks_per_unit,
)
from occlint.devices.db import DeviceDb, normalize
from occlint.devices.models import AmdArch, Device, NvArch, cubin_runs_on
from occlint.errors import OcclintError
from occlint.model.finding import Finding
from occlint.model.kernel import AmdResources, Kernel, NvResources
from occlint.model.launch import (
    AmdLaunchResources,
    LaunchCollector,
    LaunchGroup,
    NvLaunchResources,
    TraceDevice,
    in_start_order,
)
from occlint.occupancy import amd

# Launch overhead (LCH201): a burst is a run of short launches (each at most
# OVERHEAD_MAX_MEAN_NS) on one stream separated by gaps of at most BURST_GAP_NS; a longer
# kernel or gap ends it. It is reported when it has at least OVERHEAD_MIN_LAUNCHES launches
# and a mean gap of at least OVERHEAD_GAP_RATIO of their mean duration (a dispatch costs
# 5-10 µs: "HSA dispatch optimisation").
BURST_GAP_NS = 100_000.0
OVERHEAD_MIN_LAUNCHES = 20
OVERHEAD_MAX_MEAN_NS = 50_000.0
OVERHEAD_GAP_RATIO = 0.5
# the longest a burst's first OVERHEAD_MIN_LAUNCHES launches can take to start (1 µs over it:
# rounding of the times), when no launch on the stream outlasts the next
_BURST_REACH_NS = (OVERHEAD_MIN_LAUNCHES - 1) * (OVERHEAD_MAX_MEAN_NS + BURST_GAP_NS) + 1e3


@dataclass
class LaunchReport:
    """One launch group, analysed on one device: the subject of the kernel rules on its real
    grid and block (occlint.model.subject), through ``report`` when its occupancy is
    computable."""

    kind: ClassVar[str] = "launch"
    trace: str
    format: str
    group: LaunchGroup
    trace_device: TraceDevice | None
    device: Device | None
    device_source: str  # "trace", "database", "derived", "--device", "unknown"
    report: KernelReport | None  # None: occupancy not computable (message says why)
    resource_source: str  # "trace" or "binary"
    kernel_record: int | None = None  # index of the joined binary kernel's record
    mismatches: list[dict[str, Any]] = field(default_factory=list)
    message: str = ""
    waves: float | None = None
    tail_efficiency: float | None = None
    findings: list[Finding] = field(default_factory=list)
    advice: dict[str, Any] = field(default_factory=dict)
    owner: Any = None  # who can change it (occlint.judgement.owner.Owner), once judged
    design: dict[str, str] | None = None  # a deliberate design (occlint.judgement.design)
    plan: Any = None  # the launch-time model's plan (occlint.judgement.fastest), once judged
    stake_ns: float = 0.0  # of the group's kernel time (largest of its findings')
    idle_ns: float = 0.0  # GPU idle between launches (LCH201) attributed to this group

    def keep(self, findings: list[Finding]) -> None:
        self.findings = findings


# -- devices -----------------------------------------------------------------------------------
def match_device(td: TraceDevice, db: DeviceDb) -> tuple[Device | None, str]:
    """The database product a trace's device is, or one derived from its properties."""
    arch = _arch(td, db)
    named = None
    if td.name:
        for candidate in (td.name, re.sub(r"^(amd|nvidia)\s+", "", td.name, flags=re.I)):
            try:
                named = db.get(candidate)
                break
            except OcclintError:
                continue
    if named is not None and not named.arch_only and (arch is None or named.arch is arch) \
            and td.compute_units in (None, named.compute_units):
        return named, "database"
    if arch is None:
        if named is not None and not named.arch_only:
            return named, "database"
        return None, "unknown"
    same = [d for d in db.devices if d.arch is arch and d.compute_units == td.compute_units]
    key = normalize(td.name or "")
    close = [d for d in same if key and (normalize(d.name) in key or key in normalize(d.name)
                                         or any(normalize(a) in key for a in d.aliases))]
    if len(close) == 1 or (len(same) == 1 and not td.name):
        return (close or same)[0], "database"
    if td.compute_units is None:
        return db.arch_device(arch.name), "architecture"
    wgps = None
    if isinstance(arch, AmdArch) and arch.has_wgp:
        wgps = td.compute_units // arch.cus_per_wgp
    return Device(name=td.name or arch.name, vendor=arch.vendor, arch=arch,
                  compute_units=td.compute_units, wgps=wgps,
                  source="derived from the trace's device properties"), "derived"


def _arch(td: TraceDevice, db: DeviceDb) -> AmdArch | NvArch | None:
    if td.arch:
        if td.arch in db.amd_archs:
            return db.amd_archs[td.arch]
        match = re.fullmatch(r"sm_(\d+)[af]?", td.arch)
        if match:
            return db.nv_archs.get(f"sm_{match[1]}")
    if td.vendor == "amd":
        return amd_arch_from_properties(td, db)
    return None


def amd_arch_from_properties(td: TraceDevice, db: DeviceDb) -> AmdArch | None:
    """The gfx architecture of an AMD GPU described without it (Kineto on ROCm names it ""
    or "AMD Radeon Graphics" and gives no gcnArchName; an XSpace's GPU plane gives no name):
    HIP's major.minor (Kineto's computeMajor/Minor, the XSpace's compute_cap_major/minor) is
    the gfx number but its stepping (9.0: gfx900, gfx906, gfx908, gfx90a), so it is the one
    architecture of that major.minor whose known products have the described CU count."""
    p = td.properties
    major = p.get("computeMajor", p.get("compute_cap_major"))
    minor = p.get("computeMinor", p.get("compute_cap_minor"))
    if not isinstance(major, int) or not isinstance(minor, int) or td.compute_units is None:
        return None
    prefix = f"gfx{major}{minor}"
    archs = {d.arch for d in db.devices if isinstance(d.arch, AmdArch)
             and d.compute_units == td.compute_units and d.arch.name.startswith(prefix)
             and len(d.arch.name) == len(prefix) + 1
             and (td.wave_size is None or td.wave_size in d.arch.wave_sizes)}
    return archs.pop() if len(archs) == 1 else None


# -- joining with binaries ---------------------------------------------------------------------
def signature_key(name: str) -> str:
    """A demangled signature without the return type and whitespace ("void f(int *)" and
    "f(int*)" compare equal)."""
    text = name[5:] if name.startswith("void ") else name
    return "".join(text.split())


class BinaryIndex:
    """The run's binary kernels, by mangled name and by demangled signature."""

    def __init__(self) -> None:
        self.by_name: dict[str, list[tuple[int, Kernel]]] = {}

    def add(self, index: int, kernel: Kernel) -> None:
        for key in {kernel.name, signature_key(kernel.demangled)}:
            self.by_name.setdefault(key, []).append((index, kernel))

    def find(self, name: str, mangled: str | None, device: Device | None,
             block: int | None = None, res: Any = None) -> tuple[int, Kernel] | None:
        """The binary kernel a launch ran: by name and architecture, and among several of
        one name (a Triton cache holds a variant per autotuning configuration) the one whose
        launch bounds, registers and shared memory agree with the launch."""
        found = self.by_name.get(mangled or "") or self.by_name.get(name) \
            or self.by_name.get(signature_key(name))
        if not found:
            return None
        if device is not None:
            runs = []
            for index, kernel in found:
                if kernel.vendor != device.vendor:
                    continue
                if kernel.vendor == "nvidia" and isinstance(device.arch, NvArch):
                    if not kernel.ptx_only and cubin_runs_on(kernel.arch, device.arch.cc):
                        runs.append((index, kernel))
                elif kernel.arch == device.arch.name:
                    runs.append((index, kernel))
            found = runs
        if not found:
            return None
        return max(found, key=lambda item: _agreement(item[1], block, res))


def _agreement(kernel: Kernel, block: int | None, res: Any) -> int:
    """How many of a launch's facts a binary kernel agrees with (to choose among variants)."""
    score = 0
    r = kernel.resources
    hint = (kernel.launch_hint or {}).get("block")
    if block is not None and hint is not None:
        score += 2 if hint == block else 0
    if isinstance(r, NvResources):
        limit = _product(r.required_block) if r.required_block else r.max_block_size
        if block is not None and (limit is None or block <= limit):
            score += 1
        if isinstance(res, NvLaunchResources):
            if res.registers is not None and registers_agree(res.registers, r.registers):
                score += 2
            if res.shared_total is not None and res.shared_total >= r.shared_bytes:
                score += 1
    elif isinstance(r, AmdResources):
        if block is not None and block <= r.max_block_size:
            score += 1
        if isinstance(res, AmdLaunchResources) and res.lds_bytes is not None \
                and res.lds_bytes >= r.lds_bytes:
            score += 1
    return score


def registers_agree(traced: int, compiled: int) -> bool:
    """CUPTI (so Kineto, Nsight Systems and Nsight Compute) reports at least 16 registers
    per thread: ptxas's 10 or 12 read 16, 27 reads 27 (H100, CUDA 13)."""
    return traced in (compiled, max(compiled, 16), _round_up(compiled, 8))


def kernel_from_record(rec: dict[str, Any]) -> Kernel | None:
    """A Kernel rebuilt from its JSON record (for joining launches to binaries)."""
    r = rec.get("resources") or {}

    def tup(v):
        return tuple(v) if v else None

    try:
        if rec["vendor"] == "nvidia":
            res: AmdResources | NvResources = NvResources(
                registers=r["registers"], shared_bytes=r["shared_bytes"],
                local_bytes=r["local_bytes"], spill_instructions=r["spill_instructions"],
                max_block_size=r["max_block_size"], required_block=tup(r["required_block"]),
                min_blocks=r["min_blocks"], max_reg_count=r["max_reg_count"],
                cluster_dims=tup(r["cluster_dims"]), param_bytes=r["param_bytes"],
                barriers=r["barriers"], stack_bytes=r["stack_bytes"],
                crs_stack_bytes=r["crs_stack_bytes"], uses_recursion=r["uses_recursion"])
        else:
            res = AmdResources(
                vgpr=r["vgpr"], agpr=r["agpr"], vgpr_count=r["vgpr_count"],
                vgpr_alloc=r["vgpr_alloc"], sgpr=r["sgpr"], lds_bytes=r["lds_bytes"],
                scratch_bytes=r["scratch_bytes"], vgpr_spill=r["vgpr_spill"],
                sgpr_spill=r["sgpr_spill"], dynamic_stack=r["dynamic_stack"],
                max_block_size=r["max_block_size"], kernarg_bytes=r["kernarg_bytes"],
                wgp_mode=r["wgp_mode"], reqd_workgroup_size=tup(r["reqd_workgroup_size"]),
                workgroup_size_hint=tup(r["workgroup_size_hint"]),
                uniform_work_group_size=r["uniform_work_group_size"],
                vgpr_exact=r["vgpr_exact"], descriptor=r["descriptor"],
                uses_dynamic_lds=r["uses_dynamic_lds"])
        return Kernel(vendor=rec["vendor"], file=rec["file"], entry=rec["entry"],
                      name=rec["name"], arch=rec["arch"], target_id=rec["target_id"],
                      wavefront_size=rec["wavefront_size"], resources=res,
                      code_object_version=rec.get("code_object_version"),
                      _demangled=rec.get("demangled"))
    except (KeyError, TypeError):
        return None


# -- one group ---------------------------------------------------------------------------------
def _round_up(n: int, unit: int) -> int:
    return -(-n // unit) * unit


def _nv_kernel(group: LaunchGroup, trace: str, arch: NvArch, res: NvLaunchResources
               ) -> tuple[Kernel, int]:
    static = res.static_shared or 0
    if res.dynamic_shared is not None:
        dynamic = res.dynamic_shared
    else:  # Kineto: static + dynamic together; the occupancy depends only on the sum
        dynamic = max((res.shared_total or 0) - static, 0)
    kernel = Kernel(vendor="nvidia", file=trace, entry=None, name=group.key.mangled
                    or group.key.kernel, arch=arch.name, target_id=arch.name,
                    wavefront_size=arch.warp_size,
                    resources=NvResources(registers=res.registers or 0, shared_bytes=static,
                                          local_bytes=res.local_bytes or 0,
                                          spill_instructions=0, max_block_size=None,
                                          required_block=None, min_blocks=None,
                                          max_reg_count=None, cluster_dims=None,
                                          param_bytes=0, barriers=0))
    if group.key.mangled is None:
        kernel._demangled = group.key.kernel
    return kernel, dynamic


def _amd_kernel(group: LaunchGroup, trace: str, arch: AmdArch, wave: int,
                res: AmdLaunchResources) -> tuple[Kernel, int]:
    vgpr, agpr = res.vgpr or 0, res.agpr or 0
    combined = amd.combined_vgprs(arch, vgpr, agpr)
    if arch.unified_vgpr_file and agpr > 256:
        # rocprofiler-sdk on gfx90a/gfx94x (code_object.cpp arch_vgpr_count /
        # accum_vgpr_count): VGPRs = the descriptor's accum_offset, AGPRs = the allocated
        # unified total minus accum_offset, which passes 256 when few VGPRs precede the
        # AGPRs. The total is the allocation (at most 512); no AGPR count above 256 exists.
        agpr = 256
    kernel = Kernel(vendor="amd", file=trace, entry=None, name=group.key.mangled
                    or group.key.kernel, arch=arch.name, target_id=arch.name,
                    wavefront_size=wave,
                    resources=AmdResources(vgpr=vgpr, agpr=agpr, vgpr_count=combined,
                                           vgpr_alloc=combined, sgpr=res.sgpr or 0,
                                           lds_bytes=res.lds_bytes or 0,
                                           scratch_bytes=res.scratch_bytes or 0, vgpr_spill=0,
                                           sgpr_spill=0, dynamic_stack=False,
                                           max_block_size=arch.max_workgroup_size,
                                           kernarg_bytes=0))
    if group.key.mangled is None:
        kernel._demangled = group.key.kernel
    return kernel, 0


def _join(binary: Kernel, res: Any, arch) -> tuple[int, list[dict[str, Any]]]:
    """The dynamic shared memory / LDS of a launch of ``binary``, and what the trace says
    differently from the binary."""
    mismatches: list[dict[str, Any]] = []

    def differ(what: str, trace_value: Any, binary_value: Any, note: str = "") -> None:
        mismatches.append({"field": what, "trace": trace_value, "binary": binary_value,
                           "note": note})

    if isinstance(binary.resources, NvResources) and isinstance(res, NvLaunchResources):
        b = binary.resources
        if res.registers is not None and not registers_agree(res.registers, b.registers):
            differ("registers", res.registers, b.registers,
                   "CUPTI reports at least 16 registers per thread, else the binary's count")
        if res.static_shared is not None and res.static_shared != b.shared_bytes:
            differ("static_shared", res.static_shared, b.shared_bytes)
        if res.dynamic_shared is not None:
            return res.dynamic_shared, mismatches
        total = res.shared_total
        if total is None:
            return 0, mismatches
        if total < b.shared_bytes:
            differ("shared_total", total, b.shared_bytes,
                   "the trace's static + dynamic shared memory is below the binary's static")
            return 0, mismatches
        return total - b.shared_bytes, mismatches
    if isinstance(binary.resources, AmdResources) and isinstance(res, AmdLaunchResources):
        b = binary.resources
        if res.vgpr is not None and res.vgpr not in (b.vgpr, b.vgpr_alloc) and \
                res.vgpr != _round_up(b.vgpr, arch.regs(binary.wavefront_size)
                                      .vgpr_alloc_granule):
            differ("vgpr", res.vgpr, b.vgpr)
        if res.agpr is not None and res.agpr != b.agpr and b.agpr:
            differ("agpr", res.agpr, b.agpr)
        if res.scratch_bytes is not None and res.scratch_bytes != b.scratch_bytes:
            differ("scratch_bytes", res.scratch_bytes, b.scratch_bytes)
        if res.lds_bytes is None:
            return 0, mismatches
        if res.lds_bytes < b.lds_bytes:
            differ("lds_bytes", res.lds_bytes, b.lds_bytes,
                   "the trace's LDS per work-group is below the binary's static LDS")
            return 0, mismatches
        return res.lds_bytes - b.lds_bytes, mismatches
    differ("vendor", type(res).__name__, binary.vendor)
    return 0, mismatches


def analyse_group(group: LaunchGroup, collector: LaunchCollector, device: Device | None,
                  device_source: str, index: BinaryIndex | None, db: DeviceDb,
                  facts: dict[str, Any] | None = None,
                  embedded: Callable[[Kernel], Any] | None = None) -> LaunchReport:
    """One launch group on its device; ``facts``: its kernel's body and work kind from the
    run's sources (occlint.analysis.sites.launch_index), when they define it; ``embedded``:
    a binary's kernel -> the facts of the PTX that binary embeds (or None), asked when the
    launches join a binary of the run and the sources say nothing of the kernel."""
    key = group.key
    td = collector.devices.get(key.device)
    out = LaunchReport(collector.source, collector.format, group, td, device, device_source,
                       None, "trace")
    if device is None:
        out.message = ("unknown device: the trace does not describe it and --device names "
                       "none of its vendor (name it: --device a100, h100, mi300x, ...; "
                       "`occlint devices` lists them)")
        return out
    arch = device.arch
    res = key.resources
    joined = (index.find(key.kernel, key.mangled, device, _product(key.block), res)
              if index else None)
    if joined is not None:
        out.kernel_record, kernel = joined
        out.resource_source = "binary"
        dynamic, out.mismatches = _join(kernel, res, arch)
        if embedded is not None and not (facts or {}).get("facts"):
            found = embedded(kernel)
            if found is not None:
                facts = {**(facts or {}), "facts": found}
    elif isinstance(arch, NvArch) and isinstance(res, NvLaunchResources):
        kernel, dynamic = _nv_kernel(group, collector.source, arch, res)
        if res.registers is None:
            return _grid_only(out, kernel, dynamic, facts, "the trace gives no registers per "
                              "thread and no binary of this kernel was read")
    elif isinstance(arch, AmdArch) and isinstance(res, AmdLaunchResources):
        wave = (td.wave_size if td and td.wave_size in arch.wave_sizes
                else arch.default_wave_size)
        kernel, dynamic = _amd_kernel(group, collector.source, arch, wave, res)
        if res.vgpr is None:
            return _grid_only(out, kernel, dynamic, facts, "the trace gives no usable VGPR count "
                              "and no binary of this kernel was read")
    else:
        out.message = f"the trace's launch is not for a {device.vendor} device ({device.name})"
        return out
    launch = _launch_config(key, dynamic, facts)
    report = analyse_kernel(kernel, device, launch, db)
    if report.occupancy is not None:
        report.block_source = "trace"
        _set_waves(out, report, report.occupancy.blocks_per_cu
                   if isinstance(report.occupancy, amd.AmdOccupancy)
                   else report.occupancy.blocks_per_sm)
    else:
        out.message = report.message
    out.report = report
    return out


def _launch_config(key, dynamic: int, facts: dict[str, Any] | None) -> LaunchConfig:
    facts = facts or {}
    return LaunchConfig(block=_product(key.block), grid=_product(key.grid),
                        dynamic_lds=dynamic, body=facts.get("body"), work=facts.get("work"),
                        facts=facts.get("facts"), block_indexed=facts.get("block_indexed"),
                        thread_indexed=facts.get("thread_indexed"),
                        communicates=facts.get("communicates"))


def _grid_only(out: LaunchReport, kernel: Kernel, dynamic: int,
               facts: dict[str, Any] | None, why: str) -> LaunchReport:
    """A launch whose occupancy cannot be computed still has its block and grid on a known
    device: a report without occupancy (status ``no-registers``), for the rules that need
    nothing more (block vs wave size, grid vs units, oversubscription)."""
    device = out.device
    assert device is not None
    out.message = f"{why}: occupancy not computed; block and grid checked"
    out.report = KernelReport(kernel, device, device.arch, "no-registers", out.message,
                              block_size=_product(out.group.key.block), block_source="trace",
                              launch=_launch_config(out.group.key, dynamic, facts))
    out.report.blocks_per_unit_at_most = most_blocks_per_unit(out.report)
    if out.report.blocks_per_unit_at_most == 1:  # whatever the registers (block size, LDS)
        _set_waves(out, out.report, 1)
    return out


def _set_waves(out: LaunchReport, report: KernelReport, per_unit: int) -> None:
    """Waves of blocks (Nsight Compute's "Waves Per SM") and the tail efficiency."""
    units = report.device.scheduling_units(report.wgp_mode) if report.device else None
    if per_unit and units and report.launch.grid:
        waves = report.launch.grid / (per_unit * units)
        out.waves = waves
        out.tail_efficiency = waves / math.ceil(waves)


# -- launch overhead ---------------------------------------------------------------------------
def overhead_bursts(starts, durations, groups) -> list[dict[str, Any]]:
    """Runs of short launches with idle gaps comparable to their duration on one stream.

    Written with C-level iteration (map, sum over slices): a stream can hold a million
    launches."""
    n = len(starts)
    if n < OVERHEAD_MIN_LAUNCHES:
        return []
    starts, durations, groups = in_start_order(starts, durations, groups)
    ends = array("d", map(operator.add, starts, durations))
    # a launch ends the run before it when it is long, or starts long after the last end
    # (the running max of the ends: the previous end itself when no launch outlasts the next)
    gaps = array("d", [0.0])
    after = itertools.islice(starts, 1, None)
    if all(map(operator.le, ends, itertools.islice(ends, 1, None))):
        # then a burst's launches start at most MAX + GAP after the one before, so a stream
        # where no OVERHEAD_MIN_LAUNCHES launches start within that reach holds none
        ahead = itertools.islice(starts, OVERHEAD_MIN_LAUNCHES - 1, None)
        if not any(map(_BURST_REACH_NS.__ge__, map(operator.sub, ahead, starts))):
            return []
        gaps.extend(map(operator.sub, after, ends))
    else:
        gaps.extend(map(operator.sub, after, itertools.accumulate(ends, max)))
    edges = array("l", [-1])  # the breaks, between a sentinel and the end
    edges.extend(itertools.compress(range(n), map(operator.or_,
                                                  map(OVERHEAD_MAX_MEAN_NS.__lt__, durations),
                                                  map(BURST_GAP_NS.__lt__, gaps))))
    edges.append(n)
    # a run lies between two breaks: only breaks far enough apart can hold one (found in C)
    wide = itertools.compress(range(len(edges) - 1), map(
        OVERHEAD_MIN_LAUNCHES.__le__, map(operator.sub, itertools.islice(edges, 1, None),
                                          edges)))
    found: list[dict[str, Any]] = []
    for k in wide:
        before, i = edges[k], edges[k + 1]  # launches [lo, i): short and close together
        lo = 0 if before < 0 else before + (durations[before] > OVERHEAD_MAX_MEAN_NS)
        if i - lo >= OVERHEAD_MIN_LAUNCHES:
            _close_run(found, lo, i, starts, durations, ends, gaps, groups)
    return found


def _close_run(found: list, lo: int, hi: int, starts, durations, ends, gaps, groups) -> None:
    count = hi - lo
    busy = sum(durations[lo:hi])
    idle = sum(g for g in gaps[lo + 1:hi] if g > 0)
    mean = busy / count
    mean_gap = idle / (count - 1)
    if mean_gap < OVERHEAD_GAP_RATIO * mean:
        return
    counts: dict[int, int] = {}
    for g in groups[lo:hi]:
        counts[g] = counts.get(g, 0) + 1
    found.append({"launches": count, "busy_ns": busy, "idle_ns": idle,
                  "span_ns": max(ends[lo:hi]) - starts[lo], "mean_ns": mean,
                  "mean_gap_ns": mean_gap, "start_ns": starts[lo], "groups": counts,
                  "index": (lo, hi)})


def idle_elsewhere_busy(bursts: list[dict[str, Any]], starts, durations,
                        covered: Callable[[float], float]) -> list[dict[str, Any]]:
    """The bursts of one stream (``starts``, ``durations``: in start order, as
    :func:`overhead_bursts` read them) with the time other kernels ran in their gaps taken
    out of their idle time (``covered(t)``: the time some other kernel ran before ``t``:
    another stream's, NCCL's beside the compute; a graph's replayed kernels): the GPU was
    not idle then. A burst whose gaps are then under :data:`OVERHEAD_GAP_RATIO` of its
    kernels' time is none."""
    out = []
    for b in bursts:
        lo, hi = b.pop("index")
        end = b["start_ns"] + b["span_ns"]
        if covered(end) - covered(b["start_ns"]) <= 0:
            out.append(b)
            continue
        filled, last = 0.0, starts[lo] + durations[lo]
        for i in range(lo + 1, hi):
            if starts[i] > last:
                filled += covered(starts[i]) - covered(last)
            last = max(last, starts[i] + durations[i])
        b["idle_ns"] -= filled
        b["mean_gap_ns"] = b["idle_ns"] / (b["launches"] - 1)
        if b["mean_gap_ns"] >= OVERHEAD_GAP_RATIO * b["mean_ns"]:
            out.append(b)
    return out
