"""What launched each kernel of a PyTorch profiler (Kineto) trace: the joins between events.

A Kineto trace links a kernel to the rest of the run by two ids in its ``args``:

* ``correlation``: the runtime (or driver) call that launched it (``"cat": "cuda_runtime"``
  / ``"cuda_driver"``, same id). Its name says how: ``cudaLaunchCooperativeKernel`` /
  ``hipLaunchCooperativeKernel`` (every block resident at once), ``hipGraphLaunch`` (a
  replayed graph: one call, many kernels), ``hipExtModuleLaunchKernel`` (Tensile's GEMMs),
  whose grid is in work-items (``globalWorkSizeX``), not blocks — libkineto records the
  call's arguments as ``grid`` whatever the call (RoctracerLogger, rocprofKernelRow).
* ``External id``: the CPU op (``"cat": "cpu_op"``) that was running when the call was made,
  e.g. ``aten::addmm``.

On ROCm the launch dimensions come from the runtime call (:class:`RuntimeJoin`, during the
scan). The op, the call's name for CUDA and, when the trace has Python stacks
(``with_stack=True``: ``python_function`` events) or module scopes (``with_modules=True``:
``nn.Module: ...``), the user's frame and module are found by :func:`resolve_origins`, a
second, bounded pass: only the first launch of each launch group is linked, and the pass
stops once it is past the last group's first launch with every link found, or :data:`SLACK`
kernel events further (CPU events come before the GPU events they launched in libkineto's
output, a runtime call shortly after its kernel), so a trace of a million launches is
re-read only over about its first iteration.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterator
from typing import Any

from occlint.model.launch import HostActivity, LaunchCollector, TraceDevice

# launch calls whose grid is in work-items (HIP: globalWorkSize = blocks x block)
WORK_ITEM_APIS = frozenset({"hipExtModuleLaunchKernel", "hipHccModuleLaunchKernel"})
GRAPH_APIS = frozenset({"cudaGraphLaunch", "cuGraphLaunch", "hipGraphLaunch"})
LINK_CATEGORIES = ("cpu_op", "cuda_runtime", "cuda_driver", "python_function",
                   "Operator", "Runtime")  # (the last two: 2021-era libkineto's names)
LEGACY = {"Operator": "cpu_op", "Runtime": "cuda_runtime"}
MEMORY_CATEGORY = "cpu_instant_event"  # profile_memory's "[memory]" events
# kernel events read past the last group's first launch before the links still missing are
# given up (an op outside the profiled window, a replayed graph's kernels)
SLACK = 10_000


def is_cooperative(api: str | None) -> bool:
    """cudaLaunchCooperativeKernel(MultiDevice), cuLaunchCooperativeKernel,
    hipLaunchCooperativeKernel(MultiDevice), hipModuleLaunchCooperativeKernel ..."""
    return bool(api) and "LaunchCooperativeKernel" in api  # type: ignore[operator]


def blocks_of(grid: Any, block: Any, api: str | None) -> Any:
    """The grid in blocks: a work-item grid (``WORK_ITEM_APIS``) is ceil(grid / block) per
    dimension; anything else (or a malformed value, which validation reports) unchanged."""
    if api not in WORK_ITEM_APIS or not isinstance(grid, (list, tuple)) \
            or not isinstance(block, (list, tuple)) or len(grid) != len(block):
        return grid
    try:
        return [math.ceil(g / b) for g, b in zip(grid, block, strict=True)]
    except (TypeError, ZeroDivisionError):
        return grid


class RuntimeJoin:
    """ROCm kernel events joined to the runtime calls that launched them (``correlation``):
    the call gives the dimensions (older libkineto writes them only there) and says how the
    kernel was launched. Either event may come first; a graph launch's one call stands for
    all the kernels it replays (kept in :attr:`loose`: they have no dimensions)."""

    def __init__(self) -> None:
        self.calls: dict[Any, tuple] = {}  # correlation -> (api, grid, block, shared)
        self.pending: dict[Any, list[tuple]] = {}  # correlation -> kernels before their call
        self.loose: list[tuple] = []  # (device, stream, start, duration) of replayed kernels

    def call(self, event: dict[str, Any]) -> list[tuple]:
        """A runtime call; the kernels waiting for it, as :meth:`launch` tuples."""
        args = event.get("args")
        api = event.get("name")
        if not isinstance(args, dict) or not isinstance(api, str):
            return []
        return self.call_of(api, args.get("correlation"), "grid" in args, args.get("grid"),
                            args.get("block"), args.get("shared memory"))

    def call_of(self, api: str, correlation: Any, has_grid: bool, grid: Any, block: Any,
                shared: Any) -> list[tuple]:
        """:meth:`call` from the call's fields (a typed decoder's): ``has_grid``, whether
        its args hold a ``grid`` key at all."""
        call, waiting = self.take_waiting(api, correlation, has_grid, grid, block, shared)
        return [x for kernel in waiting if (x := self.joined(kernel, call)) is not None]

    def take_waiting(self, api: str, correlation: Any, has_grid: bool, grid: Any, block: Any,
                     shared: Any) -> tuple[tuple, list[tuple]]:
        """A runtime call read: (the call, the kernels that waited for it, for
        :meth:`joined`); the call is kept for kernels still to come."""
        call = (api, grid, block, shared)
        if not is_id(correlation) or (not has_grid and api not in GRAPH_APIS):
            return call, []  # no launch of a kernel event
        waiting = self.pending.pop(correlation, None)
        if waiting is None:
            self.calls[correlation] = call
            return call, []
        if api in GRAPH_APIS:
            self.calls[correlation] = call  # later kernels of the same replay
        return call, waiting

    def kernel(self, correlation: Any, kernel: tuple) -> tuple | None:
        """A kernel event (name, device, stream, start, duration, grid, block, shared,
        external id): its launch tuple, or None while its call is not read yet (or when it
        is a graph replay)."""
        call = self.calls.get(correlation)
        if call is None:
            self.pending.setdefault(correlation, []).append(kernel)
            return None
        if call[0] not in GRAPH_APIS:
            del self.calls[correlation]
        return self.joined(kernel, call)

    def take_call(self, correlation: Any) -> tuple | None:
        """The call (api, grid, block, shared) of a kernel event about to be joined, when the
        call came first and launched this one kernel (not a graph replay): taken out of the
        join, for :meth:`joined`."""
        call = self.calls.get(correlation)
        if call is None or call[0] in GRAPH_APIS:
            return None
        del self.calls[correlation]
        return call

    def joined(self, kernel: tuple, call: tuple) -> tuple | None:
        """(name, device, stream, start, duration, grid, block, shared, external id, api)."""
        name, device, stream, start, duration, grid, block, shared, external = kernel
        api, call_grid, call_block, call_shared = call
        if api in GRAPH_APIS:
            self.loose.append((device, stream, start, duration))
            return None
        if call_grid is not None and call_block is not None:
            grid, block, shared = call_grid, call_block, call_shared
        return (name, device, stream, start, duration, blocks_of(grid, block, api), block,
                shared, external, api)

    def unresolved(self) -> list[tuple]:
        """Kernels whose call never came: their own dimensions, launched how is unknown."""
        out = [(*k, None) for waiting in self.pending.values() for k in waiting]
        self.pending.clear()
        return out


# -- ROCm devices ------------------------------------------------------------------------------
def resolve_devices(collector: LaunchCollector) -> None:
    """Kernels whose ``device`` is none of the described ids: roctracer-era libkineto writes
    the KFD node id (``driverNodeId_``: CPU nodes count first, so GPU 0 is node 1 or 2), the
    rocprofiler-sdk one the GPU index, and ``deviceProperties`` lists HIP's devices 0..n-1.
    When the described devices are all alike, the kernel's device is one of them whichever
    it is; otherwise it stays unknown (said in a note)."""
    described = [d for d in collector.devices.values() if d.vendor == "amd"]
    if not described:
        return
    missing = sorted({g.key.device for g in collector.group_list} - set(collector.devices))
    if not missing:
        return
    alike = {(d.name, d.arch, d.compute_units, d.wave_size,
              tuple(sorted((k, v) for k, v in d.properties.items() if k != "id")))
             for d in described}
    if len(alike) != 1:
        collector.notes.append(
            f"kernels on device {', '.join(missing)}: not a described device id (a KFD node "
            "id?) and the described GPUs differ, so their device is unknown")
        return
    model = described[0]
    for key in missing:
        collector.device(TraceDevice(key=key, vendor="amd", name=model.name, arch=model.arch,
                                     compute_units=model.compute_units,
                                     wave_size=model.wave_size,
                                     properties=dict(model.properties)))
    collector.notes.append(
        f"kernels on device {', '.join(missing)} (a KFD node id, not one of the "
        f"{len(described)} described ids): every described GPU is alike, so analysed as it")


# -- the second pass: ops, calls, Python frames ------------------------------------------------
class Wanted:
    """The links of each launch group's first launch, and when the pass may stop."""

    def __init__(self, collector: LaunchCollector, kernels_before: int) -> None:
        self.groups = [g for g in collector.group_list if g.launched_by is not None]
        self.ops = {g.launched_by["external_id"] for g in self.groups  # type: ignore[index]
                    if _id(g.launched_by.get("external_id"))}  # type: ignore[union-attr]
        self.calls = {g.launched_by["correlation"] for g in self.groups  # type: ignore[index]
                      if _id(g.launched_by.get("correlation"))}  # type: ignore[union-attr]
        self.kernels_before = kernels_before  # kernel events up to the last group's first

    def __bool__(self) -> bool:
        return bool(self.ops or self.calls)


