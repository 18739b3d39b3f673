"""rocprofv3 traces: every CSV header variant, agent_info, JSON, rocpd SQLite, bad input.

Fixtures: fixtures/build_traces.py (AMD_KERNELS, AMD_DISPATCHES, MI300X, W7800). The expected
values below are written out from those definitions, with grids converted by hand from
work-items to work-groups (ceil), so that a reader that skipped the conversion fails.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from occlint.model.launch import AmdLaunchResources
from occlint.readers.traces import TraceError, read_trace, trace_kind
from occlint.readers.traces.rocprof import (
    read_rocpd,
    read_rocprof_csv,
    read_rocprof_json,
)

ROC = Path(__file__).resolve().parent.parent / "fixtures" / "traces" / "rocprof"

GEMM = ("gemm_bf16_kernel(__hip_bfloat16 const*, __hip_bfloat16 const*, __hip_bfloat16*, "
        "int, int, int)")
SOFTMAX = "softmax_warp(float*, float const*, int)"
FILL = ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
        "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, "
        "at::detail::Array<char*, 1>)")
ROCCLR = "__amd_rocclr_fillBufferAligned"  # written "...Aligned.kd": the suffix goes
STENCIL = "stencil3d(float*, float const*)"

# kernel -> grid in work-groups, workgroup, (vgpr, agpr, sgpr, lds, scratch),
#           count, total ns, max ns, first start, stream
EXPECTED = {
    # 8192 work-items / 256 = 32
    ROCCLR: ((32, 1, 1), (256, 1, 1), (8, 0, 16, 0, 0), 1, 5920, 5920, 1_000_000, "1"),
    # 1,048,576 / 256 = 4096; two launches of 120 and 118 µs
    GEMM: ((4096, 1, 1), (256, 1, 1), (128, 128, 96, 65536, 0), 2, 238_000, 120_000,
           1_010_000, "1"),
    # ceil(1000 / 64) = 16, 512 / 4 = 128
    SOFTMAX: ((16, 128, 1), (64, 4, 1), (32, 0, 24, 2048, 16), 1, 8000, 8000, 1_270_000, "2"),
    # 100 work-items in a 128 work-item group: one partial work-group
    FILL: ((1, 1, 1), (128, 1, 1), (16, 0, 16, 0, 0), 1, 3000, 3000, 1_280_000, "2"),
    # ceil(130/8) = 17, ceil(130/8) = 17, ceil(66/4) = 17
    STENCIL: ((17, 17, 17), (8, 8, 4), (64, 0, 32, 10240, 0), 1, 45_000, 45_000, 1_300_000,
              "1"),
}
MANGLED = {GEMM: "_Z16gemm_bf16_kernelPK14__hip_bfloat16S1_PS_iii",
           SOFTMAX: "_Z12softmax_warpPfPKfi",
           FILL: "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_"
                 "6detail5ArrayIPcLi1EEEEEviT0_T1_",
           ROCCLR: None,  # not an Itanium name: no separate mangled name
           STENCIL: "_Z9stencil3dPfPKf"}
MI300X = ("AMD Instinct MI300X", "gfx942", 304, 64)
W7800 = ("AMD Radeon PRO W7800", "gfx1100", 70, 32)


def check_groups(read, device: str, registers: bool, mangled: bool,
                 kernels: tuple[str, ...] = tuple(EXPECTED), rdna: bool = False) -> None:
    """``rdna``: the W7800 fixtures (gfx1100 has no AGPRs: Accum_VGPR_Count 0)."""
    groups = {g.key.kernel: g for g in read.collector.group_list}
    assert sorted(groups) == sorted(kernels)
    for name in kernels:
        grid, block, res, count, total, most, first, stream = EXPECTED[name]
        g = groups[name]
        assert g.key.device == device
        assert g.key.grid == grid, name
        assert g.key.block == block, name
        vgpr, agpr, sgpr, lds, scratch = res
        if not registers:
            vgpr = agpr = sgpr = None
        elif rdna:
            agpr = 0
        assert g.key.resources == AmdLaunchResources(vgpr=vgpr, agpr=agpr, sgpr=sgpr,
                                                     lds_bytes=lds, scratch_bytes=scratch)
        assert g.key.mangled == (MANGLED[name] if mangled else None)
        assert (g.count, g.total_ns, g.max_ns, g.first_ns) == (count, total, most, first)
        assert g.streams == {stream}
    assert read.collector.launches == sum(EXPECTED[k][3] for k in kernels)


def check_device(read, key: str, expected: tuple | None) -> None:
    assert list(read.collector.devices) == [key]
    dev = read.collector.devices[key]
    assert dev.vendor == "amd"
    if expected is None:
        assert (dev.name, dev.arch, dev.compute_units, dev.wave_size) == (None,) * 4
    else:
        assert (dev.name, dev.arch, dev.compute_units, dev.wave_size) == expected
        assert dev.properties  # the raw agent description travels with the device


# ------------------------------------------------------------------ CSV variants

CSV_VARIANTS = [
    # path, Agent_Id as written, device, registers in the header
    ("v_old/4242_kernel_trace.csv", "2", MI300X, False),
    ("v_old_threads/5151_kernel_trace.csv", "4", None, False),
    ("v_new/host1/6161_kernel_trace.csv", "Agent 1", W7800, True),
    ("v_arch/7171_kernel_trace.csv", "2", MI300X, True),
    ("v_rocpd/out_kernel_trace.csv", "Agent 2", MI300X, True),
]


@pytest.mark.parametrize(("rel", "agent", "device", "registers"), CSV_VARIANTS,
                         ids=[v[0].split("/")[0] for v in CSV_VARIANTS])
def test_csv_variants(rel, agent, device, registers):
    path = ROC / rel
    assert trace_kind(path) == "rocprofv3-csv"
    read = read_rocprof_csv(path, rel)
    assert read.errors == []
    assert read.collector.format == "rocprofv3-csv"
    check_groups(read, agent, registers=registers, mangled=False, rdna=device is W7800)
    check_device(read, agent, device)
    # the same through the dispatcher
    again = read_trace(path, rel, "rocprofv3-csv")
    assert again.collector.launches == 6


def test_csv_agent_info_row_is_kept():
    read = read_rocprof_csv(ROC / "v_old/4242_kernel_trace.csv", "t")
    props = read.collector.devices["2"].properties
    assert props["Name"] == "gfx942" and props["Cu_Count"] == 304
    assert props["Simd_Per_Cu"] == 4 and props["Max_Waves_Per_Cu"] == 32


def test_csv_timeline_per_stream():
    read = read_rocprof_csv(ROC / "v_new/host1/6161_kernel_trace.csv", "t")
    streams = read.collector.streams
    assert sorted(streams) == [("Agent 1", "1"), ("Agent 1", "2")]
    q1 = streams[("Agent 1", "1")]
    assert list(q1.starts) == [1_000_000, 1_010_000, 1_140_000, 1_300_000]
    assert list(q1.durations) == [5920, 120_000, 118_000, 45_000]


def test_csv_truncated_last_line():
    path = ROC / "bad/truncated_kernel_trace.csv"
    assert trace_kind(path) == "rocprofv3-csv"
    read = read_rocprof_csv(path, "cut.csv")
    assert [e.message for e in read.errors] == ["ends inside a record at line 7"]
    assert read.errors[0].file == "cut.csv"
    check_groups(read, "Agent 1", registers=True, mangled=False,
                 kernels=(ROCCLR, GEMM, SOFTMAX, FILL), rdna=True)


def test_csv_cut_inside_a_quoted_multiline_name(tmp_path):
    data = (ROC / "bad/hostile_kernel_trace.csv").read_bytes()
    path = tmp_path / "q_kernel_trace.csv"
    path.write_bytes(data[: data.index(b"line\nbreak") + 7])  # inside the quoted name
    read = read_rocprof_csv(path, "q.csv")
    assert [e.message for e in read.errors] == ["ends inside a record at line 3"]
    assert read.collector.launches == 1


def test_csv_last_row_without_newline_counts_as_cut(tmp_path):
    """rocprofv3 ends every row with a newline: a last row without one may be cut inside
    its last number (``25`` of ``256``), so it is reported, not read."""
    path = tmp_path / "n_kernel_trace.csv"
    path.write_bytes((ROC / "v_old/4242_kernel_trace.csv").read_bytes().rstrip(b"\n"))
    read = read_rocprof_csv(path, "n.csv")
    assert [e.message for e in read.errors] == ["ends inside a record at line 7"]
    assert read.collector.launches == 5
    crlf = tmp_path / "c_kernel_trace.csv"
    crlf.write_bytes((ROC / "v_old/4242_kernel_trace.csv").read_bytes().replace(b"\n",
                                                                                b"\r\n"))
    assert read_rocprof_csv(crlf, "c.csv").collector.launches == 6


def test_csv_missing_columns():
    path = ROC / "bad/missing_kernel_trace.csv"
    assert trace_kind(path) == "rocprofv3-csv"
    with pytest.raises(TraceError) as info:
        read_rocprof_csv(path, "m.csv")
    message = str(info.value)
    assert "missing columns End_Timestamp, Grid_Size_Y, Grid_Size_Z" in message


def test_csv_counter_collection_is_read_as_one_dimension(tmp_path):
    """rocprofv3 --pmc's CSV (sizes as totals, a row per counter; the real one is in
    test_trace_rocm_public): recognised and read, and it says how."""
    header = ["Correlation_Id", "Dispatch_Id", "Agent_Id", "Queue_Id", "Process_Id",
              "Thread_Id", "Grid_Size", "Kernel_Id", "Kernel_Name", "Workgroup_Size",
              "LDS_Block_Size", "Scratch_Size", "VGPR_Count", "Accum_VGPR_Count", "SGPR_Count",
              "Counter_Name", "Counter_Value", "Start_Timestamp", "End_Timestamp"]
    path = _write(tmp_path / "1_counter_collection.csv", header, [])
    assert trace_kind(path) == "rocprofv3-csv"
    read = read_rocprof_csv(path, "c.csv")
    assert read.collector.launches == 0 and read.errors == []
    assert any("counter-collection CSV" in n for n in read.collector.notes)
    # with neither the totals nor X/Y/Z, the missing X/Y/Z columns are named
    path = _write(tmp_path / "2_counter_collection.csv",
                  [h for h in header if h != "Grid_Size"], [])
    with pytest.raises(TraceError, match=r"missing columns Workgroup_Size_X, .*Grid_Size_Z"):
        read_rocprof_csv(path, "c.csv")


def test_amd_grid_beyond_cuda_limits_is_valid(tmp_path):
    """HSA allows up to 2^32 - 1 work-items per dimension: 70,000 work-groups in y are a
    real dispatch on AMD (CUDA's limit is 65,535)."""
    header, rows = _rows(ROC / "v_new/host1/6161_kernel_trace.csv")
    row = dict(zip(header, rows[2], strict=True))
    row.update({"Workgroup_Size_Y": 1, "Grid_Size_Y": 70000})
    path = tmp_path / "1_kernel_trace.csv"
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh, quoting=csv.QUOTE_ALL)
        writer.writerow(header)
        writer.writerow([row[h] for h in header])
    read = read_rocprof_csv(path, "r.csv")
    assert read.errors == [] and read.collector.launches == 1
    assert read.collector.group_list[0].key.grid[1] == 70000


