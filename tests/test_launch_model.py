"""The launch-time model (issue 28; docs/validation.md "Launch-time model").

Its device parameters are measured (fixtures/traces/heldout/*/characterization.json.gz,
benchmarks/gpu/characterize.py); its facts are read from source; its advice is scored on
the held-out suite's measured times (benchmarks/gpu/heldout): the "score" half, which no
constant was fitted on, and the block-reduce family, added after the constants were
fixed. Every number checked here comes from those measurements or from the generator's
own record of what each kernel does, never from occlint's output.
"""

from __future__ import annotations

import gzip
import itertools
import json
import math
import re
import statistics
import tempfile
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest

from benchmarks.gpu.heldout import score
from benchmarks.gpu.heldout.generate import VECTOR
from occlint.devices.db import shipped_db
from occlint.devices.launch_params import launch_model
from occlint.judgement import fastest
from occlint.judgement.timing import Config, predict
from occlint.model.facts import Facts
from occlint.readers.source import read_source
from occlint.readers.source.facts import defines, kernel_facts, pointer_sizes
from tests.conftest import FIXTURES, run_occlint

RUNS = FIXTURES / "traces/heldout"
SUITE = json.loads((score.HERE / "suite.json").read_text())["kernels"]


@cache
def _occlint_json(run: str, facts: str | None) -> str:
    return json.dumps(score.occlint_json(RUNS / run / "heldout.pt.trace.json.gz", facts))


def occlint_doc(run: str, facts: str | None = "source") -> dict:
    """occlint's JSON on a run's trace (with the held-out source, its PTX, or alone): each
    run is made once for the tests that read it, each reading a fresh copy."""
    return json.loads(_occlint_json(run, facts))


def run_rows(run: str, facts: str | None = "source") -> list[dict]:
    """score.rows of a run, on occlint_doc."""
    return score.rows(RUNS / run, facts, doc=occlint_doc(run, facts))


def _characterization(run: str) -> dict:
    return json.loads(gzip.decompress((RUNS / run / "characterization.json.gz").read_bytes()))


@pytest.fixture(scope="module")
def facts_by_kernel() -> dict[str, Facts]:
    model = read_source(str(score.SOURCE), str(score.SOURCE))
    return {k.name: k.facts for k in model.kernels}


@pytest.fixture(scope="module", params=["h100", "h100-repeat"])
def scored(request):
    return request.param, run_rows(request.param)


def test_the_fixture_source_is_the_generators(tmp_path):
    """fixtures/traces/heldout/kernels.cu (read beside the trace; README's example) and
    suite.json are what generate.py writes from its seed."""
    from benchmarks.gpu.heldout import generate

    generate.main(["--out", str(tmp_path)])
    assert (tmp_path / "kernels.cu").read_bytes() == (RUNS / "kernels.cu").read_bytes()
    assert json.loads((tmp_path / "suite.json").read_text())["kernels"] == SUITE


# -- facts read from source --------------------------------------------------------------
def test_facts_of_every_generated_kernel_match_what_the_generator_drew(facts_by_kernel):
    """Bytes per element from the pointer types, stores, the loop, the atomics: as the
    generator recorded them when it wrote each kernel (suite.json)."""
    loops = {"grid-stride": "grid-stride", "block-reduce": "grid-stride",
             "block-per-row": "block-stride"}
    for k in SUITE:
        f, drawn = facts_by_kernel[k["name"]], k["facts"]
        width = 4 * drawn["vector"]
        assert f.loop == loops.get(k["family"], "per-element"), k["name"]
        if k["family"] == "tile":
            assert f.load_bytes == 4 and f.store_bytes == 4 and f.shared_per_thread
            assert f.barrier
        else:
            assert f.load_bytes == width * drawn["loads"], k["name"]
            assert f.store_bytes == (width if drawn["store"] else 0), k["name"]
        # every drawn FMA is counted, and the extra live values' steps with them
        assert drawn["fma"] <= f.fma <= drawn["fma"] + drawn["regs_pad"] + 2 * 8 + 4, k["name"]
        atomic = drawn["atomic"]
        if k["family"] == "block-reduce":
            assert f.atomics_one_block == 1 and f.atomics_one_thread == 0
        elif atomic == "thread" and f.loops:
            assert f.atomics_one_thread == 1 and f.atomics_one == 0, k["name"]
        elif atomic == "thread":
            assert f.atomics_one == 1, k["name"]
        elif atomic == "block":
            assert f.atomics_block == 1, k["name"]
        else:
            assert f.atomics_one == f.atomics_one_thread == f.atomics_block == 0, k["name"]


def test_pointer_sizes_follow_the_declared_types():
    sizes = pointer_sizes("(const float4* __restrict__ a, double *b, unsigned char* c, "
                          "const __half* h, Foo* opaque, int n, long long* q)")
    assert sizes == {"a": 16, "b": 8, "c": 1, "h": 2, "opaque": None, "q": 8}


def test_defined_trip_counts_and_independent_chains_multiply_the_arithmetic():
    body = """{
        long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
        if (i < n) {
            float v = x[i], w = v + 1.0f;
            for (int k = 0; k < ITERS; ++k) { v = fmaf(v, a, 0.5f); w = fmaf(w, a, -0.5f); }
            y[i] = v + w;
        }
    }"""
    f = kernel_facts("(const float* x, float* y, float a, long n)", body, "per-element",
                     {"ITERS": 512})
    assert (f.load_bytes, f.store_bytes, f.fma, f.chains) == (4, 4, 1024 + 1, 2)


def test_a_constant_loop_costs_its_passes_control():
    """Each pass of a constant loop as compiled is an add, a compare and a branch: the
    passes are the trips over ``#pragma unroll N`` (none when unrolled whole, or when one
    pass holds every trip); without a pragma, whole up to LLVM's threshold."""
    def control(loop: str, consts: dict[str, int] | None = None) -> float:
        body = ("{ long i = blockIdx.x * (long)blockDim.x + threadIdx.x; float t = x[i];\n"
                f"{loop}\n y[i] = t; }}")
        return kernel_facts("(const float* x, float* y, float s)", body, "per-element",
                            consts or {}).control

    one = "for (int k = 0; k < 128; ++k) { t = fmaf(t, s, 0.5f); }"
    assert control("#pragma unroll 4\n" + one) == 32 * 3
    assert control("  #pragma unroll U\n" + one, {"U": 8}) == 16 * 3
    assert control("#pragma unroll 1\n" + one) == 128 * 3
    assert control("#pragma unroll\n" + one) == 0  # whole
    assert control("#pragma unroll 4\nfor (int k = 0; k < 4; ++k) t = fmaf(t, s, 1.f);") == 0
    assert control(one) == 0  # 128 instructions: under the full-unroll threshold
    sixteen = "t = fmaf(t, s, 1.f); " * 16
    assert control(f"for (int k = 0; k < 512; k += 16) {{ {sixteen} }}") == 4 * 3
    nested = "for (int j = 0; j < 8; ++j) {\n#pragma unroll 2\n" + one.replace("}", "}}")
    assert control(nested) == 8 * 64 * 3 + 8 * 3  # a loop holding a loop is not unrolled


