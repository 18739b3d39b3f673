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
from occlint.judgement.owner import owner_of
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
    assert [(p["package"], p["version"]) for lib in header["libraries"]
            for p in lib["packages"]] == [("nvidia-cublas", "13.0.0"),  # by library
                                          ("nvidia-cudnn-cu13", "9.0.0")]
    index = decode(encode(header, keys))
    for name in names["cuDNN"]:
        assert index.lookup(name).name == "cuDNN"
    assert all(index.lookup(n) is None for n in bases(gamma))
