"""Run a kernel over block and grid sweeps and compare with occlint's static predictions.

Timing method: device events around each launch, a few warm-up launches, the median of
repeats, and fresh input data before every launch (each input buffer is restored from a
pristine device copy, outside the timed region; inputs are random, never zeros unless asked).
Short kernels get more repeats (until ``min_time_ms`` of kernel time is gathered). After the
sweeps, the fastest configurations, occlint's recommendation and the baselines are timed
again in interleaved rounds, and every ratio comes from that final round: configurations
compared under the same conditions, and no winner's curse from picking the luckiest of many
noisy sweep points.
"""

from __future__ import annotations

import ctypes
import math
import random
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from occlint.analysis.kernels import LaunchConfig, analyse_kernel
from occlint.devices.db import shipped_db
from occlint.devices.models import AmdArch, Device
from occlint.errors import OcclintError
from occlint.judgement.advice import AdviceSettings, advice, oversubscription_grid
from occlint.model.kernel import Kernel
from occlint.readers.loader import ReadOptions, read_path
from occlint.validate.backend import Backend, DeviceInfo, open_backend
from occlint.validate.spec import SIZES, Arg

CTYPES = {"u8": ctypes.c_uint8, "i8": ctypes.c_int8, "u16": ctypes.c_uint16,
          "i16": ctypes.c_int16, "u32": ctypes.c_uint32, "i32": ctypes.c_int32,
          "u64": ctypes.c_uint64, "i64": ctypes.c_int64, "f32": ctypes.c_float,
          "f64": ctypes.c_double}


@dataclass
class ValidateOptions:
    binary: Path
    kernel: str
    args: list[Arg]
    blocks: list[int] = field(default_factory=list)  # restrict the block sweep
    grids: list[int] = field(default_factory=list)  # restrict the grid sweep
    problem_size: int | None = None  # one element per thread: grid = ceil(N / block)
    grid_stride: bool = False  # the kernel loops over the data: any grid works
    dynamic_shared: int = 0
    repeats: int = 10  # at least this many timed launches per configuration
    warmup: int = 2
    min_time_ms: float = 25.0  # ... and more, up to max_repeats, until this much kernel time
    max_repeats: int = 200
    confirm_rounds: int = 30  # interleaved rounds of the final comparison
    confirm_top: int = 3  # fastest sweep configurations taken into the final comparison
    device_index: int = 0
    sweep_block: int | None = None  # block of the grid sweep (default: 256)
    max_grid_points: int = 120
    seed: int = 1234
    settings: AdviceSettings = field(default_factory=AdviceSettings)
    static_only: bool = False  # compare with the driver, launch nothing
    # time the launch as it is against a finding's fix: ((block, grid), (block, grid))
    compare: tuple[tuple[int, int], tuple[int, int]] | None = None


# -- kernel and device ----------------------------------------------------------------------

def _matches(kernel: Kernel, wanted: str) -> bool:
    import fnmatch

    demangled = kernel.demangled
    return wanted in (kernel.name, demangled, demangled.split("(", 1)[0]) or \
        fnmatch.fnmatchcase(kernel.name, wanted) or fnmatch.fnmatchcase(demangled, wanted)


def find_kernel(path: Path, name: str, prefer: tuple[str, ...] = ()) -> Kernel:
    result = read_path(path, str(path), ReadOptions(prefer=prefer))
    if result.errors and not result.kernels:
        raise OcclintError(f"{path}: {result.errors[0].message}")
    found = [k for k in result.kernels if _matches(k, name)]
    if not found:
        names = ", ".join(sorted({k.demangled for k in result.kernels})[:8])
        raise OcclintError(f"{path}: no kernel {name!r} (kernels: {names or 'none'})")
    archs = {k.arch for k in found}
    if len({k.name for k in found}) > 1:
        raise OcclintError(f"{path}: {name!r} matches several kernels: "
                           + ", ".join(sorted({k.demangled for k in found})))
    if len(archs) > 1 and prefer:
        raise OcclintError(f"{path}: no single {name!r} entry for {', '.join(prefer)}")
    return found[0]


