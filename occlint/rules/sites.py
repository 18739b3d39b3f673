"""Launch-site rules: the LCH rules on launches read from CUDA / HIP source, and SRC rules.

Each check receives one launch site as a :class:`SiteReport` (the file, the site, the
kernel's definition when the run has it, the targets: configured devices, or the strictest
wave size when none is configured; the facts of the kernel's binaries in the run) and the
judge's :class:`Context`, and yields findings located at the launch argument that causes
them. Numbers come from the same helpers as the binary rules (occlint.judgement.advice:
tail effect, oversubscription grid). Inline suppressions (``// occlint: ignore[LCH001]`` on
the line or the line above) move findings to the site's suppressed ones
(:meth:`SiteReport.keep`), shown by ``--show-suppressed``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from occlint.judgement.advice import balanced_block, grid_stride, site_oversubscription, tail
from occlint.judgement.cost import WARN_MIN_SAVING
from occlint.model.facts import width_pinned
from occlint.rules import launch as _launch  # (registers the LCH rules first)
from occlint.rules.launch import model_data, model_message, planned
from occlint.rules.registry import RULES, Context, Finding, plural, rule, site_rule

if TYPE_CHECKING:  # a run without sources never loads their model
    from occlint.analysis.sites import SiteReport, Target
    from occlint.model.source import Param, SourceFile


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def site_finding(code: str, s: SiteReport, param: Param | Any, message: str,
                 advice: str | None = None, target: Target | None = None,
                 fix: dict[str, Any] | None = None, **data: Any) -> Finding:
    r, site = RULES[code], s.site
    from occlint.model.source import Param

    span = param.span if isinstance(param, Param) else site.span
    return Finding(rule=r.code, name=r.name, severity=r.severity, message=message,
                   file=s.source.path, kernel=site.kernel, demangled=site.kernel_text,
                   arch=target.device.arch_name if target and target.device else None,
                   device=target.device.name if target and target.device else None,
                   advice=advice, data=data, line=span.line, column=span.column,
                   end_line=span.end_line, end_column=span.end_column, fix=fix)


def site_fix(s: SiteReport, block: int | None = None, grid: int | None = None
             ) -> dict[str, Any] | None:
    """The configuration a site rule's advice names, as data: ``block`` threads or ``grid``
    blocks along x where it changes them, else the site's own; null where the site computes
    it (a grid that follows the problem size, which a new block changes too; a shared size
    it computes). None where the site's block or grid is not one-dimensional."""
    site = s.site
    if (block is not None and site.block is not None and site.block.dims[1:] != (1, 1)) or \
            (grid is not None and site.grid is not None and site.grid.dims[1:] != (1, 1)):
        return None
    if block is None:
        block_dims = list(site.block.dims) if site.block and site.block.known else None
    else:
        block_dims = [block, 1, 1]
    if grid is not None:
        grid_dims: list[int] | None = [grid, 1, 1]
    elif site.grid is not None and site.grid.fixed and site.grid.known and (
            block is None or grid_stride(s.kernel) is True):
        grid_dims = list(site.grid.dims)
    else:
        grid_dims = None
    shared = site.shared.total if site.shared is not None else 0
    return {"block": block_dims, "grid": grid_dims, "dynamic_shared": shared}


