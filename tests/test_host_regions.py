"""LCH202: functions of the user's that a CUDA graph could capture, and what replaying
them saves (issue 29; docs/validation.md "Functions a graph could capture").

The claims are checked against fixes timed on an H100 without the profiler, eager and
replayed from a graph: the fresh training run (fixtures/traces/fresh/h100: a training step
and smooth()), the profiler-overhead workloads (fixtures/traces/profiler-overhead, whose
with_stack traces set the profiler's share) and a script recorded after the rule's
constants were set (fixtures/traces/regions, benchmarks/gpu/region_run.py: five functions,
three of them capturable, one nested in another, one waiting for the GPU, one busy on it),
each against the recording script's own record of its functions, lines and calls."""

from __future__ import annotations

import json
from array import array
from functools import cache
from pathlib import Path

import pytest

from occlint.analysis.regions import MIN_LAUNCHES, host_regions
from occlint.judgement.cost import PROFILED_HOST_SHARE, region_saving
from occlint.model.launch import HostActivity, StreamTimeline
from occlint.pipeline.run import Options, execute
from occlint.readers.traces.kineto_links import SYNCHRONIZING
from tests.conftest import FIXTURES

FRESH = FIXTURES / "traces/fresh/h100"
REGIONS = FIXTURES / "traces/regions"


@cache
def _doc_json(path: Path) -> str:
    return json.dumps(execute(Options(paths=[str(path)], isolated=True)).doc)


def _doc(path: Path) -> dict:
    return json.loads(_doc_json(path))


def _findings(doc: dict, rule: str) -> list[dict]:
    return [f for r in doc["launches"] for f in r["findings"] if f["rule"] == rule]


def test_fresh_run_names_the_training_step_and_smooth_and_holds_their_graphs():
    truth = json.loads((FRESH / "truth.json").read_text())
    fixes = json.loads((FRESH / "fixes.json").read_text())
    doc = _doc(FRESH / "fresh.pt.trace.json.gz")
    found = {f["data"]["function"]: f for f in _findings(doc, "LCH202")}
    assert set(found) == {"train_step", "smooth"}
    measured = {"train_step": fixes["train_step_ms"] - fixes["train_step_graph_ms"],
                "smooth": fixes["smooth_eager_ms"] - fixes["smooth_graph_ms"]}
    for name, f in found.items():
        d = f["data"]
        assert (d["line"], d["path"]) == (truth["first_lines"][name], truth["script"])
        assert f["severity"] == "warning"
        assert f["source"]["line"] == truth["first_lines"][name]
        assert d["call_low_ns"] <= measured[name] * 1e6 <= d["call_high_ns"], name
    assert found["train_step"]["data"]["calls"] == 3 and found["smooth"]["data"]["calls"] == 1
    # the headline holds what capturing both saves over the calls traced (3 steps, 1 smooth)
    total = 3 * measured["train_step"] + measured["smooth"]
    s = doc["summary"]["launches"]
    assert s["saving_low_ns"] <= total * 1e6 <= s["saving_high_ns"]
    assert s["user_saving_low_ns"] <= total * 1e6 <= s["user_saving_high_ns"]
    # the bursts inside those calls are not counted again: LCH201 is a fact there
    (burst,) = _findings(doc, "LCH201")
    assert burst["severity"] == "info" and burst.get("saving") is None
    assert {p.get("in_region") for p in burst["data"]["parts"]} == {"train_step()", "smooth()"}


def test_fresh_run_text_leads_with_the_functions():
    from occlint.reporters import text

    out = text.render(_doc(FRESH / "fresh.pt.trace.json.gz"), color=False)
    lines = out.splitlines()
    (step,) = [ln for ln in lines if "LCH202 warning" in ln and "train_step()" in ln]
    assert "benchmarks/gpu/fresh_run.py:66: 3 calls, 216 launches each" in step
    assert "elementwise_kernel" not in step  # the function's line, not a kernel's
    assert any(ln.startswith("    launch overhead: the GPU idles") and "train_step(), smooth()"
               in ln and "(LCH202)" in ln for ln in lines)


