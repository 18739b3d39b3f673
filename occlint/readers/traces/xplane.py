"""XLA profiler ``*.xplane.pb`` (an ``XSpace`` protocol buffer): GPUs and kernel events.

``jax.profiler.trace`` and TensorFlow's profiler write ``plugins/profile/RUN/HOST.xplane.pb``
and, from it, ``HOST.trace.json.gz`` (:mod:`occlint.readers.traces.xla`). The JSON names
each GPU only ``/device:GPU:0``; the XSpace's plane of that name carries the product in its
stats (``gpu_device_name``, ``core_count``, ``compute_cap_major``/``minor``,
``device_vendor``) and one line per stream, whose events (times in ps from the line's
``timestamp_ns``) carry the ``kernel_details`` / ``hlo_op`` / ``hlo_module`` stats, on the
event or on its metadata. The schema is tsl/profiler/protobuf/xplane.proto; this module is
a decoder of the protocol-buffer wire format for just those fields: it reads the GPU
planes' metadata and stats, seeks past the host planes and remembers where the lines are,
then streams their events one at a time. Every length is checked against its message's end
(a damaged or hostile file is a :class:`TraceError`), and no field over ``MAX_FIELD`` bytes
is read.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from occlint.model.launch import TraceDevice
from occlint.readers.traces import TraceError

# field numbers (xplane.proto)
SPACE_PLANES = 1
PLANE_NAME, PLANE_LINES, PLANE_EVENT_METADATA, PLANE_STAT_METADATA, PLANE_STATS = 2, 3, 4, 5, 6
LINE_NAME, LINE_TIMESTAMP_NS, LINE_EVENTS, LINE_DISPLAY_NAME = 2, 3, 4, 11
EVENT_METADATA_ID, EVENT_OFFSET_PS, EVENT_DURATION_PS, EVENT_STATS = 1, 2, 3, 4
STAT_METADATA_ID, STAT_INT64, STAT_UINT64, STAT_STR, STAT_REF = 1, 4, 3, 5, 7
MAP_KEY, MAP_VALUE = 1, 2
METADATA_NAME = 2  # XEventMetadata.name, XStatMetadata.name
EVENT_METADATA_STATS = 5

MAX_FIELD = 1 << 20  # a GPU plane's name, stat or stat metadata larger than this is not real
GPU_PLANE = re.compile(r"^/device:GPU:(\d+)")
DEVICE_STATS = {"gpu_device_name", "device_vendor", "core_count", "compute_cap_major",
                "compute_cap_minor"}
KERNEL_STATS = {"kernel_details", "hlo_op", "hlo_module"}


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
            value = _varint(fh)
            if value is None:
                raise TraceError("the XSpace is cut short inside a field")
            yield number, wire, value
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


def _message(data: bytes, repeated: int | None = None) -> dict[int, Any]:
    """The varint and length-delimited fields of a small message (the last one of each
    wins); the field ``repeated``, a list of its messages' fields."""
    fh = io.BytesIO(data)
    out: dict[int, Any] = {}
    for number, wire, value in _fields(fh, len(data)):
        if number == repeated:
            if wire == 2:
                out.setdefault(number, []).append(_message(fh.read(value)))
        elif wire == 2:
            out[number] = fh.read(value)
        elif wire == 0:
            out[number] = value
    return out


def _stat_value(stat: dict[int, Any], names: dict[int, str]) -> int | float | str | None:
    if isinstance(stat.get(STAT_STR), bytes):
        return stat[STAT_STR].decode("utf-8", "replace")
    if isinstance(stat.get(STAT_REF), int):
        return names.get(stat[STAT_REF], "")
    if isinstance(stat.get(STAT_INT64), int):
        return _signed(stat[STAT_INT64])
    if isinstance(stat.get(STAT_UINT64), int):
        return stat[STAT_UINT64]
    return None


def _named(stats: list[dict[int, Any]], names: dict[int, str], wanted: set[str]
           ) -> dict[str, int | float | str]:
    out: dict[str, int | float | str] = {}
    for stat in stats:
        name = names.get(stat.get(STAT_METADATA_ID, -1))
        if name in wanted:
            value = _stat_value(stat, names)
            if value is not None:
                out[name] = value
    return out


def _signed(value: Any) -> int:
    """An int64 field's value (a varint read as unsigned); 0 for a field of another wire
    type (a damaged message)."""
    if not isinstance(value, int):
        return 0
    return value - (1 << 64) if value >= 1 << 63 else value


