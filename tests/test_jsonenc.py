"""The fast JSON encoder equals json.dumps(indent=2, ensure_ascii=False) byte for byte, and
kernel records held as text (in memory or spooled to a file) write the same document."""

from __future__ import annotations

import enum
import io
import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from occlint.model import jsonenc
from occlint.model.records import KernelRecords, Sink
from occlint.pipeline.run import Options, execute
from occlint.reporters import json_format
from tests.conftest import FIXTURES


def reference(obj) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False)


class Level(enum.IntEnum):
    HIGH = 3


class Name(str):
    pass


EDGES = [
    {}, [], (), "", 0, -1, 10**40, 0.1, -0.0, 1e-7, 1e300, float("nan"), float("inf"),
    float("-inf"), True, False, None, "ü\u2028\x00\x1f\"\\/\n\t", {"": {"": []}},
    {1: "int key", 2.5: "float key", False: "bool key", None: "null key"},
    {"enum": Level.HIGH, "str": Name("x"), Name("key"): (1, [2, {}])},
    [[[[[[]]]]]], {"a": [{"b": [{"c": []}]}]},
]


@pytest.mark.parametrize("value", EDGES, ids=range(len(EDGES)))
def test_edges(value):
    assert jsonenc.dumps(value) == reference(value)


def test_deeper_than_the_indent_table():
    value: list = []
    inner = value
    for _ in range(300):
        inner.append({"k": []})
        inner = inner[0]["k"]
    assert jsonenc.dumps(value) == reference(value)


def test_unserialisable_is_a_type_error():
    with pytest.raises(TypeError):
        jsonenc.dumps({"x": object()})
    with pytest.raises(TypeError):
        jsonenc.dumps({(1, 2): "tuple key"})


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_any_json_value(value):
    assert jsonenc.dumps(value) == reference(value)


@pytest.mark.parametrize("value", [{"a": [1, {"b": None}]}, [], {"x": "y"}])
def test_nested_at_a_depth(value):
    """encode(value, level) is what json.dumps writes for value nested level deep."""
    doc = {"k": [value]}
    assert "    " + jsonenc.encode(value, 2) in reference(doc)


@pytest.fixture(scope="module")
def fixture_document():
    opts = Options(paths=[str(FIXTURES / "amd"), str(FIXTURES / "nvidia")],
                   devices=["mi300x", "h100"], grid=1000, isolated=True, jobs=1)
    return execute(opts)


def test_report_of_every_fixture(fixture_document):
    as_text = json_format.render(fixture_document.document)  # records encoded in the run
    doc = fixture_document.doc
    assert len(doc["kernels"]) > 1000
    assert jsonenc.dumps(doc) + "\n" == reference(doc) + "\n" == json_format.render(doc)
    assert as_text == reference(doc) + "\n"


def test_raw_json_is_written_as_is():
    inner = {"x": [1, {"y": None}]}
    raw = jsonenc.RawJSON(jsonenc.encode(inner, 1))
    assert jsonenc.dumps({"a": raw, "b": 2}) == reference({"a": inner, "b": 2})


def _baseline_run(tmp_path, spool: int | None, monkeypatch) -> str:
    """A run whose baseline suppresses some findings (their records are re-encoded)."""
    if spool is not None:
        monkeypatch.setattr(KernelRecords, "SPOOL_BYTES", spool)
    paths = [str(p) for p in sorted((FIXTURES / "amd/co").glob("*.hsaco"))]  # a small run
    baseline = tmp_path / "baseline.json"
    if not baseline.exists():  # the findings of the suite code objects only
        execute(Options(paths=[str(p) for p in sorted((FIXTURES / "amd/co").glob("suite.*"))],
                        isolated=True, devices=["w7800"], write_baseline=str(baseline)))
    outcome = execute(Options(paths=paths, devices=["w7800"], isolated=True, jobs=1,
                              baseline=str(baseline)))
    if spool is not None:
        assert outcome.document["kernels"]._spool is not None  # spooled to a file
    assert outcome.document["baseline"]["suppressed"] > 0
    return json_format.render(outcome.document)


def test_spooled_records_write_the_same_document(tmp_path, monkeypatch):
    in_memory = _baseline_run(tmp_path, None, monkeypatch)
    spooled = _baseline_run(tmp_path, 1, monkeypatch)
    assert spooled == in_memory
    in_workers = execute(Options(
        paths=[str(p) for p in sorted((FIXTURES / "amd/co").glob("*.hsaco"))],
        devices=["w7800"], isolated=True, jobs=2, baseline=str(tmp_path / "baseline.json")))
    assert in_workers.document["kernels"]._chunks[0].path  # the records are in worker files
    assert json_format.render(in_workers.document) == in_memory
    doc = json.loads(in_memory)
    assert reference(doc) + "\n" == in_memory


