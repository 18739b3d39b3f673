"""NVIDIA occupancy, with the semantics of NVIDIA's ``cuda_occupancy.h`` (CUDA 13.0).

``active_blocks`` answers ``cudaOccMaxActiveBlocksPerMultiprocessor``,
``max_potential_block_size`` answers ``cudaOccMaxPotentialOccupancyBlockSize`` and
``available_dynamic_shared`` answers ``cudaOccAvailableDynamicSMemPerBlock``. Per-CC numbers
come from the device database (device_db/nvidia/architectures.toml); no constant is
written here. Partitioned global caching (CC 5.2/6.x, off unless forced) is not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from occlint.devices.models import NvArch

INT_MAX = 2**31 - 1

# cudaOccLimitingFactor bits and the names occlint reports for them.
LIMIT_WARPS = 0x01
LIMIT_REGISTERS = 0x02
LIMIT_SHARED = 0x04
LIMIT_BLOCKS = 0x08
LIMIT_BARRIERS = 0x10
LIMIT_VIRTUAL = 0x20
LIMIT_NAMES = {
    LIMIT_WARPS: "warps", LIMIT_REGISTERS: "registers", LIMIT_SHARED: "shared",
    LIMIT_BLOCKS: "blocks", LIMIT_BARRIERS: "barriers", LIMIT_VIRTUAL: "virtual",
}


class OccupancyInputError(ValueError):
    """The header would return CUDA_OCC_ERROR_INVALID_INPUT or _UNKNOWN_DEVICE."""

    def __init__(self, code: int, message: str):
        self.code = code  # 1 = invalid input, 2 = unknown device
        super().__init__(message)


@dataclass(frozen=True, slots=True)
class NvFunction:
    """What the occupancy calculation needs to know about a kernel (cudaOccFuncAttributes).

    ``optin`` mirrors ``shmemLimitConfig``: True is FUNC_SHMEM_LIMIT_OPTIN (what the CUDA
    runtime uses), False FUNC_SHMEM_LIMIT_DEFAULT. ``max_dynamic_shared`` is the
    ``cudaFuncAttributeMaxDynamicSharedMemorySize`` value; None means the driver default,
    ``sharedMemPerBlock - static``.
    """

    registers: int
    static_shared: int = 0
    max_threads: int = 1024
    optin: bool = True
    max_dynamic_shared: int | None = None
    barriers: int = 1
    virtual_resources: int = 0

    def max_dynamic(self, arch: NvArch) -> int:
        if self.max_dynamic_shared is not None:
            return self.max_dynamic_shared
        return max(arch.smem_per_block - self.static_shared, 0)


@dataclass(frozen=True, slots=True)
class NvOccupancy:
    """cudaOccResult plus derived figures."""

    arch: str
    block_size: int
    dynamic_shared: int
    carveout: int
    blocks_per_sm: int
    warps_per_block: int
    limiting_factors: int
    limits: dict[str, int]
    allocated_registers_per_block: int
    allocated_shared_per_block: int
    max_warps_per_sm: int
    smem_config: int = 0  # shared memory per SM the launch would configure (bytes)
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def warps_per_sm(self) -> int:
        return self.blocks_per_sm * self.warps_per_block

    @property
    def occupancy(self) -> float:
        return self.warps_per_sm / self.max_warps_per_sm if self.max_warps_per_sm else 0.0

    @property
    def limiters(self) -> tuple[str, ...]:
        return tuple(name for bit, name in LIMIT_NAMES.items() if self.limiting_factors & bit)


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def _align_carveout(arch: NvArch, size: int) -> int:
    """cudaOccAlignUpShmemSizeVoltaPlus: the smallest carveout step holding ``size``."""
    for step in arch.carveout_kib:
        if size <= step * 1024:
            return step * 1024
    if not arch.carveout_kib:
        raise OccupancyInputError(2, f"{arch.name}: no shared-memory carveout steps known")
    raise OccupancyInputError(1, f"{size} bytes exceed the largest carveout of {arch.name}")


def smem_preference(arch: NvArch, carveout: int) -> int:
    """Shared memory per SM for a carveout preference (-1 = none, else 0..100 percent)."""
    if arch.cc[0] < 7:
        return arch.smem_per_sm
    if carveout < -1 or carveout > 100:
        raise OccupancyInputError(1, f"carveout must be -1 or 0..100, got {carveout}")
    size = arch.smem_per_sm if carveout == -1 else carveout * arch.smem_per_sm // 100
    return _align_carveout(arch, size)


def _smem_per_block_limit(arch: NvArch, optin: bool, smem_per_cta: int) -> int:
    if arch.cc[0] >= 7 and optin and smem_per_cta > arch.smem_per_block:
        limit = arch.smem_per_block_optin
    else:
        limit = arch.smem_per_block
    if arch.cc[0] >= 8:  # the driver reserves shared memory per block since Ampere
        limit += arch.smem_reserved_per_block
    return limit


def _regs_limit(arch: NvArch, registers: int, block_size: int,
                sub_partitions: int) -> tuple[int, int]:
    warps = -(-block_size // arch.warp_size)
    per_warp = _round_up(registers * arch.warp_size, arch.reg_alloc_unit)
    per_cta = per_warp * warps
    # The hardware check assumes allocations to all sub-partitions at once.
    assumed = per_warp * _round_up(warps, sub_partitions)
    if (arch.regs_per_block < assumed or arch.regs_per_block < per_cta
            or registers > arch.max_regs_per_thread):
        return 0, per_cta
    if per_warp == 0:
        return INT_MAX, per_cta
    warps_per_sub_partition = (arch.regs_per_sm // sub_partitions) // per_warp
    return warps_per_sub_partition * sub_partitions // warps, per_cta


def active_blocks(arch: NvArch, func: NvFunction, block_size: int, dynamic_shared: int = 0,
                  carveout: int = -1) -> NvOccupancy:
    """Active blocks per SM, as cudaOccMaxActiveBlocksPerMultiprocessor computes them."""
    if block_size <= 0:
        raise OccupancyInputError(1, f"block size must be positive, got {block_size}")
    if func.registers < 0 or func.max_threads <= 0:
        raise OccupancyInputError(1, "registers must be >= 0 and max threads > 0")
    if dynamic_shared < 0 or func.static_shared < 0:
        raise OccupancyInputError(1, "shared memory sizes must be >= 0")

    # Registers (CC 6.0: also must fit the GP10x layout of 4 sub-partitions).
    limit_regs, regs_per_cta = _regs_limit(arch, func.registers, block_size, arch.sub_partitions)
    if arch.cc == (6, 0) and limit_regs:
        gp10x, _ = _regs_limit(arch, func.registers, block_size, 4)
        if gp10x == 0:
            limit_regs = 0

    # Warps.
    warps_per_block = -(-block_size // arch.warp_size)
    if block_size > arch.max_threads_per_block:
        limit_warps = 0
    else:
        limit_warps = (arch.max_threads_per_sm // arch.warp_size) // warps_per_block

    limit_blocks = arch.max_blocks_per_sm

    # Shared memory.
    preference = smem_preference(arch, carveout)
    static = func.static_shared + arch.smem_reserved_per_block
    smem_per_cta = _round_up(static + dynamic_shared, arch.smem_alloc_unit)
    max_dynamic = func.max_dynamic(arch)
    limit_per_cta = _smem_per_block_limit(arch, func.optin, static + max_dynamic)
    smem_config = preference
    if (func.optin and dynamic_shared > max_dynamic) or smem_per_cta > limit_per_cta:
        limit_smem = 0
    else:
        if preference >= smem_per_cta:
            per_sm = preference
        elif arch.cc[0] >= 7:
            per_sm = _align_carveout(arch, smem_per_cta)
        else:
            per_sm = arch.smem_per_sm
        smem_config = per_sm
        limit_smem = per_sm // smem_per_cta if smem_per_cta > 0 else INT_MAX

    # Virtual resources (CC 10-12), only when the function declares a count.
    if arch.virtual_resources_per_sm > 0 and func.virtual_resources > 0:
        limit_virtual = arch.virtual_resources_per_sm // func.virtual_resources
    else:
        limit_virtual = INT_MAX

    limit = min(limit_regs, limit_smem, limit_warps, limit_blocks, limit_virtual)
    factors = 0
    for bit, value in ((LIMIT_WARPS, limit_warps), (LIMIT_REGISTERS, limit_regs),
                       (LIMIT_SHARED, limit_smem), (LIMIT_BLOCKS, limit_blocks),
                       (LIMIT_VIRTUAL, limit_virtual)):
        if value == limit:
            factors |= bit

    # Block barriers, Hopper onwards.
    if arch.cc[0] >= 9 and func.barriers > 0:
        limit_bars = limit_blocks * arch.barrier_factor // func.barriers
        limit = min(limit_bars, limit)
        if limit == limit_bars:
            factors |= LIMIT_BARRIERS
    else:
        limit_bars = INT_MAX

    return NvOccupancy(
        arch=arch.name, block_size=block_size, dynamic_shared=dynamic_shared, carveout=carveout,
        blocks_per_sm=limit, warps_per_block=warps_per_block, limiting_factors=factors,
        limits={"registers": limit_regs, "shared": limit_smem, "warps": limit_warps,
                "blocks": limit_blocks, "barriers": limit_bars, "virtual": limit_virtual},
        allocated_registers_per_block=regs_per_cta, allocated_shared_per_block=smem_per_cta,
        max_warps_per_sm=arch.max_warps_per_sm, smem_config=smem_config,
    )


@dataclass(frozen=True, slots=True)
class PotentialBlockSize:
    block_size: int
    min_grid_size: int  # blocks per SM at that size x SM count (0 when sms unknown)
    blocks_per_sm: int


def max_potential_block_size(arch: NvArch, func: NvFunction, dynamic_shared: int = 0,
                             carveout: int = -1, sms: int = 0) -> PotentialBlockSize:
    """cudaOccMaxPotentialOccupancyBlockSize: the largest block reaching the best occupancy."""
    limit = min(arch.max_threads_per_block, func.max_threads)
    granularity = arch.warp_size
    best_size = best_blocks = best_threads = 0
    aligned = _round_up(limit, granularity)
    while aligned > 0:
        size = min(limit, aligned)
        blocks = active_blocks(arch, func, size, dynamic_shared, carveout).blocks_per_sm
        if size * blocks > best_threads:
            best_size, best_blocks, best_threads = size, blocks, size * blocks
        if best_threads == arch.max_threads_per_sm:
            break
        aligned -= granularity
    return PotentialBlockSize(best_size, best_blocks * sms, best_blocks)


def available_dynamic_shared(arch: NvArch, func: NvFunction, num_blocks: int, block_size: int,
                             carveout: int = -1) -> int:
    """cudaOccAvailableDynamicSMemPerBlock: dynamic shared memory that keeps ``num_blocks``."""
    if num_blocks <= 0:
        raise OccupancyInputError(1, "number of blocks must be positive")
    if active_blocks(arch, func, block_size, 0, carveout).blocks_per_sm < num_blocks:
        raise OccupancyInputError(1, f"{num_blocks} blocks of {block_size} cannot be resident")
    limit = _smem_per_block_limit(arch, func.optin, arch.smem_per_sm)
    preference = smem_preference(arch, carveout)
    per_sm = limit if num_blocks == 1 else preference or _align_carveout(arch, 1)
    avail = per_sm // num_blocks // arch.smem_alloc_unit * arch.smem_alloc_unit
    # size_t arithmetic in the header: a static size above the share wraps around.
    avail = (min(avail, limit) - func.static_shared) % 2**64
    return min(avail, func.max_dynamic(arch))
