"""How a kernel's accesses spread over a warp's lanes, read from its source (issue 28:
occlint.readers.source.access and the facts built on it). The expected spreads are what
the C expressions are, worked out by hand; the traffic the model draws from them is held
against the GPU's measurements in tests/test_launch_model_zoo.py."""

from __future__ import annotations

import pytest

from occlint.judgement.timing import Config
from occlint.model.facts import OWN_LINES
from occlint.readers.source.access import (
    SCATTERED,
    STRIDED,
    UNIFORM,
    aliases,
    assignments,
    extent_of,
    moved,
    spread_of,
    variables,
)
from occlint.readers.source.facts import kernel_facts
from tests.conftest import FIXTURES

X = {"x": (1, 0), "y": (0, 1), "i": (1, 0)}


@pytest.mark.parametrize(("expr", "spread"), [
    ("blockIdx.x * (long)blockDim.x + threadIdx.x", (1, 0)),
    ("(long)y * width + x", (1, STRIDED)),
    ("(long)x * height + y", (STRIDED, 1)),
    ("2 * i + 1", (2, 0)),
    ("i << 2", (4, 0)),
    ("(i * 2654435761L) & (n - 1)", (SCATTERED, 0)),
    ("i % 1024", (1, 0)),
    ("threadIdx.x & 31", (1, 0)),
    ("threadIdx.x / 2", (1, 0)),  # lanes share elements
    ("threadIdx.x / 32", UNIFORM),  # a warp's index: one value over its lanes
    ("idx[i >> 8] * 256 + (i & 255)", (1, 0)),  # a row the data picks, read along it
    ("blockIdx.x * cols", UNIFORM),
    ("min(i, n - 1)", (1, 0)),
    ("hash(i)", (SCATTERED, 0)),
    ("idx[i]", (SCATTERED, 0)),  # a loaded value
    ("idx[blockIdx.x]", UNIFORM),
    ("i < n ? i : 0", (1, 0)),
    ("static_cast<long>(threadIdx.x) + 4", (1, 0)),
    ("&idx[i]", (1, 0)),  # an element's address, not the value loaded there
    ("&idx[blockIdx.x]", UNIFORM),
])
def test_an_expressions_spread_is_read_from_its_operators(expr, spread):
    assert spread_of(expr, X, {}) == spread


def test_what_the_parser_cannot_read_is_none_not_a_guess():
    assert spread_of("a->b.c[i] @ 3", X, {}) is None
    assert spread_of("i + q", {"q": None}, {}) is None  # a variable that was not read


def test_variables_follow_their_assignments_in_any_order():
    body = """{ int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y
        + threadIdx.y; long i = (long)col * height + row;
        for (long j = threadIdx.x; j < n; j += blockDim.x) { int bin = (int)(a[j] * 4.0f);
        out[i] += h[bin]; } }"""
    env = variables(body, {})
    assert env["col"] == (1, 0) and env["row"] == (0, 1)
    assert env["i"] == (STRIDED, 1)
    assert env["j"] == (1, 0)
    assert env["bin"][0] == SCATTERED
    assert "unused" not in variables("{ int unused = threadIdx.x; a[0] = 1; }", {})


def test_local_pointers_into_a_parameter_are_its_aliases():
    body = ("{ const float* x = a + blockIdx.x * cols; float* __restrict__ y = &c[blockIdx.x];"
            " const float* p = q + 1; float* z = c; }")
    assert aliases(body, {"a": 4, "c": 4}) == {"x": ("a", "blockIdx.x * cols", None),
                                               "y": ("c", "blockIdx.x", None),
                                               "z": ("c", "0", None)}


def test_a_cast_pointer_is_an_alias_read_as_its_new_type():
    body = ("{ const float4* x = reinterpret_cast<const float4*>(a + blockIdx.x * cols);"
            " const float4* w = reinterpret_cast<const float4 *>(b); float2* y = (float2*)(c + 2);"
            " const int* q = static_cast<const int*>(p); }")
    assert aliases(body, {"a": 4, "b": 4, "c": 4}) == {
        "x": ("a", "blockIdx.x * cols", "float4"), "w": ("b", "0", "float4"),
        "y": ("c", "2", "float2")}


def test_cooperative_groups_indices_read_as_the_registers_they_stand_for():
    """A grid-stride loop over ``cg::this_grid()`` (zoo set 39's cg_grid_stride_gs, 77 %
    unadvised while it read as no loop), a block group's rank and index."""
    from occlint.readers.source import groups

    body = """{ cg::grid_group grid = cg::this_grid();
        for (long i = grid.thread_rank(); i < n; i += grid.size()) c[i] = a[i]; }"""
    assert "for (long i = (blockIdx.x * blockDim.x + threadIdx.x); i < n; " \
           "i += (gridDim.x * blockDim.x))" in groups.expand(body)
    f = _facts(groups.expand(body), "grid-stride")
    assert (f.loop, f.load_bytes, f.store_bytes) == ("grid-stride", 4, 4)
    block = groups.expand("{ auto b = cg::this_thread_block(); long i = b.group_index().x *"
                          " b.size() + b.thread_rank(); if (b.thread_rank() == 0) c[0] = 1; }")
    assert "long i = blockIdx.x * blockDim.x + threadIdx.x;" in block
    assert "if (threadIdx.x == 0)" in block
    assert groups.expand("{ c[i] = a[i]; }") is None
    assert groups.expand("{ auto g = cg::this_grid(); g.sync(); }") is None  # no index read


