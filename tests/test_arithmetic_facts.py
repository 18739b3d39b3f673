"""A kernel's arithmetic in the launch-time model (issue 28): the FP64 pipe's rate, measured
and derived, the kernels' share of arithmetic in doubles, from PTX and from source, and
the multiply-adds a source's subscripts do not hold.

Truths used: the H200's own FMA rates in each precision (characterize.py fma64,
fixtures/traces/zoo-48/h200/fma64.characterization.json), the vendors' figures for the
derived devices (the CUDA C++ Programming Guide's arithmetic throughput table; AMD's data
sheets), NVRTC's PTX of zoo set 48 (fixtures/make_zoo_ptx.py) and the H200's times of
its kernels' configurations (the zoo's sweep)."""

from __future__ import annotations

import gzip
import json
import math
import re
from dataclasses import replace
from pathlib import Path

import pytest

from benchmarks.gpu.device_params import fp64_ratio
from benchmarks.gpu.heldout import score
from occlint.devices.db import shipped_db
from occlint.devices.launch_params import launch_model
from occlint.judgement.timing import Config, predict
from occlint.model.facts import Facts
from occlint.readers.nvidia.ptx import facts_by_entry
from occlint.readers.source import read_source
from tests.conftest import FIXTURES

ZOO48 = FIXTURES / "traces" / "zoo-48"


def _ptx(path: Path) -> str:
    return gzip.decompress(path.read_bytes()).decode()


def test_the_h200s_fp64_rate_is_the_one_it_measured():
    rows = json.loads((ZOO48 / "h200" / "fma64.characterization.json").read_text())["fma64"]
    h200 = launch_model(shipped_db().get("h200"))
    assert fp64_ratio(rows) == h200.fp64_ratio
    # its FP32 rows reach the peak the device table has from fma_steady (within 2 %)
    assert max(r["fma_per_s"] for r in rows if r["precision"] == "fp32") == pytest.approx(
        h200.fma_per_s, rel=0.02)
    assert 1.5 < h200.fp64_ratio < 2.0  # 64 FP64 lanes an SM against 128 FP32


@pytest.mark.parametrize(("device", "ratio"), [
    ("a100", 2),  # compute capability 8.0: 64-bit FMA 32 results a clock an SM, 32-bit 64
    ("v100", 2),  # 7.0: 32 against 64
    ("t4", 32),  # 7.5: 2 against 64
    ("rtx3090", 64),  # 8.6: 2 against 128
    ("rtx4090", 64),  # 8.9: 2 against 128
    ("l4", 64),  # 8.9: 2 against 128
    ("mi100", 2),  # FP64 vector 11.5 TFLOPS, FP32 vector 23.1
    ("mi250x", 1),  # FP64 vector 47.9 TFLOPS, FP32 vector 47.9
    ("mi300x", 2),  # FP64 vector 81.7 TFLOPS, FP32 vector 163.4
    ("w7800", 32),  # RDNA 3: FP64 at 1/32 of FP32
])
def test_a_derived_devices_fp64_rate_is_its_vendors(device, ratio):
    dm = launch_model(shipped_db().get(device))
    assert dm.basis == "derived" and dm.fp64_ratio == ratio


def test_ptx_gives_the_share_of_multiply_adds_in_doubles():
    """NVRTC's PTX of zoo set 48: every kernel's multiply-adds are doubles (the polynomial's
    48 ``fma.rn.f64`` a thread, the single-precision data computed in double's 24); the
    float loops of the unroll fixture have none."""
    facts = facts_by_entry(_ptx(FIXTURES / "ptx" / "zoo" / "zoo-48.ptx.gz"))
    assert {k: f.fp64 for k, f in facts.items() if f.fma} == dict.fromkeys(facts, 1.0)
    assert (facts["dpoly_elem"].fma, facts["mixed_precision_elem"].fma) == (48.0, 24.0)
    floats = facts_by_entry(_ptx(FIXTURES / "ptx" / "unroll" / "loops.ptx.gz"))
    assert floats and all(f.fp64 == 0.0 for f in floats.values())


def _source_facts(path: Path) -> dict[str, Facts]:
    return {k.name: k.facts for k in read_source(path, path.parent.name).kernels}


def test_source_reads_double_precision_where_the_kernel_names_doubles():
    """The share of an element's multiply-adds in statements naming double or a name
    declared double (a variable, a pointer through a cast, a parameter)."""
    doubles = _source_facts(ZOO48 / "kernels.cu")
    assert set(doubles) == {"daxpy_elem", "dpoly_elem", "dscale_gs", "ddot_atomic_gs",
                            "drms_row", "mixed_precision_elem"}
    # every multiply-add in double but an index's (``blockIdx.x * (long)blockDim.x``, read as
    # one of mixed_precision_elem's 25)
    assert all(f.fp64 >= 0.95 for f in doubles.values()) and doubles["dpoly_elem"].fp64 == 1.0
    floats = _source_facts(FIXTURES / "traces" / "zoo-47" / "kernels.cu")
    assert floats and all(f.fp64 == 0.0 for f in floats.values())


