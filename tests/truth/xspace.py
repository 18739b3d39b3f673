"""An XSpace (``*.xplane.pb``) decoded by Google's protobuf library, not by occlint.

The message classes are built here from the fields of tsl/profiler/protobuf/xplane.proto
(XSpace, XPlane, XLine, XEvent, XStat, XEventMetadata, XStatMetadata), so the truth the
XLA tests compare occlint's own wire-format decoder (occlint/readers/traces/xplane.py)
with comes from another implementation of protocol buffers.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

F = descriptor_pb2.FieldDescriptorProto
OPTIONAL, REPEATED = F.LABEL_OPTIONAL, F.LABEL_REPEATED
INT64, UINT64, DOUBLE = F.TYPE_INT64, F.TYPE_UINT64, F.TYPE_DOUBLE
STRING, BYTES, MESSAGE = F.TYPE_STRING, F.TYPE_BYTES, F.TYPE_MESSAGE

# message -> (name, number, type, label, message type) as in xplane.proto
SCHEMA = {
    "XSpace": [("planes", 1, MESSAGE, REPEATED, "XPlane"), ("errors", 2, STRING, REPEATED, None),
               ("warnings", 3, STRING, REPEATED, None),
               ("hostnames", 4, STRING, REPEATED, None)],
    "XPlane": [("id", 1, INT64, OPTIONAL, None), ("name", 2, STRING, OPTIONAL, None),
               ("lines", 3, MESSAGE, REPEATED, "XLine"),
               ("event_metadata", 4, MESSAGE, REPEATED, "XPlane.EventMetadataEntry"),
               ("stat_metadata", 5, MESSAGE, REPEATED, "XPlane.StatMetadataEntry"),
               ("stats", 6, MESSAGE, REPEATED, "XStat")],
    "XLine": [("id", 1, INT64, OPTIONAL, None), ("display_id", 10, INT64, OPTIONAL, None),
              ("name", 2, STRING, OPTIONAL, None), ("display_name", 11, STRING, OPTIONAL, None),
              ("timestamp_ns", 3, INT64, OPTIONAL, None),
              ("duration_ps", 9, INT64, OPTIONAL, None),
              ("events", 4, MESSAGE, REPEATED, "XEvent")],
    "XEvent": [("metadata_id", 1, INT64, OPTIONAL, None), ("offset_ps", 2, INT64, OPTIONAL, None),
               ("num_occurrences", 5, INT64, OPTIONAL, None),
               ("duration_ps", 3, INT64, OPTIONAL, None),
               ("stats", 4, MESSAGE, REPEATED, "XStat")],
    "XStat": [("metadata_id", 1, INT64, OPTIONAL, None),
              ("double_value", 2, DOUBLE, OPTIONAL, None),
              ("uint64_value", 3, UINT64, OPTIONAL, None),
              ("int64_value", 4, INT64, OPTIONAL, None), ("str_value", 5, STRING, OPTIONAL, None),
              ("bytes_value", 6, BYTES, OPTIONAL, None), ("ref_value", 7, UINT64, OPTIONAL, None)],
    "XEventMetadata": [("id", 1, INT64, OPTIONAL, None), ("name", 2, STRING, OPTIONAL, None),
                       ("display_name", 4, STRING, OPTIONAL, None),
                       ("metadata", 3, BYTES, OPTIONAL, None),
                       ("stats", 5, MESSAGE, REPEATED, "XStat"),
                       ("child_id", 6, INT64, REPEATED, None)],
    "XStatMetadata": [("id", 1, INT64, OPTIONAL, None), ("name", 2, STRING, OPTIONAL, None),
                      ("description", 3, STRING, OPTIONAL, None)],
}
MAPS = {"EventMetadataEntry": "XEventMetadata", "StatMetadataEntry": "XStatMetadata"}


def _add_fields(message, fields) -> None:
    for name, number, kind, label, type_name in fields:
        f = message.field.add(name=name, number=number, type=kind, label=label)
        if type_name:
            f.type_name = f".truth.{type_name}"


@cache
def _space_class():
    proto = descriptor_pb2.FileDescriptorProto(name="truth_xplane.proto", package="truth",
                                               syntax="proto3")
    for name, fields in SCHEMA.items():
        message = proto.message_type.add(name=name)
        _add_fields(message, fields)
        if name == "XStat":  # oneof value { double_value ... ref_value }
            message.oneof_decl.add(name="value")
            for field in message.field[1:]:
                field.oneof_index = 0
        if name == "XPlane":
            for entry, value in MAPS.items():
                nested = message.nested_type.add(name=entry)
                nested.options.map_entry = True
                _add_fields(nested, [("key", 1, INT64, OPTIONAL, None),
                                     ("value", 2, MESSAGE, OPTIONAL, value)])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("truth.XSpace"))


@dataclass(frozen=True)
class KernelEvent:
    plane: str  # /device:GPU:N
    line: str
    name: str
    start_ps: int
    duration_ps: int
    stats: dict[str, object]  # the event's and its metadata's, by stat name


def _value(stat, stat_names: dict[int, str]) -> object:
    """A stat's value; a reference (ref_value) is the name of the stat metadata it names."""
    field = stat.WhichOneof("value")
    if field is None:
        return None
    value = getattr(stat, field)
    return stat_names.get(value, "") if field == "ref_value" else value


def load(path: Path):
    space = _space_class()()
    space.ParseFromString(path.read_bytes())
    return space


def plane_stats(path: Path) -> dict[str, dict[str, object]]:
    """Each GPU plane's own stats by name (device_vendor, core_count, ...)."""
    out = {}
    for plane in load(path).planes:
        if plane.name.startswith("/device:GPU:"):
            names = {k: v.name for k, v in plane.stat_metadata.items()}
            out[plane.name] = {names.get(s.metadata_id, ""): _value(s, names)
                               for s in plane.stats}
    return out


def kernel_events(path: Path) -> list[KernelEvent]:
    """Every event of the GPU planes with a kernel_details stat (on the event or on its
    metadata), in plane and line order."""
    out = []
    for plane in load(path).planes:
        if not plane.name.startswith("/device:GPU:"):
            continue
        names = {k: v.name for k, v in plane.stat_metadata.items()}
        for line in plane.lines:
            for event in line.events:
                meta = plane.event_metadata[event.metadata_id]
                stats = {names.get(s.metadata_id, ""): _value(s, names)
                         for s in [*meta.stats, *event.stats]}
                if "kernel_details" in stats:
                    out.append(KernelEvent(plane.name, line.name, meta.name,
                                           line.timestamp_ns * 1000 + event.offset_ps,
                                           event.duration_ps, stats))
    return out
