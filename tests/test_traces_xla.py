"""JAX (XLA) profiles: the profile plugin's trace.json.gz and the .xplane.pb beside it.

The fixture (fixtures/traces/xla, recorded on an H100 by benchmarks/traces/record_xla.sh) is
checked against three independent sources: the trace itself read with ``json`` (every
kernel event's ``kernel_details``, ``hlo_module``/``hlo_op``, and XLA's own ``occ_pct``),
Nsight Compute's report of the same 48 launches (tests/truth/ncu_reports.py), and the
device JAX and PyTorch reported on that machine (env.txt).
"""

from __future__ import annotations

import gzip
import json
import shutil
from collections import Counter
from pathlib import Path

import jsonschema
import pytest

from occlint.pipeline.run import Options, execute
from occlint.readers.traces import trace_kind
from occlint.readers.traces.xla import parse_kernel_details
from occlint.readers.traces.xplane import xspace_devices
from tests.conftest import run_occlint
from tests.truth.ncu_reports import launches as ncu_launches

HERE = Path(__file__).resolve().parent.parent / "fixtures" / "traces" / "xla"
TRACE = HERE / "xla_steps.trace.json.gz"
XPLANE = HERE / "xla_steps.xplane.pb"
SCHEMA = Path(__file__).resolve().parent.parent / "docs" / "schema" / \
    "occlint-report.schema.json"


def kernel_events() -> list[dict]:
    with gzip.open(TRACE) as fh:
        events = json.load(fh)["traceEvents"]
    return sorted((e for e in events if "kernel_details" in e.get("args", {})),
                  key=lambda e: e["ts"])


def details(event: dict) -> dict[str, str]:
    """kernel_details split here by hand (not by occlint's parser)."""
    return dict(token.split(":", 1) for token in event["args"]["kernel_details"].split())


def dims(text: str) -> list[int]:
    return [int(v) for v in text.split(",")]


@pytest.fixture(scope="module", params=["trace.json.gz", "xplane.pb alone"])
def doc(request, tmp_path_factory) -> dict:
    """The run on the trace (with its .xplane.pb beside it), and on the .xplane.pb alone:
    both read the same launches, checked against the same truth."""
    if request.param == "trace.json.gz":
        return execute(Options(paths=[str(TRACE)], isolated=True)).doc
    alone = tmp_path_factory.mktemp("xplane") / "vm.xplane.pb"
    shutil.copy(XPLANE, alone)
    return execute(Options(paths=[str(alone)], isolated=True)).doc


def record_of(doc: dict, event: dict) -> dict:
    d, a = details(event), event["args"]
    found = [r for r in doc["launches"] if r["kernel"] == event["name"]
             and r["grid"] == dims(d["grid"]) and r["block"] == dims(d["block"])
             and r["launched_by"]["op"] == a["hlo_op"]
             and r["launched_by"]["module"] == a["hlo_module"]]
    assert len(found) == 1, event["name"]
    return found[0]


def test_recognised_as_xla():
    assert trace_kind(TRACE) == "xla"


def test_every_launch_counted_and_grouped(doc):
    events = kernel_events()
    assert len(events) == 48
    assert doc["inputs"][0]["format"] in ("xla", "xplane")
    assert doc["inputs"][0]["launches"] == len(events)
    shapes = Counter((e["name"], details(e)["grid"], details(e)["block"],
                      e["args"]["hlo_op"]) for e in events)
    assert len(doc["launches"]) == len(shapes)
    for event in events:
        r = record_of(doc, event)
        key = (event["name"], details(event)["grid"], details(event)["block"],
               event["args"]["hlo_op"])
        assert r["count"] == shapes[key]
        assert r["streams"] == ["Stream #14(Compute)"]
    total = sum(e["dur"] for e in events) * 1000
    assert sum(r["total_ns"] for r in doc["launches"]) == pytest.approx(total, abs=20)


