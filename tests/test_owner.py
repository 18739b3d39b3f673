"""Who can change a kernel (occlint.judgement.owner) and what that does to its findings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from occlint.config import parse
from occlint.errors import ConfigError
from occlint.judgement.owner import Owner, by_file, by_name, owner_of
from tests.conftest import FIXTURES, run_occlint

KINETO = FIXTURES / "traces/kineto"

# names as real traces write them (fixtures/traces/, and the XLA profile of issue 19)
NAMED = [
    ("void cudnn::engines_precompiled::nchwToNhwcKernel<float, float, float, false, true, "
     "(cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nchw2nhwc_params_t<float>, "
     "float const*, float*)", "library", "cuDNN"),
    ("sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x64x32_"
     "warpgroupsize1x1x1_g1_execute_segment_k_off_kernel__5x_cudnn", "library", "cuDNN"),
    ("sm80_xmma_gemm_f32f32_f32f32_f32_nt_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4"
     "_alignc4_execute_kernel__51_cublas", "library", "cuBLAS"),
    ("sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_"
     "segment_k_off_kernel__5x_cublas", "library", "cuBLAS"),
    ("nvjet_tst_192x192_64x4_2x1_v_bz_coopB_TNN", "library", "cuBLAS"),
    # cuBLAS' CUTLASS instantiations, launched by aten::mm in fixtures/traces/fresh/h100
    ("void cutlass::Kernel2<cutlass_80_simt_sgemm_128x64_8x5_nt_align1>"
     "(cutlass_80_simt_sgemm_128x64_8x5_nt_align1::Params)", "library", "cuBLAS"),
    ("cutlass_80_tensorop_s1688gemm_128x128_32x3_tn_align4", "library", "cuBLAS"),
    ("void cutlass::Kernel<cutlass::gemm::kernel::GemmUniversal<float>>(Params)", "library",
     "CUTLASS"),
    ("void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, false, "
     "float, float, float, true, false, false>(cublasLt::cublasSplitKParams<float>)",
     "library", "cuBLAS"),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
     "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)",
     "framework", "PyTorch"),
    ("triton_poi_fused_addmm_gelu_view_7", "generated", "Triton"),
    ("loop_multiply_fusion", "generated", "XLA"),
    ("input_reduce_fusion_1", "generated", "XLA"),
    ("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
     "library", "NCCL"),
    ("void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 64, 4>, true>(Flash_fwd_params)",
     "library", "FlashAttention"),
    ("void cub::DeviceRadixSortOnesweepKernel<cub::DeviceRadixSortPolicy<long, long, int>>()",
     "library", "CUB"),
    ("Cijk_Alik_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0", "library", "Tensile"),
    ("void ck::kernel_gemm_xdl_cshuffle_v3<ck::GridwiseGemm>()", "library",
     "Composable Kernel"),
    # MIOpen under ROCm PyTorch (fixtures/traces/kineto/rocm; names as MIOpen's kernels
    # define them)
    ("transpose_NCHW2CNHW_V2_2D_WG_off64", "library", "MIOpen"),
    ("batched_transpose_32x64_pack_2x4_ediv_1x2_half", "library", "MIOpen"),
    ("SubTensorOpWithCastTensor1d", "library", "MIOpen"),
    ("igemm_wrw_gtcx2_nhwc_bf16_bx0_ex1_bt256x128x16_wt32x32x8_ws2", "library", "MIOpen"),
    # JAX on ROCm (fixtures/traces/xla/rocm, TraceLens' MI300X and MI355X XSpaces): MIOpen's
    # im2col (src/kernels/MIOpenIm3d2Col.cl), ROCclr's blit kernels (hipMemcpy/hipMemset),
    # Transformer Engine's kernels through an XLA FFI call
    ("Im3d2Col", "library", "MIOpen"),
    ("__amd_rocclr_copyBuffer", "library", "HIP runtime"),
    ("__amd_rocclr_fillBufferAligned", "library", "HIP runtime"),
    ("transformer_engine::fused_attn_rocm::populate_rng_state_kernel(long*, long const*, "
     "long)", "library", "Transformer Engine"),
    # FBGEMM_GPU under TorchRec (fixtures/traces/ranks: HolisticTraceAnalysis' rank traces)
    ("void fbgemm_gpu::permute_2D_lengths_kernel<int>(int, int, int const*, int const*, "
     "int*)", "library", "FBGEMM"),
    ("void permute_pooled_embs_kernel<float>(float const*, long const*, long const*, "
     "long const*, float*, long, long, long)", "library", "FBGEMM"),
    # HolisticTraceAnalysis' trace_diff control trace (tests/data/trace_diff/control):
    # FBGEMM_GPU's layout transform (include/fbgemm_gpu/layout_transform_ops.cuh) outside
    # its namespace, and Apex's fused Adam (csrc/multi_tensor_adam.cu); PyTorch's own
    # multi_tensor_apply_kernel is at::native's
    ("void recat_copy_async_kernel<float>(long const*, long const*, float const*, float*, "
     "long, long, long)", "library", "FBGEMM"),
    ("void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>, float, float, "
     "float, float, float, float, adamMode_t, float, int, int>(int, int volatile*, "
     "TensorListMetadata<4>, AdamFunctor<float>, float, float, float, float, float, float, "
     "adamMode_t, float, int, int)", "library", "Apex"),
    # (fixtures/traces/kineto/resnet18_train: PyTorch's _foreach_mul_)
    ("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
     "namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::"
     "BinaryOpScalarFunctor<float, 1, 1, 0>, std::multiplies<float>, float>(at::native::"
     "(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::"
     "BinaryOpScalarFunctor<float, 1, 1, 0>, std::multiplies<float>, float)", "framework",
     "PyTorch"),
    # TraceLens' traces (AMD-AGI/TraceLens 171dd747, tests/traces): ROCm's Kineto writes
    # CK's names mangled and cut short (mi300/resnet_act_checkpoint); MIOpen's im2col v2
    # (inference/xdit_sd_3.5); vLLM's kernels over c10::BFloat16 are not PyTorch's
    # (b200/eager_trace), PyTorch's own over it are
    ("_ZN2ck16tensor_operation6device37kernel_batched_gemm_xdlops_bwd_weightINS_47GridwiseGemm_"
     "bk0mk1_bk0nk1_mn_xdlops_bwd_weightILi64EttftLNS_25InMemoryDataOperationEnumE1ENS_16Tens",
     "library", "Composable Kernel"),
    ("Im2d2Col_v2", "library", "MIOpen"),
    ("void vllm::rms_norm_kernel<c10::BFloat16, 8, 2>(c10::BFloat16*, c10::BFloat16 const*, "
     "long, long, long, long, long, c10::BFloat16 const*, float, int, int)", "library",
     "vLLM"),
    ("void at::native::batch_norm_backward_kernel<c10::BFloat16, c10::BFloat16, float, int>"
     "(at::GenericPackedTensorAccessor<c10::BFloat16 const, 3ul, at::RestrictPtrTraits, int>)",
     "framework", "PyTorch"),
    ("gamma_gridstride(unsigned char*, unsigned long, float)", "user", None),
    ("saxpy", "user", None),
]


def test_a_kernel_an_aten_op_launches_is_pytorchs():
    """ROCm's AOTriton attention (``attn_fwd``, TraceLens' inference/xdit_sd_3.5, launched
    by aten::_flash_attention_forward): no library claims the name; the op that launched it
    is PyTorch's. The same name launched from the user's own code stays the user's."""
    o = owner_of("attn_fwd", "attn_fwd", {}, op="aten::_flash_attention_forward")
    assert (o.kind, o.library) == ("framework", "PyTorch")
    assert owner_of("attn_fwd", "attn_fwd", {}).kind == "user"
    assert owner_of("attn_fwd", "attn_fwd", {}, op="mylib::attention").kind == "user"


