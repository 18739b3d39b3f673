"""The launch-time model's facts of a traced kernel from the PTX its binary embeds beside
the SASS (issue 28: "from the binary where it can be read"). nvcc's default ``-arch=sm_XX``
keeps both; the fixtures were built so by benchmarks/gpu/build_fatbins.sh (nvcc 13.0):
fixtures/traces/kineto/odd_launches.sm_90.fatbin (the kernels the raw_odd trace launched)
and fixtures/traces/heldout-32/kernels.sm_90.fatbin (seed 32's held-out kernels)."""

from __future__ import annotations

import json
from functools import cache

import pytest

from benchmarks.gpu.heldout import score
from occlint.pipeline import facts_index
from occlint.pipeline.run import Options, execute
from occlint.pipeline.traces import _embedded
from tests.conftest import FIXTURES, REPO

KINETO = FIXTURES / "traces" / "kineto"
TRACE = KINETO / "raw_odd.pt.trace.json.gz"
FATBIN = KINETO / "odd_launches.sm_90.fatbin"
SOURCE = REPO / "benchmarks" / "traces" / "kernels" / "odd_launches.cu"


def _doc(*paths) -> dict:
    return execute(Options(paths=[str(p) for p in paths], isolated=True)).doc


def test_the_binarys_ptx_gives_each_traced_kernel_its_facts():
    """What odd_launches.cu's kernels do per element, read by hand from the source:
    vec_add loads two floats and stores one; gamma_gridstride loops over bytes, one in and
    one out; with the fatbin beside the trace every user launch is priced from its PTX."""
    doc = _doc(TRACE, FATBIN)
    groups = {g["kernel"].split("(")[0]: g for g in doc["launches"]}
    assert {g["kernel_facts"] for g in doc["launches"]} == {"ptx"}
    assert doc["summary"]["launches"]["unread_user_groups"] == 0
    vec = groups["vec_add"]["model"]["facts"]
    assert (vec["loop"], vec["load_bytes"], vec["store_bytes"]) == ("per-element", 8, 4)
    gamma = groups["gamma_gridstride"]["model"]["facts"]
    assert (gamma["loop"], gamma["load_bytes"], gamma["store_bytes"]) == ("grid-stride", 1, 1)


def test_the_binary_prices_the_run_as_the_source_does():
    """The same kernels' facts from the source or from the binary's PTX: the same
    estimated saving (the source's facts win where both are in the run)."""
    from_binary = _doc(TRACE, FATBIN)["summary"]["launches"]
    from_source = _doc(TRACE, SOURCE)["summary"]["launches"]
    for key in ("user_saving_low_ns", "user_saving_high_ns"):
        assert from_binary[key] == pytest.approx(from_source[key], rel=0.01)
    alone = _doc(TRACE)  # no facts: no group's own saving above none (launch overhead
    # is the stream's, LCH201)
    assert alone["summary"]["launches"]["unread_user_groups"] == 8
    assert all((g["saving"] or {}).get("low_ns", 0) == 0 for g in alone["launches"])


def test_a_librarys_binary_is_not_read_again():
    """A kernel the configuration gives to a library: its binary's PTX is not read."""
    facts_index._binary_ptx_facts.cache_clear()

    class K:
        name = "_Z7vec_addPKfS0_Pfi"
        demangled = "vec_add(float const*, float const*, float*, int)"
        file = str(FATBIN)

    assert _embedded(K, {"vec_add*": "library:MyLib"}) is None
    assert facts_index._binary_ptx_facts.cache_info().misses == 0
    assert _embedded(K, {}).load_bytes == 8


def test_a_binary_alone_reads_no_ptx():
    """Without a trace the fatbin's PTX (SASS beside it) is neither read nor reported."""
    doc = _doc(FATBIN)
    assert len(doc["kernels"]) == 5 and doc["artifacts"] == []


@cache
def _rows(facts: str) -> str:
    run = FIXTURES / "traces" / "heldout-32" / "h100"
    return json.dumps(score.rows(run, facts, doc=score.occlint_json(
        run / "heldout.pt.trace.json.gz", facts)))


@pytest.mark.parametrize("split", ["fit", "score"])
def test_held_out_advice_from_the_binary_holds_as_from_source(split):
    """Seed 32 (drawn and timed after the model was fixed) with its fatbin instead of its
    source: the advice reaches the same share of the best (within a point), its claims
    hold as often (within 5 points), and it warns nowhere that nothing saves 2 %."""
    got = {f: score.targets([r for r in json.loads(_rows(f)) if r["split"] == split])
           for f in ("fatbin", "source")}
    assert got["fatbin"]["advised_vs_best"] == pytest.approx(got["source"]["advised_vs_best"],
                                                             abs=0.01)
    assert got["fatbin"]["inside"] >= got["source"]["inside"] - 0.05
    assert got["fatbin"]["false_warnings"] == []