def test_atomic_addresses_are_told_apart():
    def facts(stmt: str, shape: str = "per-element") -> Facts:
        body = ("{ long i = blockIdx.x * (long)blockDim.x + threadIdx.x; float t = x[i];"
                f" {stmt} }}")
        return kernel_facts("(const float* x, float* out, long n)", body, shape, {})

    assert facts("atomicAdd(out, t);").atomics_one == 1
    assert facts("atomicAdd(&out[blockIdx.x], t);").atomics_block == 1
    distinct = facts("atomicAdd(&out[i], t);")
    assert distinct.atomics_one == distinct.atomics_block == 0  # a thread's own address
    assert facts("if (threadIdx.x == 0) atomicAdd(out, t);").atomics_one_block == 1


def test_subscripts_words_and_defines_are_read_where_they_start():
    """What the patterns once found at every character, now searched from their literal:
    a subscript only of the parameter itself (not ``s.x[i]``, ``&x[i]``, ``xx[i]``), a
    ``for`` / ``if`` only as a word, a ``#define`` only at the start of its line."""
    body = """{ long i = threadIdx.x; float t = s.x[i] + xx[i] + x [i];
        const float* p = &x[i]; myfor (i); notif (i);
        for (int k = 0; k < N; ++k) t += x[k]; y[i] = t; }"""
    f = kernel_facts("(const float* x, float* y, long n)", body, "other", {"N": 4})
    assert (f.load_bytes, f.store_bytes) == (4 + 4 * 4, 4)
    text = b"#define N 4\n  #  define M (8)\nx #define K 2\n#define L 3 // no\n#undefine P 1\n"
    assert defines(text) == {"N": 4, "M": 8}


# -- the model against the device's own measurements --------------------------------------
H100 = launch_model(shipped_db().get("h100"))


def test_device_parameters_are_the_characterisation_reduced():
    """The database's H100 entry is what benchmarks/gpu/device_params.py makes of the
    committed characterisation (the first run; floor, L2 and latency from its repeat)."""
    from benchmarks.gpu.device_params import params

    first, repeat = params(_characterization("h100")), params(_characterization("h100-repeat"))
    assert H100.basis == "measured"
    assert [list(p) for p in H100.read_curve] == first["read_curve"]
    assert [list(p) for p in H100.copy_curve] == first["copy_curve"]
    for key in ("block_rate", "block_rate_1024", "fma_per_s", "half_rate_warps",
                "atomic_one_ns", "atomic_spread_ns", "sm_bandwidth_gbs"):
        assert getattr(H100, key) == first[key], key
    assert H100.floor_us == repeat["floor_us"]
    assert [list(p) for p in H100.l2_curve] == repeat["l2_curve"]
    # the two runs of one GPU model agree where their kernels were the same
    assert repeat["block_rate"] == pytest.approx(first["block_rate"], rel=0.02)
    assert repeat["atomic_one_ns"] == pytest.approx(first["atomic_one_ns"], rel=0.03)
    assert repeat["copy_curve"][-1][1] == pytest.approx(first["copy_curve"][-1][1], rel=0.03)


def test_one_element_per_thread_is_measured_apart():
    """element_curve and wave_curve are the third run's (characterize.py --only
    element_bandwidth) reduced; one element per thread draws far less at few bytes in flight
    than the grid-stride curve says (its loop keeps more loads in flight than it counts), so
    Little's law on it gives a DRAM latency near the reference note's 318 ns (nvidia.md §8),
    where the grid-stride curve gives half that."""
    from benchmarks.gpu.device_params import merged, params

    p = params(merged(_characterization("h100"), _characterization("h100-element")))
    assert [list(x) for x in H100.element_curve] == p["element_curve"]
    assert [list(x) for x in H100.wave_curve] == p["wave_curve"]
    x, gbs = next(pt for pt in H100.element_curve if pt[0] == 2048)
    element_ns = H100.sms * x / gbs
    loop_ns = H100.sms * x / dict(H100.copy_curve)[2048]
    assert 318 * 0.7 <= element_ns <= 318 * 1.4
    assert loop_ns < 0.5 * element_ns
    assert 1.0 < H100.wave_curve[-1][1] < 1.15  # 64 waves over one


def test_one_element_per_thread_takes_what_the_characterisation_timed():
    """One element per thread draws the element curve: the characterisation's own copies
    (float and float4, blocks of 32-1,024 threads, resident blocks capped by shared memory;
    those its blocks' starts bound left out, as the curve leaves them out) predicted from
    their facts within 25 %, the median within 10 % (the model's per-element instructions
    and the stragglers of blocks past 8 warps are not in those rows' times)."""
    import statistics

    from benchmarks.gpu.device_params import _resident

    ratios = []
    for r in _characterization("h100-element")["element_bandwidth"]:
        if "smem" not in r:
            continue
        threads = (1 << 28) // r["vector"]
        blocks = threads // r["block"]
        if blocks / H100.block_rate * 1e3 >= 0.5 * r["ms"]:
            continue
        f = Facts("per-element", 4.0 * r["vector"], 4.0 * r["vector"], 0.0)
        t = predict(H100, f, Config(r["block"], blocks, _resident(r)), float(threads)).total
        ratios.append(t * 1e3 / r["ms"])
    assert len(ratios) >= 60
    assert all(0.85 <= x <= 1.25 for x in ratios)
    assert 0.95 <= statistics.median(ratios) <= 1.1


