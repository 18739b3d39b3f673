"""The calls of the user's functions that a CUDA graph could capture (issue 29).

A trace recorded with Python stacks (Kineto's ``with_stack``) has each call of the user's
functions as an event with its start and end on the host. While such a call runs, the GPU
runs the kernels it launches and, between them, waits for the host: the call's GPU idle
time is its duration less the time some kernel ran (on any stream) inside it. Replayed from
a graph, the same kernels run back to back: what the host spent issuing them (Python, the
framework's dispatch, the launches, the profiler) is gone. A function is a *region* when
every call of it read is free of calls that wait for the GPU (a graph cannot capture them),
its typical call starts at least :data:`MIN_LAUNCHES` kernels and leaves the GPU idle for
at least :data:`MIN_IDLE_SHARE` of it, and no call of another region holds it (the
outermost function is the one to capture). What that saves is priced by
:func:`occlint.judgement.cost.region_saving`.
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections import Counter
from dataclasses import dataclass, field
from statistics import median_low
from typing import Any

from occlint.analysis.launches import OVERHEAD_MIN_LAUNCHES
from occlint.model.launch import HostActivity, StreamTimeline, in_start_order

MIN_LAUNCHES = OVERHEAD_MIN_LAUNCHES  # kernels a typical call starts: as LCH201's bursts
MIN_IDLE_SHARE = 0.5  # of a typical call's duration, the GPU idle


@dataclass
class Call:
    thread: tuple[Any, Any]  # (pid, tid)
    start_ns: float
    end_ns: float
    busy_ns: float = 0.0  # some kernel ran (any stream)
    launches: int = 0  # kernels that started inside it
    groups: Counter = field(default_factory=Counter)  # their launch groups

    @property
    def duration_ns(self) -> float:
        return self.end_ns - self.start_ns


@dataclass
class Region:
    """A user's function whose calls a graph could capture; ``typical``: its median call."""

    function: str
    file: str
    line: int
    calls: list[Call]
    typical: Call

    @property
    def groups(self) -> Counter:
        out: Counter = Counter()
        for c in self.calls:
            out.update(c.groups)
        return out

    def __post_init__(self) -> None:
        self.calls.sort(key=lambda c: c.start_ns)
        self._starts = [c.start_ns for c in self.calls]
        self._latest = list(itertools.accumulate((c.end_ns for c in self.calls), max))

    def overlaps(self, start_ns: float, end_ns: float) -> bool:
        """Whether some call of it overlaps ``start_ns`` to ``end_ns``."""
        i = bisect.bisect_right(self._starts, end_ns) - 1
        return i >= 0 and self._latest[i] >= start_ns