def device_for(info: DeviceInfo, kernel: Kernel) -> Device:
    """occlint's view of the GPU the runtime reports (product if known, else its arch)."""
    db = shipped_db()
    if info.vendor == "nvidia":
        arch = db.nv_archs.get(info.arch)
        if arch is None:
            raise OcclintError(f"no limits for {info.arch} in the device database")
        try:
            product = db.get(info.name)
            if product.arch is arch and product.compute_units == info.units:
                return product
        except OcclintError:
            pass
        return Device(name=info.name, vendor="nvidia", arch=arch, compute_units=info.units,
                      source="reported by the CUDA driver")
    arch = db.amd_archs.get(kernel.arch)
    if arch is None:
        raise OcclintError(f"no limits for {kernel.arch} in the device database")
    wgp = arch.has_wgp and kernel.resources.wgp_mode is not False
    cus = info.units * (arch.cus_per_wgp if wgp else 1)  # HIP counts WGPs in WGP mode
    return Device(name=info.name, vendor="amd", arch=arch, compute_units=cus,
                  wgps=cus // arch.cus_per_wgp if arch.has_wgp else None,
                  source="reported by the HIP runtime")


def database_check(info: DeviceInfo, device: Device) -> list[dict[str, Any]]:
    """The device database's limits against what the driver reports."""
    arch = device.arch
    a = info.attributes
    if info.vendor != "nvidia" or not a:
        return []
    pairs = [("max_threads_per_sm", arch.max_threads_per_sm,
              a.get("max_threads_per_multiprocessor")),
             ("smem_per_sm", arch.smem_per_sm, a.get("max_shared_memory_per_multiprocessor")),
             ("smem_per_block_optin", arch.smem_per_block_optin,
              a.get("max_shared_memory_per_block_optin")),
             ("smem_reserved_per_block", arch.smem_reserved_per_block,
              a.get("reserved_shared_memory_per_block")),
             ("regs_per_sm", arch.regs_per_sm, a.get("max_registers_per_multiprocessor")),
             ("regs_per_block", arch.regs_per_block, a.get("max_registers_per_block")),
             ("max_threads_per_block", arch.max_threads_per_block,
              a.get("max_threads_per_block")),
             ("max_blocks_per_sm", arch.max_blocks_per_sm,
              a.get("max_blocks_per_multiprocessor"))]
    return [{"field": f, "database": db_value, "driver": driver, "equal": db_value == driver}
            for f, db_value, driver in pairs if driver is not None]


# -- arguments --------------------------------------------------------------------------------

class Buffers:
    """Device buffers for the spec, with pristine copies of the inputs."""

    def __init__(self, backend: Backend, args: list[Arg], seed: int):
        self.backend = backend
        self.args = args
        self.work: list[int | None] = []
        self.pristine: list[tuple[int, int, int]] = []  # (work, pristine, nbytes)
        self.zero_inputs = False
        self.values: list[ctypes._SimpleCData] = []
        rng = random.Random(seed)
        for arg in args:
            if not arg.is_buffer:
                self.work.append(None)
                self.values.append(CTYPES[arg.dtype](arg.scalar_value()))
                continue
            ptr = backend.alloc(arg.nbytes)
            self.work.append(ptr)
            self.values.append(ctypes.c_uint64(ptr))
            host = host_data(arg, rng)
            backend.upload(ptr, _address(host), arg.nbytes)
            if arg.fill != "out":
                copy = backend.alloc(arg.nbytes)
                backend.copy(copy, ptr, arg.nbytes)
                self.pristine.append((ptr, copy, arg.nbytes))
            if arg.fill == "zeros":
                self.zero_inputs = True
            del host

    def restore(self) -> None:
        for work, copy, nbytes in self.pristine:
            self.backend.copy(work, copy, nbytes)

    def params(self):
        array = (ctypes.c_void_p * len(self.values))(
            *[ctypes.addressof(v) for v in self.values])
        self._array = array
        return ctypes.addressof(array)

    def free(self) -> None:
        for ptr in self.work:
            if ptr:
                self.backend.free(ptr)
        for _, copy, _ in self.pristine:
            self.backend.free(copy)