def test_resources_from_kernel_details(doc):
    for event in kernel_events():
        d, r = details(event), record_of(doc, event)
        assert r["resources"]["source"] == "trace"
        assert r["resources"]["trace"]["registers"] == int(d["regs"])
        assert r["resources"]["trace"]["static_shared"] == int(d["static_shared"])
        assert r["resources"]["trace"]["dynamic_shared"] == int(d["dynamic_shared"])


def test_device_from_the_xplane_beside_it(doc):
    env = (HERE / "env.txt").read_text()
    jax_said = json.loads(env.strip().splitlines()[-1])
    assert jax_said == {"jax": "0.11.2", "kind": "NVIDIA H100 80GB HBM3", "cores": 132,
                        "cc": "9.0"}
    (device,) = xspace_devices(XPLANE)
    assert (device.name, device.compute_units, device.arch) == (jax_said["kind"], 132, "sm_90")
    for r in doc["launches"]:
        assert r["trace_device"] == jax_said["kind"]
        assert r["device_source"] == "database" and r["arch"] == "sm_90"


def test_occupancy_equals_xla_and_nsight_compute(doc):
    """occlint's occupancy, from the trace's registers and shared memory, is XLA's own
    ``occ_pct`` and Nsight Compute's theoretical occupancy, launch for launch."""
    ncu = ncu_launches(HERE / "xla_steps.ncu.csv.gz")
    events = kernel_events()
    assert len(ncu) == len(events)
    for n, event in zip(ncu, events, strict=True):
        d, r = details(event), record_of(doc, event)
        assert (tuple(dims(d["grid"])), tuple(dims(d["block"]))) == (n["grid"], n["block"])
        assert int(d["regs"]) == n["registers"]
        assert (int(d["static_shared"]), int(d["dynamic_shared"])) == \
            (n["static_shared"], n["dynamic_shared"])
        occupancy = round(100 * r["occupancy"]["occupancy"], 2)
        assert occupancy == float(d["occ_pct"]) == n["theoretical_occupancy"], event["name"]
        assert r["occupancy"]["warps_per_sm"] == n["theoretical_warps"]
        assert round(r["waves"], 2) == n["waves"], event["name"]


def test_grid_rules_fire_on_idle_sms(doc):
    """Launches of fewer blocks than the H100's 132 SMs get LCH102; the fuller ones don't."""
    for event in kernel_events():
        r = record_of(doc, event)
        g = dims(details(event)["grid"])
        assert ("LCH102" in r["finding_codes"]) == (g[0] * g[1] * g[2] < 132), event["name"]


def test_op_and_owner(doc):
    """hlo_module/hlo_op is what launched each group; XLA's own kernels (fusions, transposes) are
    generated code, the cuDNN / cuBLAS kernels of its custom calls are the libraries'."""
    owners = {}
    for event in kernel_events():
        r = record_of(doc, event)
        assert (r["launched_by"]["module"], r["launched_by"]["op"]) == \
            ("jit_f", event["args"]["hlo_op"])
        owners[event["name"]] = (r["owner"]["kind"], r["owner"]["library"])
    assert owners["wrapped_transpose"] == owners["gemm_fusion_dot"] == \
        owners["loop_reduce_fusion"] == ("generated", "XLA")
    assert owners["sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize64x256x32_"
                  "warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"] == \
        ("library", "cuBLAS")
    assert {owners[n] for n in owners if "cudnn" in n} == {("library", "cuDNN")}


def test_json_output_validates():
    run = run_occlint("check", "--format", "json", str(TRACE))
    assert run.code == 0, run.err
    jsonschema.validate(run.json(), json.loads(SCHEMA.read_text()))


