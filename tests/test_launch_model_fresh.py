"""The launch-time model on suites drawn after it was fitted (issue 28; docs/validation.md,
"Fresh suites"). Each is a seed of the held-out generator (fixtures/traces/heldout-S:
suite.json, kernels.cu) swept on a GPU (h100/, h200/: benchmarks/gpu/heldout/sweep.py
--suite). The model's constants are fitted on the pooled fit halves of seeds 28, 29 and 30
(benchmarks/gpu/heldout/fit.py); the score halves of 29 and 30 and all of seeds 31 (on an
H100 and on an H200) and 32 were never fitted on. Seed 31 was drawn and timed after the
last constant was fixed; the two readings of atomics-bound launches were added after
seed 31 was scored, and seed 32 drawn and timed after that: every split of it is a test
set for the model as it is. Seeds 33-36 were each drawn and timed before the model they
are scored with was settled (35 and 36: the model of 42ece91, unchanged since). Seed 40
was drawn and timed on an H200 after the loops' control instructions were counted and
before the model with them was scored on it; seed 41 on an H200 after one element per
thread drew the element curve and before that model was scored on it; seed 42 on an H200
after a loop's first element per thread drew it too, before that model was scored; seed
43 on an H200 after that, to score the model as it stood; seed 44 on an H200 after a
thread's atomic after its loop was let drain beside other threads' work, before that
model was scored; seed 45 on an H200 after a launch whose predicted time misses its
traced one was planned with the traced time too (with its source), before that model was
scored; seed 46 on an H200 to judge a change then not kept (a 2-D row's partial sector
read once from DRAM): it scores the model as it stands; seed 47 on an H200 after the
model's findings were split by what binds (LCH107, LCH108), the model itself unchanged;
seeds 52 and 53 on an H200 after the block starts got their own overlap's p, scored once
against that model; seed 54 on an H200 at the end of that stop, the model unchanged.

The issue's targets are checked on every run: what holds is asserted, what does not is a
strict xfail naming the run, so that meeting it shows."""

from __future__ import annotations

import json
import math
import statistics
from functools import cache

import pytest

from benchmarks.gpu.heldout import score
from tests.conftest import FIXTURES

TRACES = FIXTURES / "traces"
# run -> (its seed, the splits no constant was fitted on)
RUNS = {"heldout-29/h100": (29, ("score",)), "heldout-30/h100": (30, ("score",)),
        "heldout-31/h100": (31, ("fit", "score")), "heldout-31/h200": (31, ("fit", "score")),
        "heldout-32/h100": (32, ("fit", "score")), "heldout-33/h100": (33, ("fit", "score")),
        "heldout-34/h100": (34, ("fit", "score")), "heldout-35/h100": (35, ("fit", "score")),
        "heldout-36/h100": (36, ("fit", "score")), "heldout-37/h100": (37, ("fit", "score")),
        "heldout-38/h100": (38, ("fit", "score")), "heldout-38/h200": (38, ("fit", "score")),
        "heldout-39/h100": (39, ("fit", "score")), "heldout-40/h200": (40, ("fit", "score")),
        "heldout-41/h200": (41, ("fit", "score")), "heldout-42/h200": (42, ("fit", "score")),
        "heldout-43/h200": (43, ("fit", "score")), "heldout-44/h200": (44, ("fit", "score")),
        "heldout-45/h200": (45, ("fit", "score")), "heldout-46/h200": (46, ("fit", "score")),
        "heldout-47/h200": (47, ("fit", "score")), "heldout-48/h200": (48, ("fit", "score")),
        "heldout-49/h200": (49, ("fit", "score")), "heldout-50/h200": (50, ("fit", "score")),
        "heldout-51/h200": (51, ("fit", "score")), "heldout-52/h200": (52, ("fit", "score")),
        "heldout-53/h200": (53, ("fit", "score")), "heldout-54/h200": (54, ("fit", "score"))}