def _id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def is_id(value: Any) -> bool:
    """An id a trace links events by (an int or a string; anything else links nothing)."""
    return isinstance(value, (int, str)) and not isinstance(value, bool)


# runtime and driver calls that wait for the GPU (a CUDA graph cannot capture them)
SYNCHRONIZING = re.compile(r"Synchronize|^(cuda|hip)Memcpy(2D|3D|WithStream|DtoH|HtoD|"
                           r"FromSymbol|ToSymbol)?$|^cuMemcpy(DtoH|HtoD|2D|3D)?"
                           r"(_v2)?$|^(cuda|hip)Free$|^cuMemFree")


class Found:
    """What the pass found: ops and calls by id, Python frames by thread, the calls that
    wait for the GPU (``syncs``: pid, tid, ts)."""

    def __init__(self) -> None:
        self.ops: dict[int, tuple] = {}  # external id -> (name, pid, tid, ts, dur)
        self.calls: dict[int, tuple] = {}  # correlation -> (name, pid, tid, ts)
        self.frames: dict[Any, list[tuple[float, float, str]]] = {}  # tid -> (ts, end, name)
        self.syncs: list[tuple[tuple[Any, Any], float]] = []
        self.shapes = self.memory = False  # record_shapes, profile_memory: seen on

    def take(self, event: dict[str, Any], wanted: Wanted) -> None:
        cat, args = event.get("cat"), event.get("args")
        cat = LEGACY.get(cat, cat)  # type: ignore[arg-type]
        if cat == MEMORY_CATEGORY:  # profile_memory's allocations
            self.memory = True
            return
        name = event.get("name")
        if not isinstance(name, str):
            return
        ts, dur = event.get("ts"), event.get("dur", 0)
        if not isinstance(ts, (int, float)) or not isinstance(dur, (int, float)):
            return
        where = (event.get("pid"), event.get("tid"))
        if not is_id(where[0]) or not is_id(where[1]):
            return
        if cat == "python_function":
            self.frames.setdefault(where, []).append((ts, ts + dur, name))
            return
        if cat != "cpu_op" and SYNCHRONIZING.search(name):
            self.syncs.append((where, ts))
        if not isinstance(args, dict):
            return
        if cat == "cpu_op":
            self.shapes = self.shapes or "Input Dims" in args
            ext = args.get("External id")
            if _id(ext) and ext in wanted.ops and ext not in self.ops:
                self.ops[ext] = (name, *where, ts, dur)
        elif _id(args.get("correlation")) and args["correlation"] in wanted.calls:
            self.calls.setdefault(args["correlation"], (name, *where, ts))

    def complete(self, wanted: Wanted) -> bool:
        return len(self.ops) >= len(wanted.ops) and len(self.calls) >= len(wanted.calls)