def test_csv_bad_records_skipped_with_one_error():
    read = read_rocprof_csv(ROC / "bad/records_kernel_trace.csv", "r.csv")
    assert [e.message for e in read.errors] == [
        "skipped 4 inconsistent launch records: line 3: block of 0x1x1 threads (and 3 more)"]
    assert read.collector.launches == 2  # the first and the last rows
    assert {g.key.kernel for g in read.collector.group_list} == {ROCCLR, GEMM}


@pytest.mark.parametrize(("row_patch", "problem"), [
    ({"Workgroup_Size_X": 0}, "line 2: block of 0x1x1 threads"),
    ({"Workgroup_Size_Y": 1, "Grid_Size_Y": 2**32},
     "line 2: grid y of 4294967296 blocks exceeds the hardware limit 4294967295"),
    ({"Workgroup_Size_X": 2048},
     "line 2: block of 2048 threads (no GPU runs more than 1024)"),
    ({"Start_Timestamp": "12x"}, "line 2: timestamp not an integer: '12x'"),
    ({"Grid_Size_Z": "1.5"}, "line 2: a field is not an integer"),
    ({"End_Timestamp": 1}, "line 2: ends (1) before it starts (1010000)"),
    ({"VGPR_Count": -4}, "line 2: vgprs of -4"),
    ({"Grid_Size_X": 0}, "line 2: grid of 0x1x1 blocks"),
])
def test_csv_each_bad_record(tmp_path, row_patch, problem):
    header, rows = _rows(ROC / "v_new/host1/6161_kernel_trace.csv")
    row = dict(zip(header, rows[2], strict=True))  # the first gemm dispatch
    row.update({k: str(v) for k, v in row_patch.items()})
    path = _write(tmp_path / "x_kernel_trace.csv", header, [list(row.values()), rows[1]])
    read = read_rocprof_csv(path, "x.csv")
    assert [e.message for e in read.errors] == [
        f"skipped 1 inconsistent launch record: {problem}"]
    assert read.collector.launches == 1