CASES = [(run, split) for run, (_, splits) in RUNS.items() for split in splits]
# the issue's targets (with the kernels' source) a run's split does not meet yet
ALL = {f"{r}:{s}" for r, s in CASES}
UNMET = {
    # heldout-33/h100's and heldout-48/h200's score halves met it until the element curve
    # was the blocks' of 8 warps or fewer (0.967, 0.968), heldout-47's since
    # heldout-41/h200's and heldout-48/h200's score halves met it since a loop whose work
    # the trace leaves open is advised by the least worst ratio over that span
    # heldout-53/h200's score half (0.969 since a loop's loads in flight were what the
    # compiler keeps) since a grid-stride loop's blocks past its last element add their
    # starts (loop_empty)
    # heldout-33/h100's score half and heldout-39/h100's fit half since a loop's short
    # blocks pay their stragglers' tail (timing.TAIL_PASSES)
    "advised 0.97": {"heldout-31/h100:score"},
    "inside 90 %": {"heldout-35/h100:score"},
    "width 15 points": ALL,
    # met on heldout-32/h100's and heldout-48/h200's fit halves since the element curve
    # was the blocks' of 8 warps or fewer
    "every 10 % warned": ALL - {"heldout-32/h100:fit", "heldout-48/h200:fit"},
    # met on heldout-30/h100's and heldout-49/h200's score halves since the idle blocks
    # and heldout-53/h200's fit half since the loops' tail
    "spearman 0.9": {"heldout-53/h200:score"},
    # heldout-32/h100's and heldout-40/h200's score halves met since the element curve was
    # the blocks' of 8 warps or fewer (elementwise_09, image_15: 3 of 4 inside before)
    "trace alone never slower": {"heldout-31/h100:fit"},  # image_08
    "never slower": {"heldout-29/h100:score",  # tile_01, tile_13: 4-5 % slower
                     "heldout-31/h100:fit",  # image_08: 3.2 % slower
                     "heldout-32/h100:fit",  # tile_10
                     "heldout-42/h200:score",  # elementwise_19
                     # grid_stride_26 advised 256 x 10,560 (an info, 0-12 %), 3.6 % slower,
                     # since a loop's short blocks pay their stragglers' tail; heldout-39's
                     # fit half met since
                     "heldout-48/h200:fit"},
    "no false warning": {"heldout-31/h100:fit", "heldout-36/h100:fit",
                         "heldout-53/h200:score"},  # image_05
}


@cache
def _rows_json(run: str, facts: str | None) -> str:
    path = TRACES / run
    doc = score.occlint_json(path / "heldout.pt.trace.json.gz", facts)
    return json.dumps(score.rows(path, facts, doc=doc))


def _targets(run: str, split: str, facts: str | None = "source") -> dict:
    rows = json.loads(_rows_json(run, facts))
    return score.targets([r for r in rows if r["split"] == split])


def _unmet(request, target: str, run: str, split: str) -> None:
    if f"{run}:{split}" in UNMET[target]:
        request.applymarker(pytest.mark.xfail(
            strict=True, reason=f"issue 28: {target} not met on {run} ({split} half)"))


@pytest.mark.parametrize("seed", sorted({s for s, _ in RUNS.values()}))
def test_each_suite_is_the_generators(tmp_path, seed):
    from benchmarks.gpu.heldout import generate

    generate.main(["--seed", str(seed), "--out", str(tmp_path)])
    for name in ("suite.json", "kernels.cu"):
        assert (tmp_path / name).read_bytes() == (TRACES / f"heldout-{seed}" / name).read_bytes()


@pytest.mark.parametrize(("run", "split"), CASES)
def test_advice_beats_the_habit(run, split):
    t = _targets(run, split)
    assert t["unmeasured"] == []
    assert t["advised_vs_best"] >= 0.93 and t["advised_vs_best"] > t["habit_vs_best"] + 0.02


@pytest.mark.parametrize(("run", "split"), CASES)
def test_claims_rank_like_the_best(run, split):
    t = _targets(run, split)
    assert t["spearman"] >= 0.8
    assert t["inside"] >= 0.75 and t["median_width"] <= 0.31  # 0.20-0.30 on these runs


@pytest.mark.parametrize(("run", "split"), CASES)
def test_claims_beat_nsight_computes_estimates_on_the_same_launches(run, split):
    """Nsight Compute profiled the same defective launches (ncu.txt.gz beside the sweep)."""
    t = _targets(run, split)
    assert t["within_10"] >= t["nsight_within_10"] + 0.25  # seed 33's score half: 0.65, 0.37
    assert t["spearman"] > t["nsight_spearman"]