def resolve_origins(events: Iterator[tuple[bool, dict[str, Any] | None]],
                    collector: LaunchCollector, kernels_before: int) -> None:
    """Fill each group's ``launched_by`` from ``events``: (is a kernel event, the event or
    None when it is of no category :data:`LINK_CATEGORIES` needs), in file order. With
    Python frames (``with_stack``) the pass goes on to :data:`SLACK` kernel events past
    the last group's first launch, or the end: the frames and synchronising calls read are
    the collector's ``host`` (:class:`occlint.model.launch.HostActivity`), for the calls of
    the user's functions that a graph could capture."""
    wanted = Wanted(collector, kernels_before)
    if not wanted:
        return
    found, kernels, whole = Found(), 0, False
    for is_kernel, event in events:
        if is_kernel:
            kernels += 1
            if kernels >= wanted.kernels_before + SLACK:
                break
        elif event is not None:
            found.take(event, wanted)
        if kernels >= wanted.kernels_before and not found.frames and found.complete(wanted):
            break
    else:
        whole = True
    for frames in found.frames.values():
        frames.sort(key=lambda f: (f[0], -f[1]))
    for group in wanted.groups:
        _describe(group.launched_by, found)  # type: ignore[arg-type]
    if found.frames:
        collector.host = HostActivity(user_calls(found.frames), found.syncs,
                                      None if whole else kernels)
    modules = any(f[2].startswith(MODULE_PREFIX) for frames in found.frames.values()
                  for f in frames)
    collector.profiler_options = [o for o, on in (
        ("record_shapes", found.shapes), ("with_stack", bool(found.frames) and any(
            FRAME.fullmatch(f[2]) for frames in found.frames.values() for f in frames)),
        ("with_modules", modules), ("profile_memory", found.memory)) if on]