@dataclass
class GpuPlane:
    """A ``/device:GPU:N`` plane: its device, and where its lines (streams) are."""

    device: TraceDevice
    lines: list[tuple[int, int]] = field(default_factory=list)  # (offset, length)
    stat_names: dict[int, str] = field(default_factory=dict)
    events: dict[int, tuple[str, list[dict[int, Any]]]] = field(default_factory=dict)


def _plane(fh: IO[bytes], key: str, end: int) -> GpuPlane:
    """A GPU plane's metadata and stats (one pass; its lines are skipped, their places
    kept)."""
    plane = GpuPlane(TraceDevice(key=key, vendor="nvidia"))
    raw_stats: list[dict[int, Any]] = []
    for number, wire, value in _fields(fh, end):
        if wire != 2:
            continue
        if number == PLANE_LINES:
            plane.lines.append((fh.tell(), value))
            fh.seek(value, os.SEEK_CUR)
        elif number in (PLANE_EVENT_METADATA, PLANE_STAT_METADATA):
            entry = _message(_small(fh, value))
            meta, map_key = entry.get(MAP_VALUE), entry.get(MAP_KEY)
            if not isinstance(meta, bytes) or not isinstance(map_key, int):
                continue
            fields = _message(meta, repeated=EVENT_METADATA_STATS)
            name = fields.get(METADATA_NAME)
            if not isinstance(name, bytes):
                continue
            if number == PLANE_STAT_METADATA:
                plane.stat_names[map_key] = name.decode("utf-8", "replace")
            else:
                stats = fields.get(EVENT_METADATA_STATS)
                plane.events[map_key] = (name.decode("utf-8", "replace"),
                                         stats if isinstance(stats, list) else [])
        elif number == PLANE_STATS:
            raw_stats.append(_message(_small(fh, value)))
        else:
            fh.seek(value, os.SEEK_CUR)
    plane.device = _device(key, _named(raw_stats, plane.stat_names, DEVICE_STATS))
    return plane


def gpu_planes(fh: IO[bytes]) -> list[GpuPlane]:
    """The GPU planes of an XSpace, keyed ``GPU:N`` as :mod:`xla` keys the trace's GPUs."""
    planes = []
    size = fh.seek(0, os.SEEK_END)
    fh.seek(0)
    for number, wire, value in _fields(fh, size):
        if wire != 2:
            continue
        start = fh.tell()
        if number == SPACE_PLANES:
            match = GPU_PLANE.match(_plane_name(fh, start + value) or "")
            if match:
                fh.seek(start)
                planes.append(_plane(fh, f"GPU:{match.group(1)}", start + value))
        fh.seek(start + value)
    return planes


def xspace_devices(path: Path) -> list[TraceDevice]:
    """The GPUs an ``.xplane.pb`` describes."""
    with open(path, "rb") as fh:
        return [plane.device for plane in gpu_planes(fh)]


def kernel_events(fh: IO[bytes], plane: GpuPlane
                  ) -> Iterator[tuple[str, str, int, int, dict[str, int | float | str]]]:
    """(stream, kernel name, start ps, duration ps, stats) of each event of the plane that
    carries ``kernel_details`` (the kernels; other events are memory copies and XLA's
    op / module summaries)."""
    for offset, length in plane.lines:
        end = offset + length
        fh.seek(offset)
        header = {}
        for number, wire, value in _fields(fh, end):
            if wire == 2 and number in (LINE_NAME, LINE_DISPLAY_NAME):
                header[number] = _small(fh, value).decode("utf-8", "replace")
            elif wire == 2:
                fh.seek(value, os.SEEK_CUR)
            elif number == LINE_TIMESTAMP_NS and wire == 0:
                header[number] = _signed(value)
        stream = str(header.get(LINE_DISPLAY_NAME) or header.get(LINE_NAME) or "")[:200]
        base_ps = int(header.get(LINE_TIMESTAMP_NS, 0)) * 1000
        fh.seek(offset)
        for number, wire, value in _fields(fh, end):
            if wire != 2:
                continue
            if number != LINE_EVENTS:
                fh.seek(value, os.SEEK_CUR)
                continue
            event = _message(_small(fh, value), repeated=EVENT_STATS)
            meta = plane.events.get(event.get(EVENT_METADATA_ID, -1))  # type: ignore[arg-type]
            if meta is None:
                continue
            stats = _named(meta[1], plane.stat_names, KERNEL_STATS)
            own = event.get(EVENT_STATS)
            stats.update(_named(own if isinstance(own, list) else [], plane.stat_names,
                                KERNEL_STATS))
            if "kernel_details" not in stats:
                continue
            yield (stream, meta[0], base_ps + _signed(event.get(EVENT_OFFSET_PS)),
                   _signed(event.get(EVENT_DURATION_PS)), stats)


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
