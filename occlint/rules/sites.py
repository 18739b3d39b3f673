"""Launch-site rules: the LCH rules on launches read from CUDA / HIP source, and SRC rules.

Each check receives one :class:`LaunchSite` and a :class:`SiteContext` (the file, the
kernel's definition when the file has it, the targets: configured devices, or the
strictest wave size when none is configured) and yields findings located at the launch
argument that causes them. Numbers come from the same helpers as the binary rules
(occlint.judgement.advice: tail effect, oversubscription grid). Inline suppressions
(``// occlint: ignore[LCH001]`` on the line or the line above) move findings to a list of
suppressed ones, shown by ``--show-suppressed``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from occlint.devices.models import AmdArch, Device
from occlint.judgement.advice import AdviceSettings, grid_for_target, tail
from occlint.model.source import LaunchSite, Param, SourceFile, SourceKernel
from occlint.occupancy.amd import resolve_wgp_mode
from occlint.rules import launch as _launch  # noqa: F401  (registers the LCH rules first)
from occlint.rules.registry import RULES, Finding, rule, site_rule

STRICTEST_AMD_WAVE = 64  # without devices, any AMD target: the wave64 of CDNA
MAX_BLOCK = 1024  # threads per block on every supported GPU (and HIP's default bound)
MAX_BLOCK_Z = 64


@dataclass(frozen=True, slots=True)
class Target:
    """What a launch site is checked against: one device, or a vendor's wave size."""

    device: Device | None
    vendor: str
    wave: int
    max_block: int = MAX_BLOCK
    units: int | None = None
    unit: str = ""
    wave_slots: int | None = None

    @property
    def name(self) -> str:
        if self.device is not None:
            return self.device.name
        return "AMD GPUs (wave64 on CDNA)" if self.vendor == "amd" else "NVIDIA GPUs"

    @property
    def word(self) -> str:
        return "warp" if self.vendor == "nvidia" else "wavefront"


def device_target(device: Device) -> Target:
    arch = device.arch
    if isinstance(arch, AmdArch):
        wgp = resolve_wgp_mode(arch, None)
        units = device.scheduling_units(wgp)
        simds = arch.simds_per_cu * (arch.cus_per_wgp if wgp else 1)
        slots = units * simds * arch.max_waves_per_simd if units else None
        return Target(device, "amd", arch.default_wave_size,
                      min(arch.max_workgroup_size, MAX_BLOCK), units,
                      device.unit_name(wgp), slots)
    units = device.scheduling_units()
    return Target(device, "nvidia", arch.warp_size, arch.max_threads_per_block, units, "SM",
                  units * arch.max_warps_per_sm if units else None)


def targets_for(devices: list[Device], source: SourceFile,
                configured: tuple[str, ...] = ()) -> list[Target]:
    """The configured devices; without any, the strictest wave size of the configured
    targets' vendors (64 if any target is AMD, or the file is HIP), else NVIDIA's 32."""
    if devices:
        return [device_target(d) for d in devices]
    amd = any(t.startswith("gfx") for t in configured) or source.vendor_hint == "amd"
    return [Target(None, "amd", STRICTEST_AMD_WAVE)] if amd else [Target(None, "nvidia", 32)]


@dataclass
class SiteContext:
    source: SourceFile
    kernel: SourceKernel | None  # the definition, when this file has it
    targets: list[Target]
    settings: AdviceSettings
    # a binary of the kernel in the run: {"device", "occupancy", "best_occupancy",
    # "block_sizes_at_best", "recommended_block", "file"} at the site's block size
    binaries: list[dict[str, Any]] = field(default_factory=list)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def site_finding(code: str, site: LaunchSite, param: Param | Any, ctx: SiteContext,
                 message: str, advice: str | None = None, target: Target | None = None,
                 **data: Any) -> Finding:
    r = RULES[code]
    span = param.span if isinstance(param, Param) else site.span
    return Finding(rule=r.code, name=r.name, severity=r.severity, message=message,
                   file=ctx.source.path, kernel=site.kernel, demangled=site.kernel_text,
                   arch=target.device.arch_name if target and target.device else None,
                   device=target.device.name if target and target.device else None,
                   advice=advice, data=data, line=span.line, column=span.column,
                   end_line=span.end_line, end_column=span.end_column)


