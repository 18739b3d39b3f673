"""Profiler traces: recognise them by content and read their kernel launches.

Formats (one module each): PyTorch profiler / Kineto chrome traces (``kineto``, JSON, gzip'd
or not), rocprofv3 kernel traces (``rocprof``: CSV in every header variant, JSON, the rocpd
SQLite database) and Nsight Systems SQLite exports (``nsys``). Each reader streams its
input into a :class:`~occlint.model.launch.LaunchCollector` and raises :class:`TraceError`
(a FormatError) for what it cannot read; a trace cut short keeps the launches read so far
(``TraceRead.errors`` says where it stopped).

Bad launch records (a block of 0 threads, a grid over the hardware's limits, absurd sizes)
are skipped and counted: :class:`RecordCheck` turns them into one error line per trace.
"""

from __future__ import annotations

import os
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from occlint.errors import FormatError
from occlint.model.kernel import InputError
from occlint.readers.formats import BINARY_MAGICS, GZIP_MAGIC

if TYPE_CHECKING:  # the launch model: imported by the readers, not to sniff a file
    from occlint.model.launch import Dim3, LaunchCollector

SQLITE_MAGIC = b"SQLite format 3\x00"

# The largest values any vendor's hardware accepts (CUDA: grid x < 2^31, y/z < 2^16;
# HSA: grid in work-items < 2^32 per dimension; blocks of at most 1,024 threads on both).
MAX_BLOCK_THREADS = 1024
MAX_GRID = (2**31 - 1, 65535, 65535)
MAX_GRID_AMD = (2**32 - 1,) * 3  # HSA: work-items per dimension, so blocks too
MAX_RESOURCE = 1 << 31  # registers, bytes: anything larger is not a real launch


class TraceError(FormatError):
    """A trace cannot be read (or could be read only up to a point). ``head``: the document's
    keys read before the point where it failed (a cut trace keeps its device description)."""

    def __init__(self, message: str, head: dict | None = None) -> None:
        super().__init__(message)
        self.head = head or {}


@dataclass
class TraceRead:
    """What reading one trace gave."""

    collector: LaunchCollector
    errors: list[InputError] = field(default_factory=list)


class RecordCheck:
    """Validates launch records and counts the bad ones, reporting the first of each."""

    def __init__(self, display: str) -> None:
        self.display = display
        self.bad = 0
        self.first: str | None = None

    def check(self, grid: Dim3, block: Dim3, where: str, vendor: str = "nvidia",
              **sizes: int | None) -> bool:
        problem = launch_problem(grid, block, sizes, vendor)
        if problem is None:
            return True
        self.reject(where, problem)
        return False

    def reject(self, where: str, problem: str) -> None:
        """Count a record that cannot be used (the first one is named in the error)."""
        self.bad += 1
        if self.first is None:
            self.first = f"{where}: {problem}"

    def errors(self) -> list[InputError]:
        if not self.bad:
            return []
        more = f" (and {self.bad - 1} more)" if self.bad > 1 else ""
        return [InputError(self.display, f"skipped {self.bad} inconsistent launch record"
                           f"{'s' if self.bad > 1 else ''}: {self.first}{more}")]


def launch_problem(grid: Dim3, block: Dim3, sizes: dict[str, int | None],
                   vendor: str = "nvidia") -> str | None:
    """Why a launch record cannot describe a real launch, or None."""
    threads = block[0] * block[1] * block[2]
    if min(block) <= 0:
        return f"block of {block[0]}x{block[1]}x{block[2]} threads"
    if threads > MAX_BLOCK_THREADS:
        return f"block of {threads} threads (no GPU runs more than {MAX_BLOCK_THREADS})"
    if min(grid) <= 0:
        return f"grid of {grid[0]}x{grid[1]}x{grid[2]} blocks"
    for axis, (n, limit) in enumerate(zip(grid, MAX_GRID_AMD if vendor == "amd" else MAX_GRID,
                                          strict=True)):
        if n > limit:
            return f"grid {'xyz'[axis]} of {n} blocks exceeds the hardware limit {limit}"
    for name, value in sizes.items():
        if value is not None and not 0 <= value < MAX_RESOURCE:
            return f"{name.replace('_', ' ')} of {value}"
    return None