# the issue's targets, each a test per run and split (a strict xfail where UNMET names it)
TARGETS = {
    "never slower": lambda run, split: _targets(run, split)["slower"] == [],
    "advised 0.97": lambda run, split: _targets(run, split)["advised_vs_best"] >= 0.97,
    "inside 90 %": lambda run, split: _targets(run, split)["inside"] >= 0.9,
    "width 15 points": lambda run, split: _targets(run, split)["median_width"] <= 0.15,
    "every 10 % warned": lambda run, split: _targets(run, split)["missed"] == [],
    "spearman 0.9": lambda run, split: _targets(run, split)["spearman"] >= 0.9,
    "no false warning": lambda run, split: _targets(run, split)["false_warnings"] == [],
    "trace alone never slower": lambda run, split: (
        _targets(run, split, None)["slower"] == []
        and _targets(run, split, None)["inside"] >= 0.8),
}


@pytest.mark.parametrize("target", list(TARGETS))
@pytest.mark.parametrize(("run", "split"), CASES)
def test_the_issues_target(request, target, run, split):
    _unmet(request, target, run, split)
    assert TARGETS[target](run, split)


@pytest.mark.parametrize("run", list(RUNS))
def test_the_block_per_row_family_is_never_advised_slower(request, run):
    """A block per row ending in atomics to its row's address (seed 29's block_per_row_07
    was advised 32-thread blocks, 27 % slower, before those atomics were priced by the
    device's measured cost at the block's threads)."""
    unmet = {
        "heldout-43/h200": "block_per_row_12 (rows of 256, 512 dependent FMAs an element) "
                           "warned (a claim of 5-27 %) where nothing saves 2 %: its work "
                           "solved from the trace is 0.63 of the true (the issue rate, as "
                           "heldout-53's), 160 busy threads a row, on the step to 6 warps "
                           "(an info claim from no saving until the element curve was the "
                           "blocks' of 8 warps or fewer: the solve's other side)",
        "heldout-53/h200": "block_per_row_13 (rows of 256, 512 dependent FMAs an element) "
                           "warned (a claim of 34-65 %) where nothing saves 2 %: the model's "
                           "issue rate at 32 warps (0.56 of the peak; measured 0.87), so "
                           "the work solved from the trace is 0.37 of the true",
    }
    if run in unmet:
        request.applymarker(pytest.mark.xfail(strict=True, reason=f"issue 28: {unmet[run]}"))
    t = _targets(run, "heldout-family")
    assert t["slower"] == [] and t["false_warnings"] == []
    assert t["advised_vs_best"] > t["habit_vs_best"] + 0.02


@pytest.mark.parametrize("run", [r for r, (seed, _) in RUNS.items() if seed >= 50])
def test_the_family_added_after_the_unrolling_meets_the_targets(request, run):
    """grid-stride-int (seed 50 on): the grid-stride loop most CUDA code writes, an ``int``
    index stepped by ``blockDim.x * gridDim.x``, which the compiler does not unroll; drawn
    and swept after the model read the unrolling (docs/validation.md), scored once. Seed
    50: 0.976 of the best, none slower, 85 % of its claims inside, every launch worth 10 %
    warned (the model before reading the unrolling: 0.980, 77 %, 2 unwarned); since one
    resident block's waves are priced, 0.978, 85 %; since a copy's latency counts its loads
    only, 0.975, 92 %, one launch worth 10 % unwarned; since the block starts overlap the work
    with their own p, 0.981, 85 %, every launch worth 10 % warned."""
    unmet = {"heldout-50/h200": "grid_stride_int_00 (10.6 %: 512 x 10,560 advised for "
                                "1,024 x 10,560, the best, 1.1-18 % claimed: an info) "
                                "unwarned since a loop's short blocks pay their tail",
             "heldout-54/h200": "grid_stride_int_01 (10.7 %: 512 x 10,560 advised, 10.1 % "
                                "saved, 0.5-17 % claimed: an info) the same",
             "heldout-53/h200": "grid-stride-int reaches 0.961 of the best on seed 53, "
                                "its claims rank 0.63 like the best savings"}
    if run in unmet:
        request.applymarker(pytest.mark.xfail(strict=True, reason=f"issue 28: {unmet[run]}"))
    rows = json.loads(_rows_json(run, "source"))
    t = score.targets([r for r in rows if r["family"] == "grid-stride-int"])
    assert t["slower"] == [] and t["false_warnings"] == [] and t["missed"] == []
    assert t["advised_vs_best"] >= 0.97 and t["spearman"] >= 0.9
    assert t["inside"] >= 0.8  # the issue's 90 % is not met here either
    assert t["advised_vs_best"] > t["habit_vs_best"] + 0.1


