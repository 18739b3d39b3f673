"""Kineto trace events in any JSON layout, found by their category without decoding the rest.

libkineto writes one layout (one event per ``\\n  {`` block: read by kineto.py's own fast
path), but traces are also pretty-printed (``json.dump(indent=N)``), written on one line
(``json.dump`` of the loaded dict, compact separators, minified), one event per line, or by
the 2021-era libkineto (``"cat": "Kernel"``, the list closed by ``\\n]``). This scanner finds
the events it needs in all of them by the *value* of their category (``"kernel"``,
``"Kernel"``, and for ROCm builds ``"cuda_runtime"`` / ``"Runtime"``), a byte string that
cannot occur inside a JSON string (a quote there is escaped), then:

* the common case (:func:`_scan_kernels`), in any key order: the event lies between two
  *boundaries*, the bytes a writer puts between two events (``}`` + separator + ``{``,
  learned from the list's first two events, :func:`categories`): the last one before the
  category and the first one after it, two searches in C. The events found in a chunk are
  decoded in one call (msgspec, into typed structs: :meth:`EventSink.raws`); a cut that does
  not decode (a boundary's bytes inside a string, the list's first or last event) goes to
  the careful path;
* the careful path (:func:`_delimit`): the event's start is the nearest ``{`` before the
  category when the text between is plain keys with plain values ending in ``"cat":``
  (libkineto and most re-serialisations of its traces put ``ph`` and ``cat`` first), else
  the boundary before it; its end the ``}`` closing its ``args`` object and the ``}`` right
  after it, or where the standard library's ``JSONDecoder.raw_decode`` ends it (a string
  holding ``}``, keys after ``args``). A start neither tells apart raises
  :class:`Unanchored` and the caller reads the file another way (ijson).

Only the events found are decoded; the document's head (before ``traceEvents``) and tail
(after it) are parsed as JSON so that a trace cut short is detected.
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple

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
_SEPARATOR = re.compile(rb'\s*,\s*(?=\{)')  # between two events
_KEY_SEPARATOR = re.compile(rb'"[^"\\]*"(\s*:\s*)')  # the first key of an event, and its colon
_BLANK = re.compile(rb'[\s,]*')
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


class Markers(NamedTuple):
    """What the scanner looks for in one trace (:func:`categories`)."""

    categories: tuple[tuple[bytes, bool], ...]  # (category value, is a kernel)
    boundary: bytes | None = None  # between two events: b"}" + separator + b"{"; None: unknown
    cat_key: bytes = b'"cat": '  # the category's key with the colon the writer puts after it


class EventSink:
    """What the scanner feeds: kernel events as JSON text (decoded by the sink), runtime
    events as dicts. Kineto's reader implements it."""

    def raw(self, text: bytes) -> None:
        raise NotImplementedError

    def raws(self, texts: list[bytes]) -> int:
        """Kernel events' texts, in file order: how many were taken (the first not taken
        does not decode as JSON: the careful path delimits it again)."""
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


def _delimit(data: bytes, cat: int, final: bool, markers: Markers,
             pos: int) -> tuple[int, int, bool]:
    """(start, end, plain) of the event whose category value starts at ``cat``; end is
    MORE when the data ends inside it; plain: its end was found by the args' braces (the
    caller delimits it again with :func:`decoded_end` if that cut does not decode).
    ``pos``: where the data holds no more of an event before (an event's end or start)."""
    start = data.rfind(b"{", max(cat - LOOKBACK, 0), cat)
    if start < 0 or _PLAIN_PREFIX.fullmatch(data, start, cat) is None:
        if _CAT_KEY.search(data, max(cat - 24, 0), cat) is None:
            raise Unanchored(cat)  # a value of another key
        start = _bounded_start(data, cat, markers.boundary, pos)
        end = decoded_end(data, start, final)
        if end != MORE and end <= cat:  # that start was not the event's
            raise Unanchored(cat)
        return start, end, False
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