def test_a_double_precision_chain_is_priced_at_the_fp64_rate():
    """The H200's 32 timed configurations of dpoly_elem (48 dependent FP64 multiply-adds an
    element, 16 M elements; its facts as NVRTC's PTX gives them): predicted within 4 % on
    average at the measured FP64 rate, 10 % off at FP32's."""
    facts = facts_by_entry(_ptx(FIXTURES / "ptx" / "zoo" / "zoo-48.ptx.gz"))["dpoly_elem"]
    h200 = launch_model(shipped_db().get("h200"))
    kernel = next(k for k in score.load(ZOO48 / "h200" / "heldout.json")["kernels"]
                  if k["name"] == "dpoly_elem")
    errors: dict[float, list[float]] = {1.0: [], 0.0: []}
    for c in kernel["configs"]:
        block = c["block"][0]
        cfg = Config(block, c["grid"][0], min(2048 // block, 32))
        for share in errors:
            t = predict(h200, replace(facts, fp64=share), cfg, 16 << 20).total * 1e3
            errors[share].append(abs(math.log(t / score._time(c))))
    assert len(errors[1.0]) == 32
    mean = {share: sum(e) / len(e) for share, e in errors.items()}
    assert mean[1.0] < 0.04 < 0.08 < mean[0.0]


@pytest.mark.parametrize(("zoo", "kernel", "ptx_fma"), [
    ("zoo-2", "column_sum", 0),  # acc += a[r * n + col] over 1,024 rows: adds only
    ("zoo-4", "matmul_naive", 64),  # acc += a[row * K + k] * b[k * N + col], K = 64
    ("zoo-5", "gemv_t_col", 256),  # a column's 256 products
])
def test_a_subscripts_multiplications_are_not_the_arithmetics(zoo, kernel, ptx_fma):
    """An element's address (``a[row * n + col]``) multiplies integers, and a loop's is
    strength-reduced to adds by the compiler: NVRTC's PTX of these zoo kernels holds
    ``ptx_fma`` multiply-adds an element (fixtures/make_zoo_ptx.py), the source reader
    counts the same within two (it counted the subscripts' too: 1,025, 195 and 513)."""
    ptx = facts_by_entry(_ptx(FIXTURES / "ptx" / "zoo" / f"{zoo}.ptx.gz"))[kernel]
    source = _source_facts(FIXTURES / "traces" / zoo / "kernels.cu")[kernel]
    assert ptx.fma == ptx_fma
    assert abs(source.fma - ptx.fma) <= 2


def test_a_float_kernel_with_one_double_statement_is_mostly_single_precision():
    """A layer norm's float arithmetic beside one statement with a double epsilon (Apex's
    ``cuComputeGradInput`` passes ``const double eps``): by C++'s usual arithmetic
    conversions only that statement computes in double; the body is not read as all
    double (the share of its multiply-adds in such statements)."""
    from occlint.readers.source.facts import kernel_facts

    params = "(const float* x, float* y, const float* g, const double eps, long n, int cols)"
    body = """{
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        float m = v * 0.5f;
        float q = m * m * g[i % cols];
        float r = rsqrtf(q * q + 1e-5f);
        y[i] = v * r * g[i % cols];
    }
}"""
    facts = kernel_facts(params, body, "per-element", {})
    assert facts.fma and facts.fp64 == 0.0  # a double parameter the arithmetic never uses
    mixed = body.replace("1e-5f", "eps")  # q * q + eps: that statement in double
    share = kernel_facts(params, mixed, "per-element", {}).fp64
    assert 0.0 < share < 0.4
    doubles = body.replace("float v", "double v").replace("float m", "double m")
    assert kernel_facts(params, doubles, "per-element", {}).fp64 > share


def test_double_literals_promote_as_the_compiler_keeps_them():
    """Unsuffixed floating literals (``0.3``: a double) put a float kernel's statement in
    double precision where NVRTC's PTX computes it so (f64 instructions:
    fixtures/sources/promotions.cu): a literal a float cannot hold (the grey conversion's
    0.3, an epsilon of 1e-5) or several operations; not one operation by a literal a float
    holds exactly (``v * 255.0``, ``x * 0.5``), which the compiler takes back to float, nor
    a literal cast to float."""
    ptx = gzip.decompress((FIXTURES / "ptx" / "promotions.ptx.gz").read_bytes()).decode()
    source = {k.name: k.facts for k in read_source(FIXTURES / "sources" / "promotions.cu",
                                                   "promotions.cu").kernels}
    in_double = {}
    for name in facts_by_entry(ptx):
        body = ptx[ptx.index(f".entry {name}("):]
        in_double[name] = re.search(r"\.f64\b", body[:body.index("\n}")]) is not None
    assert in_double == {"grey_promoted": True, "grey_float": False, "scale_255": False,
                         "half_cast": False, "poly_mixed": False, "blend_halves": True,
                         "eps_norm": True}
    assert {name: source[name].fp64 > 0 for name in in_double} == in_double


@pytest.mark.parametrize(("statement", "promoted"), [
    ("y = x * 0.3", True), ("y = x * 0.5", False), ("c[i + 1] = a[i] * 0.5", False),
    ("c = a * 0.5 + b", True), ("b = (float)0.3 * a", False), ("y = x * 1e-5", True),
    ('static_assert(D % (2*W) == 0, "D not divisible by 2*W == 64.")', False),
    ("y = x * 0.3f", False), ("y = x * 3", False),
])
def test_which_statements_a_double_literal_promotes(statement, promoted):
    from occlint.readers.source.facts import _promoted

    assert _promoted(statement) is promoted
