"""Kineto trace events in any JSON layout, found by their category without decoding the rest.

libkineto writes one layout (one event per ``\\n  {`` block: read by kineto.py's own fast
path), but traces are also pretty-printed (``json.dump(indent=N)``), written on one line
(``json.dump`` of the loaded dict, compact separators, minified), one event per line, or by
the 2021-era libkineto (``"cat": "Kernel"``, the list closed by ``\\n]``). This scanner finds
the events it needs in all of them by the *value* of their category (``"kernel"``,
``"Kernel"``, and for ROCm builds ``"cuda_runtime"`` / ``"Runtime"``), a byte string that
cannot occur inside a JSON string (a quote there is escaped), then:

* the event's start: the nearest ``{`` before it, accepted only when the text between is
  plain keys with plain values ending in ``"cat":`` (libkineto and every re-serialisation
  of its traces put ``ph`` and ``cat`` first); any other key order raises
  :class:`Unanchored` and the caller reads the file another way (ijson);
* the event's end: the ``}`` closing its ``args`` object and the ``}`` right after it;
  when that is not the end (a string holding ``}``, keys after ``args``), the standard
  library's ``JSONDecoder.raw_decode`` delimits the event instead.

Only the events found are decoded; the document's head (before ``traceEvents``) and tail
(after it) are parsed as JSON so that a trace cut short is detected.
"""

from __future__ import annotations

import json
import re

import msgspec

from occlint.readers.traces import TraceError
from occlint.readers.traces.kineto_links import GRAPH_APIS

MAX_EVENT = 1 << 20  # one event larger than this is not a real one
LOOKBACK = 512  # the most bytes between an event's "{" and its category value
KEEP_TAIL = 256 << 10  # bytes kept at the end: the document's tail is checked in them

KERNEL_CATEGORIES = (b'"kernel"', b'"Kernel"')
RUNTIME_CATEGORIES = (b'"cuda_runtime"', b'"Runtime"')

EVENTS_OPEN = re.compile(rb'"traceEvents"\s*:\s*\[')
_CAT_KEY = re.compile(rb'"cat"\s*:\s*\Z')
_PLAIN_PREFIX = re.compile(
    rb'\{\s*(?:"[^"\\]*"\s*:\s*(?:"[^"\\]*"|[-+0-9.eE]+)\s*,\s*)*"cat"\s*:\s*')
_EVENT_CLOSE = re.compile(rb'\s*\}')
_BLANK_TO_END = re.compile(rb'\s*\Z')
_DECODER = json.JSONDecoder()
_DECODE_ANY = msgspec.json.Decoder().decode  # untyped: dicts, lists, numbers, strings
MORE = -1  # the data ends inside the event: read more
_GRAPH_LAUNCHES = tuple(f'"{api}"'.encode() for api in GRAPH_APIS)  # replays: no grid
_GRAPH_TAIL = b'GraphLaunch"'
assert all(api.endswith(_GRAPH_TAIL) for api in _GRAPH_LAUNCHES)


class Unanchored(Exception):
    """An event whose start cannot be told from its bytes (an unusual key order)."""


class NeedsRuntime(Exception):
    """Kernel events without launch dimensions: the trace must be read again with its
    runtime calls (ROCm traces of roctracer put the dimensions there only)."""


class EventSink:
    """What the scanner feeds: kernel events as JSON text (decoded by the sink), runtime
    events as dicts. Kineto's reader implements it."""

    def raw(self, text: bytes) -> None:
        raise NotImplementedError

    def kernel(self, event: dict) -> None:
        raise NotImplementedError

    def runtime(self, event: dict) -> None:
        raise NotImplementedError

    def call(self, text: bytes) -> None:
        """A runtime call as JSON text; ValueError when it is not JSON."""
        raise NotImplementedError


def events_start(first: bytes) -> tuple[int, int] | None:
    """(start of the ``"traceEvents"`` key, start of the list's content) in the document's
    first bytes, or None."""
    found = EVENTS_OPEN.search(first)
    return (found.start(), found.end()) if found else None


def parse_head(first: bytes, key_at: int) -> dict | None:
    """The document's keys before ``traceEvents`` as a dict, or None when they do not parse
    (a ``traceEvents`` key nested in another object, a damaged head)."""
    try:
        head = json.loads(first[:key_at] + b'"traceEvents": []}')
    except ValueError:
        return None
    return head if isinstance(head, dict) else None