def test_a_loops_first_element_per_thread_is_a_short_blocks():
    """A loop of k elements per thread draws, for its first, what one element per thread
    draws (the element curve) and the loop curve for the rest: at one element per thread
    it is a short block, at many the loop's own; in between, the harmonic mix."""
    from occlint.judgement.timing import _drawn

    facts = Facts("block-stride", 4.0, 4.0, 0.0)
    cfg = Config(256, 132 * 8, 8)
    dram = replace(H100, l2_kept_curve=())  # every byte DRAM's, however few
    per_element = [predict(dram, facts, cfg, 132 * 8 * 256 * k).memory / k
                   for k in (1, 2, 4, 64)]
    assert per_element[0] > per_element[1] > per_element[2] > per_element[3]
    loops = predict(replace(dram, element_curve=()), facts, cfg, 132 * 8 * 256 * 64).memory
    assert per_element[3] * 64 == pytest.approx(loops, rel=0.03)
    element_bw, _ = _drawn(H100, True, 132, 8 * 256 * 4, 0.0, True)
    loop_bw, _ = _drawn(H100, True, 132, 8 * 256 * 4, 0.0, False)
    assert element_bw < loop_bw  # the element curve draws less at the same bytes


def _short(kernel: str) -> list[dict]:
    doc = json.loads((FIXTURES / "traces/zoo-33/h200/short.characterization.json").read_text())
    return [r for r in doc["short_launches"] if r["kernel"] == kernel]


