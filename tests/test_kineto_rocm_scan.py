"""The ROCm Kineto scan (issue 19 item 8): kernel events and their runtime calls found by
their first line in libkineto's layout and decoded into typed structs, odd events by the
dict path. The truth is the public ROCm traces (fixtures/traces/README.md) read with the
standard library's json and joined here by correlation id, as the HIP API defines the grids
(tests/test_kineto_links.py: ``launched_grids``).
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import pytest

from benchmarks.trace_layouts import split_document, write_trace
from occlint.readers.traces import kineto
from tests.test_kineto_links import ROCM, events, launched_grids


def read_groups(path: Path, jobs: int = 1) -> tuple[Counter, Counter, Counter, float]:
    """(kernel, grid, block) counts, launches per device and per dynamic LDS size, and the
    summed kernel time (µs) as occlint reads the trace."""
    return _groups_of(kineto.read_kineto(path, "t", jobs))


def read_both(path: Path, jobs: int) -> tuple[tuple[Counter, Counter, Counter, float], dict]:
    """:func:`read_groups` and :func:`timelines` of one read (split over ``jobs``
    processes)."""
    read = kineto.read_kineto(path, "t", jobs)
    return _groups_of(read), _timelines_of(read.collector)


def _groups_of(read) -> tuple[Counter, Counter, Counter, float]:
    grids: Counter = Counter()
    devices: Counter = Counter()
    lds: Counter = Counter()
    for g in read.collector.group_list:
        grids[(g.key.kernel, tuple(g.key.grid), tuple(g.key.block))] += g.count
        devices[g.key.device] += g.count
        lds[g.key.resources.dynamic_lds] += g.count
    assert read.errors == []
    return grids, devices, lds, sum(g.total_ns for g in read.collector.group_list) / 1000.0


def truth(evs: list[dict]) -> tuple[Counter, Counter, Counter, float]:
    kernels = [e for e in evs if e.get("cat") == "kernel"]
    devices = Counter(str(k["args"].get("device", k.get("pid"))) for k in kernels)
    calls = {e["args"]["correlation"]: e["args"] for e in evs
             if e.get("cat") == "cuda_runtime" and "grid" in e.get("args", {})}
    lds = Counter(calls[k["args"]["correlation"]].get("shared memory") for k in kernels)
    return launched_grids(evs), devices, lds, sum(k.get("dur", 0.0) for k in kernels)


def same(found: tuple, expected: tuple) -> bool:
    return found[:3] == expected[:3] and found[3] == pytest.approx(expected[3], rel=1e-9)


@pytest.mark.parametrize("name", ["mi250_minitoy_train.json.gz", "mi210_gpu_only.json.gz"])
@pytest.mark.parametrize("chunk", [1 << 23, 9000, 4133, 2500])
@pytest.mark.parametrize("packed", [False, True], ids=["plain", "gzip"])
def test_rocm_scan_at_every_chunk_boundary(monkeypatch, tmp_path, name, chunk, packed):
    """libkineto's layout, read by one process in chunks (gzip'd) or in windows of the
    file's mapping (plain) that cut events (and their first lines) at many places: every
    launch joined to its call, as json reads it."""
    evs = events(ROCM / name)
    path = tmp_path / ("trace.json.gz" if packed else "trace.json")
    with gzip.open(ROCM / name) as fh:
        data = fh.read()
    path.write_bytes(gzip.compress(data) if packed else data)
    head_end = data.find(b'"traceEvents": [') + 64
    monkeypatch.setattr(kineto, "CHUNK", max(chunk, head_end))
    monkeypatch.setattr(kineto, "MAPPED_WINDOW", chunk)
    assert same(read_groups(path), truth(evs))


def odd(evs: list[dict]) -> list[dict]:
    """The same trace with events the typed decoders refuse or the byte scanners must
    delimit with care: a kernel without ``device`` (its pid stands in), a stream as a
    string, a call whose args hold a nested object with a ``}`` in a string, a
    list as External id."""
    out = json.loads(json.dumps(evs))
    kernels = [e for e in out if e.get("cat") == "kernel"]
    calls = [e for e in out if e.get("cat") == "cuda_runtime" and "grid" in e.get("args", {})]
    del kernels[0]["args"]["device"]
    kernels[1]["args"]["stream"] = "0x0"
    kernels[2]["args"]["External id"] = [1, 2]
    calls[0]["args"]["extra"] = {"nested": [1, {"x": "}"}]}
    return out


@pytest.mark.parametrize("name", ["mi250_minitoy_train.json.gz", "mi210_gpu_only.json.gz"])
@pytest.mark.parametrize("layout", ["libkineto", "compact"])
def test_odd_events_take_the_dict_path(tmp_path, name, layout):
    """Events of another shape give what json gives, in libkineto's layout and in the
    compact one (the layout-free scanner)."""
    with gzip.open(ROCM / name) as fh:
        doc = json.load(fh)
    head, evs, tail = split_document(doc)
    evs = odd(evs)
    path = tmp_path / "trace.json"
    with open(path, "wb") as out:
        write_trace(out, layout, head, evs, tail)
    assert same(read_groups(path), truth(evs))


def timelines(path: Path, jobs: int) -> dict:
    """Each stream's launches (start, duration, kernel), in time order."""
    return _timelines_of(kineto.read_kineto(path, "t", jobs).collector)