def _bounded_start(data: bytes, cat: int, boundary: bytes | None, pos: int) -> int:
    """The start of the event whose category value is at ``cat`` in a layout whose keys
    come in another order: after the last boundary before it, or the first ``{`` after
    ``pos`` when only blanks and commas come before it; Unanchored without a boundary."""
    if boundary is None:
        raise Unanchored(cat)
    found = data.rfind(boundary, max(pos - len(boundary) + 1, cat - MAX_EVENT, 0), cat)
    if found >= 0:
        return found + len(boundary) - 1
    first = data.find(b"{", pos, cat)
    if first < 0 or _BLANK.fullmatch(data, pos, first) is None:
        raise Unanchored(cat)
    return first


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


def categories(first: bytes, runtime: bool) -> Markers:
    """What to look for in a trace whose first bytes are ``first``: the category values it
    uses (both spellings when it shows neither: a marker absent from the file would cost a
    scan of every chunk), and the boundary between its events (:func:`learned_layout`)."""
    def used(spellings: tuple[bytes, ...]) -> tuple[bytes, ...]:
        return tuple(m for m in spellings if m in first) or spellings

    kernels = tuple((m, True) for m in used(KERNEL_CATEGORIES))
    found = events_start(first)
    boundary, cat_key = learned_layout(first, found[1]) if found else (None, b'"cat": ')
    return Markers(kernels + (tuple((m, False) for m in used(RUNTIME_CATEGORIES))
                              if runtime else ()), boundary, cat_key)


def learned_layout(first: bytes, at: int) -> tuple[bytes | None, bytes]:
    """(the boundary between two events, the category key with its colon) as the writer of
    the event list that starts at ``at`` puts them: from its first two events (the first
    decoded to find where it ends); (None, the usual key) when there are not two."""
    start = first.find(b"{", at)
    if start < 0 or _BLANK.fullmatch(first, at, start) is None:
        return None, b'"cat": '
    try:
        end = decoded_end(first, start, False)
    except ValueError:
        return None, b'"cat": '
    key = _KEY_SEPARATOR.match(first, start + 1 + len(_BLANK.match(first, start + 1)[0]))
    cat_key = b'"cat"' + key[1] if key else b'"cat": '
    between = _SEPARATOR.match(first, end) if end != MORE else None
    if between is None:
        return None, cat_key
    return b"}" + between[0] + b"{", cat_key


def kernel_event_start(window: bytes, boundary: bytes | None = None) -> int:
    """Where the first kernel event that starts in ``window`` starts (a place to split a
    trace at), or -1. ``boundary``: the layout's (:class:`Markers`), for events whose
    category is not among their first keys (the event must then decode whole)."""
    at = 0
    while True:
        found = [i for i in (window.find(m, at) for m in KERNEL_CATEGORIES) if i >= 0]
        if not found:
            return -1
        cat = min(found)
        start = window.rfind(b"{", max(cat - LOOKBACK, 0), cat)
        if start >= 0 and _PLAIN_PREFIX.fullmatch(window, start, cat) is not None:
            return start
        if boundary is not None and _CAT_KEY.search(window, max(cat - 24, 0), cat):
            start = window.rfind(boundary, at, cat)
            if start >= 0:
                start += len(boundary) - 1
                try:
                    if decoded_end(window, start, True) > cat:
                        return start
                except ValueError:
                    pass
        at = cat + 1


def scan_events(data: bytes, pos: int, sink: EventSink, consumed: int, final: bool,
                markers: Markers) -> int:
    """Feed the events of ``data`` from ``pos`` whose category is one of ``markers`` (from
    :func:`categories`) to ``sink``: kernel events, and runtime calls that carry launch
    dimensions; where to go on from. With one kernel category and a known boundary, the
    events go through :func:`_scan_kernels`, and each it leaves through the careful path."""
    fast = markers.boundary is not None and len(markers.categories) == 1 and \
        markers.categories[0][1]
    limit, misses = FAST_BATCH, 0
    while True:
        if fast:
            pos, stopped = _scan_kernels(data, pos, sink, markers, limit)
            if not stopped:  # a full batch: the next may be larger
                limit = min(2 * limit, FAST_BATCH)
                continue
            # an event it could not cut (the list's first or last, a value "kernel" of
            # another key) or decode: few in a chunk, unless the boundary is not the
            # trace's; then after FAST_MISSES the careful path takes the chunk alone, and
            # the small batches after each miss bound what is cut in vain
            misses += 1
            fast, limit = misses < FAST_MISSES, 16
        pos, more = _scan_careful(data, pos, sink, consumed, final, markers, fast)
        if not more:
            return pos


