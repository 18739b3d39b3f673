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
  (``jit_f`` / ``cudnn-conv.1``): part of the launch group's key (``LaunchKey.op``, so
  launches of different instructions are different groups) and its ``launched_by``
  (``op``, ``module``), as the Kineto reader fills it from the CPU op.

The JSON names no GPU model: the GPUs come from the ``.xplane.pb`` beside it
(:mod:`occlint.readers.traces.xplane`), else ``--device`` must name one.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import IO, Any

import msgspec

from occlint.model.kernel import InputError
from occlint.model.launch import (
    AmdLaunchResources,
    LaunchCollector,
    LaunchKey,
    LaunchResources,
    NvLaunchResources,
    TraceDevice,
    dim3,
)
from occlint.readers.traces import (
    XPLANE_SUFFIX,
    RecordCheck,
    TraceError,
    TraceRead,
    unpacked,
)
from occlint.readers.traces.xplane import GPU_PLANE, gpu_planes, kernel_events, xspace_devices

TRACE_SUFFIX = ".trace.json.gz"
TRACE_SUFFIXES = (TRACE_SUFFIX, ".trace.json")  # as written, or gunzip'd
# the integers of kernel_details, and what a record check calls them
DETAIL_INTS = {"regs": "registers", "static_shared": "static_shared_memory",
               "dynamic_shared": "dynamic_shared_memory", "private_mem": "private_memory",
               "group_mem": "group_memory"}