def _describe(link: dict[str, Any], found: Found) -> None:
    op = found.ops.get(link["external_id"]) if _id(link.get("external_id")) else None
    call = found.calls.get(link["correlation"]) if _id(link.get("correlation")) else None
    if op is not None:
        link["op"] = op[0]
    if call is not None and not link.get("api"):
        link["api"] = call[0]
    link["cooperative"] = is_cooperative(link.get("api"))
    # the Python stack at the call (else at the op), on the thread that made it
    at = (call[1], call[2], call[3]) if call is not None else \
        (op[1], op[2], op[3]) if op is not None else None
    if at is None or not found.frames:
        return
    frames = found.frames.get((at[0], at[1])) or []
    stack = [f[2] for f in frames if f[0] <= at[2] <= f[1]]
    modules = [n[len(MODULE_PREFIX):] for n in stack if n.startswith(MODULE_PREFIX)]
    if modules:
        link["module"] = ".".join(modules)
    frame = user_frame(stack)
    if frame is not None:
        link["python"] = frame


MODULE_PREFIX = "nn.Module: "
FRAME = re.compile(r"(?P<file>[^()]+\.py)\((?P<line>\d{1,9})\): (?P<function>.+)")
# packages whose frames are not the user's: PyTorch and the libraries a model is built from
LIBRARY_PACKAGES = frozenset({
    "torch", "torchvision", "torchaudio", "torchtext", "functorch", "triton", "transformers",
    "accelerate", "diffusers", "timm", "peft", "deepspeed", "apex", "xformers", "flash_attn",
    "lightning", "pytorch_lightning", "numpy", "cupy", "jax", "tqdm",
    "einops", "safetensors", "huggingface_hub", "tokenizers"})


# libraries people also run from a checkout of their own (then their frames are the user's)
SERVING_PACKAGES = frozenset({"vllm", "sglang"})
INSTALLED = ("site-packages", "dist-packages", "/lib/python", "/usr/lib/")


