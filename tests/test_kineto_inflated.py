"""A gzip'd Kineto trace split over processes (issue 19 item 8, kineto_inflated): each
process inflates the stream from its start and scans its own range. The truth is the same
trace read as one stream (itself tested against json in tests/test_traces_layouts.py and
tests/test_kineto_rocm_scan.py), and for the counts the traces read with json; a damaged
stream or a misjudged size is read as one stream, with its errors.
"""

from __future__ import annotations

import gzip
import itertools
from pathlib import Path

import pytest

from benchmarks.trace_layouts import split_document, write_trace
from occlint.readers.traces import kineto
from occlint.readers.traces.kineto_inflated import inflated_size, planned_cuts
from tests.test_kineto_rocm_scan import read_both, same, timelines, truth
from tests.test_traces_layouts import (
    PUBLIC,
    ROCM,
    TRAIN,
    expected_launches,
    layout_bytes,
    load,
    reading,
)


def packed(tmp_path: Path, data: bytes, name: str = "t.json.gz") -> Path:
    path = tmp_path / name
    path.write_bytes(gzip.compress(data, compresslevel=1))
    return path


@pytest.fixture
def splits(monkeypatch) -> list[str]:
    """Split every trace; what each split read of a gzip'd trace gave: 'split' when its
    ranges were read, else the exception that sent it to one stream."""
    monkeypatch.setattr(kineto, "SPLIT_MIN_BYTES", 1)
    outcomes: list[str] = []
    read_split = kineto._read_split

    def spy(path, display, plan, jobs, runtime=False):
        assert isinstance(plan, kineto._InflatedPlan)
        try:
            read = read_split(path, display, plan, jobs, runtime)
        except Exception as exc:
            outcomes.append(type(exc).__name__)
            raise
        outcomes.append("split")
        return read

    monkeypatch.setattr(kineto, "_read_split", spy)
    return outcomes


@pytest.mark.parametrize("layout", ["libkineto", "compact", "pretty", "libkineto-2021"])
def test_a_gzipped_trace_split_reads_as_one_stream(tmp_path, splits, layout):
    doc = load(TRAIN)
    trace = packed(tmp_path, layout_bytes(doc, layout))
    one = kineto.read_kineto(trace, "t", jobs=1)
    assert splits == []  # one job: one stream
    assert one.errors == []
    assert one.collector.launches == sum(expected_launches(doc).values()) == 363
    for jobs in range(2, 6):
        split = kineto.read_kineto(trace, "t", jobs)
        assert splits[-1] == "split", jobs
        assert split.errors == [], jobs
        assert reading(split) == reading(one), jobs


@pytest.mark.parametrize("name", ["mi250_minitoy_train.json.gz", "mi210_gpu_only.json.gz"])
@pytest.mark.parametrize("layout", ["libkineto", "compact"])
@pytest.mark.parametrize("chunk", [None, 3001])
def test_a_gzipped_rocm_trace_joins_across_seams(tmp_path, monkeypatch, splits, name, layout,
                                                  chunk):
    """Kernels and runtime calls on either side of a seam, each range read whole or in
    chunks that cut events, are joined as json joins them (and where a small trace cannot
    be split that far, one stream reads it)."""
    doc = load(ROCM / name)
    head, evs, tail = split_document(doc)
    plain = tmp_path / "t.json"
    with open(plain, "wb") as out:
        write_trace(out, layout, head, evs, tail)
    trace = packed(tmp_path, plain.read_bytes())
    if chunk is not None:  # the head must fit in the first chunk
        head_end = plain.read_bytes().find(b'"traceEvents"') + 64
        monkeypatch.setattr(kineto, "CHUNK", head_end + chunk)
    expected, one = truth(evs), timelines(trace, 1)
    for jobs in range(2, 8):
        groups, lines = read_both(trace, jobs)
        assert same(groups, expected), jobs
        assert lines == one, jobs
        # a range after the last kernel event of a small trace has none to start at
        assert splits[-1] == "split" or jobs > 3, jobs


