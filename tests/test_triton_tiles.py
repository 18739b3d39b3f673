"""The launch-time model's advice for Triton kernels (a tile and num_warps), held out:
fixtures/traces/triton/h100 (benchmarks/gpu/record_triton.py) was recorded after the tile
space was written, each kernel traced at one tile and timed at every other on the H100
(times.json). docs/validation.md ("Kernel caches") has the figures."""

from __future__ import annotations

import json
import math

import pytest

from occlint.pipeline.run import Options, execute
from tests.conftest import FIXTURES

RUN = FIXTURES / "traces/triton/h100"
TIMES = json.loads((RUN / "times.json").read_text())


@pytest.fixture(scope="module")
def groups() -> dict:
    doc = execute(Options(paths=[str(RUN / "triton.pt.trace.json.gz"),
                                 str(RUN / "triton-cache")], isolated=True)).doc
    return {r["kernel"]: r for r in doc["launches"] if r["kernel"] in TIMES["ms"]}


def _key(fix: dict) -> str:
    return f"{fix['tile']}x{fix['block'][0] // 32}"


def test_each_kernels_tile_is_read_from_its_ir(groups):
    assert set(groups) == set(TIMES["traced"])
    for name, r in groups.items():
        tile, warps = map(int, TIMES["traced"][name].split("x"))
        assert r["model"]["facts"]["tile"] == tile
        assert r["block"] == [32 * warps, 1, 1] and r["grid"][0] == math.ceil(TIMES["n"] / tile)


# what the model misses on this family (docs/validation.md): horner's 32 elements per
# thread are 17 % slower than 512 x 2, which the model does not see (no advice);
# double_it's advised 1024 x 2 is 57 % faster than traced but 17 % slower than the
# fastest timed (2048 x 16); gelu_half's advised 4096 x 8 (since one element per thread
# draws the element curve, which is flat past 16 KB in flight a SM: every large tile
# looks alike) is 43 % faster than traced, 15 % slower than 1024 x 4
UNWARNED = {"horner"}
FAR_FROM_BEST = {"double_it", "gelu_half"}


@pytest.mark.parametrize("name", sorted(TIMES["traced"]))
def test_advice_is_never_slower_and_its_claim_holds(groups, name):
    ms = TIMES["ms"][name]
    traced = ms[TIMES["traced"][name]]
    best = min(ms.values())
    f = next((f for f in groups[name]["findings"] if f.get("fix")), None)
    assert f is None or name not in UNWARNED
    if f is None:  # no advice: a miss named above (it saves more than 10 %), or sum3,
        # whose best saves 7 %, under what the model moves for (fastest.MIN_GAIN)
        assert (1 - best / traced > 0.10) is (name in UNWARNED)
        return
    advised = ms[_key(f["fix"])]
    assert advised <= 1.03 * traced  # never more than 3 % slower than the launch as it is
    assert f["saving"]["low"] - 0.015 <= 1 - advised / traced <= f["saving"]["high"] + 0.015
    assert (best / advised >= 0.9) is (name not in FAR_FROM_BEST)
    assert f["fix"]["grid"][0] * f["fix"]["tile"] >= TIMES["n"]


@pytest.mark.xfail(strict=True, reason="issue 28: 0.861 of the best since one element per "
                                       "thread draws the element curve (0.886 before): "
                                       "gelu_half advised 4096 x 8, 0.85 of the fastest")
def test_advice_reaches_most_of_the_best_over_the_family(groups):
    """Geometric mean of best / advised (the launch as it is where no advice), against 0.61
    for the tiles as traced."""
    ratios, as_is = [], []
    for name, r in groups.items():
        ms = TIMES["ms"][name]
        traced = ms[TIMES["traced"][name]]
        fix = r["model"]["fix"]
        advised = ms[_key(fix)] if fix else traced
        ratios.append(min(ms.values()) / advised)
        as_is.append(min(ms.values()) / traced)
    geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
    assert geo >= 0.88 and geo > math.exp(sum(map(math.log, as_is)) / len(as_is)) + 0.2