@site_rule("LCH001")
def site_block_not_wave_multiple(s: SiteReport, ctx: Context) -> Iterator[Finding]:
    block = s.site.block.total if s.site.block else None
    if block is None or _threads_are_the_work(s) or (
            block == 1 and (s.kernel is None or s.kernel.thread_indexed is not True)):
        return  # (a block of one thread is deliberate unless its kernel splits by thread)
    seen: set[int] = set()
    for t in s.targets:
        wave = t.wave
        if t.device is not None:  # the build's wave size, when its binary is in the run
            built = {b["wave"] for b in s.binaries if b["device"] == t.device.name}
            if len(built) == 1 and None not in built:
                wave = built.pop()
        if block % wave == 0 or wave in seen or _one_partial_warp(s, wave):
            continue
        seen.add(wave)
        lanes = -(-block // wave) * wave
        idle = lanes - block
        down, up = block // wave * wave, lanes
        options = [x for x in (down, up) if x > 0]
        yield site_finding(
            "LCH001", s, s.site.block,
            f"block of {block} {plural(block, 'thread')} is not a multiple of the {wave}-lane "
            f"{t.word} of {t.name}: its last {t.word} runs {block % wave} "
            f"{plural(block % wave, 'lane')}, {idle} idle "
            f"({_pct(idle / lanes)} of the block's lanes)",
            advice=planned(ctx, _block_advice(
                s, f"use {' or '.join(map(str, options))} threads per block")),
            target=t, fix=None if width_pinned(s.kernel.facts if s.kernel else None)
            else site_fix(s, block=up if up <= t.max_block else down),
            block=block, wave_size=wave, idle_lanes=idle, suggestions=options)


@site_rule("LCH002")
def site_block_exceeds_limit(s: SiteReport, ctx: Context) -> Iterator[Finding]:
    from occlint.analysis.sites import MAX_BLOCK_Z

    grid = s.site.grid.total if s.site.grid is not None and s.site.grid.fixed else None
    if (s.site.block is not None and s.site.block.total == 0) or grid == 0:
        what = s.site.grid if grid == 0 else s.site.block
        yield site_finding(  # (cccl's tests of the error path do it on purpose: noqa there)
            "LCH002", s, what, f"a {'grid' if grid == 0 else 'block'} of 0: the launch fails "
            "with an invalid-configuration error", advice="launch at least one block of at "
            "least one thread", block=s.site.block.total if s.site.block else None, grid=grid)
        return
    if s.site.block is None:
        return
    block, dims = s.site.block.total, s.site.block.dims
    bound = s.kernel.launch_bounds[0] if s.kernel and s.kernel.launch_bounds else None
    if block is not None and bound is not None and block > bound:
        yield site_finding(
            "LCH002", s, s.site.block,
            f"block of {block} threads exceeds the kernel's __launch_bounds__({bound}) "
            f"(line {s.kernel.span.line}): the launch fails",  # type: ignore[union-attr]
            advice=f"launch at most {bound} threads per block, or raise the launch bound",
            block=block, launch_bounds=bound)
        return
    limit = min(t.max_block for t in s.targets)
    if block is not None and block > limit:
        yield site_finding(
            "LCH002", s, s.site.block,
            f"block of {block} threads exceeds the {limit} threads per block a GPU allows: "
            "the launch fails with an invalid-configuration error",
            advice=f"launch at most {limit} threads per block", block=block, limit=limit)
    elif dims[2] is not None and dims[2] > MAX_BLOCK_Z:
        yield site_finding(
            "LCH002", s, s.site.block,
            f"block z dimension {dims[2]} exceeds the {MAX_BLOCK_Z} a GPU allows: the launch "
            "fails", advice=f"use a z dimension of at most {MAX_BLOCK_Z}", block_z=dims[2])


@site_rule("LCH003")
def site_block_below_best(s: SiteReport, ctx: Context) -> Iterator[Finding]:
    block = s.site.block.total if s.site.block else None
    if block is None or _threads_are_the_work(s):
        return
    for b in s.binaries:
        if b["block_source"] != "source" or b["block"] != block or b["occupancy"] is None \
                or b["best_occupancy"] is None:
            continue
        if b["occupancy"] >= b["best_occupancy"]:
            continue
        sizes = b["block_sizes_at_best"]
        shown = ", ".join(str(x) for x in sizes[:4]) + (", ..." if len(sizes) > 4 else "")
        yield site_finding(
            "LCH003", s, s.site.block,
            f"block {block} reaches {_pct(b['occupancy'])} occupancy for the kernel in "
            f"{b['file']}; {shown} reach {_pct(b['best_occupancy'])}, the best on "
            f"{b['device']}",
            advice=_block_advice(s, f"use {b['recommended_block']} threads per block"),
            target=None, fix=None if width_pinned(s.kernel.facts if s.kernel else None)
            else site_fix(s, block=b["recommended_block"]),
            occupancy=b["occupancy"], best=b["best_occupancy"],
            block_sizes_at_best=sizes, binary=b["file"], device_name=b["device"])


def _block_advice(s: SiteReport, advice: str) -> str:
    """Another block's advice, with the kernel's own width where its index steps by it."""
    return _launch.with_its_width(advice) if s.kernel is not None \
        and width_pinned(s.kernel.facts) else advice


def _threads_are_the_work(s: SiteReport) -> bool:
    """The site's kernel is in the run and its threads are its work
    (:func:`occlint.model.facts.threads_are_work`), its time waits on other GPUs (it
    talks to them: no block shortens that) or its body is empty, or the site is serial
    (:attr:`SiteReport.serial`)."""
    if s.kernel is None:
        return s.serial
    return s.kernel.threads_are_work or s.kernel.communicates is not None or s.idle


def _one_partial_warp(s: SiteReport, wave: int) -> bool:
    """The site launches one block of fewer threads than a warp (raft's tests'
    ``<<<1, 16>>>`` over 16 elements): one warp runs it whatever the block, so no block
    size is faster."""
    grid = s.site.grid
    return grid is not None and grid.fixed and grid.total == 1 and \
        s.site.block is not None and (s.site.block.total or wave) < wave


def _grid_is_its_elements(s: SiteReport, wave: int) -> bool:
    """A kernel of one element per thread launched on a constant grid of blocks no larger
    than a warp: its grid x block threads are its elements, and no smaller block gives
    more blocks, so no launch of the same work fills more units."""
    block = s.site.block.total if s.site.block else None
    return grid_stride(s.kernel) is False and block is not None and 0 < block <= wave


def _block_is_free(s: SiteReport) -> bool:
    """Whether another block size does the same work at this site: a 1-D block of a kernel
    of one element per thread (a bounds check) that fixes no block (no launch bounds, no
    template, no barrier: a tile's shared arrays and its blockDim-sized steps follow the
    block it was written for)."""
    k, block = s.kernel, s.site.block
    if k is None or block is None or k.body != "per-element" or k.launch_bounds is not None \
            or k.template or block.dims[1:] != (1, 1):
        return False
    return not (k.facts is not None and (k.facts.barrier or k.facts.shared_per_thread))


def _fixed_grid(s: SiteReport) -> int | None:
    """The site's grid when it is a constant the grid rules can judge; None where it is not,
    where it is 0 (no launch: LCH002), where the kernel's body never reads which block it
    is (every block does the same work: more or fewer blocks do not split it), where the
    kernel talks to other GPUs (its grid is its communicator's: one CTA per barrier or
    channel), where its body is empty or where the site is serial."""
    grid = s.site.grid
    if (s.kernel is not None and (s.kernel.block_indexed is False or s.kernel.communicates)
            ) or (s.site.block is not None and s.site.block.total == 0) or s.serial or s.idle:
        return None
    return grid.total if grid is not None and grid.fixed and grid.total else None


@site_rule("LCH101")
def site_grid_tail(s: SiteReport, ctx: Context) -> Iterator[Finding]:
    grid = _fixed_grid(s)
    if grid is None:
        return
    for t in s.targets:
        if not t.units or grid <= t.units:
            continue
        g = tail(grid, t.units)
        if g["cost"] == 0:
            continue
        n, most = t.units, g["max_blocks_per_unit"]
        balanced = g["nearest_balanced"]
        if s.kernel is not None and s.kernel.queued_on_one_address:
            # more threads queue more atomics on the one address: only fewer blocks pay
            balanced = [x for x in balanced if x < grid] or balanced
        nearest = " or ".join(str(x) for x in balanced)
        advice: str | None = f"use a grid of {nearest} blocks"
        fix = site_fix(s, grid=balanced[-1]) if grid_stride(s.kernel) is True else None
        gain = g["cost"]  # what the advice saves, by the same estimate
        block = s.site.block.total if s.site.block else None
        if grid_stride(s.kernel) is not True:  # a grid change alone would drop elements
            wave = t.wave
            better = balanced_block(grid * block, n, list(range(wave, t.max_block + 1, wave)),
                                    block) if block and _block_is_free(s) else None
            advice = ((f"if {s.site.kernel} loops over its data (grid-stride), use a grid of "
                       f"{nearest} blocks; " if s.kernel is None else "")
                      + ("with one element per thread the grid follows the problem size: "
                         f"a block of {better[0]} threads gives {better[1]} blocks, "
                         f"{_pct(better[2])} over a balanced grid" if better else ""))
            advice = advice.rstrip("; ") or None
            if better and s.kernel is not None:
                gain -= better[2]
                fix = site_fix(s, block=better[0], grid=better[1])  # (the same elements)
        elif _below_oversubscription(s, t, ctx, grid) is not None:
            advice = fix = None  # LCH103 names a grid for it, a multiple of the units
        finding = site_finding(
            "LCH101", s, s.site.grid,
            f"grid of {grid} {plural(grid, 'block')} is not a multiple of the {n} {t.unit}s of "
            f"{t.name}: {g['busy_units']} {plural(g['busy_units'], t.unit)} "
            f"{'runs' if g['busy_units'] == 1 else 'run'} {most} {plural(most, 'block')} while "
            f"{n - g['busy_units']} {'runs' if n - g['busy_units'] == 1 else 'run'} "
            f"{most - 1}: an estimated {_pct(g['cost'])} longer than a balanced grid (tail "
            "effect)", advice=planned(ctx, advice or "") if ctx.plan else advice, target=t,
            fix=fix, grid=grid, units=n, cost=g["cost"], nearest_balanced=g["nearest_balanced"])
        if advice is None or gain < WARN_MIN_SAVING:
            finding.severity = "info"  # a fact: no change the site can make is known to pay
        yield finding


@site_rule("LCH102")
def site_grid_too_small(s: SiteReport, ctx: Context) -> Iterator[Finding]:
    grid = _fixed_grid(s)
    if grid is None:
        return
    for t in s.targets:
        if not t.units or grid >= t.units or _grid_is_its_elements(s, t.wave):
            continue
        n = t.units
        yield site_finding(
            "LCH102", s, s.site.grid,
            f"grid of {grid} {plural(grid, 'block')} leaves {n - grid} of {n} {t.unit}s of "
            f"{t.name} idle "
            f"(up to {_pct((n - grid) / n)} of the device unused)",
            advice=planned(ctx, f"launch at least {n} blocks"), target=t,
            fix=site_fix(s, grid=n) if grid_stride(s.kernel) is True
            and not s.kernel.queued_on_one_address else None, grid=grid, units=n)


def _below_oversubscription(s: SiteReport, t: Any, ctx: Context, grid: int
                            ) -> dict[str, Any] | None:
    """The oversubscription advice for a grid-stride kernel's site whose grid is below the
    target on ``t`` (memory-bound grid-stride kernels only: known from the kernel's body;
    not one whose atomics on one address queue longer with more threads: a loop ending each
    thread in ``atomicAdd(out, acc)`` runs about ten times slower in 10,560 blocks than in
    132, issue 28); None where it is not."""
    if grid_stride(s.kernel) is not True or s.kernel.queued_on_one_address:
        return None
    over = site_oversubscription(s.site, t, ctx.settings)
    if over is None or grid * over["waves_per_block"] >= over["target_waves"]:
        return None
    return over


@site_rule("LCH103")
def site_grid_below_oversubscription(s: SiteReport, ctx: Context
                                     ) -> Iterator[Finding]:
    grid = _fixed_grid(s)
    if grid is None:
        return
    for t in s.targets:
        over = _below_oversubscription(s, t, ctx, grid)
        if over is None:
            continue
        waves = grid * over["waves_per_block"]
        word = "warps" if t.vendor == "nvidia" else "waves"
        recommended = over["recommended_grid"]
        yield site_finding(
            "LCH103", s, s.site.grid,
            f"grid of {grid} {plural(grid, 'block')} ({waves:,} {word}) is below the "
            "oversubscription target "
            f"of {ctx.settings.oversubscription:g}x the {t.wave_slots:,} {word[:-1]} slots "
            f"of {t.name} ({over['target_waves']:,} {word}) that the memory-bound "
            f"grid-stride kernel {s.site.kernel} needs",
            advice=f"use a grid of {recommended} blocks ({recommended // t.units} per "  # type: ignore[operator]
                   f"{t.unit})", target=t, fix=site_fix(s, grid=recommended), grid=grid,
            waves=waves,
            target_waves=over["target_waves"], recommended_grid=recommended)


def _site_model_check(code: str):
    """A model finding (LCH106-LCH108) at a launch site the model priced from its source
    (occlint.judgement.site_plan: its one device)."""
    def check(s: SiteReport, ctx: Context) -> Iterator[Finding]:
        if ctx.plan is None:
            return
        t = next(t for t in s.targets if t.device is not None)
        message = model_message(code, ctx, t.name)
        if message is not None:
            yield site_finding(code, s, s.site.block, message, advice=planned(ctx, ""),
                               target=t, **model_data(ctx))
    return check


for _code in ("LCH106", "LCH107", "LCH108"):
    site_rule(_code)(_site_model_check(_code))


@rule("SRC101", "source-too-large", "info", scope="source")
def source_too_large(source: SourceFile, ctx: Context) -> Iterator[Finding]:
    """A source file too large to parse (generated code), or with too many launches.

    What it does:
    Files over 4 MiB are not parsed, and at most 20,000 launch sites are read from one
    file; this finding says so, once per file.
    Why it matters:
    Such files are almost always generated (amalgamations, instantiation tables); parsing
    them would cost time and memory for findings nobody reads, so occlint skips them
    instead of slowing every commit.
    How to fix:
    Nothing, usually; exclude generated files (`extend-exclude`) to silence it, or lint
    the generator's output for one configuration.
    Example:
    `occlint gen/all_kernels.cu` (9 MiB) -> source of 9,437,184 bytes is over the 4 MiB
    cap: not parsed.
    """
    if not source.truncated:
        return
    from occlint.readers.source import MAX_SOURCE_BYTES

    r = RULES["SRC101"]
    if source.size > MAX_SOURCE_BYTES:
        message = (f"source of {source.size:,} bytes is over the {MAX_SOURCE_BYTES >> 20} MiB "
                   "cap: not parsed")
    else:
        message = "more launch sites than occlint reads from one file: the rest are skipped"
    yield Finding(rule=r.code, name=r.name, severity=r.severity, message=message,
                  file=source.path, data={"size": source.size})


@rule("SRC102", "source-syntax-error", "info", scope="source")
def source_syntax_error(source: SourceFile, ctx: Context) -> Iterator[Finding]:
    """Regions of a source file that do not parse: nothing is read from them.

    What it does:
    Reports the first region tree-sitter could not parse (and how many there are); launches
    and kernels inside such regions are not read, so no other finding comes from them.
    Why it matters:
    Macros that expand to syntax, unusual extensions or a half-edited file can hide launch
    sites from occlint; the finding tells you where it stopped reading.
    How to fix:
    Nothing, if the file compiles: occlint parses without a preprocessor. Otherwise fix the
    syntax; or suppress with `// occlint: ignore[SRC102]` on the line.
    Example:
    `occlint broken.cu` -> 1 region does not parse (from line 12): nothing read from it.
    """
    if not source.error_regions:
        return
    first = source.error_regions[0]
    n = len(source.error_regions)
    r = RULES["SRC102"]
    yield Finding(rule=r.code, name=r.name, severity=r.severity,
                  message=(f"{n} region{'s' if n != 1 else ''} of this file "
                           f"do{'es' if n == 1 else ''} not parse (first at line "
                           f"{first.line}): nothing is read from "
                           f"{'them' if n != 1 else 'it'}"),
                  file=source.path, data={"regions": n}, line=first.line, column=first.column,
                  end_line=first.end_line, end_column=first.end_column)
