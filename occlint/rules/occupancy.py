"""OCC: what limits occupancy, and how much to cut to reach the next step.

These rules fire when occupancy is below ``occupancy-threshold`` (default 50%); the per-kernel
summary and the JSON ``next_steps`` always carry the limiter and the next step.
"""

from __future__ import annotations

from occlint.occupancy import amd
from occlint.rules.registry import kernel_finding, rule

UNIT_WORDS = {"vgpr": "VGPRs", "agpr": "AGPRs", "sgpr": "SGPRs", "lds": "bytes of LDS",
              "registers": "registers per thread", "shared": "bytes of shared memory per block"}


def _low(report, ctx) -> bool:
    occ = report.occupancy
    return occ is not None and occ.occupancy < ctx.settings.occupancy_threshold and (
        occ.blocks_per_cu if isinstance(occ, amd.AmdOccupancy) else occ.blocks_per_sm) > 0


def _headline(report) -> str:
    occ = report.occupancy
    if isinstance(occ, amd.AmdOccupancy):
        return (f"occupancy {occ.waves_per_simd}/{occ.max_waves_per_simd} waves per SIMD "
                f"({100 * occ.occupancy:.1f}%) at block {report.block_size}")
    return (f"occupancy {occ.warps_per_sm}/{occ.max_warps_per_sm} warps per SM "
            f"({100 * occ.occupancy:.1f}%) at block {report.block_size}")


def _step(report, resource: str):
    return next((s for s in report.next_steps if s.resource == resource), None)


def _amd_register_hint(report, waves: int) -> str:
    return (f"`__launch_bounds__({report.block_size}, {waves})` or "
            f"`__attribute__((amdgpu_waves_per_eu({waves})))` asks the compiler for it")


def _resource_finding(report, ctx, code: str, resource: str, what: str):
    # (AMD's occupancy limiters are vgpr, agpr, sgpr, lds and slots, NVIDIA's registers,
    # shared and slots: the rules of one vendor's resources are registered for it alone)
    if not _low(report, ctx) or resource not in report.occupancy.limiters:
        return
    step = _step(report, resource)
    metric = "waves per SIMD" if isinstance(report.occupancy, amd.AmdOccupancy) else \
        "blocks per SM"
    words = UNIT_WORDS[resource]
    if step is None:
        return
    if step.target is None:
        others = ", ".join(step.blocked_by) or "other limits"
        yield kernel_finding(code, report, f"{_headline(report)} is limited by {what}; cutting "
                             f"{words} alone gains nothing: it is also limited by {others}",
                             advice=None, resource=resource, current=step.current,
                             blocked_by=list(step.blocked_by))
        return
    advice = f"cut {step.cut} {words} ({step.current} -> {step.target}) for " \
             f"{step.occupancy_then} {metric}"
    if resource in ("vgpr", "agpr", "sgpr"):
        advice += "; " + _amd_register_hint(report, step.occupancy_then)
    elif resource == "registers":
        advice += (f"; `-maxrregcount={step.target}` or `__launch_bounds__("
                   f"{report.block_size}, {step.occupancy_then})` asks ptxas for it "
                   "(watch for spills)")
    yield kernel_finding(code, report, f"{_headline(report)} is limited by {what}",
                         advice=advice, resource=resource, current=step.current,
                         target=step.target, cut=step.cut, next=step.occupancy_then)


@rule("OCC101", "vgpr-limited", "warning", vendors=("amd",))
def vgpr_limited(report, ctx):
    """Occupancy is limited by vector registers (VGPRs) on AMD.

    What it does:
    Fires when occupancy is below the threshold and the VGPRs each lane allocates (rounded
    to the target's allocation granule; the unified VGPR+AGPR file on gfx90a/gfx942/gfx950)
    are what limit the waves per SIMD. States how many VGPRs to cut for the next wave.
    Why it matters:
    Fewer resident waves leave less work to switch to while memory requests are in flight.
    On gfx1100 in wave32, 1,536 VGPRs per SIMD give 16 waves at <= 96 VGPRs but 10 at 130.
    How to fix:
    Reduce live values (split the kernel, recompute cheap values, smaller tiles), or ask the
    compiler for more waves with `__launch_bounds__(N, waves)` / `amdgpu_waves_per_eu` —
    it may then spill, which can cost more than it gains.
    Example:
    `occlint k.hsaco --device w7800 --block 256` -> occupancy 6/16 waves per SIMD (37.5%) is
    limited by VGPRs; cut 24 VGPRs (168 -> 144) for 10 waves per SIMD.
    """
    yield from _resource_finding(report, ctx, "OCC101", "vgpr", "VGPRs")


@rule("OCC102", "agpr-limited", "warning", vendors=("amd",))
def agpr_limited(report, ctx):
    """Occupancy is limited by accumulation registers (AGPRs) on CDNA.

    What it does:
    Fires when the AGPRs of MFMA kernels limit occupancy: the separate 256-entry AGPR file
    of gfx908, or the AGPR share of the unified VGPR+AGPR file on gfx90a/gfx942/gfx950.
    Why it matters:
    Matrix kernels often keep large accumulator tiles in AGPRs; on gfx908 the larger of the
    two files decides the waves per SIMD, on gfx90a and later their sum does.
    How to fix:
    Use smaller accumulator tiles per wave, or accept the occupancy if the kernel is
    compute-bound (MFMA throughput rarely needs many waves).
    Example:
    `occlint gemm.hsaco --device mi100` -> occupancy 1/10 waves per SIMD (10.0%) is limited
    by AGPRs; cut 4 AGPRs (132 -> 128) for 2 waves per SIMD.
    """
    yield from _resource_finding(report, ctx, "OCC102", "agpr", "AGPRs")