def test_csv_hostile_names_kept_verbatim():
    read = read_rocprof_csv(ROC / "bad/hostile_kernel_trace.csv", "h.csv")
    assert read.errors == []
    names = [g.key.kernel for g in read.collector.group_list]
    assert names == ["evil\x1b[31m_kernel(int)", "line\nbreak\rkernel",
                     "bidi\u202ekernel\u202c(float*)", "nul\x00byte<\"quoted\", 'x'>",
                     "<script>alert(1)</script>&amp;"]


def test_csv_huge_name_is_bounded(tmp_path):
    header, rows = _rows(ROC / "v_new/host1/6161_kernel_trace.csv")
    rows[1][7] = "k" * 100_000
    path = _write(tmp_path / "long_kernel_trace.csv", header, rows[1:3])
    read = read_rocprof_csv(path, "l.csv")
    assert read.errors == []
    assert max(len(g.key.kernel) for g in read.collector.group_list) <= 4096 + 3


def test_csv_gzip_and_bom(tmp_path):
    data = (ROC / "v_new/host1/6161_kernel_trace.csv").read_bytes()
    path = tmp_path / "9_kernel_trace.csv.gz"
    path.write_bytes(gzip.compress(b"\xef\xbb\xbf" + data))
    assert trace_kind(path) == "rocprofv3-csv"
    read = read_rocprof_csv(path, "g.csv.gz")
    assert read.errors == []
    check_groups(read, "Agent 1", registers=True, mangled=False, rdna=True)
    check_device(read, "Agent 1", None)  # no agent_info beside it


