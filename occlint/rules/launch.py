"""LCH: launch configuration — block size, grid size, oversubscription, tail effects."""

from __future__ import annotations

from typing import Any

from occlint.judgement.advice import balanced_block
from occlint.model.facts import width_pinned
from occlint.model.kernel import AmdResources
from occlint.occupancy import amd, nvidia
from occlint.rules.registry import kernel_finding, plural, rule

# On launches read from traces (every real grid, most not multiples of the unit count), the
# unit tail is reported only from this estimated cost up.
TRACE_MIN_TAIL_COST = 0.02


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _device(report) -> str:
    return report.device.name if report.device else report.kernel.arch


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f} us"


def launch_fix(report, block: int | None = None, grid: int | None = None
               ) -> dict[str, Any] | None:
    """The configuration a rule's advice names for a launch given on the command line or in
    a configuration (--block, --grid / --problem-size), as data: ``block`` threads or
    ``grid`` blocks where it changes them, else the launch's own; a grid that a new block
    changes is the problem size's at that block, the launch's for a grid-stride loop,
    else null (one element per thread or not known: the caller's grid follows its
    elements). None for a traced launch (the launch-time model names its fix, or none) and
    for a 2-D block or grid a rule would change along x."""
    launch = report.launch
    if report.block_source == "trace" or report.block_size is None:
        return None
    dims = launch.block_dims or (report.block_size, 1, 1)
    if (block is not None and dims[1:] != (1, 1)) or (
            grid is not None and launch.grid_dims and launch.grid_dims[1:] != (1, 1)):
        return None
    new_block = [block, 1, 1] if block is not None else list(dims)
    if grid is not None:
        new_grid: list[int] | None = [grid, 1, 1]
    elif block is None or launch.body == "grid-stride":
        new_grid = list(launch.grid_dims or (launch.grid, 1, 1)) if launch.grid else None
    elif launch.problem_size:
        new_grid = [-(-launch.problem_size // block), 1, 1]
    else:
        new_grid = None
    return {"block": new_block, "grid": new_grid, "dynamic_shared": launch.dynamic_lds}


def block_advice(report, ctx, advice: str) -> str:
    """A block rule's advice: :func:`planned`, or for a kernel whose element index steps by
    a width of its own (``blockIdx.x * TILE + threadIdx.x``) ``advice`` with that width
    changed too (the launch alone cannot change the block; the model prices no other)."""
    if not width_pinned(report.launch.facts):
        return planned(ctx, advice)
    return with_its_width(advice)


def with_its_width(advice: str) -> str:
    """``advice`` of another block for a kernel whose element index steps by its own width."""
    return (f"{advice}, with the width the kernel's element index steps by (blockIdx.x times "
            "its own width, not blockDim.x) changed to match: another block alone would skip "
            "or repeat elements")


def planned(ctx, advice: str) -> str:
    """A launch finding's advice: the launch-time model's fastest configuration when there
    is a plan (occlint.judgement.fastest), else ``advice``. With a plan that predicts
    nothing faster, the advice is to keep the launch: no rule advises what the model
    predicts slower."""
    plan = ctx.plan
    if plan is None:
        return advice
    if not plan.changes and plan.block_held:
        return ("without the kernel's source occlint cannot tell whether its dynamic shared "
                "memory follows the block (a tile), so no other block is priced; the "
                f"launch-time model predicts {_us(plan.now.total)} as it is "
                f"({plan.now.binding}-bound): pass the source with the trace to price the "
                "block")
    if not plan.changes:
        return ("the launch-time model predicts no configuration doing the same work "
                f"faster than this one ({_us(plan.now.total)}, {plan.now.binding}-bound): "
                "keep it")
    return (f"launch {plan.best.describe()}: the launch-time model predicts "
            f"{_us(plan.fastest.total)} ({plan.fastest.binding}-bound) against "
            f"{_us(plan.now.total)} now ({plan.now.binding}-bound)")


@rule("LCH001", "block-not-wave-multiple", "warning")
def block_not_wave_multiple(report, ctx):
    """Block size is not a multiple of the wavefront (warp) size.

    What it does:
    Checks that the threads per block are a whole number of wavefronts: 64 on GCN/CDNA,
    32 or 64 on RDNA (the code's wave mode), 32 on NVIDIA.
    Why it matters:
    Hardware runs whole wavefronts. A 100-thread block on a 32-wide GPU occupies four
    warps; the last runs 4 lanes and wastes 28, and still takes a wave slot and registers.
    How to fix:
    Round the block size to a multiple of the wave size (the message names the nearest
    ones) and let the grid cover the remainder with a bounds check. (At a source's launch:
    not for a kernel whose body reads no thread index, or only compares one with a constant
    to pick a thread's role, nor for an empty one or one talking to other GPUs; a block of
    one thread only where its kernel splits its work by thread; not for one block smaller
    than a warp.)
    Example:
    `occlint k.cubin --block 100` -> block of 100 threads is not a multiple of the 32-lane
    warp: its last warp runs 4 lanes, 28 idle (21.9% of the block's lanes); use 96 or 128.
    """
    block = report.block_size
    wave = report.kernel.wavefront_size
    if block is None or block % wave == 0 or report.block_source == "source":
        return  # a block from a source launch: the finding is on the launch's line
    if report.launch.threads_are_work:  # whole warps would compute something else
        return
    lanes = -(-block // wave) * wave
    idle = lanes - block
    down, up = block // wave * wave, lanes
    options = " or ".join(str(x) for x in (down, up) if x > 0)
    word = "warp" if report.kernel.vendor == "nvidia" else "wavefront"
    yield kernel_finding(
        "LCH001", report,
        f"block of {block} {plural(block, 'thread')} is not a multiple of the {wave}-lane "
        f"{word}: its last {word} runs {block % wave} {plural(block % wave, 'lane')}, {idle} "
        f"idle ({_pct(idle / lanes)} of the block's lanes)",
        advice=block_advice(report, ctx, f"use {options} threads per block"),
        fix=None if width_pinned(report.launch.facts) else launch_fix(report, block=up),
        block=block, wave_size=wave, idle_lanes=idle, nearest=[x for x in (down, up) if x],
        suggestions=[ctx.plan.best.threads] if ctx.plan is not None and ctx.plan.changes
        else [] if ctx.plan is not None else [x for x in (down, up) if x])


def _launch_limit(report) -> tuple[str, str] | None:
    """Why this block size cannot launch at all, with the error the runtime gives."""
    k, block, occ = report.kernel, report.block_size, report.occupancy
    res = k.resources
    if isinstance(res, AmdResources):
        if res.reqd_workgroup_size:
            x, y, z = res.reqd_workgroup_size
            if block != x * y * z:
                return (f"the kernel requires workgroups of {x}x{y}x{z} = {x * y * z} "
                        f"work-items (reqd_work_group_size), not {block}",
                        f"launch with {x}x{y}x{z}")
        if block > res.max_block_size:
            return (f"block of {block} exceeds the kernel's maximum flat workgroup size "
                    f"{res.max_block_size} (__launch_bounds__ / amdgpu_flat_work_group_size): "
                    "the launch fails", f"launch at most {res.max_block_size} work-items "
                    "per block, or raise the launch bound")
        if isinstance(occ, amd.AmdOccupancy) and occ.blocks_per_cu == 0:
            return f"the launch cannot run: {occ.reason}", "use a smaller block"
        return None
    arch = report.arch
    if res.required_block:
        x, y, z = res.required_block
        if block != x * y * z:
            return (f"the kernel requires blocks of {x}x{y}x{z} = {x * y * z} threads "
                    f"(.reqntid), not {block}", f"launch with {x}x{y}x{z}")
    limit = min(res.max_block_size or arch.max_threads_per_block, arch.max_threads_per_block)
    if block > limit:
        source = "its __launch_bounds__" if res.max_block_size else "the device"
        return (f"block of {block} exceeds the {limit} threads per block {source} allows: "
                "the launch fails with an invalid-configuration error",
                f"launch at most {limit} threads per block")
    if isinstance(occ, nvidia.NvOccupancy) and occ.blocks_per_sm == 0:
        if occ.limits["registers"] == 0:
            return (f"{res.registers} registers x {block} threads exceed the "
                    f"{arch.regs_per_block} registers a block may use: the launch fails with "
                    "'too many resources requested for launch'",
                    "use a smaller block, or cap registers with __launch_bounds__")
        if occ.limits["shared"] == 0:
            return (f"{res.shared_bytes} B static + {report.launch.dynamic_lds} B dynamic shared "
                    "memory exceed what one block may use on this device: the launch fails",
                    "use less shared memory per block")
    return None


@rule("LCH002", "block-exceeds-limit", "error")
def block_exceeds_limit(report, ctx):
    """The launch would fail: the block exceeds what the kernel or the device allows.

    What it does:
    Checks the block size against the kernel's maximum flat workgroup size or launch bound,
    a required workgroup size, the device's 1024-thread limit, and the registers and shared
    memory a block may use (NVIDIA's "too many resources requested for launch").
    Why it matters:
    Such a launch does not run at all; on HIP it fails with hipErrorInvalidValue or
    hipErrorLaunchFailure, on CUDA with cudaErrorInvalidConfiguration or
    cudaErrorLaunchOutOfResources, often only in production sizes.
    How to fix:
    Launch a block the kernel was compiled for, or compile the kernel for the block you
    launch (`__launch_bounds__(N)` makes the compiler budget registers for N threads).
    Example:
    `occlint k.hsaco --block 512` on a kernel with `__launch_bounds__(256)` -> block of 512
    exceeds the kernel's maximum flat workgroup size 256.
    """
    if report.block_size is None:
        return
    problem = _launch_limit(report)
    if problem:
        message, advice = problem
        yield kernel_finding("LCH002", report, message, advice=advice, block=report.block_size)


@rule("LCH003", "block-below-best-occupancy", "warning")
def block_below_best(report, ctx):
    """The launched block size cannot reach the kernel's best occupancy.

    What it does:
    For a block size you give (--block or a launch configuration), compares the occupancy
    with the best this kernel reaches at any block size it allows. On a CUDA / HIP launch
    site whose kernel's binary is in the run, the same check at the launch's block size,
    on the block argument's line.
    Why it matters:
    Some block sizes pack badly into the hardware's wave, block and barrier slots: 32-thread
    blocks on NVIDIA hit the 32-blocks-per-SM limit at half occupancy, and a block of 3
    wavefronts leaves slots unused.
    How to fix:
    Use one of the block sizes the message lists (they reach the best occupancy).
    Example:
    `occlint k.cubin --block 32 --device h100` -> block 32 reaches 50.0% occupancy; 64 or
    larger reaches 100.0%.
    """
    if report.block_source not in ("launch", "trace") or report.occupancy is None \
            or report.launch.threads_are_work:  # another block would compute other things
        return
    adv = ctx.advice
    best, current = adv.get("best_occupancy"), report.occupancy.occupancy
    if best is None or current >= best or _launch_limit(report):
        return
    sizes = adv["block_sizes_at_best"]
    shown = ", ".join(str(b) for b in sizes[:4]) + (", ..." if len(sizes) > 4 else "")
    yield kernel_finding(
        "LCH003", report,
        f"block {report.block_size} reaches {_pct(current)} occupancy; {shown} reach "
        f"{_pct(best)}, the best for this kernel on {_device(report)}",
        advice=block_advice(report, ctx, f"use {adv['recommended_block']} threads per block"),
        fix=None if width_pinned(report.launch.facts)
        else launch_fix(report, block=adv["recommended_block"]),
        occupancy=round(current, 6), best=best, block_sizes_at_best=sizes)


@rule("LCH101", "grid-tail-effect", "warning")
def grid_tail(report, ctx):
    """Grid is not a multiple of the device's CUs / WGPs / SMs (tail effect).

    What it does:
    With a grid size (--grid or a launch configuration) and a device, checks that the number
    of blocks is a multiple of the units the dispatcher spreads them over: WGPs on RDNA in
    WGP mode (HIP's multiProcessorCount), CUs on CDNA and in CU mode, SMs on NVIDIA.
    Why it matters:
    The busiest unit decides when the kernel ends. With 36 blocks on 35 WGPs one WGP runs
    two blocks while 34 idle for half the time; measured grid sweeps show time jumping just
    after every multiple of the unit count. The estimate is the busiest unit's extra
    blocks over a balanced grid. On an H200 (docs/validation.md) the measured jumps were
    about 0.8-1.2x the estimate with 5-8 blocks of 256 threads per SM, and under half of
    it with 1-4, where the SMs had room to spare. It shrinks as blocks per unit grow.
    On launches read from a profiler trace it is reported from an estimated 2% up.
    How to fix:
    Use a grid that is a multiple of the unit count (the message gives the nearest ones);
    for grid-stride loops any such grid above the oversubscription target works (at a
    source's launch of one below it, the tail is info: LCH103's grid is such a multiple). (A
    kernel whose source in the run never reads its block index, or only compares it with a
    constant to pick a block's role, is not judged: see LCH102.)
    Example:
    `occlint gamma.hsaco --device w7800 --block 256 --grid 1000` -> grid of 1000 is not a
    multiple of the 35 WGPs: 20 WGPs run 29 blocks, 15 run 28: an estimated 1.5% longer; nearest
    balanced grids 980 and 1015.
    """
    grid = ctx.advice.get("grid")
    if not grid or report.launch.grid <= grid["units"] or grid["cost"] == 0 \
            or not report.launch.blocks_split_work:
        return
    if report.block_source == "trace" and grid["cost"] < TRACE_MIN_TAIL_COST:
        return
    n, unit = grid["units"], ctx.advice["capacity"]["unit"]
    most, busy = grid["max_blocks_per_unit"], grid["busy_units"]
    nearest = " or ".join(str(g) for g in grid["nearest_balanced"])
    advice = f"use a grid of {nearest} blocks"
    fix = launch_fix(report, grid=grid["nearest_balanced"][-1])
    if report.launch.body != "grid-stride":  # a grid change alone would drop elements
        block = report.block_size
        better = balanced_block(report.launch.grid * block, n,
                                ctx.advice.get("block_sizes_at_best") or [], block)
        fix = launch_fix(report, block=better[0], grid=better[1]) if better and \
            report.launch.body == "per-element" else None
        advice = (f"if it loops over its data (grid-stride), use a grid of {nearest} blocks; "
                  "with one element per thread the grid follows the problem size: "
                  + (f"a block of {better[0]} threads gives {better[1]} blocks, "
                     f"{_pct(better[2])} over a balanced grid" if better
                     else "no block size at the best occupancy balances it better"
                     if "best_occupancy" in ctx.advice
                     else "its registers are unknown, so no block size is advised"))
    yield kernel_finding(
        "LCH101", report,
        f"grid of {report.launch.grid} blocks is not a multiple of the {n} {unit}s of "
        f"{_device(report)}: {busy} {plural(busy, unit)} {'runs' if busy == 1 else 'run'} "
        f"{most} {plural(most, 'block')} while {n - busy} "
        f"{'runs' if n - busy == 1 else 'run'} {most - 1}: an estimated {_pct(grid['cost'])} "
        "longer than a balanced grid (tail effect)", advice=planned(ctx, advice), fix=fix,
        grid=report.launch.grid, units=n, cost=grid["cost"],
        nearest_balanced=grid["nearest_balanced"])


@rule("LCH102", "grid-smaller-than-device", "warning")
def grid_too_small(report, ctx):
    """Fewer blocks than the device has CUs / WGPs / SMs.

    What it does:
    With a grid size and a device, checks that every unit gets at least one block. Not for
    a kernel whose source in the run never reads its block index, or only compares it with
    a constant (``if (blockIdx.x != 0) return;``, ``blockIdx.x == 0 ? send : recv``): one
    or two blocks by design, more would repeat a block's work; here or in the other grid
    rules.
    Why it matters:
    Units without a block sit idle for the whole kernel: 20 blocks on a 132-SM H100 leave
    112 SMs unused. Nsight Compute's "Small Grid" rule estimates the loss as
    (units - blocks) / units.
    How to fix:
    Launch at least one block per unit — smaller blocks, more work items per block split
    across blocks, or a grid-stride loop with the recommended grid. (At a source's launch:
    not for an empty kernel, ``<<<1, 1>>>`` of one not in the run, one talking to other GPUs
    through NCCL's device API or NVSHMEM, whose grid is its communicator's, nor one element
    per thread on a constant grid of blocks no larger than a warp.)
    Example:
    `occlint k.cubin --device h100 --block 256 --grid 20` -> grid of 20 blocks leaves 112 of
    132 SMs idle.
    """
    capacity = ctx.advice.get("capacity")
    grid = report.launch.grid
    if not capacity or not grid or grid >= capacity["units"] \
            or not report.launch.blocks_split_work:
        return
    n, unit = capacity["units"], capacity["unit"]
    recommended = ctx.advice["oversubscription"]["recommended_grid"]
    yield kernel_finding(
        "LCH102", report,
        f"grid of {grid} {plural(grid, 'block')} leaves {n - grid} of {n} {unit}s of "
        f"{_device(report)} idle "
        f"(up to {_pct((n - grid) / n)} of the device unused)",
        advice=planned(ctx, f"launch at least {n} blocks" + (
            f"; a grid-stride kernel: {recommended}" if recommended else "")),
        fix=launch_fix(report, grid=recommended or n)
        if report.launch.body == "grid-stride" else None, grid=grid, units=n)


@rule("LCH103", "grid-below-oversubscription-target", "warning")
def grid_below_oversubscription(report, ctx):
    """Too few waves in flight to hide memory latency (oversubscription target).

    What it does:
    With a grid size and a device, compares the wavefronts (warps) the grid launches with
    the device's concurrent wave slots times the oversubscription factor (default 10,
    configurable as `oversubscription`).
    Why it matters:
    Memory-bound grid-stride kernels need many more waves than the device holds at once to
    keep memory busy: on a Radeon PRO W7800 the gamma-correction kernel only saturated at
    about 1,400 workgroups of 256 threads, and on an H200 the same kernel kept speeding up
    several full waves deep.
    How to fix:
    Launch the recommended grid: the smallest multiple of the unit count that reaches the
    target. Compute-bound kernels may not need it; lower `oversubscription` for them.
    On launches read from a profiler trace, where occlint cannot see whether the kernel
    loops over its data, the finding is info; where the kernel's source (or PTX) in the run
    shows it does not (one element per thread, a block per row), there is none; nor where
    the launch-time model, reading that source, advises fewer threads than now (a loop
    whose warps each end in an atomic on one address: LCH106-LCH108 name the grid).
    Example:
    `occlint gamma.hsaco --device w7800 --block 256 --grid 1000` -> grid of 1000 blocks
    (8,000 waves) is below 10x the 2,240 wave slots (22,400 waves); use a grid of 2800.
    """
    over = ctx.advice.get("oversubscription")
    grid = report.launch.grid
    facts = report.launch.known_facts
    if not over or not grid or not over["recommended_grid"] \
            or not report.launch.blocks_split_work \
            or (facts is not None and facts.loop != "grid-stride"):
        return  # the kernel's source says it is no grid-stride loop: its grid is its work
    waves = ctx.advice["grid"]["waves"]
    if waves >= over["target_waves"]:
        return
    plan = ctx.plan
    if plan is not None and plan.facts is not None and plan.changes and (
            plan.best.threads * plan.best.blocks < plan.current.threads * plan.current.blocks):
        return  # the model, on the kernel's own facts, advises fewer threads (its atomics,
        # say): the premise is wrong, and its own finding (LCH106-LCH108) says so
    slots = ctx.advice["capacity"]["wave_slots"]
    word = "warps" if report.kernel.vendor == "nvidia" else "waves"
    traced = report.block_source == "trace"
    unit = ctx.advice["capacity"]["unit"]
    recommended = over["recommended_grid"]
    yield kernel_finding(
        "LCH103", report,
        f"grid of {grid} {plural(grid, 'block')} ({waves:,} {plural(waves, word[:-1])}) is "
        "below the oversubscription target of "
        f"{over['factor']:g}x the {slots:,} {word[:-1]} slots of {_device(report)} "
        f"({over['target_waves']:,} {word}) that memory-bound grid-stride kernels need",
        advice=planned(ctx, ("if this kernel is a grid-stride loop, " if traced else "")
                       + f"use a grid of {recommended} blocks "
                         f"({recommended // ctx.advice['capacity']['units']} per {unit})"),
        severity="info" if traced else None, fix=launch_fix(report, grid=recommended),
        grid=grid, waves=waves, target_waves=over["target_waves"],
        recommended_grid=recommended)


@rule("LCH104", "problem-size-tail", "info")
def problem_tail(report, ctx):
    """Grid, waves and tail efficiency for a one-element-per-thread problem size.

    What it does:
    With --problem-size N (or a launch configuration) and a device, derives the grid for
    one element per thread, the number of full-device waves of blocks, and how full the
    last wave is.
    Why it matters:
    A last wave that is almost empty costs nearly a full wave of time; with few waves that
    tail is a large share of the runtime (Nsight Compute's tail-effect rule).
    How to fix:
    Nothing, when the efficiency is high. Otherwise change the block size so the grid fills
    the last wave, or switch to a grid-stride loop with the recommended grid.
    Example:
    `occlint k.cubin --device h100 --block 256 --problem-size 1000000` -> 3907 blocks =
    3.7 device waves; tail efficiency 92.5%.
    """
    problem = ctx.advice.get("problem")
    if not problem:
        return
    yield kernel_finding(
        "LCH104", report,
        f"{problem['size']:,} elements at one per thread: grid of {problem['grid']} blocks "
        f"= {problem['device_waves']:.2f} full-device waves of blocks on {_device(report)}; "
        f"tail efficiency {_pct(problem['tail_efficiency'])}", **problem)



# what binds the launch as it is, in the model, where a finding of its own says so (LCH107,
# LCH108)
SPECIFIC_BINDINGS = ("block starts", "atomics")
# atomics (or the blocks' reductions) that take this share of the launch's predicted time,
# though they do not bind it, are named in LCH106's message (what moving the grid changes)
ATOMICS_NOTED = 0.1


def _moved(ctx, binding: str | None) -> bool:
    """The model moves the launch, and what binds it now is ``binding`` (None: a binding
    with no finding of its own)."""
    plan = ctx.plan
    if plan is None or not plan.changes:
        return False
    if binding is None:
        return plan.now.binding not in SPECIFIC_BINDINGS
    return plan.now.binding == binding


def model_message(code: str, ctx, device: str) -> str | None:
    """LCH106-LCH108's message on ``device`` where the model moves the launch and what
    binds it now is the rule's (LCH106: a binding with no rule of its own); else None."""
    plan = ctx.plan
    if code == "LCH106" and _moved(ctx, None):
        now = plan.now
        parts = [f"{_us(t)} of it {what}" for t, what in (
            (now.atomics, "atomics queuing on their addresses"),
            (now.reductions, "the blocks' reductions over their threads"))
            if t >= ATOMICS_NOTED * now.total]
        queued = f" ({'; '.join(parts)})" if parts else ""
        message = (f"the launch-time model predicts {_us(now.total)} for "
                   f"{plan.current.describe()} on {device}, bound by {now.binding}{queued}")
    elif code == "LCH107" and _moved(ctx, "block starts"):
        b = plan.current.threads
        rate = plan.device.block_rate_1024 if b > 512 else plan.device.block_rate
        message = (f"block starts bind: {plan.current.blocks:,} blocks of {b} threads take "
                   f"{_us(plan.now.starts)} to start on {device} ({rate / 1e9:.2f} billion "
                   f"a second, {plan.device.basis}) of the {_us(plan.now.total)} the "
                   "launch-time model predicts")
    elif code == "LCH108" and _moved(ctx, "atomics"):
        message = (f"atomics bind: they queue on their addresses for {_us(plan.now.atomics)} "
                   f"of the {_us(plan.now.total)} the launch-time model predicts for "
                   f"{plan.current.describe()} on {device}")
    else:
        return None
    return (f"{message}; {plan.best.describe()} does the same work in "
            f"{_us(plan.fastest.total)}")


def model_data(ctx) -> dict[str, Any]:
    """A model finding's data: what binds the launch now, the predicted times."""
    plan = ctx.plan
    return {"binding": plan.now.binding, "predicted_ns": round(plan.now.total * 1e9),
            "fastest_ns": round(plan.fastest.total * 1e9)}


def _model_finding(code: str, report, ctx):
    message = model_message(code, ctx, _device(report))
    if message is not None:
        yield kernel_finding(code, report, message, advice=planned(ctx, ""),
                             **model_data(ctx))


@rule("LCH106", "launch-slower-than-model-fastest", "warning")
def slower_than_fastest(report, ctx):
    """The launch-time model predicts a configuration doing the same work faster.

    What it does:
    Predicts the launch's time from the device's measured behaviour (bandwidth against
    bytes in flight, the block start rate, arithmetic issue, atomics on one address, a
    block's tree or sum over its threads; the table in device_db/launch_model.toml) and
    the kernel's facts (what a thread loads, stores and computes per element, its loop
    and atomics, read from its source), and the
    time of every configuration that does the same work: every block of whole warps for
    one element per thread, blocks x grids for a grid-stride loop, blocks for a loop over
    the block. Raised when the fastest is predicted to save at least 8% and no other
    launch finding (LCH001-LCH105) already names it; where block starts or atomics bind
    the launch as it is, LCH107 and LCH108 say so instead. A launch site read from source
    alone is priced too (one element per thread on one NVIDIA device, its registers read
    at 32 and 64 a thread, a grid following the problem's size at an assumed 2^26
    elements: occlint.judgement.site_plan). The finding's
    `fix` is that configuration as data; `occlint validate` times it against the launch
    as it is.
    Why it matters:
    Bandwidth follows the bytes in flight per SM rather than occupancy, and arithmetic the
    warps that issue it: a launch at full occupancy can still leave time on the table, and
    one at low occupancy may have nothing to gain.
    How to fix:
    Launch the configuration the message names (the JSON's `fix`).
    Example:
    a 2-D kernel in 4 x 32 blocks (rows of 16 bytes) on an H100 -> the model predicts
    908 us, bound by memory; 256 x 1 blocks do the same work in 310 us (timed: 574 us ->
    322 us, 44 % less; the claim 44-74 %).
    """
    yield from _model_finding("LCH106", report, ctx)


@rule("LCH107", "block-start-bound", "warning")
def block_start_bound(report, ctx):
    """The launch is bound by the rate at which blocks start.

    What it does:
    The launch-time model (LCH106) finds the launch as it is bound by block starts: the
    device starts blocks at a fixed rate, measured (device_db/launch_model.toml:
    block_rate, about 1.65 billion blocks a second on an H100, whatever their size), and
    this launch's blocks each do too little to hide it. Raised when a configuration doing
    the same work with fewer, larger blocks is predicted to save at least 8% and no other
    launch finding names it.
    Why it matters:
    Tiny blocks with little work cost their start, whatever the occupancy: one float per
    thread in 32-thread blocks reads at 424 GB/s on an H100, in 256-thread blocks at
    2,394 GB/s.
    How to fix:
    Launch the configuration the message names (the JSON's `fix`): larger blocks, or more
    elements per thread.
    Example:
    64-thread blocks of a float copy, 1,048,576 of them on an H100 -> the model predicts
    642 us, 635 us of it starting blocks; blocks of 256 take 293 us (timed: 62 % less).
    """
    yield from _model_finding("LCH107", report, ctx)


@rule("LCH108", "atomics-bound", "warning")
def atomics_bound(report, ctx):
    """The launch is bound by atomics queuing on their address.

    What it does:
    The launch-time model (LCH106) finds the launch as it is bound by its atomics: those
    on one address are served one after another (device_db/launch_model.toml:
    atomic_one_ns, about 1.8 ns each on an H100), those on a block's own address queue
    more with more threads per block (atomic_block_curve), a set of words every block adds
    to (a privatised histogram's flush) one atomic a block on each word (atomic_set_ns), so
    a grid-stride loop whose every thread ends in an atomic on one address gets slower
    with every thread added, and a flush with every block.
    Raised when a configuration doing the same work is predicted to save at least 8% (for
    such a loop, fewer threads) and no other launch finding names it.
    Why it matters:
    A grid sized for occupancy or oversubscription multiplies the atomics: 10,560 blocks
    of a loop ending in `atomicAdd(out, acc)` run about ten times slower than 132.
    How to fix:
    Launch the configuration the message names (the JSON's `fix`), or reduce within the
    block first (one atomic per block).
    Example:
    a grid-stride loop in 42,240 blocks of 1,024 threads, each ending in atomicAdd on one
    address, on an H100 -> 43 million atomics queue for 76.7 of the 76.8 ms the model
    predicts; 4,224 blocks of 64 threads do the same work in 1.1 ms (timed: 76.2 ms ->
    0.56 ms).
    """
    yield from _model_finding("LCH108", report, ctx)