def _scan_careful(data: bytes, pos: int, sink: EventSink, consumed: int, final: bool,
                  markers: Markers, one: bool) -> tuple[int, bool]:
    """The careful path: (where to go on from, whether events may follow). ``one``: return
    after the first event fed."""
    find = data.find
    categories = list(markers.categories)
    ahead = [find(m, pos) for m, _ in categories]
    categories = [m for m, at in zip(categories, ahead, strict=True) if at >= 0]
    ahead = [at for at in ahead if at >= 0]
    while ahead:
        cat = min(ahead)
        which = ahead.index(cat)
        marker, kernel = categories[which]
        try:
            start, end, plain = _delimit(data, cat, final, markers, pos)
            if end != MORE and not _feed(sink, data[start:end], kernel):
                end = decoded_end(data, start, final) if plain else -2
                if end >= 0 and not _feed(sink, data[start:end], kernel):
                    end = -2
        except Unanchored:
            if _CAT_KEY.search(data, max(cat - 24, 0), cat) is not None:
                raise
            ahead[which] = find(marker, cat + len(marker))  # a value of another key
            if ahead[which] < 0:
                del ahead[which], categories[which]
            continue
        except ValueError:
            end = -2
        if end == MORE:
            return start, False
        if end < 0:
            raise TraceError(f"invalid event at byte {consumed + cat}: stopped after "
                             f"{getattr(sink, 'events', 0)} kernel events")
        pos = end
        if one:
            return pos, True
        for k in range(len(ahead) - 1, -1, -1):
            if ahead[k] < end:
                ahead[k] = find(categories[k][0], end)
                if ahead[k] < 0:
                    del ahead[k], categories[k]
    return max(pos, len(data) - 2 * LOOKBACK), False


_SHORT_PREFIX = 64  # an event's first keys this short are compared whole with the next's
FAST_BATCH = 1 << 16  # the most kernel events decoded in one call
FAST_MISSES = 64  # events a chunk's fast path may stop at before the careful path takes over
FAST_REACH = 64 << 10  # the longest kernel event the fast path cuts (they are about 1 KB)


def _scan_kernels(data: bytes, pos: int, sink: EventSink, markers: Markers,
                  limit: int = FAST_BATCH) -> tuple[int, bool]:
    """The common case, one kernel category in the trace, without the careful path: each
    kernel event lies between the boundary before its category and the one after it (any
    key order); when the text before the category is short and the same as the last
    event's (``{"ph": "X", "cat": ``), that comparison finds the start instead. The events
    a chunk holds are decoded together (:meth:`EventSink.raws`), ``limit`` at most.
    (where to go on from, whether it stopped at an event: the first it does not delimit,
    the list's first or last, a value ``"kernel"`` of another key, an event whose text does
    not decode, or the end of the data's kernel events: the careful path goes on)."""
    # (bytes.find and startswith parse their arguments the slow way, a tuple each call: a
    # short slice compared costs less than startswith, and a search without an end than one
    # with it)
    find, rfind = data.find, data.rfind
    marker = markers.categories[0][0]
    boundary, cat_key = markers.boundary, markers.cat_key
    assert boundary is not None
    before, after = len(boundary) - 1, len(cat_key)
    texts: list[bytes] = []
    starts: list[int] = []
    lo = max(pos - before, 0)  # where the boundary before the next event may start
    prefix, span = b"\0", 1  # the text before the category when events start alike
    stopped = False
    for _ in range(limit):
        cat = find(marker, pos)
        if cat < 0:
            stopped = True
            break
        if data[cat - span:cat] == prefix:  # the last event's first keys: one comparison
            start = cat - span
        elif data[cat - after:cat] == cat_key and (start := rfind(boundary, lo, cat)) >= 0:
            start += before
            if cat - start <= _SHORT_PREFIX:
                prefix, span = data[start:cat], cat - start
        else:
            stopped = True
            break
        end = find(boundary, cat)
        if not 0 <= end - cat < FAST_REACH:
            stopped = True
            break
        starts.append(start)
        pos = end + 1
        texts.append(data[start:pos])
        lo = pos - before
    if texts:
        taken = sink.raws(texts)
        if taken < len(texts):
            return starts[taken], True
    return pos, stopped


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