def test_an_else_branch_over_a_bounds_last_elements_is_not_an_elements_work():
    """``if (2 * i + 1 < n) {float2} else if (2 * i < n) {float}`` (zoo set 39's
    vec2_guard_elem: 16 bytes read as moved per element, 8 in truth); an else over
    another bound is an element's work."""
    tail = _facts("""{ long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
        if (2 * i + 1 < n) { float2 v = reinterpret_cast<const float2*>(a)[i];
            reinterpret_cast<float2*>(c)[i] = v; }
        else if (2 * i < n) { c[2 * i] = a[2 * i]; } }""")
    assert (tail.load_bytes, tail.store_bytes) == (8, 8)
    other = _facts("""{ long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
        if (i < width) c[i] = a[i]; else if (i < height) c[i] = b[i]; }""")
    assert other.load_bytes == 8


def test_a_pointer_auto_deduces_is_an_alias():
    """``auto x = a + blockIdx.x * cols`` (zoo set 38's auto_ptr_row read no loads before:
    30 % unadvised); ``auto`` integers are not aliases."""
    body = ("{ auto x = a + blockIdx.x * cols; const auto* __restrict__ y = c + 2;"
            " auto i = blockIdx.x * blockDim.x + threadIdx.x; }")
    assert aliases(body, {"a": 4, "c": 4}) == {"x": ("a", "blockIdx.x * cols", None),
                                               "y": ("c", "2", None)}


def test_a_pointer_cast_then_offset_is_an_alias_read_as_its_new_type():
    """A row of halves: the parameter cast first, the row's offset after it (zoo set 37's
    half_rmsnorm_row read no loads before: its rows unadvised, 28 %)."""
    body = ("{ const __half* x = reinterpret_cast<const __half*>(a) + blockIdx.x * cols;"
            " __half* y = reinterpret_cast<__half *>(c) + 4; }")
    assert aliases(body, {"a": 4, "c": 4}) == {"x": ("a", "blockIdx.x * cols", "__half"),
                                               "y": ("c", "4", "__half")}
    f = _facts("""{ const __half* x = reinterpret_cast<const __half*>(a) + blockIdx.x * n;
        __half* y = reinterpret_cast<__half*>(c) + blockIdx.x * n;
        for (long j = threadIdx.x; j < n; j += blockDim.x) y[j] = x[j]; }""", "other")
    assert (f.load_bytes, f.store_bytes) == (2, 2)


def test_a_division_by_a_warps_span_or_more_leaves_one_value_per_warp():
    env = variables("{ long i = blockIdx.x * (long)blockDim.x + threadIdx.x; long t = i >> 8;"
                    " long h = i / 2; long w = i / 64; long s = (4 * i) >> 6;"
                    " long q = (4 * i) >> 7; a[t] = a[h] + a[w] + a[s] + a[q]; }", {})
    assert env["t"] == UNIFORM and env["w"] == UNIFORM and env["q"] == UNIFORM
    assert env["h"] == (1, 0) and env["s"] == (1, 0)


def test_a_division_by_a_value_known_at_run_time_leaves_a_warp_one_value():
    """An index split by a width or a plane the launch passes (mmcv's pooled_w, llm.c's
    NH * N * d): the quotient is a row, the same over a warp's lanes (two where they
    straddle one); the remainder walks along it. Measured on the H200 (zoo set 31:
    roi_rows_rt_gs and embed_rows_rt_elem, whose reads were taken for gathers before)."""
    env = variables("{ int index = blockIdx.x * blockDim.x + threadIdx.x; long d = n >> 12;"
                    " int pw = index % pooled_w; int ph = index / pooled_w;"
                    " long row = index / d; long col = index - row * d;"
                    " c[index] = a[ph * 2 * pooled_w + pw] + a[row * d + col]; }",
                    {})
    assert env["ph"] == UNIFORM and env["row"] == UNIFORM
    assert env["pw"] == (1, 0) and env["col"] == (1, 0)
    f = _facts("""{ long i = blockIdx.x * (long)blockDim.x + threadIdx.x; long d = n >> 12;
        if (i < n) { long row = i / d; c[i] = a[((row * 37) & 4095) * d + (i - row * d)]; } }""")
    assert (f.load_bytes, f.scattered_bytes) == (4, 0)


def test_an_atomic_to_a_row_a_loaded_value_picks_is_the_datas():
    """llm.c's encoder_backward: atomicAdd(dwte + ix * C + c, ...) with ix a token read
    from memory: a row the data picks (blocks of the same token collide), not a set every
    block adds to, though the quotients that index the token are one value a warp."""
    f = _facts("""{ int idx = blockIdx.x * blockDim.x + threadIdx.x;
        if (idx < n) { int bt = idx / width; int c = idx % width;
        int ix = (int)b[bt]; float* row = sum + ix * width + c;
        atomicAdd(row, a[idx]); } }""")
    assert (f.atomics_data, f.atomics_set, f.atomics_one) == (1, 0, 0)


