"""Which stride loops the compiler unrolls, and what that does to the loads in flight
(issue 28).

The bandwidth curves were measured with loops the compiler unrolls four times; a loop it
leaves alone holds one element's loads a pass. Which forms it unrolls is read from the
source (occlint.readers.source.facts.unrolled_by_compiler) and from PTX; both are checked
against the PTX NVRTC made of 170 loops (fixtures/make_unroll_loops.py), and the model's
use of it against block-per-row loops timed on an H100.
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from occlint.readers.nvidia.ptx import facts_by_entry
from occlint.readers.source import read_source
from tests.heldout_kernels import timed_kernel

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LOOPS = FIXTURES / "ptx" / "unroll"


def _loads_per_entry(ptx: str) -> dict[str, int]:
    """The global loads each entry of a PTX file holds, counted in its text."""
    out: dict[str, int] = {}
    name = None
    for line in ptx.splitlines():
        m = re.search(r"\.entry\s+(\w+)", line)
        if m:
            name = m[1]
            out[name] = 0
        elif name and "ld.global" in line:
            out[name] += 1
    return out


@pytest.fixture(scope="module")
def compiled() -> dict[str, bool]:
    """Whether NVRTC unrolled each loop: more than the body's one load in its PTX."""
    ptx = gzip.decompress((LOOPS / "loops.ptx.gz").read_bytes()).decode()
    return {name: n > 1 for name, n in _loads_per_entry(ptx).items()}


def test_the_fixture_holds_both_answers(compiled):
    assert len(compiled) == 170
    assert 40 <= sum(compiled.values()) <= 126  # forms of both kinds, neither a handful


def test_the_source_says_which_loops_the_compiler_unrolls(compiled):
    source = read_source(str(LOOPS / "loops.cu"), "loops.cu")
    facts = {k.name: k.facts for k in source.kernels}
    assert set(facts) == set(compiled)
    wrong = {name: (facts[name].loop, facts[name].unrolled) for name, unrolled in
             compiled.items() if facts[name].unrolled is not unrolled}
    assert not wrong
    # the common forms, by name: an int index stepped by the unsigned grid (not unrolled),
    # a long index stepped by a cast grid (unrolled), a long block per row (not)
    assert compiled["copy_0_bt_bg"] is False and compiled["copy_2_bTt_Tbg"] is True
    assert compiled["block_per_row"] is False and compiled["copy_5_bt_bg"] is False


def test_ptx_says_which_loops_the_compiler_unrolled(compiled):
    ptx = gzip.decompress((LOOPS / "loops.ptx.gz").read_bytes()).decode()
    facts = facts_by_entry(ptx)
    assert {name for name, f in facts.items() if f.unrolled is not compiled[name]} == set()


def test_a_loop_left_alone_holds_a_quarter_of_the_loads_in_flight():
    """A block per row, ``long j = threadIdx.x; j < cols; j += blockDim.x``, which NVRTC
    does not unroll: on the H100, 32-thread blocks (32 resident, 32 warps an SM) took
    422 us and 512-thread blocks (4 resident, 64 warps) 305 us over the same 67 M
    elements (heldout-32's sweep). The curves read at the source's X (as if unrolled)
    called those nearly alike; at a quarter of it, the measured ratio."""
    k = timed_kernel(32, "h100", "block_per_row_10")
    assert k.facts.loop == "block-stride" and k.facts.unrolled is False
    rows = k.spec["rows"]

    def ratio(f) -> float:
        return k.predicted(512, rows, f) / k.predicted(32, rows, f)

    measured = k.ms(512) / k.ms(32)
    assert measured == pytest.approx(0.722, abs=0.01)
    assert ratio(k.facts) == pytest.approx(measured, abs=0.06)
    assert ratio(replace(k.facts, unrolled=True)) > measured + 0.15  # the curves' reading


def _block_per_row_groups(source: str, tmp_path: Path) -> dict[str, dict]:
    """occlint's JSON on seed 32's H100 trace with ``source`` for its kernels: the model of
    each block-per-row launch group, by kernel."""
    path = tmp_path / "kernels.cu"
    path.write_text(source)
    trace = FIXTURES / "traces" / "heldout-32" / "h100" / "heldout.pt.trace.json.gz"
    out = subprocess.run([sys.executable, "-m", "occlint", str(trace), str(path), "--format",
                          "json", "--isolated", "--exit-zero"], capture_output=True,
                         check=True, cwd=FIXTURES.parent)
    return {g["kernel"]: g["model"] for g in json.loads(out.stdout)["launches"]
            if g["kernel"].startswith("block_per_row_") and g.get("model")}


def test_a_loop_whose_unrolling_is_unknown_is_priced_both_ways(tmp_path):
    """The same kernels three ways: as written (a ``long`` row index: not unrolled), with a
    start the compiler unrolls (``threadIdx.x + 0L``), and with an index type the source
    reader cannot know (``IdxT``). The last advises what the unrolled reading advises, and
    its range spans that reading's and the other's; the text says why."""
    text = (FIXTURES / "traces" / "heldout-32" / "kernels.cu").read_text()
    head = "for (long j = threadIdx.x; j < cols; j += blockDim.x)"
    assert text.count(head) == 16
    unrolled = _block_per_row_groups(
        text.replace(head, "for (long j = threadIdx.x + 0L; j < cols; j += blockDim.x)"),
        tmp_path)
    unknown = _block_per_row_groups(
        "typedef long IdxT;\n" + text.replace(head, head.replace("long j", "IdxT j")),
        tmp_path)
    compared = 0
    for name, model in unknown.items():
        assert "unrolled" not in model["facts"]
        assert unrolled[name]["facts"]["unrolled"] is True
        assert model.get("fix") == unrolled[name].get("fix")
        if not model.get("saving"):
            continue
        compared += 1
        assert any("unrolls its loop" in u for u in model["unknown"])
        assert model["saving"]["low"] <= unrolled[name]["saving"]["low"]
        assert model["saving"]["high"] >= unrolled[name]["saving"]["high"]
    assert compared >= 3
