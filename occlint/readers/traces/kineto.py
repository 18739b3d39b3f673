"""PyTorch profiler (Kineto) chrome traces: ``prof.export_chrome_trace(path)``, gzip'd or not.

The document is one JSON object: ``deviceProperties`` (per GPU: name, computeMajor/Minor,
numSms, warpSize, ...), ``traceEvents`` (every CPU op, runtime call and GPU activity) and a
few scalars. GPU kernels are ``"cat": "kernel"`` events with ``ts``/``dur`` in µs and
``args``: ``grid`` / ``block`` ([x, y, z], blocks and threads), ``registers per thread``,
``shared memory`` (static + dynamic bytes together), ``device``, ``stream`` (libkineto's
``GpuActivity<CUpti_ActivityKernel4>::metadataJson``). ROCm builds write the launch
dimensions on the runtime call (``"cat": "cuda_runtime"``, ``RuntimeActivity<
roctracerKernelRow>``: ``grid``, ``block``, ``shared memory``) and link it to the kernel
event by ``correlation``: kernel events without registers are joined to their call
(``kineto_links.RuntimeJoin``: work-item grids, graph replays). What launched each group
(op, call, Python frame, module) is found by ``kineto_links.resolve_origins`` afterwards.

Two ways through the file, with the same result:

* **Kineto's own layout** (what libkineto writes: one event per ``\\n  {`` ... ``\\n  }``
  block, the kernel's ``"ph": "X", "cat": "kernel"`` on the event's first line). Kernel
  events are found with ``bytes.find`` and only they are parsed (by ``json``); the other
  90 % of a trace (CPU ops, runtime calls, flows) is never decoded. A newline cannot occur
  inside a JSON string, so a match at a line start is always structure, never text from a
  kernel name. The document's head (before ``traceEvents``) and tail (after it) are parsed
  as JSON too, so a trace cut short is detected.
* **Any other layout** (2021-era libkineto, pretty-printed, one line, one event per line,
  keys in any order, ROCm traces whose kernels need their runtime calls): kineto_scan.py
  finds the events by their category value, cuts each between the boundaries the writer
  puts between events, and decodes only those, a chunk's kernel events in one call; an
  event it cannot delimit at all goes to ijson, streaming, with its C backend.
"""

from __future__ import annotations

import codecs
import gzip
import io
import itertools
import json
import math
import mmap
import os
import zlib
from array import array
from pathlib import Path
from typing import IO, Any, NamedTuple

import msgspec

from occlint.model.kernel import InputError
from occlint.model.launch import (
    AmdLaunchResources,
    LaunchCollector,
    LaunchKey,
    NvLaunchResources,
    StreamTimeline,
    TraceDevice,
    dim3,
    integral,
)
from occlint.processes import start_method
from occlint.readers.span import Span
from occlint.readers.traces import (
    GZIP_MAGIC,
    RecordCheck,
    TraceError,
    TraceRead,
    wide_encoding,
)
from occlint.readers.traces.kineto_inflated import (
    InflatedRange,
    Unsplittable,
    inflated_size,
    planned_cuts,
)
from occlint.readers.traces.kineto_links import (
    RuntimeJoin,
    generic_events,
    is_cooperative,
    is_id,
    layout_events,
    resolve_devices,
    resolve_origins,
)
from occlint.readers.traces.kineto_scan import (
    KEEP_TAIL,
    MAX_EVENT,
    NeedsRuntime,
    Unanchored,
    categories,
    check_tail,
    events_start,
    kernel_event_start,
    may_launch,
    parse_head,
    scan_events,
)

CHUNK = 8 << 20  # the first bytes read (the document's head is parsed from them)
# the bytes scanned at a time: a fresh buffer of more comes in pages the kernel must map
# (and clear) one fault each; these are reused (a range of 213 MB: 24,700 faults, 0.69 CPU
# s in 8 MiB reads; 215 faults, 0.59 s in 2 MiB ones)
SCAN_CHUNK = 2 << 20
EVENTS_KEY = b'"traceEvents": ['
KERNEL_LINE = b'\n    "ph": "X", "cat": "kernel"'
CALL_LINE = b'\n    "ph": "X", "cat": "cuda_runtime"'
EVENT_END = b"\n  }"
_X_AT = KERNEL_LINE.index(b"X")  # where both lines hold their one X
_KIND_AT = KERNEL_LINE.index(b"kernel") - _X_AT  # from the X: the category's first byte
# the category's second byte: k"e"rnel, c"u"da_runtime
_KERNEL_KIND, _CALL_KIND = KERNEL_LINE[_X_AT + _KIND_AT + 1], CALL_LINE[_X_AT + _KIND_AT + 1]


def _inflate_errors() -> tuple[type[BaseException], ...]:
    """What reading a damaged gzip stream raises: gzip.BadGzipFile is an OSError, a bad
    deflate block zlib.error, or ISA-L's IsalError (no OSError either)."""
    try:
        from isal.igzip_lib import IsalError
    except ImportError:
        return OSError, EOFError, zlib.error
    return OSError, EOFError, zlib.error, IsalError


INFLATE_ERRORS = _inflate_errors()
THREADED_MIN_BYTES = 32 << 20  # a gzip'd trace this large is inflated by a second thread


class _Salvaging:
    """A gzip stream read in small pieces: a stream cut short still gives every byte
    inflated before the cut (then the error), so a crashed program's trace keeps its
    launches. ``reopen``: a plain stream to go on with when the first one (a threaded
    inflater, which loses its last block on an error) fails."""

    PIECE = 1 << 16

    def __init__(self, stream, reopen=None) -> None:
        self.stream, self.reopen = stream, reopen
        self.delivered = 0
        self.failed: Exception | None = None

    def _piece(self, size: int) -> bytes:
        read1 = getattr(self.stream, "read1", None)
        try:
            return read1(size) if read1 else self.stream.read(size)
        except INFLATE_ERRORS:
            if self.reopen is None:
                raise
            self.stream.close()  # salvage from the same point with a plain stream
            self.stream, self.reopen = self.reopen(), None
            left = self.delivered
            while left > 0:
                skipped = self.stream.read(min(left, CHUNK))
                if not skipped:
                    return b""
                left -= len(skipped)
            return self._piece(min(size, self.PIECE))

    def read(self, size: int = CHUNK) -> bytes:
        if self.failed is not None:
            raise self.failed
        parts, got = [], 0
        while got < size:
            try:
                piece = self._piece(min(self.PIECE if self.reopen is None else size - got,
                                        size - got))
            except INFLATE_ERRORS as exc:
                self.failed = exc
                break
            if not piece:
                break
            parts.append(piece)
            got += len(piece)
        self.delivered += got
        if not parts and self.failed is not None:
            raise self.failed
        return b"".join(parts)

    def __enter__(self) -> _Salvaging:
        return self

    def __exit__(self, *exc) -> None:
        self.stream.close()


def _open(path: Path, threaded: bool = True) -> IO[bytes]:
    """The trace's bytes, inflated if it is gzip'd (by a second thread when ``threaded`` and
    it is large), as UTF-8 (a UTF-16 or UTF-32 document is transcoded: ``json.load``
    accepts those)."""
    encoding = wide_encoding(path)
    stream = _open_bytes(path, threaded and encoding is None)
    return stream if encoding is None else _Transcoded(stream, encoding)  # type: ignore


