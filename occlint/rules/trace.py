"""Rules on launches read from profiler traces: waves, theoretical occupancy, the trace
against the binary, launch overhead (a grid typed by the user gets LCH101's unit tail
instead of LCH105)."""

from __future__ import annotations

import math

from occlint.occupancy import amd
from occlint.rules.launch import planned
from occlint.rules.registry import RULES, Finding, kernel_finding, plural, rule

# Nsight Compute's tail-effect rule reports a partial last wave from this share up.
PARTIAL_WAVE_MIN_SHARE = 0.2

_LIMITER_WORDS = {
    "registers": "the number of registers per thread", "shared": "the shared memory per block",
    "warps": "the block size (warps per SM)", "blocks": "the blocks per SM",
    "barriers": "the barriers per SM", "vgpr": "the VGPRs per lane", "agpr": "the AGPRs",
    "sgpr": "the SGPRs per wave", "lds": "the LDS per work-group", "waves": "the block size",
    "workgroups": "the work-groups per CU",
}


@rule("LCH105", "partial-last-wave", "warning")
def partial_wave(report, ctx):
    """The grid ends with a partial wave of blocks that may account for much of the runtime.

    What it does:
    For launches read from a profiler trace, counts the waves of blocks: how many times
    the device's concurrent blocks (units x blocks per unit at the kernel's occupancy) fit
    into the grid — Nsight Compute's "Waves Per SM". Fires,
    like Nsight Compute's tail-effect rule, when there is at least one full wave and a
    partial one, and the partial wave may take 20% or more of the runtime (1 / the number
    of waves, rounded up, assuming blocks of equal duration). A launch whose register count
    the trace does not give has blocks per unit only at most (its occupancy with no
    registers): it fires only if the tail holds at every blocks per unit up to that most,
    with the waves and the share as ranges and no saving estimated.
    Why it matters:
    During the last, partial wave part of the device idles. With 2 full waves and a partial
    one, a third of the runtime can run at a fraction of the device.
    How to fix:
    Size the grid to a whole number of waves (the message gives the grid), give each block
    more work so there are more waves, or use a grid-stride loop with a grid of whole waves.
    Example:
    vec_add launched with 3,907 blocks of 256 threads on an H100 (8 blocks per SM, 132
    SMs): 3.70 waves; the partial wave may account for up to 25.0% of the runtime.
    """
    grid = ctx.advice.get("grid")
    if not grid or not report.device or report.block_source != "trace" \
            or not report.launch.blocks_split_work:
        return
    if grid["device_waves"] is None:  # no registers: blocks per unit known only at most
        yield from _partial_wave_at_any_occupancy(report, ctx.advice["capacity"])
        return
    waves = grid["device_waves"]
    full = math.floor(waves)
    if full < 1 or waves == full:
        return
    share = 1 / math.ceil(waves)
    if share < PARTIAL_WAVE_MIN_SHARE:
        return
    capacity = ctx.advice["capacity"]["concurrent_blocks"]
    partial = report.launch.grid - full * capacity
    whole = [full * capacity, math.ceil(waves) * capacity]
    yield kernel_finding(
        "LCH105", report,
        f"grid of {report.launch.grid} blocks is {waves:.2f} waves of the {capacity} blocks "
        f"{report.device.name} runs at once: {full} full wave{'s' if full > 1 else ''} and a "
        f"partial wave of {partial} {plural(partial, 'block')}, which may account for up to "
        f"{100 * share:.1f}% of the runtime (tail effect)",
        advice=planned(ctx, f"use a grid of whole waves ({whole[0]} or {whole[1]} blocks), "
                            "or more work per block"), grid=report.launch.grid,
        nearest_balanced=whole, waves=round(waves, 4), full_waves=full,
        partial_blocks=partial, blocks_per_wave=capacity, partial_share=round(share, 4),
        tail_efficiency=round(waves / math.ceil(waves), 4))


def _partial_wave_at_any_occupancy(report, capacity):
    """LCH105 for a launch whose register count the trace does not give: its blocks per unit
    are 1 to ``blocks_per_unit_at_most`` (its occupancy with no registers). Fires only when
    every one of them gives full waves and a partial wave of 20 % or more of the runtime;
    the share is then a range, and no saving is estimated."""
    most, n = capacity.get("blocks_per_unit_at_most"), capacity["units"]
    grid = report.launch.grid
    if not most or not n:  # (one block per unit at most: known, the exact rule's case)
        return
    shares = []
    for per_unit in range(1, most + 1):
        waves = grid / (n * per_unit)
        if waves < 1 or waves == math.floor(waves) \
                or 1 / math.ceil(waves) < PARTIAL_WAVE_MIN_SHARE:
            return
        shares.append(1 / math.ceil(waves))
    unit = capacity["unit"]
    few, many = grid / (n * most), grid / n
    low, high = min(shares), max(shares)
    yield kernel_finding(
        "LCH105", report,
        f"grid of {grid} blocks is {few:.2f} to {many:.2f} waves of blocks on "
        f"{report.device.name} ({n} {unit}s, 1 to {most} blocks per {unit} as its registers, "
        "which the trace does not give, allow): at every occupancy it ends with a partial "
        f"wave, which may account for {100 * low:.1f}% to {100 * high:.1f}% of the runtime "
        "(tail effect)",
        advice=f"a grid of whole waves is a multiple of {n} x the kernel's blocks per {unit} "
               "(its code object tells them: read it with the trace), or give each block "
               "more work", grid=grid, waves=[round(few, 4), round(many, 4)],
        full_waves=math.floor(few), blocks_per_unit_at_most=most,
        partial_share=round(high, 4), partial_share_low=round(low, 4))


