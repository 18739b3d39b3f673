"""NVIDIA rules on compiled cubins: trigger and no-trigger cases.

Expected figures come from ptxas's own report (tests/truth) and cuda_occupancy.h
arithmetic done here by hand, not from occlint's output.
"""

from __future__ import annotations

import pytest

from occlint.pipeline.run import Options, execute
from tests.conftest import REPO
from tests.test_rules import codes, finding
from tests.truth.nvidia_reports import parse_ptxas

CUBIN = REPO / "fixtures/nvidia/cubin"
CONTAINERS = REPO / "fixtures/nvidia/containers"

pytest.importorskip("occlint.readers.nvidia")


def run(*paths, **kw):
    return execute(Options(paths=[str(p) for p in paths], isolated=True, **kw)).doc


def ptxas_registers(stem: str, kernel: str) -> int:
    report = parse_ptxas((CUBIN / f"{stem}.ptxas.txt").read_text())
    return next(f["registers"] for f in report if f["name"] == kernel and f["is_entry"])


def test_occ105_registers_limited():
    regs = ptxas_registers("regheavy.sm_90", "_Z19regheavy_accumulatePKfPfi")
    assert regs > 128
    doc = run(CUBIN / "regheavy.sm_90.cubin", devices=["h100"], block=256)
    f = finding(doc, "OCC105")
    # per warp: regs x 32 rounded to 256; 16384 registers per sub-partition
    per_warp = -(-regs * 32 // 256) * 256
    warps_per_sm = (16384 // per_warp) * 4
    assert f["data"]["current"] == regs
    assert f["message"].startswith(f"occupancy {warps_per_sm // 8 * 8}/64 warps per SM")
    # two 8-warp blocks need 16 warps: 4 per sub-partition -> <= 4096 registers per warp
    assert f["data"]["target"] == 128 and f["data"]["next"] == 2
    assert "-maxrregcount=128" in f["advice"]
    assert "OCC105" not in codes(run(CUBIN / "smem_tiles.sm_90.cubin", devices=["h100"],
                                     block=256))


def test_occ106_shared_memory_limited():
    # 48 KiB static tile on an RTX 3090 (CC 8.6, 100 KiB per SM, 1 KiB reserved per block):
    # (48 KiB + 1 KiB) x 2 = 98 KiB -> 2 blocks of 8 warps = 16 of 48 warps (33%)
    doc = run(CUBIN / "smem_tiles.sm_86.cubin", devices=["rtx3090"], block=256)
    kernel = "_Z13smem48k_tile3PKfS0_S0_Pfi"
    f = finding(doc, "OCC106", kernel)
    assert f["message"].startswith("occupancy 16/48 warps per SM")
    assert f["data"]["current"] == 49152
    # 3 blocks need <= 102400 / 3 = 34133 bytes each, minus the 1 KiB reserve, in
    # 128-byte units: 32896 bytes of shared memory
    assert f["data"]["target"] == (102400 // 3 // 128) * 128 - 1024
    assert "OCC106" not in codes(doc, "_Z14smem16k_matmulPKfS0_Pfiii")


def test_lch002_too_many_registers_for_the_block():
    regs = ptxas_registers("regheavy.sm_90", "_Z19regheavy_accumulatePKfPfi")
    doc = run(CUBIN / "regheavy.sm_90.cubin", devices=["h100"], block=1024)
    f = finding(doc, "LCH002")
    assert f"{regs} registers x 1024 threads" in f["message"]
    assert "too many resources" in f["message"]
    ok = run(CUBIN / "regheavy.sm_90.cubin", devices=["h100"], block=256)
    assert "LCH002" not in codes(ok)


def test_lch002_launch_bound():
    doc = run(CUBIN / "launch_bounds.sm_80.cubin", devices=["a100"], block=512)
    assert "LCH002" in codes(doc, "_Z8lb_256_4PKfPfi")
    assert "LCH002" not in codes(doc, "_Z7lb_1024PKfPfi")


def test_spl_rules_on_cubins():
    doc = run(CUBIN / "spill.sm_86.cubin")
    f = finding(doc, "SPL101")
    ptxas = parse_ptxas((CUBIN / "spill.sm_86.ptxas.txt").read_text())
    assert any(p["spill_stores"] for p in ptxas)  # ptxas reports the spills too
    assert f["data"]["spill_instructions"] > 0
    stack = run(CUBIN / "stack.sm_86.cubin")
    assert "SPL102" in codes(stack, "_Z11local_arrayPKfPKiPfi")
    assert "SPL101" not in codes(stack, "_Z11local_arrayPKfPKiPfi")


def test_bin102_ptx_only():
    doc = run(CONTAINERS / "small.ptx-only.fatbin")
    f = finding(doc, "BIN102")
    assert f["severity"] == "info" and f["arch"] == "compute_90" and f["data"]["kernels"]
    assert "BIN102" not in codes(run(CONTAINERS / "small.none.fatbin"))


def test_dev101_sm90a_cubin_on_ampere():
    doc = run(CUBIN / "gamma.sm_90a.cubin", devices=["a100"])
    assert "DEV101" in codes(doc)
    assert "sm_90a" in finding(doc, "DEV101")["message"]
    assert "DEV101" not in codes(run(CUBIN / "gamma.sm_90a.cubin", devices=["h100"]))
    # sm_80 SASS runs on an sm_86 GPU (same major, higher minor) but not on sm_90
    assert "DEV101" not in codes(run(CUBIN / "gamma.sm_80.cubin", devices=["rtx3090"]))
    assert "DEV101" in codes(run(CUBIN / "gamma.sm_80.cubin", devices=["h100"]))


def test_fatbin_device_picks_the_cubin_the_driver_loads():
    doc = run(CONTAINERS / "small.none.fatbin", devices=["rtx3090"])
    assert {k["arch"] for k in doc["kernels"]} == {"sm_80"}  # sm_80 SASS for CC 8.6


def test_grid_rules_use_sm_count():
    doc = run(CUBIN / "gamma.sm_90.cubin", devices=["h100"], block=256, grid=265)
    tail = [f for k in doc["kernels"] for f in k["findings"] if f["rule"] == "LCH101"]
    assert tail and tail[0]["data"]["nearest_balanced"] == [264, 396]


def test_a_given_launchs_advice_carries_its_fix():
    """``--block 100 --grid 1000`` on a cubin (no source: its loop unknown): LCH001's fix is
    the whole-warp block above 100 (4 warps: 128), the grid left to the caller (one element
    per thread would shrink it); LCH103's is its grid, 10x the H100's 132 x 64 warp slots in
    blocks of 4 warps, the block as given. With --problem-size the grid follows the new
    block: ceil(1,000,000 / 128). LCH101's advice is conditional (a grid-stride loop, or a
    block of one element per thread): no fix."""
    doc = run(CUBIN / "gamma.sm_90.cubin", devices=["h100"], block=100, grid=1000)
    kernel = "_Z28gamma_correction_per_elementPhmf"
    assert finding(doc, "LCH001", kernel)["fix"] == {
        "block": [128, 1, 1], "grid": None, "dynamic_shared": 0}
    assert finding(doc, "LCH103", kernel)["fix"] == {
        "block": [100, 1, 1], "grid": [10 * 132 * 64 // 4, 1, 1], "dynamic_shared": 0}
    assert "fix" not in finding(doc, "LCH101", kernel)
    doc = run(CUBIN / "gamma.sm_90.cubin", devices=["h100"], block=100,
              problem_size=1_000_000)
    assert finding(doc, "LCH001", kernel)["fix"]["grid"] == [-(-1_000_000 // 128), 1, 1]