def test_csv_agent_info_by_prefix_among_several(tmp_path):
    shutil.copy(ROC / "v_old/4242_kernel_trace.csv", tmp_path / "4242_kernel_trace.csv")
    shutil.copy(ROC / "v_old/4242_agent_info.csv", tmp_path / "4242_agent_info.csv")
    shutil.copy(ROC / "v_new/host1/run_agent_info.csv", tmp_path / "9999_agent_info.csv")
    read = read_rocprof_csv(tmp_path / "4242_kernel_trace.csv", "t")
    check_device(read, "2", MI300X)


def test_csv_broken_agent_info_is_a_note(tmp_path):
    shutil.copy(ROC / "v_old/4242_kernel_trace.csv", tmp_path / "4242_kernel_trace.csv")
    (tmp_path / "4242_agent_info.csv").write_bytes(b"")
    read = read_rocprof_csv(tmp_path / "4242_kernel_trace.csv", "t")
    assert read.errors == []
    check_device(read, "2", None)
    assert read.collector.notes and "4242_agent_info.csv" in read.collector.notes[0]


def test_csv_other_kinds_and_blank_lines_ignored(tmp_path):
    header, rows = _rows(ROC / "v_new/host1/6161_kernel_trace.csv")
    other = list(rows[1])
    other[0] = "MEMORY_COPY"
    path = _write(tmp_path / "k_kernel_trace.csv", header, [rows[1], other, [], rows[2]])
    read = read_rocprof_csv(path, "k.csv")
    assert read.errors == []
    assert read.collector.launches == 2


def test_csv_header_only_and_empty(tmp_path):
    header, _ = _rows(ROC / "v_old/4242_kernel_trace.csv")
    read = read_rocprof_csv(_write(tmp_path / "h_kernel_trace.csv", header, []), "h")
    assert read.errors == [] and read.collector.launches == 0
    (tmp_path / "e.csv").write_bytes(b"")
    with pytest.raises(TraceError, match="empty CSV"):
        read_rocprof_csv(tmp_path / "e.csv", "e")


def test_csv_many_rows_stream(tmp_path):
    """50,000 dispatches of two kernels: two groups, a timeline of 16 bytes per launch."""
    header, rows = _rows(ROC / "v_new/host1/6161_kernel_trace.csv")
    path = tmp_path / "big_kernel_trace.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
        w.writerow(header)
        for i in range(50_000):
            row = list(rows[2 if i % 2 else 4])
            row[9] = str(10_000_000 + 1000 * i)
            row[10] = str(10_000_000 + 1000 * i + 400)
            w.writerow(row)
    read = read_rocprof_csv(path, "big.csv")
    assert read.errors == []
    assert read.collector.launches == 50_000
    assert len(read.collector.group_list) == 2
    assert sum(g.total_ns for g in read.collector.group_list) == 50_000 * 400


