"""The owner index (occlint/judgement/owner_index.py, issue 29): which library ships a
kernel, read from the libraries' own wheels by benchmarks/build_owner_index.py.

Truths used: the cubins' own symbol tables (read with pyelftools, demangled with
c++filt's library), the names the libraries' kernels carry in real traces
(fixtures/traces), the kernels this project's workloads define themselves (their sources),
and one cuDNN kernel as the cuDNN 9.28 wheel's symbol table spells it."""

from __future__ import annotations

import gzip
import json
import struct
from pathlib import Path

import cxxfilt
import pytest
from elftools.elf.elffile import ELFFile

from benchmarks.owner_coverage import coverage, user_kernels
from occlint.judgement.owner import by_name, owner_of
from occlint.judgement.owner_index import (
    INDEX_PATH,
    MAGIC,
    SIZE_BUDGET,
    base_name,
    decode,
    encode,
    key_hash,
    shipped_index,
)
from tests.conftest import FIXTURES

# libcudnn_engines_precompiled.so.9 of nvidia-cudnn-cu13 9.28.1.4, its sm_90 cubins: the
# symbol and its demangling (the kernel the issue found listed as the user's own)
PRECOMPUTED = ("_Z26precomputed_convolve_sgemmI6__halfiLi1024ELi5ELi5ELi4ELi3ELi3ELi1ELb1EEviiiP"
               "KT_iPS1_S3_18kernel_conv_paramsyT0_ffibbS3_S3_Pi")
PRECOMPUTED_TEXT = ("void precomputed_convolve_sgemm<__half, int, 1024, 5, 5, 4, 3, 3, 1, true>"
                    "(int, int, int, __half const*, int, __half*, __half const*, "
                    "kernel_conv_params, unsigned long long, int, float, float, int, bool, "
                    "bool, __half const*, __half const*, int*)")
MIXED = FIXTURES / "traces" / "kineto" / "mixed.pt.trace.json.gz"
# TorchRec's embeddings on an A100 (HTA's trace_diff control run, 2022): FBGEMM's kernels
HTA_FBGEMM = FIXTURES / "traces" / "public" / "hta_trace_diff_fbgemm.json.gz"


def trace_events(path: Path) -> list[dict]:
    with gzip.open(path) as fh:
        return json.load(fh)["traceEvents"]


def test_the_shipped_index_is_within_its_budget_and_says_where_it_came_from():
    data = INDEX_PATH.read_bytes()
    assert data.startswith(MAGIC) and len(data) <= SIZE_BUDGET
    index = decode(data)
    libs = {lib.name: lib for lib in index.libraries}
    assert {"cuDNN", "cuBLAS", "NCCL", "cuFFT", "cuRAND", "cuSPARSE", "cuSOLVER",
            "PyTorch"} <= set(libs)
    for lib in index.libraries:
        assert lib.packages and all(p["package"] and p["version"] and p["files"]
                                    for p in lib.packages)
        assert list(lib.keys) == sorted(set(lib.keys))
    assert libs["PyTorch"].kind == "framework" and libs["cuDNN"].kind == "library"
    assert any(f.endswith("libtorch_cuda.so") for p in libs["PyTorch"].packages
               for f in p["files"])


def test_encode_decode_round_trip():
    header = {"libraries": [{"name": "A", "kind": "library", "packages": [], "keys": 2},
                            {"name": "B", "kind": "framework", "packages": [], "keys": 1}]}
    index = decode(encode(header, [[key_hash("a::k"), key_hash("z")], [key_hash("b::k")]]))
    assert index.lookup("void a::k<1>(int)").name == "A"
    assert index.lookup("b::k(float*)").name == "B"
    assert index.lookup("c::k") is None
    with pytest.raises(ValueError):
        decode(b"OCCLIDX1" + struct.pack("<I", 2) + b"{}" + b"\0" * 3)


