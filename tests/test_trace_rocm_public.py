"""rocprofv3 outputs cut from public recordings, and register columns on gfx90a/gfx94x.

Fixtures: fixtures/build_traces_rocm.py. The truth: the recordings themselves (read with
``csv``/``json``), clang's resource remarks (``Occupancy [waves/SIMD]``) for the kernels
whose descriptors the derived traces decode, and LLVM's VGPR arithmetic.
"""

from __future__ import annotations

import csv
import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from occlint.pipeline.run import Options, execute
from tests.truth.amd_reports import parse_remarks

REPO = Path(__file__).resolve().parent.parent
ROC = REPO / "fixtures" / "traces" / "rocprof"
CO = REPO / "fixtures" / "amd" / "co"
JACOBI = ROC / "public" / "mi300a_jacobi"
MI350X = ROC / "public" / "mi350x_results.json.gz"


def run(*paths, **opts) -> tuple[dict, int]:
    out = execute(Options(paths=[str(p) for p in paths], isolated=True, **opts))
    return out.doc, out.exit_code


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "occlint", *args], capture_output=True,
                          text=True, cwd=REPO)


# -- register columns on gfx90a / gfx942 ---------------------------------------------------------
@pytest.mark.parametrize("target, objects", [
    ("gfx942", ["suite.gfx942", "sweep.gfx942", "suite.gfx942.clang22"]),
    ("gfx90a", ["suite.gfx90a", "sweep.gfx90a"]),
])
def test_accum_offset_split_gives_the_compilers_occupancy(target, objects):
    """Every kernel's occupancy from rocprofiler-sdk's VGPR_Count / Accum_VGPR_Count split is
    clang's ``Occupancy [waves/SIMD]`` (at the max flat work-group size the trace launches)."""
    trace = ROC / "derived" / target / f"{target}_kernel_trace.csv"
    with open(trace, newline="") as fh:
        rows = list(csv.DictReader(fh))
    doc, _ = run(trace)
    by_row = {}
    for r in doc["launches"]:
        t = r["resources"]["trace"]
        by_row[(r["kernel"], t["vgpr"], t["agpr"], t["sgpr"], r["block"][0])] = r
    remaining = iter(rows)  # the builder writes one row per kernel, object after object
    checked = 0
    for obj in objects:
        for remark in parse_remarks((CO / f"{obj}.remarks.txt").read_text()):
            row = next(remaining)
            assert row["Kernel_Name"] == f"{remark['name']}.kd"
            r = by_row[(remark["name"], int(row["VGPR_Count"]), int(row["Accum_VGPR_Count"]),
                        int(row["SGPR_Count"]), int(row["Workgroup_Size_X"]))]
            assert r["status"] == "ok", (obj, remark["name"], r["message"])
            assert r["occupancy"]["waves_per_simd"] == remark["occupancy"], (obj, remark)
            checked += 1
    assert next(remaining, None) is None and checked == len(rows) >= 40