def test_cli_text_names_device_and_groups():
    run = run_occlint("check", "--fail-on", "error", str(TRACE))
    assert run.code == 0, run.err
    assert "(xla; 48 launches in 14 groups on NVIDIA H100 80GB HBM3" in run.out
    assert "XLA (generated)" in run.out
    assert "(launched by cudnn-conv.1)" in run.out  # the library's line names the op
    run = run_occlint("check", "--show-all", str(TRACE))
    assert "  <- gemm_fusion_dot in jit_f" in run.out


def test_without_the_xplane_asks_for_device(tmp_path):
    alone = tmp_path / "host.trace.json.gz"
    shutil.copy(TRACE, alone)
    run = run_occlint("check", "--format", "json", str(alone))
    doc = run.json()
    assert doc["inputs"][0]["launches"] == 48
    assert any("pass --device" in n for n in doc["inputs"][0]["notes"])
    assert all(r["status"] == "not-analysed" for r in doc["launches"])
    run = run_occlint("check", "--format", "json", "--device", "h100-sxm", str(alone))
    doc = run.json()
    assert all(r["status"] == "ok" and r["device_source"] == "--device"
               for r in doc["launches"])
    assert any("LCH102" in r["finding_codes"] for r in doc["launches"])


def test_directory_of_a_profile(tmp_path):
    """The profile directory as jax.profiler.trace leaves it: the trace is read once, with
    its device; the .xplane.pb beside it adds no launches and no error."""
    run_dir = tmp_path / "plugins" / "profile" / "2026_11_26_01_03_17"
    run_dir.mkdir(parents=True)
    shutil.copy(TRACE, run_dir / "vm.trace.json.gz")
    shutil.copy(XPLANE, run_dir / "vm.xplane.pb")
    run = run_occlint("check", "--format", "json", str(tmp_path))
    doc = run.json()
    assert run.code == 0 and not doc["errors"], run.err
    assert sum(i.get("launches") or 0 for i in doc["inputs"]) == 48
    assert {r["device_source"] for r in doc["launches"]} == {"database"}


def test_kernel_details_parser():
    assert parse_kernel_details("regs:168 static_shared:0 dynamic_shared:231424 "
                                "grid:3,7,1 block:384,1,1 occ_pct:18.75") == {
        "regs": 168, "static_shared": 0, "dynamic_shared": 231424, "grid": (3, 7, 1),
        "block": (384, 1, 1), "occ_pct": 18.75}
    with pytest.raises(ValueError):
        parse_kernel_details("regs:lots grid:1,1,1 block:32,1,1")


def _rewrite(tmp_path: Path, edit) -> Path:
    with gzip.open(TRACE) as fh:
        trace = json.load(fh)
    edit(trace["traceEvents"])
    out = tmp_path / "bad.trace.json.gz"
    with gzip.open(out, "wt") as fh:
        json.dump(trace, fh)
    return out


def test_bad_records_are_skipped_and_counted(tmp_path):
    def damage(events):
        kernels = [e for e in events if "kernel_details" in e.get("args", {})]
        kernels[0]["args"]["kernel_details"] = "regs:80 grid:0,1,1 block:128,1,1"
        kernels[1]["args"]["kernel_details"] = "regs:x grid:1,1,1 block:128,1,1"
        kernels[2]["args"]["kernel_details"] = ["not", "a", "string"]
    run = run_occlint("check", "--format", "json", "--device", "h100",
                      str(_rewrite(tmp_path, damage)))
    doc = run.json()
    assert doc["inputs"][0]["launches"] == 45
    (error,) = doc["errors"]
    assert "skipped 3 inconsistent launch records" in error["message"]
    assert "grid of 0x1x1 blocks" in error["message"]


def test_cut_short_keeps_what_was_read(tmp_path):
    data = gzip.decompress(TRACE.read_bytes())
    cut = tmp_path / "cut.trace.json.gz"
    cut.write_bytes(gzip.compress(data[:int(len(data) * 0.8)]))  # kernels: the last 40%
    run = run_occlint("check", "--format", "json", "--device", "h100", str(cut))
    doc = run.json()
    assert 0 < doc["inputs"][0]["launches"] < 48
    assert any("cut short" in e["message"] for e in doc["errors"])
    assert run.code == 1