# ROCm's kernel_details (XLA's rocm_collector ToXStat, with rocprofiler-sdk): the dispatch's
# private (scratch, per work-item) and group (LDS, per work-group) segment sizes, no registers
ROCM_DETAILS = ("private_mem", "group_mem")
LEGACY_ROCM_GARBAGE = ("regs", "static_shared")  # on an AMD GPU before rocprofiler-sdk


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
    def __init__(self, display: str, fmt: str = "xla",
                 devices: list[TraceDevice] | None = None) -> None:
        self.collector = LaunchCollector(display, fmt)
        for device in devices or ():
            self.collector.device(device)
        # device key (GPU:0) -> vendor, from the XSpace: how to read kernel_details
        self.vendors = {d.key: d.vendor for d in devices or ()}
        self.legacy_rocm = 0  # launch shapes whose ROCm registers were ignored
        self.check = RecordCheck(display)
        self.processes: dict[Any, str] = {}  # pid -> device key (GPU:0) or process name
        self.threads: dict[tuple[Any, Any], str] = {}
        self.events = 0
        # (device, stream, name, kernel_details, op) -> collector handle, or None: invalid
        self.shapes: dict[tuple, Any] = {}
        # the fast path's: (pid, tid, name, kernel_details, hlo_module, hlo_op) -> handle
        self.raw_shapes: dict[tuple, Any] = {}

    def event(self, event: Any) -> None:
        """One event as a dict (the ijson path)."""
        if not isinstance(event, dict):
            return
        args = event.get("args")
        if not isinstance(args, dict):
            return
        if event.get("ph") == "M":
            self.metadata(event.get("name"), event.get("pid"), event.get("tid"),
                          args.get("name"))
        elif event.get("ph") == "X" and "kernel_details" in args:
            self.kernel_event(event.get("name"), event.get("ts"), event.get("dur", 0),
                              event.get("pid"), event.get("tid"), args["kernel_details"],
                              _op(args.get("hlo_module"), args.get("hlo_op")))

    def metadata(self, kind: Any, pid: Any, tid: Any, name: Any) -> None:
        """A process or thread name (``"ph": "M"``)."""
        self.raw_shapes.clear()  # a pid or tid may now name another device or stream
        if not isinstance(name, str):
            return
        if kind == "process_name":
            match = GPU_PLANE.match(name)
            self.processes[_hashable(pid)] = f"GPU:{match.group(1)}" if match else name[:200]
        elif kind == "thread_name":
            self.threads[(_hashable(pid), _hashable(tid))] = name[:200]

    def kernel_event(self, name: Any, ts: Any, dur: Any, pid: Any, tid: Any, details: Any,
                     op: str | None) -> Any:
        """A trace event with ``kernel_details``: times in µs, device and stream by the
        process and thread names."""
        try:
            start, duration = float(ts) * 1000.0, float(dur) * 1000.0
        except (TypeError, ValueError, OverflowError):
            start = duration = math.nan
        pid = _hashable(pid)
        return self.stream_kernel(self.processes.get(pid, f"pid {pid}"),
                           self.threads.get((pid, _hashable(tid)), str(tid)[:200]),
                           name, start, duration, details, op)

    def stream_kernel(self, device: str, stream: str, name: Any, start: float,
                      duration: float, details: Any, op: str | None) -> Any:
        """One kernel launch: times in ns. Its shape's collector handle, or None when the
        launch is invalid (counted)."""
        self.events += 1
        where = f"kernel event {self.events}"
        if not isinstance(name, str) or not name:
            self.check.reject(where, "no name")
            return None
        where = f"{where} ({name[:80]})"
        if not (math.isfinite(start) and math.isfinite(duration)) or duration < 0:
            self.check.reject(where, "no valid ts/dur")
            return None
        shape = (device, stream, name, details, op) if isinstance(details, str) else None
        handle = self.shapes.get(shape, self) if shape is not None else self
        if handle is None:  # a shape already found invalid: counted again
            self.check.bad += 1
            return None
        if handle is not self:
            self.collector.add_to(handle, start, duration)
            return handle
        handle = self._handle(device, stream, name, details, op, where)
        if shape is not None:
            self.shapes[shape] = handle
        if handle is not None:
            self.collector.add_to(handle, start, duration)
        return handle

    def _handle(self, device: str, stream: str, name: str, details: Any, op: str | None,
                where: str) -> Any:
        """The collector handle of a new launch shape; None (counted) when invalid."""
        try:
            if not isinstance(details, str):
                raise ValueError("kernel_details is not a string")
            d = parse_kernel_details(details)
        except ValueError as exc:
            self.check.reject(where, str(exc))
            return None
        if "grid" not in d or "block" not in d:
            self.check.reject(where, "kernel_details gives no grid / block")
            return None
        resources = self._resources(device, d)
        vendor = "amd" if isinstance(resources, AmdLaunchResources) else "nvidia"
        if not self.check.check(d["grid"], d["block"], where, vendor,
                                **{DETAIL_INTS[k]: d[k] for k in DETAIL_INTS if k in d
                                   and (vendor == "nvidia" or k not in LEGACY_ROCM_GARBAGE)}):
            return None
        if vendor == "amd":  # ROCm names the kernel descriptor's symbol: NAME.kd
            name = name.removesuffix(".kd")
        key = LaunchKey(device, name, None, d["grid"], d["block"], resources, op=op)
        handle = self.collector.handle(key, stream)
        if op and handle[0].launched_by is None:  # the report's "launched by"
            module, _, instruction = op.rpartition("/")
            handle[0].launched_by = {"op": instruction, "module": module or None}
        return handle


    def _resources(self, device: str, d: dict[str, Any]) -> LaunchResources:
        """What the kernel_details say of a launch's resources. On an AMD GPU, XLA writes
        ROCm's fields (private_mem, group_mem); before rocprofiler-sdk it wrote CUDA's, with
        the registers and static shared memory never set (the roctracer callback fills only
        the launch's block, grid and dynamic shared memory: values such as regs:2191487992
        are uninitialised memory), so only the dynamic LDS is kept."""
        if any(k in d for k in ROCM_DETAILS):
            return AmdLaunchResources(lds_bytes=d.get("group_mem"),
                                      scratch_bytes=d.get("private_mem"))
        if self.vendors.get(device) == "amd":
            self.legacy_rocm += 1
            return AmdLaunchResources(dynamic_lds=d.get("dynamic_shared"))
        return NvLaunchResources(registers=d.get("regs"), static_shared=d.get("static_shared"),
                                 dynamic_shared=d.get("dynamic_shared"))

    def note_legacy_rocm(self) -> None:
        if self.legacy_rocm:
            self.collector.notes.append(
                "the kernel_details of this ROCm profile give registers and static shared "
                "memory that XLA's ROCm tracer never set (before rocprofiler-sdk): ignored; "
                "the launches are analysed by their block, grid and dynamic LDS")


