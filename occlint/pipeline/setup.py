"""The run's settings: :class:`Options` (what the CLI or a caller asks for) and
:class:`Setup` (what analysing an input needs, built from the options and the configuration
in every process: the device database and devices, read options, rule settings and each
kernel's launch configuration)."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from occlint.analysis.kernels import LaunchConfig
from occlint.config import Config
from occlint.devices.db import DeviceDb, load_db
from occlint.devices.models import Device
from occlint.judgement.advice import AdviceSettings
from occlint.model.demangle import base_name
from occlint.model.records import Sink
from occlint.pipeline.facts_index import resolved
from occlint.readers.formats import ReadOptions
from occlint.rules.engine import RuleSettings


@dataclass
class Options:
    paths: list[str] = field(default_factory=list)
    devices: list[str] = field(default_factory=list)
    device_files: list[str] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)
    block: int | None = None
    grid: int | None = None
    problem_size: int | None = None
    dynamic_lds: int | None = None
    include: list[str] = field(default_factory=list)  # directory walks: replace the config's
    exclude: list[str] = field(default_factory=list)  # replaces the configuration's
    extend_exclude: list[str] = field(default_factory=list)  # added to the exclusions
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    fail_on: str | None = None
    fail_on_saving_ms: float | None = None  # exit 1 when the user's saving is above this
    exit_zero: bool = False
    baseline: str | None = None
    write_baseline: str | None = None
    config: str | None = None
    isolated: bool = False
    oversubscription: float | None = None
    occupancy_threshold: float | None = None
    hash_inputs: bool = False
    # worker processes: N (1: in this process), "auto", or None for the configuration's
    # 'jobs' (default "auto": one per CPU when the run is large, see auto_jobs)
    jobs: int | str | None = None
    # an unexpected exception while analysing one input becomes an error of that input, and
    # the other inputs are still analysed (the CLI without --debug); else it propagates
    isolate_failures: bool = False
    # kernel name -> {"block", "body"} read from the run's CUDA / HIP sources
    # (occlint.pipeline.sources)
    source_index: dict[str, dict[str, Any]] = field(default_factory=dict)


def launch_resolver(cfg: Config, opts: Options):
    """kernel -> LaunchConfig: command line over the first matching config glob."""
    globs = list(cfg.launch.items())
    cache: dict[tuple[str, str], LaunchConfig] = {}

    def resolve(kernel) -> LaunchConfig:
        key = (kernel.file, kernel.name)
        if key in cache:
            return cache[key]
        base: dict[str, int] = {}
        for pattern, settings in globs:
            if any(fnmatch.fnmatchcase(n, pattern) for n in (kernel.name, kernel.demangled)):
                base = settings
                break
        hint = kernel.launch_hint or {}
        from_source: dict[str, Any] = {}
        if opts.source_index:
            from_source = resolved(opts.source_index.get(base_name(kernel.demangled), {}),
                                   kernel.demangled)
        # the block of the kernel's source launches, when nothing more direct gives one
        uses_source = ("block" in from_source and opts.block is None and "block" not in base
                       and "block" not in hint)
        if uses_source:
            hint = {**hint, "block": from_source["block"]}
        dynamic = base.get("dynamic-lds", base.get("dynamic-shared", hint.get("dynamic_lds", 0)))
        grid_given = opts.grid is not None or opts.problem_size is not None
        launch = LaunchConfig(
            block=opts.block if opts.block is not None else base.get("block", hint.get("block")),
            # --grid or --problem-size replaces both of the configuration's (one grid)
            grid=opts.grid if grid_given else base.get("grid", hint.get("grid")),
            problem_size=opts.problem_size if grid_given else base.get("problem-size"),
            dynamic_lds=opts.dynamic_lds if opts.dynamic_lds is not None else dynamic,
            body=from_source.get("body"),
            block_from_source=uses_source,
            work=from_source.get("work"),
            facts=from_source.get("facts"),
            block_indexed=from_source.get("block_indexed"),
            thread_indexed=from_source.get("thread_indexed"),
            communicates=from_source.get("communicates"),
        )
        cache[key] = launch
        return launch

    return resolve


@dataclass
class Setup:
    """What analysing an input needs; built from (Options, Config) in every process."""

    db: DeviceDb
    devices: list[Device]
    read_options: ReadOptions
    settings: RuleSettings
    resolve: Callable[[Any], LaunchConfig]  # kernel -> its launch configuration
    isolate_failures: bool = False
    sink: Sink = field(default_factory=Sink)  # where kernel records go: memory, or a file
    # kernel name -> {"block", "body", "work"} from the run's sources (Options.source_index)
    source_index: dict[str, dict[str, Any]] = field(default_factory=dict)
    # kernel findings kept whole for the run (a baseline matches them), else as Tally
    whole_findings: bool = True

    @classmethod
    def build(cls, opts: Options, cfg: Config) -> Setup:
        db = load_db([*cfg.device_files, *(Path(p) for p in opts.device_files)])
        devices = [db.get(name) for name in (opts.devices or cfg.devices)]
        settings = RuleSettings(
            select=tuple(opts.select or cfg.select),
            ignore=tuple([*cfg.ignore, *opts.ignore]),
            extend_select=tuple([*cfg.extend_select, *opts.extend_select]),
            severity=dict(cfg.severity),
            per_kernel_ignores={k: tuple(v) for k, v in cfg.per_kernel_ignores.items()},
            owners=dict(cfg.owners),
            advice=AdviceSettings(
                oversubscription=opts.oversubscription or cfg.oversubscription,
                preferred_block=cfg.preferred_block,
                occupancy_threshold=cfg.occupancy_threshold if opts.occupancy_threshold is None
                else opts.occupancy_threshold),
        )
        read_options = ReadOptions(targets=tuple(opts.targets or cfg.targets),
                                   prefer=tuple(d.arch_name for d in devices),
                                   hash_inputs=opts.hash_inputs)
        return cls(db, devices, read_options, settings, launch_resolver(cfg, opts),
                   opts.isolate_failures, source_index=opts.source_index,
                   whole_findings=bool(opts.baseline or opts.write_baseline or cfg.baseline))
