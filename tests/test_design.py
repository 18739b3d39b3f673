"""Deliberate designs (occlint.judgement.design): no occupancy or tail warning, and why."""

from __future__ import annotations

import json

from tests.conftest import FIXTURES, REPO, run_occlint

CALIBRATION = FIXTURES / "traces/calibration/h100.pt.trace.json.gz"
SOURCE = REPO / "benchmarks/gpu/calibration/kernels.cu"


def _json(*args) -> dict:
    out = run_occlint(*map(str, args), "--format", "json", "--isolated", "--exit-zero")
    assert out.code == 0, out.err
    return json.loads(out.out)


def _group(doc, kernel, grid, block):
    return next(r for r in doc["launches"]
                if r["kernel"] == kernel and r["grid"][0] == grid and r["block"][0] == block)


def test_a_grid_of_the_resident_capacity_is_persistent():
    """132 SMs x 8 blocks of 256 threads: 1,056 blocks, one full wave: no finding against
    the design (issue 29)."""
    r = _group(_json(CALIBRATION), "saxpy_gs", 1056, 256)
    assert r["design"]["kind"] == "persistent"
    assert "132 SMs x 8" in r["design"]["reason"]
    assert r["findings"] == [] and r["saving"] is None


def test_the_source_overrules_the_grid():
    """kernels.cu shows saxpy_gs is a grid-stride loop: not a persistent kernel."""
    r = _group(_json(CALIBRATION, SOURCE), "saxpy_gs", 1056, 256)
    assert r["design"] is None and r["findings"]


def _trace_kernels(path) -> dict:
    """The trace's own kernel events by (name, grid): its grid, shared memory, device."""
    import gzip

    trace = json.loads(gzip.decompress(path.read_bytes()))
    (device,) = trace["deviceProperties"]
    return {(e["name"], tuple(e["args"]["grid"])): e["args"] for e in trace["traceEvents"]
            if e.get("cat") == "kernel"}, device


GRID_TAIL_OCCUPANCY = ("OCC", "LCH003", "LCH101", "LCH102", "LCH103", "LCH104", "LCH105",
                       "LCH106", "LCH107", "LCH108")


def test_no_finding_against_a_design_on_a_fresh_run():
    """The `mixed` run on an H100 (the trace's deviceProperties: 132 SMs). cuBLAS' nvjet
    `tst` kernels, cuDNN's fused attention and CUB's histogram launch a grid of the SMs (or
    16 blocks on each): persistent, no grid, tail or occupancy finding. nvjet `hsh` and
    CUTLASS tiles staging 80-227 KiB of shared memory (the trace's figure) in fewer blocks
    than SMs: pipelines, no occupancy or oversubscription finding (LCH103 was on every one);
    their tile count against the SMs stays, LCH102 on the trace's own grid, with no saving."""
    mixed = FIXTURES / "traces/kineto/mixed.pt.trace.json.gz"
    events, device = _trace_kernels(mixed)
    doc = _json(mixed)
    designed = {r["design"]["kind"]: [] for r in doc["launches"] if r["design"]}
    for r in doc["launches"]:
        if r["design"]:
            designed[r["design"]["kind"]].append(r)
    assert len(designed["persistent"]) == 6 and len(designed["shared-memory-pipeline"]) == 4
    for r in designed["persistent"]:
        args = events[(r["kernel"], tuple(r["grid"]))]
        blocks = args["grid"][0] * args["grid"][1] * args["grid"][2]
        assert blocks % device["numSms"] == 0  # 132 or 2,112: whole SMs' worth
        assert not [f for f in r["findings"] if f["rule"].startswith(GRID_TAIL_OCCUPANCY)]
    for r in designed["shared-memory-pipeline"]:
        args = events[(r["kernel"], tuple(r["grid"]))]
        assert args["shared memory"] >= 64 * 1024
        blocks = args["grid"][0] * args["grid"][1] * args["grid"][2]
        assert not [f for f in r["findings"] if f["rule"].startswith(("OCC", "LCH003",
                                                                      "LCH103"))]
        (tiles,) = [f for f in r["findings"] if f["rule"] == "LCH102"]
        assert (tiles["data"]["grid"], tiles["data"]["units"]) == (blocks, device["numSms"])
        assert tiles["severity"] == "info" and tiles.get("saving") is None