def _op(module: Any, op: Any) -> str | None:
    """``hlo_module/hlo_op``: the XLA program and instruction that launched the kernel."""
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
        reader = _Reader(display, "xplane", [plane.device for plane in planes])
        try:
            for plane in planes:
                for stream, name, start_ps, duration_ps, stats in kernel_events(fh, plane):
                    reader.stream_kernel(plane.device.key, stream, name, start_ps / 1e3,
                                         duration_ps / 1e3, stats["kernel_details"],
                                         _op(stats.get("hlo_module"), stats.get("hlo_op")))
        except TraceError as exc:
            errors.append(InputError(display, f"{exc}: {reader.events} kernel events read"))
    if not reader.events and not errors:
        raise TraceError("no kernel in the XSpace's GPU planes (no event with "
                         "kernel_details)")
    reader.note_legacy_rocm()
    return TraceRead(reader.collector, reader.check.errors() + errors)


def read_xla(path: Path, display: str) -> TraceRead:
    """Read an XLA profile's trace.json(.gz): every kernel launch, and the GPUs from the
    ``.xplane.pb`` beside it. XLA's own compact layout is decoded in batches of events
    (:func:`_scan_xla_layout`); any other layout, and a damaged file, go through ijson."""
    xplane = sibling_xplane(path)
    devices, described = _xspace_devices(xplane, display)
    reader = _Reader(display, devices=devices)
    errors: list[InputError] = []
    with open(path, "rb") as raw:
        try:
            _scan_xla_layout(unpacked(raw), reader)
        except (_NotXlaLayout, OSError, EOFError):
            raw.seek(0)
            reader = _Reader(display, devices=devices)
            errors = _scan_generic(unpacked(raw), reader, display)
    if not reader.events and not errors:
        raise TraceError(f"no GPU kernel in this XLA profile ({_processes(reader)}): "
                         "occlint reads the kernels of GPU profiles")
    errors.extend(described)
    _note_unnamed_devices(reader.collector, xplane)
    reader.note_legacy_rocm()
    return TraceRead(reader.collector, reader.check.errors() + errors)


def _processes(reader: _Reader) -> str:
    names = sorted({f"/device:{n}" if n.startswith("GPU:") else n
                    for n in reader.processes.values()})
    return "processes " + ", ".join(names[:6]) + (", ..." if len(names) > 6 else "") \
        if names else "no process names"


class _NotXlaLayout(Exception):
    """The fast path cannot read this file (another layout, or damage): the careful path
    reads it and says where it stops."""


class _Args(msgspec.Struct):
    name: Any = None
    kernel_details: Any = None
    hlo_module: Any = None
    hlo_op: Any = None


class _Event(msgspec.Struct):
    ph: Any = None
    pid: Any = None
    tid: Any = None
    ts: Any = None
    dur: Any = 0
    name: Any = None
    args: _Args | None = None


_DECODE_EVENTS = msgspec.json.Decoder(list[_Event]).decode
EVENTS_KEY = b'"traceEvents":['
# Where XLA's writer starts an event: ``{"ph":`` is always structure (a quote inside a
# string is escaped), and a cut anywhere deeper than the event list leaves brackets open on
# both sides, so a batch cut there fails to decode: never a wrong reading.
EVENT_START = b',{"ph":'
BATCH = 8 << 20
_NUMBER = (float, int)
MAX_PENDING = 64 << 20  # bytes without an event start: not XLA's layout


