"""PyTorch profiler (Kineto) traces recorded on an H100 against Nsight Compute on the same
programs (fixtures/traces/kineto, recorded by benchmarks/traces/device_record.sh).

The truth is Nsight Compute's per-launch report (``Theoretical Active Warps per SM``,
``Waves Per SM`` and its rules), parsed by tests/truth/ncu_reports.py, and the trace itself
read with the standard library's json. The ncu run and the traced run are two runs of the same
deterministic program: launch i of one is launch i of the other (checked below).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from occlint.analysis.launches import signature_key
from occlint.pipeline.run import Options, execute
from tests.truth.ncu_reports import launches as ncu_launches

HERE = Path(__file__).resolve().parent.parent / "fixtures" / "traces" / "kineto"
WORKLOADS = ["raw_odd", "resnet18_infer", "resnet18_train", "transformer_compiled"]

# Nsight Compute's rules that occlint reproduces from static data, and the finding for each.
# ("two-blocks-per-sm-with-barriers" compares with the *measured* blocks per SM: not static.)
RULE_FINDING = {
    "block-not-warp-multiple": "LCH001",
    "grid-smaller-than-sms": "LCH102",
    "partial-wave": "LCH105",
    "theoretical-occupancy": "OCC108",
}


def trace_kernels(workload: str) -> list[dict]:
    with gzip.open(HERE / f"{workload}.pt.trace.json.gz") as fh:
        events = json.load(fh)["traceEvents"]
    return sorted((e for e in events if e.get("cat") == "kernel"), key=lambda e: e["ts"])


@pytest.fixture(scope="module")
def documents() -> dict[str, dict]:
    return {w: execute(Options(paths=[str(HERE / f"{w}.pt.trace.json.gz")],
                               isolated=True)).doc for w in WORKLOADS}


def record_of(doc: dict, event: dict) -> dict:
    a = event["args"]
    found = [r for r in doc["launches"] if r["kernel"] == event["name"]
             and r["grid"] == a["grid"] and r["block"] == a["block"]
             and r["resources"]["trace"]["registers"] == a["registers per thread"]
             and r["resources"]["trace"]["shared_total"] == a["shared memory"]]
    assert len(found) == 1, event["name"]
    return found[0]


def pairs(workload: str):
    ncu = ncu_launches(HERE / f"{workload}.ncu.csv.gz")
    kineto = trace_kernels(workload)
    assert len(ncu) == len(kineto)
    return list(zip(ncu, kineto, strict=True))


@pytest.mark.parametrize("workload", WORKLOADS)
def test_runs_line_up(workload):
    """The profiled run and the traced run launched the same kernels in the same order."""
    for n, k in pairs(workload):
        a = k["args"]
        assert (tuple(a["grid"]), tuple(a["block"])) == (n["grid"], n["block"])
        assert a["registers per thread"] == n["registers"]
        assert a["shared memory"] == n["static_shared"] + n["dynamic_shared"]


@pytest.mark.parametrize("workload", WORKLOADS)
def test_occupancy_and_waves_equal_nsight_compute(documents, workload):
    doc = documents[workload]
    for n, k in pairs(workload):
        r = record_of(doc, k)
        assert r["occupancy"]["warps_per_sm"] == n["theoretical_warps"], (k["name"], n["id"])
        assert round(100 * r["occupancy"]["occupancy"], 2) == n["theoretical_occupancy"]
        assert round(r["waves"], 2) == n["waves"], (k["name"], n["id"])


@pytest.mark.parametrize("workload", WORKLOADS)
def test_findings_match_nsight_compute_rules(documents, workload):
    """Every launch Nsight Compute's LaunchConfiguration / TheoreticalOccupancy rules flag
    carries the matching finding, and no other launch does, except the findings against a
    deliberate design, which occlint does not raise (issue 29: a persistent kernel's
    occupancy and waves, a shared-memory pipeline's occupancy); the time-at-stake fraction
    is Nsight Compute's estimated speedup."""
    from occlint.judgement.design import moot

    doc = documents[workload]
    for n, k in pairs(workload):
        r = record_of(doc, k)
        codes = set(r["finding_codes"])
        for kind, code in RULE_FINDING.items():
            if moot(r["design"], code):
                assert code not in codes, (k["name"], n["id"], kind)
                continue
            assert (kind in n["rules"]) == (code in codes), (k["name"], n["id"], kind)
            if kind in n["rules"] and kind in n["speedups"]:
                f = next(f for f in r["findings"] if f["rule"] == code)
                assert f["launch"]["lost_fraction"] * 100 == pytest.approx(
                    n["speedups"][kind], abs=0.01), (k["name"], code)


def test_every_rule_kind_is_exercised():
    kinds = set()
    for w in WORKLOADS:
        for n in ncu_launches(HERE / f"{w}.ncu.csv.gz"):
            kinds |= n["rules"]
    assert set(RULE_FINDING) <= kinds


def test_kineto_estimate_is_not_theoretical_occupancy(documents):
    """Kineto's 'est. achieved occupancy %' reads 0 for opt-in shared-memory kernels where
    Nsight Compute's theoretical occupancy is not (launches.md §1)."""
    zero = []
    for w in WORKLOADS:
        for n, k in pairs(w):
            if k["args"]["est. achieved occupancy %"] == 0 and n["theoretical_occupancy"] > 0 \
                    and n["static_shared"] + n["dynamic_shared"] > 48 * 1024:
                zero.append((w, k))
    assert zero
    for w, k in zero:
        r = record_of(documents[w], k)
        assert r["occupancy"]["occupancy"] > 0


def test_device_from_the_trace(documents):
    doc = documents["raw_odd"]
    assert {r["device"] for r in doc["launches"]} == {"NVIDIA H100 80GB HBM3 (SXM5)"}
    assert {r["device_source"] for r in doc["launches"]} == {"database"}
    assert {r["trace_device"] for r in doc["launches"]} == {"NVIDIA H100 80GB HBM3"}


def test_groups_counts_and_durations(documents):
    doc = documents["raw_odd"]
    kernels = trace_kernels("raw_odd")
    assert sum(r["count"] for r in doc["launches"]) == len(kernels) == 129
    assert doc["summary"]["launches"]["launches"] == 129
    for r in doc["launches"]:
        mine = [k for k in kernels if k["name"] == r["kernel"] and k["args"]["grid"] == r["grid"]
                and k["args"]["block"] == r["block"]]
        assert r["count"] == len(mine)
        assert r["total_ns"] == round(sum(k["dur"] for k in mine) * 1000)
        assert r["max_ns"] == round(max(k["dur"] for k in mine) * 1000)
    gamma = [r for r in doc["launches"] if r["kernel"].startswith("gamma") and r["block"][0] == 100]
    assert gamma[0]["count"] == 3
    bitonic = [r for r in doc["launches"] if r["kernel"].startswith("bitonic")]
    assert bitonic[0]["count"] == 120


def test_ranked_by_saving_then_time_at_stake(documents):
    """Launch groups come in the order of what their best fix would save (the midpoint of
    its range), then of the Nsight-style time at stake."""
    for doc in documents.values():
        keys = [(((r["saving"] or {}).get("low_ns", 0) + (r["saving"] or {}).get("high_ns", 0)),
                 r["time_at_stake_ns"]) for r in doc["launches"]]
        assert keys == sorted(keys, reverse=True)
        for r in doc["launches"]:
            known = [f["launch"]["time_at_stake_ns"] for f in r["findings"]
                     if f["launch"]["time_at_stake_ns"] is not None and f["rule"] != "LCH201"]
            assert r["time_at_stake_ns"] == max(known, default=0)


def test_launch_overhead_on_the_bitonic_sort(documents):
    """120 bitonic launches of ~1.2 µs with gaps of about the same (measured in the trace)."""
    doc = documents["raw_odd"]
    findings = [f for r in doc["launches"] for f in r["findings"] if f["rule"] == "LCH201"]
    assert len(findings) == 1
    f = findings[0]
    assert f["kernel"].startswith("bitonic_step")
    bitonic = [k for k in trace_kernels("raw_odd") if k["name"].startswith("bitonic")]
    assert f["data"]["launches"] >= 120
    mean = sum(k["dur"] for k in bitonic) / len(bitonic) * 1000
    assert f["data"]["mean_ns"] == pytest.approx(mean, rel=0.25)
    assert 0.3 < f["data"]["idle_fraction"] < 0.7
    assert "graph" in f["advice"]
    assert f["data"]["launches"] * f["data"]["mean_ns"] == pytest.approx(f["data"]["busy_ns"])
    doc_idle = doc["summary"]["launches"]["launch_overhead_idle_ns"]
    assert doc_idle == round(f["data"]["idle_ns"])


def test_launch_overhead_of_eager_inference(documents):
    """Eager ResNet-18 inference at batch 8: the GPU idles between most kernels (the whole
    stream's idle share, from the trace, bounds the finding's)."""
    doc = documents["resnet18_infer"]
    found = [f for r in doc["launches"] for f in r["findings"] if f["rule"] == "LCH201"]
    assert len(found) == 1
    kernels = trace_kernels("resnet18_infer")
    span = kernels[-1]["ts"] + kernels[-1]["dur"] - kernels[0]["ts"]
    idle_share = 1 - sum(k["dur"] for k in kernels) / span
    assert idle_share > 0.5
    assert 0.5 < found[0]["data"]["idle_fraction"] <= idle_share + 0.01


def test_joined_with_the_binary():
    """With the cubin of the raw kernels in the run, launches use its resources: ptxas's
    registers (CUPTI reports at least 16: ptxas's 10 and 12 read 16), and no disagreement
    is reported."""
    doc = execute(Options(paths=[str(HERE / "raw_odd.pt.trace.json.gz"),
                                 str(HERE / "odd_launches.sm_90.cubin")], isolated=True)).doc
    ptxas = (HERE / "odd_launches.sm_90.ptxas.txt").read_text()
    import re

    used = dict(re.findall(r"Function properties for (\w+)\n.*?Used (\d+) registers", ptxas,
                           re.S))
    assert len(used) == 5
    for r in doc["launches"]:
        assert r["resources"]["source"] == "binary"
        k = doc["kernels"][r["kernel_record"]]
        assert signature_key(k["demangled"]) == signature_key(r["kernel"])
        assert k["resources"]["registers"] == int(used[k["name"]])
        assert r["resources"]["trace"]["registers"] == max(int(used[k["name"]]), 16)
        assert r["mismatches"] == [] and "TRC101" not in r["finding_codes"]
    alone = execute(Options(paths=[str(HERE / "raw_odd.pt.trace.json.gz")],
                            isolated=True)).doc
    occ = {(r["kernel"], tuple(r["grid"])): r["occupancy"]["warps_per_sm"]
           for r in alone["launches"]}
    for r in doc["launches"]:
        assert r["occupancy"]["warps_per_sm"] == occ[(r["kernel"], tuple(r["grid"]))]


def test_trace_binary_disagreement(tmp_path):
    with gzip.open(HERE / "raw_odd.pt.trace.json.gz") as fh:
        text = fh.read().decode()
    text = text.replace('"registers per thread": 16', '"registers per thread": 40', 1)
    trace = tmp_path / "changed.json"
    trace.write_text(text)
    doc = execute(Options(paths=[str(trace), str(HERE / "odd_launches.sm_90.cubin")],
                          isolated=True)).doc
    flagged = [r for r in doc["launches"] if "TRC101" in r["finding_codes"]]
    assert len(flagged) == 1
    assert flagged[0]["mismatches"][0]["field"] == "registers"
    assert flagged[0]["mismatches"][0]["trace"] == 40


def test_any_json_layout_reads_the_same(tmp_path, documents):
    """A trace re-serialised (minified, other layout) goes through ijson: same launches."""
    with gzip.open(HERE / "raw_odd.pt.trace.json.gz") as fh:
        data = json.load(fh)
    trace = tmp_path / "minified.json"
    trace.write_text(json.dumps(data, separators=(",", ":")))
    doc = execute(Options(paths=[str(trace)], isolated=True)).doc
    strip = [{k: v for k, v in r.items() if k not in ("trace", "findings")}
             for r in documents["raw_odd"]["launches"]]
    assert [{k: v for k, v in r.items() if k not in ("trace", "findings")}
            for r in doc["launches"]] == strip


@pytest.mark.parametrize("window", [None, 4096], ids=["window", "small-windows"])
@pytest.mark.parametrize("cut", [0.3, 0.7, 0.999])
def test_truncated_trace_keeps_what_was_read(tmp_path, monkeypatch, cut, window):
    """A crashed run's trace: the launches before the cut are counted and analysed on the
    device its head describes (libkineto writes deviceProperties before the events), read
    in one window of the file's mapping or in many."""
    if window:
        from occlint.readers.traces import kineto

        monkeypatch.setattr(kineto, "MAPPED_WINDOW", window)
    with gzip.open(HERE / "resnet18_infer.pt.trace.json.gz") as fh:
        data = fh.read()
    assert data.index(b'"deviceProperties"') < data.index(b'"traceEvents"')
    trace = tmp_path / "crashed.pt.trace.json"
    trace.write_bytes(data[:int(len(data) * cut)])
    out = execute(Options(paths=[str(trace)], isolated=True))
    doc = out.doc
    before = data[:int(len(data) * cut)].count(b'"cat": "kernel"')
    assert len(doc["errors"]) == 1
    assert "cut short" in doc["errors"][0]["message"]
    assert doc["summary"]["launches"]["launches"] in (before, before - 1)
    assert {r["trace_device"] for r in doc["launches"]} == {"NVIDIA H100 80GB HBM3"}
    assert all(r["occupancy"] is not None for r in doc["launches"])
    if before > 1:
        assert out.exit_code != 2


def test_launches_without_a_device_are_one_error(tmp_path):
    """A trace whose device is described nowhere (its deviceProperties removed) and no
    --device: the launches are counted, none analysed, one error says so: exit 2."""
    with gzip.open(HERE / "resnet18_infer.pt.trace.json.gz") as fh:
        data = json.load(fh)
    del data["deviceProperties"]
    trace = tmp_path / "nodevice.pt.trace.json"
    trace.write_text(json.dumps(data))
    out = execute(Options(paths=[str(trace)], isolated=True))
    launches = sum(e.get("cat") == "kernel" for e in data["traceEvents"])
    assert [e["message"] for e in out.doc["errors"]] == [
        f"none of its {launches} launches could be analysed: unknown device: the trace does "
        "not describe it and --device names none of its vendor (name it: --device a100, h100, "
        "mi300x, ...; `occlint devices` lists them)"]
    assert out.exit_code == 2


def test_mixed_with_binaries_and_directories(tmp_path):
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "run.pt.trace.json.gz").write_bytes(
        (HERE / "raw_odd.pt.trace.json.gz").read_bytes())
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "k.cubin").write_bytes((HERE / "odd_launches.sm_90.cubin").read_bytes())
    (tmp_path / "notes.json").write_text('{"not": "a trace"}')
    doc = execute(Options(paths=[str(tmp_path)], isolated=True)).doc
    assert len(doc["kernels"]) == 5
    assert doc["summary"]["launches"]["launches"] == 129
    assert all(r["resources"]["source"] == "binary" for r in doc["launches"])
    assert doc["errors"] == []