@rule("OCC108", "theoretical-occupancy-below-max", "info")
def below_max(report, ctx):
    """A traced launch's theoretical occupancy is below the device's maximum.

    What it does:
    For launches read from a profiler trace, states the theoretical occupancy of the real
    launch (block size, registers, shared memory / LDS) and what limits it whenever it is
    below 100% — what Nsight Compute's TheoreticalOccupancy rule reports for the launches
    it replays. OCC101-OCC107 add how much to cut when occupancy is below the threshold.
    Why it matters:
    Fewer resident warps (waves) leave less work to hide latency with; the time at stake is
    Nsight Compute's estimate, 1 - occupancy, an upper bound.
    How to fix:
    Reduce the limiting resource (the message names it), or change the block size.
    Example:
    a cuDNN kernel of 256 threads using 96 KiB of shared memory on an H100 -> theoretical
    occupancy 25.0% (16 of 64 warps per SM), limited by the shared memory per block.
    """
    occ = report.occupancy
    if report.block_source != "trace" or occ is None or occ.occupancy >= 1:
        return
    limiters = " and ".join(_LIMITER_WORDS.get(x, x) for x in occ.limiters)
    if isinstance(occ, amd.AmdOccupancy):
        held = f"{occ.waves_per_simd} of {occ.max_waves_per_simd} waves per SIMD"
    else:
        held = f"{occ.warps_per_sm} of {occ.max_warps_per_sm} warps per SM"
    yield kernel_finding(
        "OCC108", report,
        f"theoretical occupancy {100 * occ.occupancy:.1f}% ({held}) at block "
        f"{report.block_size}, limited by {limiters}",
        occupancy=round(occ.occupancy, 6), limiters=list(occ.limiters))


@rule("TRC101", "trace-binary-mismatch", "warning")
def trace_binary_mismatch(report, ctx):
    """The trace's resources for a launch disagree with the binary of the same kernel.

    What it does:
    When a run reads both a trace and the binary holding a traced kernel (joined by mangled
    name, or by demangled signature, and architecture), compares the registers, shared
    memory / LDS and scratch the trace recorded with the binary's. Register counts are
    compared as the profilers report them (CUPTI: at least 16 per thread; rocprofv3: the
    granule-rounded VGPRs).
    Why it matters:
    The binary read is not the one that ran (a stale build, another library version or a
    JIT-compiled variant); advice based on it would be wrong.
    How to fix:
    Analyse the binary the traced program loaded, or profile the build you analyse.
    Example:
    trace says 40 registers per thread, the cubin's kernel uses 32 -> the binary read is
    not the one that ran.
    """
    launch = report.trace
    if launch is None or not launch.mismatches:
        return
    parts = [f"{m['field']} {m['trace']} in the trace, {m['binary']} in the binary"
             for m in launch.mismatches]
    yield kernel_finding(
        "TRC101", report, "the trace and the binary disagree: " + "; ".join(parts)
        + f" (binary {report.kernel.file})", advice="analyse the binary the traced program "
        "loaded", mismatches=launch.mismatches)