def _region_cases():
    for run in sorted(p for p in REGIONS.iterdir() if p.is_dir()):
        for options in ("stack", "all"):
            yield pytest.param(run, options, id=f"{run.name}-{options}")


@pytest.mark.parametrize(("run", "options"), _region_cases())
def test_held_out_script_finds_the_capturable_functions(run, options):
    """Recorded after the constants were set: the outer of two nested functions, not the
    one that waits for the GPU (``.item()``), not the one the GPU is busy through."""
    truth = json.loads((run / "truth.json").read_text())
    doc = _doc(run / f"regions-{options}.pt.trace.json.gz")
    found = {f["data"]["function"]: f["data"] for f in _findings(doc, "LCH202")}
    assert set(found) == {"decode_step", "sgd_step", "outer"}  # not inner, log_loss, big_matmul
    for name, d in found.items():
        assert (d["line"], d["path"], d["calls"]) == (truth["first_lines"][name],
                                                     truth["script"], truth["calls"][name])


# measured saving (eager - graph, median) outside the claimed range: the held-out check's
# one miss, on the first run's fresh machine, whose host ran this function's eager calls
# 1.35 times slower than the trace's (docs/validation.md)
MISSES = {("h100", "stack", "decode_step")}


@pytest.mark.parametrize(("run", "options"), _region_cases())
def test_held_out_claims_hold_the_timed_graphs(run, options):
    fixes = json.loads((run / "fixes.json").read_text())
    doc = _doc(run / f"regions-{options}.pt.trace.json.gz")
    for f in _findings(doc, "LCH202"):
        d = f["data"]
        fix = fixes[d["function"]]
        measured = (fix["eager_ms"] - fix["graph_ms"]) * 1e6
        inside = d["call_low_ns"] <= measured <= d["call_high_ns"]
        assert inside is ((run.name, options, d["function"]) not in MISSES), d["function"]


def test_held_out_misses_are_few():
    cases = [(run, o, f["data"]["function"]) for run in REGIONS.iterdir() if run.is_dir()
             for o in ("stack", "all")
             for f in _findings(_doc(run / f"regions-{o}.pt.trace.json.gz"), "LCH202")]
    assert len(cases) == 12 and len(MISSES) == 1


def test_profiler_share_holds_every_measured_call():
    """The low end of PROFILED_HOST_SHARE is below every with_stack workload's eager host
    time over its traced host time (the measurements it was set from)."""
    runs = FIXTURES / "traces/profiler-overhead"
    shares = []
    for run in sorted(p for p in runs.iterdir() if p.is_dir()):
        summary = json.loads((run / "summary.json").read_text())["runs"]
        for workload, timed in summary.items():
            for options in ("stack", "all"):
                doc = _doc(run / f"{workload}-{options}.pt.trace.json.gz")
                for f in _findings(doc, "LCH202"):
                    d = f["data"]
                    host = d["duration_ns"] - d["busy_ns"]
                    shares.append((timed["eager_s"] * 1e9 - d["busy_ns"]) / host)
    assert len(shares) >= 14
    assert PROFILED_HOST_SHARE[0] < min(shares) and max(shares) <= PROFILED_HOST_SHARE[1]


# -- the model, on made-up calls --------------------------------------------------------------

def _timeline(kernels: list[tuple[float, float]], group: int = 0) -> StreamTimeline:
    t = StreamTimeline("0", "7")
    t.starts, t.durations = array("d", [k[0] for k in kernels]), array("d", [k[1] for k in kernels])
    t.groups = array("l", [group] * len(kernels))
    return t