NSYS_REP_MAGIC = b"NVIDIA Tegra Profiler Report"  # an .nsys-rep file (binary, not SQLite)
HEAD_BYTES = 4096
MAX_HEAD_BYTES = 1 << 20  # a JSON object's keys before traceEvents are looked for this far
TRACE_NAMES = (".pt.trace.json", ".pt.trace.json.gz")  # tensorboard_trace_handler's names
XPLANE_SUFFIX = ".xplane.pb"
# PyTorch's export_memory_timeline: [[time, action, bytes, category], ...] (raw) or
# [[times...], [[bytes per category]...]]: a JSON array whose first item is an array of numbers
MEMORY_TIMELINE = re.compile(rb"\[\s*\[\s*-?\d+(\.\d+)?\s*,\s*-?\d")
EVENT_LIST = re.compile(rb"\[\s*\{")  # a JSON array of objects
PFTRACE_SUFFIX = ".pftrace"  # rocprofv3 --output-format pftrace (Perfetto protocol buffers)


def xla_kind(head: bytes, path: Path) -> str | None:
    """"xla" for an XLA profile's Chrome trace (from its first bytes: processes named by
    XLA's device and host planes), "xplane" for an ``.xplane.pb``, else None."""
    if head.lstrip()[:1] == b"{" and b'"traceEvents"' in head and (
            b'"/device:' in head or b'"/host:' in head):
        return "xla"
    if path.name.endswith(XPLANE_SUFFIX):
        return "xplane"
    return None