def test_a_vector_loops_remainder_is_not_an_elements_work():
    """A float4 grid-stride loop over n / 4 and a scalar loop over the last few: each
    element moves the float4's 16 bytes, not 20 (zoo set 31's vec4_tail_gs)."""
    f = _facts("""{ long tid = blockIdx.x * (long)blockDim.x + threadIdx.x;
        long stride = (long)blockDim.x * gridDim.x; long n4 = n >> 2;
        const float4* a4 = reinterpret_cast<const float4*>(a);
        float4* c4 = reinterpret_cast<float4*>(c);
        for (long i = tid; i < n4; i += stride) { float4 v = a4[i]; c4[i] = v; }
        for (long i = n4 * 4 + tid; i < n; i += stride) c[i] = a[i]; }""", "grid-stride")
    assert (f.load_bytes, f.store_bytes) == (16, 16)
    two = _facts("""{ for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
        i += (long)blockDim.x * gridDim.x) c[i] = a[i];
        for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
        i += (long)blockDim.x * gridDim.x) c[i] += b[i]; }""", "grid-stride")
    assert two.load_bytes == 12  # two passes over every element: both count


def test_an_access_moves_what_its_spread_makes_it():
    assert moved((1, 0), 4) == ("coalesced", 4)
    assert moved(UNIFORM, 4) == ("coalesced", 4)
    assert moved((STRIDED, 1), 4) == ("column", 4)
    # a pair's half: its sectors hold its neighbour, which they move too
    assert moved((2, 0), 4) == ("coalesced", 8)
    assert moved((16, 0), 4) == ("scattered", 32)  # lanes 64 bytes apart
    assert moved((SCATTERED, 0), 4) == ("scattered", 32)  # a sector a lane
    assert moved((STRIDED, 0), 16) == ("scattered", 32)


def test_a_columns_efficiency_follows_the_blocks_shape():
    """A warp of a (bx, by) block reads bx runs of 32 / bx consecutive floats, each in whole
    32-byte sectors: 8 x 32 blocks four floats a run (16 of a sector's 32 bytes), a row of
    32 one float a lane (4 of 32)."""
    assert Config(256, 1, 1, row=8).column_efficiency(4) == 0.5
    assert Config(256, 1, 1, row=32).column_efficiency(4) == 0.125
    assert Config(256, 1, 1).column_efficiency(4) == 0.125  # a 1-D block
    assert Config(256, 1, 1, row=4).column_efficiency(4) == 1.0


def _facts(body: str, shape: str = "per-element", params: str = ""):
    return kernel_facts(params or "(const float* a, const float* b, float* c, float* sum, "
                        "long n, int width, int height)", body, shape, {})


def test_a_transposes_store_is_a_column_and_its_load_coalesced():
    f = _facts("""{ int x = blockIdx.x * blockDim.x + threadIdx.x;
        int y = blockIdx.y * blockDim.y + threadIdx.y;
        if (x < width && y < height) c[(long)x * height + y] = a[(long)y * width + x]; }""")
    assert (f.load_bytes, f.store_bytes, f.column_bytes, f.scattered_bytes) == (4, 4, 4, 0)


def test_a_gather_moves_a_sector_a_lane():
    f = _facts("""{ long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
        if (i < n) c[i] = a[(i * 2654435761L) & (n - 1)]; }""")
    assert (f.scattered_bytes, f.scattered_sectors, f.column_bytes) == (4, 32, 0)


def test_an_element_stored_in_each_branch_of_an_if_is_one_store():
    """zoo set 6's stencil_global copies its ends and filters the rest: c[i] is stored in
    one branch or the other, 4 bytes an element (it was read as 8, and its saving claimed
    at 2-21 % where 49 % was measured)."""
    f = _facts("""{ long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
        if (i < 2 || i >= n - 2) { if (i < n) c[i] = a[i]; }
        else c[i] = 0.2f * (a[i - 2] + a[i - 1] + a[i] + a[i + 1] + a[i + 2]); }""")
    assert (f.load_bytes, f.store_bytes) == (4, 4)
    two = _facts("{ long i = blockIdx.x * (long)blockDim.x + threadIdx.x; c[i] = a[i];"
                 " c[i + 1] = a[i]; }")
    assert two.store_bytes == 8  # two elements


def test_a_stencils_neighbours_are_loaded_once():
    """a[i - 1] .. a[i + width] are cached beside a[i]: one element's bytes from DRAM; an
    element read twice in one expression (x[j] * x[j]) is one load too."""
    f = _facts("""{ long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
        c[i] = a[i - 1] + a[i + 1] + a[i - width] + a[i + width] + a[i] + b[i] * b[i]; }""")
    assert (f.load_bytes, f.store_bytes) == (8, 4)