def test_no_gpu_named_and_no_device_is_one_error_line(tmp_path):
    """Without its .xplane.pb the trace names no GPU model: its launches are counted, none
    can be analysed, and one line says so and asks for --device (exit 2)."""
    alone = tmp_path / "alone.trace.json.gz"
    shutil.copy(TRACE, alone)
    run = run_occlint("check", str(alone))
    assert run.code == 2
    (line,) = run.err.splitlines()
    assert line.startswith(f"occlint: error: {alone}: none of its 48 launches could be "
                           "analysed") and "--device" in line
    # not analysed, but still someone's kernels: XLA's fusions, cuBLAS, cuDNN
    doc = run_occlint("check", "--format", "json", str(alone)).json()
    owners = {r["kernel"]: r["owner"] for r in doc["launches"]}
    assert owners["loop_reduce_fusion"]["library"] == "XLA"
    assert all(o is not None for o in owners.values())


def test_not_json_is_one_error_line(tmp_path):
    bad = tmp_path / "bad.trace.json.gz"
    bad.write_bytes(gzip.compress(b'{"traceEvents":[{"ph":"M","name":"process_name",'
                                  b'"args":{"name":"/device:GPU:0"}} nonsense'))
    run = run_occlint("check", str(bad))
    assert run.code == 2
    assert run.err.count("\n") == 1 and run.err.startswith("occlint: error: ")
    assert "Traceback" not in run.err


def test_damaged_xplane_is_an_error_but_launches_are_counted(tmp_path):
    shutil.copy(TRACE, tmp_path / "h.trace.json.gz")
    (tmp_path / "h.xplane.pb").write_bytes(XPLANE.read_bytes()[:3000])
    run = run_occlint("check", "--format", "json", str(tmp_path / "h.trace.json.gz"))
    doc = run.json()
    assert doc["inputs"][0]["launches"] == 48
    assert any("h.xplane.pb" in e["message"] for e in doc["errors"])


@pytest.mark.parametrize("content, says", [
    (b"", "empty file"),
    (b"\x0a\x05\x12\x03/h:", "no GPU plane"),  # one plane, named "/h:"
    (b"\x0a\xff\xff\xff\x7f rest", "not a readable XSpace"),  # a plane longer than the file
    (b"\x0f\x00", "not a readable XSpace"),  # wire type 7
])
def test_xplane_without_gpu_kernels_is_one_error_line(tmp_path, content, says):
    alone = tmp_path / "vm.xplane.pb"
    alone.write_bytes(content)
    run = run_occlint("check", str(alone))
    assert run.code == 2
    assert run.err.count("\n") == 1 and run.err.startswith(f"occlint: error: {alone}: ")
    assert says in run.err, run.err


def test_xplane_cut_short_is_one_error(tmp_path):
    """Cut inside the GPU plane's event lines: the plane's length runs past the file."""
    alone = tmp_path / "vm.xplane.pb"
    alone.write_bytes(XPLANE.read_bytes()[:6000])
    run = run_occlint("check", str(alone))
    assert run.code == 2 and "not a readable XSpace" in run.err


def test_gunzipped_trace_finds_its_xplane(tmp_path):
    (tmp_path / "h.trace.json").write_bytes(gzip.decompress(TRACE.read_bytes()))
    shutil.copy(XPLANE, tmp_path / "h.xplane.pb")
    doc = execute(Options(paths=[str(tmp_path)], isolated=True)).doc
    assert not doc["errors"]
    assert {r["device_source"] for r in doc["launches"]} == {"database"}
    assert sum(r["count"] for r in doc["launches"]) == 48


