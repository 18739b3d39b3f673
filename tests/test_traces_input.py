"""Trace inputs: recognition by content, bad input, the launch-overhead scan, devices, CLI
and output formats. Numbers asserted here are written from the inputs the tests build."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from occlint.analysis.launches import (
    OVERHEAD_MIN_LAUNCHES,
    match_device,
    overhead_bursts,
    signature_key,
)
from occlint.devices.db import shipped_db
from occlint.model.launch import TraceDevice
from occlint.pipeline.run import Options, execute
from occlint.readers.traces import classify, trace_kind
from tests.conftest import run_occlint

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "traces" / "kineto"
RAW = FIXTURES / "raw_odd.pt.trace.json.gz"

H100 = {"id": 0, "name": "NVIDIA H100 80GB HBM3", "computeMajor": 9, "computeMinor": 0,
        "numSms": 132, "warpSize": 32, "maxThreadsPerBlock": 1024}


def kineto(events: list[dict], props: list[dict] | None = None) -> str:
    """A trace in libkineto's own layout (as ChromeTraceLogger writes it)."""
    head = ('{\n  "schemaVersion": 1,\n  "deviceProperties": '
            + json.dumps(props if props is not None else [H100]) + ',\n  "traceEvents": [')
    body = ",".join("\n  {\n    " + json.dumps(e)[1:-1].replace(', "args"', ',\n    "args"')
                    + "\n  }" for e in events)
    return head + body + '\n  ],\n  "traceName": "t"\n}\n'


def kernel(name="k(int*)", grid=(132, 1, 1), block=(256, 1, 1), ts=0.0, dur=10.0, regs=32,
           shared=0, stream=7) -> dict:
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream, "ts": ts,
            "dur": dur, "args": {"device": 0, "stream": stream, "registers per thread": regs,
                                 "shared memory": shared, "grid": list(grid),
                                 "block": list(block)}}


def run(*paths, **opts) -> tuple[dict, int]:
    out = execute(Options(paths=[str(p) for p in paths], isolated=True, **opts))
    return out.doc, out.exit_code


# -- recognition -------------------------------------------------------------------------------
def test_kinds_by_content(tmp_path):
    plain = tmp_path / "trace.data"  # no telling extension
    plain.write_text(kineto([kernel()]))
    assert trace_kind(plain) == "kineto"
    gz = tmp_path / "x.bin"
    gz.write_bytes(gzip.compress(plain.read_bytes()))
    assert trace_kind(gz) == "kineto"
    cubin = FIXTURES / "odd_launches.sm_90.cubin"
    assert classify(cubin, cubin.read_bytes()[:64]) is None
    assert classify(plain, plain.read_bytes()[:64]) == "kineto"
    other = tmp_path / "other.json"
    other.write_text('{"a": 1}')
    assert trace_kind(other) is None
    assert trace_kind(RAW) == "kineto"


def test_layout_is_the_libkineto_layout(tmp_path):
    """The test helper writes what libkineto writes (checked on a real trace)."""
    with gzip.open(RAW) as fh:
        real = fh.read()
    assert b'"traceEvents": [\n  {\n    "ph": "X", "cat": "' in real
    assert b'\n    "ph": "X", "cat": "kernel", "name": ' in real
    made = kineto([kernel()]).encode()
    assert b'"traceEvents": [\n  {\n    "ph": "X", "cat": "kernel", "name": ' in made


# -- one launch, analysed ----------------------------------------------------------------------
def test_a_launch_of_block_100_grid_133(tmp_path):
    """Hand-derived on an H100 (132 SMs, 64 warps/SM, 32 blocks/SM): 100 threads = 4 warps,
    28 of 128 lanes idle; 16 registers and no shared memory: 16 blocks (64 warps) per SM;
    133 blocks = 133 / (16 x 132) = 0.063 waves; one SM runs 2 blocks, the rest 1."""
    trace = tmp_path / "t.json"
    trace.write_text(kineto([kernel(grid=(133, 1, 1), block=(100, 1, 1), regs=16,
                                    dur=1000.0)]))
    doc, code = run(trace)
    assert code == 0  # the kernel's source is not in the run: its findings are info
    (r,) = doc["launches"]
    assert r["kernel_facts"] is None and doc["summary"]["launches"]["unread_user_groups"] == 1
    assert r["occupancy"]["blocks_per_sm"] == 16 and r["occupancy"]["warps_per_sm"] == 64
    assert r["waves"] == round(133 / (16 * 132), 4)
    f = {f["rule"]: f for f in r["findings"]}
    assert f["LCH001"]["launch"]["lost_fraction"] == round(28 / 128, 4)
    assert f["LCH001"]["launch"]["time_at_stake_ns"] == round(28 / 128 * 1_000_000)
    assert f["LCH101"]["data"]["cost"] == round(2 * 132 / 133 - 1, 4)
    assert f["LCH001"]["launch"]["grid"] == [133, 1, 1]
    assert f["LCH001"]["file"] == str(trace)
    assert f["LCH001"]["severity"] == "info" and f["LCH001"]["saving"]["low"] == 0
    assert "not in the run" in f["LCH001"]["saving"]["basis"]