def test_a_small_stride_moves_the_elements_between_once():
    """zoo set 9's maxpool2x2 reads two floats of each of two rows (a[r0], a[r0 + 1], a[r1],
    a[r1 + 1] with r0 = 2x on its row): 16 bytes an element move, not the 8 that reading the
    neighbours as cached gave (its 2 % saving was claimed at 8-34 %); the even elements
    alone (zoo set 8's even_only) move their pairs' odd ones too; an interleaved pair
    stored (c[2i], c[2i + 1]) is one pair's sectors."""
    pool = _facts("""{ int x = blockIdx.x * blockDim.x + threadIdx.x;
        int y = blockIdx.y * blockDim.y + threadIdx.y;
        if (x < width && y < height) {
            long r0 = (long)(2 * y) * (2 * width) + 2 * x, r1 = r0 + 2 * width;
            c[(long)y * width + x] = fmaxf(fmaxf(a[r0], a[r0 + 1]), fmaxf(a[r1], a[r1 + 1]));
        } }""")
    assert (pool.load_bytes, pool.store_bytes) == (16, 4)
    even = _facts("{ long i = blockIdx.x * (long)blockDim.x + threadIdx.x; c[i] = a[2 * i]; }")
    assert (even.load_bytes, even.store_bytes) == (8, 4)
    pair = _facts("""{ long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
        float x = a[2 * i], y = a[2 * i + 1];
        c[2 * i] = x * y; c[2 * i + 1] = x + y; }""")
    assert (pair.load_bytes, pair.store_bytes) == (8, 8)
    # cuda-samples' texture_3d: a pixel's four bytes through a pointer to it
    pixel = _facts("""{ int x = blockIdx.x * blockDim.x + threadIdx.x;
        unsigned char* p = surface + 4 * x;
        p[0] = 1; p[1] = 2; p[2] = 3; p[3] = 255; }""", params="(unsigned char* surface)")
    assert pixel.store_bytes == 4
    # llm.c's fused classifier: a float4's four elements stored one by one in a loop
    lanes = _facts("""{ long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
        for (int k = 0; k < 4; ++k) c[i * 4 + k] = a[i * 4 + k] * 2.0f; }""")
    assert (lanes.load_bytes, lanes.store_bytes) == (16, 16)


def test_a_parameter_cast_and_subscripted_in_place_is_read_as_its_new_type():
    """zoo set 9's dequant_char4 reads reinterpret_cast<const char4*>(a)[i] and stores
    reinterpret_cast<float4*>(c)[i]: 4 bytes in, 16 out (read as none, it was advised 1,024
    threads for 88-98 % where 70 % was measured); a C-style cast the same; a cast to a type
    occlint does not know leaves the bytes unknown."""
    f = _facts("""{ long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
        if (i < n) {
            char4 q = reinterpret_cast<const char4*>(a)[i];
            reinterpret_cast<float4*>(c)[i] = make_float4(q.x, q.y, q.z, q.w);
        } }""")
    assert (f.load_bytes, f.store_bytes) == (4, 16)
    c_style = _facts("{ long i = blockIdx.x * (long)blockDim.x + threadIdx.x;"
                     " ((float2*)c)[i] = ((const float2*)(b + 8))[i]; }")
    assert (c_style.load_bytes, c_style.store_bytes) == (8, 8)
    unknown = _facts("{ long i = blockIdx.x * (long)blockDim.x + threadIdx.x;"
                     " c[i] = reinterpret_cast<const my_pair*>(a)[i].x; }")
    assert unknown.load_bytes is None


def test_math_functions_are_counted_by_name_where_the_element_is():
    """Each call of a single-precision math function an element makes, by the name the
    device's cost is measured for (a plain name on a float: its f-suffixed overload), times
    the trips of a constant loop around it; none outside the element's work."""
    f = _facts("""{ long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
        if (i < n) {
            float x = a[i], t = 0.0f;
            for (int k = 0; k < 4; ++k) t += __expf(x * k);
            c[i] = tanhf(x) + std::exp(x) + expf(-x) + rsqrtf(t) + my_logf(x) + q.sinf(x);
        } }""")
    assert dict(f.math) == {"__expf": 4.0, "expf": 2.0, "rsqrtf": 1.0, "tanhf": 1.0}
    assert _facts("{ long i = blockIdx.x * (long)blockDim.x + threadIdx.x; c[i] = a[i]; }"
                  ).math == ()


def test_every_pass_of_a_block_per_row_counts_through_its_aliases():
    """softmax's three passes over its row, read through local pointers: three loads and a
    store an element."""
    body = """{ const float* x = a + blockIdx.x * n; float* y = c + blockIdx.x * n;
        float m = -1e30f;
        for (long j = threadIdx.x; j < n; j += blockDim.x) m = fmaxf(m, x[j]);
        float t = 0.0f;
        for (long j = threadIdx.x; j < n; j += blockDim.x) t += __expf(x[j] - m);
        for (long j = threadIdx.x; j < n; j += blockDim.x) y[j] = __expf(x[j] - m) / t; }"""
    f = _facts(body, "other")
    assert f.loop == "block-stride"
    assert (f.load_bytes, f.store_bytes) == (12, 4)
    # its second and third reads of x are the row again; no reduction is visible here
    assert (f.passes, f.reductions, f.reread_bytes, f.reread_row_bytes) == (3, 0, 8, 4)