class _Transcoded:
    """A UTF-16 or UTF-32 document read as UTF-8 bytes."""

    def __init__(self, stream, encoding: str) -> None:
        self.stream = stream
        self.decoder = codecs.getincrementaldecoder(encoding)("replace")
        self.pending = b""
        self.done = False

    def read(self, size: int = CHUNK) -> bytes:
        size = CHUNK if size is None or size < 0 else size
        while len(self.pending) < size and not self.done:
            raw = self.stream.read(CHUNK)
            self.done = not raw
            self.pending += self.decoder.decode(raw, final=self.done).encode("utf-8")
        out, self.pending = self.pending[:size], self.pending[size:]
        return out

    def __enter__(self) -> _Transcoded:
        return self

    def __exit__(self, *exc) -> None:
        self.stream.__exit__(*exc)


def _open_bytes(path: Path, threaded: bool = True) -> IO[bytes]:
    fh = open(path, "rb")  # noqa: SIM115 - returned to the caller, who closes it
    if fh.read(2) == GZIP_MAGIC:
        fh.seek(0)
        try:
            from isal import igzip, igzip_threaded  # ISA-L inflate: about twice zlib's speed
        except ImportError:
            return _Salvaging(gzip.GzipFile(fileobj=fh, mode="rb"))  # type: ignore[return-value]
        if threaded and os.fstat(fh.fileno()).st_size >= THREADED_MIN_BYTES:
            # inflated by a thread of its own (ISA-L releases the GIL) while this one scans
            fh.close()
            return _Salvaging(igzip_threaded.open(path, "rb", threads=1, block_size=CHUNK),
                              reopen=lambda: igzip.open(path, "rb"))  # type: ignore
        return _Salvaging(igzip.IGzipFile(fileobj=fh, mode="rb"))  # type: ignore[return-value]
    fh.seek(0)
    return fh


UNSET = msgspec.UNSET  # a key the event does not hold
# The structs below are decoded from JSON, which holds no reference cycles: they are not
# tracked by the cycle collector (gc=False), whose bookkeeping cost each of the hundreds of
# thousands decoded and the collections they set off.


class _Event(msgspec.Struct, frozen=True, gc=False):
    """A CUDA kernel event as libkineto writes it; anything else takes the dict path."""

    name: str
    ts: float
    args: _Args
    dur: float = 0.0


class _CallArgs(msgspec.Struct, frozen=True, gc=False):
    correlation: Any = None
    grid: tuple[int, int, int] | msgspec.UnsetType | None = UNSET
    block: tuple[int, int, int] | None = None
    shared: int | None = msgspec.field(name="shared memory", default=None)


class _Call(msgspec.Struct, frozen=True, gc=False):
    """A ROCm runtime call: the fields :class:`RuntimeJoin` needs; anything else (a name
    or args of another type) takes the dict path."""

    name: str
    args: _CallArgs


class _ShapeArgs(msgspec.Struct, frozen=True, gc=False):
    """The args that decide a CUDA kernel's launch group (:meth:`_Reader.raws`)."""

    device: int | str | msgspec.UnsetType = UNSET
    stream: int | str | msgspec.UnsetType = UNSET
    grid: tuple[int, int, int] | None = None
    block: tuple[int, int, int] | None = None
    registers: int | msgspec.UnsetType | None = msgspec.field(name="registers per thread",
                                                               default=UNSET)
    shared: int | None = msgspec.field(name="shared memory", default=None)


class _Args(_ShapeArgs, frozen=True):
    """A kernel event's args: its launch group's, and what links it to its caller."""

    correlation: Any = None
    external: Any = msgspec.field(name="External id", default=None)


class _Kernel(msgspec.Struct, frozen=True, gc=False):
    """A kernel event of a chunk, decoded with the others in one call (:meth:`_Reader.raws`):
    what counts a launch of a shape already seen, and its category (a cut that held another
    event, whose nested object has the category, is told)."""

    name: str
    ts: float
    args: _ShapeArgs
    dur: float = 0.0
    cat: str = ""


_DECODE = msgspec.json.Decoder(_Event).decode
_DECODE_MANY = msgspec.json.Decoder(list[_Kernel]).decode
_KERNEL_CATEGORY_NAMES = frozenset(("kernel", "Kernel"))
_DECODE_CALL = msgspec.json.Decoder(_Call).decode
_DECODE_ANY = msgspec.json.Decoder().decode


