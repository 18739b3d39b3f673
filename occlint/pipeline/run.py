"""One occlint run: configuration -> read -> analyse -> rules -> baseline -> document.

The CLI builds :class:`Options` from its flags and renders the returned document; tests and
other front ends can call :func:`execute` directly.

Each input is read, analysed and checked on its own (:func:`analyse_input`), in this process
or in worker processes (``jobs``, occlint.pipeline.parallel). What comes back per input is compact:
where the JSON text of its kernel records is (occlint.model.records: a worker writes them to a
file of its own), its findings, artifacts and errors. The run assembles the document from
these in input order (occlint.pipeline.inputs sorts the inputs by name), so the output is
byte-identical whatever the parallelism and the order paths were given in.

CUDA / HIP sources are inputs too (occlint.pipeline.sources): their launch-site findings are
input-level findings located at file:line:column, their model the document's ``sources``.
With binaries in the run, the sources are read first (their launches' block sizes and
kernel bodies feed the binaries' analysis), and after every input a join checks the
sources again with what the whole run knows (kernels defined in other files, binaries).
"""

from __future__ import annotations

import fnmatch
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from occlint.analysis.kernels import LaunchConfig, analyse
from occlint.config import Config, load_config
from occlint.errors import ConfigError
from occlint.judgement.advice import AdviceSettings
from occlint.model.finding import RANK, Finding
from occlint.model.kernel import InputError, ReadResult
from occlint.model.records import KernelRecords, Sink, Texts, encode
from occlint.pipeline.document import (
    artifact_record,
    assemble,
    error_record,
    input_record,
    kernel_record,
)
from occlint.pipeline.inputs import Candidate