REDUCED = """{ __shared__ float red[32]; const float4* x = reinterpret_cast<const float4*>(
        a + blockIdx.x * n); float t = 0.0f;
    for (long j = threadIdx.x; j < n / 4; j += blockDim.x) { float4 v = x[j]; t += v.x; }
    t = block_sum(t, red);
    for (long j = threadIdx.x; j < n / 4; j += blockDim.x) {
        float4 v = x[j]; c[blockIdx.x * n + 4 * j] = v.x * t; }
    %s }"""


@pytest.mark.parametrize(("tail", "reductions"), [
    ("", 1),  # block_sum(t, red): a call given the body's shared array
    ("float u = 0.0f; for (long j = threadIdx.x; j < n; j += blockDim.x) u += b[j];"
     " __syncthreads(); if (threadIdx.x == 0) sum[blockIdx.x] = u;", 2),  # a barrier
    ("float u = 0.0f; for (long j = threadIdx.x; j < n; j += blockDim.x) u += b[j];"
     " u = BlockReduce(storage).Sum(u);", 2),  # cub's
    ("float u = 0.0f; for (long j = threadIdx.x; j < n; j += blockDim.x) u += b[j];"
     " atomicAdd(&sum[blockIdx.x], u);", 1),  # each thread's own atomic: no reduction
])
def test_a_rows_passes_that_end_in_a_blocks_reduction_are_counted(tail, reductions):
    f = _facts(REDUCED % tail, "other")
    assert f.reductions == reductions
    # x read as float4 through a cast pointer, twice: the second read is the row again
    assert (f.reread_bytes, f.reread_row_bytes) == (16, 16)


def test_a_warps_lane_atomics_and_the_datas_are_told_apart():
    loop = ("{ float acc = 0.0f; for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x;"
            " i < n; i += (long)blockDim.x * gridDim.x) acc += a[i]; ")
    per_warp = _facts(loop + "if ((threadIdx.x & 31) == 0) atomicAdd(sum, acc); }",
                      "grid-stride")
    assert (per_warp.atomics_one_warp, per_warp.atomics_one_block,
            per_warp.atomics_one_thread) == (1, 0, 0)
    lane = _facts(loop + "int lane = threadIdx.x % 32; if (lane == 0) atomicAdd(sum, acc); }",
                  "grid-stride")
    assert lane.atomics_one_warp == 1
    block = _facts(loop + "if (threadIdx.x == 0) atomicAdd(sum, acc); }", "grid-stride")
    assert (block.atomics_one_block, block.atomics_one_warp) == (1, 0)
    bins = _facts("""{ long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
        int bin = (int)(a[i] * 32.0f); atomicAdd(&sum[bin], 1.0f); }""")
    assert (bins.atomics_data, bins.atomics_one) == (1, 0)
    ballot = _facts("""{ for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
        i += blockDim.x * gridDim.x) { unsigned v = __ballot_sync(~0u, a[i] > 0.0f);
        if ((threadIdx.x & 31) == 0) atomicAdd(sum, (float)__popc(v)); } }""", "grid-stride")
    assert ballot.atomics_one == pytest.approx(1 / 32)  # a warp's lane each pass


def test_a_loops_own_index_is_read_inside_that_loop():
    """A tiled matmul reuses ``kk`` for a loop from threadIdx.x and one from threadIdx.y
    (fixtures/nvidia/src/smem_tiles.cu): each load is read with its own loop's ``kk``, and
    both are coalesced; a thread reading its own row of 256 floats (stack.cu) is not."""
    body = """{ const int tx = threadIdx.x, ty = threadIdx.y;
        const int row = blockIdx.y * 32 + ty, col = blockIdx.x * 32 + tx;
        for (int k0 = 0; k0 < K; k0 += 32) {
            for (int kk = tx; kk < 32; kk += 32) As[ty][kk] = A[(size_t)row * K + k0 + kk];
            for (int kk = ty; kk < 32; kk += 32) Bs[kk][tx] = B[(size_t)(k0 + kk) * N + col];
        } }"""
    f = kernel_facts("(const float* A, const float* B, float* C, int M, int N, int K)", body,
                     "other", {})
    assert (f.load_bytes, f.scattered_bytes, f.column_bytes) == (8, 0, 0)
    rows = kernel_facts("(const float* in, float* out, int n)", """{
        const int t = blockIdx.x * blockDim.x + threadIdx.x; float s = 0.0f;
        for (int j = 0; j < 256; ++j) s += in[(size_t)t * 256 + j]; out[t] = s; }""",
                        "per-element", {})
    assert (rows.scattered_bytes, rows.scattered_sectors) == (1024, 256 * 32)


MATMUL = """{ int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) { float acc = 0.0f;
        for (int k = 0; k < 64; ++k) acc += a[(long)y * 64 + k] * b[(long)k * width + x];
        c[(long)y * width + x] = acc; } }"""


