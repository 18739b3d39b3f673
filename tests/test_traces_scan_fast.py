"""The any-layout scanner's fast path (kineto_scan._scan_kernels) and the one-call decode of
its kernel events (kineto._Reader.raws): what it cuts, where it stops for the careful path,
and that a trace read through it gives every launch json gives (issue 30)."""

from __future__ import annotations

import gzip
import json

import pytest

from occlint.readers.traces import kineto, kineto_scan
from tests.test_traces_layouts import TRAIN, expected_launches, load, read_launches, written


class _Texts(kineto_scan.EventSink):
    """Keeps the kernel texts the fast path cuts; takes those that are JSON objects."""

    def __init__(self) -> None:
        self.texts: list[bytes] = []

    def raws(self, texts: list[bytes]) -> int:
        for taken, text in enumerate(texts):
            try:
                if not isinstance(json.loads(text), dict):
                    return taken
            except ValueError:
                return taken
            self.texts.append(text)
        return len(texts)


def _kernel(name: str, ts: float, order: str = "") -> dict:
    event = {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts,
             "dur": 1.5, "args": {"device": 0, "stream": 7, "correlation": int(ts),
                                  "registers per thread": 32, "shared memory": 0,
                                  "grid": [2, 1, 1], "block": [128, 1, 1],
                                  "nested": {"cat": "kernel", "deeper": [{"a": "}, {"}]}}}
    keys = sorted(event) if order == "sorted" else list(event)
    return {k: event[k] for k in keys}


def _per_line(events: list[dict]) -> bytes:
    return b"}, \n{".join(json.dumps(e).encode()[1:-1] for e in events).join((b"{", b"}"))


MARKERS = kineto_scan.Markers(((b'"kernel"', True),), b"}, \n{", b'"cat": ')


@pytest.mark.parametrize("order", ["", "sorted"])
def test_cuts_each_kernel_event_in_any_key_order(order):
    """Names holding escaped quotes, the category's text and the boundary; args nested:
    each event cut whole (its first and the list's last are left to the careful path)."""
    names = ['f<\\"kernel\\">', 'g()::{lambda}}, \n{"cat": "kernel"', "h"]
    events = [_kernel(names[i % 3], 1000.0 + i, order) for i in range(9)]
    data = _per_line([{"ph": "i", "cat": "cpu_op", "name": "x"}, *events,
                      {"ph": "i", "cat": "cpu_op", "name": "y"}])
    sink = _Texts()
    pos, stopped = kineto_scan._scan_kernels(data, 0, sink, MARKERS)
    assert [json.loads(t) for t in sink.texts] == events
    assert stopped and pos > data.rindex(b'"h"')


def test_a_category_at_the_data_start_is_left_to_the_careful_path():
    """A category value at the data's first bytes (no room for the text before it): the
    fast path stops there, nothing cut."""
    data = b'"kernel", "name": "a"}, \n{"ph": "X"}'
    sink = _Texts()
    assert kineto_scan._scan_kernels(data, 0, sink, MARKERS) == (0, True)
    assert sink.texts == []


def test_an_event_longer_than_the_fast_reach_is_left_to_the_careful_path(tmp_path):
    """A kernel event longer than FAST_REACH (a name of 100 KB): the fast path stops at it,
    the careful path reads it; every launch of the trace."""
    doc = load(TRAIN)
    kernels = [e for e in doc["traceEvents"] if e.get("cat") == "kernel"]
    kernels[5]["name"] = "k" * (kineto_scan.FAST_REACH + 1000)
    data = written(doc, (", ", ": "), "", per_line=True)
    sink = _Texts()
    start = data.index(b"[\n{") + 2
    kineto_scan.scan_events(data, start, _Decoding(sink), 0, True,
                            kineto_scan.categories(data[:1 << 20], False))
    assert len(sink.texts) == len(kernels)
    trace = tmp_path / "long.json"
    trace.write_bytes(data)
    assert read_launches(trace) == (expected_launches(doc), [])


class _Decoding(kineto_scan.EventSink):
    """The careful path's events too (one at a time), as texts."""

    def __init__(self, texts: _Texts) -> None:
        self.texts = texts

    def raws(self, texts: list[bytes]) -> int:
        return self.texts.raws(texts)

    def raw(self, text: bytes) -> None:
        json.loads(text)
        self.texts.texts.append(text)


@pytest.mark.parametrize("count", [1, 2, 3])
def test_one_call_decodes_batches_of_any_size(count):
    """The batch's texts as one JSON list (brackets on its first and last text): one event,
    two, more; the texts given are left as they were."""
    texts = [json.dumps(_kernel("k", 10.0 + i)).encode() for i in range(count)]
    kept = list(texts)
    assert json.loads(kineto._json_list(texts)) == [json.loads(t) for t in texts]
    assert texts == kept
    reader = kineto._Reader("t")
    assert reader.raws(texts) == count
    assert reader.events == count and reader.collector.launches == count


@pytest.mark.parametrize("order", ["", "sorted"])
@pytest.mark.parametrize("chunk", [1 << 12, 1 << 13])
def test_events_split_across_chunks_plain_and_gzipped(tmp_path, monkeypatch, order, chunk):
    """Chunks of a few KB (every kernel event split by a chunk's end somewhere), names with
    escaped quotes: every launch, plain and gzip'd."""
    doc = load(TRAIN)
    for i, e in enumerate(doc["traceEvents"]):
        if e.get("cat") == "kernel" and i % 2:
            e["name"] += '<\\"kernel\\", "cat": "kernel">'
    data = written(doc, (", ", ": "), order, per_line=True)
    monkeypatch.setattr(kineto, "SCAN_CHUNK", chunk)
    want = expected_launches(doc)
    plain, packed = tmp_path / "t.json", tmp_path / "t.json.gz"
    plain.write_bytes(data)
    packed.write_bytes(gzip.compress(data, 1))
    assert read_launches(plain) == (want, [])
    assert read_launches(packed) == (want, [])
