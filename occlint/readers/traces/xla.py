"""JAX / TensorFlow (XLA) profiles: the profile plugin's ``HOST.trace.json.gz``.

``jax.profiler.trace(DIR)`` (and TensorFlow's profiler) writes
``DIR/plugins/profile/RUN/HOST.xplane.pb`` and converts it to ``HOST.trace.json.gz``, a
Chrome trace: ``{"displayTimeUnit": "ns", "metadata": {...}, "traceEvents": [...]}``.
Processes are named by ``"ph": "M"`` events (``/device:GPU:0``, ``/host:CPU``), streams by
thread names (``Stream #14(Compute)``). Each GPU kernel is an ``"ph": "X"`` event (``ts`` /
``dur`` in µs) whose ``args`` hold

* ``kernel_details``: ``regs:168 static_shared:0 dynamic_shared:231424 grid:3,7,1
  block:384,1,1 occ_pct:18.75`` (registers per thread, bytes, blocks, threads; XLA's own
  occupancy, which occlint does not use: it computes its own);
* ``hlo_module`` / ``hlo_op``: the XLA program and the HLO instruction that launched it
  (``jit_f`` / ``cudnn-conv.1``): occlint's "op" of the launch group.

The JSON names no GPU model: the GPUs come from the ``.xplane.pb`` beside it
(:mod:`occlint.readers.traces.xplane`), else ``--device`` must name one.
"""

from __future__ import annotations

import gzip
import math
from pathlib import Path
from typing import Any

from occlint.model.kernel import InputError
from occlint.model.launch import LaunchCollector, LaunchKey, NvLaunchResources, dim3
from occlint.readers.traces import GZIP_MAGIC, RecordCheck, TraceError, TraceRead
from occlint.readers.traces.xplane import GPU_PLANE, gpu_planes, kernel_events, xspace_devices

TRACE_SUFFIX = ".trace.json.gz"
TRACE_SUFFIXES = (TRACE_SUFFIX, ".trace.json")  # as written, or gunzip'd
XPLANE_SUFFIX = ".xplane.pb"
DETAIL_INTS = {"regs": "registers", "static_shared": "static_shared",
               "dynamic_shared": "dynamic_shared"}


def xla_kind(head: bytes, path: Path) -> str | None:
    """"xla" for an XLA profile's Chrome trace (from its first bytes: processes named by
    XLA's device and host planes), "xplane" for an ``.xplane.pb``, else None."""
    if head.lstrip()[:1] == b"{" and b'"traceEvents"' in head and (
            b'"/device:' in head or b'"/host:' in head):
        return "xla"
    if path.name.endswith(XPLANE_SUFFIX):
        return "xplane"
    return None


def parse_kernel_details(text: str) -> dict[str, Any]:
    """``kernel_details`` as a dict: ints, grid / block triples, ``occ_pct`` a float."""
    out: dict[str, Any] = {}
    for token in text.split()[:32]:
        key, sep, value = token.partition(":")
        if not sep:
            continue
        try:
            if key in ("grid", "block"):
                out[key] = dim3([int(v) for v in value.split(",")], key)
            elif key in DETAIL_INTS:
                out[key] = int(value)
            elif key == "occ_pct":
                out[key] = float(value)
        except ValueError:
            raise ValueError(f"kernel_details {key} is not a number: {value[:40]!r}") from None
    return out


class _Reader:
    def __init__(self, display: str, fmt: str = "xla") -> None:
        self.collector = LaunchCollector(display, fmt)
        self.check = RecordCheck(display)
        self.processes: dict[Any, str] = {}  # pid -> device key (GPU:0) or process name
        self.threads: dict[tuple[Any, Any], str] = {}
        self.events = 0

    def event(self, event: Any) -> None:
        if not isinstance(event, dict):
            return
        args = event.get("args")
        if not isinstance(args, dict):
            return
        if event.get("ph") == "M":
            self._metadata(event, args)
        elif event.get("ph") == "X" and "kernel_details" in args:
            self._kernel(event, args)

    def _metadata(self, event: dict[str, Any], args: dict[str, Any]) -> None:
        name = args.get("name")
        if not isinstance(name, str):
            return
        if event.get("name") == "process_name":
            match = GPU_PLANE.match(name)
            self.processes[_hashable(event.get("pid"))] = \
                f"GPU:{match.group(1)}" if match else name[:200]
        elif event.get("name") == "thread_name":
            self.threads[(_hashable(event.get("pid")), _hashable(event.get("tid")))] = \
                name[:200]

    def _kernel(self, event: dict[str, Any], args: dict[str, Any]) -> None:
        """A trace event with ``kernel_details``: times in µs, device and stream by the
        process and thread names."""
        try:
            start, duration = float(event["ts"]) * 1000.0, float(event.get("dur", 0)) * 1000.0
        except (KeyError, TypeError, ValueError):
            start = duration = math.nan
        pid = _hashable(event.get("pid"))
        self.stream_kernel(self.processes.get(pid, f"pid {pid}"),
                           self.threads.get((pid, _hashable(event.get("tid"))),
                                            str(event.get("tid", ""))[:200]),
                           event.get("name"), start, duration, args)

    def stream_kernel(self, device: str, stream: str, name: Any, start: float,
                      duration: float, args: dict[str, Any]) -> None:
        """One kernel launch: times in ns; ``args`` holds kernel_details, hlo_op, ..."""
        self.events += 1
        where = f"kernel event {self.events}"
        if not isinstance(name, str) or not name:
            self.check.reject(where, "no name")
            return
        where = f"{where} ({name[:80]})"
        if not (math.isfinite(start) and math.isfinite(duration)) or duration < 0:
            self.check.reject(where, "no valid ts/dur")
            return
        details = args["kernel_details"]
        try:
            if not isinstance(details, str):
                raise ValueError("kernel_details is not a string")
            d = parse_kernel_details(details)
        except ValueError as exc:
            self.check.reject(where, str(exc))
            return
        if "grid" not in d or "block" not in d:
            self.check.reject(where, "kernel_details gives no grid / block")
            return
        regs, static, dynamic = d.get("regs"), d.get("static_shared"), d.get("dynamic_shared")
        if not self.check.check(d["grid"], d["block"], where, registers=regs,
                                static_shared_memory=static, dynamic_shared_memory=dynamic):
            return
        key = LaunchKey(device, name, None, d["grid"], d["block"],
                        NvLaunchResources(registers=regs, static_shared=static,
                                          dynamic_shared=dynamic), op=_op(args))
        self.collector.add(key, start, duration, stream)