def _activity(calls, syncs=()) -> HostActivity:
    """``calls``: (function, start µs, end µs) on one thread of file user.py."""
    return HostActivity([((1, 1), s, e, fn, "user.py", 10 + i)
                         for i, (fn, s, e) in enumerate(calls)], [((1, 1), t) for t in syncs])


def _short(start_us: float, n: int, every_us: float = 10.0) -> list[tuple[float, float]]:
    """``n`` kernels of 2 µs, one every ``every_us`` (ns)."""
    return [((start_us + i * every_us) * 1000, 2000.0) for i in range(n)]


def test_a_call_that_waits_for_the_gpu_is_no_region():
    kernels = _timeline(_short(0, 40))
    assert host_regions(_activity([("step", 0, 420)]), [kernels])
    assert not host_regions(_activity([("step", 0, 420)], syncs=[200]), [kernels])
    assert host_regions(_activity([("step", 0, 420)], syncs=[500]), [kernels])  # after it


def test_the_outer_function_is_the_region_and_busy_calls_are_none():
    kernels = _timeline(_short(0, 40))
    (r,) = host_regions(_activity([("outer", 0, 420), ("inner", 5, 300)]), [kernels])
    assert r.function == "outer" and r.typical.launches == 40
    assert abs(r.typical.busy_ns - 80_000) < 1e-6  # 40 kernels of 2 µs
    busy = _timeline([(i * 10_000.0, 9_500.0) for i in range(40)])  # 95% busy
    assert not host_regions(_activity([("outer", 0, 420)]), [busy])
    few = _timeline(_short(0, MIN_LAUNCHES - 1))
    assert not host_regions(_activity([("outer", 0, 420)]), [few])


def test_busy_time_is_the_union_over_streams():
    a = _timeline([(0.0, 10_000.0), (50_000.0, 10_000.0), *_short(100, 30)])
    b = _timeline([(5_000.0, 10_000.0)], group=1)  # overlaps a's first kernel by 5 µs
    (r,) = host_regions(_activity([("f", 0, 420)]), [a, b])
    assert abs(r.typical.busy_ns - (15_000 + 10_000 + 60_000)) < 1e-6
    assert r.groups == {0: 32, 1: 1}


def test_region_saving_by_hand():
    # 1 ms call, 100 µs busy, 50 launches; graph nodes 1 µs, a graph launch 10 µs
    low, high = region_saving(1e6, 1e5, 50, 1000.0, 10_000.0)
    host = 9e5
    assert high == pytest.approx(1e5 + PROFILED_HOST_SHARE[1] * host - (1e5 + 1e4))
    assert low == pytest.approx(1e5 + PROFILED_HOST_SHARE[0] * host - (1e5 + 5e4 + 1e4))
    assert region_saving(1e6, 9.9e5, 50, 1000.0, 10_000.0) == (0.0, 0.0)  # busy


@pytest.mark.parametrize(("name", "waits"), [
    ("cudaStreamSynchronize", True), ("cudaDeviceSynchronize", True),
    ("cudaEventSynchronize", True), ("cudaMemcpy", True), ("cuMemcpyDtoH_v2", True),
    ("cudaFree", True), ("hipDeviceSynchronize", True), ("cudaMemcpyAsync", False),
    ("hipMemcpyWithStream", True), ("hipMemcpyDtoH", True), ("hipMemcpyAsync", False),
    ("cudaLaunchKernel", False), ("cuLaunchKernel", False), ("cudaMalloc", False)])
def test_synchronising_calls(name, waits):
    assert bool(SYNCHRONIZING.search(name)) is waits


