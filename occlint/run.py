"""One occlint run: configuration -> read -> analyse -> rules -> baseline -> document.

The CLI builds :class:`Options` from its flags and renders the returned document; tests and
other front ends can call :func:`execute` directly.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from occlint.advice import AdviceSettings
from occlint.analysis import LaunchConfig, analyse
from occlint.config import Config, load_config
from occlint.errors import ConfigError
from occlint.model.report import Run, document
from occlint.rules.registry import RANK, Finding

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


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
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    fail_on: str | None = None
    exit_zero: bool = False
    baseline: str | None = None
    write_baseline: str | None = None
    config: str | None = None
    isolated: bool = False
    oversubscription: float | None = None
    occupancy_threshold: float | None = None
    hash_inputs: bool = False
    jobs: int = 1


@dataclass
class Outcome:
    doc: dict[str, Any]
    exit_code: int
    config: Config
    device_db: Any = None  # the DeviceDB the run used (shipped + user device files)


def _launch_resolver(cfg: Config, opts: Options):
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
        dynamic = base.get("dynamic-lds", base.get("dynamic-shared", hint.get("dynamic_lds", 0)))
        launch = LaunchConfig(
            block=opts.block if opts.block is not None else base.get("block", hint.get("block")),
            grid=opts.grid if opts.grid is not None else base.get("grid"),
            problem_size=opts.problem_size if opts.problem_size is not None
            else base.get("problem-size"),
            dynamic_lds=opts.dynamic_lds if opts.dynamic_lds is not None else dynamic,
        )
        cache[key] = launch
        return launch

    return resolve


def _read_all(files, read_options, jobs: int):
    from occlint.readers.loader import read_path

    return [read_path(path, display, read_options) for path, display in files]


def execute(opts: Options) -> Outcome:
    from occlint import baseline as baseline_mod
    from occlint.devices.db import load_db
    from occlint.inputs import expand_paths
    from occlint.readers.loader import ReadOptions
    from occlint.rules.engine import RuleSettings, apply_rules

    cfg = load_config(opts.config, opts.isolated)
    db = load_db([*cfg.device_files, *(Path(p) for p in opts.device_files)])
    devices = [db.get(name) for name in (opts.devices or cfg.devices)]
    paths = opts.paths or cfg.paths
    if not paths:
        raise ConfigError("no paths given (on the command line or as 'paths' in the "
                          "configuration)")
    fail_on = opts.fail_on or cfg.fail_on
    settings = RuleSettings(
        select=tuple(opts.select or cfg.select),
        ignore=tuple([*cfg.ignore, *opts.ignore]),
        extend_select=tuple([*cfg.extend_select, *opts.extend_select]),
        severity=dict(cfg.severity),
        per_kernel_ignores={k: tuple(v) for k, v in cfg.per_kernel_ignores.items()},
        advice=AdviceSettings(
            oversubscription=opts.oversubscription or cfg.oversubscription,
            preferred_block=cfg.preferred_block,
            occupancy_threshold=cfg.occupancy_threshold if opts.occupancy_threshold is None
            else opts.occupancy_threshold),
    )
    files, path_errors = expand_paths(list(paths), cfg.exclude)
    read_options = ReadOptions(targets=tuple(opts.targets or cfg.targets),
                               prefer=tuple(d.arch_name for d in devices),
                               hash_inputs=opts.hash_inputs)
    inputs = _read_all(files, read_options, opts.jobs)
    kernels = [k for r in inputs for k in r.kernels]
    reports = analyse(kernels, devices, _launch_resolver(cfg, opts), db)
    from occlint.model.kernel import ReadResult

    error_holder = ReadResult(path="", errors=path_errors)
    input_findings = apply_rules(reports, [*inputs, error_holder], settings)

    all_findings: list[Finding] = [f for r in reports for f in r.findings] + input_findings
    baseline_info = None
    baseline_path = opts.baseline or (str(cfg.baseline) if cfg.baseline else None)
    if opts.write_baseline:
        baseline_mod.write(opts.write_baseline, all_findings, cfg.root)
    elif baseline_path:
        recorded = baseline_mod.load(baseline_path)
        new, suppressed, stale = baseline_mod.apply(all_findings, recorded, cfg.root)
        keep = {id(f) for f in new}
        for r in reports:
            r.findings = [f for f in r.findings if id(f) in keep]
        input_findings = [f for f in input_findings if id(f) in keep]
        all_findings = new
        baseline_info = {"path": baseline_path, "suppressed": suppressed, "stale": stale}

    run = Run(inputs=inputs, reports=reports, devices=devices, errors=path_errors)
    doc = document(run)
    doc["findings"] = [f.to_dict() for f in input_findings]
    doc["summary"]["findings"] = _counts(all_findings)
    if baseline_info is not None:
        doc["baseline"] = baseline_info
    doc["settings"] = {"fail_on": fail_on, "select": list(settings.select),
                       "ignore": list(settings.ignore),
                       "extend_select": list(settings.extend_select),
                       "severity": dict(settings.severity),
                       "oversubscription": settings.advice.oversubscription,
                       "occupancy_threshold": settings.advice.occupancy_threshold}

    analysed = bool(kernels) or any(r.artifacts for r in inputs)
    if doc["errors"] and not analysed:
        code = EXIT_ERROR
    elif opts.exit_zero or opts.write_baseline:
        code = EXIT_OK
    elif fail_on != "never" and any(RANK[f.severity] >= RANK[fail_on] for f in all_findings):
        code = EXIT_FINDINGS
    else:
        code = EXIT_OK
    return Outcome(doc, code, cfg, db)


def _counts(findings: list[Finding]) -> dict[str, Any]:
    by_severity = {s: 0 for s in ("error", "warning", "info")}
    by_rule: dict[str, dict[str, Any]] = {}
    for f in findings:
        by_severity[f.severity] += 1
        entry = by_rule.setdefault(f.rule, {"rule": f.rule, "name": f.name, "count": 0,
                                            "severity": f.severity})
        entry["count"] += 1
    return {"total": len(findings), "by_severity": by_severity,
            "by_rule": [by_rule[k] for k in sorted(by_rule)]}
