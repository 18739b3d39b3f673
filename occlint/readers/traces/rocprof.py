"""rocprofv3 kernel traces: CSV (every header variant), JSON and the rocpd SQLite database.

Sources (ROCm/rocprofiler-sdk unless named otherwise):

* CSV, ``<pid>_kernel_trace.csv``. Oldest header (docs ``source/docs/how-to/using-rocprofv3.rst``
  up to ROCm 6.3; ENCCS/LUMI training material): ``Kind, Agent_Id, Queue_Id, [Thread_Id,
  Dispatch_Id,] Kernel_Id, Kernel_Name, Correlation_Id, Start_Timestamp, End_Timestamp,
  Private_Segment_Size, Group_Segment_Size, Workgroup_Size_X/Y/Z, Grid_Size_X/Y/Z``. Newer
  (``source/lib/output/generateCSV.cpp``): ``Kind, Agent_Id, Queue_Id, Stream_Id, Thread_Id,
  Dispatch_Id, Kernel_Id, Kernel_Name, Correlation_Id, Start_Timestamp, End_Timestamp,
  LDS_Block_Size, Scratch_Size, VGPR_Count, Accum_VGPR_Count, SGPR_Count, Workgroup_Size_*,
  Grid_Size_*`` (``Arch_VGPR_Count`` in some releases). ``rocpd convert --output-format csv``
  (``source/lib/python/rocpd/csv.py``, ``write_kernel_csv``, columns title-cased): ``Guid,
  Kind, Agent_Id ("Agent N"), Queue_Id, Stream_Id, Thread_Id, Dispatch_Id, Kernel_Id,
  Kernel_Name, Correlation_Id, Start_Timestamp, End_Timestamp, Lds_Block_Size, Scratch_Size,
  Vgpr_Count, Accum_Vgpr_Count, Sgpr_Count, Workgroup_Size_*, Grid_Size_*``. Column names are
  matched case-insensitively. Timestamps are ns.
* ``Grid_Size_*`` is in **work-items** (HSA dispatch packet semantics; rocprofiler-sdk issue
  #83 and commit e948034 that changed the docs to say so): blocks = ceil(grid / workgroup).
* ``<pid>_agent_info.csv`` beside the kernel trace (``generateCSV.cpp``, ``generate_csv`` for
  ``agent_info``; the rocpd export adds ``Guid`` first): ``Node_Id, Logical_Node_Id,
  Agent_Type, ..., Wave_Front_Size, Cu_Count, Simd_Per_Cu, Max_Waves_Per_Cu, ..., Name
  (gfx942), Vendor_Name, Product_Name (marketing name), Model_Name``.
* JSON (``--output-format json``; ``source/lib/output/generateJSON.cpp`` and the tool's
  ``tool_metadata`` cereal serialisation): ``{"rocprofiler-sdk-tool": [{"metadata": ...,
  "agents": [{"id": {"handle"}, "type" (2 = GPU), "node_id", "logical_node_id",
  "cu_count", "simd_per_cu", "wave_front_size", "name", "product_name", ...}],
  "kernel_symbols": [{"kernel_id", "kernel_name" (mangled, ``.kd``), "formatted_kernel_name",
  "demangled_kernel_name", "arch_vgpr_count", "accum_vgpr_count", "sgpr_count",
  "group_segment_size", "private_segment_size", ...}], "buffer_records": {"kernel_dispatch":
  [{"start_timestamp", "end_timestamp", "stream_id": {"handle"}, "dispatch_info":
  {"agent_id": {"handle"}, "queue_id": {"handle"}, "kernel_id", "dispatch_id",
  "private_segment_size", "group_segment_size", "workgroup_size": {x,y,z}, "grid_size":
  {x,y,z}}}]}}]}``. Streamed with ijson (C backend) by prefix; agents and symbols are
  small, dispatches are never held.
* rocpd SQLite (ROCm 7+; ``source/share/rocprofiler-sdk-rocpd/rocpd_tables.sql``,
  ``rocpd_views.sql``, ``data_views.sql``): tables ``rocpd_*{uuid}`` behind views without the
  suffix. ``rocpd_kernel_dispatch`` holds ``agent_id, kernel_id, queue_id, stream_id, start,
  end, private_segment_size, group_segment_size, workgroup_size_*, grid_size_*`` (work-items)
  directly in one schema revision, and ``track_id, start_id, end_id`` (into ``rocpd_track``
  and ``rocpd_timestamp``) in another; both are read (columns are looked up first).
  ``rocpd_info_kernel_symbol`` has the names and ``arch_vgpr_count, accum_vgpr_count,
  sgpr_count``; ``rocpd_info_agent`` has ``type, absolute_index, logical_index, name,
  product_name`` and the rest in JSON ``extdata`` (``cu_count``, ``wave_front_size``, ...).

``Agent_Id`` is written by the tool's ``agent_index::as_string`` (``source/lib/output/
metadata.hpp``): a bare node id in ROCm 6.x releases, ``"Agent N"`` (``--agent-index``
absolute or relative, the default) or ``"GPU N"`` (type-relative) in later ones; it is
matched to agent_info's ``Node_Id`` / ``Logical_Node_Id`` / GPU order, and the device key is
the id exactly as the kernel rows write it.

rocpd's ``kernels`` view (``data_views.sql``) has ``grid_x`` (work-items) and ``grid_size_x``
= ``grid_x / workgroup_x`` in SQLite *integer* division (floor: 100 work-items in groups of
128 read 0); this reader uses the dispatch table's work-items and rounds up itself.

Every reader decides each distinct record once (:class:`Emitter`): repeated launches of one
kernel shape cost a dictionary lookup and two timestamps.

Measured caveat: in ``generateCSV.cpp`` the newer ``LDS_Block_Size`` is the kernel *symbol's*
group segment size rounded up to the LDS allocation granule (no dynamic LDS), while JSON,
rocpd and the old ``Group_Segment_Size`` column carry the dispatch's group segment size.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import operator
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from occlint.model.kernel import InputError
from occlint.model.launch import (
    AmdLaunchResources,
    Dim3,
    LaunchCollector,
    LaunchKey,
    TraceDevice,
)
from occlint.readers.traces import (
    GZIP_MAGIC,
    RecordCheck,
    TraceError,
    TraceRead,
    launch_problem,
    unpacked,
)
from occlint.readers.traces.sqlite import read_sqlite, table_names

MAX_NAME = 4096  # longer kernel names are cut (a real one is rarely over 1,000 characters)
MAX_AGENT_INFO = 1 << 20  # bytes of agent_info.csv read at most
MAX_AGENTS = 1024
MAX_SYMBOLS = 1 << 18  # kernel symbols kept (a ROCm PyTorch process registers tens of thousands)
GFX_RE = re.compile(r"gfx[0-9a-f]{3,5}")

# Canonical column -> accepted spellings (lower case): rocprofv3's, then rocprof's (v1, ROCm 6
# and before: results.csv, "Index","KernelName","gpu-id",...,"grd","wgr","lds","scr",
# "arch_vgpr","accum_vgpr","sgpr",...,"BeginNs","EndNs")
COLUMNS: dict[str, tuple[str, ...]] = {
    "kind": ("kind",),
    "agent": ("agent_id", "gpu-id"),
    "queue": ("queue_id", "queue-id"),
    "stream": ("stream_id",),
    "name": ("kernel_name", "kernelname"),
    "start": ("start_timestamp", "beginns"),
    "end": ("end_timestamp", "endns"),
    "lds": ("lds_block_size", "group_segment_size", "lds"),
    "scratch": ("scratch_size", "private_segment_size", "scr"),
    "vgpr": ("vgpr_count", "arch_vgpr_count", "arch_vgpr", "vgpr"),
    "agpr": ("accum_vgpr_count", "accum_vgpr"),
    "sgpr": ("sgpr_count", "sgpr"),
    "wg_x": ("workgroup_size_x",),
    "wg_y": ("workgroup_size_y",),
    "wg_z": ("workgroup_size_z",),
    "grid_x": ("grid_size_x",),
    "grid_y": ("grid_size_y",),
    "grid_z": ("grid_size_z",),
    # a counter-collection CSV (rocprofv3 --pmc) and rocprof's give the sizes as totals
    "wg_total": ("workgroup_size", "wgr"),
    "grid_total": ("grid_size", "grd"),
}
REQUIRED = ("agent", "name", "start", "end")
XYZ = ("wg_x", "wg_y", "wg_z", "grid_x", "grid_y", "grid_z")
TOTALS = ("wg_total", "grid_total")
DISPLAY = {"agent": "Agent_Id", "name": "Kernel_Name", "start": "Start_Timestamp",
           "end": "End_Timestamp", "wg_x": "Workgroup_Size_X", "wg_y": "Workgroup_Size_Y",
           "wg_z": "Workgroup_Size_Z", "grid_x": "Grid_Size_X", "grid_y": "Grid_Size_Y",
           "grid_z": "Grid_Size_Z"}


# ---------------------------------------------------------------- shared helpers

def kernel_name(raw: Any) -> str:
    """A kernel name as the trace writes it, without the descriptor's ``.kd`` suffix."""
    name = raw if isinstance(raw, str) else ("" if raw is None else str(raw))
    if name.endswith(".kd"):
        name = name[:-3]
    if len(name) > MAX_NAME:
        name = name[:MAX_NAME] + "..."
    return name