def _op(args: dict[str, Any]) -> str | None:
    """``hlo_module/hlo_op``: the XLA program and instruction that launched the kernel."""
    module, op = args.get("hlo_module"), args.get("hlo_op")
    parts = [p[:200] for p in (module, op) if isinstance(p, str) and p]
    return "/".join(parts) or None


def _hashable(value: Any) -> Any:
    return value if isinstance(value, (int, float, str)) or value is None else repr(value)[:80]


def sibling_xplane(path: Path) -> Path | None:
    """``HOST.xplane.pb`` beside ``HOST.trace.json(.gz)``, when it exists."""
    for suffix in TRACE_SUFFIXES:
        if path.name.endswith(suffix):
            other = path.with_name(path.name[:-len(suffix)] + XPLANE_SUFFIX)
            return other if other.is_file() else None
    return None


def read_xla_profile(path: Path, display: str, kind: str) -> TraceRead:
    """An XLA trace.json(.gz) (``kind`` "xla"), or an ``.xplane.pb``: read for its GPUs
    when its trace.json.gz is beside it (that one holds the launches), else an error."""
    if kind == "xla":
        return read_xla(path, display)
    stem = path.name[:-len(XPLANE_SUFFIX)]
    trace = next((path.with_name(stem + suffix) for suffix in TRACE_SUFFIXES
                  if path.with_name(stem + suffix).is_file()), None)
    if trace is not None:
        read = TraceRead(LaunchCollector(display, "xplane"))
        read.collector.notes.append(f"read for the GPUs of {trace.name}, which holds the "
                                    "same launches")
        return read
    return read_xplane(path, display)


def read_xplane(path: Path, display: str) -> TraceRead:
    """The kernel launches and GPUs of an ``.xplane.pb`` (an XSpace): the same events and
    stats its trace.json.gz is converted from."""
    reader = _Reader(display, "xplane")
    errors: list[InputError] = []
    with open(path, "rb") as fh:
        try:
            planes = gpu_planes(fh)
        except TraceError as exc:
            raise TraceError(f"not a readable XSpace: {exc}") from None
        if not planes:
            raise TraceError("an XSpace with no GPU plane (/device:GPU:N): no GPU kernels "
                             "were recorded")
        try:
            for plane in planes:
                reader.collector.device(plane.device)
                for stream, name, start_ps, duration_ps, stats in kernel_events(fh, plane):
                    reader.stream_kernel(plane.device.key, stream, name, start_ps / 1e3,
                                         duration_ps / 1e3, stats)
        except TraceError as exc:
            errors.append(InputError(display, f"{exc}: {reader.events} kernel events read"))
    return TraceRead(reader.collector, reader.check.errors() + errors)


def read_xla(path: Path, display: str) -> TraceRead:
    """Read an XLA profile's trace.json(.gz): every kernel launch, and the GPUs from the
    ``.xplane.pb`` beside it."""
    import ijson

    reader = _Reader(display)
    errors: list[InputError] = []
    with open(path, "rb") as raw:
        gzipped = raw.read(2) == GZIP_MAGIC
        raw.seek(0)
        fh = gzip.GzipFile(fileobj=raw, mode="rb") if gzipped else raw
        try:
            for event in ijson.items(fh, "traceEvents.item", use_float=True):
                reader.event(event)
        except (ijson.JSONError, OSError, EOFError) as exc:
            message = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
            if not reader.events:
                raise TraceError(f"not a readable XLA trace: {message}") from None
            errors.append(InputError(display, f"the trace is cut short or damaged "
                                     f"({message}): {reader.events} kernel events read"))
    _describe_devices(reader, path, display, errors)
    return TraceRead(reader.collector, reader.check.errors() + errors)


def _describe_devices(reader: _Reader, path: Path, display: str,
                      errors: list[InputError]) -> None:
    collector = reader.collector
    xplane = sibling_xplane(path)
    if xplane is not None:
        try:
            for device in xspace_devices(xplane):
                collector.device(device)
        except (OSError, TraceError) as exc:
            errors.append(InputError(display, f"cannot read the GPUs from {xplane.name}: "
                                     f"{exc}"))
    used = {g.key.device for g in collector.group_list}
    if used - set(collector.devices):
        where = f" ({xplane.name} describes none of them)" if xplane else \
            f" (the {XPLANE_SUFFIX} written beside it does, when it is kept)"
        collector.notes.append("the XLA trace names its GPUs only "
                               f"{', '.join(sorted(used - set(collector.devices)))}{where}: "
                               "pass --device to analyse their occupancy")
