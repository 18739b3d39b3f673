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

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from occlint.model.launch import TraceDevice
from occlint.readers.dwarf import DwarfError, uleb
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
STAT_ID_TAG = STAT_METADATA_ID << 3  # a stat's first byte: its metadata id, a varint
LINE_HEADER = frozenset({LINE_NAME, LINE_DISPLAY_NAME})
LINE_EVENT = frozenset({LINE_EVENTS})

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


def read_varint(data: bytes, i: int) -> tuple[int, int]:
    """A varint of ``data`` at ``i`` (protocol buffers' varints are DWARF's ULEB128), and
    the index after it."""
    try:
        return uleb(data, i)
    except DwarfError:
        raise TraceError("the XSpace is cut short or damaged inside a varint") from None


def field_header(data: bytes, i: int) -> tuple[int, int, Any, int]:
    """(field number, wire type, value, index after) of the field at ``i``: a varint's
    value, a length-delimited field's length (its bytes follow), None for a fixed-size one
    (skipped: the index may pass the end of a short ``data``)."""
    tag, i = read_varint(data, i)
    wire = tag & 7
    if wire in (0, 2):
        value, i = read_varint(data, i)
        return tag >> 3, wire, value, i
    if wire in (1, 5):
        return tag >> 3, wire, None, i + (8 if wire == 1 else 4)
    raise TraceError(f"not an XSpace: wire type {wire}")


def parse_fields(data: bytes):
    """(field number, wire type, value) of a message in memory; a length-delimited value
    is its bytes, a fixed-size one None."""
    i, n = 0, len(data)
    while i < n:
        number, wire, value, i = field_header(data, i)
        if wire == 2:
            if i + value > n:
                raise TraceError("the XSpace is cut short or damaged (a field runs past its "
                                 "message)")
            value, i = data[i:i + value], i + value
        elif i > n:
            raise TraceError("the XSpace is cut short inside a field")
        yield number, wire, value


WINDOW = 4 << 20  # bytes of a line read at a time


def _windowed(fh: IO[bytes], start: int, end: int, keep: frozenset[int]):
    """:func:`parse_fields` over the bytes ``[start, end)`` of the file, read a window at a time
    (a line can hold millions of events); length-delimited fields not in ``keep`` are
    skipped (value None)."""
    fh.seek(start)
    buf, i, pos = b"", 0, start  # pos: the file offset after buf
    while True:
        if len(buf) - i < 32 and pos < end:  # room for a tag and a length
            chunk = fh.read(min(WINDOW, end - pos))
            if not chunk:
                raise TraceError("the XSpace is cut short inside a line")
            buf, i, pos = buf[i:] + chunk, 0, pos + len(chunk)
        if i >= len(buf):
            return
        number, wire, value, i = field_header(buf, i)
        if wire == 2:
            length, value = value, None
            if pos - len(buf) + i + length > end:
                raise TraceError("the XSpace is cut short or damaged (a field runs past "
                                 "its line)")
            if number not in keep:
                if i + length > len(buf):  # past the window: go on after it
                    pos = pos - len(buf) + i + length
                    fh.seek(pos)
                    buf, i = b"", 0
                else:
                    i += length
            else:
                if length > MAX_FIELD:
                    raise TraceError(f"not an XSpace: a field of {length} bytes in a line")
                if i + length > len(buf):
                    chunk = fh.read(max(i + length - len(buf), min(WINDOW, end - pos)))
                    buf, i, pos = buf[i:] + chunk, 0, pos + len(chunk)
                    if length > len(buf):
                        raise TraceError("the XSpace is cut short inside a line")
                value, i = buf[i:i + length], i + length
        elif i > len(buf):  # mid-window, 32 bytes were there: only the end can be short
            raise TraceError("the XSpace is cut short inside a line")
        yield number, wire, value


def _event(data: bytes, wanted: set[int]) -> tuple[int, int, int, list[dict[int, Any]]]:
    """An XEvent's metadata id, offset and duration (ps), and those of its stats whose
    metadata id is ``wanted`` (the others, most of them, are not decoded: a stat starts
    with its metadata id)."""
    metadata_id = offset_ps = duration_ps = 0
    stats = []
    i, n = 0, len(data)
    while i < n:
        number, wire, value, i = field_header(data, i)
        if wire == 0:
            if number == EVENT_METADATA_ID:
                metadata_id = value
            elif number == EVENT_OFFSET_PS:
                offset_ps = _signed(value)
            elif number == EVENT_DURATION_PS:
                duration_ps = _signed(value)
        elif wire == 2:
            if i + value > n:
                raise TraceError("the XSpace is cut short or damaged (a field runs past its "
                                 "message)")
            if number == EVENT_STATS and value > 1 and data[i] == STAT_ID_TAG \
                    and read_varint(data, i + 1)[0] in wanted:
                stats.append(_message(data[i:i + value]))
            i += value
    return metadata_id, offset_ps, duration_ps, stats


def _message(data: bytes, repeated: int | None = None) -> dict[int, Any]:
    """The varint and length-delimited fields of a small message (the last one of each
    wins); the field ``repeated``, a list of its messages' fields."""
    out: dict[int, Any] = {}
    for number, wire, value in parse_fields(data):
        if number == repeated:
            if wire == 2:
                out.setdefault(number, []).append(_message(value))
        elif wire in (0, 2):
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
    wanted = {k for k, name in plane.stat_names.items() if name in KERNEL_STATS}
    for offset, length in plane.lines:
        end = offset + length
        header: dict[int, Any] = {}
        for number, wire, value in _windowed(fh, offset, end, LINE_HEADER):
            if wire == 2 and value is not None:
                header[number] = value.decode("utf-8", "replace")
            elif number == LINE_TIMESTAMP_NS and wire == 0:
                header[number] = _signed(value)
        stream = str(header.get(LINE_DISPLAY_NAME) or header.get(LINE_NAME) or "")[:200]
        base_ps = int(header.get(LINE_TIMESTAMP_NS, 0)) * 1000
        for number, wire, value in _windowed(fh, offset, end, LINE_EVENT):
            if value is None or number != LINE_EVENTS or wire != 2:
                continue
            metadata_id, offset_ps, duration_ps, own = _event(value, wanted)
            meta = plane.events.get(metadata_id)
            if meta is None:
                continue
            stats = _named(meta[1], plane.stat_names, KERNEL_STATS)
            stats.update(_named(own, plane.stat_names, KERNEL_STATS))
            if "kernel_details" not in stats:
                continue
            yield stream, meta[0], base_ps + offset_ps, duration_ps, stats


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