def _delimit(data: bytes, cat: int, final: bool) -> tuple[int, int, bool]:
    """(start, end, plain) of the event whose category value starts at ``cat``; end is
    MORE when the data ends inside it; plain: its end was found by the args' braces (the
    caller delimits it again with :func:`decoded_end` if that cut does not decode)."""
    start = data.rfind(b"{", max(cat - LOOKBACK, 0), cat)
    if start < 0 or _PLAIN_PREFIX.fullmatch(data, start, cat) is None:
        raise Unanchored(cat)
    args = data.find(b'"args"', cat, cat + MAX_EVENT)
    close = data.find(b"}", args) if args >= 0 else -1
    if close >= 0:
        if data[close + 1:close + 2] == b"}":
            return start, close + 2, True
        end = _EVENT_CLOSE.match(data, close + 1)
        if end is not None:
            return start, end.end(), True
        if not final and _BLANK_TO_END.match(data, close + 1):
            return start, MORE, True
    elif not final and len(data) - cat < MAX_EVENT:
        return start, MORE, True
    return start, decoded_end(data, start, final), False


def decoded_end(data: bytes, start: int, final: bool) -> int:
    """The event's end found by the standard library's decoder (any content, any keys),
    in a window grown until the event fits in it."""
    size = 1 << 13
    while True:
        text = data[start:start + size].decode("utf-8", "surrogateescape")
        try:
            _, end = _DECODER.raw_decode(text)
        except json.JSONDecodeError as exc:
            if size < MAX_EVENT and start + size < len(data):
                size <<= 3
                continue
            if not final and len(data) - start < MAX_EVENT:
                return MORE  # more data may complete it
            raise ValueError(exc.msg) from None
        return start + len(text[:end].encode("utf-8", "surrogateescape"))


def categories(first: bytes, runtime: bool) -> tuple[tuple[bytes, bool], ...]:
    """The (category value, is a kernel) markers to look for in a trace whose first bytes
    are ``first``: the spellings it uses (both when it shows neither): a marker absent
    from the file would cost a scan of every chunk."""
    def used(spellings: tuple[bytes, ...]) -> tuple[bytes, ...]:
        return tuple(m for m in spellings if m in first) or spellings

    kernels = tuple((m, True) for m in used(KERNEL_CATEGORIES))
    return kernels + (tuple((m, False) for m in used(RUNTIME_CATEGORIES)) if runtime else ())


def kernel_event_start(window: bytes) -> int:
    """Where the first kernel event that starts in ``window`` starts (a place to split a
    trace at), or -1."""
    at = 0
    while True:
        found = [i for i in (window.find(m, at) for m in KERNEL_CATEGORIES) if i >= 0]
        if not found:
            return -1
        cat = min(found)
        start = window.rfind(b"{", max(cat - LOOKBACK, 0), cat)
        if start >= 0 and _PLAIN_PREFIX.fullmatch(window, start, cat) is not None:
            return start
        at = cat + 1


def scan_events(data: bytes, pos: int, sink: EventSink, consumed: int, final: bool,
                markers: tuple[tuple[bytes, bool], ...]) -> int:
    """Feed the events of ``data`` from ``pos`` whose category is one of ``markers`` (from
    :func:`categories`) to ``sink``: kernel events, and runtime calls that carry launch
    dimensions; where to go on from."""
    if len(markers) == 1 and markers[0][1]:
        pos = _scan_kernels(data, pos, sink, markers[0][0])
    find = data.find
    ahead = [find(m, pos) for m, _ in markers]
    markers = [m for m, at in zip(markers, ahead, strict=True) if at >= 0]  # type: ignore
    ahead = [at for at in ahead if at >= 0]
    while ahead:
        cat = min(ahead)
        which = ahead.index(cat)
        marker, kernel = markers[which]
        try:
            start, end, plain = _delimit(data, cat, final)
            if end != MORE and not _feed(sink, data[start:end], kernel):
                end = decoded_end(data, start, final) if plain else -2
                if end >= 0 and not _feed(sink, data[start:end], kernel):
                    end = -2
        except Unanchored:
            if _CAT_KEY.search(data, max(cat - 24, 0), cat) is not None:
                raise
            ahead[which] = find(marker, cat + len(marker))  # a value of another key
            if ahead[which] < 0:
                del ahead[which], markers[which]
            continue
        except ValueError:
            end = -2
        if end == MORE:
            return start
        if end < 0:
            raise TraceError(f"invalid event at byte {consumed + cat}: stopped after "
                             f"{getattr(sink, 'events', 0)} kernel events")
        pos = end
        for k in range(len(ahead) - 1, -1, -1):
            if ahead[k] < end:
                ahead[k] = find(markers[k][0], end)
                if ahead[k] < 0:
                    del ahead[k], markers[k]
    return max(pos, len(data) - 2 * LOOKBACK)


