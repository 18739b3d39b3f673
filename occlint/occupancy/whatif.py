"""What-if occupancy: one request (a dict of ``occlint calc`` options) -> one result dict.

Shared by ``occlint calc`` and ``occlint calc --batch``. Request keys are the long option
names with ``_`` for ``-``: arch, device, block, registers, shared, dynamic_shared,
carveout, optin, barriers (NVIDIA); wave, vgpr, agpr, sgpr, lds, cu_mode (AMD).
"""

from __future__ import annotations

from typing import Any

from occlint.devices.db import DeviceDb
from occlint.devices.models import AmdArch, Device, NvArch
from occlint.errors import UnknownDeviceError
from occlint.occupancy import amd, nvidia, steps

COMMON_KEYS = {"arch", "device", "block"}
NVIDIA_KEYS = {"registers", "shared", "dynamic_shared", "carveout", "optin", "barriers"}
AMD_KEYS = {"wave", "vgpr", "agpr", "sgpr", "lds", "cu_mode"}
ALL_KEYS = COMMON_KEYS | NVIDIA_KEYS | AMD_KEYS


class CalcError(ValueError):
    """A request that cannot be evaluated; the message names the problem."""


def _int(req: dict[str, Any], key: str, default: int | None = None, minimum: int = 0) -> int:
    value = req.get(key, default)
    if value is None:
        raise CalcError(f"missing '{key}'")
    if isinstance(value, bool) or not isinstance(value, int):
        raise CalcError(f"'{key}' must be an integer, got {value!r}")
    if value < minimum:
        raise CalcError(f"'{key}' must be >= {minimum}, got {value}")
    return value


def resolve_target(req: dict[str, Any], db: DeviceDb) -> Device:
    has_arch, has_device = req.get("arch") is not None, req.get("device") is not None
    if has_arch == has_device:
        raise CalcError("give exactly one of 'arch' or 'device'")
    name = req["arch"] if has_arch else req["device"]
    if not isinstance(name, str):
        raise CalcError(f"'{'arch' if has_arch else 'device'}' must be a string")
    if has_arch:
        device = db.arch_device(name)
        if device is None:
            raise CalcError(f"unknown architecture {name!r} (e.g. gfx1100, sm_90)")
        return device
    try:
        return db.get(name)
    except UnknownDeviceError as exc:
        raise CalcError(str(exc)) from None


def evaluate(req: dict[str, Any], db: DeviceDb) -> dict[str, Any]:
    unknown = sorted(set(req) - ALL_KEYS)
    if unknown:
        raise CalcError(f"unknown key {unknown[0]!r}")
    device = resolve_target(req, db)
    block = _int(req, "block", minimum=1)
    limit = _max_block(device)
    if block > limit:
        raise CalcError(f"block of {block} threads exceeds {limit}, the most a block can have "
                        f"on {device.arch_name}")
    if isinstance(device.arch, NvArch):
        wrong = sorted(k for k in AMD_KEYS if req.get(k) is not None)
        if wrong:
            raise CalcError(f"'{wrong[0]}' applies to AMD targets, not {device.arch_name}")
        return _nvidia(req, device, block)
    wrong = sorted(k for k in NVIDIA_KEYS if req.get(k) is not None)
    if wrong:
        raise CalcError(f"'{wrong[0]}' applies to NVIDIA targets, not {device.arch_name}")
    return _amd(req, device, block)


def _max_block(device: Device) -> int:
    arch = device.arch
    return arch.max_threads_per_block if isinstance(arch, NvArch) else arch.max_workgroup_size


def _header(device: Device) -> dict[str, Any]:
    return {
        "vendor": device.vendor,
        "arch": device.arch_name,
        "device": None if device.arch_only else device.name,
    }