def test_mutated_profiles_never_raise(tmp_path):
    """benchmarks/fuzz_traces.py's mutations of the trace (text) and the XSpace (binary):
    no exception, one-line errors, quick."""
    import random
    import time

    from benchmarks.fuzz_traces import mutate

    rng = random.Random(19)
    trace, xplane = gzip.decompress(TRACE.read_bytes()), XPLANE.read_bytes()
    (tmp_path / "alone").mkdir()
    for index in range(120):
        (tmp_path / "h.trace.json.gz").write_bytes(
            gzip.compress(mutate(rng, "h.trace.json", trace), compresslevel=1))
        (tmp_path / "h.xplane.pb").write_bytes(mutate(rng, "x.sqlite", xplane))
        (tmp_path / "alone" / "h.xplane.pb").write_bytes(mutate(rng, "x.sqlite", xplane))
        for name in ("h.trace.json.gz", "alone/h.xplane.pb"):  # with / without the other
            start = time.perf_counter()
            doc = execute(Options(paths=[str(tmp_path / name)], isolated=True, jobs=1)).doc
            assert all("\n" not in e["message"] for e in doc["errors"]), index
            assert time.perf_counter() - start < 10, index


def test_xla_layout_is_read_by_the_fast_path():
    """XLA's own compact layout is decoded in batches (no fallback to ijson)."""
    from occlint.readers.traces.xla import _Reader, _scan_xla_layout

    reader = _Reader("t")
    with gzip.open(TRACE) as fh:
        _scan_xla_layout(fh, reader)
    assert reader.collector.launches == 48


@pytest.mark.parametrize("layout", [{"indent": 1}, {"separators": (", ", ": ")},
                                    {"separators": (",", ":"), "sort_keys": True}])
def test_any_json_layout_reads_the_same(tmp_path, layout):
    """Re-serialised (pretty, spaced, keys sorted: the ijson path, or the fast path where
    the layout allows) gives the same launch groups as XLA's own layout."""
    with gzip.open(TRACE) as fh:
        trace = json.load(fh)
    other = tmp_path / "vm.trace.json"
    other.write_text(json.dumps(trace, **layout))
    shutil.copy(XPLANE, tmp_path / "vm.xplane.pb")

    def groups(path):
        doc = execute(Options(paths=[str(path)], isolated=True)).doc
        return sorted((r["kernel"], r["launched_by"]["op"], r["grid"], r["block"], r["count"],
                       r["total_ns"], r["occupancy"]["occupancy"]) for r in doc["launches"])
    assert groups(other) == groups(TRACE)


def test_profile_without_gpu_kernels_is_one_error_line(tmp_path):
    """A TPU or CPU-only profile (the recorded one with its GPU process renamed and its
    kernel events removed): exit 2, one line naming what the profile holds."""
    def tpu(events):
        events[:] = [e for e in events if "kernel_details" not in e.get("args", {})]
        for e in events:
            if e.get("args", {}).get("name") == "/device:GPU:0":
                e["args"]["name"] = "/device:TPU:0"
    run = run_occlint("check", str(_rewrite(tmp_path, tpu)))
    assert run.code == 2
    assert run.err.count("\n") == 1
    assert "no GPU kernel in this XLA profile (processes /device:TPU:0, /host:CPU)" in run.err


@pytest.mark.parametrize("window", [40, 64, 1000])
def test_xplane_read_in_small_windows_reads_the_same(tmp_path, monkeypatch, window):
    """Lines are read a window at a time: events across window ends (and skipped fields
    past them) give the same launches as one window."""
    from occlint.readers.traces import xplane
    from occlint.readers.traces.xla import read_xplane

    def groups():
        read = read_xplane(XPLANE, "x")
        assert not read.errors
        return sorted((g.key.kernel, g.key.op, g.key.grid, g.count, g.total_ns)
                      for g in read.collector.group_list)
    whole = groups()
    monkeypatch.setattr(xplane, "WINDOW", window)
    assert groups() == whole and sum(g[3] for g in whole) == 48