def blocks(grid: Dim3, block: Dim3) -> Dim3:
    """Work-items per dimension -> work-groups (ceil); 0 where the block is not positive."""
    return (-(-grid[0] // block[0]) if block[0] > 0 else 0,
            -(-grid[1] // block[1]) if block[1] > 0 else 0,
            -(-grid[2] // block[2]) if block[2] > 0 else 0)


def reject(check: RecordCheck, where: str, problem: str) -> None:
    """Count a record that cannot be parsed the way RecordCheck counts inconsistent ones."""
    check.reject(where, problem)


MAX_CACHE = 1 << 16


class Emitter:
    """Adds launches to a collector, remembering what each distinct raw record decided.

    Launches of one kernel shape repeat by the thousand: the fields that decide a launch's
    group (device, kernel, grid, block, resources, stream) are looked up by their raw values,
    so that parsing, validation and key building happen once per distinct record, and only
    the timestamps are read per launch. The cache holds either a launch target or the
    problem that made RecordCheck reject the record (counted again at every occurrence).
    It is bounded (cleared when full)."""

    def __init__(self, collector: LaunchCollector, check: RecordCheck) -> None:
        self.collector = collector
        self.check = check
        # LaunchCollector.handle/add_to (the collector's own fast path) when it has them
        self.fast = callable(getattr(collector, "handle", None)) and callable(
            getattr(collector, "add_to", None))
        self.cache: dict[Any, Any] = {}

    def remember(self, raw: Any, value: Any) -> Any:
        if len(self.cache) >= MAX_CACHE:
            self.cache.clear()
        with contextlib.suppress(TypeError):  # unhashable raw values (odd JSON): not cached
            self.cache[raw] = value
        return value

    def lookup(self, raw: Any) -> Any:
        try:
            return self.cache.get(raw)
        except TypeError:
            return None

    def target(self, key: LaunchKey, stream: str) -> Any:
        if self.fast:
            return self.collector.handle(key, stream)  # type: ignore[attr-defined]
        return (key, stream)

    def emit(self, target: Any, start: Any, end: Any, where: str) -> None:
        """One launch of ``target`` (or the rejection it stands for) from start to end."""
        if isinstance(target, str):
            reject(self.check, where, target)
            return
        if type(start) is not int or type(end) is not int:
            try:
                start, end = _as_int(start), _as_int(end)
            except (ValueError, TypeError) as exc:
                reject(self.check, where, f"timestamp {exc}")
                return
            if start is None or end is None:
                reject(self.check, where, "no start or end timestamp")
                return
        if end < start:
            reject(self.check, where, f"ends ({end}) before it starts ({start})")
            return
        if self.fast:
            self.collector.add_to(target, float(start), float(end - start))  # type: ignore
        else:
            self.collector.add(target[0], float(start), float(end - start), target[1])

    def valid_times(self, start: Any, end: Any, where: str) -> bool:
        """Check the timestamps before a new target is made (no empty groups)."""
        try:
            s, e = _as_int(start), _as_int(end)
        except (ValueError, TypeError) as exc:
            reject(self.check, where, f"timestamp {exc}")
            return False
        if s is None or e is None:
            reject(self.check, where, "no start or end timestamp")
            return False
        if e < s:
            reject(self.check, where, f"ends ({e}) before it starts ({s})")
            return False
        return True


def _as_int(value: Any) -> int | None:
    """An integer from a JSON/SQL value (None when absent); ValueError when not one."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError(f"not an integer: {value!r:.40}")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")) or value != int(value):
            raise ValueError(f"not an integer: {value!r:.40}")
        return int(value)
    try:
        return int(str(value).strip())
    except ValueError:
        text = str(value).strip()
        try:  # ijson yields Decimal for 1.0; CSV writers sometimes write 1024.0
            number = float(text)
        except ValueError:
            raise ValueError(f"not an integer: {text!r:.40}") from None
        if number != number or number in (float("inf"), float("-inf")) \
                or number != int(number):
            raise ValueError(f"not an integer: {text!r:.40}") from None
        return int(number)


def _num(value: str) -> Any:
    """agent_info values: integers where they are integers, text otherwise."""
    try:
        return int(value)
    except ValueError:
        return value


def _gfx(name: Any) -> str | None:
    match = GFX_RE.match(name) if isinstance(name, str) else None
    return match.group(0) if match else None


def _open_text(path: Path) -> IO[str]:
    raw = unpacked(open(path, "rb"))  # noqa: SIM115 - wrapped and returned
    return io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline="")  # type: ignore[arg-type]


def _open_binary(path: Path) -> IO[bytes]:
    return unpacked(open(path, "rb"))


# ---------------------------------------------------------------- agent info (CSV)

class AgentTable:
    """GPU agents of one trace, found by the agent id its kernel rows carry."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows
        self.by_node: dict[int, dict[str, Any]] = {}
        self.by_logical: dict[int, dict[str, Any]] = {}
        self.by_type_index: dict[int, dict[str, Any]] = {}
        for index, row in enumerate(rows):
            low = {k.lower(): v for k, v in row.items()}
            if isinstance(low.get("node_id"), int):
                self.by_node.setdefault(low["node_id"], row)
            if isinstance(low.get("logical_node_id"), int):
                self.by_logical.setdefault(low["logical_node_id"], row)
            self.by_type_index.setdefault(index, row)

    def find(self, agent: str) -> dict[str, Any] | None:
        text = agent.strip()
        match = re.fullmatch(r"(agent|gpu)\s*(\d+)|(\d+)", text, re.IGNORECASE)
        if not match:
            return None
        if match.group(3) is not None:  # a bare number: older rocprofv3 wrote the node id
            n = int(match.group(3))
            return self.by_node.get(n) or self.by_logical.get(n)
        n = int(match.group(2))
        if match.group(1).lower() == "gpu":  # --agent-index type: "GPU N"
            return self.by_type_index.get(n)
        return self.by_logical.get(n) or self.by_node.get(n)  # "Agent N": logical (default)


def device_from_agent(key: str, row: dict[str, Any] | None) -> TraceDevice:
    """A TraceDevice from an agent_info row (keys in any case), or a bare one."""
    if row is None:
        return TraceDevice(key=key, vendor="amd")
    low = {k.lower(): v for k, v in row.items()}
    product = low.get("product_name") or low.get("marketing_name")
    cus = low.get("cu_count")
    wave = low.get("wave_front_size")
    return TraceDevice(
        key=key, vendor="amd",
        name=product if isinstance(product, str) and product else None,
        arch=_gfx(low.get("name")) or _gfx(low.get("model_name")),
        compute_units=cus if isinstance(cus, int) and 0 < cus < 1 << 20 else None,
        wave_size=wave if wave in (32, 64) else None,
        properties=dict(row))


def find_agent_info(path: Path) -> Path | None:
    """The ``agent_info.csv`` beside a kernel trace: same prefix, or the only one there."""
    name = path.name
    lowered = name.lower()
    for suffix in ("kernel_trace.csv.gz", "kernel_trace.csv"):
        if lowered.endswith(suffix):
            prefix = name[: len(name) - len(suffix)]
            for candidate in (f"{prefix}agent_info.csv", f"{prefix}agent_info.csv.gz"):
                if (path.parent / candidate).is_file():
                    return path.parent / candidate
    try:
        found = [p for p in path.parent.iterdir()
                 if p.name.lower().endswith(("agent_info.csv", "agent_info.csv.gz"))
                 and p.is_file()]
    except OSError:
        return None
    return found[0] if len(found) == 1 else None


def read_agent_info(path: Path) -> list[dict[str, Any]]:
    """GPU rows of an agent_info.csv (bounded; CPU agents dropped). Raises OSError/ValueError."""
    with _open_text(path) as fh:
        text = fh.read(MAX_AGENT_INFO)
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if not header:
        raise ValueError("empty")
    header = [h.strip() for h in header]
    rows = []
    for raw in reader:
        if len(raw) != len(header):
            continue
        row = {k: _num(v) for k, v in zip(header, raw, strict=True)}
        kind = next((v for k, v in row.items() if k.lower() == "agent_type"), "GPU")
        if str(kind).upper() not in ("GPU", "2"):
            continue
        rows.append(row)
        if len(rows) >= MAX_AGENTS:
            break
    return rows


GFX950_NOTE = (
    "gfx950: rocprofiler-sdk releases whose descriptor decoding predates gfx950 "
    "(code_object.cpp arch_vgpr_count) write VGPR_Count = (granulated VGPRs + 1) x 4 against "
    "gfx950's 8-register granule, half the allocation, and Accum_VGPR_Count 0: occupancy is "
    "not computed from these counts (read the code objects in the same run for it)")


def register_counts(collector: LaunchCollector, arch: str | None, vgpr: int | None,
                    agpr: int | None) -> tuple[int | None, int | None]:
    """The VGPR / AGPR counts of a rocprofiler-sdk record as occlint can use them: on gfx950
    without AGPRs they are the older decoder's half allocation, so unknown (noted once)."""
    if arch is not None and arch.startswith("gfx95") and not agpr and vgpr is not None:
        if GFX950_NOTE not in collector.notes:
            collector.notes.append(GFX950_NOTE)
        return None, None
    return vgpr, agpr


def used_agent_info(kernel_traces: list[Path]) -> set[Path]:
    """The agent_info.csv files the kernel traces of a run read (they are no inputs)."""
    used = set()
    for path in kernel_traces:
        info = find_agent_info(path)
        if info is not None:
            used.add(info.resolve())
    return used


# ---------------------------------------------------------------- CSV

def _lines(fh: IO[str], last: list[str]) -> Iterator[str]:
    for line in fh:
        last[0] = line
        yield line


def read_rocprof_csv(path: Path, display: str, fmt: str = "rocprofv3-csv") -> TraceRead:
    """Read a rocprofv3 (or rocpd-exported) kernel trace CSV, or rocprof's (``fmt``
    "rocprof-csv")."""
    collector = LaunchCollector(display, fmt)
    read = TraceRead(collector)
    check = RecordCheck(display)
    try:
        fh = _open_text(path)
    except OSError as exc:
        raise TraceError(f"cannot read: {exc.strerror or exc}") from None
    with fh:
        last = [""]
        whole = _ends_with_newline(path)  # rows can be handled as they come
        reader = csv.reader(fh if whole else _lines(fh, last))
        try:
            header = next(reader, None)
        except (csv.Error, OSError, EOFError) as exc:
            raise TraceError(f"not a readable CSV: {exc}") from None
        if not header:
            raise TraceError("empty CSV (no header)")
        names = [h.strip().lstrip("\ufeff").lower() for h in header]
        index: dict[str, int] = {}
        for canonical, spellings in COLUMNS.items():
            for spelling in spellings:
                if spelling in names:
                    index[canonical] = names.index(spelling)
                    break
        totals = all(c in index for c in TOTALS) and not any(c in index for c in XYZ)
        missing = [DISPLAY[c] for c in (*REQUIRED, *(() if totals else XYZ)) if c not in index]
        if missing:
            raise TraceError(f"not a rocprofv3 kernel trace: missing column"
                             f"{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
        if "counter_name" in names and "dispatch_id" in names:
            reader = _OncePerDispatch(reader, names.index("dispatch_id"))
            collector.notes.append("a counter-collection CSV (rocprofv3 --pmc): one row read "
                                   "per dispatch (it writes one per counter)")
        if totals:
            collector.notes.append("its grid and work-group sizes are totals (no X/Y/Z): "
                                   "each launch analysed as one dimension")
        agents = _csv_agents(path, read)
        width = len(header)
        known: set[str] = set()
        pending: tuple[int, list[str]] | None = None
        emitter = Emitter(collector, check)
        # every column but the per-launch ones (timestamps, ids) decides the launch group
        decisive = [index[c] for c in COLUMNS if c in index and c not in ("start", "end")]
        raw_of = operator.itemgetter(*decisive)
        start_col, end_col = index["start"], index["end"]
        cache = emitter.cache

        def handle(line: int, row: list[str]) -> None:
            if len(row) != width:
                reject(check, f"line {line}", f"{len(row)} fields where the header has "
                                              f"{width}")
                return
            raw = raw_of(row)
            target = cache.get(raw)
            if target is None:
                where = f"line {line}"
                if not emitter.valid_times(row[start_col], row[end_col], where):
                    return
                target = emitter.remember(raw, _csv_target(row, index, emitter, agents,
                                                           known))
                if target is SKIP:
                    return
            elif target is SKIP:
                return
            emitter.emit(target, row[start_col], row[end_col], f"line {line}")

        if whole:
            try:
                _fast_rows(reader, width, raw_of, cache, (start_col, end_col), emitter, handle)
            except (csv.Error, OSError, EOFError) as exc:
                read.errors.append(InputError(display, f"stops at line "
                                                       f"{reader.line_num + 1}: {exc}"))
        while not whole:
            start_line = reader.line_num + 1
            try:
                row = next(reader)
            except StopIteration:
                break
            except (csv.Error, OSError, EOFError) as exc:
                if pending is not None:
                    handle(*pending)
                    pending = None
                read.errors.append(InputError(display, f"stops at line {start_line}: {exc}"))
                break
            if pending is not None:
                handle(*pending)
            pending = (start_line, row) if row else None
        if pending is not None:
            if last[0].endswith(("\n", "\r")):
                handle(*pending)
            else:  # rocprofv3 ends every record with a newline: this one was cut short
                read.errors.append(InputError(
                    display, f"ends inside a record at line {pending[0]}"))
    read.errors[:0] = check.errors()
    return read


class _OncePerDispatch:
    """The rows of a counter-collection CSV, the first of each dispatch (rocprofv3 writes a
    row per counter of a dispatch, its launch facts repeated); a csv reader otherwise."""

    def __init__(self, reader: Any, column: int) -> None:
        self.reader, self.column = reader, column
        self.seen: set[str] = set()

    @property
    def line_num(self) -> int:
        return self.reader.line_num

    def __iter__(self) -> _OncePerDispatch:
        return self

    def __next__(self) -> list[str]:
        while True:
            row = next(self.reader)
            if len(row) <= self.column:
                return row  # rejected by the row check
            dispatch = row[self.column]
            if dispatch not in self.seen:
                self.seen.add(dispatch)
                return row


def _ends_with_newline(path: Path) -> bool:
    """A plain (not gzip'd) file whose last byte ends a line: no record is cut short, so rows
    are handled as they are read (else each waits for the next to show it is complete)."""
    try:
        with open(path, "rb") as fh:
            if fh.read(2) == GZIP_MAGIC:
                return False
            fh.seek(0, io.SEEK_END)
            if fh.tell() == 0:
                return False
            fh.seek(-1, io.SEEK_END)
            return fh.read(1) in (b"\n", b"\r")
    except OSError:
        return False


def _fast_rows(reader: Iterator[list[str]], width: int, raw_of: Any, cache: dict[Any, Any],
               times: tuple[int, int], emitter: Emitter, handle: Any) -> None:
    """The rows of a CSV: a row whose group is known (cached handle) and whose times are
    plain integers is added here; any other goes through ``handle`` (validation, errors)."""
    start_col, end_col = times
    add_to = emitter.collector.add_to if emitter.fast else None
    for row in reader:
        if add_to is not None and len(row) == width:
            target = cache.get(raw_of(row))
            if type(target) is tuple:
                start, end = row[start_col], row[end_col]
                if start.isdigit() and end.isdigit():
                    begin, finish = int(start), int(end)
                    if finish >= begin:
                        add_to(target, float(begin), float(finish - begin))
                        continue
        if row:
            handle(reader.line_num, row)  # type: ignore[attr-defined]


def _csv_agents(path: Path, read: TraceRead) -> AgentTable | None:
    info = find_agent_info(path)
    if info is None:
        return None
    try:
        return AgentTable(read_agent_info(info))
    except (OSError, ValueError, csv.Error, EOFError) as exc:
        read.collector.notes.append(f"{info.name} not read: {exc}")
        return None


SKIP = object()  # a record of another kind (not a kernel dispatch): ignored, not an error


def _csv_target(row: list[str], index: dict[str, int], emitter: Emitter,
                agents: AgentTable | None, known: set[str]) -> Any:
    """The launch target of a CSV row, SKIP, or the problem that makes it inconsistent."""
    kind = index.get("kind")
    if kind is not None and row[kind].strip() not in ("KERNEL_DISPATCH", ""):
        return SKIP
    try:
        if "wg_x" in index:
            block = (int(row[index["wg_x"]]), int(row[index["wg_y"]]), int(row[index["wg_z"]]))
            items = (int(row[index["grid_x"]]), int(row[index["grid_y"]]),
                     int(row[index["grid_z"]]))
        else:  # totals: the launch as one dimension
            block, items = (int(row[index["wg_total"]]), 1, 1), \
                (int(row[index["grid_total"]]), 1, 1)
        sizes = {name: _as_int(row[index[name]]) if name in index else None
                 for name in ("vgpr", "agpr", "sgpr", "lds", "scratch")}
    except ValueError as exc:
        message = str(exc)
        return "a field is not an integer" if message.startswith("invalid literal") \
            else message
    grid = blocks(items, block)
    problem = launch_problem(grid, block, {
        "vgprs": sizes["vgpr"], "agprs": sizes["agpr"], "sgprs": sizes["sgpr"],
        "lds_bytes": sizes["lds"], "scratch_bytes": sizes["scratch"]}, "amd")
    if problem is not None:
        return problem
    agent = row[index["agent"]].strip()[:40]
    if agent not in known:
        known.add(agent)
        emitter.collector.device(device_from_agent(agent, agents.find(agent) if agents
                                                   else None))
    sizes["vgpr"], sizes["agpr"] = register_counts(
        emitter.collector, emitter.collector.devices[agent].arch, sizes["vgpr"], sizes["agpr"])
    stream = row[index["stream"]].strip() if "stream" in index else ""
    if stream in ("", "0") and "queue" in index:  # no HIP stream traced: the HSA queue
        stream = row[index["queue"]].strip()
    stream = stream[:40] or "0"
    key = LaunchKey(device=agent, kernel=kernel_name(row[index["name"]]), mangled=None,
                    grid=grid, block=block,
                    resources=AmdLaunchResources(vgpr=sizes["vgpr"], agpr=sizes["agpr"],
                                                 sgpr=sizes["sgpr"], lds_bytes=sizes["lds"],
                                                 scratch_bytes=sizes["scratch"]))
    return emitter.target(key, stream)


# ---------------------------------------------------------------- JSON

ROOT = "rocprofiler-sdk-tool.item"
AGENT_PREFIX = f"{ROOT}.agents.item"
SYMBOL_PREFIX = f"{ROOT}.kernel_symbols.item"
DISPATCH_PREFIX = f"{ROOT}.buffer_records.kernel_dispatch.item"


def _handle(value: Any) -> Any:
    """``{"handle": N}`` -> N (older writers put the bare number)."""
    if isinstance(value, dict):
        return value.get("handle")
    return value


def _xyz(value: Any, what: str) -> Dim3:
    if isinstance(value, dict):
        out = []
        for axis in "xyz":
            n = _as_int(value.get(axis, 1))
            out.append(1 if n is None else n)
        return out[0], out[1], out[2]
    if isinstance(value, list) and 1 <= len(value) <= 3:
        out = [_as_int(v) or 0 for v in value] + [1] * (3 - len(value))
        return out[0], out[1], out[2]
    if value is None:
        raise ValueError(f"no {what}")
    raise ValueError(f"{what} is not {{x, y, z}}")


def _json_agent_key(agent: dict[str, Any] | None, handle: Any) -> str:
    if agent is not None:
        for field in ("logical_node_id", "node_id"):
            value = agent.get(field)
            if isinstance(value, int) and not isinstance(value, bool):
                return f"Agent {value}"
    return f"Agent handle {str(handle)[:40]}"


def _plain(value: Any) -> Any:
    """ijson's Decimal -> int (or float); other scalars as they are."""
    if hasattr(value, "as_integer_ratio") and not isinstance(value, (bool, int, float)):
        try:
            if not value.is_finite() or abs(value.adjusted()) > 30:
                return None  # 1e3094281001 would make a billion-digit integer
            return int(value) if value == value.to_integral_value() else float(value)
        except (ValueError, ArithmeticError):
            return None
    return value


def _json_device(key: str, agent: dict[str, Any] | None) -> TraceDevice:
    if agent is None:
        return TraceDevice(key=key, vendor="amd")
    props = {k: _plain(v) for k, v in agent.items() if not isinstance(v, (dict, list))}
    return device_from_agent(key, props)


class JsonState:
    """Agents and kernel symbols of a rocprofv3 JSON document, and the devices seen."""

    def __init__(self) -> None:
        self.agents: dict[Any, dict[str, Any]] = {}
        self.symbols: dict[Any, dict[str, Any]] = {}
        self.devices: dict[Any, str] = {}


def _first_line(exc: BaseException) -> str:
    """yajl's messages carry a multi-line excerpt of the input: keep the first line."""
    return (str(exc).strip().splitlines() or [""])[0][:120]


def _json_items(path: Path, prefix: str) -> Iterator[Any]:
    """ijson.items over ``path`` (gzip'd or not), C backend; raises ijson/OS errors late."""
    import ijson

    with _open_binary(path) as fh:
        yield from ijson.items(fh, prefix, use_float=False)


def read_rocprof_json(path: Path, display: str) -> TraceRead:
    """Read a rocprofv3 ``--output-format json`` document, streaming its dispatches.

    rocprofv3 writes ``agents`` and ``kernel_symbols`` (small) before ``buffer_records``:
    they are read from the head of the document, event by event, up to the point where both
    are complete; then the dispatches are read in one pass of ijson's C backend
    (``ijson.items``). Any other key order is read too, with extra C passes.
    """
    import ijson

    collector = LaunchCollector(display, "rocprofv3-json")
    read = TraceRead(collector)
    check = RecordCheck(display)
    state = JsonState()
    try:
        with _open_binary(path) as fh:
            head = fh.read(1 << 16)
    except (OSError, EOFError) as exc:
        raise TraceError(f"cannot read: {exc}") from None
    if b'"rocprofiler-sdk-tool"' not in head:
        raise TraceError('not a rocprofv3 JSON document (no "rocprofiler-sdk-tool" array)')
    if not _json_metadata_head(path, state):
        # agents or kernel symbols after buffer_records (not what rocprofv3 writes):
        # whole-document passes in C for each
        _json_agents(_json_items(path, AGENT_PREFIX), state)
        _json_symbols(_json_items(path, SYMBOL_PREFIX), state)
    emitter = Emitter(collector, check)
    done = _compact_dispatches(path, state, emitter)
    count = 0
    try:
        for item in _json_items(path, DISPATCH_PREFIX) if done is not None else ():
            count += 1
            if count > done:  # type: ignore[operator]  # past those matched in compact form
                _json_dispatch(state, item, count, emitter)
    except ijson.IncompleteJSONError as exc:
        read.errors.append(InputError(display, f"ends early (after {count} kernel dispatch "
                                               f"records): {_first_line(exc)}"))
    except ijson.JSONError as exc:
        read.errors.append(InputError(display, f"invalid JSON after {count} kernel dispatch "
                                               f"records: {_first_line(exc)}"))
    except (OSError, EOFError) as exc:
        read.errors.append(InputError(display, f"cannot be read past {count} kernel "
                                               f"dispatch records: {exc}"))
    read.errors[:0] = check.errors()
    return read


# One kernel_dispatch record as rocprofv3 writes it (cereal, compact, keys in this order):
# start, end, then the fields that decide its launch group in two runs (agent, queue, kernel;
# segment sizes, work-group, grid, stream: all but the dispatch id), and what follows it.
COMPACT_DISPATCH = re.compile(
    rb'\{"size":\d+,"kind":\d+,"operation":\d+,"thread_id":\d+,"correlation_id":'
    rb'\{"internal":\d+,"external":\d+\},"start_timestamp":(\d+),"end_timestamp":(\d+),'
    rb'"dispatch_info":\{"size":\d+,("agent_id":\{"handle":\d+\},"queue_id":\{"handle":\d+\},'
    rb'"kernel_id":\d+),"dispatch_id":\d+,("private_segment_size":\d+,'
    rb'"group_segment_size":\d+,"workgroup_size":\{"x":\d+,"y":\d+,"z":\d+\},'
    rb'"grid_size":\{"x":\d+,"y":\d+,"z":\d+\}\},"stream_id":\{"handle":\d+\})\}([,\]])')
NUMBER = re.compile(rb"\d+")
DISPATCH_ARRAY = b'"kernel_dispatch":['
CHUNK = 8 << 20
MAX_RECORD = 1 << 12  # a compact dispatch record is under 400 bytes


def _compact_dispatches(path: Path, state: JsonState, emitter: Emitter) -> int | None:
    """The dispatch records of rocprofv3's compact layout, matched by one regular expression
    each (several times faster than a JSON parser); known launch shapes are counted from
    their raw bytes. Returns None when the whole array was read, else how many records were
    added before a record of another layout (or the end of the data): the JSON parser reads
    the rest, from that record on."""
    added = 0
    with _open_binary(path) as fh:
        buf, at = b"", -1
        while at < 0:  # the array's start
            more = fh.read(CHUNK)
            if not more:
                return 0
            buf = buf[-len(DISPATCH_ARRAY):] + more
            at = buf.find(DISPATCH_ARRAY)
        pos, eof = at + len(DISPATCH_ARRAY), False
        cache: dict[tuple[bytes, bytes], Any] = {}
        add_to = emitter.collector.add_to
        while True:
            for m in COMPACT_DISPATCH.finditer(buf, pos):
                if m.start() != pos:
                    break
                start, end, head, tail, after = m.groups()
                target = cache.get((head, tail))
                begin, finish = float(start), float(end)  # exact below 2**53 ns (104 days)
                if type(target) is tuple and finish >= begin and finish < 2**53:
                    add_to(target, begin, finish - begin)
                else:
                    number = added + 1
                    target = _compact_target((head, tail), int(start), int(end), state,
                                             emitter, number, cache)
                    if target is not None:
                        emitter.emit(target, int(start), int(end),
                                     f"kernel_dispatch record {number}")
                added += 1
                pos = m.end()
                if after == b"]":  # another process's array after it: the parser reads it
                    return added if _another_array(fh, buf[pos:]) else None
            if eof or len(buf) - pos >= MAX_RECORD:
                return added  # another layout (or cut short): the parser takes over
            more = fh.read(CHUNK)
            eof = not more
            buf, pos = buf[pos:] + more, 0


def _another_array(fh: IO[bytes], rest: bytes) -> bool:
    """Whether a further kernel_dispatch array follows (a document of several tool items)."""
    tail = b""
    while True:
        if DISPATCH_ARRAY in tail + rest:
            return True
        tail = (tail + rest)[-len(DISPATCH_ARRAY):]
        rest = fh.read(CHUNK)
        if not rest:
            return False


def _compact_target(key: tuple[bytes, bytes], start: int, end: int, state: JsonState,
                    emitter: Emitter, number: int, cache: dict[tuple[bytes, bytes], Any]
                    ) -> Any:
    """The launch target of a matched record, through the JSON path's own decisions; None
    when its times are rejected."""
    agent, queue, kernel = (int(x) for x in NUMBER.findall(key[0]))
    private, group, wx, wy, wz, gx, gy, gz, stream = (int(x) for x in NUMBER.findall(key[1]))
    info = {"agent_id": {"handle": agent}, "queue_id": {"handle": queue}, "kernel_id": kernel,
            "private_segment_size": private, "group_segment_size": group,
            "workgroup_size": {"x": wx, "y": wy, "z": wz},
            "grid_size": {"x": gx, "y": gy, "z": gz}}
    item = {"start_timestamp": start, "end_timestamp": end, "dispatch_info": info,
            "stream_id": {"handle": stream}}
    raw = _json_raw(item, info)
    target = emitter.lookup(raw)
    if target is None:
        if not emitter.valid_times(start, end, f"kernel_dispatch record {number}"):
            return None
        target = emitter.remember(raw, _json_target(state, item, info, emitter))
    if len(cache) < MAX_CACHE:
        cache[key] = target
    return target


def _json_agents(items: Iterator[Any], state: JsonState) -> None:
    import ijson

    try:
        for item in items:
            handle = _plain(_handle(item.get("id"))) if isinstance(item, dict) else None
            if handle is not None and not isinstance(handle, (dict, list)) \
                    and len(state.agents) < MAX_AGENTS:
                state.agents[handle] = item
    except (ijson.JSONError, OSError, EOFError):
        pass  # cut short: the agents read so far stand, the dispatch pass says where


def _json_symbols(items: Iterator[Any], state: JsonState) -> None:
    import ijson

    try:
        for item in items:
            if isinstance(item, dict):
                _json_symbol(state, item)
    except (ijson.JSONError, OSError, EOFError):
        pass


def _json_metadata_head(path: Path, state: JsonState) -> bool:
    """Agents and kernel symbols from the head of the document; False when buffer_records
    (or the end) came before both arrays were complete."""
    import ijson

    agents_end, symbols_end = f"{ROOT}.agents", f"{ROOT}.kernel_symbols"
    done: set[str] = set()
    building: str | None = None
    builder: Any = None
    try:
        with _open_binary(path) as fh:
            for prefix, event, value in ijson.parse(fh, use_float=False):
                if building is not None:
                    builder.event(event, value)
                    if prefix == building and event == "end_map":
                        if building == AGENT_PREFIX:
                            _json_agents(iter([builder.value]), state)
                        else:
                            _json_symbols(iter([builder.value]), state)
                        building = builder = None
                    continue
                if event == "start_map" and prefix in (AGENT_PREFIX, SYMBOL_PREFIX):
                    building, builder = prefix, ijson.ObjectBuilder()
                    builder.event(event, value)
                elif event == "end_array" and prefix in (agents_end, symbols_end):
                    done.add(prefix)
                    if len(done) == 2:
                        return True
                elif event == "map_key" and value == "buffer_records" and prefix == ROOT:
                    return False
    except (ijson.JSONError, OSError, EOFError):
        pass  # the dispatch pass reports where the document stops
    return len(done) == 2


def _json_symbol(state: JsonState, item: dict[str, Any]) -> None:
    kid = item.get("kernel_id")
    if kid is None or isinstance(kid, (dict, list)):
        return
    formatted = item.get("formatted_kernel_name") or item.get("demangled_kernel_name")
    mangled = item.get("kernel_name")
    name = kernel_name(formatted or mangled or f"kernel {kid}")
    mangled_name = kernel_name(mangled) if isinstance(mangled, str) else None
    if mangled_name is not None and (mangled_name == name or not mangled_name.startswith("_Z")):
        mangled_name = None

    def size(field: str) -> int | None:
        try:
            return _as_int(item.get(field))
        except ValueError:
            return -1  # rejected by RecordCheck at dispatch time

    if len(state.symbols) >= MAX_SYMBOLS:
        return
    state.symbols[_plain(kid)] = {
        "name": name, "mangled": mangled_name, "vgpr": size("arch_vgpr_count"),
        "agpr": size("accum_vgpr_count"), "sgpr": size("sgpr_count"),
        "lds": size("group_segment_size"), "scratch": size("private_segment_size")}


def _json_raw(item: dict[str, Any], info: dict[str, Any]) -> Any:
    """The fields of a dispatch record that decide its launch group (None: odd shape)."""
    wg, grid = info.get("workgroup_size"), info.get("grid_size")
    if not isinstance(wg, dict) or not isinstance(grid, dict):
        return None
    return (info.get("kernel_id"), _handle(info.get("agent_id")), _handle(item.get("stream_id")),
            _handle(info.get("queue_id")), info.get("group_segment_size"),
            info.get("private_segment_size"), wg.get("x"), wg.get("y"), wg.get("z"),
            grid.get("x"), grid.get("y"), grid.get("z"))


def _json_dispatch(state: JsonState, item: Any, number: int, emitter: Emitter) -> None:
    """Validate one kernel_dispatch record and add it to the collector."""
    if not isinstance(item, dict):
        reject(emitter.check, f"kernel_dispatch record {number}", "not an object")
        return
    info = item.get("dispatch_info")
    if not isinstance(info, dict):
        reject(emitter.check, f"kernel_dispatch record {number}", "no dispatch_info")
        return
    start, end = item.get("start_timestamp"), item.get("end_timestamp")
    raw = _json_raw(item, info)
    target = emitter.lookup(raw) if raw is not None else None
    if target is None:
        where = f"kernel_dispatch record {number}"
        if not emitter.valid_times(start, end, where):
            return
        target = _json_target(state, item, info, emitter)
        if raw is not None:
            emitter.remember(raw, target)
    emitter.emit(target, start, end, f"kernel_dispatch record {number}")


def _json_target(state: JsonState, item: dict[str, Any], info: dict[str, Any],
                 emitter: Emitter) -> Any:
    """The launch target of a dispatch record, or the problem that makes it inconsistent."""
    kid = info.get("kernel_id")
    try:
        symbol = state.symbols.get(_plain(kid))
    except TypeError:
        symbol = None
    symbol = symbol or {
        "name": f"kernel {str(kid)[:40]}", "mangled": None, "vgpr": None, "agpr": None,
        "sgpr": None, "lds": None, "scratch": None}
    try:
        block = _xyz(info.get("workgroup_size"), "workgroup_size")
        items = _xyz(info.get("grid_size"), "grid_size")
        lds = _as_int(info.get("group_segment_size"))
        scratch = _as_int(info.get("private_segment_size"))
    except (ValueError, TypeError) as exc:
        return str(exc)
    lds = symbol["lds"] if lds is None else lds
    scratch = symbol["scratch"] if scratch is None else scratch
    grid = blocks(items, block)
    problem = launch_problem(grid, block, {
        "vgprs": symbol["vgpr"], "agprs": symbol["agpr"], "sgprs": symbol["sgpr"],
        "lds_bytes": lds, "scratch_bytes": scratch})
    if problem is not None:
        return problem
    handle = _plain(_handle(info.get("agent_id")))
    try:
        device = state.devices.get(handle)
        agent = state.agents.get(handle)
    except TypeError:
        device, agent, handle = None, None, str(handle)[:40]
    if device is None:
        device = _json_agent_key(agent, handle)
        if len(state.devices) < MAX_AGENTS:
            state.devices[handle] = device
        if device not in emitter.collector.devices:
            emitter.collector.device(_json_device(device, agent))
    described = emitter.collector.devices.get(device)
    vgpr, agpr = register_counts(emitter.collector, described.arch if described else None,
                                 symbol["vgpr"], symbol["agpr"])
    stream = _handle(item.get("stream_id"))
    if stream in (None, 0):
        stream = _handle(info.get("queue_id"))
    key = LaunchKey(device=device, kernel=symbol["name"], mangled=symbol["mangled"],
                    grid=grid, block=block,
                    resources=AmdLaunchResources(vgpr=vgpr, agpr=agpr,
                                                 sgpr=symbol["sgpr"], lds_bytes=lds,
                                                 scratch_bytes=scratch))
    return emitter.target(key, str(_plain(stream))[:40])


# ---------------------------------------------------------------- rocpd SQLite

def _columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {row[1].lower() for row in db.execute(f'PRAGMA table_info("{table}")')}


def _rocpd_agents(db: sqlite3.Connection, names: set[str]) -> dict[Any, TraceDevice]:
    if "rocpd_info_agent" not in names:
        return {}
    columns = _columns(db, "rocpd_info_agent")
    wanted = [c for c in ("id", "guid", "type", "absolute_index", "logical_index", "type_index",
                          "name", "model_name", "vendor_name", "product_name")
              if c in columns]
    extdata = "json(extdata)" if "extdata" in columns else "NULL"
    try:
        rows = db.execute(f"SELECT {', '.join(wanted)}, {extdata} FROM rocpd_info_agent "
                          f"LIMIT {MAX_AGENTS}").fetchall()
    except (sqlite3.Error, UnicodeDecodeError):
        rows = db.execute(f"SELECT {', '.join(wanted)}, "
                          f"{'extdata' if 'extdata' in columns else 'NULL'} "
                          f"FROM rocpd_info_agent LIMIT {MAX_AGENTS}").fetchall()
    devices: dict[Any, TraceDevice] = {}
    for row in rows:
        props: dict[str, Any] = dict(zip(wanted, row[:-1], strict=True))
        if str(props.get("type", "GPU")).upper() != "GPU":
            continue
        try:
            extra = json.loads(row[-1]) if row[-1] else {}
        except (TypeError, ValueError):
            extra = {}
        if isinstance(extra, dict):
            for k, v in extra.items():
                if not isinstance(v, (dict, list)) and k not in props:
                    props[k] = v
        logical = props.get("logical_index")
        key = f"Agent {logical}" if isinstance(logical, int) else f"Agent id {props.get('id')}"
        device = device_from_agent(key, props)
        devices[(props.get("id"), props.get("guid"))] = device
        devices.setdefault((props.get("id"), None), device)
    return devices


def read_rocpd(path: Path, display: str) -> TraceRead:
    """Read the kernel dispatches of a rocpd SQLite database (rocprofv3, ROCm 7+)."""
    return read_sqlite(path, display, "rocpd", _read_rocpd, "kernel dispatches")


def _read_rocpd(db: sqlite3.Connection, read: TraceRead, check: RecordCheck) -> None:
    collector = read.collector
    names = table_names(db)
    if "rocpd_kernel_dispatch" not in names:
        raise TraceError("no rocpd_kernel_dispatch table or view: not a rocpd kernel trace")
    agents = _rocpd_agents(db, names)
    kcols = _columns(db, "rocpd_kernel_dispatch")
    scols = _columns(db, "rocpd_info_kernel_symbol") if "rocpd_info_kernel_symbol" in names \
        else set()

    def sym(column: str) -> str:
        return f"S.{column}" if column in scols else "NULL"

    if {"start", "end", "agent_id"} <= kcols:
        timing = "K.start, K.end"
        joins = ""
        agent = "K.agent_id"
        queue = "K.queue_id" if "queue_id" in kcols else "NULL"
        stream = "K.stream_id" if "stream_id" in kcols else "NULL"
    elif {"start_id", "end_id", "track_id"} <= kcols and {"rocpd_timestamp",
                                                           "rocpd_track"} <= names:
        timing = "DS.value, DE.value"
        joins = ("LEFT JOIN rocpd_timestamp DS ON DS.id = K.start_id AND DS.guid = K.guid "
                 "LEFT JOIN rocpd_timestamp DE ON DE.id = K.end_id AND DE.guid = K.guid "
                 "LEFT JOIN rocpd_track T ON T.id = K.track_id AND T.guid = K.guid ")
        agent, queue, stream = "T.agent_id", "T.queue_id", "T.stream_id"
    else:
        raise TraceError("rocpd_kernel_dispatch has neither start/end nor start_id/end_id "
                         "columns: unknown rocpd schema")
    guid = "K.guid" if "guid" in kcols else "NULL"
    symbol_join = ("LEFT JOIN rocpd_info_kernel_symbol S ON S.id = K.kernel_id"
                   + (" AND S.guid = K.guid" if "guid" in kcols and "guid" in scols else "")
                   if scols else "")
    query = (
        f"SELECT {timing}, {agent}, {guid}, {queue}, {stream}, K.kernel_id, "
        f"K.workgroup_size_x, K.workgroup_size_y, K.workgroup_size_z, "
        f"K.grid_size_x, K.grid_size_y, K.grid_size_z, "
        f"K.group_segment_size, K.private_segment_size, "
        f"{sym('display_name')}, {sym('kernel_name')}, {sym('arch_vgpr_count')}, "
        f"{sym('accum_vgpr_count')}, {sym('sgpr_count')}, {sym('group_segment_size')}, "
        f"{sym('private_segment_size')} "
        f"FROM rocpd_kernel_dispatch K {joins}{symbol_join if scols else ''}")
    cursor = db.execute(query)
    number = 0
    names_cache: dict[tuple[Any, Any], tuple[str, str | None]] = {}
    emitter = Emitter(collector, check)
    cache = emitter.cache
    while True:
        rows = cursor.fetchmany(4096)
        if not rows:
            break
        for row in rows:
            number += 1
            raw = row[2:]  # all but start and end
            target = cache.get(raw)
            if target is None:
                where = f"kernel dispatch {number}"
                if not emitter.valid_times(row[0], row[1], where):
                    continue
                target = emitter.remember(raw, _rocpd_target(row, emitter, agents,
                                                             names_cache))
            emitter.emit(target, row[0], row[1], f"kernel dispatch {number}")


def _rocpd_target(row: tuple[Any, ...], emitter: Emitter, agents: dict[Any, TraceDevice],
                  names_cache: dict[tuple[Any, Any], tuple[str, str | None]]) -> Any:
    """The launch target of a dispatch row, or the problem that makes it inconsistent."""
    (_start, _end, agent_id, guid, queue, stream, kid, wx, wy, wz, gx, gy, gz, lds, scratch,
     display_name, mangled, vgpr, agpr, sgpr, static_lds, static_scratch) = row
    try:
        block = (_as_int(wx) or 0, _as_int(wy) or 0, _as_int(wz) or 0)
        items = (_as_int(gx) or 0, _as_int(gy) or 0, _as_int(gz) or 0)
        lds_i = _as_int(lds)
        scratch_i = _as_int(scratch)
        sizes = (_as_int(vgpr), _as_int(agpr), _as_int(sgpr))
        if lds_i is None:
            lds_i = _as_int(static_lds)
        if scratch_i is None:
            scratch_i = _as_int(static_scratch)
    except (ValueError, TypeError) as exc:
        return str(exc)
    grid = blocks(items, block)
    problem = launch_problem(grid, block, {
        "vgprs": sizes[0], "agprs": sizes[1], "sgprs": sizes[2], "lds_bytes": lds_i,
        "scratch_bytes": scratch_i})
    if problem is not None:
        return problem
    collector = emitter.collector
    device = agents.get((agent_id, guid)) or agents.get((agent_id, None))
    if device is None:
        device = TraceDevice(key=f"Agent id {str(agent_id)[:40]}", vendor="amd")
        agents[(agent_id, None)] = device
    if device.key not in collector.devices:
        collector.device(device)
    vgpr_i, agpr_i = register_counts(collector, device.arch, sizes[0], sizes[1])
    cached = names_cache.get((kid, guid))
    if cached is None:
        name = kernel_name(display_name or mangled or f"kernel {str(kid)[:40]}")
        mangled_name = kernel_name(mangled) if isinstance(mangled, str) else None
        if mangled_name is not None and (mangled_name == name
                                         or not mangled_name.startswith("_Z")):
            mangled_name = None
        if len(names_cache) < MAX_CACHE:
            names_cache[(kid, guid)] = (name, mangled_name)
        cached = (name, mangled_name)
    stream_text = str(stream if stream not in (None, 0) else queue)[:40]
    key = LaunchKey(device=device.key, kernel=cached[0], mangled=cached[1], grid=grid,
                    block=block,
                    resources=AmdLaunchResources(vgpr=vgpr_i, agpr=agpr_i, sgpr=sizes[2],
                                                 lds_bytes=lds_i, scratch_bytes=scratch_i))
    return emitter.target(key, stream_text)

