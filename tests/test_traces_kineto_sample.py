"""Every complete trace read (issue 29, item 4): the ResNet-50 sample of kineto's TensorBoard
plugin, a 2021-era trace whose first 9 MB are CPU operators, was called cut short; and the
layouts ``json.load`` accepts that no byte scanner was written for.

The fixture is a cut of that sample in its own layout (fixtures/cut_kineto_samples.py:
CPU operators first, the kernel events after them, ``\\n]}`` at the end). The truth is each
trace read with the standard library's ``json`` (tests/test_traces_layouts.py's
``expected_launches``): kernel events by category, their dimensions from their args.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from occlint.pipeline.run import Options, execute
from occlint.readers.traces import kineto as kineto_mod
from occlint.readers.traces import trace_kind
from occlint.readers.traces.kineto import read_kineto
from tests.test_traces_layouts import TRAIN, expected_launches, load, read_launches

SAMPLE = (Path(__file__).resolve().parent.parent / "fixtures" / "traces" / "public"
          / "kineto_tb_resnet50_2021.pt.trace.json.gz")


def sample_bytes() -> bytes:
    return gzip.decompress(SAMPLE.read_bytes())


def test_the_sample_is_what_the_issue_describes():
    raw = sample_bytes()
    assert raw.endswith(b"\n]}")  # no newline after the document
    assert raw.index(b'"cat": "Kernel"') > 200_000  # CPU operators first
    assert sum(e.get("cat") == "Kernel" for e in json.loads(raw)["traceEvents"]) == 200


@pytest.mark.parametrize("chunk", [1 << 16, 1 << 20])
def test_kernels_after_the_first_chunk_are_read(monkeypatch, chunk):
    """With a first chunk that holds CPU operators only (the full sample's 8 MB chunk did),
    as with one that holds everything: every launch, no error."""
    monkeypatch.setattr(kineto_mod, "CHUNK", chunk)
    raw = sample_bytes()
    assert (b'"cat": "Kernel"' in raw[:chunk]) == (chunk > len(raw) // 2)
    got, errors = read_launches(SAMPLE)
    assert errors == []
    assert got == expected_launches(load(SAMPLE))


def test_the_sample_is_analysed_on_its_v100s():
    out = execute(Options(paths=[str(SAMPLE)], isolated=True))
    doc = load(SAMPLE)
    kernels = [e for e in doc["traceEvents"] if e.get("cat") == "Kernel"]
    assert out.doc["errors"] == []
    assert out.doc["summary"]["launches"]["launches"] == len(kernels)
    assert out.doc["summary"]["launches"]["kernel_time_ns"] == \
        sum(e["dur"] for e in kernels) * 1000
    assert {doc["deviceProperties"][0]["name"]} == {"Tesla V100-DGXS-32GB"}


def test_the_sample_cut_short_is_still_an_error(tmp_path):
    raw = sample_bytes()
    trace = tmp_path / "crashed.pt.trace.json"
    at = int(len(raw) * 0.8)
    trace.write_bytes(raw[:at])
    read = read_kineto(trace, "t")
    assert len(read.errors) == 1 and "cut short" in read.errors[0].message
    assert read.collector.launches in (raw[:at].count(b'"Kernel"') - 1,
                                       raw[:at].count(b'"Kernel"'))


# -- the layouts json.load accepts, each written from a real trace -----------------------------
def _sorted(doc: dict) -> bytes:
    return json.dumps(doc, sort_keys=True).encode()  # "args" before "cat": no byte scanner


LAYOUTS = {
    "sort_keys": _sorted,
    "sort_keys_indent2": lambda d: json.dumps(d, sort_keys=True, indent=2).encode(),
    "tab_indent": lambda d: json.dumps(d, indent="\t").encode(),
    "indent1": lambda d: json.dumps(d, indent=1).encode(),
    "events_first": lambda d: json.dumps(
        {"traceEvents": d["traceEvents"], **{k: v for k, v in d.items()
                                             if k != "traceEvents"}}, indent=2).encode(),
}


@pytest.mark.parametrize("source", [SAMPLE, TRAIN])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_layouts_json_writes(tmp_path, source, layout):
    doc = load(source)
    trace = tmp_path / "t.json"
    trace.write_bytes(LAYOUTS[layout](doc))
    assert trace_kind(trace) == "kineto"
    assert read_launches(trace) == (expected_launches(doc), [])


@pytest.mark.parametrize("source", [SAMPLE, TRAIN])
@pytest.mark.parametrize("edit", ["crlf", "trailing_blank_lines", "no_final_newline"])
def test_line_endings_and_trailing_whitespace(tmp_path, source, edit):
    raw = gzip.decompress(source.read_bytes())
    text = {"crlf": raw.replace(b"\n", b"\r\n"), "trailing_blank_lines": raw + b"\n\n \n",
            "no_final_newline": raw.rstrip()}[edit]
    trace = tmp_path / "t.json"
    trace.write_bytes(text)
    json.loads(text)  # the standard library accepts it
    assert read_launches(trace) == (expected_launches(load(source)), [])


def test_todays_layout_closed_as_2021_closed_it(tmp_path):
    """libkineto's current layout whose list ends in ``\\n]`` (a tool that appended keys):
    its fast path's end check fails, a full parser reads it."""
    raw = gzip.decompress(TRAIN.read_bytes())
    close = raw.rindex(b"\n  ]")
    trace = tmp_path / "t.json"
    trace.write_bytes(raw[:close] + b"\n]" + raw[close + 4:])
    json.loads(trace.read_bytes())
    assert read_launches(trace) == (expected_launches(load(TRAIN)), [])


def test_a_bare_event_list(tmp_path):
    """Chrome's JSON Array Format (the document is the event list): read; it describes no
    GPU, so its launches are analysed on the device named."""
    doc = load(SAMPLE)
    trace = tmp_path / "events.json"
    trace.write_bytes(json.dumps(doc["traceEvents"]).encode())
    assert trace_kind(trace) == "kineto"
    got, errors = read_launches(trace)
    assert errors == [] and got == expected_launches(doc)
    out = execute(Options(paths=[str(trace)], isolated=True, devices=["v100"]))
    assert out.doc["errors"] == []
    assert out.doc["summary"]["launches"]["launches"] == 200


def _nan_in_a_kernel(doc: dict) -> bytes:
    doc = json.loads(json.dumps(doc))
    next(e for e in doc["traceEvents"] if e.get("cat") in ("kernel", "Kernel"))["args"][
        "est. achieved occupancy %"] = float("nan")
    return json.dumps(doc, indent=2).encode()  # NaN: json writes and reads it, msgspec not


ENCODED = {
    "utf8_bom": lambda raw, doc: b"\xef\xbb\xbf" + raw,
    "leading_whitespace": lambda raw, doc: b"\n\n  " + raw,
    "not_ascii_escaped": lambda raw, doc: json.dumps(doc, ensure_ascii=False).encode(),
    "nan_in_a_kernel": lambda raw, doc: _nan_in_a_kernel(doc),
    "utf16_bom": lambda raw, doc: raw.decode().encode("utf-16"),
    "utf16_be": lambda raw, doc: raw.decode().encode("utf-16-be"),
    "utf32": lambda raw, doc: raw.decode().encode("utf-32"),
    "utf16_gzip": lambda raw, doc: gzip.compress(raw.decode().encode("utf-16-le")),
}


@pytest.mark.parametrize("source", [SAMPLE, TRAIN])
@pytest.mark.parametrize("encoded", sorted(ENCODED))
def test_what_json_loads_accepts(tmp_path, source, encoded):
    """The standard library's ``json.loads`` takes bytes in UTF-8 with or without a BOM,
    UTF-16 and UTF-32, and NaN: so does occlint."""
    raw = gzip.decompress(source.read_bytes())
    data = ENCODED[encoded](raw, json.loads(raw))
    trace = tmp_path / "t.json"
    trace.write_bytes(data)
    doc = json.loads(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)
    assert trace_kind(trace) == "kineto"
    assert read_launches(trace) == (expected_launches(doc), [])


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32"])
def test_a_wide_trace_is_taken_as_a_trace_by_the_run(tmp_path, encoding):
    """Named on the command line, a UTF-16 / UTF-32 trace is read as a trace (not a binary)."""
    raw = gzip.decompress(TRAIN.read_bytes())
    trace = tmp_path / "t.json"
    trace.write_bytes(raw.decode().encode(encoding))
    out = execute(Options(paths=[str(trace)], isolated=True))
    kernels = [e for e in json.loads(raw)["traceEvents"] if e.get("cat") == "kernel"]
    assert out.doc["errors"] == []
    assert out.doc["summary"]["launches"]["launches"] == len(kernels)


def test_a_damaged_trace_that_ends_well_is_still_an_error(tmp_path):
    """Its last bytes close the document, so the full parser is asked too; it refuses the
    document as ``json.loads`` does: one error, the launches read before the damage."""
    raw = gzip.decompress(SAMPLE.read_bytes())
    at = raw.index(b'"grid": [', raw.index(b'"cat": "Kernel"', len(raw) // 2))
    damaged = raw[:at] + b'"grid": [[' + raw[at + len(b'"grid": ['):]  # in a kernel event
    with pytest.raises(ValueError):
        json.loads(damaged)
    trace = tmp_path / "damaged.pt.trace.json"
    trace.write_bytes(damaged)
    read = read_kineto(trace, "t")
    assert len(read.errors) == 1
    assert 0 < read.collector.launches < raw.count(b'"cat": "Kernel"')
    out = execute(Options(paths=[str(trace)], isolated=True))  # on the V100s of its head
    category = damaged.rfind(b'"Kernel"', 0, at)  # where the damaged event's category is
    assert [e["message"].split(":")[0] for e in out.doc["errors"]] == [
        f"invalid event at byte {category}"]
    assert out.doc["summary"]["launches"]["launches"] == read.collector.launches