def test_the_report_says_what_it_lacks_to_price_the_users_launches(tmp_path):
    """A trace alone: the user's kernel gets no warning from a rule's own share of the time
    (a guess), and the text and HTML say what to pass to price it; with the kernel's source
    beside the trace the launch-time model prices it and the line goes."""
    trace = tmp_path / "t.json"
    trace.write_text(kineto([kernel(name="scale", grid=(133, 1, 1), block=(100, 1, 1),
                                    regs=16, dur=1000.0)]))
    alone = run_occlint(str(trace), "--isolated")
    assert alone.code == 0, alone.err
    assert ("1 launch group of your kernels (1.00 ms) has no source, PTX or cache in the "
            "run: its savings start at none") in alone.out
    html = tmp_path / "r.html"
    assert run_occlint(str(trace), "--isolated", "--format", "html", "-o", str(html)).code == 0
    assert "has no source, PTX or cache in the run" in html.read_text()
    source = tmp_path / "scale.cu"
    source.write_text("__global__ void scale(const float* x, float* y, float a, int n) {\n"
                      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                      "  if (i < n) y[i] = a * x[i];\n}\n")
    both = run_occlint(str(trace), str(source), "--isolated")
    assert "no source, PTX or cache" not in both.out


def test_device_override_and_unknown_device(tmp_path):
    trace = tmp_path / "t.json"
    trace.write_text(kineto([kernel()], props=[]))
    doc, _ = run(trace)
    assert doc["launches"][0]["device"] is None
    assert "unknown device" in doc["launches"][0]["message"]
    doc, _ = run(trace, devices=["h200"])
    assert doc["launches"][0]["device"] == "NVIDIA H200"
    assert doc["launches"][0]["device_source"] == "--device"


def test_device_derived_from_properties():
    db = shipped_db()
    dev, how = match_device(TraceDevice("0", "nvidia", "NVIDIA H100 80GB HBM3", "sm_90", 132,
                                        32), db)
    assert how == "database" and dev.compute_units == 132
    dev, how = match_device(TraceDevice("0", "nvidia", "NVIDIA H100 MIG 3g.40gb", "sm_90", 60,
                                        32), db)
    assert how == "derived" and dev.compute_units == 60 and dev.arch.name == "sm_90"
    dev, how = match_device(TraceDevice("0", "nvidia", None, "sm_9999", 10, 32), db)
    assert dev is None


def test_signature_key():
    assert signature_key("void f<int>(int *, float const*)") == signature_key(
        "f<int>(int*, float const *)")


# -- launch overhead ---------------------------------------------------------------------------
def test_overhead_bursts_synthetic():
    n = OVERHEAD_MIN_LAUNCHES + 5
    starts = [i * 2000.0 for i in range(n)]
    durs = [1000.0] * n  # 1 µs kernels, 1 µs gaps
    (b,) = overhead_bursts(starts, durs, [0] * n)
    assert b["launches"] == n and b["idle_ns"] == 1000.0 * (n - 1)
    assert b["busy_ns"] == 1000.0 * n
    # gaps a tenth of the kernels: no finding
    assert overhead_bursts([i * 1100.0 for i in range(n)], durs, [0] * n) == []
    # too few launches
    m = OVERHEAD_MIN_LAUNCHES - 1
    assert overhead_bursts(starts[:m], durs[:m], [0] * m) == []
    # a long kernel in the middle splits the run into two short ones
    mid = n // 2
    durs2 = list(durs)
    durs2[mid] = 1e6
    assert overhead_bursts(starts, durs2, [0] * n) == []
    # out of order input is sorted first
    rev = list(reversed(starts))
    assert overhead_bursts(rev, durs, [0] * n)[0]["launches"] == n


