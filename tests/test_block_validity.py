"""Advice the kernel can run (issue 28): a block its launch bound allows, its static shared
arrays hold and its tree reduction sums whole.

By the language's semantics: a thread writing ``s[threadIdx.x]`` of a ``__shared__ float
s[256]`` writes past the array in a block of more than 256 threads; a tree that halves the
block (``for (s = blockDim.x / 2; s > 0; s >>= 1)``) leaves threads out of the sum in a
block that is not a power of two (192: 96, 48, 24, 12, 6, 3, 1 drops a third of the last
six). The held-out generator's block reductions are such trees (benchmarks/gpu/heldout/
generate.py ``reduce_``): before, 25 of their 426 scored launches were advised 192, 384 or
768 threads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.gpu.block_validity import SOURCE
from benchmarks.gpu.heldout import score
from occlint.pipeline.run import Options, execute
from occlint.readers.source.facts import kernel_facts
from tests.conftest import FIXTURES
from tests.test_traces_input import kernel, kineto

# the textbook reduction the GPU timed (benchmarks/gpu/block_validity.py): its parameters
# and its body
PARAMS = SOURCE[SOURCE.index("("):SOURCE.index(")") + 1]
TREE = SOURCE[SOURCE.index("{"):]


def test_the_blocks_a_tree_over_a_static_array_allows():
    facts = kernel_facts(PARAMS, TREE, "per-element", {})
    assert (facts.block_limit, facts.pow2_block) == (256, True)
    # the guard on the thread's alias: one atomic a block, not one an element
    assert (facts.atomics_one_block, facts.atomics_one) == (1.0, 0.0)
    defined = TREE.replace("sdata[256]", "sdata[BLOCK]")
    assert kernel_facts(PARAMS, defined, "per-element", {"BLOCK": 128}).block_limit == 128


@pytest.mark.parametrize(("body", "consts", "bounds"), [
    # a stencil's tile past its halo: 256 + 2R words, the thread's at threadIdx.x + R
    ("{ __shared__ float t[256 + 2 * R]; t[threadIdx.x + R] = in[threadIdx.x]; "
     "out[threadIdx.x] = t[threadIdx.x + R]; }", {"R": 4}, (260, 0)),
    # a transpose's tile, padded: [TILE][TILE + 1] written at [threadIdx.y][threadIdx.x]
    ("{ __shared__ float tile[TILE][TILE + 1]; tile[threadIdx.y][threadIdx.x] = "
     "in[threadIdx.x]; out[0] = tile[threadIdx.x][threadIdx.y]; }", {"TILE": 32}, (33, 32)),
])
def test_a_halo_and_a_tile_bound_the_block(body, consts, bounds):
    facts = kernel_facts(PARAMS, body, "per-element", consts)
    assert (facts.block_limit, facts.block_limit_y) == bounds


def test_an_extent_too_long_to_be_an_arrays_is_not_evaluated():
    """Untrusted text: a 5,000-term extent is not parsed (nor recursed through): an extent
    not known, the block kept from growing (-1)."""
    body = ("{ __shared__ float t[" + "+".join(["1"] * 5000) + "]; "
            "t[threadIdx.x] = in[threadIdx.x]; }")
    assert kernel_facts(PARAMS, body, "per-element", {}).block_limit == -1


@pytest.mark.parametrize("body", [
    # a few threads write it (the warps' partial sums), whatever the block
    "{ __shared__ float red[32]; if (threadIdx.x < 32) red[threadIdx.x] = in[threadIdx.x];"
    " out[0] = red[0]; }",
    # a loop's counter that starts at the thread walks the array by the block
    "{ __shared__ float h[256]; for (int t = threadIdx.x; t < 256; t += blockDim.x) "
    "h[t] = 0.0f; out[threadIdx.x] = h[threadIdx.x]; }",
    # a doubling loop (a scan's) runs in any block
    "{ __shared__ float t[1024]; t[threadIdx.x] = in[threadIdx.x]; "
    "for (int o = 1; o < blockDim.x; o *= 2) t[threadIdx.x] += t[threadIdx.x]; }",
])
def test_what_does_not_bound_the_block(body):
    facts = kernel_facts(PARAMS, body, "per-element", {})
    assert facts.block_limit in (0, 1024) and not facts.pow2_block


def _trace(path: Path, name: str, block: int, grid: int, us: float) -> Path:
    """Three launches of ``name`` on an H100, as libkineto writes them."""
    path.write_text(kineto([kernel(name, (grid, 1, 1), (block, 1, 1), ts=1000.0 * (k + 1),
                                   dur=us, regs=16, shared=1024) for k in range(3)]))
    return path


def test_the_advice_keeps_to_the_blocks_the_kernel_allows(tmp_path):
    """The tree above in 128-thread blocks over 2^26 floats on an H100, each block's sum
    into one address: the model advises a larger block, and only one the array holds and
    the tree sums whole."""
    source = tmp_path / "reduce.cu"
    source.write_text(f"__global__ void reduce_sum{PARAMS} {TREE}\n")
    trace = _trace(tmp_path / "reduce.pt.trace.json", "reduce_sum", 128, 1 << 19, 950.0)
    doc = execute(Options(paths=[str(trace), str(source)], isolated=True)).doc
    fix = doc["launches"][0]["model"]["fix"]
    assert fix is not None
    block = fix["block"][0]
    assert block > 128 and block <= 256 and block & (block - 1) == 0


def test_no_block_reduction_of_the_held_out_suites_is_advised_a_broken_tree():
    """Every scored launch of the generator's block reductions (a tree halving the block)
    is advised a power of two, or nothing."""
    advised = 0
    for run in sorted((FIXTURES / "traces").glob("heldout*/h[12]00")):
        if not (run / "heldout.pt.trace.json.gz").exists():
            continue
        for r in score.rows(run, "source"):
            if r["family"] == "block-reduce" and r["fix"]:
                block = r["fix"]["block"][0]
                assert block & (block - 1) == 0, (run, r["name"], block)
                advised += 1
    assert advised > 300


LB_SOURCE = """__global__ void __launch_bounds__(128) scale_lb(const float* a, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] * 2.0f;
}
"""
PTX = """.version 8.8
.target sm_90
.address_size 64
.visible .entry bounded(
	.param .u64 bounded_param_0
)
.maxntid 128, 2, 1
{
	ret;
}
.visible .entry free(
	.param .u64 free_param_0
)
{
	ret;
}
"""


def test_a_launch_bound_is_read_from_source_and_ptx():
    """``__launch_bounds__(128)`` (CUDA's: a launch of more threads fails) and PTX's
    ``.maxntid 128, 2, 1`` (256 threads)."""
    from occlint.readers.nvidia.ptx import facts_by_entry
    from occlint.readers.source import read_source

    assert {k: f.max_threads for k, f in facts_by_entry(PTX).items()} == {"bounded": 256,
                                                                         "free": 0}
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "lb.cu"
        source.write_text(LB_SOURCE)
        (kernel,) = read_source(source, "lb.cu").kernels
    assert kernel.facts.max_threads == 128


def test_the_advice_keeps_within_the_launch_bound(tmp_path):
    """One float a thread in 64-thread blocks, 2^26 of them, its start rate binding: the
    model would take 256 threads; the kernel's ``__launch_bounds__(128)`` keeps it at 128,
    and the plan says why."""
    source = tmp_path / "lb.cu"
    source.write_text(LB_SOURCE)
    trace = _trace(tmp_path / "lb.pt.trace.json", "scale_lb", 64, 1 << 20, 640.0)
    launch = execute(Options(paths=[str(trace), str(source)], isolated=True)).doc["launches"][0]
    assert launch["model"]["fix"]["block"] == [128, 1, 1]
    assert any("launch bound of 128" in u for u in launch["model"]["unknown"])
    free = tmp_path / "free.cu"
    free.write_text(LB_SOURCE.replace("__launch_bounds__(128) ", ""))
    launch = execute(Options(paths=[str(trace), str(free)], isolated=True)).doc["launches"][0]
    assert launch["model"]["fix"]["block"][0] > 128


def test_an_extent_the_file_does_not_give_keeps_the_block_from_growing(tmp_path):
    """``__shared__ float sdata[BLOCK]`` with ``BLOCK`` from the compiler's command line
    (``-DBLOCK=128``, not in the file) or a template's parameter: the array fits the launch
    as it is and may not fit a wider block, so none is advised (a narrower one may be)."""
    body = TREE.replace("sdata[256]", "sdata[BLOCK]")
    facts = kernel_facts(PARAMS, body, "per-element", {})
    assert facts.block_limit == -1 and facts.pow2_block
    source = tmp_path / "reduce.cu"
    source.write_text(f"__global__ void reduce_sum{PARAMS} {body}\n")
    trace = _trace(tmp_path / "reduce.pt.trace.json", "reduce_sum", 128, 1 << 19, 950.0)
    model = execute(Options(paths=[str(trace), str(source)], isolated=True)
                    ).doc["launches"][0]["model"]
    assert model["facts"]["block_limit"] == -1
    assert model["fix"] is None or model["fix"]["block"][0] <= 128


VALIDITY = FIXTURES / "traces" / "validity" / "h200"


def test_the_textbook_reduction_timed_on_the_gpu():
    """benchmarks/gpu/block_validity.py on the H200 (fixtures/traces/validity/h200): the
    textbook reduction over 2^26 ones traced in 128-thread blocks by the PyTorch profiler.
    The advice is 256 threads (the array's and the tree's most; it had been 384, past the
    array); timed there, 128 -> 256 saves what the range claims; and the 192 threads the
    tree cannot sum whole measure faster with the wrong sum (a third of the ones lost)."""
    doc = json.loads((VALIDITY / "block_validity.json").read_text())
    rows = {r["block"]: r for r in doc["rows"]}
    assert rows[192]["exact"] is False and rows[128]["exact"] and rows[256]["exact"]
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "reduce.cu"
        source.write_text(doc["source"])
        launch = execute(Options(paths=[str(VALIDITY / "reduce.pt.trace.json.gz"),
                                        str(source)], isolated=True)).doc["launches"][0]
    model = launch["model"]
    assert model["facts"]["block_limit"] == 256 and model["facts"]["pow2_block"]
    assert model["fix"]["block"] == [256, 1, 1]
    # the trace's "shared memory" (1,024: static and dynamic as one sum) is its static
    # array (256 floats): the fix passes no dynamic shared memory
    assert model["facts"]["static_shared"] == 1024 and model["fix"]["dynamic_shared"] == 0
    saved = 1 - rows[256]["ms"] / rows[128]["ms"]
    assert model["saving"]["low"] <= saved <= model["saving"]["high"]
    assert any(f["rule"] == "LCH108" and f["severity"] == "warning"
               for f in launch["findings"])


AXPY = """(const float* __restrict__ x, float* __restrict__ y, float alpha, long n) {
    long i = blockIdx.x * STEP + threadIdx.x;
    if (i < n) {
        y[i] = alpha * x[i] + y[i];
    }
}"""


@pytest.mark.parametrize(("index", "pinned"), [
    ("blockIdx.x * (long)32 + threadIdx.x", True),  # a template's BLOCK, instantiated
    ("blockIdx.x * TILE_DIM + threadIdx.x", True),  # cuda-samples' transpose
    ("threadIdx.x + blockIdx.x * 256", True),
    ("BLOCK * blockIdx.x + threadIdx.x", True),
    ("blockIdx.x * blockDim.x + threadIdx.x", False),
    ("(long)blockIdx.x * blockDim.x + threadIdx.x", False),
    ("threadIdx.x + blockDim.x * blockIdx.x", False),
    ("blockIdx.x * blockDim.x * 4 + threadIdx.x", False),
    ("hipBlockIdx_x * TILE_DIM + hipThreadIdx_x", True),  # HIP's spellings
    ("hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x", False),
])
def test_an_index_stepping_by_its_own_width_pins_the_block(index, pinned):
    """``blockIdx.x * 32 + threadIdx.x``: a launch of another width skips elements (fewer
    threads) or repeats them (more), so the kernel's block is the launch's; a width the
    body takes from blockDim.x is not pinned."""
    from occlint.model.facts import BLOCK_PINNED

    facts = kernel_facts("(const float* x, float* y, float alpha, long n)",
                         "{ long i = " + index + "; if (i < n) { y[i] = alpha * x[i] + y[i]; } }",
                         "per-element", {"TILE_DIM": 32, "BLOCK": 256})
    assert (facts.block_limit == BLOCK_PINNED) is pinned
    aliased = "{ int width = blockDim.x; long i = blockIdx.x * width + threadIdx.x; y[i] = x[i]; }"
    assert kernel_facts("(const float* x, float* y)", aliased, "per-element", {}).block_limit == 0


def test_a_kernel_written_for_its_block_gets_no_other(tmp_path):
    """A template's ``axpy_b<32u, float>`` (fixtures/sources/templates.cu: its index steps
    by BLOCK) in 32-thread blocks: no fix, no warning (before: 'use 256 threads', which
    would have summed elements over again), and the occupancy rule's advice says the width
    must change with the block; the same body stepping by blockDim.x is advised a wider
    block."""
    trace = _trace(tmp_path / "t.pt.trace.json",
                   "void axpy_b<32u, float>(float const*, float*, float, long)", 32,
                   (1 << 24) // 32, 290.0)
    group = execute(Options(paths=[str(trace), str(FIXTURES / "sources" / "templates.cu")],
                            isolated=True)).doc["launches"][0]
    assert group["model"]["fix"] is None
    assert not [f for f in group["findings"] if f["severity"] == "warning"]
    advice = next(f["advice"] for f in group["findings"] if f["rule"] == "LCH003")
    assert "with the width the kernel's element index steps by" in advice
    source = tmp_path / "axpy.cu"
    source.write_text("__global__ void axpy" + AXPY.replace("STEP", "blockDim.x") + "\n")
    trace = _trace(tmp_path / "u.pt.trace.json", "axpy", 32, (1 << 24) // 32, 290.0)
    group = execute(Options(paths=[str(trace), str(source)], isolated=True)).doc["launches"][0]
    assert group["model"]["fix"]["block"][0] > 32