def user_frame(stack: list[str]) -> dict[str, Any] | None:
    """The innermost frame of ``stack`` (outermost first) in the user's code: a
    ``file.py(line): function`` that is not installed. PyTorch writes a file under a
    ``sys.path`` entry relative to it (``torch/nn/modules/module.py``): such a module is
    the user's unless it is of the standard library, :data:`LIBRARY_PACKAGES` or
    :data:`SERVING_PACKAGES`; any other file keeps its absolute path, the user's unless
    under an installation (:data:`INSTALLED`) or in a directory of a library's name."""
    for name in reversed(stack):
        m = FRAME.fullmatch(name)
        if m is None:
            continue
        file = m["file"].replace("\\", "/")
        if file.startswith("/"):
            if any(x in file for x in INSTALLED) or \
                    any(p in LIBRARY_PACKAGES for p in file.split("/")[:-1]):
                continue
        else:
            top = file.split("/", 1)[0].removesuffix(".py")
            if top in sys.stdlib_module_names or top in LIBRARY_PACKAGES | SERVING_PACKAGES:
                continue
        return {"file": m["file"], "line": int(m["line"]), "function": m["function"]}
    return None


def user_calls(frames: dict[Any, list[tuple[float, float, str]]]
               ) -> list[tuple[tuple[Any, Any], float, float, str, str, int]]:
    """The calls of the user's functions (not a module's top level) among each thread's
    Python frames: (thread, start, end, function, file, line)."""
    users: dict[str, dict[str, Any] | None] = {}
    out = []
    for thread, calls in frames.items():
        for start, end, name in calls:
            frame = users[name] if name in users else users.setdefault(name, user_frame([name]))
            if frame is not None and frame["function"] != "<module>" and end > start:
                out.append((thread, start, end, frame["function"], frame["file"],
                            frame["line"]))
    return out


# -- events for the second pass, from the file -------------------------------------------------
EVENT_START = b"\n  {\n"
_CATEGORY = re.compile(rb'"cat": "([A-Za-z_]+)"')
_NEEDED = frozenset(c.encode() for c in LINK_CATEGORIES)
_MEMORY = MEMORY_CATEGORY.encode()


def layout_events(fh, first: bytes, chunk: int) -> Iterator[tuple[bool, dict[str, Any] | None]]:
    """The events of a trace in libkineto's layout (each ``\\n  {\\n`` ... ``\\n  }``),
    decoded only when their category is needed; ``first``: the bytes already read."""
    data, pos, eof = first, first.find(b'"traceEvents": ['), False
    if pos < 0:
        return
    while True:
        i = data.find(EVENT_START, pos)
        j = data.find(EVENT_START, i + 1) if i >= 0 else -1
        if j < 0 and not eof:  # the event may go on in the next chunk
            more = fh.read(chunk)
            eof = not more
            keep = i if i >= 0 else max(pos, len(data) - len(EVENT_START))
            data, pos = data[keep:] + more, 0
            continue
        if i < 0:
            return
        if j < 0:  # the list's last event
            j = data.find(b"\n  }", i) + 4
            if j < 4:
                return
        yield from _event(data[i:j].rstrip().rstrip(b","))
        pos = j


def _event(text: bytes) -> Iterator[tuple[bool, dict[str, Any] | None]]:
    m = _CATEGORY.search(text, 0, 400)
    cat = m[1] if m else b""
    if cat in (b"kernel", b"Kernel"):
        yield True, None
    elif cat == _MEMORY:
        yield False, {"cat": MEMORY_CATEGORY}
    elif cat in _NEEDED:
        try:
            event = json.loads(text)
        except ValueError:
            return
        yield False, event if isinstance(event, dict) else None


def generic_events(fh, prefix: str = "traceEvents.item"
                   ) -> Iterator[tuple[bool, dict[str, Any] | None]]:
    """The events of a trace in any layout (ijson, streaming); ``prefix``: ``item`` for a
    bare event list."""
    import ijson

    try:
        for event in ijson.items(fh, prefix, use_float=True):
            if not isinstance(event, dict):
                continue
            cat = event.get("cat")
            if cat in ("kernel", "Kernel"):
                yield True, None
            elif cat in LINK_CATEGORIES or cat == MEMORY_CATEGORY:
                yield False, event
    except ijson.JSONError:
        return
