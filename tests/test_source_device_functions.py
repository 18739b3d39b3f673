"""A kernel's calls to the file's ``__device__`` functions read as their text
(occlint/readers/source/device_functions.py): the loads and loops a helper holds are the
kernel's. The facts are checked against what each kernel does by construction (its loads
and stores written out), and against the H200's measured times (zoo set 43)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.gpu.heldout import score
from occlint.readers.source import device_functions, read_source
from tests.conftest import FIXTURES

PARAMS = ("const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, "
          "float s, long n")


def _facts(tmp_path: Path, text: str) -> dict:
    path = tmp_path / "k.cu"
    path.write_text(text)
    return {k.name: k.facts for k in read_source(path, "k.cu").kernels}


def test_a_helpers_return_is_read_where_it_is_called(tmp_path):
    facts = _facts(tmp_path, f"""
__device__ __forceinline__ float scaled(const float* p, long i, float s) {{ return p[i] * s; }}
extern "C" __global__ void k({PARAMS}) {{
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) c[i] = scaled(a, i, s) + b[i];
}}
""")["k"]
    assert (facts.loop, facts.load_bytes, facts.store_bytes) == ("per-element", 8.0, 4.0)


def test_a_template_body_called_as_a_statement_is_the_kernels_loop(tmp_path):
    facts = _facts(tmp_path, f"""
template <typename T>
__device__ void axpby(const T* x, const T* y, T* out, T alpha, long count) {{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < count;
         i += (long)blockDim.x * gridDim.x)
        out[i] = alpha * x[i] + y[i];
}}
extern "C" __global__ void k({PARAMS}) {{ axpby<float>(a, b, c, s, n); }}
""")["k"]
    assert (facts.loop, facts.load_bytes, facts.store_bytes) == ("grid-stride", 8.0, 4.0)


def test_helpers_calling_helpers_are_read_to_a_depth():
    helpers = device_functions.definitions("""
__device__ float one(const float* p, long i) { return p[i]; }
__device__ float two(const float* p, long i) { return one(p, i) + one(p, i + 1); }
""")
    out = device_functions.expand("{ c[i] = two(a, i); }", helpers)
    assert out == "{ c[i] = ((a[i]) + (a[(i + 1)])); }"


def test_what_is_not_a_helper_call_stays():
    """Overloads (which one a call picks is the types'), a member's call, a longer name, a
    declaration without a body, a call with the wrong number of arguments, a helper of
    statements used in an expression."""
    helpers = device_functions.definitions("""
__device__ float h(float x) { return x; }
__device__ float h(float2 x) { return x.x + x.y; }
__device__ float g(const float* p);
__device__ float f(const float* p, long i) { return p[i]; }
__device__ float w(const float* p, long i) { float t = p[i]; return t; }
""")
    assert set(helpers) == {"f", "w"}
    for body in ("{ c[i] = h(a[i]); }", "{ c[i] = op.f(a, i); }", "{ c[i] = ff(a, i); }",
                 "{ c[i] = f(a); }", "{ c[i] = w(a, i); }"):
        assert device_functions.expand(body, helpers) is None, body


def test_a_file_without_device_functions_costs_one_search():
    assert device_functions.definitions('extern "C" __global__ void k() {}') == {}
    assert device_functions.expand("{ c[i] = f(a, i); }", {}) is None


@pytest.mark.parametrize("name", ["template_body_gs"])
def test_zoo_43s_template_body_is_claimed_as_measured(name):
    """zoo set 43's template_body_gs, a kernel whose grid-stride loop is a template
    device function's: scored once, its loop unseen, it was advised a grid the sweep never
    timed (claimed 2-100 %); read through the call, 224 x 76 is no longer advised, and the
    advice the model gives is timed within 1 % of the best, inside its claim."""
    run = FIXTURES / "traces/zoo-43/h200"
    row = next(r for r in score.rows(run) if r["name"] == name)
    assert row["model"]["facts"]["loop"] == "grid-stride"
    assert row["measured"] and row["inside"] and row["ratio"] >= 0.98


def test_zoo_19s_helper_reads_both_arrays():
    """zoo set 19's helper_load (``c[i] = load_scaled(a, i, s) + b[i]``) reads 8 bytes an
    element: a's through the helper, b's in the kernel."""
    row = next(r for r in score.rows(FIXTURES / "traces/zoo-19/h200")
               if r["name"] == "helper_load")
    assert row["model"]["facts"]["load_bytes"] == 8.0


def test_a_helpers_result_a_statement_assigns_is_its_body(tmp_path):
    """``float t = partial(a + blockIdx.x * cols, cols);`` of a helper of statements ending
    in its one ``return``: its body, the return assigning ``t``, an argument that is an
    expression a local of the parameter's name (read as the pointer it offsets)."""
    facts = _facts(tmp_path, """
__device__ float partial(const float* x, long cols) {
    float t = 0.0f;
    for (long j = threadIdx.x; j < cols; j += blockDim.x) t += x[j];
    return t;
}
extern "C" __global__ void k(const float* __restrict__ a, float* __restrict__ c, long cols) {
    float t = partial(a + blockIdx.x * cols, cols);
    if (threadIdx.x == 0) c[blockIdx.x] = t;
}
""")["k"]
    assert (facts.loop, facts.load_bytes) == ("block-stride", 4.0)
    helpers = device_functions.definitions("""
__device__ float g(const float* x, long i) { float v = x[i]; return v * 2.0f; }
""")
    assert device_functions.expand("{ acc += g(a, i); }", helpers) == \
        "{ { float v = a[i]; acc += v * 2.0f;} }"


def test_a_call_a_control_head_or_else_guards_is_a_statement():
    helpers = device_functions.definitions("""
__device__ void put(float* out, long i, float v) { out[i] = v; }
""")
    for body, written in (
            ("{ for (long i = 0; i < n; ++i) put(c, i, a[i]); }",
             "{ for (long i = 0; i < n; ++i) {auto v = a[i];  c[i] = v; } }"),
            ("{ if (i < n) put(c, i, s); else put(c, i, 0); }",
             "{ if (i < n) { c[i] = s; } else { c[i] = 0; } }")):
        assert device_functions.expand(body, helpers) == written