def test_what_the_l2_keeps_of_a_launchs_data_comes_at_its_rate():
    """Copies the L2 holds from the launch before (characterize.py short_launches, the
    H200's durations in the profiler, inputs launched again and again): one float a
    thread of 64 K to 4 M elements (0.5 to 34 MB read and written) predicted within 25 %
    (the fastest 23 % fast since the element curve is the blocks' of 8 warps or fewer),
    where every byte at DRAM's rate was up to 1.9x over; 1,024-thread blocks no slower than
    256-thread ones (their loads do not straggle), as measured; and copies past the L2
    (134 MB) as before."""
    h200 = launch_model(shipped_db().get("h200"))
    dram = replace(h200, l2_kept_curve=())
    facts = Facts("per-element", 4.0, 4.0, 0.0)
    rows = {(r["n"], r["block"]): r for r in _short("element_float")}
    errors: dict[str, list[float]] = {"kept": [], "dram": []}
    for (n, block), r in rows.items():
        cfg = Config(block, r["grid"], min(2048 // block, 32))
        t = predict(h200, facts, cfg, n).total * 1e6
        if 1 << 16 <= n <= 1 << 22 and block > 64:
            assert t == pytest.approx(r["us"], rel=0.25), (n, block)
            errors["kept"].append(abs(math.log(t / r["us"])))
            errors["dram"].append(abs(math.log(
                predict(dram, facts, cfg, n).total * 1e6 / r["us"])))
        if n == 1 << 24:
            assert t == predict(dram, facts, cfg, n).total * 1e6
    assert max(errors["dram"]) > 0.5 > 0.3 > max(errors["kept"])
    # (mean log error 0.154 against the DRAM reading's 0.303 since the element curve is the
    # blocks' of 8 warps or fewer: under half before)
    assert statistics.fmean(errors["kept"]) < 0.55 * statistics.fmean(errors["dram"])
    for n in (1 << 18, 1 << 20, 1 << 22):
        assert rows[n, 1024]["us"] <= rows[n, 256]["us"]
        t = {b: predict(h200, facts, Config(b, rows[n, b]["grid"], 2048 // b), n).total
             for b in (256, 1024)}
        assert t[1024] <= t[256]


def test_the_l2_keeps_what_fits_in_it_and_nothing_past_twice_its_size():
    """The kept share, measured (l2_residency: copies warm and after a 1 GiB write):
    whole below half the L2, none past twice it, between in the measured points'
    order; a copy's gain where all is kept, its cold time over its warm one."""
    from benchmarks.gpu.device_params import l2_copy_gain, l2_kept_curve
    from occlint.judgement.timing import l2_kept

    doc = json.loads((FIXTURES / "traces/zoo-33/h200/l2.characterization.json").read_text())
    l2 = doc["env"]["l2_bytes"]
    h200 = launch_model(shipped_db().get("h200"))
    curve = l2_kept_curve(doc["l2_residency"], l2)
    assert [tuple(p) for p in curve] == list(h200.l2_kept_curve) and h200.l2_bytes == l2
    assert l2_copy_gain(doc["l2_residency"], curve, l2) == h200.l2_copy_gain
    copy = Facts("per-element", 4.0, 4.0, 0.0)  # 8 bytes an element read and written
    assert l2_kept(h200, copy, l2 / 16 / 8) == 1.0
    assert 0.9 < l2_kept(h200, copy, l2 / 2 / 8) <= 1.0
    assert l2_kept(h200, copy, 2.2 * l2 / 8) == 0.0
    cold = {r["bytes"]: r["us"] for r in doc["l2_residency"]
            if r["state"] == "cold" and r["kernel"] == "copy_float4_1"}
    warm = {r["bytes"]: r["us"] for r in doc["l2_residency"]
            if r["state"] == "warm" and r["kernel"] == "copy_float4_1"}
    small = min(cold)
    assert cold[small] / warm[small] == pytest.approx(h200.l2_copy_gain, rel=0.1)


def test_atomics_after_a_loop_drain_beside_other_threads_work():
    """Grid-stride kernels whose threads end in an atomic on one address (seed 28's fit
    half, every timed configuration, the model given the suite's true work): the measured
    times lie between the atomics adding to the work (p 1) and draining beside it (the
    overlap's p); the shipped p predicts them better than either."""
    from benchmarks.gpu.heldout.fit import atomics_errors
    from occlint.judgement.timing import ATOMICS_OVERLAP_P, OVERLAP_P

    error = atomics_errors([FIXTURES / "traces/heldout/h100"],
                           (1.0, ATOMICS_OVERLAP_P, OVERLAP_P))
    assert error[ATOMICS_OVERLAP_P] < 0.85 * error[1.0]
    assert error[ATOMICS_OVERLAP_P] < 0.9 * error[OVERLAP_P]


def test_the_characterisation_loops_hold_four_loads_in_flight():
    """The compiler unrolls the characterisation's one-load loops four times (the PTX NVRTC
    made of its source, benchmarks/gpu/characterize.sm_90.ptx.gz): the curves' X is the
    bytes the source writes, a quarter of those in flight. So a one-load row draws what
    the four-load row of the same threads draws (X four times apart in the curves'
    terms), and one element per thread (no loop, nothing unrolled) draws what the copy
    curve draws at four times its X."""
    from benchmarks.gpu.device_params import loads_per_pass

    passes = loads_per_pass()
    for t in ("float", "float2", "float4"):
        assert passes[f"read_{t}_1"] == 4 and passes[f"read_{t}_2"] == 2
        assert passes[f"read_{t}_4"] == 4
    assert passes["copy_float_1"] == passes["copy_float4_4"] == 4
    rows = [r for r in _characterization("h100")["bandwidth"]
            if r["level"] == "dram" and r["kind"] == "read" and r["sms"] == H100.sms]
    by = {(r["vector"], r["unroll"], r["block"], r["blocks_per_sm"]): r["gbps"] for r in rows}
    compared = 0
    for (vector, unroll, block, per_sm), gbps in by.items():
        # a one-load loop and a four-load one: X four times apart, the same in flight
        same = by.get((vector, 4, block, per_sm)) if unroll == 1 else None
        if same is not None:
            assert gbps == pytest.approx(same, rel=0.05)
            compared += 1
    assert compared >= 6
    copy = dict(H100.copy_curve)
    for x, gbps in H100.element_curve:
        if x in (4096, 8192, 16384):
            assert gbps == pytest.approx(copy[x // 4], rel=0.15)


LOOP_DEPTH = FIXTURES / "traces/loop-depth/h200/loop_depth.json.gz"


@cache
def _loop_depth() -> tuple[dict, dict]:
    """benchmarks/gpu/loop_depth.py's run on the H200 and each of its kernels' facts as
    occlint reads them from its source."""
    from benchmarks.gpu.heldout.generate import PRELUDE

    doc = json.loads(gzip.decompress(LOOP_DEPTH.read_bytes()))
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "loop_depth.cu"
        path.write_text(PRELUDE + "".join(doc["sources"].values()))
        facts = {k.name: k.facts for k in read_source(path, "loop_depth.cu").kernels}
    return doc, facts


def _loop_depth_errors() -> list[float]:
    """|log(predicted / measured)| of every timed launch of loop_depth.py."""
    doc, facts = _loop_depth()
    h200 = launch_model(shipped_db().get("h200"))
    return [abs(math.log(predict(h200, facts[r["kernel"]], Config(r["block"], r["grid"], 1),
                                 r["n"]).total * 1e3 / r["ms"])) for r in doc["rows"]]


def test_a_loops_loads_in_flight_are_what_the_compiler_keeps():
    """The held-out generator's loop bodies at one block per SM of 1 to 32 warps, where the
    loads in flight set the time (loop_depth.py on the H200): one and two loads of a
    float or a float4, a store or none, unrolled as NVRTC does and with ``#pragma unroll
    1``, and a plain copy. The model predicts each of the 108 times within 31 %, 6 % on
    average. (It erred by up to 2.6x: it counted every unrolled load in flight, the
    per-element overhead twice, a two-load body's loads as a copy's, and read the reads
    on a curve whose loops held half the loads they were said to.)"""
    errors = _loop_depth_errors()
    assert len(errors) == 108
    assert max(errors) < math.log(1.31) and statistics.fmean(errors) < 0.06


def test_the_loop_depth_constants_are_the_measurements_least_error(monkeypatch):
    """timing.HOIST_STORE_BYTES, HOIST_READ_BYTES and DEPTH_EXP: of the caps in steps of
    8 bytes and the powers in steps of 0.05, those whose predictions of loop_depth.py's
    launches err least on average; and what the SASS shows beside them: a float4 body
    that stores issues three loads before its first store, one that reads issues all."""
    from occlint.judgement import timing

    kept = (timing.HOIST_STORE_BYTES, timing.HOIST_READ_BYTES, timing.DEPTH_EXP)
    scores = {}
    for store, read, power in itertools.product((32.0, 40.0, 48.0, 56.0, 64.0),
                                                (40.0, 48.0, 56.0, 64.0),
                                                (0.8, 0.85, 0.9, 0.95, 1.0)):
        monkeypatch.setattr(timing, "HOIST_STORE_BYTES", store)
        monkeypatch.setattr(timing, "HOIST_READ_BYTES", read)
        monkeypatch.setattr(timing, "DEPTH_EXP", power)
        timing._drawn.cache_clear()
        scores[store, read, power] = statistics.fmean(_loop_depth_errors())
    timing._drawn.cache_clear()
    assert min(scores, key=lambda k: scores[k]) == kept
    orders = _loop_depth()[0]["sass_order"]
    assert _issued_together(orders["v4_l1_st"]) == 3
    assert _issued_together(orders["v4_l2_st"]) == _issued_together(orders["copy_v4"]) == 4
    assert _issued_together(orders["v4_l2_ro"]) == 8


def _issued_together(order: list[str]) -> int:
    """The most global loads a kernel's SASS issues one after another (no store or branch
    between: in flight together)."""
    most = run = 0
    for op in order:
        run = run + 1 if op.startswith("LDG") else 0
        most = max(most, run)
    return most


def test_the_read_curve_is_the_reads_that_hold_four_loads():
    """device_params.CURVE_ROWS: the H200's characterisation's reads written with one load a
    pass drew 0.57-0.6 of those written with four at 1 to 8 warps an SM (their loads
    waited on their sums, NVRTC of the day), the H100's the same within 1 %; the read
    curve is the four-load reads', the copy curve the one-load copies' (the compiler
    unrolls those four times and issues the four loads together: their SASS, as NVRTC
    builds them now). The H200's read curve is so the four-load rows reduced."""
    from benchmarks.gpu.device_params import CURVE_ROWS, params

    doc = json.loads(gzip.decompress((FIXTURES / "traces/heldout-31/h200-characterization/"
                                      "characterization.json.gz").read_bytes()))
    by = {(r["kind"], r["vector"], r["unroll"], r["block"]): r["gbps"]
          for r in doc["bandwidth"] if r["level"] == "dram" and r["sms"] == 132
          and r["blocks_per_sm"] == 1}
    for vector in (1, 2, 4):
        for block in (32, 64, 128, 256):
            one, four = by[("read", vector, 1, block)], by.get(("read", vector, 4, block))
            if four:
                assert 0.5 < one / four < 0.65, (vector, block)
    assert CURVE_ROWS == {"copy": 1, "read": 4}
    h200 = launch_model(shipped_db().get("h200"))
    assert [list(x) for x in h200.read_curve] == params(doc)["read_curve"]
    sass = _loop_depth()[0]["characterize_sass_order"]
    for name in ("copy_float_1", "copy_float4_1", "read_float_4", "read_float4_4"):
        assert _issued_together(sass[name]) == 4, name


def test_a_loop_draws_the_measured_gain_of_many_waves():
    """A memory-bound grid-stride loop's time over the same elements, in one wave of blocks
    and in 16: the model divides the memory time by the device's measured gain (a copy in
    16 waves drew 1.040x one wave's on the H100: wave_curve, reduced from the element
    characterisation); without the curve the two cost the same. The H200's entry holds its
    own measurement. (Without the element curve: with it, the 16 times more threads' first
    elements, each a short block's, cost more besides.)"""
    from benchmarks.gpu.device_params import params
    from occlint.judgement.timing import wave_gain

    facts = Facts("grid-stride", 16.0, 16.0, 0.0)
    one, many = Config(256, 132 * 8, 8), Config(256, 132 * 8 * 16, 8)
    loop = replace(H100, element_curve=())
    flat = replace(loop, wave_curve=())
    n = 1 << 26
    assert predict(flat, facts, one, n).memory == pytest.approx(
        predict(flat, facts, many, n).memory, rel=1e-9)
    ratio = predict(loop, facts, one, n).memory / predict(loop, facts, many, n).memory
    assert ratio == pytest.approx(dict(H100.wave_curve)[16], rel=1e-6)
    assert wave_gain(H100, 1.0) == 1.0 and wave_gain(H100, 1000) == H100.wave_curve[-1][1]
    h200 = launch_model(shipped_db().get("h200"))
    assert [list(x) for x in h200.wave_curve] == params(_doc(BLOCK_ATOMICS["h200"]))[
        "wave_curve"]


def _doc(path) -> dict:
    raw = path.read_bytes()
    return json.loads(gzip.decompress(raw) if path.suffix == ".gz" else raw)


BLOCK_ATOMICS = {  # characterize.py --only ...block_atomics, one per card and run
    "h100": FIXTURES / "traces/heldout-30/h100/block-atomics.characterization.json",
    "h100-again": FIXTURES / "traces/heldout-31/h100/block-atomics.characterization.json",
    "h200": FIXTURES / "traces/heldout-31/h200-characterization/characterization.json.gz",
}


def test_block_address_atomics_are_the_characterisation_reduced():
    """atomic_block_curve: ns per atomicAdd to each block's own address against threads per
    block, as device_params.py reduces the H100's run (seed 30's) and the H200's full
    characterisation; a second H100 run agrees within 5 %; the cost grows with the block
    (more atomics on each address), nine-fold from 32 to 1,024 threads."""
    from benchmarks.gpu.device_params import params

    h200 = launch_model(shipped_db().get("h200"))
    assert [list(x) for x in H100.atomic_block_curve] == [
        [r["block"], round(r["ns_per_atomic"], 4)]
        for r in _doc(BLOCK_ATOMICS["h100"])["block_atomics"]]
    assert h200.basis == "measured"
    assert [list(x) for x in h200.atomic_block_curve] == \
        params(_doc(BLOCK_ATOMICS["h200"]))["atomic_block_curve"]
    again = {r["block"]: r["ns_per_atomic"] for r in
             _doc(BLOCK_ATOMICS["h100-again"])["block_atomics"]}
    for block, ns in H100.atomic_block_curve:
        assert again[block] == pytest.approx(ns, rel=0.05)
    assert 7 < H100.atomic_block_curve[-1][1] / H100.atomic_block_curve[0][1] < 11


def test_the_steady_issue_curve_is_the_characterisation_reduced():
    """issue_curve (measured, not used by the model yet) is device_params.py's reduction of
    the fma_steady rows; in steady waves an SM issues far more at few warps than the
    single-wave fma rows' half_rate_warps curve says (40 % of its peak at 8 warps, not 25)."""
    from benchmarks.gpu.device_params import issue_curve

    doc = _doc(FIXTURES / "traces/heldout-33/h100/fma.characterization.json")
    assert [list(x) for x in H100.issue_curve] == issue_curve(doc["fma_steady"])
    h200 = launch_model(shipped_db().get("h200"))  # its own since seed 54's run
    doc = _doc(FIXTURES / "traces/heldout-54/h200/fma.characterization.json")
    assert [list(x) for x in h200.issue_curve] == issue_curve(doc["fma_steady"])
    at8 = dict(H100.issue_curve)[8]
    assert at8 > 1.5 * 8 / (8 + H100.half_rate_warps)


def test_two_d_rows_are_the_characterisation_reduced():
    """row_curve and row_curve_16 (measured on an H200, not used by the model yet):
    device_params.py's reduction of the row_bandwidth rows; a 2-D block's rows of 16 bytes
    draw about half a 1-D copy's bandwidth (floats), of 4 bytes a seventh, of 256 all."""
    from benchmarks.gpu.device_params import row_curves

    doc = _doc(FIXTURES / "traces/heldout-53/h200/rows.characterization.json")
    curves = row_curves(doc["row_bandwidth"])
    h200 = launch_model(shipped_db().get("h200"))
    assert [list(x) for x in h200.row_curve] == curves[4]
    assert [list(x) for x in h200.row_curve_16] == curves[16]
    assert H100.row_curve == h200.row_curve  # the H200's: the same SM and L2 sectors
    floats, float4s = dict(h200.row_curve), dict(h200.row_curve_16)
    assert 0.5 < floats[16] < 0.65 and floats[4] < 0.2 and floats[256] > 0.95
    assert float4s[16] < 0.3 and float4s[64] > 0.9


@pytest.mark.xfail(strict=True, reason="issue 28: the model charges a 2-D row whole 32-byte "
                   "sectors and ROW_BYTES more: rows of 16 bytes of floats at 0.33 of a 1-D "
                   "block's bandwidth, measured 0.57 (docs/validation.md, stop 37)")
def test_the_models_rows_draw_what_the_device_measured():
    from occlint.judgement.timing import CONSTANTS

    h200 = launch_model(shipped_db().get("h200"))
    for width, share in h200.row_curve:
        row = int(width // 4)
        if row < 2:
            continue
        model = Config(256, 1, 1, row=row).row_efficiency(4.0, CONSTANTS.row_bytes)
        assert model == pytest.approx(share, rel=0.15), width


def test_a_blocks_reduction_tree_is_the_characterisation_reduced():
    """reduce_curve (measured on an H200, not used by the model yet): what a block's
    reduction tree adds to its lifetime at two blocks per SM, device_params.py's reduction
    of the block_reduce rows; it grows with the block (a barrier per halving, each slower
    with more warps): five-fold from 32 to 1,024 threads. Its atomic on one address after
    the tree queues beside the trees: with two blocks per SM the launch takes about the
    larger of the trees' time and the queue's (1.79 ns an atomic), not their sum."""
    from benchmarks.gpu.device_params import reduce_curve

    doc = _doc(FIXTURES / "traces/heldout-46/h200/block-reduce.characterization.json")
    h200 = launch_model(shipped_db().get("h200"))
    assert [list(x) for x in h200.reduce_curve] == reduce_curve(doc["block_reduce"], 132)
    assert 4 < h200.reduce_curve[-1][1] / h200.reduce_curve[0][1] < 6
    rows = {(r["kernel"], r["block"]): r["ms"] for r in doc["block_reduce"] if r["smem"]}
    queue = (1 << 16) * h200.atomic_one_ns * 1e-6  # ms
    for block in (32, 64, 128, 256, 512, 1024):
        tree, atomic = rows[("reduce_store", block)], rows[("reduce_atomic", block)]
        assert atomic < 0.8 * (tree + queue)
        assert atomic == pytest.approx(max(tree, queue), rel=0.1)


def test_block_address_atomics_take_what_the_device_measured():
    """The atomic_block kernel's rows of the first characterisation (not those the curve
    was made of): 8,448 blocks of 1,024 threads, one atomic each to its block's address,
    within 10 %; 4,224 blocks of 256 within 20 % (four waves: the first one's ramp, which
    the steady cost leaves out, is a fifth of it)."""
    f = Facts("per-element", 0.0, 0.0, 0.0, atomics_block=1.0)
    for row in _characterization("h100")["atomics"]:
        if row["kernel"] != "atomic_block" or row["grid"] == 1056:
            continue  # one wave of 1,056 blocks: the ramp, not the steady cost
        cfg = Config(row["block"], row["grid"], 2048 // row["block"])
        t = predict(H100, f, cfg, float(row["atomics"])).total
        rel = 0.1 if row["block"] == 1024 else 0.2
        assert t * 1e3 == pytest.approx(row["ms"], rel=rel), row


def test_the_work_is_solved_where_atomics_hide_it():
    """A block per row whose atomics to its row's address take nearly all of its launch's
    time (as seed 29's block_per_row_12's: 4.08 of 4.09 ms): the work solved from that
    time reproduces it (the secant alone returned an unsolved bracket, 3.6x the time)."""
    from occlint.judgement.timing import CONSTANTS, elements_for

    f = Facts("block-stride", 16.0, 0.0, 129.0, atomics_block=1.0)
    cfg = Config(512, 65536, 4)
    for k in (CONSTANTS, replace(CONSTANTS, atomics_beside=True)):  # both readings
        seconds = predict(H100, f, cfg, 1.0, k).total * 1.003  # the atomics: 99.7 % of it
        n = elements_for(H100, f, cfg, seconds, k)
        assert n is not None
        assert predict(H100, f, cfg, n, k).total == pytest.approx(seconds, rel=1e-3), k


def test_tiny_blocks_are_bound_by_the_measured_block_start_rate():
    """2^22 near-empty blocks take what the characterisation timed for them."""
    doc = _characterization("h100")
    row = next(r for r in doc["block_starts"] if r["block"] == 256 and r["blocks"] == 1 << 22)
    t = predict(H100, Facts("per-element", 0.0, 0.0, 0.0), Config(256, 1 << 22, 8),
                float(256 << 22)).total
    assert t * 1e3 == pytest.approx(row["ms"], rel=0.08)


def test_one_address_atomics_serialise_at_the_measured_rate():
    doc = _characterization("h100")
    row = next(r for r in doc["atomics"] if r["kernel"] == "atomic_one" and r["block"] == 1024)
    f = Facts("per-element", 0.0, 0.0, 0.0, atomics_one=1.0)
    t = predict(H100, f, Config(1024, row["grid"], 2), float(row["atomics"])).total
    assert t * 1e3 == pytest.approx(row["ms"], rel=0.05)


def test_a_deep_copy_runs_at_the_measured_plateau():
    doc = _characterization("h100")
    row = next(r for r in doc["bandwidth"] if r["level"] == "dram" and r["kind"] == "copy"
               and r["vector"] == 4 and r["unroll"] == 1 and r["block"] == 1024)
    n = (1 << 28) // 4
    f = Facts("grid-stride", 16.0, 16.0, 0.0)
    t = predict(H100, f, Config(1024, row["blocks_per_sm"] * 132, row["blocks_per_sm"]), n)
    assert t.total * 1e3 == pytest.approx(row["ms"], rel=0.1)
    assert t.binding == "memory"


def test_predicted_times_follow_the_measured_sweep():
    """Over every timed configuration of the held-out kernels of the score half, the model
    (its work solved from the defect's traced time, as occlint does) is within 15 % of
    the measured time for the median configuration."""
    doc = occlint_doc("h100")
    groups = {g["kernel"]: g for g in doc["launches"]}
    errors = []
    for k in score.load(RUNS / "h100" / "heldout.json")["kernels"]:
        spec = next(s for s in SUITE if s["name"] == k["name"])
        if spec["split"] != "score":
            continue
        m = groups[k["name"]]["model"]
        predicted, measured = m["now"]["ns"] / 1e6, k["configs"][0]["ms"]
        errors.append(abs(predicted / measured - 1))
    assert statistics.median(errors) <= 0.15


def test_derived_devices_say_so_and_scale_with_their_specifications():
    a100 = launch_model(shipped_db().get("a100"))
    assert a100.basis == "derived" and a100.spread > 0
    db = shipped_db()
    assert a100.read_curve[-1][1] / H100.read_curve[-1][1] == pytest.approx(
        db.get("a100").memory_bandwidth_gbs / db.get("h100").memory_bandwidth_gbs, rel=1e-3)
    assert launch_model(shipped_db().get("mi300x")).basis == "derived"  # AMD too


# -- the advice, scored on what it was not fitted on ---------------------------------------
def _split(rows: list[dict], split: str) -> dict:
    return score.targets([r for r in rows if r["split"] == split])


def test_the_advised_configuration_is_near_the_best_measured(scored):
    run, rows = scored
    t = _split(rows, "score")
    assert t["unmeasured"] == []
    assert t["advised_vs_best"] >= 0.96, run
    assert t["advised_vs_best"] > t["habit_vs_best"] + 0.04  # 256 threads, 8 blocks per SM


def test_the_advice_reaches_097_of_the_best(scored):
    """0.966-0.969 before a loop's memory time counted the device's measured wave gain."""
    _, rows = scored
    assert _split(rows, "score")["advised_vs_best"] >= 0.97


def test_no_advice_makes_a_launch_slower(scored):
    _, rows = scored
    assert _split(rows, "score")["slower"] == []


def test_measured_savings_lie_in_the_claimed_ranges(scored):
    _, rows = scored
    assert _split(rows, "score")["inside"] >= 0.85


def test_nine_claims_in_ten_hold(scored):
    """89 % before the wave gain (and its band, refitted on the same fit halves)."""
    _, rows = scored
    assert _split(rows, "score")["inside"] >= 0.9


def test_claimed_savings_rank_like_the_best_measured(scored):
    _, rows = scored
    assert _split(rows, "score")["spearman"] >= 0.89


def test_no_warning_where_nothing_saves_two_percent(scored):
    _, rows = scored
    assert _split(rows, "score")["false_warnings"] == []


@pytest.mark.xfail(strict=True, reason="issue 28: the ranges are 21 points wide at the median "
                                       "(the target is 15): the model's errors on the fit halves")
def test_ranges_are_narrow_enough_to_act_on(scored):
    _, rows = scored
    assert _split(rows, "score")["median_width"] <= 0.15


@pytest.mark.xfail(strict=True, reason="issue 28: 2-4 launches whose best saves 10 % or more "
                                       "get a claim whose low end is under 2 % (info, not a "
                                       "warning): the ranges are too wide")
def test_every_launch_worth_ten_percent_warns(scored):
    _, rows = scored
    assert _split(rows, "score")["missed"] == []


def test_the_family_added_after_fitting():
    """block-reduce (a grid-stride loop ending in a shared-memory reduction and one atomic
    per block) was generated, measured and scored after the constants were fixed."""
    t = _split(run_rows("h100-repeat"), "post-fit")
    assert t["kernels"] == 15  # the 16th cannot launch its defect (registers)
    assert t["advised_vs_best"] >= 0.96
    assert t["advised_vs_best"] > t["habit_vs_best"]


@pytest.mark.xfail(strict=True, reason="issue 28: block_reduce_04 (528 FMAs a float4, 64 x "
                   "5,280) is advised 128 x 2,112 as an info (0-12 % claimed), 3.3 % slower, "
                   "since a block's atomic on one address joins the launch as the device "
                   "measured it (reduce_stream) rather than adding to it: the model's issue "
                   "rate for a compute-bound loop")
@pytest.mark.parametrize("facts", ["source", "ptx"])
def test_the_family_added_after_fitting_is_never_advised_slower(facts):
    assert _split(run_rows("h100-repeat", facts), "post-fit")["slower"] == []


def test_from_ptx_the_advice_holds_as_from_source():
    """The trace with nvcc's PTX of the kernels instead of their source
    (occlint.readers.nvidia.ptx): the score half's targets of the source's that hold."""
    t = _split(run_rows("h100", "ptx"), "score")
    source = _split(run_rows("h100"), "score")
    assert t["advised_vs_best"] >= 0.96 and t["slower"] == []
    assert t["inside"] >= source["inside"] and t["spearman"] >= source["spearman"] - 0.01
    assert t["false_warnings"] == []
    assert t["advised_vs_best"] > t["habit_vs_best"] + 0.05
    # the family added after fitting: PTX shows its loop, so a grid of the device's
    # resident capacity is not taken for a persistent design (as the source shows it)
    t = _split(run_rows("h100-repeat", "ptx"), "post-fit")
    assert t["advised_vs_best"] >= 0.94


@pytest.fixture(scope="module")
def trace_only() -> list[dict]:
    return run_rows("h100", None)


def test_from_the_trace_alone_the_fit_half_is_never_slower(trace_only):
    t = _split(trace_only, "fit")
    assert t["slower"] == [] and t["inside"] >= 0.8


def test_from_the_trace_alone_the_score_half_is_never_slower(trace_only):
    t = _split(trace_only, "score")
    assert t["slower"] == [] and t["inside"] >= 0.8


def test_occlint_beats_nsight_computes_estimates_on_the_same_launches(scored):
    _, rows = scored
    t = _split(rows, "score")
    assert t["within_10"] >= 0.75 and t["within_10"] > t["nsight_within_10"] + 0.3
    assert t["spearman"] > t["nsight_spearman"] + 0.3


def test_the_band_is_the_fit_halfs_errors():
    """fastest.BAND: the 5th and 95th percentiles of measured minus predicted saving s, over
    s (1 - s) + BAND_FLOOR, of the advised fixes of the fit halves of seeds 28, 29 and 30
    pooled (benchmarks/gpu/heldout/fit.py), to the third decimal."""
    from benchmarks.gpu.heldout import fit

    runs = [FIXTURES / "traces" / r for r in ("heldout/h100", "heldout-29/h100",
                                               "heldout-30/h100")]
    rows = [r for run in runs for r in score.rows(run, doc=score.occlint_json(
        run / "heldout.pt.trace.json.gz")) if r["split"] == "fit"]
    res = fit.residuals(rows)
    q = statistics.quantiles(res, n=20)
    assert (round(q[0], 3), round(q[-1], 3)) == fastest.BAND


def test_the_band_never_turns_over_for_a_reading_that_predicts_a_loss():
    """A reading that predicts a loss (an atomics reading the trace cannot settle, priced
    beside the one that chose the advice) keeps its low end at or below its gain and its
    high end above: the error's scale is the floor there, not s (1 - s) gone negative."""
    for gain in (-0.5, -0.24, -0.05, 0.0, 0.3, 0.9):
        lo, hi = fastest._range(gain, 0.0)
        assert lo < gain < hi
        assert hi - lo == pytest.approx((fastest.BAND[1] - fastest.BAND[0])
                                        * max(fastest.BAND_FLOOR, gain * (1 - gain)
                                              + fastest.BAND_FLOOR))


def _timed_saving(kernel: str, fix: dict) -> float:
    """The measured saving of moving ``kernel``'s defect to ``fix`` (the sweep's times)."""
    k = next(k for k in score.load(RUNS / "h100" / "heldout.json")["kernels"]
             if k["name"] == kernel)
    loop = kernel.startswith(("grid_stride", "block_reduce"))
    timed = next(c for c in k["configs"] if c["block"] == fix["block"]
                 and (not loop or c["grid"] == fix["grid"]))
    return 1 - score._time(timed) / score._time(k["configs"][0])


@pytest.mark.parametrize(("kernel", "code", "binding"), [
    ("elementwise_11", "LCH107", "block starts"),  # 64-thread blocks at full occupancy
    ("grid_stride_18", "LCH108", "atomics"),  # 42,240 x 1,024 threads, each atomicAdd(sum)
    pytest.param("image_10", "LCH106", "memory", marks=pytest.mark.xfail(  # 4 x 32 blocks:
        strict=True, reason="issue 28: rows of 16 bytes; claimed 46.1-73.6 %, saves 43.9 % "
        "since the band was refitted with the block starts' own overlap (fit half)")),
])
def test_the_models_findings_name_what_no_other_rule_sees(kernel, code, binding):
    """Where the model sees a saving no other rule names, its finding says what binds the
    launch as it is: the block start rate (LCH107), atomics queuing (LCH108), else LCH106;
    each with its fix, whose timed saving lies in the claimed range; one finding a launch."""
    doc = occlint_doc("h100")
    group = next(g for g in doc["launches"] if g["kernel"] == kernel)
    (f,) = [f for f in group["findings"] if f["rule"].startswith("LCH10")]
    assert f["rule"] == code and f["severity"] == "warning"
    assert f["data"]["binding"] == binding
    got = _timed_saving(kernel, f["fix"])
    assert f["saving"]["low"] - 0.015 <= got <= f["saving"]["high"] + 0.015
    assert got >= 0.4


def test_the_model_finds_nothing_where_nothing_saves():
    """A float4 kernel whose best configuration saves 1 % (elementwise_07) gets no finding
    from the model."""
    doc = occlint_doc("h100")
    group = next(g for g in doc["launches"] if g["kernel"] == "elementwise_07")
    assert not any(f["rule"] in ("LCH106", "LCH107", "LCH108") for f in group["findings"])
    k = next(k for k in score.load(RUNS / "h100" / "heldout.json")["kernels"]
             if k["name"] == "elementwise_07")
    best = min(score._time(c) for c in k["configs"])
    assert 1 - best / score._time(k["configs"][0]) < 0.02


# -- the fix as data -------------------------------------------------------------------------
def test_findings_carry_the_fix_in_json_and_sarif(tmp_path):
    trace = RUNS / "h100" / "heldout.pt.trace.json.gz"
    out = tmp_path / "r.sarif"
    run = run_occlint(str(trace), str(score.SOURCE), "--format", "sarif", "-o", str(out),
                      "--isolated", "--exit-zero")
    assert run.code == 0, run.err
    results = json.loads(out.read_text())["runs"][0]["results"]
    fixed = [r for r in results if (r.get("properties") or {}).get("fix")]
    assert fixed
    for r in fixed:
        fix = r["properties"]["fix"]
        assert set(fix) == {"block", "grid", "dynamic_shared"}
        assert all(x >= 1 for x in fix["block"] + fix["grid"])
    doc = occlint_doc("h100")  # the same run as the SARIF above, in JSON
    g = next(g for g in doc["launches"] if g["kernel"] == "elementwise_11")
    assert g["model"]["facts"]["source"] == "source"
    assert re.fullmatch(r"memory|compute|block starts|atomics|block reductions",
                        g["model"]["now"]["binding"])
    assert VECTOR[1] == "float"


def test_a_derived_devices_start_rate_is_called_derived():
    """On a device the characterisation did not run on (an A100: its parameters derived
    from its specifications and the H100's), LCH107 names the start rate derived."""
    group = next(g for g in occlint_doc("h100")["launches"] if g["kernel"] == "elementwise_11")
    assert "measured) of the" in next(f for f in group["findings"]
                                      if f["rule"] == "LCH107")["message"]
    run = run_occlint(str(RUNS / "h100" / "heldout.pt.trace.json.gz"), str(score.SOURCE),
                      "--device", "a100", "--format", "json", "--isolated", "--exit-zero")
    assert run.code == 0, run.err
    a100 = launch_model(shipped_db().get("a100"))
    assert a100 is not None and a100.basis == "derived"
    group = next(g for g in json.loads(run.out)["launches"] if g["kernel"] == "elementwise_11")
    (f,) = [f for f in group["findings"] if f["rule"] == "LCH107"]
    assert f"({a100.block_rate / 1e9:.2f} billion a second, derived)" in f["message"]


H200 = launch_model(shipped_db().get("h200"))


@pytest.mark.parametrize(("kernel", "load", "store"), [
    ("copy_float_1", 4.0, 4.0), ("copy_float2_1", 8.0, 8.0), ("narrow_store", 8.0, 4.0)])
def test_a_grid_stride_loops_partial_warps_cost_its_memory(kernel, load, store):
    """Blocks off the warp in a grid-stride loop, measured on the H200 (characterize.py
    block_alignment: fixtures/traces/heldout-48/h200): 100-thread blocks take 1.11-1.48x
    the time of 96-thread ones at 40 and 80 blocks per SM, 200 1.03-1.10x of 192. The
    model splits each warp's access in 128-byte requests however few lanes it has: its
    excess time is within 0.17 of the measured one in every case (0.06 on average; 0.02-0.04
    where the block is a whole number of warps), where without it it was none."""
    with open(FIXTURES / "traces/heldout-48/h200/block-alignment.characterization.json") as fh:
        rows = json.load(fh)["block_alignment"]
    ms = {(r["block"], r["blocks_per_sm"]): r["ms"] for r in rows if r["kernel"] == kernel}
    facts = Facts("grid-stride", load, store, 0.0, source="test")
    n = rows[0]["elements"]

    def t(block: int, per_sm: int) -> float:
        resident = min(32, 64 // -(-block // 32))  # (few registers: warps and slots bind)
        return predict(H200, facts, Config(block, H200.sms * per_sm, resident), n).total

    for odd, even in ((100, 96), (200, 192), (128, 96), (256, 96)):
        for per_sm in (40, 80):
            measured = ms[odd, per_sm] / ms[even, per_sm] - 1
            predicted = t(odd, per_sm) / t(even, per_sm) - 1
            assert abs(predicted - measured) <= (0.17 if odd % 32 else 0.04), (odd, per_sm)
            if odd % 32:
                assert predicted > 0.04  # none before: a loop's memory was its threads'