if TYPE_CHECKING:
    from occlint.devices.db import DeviceDb
    from occlint.devices.models import Device
    from occlint.readers.loader import ReadOptions
    from occlint.rules.engine import RuleSettings

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
# "auto" parallelism starts worker processes only for runs this large (below, starting them
# costs more than it saves): files, or bytes to read.
AUTO_MIN_FILES = 256
AUTO_MIN_BYTES = 64 << 20


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
        from_source: dict[str, Any] = {}
        if opts.source_index:
            from occlint.model.demangle import base_name

            from_source = opts.source_index.get(base_name(kernel.demangled), {})
        # the block of the kernel's source launches, when nothing more direct gives one
        uses_source = ("block" in from_source and opts.block is None and "block" not in base
                       and "block" not in hint)
        if uses_source:
            hint = {**hint, "block": from_source["block"]}
        dynamic = base.get("dynamic-lds", base.get("dynamic-shared", hint.get("dynamic_lds", 0)))
        launch = LaunchConfig(
            block=opts.block if opts.block is not None else base.get("block", hint.get("block")),
            grid=opts.grid if opts.grid is not None else base.get("grid", hint.get("grid")),
            problem_size=opts.problem_size if opts.problem_size is not None
            else base.get("problem-size"),
            dynamic_lds=opts.dynamic_lds if opts.dynamic_lds is not None else dynamic,
            body=from_source.get("body"),
            block_from_source=uses_source,
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

    @classmethod
    def build(cls, opts: Options, cfg: Config) -> Setup:
        from occlint.devices.db import load_db
        from occlint.readers.loader import ReadOptions
        from occlint.rules.engine import RuleSettings

        db = load_db([*cfg.device_files, *(Path(p) for p in opts.device_files)])
        devices = [db.get(name) for name in (opts.devices or cfg.devices)]
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
        read_options = ReadOptions(targets=tuple(opts.targets or cfg.targets),
                                   prefer=tuple(d.arch_name for d in devices),
                                   hash_inputs=opts.hash_inputs)
        return cls(db, devices, read_options, settings, _launch_resolver(cfg, opts),
                   opts.isolate_failures)


class TraceCandidate(NamedTuple):
    path: str
    display: str
    kind: str
    member: str | None = None  # a member of the zip archive at ``path``


@dataclass(slots=True)
class InputOutcome:
    """What one input gave, compact enough to send between processes."""

    record: dict[str, Any] | None  # the document's "inputs" entry; None: a skipped file
    kernels: Texts  # its kernel records as JSON text (in memory or in a worker's file)
    distinct: int  # distinct (file, entry, name) among them (files differ between inputs)
    findings: list[list[Finding]]  # the findings in each record
    artifacts: list[dict[str, Any]]
    errors: list[InputError]
    input_findings: list[Finding]
    analysed: bool  # kernels or artifacts found
    group: int | None = None  # a member group of an archive: merged into the group before
    source: dict[str, Any] | None = None  # a CUDA / HIP source: its "sources" record
    source_model: Any = None  # ... and its SourceFile (for the join with binaries)
    skipped: int = 0  # files without GPU code: archive members, or this file in a walk
    # traces, read later in this process (occlint.pipeline.traces): (path, display, format,
    # zip member or None) of this file, or of the trace members of this zip archive
    traces: list[tuple[str, str, str, str | None]] = field(default_factory=list)


def _zip_traces(candidate: Candidate) -> list[tuple[str, str, str, str | None]]:
    from occlint.readers.traces import zip_trace_members

    return [(candidate.path, f"{candidate.display}!/{member}", kind, member)
            for member, kind in zip_trace_members(Path(candidate.path))]


def _outcome(result: ReadResult, reports: list, input_findings: list[Finding],
             sink: Sink) -> InputOutcome:
    return InputOutcome(
        record=input_record(result),
        kernels=sink.add(encode(kernel_record(r, shared=True)) for r in reports),
        distinct=len({(r.kernel.file, r.kernel.entry, r.kernel.name) for r in reports}),
        findings=[r.findings for r in reports],
        artifacts=[artifact_record(a) for a in result.artifacts],
        errors=result.errors,
        input_findings=input_findings,
        analysed=bool(result.kernels) or bool(result.artifacts),
        skipped=result.skipped,
    )


def _skipped() -> InputOutcome:
    """A file found in a directory that holds no GPU code: not an input, only counted."""
    return InputOutcome(record=None, kernels=(), distinct=0, findings=[], artifacts=[],
                        errors=[], input_findings=[], analysed=False, skipped=1)


def analyse_input(candidate: Candidate, setup: Setup) -> InputOutcome | None:
    """Read, analyse and check one input; None for a file found in a directory that is not
    GPU code, an outcome without a record (``skipped``) for a host binary found there that
    holds none, and one without a record holding ``traces`` for a profiler trace."""
    from occlint.readers.loader import ZIP_MAGIC, read_head, read_path, sniff
    from occlint.readers.traces import classify
    from occlint.rules.engine import apply_rules

    path = Path(candidate.path)
    try:
        from occlint.readers.source import is_source

        if is_source(candidate.path) and candidate.group is None:
            from occlint.pipeline.sources import analyse_source

            return analyse_source(candidate, setup)
        head = read_head(path) if candidate.group is None else None
        kind = classify(path, head) if head else None
        if kind is not None:
            return InputOutcome(None, Texts(()), 0, [], [], [], [], False,
                                traces=[(candidate.path, candidate.display, kind, None)])
        traces = _zip_traces(candidate) if head and head.startswith(ZIP_MAGIC) else []
        if not candidate.listed:
            kind = sniff(path, head)
            if kind != "gpu":
                return _skipped() if kind == "host" else None
        result = read_path(path, candidate.display, setup.read_options, candidate.group,
                           candidate.listed and not traces)
        if result.no_gpu_code:
            outcome = _skipped()
            if traces:  # a zip of traces: not skipped, its traces are read
                outcome.skipped, outcome.traces = 0, traces
            return outcome
        reports = analyse(result.kernels, setup.devices, setup.resolve, setup.db)
        outcome = _outcome(result, reports, apply_rules(reports, [result], setup.settings),
                           setup.sink)
        outcome.group = candidate.group
        outcome.traces = traces
        return outcome
    except Exception as exc:
        if not setup.isolate_failures:
            raise
        message = (f"internal error: {type(exc).__name__}: {exc} (please report it; "
                   "--debug shows a traceback)")
        return _failed(candidate, message, setup)


def _failed(candidate: Candidate, message: str, setup: Setup) -> InputOutcome:
    from occlint.rules.engine import apply_rules

    result = ReadResult(path=candidate.display,
                        errors=[InputError(candidate.display, message)])
    outcome = _outcome(result, [], apply_rules([], [result], setup.settings), setup.sink)
    outcome.group = candidate.group
    return outcome


# -- worker processes -------------------------------------------------------------------------
_WORKER_SETUP: Setup | None = None


def _start_worker(opts: Options, cfg: Config, directory: str) -> None:
    global _WORKER_SETUP
    _WORKER_SETUP = Setup.build(opts, cfg)
    _WORKER_SETUP.sink = Sink(os.path.join(directory, f"worker-{os.getpid()}"))


def _work(batch: list[Candidate]) -> list[InputOutcome | None]:
    assert _WORKER_SETUP is not None
    outcomes = [analyse_input(c, _WORKER_SETUP) for c in batch]
    _WORKER_SETUP.sink.flush()  # the main process reads the records from the file
    return outcomes


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def large_run(candidates: list[Candidate]) -> bool:
    """AUTO_MIN_FILES files or more, or AUTO_MIN_BYTES to read."""
    if len(candidates) >= AUTO_MIN_FILES:
        return True
    size = 0
    for c in candidates:
        try:
            size += os.stat(c.path).st_size
        except OSError:
            continue
    return size >= AUTO_MIN_BYTES


def auto_jobs(candidates: list[Candidate]) -> int:
    """One worker per CPU for a large run (see :func:`large_run`), else 1."""
    cpus = cpu_count()
    if cpus < 2:
        return 1
    return cpus if large_run(candidates) else 1


def chunks(items: list[Candidate], jobs: int, per_worker: int = 8, most: int = 64
           ) -> list[list[Candidate]]:
    """Consecutive runs of ``items``: about ``per_worker`` chunks per worker, at most ``most``
    items each (small chunks keep the workers evenly loaded and the results flowing, large
    ones save messages)."""
    size = max(1, min(most, -(-len(items) // max(jobs * per_worker, 1))))
    return [items[i:i + size] for i in range(0, len(items), size)]


def _analyse_all(candidates: list[Candidate], jobs: int, setup: Setup, opts: Options,
                 cfg: Config, directory: Callable[[], str]
                 ) -> Iterator[list[InputOutcome | None]]:
    """Outcomes of every candidate, batch by batch, in order (``directory()``: where
    workers and large runs write their kernel records)."""
    batches = chunks(candidates, jobs)
    done = 0
    if jobs > 1 and len(batches) > 1:
        from occlint.pipeline import parallel  # multiprocessing: imported only when used

        try:
            for result in parallel.ordered_map(
                    _work, batches, min(jobs, len(batches)),
                    crashed=lambda c, message: _failed(c, message, setup),
                    initializer=_start_worker, initargs=(opts, cfg, directory())):
                done += 1
                yield result
            return
        except parallel.WorkersUnavailable:
            pass  # go on in this process
    if done < len(batches) and (jobs > 1 or large_run(candidates)):
        setup.sink = Sink(os.path.join(directory(), "main"))  # keep the memory bounded
    for batch in batches[done:]:
        yield [analyse_input(c, setup) for c in batch]


Progress = Callable[[int, int, int], None]  # (files done, files in all, kernels so far)


def execute(opts: Options, progress: Progress | None = None) -> Outcome:
    from occlint.pipeline import baseline as baseline_mod
    from occlint.pipeline.inputs import expand_paths
    from occlint.rules.engine import apply_rules

    cfg = load_config(opts.config, opts.isolated)
    setup = Setup.build(opts, cfg)
    paths = opts.paths or cfg.paths
    if not paths:
        raise ConfigError("no paths given (on the command line or as 'paths' in the "
                          "configuration)")
    fail_on = opts.fail_on or cfg.fail_on
    settings = setup.settings
    candidates, path_errors = expand_paths(
        list(paths), [*(opts.exclude or cfg.exclude), *cfg.extend_exclude,
                      *opts.extend_exclude],
        opts.include or cfg.include)
    opts = _with_source_index(opts, candidates)
    if opts.source_index:
        setup.resolve = _launch_resolver(cfg, opts)
    requested = opts.jobs if opts.jobs is not None else cfg.jobs
    jobs = auto_jobs(candidates) if requested == "auto" else int(requested)
    if jobs > 1:
        from occlint.pipeline.inputs import split_archives

        candidates = split_archives(candidates)

    inputs: list[dict[str, Any]] = []
    texts = KernelRecords()  # owns the directory of the records' files
    distinct = 0
    kernel_findings: list[list[Finding]] = []
    artifacts: list[dict[str, Any]] = []
    errors: list[InputError] = []
    input_findings: list[Finding] = []
    sources: list[dict[str, Any]] = []
    source_models: list[Any] = []
    analysed = False
    skipped = 0
    done = 0
    traces: list[TraceCandidate] = []
    for batch in _analyse_all(candidates, jobs, setup, opts, cfg, texts.directory):
        for one in batch:
            if one is None:
                continue
            skipped += one.skipped
            traces.extend(TraceCandidate(*t) for t in one.traces)
            if one.record is None:  # a trace, or a file without GPU code found in a walk
                continue
            if one.group:  # a later member group of the archive just before
                inputs[-1]["kernels"] += one.record["kernels"]
            else:
                inputs.append(one.record)
            texts.add(one.kernels)
            distinct += one.distinct
            kernel_findings.extend(one.findings)
            artifacts.extend(one.artifacts)
            errors.extend(one.errors)
            input_findings.extend(one.input_findings)
            if one.source is not None:
                sources.append(one.source)
                source_models.append(one.source_model)
            analysed = analysed or one.analysed
        done += len(batch)
        if progress is not None:
            progress(done, len(candidates), len(texts))
    if source_models:
        from occlint.pipeline.sources import join

        setup.sink.flush()  # records written to a file by this process are read back
        binaries = _source_binaries(source_models, texts) if opts.source_index else {}
        rechecked, again = join(source_models, sources, setup, binaries)
        if rechecked:  # their findings now, with what the whole run knows
            input_findings = [f for f in input_findings if f.file not in rechecked] + again
    launches: list[dict[str, Any]] = []
    launch_findings: list[list[Finding]] = []
    if traces:
        from occlint.pipeline.traces import analyse_traces

        # a large trace may be split over processes (it decides by its size); -j N caps them
        traced = analyse_traces(traces, setup, texts, settings,
                                cpu_count() if requested == "auto" else jobs)
        inputs.extend(traced.inputs)
        launches, launch_findings = traced.launches, traced.findings
        errors.extend(traced.errors)
        analysed = analysed or traced.analysed
    error_holder = ReadResult(path="", errors=path_errors)
    input_findings.extend(apply_rules([], [error_holder], settings))
    input_findings.sort(key=lambda f: (-RANK[f.severity], f.rule))  # as apply_rules sorts
    errors.extend(path_errors)

    all_findings: list[Finding] = [f for fs in kernel_findings for f in fs] + input_findings \
        + [f for fs in launch_findings for f in fs]
    baseline_info = None
    baseline_path = opts.baseline or (str(cfg.baseline) if cfg.baseline else None)
    if opts.write_baseline:
        baseline_mod.write(opts.write_baseline, all_findings, cfg.root)
    elif baseline_path:
        recorded = baseline_mod.load(baseline_path)
        new, suppressed, stale = baseline_mod.apply(all_findings, recorded, cfg.root)
        keep = {id(f) for f in new}
        for i, found in enumerate(kernel_findings):
            kept = [f for f in found if id(f) in keep]
            if len(kept) != len(found):  # re-encode the record without the suppressed ones
                record = json.loads(texts[i])
                record["findings"] = [f.to_dict() for f in kept]
                texts[i], kernel_findings[i] = encode(record), kept
        input_findings = [f for f in input_findings if id(f) in keep]
        for record, found in zip(launches, launch_findings, strict=True):
            record["findings"] = [f.to_dict() for f in found if id(f) in keep]
            record["finding_codes"] = sorted({f["rule"] for f in record["findings"]})
        all_findings = new
        baseline_info = {"path": baseline_path, "suppressed": suppressed, "stale": stale}

    doc = assemble(setup.devices, inputs, texts, distinct, artifacts,
                   [error_record(e) for e in errors], skipped)
    doc["findings"] = [f.to_dict() for f in input_findings]
    if traces:
        from occlint.pipeline.traces import summary

        doc["launches"] = launches
        doc["summary"]["launches"] = summary(launches)
    doc["summary"]["findings"] = _counts(all_findings)
    if baseline_info is not None:
        doc["baseline"] = baseline_info
    if sources:
        doc["sources"] = sources
    doc["settings"] = {"fail_on": fail_on, "select": list(settings.select),
                       "ignore": list(settings.ignore),
                       "extend_select": list(settings.extend_select),
                       "severity": dict(settings.severity),
                       "oversubscription": settings.advice.oversubscription,
                       "occupancy_threshold": settings.advice.occupancy_threshold}

    if doc["errors"] and not analysed:
        code = EXIT_ERROR
    elif opts.exit_zero or opts.write_baseline:
        code = EXIT_OK
    elif fail_on != "never" and any(RANK[f.severity] >= RANK[fail_on] for f in all_findings):
        code = EXIT_FINDINGS
    else:
        code = EXIT_OK
    return Outcome(doc, code, cfg, setup.db)


def _with_source_index(opts: Options, candidates: list[Candidate]) -> Options:
    """With both sources and binaries in the run: parse the sources first, so that binary
    kernels are analysed at their launch sites' block size (occlint.pipeline.sources)."""
    from occlint.readers.source import is_source

    names = [c for c in candidates if is_source(c.path)]
    if not names or len(names) == len(candidates) or opts.source_index:
        return opts
    from occlint.readers.loader import looks_like_gpu_binary

    if not any(c.listed or looks_like_gpu_binary(Path(c.path)) for c in candidates
               if not is_source(c.path)):
        return opts  # no binary to analyse at the sources' block sizes
    from dataclasses import replace

    from occlint.pipeline.sources import launch_index
    from occlint.readers.source import read_source

    models = []
    for c in names:
        try:
            models.append(read_source(c.path, c.display))
        except OSError:
            continue
    return replace(opts, source_index=launch_index(models))


def _source_binaries(models: list[Any], texts: KernelRecords) -> dict[str, list[Any]]:
    """Binary kernel records named like a launched source kernel (occlint.pipeline.sources)."""
    from occlint.pipeline.sources import binaries_by_kernel

    names = [s.kernel.encode() for m in models for s in m.launches]
    wanted = []
    for i in range(len(texts)):
        text = texts[i]
        if any(n in text for n in names):  # the text test only saves decoding
            wanted.append(json.loads(text))
    return binaries_by_kernel(wanted)


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