def test_a_table_many_threads_read_in_a_constant_loop_is_the_caches():
    """A naive matrix product's a[y * 64 + k] (the same for every lane of a row) and
    b[k * width + x] (the same for every row of a 2-D block): 64 loads each an element,
    the caches' (tests/test_launch_model_zoo.py holds what the L1 costs against the GPU)."""
    f = _facts(MATMUL)
    assert (f.load_bytes, f.cached_bytes, f.store_bytes) == (512, 512, 4)
    assert sorted(f.cached_loads) == [(0, True, 4, 64), (1, False, 4, 64)]
    # a 1-D loop down a column reads each element once: DRAM's, not a table
    column = _facts("""{ long col = blockIdx.x * (long)blockDim.x + threadIdx.x;
        float acc = 0.0f; for (int r = 0; r < 1024; ++r) acc += a[r * n + col];
        c[col] = acc; }""")
    assert (column.load_bytes, column.cached_bytes) == (4096, 0)
    # a filter's weights, the same for every lane: the caches'
    taps = _facts("""{ long i = blockIdx.x * (long)blockDim.x + threadIdx.x; float v = 0.0f;
        for (int k = 0; k < 8; ++k) v += b[k] * a[i]; c[i] = v; }""")
    assert taps.cached_loads == ((0, False, 4, 8),)


@pytest.mark.parametrize(("block", "row", "load", "lines"), [
    (64, 8, (0, True, 4), 4),  # 8 x 8: a warp's four rows, each its own word of a
    (64, 8, (1, False, 4), 1),  # ... and the same 32 bytes of b in each
    (64, 32, (0, True, 4), 1),  # 32 x 2: one row a warp
    (64, 32, (1, False, 4), 1),  # 128 bytes: one line
    (256, 0, (1, False, 16), 4),  # a 1-D block of float4s: 512 bytes
    (256, 0, (-OWN_LINES, False, 4), 32),  # each lane its own line
    (256, 0, (-1, False, 4), 1),  # a table of one line, read at any place in it
    (256, 0, (-64, False, 4), pytest.approx(64 * (1 - (63 / 64) ** 32))),  # 32 picks of 64
    (256, 16, (2, True, 4), 2),  # 16 lanes 8 bytes apart, two rows
])
def test_the_lines_a_warps_request_touches(block, row, load, lines):
    from occlint.judgement.timing import _lines

    stride, down, size = load
    assert _lines(Config(block, 1, 1, row=row), stride, down, size) == lines


@pytest.mark.parametrize(("expr", "extent"), [
    ("((int)(fabsf(a[i]) * 255.0f)) & 255", 256),
    ("i & 4095", 4096),
    ("(i + 7) % 64", 64),
    ("2 * (i % 64) + 1", 128),  # 1, 3, ..., 127: within 128 elements
    ("(i & 255) >> 1", 256),  # no more than before
    ("k", 32),  # a variable each assignment of which is bounded
    ("j", None),  # ... one of them not
    ("i", None),
    ("(i * 2654435761L) & (n - 1)", None),  # a mask the text does not fix
    ("i % cols", None),
    ("i & 255 ? 1 : x", None),
])
def test_the_elements_a_literal_bounds_an_index_to(expr, extent):
    values = assignments("{ int k = threadIdx.x & 31; k = (k + 1) % 32; int j = i & 7; "
                         "j = i; }")
    assert extent_of(expr, values, {}) == extent


def test_a_table_a_literal_bounds_is_the_l1s():
    """A look-up table read at a place the data picks but a literal bounds (``lut[x &
    255]``: 1 KB, eight lines): every thread reads it, so the L1 serves it (the
    l1_lines characterisation's 32 KB table); its loads are no DRAM traffic, each warp's
    request touching the lines its lanes pick among the table's. A table past 32 KB is
    left as the access it is; a bias read along the row (``b[i & 4095]``) is the L1's too,
    one line a request."""
    lut = _facts("""{ long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
        if (i < n) c[i] = b[((int)(fabsf(a[i]) * 255.0f)) & 255]; }""")
    assert (lut.load_bytes, lut.cached_bytes, lut.scattered_bytes) == (8, 4, 0)
    assert lut.cached_loads == ((-8, False, 4, 1),)
    named = _facts("""{ long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
        int k = (int)(a[i] * 100.0f) % 100; c[i] = b[k]; }""")
    assert named.cached_loads == ((-4, False, 4, 1),)  # 400 bytes: four lines
    big = _facts("""{ long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
        c[i] = b[((int)(a[i] * 65535.0f)) & 65535]; }""")  # 256 KB
    assert (big.cached_bytes, big.scattered_bytes) == (0, 4)
    bias = _facts("""{ long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
        if (i < n) c[i] = a[i] * b[i & 4095] + s; }""")
    assert bias.cached_loads == ((1, False, 4, 1),) and bias.cached_bytes == 4
    stored = _facts("""{ long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
        c[i & 255] = a[i]; }""")  # a store is no table
    assert (stored.cached_bytes, stored.store_bytes) == (0, 4)


HISTOGRAM = """{ __shared__ float h[256];
    for (int t = threadIdx.x; t < 256; t += blockDim.x) h[t] = 0.0f;
    __syncthreads();
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) { int bin = min(max((int)(a[i] * 32.0f), 0), 255); atomicAdd(&h[bin], 1.0f); }
    __syncthreads(); FLUSH }"""


