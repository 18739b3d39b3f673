"""Saving ranges against fixes timed on GPUs (issue 18; docs/validation.md).

fixtures/traces/calibration/ holds, per GPU, the PyTorch-profiler trace of 36 defective
launches and the times of each defect and of its fix, measured with CUDA events by
benchmarks/gpu/calibration/calibrate.py. occlint reads the trace with the suite's source
and its ranges are scored against the measured savings (benchmarks/gpu/calibration/score.py).
"""

from __future__ import annotations

import json

import pytest

from benchmarks.gpu.calibration.score import FAMILIES, _group, occlint_json, score, spearman
from tests.conftest import FIXTURES, run_occlint

HERE = FIXTURES / "traces/calibration"
GPUS = ("h100", "h200")


@pytest.fixture(scope="module", params=GPUS)
def scored(request):
    gpu = request.param
    return gpu, score(HERE / f"{gpu}.calibration.json", HERE / f"{gpu}.pt.trace.json.gz")


def _pairs(gpu: str) -> list[dict]:
    return json.loads((HERE / f"{gpu}.calibration.json").read_text())["pairs"]


@pytest.mark.parametrize("gpu", GPUS)
def test_the_measurements_are_what_the_suite_claims(gpu):
    """At least 30 pairs, every rule family with an estimate covered, every variant checked
    against the reference, each defect and fix timed 45 times."""
    doc = json.loads((HERE / f"{gpu}.calibration.json").read_text())
    pairs = doc["pairs"]
    assert len(pairs) >= 30
    assert {p["finding"] for p in pairs} == set(FAMILIES)
    assert doc["env"]["gpu"].startswith("NVIDIA H") and doc["env"]["sms"] == 132
    for p in pairs:
        r = p["results"]
        assert r["max_relative_error"] == 0.0, p["id"]
        assert r["saving"] == pytest.approx(1 - r["fix_ms"] / r["defect_ms"])
        # relative standard deviation of the timings; launch overhead is the CPU's (one
        # descheduled launch loop is an outlier): its medians only
        if p["finding"] != "LCH201":
            assert r["defect_spread"] < 0.08 and r["fix_spread"] < 0.08, p["id"]


@pytest.mark.parametrize("gpu", GPUS)
def test_every_defect_is_a_launch_group_of_the_trace(gpu):
    doc = occlint_json(HERE / f"{gpu}.pt.trace.json.gz")
    for p in _pairs(gpu):
        g = _group(doc, p)
        assert g is not None, p["id"]
        assert g["owner"] == {"kind": "user", "library": None, "basis": "default"}


# The pairs are priced by the launch-time model (issue 28, docs/validation.md): the
# per-rule shares it replaced were fitted on these pairs and met 90 % / 15 points / 0.8;
# the model, fitted on other kernels, holds what follows (and the old targets are kept as
# strict expected failures, so that meeting them again shows).
# The H200 is measured since seed 31 (device_db/launch_model.toml); as a derived device its
# ranges were a third wider (the spread of a derived device) and held for 89 %.
# (H100 inside: 0.722 until a loop's first element per thread drew the element curve, 0.694
# since; widths 0.19-0.21, Spearman 0.77 on both cards)
# (the H200's oversub-1, 54 % saved, warned until a copy's latency counted its loads only:
# claimed 1.5-24 % since, an info; its claim missed the measured saving either way)
# (since a loop's loads in flight are what the compiler keeps, loop_depth.py: inside 0.944
# and 0.917 against 0.889 and 0.861, widths 0.205 and 0.215, Spearman 0.88 and 0.87, 74 %
# of the pairs worth 10 % warned against 70 %)
# (since the element curve is the blocks' of 8 warps or fewer: the H200's warp-3 claims
# 0-3.4 % for 5.2 % saved, 32 of 36 inside, and the H100's Spearman 0.878 -> 0.869; the
# held-out runs' claims 1,542 -> 1,569 inside, the zoo's 276 -> 288)
NOW = {"h100": {"inside": 0.94, "width": 0.21, "spearman": 0.86, "warned": 0.73},
       "h200": {"inside": 0.88, "width": 0.22, "spearman": 0.86, "warned": 0.73}}


