"""Kernel facts read from PTX (occlint.readers.nvidia.ptx; issue 28 item 2).

The held-out suite's kernels, compiled by nvcc 13.0 to PTX (fixtures/traces/heldout/
kernels.sm_90.ptx.gz, benchmarks/gpu/heldout/generate.py --ptx), are checked against what
the generator drew for each (suite.json), not against occlint's source reader; the PTX's
own loops (the compiler's unrolling, constant trip counts) against the PTX text.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import pytest

from benchmarks.gpu.heldout import score
from occlint.model.facts import LOOP_CONTROL
from occlint.readers.nvidia.ptx import facts_by_entry
from tests.conftest import FIXTURES, run_occlint

SUITE = json.loads((score.HERE / "suite.json").read_text())["kernels"]
PTX = gzip.decompress(score.PTX.read_bytes()).decode()


@pytest.fixture(scope="module")
def facts():
    return facts_by_entry(PTX)


def test_every_entry_is_read(facts):
    assert set(facts) == {k["name"] for k in SUITE}
    assert all(f.source == "ptx" and f.known for f in facts.values())


def test_facts_match_what_the_generator_drew(facts):
    """Loop, bytes per element, atomics and their addresses exactly; the arithmetic at
    least what was drawn (the compiler may recompute a loop's invariant terms in it)."""
    loops = {"grid-stride": "grid-stride", "block-reduce": "grid-stride",
             "block-per-row": "block-stride"}
    for k in SUITE:
        f, drawn, name = facts[k["name"]], k["facts"], k["name"]
        width = 4 * drawn["vector"]
        assert f.loop == loops.get(k["family"], "per-element"), name
        if k["family"] == "tile":  # the halo's loads, behind threadIdx.x < 2, are not counted
            assert (f.load_bytes, f.store_bytes) == (4, 4) and f.shared_per_thread, name
            assert f.barrier, name
        else:
            assert f.load_bytes == width * drawn["loads"], name
            assert f.store_bytes == (width if drawn["store"] else 0), name
        extra = drawn["regs_pad"] + 8
        assert drawn["fma"] <= f.fma <= 1.5 * (drawn["fma"] + extra) + 4, name
        atomic = drawn["atomic"]
        if k["family"] == "block-reduce":  # if (threadIdx.x == 0) atomicAdd(out, part[0])
            assert (f.atomics_one_block, f.atomics_one_thread, f.atomics_one) == (1, 0, 0)
        elif atomic == "thread" and f.loops:
            assert (f.atomics_one_thread, f.atomics_one) == (1, 0), name
        elif atomic == "thread":
            assert (f.atomics_one, f.atomics_one_thread) == (1, 0), name
        elif atomic == "block":
            assert f.atomics_block == 1, name
        else:
            assert f.atomics_one == f.atomics_one_thread == f.atomics_block == 0, name


def _body(name: str) -> str:
    start = PTX.index(f".entry {name}(")
    return PTX[start:PTX.index("\n}\n", start)]


def test_an_unrolled_element_loop_counts_one_element():
    """nvcc unrolled these grid-stride loops twice (the index stepped twice, or by the
    stride shifted left once): a pass of the body does two elements."""
    both = _body("block_reduce_11")
    assert both.count("ld.global.nc.f32") == 3  # one peeled iteration, two in the loop
    assert facts_by_entry(PTX)["block_reduce_11"].load_bytes == 4
    shifted = _body("grid_stride_33")
    assert "shl.b64" in shifted and shifted.count("ld.global.nc.v2.f32") == 3
    assert facts_by_entry(PTX)["grid_stride_33"].load_bytes == 8


def test_a_constant_loop_multiplies_its_arithmetic():
    text = """
.visible .entry k(.param .u64 p0, .param .f32 p1)
{
    ld.param.u64 %rd1, [p0];
    ld.param.f32 %f1, [p1];
    mov.u32 %r1, %tid.x;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.f32 %f2, [%rd4];
    mov.u32 %r2, 0;
$L__BB0_1:
    fma.rn.f32 %f2, %f2, %f1, %f1;
    fma.rn.f32 %f3, %f2, %f1, %f1;
    fma.rn.f32 %f2, %f3, %f1, %f1;
    add.s32 %r2, %r2, 3;
    setp.lt.s32 %p1, %r2, 30;
    @%p1 bra $L__BB0_1;
    st.global.f32 [%rd4], %f2;
    ret;
}
"""
    f = facts_by_entry(text)["k"]
    assert (f.loop, f.load_bytes, f.store_bytes, f.fma, f.chains) == \
        ("per-element", 4, 4, 30, 1)
    assert f.control == 10 * LOOP_CONTROL  # ten passes: add, setp, bra each


def test_special_function_instructions_are_the_math_functions_measured():
    """The special-function unit's instructions stand for the measured functions whose
    single instruction they are (ex2 for exp2f, rsqrt for rsqrtf), IEEE division and square
    root for div and sqrtf, their approximations for one instruction; each times a constant
    loop's trips. Triton's gelu_half (fixtures/traces/triton/h100) has one ex2 and one
    div.full an element."""
    text = """
.visible .entry k(.param .u64 p0)
{
    ld.param.u64 %rd1, [p0];
    mov.u32 %r1, %tid.x;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.f32 %f1, [%rd4];
    ex2.approx.ftz.f32 %f2, %f1;
    div.rn.f32 %f3, %f2, %f1;
    sqrt.rn.f32 %f4, %f3;
    rcp.approx.ftz.f32 %f5, %f4;
    mov.u32 %r2, 0;
$L__BB0_1:
    sin.approx.f32 %f5, %f5;
    add.s32 %r2, %r2, 1;
    setp.lt.s32 %p1, %r2, 8;
    @%p1 bra $L__BB0_1;
    ex2.approx.f64 %fd1, %fd1;
    st.global.f32 [%rd4], %f5;
    ret;
}
"""
    f = facts_by_entry(text)["k"]
    assert dict(f.math) == {"exp2f": 1, "div": 1, "sqrtf": 1, "rsqrtf": 1, "__sinf": 8}
    cache = next((FIXTURES / "traces/triton/h100/triton-cache").glob("*/gelu_half.ptx"))
    assert dict(facts_by_entry(cache.read_text())["gelu_half"].math) == {
        "exp2f": 1, "rsqrtf": 1}


def test_the_source_counts_the_loop_control_the_compiler_emitted(facts):
    """The source reader's passes of each constant loop (its pragma, or LLVM's threshold
    without one) against the back edges nvcc's PTX holds: the same for nearly every kernel,
    one pass apart where nvcc unrolled a pragma-less loop by another count."""
    from occlint.readers.source import read_source

    source = {k.name: k.facts for k in read_source(score.PTX.parent / "kernels.cu", "k.cu").kernels}
    apart = {name for name, f in facts.items() if source[name].control != f.control}
    assert len(apart) <= len(facts) // 30, apart
    assert all(abs(source[n].control - facts[n].control) <= LOOP_CONTROL for n in apart)
    # the PTX itself: elementwise_02's `#pragma unroll 4` loop of 128 FMAs steps by 4 to 128
    body = _body("elementwise_02")
    assert "add.s32 \t%r7, %r7, 4;" in body and "setp.ne.s32 \t%p2, %r7, 128;" in body
    assert facts["elementwise_02"].control == source["elementwise_02"].control == 32 * 3


def test_a_loop_counted_from_memory_leaves_the_arithmetic_unknown():
    text = """
.visible .entry k(.param .u64 p0, .param .u32 p1)
{
    ld.param.u64 %rd1, [p0];
    ld.param.u32 %r9, [p1];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, 0;
$L__BB0_1:
    fma.rn.f32 %f2, %f2, %f2, %f2;
    add.s32 %r2, %r2, 1;
    setp.lt.s32 %p1, %r2, %r9;
    @%p1 bra $L__BB0_1;
    ret;
}
"""
    f = facts_by_entry(text)["k"]
    assert f.fma is None and not f.known


def test_a_trace_with_ptx_plans_every_kernel_from_its_facts(tmp_path):
    ptx = tmp_path / "kernels.sm_90.ptx"
    ptx.write_text(PTX)
    out = run_occlint(str(FIXTURES / "traces/heldout/h100/heldout.pt.trace.json.gz"), str(ptx),
                      "--format", "json", "--isolated", "--exit-zero")
    assert out.code == 0, out.err
    doc = json.loads(out.out)
    planned = [g for g in doc["launches"] if g.get("model")]
    assert planned and all(g["model"]["facts"]["source"] == "ptx" for g in planned)


def test_ptx_alone_is_one_line_and_exit_2(tmp_path):
    ptx = tmp_path / "k.ptx"
    ptx.write_text(PTX)
    out = subprocess.run([sys.executable, "-m", "occlint", str(ptx), "--isolated"],
                         capture_output=True, text=True)
    assert out.returncode == 2
    errors = [line for line in out.stderr.splitlines() if line.startswith("occlint: error:")]
    assert len(errors) == 1 and "PTX" in errors[0] and "Traceback" not in out.stderr


@pytest.mark.parametrize("cut", [0, 1, 17, 4096, 100_003, 300_001])
def test_cut_or_damaged_ptx_gives_facts_or_none_without_raising(cut):
    """PTX is untrusted text: cut anywhere, or with lines shuffled in, it is read without
    an exception (an entry whose body never closes ends the reading)."""
    text = PTX[:cut] + PTX[cut + 7:cut + 5000] if cut else "{{ .entry x( {"
    damaged = "\n".join(reversed(text.splitlines()[:2000]))
    for t in (text, damaged, "@%p bra $L;\n.entry k(\n{\n@%p bra $L;\n$L:\n}\n"):
        out = facts_by_entry(t)
        assert all(f.source == "ptx" for f in out.values())