@pytest.mark.parametrize(("flush", "words"), [
    # a privatised histogram's flush: every block adds to the same 256 words
    ("for (int t = threadIdx.x; t < 256; t += blockDim.x) atomicAdd(&sum[t], h[t]);", 1),
    ("atomicAdd(&sum[threadIdx.x & 255], h[threadIdx.x & 255]);", 1),
    # each block its own words: no queue
    ("atomicAdd(&sum[blockIdx.x * 256 + (threadIdx.x & 255)], h[threadIdx.x & 255]);", 0),
    ("long o = blockIdx.x * 256; for (int t = threadIdx.x; t < 256; t += blockDim.x)"
     " atomicAdd(&sum[o + t], h[t]);", 0),
])
def test_a_set_of_words_every_block_adds_to_is_told_from_a_blocks_own(flush, words):
    """The bins in shared memory (atomicAdd(&h[bin], 1)) are the SM's, not a queue at
    the L2; the flush's words are a set every block shares unless the address reads the
    block index."""
    f = _facts(HISTOGRAM.replace("FLUSH", flush))
    assert (f.atomics_set, f.atomics_data, f.atomics_one) == (words, 0, 0)


def test_an_atomic_max_on_one_address_is_told_from_an_add():
    loop = ("{ float m = 0.0f; for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x;"
            " i < n; i += (long)blockDim.x * gridDim.x) m = fmaxf(m, a[i]); ")
    top = _facts(loop + "if ((threadIdx.x & 31) == 0) atomicMax((int*)sum, __float_as_int(m));"
                 " }", "grid-stride")
    assert top.atomics_max and top.atomics_one_warp == 1
    add = _facts(loop + "if ((threadIdx.x & 31) == 0) atomicAdd(sum, m); }", "grid-stride")
    assert not add.atomics_max



ILP4 = """extern "C" __global__ void axpy_ilp4(const float* __restrict__ a,
    const float* __restrict__ b, float* __restrict__ c, float s, long n) {
    int stride = blockDim.x * gridDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += 4 * stride) {
        float x0 = a[i], y0 = b[i];
        float x1 = i + stride < n ? a[i + stride] : 0.0f;
        float y1 = i + stride < n ? b[i + stride] : 0.0f;
        float x2 = i + 2 * stride < n ? a[i + 2 * stride] : 0.0f;
        float y2 = i + 2 * stride < n ? b[i + 2 * stride] : 0.0f;
        float x3 = i + 3 * stride < n ? a[i + 3 * stride] : 0.0f;
        float y3 = i + 3 * stride < n ? b[i + 3 * stride] : 0.0f;
        c[i] = s * x0 + y0;
        if (i + stride < n) c[i + stride] = s * x1 + y1;
        if (i + 2 * stride < n) c[i + 2 * stride] = s * x2 + y2;
        if (i + 3 * stride < n) c[i + 3 * stride] = s * x3 + y3;
    }
}
"""


def test_a_loop_doing_four_elements_a_pass_each_a_grid_apart(tmp_path):
    """Zoo set 15's axpy_ilp4_gs_int: a grid-stride loop stepped by ``4 * stride`` (a
    variable holding the grid's threads) whose pass loads a[i], a[i + stride], ... : a
    grid-stride loop (it read as one element per thread, its time 1.3 us for 366 traced),
    each pass 32 bytes loaded and 16 stored (``a[i + 2 * stride]`` is another thread's
    element, not a neighbour the cache holds), not unrolled (an int index compared with a
    long bound: fixtures/ptx/unroll's mixed forms; NVRTC's PTX of the zoo's kernel has its
    8 loads once)."""
    from occlint.readers.source import read_source

    path = tmp_path / "ilp.cu"
    path.write_text(ILP4)
    [kernel] = read_source(str(path), "ilp.cu").kernels
    f = kernel.facts
    assert (f.loop, f.load_bytes, f.store_bytes, f.unroll) == ("grid-stride", 32, 16, 1)
    other = tmp_path / "ilp_int.cu"
    other.write_text(ILP4.replace("long n", "int n"))
    # against an int bound NVRTC unrolls it twice (12 stores: two passes' and the rest's)
    assert read_source(str(other), "ilp_int.cu").kernels[0].facts.unroll == 2
    # a neighbour a literal or a width away is still the cache's, in a kernel that holds a
    # grid-stride variable too (ggml's mmq.cuh: a literal's term has no name to look up)
    stencil = _facts("""{ int stride = blockDim.x * gridDim.x;
        for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += stride)
            c[i] = a[i - 1] + a[i] + a[i + width]; }""", "grid-stride")
    assert stencil.load_bytes == 4


def test_pointer_parameters_on_lines_of_their_own():
    """A parameter after a line break: its type was read from the unstripped text at the
    stripped text's offsets (``\\n    const float* __restrict__ b`` read as ``__restri``,
    unknown), so a kernel whose parameters span lines had no facts (12 more of the six
    public trees' 913 kernels have them now)."""
    from occlint.readers.source.facts import pointer_sizes

    assert pointer_sizes("(const float* __restrict__ a,\n    const double* b,\n"
                         "\tfloat4 *c, int n)") == {"a": 4, "b": 8, "c": 16}


