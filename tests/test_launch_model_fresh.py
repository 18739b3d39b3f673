"""The launch-time model on a suite it has never seen (issue 28): seed 29 of the held-out
generator (fixtures/traces/heldout-29: suite.json, kernels.cu; h100/: the sweep on an H100,
benchmarks/gpu/heldout/sweep.py --suite), drawn and timed after every constant of the model
was fitted on seed 28's fit half. None of its kernels was looked at before the first score
(docs/validation.md, "A fresh suite"): all of it is a test set. The issue's targets are
checked on every split; what holds is asserted, what does not is a strict xfail."""

from __future__ import annotations

import json
from functools import cache

import pytest

from benchmarks.gpu.heldout import score
from tests.conftest import FIXTURES

RUN = FIXTURES / "traces/heldout-29/h100"
SPLITS = ("fit", "score")  # both unseen here; the families apart below


@cache
def _rows_json(facts: str | None) -> str:
    doc = score.occlint_json(RUN / "heldout.pt.trace.json.gz", facts)
    return json.dumps(score.rows(RUN, facts, doc=doc))


def _targets(split: str, facts: str | None = "source") -> dict:
    rows = json.loads(_rows_json(facts))
    return score.targets([r for r in rows if r["split"] == split])


def test_the_suite_is_the_generators_for_seed_29(tmp_path):
    from benchmarks.gpu.heldout import generate

    generate.main(["--seed", "29", "--out", str(tmp_path)])
    for name in ("suite.json", "kernels.cu"):
        assert (tmp_path / name).read_bytes() == (RUN.parent / name).read_bytes()


@pytest.mark.parametrize("split", SPLITS)
def test_advice_beats_the_habit_and_is_never_slower(split):
    t = _targets(split)
    assert t["unmeasured"] == [] and t["slower"] == []
    assert t["advised_vs_best"] >= 0.95 and t["advised_vs_best"] > t["habit_vs_best"] + 0.07


@pytest.mark.parametrize("split", SPLITS)
def test_claims_rank_like_the_best_and_never_warn_for_nothing(split):
    t = _targets(split)
    assert t["spearman"] >= 0.9 and t["false_warnings"] == []


@pytest.mark.xfail(strict=True, reason="issue 28: on the fresh suite the advice reaches 0.973 "
                                       "and 0.959 of the best (target 0.97 on each)")
def test_advice_reaches_097_of_the_best_on_both_halves():
    assert all(_targets(s)["advised_vs_best"] >= 0.97 for s in SPLITS)


@pytest.mark.xfail(strict=True, reason="issue 28: 85 % and 89 % of the claims hold the "
                                       "measured saving on the fresh suite (target 90 %)")
def test_nine_claims_in_ten_hold():
    assert all(_targets(s)["inside"] >= 0.9 for s in SPLITS)


@pytest.mark.xfail(strict=True, reason="issue 28: ranges 24-27 points wide at the median "
                                       "(target 15); 4 launches a half saving >= 10 % unwarned")
def test_ranges_narrow_and_every_ten_percent_warned():
    assert all(_targets(s)["median_width"] <= 0.15 and not _targets(s)["missed"]
               for s in SPLITS)


def test_from_the_trace_alone_never_slower_and_mostly_inside():
    for split in SPLITS:
        t = _targets(split, None)
        assert t["slower"] == [] and t["inside"] >= 0.8


@pytest.mark.parametrize("split", SPLITS)
def test_claims_beat_nsight_computes_estimates_on_the_same_launches(split):
    """Nsight Compute profiled the same defective launches (h100/ncu.txt.gz)."""
    t = _targets(split)
    assert t["within_10"] >= t["nsight_within_10"] + 0.3
    assert t["spearman"] > t["nsight_spearman"]