def _cubin_functions(path: Path) -> list[str]:
    with path.open("rb") as fh:
        elf = ELFFile(fh)
        symtab = elf.get_section_by_name(".symtab")
        return [s.name for s in symtab.iter_symbols()
                if s["st_info"]["type"] == "STT_FUNC" and s.name.startswith("_Z")]


@pytest.mark.parametrize("cubin", sorted((FIXTURES / "nvidia" / "cubin").glob("*.cubin")),
                         ids=lambda p: p.name)
def test_one_key_from_the_mangled_and_the_demangled_name(cubin):
    """A trace may carry either spelling (CUPTI demangles, Nsight Systems keeps both)."""
    names = _cubin_functions(cubin)
    for mangled in names:
        try:
            text = cxxfilt.demangle(mangled)
        except cxxfilt.InvalidName:
            continue
        assert base_name(mangled) == base_name(text), mangled


def test_the_owners_the_issue_found_missed():
    assert base_name(PRECOMPUTED) == base_name(PRECOMPUTED_TEXT) == "precomputed_convolve_sgemm"
    for name in (PRECOMPUTED, PRECOMPUTED_TEXT):
        o = owner_of(name, PRECOMPUTED_TEXT, {})
        assert (o.kind, o.library, o.basis) == ("library", "cuDNN", "index")
    events = trace_events(MIXED)
    mem_eff = sorted({e["name"] for e in events if e.get("cat") == "kernel"
                      and "PyTorchMemEffAttention" in e["name"]})
    assert [n.split("(")[0] for n in mem_eff] == ["fmha_cutlassB_f32_aligned_64x64_k64_sm80",
                                                  "fmha_cutlassF_f32_aligned_64x64_rf_sm80"]
    for name in mem_eff:
        o = owner_of(name, name, {})
        assert (o.kind, o.library, o.basis) == ("framework", "PyTorch", "index")


def test_library_kernels_of_real_traces_are_indexed_under_their_library():
    """Kernels whose own namespace names their library, as real traces carry them."""
    index = shipped_index()
    assert index is not None
    for name, library in [
        ("void cudnn::engines_precompiled::nchwToNhwcKernel<float, float, float, false, true, "
         "(cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nchw2nhwc_params_t<float>, "
         "float const*, float*)", "cuDNN"),
        ("void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, false, "
         "float, float, float, true, false, false>(cublasLt::cublasSplitKParams<float>)",
         "cuBLAS"),
        ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
         "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, "
         "std::array<char*, 3ul>)", "PyTorch"),
    ]:
        found = index.lookup(name)
        assert found is not None and found.name == library, name


def test_fbgemms_kernels_in_a_real_run_are_fbgemms():
    """Every kernel of FBGEMM's in a real TorchRec run (fixtures/traces/public/
    hta_trace_diff_fbgemm.json.gz: what HTA's trace_diff control trace holds of them) is
    FBGEMM's: its namespace or its generated embeddings' names say so, and the two named
    outside them, ``bounds_check_indices_kernel`` and ``linearize_index_kernel``, the
    fbgemm-gpu 0.5.0 and 1.0.0 wheels ship (their symbol tables, read by the builder;
    1.9.0 renamed the first ``bounds_check_indices_kernel_v1``)."""
    names = {e["name"] for e in trace_events(HTA_FBGEMM) if e.get("cat") == "kernel"}
    assert len(names) == 13
    for name in names:
        o = owner_of(name, name, {})
        assert (o.kind, o.library) == ("library", "FBGEMM"), name
    unnamed = {name for name in names if by_name(name) is None}  # no name rule knows
    assert {name.split("<")[0] for name in unnamed} == {"void bounds_check_indices_kernel",
                                                        "void linearize_index_kernel"}
    assert {owner_of(name, name, {}).basis for name in unnamed} == {"index"}
    index = shipped_index()
    libs = {lib.name: lib for lib in index.libraries}
    assert [p["version"] for p in libs["FBGEMM"].packages] == ["0.5.0", "1.0.0", "1.9.0"]


