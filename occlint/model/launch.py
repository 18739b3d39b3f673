"""The launch model: kernel launches read from profiler traces, grouped.

Trace readers (occlint.readers.traces) feed every launch into a :class:`LaunchCollector`,
which keeps one :class:`LaunchGroup` per distinct launch (device, kernel, grid, block,
shared memory, resources) with its count and durations, and each stream's timeline in
compact arrays for the launch-overhead rule. Nothing per launch is kept beyond 16 bytes
of timeline, so a trace of millions of launches stays small in memory.

Times are nanoseconds. Grids are in blocks (work-groups), never in threads / work-items.
"""

from __future__ import annotations

import itertools
import operator
from array import array
from dataclasses import dataclass, field
from typing import Any, Literal

Vendor = Literal["amd", "nvidia"]
Dim3 = tuple[int, int, int]


@dataclass(slots=True)
class TraceDevice:
    """A GPU as the trace describes it (Kineto ``deviceProperties``, rocprofv3 agent info,
    nsys ``TARGET_INFO_GPU``)."""

    key: str  # the trace's own device id ("0", "Agent 2", ...)
    vendor: Vendor
    name: str | None = None  # product name as the trace writes it
    arch: str | None = None  # sm_90, gfx942 ...
    compute_units: int | None = None  # SMs / CUs
    wave_size: int | None = None
    properties: dict[str, Any] = field(default_factory=dict)  # the raw description


@dataclass(frozen=True, slots=True)
class NvLaunchResources:
    """What a trace says about an NVIDIA launch's resources (None: not in the trace)."""

    registers: int | None = None  # per thread, as allocated (CUPTI rounds to the unit)
    static_shared: int | None = None
    dynamic_shared: int | None = None
    shared_total: int | None = None  # static + dynamic, when the trace gives only the sum
    local_bytes: int | None = None  # per thread


@dataclass(frozen=True, slots=True)
class AmdLaunchResources:
    """What a trace says about an AMD dispatch's resources (None: not in the trace)."""

    vgpr: int | None = None  # architectural VGPRs (allocated, granule-rounded)
    agpr: int | None = None
    sgpr: int | None = None
    lds_bytes: int | None = None  # per work-group, static + dynamic (the value at dispatch)
    scratch_bytes: int | None = None  # per work-item
    dynamic_lds: int | None = None  # the launch call's dynamic LDS only (Kineto on ROCm)


LaunchResources = NvLaunchResources | AmdLaunchResources


@dataclass(frozen=True, slots=True)
class LaunchKey:
    """What makes launches identical for occlint: they get one analysis and one finding set."""

    device: str  # TraceDevice.key
    kernel: str  # name as the trace writes it (demangled or mangled)
    mangled: str | None
    grid: Dim3  # blocks
    block: Dim3
    resources: LaunchResources
    op: str | None = None  # what launched it, where the trace says (XLA: hlo_module/hlo_op)


@dataclass(slots=True)
class LaunchGroup:
    key: LaunchKey
    count: int = 0
    total_ns: float = 0.0
    max_ns: float = 0.0
    first_ns: float = float("inf")  # start of the first launch
    streams: set[str] = field(default_factory=set)
    # what launched its first launch, as far as the trace links it (Kineto: the op, the
    # runtime call, the user's Python frame and module; occlint.readers.traces.kineto_links)
    launched_by: dict[str, Any] | None = None

    @property
    def mean_ns(self) -> float:
        return self.total_ns / self.count if self.count else 0.0


class StreamTimeline:
    """Start times and durations of the launches on one stream, in arrival order; and of
    those in no group (``loose_*``: a graph's replayed kernels, launches whose dimensions
    the trace does not give), which keep the GPU busy all the same."""

    __slots__ = ("device", "durations", "groups", "loose_durations", "loose_starts", "starts",
                 "stream")

    def __init__(self, device: str, stream: str) -> None:
        self.device, self.stream = device, stream
        self.starts = array("d")
        self.durations = array("d")
        self.groups = array("l")  # index of each launch's group (collector order)
        self.loose_starts = array("d")
        self.loose_durations = array("d")


def in_start_order(starts, durations, groups) -> tuple:
    """A stream's launches (start times, durations, groups) sorted by start: as they are
    when they already are (readers add them in arrival order, nearly always sorted; the
    check is C-level over a million launches), else sorted lists."""
    if all(map(operator.le, starts, itertools.islice(starts, 1, None))):
        return starts, durations, groups
    order = sorted(range(len(starts)), key=starts.__getitem__)
    return ([starts[i] for i in order], [durations[i] for i in order],
            [groups[i] for i in order])


