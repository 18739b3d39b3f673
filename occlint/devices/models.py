"""Typed views of the device database: architectures (per-unit limits) and products."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

Vendor = Literal["amd", "nvidia"]


@dataclass(frozen=True, slots=True)
class WaveRegisters:
    """VGPR file and granules of one AMD target in one wavefront mode."""

    vgprs: int
    vgpr_alloc_granule: int
    vgpr_encoding_granule: int
    hip_vgpr_alloc_granule: int


@dataclass(frozen=True, slots=True, eq=False)  # identity: one object per architecture
class AmdArch:
    """Per-target limits of an AMD GPU (see device_db/amd/architectures.toml for each key)."""

    name: str
    family: str
    gfx_major: int
    wave_sizes: tuple[int, ...]
    default_wave_size: int
    simds_per_cu: int
    cus_per_wgp: int
    max_waves_per_simd: int
    hip_max_waves_per_simd: int
    waves: dict[int, WaveRegisters]
    addressable_vgprs: int
    agprs: int
    unified_vgpr_file: bool
    sgpr_waves: tuple[tuple[int, int], ...]
    sgprs_per_simd: int
    sgpr_encoding_granule: int
    addressable_sgprs: int
    lds_per_workgroup: int
    lds_per_cu: int
    lds_per_wgp: int
    lds_alloc_granule: int
    hip_lds_pool: int
    max_workgroup_size: int
    barriers_per_cu: int
    barriers_per_wgp: int
    wgp_mode_default: bool
    preliminary: bool
    sources: tuple[str, ...]
    vendor: Vendor = field(default="amd", init=False)

    @property
    def has_wgp(self) -> bool:
        return self.cus_per_wgp > 0

    @property
    def sgpr_limits_occupancy(self) -> bool:
        return bool(self.sgpr_waves)

    def regs(self, wave_size: int) -> WaveRegisters:
        try:
            return self.waves[wave_size]
        except KeyError:
            sizes = "/".join(str(w) for w in self.wave_sizes)
            raise ValueError(
                f"{self.name} has no wave{wave_size} mode (wavefront size {sizes})"
            ) from None


@dataclass(frozen=True, slots=True, eq=False)  # identity: one object per architecture
class NvArch:
    """Per-compute-capability limits of an NVIDIA GPU (device_db/nvidia/architectures.toml)."""

    name: str
    cc: tuple[int, int]
    family: str
    warp_size: int
    max_threads_per_block: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    regs_per_sm: int
    regs_per_block: int
    max_regs_per_thread: int
    reg_alloc_unit: int
    sub_partitions: int
    smem_per_sm: int
    smem_per_block: int
    smem_per_block_optin: int
    smem_reserved_per_block: int
    smem_alloc_unit: int
    carveout_kib: tuple[int, ...]
    barrier_factor: int
    virtual_resources_per_sm: int
    sources: tuple[str, ...]
    vendor: Vendor = field(default="nvidia", init=False)

    @property
    def max_warps_per_sm(self) -> int:
        return self.max_threads_per_sm // self.warp_size

    @property
    def sm_number(self) -> int:
        return self.cc[0] * 10 + self.cc[1]


Arch = AmdArch | NvArch


@dataclass(frozen=True, slots=True)
class Device:
    """A product (or a bare architecture) occupancy can be computed for."""

    name: str
    vendor: Vendor
    arch: Arch
    aliases: tuple[str, ...] = ()
    compute_units: int | None = None  # CUs on AMD, SMs on NVIDIA; None for a bare architecture
    wgps: int | None = None
    devices_per_package: int = 1
    memory_gib: float | None = None
    memory_bandwidth_gbs: float | None = None
    max_clock_mhz: float | None = None
    l2_kib: float | None = None
    unconfirmed: tuple[str, ...] = ()
    source: str = ""
    arch_only: bool = False
    arch_variant: str = ""  # NVIDIA 'a' / 'f' when named as e.g. sm_90a

    @property
    def arch_name(self) -> str:
        return self.arch.name + self.arch_variant

    def scheduling_units(self, wgp_mode: bool = True) -> int | None:
        """Units a grid spreads over: WGPs on RDNA in WGP mode, else CUs / SMs."""
        if self.compute_units is None:
            return None
        if isinstance(self.arch, AmdArch) and self.arch.has_wgp and wgp_mode:
            return self.wgps or self.compute_units // self.arch.cus_per_wgp
        return self.compute_units

    def unit_name(self, wgp_mode: bool = True) -> str:
        if isinstance(self.arch, AmdArch):
            return "WGP" if (self.arch.has_wgp and wgp_mode) else "CU"
        return "SM"


def nvidia_sm(arch_name: str) -> tuple[int, str]:
    """'sm_90a' -> (90, 'a')."""
    match = re.fullmatch(r"sm_(\d+)([af]?)", arch_name)
    if not match:
        raise ValueError(arch_name)
    return int(match[1]), match[2]


def cubin_runs_on(cubin_arch: str, device_cc: tuple[int, int]) -> bool:
    """Can SASS built for ``cubin_arch`` run on a GPU of compute capability ``device_cc``?

    Cubins run on the same major version with an equal or higher minor; 'a' (arch-specific)
    cubins only on exactly that compute capability; 'f' (family) cubins on that major with
    an equal or higher minor."""
    sm, variant = nvidia_sm(cubin_arch)
    major, minor = divmod(sm, 10)
    if variant == "a":
        return (major, minor) == device_cc
    return major == device_cc[0] and minor <= device_cc[1]