def test_bitsandbytes_kernels_are_indexed_and_pytorchs_templates_stay_pytorchs():
    """bitsandbytes' kernels, named outside any namespace (its 0.50.2 wheel's
    libbitsandbytes_cuda*.so: ``kQuantizeBlockwise``, ``kOptimizer32bit2State``), are its;
    ATen's templates that FBGEMM instantiates over its functors are not FBGEMM's keys
    (PyTorch's code in FBGEMM's library): the index keeps them PyTorch's, and the name says
    FBGEMM where a functor of FBGEMM's is in it."""
    index = shipped_index()
    for name in ("void kQuantizeBlockwise<float, 4096, 4, 0, 0>(float*, float*, float*, "
                 "unsigned char*, float const*, int)",
                 "void kOptimizer32bit2State<float, 0>(float*, float*, float*, float*, "
                 "unsigned int*, float, float, float, float, float, float, int, float, bool, "
                 "int)"):
        assert index.lookup(name).name == "bitsandbytes", name
    aten = ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add"
            "<float>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, "
            "std::array<char*, 3ul>)")
    assert index.lookup(aten).name == "PyTorch"
    theirs = ("void at::native::vectorized_elementwise_kernel<4, fbgemm_gpu::(anonymous "
              "namespace)::offsets_range_functor, std::array<char*, 2ul> >(int, "
              "fbgemm_gpu::(anonymous namespace)::offsets_range_functor, "
              "std::array<char*, 2ul>)")
    o = owner_of(theirs, theirs, {})
    assert (o.kind, o.library) == ("library", "FBGEMM")
    assert index.header["left_out"]["framework_templates"] > 0


def test_vllms_own_kernels_are_vllms_by_their_namespace():
    """vLLM's kernels in its namespace (its 0.33.0 wheel: ``vllm::rms_norm_kernel``,
    ``vllm::act_and_mul_kernel``, ``vllm::reshape_and_cache_flash_kernel``, 130 of its 225
    base names) are vLLM's by the name rule; a user's kernel over a type of vLLM's is not."""
    for name in ("void vllm::rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, "
                 "c10::BFloat16 const*, long, c10::BFloat16 const*, float, int, int)",
                 "void vllm::act_and_mul_kernel<c10::Half, &vllm::silu_kernel<c10::Half>, "
                 "true>(c10::Half*, c10::Half const*, int)"):
        o = owner_of(name, name, {})
        assert (o.kind, o.library, o.basis) == ("library", "vLLM", "name"), name
    mine = "void my_kernel<vllm::Fp8KVCacheDataType>(float*)"
    assert owner_of(mine, mine, {}).kind == "user"


def test_no_kernel_of_the_users_is_in_the_index():
    """The kernels this project's recorded workloads define (their sources) stay the user's;
    so do libraries' kernels compiled into others (CUB in libtorch: the name rules say CUB)."""
    index = shipped_index()
    mine = user_kernels()
    assert {"saxpy", "fma_chain", "gamma_gridstride", "coop_scale"} <= mine
    assert [n for n in mine if index.lookup(n) is not None] == []
    cub = ("void at_cuda_detail::cub::detail::radix_sort::DeviceRadixSortOnesweepKernel<int>"
           "(int*)")
    assert index.lookup(cub) is None and owner_of(cub, cub, {}).library == "CUB"


def test_every_kernel_of_the_recorded_training_run_has_its_right_owner():
    """mixed (an H100 run of this project: ViT, LSTM, SDPA, sort, three user kernels): the
    owner's kind is right for all of its kernel time, and every kernel not the user's has a
    known owner."""
    row = coverage(MIXED, user_kernels())
    assert row["correct_ns"] == row["kernel_ns"] > 0
    kernels = [e for e in trace_events(MIXED)
               if e.get("cat") == "kernel"]
    assert abs(row["kernel_ns"] - 1000 * sum(e["dur"] for e in kernels)) <= len(kernels)
    user_ns = row["by_owner"].get("user", 0)
    assert row["known_ns"] == row["kernel_ns"] - user_ns


