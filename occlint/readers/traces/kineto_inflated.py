"""A gzip'd Kineto trace scanned by several processes: each inflates the stream from its
start and scans only its own range of the event list.

A gzip stream cannot be entered in the middle, so the process for the k-th range inflates
(and drops) everything before it; ISA-L inflates a byte for about a quarter of what scanning
it costs, so the ranges are planned unequal (the later ones shorter) to give each process
the same work (:func:`planned_cuts`). No byte crosses between processes, and the memory of
each is that of one reading a plain range.

A range runs between two planned offsets of the inflated stream, each moved to the first
event that starts in the ``MAX_EVENT`` bytes from it (the same rule as a plain trace's split,
applied by both processes that share the seam to the same bytes, so they agree); the first
range starts at the event list, the last ends with the stream. When a planned offset has no
event after it (the size was misjudged, a damaged stream), :class:`Unsplittable` says that
the trace is to be read as one stream.
"""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from occlint.readers.traces.kineto_scan import KEEP_TAIL, MAX_EVENT, kernel_event_start

INFLATE_TO_SCAN = 0.25  # CPU to inflate a byte (ISA-L) / CPU to scan it: 1.2 s vs 5 s a GB
EVENT_LINE = b"\n  {\n"  # where an event starts in libkineto's own layout


class Unsplittable(Exception):
    """A planned range has no event to start at: read the trace as one stream."""


def inflater(path: str | Path) -> IO[bytes]:
    """A gzip file's inflated stream, in this thread (ISA-L when installed)."""
    try:
        from isal import igzip
    except ImportError:
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return igzip.open(path, "rb")  # type: ignore[return-value]


def inflated_size(path: str | Path, probe: int = 1 << 20) -> int:
    """An estimate of a gzip file's inflated size: the size its trailer records (the last
    member's, modulo 2**32) read as the nearest value to the file's size times the
    compression ratio of its first ``probe`` bytes, or that product when the trailer is far
    from it (several members)."""
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        packed = fh.read(probe)
        fh.seek(max(size - 4, 0))
        recorded = int.from_bytes(fh.read(4), "little")
    inflate = zlib.decompressobj(31)
    try:
        out = len(inflate.decompress(packed, 8 * probe))  # the ratio of what this inflates
    except zlib.error:
        return recorded
    used = len(packed) - len(inflate.unconsumed_tail) - len(inflate.unused_data)
    guess = size * out / max(used, 1)
    near = recorded + max(round((guess - recorded) / 2**32), 0) * 2**32
    return near if guess / 1.5 <= near <= guess * 1.5 else int(guess)


def planned_cuts(total: int, jobs: int, inflate_to_scan: float = INFLATE_TO_SCAN) -> list[int]:
    """Offsets that cut ``total`` inflated bytes into ``jobs`` ranges of equal work: the
    k-th range costs inflating everything up to its end and scanning itself, so with
    q = 1 / (1 + inflate_to_scan), cut k+1 = c + q * cut k, c chosen to end at ``total``."""
    q = 1.0 / (1.0 + inflate_to_scan)
    step = total * (1 - q) / (1 - q ** jobs)
    cuts, at = [], 0.0
    for _ in range(jobs - 1):
        at = step + q * at
        cuts.append(int(at))
    return cuts


class _Window:
    """An inflated stream read forward, with the bytes from ``base`` on kept in ``data``."""

    def __init__(self, stream: IO[bytes], chunk: int) -> None:
        self.stream, self.chunk = stream, chunk
        self.data, self.base, self.eof = b"", 0, False

    def more(self) -> None:
        piece = self.stream.read(self.chunk)
        if piece:
            self.data += piece
        else:
            self.eof = True

    def drop_to(self, at: int) -> None:
        """Forget the bytes before ``at`` (inflating up to it)."""
        while not self.eof and self.base + len(self.data) < at:
            self.base, self.data = self.base + len(self.data), b""
            self.more()
        cut = max(min(at - self.base, len(self.data)), 0)
        self.base, self.data = self.base + cut, self.data[cut:]

    def window(self, at: int, size: int) -> bytes:
        """The bytes [at, at + size) (fewer at the stream's end); those before are dropped."""
        self.drop_to(at)
        while not self.eof and self.base + len(self.data) < at + size:
            self.more()
        return self.data[at - self.base:at - self.base + size]


class InflatedRange:
    """The bytes of one range of a gzip'd trace's event list: the events from the first
    that starts at or after ``near_start`` (the list's start ``events_at`` for the first
    range) to the first that starts at or after ``near_stop`` (None: to the stream's end,
    whose last bytes are kept in ``tail`` for the document's end to be checked). ``own``:
    libkineto's own layout (events start with a line ``  {``), else the layout-free
    scanner's kernel event starts (``boundary``: between two events, kineto_scan.Markers)."""

    def __init__(self, path: str, events_at: int, near_start: int, near_stop: int | None,
                 own: bool, chunk: int, boundary: bytes | None = None) -> None:
        self.path, self.events_at, self.own, self.chunk = path, events_at, own, chunk
        self.boundary = boundary
        self.near_start, self.near_stop = near_start, near_stop
        self.start = self.stop = -1
        self.tail: bytes | None = None

    def _boundary(self, stream: _Window, near: int) -> int:
        if near <= self.events_at:
            return self.events_at
        window = stream.window(near, MAX_EVENT)
        found = window.find(EVENT_LINE) if self.own else kernel_event_start(window,
                                                                               self.boundary)
        if found < 0:
            raise Unsplittable(near)
        return near + found

    def chunks(self) -> Iterator[bytes]:
        """The range's bytes, a chunk at a time; ``start`` is set once the first is made."""
        with inflater(self.path) as raw:
            stream = _Window(raw, self.chunk)
            self.start = self._boundary(stream, self.near_start)
            stream.drop_to(self.start)
            if self.near_stop is None:  # the last range: to the end, whose bytes are kept
                self.tail = b""
                for piece in _until(stream, None):
                    self.tail = (self.tail + piece[-KEEP_TAIL:])[-KEEP_TAIL:]
                    yield piece
            elif self.near_stop > self.start:  # else no event starts between them
                yield from _until(stream, self.near_stop)  # surely before the next event
                yield from _until(stream, self._boundary(stream, self.near_stop))


def _until(stream: _Window, stop: int | None) -> Iterator[bytes]:
    """The stream's bytes from where it is to ``stop`` (None: to its end)."""
    while stop is None or stream.base < stop:
        if not stream.data:
            stream.more()
            if stream.eof:
                return
        end = len(stream.data) if stop is None else min(len(stream.data), stop - stream.base)
        piece = stream.data[:end]
        stream.drop_to(stream.base + end)
        yield piece