def _scan_xla_layout(fh: IO[bytes], reader: _Reader) -> None:
    """XLA's compact layout (``{"displayTimeUnit":...,"traceEvents":[{"ph":...},...]}``),
    decoded by msgspec in batches of whole events cut at event starts."""
    data = fh.read(BATCH)
    at = data.find(EVENTS_KEY)
    if at < 0 or not data.lstrip().startswith(b"{"):
        raise _NotXlaLayout
    data = data[at + len(EVENTS_KEY):]
    while True:
        more = fh.read(BATCH)
        if not more:
            break
        data += more
        cut = data.rfind(EVENT_START)
        if cut < 0:
            if len(data) > MAX_PENDING:
                raise _NotXlaLayout
            continue
        _batch(b"[" + data[:cut] + b"]", reader)
        data = data[cut + 1:]
    close = data.rfind(b"]")
    if close < 0 or data[close + 1:].strip() != b"}":
        raise _NotXlaLayout  # cut short, or keys after the event list
    _batch(b"[" + data[:close] + b"]", reader)


def _batch(text: bytes, reader: _Reader) -> None:
    try:
        events = _DECODE_EVENTS(text)
    except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError):
        raise _NotXlaLayout from None  # msgspec raises the last on invalid UTF-8
    known, add_to, isfinite = reader.raw_shapes, reader.collector.add_to, math.isfinite
    for e in events:
        a = e.args
        if a is None:
            continue
        if e.ph == "X" and a.kernel_details is not None:
            shape = (e.pid, e.tid, e.name, a.kernel_details, a.hlo_module, a.hlo_op)
            try:
                handle = known.get(shape)
            except TypeError:  # a list or object where XLA writes a scalar
                shape, handle = None, None
            ts, dur = e.ts, e.dur
            if handle is not None and type(ts) in _NUMBER and type(dur) in _NUMBER:
                try:
                    start, duration = ts * 1000.0, dur * 1000.0
                except OverflowError:  # an integer beyond any float
                    start = duration = math.nan
                if isfinite(start) and 0 <= duration < math.inf:
                    reader.events += 1
                    add_to(handle, start, duration)
                    continue
            handle = reader.kernel_event(e.name, ts, dur, e.pid, e.tid, a.kernel_details,
                                         _op(a.hlo_module, a.hlo_op))
            if handle is not None and shape is not None:
                known[shape] = handle
        elif e.ph == "M":
            reader.metadata(e.name, e.pid, e.tid, a.name)


def _scan_generic(fh: IO[bytes], reader: _Reader, display: str) -> list[InputError]:
    """Any layout, streamed by ijson; a damaged file keeps the launches before the damage."""
    import ijson

    errors: list[InputError] = []
    with fh:
        try:
            for event in ijson.items(fh, "traceEvents.item", use_float=True):
                reader.event(event)
        except (ijson.JSONError, OSError, EOFError) as exc:
            message = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
            if not reader.events:
                raise TraceError(f"not a readable XLA trace: {message}") from None
            errors.append(InputError(display, f"the trace is cut short or damaged "
                                     f"({message}): {reader.events} kernel events read"))
    return errors


def _xspace_devices(xplane: Path | None, display: str
                    ) -> tuple[list[TraceDevice], list[InputError]]:
    """The GPUs the ``.xplane.pb`` beside a trace describes (read before the trace: their
    vendor tells how to read its kernel_details), and the error when it cannot be read."""
    if xplane is None:
        return [], []
    try:
        return xspace_devices(xplane), []
    except (OSError, TraceError) as exc:
        return [], [InputError(display, f"cannot read the GPUs from {xplane.name}: {exc}")]


def _note_unnamed_devices(collector: LaunchCollector, xplane: Path | None) -> None:
    used = {g.key.device for g in collector.group_list}
    if used - set(collector.devices):
        where = f" ({xplane.name} describes none of them)" if xplane else \
            f" (the {XPLANE_SUFFIX} written beside it does, when it is kept)"
        collector.notes.append("the XLA trace names its GPUs only "
                               f"{', '.join(sorted(used - set(collector.devices)))}{where}: "
                               "pass --device to analyse their occupancy")