def test_library_tiles_bounded_by_shared_memory_are_pipelines():
    """cuDNN's implicit GEMMs in resnet18 training hold 121 KiB of shared memory per block:
    their 12.5 % occupancy is their design; the findings stay in the JSON, as info."""
    doc = _json(FIXTURES / "traces/kineto/resnet18_train.pt.trace.json.gz")
    pipes = [r for r in doc["launches"]
             if (r["design"] or {}).get("kind") == "shared-memory-pipeline"]
    assert pipes
    for r in pipes:
        # the trace's own figure (Kineto's "shared memory"), and what bounds occupancy
        assert r["resources"]["trace"]["shared_total"] >= 64 * 1024
        assert "shared" in r["occupancy"]["limiters"]
        assert all(f["severity"] == "info" for f in r["findings"])
        assert not {"OCC105", "OCC106", "OCC108", "LCH003", "LCH103"} & set(r["finding_codes"])


def test_a_users_shared_memory_limited_kernel_is_not_a_design():
    """saxpy with 120 KiB of dynamic shared memory is the user's defect, not a tile kernel."""
    doc = _json(CALIBRATION)
    big = [r for r in doc["launches"] if r["kernel"] == "saxpy"
           and r["dynamic_shared_bytes"] >= 100 * 1024]
    assert len(big) == 2
    assert all(r["design"] is None for r in big)
    assert all("OCC106" in r["finding_codes"] for r in big)


def test_collectives_wait_and_save_nothing():
    """HolisticTraceAnalysis' two-rank TorchRec run: NCCL's all-to-all takes most of each
    rank's kernel time, waiting on the other rank. No launch shape shortens that: the group
    is a communication kernel with no saving, and the run's estimate leaves it out."""
    import gzip

    traces = sorted((FIXTURES / "traces/ranks").glob("rank-*.json.gz"))
    doc = _json(*traces, "--device", "a100")
    nccl = [r for r in doc["launches"] if r["owner"]["library"] == "NCCL"]
    events = [e for t in traces for e in json.loads(gzip.decompress(t.read_bytes()))["traceEvents"]]
    names = {e["name"] for e in events
             if e.get("cat") == "kernel" and e["name"].startswith("ncclKernel")}
    assert {r["kernel"] for r in nccl} == names and len(nccl) == 2
    for r in nccl:
        assert r["design"]["kind"] == "communication" and r["saving"] is None
        assert all(f.get("saving") is None for f in r["findings"])
    summary = doc["summary"]["launches"]
    others = sum(r["saving"]["high_ns"] for r in doc["launches"] if r["saving"])
    assert summary["saving_high_ns"] == others
    nccl_ns = sum(r["total_ns"] for r in nccl)
    assert nccl_ns > summary["kernel_time_ns"] / 2 > summary["saving_high_ns"]


def test_a_users_tile_kernel_gets_no_other_block_or_grid():
    """The rocprofv3 fixture's gemm_bf16_kernel (the user's: a tile kernel by its name) holds
    64 KiB of LDS per work-group (the CSV's LDS_Block_Size), which bounds its occupancy: a
    pipeline, with no occupancy finding and no LCH106 from the launch-time model, whose
    other configurations would change its tile (it surfaced as a warning once LCH103 went)."""
    import csv

    trace = FIXTURES / "traces/rocprof/v_new/host1/6161_kernel_trace.csv"
    with trace.open(newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["Kernel_Name"].startswith("gemm_bf16")]
    assert rows and all(int(r["LDS_Block_Size"]) == 64 * 1024 for r in rows)
    for device in ("mi300x", "w7800"):
        doc = _json(trace, "--device", device)
        (r,) = [r for r in doc["launches"] if r["kernel"].startswith("gemm_bf16")]
        assert r["owner"]["kind"] == "user"
        assert r["design"]["kind"] == "shared-memory-pipeline"
        assert not [c for c in r["finding_codes"]
                    if c.startswith(("OCC", "LCH003", "LCH103", "LCH106", "LCH107",
                                     "LCH108"))]