# ------------------------------------------------------------------ JSON

def test_json():
    path = ROC / "json/4242_results.json"
    assert trace_kind(path) == "rocprofv3-json"
    read = read_rocprof_json(path, "r.json")
    assert read.errors == []
    assert read.collector.format == "rocprofv3-json"
    # the agent's logical node id is 1 in this document
    check_groups(read, "Agent 1", registers=True, mangled=True)
    check_device(read, "Agent 1", MI300X)
    assert read_trace(path, "r.json", "rocprofv3-json").collector.launches == 6


def test_json_any_key_order():
    path = ROC / "json/reordered_results.json"
    assert trace_kind(path) == "rocprofv3-json"
    read = read_rocprof_json(path, "r.json")
    assert read.errors == []
    check_groups(read, "Agent 1", registers=True, mangled=True)
    check_device(read, "Agent 1", MI300X)


def test_json_truncated():
    path = ROC / "json/truncated_results.json"
    read = read_rocprof_json(path, "t.json")
    assert len(read.errors) == 1
    assert read.errors[0].message.startswith("ends early (after 3 kernel dispatch records)")
    assert "\n" not in read.errors[0].message
    check_groups(read, "Agent 1", registers=True, mangled=True, kernels=(ROCCLR, GEMM))


def test_json_bad_dispatches(tmp_path):
    doc = json.loads((ROC / "json/4242_results.json").read_text())
    records = doc["rocprofiler-sdk-tool"][0]["buffer_records"]["kernel_dispatch"]
    records[0]["dispatch_info"]["workgroup_size"]["x"] = 0
    records[1]["dispatch_info"]["grid_size"] = "lots"
    records[2]["dispatch_info"]["kernel_id"] = 999  # unknown symbol: still a launch
    records.append("not an object")
    path = tmp_path / "b_results.json"
    path.write_text(json.dumps(doc))
    read = read_rocprof_json(path, "b.json")
    assert [e.message for e in read.errors] == [
        "skipped 3 inconsistent launch records: kernel_dispatch record 1: block of 0x1x1 "
        "threads (and 2 more)"]
    assert read.collector.launches == 4
    unknown = [g for g in read.collector.group_list if g.key.kernel == "kernel 999"]
    assert len(unknown) == 1 and unknown[0].key.resources.vgpr is None


def test_json_hostile_values(tmp_path):
    """Lists and objects where numbers belong, odd names: errors or fallbacks, no crash."""
    doc = json.loads((ROC / "json/4242_results.json").read_text())
    entry = doc["rocprofiler-sdk-tool"][0]
    entry["kernel_symbols"].append({"kernel_id": [1, 2], "kernel_name": {"x": 1}})
    entry["kernel_symbols"][0]["formatted_kernel_name"] = "bad\x1b[2J\u2028name"
    entry["agents"].append({"id": {"handle": [1]}, "type": 2})
    records = entry["buffer_records"]["kernel_dispatch"]
    records[0]["dispatch_info"]["agent_id"] = {"handle": {"deep": [1, 2]}}
    records[1]["stream_id"] = {"handle": [3]}
    records[2]["dispatch_info"]["workgroup_size"]["y"] = [1]
    records[3]["start_timestamp"] = "soon"
    records[4]["dispatch_info"]["kernel_id"] = {"k": 1}
    path = tmp_path / "h_results.json"
    path.write_text(json.dumps(doc))
    read = read_rocprof_json(path, "h.json")
    assert [e.message for e in read.errors] == [
        "skipped 2 inconsistent launch records: kernel_dispatch record 3: not an integer: "
        "'[1]' (and 1 more)"]
    assert read.collector.launches == 4
    names = {g.key.kernel for g in read.collector.group_list}
    assert "bad\x1b[2J\u2028name" in names


def test_json_not_rocprof(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"something": [1, 2, 3]}')
    with pytest.raises(TraceError, match="not a rocprofv3 JSON document"):
        read_rocprof_json(path, "x.json")


# ------------------------------------------------------------------ rocpd SQLite