class _Reader:
    """Turns kernel events into launches. Events of a shape already seen (name, device,
    stream, grid, block, resources) take a cached path: decoded into a typed struct by
    msgspec and counted, without building a dict or validating again."""

    def __init__(self, display: str) -> None:
        self.display = display
        self.collector = LaunchCollector(display, "kineto")
        self.check = RecordCheck(display)
        self.events = 0  # kernel events seen
        self.shapes: dict[tuple, Any] = {}  # event shape -> collector handle, or None: bad
        self.join = RuntimeJoin()  # ROCm: kernel events and their runtime calls
        self.kernels_at_last_group = 0  # kernel events read when the last group began
        self.kinds: dict[tuple, Any] = {}  # launch kind -> collector handle, None: bad
        self.rocm_shapes: dict[tuple, Any] = {}  # ROCm kernel and call shape -> the same
        self.seen: dict[tuple, Any] = {}  # (name, _ShapeArgs, category) -> collector handle

    def raw(self, text: bytes) -> None:
        """One kernel event's JSON text (the Kineto-layout fast path)."""
        try:
            e = _DECODE(text)
        except msgspec.ValidationError:
            self.kernel(_loads(text))  # an unusual event: the careful path says why
            return
        except msgspec.DecodeError:
            raise ValueError("invalid JSON") from None
        self._typed(e, text)

    def raws(self, texts: list[bytes]) -> int:
        """Kernel events' texts, decoded in one call; how many were taken (the first not
        taken is not JSON, or not a kernel event). A launch of a shape already seen is
        counted here (its decoded name, args and category are the key: one tuple, hashed in
        C); any other event as :meth:`raw` takes it, and a shape it adds is kept."""
        try:
            events = _DECODE_MANY(_json_list(texts))
        except msgspec.DecodeError:  # invalid JSON, or an unusual event: one at a time
            for taken, text in enumerate(texts):
                try:
                    self.raw(text)
                except ValueError:
                    return taken
            return len(texts)
        seen, add_to, isfinite = self.seen, self.collector.add_to, math.isfinite
        counted = 0
        for taken, e in enumerate(events):
            handle = seen.get((e.name, e.args, e.cat))
            start, duration = e.ts * 1000.0, e.dur * 1000.0
            if handle is None or not 0 <= duration < math.inf or not isfinite(start):
                if e.cat not in _KERNEL_CATEGORY_NAMES:
                    self.events += counted
                    return taken
                self.events += counted
                counted = 0
                self.raw(texts[taken])  # the general path: a new shape, ROCm, a bad event
                self._seen(e)
                continue
            counted += 1
            add_to(handle, start, duration)
        self.events += counted
        return len(texts)

    def _seen(self, e: _Kernel) -> None:
        """Keep the collector handle of a CUDA kernel's shape that :meth:`raw` validated,
        for :meth:`raws` to count the next launches of it."""
        a = e.args
        if a.registers is UNSET:
            return
        handle = self.shapes.get((e.name, a.device, a.stream, a.grid, a.block, a.registers,
                                  a.shared))
        if handle is not None:
            self.seen[(e.name, a, e.cat)] = handle

    def _typed(self, e: _Event, text: bytes) -> None:
        """One kernel event decoded into its struct (``text``: its JSON, for the careful
        path)."""
        a = e.args
        if a.registers is UNSET and is_id(a.correlation):  # ROCm: joined to its call
            self._rocm_kernel(e, text)
            return
        if a.grid is None or a.block is None:  # no dimensions: the careful path says why
            self.kernel(_DECODE_ANY(text))
            return
        shape = (e.name, a.device, a.stream, a.grid, a.block, a.registers, a.shared)
        handle = self.shapes.get(shape, self)
        if handle is self:  # a new shape: validate it once (with its links: all its args)
            self.kernel(_loads(text), shape)
            return
        self.events += 1
        start, duration = e.ts * 1000.0, e.dur * 1000.0
        if handle is None or not 0 <= duration < math.inf or not math.isfinite(start):
            self._bad(f"kernel event {self.events} ({e.name[:80]}): inconsistent")
            return
        self.collector.add_to(handle, start, duration)

    def _rocm_kernel(self, e: _Event, text: bytes) -> None:
        """A ROCm kernel event, decoded typed: joined to its runtime call as
        :meth:`kernel` joins the dict; an event it would fault goes there to say why."""
        a = e.args
        if not e.name or a.device is UNSET or a.stream is UNSET or not 0 <= e.dur < math.inf \
                or not math.isfinite(e.ts):
            self.kernel(_DECODE_ANY(text))
            return
        self.events += 1
        device, stream, start, duration = str(a.device), str(a.stream), e.ts * 1000.0, \
            e.dur * 1000.0
        call = self.join.take_call(a.correlation)
        if call is not None:  # its call came first (the usual order): a shape seen is counted
            handle = self.rocm_shapes.get((e.name, device, stream, a.grid, a.block, a.shared,
                                           call))
            if handle is not None:
                self.collector.add_to(handle, start, duration)
                return
        kernel = (e.name, device, stream, start, duration, a.grid, a.block, a.shared,
                  a.external)
        if call is None:  # its call comes later (or replays a graph)
            launch = self.join.kernel(a.correlation, kernel)
            if launch is not None:
                self._add_rocm(launch, a.correlation)
        else:
            self._join(kernel, call, a.correlation)

    def _join(self, kernel: tuple, call: tuple, correlation: Any) -> None:
        """Add a ROCm kernel joined to its call. A kernel and call of a shape already seen
        (name, device, stream, dimensions, the call) are counted without joining or
        checking again, as NVIDIA kernels are by theirs."""
        name, device, stream, start, duration, grid, block, shared, _ = kernel
        shape: tuple | None = (name, device, stream, grid, block, shared, call)
        try:
            handle = self.rocm_shapes.get(shape, self)  # type: ignore[arg-type]
        except TypeError:  # dimensions decoded as lists (the dict path): not cached
            shape, handle = None, self
        if handle is self:
            launch = self.join.joined(kernel, call)
            if launch is None:  # a graph replay: counted by the join
                return
            handle = self._add_rocm(launch, correlation)
            if shape is not None:
                self.rocm_shapes[shape] = handle
        elif handle is None:
            self._bad("")  # counted; the first bad launch of the shape is named
        else:
            self.collector.add_to(handle, start, duration)

    def call(self, text: bytes) -> None:
        """A runtime call's JSON text (ROCm); ValueError when it is not JSON."""
        try:
            try:
                c = _DECODE_CALL(text)
            except msgspec.ValidationError:
                event = _DECODE_ANY(text)  # another shape: the dict path
                if isinstance(event, dict):
                    self.runtime(event)
                return
        except msgspec.DecodeError:
            raise ValueError("invalid JSON") from None
        a = c.args
        join = self.join
        if a.grid is not UNSET and type(a.correlation) is int and not join.pending:
            # no kernel waits for a call (the usual order): kept for its kernel, as
            # RuntimeJoin.take_waiting keeps it, without the general path's checks
            join.calls[a.correlation] = (c.name, a.grid, a.block, a.shared)
            return
        call, waiting = join.take_waiting(c.name, a.correlation, a.grid is not UNSET,
                                               None if a.grid is UNSET else a.grid, a.block,
                                               a.shared)
        for kernel in waiting:
            self._join(kernel, call, a.correlation)

    def kernel(self, event: dict[str, Any], shape: tuple | None = None) -> None:
        self.events += 1
        args = event.get("args")
        if not isinstance(args, dict):
            args = {}
        name = event.get("name")
        if not isinstance(name, str) or not name:
            self.check.bad += 1
            self.check.first = self.check.first or f"kernel event {self.events}: no name"
            return
        try:
            start = float(event["ts"]) * 1000.0
            duration = float(event.get("dur", 0.0)) * 1000.0
            if not (math.isfinite(start) and math.isfinite(duration)) or duration < 0:
                raise ValueError("timestamp")
        except (KeyError, TypeError, ValueError):
            self._bad(f"kernel event {self.events} ({name[:80]}): no valid ts/dur")
            return
        device = str(args.get("device", event.get("pid", "0")))
        stream = str(args.get("stream", event.get("tid", "")))
        correlation = args.get("correlation")
        if not is_id(correlation):
            correlation = None
        if "registers per thread" not in args and correlation is not None:
            # ROCm: dimensions and launch call from the runtime call (kineto_links)
            launch = self.join.kernel(correlation, (
                name, device, stream, start, duration, args.get("grid"), args.get("block"),
                args.get("shared memory"), _external(args)))
            if launch is not None:
                self._add_rocm(launch, correlation)
            return
        if "grid" not in args or "block" not in args:
            self._bad(f"kernel event {self.events} ({name[:80]}): no grid / block")
            return
        handle = self._add(name, device, stream, start, duration, args.get("grid"),
                           args.get("block"), args.get("shared memory"),
                           args.get("registers per thread"),
                           origin=(_external(args), correlation, None))
        if shape is not None:
            self.shapes[shape] = handle

    def runtime(self, event: dict[str, Any]) -> None:
        """A ROCm runtime call: the launch dimensions and launch call of its kernels."""
        for launch in self.join.call(event):
            self._add_rocm(launch, event["args"]["correlation"])

    def _add_rocm(self, launch: tuple, correlation: Any) -> Any:
        """Add a joined ROCm launch; its collector handle, or None when it is invalid."""
        name, device, stream, start, duration, grid, block, shared, external, api = launch
        if grid is None or block is None:
            self._bad(f"kernel event ({name[:80]}): no grid / block")
            return None
        return self._add(name, device, stream, start, duration, grid, block, None, None,
                         origin=(external, correlation, api), dynamic_lds=shared, amd=True)

    def _bad(self, message: str) -> None:
        self.check.bad += 1
        if self.check.first is None:
            self.check.first = message

    def _add(self, name: str, device: str, stream: str, start: float, duration: float,
             grid: Any, block: Any, shared: Any, registers: Any, origin: tuple = (),
             dynamic_lds: Any = None, amd: bool = False) -> Any:
        """Add one launch; the collector handle of its kind, or None when it is invalid.
        Launches of a kind already added are counted without checking them again."""
        try:
            kind = (name, device, stream, _frozen(grid), _frozen(block), shared, registers,
                    dynamic_lds, amd)
            handle = self.kinds.get(kind, self)
        except TypeError:  # an unhashable value: a bad record, checked below
            kind, handle = None, self
        if handle is not self:
            if handle is None:
                self._bad("")  # counted; the first bad record of the kind is named
            else:
                self.collector.add_to(handle, start, duration)
            return handle
        handle = self._check_and_add(name, device, stream, start, duration, grid, block,
                                     shared, registers, origin, dynamic_lds, amd)
        if kind is not None:
            self.kinds[kind] = handle
        return handle

    def _check_and_add(self, name: str, device: str, stream: str, start: float,
                       duration: float, grid: Any, block: Any, shared: Any, registers: Any,
                       origin: tuple, dynamic_lds: Any, amd: bool) -> Any:
        """``origin``: (External id, correlation, launch call) of the event; ``amd``: a ROCm
        launch, whose call gives only its dynamic LDS (``dynamic_lds``)."""
        where = f"kernel event {self.events} ({name[:80]})"
        try:
            g, b = dim3(grid, "grid"), dim3(block, "block")
            shared_i = _int_or_none(shared, "shared memory")
            regs = _int_or_none(registers, "registers per thread")
            lds = _int_or_none(dynamic_lds, "shared memory")
        except ValueError as exc:
            self._bad(f"{where}: {exc}")
            return None
        if not self.check.check(g, b, where, "amd" if amd else "nvidia",
                                shared_memory=shared_i if lds is None else lds,
                                registers=regs):
            return None
        resources = (AmdLaunchResources(dynamic_lds=lds) if amd else
                     NvLaunchResources(registers=regs, shared_total=shared_i))
        handle = self.collector.handle(LaunchKey(device, name, None, g, b, resources), stream)
        group = handle[0]
        if group.count == 0 and origin:
            external, correlation = (v if isinstance(v, int) and not isinstance(v, bool)
                                     else None for v in origin[:2])
            api = origin[2]
            group.launched_by = {"external_id": external, "correlation": correlation,
                                 "api": api, "cooperative": is_cooperative(api)}
            self.kernels_at_last_group = self.events
        self.collector.add_to(handle, start, duration)
        return handle

    def finish(self) -> list[InputError]:
        unresolved = 0
        for loose in self.join.loose:
            self.collector.add_loose(*loose)
        for name, device, stream, start, duration, grid, block, shared, ext, _ in \
                self.join.unresolved():  # no runtime call: the kernel's own dimensions
            if grid is None or block is None:
                unresolved += 1
                self.collector.add_loose(device, stream, start, duration)
                continue
            self._add(name, device, stream, start, duration, grid, block, None, None,
                      origin=(ext, None, None), dynamic_lds=shared, amd=True)
        for count, why in ((len(self.join.loose), "replayed by graph launches (hipGraphLaunch)"),
                           (unresolved, "whose runtime call is not in the trace (launched "
                                        "before the profiler's window opened, or the call "
                                        "was not recorded)")):
            if count:
                self.collector.launches += count
                self.collector.notes.append(
                    f"{count:,} kernel launch{'es' if count > 1 else ''} {why}: counted; the "
                    "trace gives no grid or block for them, so they are not analysed")
        return self.check.errors()