def test_a_cut_gzip_stream_is_salvaged_as_one_stream(tmp_path, splits):
    """A gzip'd trace cut short: the split fails where the stream ends and the trace is read
    as one stream: the launches before the cut, and the error one stream gives."""
    whole = gzip.compress(layout_bytes(load(TRAIN), "libkineto"), compresslevel=1)
    trace = tmp_path / "cut.json.gz"
    trace.write_bytes(whole[:len(whole) // 2])
    one = kineto.read_kineto(trace, "t", jobs=1)
    two = kineto.read_kineto(trace, "t", jobs=2)
    assert splits and splits[-1] != "split"
    assert 0 < two.collector.launches < 363
    assert [e.message for e in two.errors] == [e.message for e in one.errors]
    assert "cannot read the trace" in two.errors[0].message
    assert reading(two) == reading(one)


@pytest.mark.parametrize("layout", ["libkineto", "compact"])
def test_a_gzipped_document_cut_before_its_end_is_read_as_one_stream(tmp_path, splits, layout):
    """A whole gzip stream of a document cut short (the program died while writing it): the
    last range ends inside an event or without the document's end, so one stream reads it
    and says so."""
    data = layout_bytes(load(TRAIN), layout)
    trace = packed(tmp_path, data[:int(len(data) * 0.8)])
    one = kineto.read_kineto(trace, "t", jobs=1)
    two = kineto.read_kineto(trace, "t", jobs=2)
    assert splits[-1] in ("Unsplittable", "TraceError")  # no end, or an event cut
    assert [e.message for e in two.errors] == [e.message for e in one.errors]
    assert len(two.errors) == 1 and "cut short" in two.errors[0].message
    assert reading(two) == reading(one)


@pytest.mark.parametrize(("factor", "outcome"), [(0.3, "split"), (20.0, "Unsplittable")])
def test_a_misjudged_size_still_reads_every_launch(tmp_path, monkeypatch, splits, factor,
                                                   outcome):
    """Ranges planned for a size too small are unequal; planned past the stream's end, the
    trace is read as one stream. Either way every launch, once."""
    doc = load(TRAIN)
    data = layout_bytes(doc, "libkineto")
    trace = packed(tmp_path, data)
    monkeypatch.setattr(kineto, "inflated_size", lambda path: int(len(data) * factor))
    read = kineto.read_kineto(trace, "t", jobs=3)
    assert splits[-1] == outcome
    assert read.errors == []
    assert reading(read) == reading(kineto.read_kineto(trace, "t", jobs=1))


def test_inflated_size_from_the_trailer_or_the_ratio(tmp_path):
    """One member: the size its trailer records. Two members (the trailer gives only the
    last one's): within half of the truth, from the first bytes' compression ratio."""
    data = layout_bytes(load(TRAIN), "libkineto")
    assert inflated_size(packed(tmp_path, data)) == len(data)
    two = tmp_path / "two.json.gz"
    two.write_bytes(gzip.compress(data, 1) + gzip.compress(data[:1000], 1))
    assert len(data) / 1.5 < inflated_size(two) < 1.5 * (len(data) + 1000)


@pytest.mark.parametrize("jobs", [2, 3, 8])
def test_planned_ranges_cost_the_same(jobs):
    """Range k costs inflating everything up to its end and scanning itself: the same for
    every range, and the ranges cover the stream."""
    total, ratio = 10**9, 0.25
    bounds = [0, *planned_cuts(total, jobs, ratio), total]
    costs = [ratio * b + (b - a) for a, b in itertools.pairwise(bounds)]
    assert bounds == sorted(bounds) and len(bounds) == jobs + 1
    assert max(costs) - min(costs) < 1e-6 * total


@pytest.mark.parametrize("name", ["hta_cpu_only.pt.trace.json.gz",
                                  "hta_cupti_profiler_no_kernels.json.gz"])
@pytest.mark.parametrize("pack", [False, True])
def test_a_split_trace_without_kernels_says_why(tmp_path, monkeypatch, name, pack):
    """Real traces without kernel events (fixtures/traces/README.md), split plain or
    gzip'd: the reason one stream gives, not an empty reading."""
    from occlint.readers.traces import TraceError

    data = gzip.decompress((PUBLIC / name).read_bytes())
    trace = packed(tmp_path, data) if pack else tmp_path / "t.json"
    if not pack:
        trace.write_bytes(data)
    with pytest.raises(TraceError) as one:
        kineto.read_kineto(trace, "t", jobs=1)
    monkeypatch.setattr(kineto, "SPLIT_MIN_BYTES", 1)
    with pytest.raises(TraceError) as two:
        kineto.read_kineto(trace, "t", jobs=2)
    assert str(two.value) == str(one.value) and "no GPU" in str(one.value)


@pytest.mark.parametrize("pack", [False, True])
def test_a_split_trace_notes_as_one_stream(tmp_path, monkeypatch, pack):
    """A ROCm trace with graph replays and kernels on an undescribed device id (a real MI300X
    trace): the split reading's notes are one stream's, in the same order."""
    data = gzip.decompress((ROCM / "mi300x_sglang_decode.json.gz").read_bytes())
    trace = packed(tmp_path, data) if pack else tmp_path / "t.json"
    if not pack:
        trace.write_bytes(data)
    one = kineto.read_kineto(trace, "t", jobs=1)
    monkeypatch.setattr(kineto, "SPLIT_MIN_BYTES", 1)
    two = kineto.read_kineto(trace, "t", jobs=2)
    assert len(one.collector.notes) == 2 and "replayed by graph" in one.collector.notes[0]
    assert two.collector.notes == one.collector.notes
    assert reading(two) == reading(one)
