"""occlint validate without a GPU: argument specs, CLI errors, the no-GPU message, and the
harness driven through a fake runtime. tests/test_validate_gpu.py runs it on a real GPU."""

from __future__ import annotations

import math

import pytest

from occlint.validate import spec
from occlint.validate.backend import DeviceInfo, FunctionAttributes
from occlint.validate.harness import ValidateOptions, grid_sweep_points, run
from tests.conftest import REPO

CUBIN = REPO / "fixtures/nvidia/cubin/gamma.sm_90.cubin"


def test_spec_parsing():
    args = spec.parse("u8[805306368]:random, u64:805_306_368, f32:2.2, i32[4]:out, f64[3]:1.5")
    assert [a.dtype for a in args] == ["u8", "u64", "f32", "i32", "f64"]
    assert args[0].is_buffer and args[0].nbytes == 805306368
    assert args[1].scalar_value() == 805306368 and args[2].scalar_value() == pytest.approx(2.2)
    assert args[3].fill == "out" and args[4].fill == "1.5"


@pytest.mark.parametrize("text,needle", [
    ("", "empty"),
    ("f32", "expected TYPE:VALUE"),
    ("q8:1", "unknown type"),
    ("u8:300", "does not fit"),
    ("i32:abc", "not a valid i32"),
    ("f32[0]:random", "out of range"),
    ("f32[10]:sometimes", "fill 'sometimes'"),
    ("f16:1.0", "not supported"),
    ("u8[4]:random,, f32:1", "argument 2"),
])
def test_spec_errors(text, needle):
    with pytest.raises(spec.SpecError) as info:
        spec.parse(text)
    assert needle in str(info.value)


@pytest.mark.parametrize("args,needle", [
    (["--kernel", "gamma_gridstride", "--args", "u8[16]:random"], "exactly one of"),
    (["--kernel", "gamma_gridstride", "--args", "u8[16]:maybe", "--grid-stride"], "--args"),
    (["--kernel", "nope", "--args", "u8:1", "--grid-stride"], "no kernel 'nope'"),
])
def test_cli_errors_are_one_line(occlint, args, needle):
    run_ = occlint("validate", str(CUBIN), *args)
    assert run_.code == 2 and run_.err.count("\n") == 1 and needle in run_.err, run_.err


def test_no_gpu_runtime_message(occlint):
    try:
        from occlint.validate.cuda import CudaBackend

        CudaBackend()
        pytest.skip("this machine has a CUDA GPU")
    except Exception:
        pass
    run_ = occlint("validate", str(CUBIN), "--kernel", "gamma_correction_gridstride",
                   "--args", "u8[1024]:random, u64:1024, f32:2.2", "--grid-stride")
    assert run_.code == 2
    assert run_.err.startswith("occlint: error: no GPU runtime:") and "Traceback" not in run_.err


