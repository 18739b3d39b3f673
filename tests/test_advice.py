"""The block-size recommendation policy (calibrated on an H200, docs/validation.md).

Expected values are derived by hand from the architectures' published limits (H100 / sm_90:
64 warps, 32 blocks, 228 KiB shared memory and 64 Ki registers per SM, 1 KiB reserved per
block, 132 SMs) and the compiler's own resource reports next to each fixture.
"""

from __future__ import annotations

from occlint.judgement.advice import AdviceSettings
from occlint.pipeline.run import Options, execute
from tests.conftest import FIXTURES

SMEM = FIXTURES / "nvidia" / "cubin" / "smem_tiles.sm_90.cubin"
GAMMA = FIXTURES / "nvidia" / "cubin" / "gamma.sm_90.cubin"
SUITE_906 = FIXTURES / "amd" / "co" / "suite.gfx906.hsaco"


def _advice(path, device, **options) -> dict[str, dict]:
    doc = execute(Options(paths=[str(path)], devices=[device], isolated=True,
                          **options)).doc
    return {k["name"]: k["advice"] for k in doc["kernels"]}


def test_default_is_largest_best_occupancy_block_up_to_256():
    # gamma: 18 registers (ptxas -v), no shared memory: 64 warps/SM at 64 (32 blocks x 2),
    # 128, 256, 512, 1024; 96 gives 21 x 3 = 63. Largest of these up to 256: 256.
    adv = _advice(GAMMA, "h100")["_Z27gamma_correction_gridstridePhmf"]
    assert adv["block_sizes_at_best"] == [64, 128, 256, 512, 1024]
    assert adv["recommended_block"] == 256
    assert "up to 256" in adv["recommended_reason"]


def test_preferred_block_setting(tmp_path):
    (tmp_path / "occlint.toml").write_text("preferred-block = 128\n")
    doc = execute(Options(paths=[str(GAMMA)], devices=["h100"],
                          config=str(tmp_path / "occlint.toml"))).doc
    assert {k["advice"]["recommended_block"] for k in doc["kernels"]} == {128}


def test_shared_memory_limited_kernel_gets_the_largest_block():
    # smem48k_tile3: 48 KiB static (ptxas -v) + 1 KiB reserved = 50,176 B per block;
    # 233,472 / 50,176 = 4 blocks/SM, so 64 warps needs >= 16 warps per block: 512 or 1024.
    # At 256 shared memory is the limiter (4 x 8 = 32 warps): take the largest, 1024.
    adv = _advice(SMEM, "h100")["_Z13smem48k_tile3PKfS0_S0_Pfi"]
    assert adv["block_sizes_at_best"] == [512, 1024]
    assert adv["recommended_block"] == 1024
    assert "shared memory" in adv["recommended_reason"]


def test_shared_memory_that_does_not_limit_keeps_the_default():
    # smem16k_matmul: 16 KiB + 1 KiB = 17,408 B -> 13 blocks/SM by shared memory; 32
    # registers x 256 threads = 8 Ki -> 8 blocks by registers; at 256 threads the warps (8 x
    # 8 = 64) limit, not shared memory. 128 threads: 13 blocks x 4 warps = 52 < 64.
    adv = _advice(SMEM, "h100")["_Z14smem16k_matmulPKfS0_Pfiii"]
    assert adv["block_sizes_at_best"] == [256, 512, 1024]
    assert adv["recommended_block"] == 256


def test_small_problem_gets_blocks_for_every_sm():
    # 32,768 elements at 256 threads = 128 blocks < 132 SMs; at 128 threads 256 blocks.
    adv = _advice(GAMMA, "h100", problem_size=32768)["_Z27gamma_correction_gridstridePhmf"]
    assert adv["recommended_block"] == 128
    assert "132 SMs" in adv["recommended_reason"]
    # a problem large enough for 256-thread blocks keeps them: 33,792 = 132 x 256
    big = _advice(GAMMA, "h100", problem_size=132 * 256)["_Z27gamma_correction_gridstridePhmf"]
    assert big["recommended_block"] == 256


def test_one_wave_problem_gets_the_most_even_spread():
    # H100 holds 8 x 132 = 1,056 blocks of 256 threads: these problems fit in one wave.
    gs = "_Z27gamma_correction_gridstridePhmf"
    # 512 x 512 = 262,144 = 2^18 elements on 132 = 4 x 33 SMs: every power-of-two block
    # leaves the busiest SM 1/32 over the mean (e.g. 256 blocks of 1024: 2 x 132 / 256),
    # a tie, so the largest block, 1024.
    adv = _advice(GAMMA, "h100", problem_size=512 * 512)[gs]
    assert adv["recommended_block"] == 1024
    assert "one device wave" in adv["recommended_reason"]
    # 200,000 elements: 64 -> 3,125 blocks, busiest SM 24 (3,168 / 3,125 = 1.0138);
    # 128 -> 1,563, 12 (1.0134); 256 -> 782, 6 (1.0128); 512 -> 391, 3 (1.0128);
    # 1024 -> 196, 2 (1.347). 256 and 512 tie: 512.
    assert _advice(GAMMA, "h100", problem_size=200_000)[gs]["recommended_block"] == 512
    # many waves (2^24 elements = 65,536 blocks of 256): the default, 256
    assert _advice(GAMMA, "h100", problem_size=1 << 24)[gs]["recommended_block"] == 256


def test_amd_lds_limited_kernel_gets_the_largest_block():
    # gfx906 (MI50): 64 KiB LDS per CU; 40 KiB static LDS (clang's remark) -> one workgroup
    # per CU whatever its size, so every block up to the kernel's 256 has the same
    # occupancy; LDS is the limiter and the largest block (256) is recommended for it.
    adv = _advice(SUITE_906, "mi50")
    assert adv["lds_static_40k"]["recommended_block"] == 256
    assert "shared memory" in adv["lds_static_40k"]["recommended_reason"]
    # launch_bounds_128_min2: max flat workgroup size 128 -> nothing above 128
    assert adv["launch_bounds_128_min2"]["recommended_block"] == 128
    # no LDS, 1024-thread bound: the default 256
    assert adv["launch_bounds_none"]["recommended_block"] == 256


def test_settings_default_matches_documentation():
    assert AdviceSettings().preferred_block == 256
    assert AdviceSettings().oversubscription == 10.0


def test_advice_grid_is_given_at_the_recommended_block():
    # W7800: 35 WGPs x 4 SIMDs x 16 slots = 2,240 waves; x10 = 22,400. Without --block the
    # report's block is the kernel's max flat workgroup size, 1024 (32 wave32 waves): 700
    # blocks; the advice says 256 threads (8 waves): 2,800 blocks, and says so.
    gamma = FIXTURES / "amd" / "co" / "gamma.gfx1100.hsaco"
    adv = _advice(gamma, "w7800")["_Z16gamma_correctionPhmf"]
    over = adv["oversubscription"]
    assert adv["recommended_block"] == 256
    assert over["block"] == 1024 and over["recommended_grid"] == 700
    assert over["recommended_block_grid"] == 2800