# -- bad input ---------------------------------------------------------------------------------
def test_bad_records_are_skipped_with_one_error(tmp_path):
    trace = tmp_path / "t.json"
    trace.write_text(kineto([kernel(), kernel(block=(0, 1, 1)), kernel(grid=(2**31, 1, 1)),
                             kernel(block=(2048, 1, 1)), kernel(regs=-1)]))
    doc, _ = run(trace)
    assert doc["summary"]["launches"]["launches"] == 1
    assert len(doc["errors"]) == 1
    assert "skipped 4 inconsistent launch records" in doc["errors"][0]["message"]
    assert "block of 0x1x1" in doc["errors"][0]["message"]


def test_untrusted_names_are_escaped(tmp_path):
    trace = tmp_path / "t.json"
    evil = "k\x1b[31m\n<script>alert(1)</script>"
    trace.write_text(kineto([kernel(name=evil, block=(100, 1, 1))]))
    run = run_occlint(str(trace))
    assert "\x1b" not in run.out and "<script>" in run.out
    assert all("k\\x1b" in line for line in run.out.splitlines() if "LCH001" in line)
    html = run_occlint(str(trace), "--format", "html").out
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html


@pytest.mark.parametrize("content", [
    b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 0, "dur": 1, '
    b'"args": {"grid": [1, 1, 1]',  # cut short, not Kineto's layout
    b'{"traceEvents": 5}',
    b'{"traceEvents": [1, 2, {"cat": "kernel"}]}',
])
def test_odd_documents_give_one_line(tmp_path, content):
    trace = tmp_path / "t.json"
    trace.write_bytes(content)
    proc = subprocess.run([sys.executable, "-m", "occlint", str(trace)], capture_output=True,
                          text=True)
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("occlint: error:")]
    assert len(errors) <= 1
    assert proc.returncode in (0, 1, 2)


def test_not_a_trace_named_on_the_command_line(tmp_path):
    other = tmp_path / "config.json"
    other.write_text('{"a": 1}')
    run = run_occlint(str(other), str(RAW))
    assert run.code == 1  # the trace was analysed and has findings
    assert f"occlint: error: {other}:" in run.err


def test_huge_counts_do_not_grow_memory(tmp_path):
    """Millions of identical events make one group (memory: the timeline, 20 B a launch)."""
    events = [kernel(ts=i * 20.0) for i in range(5000)]
    trace = tmp_path / "t.json"
    trace.write_text(kineto(events))
    doc, _ = run(trace)
    assert doc["summary"]["launches"] == {**doc["summary"]["launches"], "launches": 5000,
                                          "groups": 1}


# -- inputs ------------------------------------------------------------------------------------
def test_traces_inside_a_zip(tmp_path):
    archive = tmp_path / "profiles.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.write(RAW, "run/raw_odd.pt.trace.json.gz")
        z.write(FIXTURES / "odd_launches.sm_90.cubin", "bin/odd.cubin")
    doc, _ = run(archive)
    assert doc["summary"]["launches"]["launches"] == 129
    assert all(r["trace"].endswith("!/run/raw_odd.pt.trace.json.gz") for r in doc["launches"])
    assert len(doc["kernels"]) == 5
    assert all(r["resources"]["source"] == "binary" for r in doc["launches"])


# -- formats -----------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["sarif", "github", "gitlab", "junit"])
def test_launch_findings_in_every_format(fmt):
    run = run_occlint(str(RAW), "--format", fmt)
    assert run.code == 1
    out = run.out
    assert "LCH001" in out and "raw_odd.pt.trace.json.gz" in out and "&lt;&lt;&lt;133, 100" \
        in out.replace("<<<", "&lt;&lt;&lt;")
    if fmt == "sarif":
        doc = json.loads(out)
        results = doc["runs"][0]["results"]
        assert all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                   .endswith("raw_odd.pt.trace.json.gz") for r in results)


def test_baseline_and_ignores_apply_to_launch_findings(tmp_path):
    baseline = tmp_path / "b.json"
    _, code = run(RAW, write_baseline=str(baseline))
    assert code == 0
    doc, code = run(RAW, baseline=str(baseline))
    assert code == 0 and doc["summary"]["findings"]["total"] == 0
    assert all(r["findings"] == [] for r in doc["launches"])
    doc, _ = run(RAW, ignore=["LCH", "OCC"])
    assert {f["rule"] for r in doc["launches"] for f in r["findings"]} == set()


def test_text_lists_top_groups_by_saving():
    run = run_occlint(str(RAW))
    lines = run.out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.strip().startswith("saving"))
    first = lines[head + 1] if "launch overhead" not in lines[head + 1] else lines[head + 2]
    assert "gamma_gridstride" in first and "133 x 100" in first
    assert "129 launches" in lines[-1]


