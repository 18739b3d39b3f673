"""What one input gives the run: :class:`InputOutcome`, compact enough to send between
processes (its kernel records as JSON text, its findings, artifacts and errors)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from occlint.model.finding import Finding, Tally, tally
from occlint.model.kernel import InputError, ReadResult
from occlint.model.pickling import by_fields
from occlint.model.records import Sink, Texts, encode
from occlint.pipeline.document import artifact_record, input_record, kernel_record


class TraceCandidate(NamedTuple):
    """A profiler trace found among the inputs: read after them (occlint.pipeline.traces)."""

    path: str
    display: str
    kind: str
    member: str | None = None  # a member of the zip archive at ``path``


@by_fields
@dataclass(slots=True)
class InputOutcome:
    """What one input gave, compact enough to send between processes."""

    record: dict[str, Any] | None  # the document's "inputs" entry; None: a skipped file
    kernels: Texts  # its kernel records as JSON text (in memory or in a worker's file)
    distinct: int  # distinct (file, entry, name) among them (files differ between inputs)
    findings: list[list[Finding | Tally]]  # the findings in each record (see outcome)
    artifacts: list[dict[str, Any]]
    errors: list[InputError]
    input_findings: list[Finding]
    analysed: bool  # kernels or artifacts found
    group: int | None = None  # a member group of an archive: merged into the group before
    source: dict[str, Any] | None = None  # a CUDA / HIP source: its "sources" record
    source_model: Any = None  # ... and its SourceFile (for the join with binaries)
    skipped: int = 0  # files without GPU code: archive members, or this file in a walk
    # traces, read later in this process (occlint.pipeline.traces): this file, or the trace
    # members of this zip archive
    traces: list[TraceCandidate] = field(default_factory=list)


def outcome(result: ReadResult, reports: list, input_findings: list[Finding],
            sink: Sink, whole_findings: bool = True) -> InputOutcome:
    """The outcome of a read input and its judged kernel reports (their findings whole, or,
    ``whole_findings`` False, as the Tally that the run's summary needs: the records hold
    them whole)."""
    return InputOutcome(
        record=input_record(result),
        kernels=sink.add(encode(kernel_record(r, shared=True)) for r in reports),
        distinct=len({(r.kernel.file, r.kernel.entry, r.kernel.name) for r in reports}),
        findings=[r.findings if whole_findings else [tally(f) for f in r.findings]
                  for r in reports],
        artifacts=[artifact_record(a) for a in result.artifacts],
        errors=result.errors,
        input_findings=input_findings,
        analysed=bool(result.kernels) or bool(result.artifacts),
        skipped=result.skipped,
    )


def skipped() -> InputOutcome:
    """A file found in a directory that holds no GPU code: not an input, only counted."""
    return InputOutcome(record=None, kernels=(), distinct=0, findings=[], artifacts=[],
                        errors=[], input_findings=[], analysed=False, skipped=1)