def _json_list(texts: list[bytes]) -> bytes:
    """The JSON list of the values ``texts`` (one or more): its brackets put on the first
    and last text, so that the texts are copied once, not once more for each bracket."""
    if len(texts) == 1:
        return b"[" + texts[0] + b"]"
    return b",".join([b"[" + texts[0], *texts[1:-1], texts[-1] + b"]"])


def _loads(text: bytes) -> Any:
    """An event's JSON by the careful parser; bytes that are not UTF-8 (in a field the
    typed decoder skipped) make the trace one that cannot be read."""
    try:
        return json.loads(text)
    except UnicodeDecodeError as exc:
        raise TraceError(f"a kernel event is not UTF-8 text (byte {exc.start} of "
                         f"{text[:40]!r}...)") from None


def _frozen(value: Any) -> Any:
    """A launch dimension as a hashable value (a JSON list as a tuple)."""
    return tuple(value) if isinstance(value, list) else value


def _int_or_none(value: Any, what: str) -> int | None:
    if value is None:
        return None
    if not integral(value):
        raise ValueError(f"{what} is not an integer: {value!r:.40}")
    return int(value)


def _is_amd(p: dict[str, Any]) -> bool:
    """An AMD GPU's deviceProperties (ROCm builds): a gfx architecture, 64-wide waves, or an
    AMD product name (RDNA GPUs report 32-wide waves)."""
    name = p.get("name")
    return (isinstance(p.get("gcnArchName"), str) or p.get("warpSize") == 64
            or (isinstance(name, str) and any(w in name for w in ("AMD", "Radeon", "Instinct"))))


def _describes_amd(first: bytes) -> bool:
    """Whether the document's head (in its first bytes) describes an AMD GPU."""
    found = events_start(first)
    head = parse_head(first, found[0]) if found else None
    props = head.get("deviceProperties") if head else None
    return isinstance(props, list) and any(isinstance(p, dict) and _is_amd(p) for p in props)


def _devices(reader: _Reader, head: dict[str, Any]) -> None:
    props = head.get("deviceProperties")
    if not isinstance(props, list):
        return
    for p in props:
        if not isinstance(p, dict) or "id" not in p:
            continue
        name = p.get("name") if isinstance(p.get("name"), str) else None
        warp = p.get("warpSize") if isinstance(p.get("warpSize"), int) else None
        amd = _is_amd(p)
        arch = None
        if amd:
            gcn = p.get("gcnArchName")
            arch = gcn.split(":")[0] if isinstance(gcn, str) and gcn else None
        elif isinstance(p.get("computeMajor"), int) and isinstance(p.get("computeMinor"), int):
            arch = f"sm_{p['computeMajor']}{p['computeMinor']}"
        sms = p.get("numSms") if isinstance(p.get("numSms"), int) else None
        reader.collector.device(TraceDevice(
            key=str(p["id"]), vendor="amd" if amd else "nvidia", name=name, arch=arch,
            compute_units=sms, wave_size=warp,
            properties={k: v for k, v in p.items() if isinstance(v, (int, float, str))}))


