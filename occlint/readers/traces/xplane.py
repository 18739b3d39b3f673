"""XLA profiler ``*.xplane.pb`` (an ``XSpace`` protocol buffer): the GPUs it describes.

``jax.profiler.trace`` and TensorFlow's profiler write ``plugins/profile/RUN/HOST.xplane.pb``
and, from it, ``HOST.trace.json.gz`` (read by :mod:`occlint.readers.traces.xla`). The JSON
names each GPU only ``/device:GPU:0``; the XSpace's plane of that name carries the product
in its stats (``gpu_device_name``, ``core_count``, ``compute_cap_major``/``minor``,
``device_vendor``). Those are read here with a decoder of the protocol-buffer wire format
(the schema: tsl/profiler/protobuf/xplane.proto) that reads only the GPU planes' names and
stats: it seeks past event lines, so a profile of any size costs a few reads.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import IO

from occlint.model.launch import TraceDevice
from occlint.readers.traces import TraceError

# field numbers (xplane.proto)
SPACE_PLANES = 1
PLANE_NAME, PLANE_STAT_METADATA, PLANE_STATS = 2, 5, 6
STAT_METADATA_ID, STAT_INT64, STAT_UINT64, STAT_STR, STAT_REF = 1, 4, 3, 5, 7
MAP_KEY, MAP_VALUE = 1, 2
STAT_METADATA_NAME = 2

MAX_FIELD = 1 << 20  # a GPU plane's name, stat or stat metadata larger than this is not real
GPU_PLANE = re.compile(r"^/device:GPU:(\d+)")
DEVICE_STATS = {"gpu_device_name", "device_vendor", "core_count", "compute_cap_major",
                "compute_cap_minor"}


def _varint(fh: IO[bytes]) -> int | None:
    """A varint from the stream; None at a clean end of the stream."""
    value = shift = 0
    while True:
        byte = fh.read(1)
        if not byte:
            if shift:
                raise TraceError("the XSpace is cut short inside a field")
            return None
        value |= (byte[0] & 0x7F) << shift
        if byte[0] < 0x80:
            return value
        shift += 7
        if shift > 63:
            raise TraceError("not an XSpace: a varint longer than 10 bytes")


def _fields(fh: IO[bytes], end: int):
    """(field number, wire type, varint value or length) of the fields up to offset ``end``;
    a length-delimited field's bytes are next in the stream (the caller reads or skips)."""
    while fh.tell() < end:
        tag = _varint(fh)
        if tag is None:
            return
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            yield number, wire, _varint(fh)
        elif wire == 2:
            length = _varint(fh)
            if length is None or fh.tell() + length > end:
                raise TraceError("the XSpace is cut short or damaged (a field runs past "
                                 "its message)")
            yield number, wire, length
        elif wire in (1, 5):
            fh.seek(8 if wire == 1 else 4, os.SEEK_CUR)
            yield number, wire, None
        else:
            raise TraceError(f"not an XSpace: wire type {wire} at byte {fh.tell()}")


def _small(fh: IO[bytes], length: int) -> bytes:
    if length > MAX_FIELD:
        raise TraceError(f"not an XSpace: a field of {length} bytes in a GPU plane")
    return fh.read(length)


def _message(data: bytes) -> dict[int, int | bytes]:
    """The scalar and length-delimited fields of a small message (last one wins)."""
    import io

    fh = io.BytesIO(data)
    out: dict[int, int | bytes] = {}
    for number, wire, value in _fields(fh, len(data)):
        if wire == 2:
            out[number] = fh.read(value)
        elif wire == 0:
            out[number] = value
    return out


def _plane_stats(fh: IO[bytes], end: int) -> dict[str, int | str]:
    """The named stats of one plane (stat metadata gives the names; ref values are
    strings held in the metadata too)."""
    names: dict[int, str] = {}
    raw: list[dict[int, int | bytes]] = []
    for number, wire, value in _fields(fh, end):
        if wire != 2:
            continue
        if number == PLANE_STAT_METADATA:
            entry = _message(_small(fh, value))
            meta = entry.get(MAP_VALUE)
            name = _message(meta).get(STAT_METADATA_NAME) if isinstance(meta, bytes) else None
            key = entry.get(MAP_KEY)
            if isinstance(key, int) and isinstance(name, bytes):
                names[key] = name.decode("utf-8", "replace")
        elif number == PLANE_STATS:
            raw.append(_message(_small(fh, value)))
        else:
            fh.seek(value, os.SEEK_CUR)
    stats: dict[str, int | str] = {}
    for stat in raw:
        name = names.get(stat.get(STAT_METADATA_ID, -1))  # type: ignore[arg-type]
        if name not in DEVICE_STATS:
            continue
        if isinstance(stat.get(STAT_STR), bytes):
            stats[name] = stat[STAT_STR].decode("utf-8", "replace")  # type: ignore[union-attr]
        elif isinstance(stat.get(STAT_REF), int):
            stats[name] = names.get(stat[STAT_REF], "")  # type: ignore[arg-type]
        elif isinstance(stat.get(STAT_INT64), int):
            stats[name] = _signed(stat[STAT_INT64])  # type: ignore[arg-type]
        elif isinstance(stat.get(STAT_UINT64), int):
            stats[name] = stat[STAT_UINT64]  # type: ignore[assignment]
    return stats


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def xspace_devices(path: Path) -> list[TraceDevice]:
    """The GPUs an ``.xplane.pb`` describes, keyed ``GPU:N`` as :mod:`xla` keys them."""
    devices = []
    with open(path, "rb") as fh:
        size = fh.seek(0, os.SEEK_END)
        fh.seek(0)
        for number, wire, value in _fields(fh, size):
            if wire != 2:
                continue
            start = fh.tell()
            if number != SPACE_PLANES:
                fh.seek(value, os.SEEK_CUR)
                continue
            name = _plane_name(fh, start + value)
            match = GPU_PLANE.match(name or "")
            if match:
                fh.seek(start)
                devices.append(_device(f"GPU:{match.group(1)}",
                                       _plane_stats(fh, start + value)))
            fh.seek(start + value)
    return devices


def _plane_name(fh: IO[bytes], end: int) -> str | None:
    for number, wire, value in _fields(fh, end):
        if wire == 2 and number == PLANE_NAME:
            return _small(fh, value).decode("utf-8", "replace")
        if wire == 2:
            fh.seek(value, os.SEEK_CUR)
    return None


def _device(key: str, stats: dict[str, int | str]) -> TraceDevice:
    vendor_name = str(stats.get("device_vendor", "Nvidia"))
    amd = vendor_name.lower().startswith("amd")
    name = stats.get("gpu_device_name")
    major, minor = stats.get("compute_cap_major"), stats.get("compute_cap_minor")
    arch = None
    if not amd and isinstance(major, int) and isinstance(minor, int) \
            and 0 < major < 100 and 0 <= minor < 10:
        arch = f"sm_{major}{minor}"
    cores = stats.get("core_count")
    return TraceDevice(key=key, vendor="amd" if amd else "nvidia",
                       name=name if isinstance(name, str) and name else None, arch=arch,
                       compute_units=cores if isinstance(cores, int) and 0 < cores < 1 << 16
                       else None,
                       properties={k: v for k, v in stats.items()})