def test_agprs_above_256(tmp_path):
    """rocprofiler-sdk's Accum_VGPR_Count is the allocation minus accum_offset: 4 VGPRs and
    508 "AGPRs" are the whole 512-register file, one wave per SIMD (LLVM:
    512 / alignTo(512, 8) = 1), not an input error."""
    source = ROC / "derived" / "gfx942"
    lines = (source / "gfx942_kernel_trace.csv").read_text().splitlines()
    row = next(csv.reader([lines[1]]))
    row[13], row[14] = "4", "508"  # VGPR_Count, Accum_VGPR_Count
    with open(tmp_path / "9_kernel_trace.csv", "w", newline="") as fh:
        writer = csv.writer(fh, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
        writer.writerow(next(csv.reader([lines[0]])))
        writer.writerow([int(v) if v.isdigit() else v for v in row])
    (tmp_path / "9_agent_info.csv").write_bytes((source / "gfx942_agent_info.csv").read_bytes())
    doc, _ = run(tmp_path / "9_kernel_trace.csv")
    (r,) = doc["launches"]
    assert r["status"] == "ok", r["message"]
    assert r["occupancy"]["waves_per_simd"] == 1
    assert r["occupancy"]["vgpr_alloc_granulated"] == 512


# -- old header: no register columns (MI300A, HPCTrainingExamples) --------------------------------
def test_old_header_gets_the_grid_rules_and_says_why_in_text():
    with open(JACOBI / "jacobi_kernel_trace.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    small = {r["Kernel_Name"] for r in rows
             if int(r["Grid_Size_X"]) // int(r["Workgroup_Size_X"]) == 16}
    assert len(small) == 1
    doc, code = run(JACOBI / "jacobi_kernel_trace.csv")
    assert code == 0  # the user's kernels, with nothing of them in the run: info
    assert sum(r["count"] for r in doc["launches"]) == len(rows)
    for r in doc["launches"]:
        assert r["device"] == "AMD Instinct MI300A" and r["occupancy"] is None
        assert "no usable VGPR count" in r["message"]
        flagged = "LCH102" in r["finding_codes"]
        assert flagged == (r["kernel"] in small)
        if flagged:
            f = next(f for f in r["findings"] if f["rule"] == "LCH102")
            assert "leaves 212 of 228 CUs" in f["message"]  # agent_info: Cu_Count 228
    proc = cli(str(JACOBI / "jacobi_kernel_trace.csv"))
    assert "4 of 4 launch groups without occupancy (?): the trace gives no usable VGPR count" \
        in proc.stdout
    assert "LCH102" in proc.stdout


def test_agent_info_named_beside_its_trace_is_used():
    proc = cli(str(JACOBI / "jacobi_kernel_trace.csv"), str(JACOBI / "jacobi_agent_info.csv"))
    assert "not a GPU binary" not in proc.stdout + proc.stderr
    assert "error" not in proc.stderr
    assert "AMD Instinct MI300A" in proc.stdout


def test_agent_info_alone_is_a_clear_error(tmp_path):
    alone = tmp_path / "1_agent_info.csv"
    alone.write_bytes((JACOBI / "jacobi_agent_info.csv").read_bytes())
    proc = cli(str(alone))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert proc.stderr.startswith(f"occlint: error: {alone}: a rocprofv3 agent_info.csv")
    assert "Traceback" not in proc.stderr


def test_rocpd_csv_export_with_a_device():
    """rocpd's CSV export of the same run (ROCm 7.1.1): register columns, no agent_info."""
    trace = ROC / "public" / "mi300a_rocpd_csv" / "out_kernel_trace.csv"
    with open(trace, newline="") as fh:
        rows = list(csv.DictReader(fh))
    doc, _ = run(trace, devices=["mi300a"])
    assert sum(r["count"] for r in doc["launches"]) == len(rows)
    for r in doc["launches"]:
        row = next(x for x in rows if x["Kernel_Name"] == r["kernel"])
        assert r["grid"][0] == -(-int(row["Grid_Size_X"]) // int(row["Workgroup_Size_X"]))
        assert r["resources"]["trace"]["vgpr"] == int(row["Vgpr_Count"])
        assert r["occupancy"] is not None


# -- JSON: MI350X (TraceLens) ----------------------------------------------------------------------
def test_mi350x_json_counts_every_dispatch():
    tool = json.loads(gzip.decompress(MI350X.read_bytes()))["rocprofiler-sdk-tool"][0]
    dispatches = tool["buffer_records"]["kernel_dispatch"]
    doc, _ = run(MI350X)
    assert sum(r["count"] for r in doc["launches"]) == len(dispatches)
    agents = {a["id"]["handle"]: a for a in tool["agents"]}
    for r in doc["launches"]:
        assert r["device"] == "AMD Instinct MI350X"
        assert r["trace_device"] == agents[dispatches[0]["dispatch_info"]["agent_id"]["handle"]
                                           ]["product_name"]


def test_mi350x_register_counts_are_not_trusted_and_say_why():
    """rocprofiler-sdk's decoder before gfx950 support: VGPR_Count = (granulated + 1) x 4
    on an 8-register granule (code_object.cpp), AGPRs 0, as every symbol of this run reads."""
    tool = json.loads(gzip.decompress(MI350X.read_bytes()))["rocprofiler-sdk-tool"][0]
    assert all(s["accum_vgpr_count"] == 0 for s in tool["kernel_symbols"])
    doc, _ = run(MI350X)
    assert all(r["occupancy"] is None for r in doc["launches"])
    (inp,) = doc["inputs"]
    assert any(n.startswith("gfx950: rocprofiler-sdk") for n in inp["notes"])
    assert any("LCH102" in r["finding_codes"] for r in doc["launches"])  # 1 block, 256 CUs


def test_dispatch_list_is_one_clear_line(tmp_path):
    """rocprof-compute's pmc_dispatch_info.csv (its file_io.create_df_kernel_top_stats:
    Dispatch_ID, Kernel_Name, GPU_ID) has no launch dimensions."""
    path = tmp_path / "pmc_dispatch_info.csv"
    path.write_text("Dispatch_ID,Kernel_Name,GPU_ID\n0,vecadd(float*),2\n")
    proc = cli(str(path))
    assert proc.returncode == 2
    assert proc.stderr == (f"occlint: error: {path}: a rocprof-compute dispatch list "
                           "(pmc_dispatch_info.csv: dispatch ids, kernel names and GPU ids, no "
                           "grid or work-group sizes): record a kernel trace with rocprofv3 "
                           "--kernel-trace instead\n")


def _groups(path: Path) -> dict:
    from occlint.readers.traces.rocprof import read_rocprof_json

    read = read_rocprof_json(path, "t")
    assert not read.errors
    return {(g.key, g.count, g.total_ns, g.max_ns, g.first_ns)
            for g in read.collector.group_list}, read.collector.launches


def test_compact_records_read_as_the_json_parser_reads_them(tmp_path):
    """rocprofv3's compact records go through one regular expression each; a pretty-printed
    copy (the JSON parser's path) and a copy whose 201st record has its keys in another
    order (the parser takes over there) give the same launch groups and times."""
    tool = json.loads(gzip.decompress(MI350X.read_bytes()))["rocprofiler-sdk-tool"][0]
    compact = _groups(MI350X)
    assert compact[1] == len(tool["buffer_records"]["kernel_dispatch"])
    pretty = tmp_path / "pretty_results.json"
    pretty.write_text(json.dumps({"rocprofiler-sdk-tool": [tool]}, indent=2))
    assert _groups(pretty) == compact
    records = tool["buffer_records"]["kernel_dispatch"]
    records[200] = dict(reversed(list(records[200].items())))
    mixed = tmp_path / "mixed_results.json"
    mixed.write_text(json.dumps({"rocprofiler-sdk-tool": [tool]}, separators=(",", ":")))
    assert _groups(mixed) == compact
    from occlint.model.launch import LaunchCollector
    from occlint.readers.traces import RecordCheck
    from occlint.readers.traces.rocprof import Emitter, JsonState, _compact_dispatches

    def matched(path: Path) -> int | None:
        return _compact_dispatches(path, JsonState(),
                                   Emitter(LaunchCollector("t", "x"), RecordCheck("t")))

    assert matched(MI350X) is None  # every record in compact form
    assert matched(mixed) == 200  # the parser read the rest
    assert matched(pretty) == 0
    two = tmp_path / "two_results.json"  # two processes' items in one document
    doc = json.loads(gzip.decompress(MI350X.read_bytes()))
    doc["rocprofiler-sdk-tool"].append(doc["rocprofiler-sdk-tool"][0])
    two.write_text(json.dumps(doc, separators=(",", ":")))
    assert matched(two) == len(records)
    assert _groups(two)[1] == 2 * len(records)


def test_documents_validate():
    """Launch groups without occupancy (status no-registers) and gfx950 notes fit the schema."""
    import jsonschema

    schema = json.loads((REPO / "docs/schema/occlint-report.schema.json").read_text())
    doc, _ = run(ROC / "public", ROC / "derived")
    assert {r["status"] for r in doc["launches"]} >= {"ok", "no-registers"}
    jsonschema.Draft202012Validator(schema).validate(doc)


def _jacobi_with(tmp_path, dispatches) -> dict:
    """The MI300A Jacobi trace (no register columns) with its dispatches' LDS, work-group
    and grid (in work-groups) replaced by ``dispatches``."""
    with open(JACOBI / "jacobi_kernel_trace.csv", newline="") as fh:
        reader = csv.DictReader(fh)
        header, rows = reader.fieldnames, list(reader)
    out = []
    for i, (lds, block, grid) in enumerate(dispatches):
        row = dict(rows[0], Kernel_Name=f"k{i}", Group_Segment_Size=lds,
                   Workgroup_Size_X=block, Grid_Size_X=grid * block)
        out.append(row)
    with open(tmp_path / "jacobi_kernel_trace.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, header, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: int(v) if str(v).isdigit() else v for k, v in r.items()}
                         for r in out)
    (tmp_path / "jacobi_agent_info.csv").write_bytes(
        (JACOBI / "jacobi_agent_info.csv").read_bytes())
    doc, _ = run(tmp_path / "jacobi_kernel_trace.csv")
    return {r["kernel"]: r for r in doc["launches"]}


def test_partial_wave_without_registers_only_where_every_occupancy_has_one(tmp_path):
    """LCH105 on a launch whose registers the trace does not give: a gfx942 CU holds 32
    waves (4 SIMDs x 8, LLVM's getMaxWavesPerEU), so a 1,024-thread work-group (16 wave64s)
    runs 1 or 2 to a CU whatever its registers, and 64 KiB of LDS holds one work-group of
    40 KiB. On the MI300A's 228 CUs: 500 work-groups are 2.19 waves at one per CU (the
    partial wave a third of the runtime) and 1.10 at two (a half): fires. 300 are 0.66 waves
    at two: no full wave there, no claim. 456 are whole waves at one: none. 256-thread
    work-groups run up to 8 to a CU: 500 are under a wave at 3: none, unless 40 KiB of LDS
    holds them to one, whatever the registers: 300 are then 1.32 waves of 228, a partial
    wave of 72 blocks half the runtime, and a saving is estimated as with registers."""
    got = _jacobi_with(tmp_path, [(0, 1024, 500), (0, 1024, 300), (0, 1024, 456),
                                  (0, 256, 500), (40960, 256, 300)])
    fired = {k for k, r in got.items() if "LCH105" in r["finding_codes"]}
    assert fired == {"k0", "k4"}
    f = next(f for f in got["k0"]["findings"] if f["rule"] == "LCH105")
    assert f["data"]["blocks_per_unit_at_most"] == 2
    assert f["data"]["waves"] == [round(500 / 456, 4), round(500 / 228, 4)]
    assert (f["data"]["partial_share_low"], f["data"]["partial_share"]) == (0.3333, 0.5)
    assert "33.3% to 50.0% of the runtime" in f["message"]
    assert f.get("saving") is None  # blocks per CU unknown: no estimate
    f = next(f for f in got["k4"]["findings"] if f["rule"] == "LCH105")  # one per CU: known
    assert (f["data"]["blocks_per_wave"], f["data"]["full_waves"],
            f["data"]["partial_blocks"]) == (228, 1, 72)
    assert "up to 50.0% of the runtime" in f["message"] and f["saving"]["high"] > 0
    assert (got["k4"]["waves"], got["k0"]["waves"]) == (round(300 / 228, 4), None)


# -- counter collection (rocprofv3 --pmc): a row per counter per dispatch, sizes as totals -------
SHALLOW = ROC / "public" / "mi300a_shallow_pmc" / "shallow_counter_collection.csv"


def test_counter_collection_csv_reads_one_launch_per_dispatch(tmp_path):
    """The shallow-water tutorial's counter CSV (MI300A, one counter): every dispatch a
    launch, its grid and work-group as the totals they are (blocks = work-items / work-group
    size), its registers as written; the same CSV with a second counter per dispatch (rows
    repeated as rocprofv3 writes them, the counter's name and value changed) reads the same."""
    with open(SHALLOW, newline="") as fh:
        rows = list(csv.DictReader(fh))
    truth = {}
    for r in rows:
        key = (r["Kernel_Name"], int(r["Grid_Size"]) // int(r["Workgroup_Size"]),
               int(r["Workgroup_Size"]), int(r["VGPR_Count"]), int(r["Accum_VGPR_Count"]))
        truth[key] = truth.get(key, 0) + 1
    assert len({r["Dispatch_Id"] for r in rows}) == len(rows) == 8
    two = tmp_path / "two_counters.csv"
    with open(SHALLOW, newline="") as fh, open(two, "w", newline="") as out:
        reader = csv.reader(fh)
        writer = csv.writer(out)
        header = next(reader)
        writer.writerow(header)
        name_at, value_at = header.index("Counter_Name"), header.index("Counter_Value")
        for row in reader:
            writer.writerow(row)
            writer.writerow([*row[:name_at], "SQ_WAVES", "1", *row[value_at + 1:]])
    for path in (SHALLOW, two):
        doc, _ = run(path, devices=["mi300a"])
        assert doc["errors"] == []
        got = {(r["kernel"], r["blocks"], r["threads_per_block"],
                r["resources"]["trace"]["vgpr"], r["resources"]["trace"]["agpr"]): r["count"]
               for r in doc["launches"]}
        assert got == truth
        assert doc["summary"]["launches"]["launches"] == len(rows)
        per_dispatch, totals = doc["inputs"][0]["notes"]
        assert "one row read per dispatch" in per_dispatch and "totals" in totals


# -- rocprof (v1, ROCm 6 and before): results.csv ----------------------------------------------
AOMP = ROC / "public" / "aomp_launch_latency" / "results.csv"


def test_rocprof_v1_results_csv_is_read():
    """ROCm/aomp's quoted results.csv (four OpenMP target dispatches): every dispatch a
    launch, blocks = grd / wgr work-items, the time EndNs - BeginNs (its DurationNs), and the
    257-thread teams off the 64-lane wavefront (its wave_size column) flagged."""
    with open(AOMP, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert all(int(r["EndNs"]) - int(r["BeginNs"]) == int(r["DurationNs"]) for r in rows)
    doc, _ = run(AOMP, devices=["mi300x"])
    assert doc["errors"] == [] and doc["inputs"][0]["format"] == "rocprof-csv"
    assert doc["summary"]["launches"]["launches"] == len(rows) == 4
    got = {(r["kernel"], r["blocks"], r["threads_per_block"]): (r["count"], r["total_ns"])
           for r in doc["launches"]}
    truth: dict = {}
    for r in rows:
        key = (r["KernelName"].removesuffix(".kd"), -(-int(r["grd"]) // int(r["wgr"])),
               int(r["wgr"]))
        count, total = truth.get(key, (0, 0))
        truth[key] = (count + 1, total + int(r["DurationNs"]))
    assert got == truth
    odd = {r["kernel"] for r in doc["launches"] if "LCH001" in r["finding_codes"]}
    assert odd == {r["KernelName"].removesuffix(".kd") for r in rows
                   if int(r["wgr"]) % int(r["wave_size"])}


# -- rocprof's outputs without dispatches ---------------------------------------------------------
OUTPUTS = ROC / "public" / "jacobi_outputs"


@pytest.mark.parametrize(("name", "words"), [
    ("jacobi_kernel_stats.csv", "rocprof's statistics (--stats"),
    ("jacobi_hip_api_trace.csv", "API calls or memory copies (no kernel dispatches)"),
])
def test_outputs_without_dispatches_named_say_what_to_name(name, words):
    """Named on the command line: one line says which file holds the launches."""
    proc = cli(str(OUTPUTS / name))
    assert proc.returncode == 2
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"occlint: error: {OUTPUTS / name}: ") and words in line
    assert "not a GPU binary" not in line


def test_outputs_without_dispatches_in_a_directory_are_skipped(tmp_path):
    """In a profiler's output directory they are not inputs of their own: the kernel trace
    beside them is read, and they are skipped without an error."""
    for path in [*OUTPUTS.iterdir(), AOMP]:
        (tmp_path / path.name).write_bytes(path.read_bytes())
    doc, _ = run(tmp_path, devices=["mi300x"])
    assert doc["errors"] == []
    assert doc["summary"]["launches"]["launches"] == 4  # results.csv's dispatches
    assert doc["summary"]["skipped"] == 2
