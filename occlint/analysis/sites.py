"""Launch sites read from CUDA / HIP source -> subjects of the launch-site rules.

A :class:`SiteReport` is one launch site with what the run knows about it: the kernel's
definition (in this file, or in another source file of the run), the targets it is checked
against (the configured devices, or the strictest wave size of the file's vendor when none
is configured), and the facts of the kernel's binaries in the run (their wave size and
occupancy at the site's block size).

The run's sources also feed the analysis of its binaries (:func:`launch_index`: a kernel's
one known block size and body kind) and the binaries feed the sites
(:func:`binaries_by_kernel`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from occlint.devices.models import AmdArch, Device
from occlint.model.demangle import base_name
from occlint.model.finding import Finding
from occlint.model.source import LaunchSite, SourceFile, SourceKernel, Suppression
from occlint.occupancy.amd import resolve_wgp_mode

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


@dataclass(eq=False)
class SiteReport:
    """One launch site and what the run knows about it (occlint.model.subject)."""

    kind: ClassVar[str] = "site"
    source: SourceFile
    site: LaunchSite
    kernel: SourceKernel | None  # the definition: this file's, or another source's
    targets: list[Target]
    # the kernel's binaries in the run: {"device", "wave", "occupancy", "best_occupancy",
    # "block_sizes_at_best", "recommended_block", "block", "block_source", "file"}
    binaries: list[dict[str, Any]] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    suppressed: list[Finding] = field(default_factory=list)  # by a comment in the source
    advice: dict[str, Any] = field(default_factory=dict)
    owner: Any = None  # who can change it (occlint.judgement.owner.Owner), once judged
    design: dict[str, str] | None = None
    plan: Any = None  # the launch-time model's plan (occlint.judgement.site_plan), judged

    def keep(self, findings: list[Finding]) -> None:
        self.findings, self.suppressed = split_suppressed(findings, self.source.suppressions)

    @property
    def idle(self) -> bool:
        """Its kernel's body is empty (cccl's ``reserved::dummy<<<1, 1>>>``, a benchmark's
        ``empty_kernel``): no block or grid makes it faster."""
        return self.kernel is not None and self.kernel.empty

    @property
    def serial(self) -> bool:
        """One block of one thread, both constants, of a kernel not in the run:
        ``<<<1, 1>>>`` is written for serial work (raft's ``kernel_clamp_down``, a test's
        ``gpu_wait``), which more threads or blocks would repeat, not split."""
        block, grid = self.site.block, self.site.grid
        return self.kernel is None and block is not None and block.total == 1 and \
            grid is not None and grid.fixed and grid.total == 1


def split_suppressed(findings: list[Finding], suppressions: list[Suppression]
                     ) -> tuple[list[Finding], list[Finding]]:
    """(kept, suppressed by an ``// occlint: ignore[CODE]`` comment on the line or above)."""
    kept: list[Finding] = []
    suppressed: list[Finding] = []
    for f in findings:
        line = f.line
        if line is not None and any(s.covers(line, f.rule) for s in suppressions):
            suppressed.append(f)
        else:
            kept.append(f)
    return kept, suppressed


def site_reports(source: SourceFile, targets: list[Target],
                 definitions: dict[str, SourceKernel] | None = None,
                 binaries: dict[str, list[dict[str, Any]]] | None = None
                 ) -> list[SiteReport]:
    """The launch sites of one file, each with its kernel's definition (``definitions``:
    kernels defined in other source files of the run) and binaries."""
    return [SiteReport(source, site,
                       source.kernel(site.kernel) or (definitions or {}).get(site.kernel),
                       targets, (binaries or {}).get(site.kernel, []))
            for site in source.launches]


def definitions(models: list[SourceFile]) -> dict[str, SourceKernel]:
    """Kernels defined in the run's sources, by name (only those defined alike wherever
    they are: one body kind and one launch bound)."""
    defined: dict[str, list[SourceKernel]] = {}
    for m in models:
        for k in m.kernels:
            defined.setdefault(k.name, []).append(k)
    return {name: ks[0] for name, ks in defined.items()
            if len({(k.body, k.launch_bounds) for k in ks}) == 1}


def launch_index(sources: list[SourceFile]) -> dict[str, dict[str, Any]]:
    """kernel name -> {"block": the one known block of its launches (absent when they
    differ), "body": its definition's body kind, "work": memory- or compute-bound,
    "facts": the launch-time model's facts, "template": a template's text (each
    instantiation's facts: occlint.readers.source.facts.instantiated), "block_indexed":
    whether it reads its block index, "thread_indexed": its thread index, when every
    definition agrees, "communicates": the library through which a definition talks to
    other GPUs} over the run's sources."""
    blocks: dict[str, set[int | None]] = {}
    defined: dict[str, set[tuple[str, str | None]]] = {}
    facts: dict[str, set[Any]] = {}
    indexed: dict[str, set[bool | None]] = {}
    threads: dict[str, set[bool | None]] = {}
    talks: dict[str, set[str | None]] = {}
    templates: dict[str, set[Any]] = {}
    for s in sources:
        for site in s.launches:
            blocks.setdefault(site.kernel, set()).add(site.block.total if site.block else None)
        for k in s.kernels:
            defined.setdefault(k.name, set()).add((k.body, k.work))
            facts.setdefault(k.name, set()).add(k.facts)
            indexed.setdefault(k.name, set()).add(k.block_indexed)
            threads.setdefault(k.name, set()).add(k.thread_indexed)
            talks.setdefault(k.name, set()).add(k.communicates)
            templates.setdefault(k.name, set()).add(k.instantiable)
    out: dict[str, dict[str, Any]] = {}
    for name in set(blocks) | set(defined):
        entry: dict[str, Any] = {}
        b = blocks.get(name, set())
        if len(b) == 1 and None not in b:
            entry["block"] = next(iter(b))
        kinds = defined.get(name, set())
        if len({body for body, _ in kinds}) == 1:
            entry["body"] = next(iter(kinds))[0]
        if len(kinds) == 1 and next(iter(kinds))[1] is not None:
            entry["work"] = next(iter(kinds))[1]
        told = facts.get(name, set())
        if len(told) == 1 and None not in told:
            entry["facts"] = next(iter(told))
        texts = templates.get(name, set())
        if len(texts) == 1 and None not in texts:
            entry["template"] = next(iter(texts))
        reads = indexed.get(name, set())
        if len(reads) == 1 and None not in reads:
            entry["block_indexed"] = next(iter(reads))
        reads = threads.get(name, set())
        if len(reads) == 1 and None not in reads:
            entry["thread_indexed"] = next(iter(reads))
        libraries = talks.get(name, set()) - {None}
        if len(libraries) == 1:
            entry["communicates"] = next(iter(libraries))
        if entry:
            out[name] = entry
    return out


def binaries_by_kernel(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Facts of binary kernel records, by kernel base name, for launch sites."""
    out: dict[str, list[dict[str, Any]]] = {}
    for k in records:
        occ, adv = k.get("occupancy"), k.get("advice") or {}
        if not occ:
            continue
        out.setdefault(base_name(k.get("demangled") or k["name"]), []).append({
            "file": k["file"], "device": k.get("device") or k.get("arch"),
            "wave": k.get("wavefront_size"), "block_source": occ.get("block_source"),
            "block": occ["block_size"], "occupancy": occ["occupancy"],
            "best_occupancy": adv.get("best_occupancy"),
            "block_sizes_at_best": adv.get("block_sizes_at_best") or [],
            "recommended_block": adv.get("recommended_block")})
    return out
