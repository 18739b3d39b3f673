"""Which stride loops the compiler unrolls, and what that does to the loads in flight
(issue 28).

The bandwidth curves were measured with loops the compiler unrolls four times; a loop it
leaves alone holds one element's loads a pass. Which forms it unrolls is read from the
source (occlint.readers.source.facts.unrolled_by_compiler) and from PTX; both are checked
against the PTX NVRTC made of 280 loops (fixtures/make_unroll_loops.py), and the model's
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


def _orders(ptx: str) -> dict[str, str]:
    """Each entry's global loads and stores in order (L, N for a read-only ``.nc`` load,
    S) in its block holding the most loads (the unrolled pass, where there is one)."""
    out: dict[str, str] = {}
    for chunk in re.split(r"\.entry\s+", ptx)[1:]:
        name = re.match(r"\w+", chunk)[0]
        blocks = chunk.split("$L__BB")
        big = max(blocks, key=lambda b: b.count("ld.global"))
        out[name] = "".join("N" if "ld.global.nc" in line else "L" if "ld.global" in line
                            else "S" if "st.global" in line else "" for line in
                            big.splitlines())
    return out


@pytest.fixture(scope="module")
def compiled() -> dict[str, int]:
    """The elements a pass of each loop holds as NVRTC compiled it: its body's one load
    once if not unrolled, else the unrolled pass's k loads and the remainder loop's one;
    a loop unrolled by its own pragma has no remainder loop (each of its k loads is
    guarded in the pass). One where the unrolled pass's coherent loads come in k runs
    between its stores (each element's loads wait behind the last element's store)."""
    ptx = gzip.decompress((LOOPS / "loops.ptx.gz").read_bytes()).decode()
    orders = _orders(ptx)
    out = {}
    for name, n in _loads_per_entry(ptx).items():
        # an element's loads: the remainder loop's (the whole body's when not unrolled)
        each = n - orders[name].count("L") - orders[name].count("N") or n
        k = n if name.startswith("pragma") else 1 if n == each else (n - each) // each
        runs = len([r for r in orders[name].split("S") if "L" in r])
        out[name] = 1 if k > 1 and "S" in orders[name] and runs >= k else k
        if name.endswith("_per_element"):  # one element per thread: no stride loop
            out[name] = None
    return out


def test_the_fixture_holds_every_answer(compiled):
    assert len(compiled) == 280
    counts = {k: list(compiled.values()).count(k) for k in (1, 2, 4)}
    assert sum(counts.values()) == 278 and min(counts.values()) >= 5  # each a few times
    assert 40 <= counts[4] <= 186


def test_the_source_says_which_loops_the_compiler_unrolls(compiled):
    source = read_source(str(LOOPS / "loops.cu"), "loops.cu")
    facts = {k.name: k.facts for k in source.kernels}
    assert set(facts) == set(compiled)
    # a scalar __ldg in the loop: the compilers differ (below), so the source leaves it
    # unknown
    ldg = {"order_plain_ldg", "order_restrict_ldg", "order_restrict_ldg_pointer"}
    # PyTorch's loop macro steps two variables in its head: read as a grid-stride loop of
    # unknown unrolling (NVRTC unrolls it four times)
    torch = {"macro_torch_int", "macro_torch_int64"}
    wrong = {name: (facts[name].loop, facts[name].unroll, unroll) for name, unroll in
             compiled.items() if facts[name].unroll != unroll and name not in ldg | torch}
    assert not wrong
    assert all(facts[name].unroll is None for name in ldg | torch)
    assert all(facts[name].loop == "grid-stride" and facts[name].load_bytes == 4.0
               for name in torch)
    # the common forms, by name: an int index stepped by the unsigned grid (not unrolled),
    # a long index stepped by a cast grid (unrolled), a long block per row (not)
    assert compiled["copy_0_bt_bg"] == 1 and compiled["copy_2_bTt_Tbg"] == 4
    assert compiled["block_per_row"] == 1 and compiled["copy_5_bt_bg"] == 1
    # the body's size: a chain of 44 FMAs four elements a pass, 48 two, 96 one; a float4
    # body's vector lanes cost (32: four, 34: two); a loop kept inside stops it
    assert [compiled[f"fma_chain_float_{k}"] for k in (44, 48, 96)] == [4, 2, 1]
    assert [compiled[f"fma_chain_float4_{k}"] for k in (32, 34)] == [4, 2]
    assert compiled["inner_pragma_4"] == 4 and compiled["inner_pragma_8"] == 1
    # an index compared with a bound of another type: an int index against a long, size_t
    # or unsigned bound never, against a short (promoted to int) as against an int; a long
    # index against a size_t bound not when an int variable steps it
    assert [compiled[f"mixed_0_{j}_ivar"] for j in range(5)] == [4, 1, 1, 1, 4]
    assert compiled["mixed_0_0_lvar"] == 1  # an int index stepped by a long
    assert [compiled[f"mixed_1_2_{s}"] for s in ("ivar", "cast", "bare", "lvar")] == [
        1, 4, 4, 4]
    # loads the compiler cannot move above the last pass's store: one element a pass
    # held, unrolled or not; either pointer __restrict__ (or a macro for it) or an __ldg
    # frees them, a load of the stored array never (and a float4's __ldg is not unrolled)
    waits = {name[len("order_"):] for name, k in compiled.items()
             if name.startswith("order_") and k == 1}
    assert waits == {"plain", "plain_two_loads", "one_plain_of_two", "in_place",
                     "in_place_plain", "in_place_alone", "in_place_and_load",
                     "plain_float4", "row_pointers_plain", "restrict_ldg_float4"}
    assert compiled["order_restrict_load"] == compiled["order_plain_ldg"] == 4  # NVRTC 13.5
    assert compiled["order_restrict_ldg_float4"] == 1  # a vector's __ldg: alone in both
    # an atomic in the loop stops the unrolling, whatever it is; one after the loop not
    assert {name: k for name, k in compiled.items() if name.startswith("atomic_")} == {
        "atomic_global_bins": 1, "atomic_shared_bins": 1, "atomic_one_address": 1,
        "atomic_int_bins": 1, "atomic_conditional": 1, "atomic_after": 4}
    # an unroll pragma on the stride loop itself: so many a pass, whatever the form
    assert [compiled[k] for k in ("pragma4_row", "pragma2_row", "pragma4_unsigned",
                                  "pragma1_long")] == [4, 2, 4, 1]


def test_ptx_says_which_loops_the_compiler_unrolled(compiled):
    ptx = gzip.decompress((LOOPS / "loops.ptx.gz").read_bytes()).decode()
    facts = facts_by_entry(ptx)
    assert {name for name, f in facts.items() if f.unroll != compiled[name]} == set()


def test_a_loop_macro_defined_in_a_header_is_read_as_its_libraries_define_it(tmp_path):
    """CUDA_KERNEL_LOOP and CUDA_1D_KERNEL_LOOP used with their definitions in a header the
    file includes (Caffe, PyTorch, mmcv, detectron2, DeepSpeed): each read as a grid-stride
    loop; CUDA_1D_KERNEL_LOOP not unrolled (an int index stepped by the unsigned grid, or a
    size_t one: fixtures/ptx/unroll's macro_caffe and macro_deepspeed), CUDA_KERNEL_LOOP's
    unrolling not known (Caffe's is not unrolled, PyTorch's is: macro_torch_int)."""
    path = tmp_path / "k.cu"
    path.write_text(
        '#include "helpers.h"\n'
        "__global__ void caffe_style(const float* __restrict__ a, float* __restrict__ c, "
        "int n) {\n    CUDA_KERNEL_LOOP(index, n) { c[index] = a[index] * 2.0f; }\n}\n"
        "__global__ void mmcv_style(const float* __restrict__ a, float* __restrict__ c, "
        "int n) {\n    CUDA_1D_KERNEL_LOOP(i, n) {\n        c[i] = a[i] + 1.0f;\n    }\n}\n")
    kernels = {k.name: k for k in read_source(str(path), "k.cu").kernels}
    for name in ("caffe_style", "mmcv_style"):
        k = kernels[name]
        assert (k.body, k.facts.loop, k.facts.load_bytes, k.facts.store_bytes) == (
            "grid-stride", "grid-stride", 4.0, 4.0), name
    assert kernels["caffe_style"].facts.unroll is None
    assert kernels["mmcv_style"].facts.unroll == 1


def test_two_compilers_agree_on_every_loop_but_an_ldg_beside_plain_stores():
    """The same 280 loops through NVRTC 13.0 (the lent H200's CuPy, which compiles the
    zoo's and the held-out suites' sweeps: loops.nvrtc-13.0.ptx.gz) and 13.5 (the pip
    wheel: loops.ptx.gz): the PTX reader reads the same elements a pass from both but for
    the loops loading a scalar through ``__ldg``, which 13.5 unrolls four times and 13.0,
    whose ``__ldg`` is an inline asm, leaves alone (zoo set 25's ldg_plain_gs, swept with
    13.0: 1.2 TB/s at 512 threads an SM, where a copy through __restrict__ pointers draws
    2.6); a float4's ``__ldg`` neither unrolls."""
    new = facts_by_entry(gzip.decompress((LOOPS / "loops.ptx.gz").read_bytes()).decode())
    old = facts_by_entry(gzip.decompress((LOOPS / "loops.nvrtc-13.0.ptx.gz").read_bytes())
                         .decode())
    assert set(old) == set(new) and len(old) == 280
    assert {name: (old[name].unroll, new[name].unroll) for name in new
            if old[name].unroll != new[name].unroll} == {
        "order_plain_ldg": (1, 4), "order_restrict_ldg": (1, 4),
        "order_restrict_ldg_pointer": (1, 4)}


def test_a_blocks_loops_in_shared_memory_are_not_its_element_loop():
    """A histogram zeroed over the block's threads before a grid-stride loop, and a tree or
    a scan over the block: loops stepped by the block that touch only shared memory. The
    PTX reader took the first for the element loop (a block-stride loop loading nothing)
    and read the tree's and the scan's kernels as block-stride loops; it and the source
    reader now read the element loop, and count each tree once a block."""
    ptx = facts_by_entry(gzip.decompress((LOOPS / "loops.ptx.gz").read_bytes()).decode())
    source = {k.name: k.facts for k in read_source(str(LOOPS / "loops.cu"),
                                                     "loops.cu").kernels}
    for facts in (ptx, source):
        zeroed = facts["shared_zeroed_then_loop"]
        assert (zeroed.loop, zeroed.load_bytes, zeroed.unroll, zeroed.trees) == (
            "grid-stride", 4.0, 1, 0)
        for name in ("tree_per_element", "scan_per_element"):
            assert (facts[name].loop, facts[name].trees) == ("per-element", 1), name


def test_the_source_and_the_gpus_compiler_agree_on_the_held_out_loops():
    """Seed 28's suite as the lent GPU's NVRTC (13.0) compiled it (kernels.sm_90.ptx.gz,
    generate.py --ptx): the elements a pass of each of its 68 stride loops holds, read
    from the source and from that PTX, agree; and they are not all one answer."""
    heldout = FIXTURES / "traces" / "heldout"
    ptx = facts_by_entry(gzip.decompress((heldout / "kernels.sm_90.ptx.gz").read_bytes())
                         .decode())
    source = read_source(str(heldout / "kernels.cu"), "kernels.cu")
    loops = {k.name: k.facts.unroll for k in source.kernels if k.facts.loops}
    assert len(loops) == 68
    assert {name: (u, ptx[name].unroll) for name, u in loops.items()
            if ptx[name].unroll != u} == {}
    assert set(loops.values()) == {1, 2, 4}


def test_a_loop_left_alone_holds_a_quarter_of_the_loads_in_flight():
    """A block per row, ``long j = threadIdx.x; j < cols; j += blockDim.x``, which NVRTC
    does not unroll: on the H100, 32-thread blocks (32 resident, 32 warps an SM) took
    422 us and 512-thread blocks (4 resident, 64 warps) 305 us over the same 67 M
    elements (heldout-32's sweep). The curves read at the source's X (as if unrolled)
    called those nearly alike; at a quarter of it, the measured ratio."""
    k = timed_kernel(32, "h100", "block_per_row_10")
    assert k.facts.loop == "block-stride" and k.facts.unroll == 1
    rows = k.spec["rows"]

    def ratio(f) -> float:
        return k.predicted(512, rows, f) / k.predicted(32, rows, f)

    measured = k.ms(512) / k.ms(32)
    assert measured == pytest.approx(0.722, abs=0.01)
    assert ratio(k.facts) == pytest.approx(measured, abs=0.06)
    assert ratio(replace(k.facts, unroll=4)) > measured + 0.15  # the curves' reading


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
    start the compiler unrolls (``threadIdx.x + 0L``) where the body is small enough, and
    with an index type the source reader cannot know (``IdxT``). Where the body would be
    unrolled, the last advises what the unrolled reading advises, and its range spans that
    reading's and the other's (the text says why); where the body is too large for the
    compiler to unroll, the index type does not matter: one element a pass."""
    text = (FIXTURES / "traces" / "heldout-32" / "kernels.cu").read_text()
    head = "for (long j = threadIdx.x; j < cols; j += blockDim.x)"
    assert text.count(head) == 16
    unrolled = _block_per_row_groups(
        text.replace(head, "for (long j = threadIdx.x + 0L; j < cols; j += blockDim.x)"),
        tmp_path)
    unknown = _block_per_row_groups(  # IdxT: a header's type (a file's own typedef is read)
        '#include "index_type.h"\n' + text.replace(head, head.replace("long j", "IdxT j")),
        tmp_path)
    compared = sized = 0
    for name, model in unknown.items():
        if unrolled[name]["facts"]["unroll"] == 1:  # the body's size decides
            assert model["facts"]["unroll"] == 1
            sized += 1
            continue
        assert "unroll" not in model["facts"]
        assert model.get("fix") == unrolled[name].get("fix")
        if not model.get("saving"):
            continue
        compared += 1
        assert any("unrolls its loop" in u for u in model["unknown"])
        assert model["saving"]["low"] <= unrolled[name]["saving"]["low"]
        assert model["saving"]["high"] >= unrolled[name]["saving"]["high"]
    assert compared >= 1 and sized >= 3, (compared, sized)


def test_a_body_keeps_a_loop_or_not(tmp_path):
    """A stride loop whose body holds a loop of unknown trips is left alone (LLVM unrolls
    innermost loops); one of no trips, or a small constant one unrolled whole, is no loop;
    the unknown index type stays unknown where the body would let the compiler unroll
    (the pointers ``__restrict__``: without it each pass's load waits behind the last
    pass's store, one element held whatever the unrolling)."""
    grid = "for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; " \
           "i += (long)blockDim.x * gridDim.x)"
    path = tmp_path / "k.cu"
    path.write_text(
        'extern "C" __global__ void inner_variable(const float* __restrict__ a, '
        'float* __restrict__ c, int m, long n) {\n'
        f"    {grid} {{ float t = a[i]; for (int k = 0; k < m; ++k) t *= 2.0f; c[i] = t; }}\n}}\n"
        'extern "C" __global__ void inner_none(const float* __restrict__ a, '
        'float* __restrict__ c, long n) {\n'
        f"    {grid} {{ float t = a[i]; for (int k = 0; k < 0; ++k) t *= 2.0f; c[i] = t; }}\n}}\n"
        'extern "C" __global__ void unknown_index(const float* __restrict__ a, '
        'float* __restrict__ c, long n) {\n'
        "    for (IdxT i = threadIdx.x; i < n; i += blockDim.x * gridDim.x) c[i] = a[i];\n}\n")
    facts = {k.name: k.facts for k in read_source(str(path), "k.cu").kernels}
    assert facts["inner_variable"].unroll == 1
    assert facts["inner_none"].unroll == 4
    assert facts["unknown_index"].unroll is None