@pytest.mark.parametrize(("name", "kind", "library"), NAMED)
def test_owner_by_name(name, kind, library):
    o = owner_of(name, name, {})
    assert (o.kind, o.library) == (kind, library)
    assert o.basis in (("index", "name") if kind != "user" else ("default",))
    if kind != "user":  # the name rules alone, without the owner index, agree
        assert by_name(name) == Owner(kind, library, "name")


def test_configuration_and_inputs_come_first():
    name = "void at::native::vectorized_elementwise_kernel<4>(int)"
    assert owner_of(name, name, {"*vectorized_elementwise*": "user"}).basis == "configuration"
    assert owner_of("mylib_gemm", None, {"mylib_*": "library:MyLib"}).label == "MyLib"
    # a binary the run names is its author's, whatever its kernels are called
    assert owner_of("Cijk_Alik", None, {}, named_in_run=True).kind == "user"
    # a traced launch joined to a library's binary is the library's
    assert owner_of("k", None, {}, binary="/usr/lib/libcublasLt.so.13").label == "cuBLAS"
    assert by_file("wheel.whl!/torch/lib/libtorch_cuda.so").label == "PyTorch"
    assert owner_of("k", None, {}, binary="build/my_kernels.so").basis == "input"


def test_owners_configuration_is_checked():
    cfg = parse({"owners": {"team_*": "user", "*fmha*": "library:FlashAttention"}}, "x",
                Path("."))
    assert cfg.owners["*fmha*"] == "library:FlashAttention"
    with pytest.raises(ConfigError, match="'owners' must be a table"):
        parse({"owners": {"k": "vendor"}}, "x", Path("."))


def _json(*args: str) -> dict:
    out = run_occlint(*args, "--format", "json", "--exit-zero")
    assert out.code == 0, out.err
    return json.loads(out.out)


