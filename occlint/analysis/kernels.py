"""Kernel x device -> occupancy: choose the architecture, the block size and compute.

One :class:`KernelReport` per kernel and device (or per kernel when no device is named, for
the kernel's own architecture). The rules and reporters work from these reports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, ClassVar

from occlint.devices.db import DeviceDb, shipped_db
from occlint.devices.models import AmdArch, Device, NvArch, cubin_runs_on, nvidia_sm
from occlint.model.facts import Facts, threads_are_work
from occlint.model.kernel import AmdResources, Kernel, NvResources
from occlint.occupancy import amd, nvidia, steps


@dataclass(frozen=True)
class LaunchConfig:
    """What is known about how a kernel is launched (command line or config file)."""

    block: int | None = None
    grid: int | None = None
    problem_size: int | None = None
    dynamic_lds: int = 0  # AMD dynamic LDS / NVIDIA dynamic shared memory, bytes per block
    # the kernel's body as its CUDA / HIP source shows it: "grid-stride", "per-element",
    # "other"; None when no source of it is in the run (occlint.pipeline.sources)
    body: str | None = None
    block_from_source: bool = False  # ``block`` is the one block of its source launches
    work: str | None = None  # "memory" or "compute" when its source tells (else None)
    facts: Facts | None = None  # what a thread does per element, when its source tells
    # whether its source reads the block index (False: every block does the same work, so
    # more or fewer blocks do not split it; None: no source of it in the run)
    block_indexed: bool | None = None
    # whether its source reads the thread index (False: a block's threads would each repeat
    # its work; None: not known)
    thread_indexed: bool | None = None
    # the library through which its source talks to other GPUs (NCCL's device API,
    # NVSHMEM, rocSHMEM): its time waits on them, its grid is its communicator's
    communicates: str | None = None
    # a launch site's block and grid as its source writes them, x, y, z (a 2-D block is
    # another launch than its product along x); None: 1-D, as ``block`` and ``grid``
    block_dims: tuple[int, int, int] | None = None
    grid_dims: tuple[int, int, int] | None = None

    @property
    def blocks_split_work(self) -> bool:
        """Whether the grid divides the work (unknown counts as yes)."""
        return self.block_indexed is not False

    @property
    def threads_are_work(self) -> bool:
        return threads_are_work(self.block_indexed, self.body, self.facts,
                                self.thread_indexed)

    @property
    def known_facts(self) -> Facts | None:
        """``facts`` when they tell what a thread loads and computes (else None)."""
        return self.facts if self.facts is not None and self.facts.known else None


@dataclass
class KernelReport:
    """A kernel of a binary analysed on one device: the subject of the kernel rules
    (occlint.model.subject)."""

    kind: ClassVar[str] = "kernel"
    kernel: Kernel
    device: Device | None
    arch: AmdArch | NvArch | None  # limits used (None: occupancy not computable)
    status: str  # ok | arch-mismatch | generic-target | unknown-arch | ptx-only
    message: str = ""
    block_size: int | None = None
    block_source: str = ""
    launch: LaunchConfig = field(default_factory=LaunchConfig)
    occupancy: amd.AmdOccupancy | nvidia.NvOccupancy | None = None
    next_steps: list[steps.NextStep] = field(default_factory=list)
    input_model: Any = None  # the AmdKernel / NvFunction fed to the engine
    findings: list = field(default_factory=list)
    advice: dict[str, Any] = field(default_factory=dict)
    trace: Any = None  # the LaunchReport when the launch was read from a trace
    owner: Any = None  # who can change it (occlint.judgement.owner.Owner), once judged
    design: dict[str, str] | None = None  # a deliberate design (occlint.judgement.design)
    plan: Any = None  # the launch-time model's plan (occlint.judgement.fastest), once judged
    # a traced launch without a register count: the most blocks per unit it can have
    # (most_blocks_per_unit), None when unknown
    blocks_per_unit_at_most: int | None = None

    def keep(self, findings: list) -> None:
        self.findings = findings

    @property
    def wgp_mode(self) -> bool:
        return isinstance(self.occupancy, amd.AmdOccupancy) and self.occupancy.wgp_mode


def _amd_arch(kernel: Kernel, device: Device | None, db: DeviceDb):
    processor = kernel.arch
    if device is not None:
        if not isinstance(device.arch, AmdArch):
            return None, "arch-mismatch", (f"{kernel.target_id} code cannot run on "
                                           f"{device.name} ({device.arch_name})")
        members = db.amd_generics.get(processor, ())
        if processor == device.arch.name or device.arch.name in members:
            return device.arch, "ok", ""
        return None, "arch-mismatch", (f"code object for {kernel.target_id} cannot run on "
                                       f"{device.name} ({device.arch.name})")
    if processor in db.amd_archs:
        if processor in db.amd_generics:  # the compiler's view; --device gives the GPU's
            members = ", ".join(db.amd_generics[processor])
            return db.amd_archs[processor], "ok", (
                f"generic target: limits of {processor} as the compiler assumes them (runs on "
                f"{members}); pass --device for a specific GPU")
        return db.amd_archs[processor], "ok", ""
    return None, "unknown-arch", f"no limits for {processor} in the device database"


def _nv_arch(kernel: Kernel, device: Device | None, db: DeviceDb):
    if device is not None:
        if not isinstance(device.arch, NvArch):
            return None, "arch-mismatch", (f"{kernel.arch} cubin cannot run on {device.name} "
                                           f"({device.arch_name})")
        if cubin_runs_on(kernel.arch, device.arch.cc):
            return device.arch, "ok", ""
        return None, "arch-mismatch", (f"{kernel.arch} cubin cannot run on {device.name} "
                                       f"({device.arch_name})")
    sm, _ = nvidia_sm(kernel.arch)
    arch = db.nv_archs.get(f"sm_{sm}")
    if arch is None:
        return None, "unknown-arch", f"no limits for {kernel.arch} in the device database"
    return arch, "ok", ""


def _product(dims: tuple[int, int, int] | None) -> int | None:
    return dims[0] * dims[1] * dims[2] if dims else None


def choose_block(kernel: Kernel, launch: LaunchConfig, arch, func=None) -> tuple[int, str]:
    """The block size to evaluate and where it came from."""
    if launch.block:
        return launch.block, "source" if launch.block_from_source else "launch"
    res = kernel.resources
    if isinstance(res, AmdResources):
        if res.reqd_workgroup_size:
            return _product(res.reqd_workgroup_size), "reqd_workgroup_size"
        return res.max_block_size, "max_flat_workgroup_size"
    assert isinstance(res, NvResources)
    if res.required_block:
        return _product(res.required_block), "reqntid"
    if res.max_block_size:
        return res.max_block_size, "launch_bounds"
    potential = potential_block_size(arch, func, launch.dynamic_lds)
    return potential.block_size or arch.warp_size, "max_potential_block_size"


def amd_kernel_model(kernel: Kernel, arch: AmdArch, dynamic_lds: int = 0) -> amd.AmdKernel:
    res = kernel.resources
    assert isinstance(res, AmdResources)
    combined = amd.combined_vgprs(arch, res.vgpr, res.agpr)
    return amd.AmdKernel(
        wave_size=kernel.wavefront_size, vgprs=res.vgpr, agprs=res.agpr, sgprs=res.sgpr,
        lds=res.lds_bytes + dynamic_lds,
        vgpr_alloc=None if res.vgpr_alloc == combined else res.vgpr_alloc,
    )


def nv_function_model(kernel: Kernel, arch: NvArch, dynamic_shared: int = 0) -> nvidia.NvFunction:
    res = kernel.resources
    assert isinstance(res, NvResources)
    optin = res.shared_bytes + dynamic_shared > arch.smem_per_block
    limit = arch.smem_per_block_optin if optin else arch.smem_per_block
    max_threads = _product(res.required_block) or res.max_block_size or arch.max_threads_per_block
    return nvidia.NvFunction(registers=res.registers, static_shared=res.shared_bytes,
                             max_threads=max_threads, optin=True,
                             max_dynamic_shared=max(limit - res.shared_bytes, 0), barriers=1)


def analyse_kernel(kernel: Kernel, device: Device | None, launch: LaunchConfig,
                   db: DeviceDb | None = None) -> KernelReport:
    db = db or shipped_db()
    if kernel.ptx_only:
        return KernelReport(kernel, device, None, "ptx-only",
                            "PTX only: the driver compiles it at load time; no register data",
                            launch=launch)
    if kernel.vendor == "amd":
        arch, status, message = _amd_arch(kernel, device, db)
    else:
        arch, status, message = _nv_arch(kernel, device, db)
    report = KernelReport(kernel, device, arch, status, message, launch=launch)
    if arch is None:
        return report
    if isinstance(arch, AmdArch):
        if kernel.wavefront_size not in arch.wave_sizes:
            report.status = "wave-mismatch"
            report.message = (f"wave{kernel.wavefront_size} code cannot run on {arch.name} "
                              f"(wave{'/'.join(map(str, arch.wave_sizes))} only)")
            report.arch = None
            return report
        model = amd_kernel_model(kernel, arch, launch.dynamic_lds)
        block, source = choose_block(kernel, launch, arch)
        try:
            result, next_steps = _amd_profile(arch, model, block, kernel.resources.wgp_mode,
                                              kernel.resources.max_block_size)
        except ValueError as exc:  # resources no compiler produces for this target
            report.status, report.message, report.arch = "invalid-resources", str(exc), None
            return report
    else:
        model = nv_function_model(kernel, arch, launch.dynamic_lds)
        try:
            block, source = choose_block(kernel, launch, arch, model)
            result, next_steps = _nv_profile(arch, model, block, launch.dynamic_lds)
        except nvidia.OccupancyInputError as exc:
            report.status, report.message, report.arch = "invalid-resources", str(exc), None
            return report
    report.next_steps = list(next_steps)
    report.block_size, report.block_source = block, source
    report.occupancy, report.input_model = result, model
    return report


def most_blocks_per_unit(report: KernelReport) -> int | None:
    """The most blocks per unit a launch without a register count can have: its occupancy as
    if it used no registers at all, so that only the block size, the unit's block limit and
    the LDS / shared memory the trace gives (none, where it gives none) bound it. At least
    one block fits, since the launch ran. None when even that cannot be computed."""
    arch, block, dynamic = report.arch, report.block_size, report.launch.dynamic_lds
    try:
        if isinstance(arch, AmdArch):
            res = report.kernel.resources
            occ = amd.occupancy(arch, amd_kernel_model(report.kernel, arch, dynamic), block,
                                report.wgp_mode, max_block_size=res.max_block_size)
            return occ.blocks_per_cu or None
        if isinstance(arch, NvArch):
            model = nv_function_model(report.kernel, arch, dynamic)
            return nvidia.active_blocks(arch, model, block, dynamic).blocks_per_sm or None
    except ValueError:  # nvidia.OccupancyInputError too
        return None
    return None


# Real libraries hold thousands of kernels with a few dozen resource profiles (the 27,719
# flashinfer kernels that run on a B200 have 41), so the engine runs once per profile.
# Architectures hash by identity, the kernel models are frozen dataclasses, and the results
# are never mutated.
@lru_cache(maxsize=4096)
def _amd_profile(arch: AmdArch, model: amd.AmdKernel, block: int, wgp: bool | None,
                 max_block: int) -> tuple[amd.AmdOccupancy, tuple[steps.NextStep, ...]]:
    result = amd.occupancy(arch, model, block, wgp, max_block_size=max_block)
    return result, tuple(steps.amd_steps(arch, model, block, wgp, result))


@lru_cache(maxsize=4096)
def _nv_profile(arch: NvArch, model: nvidia.NvFunction, block: int, dynamic: int,
                ) -> tuple[nvidia.NvOccupancy, tuple[steps.NextStep, ...]]:
    result = nvidia.active_blocks(arch, model, block, dynamic)
    return result, tuple(steps.nvidia_steps(arch, model, block, dynamic, -1, result))


@lru_cache(maxsize=4096)
def potential_block_size(arch: NvArch, model: nvidia.NvFunction, dynamic: int
                         ) -> nvidia.PotentialBlockSize:
    """``nvidia.max_potential_block_size``, memoised per resource profile."""
    return nvidia.max_potential_block_size(arch, model, dynamic)


MISMATCH = ("arch-mismatch", "wave-mismatch")
OTHER_VENDOR = "*"  # unfit's key for another vendor's code in an input of the run's


def analyse(kernels: list[Kernel], devices: list[Device], launch_for, db: DeviceDb | None = None,
            unfit: dict[str, list[str]] | None = None) -> list[KernelReport]:
    """Reports for every kernel on every device it can run on (or on its own architecture).

    ``launch_for(kernel)`` gives the LaunchConfig of a kernel (command line / config file).
    With several entries of one container, only the entries matching a device were read
    (see ReadOptions.prefer). A kernel is analysed for the devices of its vendor that can
    run it; the others are named in ``unfit`` (device -> the code's targets), not reported
    once per kernel. A kernel no device of the run can run reports the mismatch (DEV101);
    a kernel of another vendor than every device of the run is not analysed, its target
    named in ``unfit`` under OTHER_VENDOR.
    """
    reports = []
    for kernel in kernels:
        same_vendor = [d for d in devices if d.vendor == kernel.vendor]
        if devices and not same_vendor and unfit is not None:
            # another vendor's code than every device of the run (a wheel's ROCm libraries
            # run with --device h100): for other machines; its targets are named once per
            # input (OTHER_VENDOR), its kernels not analysed
            _add(unfit, OTHER_VENDOR, kernel.target_id)
            continue
        launch = launch_for(kernel)
        several = unfit is not None and len(devices) > 1
        # No device of the kernel's vendor (a caller keeping no ``unfit``): the mismatch
        # against the first device (with several devices: against each)
        mine = [analyse_kernel(kernel, device, launch, db)
                for device in same_vendor or (devices if several else devices[:1]) or [None]]
        fit = [r for r in mine if r.status not in MISMATCH]
        if len(fit) < len(mine) and several:
            for r in mine:
                if r.status in MISMATCH and r.device is not None:
                    _add(unfit, r.device.name, kernel.target_id)
            if not fit:  # no device of the run: its own architecture, said once per input
                _add(unfit, "", kernel.target_id)
                fit = [analyse_kernel(kernel, None, launch, db)]
            mine = fit
        reports.extend(mine)
    return reports


def _add(unfit: dict[str, list[str]], device: str, target: str) -> None:
    targets = unfit.setdefault(device, [])
    if target not in targets:
        targets.append(target)