def test_a_copy_that_waits_in_a_rocm_call_makes_it_no_region():
    """TraceLens' SGLang prefill step on an MI300X (fixtures/traces/kineto/rocm/
    mi300x_sglang_prefill_wait.json.gz): the host sat 493 ms of the 523 ms call in one
    hipMemcpyWithStream (PyTorch's blocking copy on ROCm), the GPU idle meanwhile: a wait
    for the GPU, not launch overhead a graph removes (told "up to 494.57 ms less" before)."""
    path = FIXTURES / "traces/kineto/rocm/mi300x_sglang_prefill_wait.json.gz"
    import gzip

    with gzip.open(path) as fh:
        events = json.load(fh)["traceEvents"]
    (call,) = [e for e in events if "_run_batch_inner" in str(e.get("name"))]
    copies = [e for e in events if e.get("name") == "hipMemcpyWithStream"
              and call["ts"] <= e["ts"] <= call["ts"] + call["dur"]]
    assert max(c["dur"] for c in copies) > 0.9 * call["dur"]
    assert not [f for r in _doc(path)["launches"] for f in r["findings"]
                if f["rule"] == "LCH202"]


def test_fresh_run_html_and_sarif_name_the_functions():
    from occlint.reporters import html, sarif

    doc = _doc(FRESH / "fresh.pt.trace.json.gz")
    page = html.render(doc)
    idle = doc["summary"]["launches"]["capturable_idle_ns"]
    assert f"a graph could capture (LCH202) {idle / 1e6:.2f} ms" in page
    results = sarif.sarif_log(doc)["runs"][0]["results"]
    lines = sorted(r["locations"][0]["physicalLocation"]["region"]["startLine"]
                   for r in results if r["ruleId"] == "LCH202")
    assert lines == [66, 86]


def test_idle_time_of_each_call_as_the_raw_trace_has_it():
    """Each call's busy time recomputed from the trace's own events (json, the union of the
    kernel intervals inside the call), against what LCH202 reports."""
    import gzip

    with gzip.open(FRESH / "fresh.pt.trace.json.gz") as fh:
        events = json.load(fh)["traceEvents"]
    kernels = sorted((e["ts"], e["ts"] + e["dur"]) for e in events if e.get("cat") == "kernel")
    doc = _doc(FRESH / "fresh.pt.trace.json.gz")
    for f in _findings(doc, "LCH202"):
        d = f["data"]
        idle = 0.0
        for e in events:
            if e.get("cat") == "python_function" and e["name"].endswith(f"): {d['function']}"):
                a, b = e["ts"], e["ts"] + e["dur"]
                busy, end = 0.0, a
                for s, t in kernels:  # the union, clipped to the call
                    s, t = max(s, end), min(t, b)
                    if t > s:
                        busy += t - s
                        end = t
                idle += e["dur"] - busy
        assert abs(idle * 1000 - d["idle_ns"]) < 1000 * (d["calls"] + 1), d["function"]


# the library file that holds a kernel (benchmarks/gpu/owner_truth.py, run on the GPU
# machine with the PyTorch that recorded the trace) -> the owner occlint should name
LIBRARY_OWNERS = {"libtorch_cuda": "PyTorch", "libcublasLt": "cuBLAS", "libcublas": "cuBLAS",
                  "libcudnn": "cuDNN", "libnccl": "NCCL"}


def test_fresh_run_owners_match_the_libraries_that_hold_the_kernels():
    """Issue 29: owners right for >= 99 % of kernel time on a fresh training run. The
    truth: which installed library's file holds each kernel's name (its registration
    string, demangled by binutils), independent of occlint's index; a kernel in none was
    compiled at run time (the user's CuPy kernel)."""
    truth = json.loads((FRESH / "owner-truth.json").read_text())["kernels"]
    doc = _doc(FRESH / "fresh.pt.trace.json.gz")
    right = total = 0
    for r in doc["launches"]:
        libs = truth[r["kernel"]]["libraries"]
        owners = {LIBRARY_OWNERS[lib.split(".so")[0]] for lib in libs}
        owner = r["owner"] or {}
        ok = owner.get("kind") == "user" if not owners else owner.get("library") in owners
        right += r["total_ns"] * ok
        total += r["total_ns"]
    assert right / total >= 0.99
