"""Every rule: a case that triggers it and one that does not, on compiled fixtures.

Expected numbers in messages come from the fixtures' compiler reports or from independent
arithmetic on the device's published unit counts, never from occlint's own output.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from occlint.config import load_config
from occlint.pipeline.run import Options, execute
from occlint.rules.registry import all_rules
from tests.conftest import REPO

CO = REPO / "fixtures/amd/co"
GAMMA_1100 = CO / "gamma.gfx1100.hsaco"


def run(*paths, **kw):
    opts = Options(paths=[str(p) for p in paths], isolated=True, **kw)
    return execute(opts).doc


def codes(doc, kernel: str | None = None) -> list[str]:
    out = [f["rule"] for k in doc["kernels"] if kernel in (None, k["name"])
           for f in k["findings"]]
    if kernel is None:
        out += [f["rule"] for f in doc["findings"]]
    return out


def finding(doc, code: str, kernel: str | None = None) -> dict:
    for k in doc["kernels"]:
        if kernel in (None, k["name"]):
            for f in k["findings"]:
                if f["rule"] == code:
                    return f
    for f in doc["findings"]:
        if f["rule"] == code:
            return f
    raise AssertionError(f"{code} not found")


TESTED: set[str] = set()


def covers(*rule_codes):
    TESTED.update(rule_codes)
    return lambda f: f


# -- launch configuration -----------------------------------------------------------------

@covers("LCH001")
def test_lch001_block_not_multiple_of_wave():
    doc = run(GAMMA_1100, devices=["w7800"], block=100)
    f = finding(doc, "LCH001")
    # wave32: 100 threads = 4 waves, the last with 4 lanes: 28 idle
    assert "28 idle" in f["message"] and "96 or 128" in f["advice"]
    assert "LCH001" not in codes(run(GAMMA_1100, devices=["w7800"], block=96))
    wave64 = run(CO / "gamma.gfx906.hsaco", devices=["mi50"], block=96)
    assert "32 idle" in finding(wave64, "LCH001")["message"]  # 96 = 1.5 wave64


@covers("LCH002")
def test_lch002_block_exceeds_launch_bound():
    doc = run(CO / "suite.gfx1100.hsaco", devices=["w7800"], block=512)
    assert "LCH002" in codes(doc, "launch_bounds_256")
    assert "256" in finding(doc, "LCH002", "launch_bounds_256")["message"]
    assert "LCH002" not in codes(doc, "launch_bounds_1024")
    ok = run(CO / "suite.gfx1100.hsaco", devices=["w7800"], block=256)
    assert "LCH002" not in codes(ok, "launch_bounds_256")
    assert finding(doc, "LCH002", "launch_bounds_256")["severity"] == "error"


@covers("LCH002")
def test_lch002_required_workgroup_size():
    doc = run(CO / "ocl_kernels.gfx906.hsaco", block=128)
    names = [k["name"] for k in doc["kernels"]
             if k["resources"]["reqd_workgroup_size"] == [64, 1, 1]]
    assert names and all("LCH002" in codes(doc, n) for n in names)
    ok = run(CO / "ocl_kernels.gfx906.hsaco", block=64)
    assert all("LCH002" not in codes(ok, n) for n in names)


@covers("LCH003")
def test_lch003_block_below_best_occupancy():
    # 16 KiB LDS on gfx906: 4 workgroups per CU. One-wave blocks give 4 waves per CU
    # (1 per SIMD); four-wave blocks give 16 (4 per SIMD, the compiler's figure).
    doc = run(CO / "suite.gfx906.hsaco", devices=["mi50"], block=64)
    f = finding(doc, "LCH003", "lds_static_16k")
    assert f["data"]["best"] == 0.4 and f["data"]["occupancy"] == 0.1
    ok = run(CO / "suite.gfx906.hsaco", devices=["mi50"], block=256)
    assert "LCH003" not in codes(ok, "lds_static_16k")
    # the kernel's own block size (no --block) is never second-guessed
    assert "LCH003" not in codes(run(CO / "suite.gfx906.hsaco", devices=["mi50"]))


@covers("LCH101", "LCH103")
def test_grid_rules_issue_example():
    doc = run(GAMMA_1100, devices=["w7800"], block=256, grid=1000)
    tail = finding(doc, "LCH101")
    # 1000 = 28 x 35 + 20: 20 WGPs run 29 blocks, 15 run 28; balanced: 980 and 1015
    assert tail["data"]["nearest_balanced"] == [980, 1015]
    assert "20 WGPs run 29 blocks" in tail["message"]
    over = finding(doc, "LCH103")
    # W7800: 35 WGPs x 4 SIMDs x 16 wave slots = 2240; x10 = 22400 waves;
    # 256-thread wave32 blocks = 8 waves: 2800 blocks = 80 per WGP
    assert over["data"]["target_waves"] == 22400
    assert over["data"]["recommended_grid"] == 2800
    assert execute(Options(paths=[str(GAMMA_1100)], devices=["w7800"], block=256, grid=1000,
                           isolated=True)).exit_code == 1
    good = execute(Options(paths=[str(GAMMA_1100)], devices=["w7800"], block=256, grid=2800,
                           isolated=True))
    assert codes(good.doc) == [] and good.exit_code == 0


@covers("LCH102")
def test_lch102_grid_smaller_than_device():
    doc = run(GAMMA_1100, devices=["w7800"], block=256, grid=20)
    assert "15 of 35 WGPs" in finding(doc, "LCH102")["message"]
    assert "LCH102" not in codes(run(GAMMA_1100, devices=["w7800"], block=256, grid=35))
    # MI300X: CUs, not WGPs
    mi = run(CO / "gamma.gfx942.hsaco", devices=["mi300x"], block=256, grid=300)
    assert "4 of 304 CUs" in finding(mi, "LCH102")["message"]


@covers("LCH103")
def test_oversubscription_factor_is_configurable():
    doc = run(GAMMA_1100, devices=["w7800"], block=256, grid=980, oversubscription=3.5)
    # 3.5 x 2240 = 7840 waves = 980 blocks of 8 waves: target met
    assert "LCH103" not in codes(doc)


@covers("LCH104")
def test_lch104_problem_size():
    n = 805_306_368  # the 16384 x 16384 RGB image of the source document
    doc = run(GAMMA_1100, devices=["w7800"], block=256, problem_size=n)
    f = finding(doc, "LCH104")
    assert f["data"]["grid"] == n // 256 and f["severity"] == "info"
    assert "LCH104" not in codes(run(GAMMA_1100, devices=["w7800"], block=256))


# -- occupancy limiters -------------------------------------------------------------------

@covers("OCC101")
def test_occ101_vgpr_limited():
    # 166 VGPRs on gfx1102 (1024 per SIMD, granule 16): 1024 / 176 = 5 waves (31%)
    doc = run(CO / "suite.gfx1102.hsaco")
    f = finding(doc, "OCC101", "vgpr_limited_160")
    assert f["data"]["current"] == 166
    # next wave: 6 waves need <= 1024/6 = 170 -> 160 VGPRs (granule 16)
    assert f["data"]["target"] == 160 and f["data"]["next"] == 6
    assert "amdgpu_waves_per_eu(6)" in f["advice"]
    assert "OCC101" not in codes(doc, "vgpr_limited_40")


@covers("OCC102")
def test_occ102_agpr_limited_gfx908():
    # gfx908: separate AGPR file; 135 VGPRs and 128 AGPRs -> 256/136 = 1 wave
    doc = run(CO / "suite.gfx908.hsaco")
    assert "OCC102" in codes(doc, "mfma_agpr_128") or "OCC101" in codes(doc, "mfma_agpr_128")
    limiters = next(k for k in doc["kernels"] if k["name"] == "mfma_agpr_64")
    # 71 VGPRs vs 64 AGPRs: the architectural file binds (256/72 = 3)
    assert limiters["occupancy"]["limiters"] == ["vgpr"]
    agpr_doc = run(CO / "suite.gfx90a.hsaco")
    k = next(k for k in agpr_doc["kernels"] if k["name"] == "mfma_agpr_128")
    assert "agpr" in k["occupancy"]["limiters"]  # unified file: VGPRs and AGPRs together
    assert "OCC102" in codes(agpr_doc, "mfma_agpr_128")
    assert "OCC102" not in codes(agpr_doc, "vgpr_limited_40")


@covers("OCC103")
def test_occ103_sgpr_limited():
    # 92 SGPRs on gfx906: LLVM's table gives 8 waves (> 88); 80% is above the default
    # threshold, so ask for findings below 90%.
    doc = run(CO / "suite.gfx906.hsaco", occupancy_threshold=0.9)
    f = finding(doc, "OCC103", "sgpr_limited_76")
    assert f["data"]["target"] == 88 and f["data"]["next"] == 9
    assert "OCC103" not in codes(run(CO / "suite.gfx906.hsaco"), "sgpr_limited_76")
    assert "OCC103" not in codes(run(CO / "suite.gfx1102.hsaco", occupancy_threshold=0.99))


@covers("OCC104")
def test_occ104_lds_limited():
    # 40 KiB of LDS on a 64 KiB gfx906 CU: one 256-thread workgroup = 1 wave per SIMD
    doc = run(CO / "suite.gfx906.hsaco")
    f = finding(doc, "OCC104", "lds_static_40k")
    assert f["data"]["current"] == 40960 and f["data"]["target"] == 32768
    assert "OCC104" not in codes(doc, "lds_static_16k_default_wg")


@covers("OCC107")
def test_occ107_block_slots_limited():
    # gfx906, 128-thread blocks of 2 waves: 16 barrier slots x 2 waves = 32 of 40 slots
    doc = run(GAMMA_1100.parent / "gamma.gfx906.hsaco", block=128, occupancy_threshold=0.9)
    f = finding(doc, "OCC107")
    assert "barriers" in f["message"]
    assert "OCC107" not in codes(run(CO / "gamma.gfx906.hsaco", block=256,
                                     occupancy_threshold=0.9))


# -- resources ----------------------------------------------------------------------------

@covers("SPL101")
def test_spl101_spills():
    doc = run(CO / "suite.gfx906.hsaco")
    f = finding(doc, "SPL101", "sgpr_limited_96")
    assert f["data"]["sgpr_spill"] == 48  # compiler remark: SGPRs Spill 48
    assert "SPL101" not in codes(doc, "sgpr_limited_48")


@covers("SPL102")
def test_spl102_scratch():
    doc = run(CO / "suite.gfx906.hsaco")
    assert finding(doc, "SPL102", "scratch_private_array")["data"]["scratch_bytes"] == 2064
    assert "SPL102" not in codes(doc, "vgpr_limited_40")
    assert "SPL102" not in codes(doc, "sgpr_limited_96")  # spills: SPL101 instead


@covers("SPL103")
def test_spl103_dynamic_stack():
    doc = run(CO / "suite.gfx906.hsaco")
    assert "SPL103" in codes(doc, "dynamic_stack_recursion")
    assert "SPL103" not in codes(doc, "scratch_private_array")


@covers("DYN101")
def test_dyn101_dynamic_lds():
    doc = run(CO / "suite.gfx1100.hsaco")
    assert "DYN101" in codes(doc, "dynamic_lds_only")
    assert "DYN101" in codes(doc, "dynamic_plus_static_lds_8k")
    assert "DYN101" not in codes(doc, "lds_static_16k")
    given = run(CO / "suite.gfx1100.hsaco", dynamic_lds=4096)
    assert "DYN101" not in codes(given, "dynamic_lds_only")
    lds = next(k for k in given["kernels"] if k["name"] == "dynamic_plus_static_lds_8k")
    assert lds["occupancy"]["dynamic_shared_bytes"] == 4096


# -- device and target --------------------------------------------------------------------

@covers("DEV101")
def test_dev101_arch_mismatch():
    doc = run(CO / "gamma.gfx90a.hsaco", devices=["w7800"])
    f = finding(doc, "DEV101")
    assert f["severity"] == "error" and "gfx90a" in f["message"]
    assert "DEV101" not in codes(run(CO / "gamma.gfx90a.hsaco", devices=["mi250x"]))


@covers("DEV102")
def test_dev102_wave_size_mismatch(tmp_path):
    device_file = tmp_path / "devices.toml"
    # overlay the shipped gfx1100 limits: a (hypothetical) wave64-only gfx1100 board
    device_file.write_text('[amd_architectures.gfx1100]\nwave_sizes = [64]\n'
                           'default_wave_size = 64\n\n[[device]]\nname = "Wave64 board"\n'
                           'arch = "gfx1100"\ncompute_units = 8\n')
    doc = run(GAMMA_1100, devices=["wave64-board"], device_files=[str(device_file)])
    assert "DEV102" in codes(doc)
    assert "DEV102" not in codes(run(CO / "gamma.gfx1100.w64.hsaco",
                                     devices=["wave64-board"],
                                     device_files=[str(device_file)]))


@covers("DEV103")
def test_dev103_unknown_arch(tmp_path):
    data = bytearray(GAMMA_1100.read_bytes())
    flags = struct.unpack_from("<I", data, 0x30)[0]
    struct.pack_into("<I", data, 0x30, (flags & ~0xFF) | 0x050)  # gfx1310: not in the DB
    path = tmp_path / "future.hsaco"
    path.write_bytes(bytes(data))
    doc = run(path)
    assert "DEV103" in codes(doc)
    assert "DEV103" not in codes(run(GAMMA_1100))


@covers("DEV104")
def test_dev104_generic_target():
    assert "DEV104" in codes(run(CO / "gamma.gfx11-generic.cov6.hsaco"))
    assert "DEV104" not in codes(run(CO / "gamma.gfx11-generic.cov6.hsaco",
                                     devices=["w7800"]))


@covers("DEV105")
def test_dev105_devices_not_analysed():
    """Two AMD devices: the gfx942 object is analysed for the MI300X only, and one info
    names the W7800; gfx90a code neither runs: one warning, analysed for gfx90a itself."""
    doc = run(CO / "sweep.gfx942.hsaco", devices=["w7800", "mi300x"])
    (f,) = [f for f in doc["findings"] if f["rule"] == "DEV105"]
    assert f["severity"] == "info" and f["device"] == "AMD Radeon PRO W7800"
    assert {k["device"] for k in doc["kernels"]} == {"AMD Instinct MI300X"}
    assert "DEV101" not in codes(doc)
    doc = run(CO / "sweep.gfx90a.hsaco", devices=["w7800", "mi300x"])
    (f,) = [f for f in doc["findings"] if f["rule"] == "DEV105"]
    assert f["severity"] == "warning" and f["data"]["targets"] == ["gfx90a"]
    assert {k["arch"] for k in doc["kernels"]} == {"gfx90a"}
    assert all(k["occupancy"] is not None for k in doc["kernels"])
    # one device: the mismatch is DEV101, per kernel, as before
    assert "DEV105" not in codes(run(CO / "sweep.gfx942.hsaco", devices=["w7800"]))


def test_dev105_another_vendors_code_is_named_once(tmp_path):
    """A wheel holding AMD and NVIDIA code run for an H100 (bitsandbytes 0.50.2 with its
    ROCm libraries: 19,075 DEV101 errors, one a kernel and target; extracted, 20,489
    kernels analysed for their own gfx targets): the AMD code is named once per input and
    not analysed; an AMD code object alone for an H100 the same (one device of its own
    vendor that cannot run it stays DEV101, test_dev101)."""
    import zipfile

    wheel = tmp_path / "both.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.write(CO / "gamma.gfx1100.hsaco", "lib/gamma.gfx1100.hsaco")
        z.write(REPO / "fixtures/nvidia/cubin/mandelbrot.sm_90.cubin", "lib/mandelbrot.cubin")
    doc = run(wheel, devices=["h100"])
    (f,) = [f for f in doc["findings"] if f["rule"] == "DEV105"]
    assert f["severity"] == "info" and f["data"]["targets"] == ["gfx1100"]
    assert {k["vendor"] for k in doc["kernels"]} == {"nvidia"} and "DEV101" not in codes(doc)
    doc = run(CO / "gamma.gfx1100.hsaco", devices=["h100"])
    (f,) = doc["findings"]
    assert (f["rule"], f["severity"], f["data"]["targets"]) == ("DEV105", "info", ["gfx1100"])
    assert doc["kernels"] == []


# -- binary facts -------------------------------------------------------------------------

@covers("BIN101")
def test_bin101_metadata_descriptor_mismatch():
    doc = run(CO / "suite.gfx906.hsaco")
    f = finding(doc, "BIN101", "vgpr_waves_per_eu_1_2_padded")
    assert "vgpr" in f["data"]["mismatches"]
    assert "BIN101" not in codes(doc, "vgpr_limited_40")


@covers("BIN103")
def test_bin103_bitcode():
    doc = run(REPO / "fixtures/amd/containers/gamma.rdc_new_driver.o")
    assert codes(doc) == ["BIN103", "BIN103"]
    assert "BIN103" not in codes(run(GAMMA_1100))


@covers("BIN105")
def test_bin105_other_vendor_code(tmp_path):
    """SYCL entries beside AMD code in a host's .hip_fatbin bundle, and a per-entry
    __CLANG_OFFLOAD_BUNDLE__sycl-spir64_gen section alone (the layout of bitsandbytes
    0.50.2's libbitsandbytes_xpu2025.so, whose entries were 'not a GPU binary' errors): one
    info each, the AMD code analysed, no error."""
    from benchmarks.fuzz import Bundle, Host, Raw

    spirv = Raw(b"\x03\x02\x23\x07" + bytes(60))  # SPIR-V's magic number
    both = tmp_path / "libboth.so"
    both.write_bytes(Host(((".hip_fatbin", Bundle((
        ("hipv4-amdgcn-amd-amdhsa--gfx1100", Raw(GAMMA_1100.read_bytes())),
        ("sycl-spir64-unknown-unknown", spirv))), 1),)).render())
    doc = run(both)
    assert codes(doc) == ["BIN105"] and len(doc["kernels"]) == 1 and not doc["errors"]
    alone = tmp_path / "libxpu.so"
    alone.write_bytes(Host((("__CLANG_OFFLOAD_BUNDLE__sycl-spir64_gen", spirv, 1),)).render())
    doc = run(alone)
    (f,) = doc["findings"]
    assert f["rule"] == "BIN105" and "sycl-spir64_gen" in f["message"] and not doc["errors"]
    assert "BIN105" not in codes(run(GAMMA_1100))


@covers("BIN104")
def test_bin104_partial_records(tmp_path):
    path = tmp_path / "nometa.hsaco"
    path.write_bytes(GAMMA_1100.read_bytes().replace(b"AMDGPU\0\0", b"XXXXXX\0\0"))
    assert "BIN104" in codes(run(path))
    assert "BIN104" not in codes(run(GAMMA_1100))


@covers("IO101")
def test_io101_unreadable_input(tmp_path):
    bad = tmp_path / "bad.hsaco"
    bad.write_bytes(GAMMA_1100.read_bytes()[:100])
    doc = run(bad, GAMMA_1100)
    f = finding(doc, "IO101")
    assert f["severity"] == "error" and f["file"] == str(bad)
    assert "IO101" not in codes(run(GAMMA_1100))


# -- selection, severities and the catalogue ----------------------------------------------

def test_select_ignore_and_severity():
    base = dict(devices=["w7800"], block=256, grid=1000)
    assert sorted(codes(run(GAMMA_1100, **base))) == ["LCH101", "LCH103"]
    assert codes(run(GAMMA_1100, select=["LCH1"], ignore=["LCH103"], **base)) == ["LCH101"]
    assert codes(run(GAMMA_1100, select=["OCC"], **base)) == []
    assert sorted(codes(run(GAMMA_1100, select=["OCC"], extend_select=["LCH101"],
                            **base))) == ["LCH101"]


def test_every_rule_documented_and_tested():
    rules = all_rules()
    for code, r in rules.items():
        assert r.summary and all(r.docs.get(s) for s in ("What it does", "Why it matters",
                                                         "How to fix", "Example")), code
    nvidia_only = {"OCC105", "OCC106", "BIN102"}  # tested in test_rules_nvidia.py
    # trace rules: tests/test_traces_kineto.py and tests/test_traces_input.py (LCH105 and
    # OCC108 against Nsight Compute, TRC101 against the cubin, LCH201 on the bitonic sort)
    nvidia_only |= {"LCH105", "OCC108", "TRC101", "LCH201"}
    # the launch-time model's finding: tests/test_launch_model.py, on the held-out trace
    nvidia_only |= {"LCH106", "LCH107", "LCH108"}
    # functions a graph could capture: tests/test_host_regions.py, on traced H100 runs
    nvidia_only |= {"LCH202"}
    # code scanning's notes on a report's library facts: tests/test_code_scanning.py
    nvidia_only |= {"LIB101"}
    assert set(rules) - nvidia_only <= TESTED, sorted(set(rules) - nvidia_only - TESTED)


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_rule_command(occlint, fmt):
    one = occlint("rule", "LCH101", "--format", fmt)
    assert one.code == 0 and "LCH101" in one.out
    every = occlint("rule", "--all", "--format", fmt)
    assert every.code == 0 and all(code in every.out for code in all_rules())
    assert occlint("rule", "NOPE1").code == 2


def test_statistics(occlint):
    run_ = occlint(str(GAMMA_1100), "--device", "w7800", "--block", "256", "--grid", "1000",
                   "--statistics", "--isolated")
    assert run_.code == 1
    assert "LCH101" in run_.out and "LCH103" in run_.out and "2 findings" in run_.out


def test_exit_codes(occlint_process):
    args = [str(GAMMA_1100), "--device", "w7800", "--block", "256", "--grid", "1000",
            "--isolated"]
    assert occlint_process(*args).code == 1
    assert occlint_process(*args, "--exit-zero").code == 0
    assert occlint_process(*args, "--fail-on", "error").code == 0
    assert occlint_process(*args, "--fail-on", "never").code == 0
    assert occlint_process(str(Path("/nonexistent/x.hsaco"))).code == 2


# -- CUDA / HIP sources (more in test_sources.py) ----------------------------------------

@covers("SRC101")
def test_src101_huge_source_is_not_parsed(tmp_path):
    import time

    from occlint.readers.source import MAX_SOURCE_BYTES

    line = b"__global__ void k(float *x) { }\nvoid f(float *x) { k<<<8, 100>>>(x); }\n"
    huge = tmp_path / "generated.cu"
    huge.write_bytes(line * (MAX_SOURCE_BYTES // len(line) + 1))
    start = time.perf_counter()
    doc = run(huge)
    assert time.perf_counter() - start < 10  # not parsed at all
    assert codes(doc) == ["SRC101"]  # one info finding, none of the launches' LCH001
    assert finding(doc, "SRC101")["severity"] == "info"


@covers("SRC102")
def test_src102_nothing_from_broken_regions(tmp_path):
    src = tmp_path / "broken.cu"
    src.write_bytes(
        b"__global__ void k(float *x) { x[blockIdx.x * blockDim.x + threadIdx.x] = 0.0f; }\n"
        b"void good(float *x) { k<<<8, 100>>>(x); }\n"  # line 2: LCH001 (100 % 32)
        b"void bad(float *x) { k<<<8, 100>>>(x) +* ) ]; }\n"  # line 3: broken
        b"// \xff\xfe not UTF-8 \x80\n")
    doc = run(src)
    assert sorted((f["rule"], f["line"]) for f in doc["findings"]) == \
        [("LCH001", 2), ("SRC102", 3)]


def test_src102_not_for_files_that_name_launches_only_in_comments(tmp_path):
    # a CUB-style header: a namespace macro tree-sitter cannot parse, and `__global__` /
    # `<<<` / `cudaLaunchKernel` only in a comment and a string: nothing there can be a
    # kernel or a launch, so the file is not parsed and no region is reported
    header = tmp_path / "block_load.cuh"
    header.write_bytes(
        b"// occlint: ignore[LCH001]\n"
        b"/* the __global__ kernels below are launched with k<<<g, b>>>(...) */\n"
        b"CUB_NAMESPACE_BEGIN\n"
        b"template <int B> struct BlockLoad { int x +* ) ]; };\n"
        b'static const char *api = "cudaLaunchKernel";\n'
        b"CUB_NAMESPACE_END\n")
    doc = run(header)
    assert doc["findings"] == []
    (record,) = doc["sources"]
    assert record["syntax_errors"] == [] and record["kernels"] == [] == record["launches"]
    assert record["suppressions"] == [{"line": 1, "codes": ["LCH001"]}]
    # the same file with the launch in code: parsed, and its broken region reported
    header.write_bytes(header.read_bytes() + b"void go() { k<<<1, 64>>>(); }\n")
    doc = run(header)
    assert [f["rule"] for f in doc["findings"]] == ["SRC102"]


def test_sources_bounded_on_deep_nesting(tmp_path):
    import time

    deep = tmp_path / "deep.cu"
    depth = 20_000
    deep.write_text("__global__ void k(float *x) { }\n"
                    "void f(float *x) { k<<<" + "(" * depth + "8" + ")" * depth
                    + ", " + "(" * 500 + "64" + ")" * 500 + ">>>(x); }\n"
                    + "void g() {" + "{" * depth + "}" * depth + "}\n")
    start = time.perf_counter()
    doc = run(deep)  # no RecursionError: nested too deeply is unknown
    assert time.perf_counter() - start < 30
    assert "kernels" in doc


def test_rules_of_one_vendor_find_nothing_on_the_other_vendors_kernels():
    """The engine skips a rule registered for some vendors on other vendors' kernels: run
    those rules anyway, on every fixture kernel analysed for an AMD and an NVIDIA device,
    all at a threshold where every limiter rule could fire, and none may find anything."""
    from occlint.analysis.kernels import analyse
    from occlint.devices.db import shipped_db
    from occlint.judgement.advice import AdviceSettings, advice
    from occlint.pipeline.inputs import expand_paths
    from occlint.pipeline.setup import Setup
    from occlint.readers.loader import ReadOptions, read_path
    from occlint.rules.registry import Context

    settings = AdviceSettings(occupancy_threshold=1.01)
    setup = Setup.build(Options(isolated=True), load_config(None, True))
    db = shipped_db()
    devices = [db.get("w7800"), db.get("mi300x"), db.get("h100"), db.get("b200")]
    restricted = [r for r in all_rules().values() if r.vendors]
    assert {r.code for r in restricted} >= {"OCC101", "OCC105", "DYN101"}
    candidates, _ = expand_paths([str(REPO / "fixtures/amd"), str(REPO / "fixtures/nvidia")])
    checked = {"amd": 0, "nvidia": 0}
    fired: set[str] = set()  # on their own vendor's kernels: the contexts let them fire
    for c in candidates:
        result = read_path(Path(c.path), c.display, ReadOptions(), None, False)
        for report in analyse(result.kernels, devices, setup.resolve, db):
            ctx = Context(settings, advice(report, settings) if report.occupancy else {})
            for r in restricted:
                found = list(r.check(report, ctx))
                if report.kernel.vendor not in r.vendors:
                    assert found == [], (r.code, c.display)
                elif found:
                    fired.add(r.code)
            checked[report.kernel.vendor] += 1
    assert checked["amd"] > 50 and checked["nvidia"] > 50
    assert {"OCC101", "OCC104", "OCC105", "DYN101"} <= fired, fired
