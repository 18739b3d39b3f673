"""The kinds of input a run reads, tried in order; the first that claims a file reads it.

Each kind is one registration: a test of the file (its name, or its first bytes) and the
function that reads, analyses and judges it into an :class:`InputOutcome`. A new kind of
input (say, another profiler's format) is a reader and one entry in :data:`INPUT_KINDS`.

* ``source``: CUDA / HIP source (occlint.pipeline.sources): its launch sites;
* ``ptx``: PTX text, read before the run for its kernels' facts (the launch-time model's,
  occlint.pipeline.sources.source_index); on its own, nothing to analyse;
* ``trace``: a profiler trace, read after every other input (occlint.pipeline.traces);
* ``binary``: anything else: GPU code, or a host binary / archive holding it (and the
  traces a zip archive holds).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from occlint.analysis.kernels import analyse
from occlint.model.kernel import InputError, ReadResult
from occlint.model.records import Texts
from occlint.pipeline.inputs import Candidate
from occlint.pipeline.outcome import InputOutcome, TraceCandidate, outcome, skipped
from occlint.pipeline.setup import Setup
from occlint.rules.engine import judge, judge_scope


@dataclass
class Probe:
    """One candidate and what its kinds' tests read of it, read at most once."""

    candidate: Candidate

    @cached_property
    def head(self) -> bytes | None:
        from occlint.readers.sniff import read_head

        return read_head(self.candidate.path) if self.candidate.group is None else None

    @cached_property
    def trace_format(self) -> str | None:
        from occlint.readers.formats import BINARY_MAGICS

        head = self.head
        if not head or head.startswith(BINARY_MAGICS):
            return None  # told without importing the trace readers
        from occlint.readers.traces import classify

        return classify(Path(self.candidate.path), head)


@dataclass(frozen=True)
class InputKind:
    name: str
    claims: Callable[[Probe], bool]
    analyse: Callable[[Probe, Setup], InputOutcome | None]


def _is_source(probe: Probe) -> bool:
    from occlint.readers.formats import is_source

    return probe.candidate.group is None and is_source(probe.candidate.path)


def _source(probe: Probe, setup: Setup) -> InputOutcome:
    from occlint.pipeline.sources import analyse_source

    return analyse_source(probe.candidate, setup)


def _is_ptx(probe: Probe) -> bool:
    from occlint.readers.formats import is_ptx

    return probe.candidate.group is None and is_ptx(probe.candidate.path)


def _ptx(probe: Probe, setup: Setup) -> InputOutcome | None:
    c = probe.candidate
    if setup.source_index:
        return InputOutcome(None, Texts(()), 0, [], [], [], [], True)
    if not c.listed:
        return None  # found in a directory with nothing its facts serve
    return failed(c, "PTX gives the launch-time model its kernels' facts (bytes and "
                     "arithmetic per element), not occupancy: pass it with the trace or "
                     "binary that runs them", setup)


def _trace(probe: Probe, setup: Setup) -> InputOutcome:
    from occlint.readers.traces import RUN_OUTPUTS

    c = probe.candidate
    assert probe.trace_format is not None
    if probe.trace_format in RUN_OUTPUTS and not c.listed:
        return skipped()  # a profiler's other output in a directory: its kernel trace is read
    return InputOutcome(None, Texts(()), 0, [], [], [], [], False,
                        traces=[TraceCandidate(c.path, c.display, probe.trace_format)])


def _zip_traces(candidate: Candidate) -> list[TraceCandidate]:
    from occlint.readers.traces import zip_trace_members

    return [TraceCandidate(candidate.path, f"{candidate.display}!/{member}", kind, member)
            for member, kind in zip_trace_members(Path(candidate.path))]


def _binary(probe: Probe, setup: Setup) -> InputOutcome | None:
    from occlint.readers.formats import ZIP_MAGIC
    from occlint.readers.sniff import sniff

    candidate, head = probe.candidate, probe.head
    path = Path(candidate.path)
    traces = _zip_traces(candidate) if head and head.startswith(ZIP_MAGIC) else []
    if not candidate.listed:
        kind = sniff(path, head)
        if kind != "gpu":
            return skipped() if kind == "host" else None
    from occlint.readers.loader import read_path  # the binary readers: only for GPU code

    result = read_path(path, candidate.display, setup.read_options, candidate.group,
                       candidate.listed and not traces)
    if result.no_gpu_code:
        out = skipped()
        if traces:  # a zip of traces: not skipped, its traces are read
            out.skipped, out.traces = 0, traces
        return out
    reports = analyse(result.kernels, setup.devices, setup.resolve, setup.db, result.unfit)
    judge(reports, setup.settings)
    out = outcome(result, reports, judge_scope("input", [result], setup.settings), setup.sink,
                  setup.whole_findings)
    out.group = candidate.group
    out.traces = traces
    return out


INPUT_KINDS: tuple[InputKind, ...] = (
    InputKind("source", _is_source, _source),
    InputKind("ptx", _is_ptx, _ptx),
    InputKind("trace", lambda probe: probe.trace_format is not None, _trace),
    InputKind("binary", lambda probe: True, _binary),
)


def analyse_input(candidate: Candidate, setup: Setup) -> InputOutcome | None:
    """Read, analyse and judge one input; None for a file found in a directory that is not
    GPU code, an outcome without a record (``skipped``) for a host binary found there that
    holds none, and one without a record holding ``traces`` for a profiler trace."""
    try:
        probe = Probe(candidate)
        kind = next(k for k in INPUT_KINDS if k.claims(probe))
        return kind.analyse(probe, setup)
    except Exception as exc:
        if not setup.isolate_failures:
            raise
        message = (f"internal error: {type(exc).__name__}: {exc} (please report it; "
                   "--debug shows a traceback)")
        return failed(candidate, message, setup)


def failed(candidate: Candidate, message: str, setup: Setup) -> InputOutcome:
    """An input whose analysis failed: its one error."""
    result = ReadResult(path=candidate.display,
                        errors=[InputError(candidate.display, message)])
    out = outcome(result, [], judge_scope("input", [result], setup.settings), setup.sink)
    out.group = candidate.group
    return out