def host_data(arg: Arg, rng: random.Random):
    """Host bytes for a buffer: numpy when available (fast), else the standard library."""
    n, dtype = arg.count or 0, arg.dtype
    try:
        import numpy as np
    except ImportError:
        np = None
    if np is not None:
        np_type = {"u8": np.uint8, "i8": np.int8, "u16": np.uint16, "i16": np.int16,
                   "f16": np.float16, "u32": np.uint32, "i32": np.int32, "f32": np.float32,
                   "u64": np.uint64, "i64": np.int64, "f64": np.float64}[dtype]
        gen = np.random.default_rng(rng.randrange(1 << 32))
        if arg.fill == "random":
            if dtype.startswith("f"):
                return gen.random(n, dtype=np.float64).astype(np_type)
            info = np.iinfo(np_type)
            return gen.integers(info.min, info.max, size=n, dtype=np_type, endpoint=True)
        if arg.fill == "out":
            return np.full(n * SIZES[dtype], 0xFF, dtype=np.uint8)
        value = {"zeros": 0, "ones": 1}.get(arg.fill, arg.fill)
        return np.full(n, float(value) if dtype.startswith("f") else int(float(value)),
                       dtype=np_type)
    if arg.fill == "random" and not dtype.startswith("f"):
        return bytearray(rng.randbytes(arg.nbytes))
    if arg.fill == "out":
        return bytearray(b"\xff" * arg.nbytes)
    import array as pyarray
    import struct

    code = {"f16": "e", "f32": "f", "f64": "d"}.get(dtype)
    if arg.fill == "random":
        if arg.nbytes > 64 << 20:
            raise OcclintError("random floating-point buffers over 64 MiB need numpy")
        return bytearray(b"".join(struct.pack("<" + code, rng.random()) for _ in range(n)))
    value = {"zeros": 0, "ones": 1}.get(arg.fill, arg.fill)
    typecode = code or {"u8": "B", "i8": "b", "u16": "H", "i16": "h", "u32": "I", "i32": "i",
                        "u64": "Q", "i64": "q"}[dtype]
    item = float(value) if code else int(float(value))
    return bytearray(pyarray.array(typecode, [item]).tobytes() * n)


def _address(host) -> int:
    if hasattr(host, "ctypes"):
        return host.ctypes.data
    return ctypes.addressof((ctypes.c_char * len(host)).from_buffer(host))


# -- the validation ---------------------------------------------------------------------------

def _grid_for(block: int, opts: ValidateOptions) -> int:
    return math.ceil(opts.problem_size / block) if opts.problem_size else 0