def _wheel(tmp_path: Path, name: str, cubins: list[Path]) -> Path:
    import zipfile

    wheel = tmp_path / name
    with zipfile.ZipFile(wheel, "w") as archive:
        for cubin in cubins:
            archive.write(cubin, f"lib/{cubin.name}")
    return wheel


def test_the_builder_keys_a_wheels_kernels_by_their_symbols(tmp_path):
    """benchmarks/build_owner_index.py on two wheels (real cubins): each library holds the
    base names of its cubins' function symbols (pyelftools + c++filt), the one both ship is
    left out, and the written index finds each under its library."""
    from benchmarks.build_owner_index import build

    cubins = FIXTURES / "nvidia" / "cubin"
    gamma, tiles = cubins / "gamma.sm_90.cubin", cubins / "smem_tiles.sm_90.cubin"
    wheels = [_wheel(tmp_path, "nvidia_cudnn_cu13-9.0.0-py3-none-any.whl", [gamma, tiles]),
              _wheel(tmp_path, "nvidia_cublas-13.0.0-py3-none-any.whl", [gamma])]
    header, keys, names = build(wheels)

    def bases(cubin: Path) -> set[str]:
        return {base_name(cxxfilt.demangle(n)) for n in _cubin_functions(cubin)}

    assert set(names) == {"cuDNN", "cuBLAS"}
    assert set(names["cuDNN"]) == bases(tiles) - bases(gamma) and names["cuBLAS"] == []
    assert header["left_out"]["shipped_by_several"] == len(bases(gamma))
    assert [lib["name"] for lib in header["read_without_keys"]] == ["cuBLAS"]  # none left
    assert [(p["package"], p["version"])
            for lib in header["read_without_keys"] + header["libraries"]
            for p in lib["packages"]] == [("nvidia-cublas", "13.0.0"),  # by library
                                          ("nvidia-cudnn-cu13", "9.0.0")]
    index = decode(encode(header, keys))
    for name in names["cuDNN"]:
        assert index.lookup(name).name == "cuDNN"
    assert all(index.lookup(n) is None for n in bases(gamma))


# ROCm libraries' kernels as their Debian packages ship them, each taken independently of
# occlint: the ``.symbol`` lines of ``llvm-readelf --notes`` (LLVM 22) on the packages' code
# objects (a host library's .hip_fatbin cut into code objects, loose Tensile code objects)
ROCM_KERNELS = [
    # librocblas0 5.5.1+dfsg-7: librocblas.so.0.1 and rocblas/2.47.0/library/*.co
    ("_ZL21trtri_diagonal_kernelILi16EdPKdPdEv13rocblas_fill_17rocblas_diagonal_iT1_lillT2_"
     "lill", "rocBLAS"),
    ("_ZL43rocblas_internal_strided_vector_copy_kernelILi128EfPfS0_EvT1_ilT2_ilill",
     "rocBLAS"),
    ("Cijk_Alik_Bljk_HHS_BH_MT32x64x32_MI16x16x16x1_SE_1LDSB0_APM1_AF0EM8_AF1EM1_AMAS3_ASE_"
     "ASGT_ASAE01_ASCE01_ASEM1_BL1_BS1_DTL0_DTVA0_DVO0_ETSP_EPS1_FL0_GRVW4_GSU1_GSUAMB_GLS0_"
     "ISA90a_IU1_K1_KLA_LBSPP128_LPA16_LPB16_LDL1_LRVW8_LWPMn1_LDW0_MAC_MIAV0_MDA2_NTA0_NTB0_"
     "NTC0_NTD0_NEPBS0_NLCA1_NLCB1_ONLL1_OPLV0_PK0_PAP0_PGR1_PLR2_SIA3_SS0_SU0_SUM0_SUS0_"
     "SCIUI1_SPO0_SRVW4_SSO0_SVW4_SNLL0_TT1_32_TLDS1_USFGROn1_VAW2_VSn1_VW2_WSGRA1_WSGRB1_WS64_"
     "WG32_8_1_WGM1", "rocBLAS"),
    # libhipblaslt1 7.1.1+dfsg-4: hipblaslt/library/Kernels.so-000-gfx90a.hsaco
    ("Cijk_SB_BiasS_AuxB_HAS_ScaleAlphaVec_PostGSU2_VW4", "hipBLASLt"),
    ("Cijk_II_HAI_ScaleAlphaVec_PostGSU2_VW4", "hipBLASLt"),
    # librocrand1 5.7.1-6: librocrand.so.1.1
    ("_ZN12rocrand_host6detailL15generate_kernelId20uniform_distributionIdjEEEvPN14rocrand_"
     "device13xorwow_engineEjPT_mT0_", "rocRAND"),
    # librocsparse0 5.7.1-6: librocsparse.so.0.1
    ("_ZL18dotci_kernel_part1ILj256Ei21rocsparse_complex_numIfEEvT0_PKT1_PKS2_S5_PS3_21"
     "rocsparse_index_base_", "rocSPARSE"),
]


