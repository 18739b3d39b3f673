"""Nsight Systems SQLite exports (``nsys export --type sqlite report.nsys-rep``).

Schema: NVIDIA, "SQLite Export Schema Reference" (docs.nvidia.com/nsight-systems/
nsys-exporter/exported_data.html, 2021.5 and later; the CUDA section points at CUPTI's
``CUpti_ActivityKernel*`` records for the field meanings). Tables are created lazily, so a
report without CUDA kernels has no kernel table.

* ``CUPTI_ACTIVITY_KIND_KERNEL``: ``start``, ``end`` (ns), ``deviceId``, ``contextId``,
  ``streamId``, ``correlationId``, ``globalPid``, ``demangledName``, ``shortName``,
  ``mangledName`` (ids into ``StringIds(id, value)``), ``gridX/Y/Z`` (blocks), ``blockX/Y/Z``,
  ``registersPerThread``, ``staticSharedMemory``, ``dynamicSharedMemory``,
  ``localMemoryPerThread``, ``localMemoryTotal``, ``sharedMemoryExecuted``,
  ``sharedMemoryLimitConfig``, ``launchType``, ``cacheConfig``, ``gridId``, ``graphNodeId``.
* ``TARGET_INFO_GPU``: one row per GPU (``id`` = the kernels' ``deviceId``, ``name``,
  ``busLocation``, ``smCount``, ``computeMajor``, ``computeMinor``, ``maxShmemPerBlock``,
  ``maxRegistersPerBlock``, ``threadsPerWarp``, ``totalMemory``, ``clockRate``, ...).
  Older exports spell some of these like CUPTI's ``CUpti_ActivityDevice`` record
  (``numMultiprocessors``, ``computeCapabilityMajor/Minor``); both are read, and
  ``TARGET_INFO_CUDA_DEVICE`` (``gpuId``, ``cudaId``, ``numMultiprocessors``, ...) fills what
  ``TARGET_INFO_GPU`` lacks.

The database is opened read-only and read with one cursor (``fetchmany``); names are joined
in SQL, so ``StringIds`` (which also holds every NVTX and API string) is never loaded whole.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from occlint.model.launch import LaunchKey, NvLaunchResources, TraceDevice
from occlint.readers.traces import (
    RecordCheck,
    TraceError,
    TraceRead,
    launch_problem,
)
from occlint.readers.traces.rocprof import Emitter
from occlint.readers.traces.sqlite import read_sqlite, table_names

KERNEL_TABLE = "CUPTI_ACTIVITY_KIND_KERNEL"
MAX_NAME = 4096
MAX_DEVICES = 1024
BATCH = 4096


def _name(value: Any) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else str(value)
    if not text:
        return None
    return text if len(text) <= MAX_NAME else text[:MAX_NAME] + "..."


def _int(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():  # never NaN or infinite
        return int(value)
    if isinstance(value, (str, bytes)):
        try:
            return int(value)
        except ValueError:
            pass
    raise ValueError(f"not an integer: {value!r:.40}")


def _columns(db: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in db.execute(f'PRAGMA table_info("{table}")')]


def _pick(row: dict[str, Any], *names: str) -> Any:
    lowered = {k.lower(): v for k, v in row.items()}
    for name in names:
        value = lowered.get(name.lower())
        if value is not None:
            return value
    return None


def _devices(db: sqlite3.Connection, tables: set[str]) -> dict[str, TraceDevice]:
    """TraceDevices from TARGET_INFO_GPU (and TARGET_INFO_CUDA_DEVICE), keyed by device id."""
    rows: list[dict[str, Any]] = []
    if "TARGET_INFO_GPU" in tables:
        cursor = db.execute(f"SELECT * FROM TARGET_INFO_GPU LIMIT {MAX_DEVICES}")
        names = [d[0] for d in cursor.description]
        rows = [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]
    cuda: dict[Any, dict[str, Any]] = {}
    if "TARGET_INFO_CUDA_DEVICE" in tables:
        cursor = db.execute(f"SELECT * FROM TARGET_INFO_CUDA_DEVICE LIMIT {MAX_DEVICES}")
        names = [d[0] for d in cursor.description]
        for r in cursor.fetchall():
            row = dict(zip(names, r, strict=True))
            cuda.setdefault(_pick(row, "gpuId"), row)
    devices: dict[str, TraceDevice] = {}
    for row in rows:
        ident = _pick(row, "id", "deviceId", "gpuId", "cudaId")
        if ident is None:
            continue
        key = str(ident)
        if key in devices:
            continue  # one row per VM/process: the first describes the GPU
        extra = cuda.get(ident, {})
        merged = {**{k: v for k, v in extra.items() if v is not None}, **row}
        major = _pick(merged, "computeMajor", "computeCapabilityMajor", "ccMajor")
        minor = _pick(merged, "computeMinor", "computeCapabilityMinor", "ccMinor")
        sms = _pick(merged, "smCount", "numMultiprocessors", "multiProcessorCount", "numSms")
        warp = _pick(merged, "threadsPerWarp", "numThreadsPerWarp", "warpSize")
        arch = (f"sm_{major}{minor}" if isinstance(major, int) and isinstance(minor, int)
                and 0 < major < 100 and 0 <= minor < 10 else None)
        name = _pick(merged, "name")
        devices[key] = TraceDevice(
            key=key, vendor="nvidia", name=_name(name) if isinstance(name, str) else None,
            arch=arch,
            compute_units=sms if isinstance(sms, int) and 0 < sms < 1 << 16 else None,
            wave_size=warp if warp == 32 else 32,
            properties={k: v for k, v in merged.items() if isinstance(v, (int, float, str))})
    return devices


def read_nsys(path: Path, display: str) -> TraceRead:
    """Read the kernel launches of an Nsight Systems SQLite export."""
    return read_sqlite(path, display, "nsys", _read, "kernel launches")


def _read(db: sqlite3.Connection, read: TraceRead, check: RecordCheck) -> None:
    collector = read.collector
    tables = table_names(db)
    if KERNEL_TABLE not in tables:
        raise TraceError(f"no {KERNEL_TABLE} table: the report holds no CUDA kernel launches "
                         f"(record with 'nsys profile --trace=cuda')")
    devices = _devices(db, tables)
    if "TARGET_INFO_GPU" not in tables:
        collector.notes.append("no TARGET_INFO_GPU table: the GPUs are not described")
    columns = {c.lower(): c for c in _columns(db, KERNEL_TABLE)}
    needed = ("start", "end", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ")
    missing = [c for c in needed if c.lower() not in columns]
    if missing:
        raise TraceError(f"{KERNEL_TABLE} lacks column{'s' if len(missing) > 1 else ''} "
                         f"{', '.join(missing)}")
    strings = "StringIds" in tables

    def col(name: str) -> str:
        real = columns.get(name.lower())
        return f'K."{real}"' if real else "NULL"

    def text(name: str, alias: str) -> tuple[str, str]:
        real = columns.get(name.lower())
        if real is None:
            return "NULL", ""
        if not strings:
            return f'K."{real}"', ""
        return (f'COALESCE({alias}.value, CASE WHEN typeof(K."{real}") = \'text\' '
                f'THEN K."{real}" END)',
                f'LEFT JOIN StringIds {alias} ON {alias}.id = K."{real}" ')

    demangled, j1 = text("demangledName", "D")
    short, j2 = text("shortName", "S")
    mangled, j3 = text("mangledName", "M")
    query = (f"SELECT {col('start')}, {col('end')}, {col('deviceId')}, {col('streamId')}, "
             f"{col('gridX')}, {col('gridY')}, {col('gridZ')}, "
             f"{col('blockX')}, {col('blockY')}, {col('blockZ')}, "
             f"{col('registersPerThread')}, {col('staticSharedMemory')}, "
             f"{col('dynamicSharedMemory')}, {col('localMemoryPerThread')}, "
             f"{demangled}, {short}, {mangled} FROM {KERNEL_TABLE} K {j1}{j2}{j3}")
    cursor = db.execute(query)
    number = 0
    emitter = Emitter(collector, check)
    cache = emitter.cache
    while True:
        rows = cursor.fetchmany(BATCH)
        if not rows:
            break
        for row in rows:
            number += 1
            raw = row[2:]  # all but start and end
            target = cache.get(raw)
            if target is None:
                where = f"kernel {number}"
                if not emitter.valid_times(row[0], row[1], where):
                    continue
                target = emitter.remember(raw, _target(row, emitter, devices))
            emitter.emit(target, row[0], row[1], f"kernel {number}")


def _target(row: tuple[Any, ...], emitter: Emitter, devices: dict[str, TraceDevice]) -> Any:
    """The launch target of a kernel row, or the problem that makes it inconsistent."""
    (_start, _end, device_id, stream, gx, gy, gz, bx, by, bz, regs, static, dynamic, local,
     demangled, short, mangled) = row
    try:
        grid = (_int(gx) or 0, _int(gy) or 0, _int(gz) or 0)
        block = (_int(bx) or 0, _int(by) or 0, _int(bz) or 0)
        regs_i, static_i, dynamic_i, local_i = (_int(regs), _int(static), _int(dynamic),
                                                _int(local))
    except ValueError as exc:
        return str(exc)
    problem = launch_problem(grid, block, {
        "registers": regs_i, "static_shared": static_i, "dynamic_shared": dynamic_i,
        "local_bytes": local_i})
    if problem is not None:
        return problem
    collector = emitter.collector
    key_device = str(device_id)[:40] if device_id is not None else "0"
    if key_device not in collector.devices:
        collector.device(devices.get(key_device)
                         or TraceDevice(key=key_device, vendor="nvidia", wave_size=32))
    mangled_name = _name(mangled)
    name = _name(demangled) or _name(short) or mangled_name or "(unnamed kernel)"
    if mangled_name == name:
        mangled_name = name if name.startswith("_Z") else None
    key = LaunchKey(device=key_device, kernel=name, mangled=mangled_name, grid=grid,
                    block=block,
                    resources=NvLaunchResources(registers=regs_i, static_shared=static_i,
                                                dynamic_shared=dynamic_i, local_bytes=local_i))
    return emitter.target(key, str(stream)[:40] if stream is not None else "0")