def test_joined_with_a_triton_cache(documents):
    """The compiled transformer block's Triton kernels, with the Triton cache of the same
    run: a cache holds several variants of one kernel name (autotuning, two processes); each
    launch is joined to the variant that ran — the one whose registers (cuobjdump's REG;
    CUPTI reads at least 16), launch bound and shared memory agree with the launch — with
    no disagreement and the same occupancy as Nsight Compute's."""
    import re

    cache = HERE / "triton-cache"
    report = (HERE / "triton-cache.cuobjdump.txt").read_text()
    regs = {m[0]: int(m[1]) for m in re.findall(
        r"== triton-cache/(\S+)\.cubin\n Function \S+:\n  REG:(\d+)", report)}
    assert len(regs) == len(list(cache.glob("*/*.cubin"))) == 21
    doc = execute(Options(paths=[str(HERE / "transformer_compiled.pt.trace.json.gz"),
                                 str(cache)], isolated=True)).doc
    triton = [r for r in doc["launches"] if r["kernel"].startswith("triton_")]
    assert len(triton) == 9
    for r in triton:
        assert r["resources"]["source"] == "binary" and r["mismatches"] == []
        assert not {"TRC101", "LCH002"} & set(r["finding_codes"])
        k = doc["kernels"][r["kernel_record"]]
        variant = str(Path(k["file"]).relative_to(cache).with_suffix(""))
        assert r["resources"]["trace"]["registers"] == max(regs[variant], 16)
    alone = documents["transformer_compiled"]
    for n, k in pairs("transformer_compiled"):
        if k["name"].startswith("triton_"):
            joined = record_of(doc, k)
            assert joined["occupancy"]["warps_per_sm"] == n["theoretical_warps"]
            assert record_of(alone, k)["occupancy"] == {
                **record_of(alone, k)["occupancy"], "warps_per_sm": n["theoretical_warps"]}