def test_records_index_and_replace(monkeypatch, tmp_path):
    for spool in (1 << 30, 1, None):
        if spool is not None:
            monkeypatch.setattr(KernelRecords, "SPOOL_BYTES", spool)
        records = KernelRecords([b'{"a": 1}', b'{"b": 2}'])
        sink = Sink(str(tmp_path / f"worker-{spool}")) if spool is None else Sink()
        records.add(sink.add([b'{"c": 3}', b'{"d": 4}']))
        records.add(sink.add([]))
        records.add(sink.add([b'{"e": 5}']))
        sink.flush()
        records[1] = b'{"b": 22}'
        records[-2] = b'{"d": 44}'
        assert list(records) == [{"a": 1}, {"b": 22}, {"c": 3}, {"d": 44}, {"e": 5}]
        assert len(records) == 5 and records[-1] == b'{"e": 5}' and records[2] == b'{"c": 3}'
        out = io.BytesIO()
        records.write(out)
        assert out.getvalue() == b',\n    '.join(
            [b'{"a": 1}', b'{"b": 22}', b'{"c": 3}', b'{"d": 44}', b'{"e": 5}'])
        with pytest.raises(IndexError):
            records[5] = b"{}"
        directory = records._directory
        records.close()
        assert directory is None or not os.path.exists(directory)


def test_records_that_follow_in_a_file_are_copied_as_one(monkeypatch, tmp_path):
    """Consecutive inputs' records in one worker's file go out in one read (the file holds
    the separators between them); another file's records, a replaced record and records
    out of their file's order break the run, and the document is the same."""
    a, b = Sink(str(tmp_path / "worker-a")), Sink(str(tmp_path / "worker-b"))
    texts = [b'{"n": %d}' % i for i in range(9)]
    records = KernelRecords()
    a1 = a.add(texts[0:2])
    a2 = a.add(texts[2:3])
    b1 = b.add(texts[3:4])
    a3 = a.add(texts[4:5])
    a4 = a.add(texts[5:6])
    a5 = a.add(texts[6:8])
    b2 = b.add(texts[8:9])
    a.flush()
    b.flush()
    for ref in (a1, a2, b1, a4, a3, a5, b2):  # a4 before a3: not the file's order
        records.add(ref)
    reads: list[int] = []
    real_read = KernelRecords._read
    monkeypatch.setattr(KernelRecords, "_read",
                        lambda self, path, start, size: reads.append(size)
                        or real_read(self, path, start, size))
    order = [0, 1, 2, 3, 5, 4, 6, 7, 8]
    out = io.BytesIO()
    records.write(out)
    assert out.getvalue() == b",\n    ".join(texts[i] for i in order)
    assert len(reads) == 6  # a1 with a2; b1; a4; a3; a5 (a4 is between them); b2
    records[7] = b'{"n": 77}'  # in a5: written record by record
    out = io.BytesIO()
    records.write(out)
    assert out.getvalue() == b",\n    ".join(
        b'{"n": 77}' if i == 7 else texts[i] for i in order)
    records.close()


def test_shared_sections_encode_as_each_records_own():
    """Record sections shared between kernels (resources, owner, occupancy, next steps,
    advice: encoded once per distinct value) give every record the text of its own."""
    from pathlib import Path

    from occlint.analysis.kernels import analyse
    from occlint.config import load_config
    from occlint.judgement.advice import AdviceSettings
    from occlint.model.records import encode
    from occlint.pipeline.document import kernel_record
    from occlint.pipeline.inputs import expand_paths
    from occlint.pipeline.setup import Setup
    from occlint.readers.loader import ReadOptions, read_path
    from occlint.rules.engine import RuleSettings, judge

    setup = Setup.build(Options(isolated=True, devices=["h100", "mi300x"]),
                        load_config(None, True))
    rules = RuleSettings(advice=AdviceSettings(occupancy_threshold=1.01))
    candidates, _ = expand_paths([str(FIXTURES / "nvidia"), str(FIXTURES / "amd")])
    texts: set[bytes] = set()
    for c in candidates:
        result = read_path(Path(c.path), c.display, ReadOptions(), None, False)
        reports = analyse(result.kernels, setup.devices, setup.resolve, setup.db)
        judge(reports, rules)
        for report in reports:
            shared = encode(kernel_record(report, shared=True))
            assert shared == encode(kernel_record(report)), report.kernel.name
            texts.add(shared)
    assert len(texts) > 500  # many kernels, many distinct sections