def read_kineto(path: Path, display: str, jobs: int = 1) -> TraceRead:
    """Read a Kineto trace; ``jobs`` > 1 lets a large one (plain or gzip'd) be scanned by
    that many processes, each over a part of the event list (same result as one)."""
    reader = _Reader(display)
    errors: list[InputError] = []
    try:
        head, reader = _read_events(path, display, jobs, reader)
    except TraceError as exc:
        whole = _read_whole(path, display) if _ends_complete(path) else None
        if whole is None:
            errors.append(InputError(display, str(exc)))
            head = exc.head  # a cut trace's device description, read before the cut
        else:
            head, reader = whole
    except INFLATE_ERRORS as exc:
        errors.append(InputError(display, f"cannot read the trace: {exc} (after "
                                 f"{reader.events} kernel events)"))
        head = {}
    if not reader.events and not errors:
        raise TraceError(no_kernels_reason(path))
    errors = reader.finish() + errors
    _devices(reader, head)
    _link(path, reader, reader.kernels_at_last_group)
    return TraceRead(reader.collector, errors)


def _read_events(path: Path, display: str, jobs: int,
                 reader: _Reader) -> tuple[dict[str, Any], _Reader]:
    """Scan the events by the fastest way the layout allows: (head, reader), the reader
    the split scan's parts were merged into when it was split. Kernel events without
    dimensions (ROCm traces of roctracer write them on the runtime call only) make a second
    scan that reads the runtime calls too; a layout the byte scanners cannot delimit goes to
    ijson."""
    runtime = None
    splittable = jobs > 1
    while True:
        try:
            split = None
            # a split gzip'd trace is inflated by its workers: the parent's first bytes are
            # inflated here, not by a thread that inflates (and holds) 80 MB ahead
            with _open(path, threaded=not splittable) as fh:
                first = fh.read(CHUNK)
                if _bare_list(first):  # no head to scan for: the event list, streamed
                    raise Unanchored(0)
                if runtime is None:  # a ROCm trace's kernels wait for their calls: read both
                    runtime = _describes_amd(first)
                own = _kineto_layout(first)
                if splittable and isinstance(fh, io.BufferedReader):
                    split = _split_plan(fh, first, jobs, own, runtime)
                elif splittable and isinstance(fh, _Salvaging):  # gzip'd
                    split = _inflated_plan(path, first, jobs, own, runtime)
                    if split is None:  # read as one stream, by the threaded inflater
                        splittable = False
                        continue
                if split is None:
                    head = (_scan_layout if own else _scan_any_layout)(fh, first, reader,
                                                                       runtime)
            if split is not None:  # the stream (and its inflating thread) closed: fork
                try:
                    return _read_split(path, display, split, jobs, runtime)
                except (Unsplittable, TraceError, *INFLATE_ERRORS):
                    if not isinstance(split, _InflatedPlan):
                        raise
                    splittable = False  # damaged, or misjudged: one stream says what is read
                    continue
        except Unanchored:
            reader = _Reader(display)
            return _scan_generic(path, reader), reader
        except NeedsRuntime:  # kernel events without dimensions: read the runtime calls
            if runtime:
                raise
            runtime, reader = True, _Reader(display)
            continue
        return head, reader


def _ends_complete(path: Path) -> bool:
    """Whether the document's last bytes close it (``}``, or ``]`` for a bare event list)
    though a byte scanner found it cut short or damaged: then a full JSON parser decides."""
    try:
        with _open(path, threaded=False) as fh:
            if isinstance(fh, io.BufferedReader):
                fh.seek(max(fh.seek(0, os.SEEK_END) - 64, 0))
                end = fh.read()
            else:
                end = b""
                while chunk := fh.read(CHUNK):
                    end = (end + chunk)[-64:]
    except INFLATE_ERRORS:
        return False
    return end.rstrip()[-1:] in (b"}", b"]")


def _read_whole(path: Path, display: str) -> tuple[dict[str, Any], _Reader] | None:
    """(head, reader) of a trace read by a full JSON parser (ijson: any layout, any key
    order), or None when that parser also finds it damaged: every document ``json.load``
    accepts is read, whatever the byte scanners made of it."""
    reader = _Reader(display)
    try:
        head = _scan_generic(path, reader)
    except (TraceError, *INFLATE_ERRORS):
        return None
    return head, reader


def _external(args: dict[str, Any]) -> Any:
    """A kernel event's External id (2021-era libkineto spells it ``external id``)."""
    return args.get("External id", args.get("external id"))


def _bare_list(first: bytes) -> bool:
    """Chrome's JSON Array Format: the document is the event list itself."""
    return first.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"["


def _link(path: Path, reader: _Reader, kernels_before: int) -> None:
    """The ROCm devices and what launched each group (kineto_links, a second pass over
    the trace's first launches)."""
    resolve_devices(reader.collector)
    try:
        with _open(path) as fh:
            first = fh.read(CHUNK)
            events = (layout_events(fh, first, CHUNK) if _kineto_layout(first)
                      else generic_events(_Rewound(first, fh), _events_prefix(first)))
            resolve_origins(events, reader.collector, kernels_before)
    except (*INFLATE_ERRORS, ValueError):
        return  # the first pass said what is wrong with the file


class _Rewound:
    """A stream whose first bytes were read already, for ijson: given back in the pieces
    it asks for (ijson parses each piece it is given whole, though the second pass stops
    after the trace's first launches)."""

    def __init__(self, first: bytes, fh) -> None:
        self.first, self.at, self.fh = first, 0, fh

    def read(self, size: int = -1) -> bytes:
        if size == 0:  # ijson's probe for bytes or text
            return b""
        size = size if size > 0 else CHUNK
        if self.at < len(self.first):
            self.at += size
            return self.first[self.at - size:self.at]
        return self.fh.read(size)


# -- a large plain trace, scanned by several processes -----------------------------------------
SPLIT_MIN_BYTES = 256 << 20


