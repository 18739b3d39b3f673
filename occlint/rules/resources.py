"""SPL / DYN: spills, scratch and local memory, dynamic stacks, unknown dynamic LDS."""

from __future__ import annotations

from occlint.model.kernel import AmdResources
from occlint.rules.registry import kernel_finding, rule


@rule("SPL101", "register-spills", "warning")
def register_spills(report, ctx):
    """The kernel spills registers to scratch / local memory.

    What it does:
    Reports AMD VGPR and SGPR spill counts from the metadata, and NVIDIA's spill (STL/LDL)
    instructions recorded in the cubin, with the scratch or stack frame they use.
    Why it matters:
    Spilled values go through the memory hierarchy: each spill store and reload costs far
    more than a register access. Launch bounds that force a low register cap are a common
    cause — the same bound can speed one kernel up and slow another down.
    How to fix:
    Relax the register cap (`__launch_bounds__` minimum blocks / waves, `-maxrregcount`,
    `amdgpu_waves_per_eu`), reduce live values, or accept fewer waves.
    Example:
    `occlint k.hsaco` -> spills 48 SGPRs and 12 VGPRs to scratch (64 bytes per lane).
    """
    res = report.kernel.resources
    if isinstance(res, AmdResources):
        if not (res.vgpr_spill or res.sgpr_spill):
            return
        yield kernel_finding(
            "SPL101", report,
            f"spills {res.sgpr_spill} SGPRs and {res.vgpr_spill} VGPRs to scratch "
            f"({res.scratch_bytes} bytes per work-item)",
            advice="relax the register cap (launch bounds, amdgpu_waves_per_eu) or reduce "
                   "live values", vgpr_spill=res.vgpr_spill, sgpr_spill=res.sgpr_spill,
            scratch_bytes=res.scratch_bytes)
        return
    if not res.spill_instructions:
        return
    cap = f" under a register cap of {res.max_reg_count}" if res.max_reg_count and \
        res.max_reg_count < 255 else ""
    yield kernel_finding(
        "SPL101", report,
        f"{res.spill_instructions} spill/refill instructions through local memory "
        f"({res.local_bytes} bytes of stack frame per thread){cap}",
        advice="relax __launch_bounds__ minBlocks or -maxrregcount, or reduce live values",
        spill_instructions=res.spill_instructions, local_bytes=res.local_bytes,
        max_reg_count=res.max_reg_count)


@rule("SPL102", "scratch-memory", "info")
def scratch_memory(report, ctx):
    """The kernel uses scratch (AMD private segment) or local memory (NVIDIA) without spilling.

    What it does:
    Reports per-work-item scratch / stack frame bytes of kernels that do not spill: private
    arrays indexed at run time, large structs on the stack, function calls.
    Why it matters:
    Scratch is backed by device memory; every access is a memory access, and the runtime
    reserves scratch for every resident wave.
    How to fix:
    Index private arrays with compile-time constants (fully unrolled loops) so they stay in
    registers, or move large arrays to shared memory / LDS.
    Example:
    `occlint k.hsaco` -> uses 16400 bytes of scratch per work-item.
    """
    res = report.kernel.resources
    if isinstance(res, AmdResources):
        if res.scratch_bytes and not (res.vgpr_spill or res.sgpr_spill):
            yield kernel_finding("SPL102", report,
                                 f"uses {res.scratch_bytes} bytes of scratch per work-item",
                                 scratch_bytes=res.scratch_bytes)
    elif res.local_bytes and not res.spill_instructions:
        yield kernel_finding("SPL102", report,
                             f"uses {res.local_bytes} bytes of local memory (stack frame) per "
                             "thread", local_bytes=res.local_bytes)


@rule("SPL103", "dynamic-stack", "warning")
def dynamic_stack(report, ctx):
    """The kernel's stack size is not known statically (recursion, VLAs, indirect calls).

    What it does:
    Reports AMD kernels whose metadata or descriptor marks a dynamic stack, and NVIDIA
    kernels that call recursive functions.
    Why it matters:
    The scratch / stack figure in the binary is only the kernel's own frame; the runtime
    reserves a default stack per thread (1 KiB by default on CUDA) and a deep recursion
    overflows it or forces a larger reservation for every resident thread.
    How to fix:
    Remove recursion and variable-length arrays from device code, or set the stack size
    explicitly (hipDeviceSetLimit / cudaDeviceSetLimit(cudaLimitStackSize)).
    Example:
    `occlint k.hsaco` -> uses a dynamic stack: scratch size unknown at compile time.
    """
    res = report.kernel.resources
    if isinstance(res, AmdResources):
        if res.dynamic_stack:
            yield kernel_finding(
                "SPL103", report,
                "uses a dynamic stack (recursion, variable-length arrays or indirect calls): "
                f"scratch size unknown at compile time (at least {res.scratch_bytes} bytes "
                "per work-item)", scratch_bytes=res.scratch_bytes)
    elif res.uses_recursion:
        yield kernel_finding("SPL103", report,
                             "calls a recursive function: stack size unknown at compile time")


@rule("DYN101", "dynamic-lds-unknown", "info", vendors=("amd",))
def dynamic_lds_unknown(report, ctx):
    """The kernel uses dynamic LDS / shared memory, whose size the binary does not record.

    What it does:
    Reports AMD kernels that use `extern __shared__` memory (code object v5+ records it) or
    OpenCL `__local` pointer arguments when no dynamic size was given.
    Why it matters:
    Dynamic LDS is sized at launch; occupancy computed without it can be far too high.
    How to fix:
    Pass the launch's size: `--dynamic-lds BYTES` (`--dynamic-shared` on NVIDIA), or a
    `dynamic-lds` entry in the launch configuration of `[tool.occlint]`.
    Example:
    `occlint k.hsaco` -> uses dynamic LDS; occupancy assumes 0 bytes: pass --dynamic-lds.
    """
    res = report.kernel.resources
    if isinstance(res, AmdResources) and res.uses_dynamic_lds and not report.launch.dynamic_lds:
        yield kernel_finding(
            "DYN101", report,
            f"uses dynamic LDS (extern __shared__ / __local arguments) whose size the binary "
            f"does not record: occupancy counts only its {res.lds_bytes} bytes of static LDS",
            advice="pass --dynamic-lds BYTES or set dynamic-lds in the launch configuration")
