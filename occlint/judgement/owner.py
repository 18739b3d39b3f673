"""Who can change a kernel: the user, a compiler (generated code), the framework, or a library.

Findings matter as far as the reader can act on them: a kernel in their own binary or
source can be changed, a cuBLAS GEMM cannot (its caller can only change the shapes it asks
for). The owner is decided, first match wins, from

1. the configuration: ``[tool.occlint.owners]`` kernel globs (a team's own library is
   theirs: ``"mylib_*" = "user"``);
2. for kernels read from a binary or source the run names: the user (their author is
   linting them);
3. the binary a traced launch was joined to (``libcublasLt.so`` -> cuBLAS);
4. the owner index (:mod:`occlint.judgement.owner_index`, basis ``index``): the library
   whose wheel ships a kernel of that base name, read from the libraries' own binaries
   (cuDNN's ``precomputed_convolve_sgemm``, PyTorch's ``fmha_cutlassB_*``); where it says
   the framework and the name names a library (an ATen template over ``fbgemm_gpu::``
   functors), the library;
5. the kernel's name (:data:`NAMED`: cuBLAS ``sm90_xmma_gemm_*``/``nvjet_*``, Tensile
   ``Cijk_*``, Triton ``triton_*``, ATen ``at::native::*``, ...);
6. the compiler the trace says launched it: an XLA profile's kernel launched by an HLO
   instruction other than a custom call is XLA's (``wrapped_transpose``, ``gemm_fusion_dot``);
7. otherwise the user: a kernel no rule knows is taken as theirs.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from functools import cache
from pathlib import PurePath
from typing import Any

KINDS = ("user", "generated", "framework", "library")


@dataclass(frozen=True, slots=True)
class Owner:
    kind: str  # one of KINDS
    library: str | None = None  # the library's name (kind "library"), or the generator's
    basis: str = "default"  # configuration, input, binary, index, name, trace, default

    @property
    def user(self) -> bool:
        return self.kind == "user"

    @property
    def label(self) -> str:
        return self.library or self.kind

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "library": self.library, "basis": self.basis}


# (kind, library or generator, pattern searched in the demangled name), first match wins;
# a pattern of NAMED that starts with this is matched on the kernel's own name: the name
# with its template arguments and parameters left out
OWN_NAME = "(?#own)"
# the more specific (cuDNN's own copies of CUTLASS and XMMA) before the general.
NAMED: tuple[tuple[str, str, str], ...] = (
    ("generated", "Triton", r"^triton_|^triton__"),
    ("generated", "XLA", (r"^(loop_|input_|wrapped_)?[a-z_]*fusion(_\d+)?(\.\d+)?$|"
                             r"^(loop|input)_[a-z_]+_fusion")),
    ("library", "NCCL", r"\bnccl|^ncclDevKernel|^ncclKernel"),
    ("library", "RCCL", r"\brccl"),
    ("library", "cuDNN", (r"cudnn|_cudnn\b|xmma_(fprop|dgrad|wgrad)|implicit_convolve|"
                             r"precomputed_convolve|"
                             r"^void (cask|cask_cudnn)|winograd|nchwToNhwc|nhwcToNchw")),
    # PyTorch's memory-efficient attention (xFormers' kernels, built into libtorch_cuda)
    ("framework", "PyTorch", r"PyTorchMemEffAttention|^fmha_cutlass[FB]_"),
    ("library", "FlashAttention", r"flash_fwd|flash_bwd|\bflash::|pytorch_flash::|"
                                      r"fmha_|_fmha|FmhaKernel|flash_attn"),
    # cuBLAS' GEMMs include CUTLASS instantiations named by CUTLASS's kernel generator
    # (cutlass_80_simt_sgemm_128x64_8x5_nt_align1): the wrapper's base name,
    # cutlass::Kernel2, is in several libraries' wheels, so the index cannot tell
    ("library", "cuBLAS", (r"^nvjet_|cublas|xmma_gemm|^sm\d+_xmma_|gemmSN_|gemmk1_|"
                              r"\bcutlass_\d+_(simt|tensorop|wmma)_[a-z0-9]*gemm|"
                              r"^(ampere|volta|turing|hopper|maxwell)_[a-z0-9_]*gemm|"
                              r"splitKreduce|gemv2[NT]_kernel|dot_kernel<")),
    ("library", "CUTLASS", r"\bcutlass"),
    ("library", "CUB", r"\bcub::|\bthrust::|DeviceRadixSort|DeviceScan|DeviceReduce|"
                           r"DeviceSegmented|DeviceSelect"),
    ("library", "cuFFT", (r"\b(regular|vector|transpose)_fft|fft_(r2c|c2r|c2c)|cufft")),
    ("library", "cuSPARSE", r"cusparse"),
    ("library", "cuRAND", r"curand"),
    # FBGEMM_GPU (TorchRec's embedding and permute kernels, some outside its namespace)
    # and its table-batched embeddings' generated kernels, one per optimizer and weighting
    # (split_embedding_backward_codegen_rowwise_adagrad_unweighted_find_long_segments, the
    # A100 trace of HTA's trace_diff; dense_embedding_*, batch_index_select_dim0_codegen_*)
    ("library", "FBGEMM", r"\bfbgemm_gpu::|\bfbgemm::|^void permute_pooled_embs_kernel|"
                          r"^void (split_)?embedding_(forward|backward)|_embedding_codegen|"
                          r"\b(split|dense)_embedding_\w*?codegen|"
                          r"\bbatch_index_select_dim0_codegen|^void recat_copy_async_kernel"),
    # Apex's fused optimizers (and DeepSpeed's copies of them): multi_tensor_apply_kernel
    # outside at::native, over Apex's functors and its adamMode_t
    ("library", "Apex", r"^void multi_tensor_apply_kernel<TensorListMetadata<|\badamMode_t\b|"
                        r"\bapex::"),
    ("library", "Tensile", r"^Cijk_|^Cij_"),
    ("library", "hipBLASLt", r"hipblaslt|^Custom_Cijk"),
    ("library", "rocBLAS", r"rocblas"),
    # MIOpen's own kernel names (src/kernels: MIOpenUtilKernels, MIOpenSubTensorOp*,
    # batched_transpose, the igemm_*_gtc assembly convolutions)
    ("library", "MIOpen", r"miopen|MIOpen|naive_conv_|^Op\dd|^gridwise_convolution|"
                          r"^SubTensorOp|^transpose_(NCHW2CNHW|CNHW2NCHW)|^batched_transpose_|"
                          r"^igemm_(fwd|bwd|wrw)_gtc|^Im[23]d2Col(_v\d+)?$|^Col2Im[23]d(_v\d+)?$"),
    # (ROCm's Kineto writes CK's mangled names, cut short where they are long: not
    # demangled, their namespaces still read)
    ("library", "Composable Kernel", r"\bck::|ck_tile::|device_[a-z_]*_xdl|^_ZN(2ck|7ck_tile)\d"),
    ("library", "rocPRIM", r"\brocprim::|\bhipcub::"),
    ("library", "rocFFT", r"rocfft|fft_rtc_"),
    # ROCclr's blit kernels: what hipMemcpy / hipMemset run on the GPU
    ("library", "HIP runtime", r"^__amd_rocclr_"),
    ("library", "Transformer Engine", r"\btransformer_engine::"),
    # vLLM's own kernels (130 of the 225 base names of its 0.33.0 wheel; the rest vendored
    # under their authors' names or named as a user's might be: not indexed, docs/owners.md)
    ("library", "vLLM", OWN_NAME + r"\bvllm::"),
    # (matched on the kernel's own name, its template arguments left out: a library's or
    # the user's kernel over c10::BFloat16 is not PyTorch's)
    ("framework", "PyTorch", (OWN_NAME + r"(\bat::|\bc10::|\btorch::|^void \(anonymous "
                                 r"namespace\)::(softmax|cunn_|indexing|elementwise)|"
                                 r"_cuda_kernel|\bcunn_)")),
    ("framework", "JAX/XLA runtime", (r"^(xla|jax)::|^redzone|^RedzoneChecker")),
)

# the files libraries ship their kernels in (a traced launch joined to a binary of the run)
FILES: tuple[tuple[str, str, str], ...] = (
    ("library", "cuBLAS", r"^libcublas"),
    ("library", "cuDNN", r"^libcudnn"),
    ("library", "NCCL", r"^libnccl"),
    ("library", "RCCL", r"^librccl"),
    ("library", "cuFFT", r"^libcufft"),
    ("library", "cuSPARSE", r"^libcusparse"),
    ("library", "cuRAND", r"^libcurand"),
    ("library", "rocBLAS", r"^librocblas"),
    ("library", "hipBLASLt", r"^libhipblaslt"),
    ("library", "MIOpen", r"^libMIOpen"),
    ("library", "rocPRIM", r"^librocprim"),
    ("library", "rocSPARSE", r"^librocsparse"),
    ("library", "rocRAND", r"^librocrand"),
    ("library", "rocFFT", r"^librocfft"),
    ("library", "FlashAttention", r"flash_attn|^libflash"),
    ("framework", "PyTorch", r"^libtorch|^libc10|^libcaffe2"),
)

USER_INPUT = Owner("user", None, "input")


def configured(names: tuple[str, ...], owners: dict[str, str]) -> Owner | None:
    """The owner ``[tool.occlint.owners]`` gives one of ``names`` (first glob that matches)."""
    for pattern, value in owners.items():
        if any(fnmatch.fnmatchcase(n, pattern) for n in names if n):
            kind, _, library = value.partition(":")
            return Owner(kind, library or None, "configuration")
    return None


@cache
def _compiled(table: tuple[tuple[str, str, str], ...]
              ) -> tuple[tuple[str, str, re.Pattern[str]], ...]:
    """The patterns of a table, compiled on first use (most runs never need them)."""
    return tuple((kind, library, re.compile(p)) for kind, library, p in table)


def by_name(name: str) -> Owner | None:
    own = None
    for kind, library, pattern in _compiled(NAMED):
        if pattern.pattern.startswith(OWN_NAME):
            own = own if own is not None else own_name(name)
            if pattern.search(own):
                return Owner(kind, library, "name")
        elif pattern.search(name):
            return Owner(kind, library, "name")
    return None


def own_name(name: str) -> str:
    """A demangled kernel name without its template arguments and parameters:
    ``void vllm::rms_norm_kernel<c10::BFloat16, 8>(float*, int)`` ->
    ``void vllm::rms_norm_kernel``."""
    out, depth = [], 0
    for ch in name:
        if ch in "<(":
            depth += 1
        elif ch in ">)" and depth:
            depth -= 1
        elif not depth:
            out.append(ch)
    return "".join(out)


def by_index(name: str) -> Owner | None:
    """The owner the shipped owner index knows for a kernel of this name, or None."""
    from occlint.judgement.owner_index import shipped_index

    index = shipped_index()
    found = index.lookup(name) if index is not None else None
    return Owner(found.kind, found.name, "index") if found is not None else None


def by_file(path: str) -> Owner | None:
    base = PurePath(path.split("!/")[-1]).name
    for kind, library, pattern in _compiled(FILES):
        if pattern.search(base):
            return Owner(kind, library, "binary")
    return None


def owner_of(name: str, demangled: str | None, owners: dict[str, str], *,
             named_in_run: bool = False, binary: str | None = None,
             generator: str | None = None, op: str | None = None,
             vendor: str | None = None) -> Owner:
    """The owner of a kernel (see the module's docstring for the order); ``generator``: the
    compiler the trace says launched it (XLA), owner of a kernel no library claims by name;
    ``op``: the framework op the trace says launched it (a kernel no library claims that an
    ``aten::`` op launches is PyTorch's own: ROCm's AOTriton attention, ``attn_fwd``);
    ``vendor``: the GPU's, where the trace says (RCCL keeps NCCL's kernel names)."""
    if demangled and demangled.startswith("_Z"):  # ROCm's Kineto: the mangled name only
        from occlint.model.demangle import demangle

        demangled = demangle(demangled)
    found = configured((name, demangled or ""), owners)
    if found is not None:
        return found
    if named_in_run:
        return USER_INPUT
    if binary is not None:
        found = by_file(binary)
        if found is not None:
            return found
    indexed = by_index(name if name.startswith(("_Z", "__nv_static_")) else demangled or name)
    found = by_name(demangled or name)
    if vendor == "amd":  # RCCL keeps NCCL's kernel names
        indexed, found = (Owner(o.kind, "RCCL", o.basis)
                          if o is not None and o.library == "NCCL" else o
                          for o in (indexed, found))
    if indexed is not None and not (indexed.kind == "framework" and found is not None
                                    and found.kind == "library"):
        return indexed
    # (a framework's template that a library instantiates is that library's: ATen's
    # elementwise kernel over fbgemm_gpu's functor, built into FBGEMM)
    if found is None and generator is not None:
        return Owner("generated", generator, "trace")
    if found is None and op is not None and op.startswith("aten::"):
        return Owner("framework", "PyTorch", "trace")
    return found or (USER_INPUT if binary is not None else Owner("user", None, "default"))
