"""Nsight Systems SQLite exports: kernels, names through StringIds, devices, bad input.

Fixtures: fixtures/build_traces.py (NV_KERNELS, NV_BAD, H100, L4); the expected values are
written out below from those definitions.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from occlint.model.launch import NvLaunchResources
from occlint.readers.traces import TraceError, read_trace, trace_kind
from occlint.readers.traces.nsys import read_nsys

NSYS = Path(__file__).resolve().parent.parent / "fixtures" / "traces" / "nsys"

CUTLASS = ("void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_256x128_64x3_"
           "tn_align8>(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_256x128_64x3_tn_align8::"
           "Params)")
CUDNN = ("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x64_4x1x1_"
         "kernel0_0")
FILL = ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
        "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, "
        "at::detail::Array<char*, 1>)")
REDUCE = "reduce_rows(float*, float const*, int)"
EVIL = "evil\x1b[31m_kernel\n\u202e(int)"

# kernel -> device, mangled, grid, block, (registers, static, dynamic, local),
#           count, total ns, max ns, first start, streams
EXPECTED = {
    CUTLASS: ("0", "_ZN7cutlass7Kernel2I52cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_256x128_"
                   "64x3_tn_align8EEvNT_6ParamsE",
              (264, 1, 1), (256, 1, 1), (232, 0, 81920, 0), 1, 410_000, 410_000, 5_000_000,
              {"7"}),
    # opt-in dynamic shared memory (231,424 B > 48 KiB); the "mangled" name is a plain C name
    CUDNN: ("0", None, (2, 1, 1), (384, 1, 1), (168, 0, 231424, 0), 1, 52_000, 52_000,
            5_420_000, {"7"}),
    FILL: ("0", "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_"
                "6detail5ArrayIPcLi1EEEEEviT0_T1_",
           (133, 1, 1), (100, 1, 1), (16, 0, 0, 0), 2, 6_000, 3_100, 5_480_000, {"13"}),
    REDUCE: ("1", "_Z11reduce_rowsPfPKfi", (4096, 2, 1), (1024, 1, 1), (32, 49152, 0, 64), 1,
             77_000, 77_000, 6_000_000, {"21"}),
    EVIL: ("0", "_Z11evil_kerneli", (1, 1, 1), (32, 1, 1), (8, 0, 0, 0), 1, 1_000, 1_000,
           6_100_000, {"7"}),
}


def check_groups(read, kernels=tuple(EXPECTED)) -> None:
    groups = {g.key.kernel: g for g in read.collector.group_list}
    assert sorted(groups) == sorted(kernels)
    for name in kernels:
        device, mangled, grid, block, res, count, total, most, first, streams = EXPECTED[name]
        g = groups[name]
        assert (g.key.device, g.key.mangled, g.key.grid, g.key.block) == (
            device, mangled, grid, block), name
        assert g.key.resources == NvLaunchResources(
            registers=res[0], static_shared=res[1], dynamic_shared=res[2], local_bytes=res[3])
        assert (g.count, g.total_ns, g.max_ns, g.first_ns) == (count, total, most, first)
        assert g.streams == streams


def test_h100_report():
    path = NSYS / "h100_report.sqlite"
    assert trace_kind(path) == "nsys"
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    read = read_nsys(path, "r.sqlite")
    assert read.errors == []
    assert read.collector.format == "nsys"
    assert read.collector.launches == 6
    check_groups(read)
    devices = read.collector.devices
    assert sorted(devices) == ["0", "1"]
    h100, l4 = devices["0"], devices["1"]
    assert (h100.vendor, h100.name, h100.arch, h100.compute_units, h100.wave_size) == (
        "nvidia", "NVIDIA H100 80GB HBM3", "sm_90", 132, 32)
    assert (l4.name, l4.arch, l4.compute_units, l4.wave_size) == ("NVIDIA L4", "sm_89", 58, 32)
    assert h100.properties["maxShmemPerBlockOptin"] == 232448
    assert h100.properties["busLocation"] == "0000:19:00.0"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest  # read-only
    assert read_trace(path, "r.sqlite", "nsys").collector.launches == 6


def test_timeline():
    read = read_nsys(NSYS / "h100_report.sqlite", "r")
    timeline = read.collector.streams[("0", "13")]
    assert list(timeline.starts) == [5_480_000, 5_490_000]
    assert list(timeline.durations) == [3_100, 2_900]


def test_no_kernel_table():
    path = NSYS / "no_kernels.sqlite"
    assert trace_kind(path) == "nsys"  # TARGET_INFO_GPU alone still says nsys
    with pytest.raises(TraceError) as info:
        read_nsys(path, "n.sqlite")
    assert str(info.value).startswith("no CUPTI_ACTIVITY_KIND_KERNEL table: ")


def test_no_target_info():
    path = NSYS / "no_target_info.sqlite"
    assert trace_kind(path) == "nsys"
    read = read_nsys(path, "t.sqlite")
    assert read.errors == []
    assert read.collector.launches == 3
    groups = {g.key.kernel: g for g in read.collector.group_list}
    assert sorted(groups) == sorted([CUTLASS, CUDNN, FILL])
    assert groups[FILL].count == 1
    device = read.collector.devices["0"]
    assert (device.vendor, device.name, device.arch, device.compute_units) == (
        "nvidia", None, None, None)
    assert any("TARGET_INFO_GPU" in note for note in read.collector.notes)


def test_bad_records_skipped_with_one_error():
    read = read_nsys(NSYS / "bad_records.sqlite", "b.sqlite")
    assert [e.message for e in read.errors] == [
        "skipped 2 inconsistent launch records: kernel 1: block of 0x1x1 threads (and 1 more)"]
    assert read.errors[0].file == "b.sqlite"
    assert read.collector.launches == 1


def test_hostile_name_kept_and_escaped_in_errors(tmp_path):
    read = read_nsys(NSYS / "h100_report.sqlite", "r")
    assert EVIL in {g.key.kernel for g in read.collector.group_list}
    # a display name with control characters stays one line in the error
    read = read_nsys(NSYS / "bad_records.sqlite", "bad\nname\x1b.sqlite")
    assert "\n" not in read.errors[0].file and "\x1b" not in read.errors[0].file


def test_odd_path_characters(tmp_path):
    path = tmp_path / "we?ird #na%me.sqlite"
    shutil.copy(NSYS / "h100_report.sqlite", path)
    assert read_nsys(path, "odd").collector.launches == 6


def test_odd_path_characters_sniffed(tmp_path):
    path = tmp_path / "we?ird #na%me.sqlite"
    shutil.copy(NSYS / "h100_report.sqlite", path)
    assert trace_kind(path) == "nsys"


def _db(tmp_path: Path, schema: str, rows: list[tuple]) -> Path:
    path = tmp_path / "k.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript(schema)
        db.executemany(f"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES "
                       f"({', '.join('?' * len(rows[0]))})", rows)
    return path


def test_text_names_without_string_table(tmp_path):
    """Exports that write names as text (and no StringIds table) are read too."""
    path = _db(tmp_path, "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, end INT, "
                         "deviceId INT, streamId INT, gridX INT, gridY INT, gridZ INT, "
                         "blockX INT, blockY INT, blockZ INT, registersPerThread INT, "
                         "staticSharedMemory INT, dynamicSharedMemory INT, "
                         "localMemoryPerThread INT, demangledName TEXT, shortName TEXT, "
                         "mangledName TEXT)",
               [(10, 30, 0, 7, 8, 1, 1, 128, 1, 1, 40, 1024, 0, 0, "k(int)", "k", "_Z1ki")])
    read = read_nsys(path, "k")
    assert read.errors == []
    (group,) = read.collector.group_list
    assert (group.key.kernel, group.key.mangled, group.key.grid, group.key.block) == (
        "k(int)", "_Z1ki", (8, 1, 1), (128, 1, 1))
    assert group.key.resources == NvLaunchResources(registers=40, static_shared=1024,
                                                    dynamic_shared=0, local_bytes=0)
    assert group.total_ns == 20


def test_minimal_kernel_table(tmp_path):
    """Only the launch geometry: resources unknown (None), names fall back."""
    path = _db(tmp_path, "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, end INT, "
                         "gridX INT, gridY INT, gridZ INT, blockX INT, blockY INT, blockZ INT)",
               [(0, 5, 2, 1, 1, 64, 1, 1), (10, 5, 2, 1, 1, 64, 1, 1)])
    read = read_nsys(path, "m")
    assert [e.message for e in read.errors] == [
        "skipped 1 inconsistent launch record: kernel 2: ends (5) before it starts (10)"]
    (group,) = read.collector.group_list
    assert group.key.kernel == "(unnamed kernel)"
    assert group.key.resources == NvLaunchResources()
    assert group.key.device == "0"


def test_kernel_table_without_geometry(tmp_path):
    path = _db(tmp_path, "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, end INT, "
                         "shortName INT)", [(0, 5, 1)])
    with pytest.raises(TraceError, match="lacks columns gridX"):
        read_nsys(path, "g")


def test_non_integer_values(tmp_path):
    path = _db(tmp_path, "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start, end, gridX, gridY, "
                         "gridZ, blockX, blockY, blockZ, registersPerThread)",
               [(0, 5, "lots", 1, 1, 64, 1, 1, 10), (0, 5, 1, 1, 1, 64, 1, 1, 10.5),
                (0, 5, 1, 1, 1, 64, 1, 1, 10)])
    read = read_nsys(path, "n")
    assert read.errors[0].message.startswith("skipped 2 inconsistent launch records: kernel 1: "
                                             "not an integer")
    assert read.collector.launches == 1


def test_not_a_database(tmp_path):
    path = tmp_path / "x.sqlite"
    path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)
    with pytest.raises(TraceError):
        read_nsys(path, "x")


def test_infinite_real_is_a_bad_record(tmp_path):
    """SQLite stores 1e309 as an infinite REAL: a bad record, never an OverflowError."""
    import sqlite3

    path = tmp_path / "inf.sqlite"
    shutil.copy(NSYS / "h100_report.sqlite", path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET gridX = 1e309 WHERE rowid = "
                   "(SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL)")
    read = read_nsys(path, "inf")
    assert read.collector.launches == 5
    assert len(read.errors) == 1


def test_invalid_utf8_in_the_schema_is_one_error(tmp_path):
    """A damaged database whose schema text is not UTF-8 (the sqlite3 module raises
    UnicodeDecodeError, not sqlite3.Error): no traceback (found by fuzzing)."""
    import subprocess
    import sys

    data = bytearray((NSYS / "h100_report.sqlite").read_bytes())
    at = data.find(b"CREATE TABLE")
    assert at > 0
    data[at + 7] = 0xFF  # CREATE \xffABLE ...
    path = tmp_path / "bad.sqlite"
    path.write_bytes(bytes(data))
    proc = subprocess.run([sys.executable, "-m", "occlint", str(path)], capture_output=True,
                          text=True)
    assert "Traceback" not in proc.stderr and proc.returncode == 2
    assert proc.stderr.startswith(f"occlint: error: {path}:")
