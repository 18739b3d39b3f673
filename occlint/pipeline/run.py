"""One occlint run, as its stages.

    configure -> collect inputs -> read, analyse and judge each input -> join sources
    -> read traces -> baseline -> document

:func:`execute` is that list. Each input is read, analysed and judged on its own
(occlint.pipeline.kinds: sources, traces, binaries), in this process or in worker processes
(occlint.pipeline.workers); what comes back per input is compact (occlint.pipeline.outcome)
and lands in :class:`Sections`, the document's sections with the findings beside their
records, in input order (occlint.pipeline.inputs sorts the inputs by name), so the output is
byte-identical whatever the parallelism and the order paths were given in. What needs the
whole run comes after: launch sites joined to the kernels defined or compiled elsewhere in it
(occlint.pipeline.sources), traces joined to its binaries (occlint.pipeline.traces), and the
baseline, applied alike to the findings of every section.

The CLI builds :class:`Options` from its flags and renders the returned document; tests and
other front ends can call :func:`execute` directly.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from occlint.config import Config, load_config
from occlint.errors import ConfigError
from occlint.model.finding import RANK, Finding, Tally
from occlint.model.kernel import InputError, ReadResult
from occlint.model.records import KernelRecords, encode
from occlint.pipeline.document import assemble, error_record
from occlint.pipeline.inputs import Candidate, expand_paths
from occlint.pipeline.outcome import InputOutcome, TraceCandidate
from occlint.pipeline.setup import Options, Setup, launch_resolver
from occlint.pipeline.workers import analyse_all, auto_jobs, cpu_count
from occlint.rules.engine import by_severity, judge_scope

__all__ = ["EXIT_ERROR", "EXIT_FINDINGS", "EXIT_OK", "Options", "Outcome", "Progress",
           "execute"]

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
Progress = Callable[[int, int, int], None]  # (files done, files in all, kernels so far)


@dataclass
class Outcome:
    document: dict[str, Any]  # "kernels" held as KernelRecords (JSON text)
    exit_code: int
    config: Config
    device_db: Any = None  # the DeviceDB the run used (shipped + user device files)

    @property
    def doc(self) -> dict[str, Any]:
        """The document with its kernel records decoded to dicts (decoded once)."""
        kernels = self.document["kernels"]
        if isinstance(kernels, KernelRecords):
            self.document = {**self.document, "kernels": list(kernels)}
        return self.document


@dataclass
class Sections:
    """The document's sections as the stages fill them, each finding beside its record:
    kernels (records as JSON text), launch groups, the input-level findings (sources' launch
    sites among them), and what was read."""

    inputs: list[dict[str, Any]] = field(default_factory=list)
    kernels: KernelRecords = field(default_factory=KernelRecords)  # owns the records' files
    # per kernel record: whole, or their Tally when no baseline needs them (Setup)
    kernel_findings: list[list[Finding | Tally]] = field(default_factory=list)
    distinct: int = 0
    findings: list[Finding] = field(default_factory=list)  # input-level, sources' included
    launches: list[dict[str, Any]] = field(default_factory=list)
    launch_findings: list[list[Finding]] = field(default_factory=list)  # per launch record
    sources: list[dict[str, Any]] = field(default_factory=list)
    source_models: list[Any] = field(default_factory=list)
    artifacts: list[dict[str, Any]] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)
    traces: list[TraceCandidate] = field(default_factory=list)
    analysed: bool = False  # anything analysable found
    skipped: int = 0

    def add(self, one: InputOutcome) -> None:
        self.skipped += one.skipped
        self.traces.extend(one.traces)
        if one.record is None:  # a trace, or a file without GPU code found in a walk
            return
        if one.group:  # a later member group of the archive just before
            self.inputs[-1]["kernels"] += one.record["kernels"]
        else:
            self.inputs.append(one.record)
        self.kernels.add(one.kernels)
        self.distinct += one.distinct
        self.kernel_findings.extend(one.findings)
        self.artifacts.extend(one.artifacts)
        self.errors.extend(one.errors)
        self.findings.extend(one.input_findings)
        if one.source is not None:
            self.sources.append(one.source)
            self.source_models.append(one.source_model)
        self.analysed = self.analysed or one.analysed

    def all_findings(self) -> list[Finding | Tally]:
        """Every finding, or its Tally (whole when Setup.whole_findings: for a baseline)."""
        return ([f for fs in self.kernel_findings for f in fs] + self.findings
                + [f for fs in self.launch_findings for f in fs])

    def keep_only(self, keep: set[int]) -> None:
        """Drop every finding whose id is not in ``keep`` (a baseline), from its section
        and from the record that shows it."""
        for i, found in enumerate(self.kernel_findings):
            kept = [f for f in found if id(f) in keep]
            if len(kept) != len(found):  # re-encode the record without the dropped ones
                record = json.loads(self.kernels[i])
                record["findings"] = [f.to_dict() for f in kept]
                self.kernels[i], self.kernel_findings[i] = encode(record), kept
        self.findings = [f for f in self.findings if id(f) in keep]
        for i, (record, found) in enumerate(zip(self.launches, self.launch_findings,
                                                strict=True)):
            self.launch_findings[i] = kept = [f for f in found if id(f) in keep]
            record["findings"] = [f.to_dict() for f in kept]
            record["finding_codes"] = sorted({f["rule"] for f in record["findings"]})


def execute(opts: Options, progress: Progress | None = None) -> Outcome:
    cfg = load_config(opts.config, opts.isolated)
    setup = Setup.build(opts, cfg)
    candidates, path_errors, opts, jobs = collect(opts, cfg, setup)
    sections = read_all(candidates, jobs, setup, opts, cfg, progress)
    join_sources(sections, setup, opts)
    read_traces(sections, setup, cpu_count() if _requested(opts, cfg) == "auto" else jobs)
    add_path_errors(sections, path_errors + nothing_found(sections, opts, cfg), setup)
    baseline = apply_baseline(sections, opts, cfg)
    doc = document(sections, setup, _fail_on(opts, cfg), baseline)
    return Outcome(doc, exit_code(sections, doc, opts, _fail_on(opts, cfg)), cfg, setup.db)


def _requested(opts: Options, cfg: Config) -> int | str:
    return opts.jobs if opts.jobs is not None else cfg.jobs


def _fail_on(opts: Options, cfg: Config) -> str:
    return opts.fail_on or cfg.fail_on


def collect(opts: Options, cfg: Config, setup: Setup
            ) -> tuple[list[Candidate], list[InputError], Options, int]:
    """The inputs (paths walked, excluded, sorted), the errors of paths that are not there,
    the options with the sources' launch facts, and the worker processes to use."""
    from occlint.readers.formats import is_ptx, is_source

    paths = opts.paths or cfg.paths
    if not paths:
        raise ConfigError("no paths given (on the command line or as 'paths' in the "
                          "configuration)")
    candidates, path_errors = expand_paths(
        list(paths), [*(opts.exclude or cfg.exclude), *cfg.extend_exclude,
                      *opts.extend_exclude],
        opts.include or cfg.include)
    if any(is_source(c.path) or is_ptx(c.path) for c in candidates):
        from occlint.pipeline.sources import source_index  # (a binary's run needs none)

        opts = source_index(opts, candidates)
    if opts.source_index:
        setup.resolve = launch_resolver(cfg, opts)
        setup.source_index = opts.source_index
    requested = _requested(opts, cfg)
    jobs = auto_jobs(candidates) if requested == "auto" else int(requested)
    if jobs > 1:
        from occlint.pipeline.inputs import split_archives

        candidates = split_archives(candidates)
    return candidates, path_errors, opts, jobs