@pytest.mark.parametrize("name", ["4242_results.db", "tracks_results.db"])
def test_rocpd(name):
    path = ROC / "rocpd" / name
    assert trace_kind(path) == "rocpd"
    before = path.read_bytes()
    read = read_rocpd(path, name)
    assert read.errors == []
    assert read.collector.format == "rocpd"
    check_groups(read, "Agent 2", registers=True, mangled=True)
    check_device(read, "Agent 2", MI300X)
    assert read_trace(path, name, "rocpd").collector.launches == 6
    assert path.read_bytes() == before  # opened read-only


def test_rocpd_without_dispatch_table(tmp_path):
    path = tmp_path / "empty.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE rocpd_string (id INTEGER, string TEXT)")
    assert trace_kind(path) == "rocpd"
    with pytest.raises(TraceError, match="no rocpd_kernel_dispatch"):
        read_rocpd(path, "empty.db")


def test_rocpd_bad_rows(tmp_path):
    path = tmp_path / "bad.db"
    shutil.copy(ROC / "rocpd/4242_results.db", path)
    with sqlite3.connect(path) as db:
        table = db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND "
                           "name LIKE 'rocpd_kernel_dispatch%'").fetchone()[0]
        db.execute(f"UPDATE `{table}` SET workgroup_size_x = 0 WHERE dispatch_id = 2")
        db.execute(f"UPDATE `{table}` SET grid_size_x = 'many' WHERE dispatch_id = 3")
    read = read_rocpd(path, "bad.db")
    assert [e.message for e in read.errors] == [
        "skipped 2 inconsistent launch records: kernel dispatch 2: block of 0x1x1 threads "
        "(and 1 more)"]
    assert read.collector.launches == 4


def test_rocpd_odd_path(tmp_path):
    path = tmp_path / "we?ird #name%.db"
    shutil.copy(ROC / "rocpd/4242_results.db", path)
    assert read_rocpd(path, "odd").collector.launches == 6


# ------------------------------------------------------------------ sniffing

@pytest.mark.parametrize(("rel", "kind"), [
    *[(v[0], "rocprofv3-csv") for v in CSV_VARIANTS],
    ("bad/truncated_kernel_trace.csv", "rocprofv3-csv"),
    ("bad/records_kernel_trace.csv", "rocprofv3-csv"),
    ("bad/hostile_kernel_trace.csv", "rocprofv3-csv"),
    ("json/4242_results.json", "rocprofv3-json"),
    ("json/reordered_results.json", "rocprofv3-json"),
    ("json/truncated_results.json", "rocprofv3-json"),
    ("rocpd/4242_results.db", "rocpd"),
    ("rocpd/tracks_results.db", "rocpd"),
    # recognised so that, named without its kernel trace, it gets one clear line
    ("v_old/4242_agent_info.csv", "rocprofv3-agent-info"),
])
def test_trace_kind(rel, kind):
    assert trace_kind(ROC / rel) == kind


# ------------------------------------------------------------------ helpers

def _rows(path: Path) -> tuple[list[str], list[list[str]]]:
    rows = list(csv.reader(io.StringIO(path.read_text())))
    return rows[0], rows


def _write(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)
    return path


def test_csv_overflowing_number_is_one_bad_record(tmp_path):
    """'1e309' parses as an infinite float: a bad record, never an OverflowError (found by
    fuzzing the trace readers)."""
    header, rows = _rows(ROC / "v_new/host1/6161_kernel_trace.csv")
    row = dict(zip(header, rows[2], strict=True))
    row["Start_Timestamp"] = "200251e30900"
    path = tmp_path / "1_kernel_trace.csv"
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh, quoting=csv.QUOTE_ALL)
        writer.writerow(header)
        writer.writerow([row[h] for h in header])
    read = read_rocprof_csv(path, "r.csv")
    assert read.collector.launches == 0
    assert len(read.errors) == 1 and "not an integer" in read.errors[0].message


def test_json_huge_exponent_is_not_expanded(tmp_path):
    """ijson gives 1e3094281001 as a Decimal; turning it into an int would build a
    billion-digit number (found by fuzzing: minutes and gigabytes). It is no value."""
    import time

    text = (ROC / "json" / "4242_results.json").read_text()
    first = text.index('"handle": ') + len('"handle": ')
    end = first + len(text[first:]) - len(text[first:].lstrip("0123456789"))
    path = tmp_path / "1_results.json"
    path.write_text(text[:first] + "1e3094281001" + text[end:])
    start = time.perf_counter()
    read_rocprof_json(path, "r.json")
    assert time.perf_counter() - start < 5