@pytest.mark.parametrize(("body", "load", "store"), [
    # the load intrinsics, of an element's address or a pointer and an offset
    ("c[i] = __ldg(&a[i]) * 2.0f;", 4, 4),
    ("c[i] = __ldg(a + i) + __ldcs(b + i);", 8, 4),
    # a dereference after an operator, a bracket, return, or a cast to a value type
    ("c[i] = *(a + i) * 2.0f;", 4, 4),
    ("unsigned char v = (unsigned char)*(a + i); c[i] = v;", 4, 4),
    # float4s four floats apart: 16 bytes a lane; one float apart their float4s overlap
    # (the caches serve it): 4 bytes a lane
    ("float4 v = *reinterpret_cast<const float4*>(&a[4 * i]); c[i] = v.x;", 16, 4),
    ("float4 v = *reinterpret_cast<const float4*>(&a[i]); c[i] = v.x;", 4, 4),
    # a cast that binds to the pointer alone counts its own elements
    ("float4 v = __ldg(reinterpret_cast<const float4*>(a) + i); c[i] = v.x;", 16, 4),
    ("float4 v = *((const float4*)a + i); *(float4*)(c + 4 * i) = v;", 16, 16),
    ("float2 v = *(const float2*)(&a[2 * i]); c[i] = v.x;", 8, 4),
    # the store intrinsics: __stcs(address, value)
    ("__stcs(c + i, a[i] * b[i]);", 8, 4),
    ("__stwt(&c[i], a[i]);", 4, 4),
    # products are no dereferences
    ("float x = 2.0f * (a[i]); c[i] = x * (b[i]);", 8, 4),
    # a byte offset in a local char pointer: not guessed, the facts unknown
    ("const char* p = (const char*)a; c[i] = *(const float*)(p + i * 4);", None, None),
])
def test_loads_and_stores_written_as_calls_or_dereferences(body, load, store):
    """What real kernels write instead of subscripts (llm.c's ``__ldcs`` / ``__stcs``,
    older code's ``__ldg(&a[i])``, vector loads through ``*reinterpret_cast<const
    float4*>(&a[4 * i])``, cuda-samples' ``*(dst + ...)``) was no load or store at all:
    a kernel that loads only so read as storing alone (llm.c's residual_forward_kernel:
    0 bytes loaded, now 8). access.dereferences writes them as subscripts first."""
    f = _facts("{ long i = blockIdx.x * (long)blockDim.x + threadIdx.x; " + body + " }")
    assert (f.load_bytes, f.store_bytes) == (load, store)


def test_a_walk_from_a_lane_by_a_literal_stride_counts_its_trips():
    """``for (int j = lane; j < 1024; j += 32)``: a variable start (a lane's, within the
    stride) and a literal bound and stride: 32 trips, 128 bytes a thread. A literal start
    counts as it always did; a stride of one from a variable stays unknown (one trip)."""
    lane = _facts("""{ int lane = threadIdx.x & 31; const float* x = a + blockIdx.x * 1024;
        float t = 0.0f; for (int j = lane; j < 1024; j += 32) t += x[j]; c[0] = t; }""",
                  "other")
    assert lane.load_bytes == 128
    literal = _facts("""{ float t = 0.0f; for (int j = 8; j < 1024; j += 32) t += a[j];
        c[0] = t; }""", "other")
    assert literal.load_bytes == 4 * 32  # ceil((1024 - 8) / 32)
    unit = _facts("""{ int k = threadIdx.x; float t = 0.0f; for (int j = k; j < 64; ++j)
        t += a[j]; c[0] = t; }""", "other")
    assert unit.load_bytes == 4


def test_a_load_no_loop_counter_indexes_weighs_one_pass():
    """``a[i]`` in ``for (e < 8) acc += a[i] * b[e]`` is the same element each pass: one
    load from memory (the compiler keeps it); ``b[e]`` is a table the loop walks (the
    caches'); a load that names the counter through a variable weighs every pass."""
    f = _facts("""{ long i = blockIdx.x * (long)blockDim.x + threadIdx.x; float acc = 0.0f;
        for (int e = 0; e < 8; ++e) acc += a[i] * b[e]; c[i] = acc; }""")
    assert (f.load_bytes, f.cached_bytes) == (4 + 32, 32)
    through = _facts("""{ long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
        float acc = 0.0f; for (int e = 0; e < 8; ++e) { long k = i * 8 + e; acc += a[k]; }
        c[i] = acc; }""")
    assert through.load_bytes == 8 * 4


def test_assignments_are_what_the_assignment_pattern_finds():
    """access._assignment_pairs finds each assignment from its ``=`` (faster): the same
    pairs as access._ASSIGNMENT's matches, over every kernel body of the fixtures' sources
    and a body of the cases the pattern tells apart."""
    from occlint.readers.source import access
    from occlint.readers.source.facts import _COMMENTS

    tricky = ("{ int a = 1, b = 2; x == y; p->q = 3; v[i] = 4; s.t = 5; u <= w; k += 1; "
              "for (int i = 0; i < n; i += 8) { float z =\n f(i); } _y=2; 9q = 1; "
              "long big= 7 }")
    bodies = [tricky]
    for path in sorted((FIXTURES / "traces").glob("*/kernels.cu")):
        bodies += _COMMENTS.sub(" ", path.read_text()).split("__global__")
    for body in bodies:
        expected = [(m[1], access._value(m[2])) for m in access._ASSIGNMENT.finditer(body)]
        assert access._assignment_pairs(body) == expected