def grid_sweep_points(units: int, recommended: int, limit: int) -> list[int]:
    """Grids just at and just past the first multiples of the unit count (where the
    tail-effect jumps show) and a geometric range up to four times the recommended grid
    (where the time saturates), at most ``limit`` points in all."""
    pairs = sorted({g for k in range(1, 17) for g in (k * units, k * units + 1)})
    pairs = pairs[:max(limit // 2, 2)]
    top = max(recommended * 4, units * 64)
    ladder, value = [], float(pairs[-1])
    while value < top:
        value *= 1.25
        ladder.append(min(int(value), top) // units * units)
    ladder = sorted(set(ladder) | {top // units * units, recommended, recommended + 1})
    room = max(limit - len(pairs), 3)
    if len(ladder) > room:  # thin out evenly, keeping both ends and the recommendation
        step = (len(ladder) - 1) / (room - 1)
        ladder = sorted({ladder[round(i * step)] for i in range(room)} |
                        {recommended, recommended + 1})
    return sorted(set(pairs) | set(ladder))


def grid_analysis(points: list[dict[str, Any]], units: int, recommended: int,
                  tolerance: float = 0.03) -> dict[str, Any]:
    """What a measured grid sweep shows: the jump from each multiple of the unit count to
    one block more (the tail effect), and the plateau — the smallest grid from which every
    larger measured grid is within ``tolerance`` of the fastest (time has saturated)."""
    by_grid = {p["grid"]: p["ms"] for p in points}
    jumps = [{"grid": g, "ms": by_grid[g], "next_ms": by_grid[g + 1],
              "increase": round(by_grid[g + 1] / by_grid[g] - 1, 4)}
             for g in sorted(by_grid) if g % units == 0 and g + 1 in by_grid]
    fastest = min(by_grid.values())
    saturation = None
    for g in sorted(by_grid, reverse=True):
        if by_grid[g] > fastest * (1 + tolerance):
            break
        saturation = g
    rec_ms = by_grid.get(recommended)
    return {"jumps": jumps, "fastest_ms": fastest, "tolerance": tolerance,
            "saturation_grid": saturation, "recommended_grid": recommended,
            "recommended_ms": rec_ms,
            "recommended_on_plateau": bool(saturation is not None and recommended >= saturation
                                           and rec_ms is not None
                                           and rec_ms <= fastest * (1 + tolerance))}


def run(opts: ValidateOptions, backend: Backend | None = None) -> dict[str, Any]:
    # read first: the vendor decides the runtime, and a bad binary needs no GPU
    probe = find_kernel(opts.binary, opts.kernel)
    backend = backend or open_backend(probe.vendor, opts.device_index)
    started = time.monotonic()
    info = backend.device()
    prefer = (info.arch,) if info.vendor == "nvidia" else ()
    kernel = find_kernel(opts.binary, opts.kernel, prefer) if prefer else probe
    device = device_for(info, kernel)
    wave = kernel.wavefront_size
    report = analyse_kernel(kernel, device, LaunchConfig(dynamic_lds=opts.dynamic_shared,
                                                         problem_size=opts.problem_size))
    if report.occupancy is None:
        raise OcclintError(f"{kernel.demangled}: {report.message or report.status}")

    func = backend.load(opts.binary.read_bytes(), kernel.name)
    arch = device.arch
    if not isinstance(arch, AmdArch):
        static = kernel.resources.shared_bytes
        if static + opts.dynamic_shared > arch.smem_per_block:
            backend.set_max_dynamic_shared(func, arch.smem_per_block_optin - static)
    attrs = backend.attributes(func)

    # occupancy: static vs the runtime, for every block size the kernel can launch
    occupancy_rows = []
    for block in range(wave, min(attrs.max_threads, 1024) + 1, wave):
        static = analyse_kernel(kernel, device, LaunchConfig(block=block,
                                                            dynamic_lds=opts.dynamic_shared))
        occ = static.occupancy
        predicted = (occ.hip_blocks_per_cu if isinstance(arch, AmdArch)
                     else occ.blocks_per_sm)
        driver = backend.occupancy(func, block, opts.dynamic_shared)
        row = {"block": block, "static": predicted, "driver": driver,
               "equal": predicted == driver}
        if isinstance(arch, AmdArch):
            row["llvm_waves_per_simd"] = occ.waves_per_simd
        occupancy_rows.append(row)
    predicted_max = predicted_max_threads(kernel, device, opts.dynamic_shared)
    res = kernel.resources
    attributes = _attribute_rows(kernel, attrs, predicted_max)

    common = {
        "binary": str(opts.binary), "kernel": kernel.name, "demangled": kernel.demangled,
        "arch": kernel.arch,
        "device": {"name": info.name, "arch": info.arch or kernel.arch, "units": info.units,
                   "driver": info.driver, "occlint_device": device.name},
        "database_check": database_check(info, device),
        "resources": {"registers": getattr(res, "registers", None),
                      "shared_bytes": getattr(res, "shared_bytes", None),
                      "local_bytes": getattr(res, "local_bytes", None),
                      "vgpr": getattr(res, "vgpr", None), "lds_bytes":
                          getattr(res, "lds_bytes", None)},
        "dynamic_shared": opts.dynamic_shared,
        "attributes": attributes,
        "occupancy": occupancy_rows,
        "occupancy_agrees": all(r["equal"] for r in occupancy_rows),
        "attributes_agree": all(r["equal"] is not False for r in attributes),
    }
    if opts.static_only:
        return {**common, "mode": "static only"}

    # measurements
    buffers = Buffers(backend, opts.args, opts.seed)
    params = buffers.params()
    cache: dict[tuple[int, int], dict[str, Any]] = {}

    def launch(block: int, grid: int) -> float:
        buffers.restore()
        return backend.time_launch(func, grid, block, opts.dynamic_shared, params)

    def measure(block: int, grid: int) -> dict[str, Any]:
        key = (block, grid)
        if key not in cache:
            for _ in range(opts.warmup):
                launch(block, grid)
            times = [launch(block, grid) for _ in range(opts.repeats)]
            while len(times) < opts.max_repeats and sum(times) < opts.min_time_ms:
                times.append(launch(block, grid))
            cache[key] = _summary(block, grid, times)
        return cache[key]

    if opts.compare is not None:
        return {**common, **time_fix(launch, measure, opts), "zero_inputs": buffers.zero_inputs}

    launchable = [r["block"] for r in occupancy_rows if r["driver"] > 0]
    dims = getattr(res, "required_block", None) or getattr(res, "reqd_workgroup_size", None)
    if dims:  # .reqntid / reqd_work_group_size: the code assumes exactly this block
        launchable = [b for b in launchable if b == math.prod(dims)]
    if not launchable:
        raise OcclintError(f"{kernel.demangled}: no block size the driver can launch")
    blocks = [b for b in (opts.blocks or launchable) if b in launchable]
    units = device.scheduling_units(report.wgp_mode) or info.units
    settings = opts.settings

    def recommended_grid(block: int) -> int:
        at = analyse_kernel(kernel, device, LaunchConfig(block=block,
                                                         dynamic_lds=opts.dynamic_shared))
        return oversubscription_grid(at, settings) or units

    def grid_of(block: int, purpose: str) -> int:
        if opts.problem_size:
            return _grid_for(block, opts)
        if purpose == "recommended":
            return recommended_grid(block)
        return max(backend.occupancy(func, block, opts.dynamic_shared), 1) * info.units

    block_sweep = [measure(b, grid_of(b, "recommended")) for b in blocks]
    grid_sweep: list[dict[str, Any]] = []
    sweep_block = opts.sweep_block or (256 if 256 in launchable else launchable[-1])
    grid_summary = None
    if opts.grid_stride:
        rec = recommended_grid(sweep_block)
        grids = opts.grids or grid_sweep_points(units, rec, opts.max_grid_points)
        grid_sweep = [measure(sweep_block, g) for g in grids]
        grid_summary = grid_analysis(grid_sweep, units, rec)

    adv = advice(report, settings)
    rec_block = adv["recommended_block"]
    recommended = measure(rec_block, grid_of(rec_block, "recommended"))
    baselines = {}
    for label, block in (("fixed_128", 128), ("fixed_256", 256)):
        if block in launchable:
            baselines[label] = measure(block, grid_of(block, "baseline"))
    min_grid, potential = backend.potential_block(func, opts.dynamic_shared)
    baselines["max_potential"] = measure(potential, _grid_for(potential, opts) or min_grid)
    baselines["max_potential"]["driver_min_grid"] = min_grid
    final = confirm(launch, opts, list(cache.values()),
                    [recommended, *baselines.values()])
    best = min(final.values(), key=lambda m: m["ms"])
    buffers.free()

    def ratio(m: dict[str, Any]) -> float:
        return round(best["ms"] / m["ms"], 4)

    def final_of(m: dict[str, Any]) -> dict[str, Any]:
        confirmed = final[(m["block"], m["grid"])]
        return {**confirmed, "ratio": ratio(confirmed), "sweep_ms": m["ms"]}

    return {
        **common,
        "mode": "grid-stride" if opts.grid_stride else "one element per thread",
        "problem_size": opts.problem_size,
        "args": [f"{a.dtype}{f'[{a.count}]' if a.is_buffer else ''}:{a.fill}"
                 for a in opts.args],
        "zero_inputs": buffers.zero_inputs,
        "block_sweep": block_sweep,
        "grid_sweep": {"block": sweep_block, "units": units, "points": grid_sweep,
                       **grid_summary} if grid_sweep and grid_summary else None,
        "best": best,
        "recommended": {**final_of(recommended), "occupancy": adv.get("best_occupancy")},
        "baselines": {k: {**final_of(v), **({"driver_min_grid": v["driver_min_grid"]}
                                           if "driver_min_grid" in v else {})}
                      for k, v in baselines.items()},
        "final": sorted(final.values(), key=lambda m: m["ms"]),
        "advice": {k: adv.get(k) for k in ("recommended_block", "recommended_reason",
                                           "best_occupancy", "block_sizes_at_best",
                                           "capacity", "oversubscription")},
        "timing": {"repeats": opts.repeats, "warmup": opts.warmup, "statistic": "median",
                   "min_time_ms": opts.min_time_ms, "max_repeats": opts.max_repeats,
                   "confirm_rounds": opts.confirm_rounds,
                   "seconds": round(time.monotonic() - started, 1)},
    }


def time_fix(launch, measure, opts: ValidateOptions) -> dict[str, Any]:
    """The launch as it is and its fix (a finding's ``fix``), each timed, then both again
    in interleaved rounds: what the fix saves on this GPU."""
    assert opts.compare is not None
    as_is, fix = opts.compare
    measured = [measure(*as_is), measure(*fix)]
    final = confirm(launch, opts, [], measured)
    now, then = final[as_is], final[fix]
    return {"mode": "fix", "problem_size": opts.problem_size, "as_is": now, "fix": then,
            "saving": round(1 - then["ms"] / now["ms"], 4)}


def _summary(block: int, grid: int, times: list[float]) -> dict[str, Any]:
    return {"block": block, "grid": grid, "ms": statistics.median(times), "min_ms": min(times),
            "max_ms": max(times), "samples": len(times)}


def confirm(launch, opts: ValidateOptions, measured: list[dict[str, Any]],
            compared: list[dict[str, Any]]) -> dict[tuple[int, int], dict[str, Any]]:
    """Time the sweep's fastest configurations and ``compared`` again, interleaved: each
    round launches every configuration once, in a shuffled order."""
    keys: list[tuple[int, int]] = []
    for m in sorted(measured, key=lambda m: m["ms"])[:opts.confirm_top] + compared:
        if (m["block"], m["grid"]) not in keys:
            keys.append((m["block"], m["grid"]))
    rng = random.Random(opts.seed)
    times: dict[tuple[int, int], list[float]] = {k: [] for k in keys}
    for key in keys:
        for _ in range(opts.warmup):
            launch(*key)
    longest = max(next(m["ms"] for m in measured + compared if (m["block"], m["grid"]) == k)
                  for k in keys)
    rounds = max(opts.confirm_rounds, min(opts.max_repeats,
                                          math.ceil(opts.min_time_ms / max(longest, 1e-6))))
    for _ in range(rounds):
        order = keys[:]
        rng.shuffle(order)
        for key in order:
            times[key].append(launch(*key))
    return {k: _summary(*k, v) for k, v in times.items()}


def predicted_max_threads(kernel: Kernel, device: Device, dynamic_shared: int = 0) -> int:
    """The largest block the runtime reports the kernel can launch: its launch bound, the
    device's limit, and (NVIDIA) the register file, found by asking the occupancy engine.

    As the CUDA driver does (measured on an H200, docs/validation.md), a required block size
    (PTX ``.reqntid``, Triton's kernels) does not lower it; only ``.maxntid`` does."""
    arch = device.arch
    if isinstance(arch, AmdArch):
        limit = min(kernel.resources.max_block_size, arch.max_workgroup_size)
    else:
        limit = min(kernel.resources.max_block_size or arch.max_threads_per_block,
                    arch.max_threads_per_block)
    for block in range(limit, 0, -1):
        report = analyse_kernel(kernel, device, LaunchConfig(block=block,
                                                             dynamic_lds=dynamic_shared))
        occ = report.occupancy
        fits = occ.blocks_per_cu > 0 if isinstance(arch, AmdArch) else \
            occ.limits["registers"] > 0
        if fits:
            return block
    return 0


def _attribute_rows(kernel: Kernel, attrs, predicted_max: int) -> list[dict[str, Any]]:
    res = kernel.resources
    if kernel.vendor == "nvidia":
        pairs = [("registers", res.registers, attrs.registers),
                 ("shared_bytes", res.shared_bytes, attrs.shared_bytes),
                 ("local_bytes", res.local_bytes, attrs.local_bytes),
                 ("max_threads_per_block", predicted_max, attrs.max_threads)]
    else:  # HIP reports the allocated VGPRs, the static LDS and the private segment
        pairs = [("vgpr_alloc", res.vgpr_alloc, attrs.registers),
                 ("lds_bytes", res.lds_bytes, attrs.shared_bytes),
                 ("scratch_bytes", res.scratch_bytes, attrs.local_bytes),
                 ("max_threads_per_block", min(res.max_block_size, predicted_max),
                  attrs.max_threads)]
    rows = [{"field": f, "static": s, "driver": d, "equal": s == d} for f, s, d in pairs]
    if kernel.relocatable:  # the driver applies no stack frame to an unlinked -rdc object
        for row in rows:
            if row["field"] == "local_bytes" and not row["equal"]:
                row.update(equal=None, note="relocatable (-rdc) object loaded unlinked: the "
                           "driver reports no frame; ptxas's frame applies once linked")
    return rows