# grid-stride loops ending in an atomic per thread whose atomics alone take the traced time
# (the model cannot solve their work from it), with the advised configuration's measured
# time over the best before the work was read from the span the trace allows
UNSOLVED = {("heldout-40/h200", "grid_stride_10"): 0.43,
            ("heldout-47/h200", "grid_stride_14"): 0.45,
            ("heldout-41/h200", "grid_stride_17"): 0.44,
            ("heldout-34/h100", "grid_stride_15"): 0.61,
            ("heldout-40/h200", "grid_stride_08"): 0.73,
            ("heldout-41/h200", "grid_stride_12"): 0.75}


@pytest.mark.parametrize(("run", "kernel"), sorted(UNSOLVED))
def test_a_loop_whose_atomics_fill_its_time_reads_the_work_the_trace_allows(run, kernel):
    """Where a loop's atomics alone take its traced time, its work is read from what the
    trace allows (one element per thread up to what a time 3 % longer holds; the middle of
    that span), not a fixed 2^26 elements: the advice's measured time, against the best
    the sweep found, at least 0.75 and 0.1 more than before (0.43-0.75); the text names
    the span."""
    row = next(r for r in json.loads(_rows_json(run, "source")) if r["name"] == kernel)
    assert row["fix"] is not None and row["ratio"] >= max(0.75, UNSOLVED[run, kernel] + 0.1), row
    assert any("(one element per thread)" in u for u in row["model"]["unknown"])


@pytest.mark.parametrize(("run", "kernel"), [
    ("heldout-44/h200", "elementwise_29"), ("heldout-39/h100", "elementwise_07"),
    ("heldout-37/h100", "elementwise_35"), ("heldout-33/h100", "image_11")])
def test_a_launch_the_model_misses_is_still_advised_from_its_source(run, kernel):
    """One element per thread whose predicted time was more than twice its traced one (the
    model was left out of these before: each saves 59-84 % measured): with the kernel's
    source the advice stands, and the measured saving of the advice lies in its range;
    where the model still misses the traced time by more than twice, the range spans the
    model's saving and the saving over the traced time. Since a copy's latency counts its
    loads' bytes only (timing.COPY_TRAFFIC) the first three are predicted within it."""
    row = next(r for r in json.loads(_rows_json(run, "source")) if r["name"] == kernel)
    assert row["best_saving"] >= 0.5  # the sweep's: what was at stake
    assert row["fix"] is not None and row["inside"], row
    assert row["ratio"] >= 0.94  # the advised configuration's measured time against the best
    off = row["model"]["now"]["ns"] / (row["defect_ms"] * 1e6)
    assert (not 0.5 <= off <= 2.0) == any("traced" in u for u in row["model"]["unknown"])


def test_a_loop_whose_work_the_trace_leaves_open_is_advised_over_that_span():
    """A loop whose atomics (or block starts) alone take its traced time: the work could be
    anything from one element per thread to what a time 3 % longer holds. Read at that
    span's middle, the advice on seeds 29-54's grid-stride loops so traced reached 0.883 of
    the best measured (geometric mean, 27 launches); chosen as the configuration least
    slower than the model's fastest at the span's ends and middle, 0.916 (the least of them
    0.53 both ways: heldout-39's grid_stride_16, whose work is under one element per
    thread). Every claim's range spans the ends, and holds the measured saving."""
    rows = [r for run in RUNS for r in json.loads(_rows_json(run, "source"))
            if r["family"].startswith("grid-stride") and r["model"]
            and any("where in that span" in u for u in r["model"]["unknown"])]
    assert len(rows) == 27
    assert all(r["fix"] is not None and r["inside"] for r in rows)
    mean = math.exp(statistics.fmean(math.log(r["ratio"]) for r in rows))
    assert mean >= 0.91