@pytest.mark.parametrize("symbol,library", ROCM_KERNELS)
def test_rocm_libraries_kernels_are_indexed_under_their_library(symbol, library):
    """A kernel of each indexed ROCm package is found under its library, by its mangled
    symbol (rocprof) and by its demangled name (Kineto's ROCm traces, rocprofv3), which key
    alike: Tensile's extern "C" ``Cijk_`` names as they are, templates by their base name."""
    index = shipped_index()
    demangled = cxxfilt.demangle(symbol)
    assert base_name(symbol) == base_name(demangled)
    for name in (symbol, demangled):
        found = index.lookup(name)
        assert found is not None and found.name == library, name
    assert found.kind == "library"
    assert all(p["package"].startswith("lib") and p["version"] for p in found.packages)


def test_rocm_names_of_users_and_header_only_libraries_are_not_claimed():
    """A user's HIP kernel with a generic name (rocSPARSE ships an ``init_kernel``, rocRAND
    and rocBLAS ship ``*_kernel`` names), the made-up kernels of the rocprof fixtures and
    rocPRIM's kernels compiled into a user's program stay out of the index."""
    index = shipped_index()
    for name in ("init_kernel", "_ZL11init_kernelv", "void init_kernel()", "copy_kernel",
                 "scale_kernel", "gemm_bf16_kernel(__hip_bfloat16 const*, __hip_bfloat16 "
                 "const*, __hip_bfloat16*, int, int, int)", "softmax_warp(float*, float "
                 "const*, int)", "stencil3d(float*, float const*)",
                 "void (anonymous namespace)::resolve_future_token_ids_kernel<long>(long*, "
                 "long const*, unsigned long)",
                 "void rocprim::ROCPRIM_300000_NS::detail::trampoline_kernel<int>(int)"):
        assert index.lookup(name) is None, name


def test_rccls_kernels_are_not_claimed_for_rccl():
    """RCCL 5.4.3's kernel (librccl1 5.4.3-3+b1, llvm-readelf --notes) carries NCCL's name:
    the A100 ranks fixtures launch the same one from NCCL. The index does not say RCCL; the
    package is listed as read without keys."""
    index = shipped_index()
    name = "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"
    assert base_name("_Z42ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_tP11ncclDevCommmP8ncclWork"
                     ) == base_name(name)
    assert index.lookup(name) is None
    assert "RCCL" in [lib["name"] for lib in index.header["read_without_keys"]]
    events = [e for e in trace_events(FIXTURES / "traces" / "ranks" / "rank-0.json.gz")
              if e.get("cat") == "kernel"]
    assert any(e["name"] == name for e in events)


def _deb(tmp_path: Path, name: str, files: dict[str, Path]) -> Path:
    import shutil
    import subprocess

    root = tmp_path / name.removesuffix(".deb")
    (root / "DEBIAN").mkdir(parents=True)
    package, version = name.split("_")[:2]
    (root / "DEBIAN" / "control").write_text(
        f"Package: {package}\nVersion: {version}\nArchitecture: amd64\n"
        "Maintainer: t <t@example.org>\nDescription: t\n")
    for member, source in files.items():
        (root / member).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, root / member)
    subprocess.run(["dpkg-deb", "--root-owner-group", "-b", str(root), str(tmp_path / name)],
                   check=True, capture_output=True)
    return tmp_path / name