def _nvidia(req: dict[str, Any], device: Device, block: int) -> dict[str, Any]:
    arch = device.arch
    assert isinstance(arch, NvArch)
    registers = _int(req, "registers")
    if registers > arch.max_regs_per_thread:
        raise CalcError(f"{registers} registers per thread exceed the "
                        f"{arch.max_regs_per_thread} a thread can be allocated on {arch.name}")
    static = _int(req, "shared", 0)
    dynamic = _int(req, "dynamic_shared", 0)
    carveout = req.get("carveout", -1)
    if carveout is None:
        carveout = -1
    if isinstance(carveout, bool) or not isinstance(carveout, int):
        raise CalcError(f"'carveout' must be an integer percentage, got {carveout!r}")
    barriers = _int(req, "barriers", 1)
    optin = req.get("optin")
    if optin is not None and not isinstance(optin, bool):
        raise CalcError(f"'optin' must be true or false, got {optin!r}")
    if optin is None:  # opt in exactly when the launch needs more than the default limit
        optin = static + dynamic > arch.smem_per_block
    max_dynamic = max((arch.smem_per_block_optin if optin else arch.smem_per_block) - static, 0)
    func = nvidia.NvFunction(registers=registers, static_shared=static, optin=True,
                             max_dynamic_shared=max_dynamic, barriers=barriers)
    try:
        r = nvidia.active_blocks(arch, func, block, dynamic, carveout)
        potential = nvidia.max_potential_block_size(arch, func, dynamic, carveout,
                                                    device.compute_units or 0)
    except nvidia.OccupancyInputError as exc:
        raise CalcError(str(exc)) from None
    out = _header(device)
    out.update({
        "block_size": block,
        "registers": registers,
        "shared": static,
        "dynamic_shared": dynamic,
        "carveout": carveout,
        "optin": optin,
        "blocks_per_cu": r.blocks_per_sm,
        "blocks_per_sm": r.blocks_per_sm,
        "warps_per_block": r.warps_per_block,
        "warps_per_sm": r.warps_per_sm,
        "max_warps_per_sm": r.max_warps_per_sm,
        "occupancy": round(r.occupancy, 6),
        "limiters": list(r.limiters),
        "limits": {k: v for k, v in r.limits.items() if v != nvidia.INT_MAX},
        "allocated_registers_per_block": r.allocated_registers_per_block,
        "allocated_shared_per_block": r.allocated_shared_per_block,
        "shared_config_per_sm": r.smem_config,
        "max_potential_block_size": potential.block_size,
        "next_steps": [s.to_dict() for s in
                       steps.nvidia_steps(arch, func, block, dynamic, carveout, r)],
        "model": "cuda_occupancy.h",
    })
    if device.compute_units:
        out["sms"] = device.compute_units
        out["min_grid_size"] = potential.min_grid_size
    return out


def _amd(req: dict[str, Any], device: Device, block: int) -> dict[str, Any]:
    arch = device.arch
    assert isinstance(arch, AmdArch)
    wave = _int(req, "wave", arch.default_wave_size, minimum=1)
    if wave not in arch.wave_sizes:
        sizes = " or ".join(str(w) for w in arch.wave_sizes)
        raise CalcError(f"{arch.name} runs wave{sizes} only, not wave{wave}")
    cu_mode = req.get("cu_mode", False)
    if not isinstance(cu_mode, bool):
        raise CalcError(f"'cu_mode' must be true or false, got {cu_mode!r}")
    kernel = amd.AmdKernel(
        wave_size=wave, vgprs=_int(req, "vgpr"), agprs=_int(req, "agpr", 0),
        sgprs=_int(req, "sgpr", 0), lds=_int(req, "lds", 0),
    )
    wgp_mode = None if not cu_mode else False
    try:
        r = amd.occupancy(arch, kernel, block, wgp_mode)
    except ValueError as exc:
        raise CalcError(str(exc)) from None
    out = _header(device)
    out.update({
        "wave_size": wave,
        "block_size": block,
        "vgpr": kernel.vgprs,
        "agpr": kernel.agprs,
        "sgpr": kernel.sgprs,
        "lds": kernel.lds,
        "wgp_mode": r.wgp_mode,
        "unit": r.unit,
        "blocks_per_cu": r.blocks_per_cu,
        "waves_per_simd": r.waves_per_simd,
        "max_waves_per_simd": r.max_waves_per_simd,
        "waves_per_cu": r.waves_per_cu,
        "occupancy": round(r.occupancy, 6),
        "limiters": list(r.limiters),
        "limits": r.limits,
        "vgpr_alloc": r.vgpr_alloc,
        "next_steps": [s.to_dict() for s in steps.amd_steps(arch, kernel, block, wgp_mode, r)],
        "model": "llvm",
        "hip_blocks_per_cu": r.hip_blocks_per_cu,
    })
    if r.reason:
        out["reason"] = r.reason
    if device.compute_units:
        units = device.scheduling_units(r.wgp_mode)
        out["compute_units"] = device.compute_units
        out["scheduling_units"] = units
    return out