def read_all(candidates: list[Candidate], jobs: int, setup: Setup, opts: Options,
             cfg: Config, progress: Progress | None) -> Sections:
    """Every input read, analysed and judged, in input order."""
    sections = Sections()
    done = 0
    for batch in analyse_all(candidates, jobs, setup, opts, cfg, sections.kernels.directory):
        for one in batch:
            if one is not None:
                sections.add(one)
        done += len(batch)
        if progress is not None:
            progress(done, len(candidates), len(sections.kernels))
    return sections


def join_sources(sections: Sections, setup: Setup, opts: Options) -> None:
    """Launch sites judged again with what the whole run knows (occlint.pipeline.sources)."""
    if not sections.source_models:
        return
    from occlint.pipeline.sources import join

    setup.sink.flush()  # records written to a file by this process are read back
    rejudged, again = join(sections.source_models, sections.sources, setup,
                           sections.kernels if opts.source_index else None)
    if rejudged:  # their findings now replace those of the first judgement
        sections.findings = [f for f in sections.findings if f.file not in rejudged] + again


def read_traces(sections: Sections, setup: Setup, jobs: int) -> None:
    """The run's traces, their launches joined to its binaries (occlint.pipeline.traces);
    a large trace may be split over ``jobs`` processes (it decides by its size)."""
    if not sections.traces:
        return
    from occlint.pipeline.traces import analyse_traces

    traced = analyse_traces(sections.traces, setup, sections.kernels, setup.settings, jobs)
    sections.inputs.extend(traced.inputs)
    sections.launches, sections.launch_findings = traced.launches, traced.findings
    sections.errors.extend(traced.errors)
    # a trace that could not be read whole is an error finding, as an unreadable binary is
    sections.findings.extend(judge_scope("input", [ReadResult(path="", errors=traced.errors)],
                                         setup.settings))
    sections.analysed = sections.analysed or traced.analysed


