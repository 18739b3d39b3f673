"""AMD occupancy, with the semantics of LLVM's AMDGPU backend.

occlint models the compiler (LLVM ``AMDGPUSubtarget::getOccupancyWithWorkGroupSizes``,
``AMDGPU::IsaInfo::getNumWavesPerEUWithNumVGPRs``, ``getOccupancyWithNumSGPRs``) because it
is the model that knows the hardware's wave slots, workgroup/barrier slots and the WGP LDS
pool; evaluated at the launch's block size it reproduces the ``Occupancy [waves/SIMD]``
that clang prints (which assumes the kernel's maximum flat workgroup size). The HIP
runtime's ``hipOccupancyMaxActiveBlocksPerMultiprocessor`` (ROCm clr) uses a simpler model
that differs on gfx9 (8 instead of 10 waves/SIMD), on gfx103x (VGPR granule 8), in WGP mode
(64 KiB LDS pool) and has no workgroup-slot limit; ``hip_blocks_per_cu`` gives its answer so
users can compare. Numbers come from device_db/amd/architectures.toml.
"""

from __future__ import annotations

from dataclasses import dataclass

from occlint.devices.models import AmdArch

INT_MAX = 2**31 - 1


def _align(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def _ceil_div(x: int, y: int) -> int:
    return -(-x // y)


def combined_vgprs(arch: AmdArch, vgprs: int, agprs: int) -> int:
    """VGPRs that count against the register file: LLVM getTotalNumVGPRs(has90A, agpr, vgpr)."""
    if arch.unified_vgpr_file and agprs:
        return _align(vgprs, 4) + agprs
    return max(vgprs, agprs)


@dataclass(frozen=True, slots=True)
class AmdKernel:
    """What the occupancy calculation needs to know about a kernel.

    ``vgprs``/``agprs`` are architectural and accumulation VGPRs as the compiler's resource
    remark prints them; ``vgpr_alloc`` overrides the combined count when the binary records
    what the hardware allocates (the kernel descriptor, or the unified ``.vgpr_count``).
    ``lds`` is static plus dynamic LDS per workgroup.
    """

    wave_size: int
    vgprs: int = 0
    agprs: int = 0
    sgprs: int = 0
    lds: int = 0
    vgpr_alloc: int | None = None

    def allocated_vgprs(self, arch: AmdArch) -> int:
        if self.vgpr_alloc is not None:
            return self.vgpr_alloc
        return combined_vgprs(arch, self.vgprs, self.agprs)


@dataclass(frozen=True, slots=True)
class AmdOccupancy:
    """Occupancy of one kernel at one block size on one AMD target."""

    arch: str
    wave_size: int
    block_size: int
    wgp_mode: bool
    simds: int  # SIMDs the workgroups of one CU (WGP in WGP mode) are spread over
    waves_per_workgroup: int
    waves_per_simd: int  # LLVM's figure at this block size
    blocks_per_cu: int  # resident workgroups per CU (per WGP in WGP mode)
    max_waves_per_simd: int
    limits: dict[str, int]  # waves/SIMD each resource alone allows (absent: unconstrained)
    limiters: tuple[str, ...]
    vgpr_alloc: int  # VGPRs per wave after allocation-granule rounding
    hip_blocks_per_cu: int  # hipOccupancyMaxActiveBlocksPerMultiprocessor's answer
    reason: str = ""  # why nothing fits, when blocks_per_cu == 0

    @property
    def unit(self) -> str:
        return "WGP" if self.wgp_mode else "CU"

    @property
    def occupancy(self) -> float:
        return self.waves_per_simd / self.max_waves_per_simd

    @property
    def waves_per_cu(self) -> int:
        """Waves resident per CU (per WGP in WGP mode)."""
        return self.blocks_per_cu * self.waves_per_workgroup


def vgpr_waves(arch: AmdArch, wave_size: int, vgprs: int) -> int:
    """LLVM getNumWavesPerEUWithNumVGPRs."""
    regs = arch.regs(wave_size)
    if vgprs < regs.vgpr_alloc_granule:
        return arch.max_waves_per_simd
    per_wave = _align(vgprs, regs.vgpr_alloc_granule)
    return min(max(regs.vgprs // per_wave, 1), arch.max_waves_per_simd)


def sgpr_waves(arch: AmdArch, sgprs: int) -> int:
    """LLVM getOccupancyWithNumSGPRs (GFX9: a threshold table; gfx10+: no limit)."""
    if not arch.sgpr_waves or sgprs <= 0:
        return arch.max_waves_per_simd
    for max_sgprs, waves in arch.sgpr_waves:
        if sgprs <= max_sgprs:
            return waves
    return arch.sgpr_waves[-1][1]


def resolve_wgp_mode(arch: AmdArch, wgp_mode: bool | None) -> bool:
    return arch.has_wgp and (arch.wgp_mode_default if wgp_mode is None else wgp_mode)


def validate(arch: AmdArch, kernel: AmdKernel, block_size: int) -> None:
    """Reject inputs no compiler could produce for this target (ValueError)."""
    arch.regs(kernel.wave_size)
    if block_size <= 0:
        raise ValueError(f"block size must be positive, got {block_size}")
    for label, value in (("VGPRs", kernel.vgprs), ("AGPRs", kernel.agprs),
                         ("SGPRs", kernel.sgprs), ("LDS", kernel.lds)):
        if value < 0:
            raise ValueError(f"{label} must be >= 0, got {value}")
    arch_limit = 256 if arch.agprs or arch.unified_vgpr_file else arch.addressable_vgprs
    if kernel.vgprs > arch_limit:
        raise ValueError(f"{kernel.vgprs} VGPRs exceed the {arch_limit} a wave can address "
                         f"on {arch.name}")
    if kernel.agprs and not (arch.agprs or arch.unified_vgpr_file):
        raise ValueError(f"{arch.name} has no AGPRs (accumulation VGPRs)")
    if kernel.agprs > 256:
        raise ValueError(f"{kernel.agprs} AGPRs exceed 256")
    alloc = kernel.allocated_vgprs(arch)
    if alloc > arch.addressable_vgprs:
        raise ValueError(f"{alloc} VGPRs (VGPR+AGPR) exceed the {arch.addressable_vgprs} "
                         f"a wave can address on {arch.name}")
    # .sgpr_count also counts VCC, FLAT_SCRATCH and XNACK_MASK (up to 12 beyond addressable).
    if arch.sgpr_limits_occupancy and kernel.sgprs > arch.addressable_sgprs + 12:
        raise ValueError(f"{kernel.sgprs} SGPRs exceed the {arch.addressable_sgprs} (+12 "
                         f"special) a wave can use on {arch.name}")


def occupancy(arch: AmdArch, kernel: AmdKernel, block_size: int, wgp_mode: bool | None = None,
              max_block_size: int | None = None) -> AmdOccupancy:
    """Occupancy of ``kernel`` launched with ``block_size`` work-items per workgroup."""
    validate(arch, kernel, block_size)
    wgp = resolve_wgp_mode(arch, wgp_mode)
    wave = kernel.wave_size
    wmax = arch.max_waves_per_simd
    simds = arch.simds_per_cu * (arch.cus_per_wgp if wgp else 1)
    n = _ceil_div(block_size, wave)
    slots = wmax * simds
    alloc = kernel.allocated_vgprs(arch)
    granule = arch.regs(wave).vgpr_alloc_granule

    limits: dict[str, int] = {"waves": wmax}
    if alloc:
        if arch.agprs and not arch.unified_vgpr_file:  # gfx908: two files, the larger binds
            if kernel.vgpr_alloc is None:
                limits["vgpr"] = vgpr_waves(arch, wave, kernel.vgprs) if kernel.vgprs else wmax
                if kernel.agprs:
                    limits["agpr"] = vgpr_waves(arch, wave, kernel.agprs)
            else:
                limits["vgpr"] = vgpr_waves(arch, wave, alloc)
        else:
            limits["vgpr"] = vgpr_waves(arch, wave, alloc)
            if kernel.agprs:
                limits["agpr"] = limits["vgpr"]
    if arch.sgpr_limits_occupancy and kernel.sgprs:
        limits["sgpr"] = sgpr_waves(arch, kernel.sgprs)

    # Workgroup slots: single-wave workgroups need no barrier.
    barriers = arch.barriers_per_wgp if wgp else arch.barriers_per_cu
    slot_groups = slots // n
    wg_cap = slot_groups if n == 1 else min(slot_groups, barriers)
    wg_name = "barriers" if n > 1 and barriers < slot_groups else "waves"
    limits[wg_name] = min(limits.get(wg_name, wmax),
                          max(min(_ceil_div(wg_cap * n, simds), wmax), 1))

    pool = arch.lds_per_wgp if wgp else arch.lds_per_cu
    lds_groups = pool // max(kernel.lds, 1)
    if kernel.lds:
        limits["lds"] = max(min(_ceil_div(lds_groups * n, simds), wmax), 1)

    waves = min(limits.values())
    # At the wave-slot maximum nothing else limits; below it, every resource at the minimum
    # co-limits (as cuda_occupancy.h reports all equal factors).
    limiters = ("waves",) if waves == wmax else tuple(
        name for name, value in limits.items() if value == waves)

    reg_waves = min(wmax, limits.get("vgpr", wmax), limits.get("agpr", wmax),
                    limits.get("sgpr", wmax))
    blocks = min(simds * reg_waves // n, wg_cap, lds_groups)
    reason = ""
    max_block = min(arch.max_workgroup_size, max_block_size or arch.max_workgroup_size)
    if block_size > max_block:
        blocks, limiters = 0, ("threads",)
        reason = f"block of {block_size} exceeds the maximum workgroup size {max_block}"
    elif kernel.lds > arch.lds_per_workgroup:
        blocks, limiters = 0, ("lds",)
        reason = (f"{kernel.lds} bytes of LDS exceed the {arch.lds_per_workgroup} a workgroup "
                  f"can allocate on {arch.name}")
    elif blocks == 0:
        binding = [k for k in ("vgpr", "agpr", "sgpr") if limits.get(k, wmax) == reg_waves]
        limiters = tuple(binding) or ("waves",)
        reason = (f"a workgroup of {n} waves does not fit: registers allow "
                  f"{reg_waves} waves per SIMD x {simds} SIMDs")
    if blocks == 0:
        waves = 0

    return AmdOccupancy(
        arch=arch.name, wave_size=wave, block_size=block_size, wgp_mode=wgp, simds=simds,
        waves_per_workgroup=n, waves_per_simd=waves, blocks_per_cu=blocks,
        max_waves_per_simd=wmax, limits=limits, limiters=limiters,
        vgpr_alloc=_align(alloc, granule) if alloc else 0,
        hip_blocks_per_cu=hip_blocks_per_cu(arch, kernel, block_size, wgp), reason=reason,
    )


def hip_blocks_per_cu(arch: AmdArch, kernel: AmdKernel, block_size: int, wgp_mode: bool) -> int:
    """ROCm clr ``ihipOccupancyMaxActiveBlocksPerMultiprocessor`` (hipOccupancy... API)."""
    if block_size > arch.max_workgroup_size:
        return 0
    wave = kernel.wave_size
    wmax = arch.hip_max_waves_per_simd
    regs = arch.regs(wave)
    used = kernel.allocated_vgprs(arch)
    gpr_waves = regs.vgprs // _align(used, regs.hip_vgpr_alloc_granule) if used else wmax
    if arch.sgprs_per_simd and kernel.sgprs:
        gpr_waves = min(gpr_waves, arch.sgprs_per_simd // _align(kernel.sgprs, 16))
    simds = arch.simds_per_cu * (2 if wgp_mode else 1)
    alu_threads = simds * min(wmax, gpr_waves) * wave
    lds_groups = arch.hip_lds_pool // kernel.lds if kernel.lds else INT_MAX
    return min(alu_threads // _align(block_size, wave), lds_groups)


def compiler_reported_occupancy(arch: AmdArch, kernel: AmdKernel, min_block: int,
                                max_block: int, wgp_mode: bool | None = None) -> int:
    """The ``Occupancy [waves/SIMD]`` LLVM >= 20 reports: best case over the flat range.

    LLVM 19 and earlier evaluate only the maximum flat workgroup size, i.e.
    ``occupancy(arch, kernel, max_block).waves_per_simd``.
    """
    wgp = resolve_wgp_mode(arch, wgp_mode)
    wave, wmax = kernel.wave_size, arch.max_waves_per_simd
    simds = arch.simds_per_cu * (arch.cus_per_wgp if wgp else 1)
    pool = arch.lds_per_wgp if wgp else arch.lds_per_cu
    lds_groups = pool // max(kernel.lds, 1)
    regs_waves = min(wmax, *(v for k, v in occupancy(arch, kernel, max_block, wgp).limits.items()
                             if k in ("vgpr", "agpr", "sgpr")))
    if not lds_groups:
        return min(1, regs_waves)
    barriers = arch.barriers_per_wgp if wgp else arch.barriers_per_cu
    slots = wmax * simds

    def props(size: int) -> tuple[int, int, int]:
        n = _ceil_div(size, wave)
        cap = slots // n if n == 1 else min(slots // n, barriers)
        groups = min(cap, lds_groups)
        return n, groups, n * groups

    # Only the upper end of LLVM's {min, max} range is reported by the compiler.
    min_waves_wg, max_wgs, max_waves = props(min_block)
    _, _, min_waves = props(max_block)
    if min_waves >= max_waves:
        min_waves, max_waves = max_waves, min_waves
    else:
        leftover = slots - max_wgs * min_waves_wg
        if leftover // max_wgs:
            max_waves += max_wgs * min(leftover // max_wgs,
                                       (max_block - 1) // wave + 1 - min_waves_wg)
    best = max(min(_ceil_div(max_waves, simds), wmax), 1)
    return min(best, regs_waves)