def test_split_read_equals_one_process(tmp_path, monkeypatch):
    """A large plain trace scanned by two processes gives what one process gives."""
    from occlint.readers.traces import kineto as kineto_mod

    with gzip.open(FIXTURES / "resnet18_train.pt.trace.json.gz") as fh:
        text = fh.read()
    trace = tmp_path / "t.json"
    trace.write_bytes(text)
    monkeypatch.setattr(kineto_mod, "SPLIT_MIN_BYTES", 1)
    one = kineto_mod.read_kineto(trace, "t", jobs=1)
    two = kineto_mod.read_kineto(trace, "t", jobs=2)
    assert one.collector.launches == two.collector.launches == 363
    assert [(g.key, g.count, g.total_ns, g.max_ns) for g in one.collector.group_list] == \
        [(g.key, g.count, g.total_ns, g.max_ns) for g in two.collector.group_list]
    for key, t in one.collector.streams.items():
        u = two.collector.streams[key]
        assert (t.starts, t.durations, t.groups) == (u.starts, u.durations, u.groups)
    assert one.collector.devices == two.collector.devices


def test_rocm_kineto_dimensions_on_the_runtime_call(tmp_path):
    """ROCm builds of libkineto write grid/block/shared memory on the runtime call
    (RuntimeActivity<roctracerKernelRow>::metadataJson) and the kernel event has only the
    correlation; the two are joined (either order). Registers are not in such traces: the
    launch's occupancy is not computed unless the binary is read too (status no-registers:
    only the block and grid rules run)."""
    mi300x = {"id": 0, "name": "AMD Instinct MI300X", "computeMajor": 9, "computeMinor": 4,
              "numSms": 304, "warpSize": 64, "maxThreadsPerBlock": 1024}
    # an RDNA GPU reports 32-wide waves: recognised as AMD by its name
    w7800 = {"id": 0, "name": "AMD Radeon PRO W7800", "computeMajor": 11, "computeMinor": 0,
             "numSms": 70, "warpSize": 32, "maxThreadsPerBlock": 1024}
    runtime = {"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "pid": 1,
               "tid": 1, "ts": 0.0, "dur": 5.0,
               "args": {"cid": 3, "correlation": 11, "stream": "0x0", "grid": [608, 1, 1],
                        "block": [256, 1, 1], "shared memory": 0}}
    k = {"ph": "X", "cat": "kernel", "name": "vec_add(float*, float*, float*, int)",
         "pid": 0, "tid": 0, "ts": 10.0, "dur": 7.0,
         "args": {"device": 0, "stream": 0, "correlation": 11}}
    for props, events in ((mi300x, [runtime, k]), (mi300x, [k, runtime]), (w7800, [k, runtime])):
        trace = tmp_path / "rocm.json"
        trace.write_text(kineto(events, props=[props]))
        doc, _ = run(trace)
        (r,) = doc["launches"]
        assert (r["grid"], r["block"], r["count"]) == ([608, 1, 1], [256, 1, 1], 1)
        assert r["device"] == props["name"] and r["status"] == "no-registers"
        assert r["occupancy"] is None and doc["errors"] == []


def test_zip_of_traces_only_is_read_not_skipped(tmp_path):
    """A zip holding only traces has no GPU code: named or found in a walk, its traces are
    read and it is neither an error nor skipped."""
    archive = tmp_path / "profiles.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.write(RAW, "raw_odd.pt.trace.json.gz")
    for paths in ([archive], [tmp_path]):
        doc, code = run(*paths)
        assert doc["errors"] == [] and code == 1
        assert doc["summary"]["launches"]["launches"] == 129
        assert doc["summary"].get("skipped", 0) == 0