def _scan_kernels(data: bytes, pos: int, sink: EventSink, marker: bytes) -> int:
    """The common case, one kernel category in the trace, without the general loop: feed
    the kernel events that end plainly (their args' ``}`` then the event's ``}``); where
    the general loop goes on from (the first event this one does not delimit)."""
    find, rfind, raw = data.find, data.rfind, sink.raw
    prefix, close_match = _PLAIN_PREFIX.fullmatch, _EVENT_CLOSE.match
    while (cat := find(marker, pos)) >= 0:
        start = rfind(b"{", max(cat - LOOKBACK, 0), cat)
        if start < 0 or prefix(data, start, cat) is None:
            return pos
        args = find(b'"args"', cat, cat + MAX_EVENT)
        close = find(b"}", args) if args >= 0 else -1
        if close < 0:
            return pos
        if data[close + 1:close + 2] == b"}":
            end = close + 2
        else:
            found = close_match(data, close + 1)
            if found is None:
                return pos
            end = found.end()
        try:
            raw(data[start:end])
        except ValueError:
            return pos
        pos = end
    return pos


def _feed(sink: EventSink, text: bytes, kernel: bool) -> bool:
    """Give one event to the sink; False when its text is not JSON (cut wrong)."""
    if kernel:
        try:
            sink.raw(text)
            return True
        except ValueError:
            pass  # the careful path below says why
    elif not may_launch(text):
        return text.rstrip().endswith(b"}")  # a runtime call that launched no kernel
    else:
        try:
            sink.call(text)
            return True
        except ValueError:
            pass  # the careful path below says why
    event = _decoded(text)
    if event is None:
        return False
    if isinstance(event, dict):
        (sink.kernel if kernel else sink.runtime)(event)
    return True


def may_launch(call: bytes) -> bool:
    """Whether a runtime call's text may be a kernel launch (it has a ``grid``, or is a graph
    replay): the rest (memory copies, syncs, queries) are not decoded."""
    # searched from the end: libkineto writes the grid last (and a launch's text is long);
    # every graph API's name ends in GraphLaunch: one search rules them all out
    return call.rfind(b'"grid"') >= 0 or (_GRAPH_TAIL in call and
                                          any(api in call for api in _GRAPH_LAUNCHES))


def _decoded(text: bytes) -> object | None:
    """JSON text decoded by msgspec, or by json where msgspec refuses it (NaN, Infinity);
    None when it is not JSON."""
    try:
        return _DECODE_ANY(text)
    except msgspec.DecodeError:
        try:
            return json.loads(text)
        except ValueError:
            return None


def check_tail(data: bytes, head: dict, consumed: int, events: int) -> dict:
    """Check that the document ends after the event list (in the last bytes, ``data``) and
    merge the keys after it into ``head``: the list's close is the leftmost ``]`` following
    an event after which the rest parses as the end of the document."""
    found: dict | None = None
    close = len(data)
    for _ in range(4096):
        close = data.rfind(b"]", 0, close)
        if close < 0:
            break
        if data[max(close - 64, 0):close].rstrip()[-1:] not in (b"}", b"["):
            continue  # not after an event (or an empty list): a list inside an event
        try:
            rest = json.loads(b'{"traceEvents": [' + data[close:])
        except ValueError:
            continue
        if isinstance(rest, dict):
            found = rest
    if found is None:
        raise TraceError(f"the trace is cut short or damaged (the event list does not end "
                         f"before byte {consumed + len(data)}): {events} kernel events read",
                         head)
    for key, value in found.items():
        head.setdefault(key, value)
    return head