@rule("LCH201", "launch-overhead", "warning", scope="stream")
def launch_overhead(burst, ctx):
    """Many short launches separated by idle gaps as long as the kernels (launch overhead).

    What it does:
    On each stream of a trace, finds runs of at least 20 launches, separated by gaps under
    100 µs, whose mean duration is at most 50 µs and whose mean idle gap between one
    kernel's end and the next one's start is at least half the mean duration. Reports, once
    per stream, the launches of those runs, the mean kernel time, the mean gap and the idle
    fraction. The GPU idle time it reports is not part of any kernel's time: the JSON keeps
    it apart (`launch_overhead_idle_ns`) from the kernels' time at stake.
    Why it matters:
    Each launch costs the host and the GPU's command processor 5-10 µs; a bitonic sort of
    32,768 integers is 120 launches of 3-4 µs, so the GPU idles as long as it works. The
    time at stake is the idle time between the kernels.
    How to fix:
    Capture the sequence in a CUDA / HIP graph (`torch.cuda.graphs`, `cudaStreamBeginCapture`,
    `hipGraph`), fuse the kernels (or let `torch.compile` do it), or remove host
    synchronisations between the launches.
    Example:
    120 launches of bitonic_step, mean 2.4 µs, mean gap 3.1 µs: the stream idles 56% of the
    run.
    """
    yield Finding(
        rule="LCH201", name=RULES["LCH201"].name, severity=RULES["LCH201"].severity,
        message=(f"{burst['launches']} short launches on stream {burst['stream']} "
                 f"({burst['bursts']} run{'s' if burst['bursts'] > 1 else ''} over "
                 f"{burst['span_ns'] / 1000:.1f} µs): mean kernel time "
                 f"{burst['mean_ns'] / 1000:.2f} µs, mean gap {burst['mean_gap_ns'] / 1000:.2f} "
                 f"µs, idle {100 * burst['idle_fraction']:.1f}% of the run "
                 f"({burst['kernels']} kernel{'s' if burst['kernels'] > 1 else ''}, "
                 f"{burst['groups_count']} launch shapes, "
                 f"{burst['framework_launches']} through framework ops)"
                 + _issued(burst.get("issued_by") or [])),
        file=burst["trace"], kernel=burst["kernel"], demangled=burst["demangled"],
        arch=burst["arch"], device=burst["device"],
        advice="capture the launches in a CUDA/HIP graph, fuse the kernels, or remove "
               "synchronisations between them",
        data={k: burst[k] for k in ("stream", "launches", "mean_ns", "mean_gap_ns",
                                    "idle_fraction", "busy_ns", "idle_ns", "span_ns",
                                    "start_ns", "bursts", "framework_launches",
                                    "issued_by", "parts")})


@rule("LCH202", "graph-capturable-function", "warning", scope="region")
def graph_capturable_function(region, ctx):
    """A function of yours whose calls leave the GPU idle while they launch (capture it).

    What it does:
    In a trace with Python stacks (the PyTorch profiler's `with_stack=True`), measures each
    call of your functions: its duration on the host, the kernels it started and the time
    some kernel ran inside it. Reports the outermost function whose typical call starts at
    least 20 kernels, leaves the GPU idle at least half of the call, and never waits for the
    GPU (no synchronisation, blocking copy or free: a graph could not capture it). Its
    saving is what replaying each call from a CUDA graph saves: the call's host time net of
    what the profiler adds to it (a factor of 1.4 to 6.7 measured, so the range is wide),
    less what the graph's replay costs; the bursts of LCH201 inside its calls are counted
    here, not twice.
    Why it matters:
    A training step of a small model launches hundreds of kernels whose Python, dispatch
    and launches take longer than the kernels: replayed from a graph, one step of a small
    transformer went from 7.7 ms to 1.75 ms on an H100.
    How to fix:
    Capture the function once and replay it (`torch.cuda.graphs.make_graphed_callables`,
    `torch.cuda.CUDAGraph`, `torch.compile(mode="reduce-overhead")`, a CuPy stream's
    `begin_capture`), with static input shapes and buffers, and optimizers created with
    `capturable=True`.
    Example:
    train_step() at train.py:66: 3 calls, 216 launches each, the GPU idle 90% of the call.
    """
    calls = region["calls"]
    read = region["kernels_read"]
    yield Finding(
        rule="LCH202", name=RULES["LCH202"].name, severity=RULES["LCH202"].severity,
        message=(f"{region['function']}() at {region['path'] or region['file']}:"
                 f"{region['line']}: {calls} call{'s' if calls > 1 else ''}"
                 + (f" in the trace's first {read:,} launches (read that far for Python "
                    f"frames)" if read is not None else "") + ", "
                 f"{region['launches']} launches{' each' if calls > 1 else ''}, the GPU idle "
                 f"{100 * region['idle_fraction']:.0f}% of a call ({_ms(region['duration_ns'])} "
                 f"traced); nothing in it waits for the GPU; replayed from a graph, a call "
                 f"would take an estimated {_ms(region['call_low_ns'])} to "
                 f"{_ms(region['call_high_ns'])} less"),
        file=region["trace"], kernel=region["kernel"], demangled=region["kernel"],
        arch=region["arch"], device=region["device"],
        advice=f"capture {region['function']}() in a CUDA graph and replay it "
               "(torch.cuda.graphs, torch.compile(mode=\"reduce-overhead\"))",
        data={k: region[k] for k in ("function", "file", "line", "path", "calls",
                                     "launches", "duration_ns", "busy_ns", "idle_ns",
                                     "idle_fraction", "call_low_ns", "call_high_ns",
                                     "kernels_read")})


def _ms(ns: float) -> str:
    return f"{ns / 1e6:.2f} ms" if ns >= 1e6 else f"{ns / 1e3:.0f} µs"


def _issued(issuers: list[dict]) -> str:
    """Where the bursts were issued: the user's function and line with the most idle time
    (as the trace's Python frames link the launches), and how many places besides."""
    if not issuers:
        return ""
    top = issuers[0]
    where = f"{top['path'] or top['file']}:{top['line']}"
    more = f" and {len(issuers) - 1} more place{'s' if len(issuers) > 2 else ''}" \
        if len(issuers) > 1 else ""
    return f"; issued by {top['function']}() at {where}{more}"