def grid_stride(ctx: SiteContext) -> bool | None:
    """True / False when the kernel's body is known to be / not to be a grid-stride loop;
    None when this file does not define it or its shape is not recognised."""
    if ctx.kernel is None or ctx.kernel.body == "other":
        return None
    return ctx.kernel.body == "grid-stride"


@site_rule("LCH001")
def site_block_not_wave_multiple(site: LaunchSite, ctx: SiteContext) -> Iterator[Finding]:
    block = site.block.total if site.block else None
    if block is None:
        return
    seen: set[int] = set()
    for t in ctx.targets:
        wave = t.wave
        if t.device is not None:  # the build's wave size, when its binary is in the run
            built = {b["wave"] for b in ctx.binaries if b["device"] == t.device.name}
            if len(built) == 1 and None not in built:
                wave = built.pop()
        if block % wave == 0 or wave in seen:
            continue
        seen.add(wave)
        lanes = -(-block // wave) * wave
        idle = lanes - block
        down, up = block // wave * wave, lanes
        options = [x for x in (down, up) if x > 0]
        yield site_finding(
            "LCH001", site, site.block, ctx,
            f"block of {block} threads is not a multiple of the {wave}-lane {t.word} of "
            f"{t.name}: its last {t.word} runs {block % wave} lanes, {idle} idle "
            f"({_pct(idle / lanes)} of the block's lanes)",
            advice=f"use {' or '.join(map(str, options))} threads per block", target=t,
            block=block, wave_size=wave, idle_lanes=idle, suggestions=options)


@site_rule("LCH002")
def site_block_exceeds_limit(site: LaunchSite, ctx: SiteContext) -> Iterator[Finding]:
    if site.block is None:
        return
    block, dims = site.block.total, site.block.dims
    bound = ctx.kernel.launch_bounds[0] if ctx.kernel and ctx.kernel.launch_bounds else None
    if block is not None and bound is not None and block > bound:
        yield site_finding(
            "LCH002", site, site.block, ctx,
            f"block of {block} threads exceeds the kernel's __launch_bounds__({bound}) "
            f"(line {ctx.kernel.span.line}): the launch fails",  # type: ignore[union-attr]
            advice=f"launch at most {bound} threads per block, or raise the launch bound",
            block=block, launch_bounds=bound)
        return
    limit = min(t.max_block for t in ctx.targets)
    if block is not None and block > limit:
        yield site_finding(
            "LCH002", site, site.block, ctx,
            f"block of {block} threads exceeds the {limit} threads per block a GPU allows: "
            "the launch fails with an invalid-configuration error",
            advice=f"launch at most {limit} threads per block", block=block, limit=limit)
    elif dims[2] is not None and dims[2] > MAX_BLOCK_Z:
        yield site_finding(
            "LCH002", site, site.block, ctx,
            f"block z dimension {dims[2]} exceeds the {MAX_BLOCK_Z} a GPU allows: the launch "
            "fails", advice=f"use a z dimension of at most {MAX_BLOCK_Z}", block_z=dims[2])


@site_rule("LCH003")
def site_block_below_best(site: LaunchSite, ctx: SiteContext) -> Iterator[Finding]:
    block = site.block.total if site.block else None
    if block is None:
        return
    for b in ctx.binaries:
        if b["block_source"] != "source" or b["block"] != block or b["occupancy"] is None \
                or b["best_occupancy"] is None:
            continue
        if b["occupancy"] >= b["best_occupancy"]:
            continue
        sizes = b["block_sizes_at_best"]
        shown = ", ".join(str(x) for x in sizes[:4]) + (", ..." if len(sizes) > 4 else "")
        yield site_finding(
            "LCH003", site, site.block, ctx,
            f"block {block} reaches {_pct(b['occupancy'])} occupancy for the kernel in "
            f"{b['file']}; {shown} reach {_pct(b['best_occupancy'])}, the best on "
            f"{b['device']}", advice=f"use {b['recommended_block']} threads per block",
            target=None, occupancy=b["occupancy"], best=b["best_occupancy"],
            block_sizes_at_best=sizes, binary=b["file"], device_name=b["device"])


def _fixed_grid(site: LaunchSite) -> int | None:
    return site.grid.total if site.grid is not None and site.grid.fixed else None


@site_rule("LCH101")
def site_grid_tail(site: LaunchSite, ctx: SiteContext) -> Iterator[Finding]:
    grid = _fixed_grid(site)
    if grid is None:
        return
    for t in ctx.targets:
        if not t.units or grid <= t.units:
            continue
        g = tail(grid, t.units)
        if g["cost"] == 0:
            continue
        n, most = t.units, g["max_blocks_per_unit"]
        nearest = " or ".join(str(x) for x in g["nearest_balanced"])
        yield site_finding(
            "LCH101", site, site.grid, ctx,
            f"grid of {grid} blocks is not a multiple of the {n} {t.unit}s of {t.name}: "
            f"{g['busy_units']} {t.unit}s run {most} blocks while {n - g['busy_units']} run "
            f"{most - 1}: an estimated {_pct(g['cost'])} longer than a balanced grid (tail "
            "effect)", advice=f"use a grid of {nearest} blocks", target=t,
            grid=grid, units=n, cost=g["cost"], nearest_balanced=g["nearest_balanced"])


@site_rule("LCH102")
def site_grid_too_small(site: LaunchSite, ctx: SiteContext) -> Iterator[Finding]:
    grid = _fixed_grid(site)
    if grid is None:
        return
    for t in ctx.targets:
        if not t.units or grid >= t.units:
            continue
        n = t.units
        yield site_finding(
            "LCH102", site, site.grid, ctx,
            f"grid of {grid} blocks leaves {n - grid} of {n} {t.unit}s of {t.name} idle "
            f"(up to {_pct((n - grid) / n)} of the device unused)",
            advice=f"launch at least {n} blocks", target=t, grid=grid, units=n)


def oversubscription(site: LaunchSite, t: Target, settings: AdviceSettings
                     ) -> dict[str, int] | None:
    """Waves of the launch, the target and the recommended grid at the site's block."""
    block = site.block.total if site.block else None
    if not block or not t.units or not t.wave_slots:
        return None
    per_block = -(-block // t.wave)
    return {"waves_per_block": per_block,
            "target_waves": math.ceil(settings.oversubscription * t.wave_slots),
            "recommended_grid": grid_for_target(t.units, t.wave_slots, per_block,
                                                settings.oversubscription)}


@site_rule("LCH103")
def site_grid_below_oversubscription(site: LaunchSite, ctx: SiteContext
                                     ) -> Iterator[Finding]:
    grid = _fixed_grid(site)
    if grid is None or grid_stride(ctx) is not True:
        return  # memory-bound grid-stride kernels only: known from the kernel's body
    for t in ctx.targets:
        over = oversubscription(site, t, ctx.settings)
        if over is None:
            continue
        waves = grid * over["waves_per_block"]
        if waves >= over["target_waves"]:
            continue
        word = "warps" if t.vendor == "nvidia" else "waves"
        recommended = over["recommended_grid"]
        yield site_finding(
            "LCH103", site, site.grid, ctx,
            f"grid of {grid} blocks ({waves:,} {word}) is below the oversubscription target "
            f"of {ctx.settings.oversubscription:g}x the {t.wave_slots:,} {word[:-1]} slots "
            f"of {t.name} ({over['target_waves']:,} {word}) that the memory-bound "
            f"grid-stride kernel {site.kernel} needs",
            advice=f"use a grid of {recommended} blocks ({recommended // t.units} per "  # type: ignore[operator]
                   f"{t.unit})", target=t, grid=grid, waves=waves,
            target_waves=over["target_waves"], recommended_grid=recommended)


@rule("SRC101", "source-too-large", "info", scope="source")
def source_too_large(source: SourceFile, ctx: Any) -> Iterator[Finding]:
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
def source_syntax_error(source: SourceFile, ctx: Any) -> Iterator[Finding]:
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


def _where(ctx: SiteContext) -> str:
    k = ctx.kernel
    assert k is not None
    if ctx.source.kernel(k.name) is k:
        return f"line {k.span.line}"
    return f"defined in {k.file}:{k.span.line}" if k.file else f"line {k.span.line}"


def site_advice(site: LaunchSite, ctx: SiteContext) -> dict[str, Any]:
    """What the JSON says about a site's grid advice, and why."""
    stride = grid_stride(ctx)
    body = ctx.kernel.body if ctx.kernel else None
    if stride is True:
        grids = {}
        for t in ctx.targets:
            over = oversubscription(site, t, ctx.settings)
            if over is not None and t.device is not None:
                grids[t.device.name] = over["recommended_grid"]
        return {"kernel_body": body, "grid_stride_advice": True,
                "reason": f"{site.kernel} is a grid-stride loop ({_where(ctx)})",
                "recommended_grid": grids or None}
    if stride is False:
        reason = (f"{site.kernel} processes one element per thread (a bounds check, no "
                  f"grid-stride loop, {_where(ctx)}): its grid follows the problem size, so "
                  "only the block size is advised")
    elif ctx.kernel is None:
        reason = (f"{site.kernel} is not defined in this file or another source of the run: "
                  "its body is unknown, so no grid-stride advice")
    else:
        reason = (f"the body of {site.kernel} is neither a recognised grid-stride loop nor "
                  "one element per thread: no grid-stride advice")
    return {"kernel_body": body, "grid_stride_advice": False, "reason": reason,
            "recommended_grid": None}


def check_source(source: SourceFile, targets: list[Target], settings: Any,
                 enabled: set[str], binaries: dict[str, list[dict[str, Any]]] | None = None,
                 definitions: dict[str, SourceKernel] | None = None,
                 ) -> tuple[list[Finding], list[Finding], list[dict[str, Any]]]:
    """(findings, suppressed findings, advice per launch site) of one source file.

    ``settings``: the run's RuleSettings (selection is ``enabled``; severity overrides and
    per-kernel ignores apply as to binary findings). ``binaries``: facts of the kernels'
    binaries in the run (LCH003); ``definitions``: kernels defined in other source files
    of the run, for launches of kernels this file does not define."""
    from occlint.rules.engine import _ignored_for_kernel

    found: list[Finding] = []
    chosen = [RULES[c] for c in sorted(enabled) if c in RULES]
    for r in chosen:
        if r.scope == "source":
            found.extend(r.check(source, None))
    advice = []
    site_rules = [r for r in chosen if r.site_check is not None]
    for site in source.launches:
        kernel = source.kernel(site.kernel) or (definitions or {}).get(site.kernel)
        ctx = SiteContext(source, kernel, targets, settings.advice,
                          (binaries or {}).get(site.kernel, []))
        advice.append(site_advice(site, ctx))
        for r in site_rules:
            found.extend(r.site_check(site, ctx))  # type: ignore[misc]
    kept: list[Finding] = []
    suppressed: list[Finding] = []
    for f in found:
        if _ignored_for_kernel(f, settings.per_kernel_ignores):
            continue
        if f.rule in settings.severity:
            f.severity = settings.severity[f.rule]
        line = f.line
        if line is not None and any(s.covers(line, f.rule) for s in source.suppressions):
            suppressed.append(f)
        else:
            kept.append(f)
    key = _order
    return sorted(kept, key=key), sorted(suppressed, key=key), advice


def _order(f: Finding) -> tuple:
    return (f.line or 0, f.column or 0, f.rule, f.device or "")


def source_record(source: SourceFile, advice: list[dict[str, Any]],
                  suppressed: Iterable[Finding]) -> dict[str, Any]:
    """The document's ``sources`` entry of one file."""
    return {
        "path": source.path, "size": source.size, "truncated": source.truncated,
        "vendor_hint": source.vendor_hint,
        "kernels": [k.to_dict() for k in source.kernels],
        "launches": [{**s.to_dict(), "advice": a}
                     for s, a in zip(source.launches, advice, strict=True)],
        "syntax_errors": [s.to_dict() for s in source.error_regions],
        "suppressions": [{"line": s.line, "codes": list(s.codes)} for s in source.suppressions],
        "suppressed": [f.to_dict() for f in suppressed],
    }