@rule("OCC103", "sgpr-limited", "warning", vendors=("amd",))
def sgpr_limited(report, ctx):
    """Occupancy is limited by scalar registers (SGPRs) on GFX9.

    What it does:
    Fires on GFX9/CDNA targets when the SGPRs of each wave (including VCC, FLAT_SCRATCH and
    XNACK_MASK) limit the waves per SIMD (800 SGPRs per SIMD: <= 80 SGPRs for 10 waves).
    RDNA (gfx10+) allocates SGPRs per wave without an occupancy cost.
    Why it matters:
    Kernels with many uniform values (addresses, loop bounds, constants) can lose waves to
    SGPRs even with few VGPRs.
    How to fix:
    Pass fewer scalar arguments (pack them in a struct in memory), avoid keeping many
    uniform values live across loops.
    Example:
    `occlint k.hsaco --device mi50` -> occupancy 8/10 waves per SIMD is limited by SGPRs;
    cut 12 SGPRs (100 -> 88) for 9 waves per SIMD.
    """
    yield from _resource_finding(report, ctx, "OCC103", "sgpr", "SGPRs")


@rule("OCC104", "lds-limited", "warning", vendors=("amd",))
def lds_limited(report, ctx):
    """Occupancy is limited by LDS (local data share) per workgroup on AMD.

    What it does:
    Fires when the LDS of each workgroup (static plus the dynamic size you give) limits the
    workgroups per CU — or per WGP on RDNA in WGP mode, which pools 128 KiB.
    Why it matters:
    A 40 KiB tile allows one workgroup per 64 KiB CU; halving it doubles the resident
    workgroups.
    How to fix:
    Use smaller LDS tiles, reuse LDS buffers, or keep data in registers; check that the
    dynamic LDS you pass is what the kernel really needs.
    Example:
    `occlint k.hsaco --device mi300x --block 256` -> occupancy 1/8 waves per SIMD (12.5%) is
    limited by LDS; cut 8192 bytes of LDS (40960 -> 32768) for 2 waves per SIMD.
    """
    yield from _resource_finding(report, ctx, "OCC104", "lds", "LDS")


@rule("OCC105", "registers-limited", "warning", vendors=("nvidia",))
def registers_limited(report, ctx):
    """Occupancy is limited by registers per thread on NVIDIA.

    What it does:
    Fires when the registers of each thread (allocated per warp in units of 256) limit the
    blocks per SM, and says how many registers to cut for one more block per SM.
    Why it matters:
    A 65,536-register SM holds 64 warps at 32 registers per thread but 32 warps at 64.
    How to fix:
    Reduce live values, or cap registers with `__launch_bounds__(threads, minBlocks)` or
    `-maxrregcount` — both can make ptxas spill to local memory.
    Example:
    `occlint k.cubin --device h100 --block 256` -> occupancy 24/64 warps per SM (37.5%) is
    limited by registers; cut 16 registers per thread (96 -> 80) for 3 blocks per SM.
    """
    yield from _resource_finding(report, ctx, "OCC105", "registers", "registers")


@rule("OCC106", "shared-memory-limited", "warning", vendors=("nvidia",))
def shared_limited(report, ctx):
    """Occupancy is limited by shared memory per block on NVIDIA.

    What it does:
    Fires when static plus dynamic shared memory per block (plus the 1 KiB the driver
    reserves per block from CC 8.0) limits the blocks per SM.
    Why it matters:
    An H100 SM has 228 KiB of shared memory: 100 KiB tiles fit two blocks, 120 KiB one.
    How to fix:
    Use smaller tiles, or fewer pipeline stages; raise the carveout preference if you set it
    below the maximum.
    Example:
    `occlint k.cubin --device h100 --block 128 --dynamic-shared 120000` -> occupancy 4/64
    warps per SM is limited by shared memory; cut 6144 bytes for 2 blocks per SM.
    """
    yield from _resource_finding(report, ctx, "OCC106", "shared", "shared memory")


@rule("OCC107", "block-slots-limited", "warning")
def block_slots_limited(report, ctx):
    """Occupancy is limited by the block size: wave, block or barrier slots.

    What it does:
    Fires when occupancy is below the threshold because of how blocks of this size pack into
    the hardware's slots: NVIDIA's maximum blocks per SM, AMD's workgroup (barrier) slots,
    or wave slots a block's wavefronts cannot fill.
    Why it matters:
    Tiny blocks hit the block limit before the warp limit (32 blocks x 1 warp = 50% on an
    H100); on AMD, multi-wave workgroups need a barrier slot each (16 per CU).
    How to fix:
    Use one of the recommended block sizes.
    Example:
    `occlint k.cubin --device h100 --block 32` -> occupancy 32/64 warps per SM (50.0%) is
    limited by blocks; use 64 threads per block.
    """
    if not _low(report, ctx):
        return
    slots = [x for x in report.occupancy.limiters if x in ("waves", "warps", "blocks", "barriers")]
    if not slots or any(x in report.occupancy.limiters for x in UNIT_WORDS):
        return
    recommended = ctx.advice.get("recommended_block")
    advice = (f"use {recommended} threads per block" if recommended and
              recommended != report.block_size else None)
    yield kernel_finding("OCC107", report,
                         f"{_headline(report)} is limited by {' and '.join(slots)} slots",
                         advice=advice, limiters=slots)
