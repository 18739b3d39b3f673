"""BIN / IO: facts about the binary itself, and inputs that could not be read."""

from __future__ import annotations

from occlint.rules.registry import RULES, Finding, kernel_finding, rule


def _input_finding(code: str, file: str, entry: str | None, message: str, arch=None,
                   **data) -> Finding:
    r = RULES[code]
    return Finding(rule=r.code, name=r.name, severity=r.severity, message=message, file=file,
                   entry=entry, arch=arch, data=data)


@rule("BIN101", "metadata-descriptor-mismatch", "warning")
def metadata_descriptor_mismatch(report, ctx):
    """The AMD metadata note and the kernel descriptor disagree.

    What it does:
    Compares each kernel's metadata (`.vgpr_count`, `.sgpr_count`, LDS, scratch, kernarg
    size, wave size, WGP mode, dynamic stack) with its 64-byte kernel descriptor and lists
    the differences, saying which value occlint uses.
    Why it matters:
    The hardware allocates what the descriptor says. LLVM pads the descriptor's VGPRs for
    kernels with a waves-per-EU maximum (and, from LLVM 20, for LDS-limited kernels), and
    some assembly-built code objects carry hand-written metadata: tools that read only the
    metadata then report the wrong occupancy.
    How to fix:
    Usually nothing — occlint computes occupancy from the descriptor. If the padding is a
    surprise, check `amdgpu_waves_per_eu` / `__launch_bounds__` on the kernel.
    Example:
    metadata says 9 VGPRs, the descriptor allocates 224 (occlint uses the descriptor).
    """
    if not report.kernel.mismatches:
        return
    parts = [f"{m.field} (metadata {m.metadata}, descriptor {m.descriptor}; uses {m.used})"
             for m in report.kernel.mismatches]
    yield kernel_finding("BIN101", report,
                         "metadata and kernel descriptor disagree on " + "; ".join(parts),
                         mismatches=[m.field for m in report.kernel.mismatches])


@rule("BIN104", "partial-records", "info")
def partial_records(report, ctx):
    """Part of the kernel's records is missing (no metadata note, or no kernel descriptor).

    What it does:
    Reports kernels read from the kernel descriptor alone (stripped metadata) or from the
    metadata alone (descriptor symbol not found).
    Why it matters:
    Without metadata, VGPRs are only known to the descriptor's encoding granule and spill
    counts and launch bounds are unknown; without the descriptor the allocation cannot be
    cross-checked.
    How to fix:
    Analyse the unstripped code object as the compiler wrote it.
    Example:
    no metadata note: resources decoded from the kernel descriptor.
    """
    for note in report.kernel.notes:
        yield kernel_finding("BIN104", report, note)


@rule("BIN102", "ptx-only", "info", scope="input")
def ptx_only(result, ctx):
    """Kernels present only as PTX: no register or shared-memory data.

    What it does:
    Lists fatbin entries that hold PTX but no cubin for the analysed architecture.
    Why it matters:
    The driver JIT-compiles PTX at load time; register counts and occupancy are then decided
    on the user's machine and cannot be checked statically.
    How to fix:
    Add SASS for the architecture to the build (`-gencode arch=compute_90,code=sm_90`).
    Example:
    PTX only (compute_90): the driver compiles it at load time; no register data.
    """
    for a in result.artifacts:
        if a.kind in ("ptx", "lto-ir"):
            yield _input_finding("BIN102", a.file, a.entry, a.message, arch=a.arch,
                                 kernels=list(a.kernels))


@rule("BIN103", "llvm-bitcode", "info", scope="input")
def llvm_bitcode(result, ctx):
    """LLVM bitcode (-fgpu-rdc, LTO): no resource data until it is linked.

    What it does:
    Reports offload entries that hold LLVM bitcode instead of a code object: relocatable
    device code (`-fgpu-rdc`) in objects, with the old or the new offload driver.
    Why it matters:
    Registers and LDS are only decided when the device code is linked; analyse the linked
    executable or library instead.
    How to fix:
    Run occlint on the final executable or shared library.
    Example:
    gamma.o[hip-amdgcn-amd-amdhsa--gfx90a]: LLVM bitcode, no resource data until it is linked.
    """
    for a in result.artifacts:
        if a.kind == "bitcode":
            yield _input_finding("BIN103", a.file, a.entry, a.message, arch=a.arch)


@rule("BIN105", "other-vendor-code", "info", scope="input")
def other_vendor_code(result, ctx):
    """Device code of a vendor occlint does not read: SYCL's SPIR-V for Intel GPUs.

    What it does:
    Names each offload entry holding SYCL / SPIR-V code (`sycl-spir64`, `sycl-spir64_gen`),
    found beside AMD or NVIDIA code or alone.
    Why it matters:
    Such code is neither an error nor analysed: a wheel that ships Intel GPU libraries
    beside CUDA and ROCm ones (bitsandbytes' `libbitsandbytes_xpu*.so`) is read for the
    code occlint knows, and says once what it left.
    How to fix:
    Nothing: analyse the AMD or NVIDIA libraries.
    Example:
    libbitsandbytes_xpu2025.so[sycl-spir64_gen]: SYCL / SPIR-V device code (Intel GPUs):
    occlint reads AMD and NVIDIA code.
    """
    for a in result.artifacts:
        if a.kind == "foreign":
            yield _input_finding("BIN105", a.file, a.entry, a.message, arch=a.arch)


@rule("IO101", "unreadable-input", "error", scope="input")
def unreadable_input(result, ctx):
    """An input, or part of it, could not be read.

    What it does:
    Turns every reading error (truncated or corrupted files, unsupported formats, lying
    container sizes, decompression bombs) into a finding, so CI fails on it even when other
    inputs were analysed.
    Why it matters:
    A binary occlint cannot read is a binary nobody checked.
    How to fix:
    Fix or rebuild the file; exclude it from the paths if it is not GPU code.
    Example:
    lib.so[.hip_fatbin/bundle1]: compressed bundle claims 1073741824 bytes but 2576 are
    present: truncated, or its size field lies.
    """
    for e in result.errors:
        yield _input_finding("IO101", e.file, e.entry, e.message)


__all__ = ["kernel_finding"]
