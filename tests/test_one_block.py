"""Kernels that are one block by design (benchmarks/traces/kernels/one_block.cu, recorded
on an H200 by ``benchmarks/traces/record.py kineto one_block``: fixtures/traces/README.md):
llm.c's single-block sum, whose one block strides over the data, and SGEMM_CUDA's 4 x 4
fill, whose threads are its work. Their source reads no block index: no grid rule asks
them for more blocks, no occupancy finding claims a saving, and the fill is not told to
use whole warps — but the sum's block, which splits its loop, is still advised, and the
saving claimed holds against the same trace's launch of the advised block."""

from __future__ import annotations

import gzip
import json

import pytest

from occlint.pipeline.run import Options, execute
from tests.conftest import FIXTURES

KINETO = FIXTURES / "traces" / "kineto"
TRACE = KINETO / "one_block.pt.trace.json.gz"
CUBIN = KINETO / "one_block.sm_90.cubin"
SOURCE = FIXTURES.parent / "benchmarks" / "traces" / "kernels" / "one_block.cu"
GRID_RULES = {"LCH101", "LCH102", "LCH103", "LCH105"}


def _groups(*paths) -> dict[tuple[str, int], dict]:
    doc = execute(Options(paths=[str(p) for p in paths], isolated=True)).doc
    return {(g["kernel"], g["block"][0] * g["block"][1] * g["block"][2]): g
            for g in doc["launches"]}


@pytest.fixture(scope="module")
def with_source() -> dict:
    return _groups(TRACE, CUBIN, SOURCE)


@pytest.fixture(scope="module")
def without_source() -> dict:
    return _groups(TRACE, CUBIN)


def _rules(group: dict) -> set[str]:
    return {f["rule"] for f in group["findings"]}


def test_the_trace_alone_gets_the_grid_rules(without_source):
    """The rules the source silences do fire without it (a grid of 1 on 132 SMs)."""
    assert {"LCH102", "LCH103"} <= _rules(without_source["sum_one_block", 100])
    assert {"LCH001", "LCH102"} <= _rules(without_source["fill4x4", 16])


def test_no_grid_rule_for_a_kernel_that_reads_no_block_index(with_source):
    for key, group in with_source.items():
        assert not _rules(group) & GRID_RULES, key


def test_threads_that_are_the_work_get_no_block_advice(with_source):
    fill = with_source["fill4x4", 16]
    assert not _rules(fill) & {"LCH001", "LCH003", "LCH106", "LCH107"}
    assert all(f.get("saving") is None for f in fill["findings"])  # OCC108 a fact only


def test_a_single_block_loop_is_advised_its_block_and_the_saving_holds(with_source):
    """The sum <<<1, 100>>> is told to use whole warps, its fix from the model keeps the
    grid of 1 and the measured saving of the trace's own <<<1, 1024>>> launch of it lies in
    the range claimed."""
    with gzip.open(TRACE) as fh:
        ms = {e["args"]["block"][0]: e["dur"] for e in json.load(fh)["traceEvents"]
              if e.get("cat") == "kernel" and e["name"] == "sum_one_block"}
    f = next(f for f in with_source["sum_one_block", 100]["findings"] if f["rule"] == "LCH001")
    assert f["fix"]["grid"] == [1, 1, 1] and f["fix"]["block"] == [1024, 1, 1]
    measured = 1 - ms[1024] / ms[100]
    assert f["saving"]["low"] <= measured <= f["saving"]["high"], (measured, f["saving"])


def test_oversubscription_is_asked_only_of_grid_stride_loops():
    """LCH103 (a grid below the oversubscription target "that memory-bound grid-stride
    kernels need") on seed 32's H100 trace with the kernels' source: none for a block per
    row (its grid is its rows) or one element per thread; still for the grid-stride loops
    it names (block_reduce_10 <<<66, 256>>>)."""
    run = FIXTURES / "traces" / "heldout-32"
    doc = execute(Options(paths=[str(run / "h100" / "heldout.pt.trace.json.gz"),
                                 str(run / "kernels.cu")], isolated=True)).doc
    asked = {}
    for g in doc["launches"]:
        loop = ((g.get("model") or {}).get("facts") or {}).get("loop")
        if loop is None:
            continue
        asked.setdefault(loop, []).append(any(f["rule"] == "LCH103" for f in g["findings"]))
    assert asked["block-stride"] and not any(asked["block-stride"])
    assert asked["per-element"] and not any(asked["per-element"])
    assert sum(asked["grid-stride"]) >= 3
    reduce = next(g for g in doc["launches"] if g["kernel"] == "block_reduce_10")
    assert any(f["rule"] == "LCH103" for f in reduce["findings"])