@pytest.mark.parametrize("threaded", [False, True])
def test_truncated_gzip_keeps_what_was_read(tmp_path, monkeypatch, threaded):
    """A gzip'd trace cut short (inflated in this thread, or by a second one as large
    traces are): the launches before the cut and one error."""
    from occlint.readers.traces import kineto as kineto_mod

    if threaded:
        pytest.importorskip("isal")
        monkeypatch.setattr(kineto_mod, "THREADED_MIN_BYTES", 1)
    packed = (FIXTURES / "resnet18_train.pt.trace.json.gz").read_bytes()
    trace = tmp_path / "cut.json.gz"
    trace.write_bytes(packed[:len(packed) // 2])
    read = kineto_mod.read_kineto(trace, "cut")
    assert 0 < read.collector.launches < 363
    assert len(read.errors) == 1 and "cannot read the trace" in read.errors[0].message
    whole = tmp_path / "whole.json.gz"
    whole.write_bytes(packed)
    assert kineto_mod.read_kineto(whole, "whole").collector.launches == 363


def _build_traces():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "build_traces", Path(__file__).resolve().parent.parent / "fixtures" / "build_traces.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rocprof_dispatch_occupancy_on_a_w7800(tmp_path):
    """A rocprofv3 dispatch on a W7800 (gfx1100, 35 WGPs, wave32), derived by hand from
    LLVM's model (AMDGPUBaseInfo: 1,536 VGPRs per SIMD in wave32, allocated in granules of
    24 with the full GFX11 VGPR file): 128 VGPRs allocate 144 -> 10 waves per SIMD; 16 KiB
    of LDS per work-group of the WGP's 128 KiB -> 8 groups; a 256-work-item group is 8 waves
    over the WGP's 4 SIMDs, so VGPRs allow 10 x 4 / 8 = 5 groups per WGP: 10 of 16 waves
    per SIMD (62.5 %). The grid is in work-items: 262,144 / 256 = 1,024 groups =
    1,024 / (5 x 35) = 5.85 waves."""
    bt = _build_traces()
    row = dict.fromkeys(bt.HEADER_NEW, 0)
    row.update(Kind="KERNEL_DISPATCH", Agent_Id="Agent 1", Queue_Id=1, Stream_Id=0,
               Thread_Id=1, Dispatch_Id=1, Kernel_Id=7, Kernel_Name="k(float*)",
               Correlation_Id=1, Start_Timestamp=1000, End_Timestamp=51000,
               LDS_Block_Size=16384, Scratch_Size=0, VGPR_Count=128, Accum_VGPR_Count=0,
               SGPR_Count=32, Workgroup_Size_X=256, Workgroup_Size_Y=1, Workgroup_Size_Z=1,
               Grid_Size_X=262144, Grid_Size_Y=1, Grid_Size_Z=1)
    bt.write_csv(tmp_path / "77_kernel_trace.csv", bt.HEADER_NEW,
                 [[row[h] for h in bt.HEADER_NEW]])
    bt.write_agent_info(tmp_path / "77_agent_info.csv", bt.W7800, cpus=1)
    doc, _ = run(tmp_path / "77_kernel_trace.csv")
    (r,) = doc["launches"]
    assert r["device"] == "AMD Radeon PRO W7800" and r["grid"] == [1024, 1, 1]
    occ = r["occupancy"]
    assert (occ["waves_per_simd"], occ["max_waves_per_simd"], occ["blocks_per_cu"]) == \
        (10, 16, 5)
    assert occ["unit"] == "WGP" and occ["limiters"] == ["vgpr"]
    assert r["waves"] == round(1024 / (5 * 35), 4)
    assert "OCC108" in r["finding_codes"] and r["total_ns"] == 50000


def test_per_kernel_ignores_and_severity_apply_to_launches(tmp_path):
    config = tmp_path / "occlint.toml"
    config.write_text('severity = {LCH102 = "error"}\n'
                      '[per-kernel-ignores]\n"gamma_gridstride*" = ["LCH"]\n')
    out = execute(Options(paths=[str(RAW)], config=str(config)))
    doc = out.doc
    gamma = [r for r in doc["launches"] if r["kernel"].startswith("gamma_gridstride")]
    assert gamma and all(not {c for c in r["finding_codes"] if c.startswith("LCH")}
                         for r in gamma)
    small = [f for r in doc["launches"] for f in r["findings"] if f["rule"] == "LCH102"]
    assert small and {f["severity"] for f in small} == {"error"}
    assert out.exit_code == 1


@pytest.mark.parametrize("field", ["grid", "block", "registers", "shared", "ts", "dur"])
def test_infinite_numbers_are_bad_records(tmp_path, field):
    """1e309 reads as an infinite float: a bad record (found by fuzzing the readers)."""
    events = [kernel(), kernel(ts=5.0)]
    text = kineto(events)
    value = {"grid": '"grid": [1e309, 1, 1]', "block": '"block": [1e309, 1, 1]',
             "registers": '"registers per thread": 1e309', "shared": '"shared memory": 1e309',
             "ts": '"ts": 1e309', "dur": '"dur": 1e309'}[field]
    old = {"grid": '"grid": [132, 1, 1]', "block": '"block": [256, 1, 1]',
           "registers": '"registers per thread": 32', "shared": '"shared memory": 0',
           "ts": '"ts": 5.0', "dur": '"dur": 10.0'}[field]
    i = text.rindex(old)
    trace = tmp_path / "t.json"
    trace.write_text(text[:i] + value + text[i + len(old):])
    doc, _ = run(trace)
    assert doc["summary"]["launches"]["launches"] == 1
    assert len(doc["errors"]) == 1