def host_regions(host: HostActivity | None, timelines: list[StreamTimeline]) -> list[Region]:
    """The regions of one trace, the one idling the GPU longest first."""
    if host is None:
        return []
    syncs = _syncs(host)
    # the functions none of whose calls waits for the GPU (a program's main() usually does:
    # the kernels are then measured only over the calls that may be regions)
    calls = {key: cs for key, cs in _user_calls(host).items()
             if not any(_waits(c, syncs) for c in cs)}
    if not calls:
        return []
    lo = min(c.start_ns for cs in calls.values() for c in cs)
    hi = max(c.end_ns for cs in calls.values() for c in cs)
    busy = Busy(timelines, lo, hi)
    found = []
    for (function, file, line), cs in calls.items():
        for c in cs:
            busy.measure(c)
        typical = sorted(cs, key=lambda c: c.duration_ns)[len(cs) // 2]
        idle = typical.duration_ns - typical.busy_ns
        if median_low(c.launches for c in cs) < MIN_LAUNCHES or \
                idle < MIN_IDLE_SHARE * typical.duration_ns:
            continue
        found.append(Region(function, file, line, cs, typical))
    outer = [r for r in found
             if not any(o is not r and _inside(r.typical, o) for o in found)]
    return sorted(outer, key=lambda r: (-(r.typical.duration_ns - r.typical.busy_ns)
                                        * len(r.calls), r.file, r.line))


def _user_calls(host: HostActivity) -> dict[tuple[str, str, int], list[Call]]:
    """The calls of the user's functions, by function."""
    out: dict[tuple[str, str, int], list[Call]] = {}
    for thread, start, end, function, file, line in host.calls:
        out.setdefault((function, file, line), []).append(Call(thread, start * 1000.0,
                                                               end * 1000.0))
    return out


def _syncs(host: HostActivity) -> dict[tuple[Any, Any], list[float]]:
    out: dict[tuple[Any, Any], list[float]] = {}
    for thread, ts in host.syncs:
        out.setdefault(thread, []).append(ts * 1000.0)
    for v in out.values():
        v.sort()
    return out


def _waits(call: Call, syncs: dict[tuple[Any, Any], list[float]]) -> bool:
    """Whether the call made a call that waits for the GPU, on its own thread."""
    times = syncs.get(call.thread)
    if not times:
        return False
    i = bisect.bisect_left(times, call.start_ns)
    return i < len(times) and times[i] <= call.end_ns


def _inside(call: Call, other: Region) -> bool:
    return any(o.thread == call.thread and o.start_ns <= call.start_ns
               and call.end_ns <= o.end_ns and (o.start_ns, o.end_ns)
               != (call.start_ns, call.end_ns) for o in other.calls)


class Busy:
    """The kernels of every stream between ``lo`` and ``hi`` (ns): the union of their
    intervals (when some kernel ran) and each stream's starts (what started when)."""

    def __init__(self, timelines: list[StreamTimeline], lo: float, hi: float) -> None:
        self.starts: list[tuple[Any, Any]] = []  # per stream: (starts, groups), sorted
        self.loose: list[list[float]] = []  # per stream: starts of launches in no group
        intervals: list[tuple[float, float]] = []
        for t in timelines:
            starts, durations, groups = in_start_order(t.starts, t.durations, t.groups)
            longest = max(durations, default=0.0)
            a = bisect.bisect_left(starts, lo - longest)
            b = bisect.bisect_right(starts, hi)
            self.starts.append((starts[a:b], groups[a:b]))
            intervals.extend(zip(starts[a:b], map(operator.add, starts[a:b],
                                                  durations[a:b]), strict=True))
            if t.loose_starts:  # a graph's replayed kernels: busy, counted, in no group
                loose = sorted(zip(t.loose_starts, t.loose_durations, strict=True))
                self.loose.append([s for s, _ in loose])
                intervals.extend((s, s + d) for s, d in loose if s <= hi and s + d >= lo)
        intervals.sort()
        self.begins: list[float] = []
        self.ends: list[float] = []
        for s, e in intervals:  # the union
            if self.ends and s <= self.ends[-1]:
                self.ends[-1] = max(self.ends[-1], e)
            else:
                self.begins.append(s)
                self.ends.append(e)
        # time covered before each union interval
        self.before = [0.0, *itertools.accumulate(map(operator.sub, self.ends, self.begins))]

    def covered(self, t: float) -> float:
        """Time some kernel ran before ``t``."""
        i = bisect.bisect_right(self.begins, t) - 1
        if i < 0:
            return 0.0
        return self.before[i] + min(t, self.ends[i]) - self.begins[i]

    def measure(self, call: Call) -> None:
        call.busy_ns = self.covered(call.end_ns) - self.covered(call.start_ns)
        for starts, groups in self.starts:
            a = bisect.bisect_left(starts, call.start_ns)
            b = bisect.bisect_right(starts, call.end_ns)
            call.launches += b - a
            call.groups.update(groups[a:b])
        for starts in self.loose:
            call.launches += bisect.bisect_right(starts, call.end_ns) - bisect.bisect_left(
                starts, call.start_ns)
