"""CUDA / HIP sources as real trees write them (issue 20): one small fixture per case.

Each fixture in tests/sources/cases/ names the public tree and line it was seen in. The
expected values are read by hand from the fixture's text (the literals, the #defines and
the declarations each launch uses); the line of a launch is found in the test's own copy of
the text (``line_of``), never taken from occlint.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REPO

CASES = REPO / "tests" / "sources" / "cases"
n = None  # an unknown dimension


def read(name: str):
    from occlint.readers.source import read_source

    return read_source(CASES / name, name)


def line_of(name: str, needle: str, nth: int = 0) -> int:
    """1-based line of the ``nth`` line of the fixture that contains ``needle``."""
    lines = [i for i, text in enumerate((CASES / name).read_text().splitlines(), 1)
             if needle in text]
    return lines[nth]


def by_line(source) -> dict[int, tuple]:
    return {s.span.line: (s.kernel, s.grid.dims if s.grid else None,
                          s.block.dims if s.block else None) for s in source.launches}


def test_preprocessor_directives_inside_a_launch():
    name = "preprocessor_arguments.cu"
    source = read(name)
    assert source.error_regions == []
    sites = by_line(source)
    # a #if among the kernel's arguments: the block is the dim3 threads(32, 8) before it
    assert sites[line_of(name, "pad<<<n, threads>>>")] == ("pad", (n, n, n), (32, 8, 1))
    # a #ifdef around the shared memory and stream: the block is 256 in both configurations
    assert sites[line_of(name, "pad<<<n, 256")] == ("pad", (n, n, n), (256, 1, 1))
    # a #if choosing the block: 512 or 128, so not known; the site is kept
    chosen = source.launches[2]
    assert chosen.span.line == line_of(name, "pad<<<n,", 2)
    assert chosen.block.dims == (n, n, n) and "preprocessor" in chosen.block.reason
    # `#define USE_TEXTURE 0`: the #if USE_TEXTURE branch is not compiled, its #else is
    assert line_of(name, "pad<<<n, 64>>>") not in sites
    assert sites[line_of(name, "pad<<<n, 96>>>")] == ("pad", (n, n, n), (96, 1, 1))
    assert len(sites) == 4


def test_launches_in_branches_and_split_conditions():
    name = "preprocessor_condition.cu"
    source = read(name)
    assert source.error_regions == []
    sites = by_line(source)
    assert sites == {
        line_of(name, "divide<<<1, 1,"): ("divide", (1, 1, 1), (1, 1, 1)),
        line_of(name, "rows<<<"): ("rows", (n, n, n), (512, 1, 1)),
        # WITH_GRAPH is 1 unless the build says otherwise: the #else is read too
        line_of(name, "divide<<<1, 32,"): ("divide", (1, 1, 1), (32, 1, 1)),
    }


def test_launches_in_define_bodies():
    name = "macro_launches.cu"
    source = read(name)
    assert source.error_regions == []
    sites = by_line(source)
    assert sites == {
        # #define LAUNCH_REDUCE(T) reduce<T><<<dim3(AR_BLOCKS), dim3(256), ...>>>
        line_of(name, "reduce<T><<<dim3(AR_BLOCKS)"): ("reduce", (8, 1, 1), (256, 1, 1)),
        # the block is the macro's parameter THREADS: not known where it is defined
        line_of(name, "#define LAUNCH_AT"): ("reduce", (8, 1, 1), (n, n, n)),
        # through the file's own hipLaunchKernelGGL wrapper, whose body is no site
        line_of(name, "hipLaunchKernelGGL(reduce<float>"): ("reduce", (8, 1, 1),
                                                            (128, 1, 1)),
    }
    assert "parameter of the macro" in source.launches[1].block.reason


def test_comments_among_launch_arguments():
    name = "comments.hip"
    source = read(name)
    ggl, chevrons = source.launches
    assert (ggl.kernel, ggl.grid.dims, ggl.block.dims) == ("sgemm", (64, 64, 1), (16, 16, 1))
    assert ggl.shared.dims == (0, 1, 1) and ggl.stream == "stream"
    assert ggl.block.span.line == line_of(name, "dim3(16, 16)")
    assert (chevrons.kernel, chevrons.grid.dims, chevrons.block.dims) == \
        ("hello", (1, 1, 1), (2, 1, 1))
    assert chevrons.block.text == "dim3(2)" and chevrons.stream == "hipStreamDefault"


def test_defines_in_expressions_and_with_comments():
    source = read("defines.cu")
    blocks = [(s.block.text, s.block.dims) for s in source.launches]
    assert blocks == [
        ("THREADS_PER_BLOCK", (256, 1, 1)),  # (WARP_SIZE * WARPS_PER_BLOCK) = 32 * 8
        ("BLOCK", (256, 1, 1)),  # #define BLOCK THREADS_PER_BLOCK
        ("NUM_THREADS", (64, 1, 1)),  # 64 /* per block */
        ("LONG_BLOCK", (128, 1, 1)),  # (2 * NUM_THREADS), continued on the next line
        ("TWICE", (128, 1, 1)),  # #defined twice, the same
    ]


def test_dim3_of_names():
    source = read("dim3_names.cu")
    blocks = [(s.block.text, s.block.dims) for s in source.launches]
    assert blocks == [
        ("threads", (16, 4, 1)),  # dim3 threads(ROWS_X, ROWS_Y)
        ("block_dim", (16, 16, 1)),  # const dim3 block_dim(block_size, block_size)
        ("b", (32, 1, 1)),  # dim3 b(once), int once = 32 never assigned again
        ("tiny", (16, 1, 1)),  # dim3 tiny(block_size)
        ("open", (n, 4, 1)),  # dim3 open(unknown, ROWS_Y): x is a parameter
    ]


def test_a_sixteen_thread_dim3_of_a_constexpr_gets_lch001(occlint):
    run = occlint(str(CASES / "dim3_names.cu"), "--device", "h100", "--select", "LCH001")
    line = line_of("dim3_names.cu", "stencil<<<65536, tiny>>>")
    column = (CASES / "dim3_names.cu").read_text().splitlines()[line - 1].index("tiny") + 1
    assert run.code == 1, run.err
    hits = [x for x in run.out.splitlines() if " LCH001 " in x]
    # 16 threads: half of an H100's 32-lane warp idles
    assert len(hits) == 1 and f"dim3_names.cu:{line}:{column}: LCH001" in hits[0], run.out
    assert "16 idle" in hits[0]


@pytest.mark.parametrize("name, vendor, wave", [
    ("scale.cpp", "amd", "64-lane wavefront"),  # HIP through common.hpp, then runtime.hpp
    ("plain.cpp", None, "32-lane warp"),  # no HIP header: NVIDIA's warp, as before
])
def test_vendor_through_local_headers(occlint, name, vendor, wave):
    path = CASES / "vendor" / name
    doc = occlint(str(path), "--format", "json").json()
    assert doc["sources"][0]["vendor_hint"] == vendor
    run = occlint(str(path))
    assert run.code == 1 and wave in run.out, run.out


def test_vendor_of_a_header_that_cannot_be_read(tmp_path: Path):
    from occlint.readers.source import read_source

    (tmp_path / "k.cpp").write_text('#include "gone.hpp"\n#include "loop.hpp"\n'
                                    "__global__ void k() {}\n")
    (tmp_path / "loop.hpp").write_text('#include "loop.hpp"\n')  # includes itself
    assert read_source(tmp_path / "k.cpp", "k.cpp").vendor_hint is None


@pytest.mark.parametrize("text, hip", [
    (b"hipLaunchKernelGGL(k, g, b, 0, 0);", True),
    (b"void f(hipStream_t s);", True),
    (b"hipStream_tx s;", False),  # another name
    (b"#if defined(__HIP_PLATFORM_AMD__)", True),
    (b"#include <hip/hip_runtime.h>", True),
    (b'  #  include "rocblas/rocblas.h"', True),
    (b"#include <hipcub/hipcub.hpp>", True),
    (b"#include <cuda_runtime.h>\n// see hip/README", False),
    (b"x include <hip/hip_runtime.h>", False),  # not a directive
    (b"#include <chip/io.h>", False),
])
def test_what_makes_a_text_hip(text, hip):
    from occlint.readers.source.vendor import is_hip

    assert is_hip(text) is hip


def _defined_kernels(text: str) -> list[str]:
    """The names of the `__global__` definitions of a text (explicit instantiations, which
    have no body, left out), found with a regular expression."""
    import re

    heads = re.findall(r"__global__\s+void\s+(\w+)\s*\([^;{]*\)\s*\{", text)
    return sorted(heads)


@pytest.mark.parametrize("path", ["fixtures/nvidia/src/stencils.cu",
                                  "benchmarks/gpu/kernels/stencils.cu"])
def test_statement_macros_and_pragmas_between_loops_parse(path):
    """Issue 31: nvcc compiles these files; `THREAD_3D` / `DECOMPOSE3` stand alone on their
    line for declarations (no semicolon), and `#pragma unroll` sits between a loop's header
    and its body. Every kernel is read and no region is reported as not parsing."""
    from occlint.readers.source import read_source

    source = read_source(REPO / path, path)
    assert source.error_regions == []
    wanted = _defined_kernels((REPO / path).read_text())
    assert len(wanted) == 11
    assert sorted(k.name for k in source.kernels) == wanted


def test_a_pragma_between_loop_headers_keeps_the_kernel():
    from occlint.readers.source import parse_source

    text = ("__global__ void tiled(float* o)\n{\n    float s = 0;\n"
            "    for (int a = 0; a < 4; ++a)\n#pragma unroll\n"
            "        for (int b = 0; b < 4; ++b)\n            s += a * b;\n    o[0] = s;\n}\n"
            "void run(float* o) { tiled<<<1, 100>>>(o); }\n")
    source = parse_source(text.encode(), "tiled.cu")
    assert [k.name for k in source.kernels] == ["tiled"]
    assert source.error_regions == []
    [site] = source.launches
    line = text.splitlines().index("void run(float* o) { tiled<<<1, 100>>>(o); }") + 1
    assert site.span.line == line and site.block.dims == (100, 1, 1)


def test_macros_the_grammar_does_not_know_keep_the_kernels_around_them():
    """Three spellings real trees use that tree-sitter-cuda cannot parse without the header
    defining them: a pragma macro alone before a loop (CUTLASS_PRAGMA_UNROLL;
    tiny-cuda-nn's TCNN_PRAGMA_UNROLL: 42 of grid.h's 47 regions), ``_Pragma`` in place, an
    extended lambda's ``__device__`` (tiny-cuda-nn's parallel_for_gpu calls) and a restrict
    macro after a pointer's star (ggml-cuda's GGML_CUDA_RESTRICT: 74 of its 111 regions, 16
    kernels unread). Each is blanked; the kernels parse, the launch after them is read. A
    macro the file defines as statements stays one (the test above)."""
    from occlint.readers.source import parse_source

    text = ("__global__ void scale(const float* __restrict__ a, float* o, int n)\n{\n"
            "    const float * GGML_CUDA_RESTRICT x = a + blockIdx.x * 4;\n"
            "    float s = 0;\n"
            "    CUTLASS_PRAGMA_UNROLL\n"
            "    for (int k = 0; k < 4; ++k) s += x[k];\n"
            "    _Pragma(\"unroll\")\n"
            "    for (int k = 0; k < 4; ++k) s += x[k];\n"
            "    o[blockIdx.x] = s;\n}\n"
            "void run(const float* a, float* o, int n)\n{\n"
            "    for_each(n, [=] __device__ (int i) { o[i] = 0; });\n"
            "    scale<<<n / 4, 128>>>(a, o, n);\n}\n")
    source = parse_source(text.encode(), "macros.cu")
    assert source.error_regions == []
    assert [k.name for k in source.kernels] == ["scale"]
    [site] = source.launches
    assert site.span.line == text.splitlines().index("    scale<<<n / 4, 128>>>(a, o, n);") + 1
    assert site.block.dims == (128, 1, 1)


def test_attributes_the_grammar_has_no_place_for_keep_the_kernels_after_them():
    """A struct's __align__ / __builtin_align__ (cuda-samples' alignedTypes, ggml's float8),
    CUDART_CB before a callback's name (simpleCallback), a vector type's __vector_size__
    attribute (HPCTrainingExamples' MFMA examples: 12 kernels unread, 49 regions): blanked,
    the file parses and its kernels and launch are read."""
    from occlint.readers.source import parse_source

    text = ("typedef struct __align__(16) { float a, b, c, d; } quad_t;\n"
            "struct __builtin_align__(32) float8 { float v[8]; };\n"
            "using f16x4 = __attribute__((__vector_size__(4 * sizeof(short)))) short;\n"
            "void CUDART_CB done(void* data);\n"
            "__global__ void fill(quad_t* o) { o[threadIdx.x].a = 1.0f; }\n"
            "void run(quad_t* o) { fill<<<3, 64>>>(o); }\n")
    source = parse_source(text.encode(), "attributes.cu")
    assert source.error_regions == []
    assert [k.name for k in source.kernels] == ["fill"]
    [site] = source.launches
    assert site.grid.dims == (3, 1, 1) and site.block.dims == (64, 1, 1)


def test_declaring_and_attribute_macros_keep_the_file_after_them():
    """candle defines its kernels through the file's macros, used alone on their lines with
    no semicolon (reduce.cu's SOFTMAX_OP(...): 42 regions unparsed in the tree), and
    DeepSpeed opens declarations with an attribute macro of another header (DS_D_INLINE,
    `static CUTLASS_DEVICE`): both blanked, the kernel and launch after them are read; a
    macro spelling a type (`REAL x = 1;`) is no attribute and stays."""
    from occlint.readers.source import parse_source

    text = ("#define UNARY_OP(T, NAME) \\\n"
            "extern \"C\" __global__ void NAME(const T* x, T* y) { y[threadIdx.x] = x[0]; }\n"
            "UNARY_OP(float, neg_f32)\n"
            "UNARY_OP(double, neg_f64)\n"
            "DS_D_INLINE float act_fn(float val);\n"
            "struct S {\n  static CUTLASS_DEVICE void load(int i);\n};\n"
            "__global__ void scale(float* o) { REAL r = 2; o[threadIdx.x] *= r; }\n"
            "void run(float* o) { scale<<<4, 96>>>(o); }\n")
    source = parse_source(text.encode(), "macros2.cu")
    assert source.error_regions == []
    assert [k.name for k in source.kernels] == ["scale"]
    [site] = source.launches
    assert site.grid.dims == (4, 1, 1) and site.block.dims == (96, 1, 1)


def test_a_statement_macro_alone_on_its_line_keeps_the_launch_after_it():
    from occlint.readers.source import parse_source

    text = ("#define PROLOGUE \\\n    int i = threadIdx.x; \\\n    (void)i;\n"
            "__global__ void k(float* o) { o[threadIdx.x] = 1; }\n"
            "void run(float* o)\n{\n    PROLOGUE\n    k<<<7, 96>>>(o);\n}\n")
    source = parse_source(text.encode(), "prologue.cu")
    assert source.error_regions == []
    [site] = source.launches
    assert site.span.line == text.splitlines().index("    k<<<7, 96>>>(o);") + 1
    assert site.grid.dims == (7, 1, 1) and site.block.dims == (96, 1, 1)


def test_kernels_that_read_no_block_index_get_no_grid_rules(occlint):
    """A kernel whose body reads no block index does the same work in every block: no grid
    rule asks it for more blocks, and one whose threads are its work is not told to use a
    warp of them (cccl's <<<1, 1>>> reductions; a block's cooperative-groups rank). A
    kernel reading its index through a helper of the file keeps them (LCH102)."""
    def rules(name: str) -> set[tuple[str, str]]:
        doc = occlint(str(CASES / name), "--device", "h100", "--format", "json").json()
        return {(f["kernel"], f["rule"]) for f in doc["findings"]}

    assert rules("no_block_index.cu") == set()
    assert ("through_helper", "LCH102") in rules("block_index_helper.cu")
    # llm.c's single-block sum calls blockReduce; the file's one helper reading a block
    # index is stochastic_rounding, which it does not call (and a comment names blockIdx)
    kernel = read("single_block.cu").kernels[0]
    assert kernel.name == "global_sum_single_block_kernel" and kernel.block_indexed is False
    assert rules("single_block.cu") == set()


def test_a_block_index_that_only_picks_a_role_does_not_split_the_work(occlint):
    """flashinfer's one- and two-block kernels compare their block index with 0 (block 0
    scans the send counts, block 1 the receive counts; every block but 0 returns): more
    blocks repeat a role, so no grid rule asks for 132 blocks (before: "launch at least 132
    blocks", 74-99 % claimed). A kernel that compares its index with 0 and also steps its
    elements by it is still judged."""
    name = "block_roles.cu"
    kernels = {k.name: k.block_indexed for k in read(name).kernels}
    assert kernels == {"bump_tag_kernel": False, "offsets_preflight_kernel": False,
                       "computeCumsumDevice": False, "first_block_also_counts": True}
    doc = occlint(str(CASES / name), "--device", "h100", "--format", "json").json()
    assert {(f["kernel"], f["rule"]) for f in doc["findings"]} == {
        ("first_block_also_counts", "LCH102")}
    (source,) = doc["sources"]
    reasons = {site["kernel"]: site["advice"]["reason"] for site in source["launches"]}
    assert "does not split its work by block" in reasons["computeCumsumDevice"]
    assert "grid follows the problem size" in reasons["first_block_also_counts"]


@pytest.mark.parametrize(("body", "indexed"), [
    ("if (threadIdx.x == 0 && blockIdx.x == 0) { *x = 1.0f; }", False),
    ("if (threadIdx.x != 0 || blockIdx.x != 0) return; *x = 1.0f;", False),
    ("float* p = blockIdx.x == 0 ? x : x + 1; *p = 1.0f;", False),
    ("if (0 == blockIdx.y) *x = 1.0f;", False),
    ("if (hipBlockIdx_x == 0u) *x = 1.0f;", False),
    ("int i = blockIdx.x * blockDim.x + threadIdx.x; if (blockIdx.x == 0) x[i] = 1.0f;", True),
    ("if (0 == blockIdx.x * 4) *x = 1.0f;", True),  # arithmetic on it: not a role's test
    ("if (n + blockIdx.x == 0) *x = 1.0f;", True),
    ("if (blockIdx.x == gridDim.x - 1) *x = 1.0f;", True),  # the last block: not a constant
])
def test_which_block_index_reads_pick_a_role(tmp_path, body, indexed):
    from occlint.readers.source import read_source

    path = tmp_path / "k.cu"
    path.write_text(f"__global__ void k(float *x, int n) {{ {body} }}\n")
    (kernel,) = read_source(path, "k.cu").kernels
    assert kernel.block_indexed is indexed


def test_a_launch_through_a_variable_holding_the_kernel(occlint):
    """``auto func = k<1024>; if (n <= 32) func = k<32>; ... cudaLaunchKernelEx(&config,
    func, ...)`` and ``kernelPtr<<<2, blockSize>>>`` (flashinfer's choice of a block by
    size) launch k: the site is k's (its body read, no grid asked of a one-block scan). The
    declaration in the branch holding the launch is the one read; a variable given two
    kernels, or a call's result, stays as written."""
    name = "kernel_variables.cu"
    sites = {s.span.line: (s.kernel, s.kernel_text) for s in read(name).launches}
    assert sites == {
        line_of(name, "cudaLaunchKernelEx(&config, func", 0):
            ("globalExpertPrefixSumKernel", "func"),
        line_of(name, "cudaLaunchKernelEx(&config, func", 1):
            ("globalExpertPrefixSumLargeKernel", "globalExpertPrefixSumLargeKernel<1024>"),
        line_of(name, "kernelPtr<<<"): ("inplaceSendRecvRankCumSumKernel", "kernelPtr"),
        line_of(name, "chosen<<<"): ("chosen", "chosen"),
        line_of(name, "picked<<<"): ("picked", "picked"),
    }
    doc = occlint(str(CASES / name), "--device", "h100", "--format", "json").json()
    assert {(f["kernel"], f["rule"]) for f in doc["findings"]} == {
        ("chosen", "LCH102"), ("picked", "LCH102")}


def test_a_one_block_kernel_of_its_threads_is_not_told_a_warp_of_them(occlint):
    """rocm-examples' warp_shuffle transposes a width x width matrix in one block, indexed
    by threadIdx alone (a bounds check, no block index): a block of 32 threads would not
    shrink the grid (it is 1) but leave the matrix's rows out; before, LCH001 "use 32
    threads per block", 40-58 % claimed."""
    doc = occlint(str(CASES / "one_block_threads.cu"), "--device", "h100", "--format",
                  "json").json()
    assert doc["findings"] == []
    (kernel,) = read("one_block_threads.cu").kernels
    assert kernel.body == "per-element" and kernel.block_indexed is False


def test_a_tile_kernel_is_not_told_another_block_or_grid(occlint):
    """A 32 x 32 tile in shared memory (CoffeeBeforeArch's tiled matmul): its grid's tail
    is stated (info), but neither a grid-stride grid (the kernel is in the run and is no
    grid-stride loop) nor another block size (it has a barrier: its block is its tile) is
    advised; before, "a block of 896 threads gives 1171 blocks" (a prime: no 2-D grid)."""
    doc = occlint(str(CASES / "fixed_tile.cu"), "--device", "h100", "--format", "json").json()
    (f,) = [f for f in doc["findings"] if f["rule"] == "LCH101"]
    assert f["severity"] == "info" and not f.get("advice"), f


def test_a_macro_handed_the_kernel_that_fixes_the_block_is_read(occlint):
    """apex's CALL_TWO_PASS_KERNEL launches whatever kernel it is handed with blocks it
    fixes (140 threads: LCH001 on the macro's line); a wrapper whose block is a parameter
    too gives no site in its definition (its block is its uses')."""
    doc = occlint(str(CASES / "macro_kernel_param.cu"), "--device", "h100", "--format",
                  "json").json()
    blocks = sorted(s["block"]["value"] for f in doc["sources"] for s in f["launches"])
    assert blocks == [140]
    (f,) = [f for f in doc["findings"] if f["rule"] == "LCH001"]
    assert f["line"] == 9 and f["data"]["block"] == 140


def test_a_reductions_thread_subsets_are_not_bounds_checks():
    """llm.c's kernels (tests/sources/cases/reductions.cu): a tree reduction's ``if (tid <
    stride)`` against its loop's own counter and a ``?:`` against the block's warps pick
    some of the block's threads, whatever the problem's size: not one element per thread
    (mean_kernel was read so, and layernorm_forward_kernel5's block per row lost its loop
    to the ``?:``); a ``?:`` against a count the kernel is given is a bounds check."""
    kernels = {k.name: k for k in read("reductions.cu").kernels}
    assert kernels["mean_kernel"].body == "other"
    assert kernels["layernorm_forward_kernel5"].body == "other"
    assert kernels["layernorm_forward_kernel5"].facts.loop == "block-stride"
    assert kernels["global_norm_aggregate_kernel"].body == "per-element"


def test_an_elements_value_compared_is_not_a_bounds_check(tmp_path):
    """An argmax a block per row (zoo set 6): ``if (x[j] > best)`` compares the element
    loaded at the row's index, not the index with a problem's size; read as one element per
    thread, the launch-time model advised another grid, one that launches other rows."""
    from occlint.readers.source import read_source

    path = tmp_path / "argmax.cu"
    path.write_text("""
__global__ void argmax_row(const float* a, float* c, long cols) {
    const float* x = a + blockIdx.x * cols;
    float best = -1e30f;
    int at = 0;
    for (long j = threadIdx.x; j < cols; j += blockDim.x)
        if (x[j] > best) { best = x[j]; at = (int)j; }
    if (threadIdx.x == 0) c[blockIdx.x] = (float)at;
}
__global__ void clip(const float* a, float* c, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n && a[i] > 0.0f) c[i] = a[i];
}
""")
    kernels = {k.name: k for k in read_source(path, "argmax.cu").kernels}
    assert kernels["argmax_row"].body == "other"
    assert kernels["argmax_row"].facts.loop == "block-stride"
    assert kernels["clip"].body == "per-element"  # its i < n is still the bounds check


def test_kernels_whose_global_a_macro_spells():
    """raft's ``RAFT_KERNEL`` (``static __global__ void``) and cudf's ``CUDF_KERNEL void``
    (defined in headers not in the run) and a file's own ``#define GPU_KERNEL __global__``:
    read as the kernels they are (raft's 205 kernels were none before; their launches "not
    defined in this file"). A name holding KERNEL that the file defines as a constant is
    not one, nor CUB's ``..._KERNEL_ATTRIBUTES`` (its kernels launch through its own
    triple_chevron; reading its headers cost a quarter of CuPy's sdist's time)."""
    name = "kernel_macros.cu"
    source = read(name)
    # the CUB line alone does not parse (a macro, then a type, then the name)
    assert [e.line for e in source.error_regions] == [line_of(name, "void cub_internal(")]
    kernels = {k.name: (k.span.line, k.body, k.launch_bounds, k.template)
               for k in source.kernels}
    assert kernels == {
        "scale_local": (line_of(name, "void scale_local("), "per-element", None, False),
        "fill_local": (line_of(name, "DEF_KERNEL fill_local("), "per-element", None, False),
        "clamp_down": (line_of(name, "RAFT_KERNEL clamp_down("), "other", None, True),
        # launch bounds after the macro (the template's Threads: unknown), a pack of pointers
        "tail_kernel": (line_of(name, "tail_kernel(T* out"), "per-element", (None, 2), True),
        "offset_kernel": (line_of(name, "CUDF_KERNEL void offset_kernel("), "per-element",
                          None, False),
        "copy_kernel": (line_of(name, "copy_kernel(const float*"), "grid-stride",
                        (128, None), False),
    }


def test_kernel_macros_in_a_file_without_global(tmp_path):
    """A header holding only macro-spelled kernels (no ``__global__``, no launch) is read:
    its kernels' launches in another file are judged with their bodies."""
    from occlint.readers.source import read_source

    header = tmp_path / "k.cuh"
    header.write_text("template <typename T>\nRAFT_KERNEL clamp(T* v, T t)\n"
                      "{\n  *v = (fabs(*v) < t) ? 0 : *v;\n}\n")
    assert [k.name for k in read_source(header, "k.cuh").kernels] == ["clamp"]
    plain = tmp_path / "plain.h"
    plain.write_text("#define KERNEL_RADIUS 4\nint taps = KERNEL_RADIUS * 2 + 1;\n")
    assert read_source(plain, "plain.h").kernels == []


def test_serial_launches_get_no_block_or_grid_advice(occlint):
    """Launches whose threads or blocks would repeat the work, not split it: a block per
    column in one thread whose body reads no thread index (raft's naiveSignFlipKernel:
    "use 32 threads per block" would have each thread redo the column), a block whose
    thread 0 alone works (TransformerEngine's update_tma_descriptors<<<num_tensors, 1>>>),
    ``<<<1, 1>>>`` of a kernel not in the run (raft's lanczos clamp), one block of fewer
    threads than a warp (raft's span tests: one warp runs it whatever the block; no smaller
    block gives more blocks either), any block of one thread unless its kernel splits by
    thread, a kernel whose body is empty (cccl's ``reserved::dummy<<<1, 1>>>``). A block of
    48 of a kernel not in the run keeps LCH001, its fix a whole-warp
    block (the grid follows the problem size); a grid-stride loop whose threads each end in
    an atomic on one address is told only the balanced grid below its own (more threads
    queue more atomics)."""
    name = "serial_launches.cu"
    kernels = read(name).kernels
    threads = {k.name: k.thread_indexed for k in kernels if k.name != "sorted"}
    assert threads == {"sign_flip": False, "sign_flip_helper": None, "span_check": True,
                       "naive_dot": True, "setup_entries": False, "dummy": None}
    assert [(k.name, k.empty) for k in kernels if k.empty or k.name == "sorted"] == [
        ("dummy", True), ("sorted", False), ("sorted", False)]
    doc = occlint(str(CASES / name), "--device", "h100", "--format", "json").json()
    found = {(f["kernel"], f["line"], f["rule"], f["severity"]): f for f in doc["findings"]}
    assert set(found) == {
        ("span_check", line_of(name, "span_check<<<1, 256"), "LCH102", "info"),
        ("wait_elsewhere", line_of(name, "wait_elsewhere<<<"), "LCH102", "warning"),
        ("naive_dot", line_of(name, "naive_dot<<<"), "LCH101", "warning"),
        ("scale_elsewhere", line_of(name, "scale_elsewhere<<<"), "LCH001", "warning")}
    dot = found[("naive_dot", line_of(name, "naive_dot<<<"), "LCH101", "warning")]
    assert dot["advice"] == "use a grid of 132 blocks"  # 256 blocks on 132 SMs: 132 or 264
    # each advice as data: the block as written, the balanced grid below
    assert dot["fix"] == {"block": [256, 1, 1], "grid": [132, 1, 1], "dynamic_shared": 0}
    # the whole-warp block above 48; the site's grid follows the problem size at it
    scale = found[("scale_elsewhere", line_of(name, "scale_elsewhere<<<"), "LCH001",
                   "warning")]
    assert scale["fix"] == {"block": [64, 1, 1], "grid": None, "dynamic_shared": 0}
    (source,) = doc["sources"]
    reasons = {(site["kernel"], site["line"]): site["advice"]["reason"]
               for site in source["launches"]}
    assert "reads no thread index" in reasons[("sign_flip", line_of(name, "sign_flip<<<"))]
    assert "serial work by design" in reasons[
        ("clamp_elsewhere", line_of(name, "clamp_elsewhere<<<"))]
    # an empty body: no block (48) or grid (4 blocks on 132 SMs) is judged
    assert "is empty" in reasons[("dummy", line_of(name, "dummy<<<4, 48"))]


def test_a_site_rules_advice_carries_its_fix(occlint):
    """The oversubscription grid of a grid-stride site the model does not price (its
    loop's work is unknown) is in the finding as data: 10 x the H100's 132 x 64 warp slots,
    in blocks of 128 threads (4 warps), the block and shared memory as the site passes them;
    the document validates against the schema (a site's grid may be null)."""
    import jsonschema

    name = "kernel_macros.cu"
    doc = occlint(str(CASES / name), "--device", "h100", "--format", "json").json()
    (f,) = [f for f in doc["findings"] if f["rule"] == "LCH103"]
    assert f["kernel"] == "copy_kernel"
    assert f["fix"] == {"block": [128, 1, 1], "grid": [10 * 132 * 64 // 4, 1, 1],
                        "dynamic_shared": 0}
    schema = json.loads((REPO / "docs/schema/occlint-report.schema.json").read_text())
    jsonschema.validate(doc, schema)


def test_a_constant_grid_of_one_element_per_thread_is_balanced_by_its_block(occlint,
                                                                           tmp_path):
    """1,000 blocks of 256 threads on 132 SMs, one element per thread, two devices (the
    model prices one): LCH101's advice is another block for the same 256,000 elements, and
    its fix carries that block and the grid it gives (256,000 / 64 = 4,000 blocks)."""
    src = tmp_path / "pe.cu"
    src.write_text("__global__ void k(float* x, int n) {\n"
                   "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                   "  if (i < n) x[i] = 2.0f * x[i];\n}\n"
                   "void f(float* x) { k<<<1000, 256>>>(x, 256000); }\n")
    doc = occlint(str(src), "--device", "h100", "--device", "h200", "--format", "json").json()
    fixes = [f["fix"] for f in doc["findings"] if f["rule"] == "LCH101"]
    assert fixes and all(f["block"][0] * f["grid"][0] == 256_000 and f["block"][0] % 32 == 0
                         and f["block"][0] != 256 for f in fixes)


def test_kernels_that_talk_to_other_gpus_get_no_launch_advice(occlint):
    """A kernel using NCCL's device API (one CTA per LSA barrier: 16 of them) or NVSHMEM's
    puts waits on the other ranks and the links, and its grid is its communicator's: no
    grid or block rule judges it (nccl's own device-API examples were told "use a grid of
    5280 blocks"). The same loop copying locally in 16 blocks is still judged; a traced
    launch of such a kernel is a communication design (no saving estimated)."""
    from occlint.analysis.sites import launch_index
    from occlint.judgement.design import communication

    name = "communicating.cu"
    source = read(name)
    assert {k.name: k.communicates for k in source.kernels} == {
        "lsa_allreduce": "NCCL", "put_tokens": "NVSHMEM", "copy_tokens": None}
    doc = occlint(str(CASES / name), "--device", "h100", "--format", "json").json()
    assert {f["kernel"] for f in doc["findings"]} == {"copy_tokens"}
    reasons = {site["kernel"]: site["advice"]["reason"] for site in doc["sources"][0]["launches"]}
    assert "talks to other GPUs through NCCL" in reasons["lsa_allreduce"]
    assert "talks to other GPUs through NVSHMEM" in reasons["put_tokens"]
    index = launch_index([source])
    assert index["put_tokens"]["communicates"] == "NVSHMEM"
    assert "communicates" not in index["copy_tokens"]
    assert communication(None, "NVSHMEM")["kind"] == "communication"
    assert communication(None, None) is None


PYTHON = REPO / "tests" / "sources" / "python"


def test_cuda_in_python_strings_keeps_lines_and_columns():
    """Only the text of the string literals holding CUDA is kept, every other byte blanked
    (newlines kept): a launch's line and column are the script's. Comments and other
    strings (one naming ``<<<`` in prose) are not CUDA; an f-string's doubled braces are
    C's braces."""
    from occlint.readers.source.python_strings import cuda_in

    data = (PYTHON / "load_inline.py").read_bytes()
    out = cuda_in(data)
    assert out is not None and len(out) == len(data) and out.count(b"\n") == data.count(b"\n")
    # every byte kept is the script's own, where it stands
    assert all(o == d for o, d in zip(out, data, strict=True) if o not in b" \n")
    kernel_line = next(i for i, t in enumerate(data.splitlines()) if b"__global__" in t)
    assert out.splitlines()[kernel_line] == data.splitlines()[kernel_line]
    assert b"load_inline(" not in out and b"torch::Tensor scale(torch::Tensor x, double a);" \
        not in out
    # the prose naming <<<grid, block>>> holds no kernel: kept as a string only with one
    assert b"a kernel's launch is" in out  # (a literal holding "<<<" is kept as written)
    raw = cuda_in((PYTHON / "raw_kernel.py").read_bytes())
    # an f-string: its doubled braces C's, each field a name as long (its type not known)
    assert b"__global__ void saxpy_raw(const _______* x, _______* y, _______ a, int n) { " \
        in raw
    assert cuda_in((PYTHON / "raw_kernel.py").read_bytes(), kernels=False) is None
    assert cuda_in(b"x = 1  # __global__ in a comment\n") is None
    assert cuda_in(b"s = 'unterminated __global__\n") is None


def test_a_script_s_load_inline_launch_is_judged_where_it_stands(occlint):
    """load_inline's host code launches its kernel in 100-thread blocks: LCH001 at the
    block argument's line and column in the script (read by hand from the fixture), the
    kernel's definition found in the same string."""
    name = PYTHON / "load_inline.py"
    text = name.read_text().splitlines()
    line = next(i for i, t in enumerate(text, 1) if "scale_kernel<<<" in t)
    column = text[line - 1].index("threads>>>") + 1
    doc = occlint(str(name), "--device", "h100", "--format", "json").json()
    (source,) = doc["sources"]
    assert [k["name"] for k in source["kernels"]] == ["scale_kernel"]
    assert source["kernels"][0]["line"] == next(
        i for i, t in enumerate(text, 1) if "__global__ void scale_kernel" in t)
    (site,) = source["launches"]
    assert (site["line"], site["block"]["dims"]) == (line, [100, 1, 1])
    (f,) = [f for f in doc["findings"] if f["rule"] == "LCH001"]
    assert (f["line"], f["column"]) == (line, column)


def test_a_directory_s_scripts_are_read_for_their_launches(occlint, tmp_path):
    """In a directory, a script whose strings launch a kernel is a source; one whose
    strings only define one (CuPy's RawKernel, launched from Python) or hold no CUDA is not
    an input (a Python project is not a source tree); named on the command line, a
    RawKernel script gives its kernel."""
    import shutil

    for f in ("load_inline.py", "raw_kernel.py"):
        shutil.copy(PYTHON / f, tmp_path / f)
    (tmp_path / "plain.py").write_text("print('hello')\n")
    # a generated script past 4 MiB (a table) with a kernel's string: not read (no
    # "too large" info for a project's data)
    (tmp_path / "table.py").write_bytes(b"K = '__global__ void k() {}'\nT = [" +
                                        b"0, " * (2 << 20) + b"]\n")
    doc = occlint(str(tmp_path), "--device", "h100", "--format", "json").json()
    assert [Path(s["path"]).name for s in doc["sources"]] == ["load_inline.py"]
    assert doc["summary"]["skipped"] == 0
    doc = occlint(str(tmp_path / "raw_kernel.py"), "--device", "h100", "--format",
                  "json").json()
    assert [k["name"] for k in doc["sources"][0]["kernels"]] == ["saxpy_raw"]


def test_cupy_launches_written_in_python():
    """CuPy's ``kernel((grid,), (block,), args)`` is a launch site: its grid and block
    evaluated where the script fixes them (a module constant, a local bound once), ``(n +
    B - 1) // B`` and ``-(-n // B)`` derived from the problem size at block B; one whose grid
    and block are both its parameters is no site; its kernel the RawModule's, from the
    script's string."""
    from occlint.readers.source import read_source

    name = PYTHON / "raw_launch.py"
    text = name.read_text().splitlines()
    source = read_source(name, "raw_launch.py", python_kernels=False)  # its launches need it
    assert [k.name for k in source.kernels] == ["scale"]
    sites = [(s.span.line, s.kernel, s.api, s.grid.dims, s.grid.ceil_div_block, s.block.dims)
             for s in source.launches]

    def at(needle: str) -> int:
        return next(i for i, t in enumerate(text, 1) if needle in t)

    n = None
    assert sites == [
        (at("scale((blocks,)"), "scale", "cupy", (n, 1, 1), 100, (100, 1, 1)),
        (at("scale((264,)"), "scale", "cupy", (264, 1, 1), None, (256, 1, 1)),
        (at("scale((-(-n // 48),)"), "scale", "cupy", (n, 1, 1), 48, (48, 1, 1)),
    ]  # (the last launch's grid and block are its caller's: not a site)
    block = source.launches[0].block.span
    assert (block.line, block.column) == (at("scale((blocks,)"),
                                          text[at("scale((blocks,)") - 1].index("(THREADS,)") + 1)


def test_a_cupy_script_alone_is_priced_like_a_cu_file(occlint):
    """The 100- and 48-thread launches warn with the launch-time model's block (the kernel's
    facts from its string), as the same launches in a .cu file do (fixtures/sources/sites.cu's
    scale and saxpy were timed on the H200: docs/validation.md, stop 49)."""
    doc = occlint(str(PYTHON / "raw_launch.py"), "--device", "h200", "--format", "json").json()
    text = (PYTHON / "raw_launch.py").read_text().splitlines()
    lines = {f["line"] for f in doc["findings"] if f["rule"] == "LCH001"}
    assert lines == {i for i, t in enumerate(text, 1)
                     if "scale((blocks,)" in t or "scale((-(-n // 48),)" in t}
    assert all("launch-time model" in f["advice"] and f["fix"]["block"][0] % 32 == 0
               for f in doc["findings"] if f["rule"] == "LCH001")


def test_driver_api_launches():
    """``cuLaunchKernel`` / ``hipModuleLaunchKernel(f, gx, gy, gz, bx, by, bz, shmem,
    stream, ...)``: the kernel the handle's ``ModuleGetFunction(&f, module, "name")`` names
    (a handle no call names keeps its text), the grid and block their three arguments
    (``(n + 99) / 100`` derived from the problem size at 100), each placed from its first
    argument to its last."""
    name = "driver_api.cu"
    source = read(name)
    sites = [(s.span.line, s.kernel, s.kernel_text, s.api, s.grid.dims, s.grid.ceil_div_block,
              s.block.dims) for s in source.launches]
    assert sites == [
        (line_of(name, "cuLaunchKernel(fn,"), "scale", "fn", "cuLaunchKernel", (n, 1, 1), 100,
         (100, 1, 1)),
        (line_of(name, "hipModuleLaunchKernel(hf,"), "scale", "hf", "hipModuleLaunchKernel",
         (264, 1, 1), None, (48, 1, 1)),
        (line_of(name, "cuLaunchKernel(other,"), "other", "other", "cuLaunchKernel",
         (4, 1, 1), None, (32, 2, 1)),
    ]
    text = (CASES / name).read_text().splitlines()
    block = source.launches[0].block.span
    row = text[line_of(name, "cuLaunchKernel(fn,") - 1]
    at = row.index("100, 1, 1, 0")  # (the grid's "/ 100, 1, 1" comes first)
    assert (block.column, block.end_column) == (at + 1, at + len("100, 1, 1") + 1)


def test_numba_kernels_and_their_launches(occlint):
    """Numba's ``@cuda.jit`` kernels (their shape from ``cuda.grid`` / ``cuda.gridsize``)
    and ``kernel[grid, block](args)`` launches, read with ``ast``: the 100-thread launch of
    a kernel of one element per thread is told a whole-warp block (its grid, (2^20 + 99) //
    100 = 10,486, fixed by the script), the 40-block grid-stride loop more blocks; a kernel
    reading only its thread index in one block of 16 gets nothing."""
    from occlint.readers.source import read_source

    name = PYTHON / "numba_kernels.py"
    text = name.read_text().splitlines()

    def at(needle: str) -> int:
        return next(i for i, t in enumerate(text, 1) if needle in t)

    source = read_source(name, "numba_kernels.py")
    assert [(k.name, k.span.line, k.body, k.block_indexed, k.thread_indexed)
            for k in source.kernels] == [
        ("scale", at("def scale("), "per-element", True, True),
        ("copy_all", at("def copy_all("), "grid-stride", True, True),
        ("lanes", at("def lanes("), "other", False, True)]  # (two `kernel`s that differ:
    # neither is the name's, its launches' body unknown)
    assert [(s.span.line, s.kernel, s.api, s.grid.dims, s.block.dims)
            for s in source.launches][:3] == [
        (at("scale[blocks"), "scale", "numba", (10_486, 1, 1), (100, 1, 1)),
        (at("copy_all[40"), "copy_all", "numba", (40, 1, 1), (256, 1, 1)),
        (at("lanes[1, 16]"), "lanes", "numba", (1, 1, 1), (16, 1, 1))]
    assert [s.kernel for s in source.launches[3:]] == ["kernel", "kernel"]
    doc = occlint(str(name), "--device", "h100", "--format", "json").json()
    found = {(f["rule"], f["kernel"], f["severity"]) for f in doc["findings"]
             if f["kernel"] != "kernel"}
    assert found == {("LCH001", "scale", "warning"), ("LCH101", "scale", "info"),
                     ("LCH102", "copy_all", "warning"), ("LCH103", "copy_all", "warning")}
    (lch001,) = [f for f in doc["findings"] if f["rule"] == "LCH001"]
    assert (lch001["line"], lch001["column"]) == (
        at("scale[blocks"), text[at("scale[blocks") - 1].index("THREADS") + 1)
    assert lch001["fix"] == {"block": [128, 1, 1], "grid": None, "dynamic_shared": 0}


def test_driver_api_launches_from_python():
    """cuda-python's ``cuda.cuLaunchKernel(kernel, gx, gy, gz, bx, by, bz, ...)``: the kernel
    the handle's ``err, kernel = cuda.cuModuleGetFunction(module, b"saxpy")`` names, its
    definition read from the script's string, the grid and block module constants."""
    from occlint.readers.source import read_source

    name = PYTHON / "driver_launch.py"
    text = name.read_text().splitlines()
    source = read_source(name, "driver_launch.py", python_kernels=False)
    assert [k.name for k in source.kernels] == ["saxpy"]
    (site,) = source.launches
    assert (site.span.line, site.kernel, site.kernel_text, site.api, site.grid.dims,
            site.block.dims) == (
        next(i for i, t in enumerate(text, 1) if "cuLaunchKernel(" in t), "saxpy", "kernel",
        "cuLaunchKernel", (32768, 1, 1), (100, 1, 1))


def test_a_script_s_own_syntax_warnings_are_not_printed(occlint, tmp_path):
    """Python warns of ``1if x`` while parsing a script (SyntaxWarning: invalid decimal
    literal): the warning is the script's, not occlint's, and stderr stays empty."""
    script = tmp_path / "w.py"
    script.write_text('k = cp.RawKernel(r"""__global__ void k(float* x) '
                      '{ x[blockIdx.x * blockDim.x + threadIdx.x] = 0; }""", "k")\n'
                      "y = 1if True else 2\n"
                      "k((1,), (100,), (x,))\n")
    import warnings

    from occlint.readers.source.python_launches import read

    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        _, sites = read(script.read_bytes())
    assert shown == [] and [s.kernel for s in sites] == ["k"]
    run = occlint(str(script), "--device", "h100")
    assert run.err == ""
    assert " LCH001 " in run.out  # the launch was read: its 100-thread block is judged


def test_the_directory_walk_keeps_every_script_a_python_reader_would_read():
    """readers.formats decides, without importing the source reader, which of a
    directory's scripts may hold CUDA (PYTHON_MARKERS): each marker a Python reader looks
    for must hold one of them, or its scripts would be dropped unread."""
    from occlint.readers.formats import PYTHON_MARKERS
    from occlint.readers.source import python_launches, python_strings

    wanted = (*python_strings._MARKERS, *python_launches.MARKERS,
              python_launches.NUMBA_MARKER, *python_launches.DRIVER_MARKERS)
    assert all(any(m in marker for m in PYTHON_MARKERS) for marker in wanted)