def nothing_found(sections: Sections, opts: Options, cfg: Config) -> list[InputError]:
    """A run that found nothing to analyse in the directories it walked says so: one error
    per directory (exit 2), not an empty report that passes."""
    if sections.analysed or sections.errors or sections.inputs:
        return []
    import os

    return [InputError(p, "no GPU code, profiler trace or CUDA / HIP source found in this "
                          "directory") for p in opts.paths or cfg.paths if os.path.isdir(p)]


def add_path_errors(sections: Sections, errors: list[InputError], setup: Setup) -> None:
    """Paths that are not there: errors, and the input rules' findings on them."""
    sections.findings.extend(judge_scope("input", [ReadResult(path="", errors=errors)],
                                         setup.settings))
    sections.findings.sort(key=by_severity)
    sections.errors.extend(errors)


def apply_baseline(sections: Sections, opts: Options, cfg: Config) -> dict[str, Any] | None:
    """Write the baseline (``--write-baseline``), or drop the findings it records."""
    from occlint.pipeline import baseline as baseline_mod

    path = opts.baseline or (str(cfg.baseline) if cfg.baseline else None)
    if opts.write_baseline:
        baseline_mod.write(opts.write_baseline, sections.all_findings(), cfg.root)
        return None
    if not path:
        return None
    recorded = baseline_mod.load(path)
    new, suppressed, stale = baseline_mod.apply(sections.all_findings(), recorded, cfg.root)
    sections.keep_only({id(f) for f in new})
    return {"path": path, "suppressed": suppressed, "stale": stale}


def document(sections: Sections, setup: Setup, fail_on: str,
             baseline: dict[str, Any] | None) -> dict[str, Any]:
    s, settings = sections, setup.settings
    doc = assemble(setup.devices, s.inputs, s.kernels, s.distinct, s.artifacts,
                   [error_record(e) for e in s.errors], s.skipped)
    doc["findings"] = [f.to_dict() for f in s.findings]
    if s.traces:
        from occlint.pipeline.traces import summary

        doc["launches"] = s.launches
        doc["summary"]["launches"] = summary(s.launches, doc["inputs"])
    doc["summary"]["findings"] = _counts(s.all_findings())
    if baseline is not None:
        doc["baseline"] = baseline
    if s.sources:
        doc["sources"] = s.sources
    doc["settings"] = {"fail_on": fail_on, "select": list(settings.select),
                       "ignore": list(settings.ignore),
                       "extend_select": list(settings.extend_select),
                       "severity": dict(settings.severity),
                       "oversubscription": settings.advice.oversubscription,
                       "occupancy_threshold": settings.advice.occupancy_threshold}
    return doc


def exit_code(sections: Sections, doc: dict[str, Any], opts: Options, fail_on: str) -> int:
    if doc["errors"] and not sections.analysed:
        return EXIT_ERROR
    if opts.exit_zero or opts.write_baseline:
        return EXIT_OK
    if fail_on != "never" and any(RANK[f.severity] >= RANK[fail_on]
                                  for f in sections.all_findings()):
        return EXIT_FINDINGS
    if opts.fail_on_saving_ms is not None and \
            yours_to_save_ms(doc) > opts.fail_on_saving_ms:
        return EXIT_FINDINGS
    return EXIT_OK


def yours_to_save_ms(doc: dict[str, Any]) -> float:
    """The low end of the estimated saving that is the user's to make (their kernels and
    launch overhead), in milliseconds: 0 without traced launches."""
    launches = doc["summary"].get("launches") or {}
    return launches.get("user_saving_low_ns", 0) / 1e6


def _counts(findings: list[Finding | Tally]) -> dict[str, Any]:
    by_severity = {s: 0 for s in ("error", "warning", "info")}
    by_rule: dict[str, dict[str, Any]] = {}
    for f in findings:
        by_severity[f.severity] += 1
        entry = by_rule.setdefault(f.rule, {"rule": f.rule, "name": f.name, "count": 0,
                                            "severity": f.severity})
        entry["count"] += 1
    return {"total": len(findings), "by_severity": by_severity,
            "by_rule": [by_rule[k] for k in sorted(by_rule)]}