def test_measured_savings_lie_in_the_ranges(scored):
    gpu, result = scored
    assert result["inside"] >= NOW[gpu]["inside"], [r for r in result["rows"]
                                                    if not r["inside"]]


def test_ranges_are_no_wider_than_the_models_error(scored):
    gpu, result = scored
    assert result["median_width"] <= NOW[gpu]["width"]


def test_midpoints_rank_like_the_measurements(scored):
    gpu, result = scored
    assert result["spearman"] >= NOW[gpu]["spearman"]


@pytest.mark.xfail(strict=True, reason="issue 28: the launch-time model's ranges are 21-22 "
                                       "points wide on these pairs (its error on kernels it "
                                       "was not fitted on); they hold for 92-94 %")
def test_the_per_rule_targets_of_issue_18(scored):
    _, result = scored
    assert result["inside"] >= 0.9 and result["median_width"] <= 0.15
    assert result["spearman"] >= 0.8
    worth = [r for r in result["rows"] if r["measured"] >= 0.1]
    assert sum(r["severity"] == "warning" for r in worth) >= len(worth) * 0.6


def test_no_warning_where_the_fix_saves_under_two_percent(scored):
    _, result = scored  # the H200's occupancy-block-2 warned (4.9-30 %, saves 1.6 %) until
    # one element per thread drew the element curve
    assert result["false_warnings"] == []


def test_the_pairs_worth_fixing_warn(scored):
    """Not everything was demoted: the pairs whose fix saves 10 % or more mostly warn."""
    gpu, result = scored
    worth = [r for r in result["rows"] if r["measured"] >= 0.1]
    assert sum(r["severity"] == "warning" for r in worth) >= len(worth) * NOW[gpu]["warned"]


def test_without_the_source_the_ranges_widen_and_do_not_warn():
    """Without kernels.cu occlint cannot tell memory- from compute-bound, nor a grid-stride
    loop from one element per thread: the rule's own suggestion is priced from 0 (info).
    Nor can it tell whether 50 KiB of dynamic shared memory follow the block (a tile, which
    a block of other threads with the same bytes could overrun): the model keeps the block,
    and the finding claims no saving of its own. A kernel slower than every reading the
    model has (fma_chain's long chain) is not modelled: its findings keep the rules' own
    shares, from no saving up."""
    out = run_occlint(str(HERE / "h100.pt.trace.json.gz"), "--format", "json", "--isolated",
                      "--exit-zero")
    assert out.code == 0, out.err
    doc = json.loads(out.out)

    def lch003(kernel: str) -> tuple[dict, dict]:
        group = next(g for g in doc["launches"] if g["kernel"] == kernel
                     and g["dynamic_shared_bytes"] == 50 * 1024)
        return group, next(f for f in group["findings"] if f["rule"] == "LCH003")

    smem, f = lch003("saxpy")
    assert f["severity"] == "info" and f.get("saving") is None
    (priced,) = f["data"]["priced"]
    assert priced["saving"]["low"] == 0 and priced["saving"]["high"] > 0.25
    assert "no source" in priced["saving"]["basis"]
    assert any("shared memory follows the block" in u for u in smem["model"]["unknown"])
    # what the advice says: not that nothing is faster, but that no other block was priced
    assert "keep it" not in f["advice"] and "no other block is priced" in f["advice"]
    chain, f = lch003("fma_chain")
    assert chain.get("model") is None and f["severity"] == "info"
    assert f["saving"]["low"] == 0 and "from no saving up" in f["saving"]["basis"]


def test_spearman_of_known_orders():
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1)
    assert spearman([1, 1, 2], [1, 1, 2]) == pytest.approx(1)