def test_library_findings_are_info_and_launch_overhead_stays():
    """resnet18 training on an H100: cuDNN, cuBLAS and ATen kernels keep their findings in
    the JSON, as info; the launch overhead (the caller's: graphs, torch.compile) warns."""
    doc = _json(str(KINETO / "resnet18_train.pt.trace.json.gz"), "--isolated")
    owners = {r["owner"]["library"] for r in doc["launches"]}
    assert {"cuDNN", "cuBLAS", "PyTorch"} <= owners
    findings = [f for r in doc["launches"] for f in r["findings"]]
    assert len(findings) > 250  # none against a deliberate design (persistent, pipelines)
    assert {f["rule"] for f in findings if f["severity"] == "warning"} == {"LCH201"}
    s = doc["summary"]["launches"]
    assert 0 < s["user_saving_low_ns"] <= s["saving_low_ns"]


def test_configured_owner_makes_findings_warnings_again(tmp_path):
    (tmp_path / "occlint.toml").write_text(
        '[owners]\n"*vectorized_elementwise_kernel*" = "user"\n')
    doc = _json(str(KINETO / "resnet18_train.pt.trace.json.gz"), "--config",
                str(tmp_path / "occlint.toml"))
    mine = [r for r in doc["launches"] if r["owner"]["basis"] == "configuration"]
    assert mine and all(r["owner"]["kind"] == "user" for r in mine)
    assert any(f["severity"] == "warning" for r in mine for f in r["findings"])


def test_binary_kernels_are_the_users():
    doc = _json(str(FIXTURES / "amd/co/gamma.gfx1100.hsaco"), "--device", "w7800",
                "--isolated")
    assert {json.dumps(k["owner"]) for k in doc["kernels"]} == {
        json.dumps({"kind": "user", "library": None, "basis": "input"})}


def test_text_report_leads_with_what_you_can_change():
    """One screen on a real 119-group trace: the caller's finding, one line per library."""
    out = run_occlint(str(KINETO / "resnet18_train.pt.trace.json.gz"), "--isolated")
    lines = out.out.splitlines()
    assert len(lines) <= 40
    assert "LCH201 warning" in lines[0]
    assert any(line.strip().startswith("cuDNN (library): 84 launch groups") for line in lines)
    assert "yours to change" in lines[-2]
    everything = run_occlint("--show-all", str(KINETO / "resnet18_train.pt.trace.json.gz"),
                             "--isolated")
    assert len(everything.out.splitlines()) > 250


def test_a_fresh_run_warns_only_about_what_the_user_can_change():
    """A run recorded for this check (ViT-B/16, LSTM, SDPA training, sort/topk/unique and
    three of the user's kernels, fixtures/traces/kineto/mixed.pt.trace.json.gz): the text
    fits one screen, and every warning is on the user's kernels or the launch overhead."""
    trace = KINETO / "mixed.pt.trace.json.gz"
    source = FIXTURES.parent / "benchmarks/gpu/calibration/kernels.cu"
    text = run_occlint(str(trace), str(source), "--isolated").out
    assert len(text.splitlines()) <= 40
    doc = _json(str(trace), str(source), "--isolated")
    warned = {(r["owner"]["kind"], f["rule"]) for r in doc["launches"] for f in r["findings"]
              if f["severity"] == "warning"}
    assert {rule for kind, rule in warned if kind != "user"} <= {"LCH201"}
    assert {("user", "LCH001"), ("user", "LCH102")} <= warned
    libraries = {r["owner"]["library"] for r in doc["launches"]}
    assert {"cuBLAS", "cuDNN", "CUB", "PyTorch"} <= libraries
    # its SDPA ran PyTorch's memory-efficient attention (the kernels' own namespace says so:
    # PyTorchMemEffAttention) and cuDNN's; no FlashAttention kernel (issue 29)
    mem_eff = [r for r in doc["launches"] if "PyTorchMemEffAttention" in r["kernel"]]
    assert len(mem_eff) == 2 and "FlashAttention" not in libraries
    assert {(r["owner"]["kind"], r["owner"]["library"]) for r in mem_eff} == {
        ("framework", "PyTorch")}


def test_nccl_named_kernels_on_an_amd_gpu_are_rccls():
    """RCCL keeps NCCL's kernel names (TraceLens' MI350X rocprofv3 run: ncclDevKernel_Generic
    beside the compute): on an AMD GPU they are RCCL's, on NVIDIA's NCCL's."""
    name = "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)"
    assert owner_of(name, name, {}, vendor="amd").library == "RCCL"
    assert owner_of(name, name, {}, vendor="nvidia").library == "NCCL"


def test_a_triton_kernel_is_not_said_to_be_launched_by_itself():
    """Inductor records each Triton launch inside an op of the kernel's own name: the
    compiler's line names no such caller (it read "launched by triton_per_fused_...")."""
    run = run_occlint(str(KINETO / "transformer_compiled.pt.trace.json.gz"), "--isolated")
    (line,) = [x for x in run.out.splitlines() if "Triton (generated)" in x]
    assert "launched by triton_" not in line