def sniff(head: bytes, path: Path) -> str | None:
    """The trace format of a file from its first bytes (gzip already undone), or None."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if kind := xla_kind(head, path):
        return kind
    if head.startswith(SQLITE_MAGIC):
        from occlint.readers.traces.sqlite import sqlite_kind

        return sqlite_kind(path)
    if head.startswith(NSYS_REP_MAGIC):
        return "nsys-rep"
    if path.name.lower().endswith(PFTRACE_SUFFIX):
        return "pftrace"
    if text.startswith(b"{"):
        return _json_kind(head, path)
    if MEMORY_TIMELINE.match(text):
        return "memory-timeline"
    if EVENT_LIST.match(text) and b'"ph"' in head:
        return "kineto"  # Chrome's JSON Array Format: the trace's events as a bare list
    first_line = text.split(b"\n", 1)[0]
    if b"Kernel_Name" in first_line and (b"Grid_Size" in first_line
                                         or b"Workgroup_Size" in first_line):
        return "rocprofv3-csv"
    if b"KernelName" in first_line and b"grd" in first_line and b"wgr" in first_line:
        return "rocprof-csv"  # rocprof (v1): results.csv
    if not head and path.name.lower().endswith(TRACE_NAMES):
        return "kineto"  # named as the profiler names its traces, unreadable: told why
    return sidecar_kind(first_line)


def sidecar_kind(first_line: bytes) -> str | None:
    """The CSVs beside a profiler's kernel trace that hold no launches, by their header:
    rocprofv3's ``agent_info.csv`` (``Node_Id``, ``Agent_Type``, ...) and rocprof-compute's
    ``pmc_dispatch_info.csv`` (``[Node,] Dispatch_ID, [PID,] Kernel_Name, GPU_ID``)."""
    if b"Node_Id" in first_line and b"Agent_Type" in first_line:
        return "rocprofv3-agent-info"
    if b"Dispatch_ID" in first_line and b"Kernel_Name" in first_line \
            and b"GPU_ID" in first_line:
        return "rocprof-dispatch-list"
    if b"TotalDurationNs" in first_line and b"Calls" in first_line:
        return "rocprof-stats"  # --stats: kernel_stats.csv, hip_api_stats.csv, results.stats.csv
    if b"Correlation_Id" in first_line and b"Start_Timestamp" in first_line \
            and (b"Function" in first_line or b"Direction" in first_line):
        return "rocprof-activity"  # API calls and memory copies: hip_api_trace.csv, ...
    return None


# Kineto's schema version, a number among a trace's first keys ("schemaVersion" alone is
# a common key: AWS service models and JSON schemas name members so)
KINETO_SCHEMA = re.compile(rb'"schemaVersion"\s*:\s*\d')


def _json_kind(head: bytes, path: Path) -> str | None:
    if b'"traceEvents"' in head or b'"deviceProperties"' in head \
            or KINETO_SCHEMA.search(head, 0, 4096):
        return "kineto"
    if b'"rocprofiler-sdk-tool"' in head or b'"kernel_dispatch"' in head:
        return "rocprofv3-json"
    if b'"schema"' in head and b'"nodes"' in head:
        return "pytorch-et"
    if path.name.lower().endswith(TRACE_NAMES):
        return "kineto"  # named as the profiler names its traces: read, and told what is wrong
    return None


def _undecided_json(head: bytes) -> bool:
    """A JSON object whose first bytes do not say which format it is: look further."""
    return (head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{")
            and _json_kind(head, Path("")) is None)


def unpacked(raw: IO[bytes]) -> IO[bytes]:
    """The bytes of an open file that may be gzip'd: a GzipFile over it when its first
    bytes say so, else the file itself (at its start)."""
    gzipped = raw.read(2) == GZIP_MAGIC
    raw.seek(0)
    if not gzipped:
        return raw
    import gzip

    return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]


def decoded_head(path: Path, size: int = HEAD_BYTES) -> bytes:
    """The first ``size`` bytes of a file, decompressed when it is gzip'd; for a JSON
    object whose keys before its event list are longer (a 25 KB ``metadata`` object),
    up to MAX_HEAD_BYTES."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        head = os.read(fd, size)
        packed = head.startswith(GZIP_MAGIC)
        if not packed and len(head) == size and _undecided_json(head):
            head += os.read(fd, MAX_HEAD_BYTES - size)
    finally:
        os.close(fd)
    if packed:
        import gzip

        try:
            with gzip.open(path, "rb") as fh:
                head = fh.read(size)
                if len(head) == size and _undecided_json(head):
                    head += fh.read(MAX_HEAD_BYTES - size)
        except (OSError, EOFError, zlib.error):  # gzip.BadGzipFile is an OSError
            return b""
    wide = _wide(head)
    if wide is not None:  # a UTF-16 / UTF-32 JSON document: its head as UTF-8
        return head.decode(wide, "ignore").encode("utf-8")
    return head


def _wide(head: bytes) -> str | None:
    """The encoding of a JSON document that starts with ``head`` when it is UTF-16 or UTF-32
    (the standard library's ``json`` reads those too), else None."""
    import json

    if len(head) < 4 or head[:2] == GZIP_MAGIC:
        return None
    found = json.detect_encoding(head[:4])
    if not found.startswith(("utf-16", "utf-32")):
        return None
    # a binary whose first bytes hold a zero is no JSON document: it must open one
    text = head[:64].decode(found, "ignore").lstrip("\ufeff \t\r\n")
    return found if text[:1] in ("{", "[") else None


