"""CUDA / HIP sources in a run: read each file, judge its launch sites, join them to the run.

A source input gives an :class:`InputOutcome` like a binary does: its findings are
input-level findings located at file:line:column, its model the document's ``sources``.
Two joins need the whole run: before the binaries are read, the sources' launches give the
block sizes and kernel bodies the binaries are analysed at (:func:`source_index`); after
every input, launch sites of kernels defined in another source file or compiled in a binary
of the run are judged again with what the run knows (:func:`join`).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from occlint.analysis.sites import (
    SiteReport,
    binaries_by_kernel,
    definitions,
    launch_index,
    site_reports,
    split_suppressed,
    targets_for,
)
from occlint.model.finding import Finding
from occlint.model.kernel import InputError, ReadResult
from occlint.model.records import KernelRecords
from occlint.model.source import SourceFile
from occlint.pipeline.facts_index import ptx_entries
from occlint.pipeline.inputs import Candidate
from occlint.pipeline.outcome import InputOutcome
from occlint.pipeline.setup import Options, Setup
from occlint.rules.engine import in_file_order, judge, judge_scope


def judge_source(source: SourceFile, setup: Setup,
                 binaries: dict[str, list[dict[str, Any]]] | None = None,
                 defined: dict[str, Any] | None = None
                 ) -> tuple[list[Finding], list[Finding], list[SiteReport]]:
    """(findings, findings suppressed in the source, judged launch sites) of one file."""
    sites = site_reports(source, targets_for(setup.devices, source, setup.read_options.targets),
                         defined, binaries)
    judge(sites, setup.settings)
    kept, suppressed = split_suppressed(
        judge_scope("source", [source], setup.settings, in_file_order), source.suppressions)
    for s in sites:
        kept.extend(s.findings)
        suppressed.extend(s.suppressed)
    return sorted(kept, key=in_file_order), sorted(suppressed, key=in_file_order), sites


def site_record(s: SiteReport) -> dict[str, Any]:
    """A launch site's entry in its file's record: the site, its advice, and the
    launch-time model's plan where the model priced it (occlint.judgement.site_plan)."""
    return {**s.site.to_dict(), "advice": s.advice,
            **({"model": s.plan.to_dict()} if s.plan is not None else {})}


def source_record(source: SourceFile, sites: list[SiteReport],
                  suppressed: list[Finding]) -> dict[str, Any]:
    """The document's ``sources`` entry of one file."""
    return {
        "path": source.path, "size": source.size, "truncated": source.truncated,
        "vendor_hint": source.vendor_hint,
        "kernels": [k.to_dict() for k in source.kernels],
        "launches": [site_record(s) for s in sites],
        "syntax_errors": [s.to_dict() for s in source.error_regions],
        "suppressions": [{"line": s.line, "codes": list(s.codes)} for s in source.suppressions],
        "suppressed": [f.to_dict() for f in suppressed],
    }


def analyse_source(candidate: Candidate, setup: Setup) -> InputOutcome | None:
    from occlint.readers.formats import is_python, python_may_hold_cuda

    python = is_python(candidate.path)
    if python and not candidate.listed and not python_may_hold_cuda(candidate.path):
        return None  # a script found in a directory, with no CUDA: not an input
    from occlint.readers.source import read_source

    try:
        source = read_source(candidate.path, candidate.display,
                             python_kernels=candidate.listed or bool(setup.source_index))
    except OSError as exc:
        error = InputError(candidate.display, f"cannot read source: {exc.strerror or exc}")
        result = ReadResult(path=candidate.display, errors=[error])
        return InputOutcome(record={"path": candidate.display, "size": 0, "sha256": None,
                                    "kernels": 0},
                            kernels=setup.sink.add([]), distinct=0, findings=[],
                            artifacts=[], errors=[error],
                            input_findings=judge_scope("input", [result], setup.settings),
                            analysed=False, group=candidate.group)
    if python and not candidate.listed and not (source.kernels or source.launches
                                                or source.truncated):
        return None  # a script found in a directory whose strings hold no CUDA: not an input
    findings, suppressed, sites = judge_source(source, setup)
    outcome = InputOutcome(record={"path": candidate.display, "size": source.size,
                                   "sha256": None, "kernels": 0},
                           kernels=setup.sink.add([]), distinct=0, findings=[], artifacts=[],
                           errors=[], input_findings=findings, analysed=True,
                           group=candidate.group)
    outcome.source = source_record(source, sites, suppressed)
    outcome.source_model = source
    return outcome


def source_index(opts: Options, candidates: list[Candidate]) -> Options:
    """With sources or PTX and binaries or traces in the run: read them first, so that
    binary kernels are analysed at their launch sites' block size and body kind, and the
    launch-time model has each kernel's facts (a source's before its PTX's)."""
    from occlint.readers.formats import is_ptx, is_source

    names = [c for c in candidates if is_source(c.path)]
    ptx = [c for c in candidates if is_ptx(c.path)]
    others = [c for c in candidates if not is_source(c.path) and not is_ptx(c.path)]
    if not (names or ptx) or not others or opts.source_index:
        return opts
    from occlint.readers.sniff import looks_like_gpu_binary

    if not any(c.listed or looks_like_gpu_binary(Path(c.path)) for c in others):
        return opts  # no binary to analyse at the sources' block sizes
    models = []
    if names:
        from occlint.readers.source import read_source

        for c in names:
            try:
                models.append(read_source(c.path, c.display))
            except OSError:
                continue
    index = launch_index(models)
    for name, where in ptx_entries(ptx).items():
        entry = index.setdefault(name, {})
        if "facts" not in entry:
            entry["ptx"] = where
    return replace(opts, source_index=index) if index else opts


def _binaries(models: list[SourceFile], texts: KernelRecords) -> dict[str, list[Any]]:
    """Binary kernel records named like a launched source kernel."""
    names = [s.kernel.encode() for m in models for s in m.launches]
    wanted = []
    for i in range(len(texts)):
        text = texts[i]
        if any(n in text for n in names):  # the text test only saves decoding
            wanted.append(json.loads(text))
    return binaries_by_kernel(wanted)


def join(models: list[SourceFile], records: list[dict[str, Any]], setup: Setup,
         texts: KernelRecords | None) -> tuple[set[str], list[Finding]]:
    """What only the whole run knows, after every input was read: launches of kernels
    defined in another source file of the run (their body and launch bounds: LCH103,
    LCH002), and launches of kernels with a binary in the run (``texts``: its wave size,
    LCH001; its occupancy, LCH003). Returns the files judged again and their findings,
    which replace those of the first judgement; updates their records."""
    defined = definitions(models)
    binaries = _binaries(models, texts) if texts is not None else {}
    out: list[Finding] = []
    rejudged: set[str] = set()
    for model, record in zip(models, records, strict=True):
        external = {s.kernel for s in model.launches
                    if model.kernel(s.kernel) is None and s.kernel in defined}
        joined = {s.kernel for s in model.launches if s.kernel in binaries}
        if not external and not joined:
            continue
        findings, suppressed, sites = judge_source(model, setup, binaries, defined)
        rejudged.add(model.path)
        out.extend(findings)
        record["launches"] = [site_record(s) for s in sites]
        record["suppressed"] = [f.to_dict() for f in suppressed]
    return rejudged, out