def _split_plan(fh, first: bytes, jobs: int, own: bool,
                runtime: bool = False) -> tuple | None:
    """(head, byte ranges of the event list, each starting at an event, the layout's
    markers or None for libkineto's own layout) for a large plain trace whose head
    and tail are valid; None otherwise (one process reads it, and says where it stops if
    it is damaged)."""
    size = fh.seek(0, os.SEEK_END)
    plan = _split_bounds(fh, first, size, own) if size >= SPLIT_MIN_BYTES else None
    if plan is None:
        fh.seek(len(first))
        return None
    head, start, stop = plan
    markers = None if own else categories(first, runtime)
    bounds = [start]
    for k in range(1, jobs):
        fh.seek(start + (stop - start) * k // jobs)
        window = fh.read(MAX_EVENT)
        i = window.find(b"\n  {\n") if markers is None else \
            kernel_event_start(window, markers.boundary)
        if i < 0:
            fh.seek(len(first))
            return None
        bounds.append(fh.tell() - len(window) + i)
    bounds.append(stop)
    fh.seek(len(first))
    return head, [(a, b) for a, b in itertools.pairwise(bounds) if b > a], markers


def _split_bounds(fh, first: bytes, size: int, own: bool) -> tuple | None:
    """(head with the tail's keys, start, stop of the event list) when both parse."""
    found = events_start(first)
    head = parse_head(first, found[0]) if found else None
    if head is None:
        return None
    fh.seek(max(size - KEEP_TAIL, 0))
    end = fh.read()
    close = _merged_tail(end, head, own)
    if close is None:
        return None
    return head, found[1], size - len(end) + close


def _merged_tail(end: bytes, head: dict[str, Any], own: bool) -> int | None:
    """Where the event list ends in ``end``, the document's last bytes, once the keys after
    it are merged into ``head``; None when they do not end the document. In libkineto's own
    layout, the list's close; else the end (the tail holds no event: scanned, it adds
    nothing)."""
    if own:
        close = end.rfind(b"\n  ]")
        try:
            rest = json.loads(b'{"traceEvents": [' + end[close:]) if close >= 0 else None
        except ValueError:
            return None
        if not isinstance(rest, dict):
            return None
        for key, value in rest.items():
            head.setdefault(key, value)
        return close
    try:
        check_tail(end, head, 0, 0)
    except TraceError:
        return None
    return len(end)


class _InflatedPlan(NamedTuple):
    """A gzip'd trace's split: the ranges' planned offsets in the inflated stream
    (kineto_inflated), the last ending with the stream."""

    head: dict[str, Any]
    ranges: list[tuple[int, int | None]]
    markers: Any
    events_at: int  # where the event list's content starts


def _inflated_plan(path: Path, first: bytes, jobs: int, own: bool,
                   runtime: bool) -> _InflatedPlan | None:
    """The split of a gzip'd trace (its first bytes ``first``) whose head parses and whose
    inflated size is estimated at SPLIT_MIN_BYTES or more; None otherwise."""
    found = events_start(first)
    head = parse_head(first, found[0]) if found else None
    size = inflated_size(path)
    if found is None or head is None or size < SPLIT_MIN_BYTES:
        return None
    bounds = [0, *planned_cuts(size, jobs), None]
    return _InflatedPlan(head, list(itertools.pairwise(bounds)),
                         None if own else categories(first, runtime), found[1])


def _scan_range(path: str, display: str, start: int, stop: int, markers,
                runtime: bool = False) -> tuple:
    """One process's part of a plain trace: the events between two event boundaries."""
    if markers is None:  # libkineto's own layout: scanned where the file is mapped
        return (*_mapped_range(path, display, start, stop, runtime), None)
    with open(path, "rb") as fh:
        fh.seek(start)
        return (*_scan_chunks(_file_chunks(fh, stop - start), display, start, markers,
                              runtime), None)


MAPPED_WINDOW = 32 << 20  # the pages of a mapped range given back after each such window
TAIL_CHECKED = 1 << 16  # the last bytes of libkineto's layout that the tail check reads


def _mapped_range(path: str, display: str, start: int, stop: int, runtime: bool) -> tuple:
    """:func:`_scan_chunks` for a range of a trace in libkineto's own layout, read from the
    file's mapping (:func:`_scan_mapped`)."""
    reader = _Reader(display)
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        _scan_mapped(mm, start, stop, reader, runtime, strict=True)
    return _range_result(reader)


def _scan_mapped(mm: mmap.mmap, pos: int, stop: int, reader: _Reader, runtime: bool,
                 strict: bool) -> int:
    """Scan the events of libkineto's layout in ``mm[pos:stop]``, where the file is mapped:
    no copies of it (read, then joined to the last chunk's tail), and each window's pages
    released from the process once scanned (its resident memory stays near one window, as
    a chunked read's does). ``strict``: ``stop`` is an event boundary, an event not ended
    before it is invalid; else ``stop`` is the file's end and where an event cut by it
    starts is returned (the caller's tail check says the trace is cut short)."""
    scan = _scan_kernels_and_calls if runtime else _scan_kernels
    span = Span(mm)
    while True:
        window = min(pos + MAPPED_WINDOW, stop)
        done = scan(mm, pos, reader, 0, window, stop if strict else -1)
        if reader.join.pending and not runtime:
            raise NeedsRuntime
        if window == stop or done <= pos:  # the end, or an event the file's end cuts
            return done
        span.release(pos, done - pos)
        pos = done


def _scan_inflated(path: str, display: str, near_start: int, near_stop: int | None,
                   events_at: int, markers, runtime: bool = False) -> tuple:
    """One process's part of a gzip'd trace (kineto_inflated): the events from the first
    that starts at or after ``near_start`` to the first at or after ``near_stop``, and the
    stream's last bytes when the range is the last."""
    source = InflatedRange(path, events_at, near_start, near_stop, markers is None,
                           _scan_chunk(), None if markers is None else markers.boundary)
    chunks = source.chunks()
    first = next(chunks, b"")  # finds the range's start
    return (*_scan_chunks(itertools.chain((first,), chunks), display, max(source.start, 0),
                          markers, runtime), source.tail)


def _scan_chunk() -> int:
    """The bytes to scan at a time (fewer when CHUNK is made small)."""
    return min(CHUNK, SCAN_CHUNK)


def _file_chunks(fh, left: int):
    """The next ``left`` bytes of a file, a chunk at a time."""
    while left > 0:
        chunk = fh.read(min(_scan_chunk(), left))
        if not chunk:
            return
        left -= len(chunk)
        yield chunk


def _scan_chunks(chunks, display: str, start: int, markers, runtime: bool) -> tuple:
    """The kernel events (``runtime``: and the runtime calls, joined; what is left unjoined
    at the range's ends is returned for the parent to join, :func:`_join_seams`) of a range
    of the event list that starts at an event boundary, byte ``start`` of the trace."""
    reader = _Reader(display)
    scan = _scan_kernels_and_calls if runtime else _scan_kernels
    data, pos, consumed = b"", 0, start
    chunk = next(chunks, b"")
    while True:
        following = next(chunks, b"")
        data = data[pos:] + chunk
        consumed += pos
        final = not following
        if markers is not None:
            pos = scan_events(data, 0, reader, consumed, final, markers)
        else:
            pos = scan(data, 0, reader, consumed)
            if final:  # the range's last event
                scan(data[pos:] + b"\n  }", 0, reader, consumed + pos)
        if reader.join.pending and not runtime:
            raise NeedsRuntime
        if final:
            break
        if len(data) - pos > MAX_EVENT:
            raise TraceError(f"an event at byte {consumed + pos} is larger than "
                             f"{MAX_EVENT} bytes")
        chunk = following
    return _range_result(reader)


def _range_result(reader: _Reader) -> tuple:
    """What a range's process sends back: its groups, timelines, counts and seams."""
    c, join = reader.collector, reader.join
    seams = (list(join.calls.items()),
             [(correlation, kernel) for correlation, waiting in join.pending.items()
              for kernel in waiting], join.loose)
    return (c.group_list, list(c.streams.values()), reader.events, reader.check.bad,
            reader.check.first, reader.kernels_at_last_group, seams)


def _join_seams(reader: _Reader, seams: tuple) -> None:
    """A range's runtime calls and kernels left unjoined (their partner in another range),
    joined with those of the ranges before it; a kernel whose call never comes is left to
    :meth:`_Reader.finish`."""
    calls, kernels, loose = seams
    join = reader.join
    join.loose.extend(loose)
    for correlation, (api, grid, block, shared) in calls:
        for launch in join.call_of(api, correlation, True, grid, block, shared):
            reader._add_rocm(launch, correlation)
    for correlation, kernel in kernels:
        launch = join.kernel(correlation, kernel)
        if launch is not None:
            reader._add_rocm(launch, correlation)


def _read_split(path: Path, display: str, plan, jobs: int,
                runtime: bool = False) -> tuple[dict[str, Any], _Reader]:
    """(head, reader) of the parts of a split trace, read by worker processes and merged
    in file order, each as it comes (the first while the others are still being read)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    head, ranges, markers = plan[:3]
    reader = _Reader(display)
    context = multiprocessing.get_context(start_method())
    n = len(ranges)
    inflated = isinstance(plan, _InflatedPlan)
    more = ([plan.events_at] * n,) if inflated else ()
    kernels_before = 0  # kernel events up to the last group's first launch
    tail = None
    with ProcessPoolExecutor(max_workers=min(jobs, n), mp_context=context) as pool:
        for part in pool.map(_scan_inflated if inflated else _scan_range, [str(path)] * n,
                             [display] * n, [a for a, _ in ranges], [b for _, b in ranges],
                             *more, [markers] * n, [runtime] * n):
            kernels_before = _merge_part(reader, part, kernels_before)
            tail = part[-1]
    # the document's end, checked as a plain trace's is before it is split
    if inflated and (tail is None or _merged_tail(tail, head, markers is None) is None):
        raise Unsplittable("the trace's end")
    reader.kernels_at_last_group = kernels_before
    return head, reader


def _merge_part(reader: _Reader, part: tuple, kernels_before: int) -> int:
    """Merge the next range's part (:func:`_range_result`) into ``reader``; the kernel
    events up to the last group's first launch, from ``kernels_before``."""
    groups, timelines, events, bad, first_bad, last_group, seams, _ = part
    c = reader.collector
    _join_seams(reader, seams)  # launches at the seam before this range
    remap = array("l")
    for g in groups:
        handle = c.handle(g.key, next(iter(g.streams)))
        merged = handle[0]
        if merged.count == 0:
            merged.launched_by = g.launched_by
            kernels_before = reader.events + last_group
        merged.count += g.count
        merged.total_ns += g.total_ns
        merged.max_ns = max(merged.max_ns, g.max_ns)
        merged.first_ns = min(merged.first_ns, g.first_ns)
        merged.streams |= g.streams
        remap.append(handle[2])
    same = remap == array("l", range(len(remap)))  # the range's groups are the first ones
    for t in timelines:
        mine = c.streams.get((t.device, t.stream))
        if mine is None:
            mine = c.streams[(t.device, t.stream)] = StreamTimeline(t.device, t.stream)
        mine.starts.extend(t.starts)
        mine.durations.extend(t.durations)
        mine.groups.extend(t.groups if same else map(remap.__getitem__, t.groups))
    c.launches += len(remap) and sum(g.count for g in groups)
    reader.events += events
    reader.check.bad += bad
    reader.check.first = reader.check.first or first_bad
    return kernels_before


# the categories of 2021-era libkineto (``"cat": "Operator", \n`` on the event's first
# line): the same indentation as today's layout, other first lines; its kernel events may
# start past the first chunk (a ResNet-50 trace of TensorBoard's samples: after 9 MB of
# CPU operators), so any of them says which layout it is
LEGACY_CATEGORIES = tuple(b'"cat": "%s"' % c for c in (b"Kernel", b"Runtime", b"Operator",
                                                         b"Memcpy", b"Memset"))


def _kineto_layout(first: bytes) -> bool:
    """libkineto's own layout (since 2022): lower-case categories. Anything else is read
    by the layout-free scanner."""
    at = first.find(EVENTS_KEY)
    return (at >= 0 and first.startswith((b"\n  {\n    \"", b"\n  ]"), at + len(EVENTS_KEY))
            and not any(c in first for c in LEGACY_CATEGORIES))


def _scan_any_layout(fh: IO[bytes], first: bytes, reader: _Reader,
                     runtime: bool) -> dict[str, Any]:
    """Any layout (kineto_scan): kernel events (and ROCm runtime calls) found by their
    category; Unanchored when the layout defeats it."""
    found = events_start(first)
    head = parse_head(first, found[0]) if found else None
    if found is None or head is None:
        raise Unanchored(0)
    markers = categories(first, runtime)
    data, pos, consumed = first, found[1], 0
    while True:
        chunk = fh.read(_scan_chunk())
        try:
            resume = scan_events(data, pos, reader, consumed, not chunk, markers)
        except TraceError as exc:  # a damaged event: the devices of the head still count
            exc.head = exc.head or head
            raise
        if reader.join.pending and not runtime:
            raise NeedsRuntime
        if not chunk:
            return check_tail(data, head, consumed, reader.events)
        if len(data) - resume > MAX_EVENT:
            raise TraceError(f"an event at byte {consumed + resume} is larger than "
                             f"{MAX_EVENT} bytes")
        cut = min(resume, max(len(data) - KEEP_TAIL, 0))
        consumed += cut
        data, pos = data[cut:] + chunk, resume - cut


def _scan_layout(fh: IO[bytes], data: bytes, reader: _Reader,
                 runtime: bool = False) -> dict[str, Any]:
    """Kineto's own layout: find kernel events (``runtime``: and runtime calls) by their first
    line, parse only those; a plain file where it is mapped (:func:`_scan_mapped`), a
    gzip'd one a chunk at a time."""
    at = data.find(EVENTS_KEY)
    try:
        head = json.loads(data[:at] + b'"traceEvents": []}')
    except ValueError as exc:
        raise TraceError(f"the trace's header is not valid JSON: {exc}") from None
    if not isinstance(head, dict):
        raise TraceError("not a Kineto trace: the document is not a JSON object")
    pos = at + len(EVENTS_KEY)
    if isinstance(fh, io.BufferedReader):  # a plain file (its first chunk is ``data``)
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            done = _scan_mapped(mm, pos, len(mm), reader, runtime, strict=False)
            tail_at = min(done, max(len(mm) - TAIL_CHECKED, 0))
            return _tail(mm[tail_at:], head, reader, tail_at)
    scan = _scan_kernels_and_calls if runtime else _scan_kernels
    consumed = 0  # bytes of the file before `data`
    while True:
        resume = scan(data, pos, reader, consumed)
        if reader.join.pending and not runtime:
            raise NeedsRuntime
        chunk = fh.read(_scan_chunk())
        if not chunk:
            break
        if len(data) - resume > MAX_EVENT:
            raise TraceError(f"an event at byte {consumed + resume} is larger than "
                             f"{MAX_EVENT} bytes")
        cut = min(resume, max(len(data) - TAIL_CHECKED, 0))  # keep the end: the tail check
        consumed += cut
        data, pos = data[cut:] + chunk, resume - cut
    return _tail(data, head, reader, consumed)


def _scan_kernels(data, pos: int, reader: _Reader, consumed: int, window: int = -1,
                  stop: int = -1) -> int:
    """Parse the complete kernel events of ``data`` (bytes, or a file's mapping) from
    ``pos``; where to go on from. ``window``: only events that start before it; ``stop``:
    where the data ends, an event not ended by then invalid (else the data ends inside an
    event: read more)."""
    raw, find = reader.raw, data.find
    window = len(data) if window < 0 else window
    end_by = len(data) if stop < 0 else stop
    while True:
        i = find(KERNEL_LINE, pos, window + len(KERNEL_LINE))
        if i < 0:
            # a kernel line cut by the end of data: resume where its event starts (the
            # 3 bytes of "  {" before it), not inside it
            return max(pos, window - len(KERNEL_LINE) - 3)
        end = find(EVENT_END, i, end_by)
        if end < 0 and stop < 0:
            return i - 3
        try:
            if end < 0:
                raise ValueError("no end")
            raw(data[i - 3:end + 4])
        except ValueError:
            raise TraceError(f"invalid kernel event at byte {consumed + i - 3}: stopped "
                             f"after {reader.events} kernel events") from None
        pos = end + 4


def _scan_kernels_and_calls(data, pos: int, reader: _Reader, consumed: int, window: int = -1,
                            stop: int = -1) -> int:
    """:func:`_scan_kernels` for ROCm traces: the kernel events and the runtime calls that
    launched them (those with a grid, and graph replays), in file order. Both first lines
    hold the ``X`` of ``"ph": "X"`` at the same place: that byte, found by memchr, finds
    both in one pass over the data (two searches for the lines cost twice as much); the
    category's second byte ("e" of kernel, "u" of cuda_runtime, not the "p" of cpu_op)
    leaves few lines to compare."""
    find = data.find
    window = len(data) if window < 0 else window
    end_by = len(data) if stop < 0 else stop
    x = pos + _X_AT - 1
    # an X whose category is cut by the end of data is left to the return below
    last_x = min(window + _X_AT, len(data) - _KIND_AT - 1)
    while (x := find(b"X", x + 1, last_x)) >= 0:
        kind = data[x + _KIND_AT + 1]
        if kind == _KERNEL_KIND:
            line = KERNEL_LINE
        elif kind == _CALL_KIND:
            line = CALL_LINE
        else:
            continue
        i = x - _X_AT
        if data[i:i + len(line)] != line:
            continue
        # a newline cannot occur in a JSON string: the event's end is not on its first line
        # (the long one: the kernel's name), which memchr passes
        line_end = find(b"\n", i + 1, end_by)
        end = find(EVENT_END, line_end, end_by) if line_end >= 0 else -1
        if end < 0 and stop < 0:
            return i - 3
        text = data[i - 3:end + 4]
        kernel = line is KERNEL_LINE
        try:
            if end < 0:
                raise ValueError("no end")
            if kernel:
                reader.raw(text)
            elif may_launch(text):
                reader.call(text)
        except ValueError:
            raise TraceError(f"invalid {'kernel' if kernel else 'runtime'} event at byte "
                             f"{consumed + i - 3}: stopped after {reader.events} kernel "
                             "events") from None
        pos = end + 4
        x = pos + _X_AT - 1
    # a line cut by the end of data: resume where its event starts, not inside it
    return max(pos, window - len(CALL_LINE) - 3)


def _tail(data: bytes, head: dict[str, Any], reader: _Reader,
          consumed: int) -> dict[str, Any]:
    """Check that the document ends after the event list, and merge the keys after it."""
    close = data.rfind(b"\n  ]")
    if close < 0 or close < data.rfind(b"\n  {", 0) or not data.rstrip().endswith(b"}"):
        raise TraceError(f"the trace is cut short (at byte {consumed + len(data)}, inside "
                         f"traceEvents): {reader.events} kernel events read before it ends",
                         head)
    try:
        rest = json.loads(b'{"traceEvents": [' + data[close:])
    except ValueError:
        raise TraceError(f"the trace is cut short or damaged after traceEvents (byte "
                         f"{consumed + close}): {reader.events} kernel events read",
                         head) from None
    if isinstance(rest, dict):
        for key, value in rest.items():
            head.setdefault(key, value)
    return head


def _dispatch(reader: _Reader, event: Any) -> None:
    if not isinstance(event, dict):
        return
    cat = event.get("cat")
    if cat in ("kernel", "Kernel"):
        reader.kernel(event)
    elif cat == "cuda_runtime":
        reader.runtime(event)


def _scan_generic(path: Path, reader: _Reader) -> dict[str, Any]:
    """Any layout: stream the events with ijson (C backend), then the device properties
    in a second pass that builds nothing else."""
    import ijson

    try:
        with _open(path) as fh:
            first = fh.read(HEAD_PEEK)
            for event in ijson.items(_Rewound(first, fh), _events_prefix(first),
                                     use_float=True):
                _dispatch(reader, event)
    except ijson.JSONError as exc:
        if reader.events or "premature EOF" in str(exc):
            raise TraceError(f"the trace is cut short or damaged ({_first_line(exc)}): "
                             f"{reader.events} kernel events read before it") from None
        raise TraceError(f"not a JSON document: {_first_line(exc)}") from None
    head: dict[str, Any] = {}
    try:
        with _open(path) as fh:
            for props in ijson.items(fh, "deviceProperties", use_float=True):
                head["deviceProperties"] = props
                break
    except ijson.JSONError:
        pass
    return head


HEAD_PEEK = 1 << 12  # a document's first bytes: whether it is an object or a bare list


def _events_prefix(first: bytes) -> str:
    """ijson's path to the events: ``traceEvents.item``, or ``item`` for a bare list."""
    return "item" if _bare_list(first) else "traceEvents.item"


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__


# What a trace without kernel events holds instead, by the category values it contains
# (a byte string no JSON string can hold: quotes in strings are escaped).
_NO_KERNEL_SIGNS = (
    (b"kernel_details", "a JAX/XLA profile (its events carry kernel_details), not a PyTorch "
                        "profiler trace: no Kineto kernel events"),
    (b'"mtia_runtime"', "no GPU kernel events: an MTIA accelerator trace (occlint reads "
                        "NVIDIA and AMD GPU launches)"),
    (b'"cuda_runtime"', "no GPU kernel events, though the CPU called the GPU runtime: the "
                        "profiler did not record GPU activity (record with activities="
                        "[ProfilerActivity.CPU, ProfilerActivity.CUDA]; a CUPTI range-"
                        "profiler run keeps no kernel events)"),
    (b'"Runtime"', "no GPU kernel events, though the CPU called the GPU runtime: the "
                   "profiler did not record GPU activity"),
)
_CPU_ONLY = ("a CPU-only profile: no GPU events (record with activities="
             "[ProfilerActivity.CPU, ProfilerActivity.CUDA])")


def no_kernels_reason(path: Path) -> str:
    """Why a Kineto trace that parsed gave no kernel event, from what it holds instead."""
    seen: set[bytes] = set()
    signs = [sign for sign, _ in _NO_KERNEL_SIGNS]
    with _open(path) as fh:
        tail = b""
        while chunk := fh.read(CHUNK):
            data = tail + chunk
            seen.update(sign for sign in signs if sign in data)
            tail = data[-32:]
    return next((why for sign, why in _NO_KERNEL_SIGNS if sign in seen), _CPU_ONLY)