class FakeBackend:
    """A pretend H100: occupancy from a fixed table, times from a simple model."""

    vendor = "nvidia"

    def __init__(self):
        self.launches: list[tuple[int, int]] = []
        self.restores = 0
        self.memory: dict[int, int] = {}

    def device(self):
        return DeviceInfo("nvidia", "NVIDIA H100 80GB HBM3", "sm_90", 132, "CUDA driver 13.0",
                          {"max_threads_per_multiprocessor": 2048})

    def load(self, image, kernel):
        assert image == CUBIN.read_bytes()
        return kernel

    def attributes(self, func):
        return FunctionAttributes(registers=self.registers, shared_bytes=0, local_bytes=0,
                                  max_threads=1024)

    def occupancy(self, func, block, dynamic_shared):
        return min(32, 2048 // (-(-block // 32) * 32))

    def potential_block(self, func, dynamic_shared):
        return 264, 1024

    def alloc(self, nbytes):
        ptr = 4096 * (len(self.memory) + 1)
        self.memory[ptr] = nbytes
        return ptr

    def free(self, ptr):
        del self.memory[ptr]

    def upload(self, ptr, data, nbytes):
        assert self.memory[ptr] == nbytes

    def copy(self, dst, src, nbytes):
        self.restores += 1

    def set_max_dynamic_shared(self, func, nbytes):
        pass

    def time_launch(self, func, grid, block, dynamic_shared, params):
        self.launches.append((block, grid))
        waves = math.ceil(grid / (132 * 8))
        return 1.0 + 10.0 / grid + 0.001 * waves + (block % 128) * 1e-4

    def synchronize(self):
        pass

    def close(self):
        pass


@pytest.fixture
def fake():
    backend = FakeBackend()
    from occlint.validate.harness import find_kernel

    kernel = find_kernel(CUBIN, "gamma_correction_gridstride")
    backend.registers = kernel.resources.registers
    return backend


def test_harness_with_fake_runtime(fake):
    args = spec.parse("u8[1024]:random, u64:1024, f32:2.2")
    opts = ValidateOptions(binary=CUBIN, kernel="gamma_correction_gridstride", args=args,
                           grid_stride=True, repeats=3, warmup=1, max_grid_points=40)
    result = run(opts, backend=fake)
    assert result["occupancy_agrees"] and result["attributes_agree"]
    assert len(result["occupancy"]) == 32
    # every launch was preceded by a restore of the input buffer (+1: the pristine copy)
    assert fake.restores == len(fake.launches) + 1
    assert not fake.memory  # buffers freed
    grid = result["grid_sweep"]["points"]
    assert {p["grid"] for p in grid} >= {132, 133, 264, 265}
    best = result["best"]
    assert best["ms"] == min(m["ms"] for m in result["block_sweep"] + grid
                             + [result["recommended"]] + list(result["baselines"].values()))
    assert 0 < result["recommended"]["ratio"] <= 1
    assert set(result["baselines"]) == {"fixed_128", "fixed_256", "max_potential"}
    # baselines of a grid-stride kernel launch one full wave (driver blocks/SM x SMs)
    assert result["baselines"]["fixed_256"]["grid"] == 8 * 132
    assert result["recommended"]["grid"] % 132 == 0


def test_harness_detects_a_disagreeing_driver(fake):
    fake.occupancy = lambda func, block, dyn: 1  # a driver that says otherwise
    opts = ValidateOptions(binary=CUBIN, kernel="gamma_correction_per_element",
                           args=spec.parse("u8[4096]:random, u64:4096, f32:2.2"),
                           problem_size=4096, repeats=1, warmup=0, blocks=[128, 256])
    result = run(opts, backend=fake)
    assert not result["occupancy_agrees"]
    assert result["block_sweep"] and {m["block"] for m in result["block_sweep"]} <= {128, 256}
    assert all(m["grid"] == math.ceil(4096 / m["block"]) for m in result["block_sweep"])


def test_grid_sweep_points_show_multiples_of_the_unit_count():
    points = grid_sweep_points(132, 10560, 120)
    assert 132 in points and 133 in points and 2112 in points and 10560 in points
    assert max(points) >= 4 * 10560 and len(points) <= 121


def test_short_kernels_get_more_repeats_and_a_final_interleaved_round(fake):
    # 0.02 ms launches: 25 ms of kernel time needs 1,250 launches, capped at 200
    fake.time_launch = lambda func, grid, block, dyn, params: (
        fake.launches.append((block, grid)) or 0.02 + (block % 256) * 1e-5)
    opts = ValidateOptions(binary=CUBIN, kernel="gamma_correction_per_element",
                           args=spec.parse("u8[65536]:random, u64:65536, f32:2.2"),
                           problem_size=65536, repeats=5, warmup=0, blocks=[64, 128, 256])
    result = run(opts, backend=fake)
    assert {m["samples"] for m in result["block_sweep"]} == {200}
    final = {(m["block"], m["grid"]) for m in result["final"]}
    rec = result["recommended"]
    assert (rec["block"], rec["grid"]) in final
    assert {(b["block"], b["grid"]) for b in result["baselines"].values()} <= final
    # the last len(final) x rounds launches are the interleaved final comparison: every
    # round holds each configuration once
    rounds = result["final"][0]["samples"]
    tail = fake.launches[-len(final) * rounds:]
    for i in range(rounds):
        assert set(tail[i * len(final):(i + 1) * len(final)]) == final
    assert result["best"]["ms"] == min(m["ms"] for m in result["final"])
    assert rec["ratio"] == round(result["best"]["ms"] / rec["ms"], 4)
    # the recommendation used the problem size: 65,536 / 256 = 256 blocks >= 132 SMs
    assert rec["block"] == 256 and rec["grid"] == 256


def test_grid_analysis_finds_jumps_and_plateau():
    from occlint.validate.harness import grid_analysis

    times = {132: 12.5, 133: 12.4, 264: 6.4, 265: 6.5, 528: 3.65, 529: 3.96, 1056: 3.2,
             1057: 3.6, 5148: 2.71, 6336: 2.70, 10560: 2.696, 10561: 2.71, 19668: 2.72,
             42240: 2.77}
    points = [{"grid": g, "ms": ms} for g, ms in times.items()]
    out = grid_analysis(points, 132, 10560)
    jumps = {j["grid"]: j["increase"] for j in out["jumps"]}
    assert jumps[528] == round(3.96 / 3.65 - 1, 4) and jumps[132] < 0
    assert out["fastest_ms"] == 2.696
    # 42,240 is 2.7 % above the fastest: inside 3 %, so the plateau starts at 5,148
    assert out["saturation_grid"] == 5148 and out["recommended_on_plateau"]
    assert not grid_analysis(points, 132, 1056)["recommended_on_plateau"]


def test_html_page_is_a_view_of_the_result(fake):
    import re
    from html.parser import HTMLParser

    from occlint.validate.page import page

    opts = ValidateOptions(binary=CUBIN, kernel="gamma_correction_gridstride",
                           args=spec.parse("u8[1024]:random, u64:1024, f32:2.2"),
                           grid_stride=True, repeats=2, warmup=0, max_grid_points=30,
                           confirm_rounds=2)
    result = run(opts, backend=fake)
    result["demangled"] = "<script>alert(1)</script>"  # names from binaries are untrusted
    text = page(result)
    HTMLParser().feed(text)
    assert "<script>" not in text and "&lt;script&gt;" in text
    assert text.count("<figure") == 2  # time vs block, time vs grid
    assert f"{100 * result['recommended']['ratio']:.1f}%" in text
    for j in result["grid_sweep"]["jumps"]:
        assert f"<td class=\"num\">{j['grid']:,}</td>" in text
    assert not re.search(r"(src|href)=\"(https?:)?//", text)  # self-contained


def test_docs_validation_results_are_the_committed_run():
    """docs/validation.md's results section is summarize.py's view of the committed JSON."""

    from benchmarks.gpu.summarize import load, summary

    runs = REPO / "docs" / "validation"
    final = load(runs / "h200-2026-11-21-final.json")
    repeat = load(runs / "h200-2026-11-21-final-repeat.json.gz")
    page = (REPO / "docs" / "validation.md").read_text()
    assert summary(final, repeat) in page
    assert "| **no** |" not in summary(final, repeat)  # every target met


def test_static_only_launches_nothing(fake, occlint):
    from occlint.validate.page import page
    from occlint.validate.report import text

    opts = ValidateOptions(binary=CUBIN, kernel="gamma_correction_gridstride", args=[],
                           static_only=True)
    result = run(opts, backend=fake)
    assert not fake.launches and not fake.memory
    assert result["mode"] == "static only" and result["occupancy_agrees"]
    assert "best" not in result and "static = driver for 32/32" in text(result)
    assert "<figure" not in page(result) and "Occupancy: static vs driver" in page(result)
    # the CLI needs no --args then (and without a GPU says so)
    run_ = occlint("validate", str(CUBIN), "--kernel", "gamma_correction_gridstride",
                   "--static-only")
    assert run_.code in (0, 2) and "--args" not in run_.err
    missing = occlint("validate", str(CUBIN), "--kernel", "gamma_correction_gridstride",
                      "--grid-stride")
    assert missing.code == 2 and "--args is required" in missing.err


def test_a_findings_fix_is_timed_against_the_launch_as_it_is(fake):
    """--as-is / --fix: the two configurations, each measured then both again in
    interleaved rounds; the saving is the fake runtime's own times' (1 + 10/grid ms)."""
    args = spec.parse("u8[1024]:random, u64:1024, f32:2.2")
    opts = ValidateOptions(binary=CUBIN, kernel="gamma_correction_gridstride", args=args,
                           repeats=3, warmup=1, confirm_rounds=5,
                           compare=((256, 132), (256, 1056)))
    result = run(opts, backend=fake)
    assert result["mode"] == "fix"
    assert set(fake.launches) == {(256, 132), (256, 1056)}  # nothing else is swept
    now = 1.0 + 10.0 / 132 + 0.001 * 1 + (256 % 128) * 1e-4
    fix = 1.0 + 10.0 / 1056 + 0.001 * 1
    assert result["saving"] == pytest.approx(1 - fix / now, abs=1e-4)
    assert result["as_is"]["samples"] >= 5
    from occlint.validate.report import text

    assert "saves" in text(result)


@pytest.mark.parametrize("extra, needle", [
    (["--as-is", "256:132"], "give both --as-is"),
    (["--as-is", "256x132", "--fix", "256:1056"], "expected BLOCK:GRID"),
])
def test_fix_options_are_checked(occlint, extra, needle):
    r = occlint("validate", str(CUBIN), "--kernel", "gamma_correction_gridstride",
                "--args", "u8[1024]:random, u64:1024, f32:2.2", *extra)
    assert r.code == 2 and needle in r.err
