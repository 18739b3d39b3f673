"""A user's CuPy and Triton kernels read from their caches beside a trace
(fixtures/traces/caches/h100, benchmarks/gpu/record_caches.py; issue 28 item 2).

Independent sources: the CUDA driver's and cuobjdump's resource counts and the GPU's
times (the fixture's README and times.json), the kernels' own definitions."""

from __future__ import annotations

import hashlib
import json

import pytest

from occlint.readers.nvidia.ptx import facts_by_entry
from tests.conftest import FIXTURES, run_occlint

RUN = FIXTURES / "traces/caches/h100"
CUPY = next((RUN / "cupy-cache").glob("*.cubin"))
TRITON_PTX = next((RUN / "triton-cache").glob("*/scale_add_kernel.ptx"))
TIMES = json.loads((RUN / "times.json").read_text())


def _occlint(*paths, args=("--format", "json", "--isolated", "--exit-zero")) -> dict:
    out = run_occlint(*map(str, paths), *args)
    assert out.code == 0, out.err
    return json.loads(out.out)


def test_a_cupy_cache_file_is_its_hash_then_the_cubin():
    data = CUPY.read_bytes()
    assert data[:40] == hashlib.sha1(data[40:]).hexdigest().encode()  # CuPy's own check
    doc = _occlint(CUPY, args=("--device", "h100", "--format", "json", "--isolated",
                               "--exit-zero"))
    (kernel,) = doc["kernels"]
    assert kernel["name"] == "scale_add"
    assert kernel["resources"]["registers"] == 12  # the driver's num_regs on the H100


def test_triton_ptx_facts_follow_the_kernels_definition():
    """BLOCK_SIZE 128 over 32 threads: each thread loads 4 floats of x and 4 of y, stores
    4, one FMA per float (a * x + y), four independent ones."""
    f = facts_by_entry(TRITON_PTX.read_text())["scale_add_kernel"]
    assert (f.loop, f.load_bytes, f.store_bytes, f.fma, f.chains) == \
        ("per-element", 32, 16, 4, 4)


@pytest.fixture(scope="module")
def run() -> dict:
    doc = _occlint(RUN / "caches.pt.trace.json.gz", RUN / "triton-cache", RUN / "cupy-cache")
    return {g["kernel"]: g for g in doc["launches"]}


def test_each_kernel_gets_its_facts_from_its_cache(run):
    assert run["scale_add_kernel"]["model"]["facts"]["source"] == "ptx"
    assert run["scale_add"]["model"]["facts"]["source"] == "source"  # the saved .cu


def test_the_cupy_launch_is_advised_a_faster_block(run):
    fix = next(f["fix"] for f in run["scale_add"]["findings"] if f.get("fix"))
    block = str(fix["block"][0])
    assert TIMES["cupy"][block] < 0.8 * TIMES["cupy"]["96"]


@pytest.mark.xfail(strict=True, reason="issue 28: on this kernel, recorded after the model "
                                       "was fixed, the advised block saves 26 % measured "
                                       "and the claim ends at 23 %")
def test_the_cupy_advice_claims_what_it_saves(run):
    f = next(f for f in run["scale_add"]["findings"] if f.get("fix"))
    measured = 1 - TIMES["cupy"][str(f["fix"]["block"][0])] / TIMES["cupy"]["96"]
    assert f["saving"]["low"] - 0.015 <= measured <= f["saving"]["high"] + 0.015