@pytest.mark.skipif(not __import__("shutil").which("dpkg-deb"), reason="needs dpkg-deb")
def test_the_builder_reads_debian_packages_of_rocm_libraries(tmp_path):
    """Two .deb packages of real AMD code objects: a loose code object and a compressed
    offload bundle (CCOB, as hipBLASLt ships its Tensile kernels) are read; each package is
    named by its library with its version; the kernel both ship is left out; the keys are
    those of the code objects' ``.symbol`` lines (llvm-readelf --notes, in the fixtures)."""
    from benchmarks.build_owner_index import build

    co, containers = FIXTURES / "amd" / "co", FIXTURES / "amd" / "containers"
    lib = "usr/lib/x86_64-linux-gnu"
    debs = [_deb(tmp_path, "librocblas0_5.5.1+dfsg-7_amd64.deb",
                 {f"{lib}/rocblas/library/sweep.hsaco": co / "sweep.gfx1030.hsaco",
                  f"{lib}/rocblas/library/gamma.hsaco": co / "gamma.gfx1030.cov5.hsaco"}),
            _deb(tmp_path, "libhipblaslt1_7.1.1+dfsg-4_amd64.deb",
                 {f"{lib}/hipblaslt/library/TensileLibrary_gfx1030.co":
                  containers / "gamma.ccob2_zstd.hipfb"})]
    header, keys, names = build(debs, scratch=tmp_path / "unpacked")

    def bases(notes: Path) -> set[str]:
        return {base_name(cxxfilt.demangle(line.split()[-1].removesuffix(".kd")))
                for line in notes.read_text().splitlines() if ".symbol:" in line}

    sweep = bases(co / "sweep.gfx1030.notes.txt")
    assert sweep == {"vgpr_sweep", "lds_sweep"}
    assert names == {"hipBLASLt": [], "rocBLAS": sorted(sweep)}
    assert header["left_out"]["shipped_by_several"] == 1  # gamma_correction
    assert [lib["name"] for lib in header["read_without_keys"]] == ["hipBLASLt"]
    assert [(lib["name"], p["package"], p["version"], p["files"])
            for lib in header["read_without_keys"] + header["libraries"]
            for p in lib["packages"]] == [
        ("hipBLASLt", "libhipblaslt1", "7.1.1+dfsg-4",
         [f"{lib}/hipblaslt/library/TensileLibrary_gfx1030.co"]),
        ("rocBLAS", "librocblas0", "5.5.1+dfsg-7",
         [f"{lib}/rocblas/library/gamma.hsaco", f"{lib}/rocblas/library/sweep.hsaco"])]
    index = decode(encode(header, keys))
    assert index.lookup("void vgpr_sweep<4>(float*, float const*, int)").name == "rocBLAS"
    assert index.lookup("gamma_correction(unsigned char*, unsigned long, float)") is None


def test_a_static_rocblas_kernel_keys_alike_mangled_and_as_rocm_tools_print_it():
    """rocBLAS's ``static`` kernels over ``_Float16`` (``_ZL...DF16_``), which c++filt's
    library cannot demangle: the key is read from the mangling (``L``: internal linkage) and
    matches the name as LLVM's demangler (llvm-cxxfilt 22; ROCm's tools) prints it."""
    symbol = "_ZL18haxpy_mlt_8_kernelILi256EPKDF16_S1_PDF16_EviT0_lT1_llT2_ll"
    printed = ("void haxpy_mlt_8_kernel<256, _Float16 const*, _Float16 const*, _Float16*>"
               "(int, _Float16 const*, long, _Float16 const*, long, long, _Float16*, long, "
               "long)")
    assert base_name(symbol) == base_name(printed) == "haxpy_mlt_8_kernel"
    assert shipped_index().lookup(printed).name == "rocBLAS"