def _timelines_of(c) -> dict:
    return {k: sorted(zip(t.starts, t.durations, (c.group_list[i].key for i in t.groups),
                          strict=True)) for k, t in c.streams.items()}


@pytest.mark.parametrize("name", ["mi250_minitoy_train.json.gz", "mi210_gpu_only.json.gz"])
@pytest.mark.parametrize("layout", ["libkineto", "compact"])
@pytest.mark.parametrize("chunk", [None, 3001])
def test_split_rocm_scan_joins_across_seams(tmp_path, monkeypatch, name, layout, chunk):
    """A ROCm trace split over 2 to 9 processes, each reading its range whole or in chunks
    (windows of the file's mapping) that cut events: kernels and runtime calls on either
    side of every seam are joined as json joins them, and each stream's launches are one
    process's."""
    with gzip.open(ROCM / name) as fh:
        doc = json.load(fh)
    head, evs, tail = split_document(doc)
    path = tmp_path / "trace.json"
    with open(path, "wb") as out:
        write_trace(out, layout, head, evs, tail)
    monkeypatch.setattr(kineto, "SPLIT_MIN_BYTES", 1)
    if chunk is not None:  # the head must fit in the first chunk
        head_end = path.read_bytes().find(b'"traceEvents"') + 64
        monkeypatch.setattr(kineto, "CHUNK", head_end + chunk)
        monkeypatch.setattr(kineto, "MAPPED_WINDOW", chunk)  # libkineto's layout: mapped
    crossing: Counter = Counter()  # launches joined across seams
    join = kineto._join_seams

    def counted(reader, seams):
        before = reader.collector.launches
        join(reader, seams)
        crossing["joined"] += reader.collector.launches - before

    monkeypatch.setattr(kineto, "_join_seams", counted)
    expected, one = truth(evs), timelines(path, 1)
    for jobs in range(2, 10):
        groups, lines = read_both(path, jobs)
        assert same(groups, expected), jobs
        assert lines == one, jobs
    assert crossing["joined"] >= 5  # seams did cut kernels from their calls


@pytest.mark.parametrize(("trace", "passes"), [
    (ROCM / "mi210_gpu_only.json.gz", [True]),  # deviceProperties: gfx90a, AMD Instinct MI210
    (ROCM.parent / "resnet18_train.pt.trace.json.gz", [False]),  # an H100
])
def test_a_trace_describing_amd_gpus_is_read_once_with_its_calls(monkeypatch, trace, passes):
    """The runtime calls are read from the start when the head describes an AMD GPU (no
    first pass stopped at the first kernel); an NVIDIA trace reads its kernel events only."""
    seen: list[bool] = []
    scan = kineto._scan_layout
    monkeypatch.setattr(kineto, "_scan_layout",
                        lambda fh, data, reader, runtime=False:
                        seen.append(runtime) or scan(fh, data, reader, runtime))
    assert kineto.read_kineto(trace, "t").collector.launches > 0
    assert seen == passes


def test_a_bad_launch_shape_is_counted_at_every_launch(tmp_path):
    """Every launch of a call shape no GPU can run (a block of 2048 threads, above HIP's
    1024) is skipped and counted, the cached shape included; the others are read."""
    with gzip.open(ROCM / "mi210_gpu_only.json.gz") as fh:
        doc = json.load(fh)
    head, evs, tail = split_document(doc)
    calls = [e for e in evs if e.get("cat") == "cuda_runtime" and "grid" in e["args"]]
    shape = Counter((c["args"]["kernel"], tuple(c["args"]["grid"]), tuple(c["args"]["block"]))
                    for c in calls).most_common(1)[0]
    for c in calls:
        if (c["args"]["kernel"], tuple(c["args"]["grid"]), tuple(c["args"]["block"])) \
                == shape[0]:
            c["args"]["block"] = [2048, 1, 1]
    path = tmp_path / "trace.json"
    with open(path, "wb") as out:
        write_trace(out, "libkineto", head, evs, tail)
    read = kineto.read_kineto(path, "t")
    kernels = sum(e.get("cat") == "kernel" for e in evs)
    assert shape[1] > 1
    assert read.collector.launches == kernels - shape[1]
    (error,) = read.errors
    assert error.message.startswith(f"skipped {shape[1]} inconsistent launch records: ")