class HostActivity:
    """What the host did while it launched, as a trace with Python stacks records it:
    ``calls``, the calls of the user's functions ((pid, tid), start, end in µs, function,
    file, first line), and ``syncs``, the runtime calls that wait for the GPU ((pid, tid),
    start µs), in the part of the trace read: the whole, or its first ``kernels_read``
    kernel events (a long trace's Python frames are read that far)."""

    __slots__ = ("calls", "kernels_read", "syncs")

    def __init__(self, calls: list[tuple[tuple[Any, Any], float, float, str, str, int]],
                 syncs: list[tuple[tuple[Any, Any], float]],
                 kernels_read: int | None = None) -> None:
        self.calls, self.syncs, self.kernels_read = calls, syncs, kernels_read


class LaunchCollector:
    """Accumulates one trace's launches. Readers call :meth:`device` and :meth:`add`."""

    def __init__(self, source: str, fmt: str) -> None:
        self.source = source  # the trace's path as given (display name)
        self.format = fmt  # "kineto", "rocprofv3-csv", "rocprofv3-json", "rocpd", "nsys", "xla"
        self.devices: dict[str, TraceDevice] = {}
        self.groups: dict[LaunchKey, int] = {}
        self.group_list: list[LaunchGroup] = []
        self.streams: dict[tuple[str, str], StreamTimeline] = {}
        self.launches = 0
        self.notes: list[str] = []  # facts about the trace worth reporting (info)
        self.loose_ns = 0.0  # kernel time of the launches in no group (StreamTimeline.loose_*)
        self.host: HostActivity | None = None  # with Python stacks (Kineto's with_stack)
        # the PyTorch profiler's options the trace shows (None: not a Kineto trace, or not
        # read): record_shapes, with_stack, with_modules, profile_memory
        self.profiler_options: list[str] | None = None

    def device(self, device: TraceDevice) -> None:
        self.devices[device.key] = device

    def handle(self, key: LaunchKey, stream: str) -> tuple[LaunchGroup, StreamTimeline, int]:
        """Where launches of ``key`` on ``stream`` go: readers may keep it and pass it to
        :meth:`add_to` for every further launch of the same kind (the fast path)."""
        index = self.groups.get(key)
        if index is None:
            index = self.groups[key] = len(self.group_list)
            self.group_list.append(LaunchGroup(key))
        group = self.group_list[index]
        group.streams.add(stream)
        timeline = self.streams.get((key.device, stream))
        if timeline is None:
            timeline = self.streams[(key.device, stream)] = StreamTimeline(key.device, stream)
        return group, timeline, index

    def add_to(self, handle: tuple[LaunchGroup, StreamTimeline, int], start_ns: float,
               duration_ns: float) -> None:
        group, timeline, index = handle
        group.count += 1
        group.total_ns += duration_ns
        if duration_ns > group.max_ns:
            group.max_ns = duration_ns
        if start_ns < group.first_ns:
            group.first_ns = start_ns
        timeline.starts.append(start_ns)
        timeline.durations.append(duration_ns)
        timeline.groups.append(index)
        self.launches += 1

    def add(self, key: LaunchKey, start_ns: float, duration_ns: float, stream: str) -> None:
        self.add_to(self.handle(key, stream), start_ns, duration_ns)

    def add_loose(self, device: str, stream: str, start_ns: float, duration_ns: float) -> None:
        """A launch in no group (its dimensions unknown): its time on its stream, for the
        GPU's busy time and the trace's kernel time; readers count it in ``launches``."""
        timeline = self.streams.get((device, stream))
        if timeline is None:
            timeline = self.streams[(device, stream)] = StreamTimeline(device, stream)
        timeline.loose_starts.append(start_ns)
        timeline.loose_durations.append(duration_ns)
        self.loose_ns += duration_ns


def integral(value: Any) -> bool:
    """An int, or a float with an integer value (JSON writers spell 256 as 256.0); never a
    bool, NaN or infinity."""
    return (isinstance(value, int) and not isinstance(value, bool)) or (
        isinstance(value, float) and value.is_integer())


def dim3(value: Any, what: str) -> Dim3:
    """A [x, y, z] triple of positive integers (missing trailing dimensions are 1)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, (list, tuple)) or not 1 <= len(value) <= 3:
        raise ValueError(f"{what} is not a list of 1 to 3 integers: {value!r:.60}")
    out = []
    for v in value:
        if not integral(v):
            raise ValueError(f"{what} is not a list of integers: {value!r:.60}")
        out.append(int(v))
    out += [1] * (3 - len(out))
    return out[0], out[1], out[2]