def wide_encoding(path: Path) -> str | None:
    """:func:`_wide` of a file's first bytes (gzip undone)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(64)
            if head[:2] == GZIP_MAGIC:
                import gzip

                fh.seek(0)
                with gzip.GzipFile(fileobj=fh, mode="rb") as inflated:
                    head = inflated.read(64)
    except (OSError, EOFError, zlib.error):
        return None
    return _wide(head)


def trace_kind(path: Path) -> str | None:
    """The trace format of ``path``, or None when it is not a trace occlint reads."""
    try:
        head = decoded_head(path)
    except OSError:
        return None
    return sniff(head, path)


# Profiler outputs occlint recognises but that hold no launches to read: one line says why.
NOT_LAUNCH_TRACES = {
    "nsys-rep": "an Nsight Systems report (.nsys-rep): export it with 'nsys export --type "
                "sqlite FILE.nsys-rep' and pass the .sqlite file",
    "pftrace": "a Perfetto trace (rocprofv3 --output-format pftrace), which occlint does not "
               "read: pass the run's rocpd database (HOST/PID_results.db, rocprofv3's "
               "default output) or record with --output-format csv",
    "memory-timeline": "a PyTorch memory timeline (export_memory_timeline: memory events, "
                       "no GPU kernels): pass the profiler's trace (export_chrome_trace / "
                       "tensorboard_trace_handler) instead",
    "pytorch-et": "a PyTorch execution trace (schema/nodes: the operator graph, no GPU "
                  "kernels): pass the profiler's trace (export_chrome_trace / "
                  "tensorboard_trace_handler) instead",
}


def read_trace(path: Path, display: str, kind: str, jobs: int = 1) -> TraceRead:
    """Read a trace of format ``kind`` (from :func:`trace_kind`); ``jobs``: processes a
    large trace may be split over (Kineto JSON only)."""
    if kind == "kineto":
        from occlint.readers.traces.kineto import read_kineto

        return read_kineto(path, display, jobs)
    if kind in ("rocprofv3-csv", "rocprof-csv"):
        from occlint.readers.traces.rocprof import read_rocprof_csv

        return read_rocprof_csv(path, display, kind)
    if kind == "rocprofv3-json":
        from occlint.readers.traces.rocprof import read_rocprof_json

        return read_rocprof_json(path, display)
    if kind == "rocpd":
        from occlint.readers.traces.rocprof import read_rocpd

        return read_rocpd(path, display)
    if kind == "nsys":
        from occlint.readers.traces.nsys import read_nsys

        return read_nsys(path, display)
    if kind in ("xla", "xplane"):
        from occlint.readers.traces.xla import read_xla_profile

        return read_xla_profile(path, display, kind)
    if kind in SIDECARS:
        raise TraceError(SIDECARS[kind])
    if kind in NOT_LAUNCH_TRACES:
        raise TraceError(NOT_LAUNCH_TRACES[kind])
    raise TraceError(f"not a trace occlint reads ({kind})")


# Files of a profiler's output that hold no launches: named alone, one line says what to read.
SIDECARS = {
    "rocprofv3-agent-info": "a rocprofv3 agent_info.csv describes the GPUs of a kernel trace "
                            "and holds no launches: name the <pid>_kernel_trace.csv (or its "
                            "directory) beside it, which reads it",
    "rocprof-dispatch-list": "a rocprof-compute dispatch list (pmc_dispatch_info.csv: dispatch "
                             "ids, kernel names and GPU ids, no grid or work-group sizes): "
                             "record a kernel trace with rocprofv3 --kernel-trace instead",
    "rocprof-stats": "rocprof's statistics (--stats: totals per kernel or API call, no grid or "
                     "work-group sizes): name the kernel trace beside it (rocprofv3's "
                     "<pid>_kernel_trace.csv, rocprof's results.csv) or its directory",
    "rocprof-activity": "a rocprofv3 trace of API calls or memory copies (no kernel "
                        "dispatches): name the <pid>_kernel_trace.csv beside it (or its "
                        "directory), recorded with --kernel-trace",
}
# A profiler's output files found in a directory that hold no launches: not inputs of their
# own (the kernel trace beside them is), skipped without a word
RUN_OUTPUTS = frozenset({"rocprof-stats", "rocprof-activity"})


def classify(path: Path, head: bytes | None) -> str | None:
    """The trace format of ``path``, or None, from its first 64 bytes (``head``; None when
    unreadable): no further read for GPU binaries."""
    if not head or head.startswith(BINARY_MAGICS):
        return None
    if not (head.startswith((GZIP_MAGIC, SQLITE_MAGIC)) or head[:1].isascii()
            or head.startswith(b"\xef\xbb\xbf") or _wide(head) is not None):
        return None
    return trace_kind(path)


TRACE_MEMBER_SUFFIXES = (".json", ".json.gz", ".csv", ".sqlite", ".db", ".rpd", ".gz")
MAX_TRACE_MEMBER = 16 << 30  # a trace member is copied out of its archive up to this size


def zip_trace_members(path: Path) -> list[tuple[str, str]]:
    """(member, format) of the traces inside a zip archive, found by content among the
    members with trace-like names; [] when ``path`` is not a zip or cannot be read."""
    import zipfile

    try:
        with open(path, "rb") as fh:
            if fh.read(4) != b"PK\x03\x04":
                return []
        with zipfile.ZipFile(path) as archive:
            found = []
            for info in archive.infolist():
                name = info.filename.lower()
                if info.is_dir() or not name.endswith(TRACE_MEMBER_SUFFIXES) \
                        or info.flag_bits & 0x1:
                    continue
                with archive.open(info) as stream:
                    kind = _member_kind(stream, info)
                if kind:
                    found.append((info.filename, kind))
            return sorted(found)
    except (OSError, zipfile.BadZipFile, ValueError, EOFError, NotImplementedError):
        return []


def _member_kind(stream, info) -> str | None:
    """The format of an archive member from its first bytes, inflated when gzip'd."""
    head = stream.read(HEAD_BYTES)
    if head.startswith(GZIP_MAGIC):
        inflate = zlib.decompressobj(31)
        try:
            head = inflate.decompress(head, HEAD_BYTES)
            while len(head) < MAX_HEAD_BYTES and _undecided_json(head) \
                    and (more := stream.read(HEAD_BYTES)):
                head += inflate.decompress(inflate.unconsumed_tail + more,
                                           MAX_HEAD_BYTES - len(head))
        except zlib.error:
            return None
    elif len(head) == HEAD_BYTES and _undecided_json(head):
        head += stream.read(MAX_HEAD_BYTES - HEAD_BYTES)
    if head.startswith(SQLITE_MAGIC):
        return "sqlite"  # decided once extracted (nsys or rocpd)
    return sniff(head, Path(info.filename))


class extracted:
    """A zip member copied to a temporary file (a trace reader needs a path)."""

    def __init__(self, archive_path: str, member: str) -> None:
        self.archive_path, self.member = archive_path, member
        self.path: Path | None = None

    def __enter__(self) -> Path:
        import shutil
        import tempfile
        import zipfile

        with zipfile.ZipFile(self.archive_path) as archive:
            info = archive.getinfo(self.member)
            if info.file_size > MAX_TRACE_MEMBER:
                raise TraceError(f"member of {info.file_size} bytes exceeds the "
                                 f"{MAX_TRACE_MEMBER}-byte limit for traces")
            suffix = ".gz" if self.member.endswith(".gz") else ""
            fd, name = tempfile.mkstemp(prefix="occlint-trace-", suffix=suffix)
            self.path = Path(name)
            with archive.open(info) as src, os.fdopen(fd, "wb") as dst:
                copied = 0
                while chunk := src.read(1 << 20):
                    copied += len(chunk)
                    if copied > info.file_size:
                        raise TraceError("member decompresses beyond its declared size")
                    dst.write(chunk)
                shutil.copyfileobj(src, dst)
        return self.path

    def __exit__(self, *exc) -> None:
        if self.path is not None:
            self.path.unlink(missing_ok=True)
