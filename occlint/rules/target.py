"""DEV: code object / cubin architecture against the device."""

from __future__ import annotations

from occlint.analysis.kernels import OTHER_VENDOR
from occlint.devices.db import shipped_db
from occlint.rules.registry import kernel_finding, rule


@rule("DEV101", "arch-mismatch", "error")
def arch_mismatch(report, ctx):
    """The code was built for another architecture than the device.

    What it does:
    With --device, checks that each code object's target (AMD gfx processor, generic
    targets by their members) or cubin's SM can run on the device: a cubin runs on the
    same major compute capability with an equal or higher minor, an `a` cubin only on
    exactly its own.
    Why it matters:
    The runtime refuses to load such code (hipErrorNoBinaryForGpu,
    cudaErrorNoKernelImageForDevice) or, on NVIDIA, silently JIT-compiles PTX if present.
    How to fix:
    Add the device's architecture to the build (`--offload-arch=gfx1100`,
    `-gencode arch=compute_90,code=sm_90`).
    Example:
    `occlint k.hsaco --device w7800` on a gfx90a code object -> code object for gfx90a
    cannot run on AMD Radeon PRO W7800 (gfx1100).
    """
    if report.status == "arch-mismatch":
        yield kernel_finding("DEV101", report, report.message,
                             advice=f"build for {report.device.arch_name}" if report.device
                             else None)


@rule("DEV105", "device-not-analysed", "info", scope="input")
def devices_not_analysed(result, ctx):
    """Some devices of the run cannot run this binary's code: it is analysed for the others.

    What it does:
    With several devices (`devices = ["w7800", "mi300x"]`), each kernel is analysed for the
    devices that can run its code; once per input, this names the devices that cannot and
    the targets the code was built for. Code of another vendor than every device of the run
    (the ROCm libraries of a wheel that ships CUDA ones too, run with `--device h100`) is
    not analysed: its targets are named once per input (one device of the code's own
    vendor that cannot run it: DEV101, per kernel).
    Why it matters:
    A gfx942 code object is not meant for a Radeon PRO W7800; one error per kernel and
    device would bury the findings that matter. When no device of the run can run the
    binary's code, it is analysed for its own architecture and this says so once, as a
    warning (with one device, DEV101 reports the mismatch).
    How to fix:
    Nothing, if the binary is not meant for that device; else build for it.
    Example:
    `occlint --device w7800 --device mi300x k.gfx942.hsaco` -> not analysed for AMD Radeon
    PRO W7800: its code targets gfx942.
    """
    from occlint.model.finding import Finding
    from occlint.rules.registry import RULES

    r = RULES["DEV105"]
    unfit = dict(result.unfit)
    other = unfit.pop(OTHER_VENDOR, None)
    if other:  # another vendor's code than the run's devices (a wheel's ROCm libraries)
        shown = ", ".join(other[:8]) + (f" and {len(other) - 8} more" if len(other) > 8 else "")
        yield Finding(rule=r.code, name=r.name, severity=r.severity, file=result.path,
                      message=f"not analysed: its code for {shown} is another vendor's than "
                              "every device of the run",
                      advice="analyse it with a device of its vendor (--device)",
                      data={"targets": list(other)})
    nowhere = unfit.pop("", None)
    if nowhere:
        devices = ", ".join(sorted(unfit))
        yield Finding(rule=r.code, name=r.name, severity="warning", file=result.path,
                      message=f"none of the run's devices ({devices}) can run its code for "
                              f"{', '.join(nowhere)}: analysed for that architecture instead",
                      advice="add a device it is built for, or build it for one of them",
                      data={"devices": sorted(unfit), "targets": list(nowhere)})
        return
    for device, targets in sorted(unfit.items()):
        yield Finding(rule=r.code, name=r.name, severity=r.severity, file=result.path,
                      device=device,
                      message=f"not analysed for {device}: its code targets "
                              f"{', '.join(targets)}, which cannot run there",
                      data={"device": device, "targets": list(targets)})


@rule("DEV102", "wave-size-mismatch", "error")
def wave_size_mismatch(report, ctx):
    """Wave32 code on a wave64-only device, or the reverse.

    What it does:
    Checks the code object's wavefront size against the sizes the device's architecture
    runs (GCN/CDNA: 64 only; RDNA: 32 and 64; gfx1250: 32 only).
    Why it matters:
    The hardware cannot run a wave size it does not support; the code object will not load.
    How to fix:
    Rebuild for the device (RDNA: `-mwavefrontsize64` / `-mno-wavefrontsize64`).
    Example:
    a wave32 gfx11-generic object analysed for a wave64-only device -> wave32 code cannot
    run on gfx906.
    """
    if report.status == "wave-mismatch":
        yield kernel_finding("DEV102", report, report.message)


@rule("DEV103", "unknown-arch", "warning")
def unknown_arch(report, ctx):
    """No limits are known for the code object's architecture.

    What it does:
    Reports kernels whose target is missing from the device database (a newer processor),
    so no occupancy can be computed without --device.
    Why it matters:
    The resources are still read and reported, but occupancy and launch advice need the
    architecture's limits.
    How to fix:
    Pass --device for the GPU you run on, or add the architecture in a --device-file.
    Example:
    a gfx1310 code object -> no limits for gfx1310 in the device database.
    """
    if report.status == "unknown-arch":
        yield kernel_finding("DEV103", report, report.message,
                             advice="pass --device, or describe it with --device-file")


@rule("DEV104", "generic-target", "info")
def generic_target(report, ctx):
    """Generic target: occupancy uses the compiler's generic limits.

    What it does:
    For code objects built for a generic target (gfx9-generic ... gfx12-generic) analysed
    without --device, states that occupancy follows the generic processor model the compiler
    assumes, which can differ from the GPU it runs on.
    Why it matters:
    gfx11-generic code is compiled as if it had 1,024 VGPRs per SIMD; on a gfx1100 (1,536)
    the same kernel runs more waves.
    How to fix:
    Pass --device to see the occupancy on a specific GPU.
    Example:
    `occlint k.gfx11-generic.hsaco` -> generic target: limits of gfx11-generic as the
    compiler assumes them.
    """
    if report.device is None and report.kernel.arch in shipped_db().amd_generics \
            and report.status == "ok":
        yield kernel_finding("DEV104", report, report.message,
                             advice="pass --device for a specific GPU")
