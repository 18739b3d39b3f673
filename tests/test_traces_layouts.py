"""Kineto traces as found in the wild (issue 19): every layout, traces whose event list starts
after a large head, and profiler outputs that hold no launches.

The fixtures are real traces others recorded and published (fixtures/traces/public, cut by
fixtures/cut_public_traces.py) and the H100 traces of fixtures/traces/kineto written in each
layout by benchmarks/trace_layouts.py. The truth is each trace read with the standard
library's ``json``: kernel events by category, their dimensions from their args, or for ROCm
builds from the runtime call with the same correlation id.
"""

from __future__ import annotations

import collections
import gzip
import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from benchmarks.trace_layouts import LAYOUTS, split_document, write_trace
from occlint.pipeline.run import Options, execute
from occlint.readers.traces import trace_kind
from occlint.readers.traces.kineto import read_kineto

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "traces"
PUBLIC = ROOT / "public"
ROCM = ROOT / "kineto" / "rocm"  # public ROCm traces (fixtures/fetch_rocm_kineto.py)
TRAIN = ROOT / "kineto" / "resnet18_train.pt.trace.json.gz"
METADATA_FIRST = PUBLIC / "tracelens_h100_bert_metadata_first.json.gz"


def load(path: Path) -> dict:
    with (gzip.open(path) if path.suffix == ".gz" else open(path, "rb")) as fh:
        return json.load(fh)


WORK_ITEM_CALLS = ("hipExtModuleLaunchKernel", "hipHccModuleLaunchKernel")  # HIP: work-items


def expected_launches(doc: dict) -> collections.Counter:
    """(kernel, grid, block, device, stream) -> launches, read with json: dimensions from
    the kernel's args or, for a ROCm kernel (no registers), from the runtime call of the same
    correlation id when it gives them (its grid in work-items for hipExtModuleLaunchKernel:
    blocks = ceil(work-items / block))."""
    events = doc["traceEvents"]
    calls = {e["args"]["correlation"]: (e["name"], e["args"]) for e in events
             if e.get("cat") in ("cuda_runtime", "Runtime") and "grid" in e.get("args", {})}
    out: collections.Counter = collections.Counter()
    for e in events:
        if e.get("cat") not in ("kernel", "Kernel"):
            continue
        a = e["args"]
        grid, block = a.get("grid"), a.get("block")
        if "registers per thread" not in a and a.get("correlation") in calls:
            api, call = calls[a["correlation"]]
            grid, block = call["grid"], call["block"]
            if api in WORK_ITEM_CALLS:
                grid = [-(-g // b) for g, b in zip(grid, block, strict=True)]
        out[(e["name"], tuple(grid), tuple(block), str(a["device"]), str(a["stream"]))] += 1
    return out


def read_launches(path: Path) -> tuple[collections.Counter, list[str]]:
    read = read_kineto(path, str(path))
    got: collections.Counter = collections.Counter()
    for g in read.collector.group_list:
        for stream in g.streams:
            got[(g.key.kernel, g.key.grid, g.key.block, g.key.device, stream)] += \
                read.collector.streams[(g.key.device, stream)].groups.count(
                    read.collector.group_list.index(g))
    return got, [e.message for e in read.errors]


# -- public traces in the layouts found in the wild --------------------------------------------
@pytest.mark.parametrize("name", [
    "hta_inference_rank_1_2021.json.gz",  # 2021 libkineto: "Kernel", list closed by "\n]"
    "hta_trace_compare_one_line.json.gz",  # json.dump: one line
    "hta_backward_thread_indent4.json",  # indent=4
    "tracelens_h100_bert_metadata_first.json.gz",  # 26 KB metadata first, indent=2
    "tracelens_mi300_bert_metadata_first.json.gz",  # the same on ROCm: dims on runtime calls
    "../kineto/rocm/mi210_gpu_only.json.gz",  # ROCm, libkineto's layout
    "../kineto/rocm/mi250_minitoy_train.json.gz",  # ROCm 6.2: dimensions on runtime calls only
])
def test_public_traces_read_every_launch(name):
    path = PUBLIC / name
    want = expected_launches(load(path))
    assert sum(want.values()) > 0
    got, errors = read_launches(path)
    assert errors == []
    assert got == want


def test_2021_layout_keeps_registers_and_shared_memory():
    """No false "cut short"; the 2021 layout has no deviceProperties, so without --device
    its launches are counted and one error says that none could be analysed (exit 2)."""
    doc, code = run(PUBLIC / "hta_inference_rank_1_2021.json.gz")
    kernels = [e for e in load(PUBLIC / "hta_inference_rank_1_2021.json.gz")["traceEvents"]
               if e.get("cat") == "Kernel"]
    assert [e["message"].split(":")[0] for e in doc["errors"]] == [
        f"none of its {len(kernels)} launches could be analysed"] and code == 2
    with_device = execute(Options(paths=[str(PUBLIC / "hta_inference_rank_1_2021.json.gz")],
                                  isolated=True, devices=["a100"]))
    assert with_device.doc["errors"] == [] and with_device.exit_code != 2
    assert sorted((r["resources"]["trace"]["registers"], r["resources"]["trace"]["shared_total"])
                  for r in doc["launches"] for _ in range(r["count"])) == sorted(
        (e["args"]["registers per thread"], e["args"]["shared memory"]) for e in kernels)


def run(*paths) -> tuple[dict, int]:
    out = execute(Options(paths=[str(p) for p in paths], isolated=True))
    return out.doc, out.exit_code


# -- item 1: the event list after a large head -------------------------------------------------
def test_metadata_first_is_recognised_everywhere(tmp_path):
    raw = gzip.decompress(METADATA_FIRST.read_bytes())
    assert raw.index(b'"traceEvents"') > 25_000  # the real trace's metadata object
    launches = sum(expected_launches(json.loads(raw)).values())
    plain = tmp_path / "walk" / "bert.json"  # no telling name, not gzip'd
    plain.parent.mkdir()
    plain.write_bytes(raw)
    (tmp_path / "walk" / "bert.json.gz").write_bytes(METADATA_FIRST.read_bytes())
    assert trace_kind(plain) == trace_kind(METADATA_FIRST) == "kineto"
    archive = tmp_path / "traces.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        z.write(plain, "a/bert.json")
        z.write(METADATA_FIRST, "b/bert.json.gz")
    for target, inputs in ((plain, 1), (METADATA_FIRST, 1), (plain.parent, 2), (archive, 2)):
        doc, code = run(target)
        assert doc["errors"] == [], target
        assert doc["summary"]["launches"]["launches"] == launches * inputs, target
        assert code in (0, 1)


def test_directory_walk_reads_a_trace_named_by_the_profiler(tmp_path):
    """A head longer than occlint looks (1 MiB): a file named as the profiler names its
    traces is still read, not dropped."""
    doc = load(TRAIN)
    head, events, tail = split_document(doc)
    trace = tmp_path / "host_123.1700000000.pt.trace.json"
    with open(trace, "wb") as out:
        write_trace(out, "pretty", {"metadata": {"note": "x" * (2 << 20)}, **head}, events,
                    tail)
    got, _ = run(tmp_path)
    assert got["summary"]["launches"]["launches"] == sum(expected_launches(doc).values())


# -- item 5: profiler outputs without launches: one line, exit 2 -------------------------------
@pytest.mark.parametrize(("path", "words"), [
    (PUBLIC / "hta_simple_add_et.json.gz", "PyTorch execution trace"),
    (PUBLIC / "hta_memory_timeline.raw.gz", "PyTorch memory timeline"),
    (PUBLIC / "hta_cpu_only.pt.trace.json.gz", "CPU-only profile: no GPU events"),
    (PUBLIC / "hta_cupti_profiler_no_kernels.json.gz", "did not record GPU activity"),
    (PUBLIC / "topk_report1.nsys-rep.head", "nsys export --type sqlite"),
    (ROOT / "nsys" / "no_kernels.sqlite", "no CUPTI_ACTIVITY_KIND_KERNEL table"),
])
def test_no_launches_one_line_and_exit_2(path, words):
    proc = subprocess.run([sys.executable, "-m", "occlint", str(path)], capture_output=True,
                          text=True)
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2
    assert len(lines) == 1 and lines[0].startswith(f"occlint: error: {path}: ")
    assert words in lines[0]
    assert "not a GPU binary" not in proc.stderr and "Traceback" not in proc.stderr


def test_a_perfetto_trace_of_rocprofv3_says_what_to_pass_instead(tmp_path):
    """rocprofv3's Perfetto output (told by its name: its protocol buffers start as any
    do) is not read: one line names what to pass, on the command line and in a walk."""
    trace = tmp_path / "node0" / "1234_results.pftrace"
    trace.parent.mkdir()
    trace.write_bytes(b"\x0a\x10\x08\x01")  # a TracePacket's first bytes
    for path in (trace, tmp_path):
        proc = subprocess.run([sys.executable, "-m", "occlint", str(path)],
                              capture_output=True, text=True)
        assert proc.returncode == 2
        (line,) = proc.stderr.splitlines()
        assert line.startswith(f"occlint: error: {trace}: a Perfetto trace")
        assert "_results.db" in line and "not a GPU binary" not in line


def test_no_launches_beside_a_trace_is_one_error(tmp_path):
    """With another trace analysed, the file without launches is an error, not a finding."""
    doc, code = run(PUBLIC / "hta_cpu_only.pt.trace.json.gz", METADATA_FIRST)
    assert [e["message"][:20] for e in doc["errors"]] == ["a CPU-only profile: "]
    assert doc["summary"]["launches"]["launches"] == 60
    assert code == 1


# -- item 8: every layout of the same trace, the same launches ---------------------------------
def layout_bytes(doc: dict, layout: str) -> bytes:
    out = io.BytesIO()
    write_trace(out, layout, *split_document(doc))
    return out.getvalue()


@pytest.mark.parametrize("source", [TRAIN, ROCM / "mi210_gpu_only.json.gz",
                                    ROCM / "mi250_minitoy_train.json.gz"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_layout_reads_like_json(tmp_path, source, layout):
    doc = load(source)
    trace = tmp_path / f"{layout}.json"
    trace.write_bytes(layout_bytes(doc, layout))
    got, errors = read_launches(trace)
    assert errors == []
    assert got == expected_launches(doc)


def test_layout_writers_are_what_json_writes():
    doc = load(TRAIN)
    assert layout_bytes(doc, "pretty") == json.dumps(doc, indent=2).encode()
    assert layout_bytes(doc, "json-dump") == json.dumps(doc).encode()
    assert layout_bytes(doc, "compact") == json.dumps(doc, separators=(",", ":")).encode()


def test_hostile_names_and_key_orders(tmp_path):
    """Kernel names holding braces, quotes and the category text; events whose name comes
    before their category (ijson reads those): the same launches."""
    doc = load(TRAIN)
    for i, e in enumerate(doc["traceEvents"]):
        if e.get("cat") == "kernel" and i % 3 == 0:
            e["name"] += '::{lambda()#1}}, {"cat": "kernel", "args": {}}'
    want = expected_launches(doc)
    for layout in ("compact", "per-line", "pretty"):
        trace = tmp_path / f"{layout}.json"
        trace.write_bytes(layout_bytes(doc, layout))
        assert read_launches(trace) == (want, [])
    doc["traceEvents"] = [{"name": e.pop("name"), **e} if "name" in e else e
                          for e in doc["traceEvents"]]
    trace = tmp_path / "name-first.json"
    trace.write_bytes(layout_bytes(doc, "compact"))
    assert read_launches(trace) == (want, [])


def _ordered(event: dict, order: str) -> dict:
    keys = list(event)
    if order == "sorted":
        keys.sort()
    elif order == "reversed":
        keys.reverse()
    elif order in ("args-first", "name-first"):
        first = order.split("-")[0]
        keys = [k for k in keys if k == first] + [k for k in keys if k != first]
    return {k: event[k] for k in keys}


def written(doc: dict, separators: tuple[str, str], order: str = "", per_line: bool = False,
            indent: int | None = None) -> bytes:
    """``doc`` as a JSON writer of these separators writes it, each event's keys in
    ``order``: on one line, one event per line, or indented."""
    events = [_ordered(e, order) if isinstance(e, dict) else e for e in doc["traceEvents"]]
    if not per_line:
        return json.dumps({**doc, "traceEvents": events}, separators=separators,
                          indent=indent).encode()
    head, _, tail = split_document(doc)
    item, key = separators
    body = (item + "\n").join(json.dumps(e, separators=separators) for e in events)
    keys = json.dumps(head, separators=separators)[1:-1]
    rest = json.dumps(tail, separators=separators)[1:-1]
    return ("{" + keys + (item if keys else "") + '"traceEvents"' + key + "[\n" + body + "\n]"
            + (item + rest if rest else "") + "}").encode()


WRITERS = [  # (separators, key order, one event per line, indent)
    ((", ", ": "), "sorted", True, None), ((", ", ": "), "sorted", False, None),
    ((",", ":"), "sorted", False, None), ((",", ":"), "reversed", True, None),
    ((", ", ": "), "args-first", False, None), ((",", ": "), "name-first", True, None),
    ((", ", ":"), "reversed", False, None), ((",", ": "), "sorted", False, 4),
    ((",", ": "), "reversed", False, 1), ((", ", ": "), "", True, None),
]


@pytest.mark.parametrize("source", [TRAIN, ROCM / "mi250_minitoy_train.json.gz"])
@pytest.mark.parametrize(("separators", "order", "per_line", "indent"), WRITERS)
def test_any_key_order_and_separators_are_scanned(tmp_path, monkeypatch, source, separators,
                                                  order, per_line, indent):
    """Keys in any order (the category after ``args``, or last), any separators, one event
    per line, all on one line or indented: every launch, found by the byte scanner (ijson,
    the reader of last resort, is never needed)."""
    from occlint.readers.traces import kineto as kineto_mod

    def no_ijson(*_):
        raise AssertionError("read by ijson")

    monkeypatch.setattr(kineto_mod, "_scan_generic", no_ijson)
    doc = load(source)
    trace = tmp_path / "t.json"
    trace.write_bytes(written(doc, separators, order, per_line, indent))
    assert read_launches(trace) == (expected_launches(doc), [])


@pytest.mark.parametrize("order", ["sorted", "reversed"])
def test_key_orders_split_over_processes(tmp_path, monkeypatch, order):
    """A trace whose events' category comes after their args, split over processes at its
    kernel events: what one process reads, plain and gzip'd."""
    from occlint.readers.traces import kineto as kineto_mod

    doc = load(TRAIN)
    data = written(doc, (", ", ": "), order, per_line=True)
    plain, packed = tmp_path / "t.json", tmp_path / "t.json.gz"
    plain.write_bytes(data)
    packed.write_bytes(gzip.compress(data, 1))
    monkeypatch.setattr(kineto_mod, "SPLIT_MIN_BYTES", 1)
    one = kineto_mod.read_kineto(plain, "t", jobs=1)
    assert one.collector.launches == 363 and one.errors == []
    split = kineto_mod._read_split
    for trace in (plain, packed):
        splits = []
        monkeypatch.setattr(kineto_mod, "_read_split",
                            lambda *a, splits=splits: splits.append(a[2]) or split(*a))
        three = kineto_mod.read_kineto(trace, "t", jobs=3)
        assert len(splits) == 1 and len(splits[0][1]) == 3, trace.name
        assert three.errors == [] and reading(one) == reading(three), trace.name


def test_events_of_other_spacing_and_boundaries_in_names(tmp_path):
    """A trace whose events are not all written alike (some with other separators, as when
    traces are joined by hand), kernel names holding the boundary between two events: the
    same launches."""
    doc = load(TRAIN)
    for i, e in enumerate(doc["traceEvents"]):
        if e.get("cat") == "kernel" and i % 3 == 0:
            e["name"] += "::{lambda()#1}, {lambda()#2}"
    want = expected_launches(doc)
    texts = [json.dumps(_ordered(e, "sorted"), separators=(",", ":") if i % 5 else (", ", ": "))
             for i, e in enumerate(doc["traceEvents"])]
    trace = tmp_path / "mixed.json"
    trace.write_text('{"traceEvents": [' + ", ".join(texts) + "]}")
    assert read_launches(trace) == (want, [])
    trace.write_bytes(written(doc, (", ", ": "), "sorted"))
    assert read_launches(trace) == (want, [])


@pytest.mark.parametrize("separator", [
    lambda i: ", " if i % 2 else ",\n",  # two spellings, one after the other
    lambda i: [", ", ",", ",\n", " , "][i * 7919 % 4],  # four, in no order
])
def test_irregular_separators_cost_a_few_cuts_a_kernel(tmp_path, monkeypatch, separator):
    """Events not all separated alike (the boundary learned from the first two is wrong for
    many): every launch, and the fast path gives up on a chunk rather than cutting its
    kernel events again after each miss (the texts it cuts stay below twice the kernels)."""
    from occlint.readers.traces import kineto as kineto_mod

    doc = load(TRAIN)
    head = {k: v for k, v in doc.items() if k != "traceEvents"}
    texts = [json.dumps(e) for e in doc["traceEvents"]] * 20
    trace = tmp_path / "t.json"
    trace.write_text(json.dumps(head)[:-1] + ', "traceEvents": ['
                     + "".join((separator(i) if i else "") + t for i, t in enumerate(texts))
                     + "]}")
    cut = []
    raws = kineto_mod._Reader.raws
    monkeypatch.setattr(kineto_mod._Reader, "raws",
                        lambda self, batch: cut.append(len(batch)) or raws(self, batch))
    read = read_kineto(trace, "t")
    assert read.errors == [] and read.collector.launches == 363 * 20
    assert sum(cut) < 2 * 363 * 20


@pytest.mark.parametrize("layout", ["pretty", "compact", "libkineto-2021", "per-line", "sorted"])
@pytest.mark.parametrize("cut", [0.4, 0.999])
def test_cut_short_in_any_layout(tmp_path, layout, cut):
    data = layout_bytes(load(TRAIN), layout)
    trace = tmp_path / "crashed.json"
    trace.write_bytes(data[:int(len(data) * cut)])
    read = read_kineto(trace, "t")
    assert len(read.errors) == 1
    assert "cut short" in read.errors[0].message or "invalid event" in read.errors[0].message
    before = data[:int(len(data) * cut)].count(b'"kernel"') + \
        data[:int(len(data) * cut)].count(b'"Kernel"')
    assert read.collector.launches in (before, before - 1)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_split_over_processes_in_every_layout(tmp_path, monkeypatch, layout):
    """A large plain trace split over processes at kernel events: what one process reads,
    timelines included."""
    from occlint.readers.traces import kineto as kineto_mod

    doc = load(TRAIN)
    trace = tmp_path / "t.json"
    trace.write_bytes(layout_bytes(doc, layout))
    monkeypatch.setattr(kineto_mod, "SPLIT_MIN_BYTES", 1)
    one = kineto_mod.read_kineto(trace, "t", jobs=1)
    splits = []
    split = kineto_mod._read_split
    monkeypatch.setattr(kineto_mod, "_read_split", lambda *a: splits.append(a[2]) or split(*a))
    three = kineto_mod.read_kineto(trace, "t", jobs=3)
    assert len(splits) == 1 and len(splits[0][1]) == 3  # three ranges
    assert one.errors == three.errors == []
    assert one.collector.launches == three.collector.launches == sum(
        expected_launches(doc).values())
    assert reading(one) == reading(three)


def reading(read) -> tuple:
    """Everything a read collected: groups, per-stream timelines, devices."""
    c = read.collector
    return ([(g.key, g.count, g.total_ns, g.max_ns) for g in c.group_list],
            {k: (t.starts, t.durations, t.groups) for k, t in c.streams.items()}, c.devices)


def test_split_of_a_trace_whose_dimensions_are_on_runtime_calls(tmp_path, monkeypatch):
    """Kernel events without dimensions met by a split scan: read again, runtime calls too."""
    from occlint.readers.traces import kineto as kineto_mod

    doc = load(ROCM / "mi250_minitoy_train.json.gz")
    trace = tmp_path / "t.json"
    trace.write_bytes(layout_bytes(doc, "compact"))
    monkeypatch.setattr(kineto_mod, "SPLIT_MIN_BYTES", 1)
    read = kineto_mod.read_kineto(trace, "t", jobs=2)
    assert read.errors == []
    assert read.collector.launches == sum(expected_launches(doc).values()) == 14


def test_a_damaged_trace_in_a_directory_is_reported_not_dropped(tmp_path):
    """A file named as the profiler names its traces, whose gzip stream is damaged from the
    start: one error in a directory walk."""
    (tmp_path / "rank0.pt.trace.json.gz").write_bytes(METADATA_FIRST.read_bytes()[:10] + b"x" * 64)
    doc, code = run(tmp_path)
    assert len(doc["errors"]) == 1
    assert doc["errors"][0]["file"].endswith("rank0.pt.trace.json.gz")
    assert code == 2


def test_an_xla_profile_is_told_apart(tmp_path):
    """A chrome trace whose events carry kernel_details (the shape of the JAX/XLA profile
    plugin's) is not called a PyTorch trace without kernels by the Kineto reader."""
    from occlint.readers.traces import TraceError

    trace = tmp_path / "host.trace.json"
    trace.write_text(json.dumps({"displayTimeUnit": "ns", "traceEvents": [
        {"ph": "X", "pid": 1, "tid": 1, "ts": 0, "dur": 5, "name": "fusion",
         "args": {"kernel_details": "regs:168 static_shared:0 grid:132,1,1 block:384,1,1"}}]}))
    with pytest.raises(TraceError, match="JAX/XLA profile"):
        read_kineto(trace, "t")


@pytest.mark.parametrize("layout", ["libkineto", "compact"])
def test_split_ranges_at_every_chunk_boundary(tmp_path, monkeypatch, layout):
    """Each process reads its range in chunks (libkineto's layout: in windows of the file's
    mapping): wherever a chunk or window ends (inside a kernel event's first line, its
    category, its args), every kernel event is read once."""
    from occlint.readers.traces import kineto as kineto_mod

    doc = load(TRAIN)
    trace = tmp_path / "t.json"
    trace.write_bytes(layout_bytes(doc, layout))
    with open(trace, "rb") as fh:
        first = fh.read(kineto_mod.CHUNK)
        monkeypatch.setattr(kineto_mod, "SPLIT_MIN_BYTES", 1)
        _, ranges, markers = kineto_mod._split_plan(fh, first, 2, layout == "libkineto")
    for chunk in range(4096, 4096 + 40):
        monkeypatch.setattr(kineto_mod, "CHUNK", chunk)
        monkeypatch.setattr(kineto_mod, "MAPPED_WINDOW", chunk)
        parts = [kineto_mod._scan_range(str(trace), "t", a, b, markers) for a, b in ranges]
        assert sum(part[2] for part in parts) == 363, chunk
        assert sum(part[3] for part in parts) == 0, chunk


@pytest.mark.parametrize("trace", [TRAIN, ROCM / "mi250_minitoy_train.json.gz"])
def test_a_damaged_event_in_a_split_range_is_an_error(tmp_path, monkeypatch, trace):
    """A kernel event that is not JSON in the middle of a split trace in libkineto's layout
    (read from the file's mapping): the error names its byte, as one process's read does."""
    from occlint.readers.traces import kineto as kineto_mod

    data = bytearray(layout_bytes(load(trace), "libkineto"))
    at = data.index(b'"cat": "kernel"', len(data) // 2)
    dur = data.index(b'"dur": ', at) + len(b'"dur": ')
    data[dur:dur + 1] = b"x"
    path = tmp_path / "t.json"
    path.write_bytes(bytes(data))
    monkeypatch.setattr(kineto_mod, "SPLIT_MIN_BYTES", 1)
    monkeypatch.setattr(kineto_mod, "MAPPED_WINDOW", 4096)
    one, two = (kineto_mod.read_kineto(path, "t", jobs=jobs) for jobs in (1, 2))
    start = data.rindex(b"\n  {", 0, at) + 1
    for read in (one, two):
        assert len(read.errors) == 1
        assert f"invalid kernel event at byte {start}:" in read.errors[0].message


def test_a_split_trace_is_read_by_spawned_workers_while_other_threads_run(tmp_path,
                                                                          monkeypatch):
    """The split's workers start as the inputs' do (occlint.processes): spawned, not forked,
    when another thread runs, with the same reading."""
    import threading

    from occlint.processes import start_method
    from occlint.readers.traces import kineto as kineto_mod

    trace = tmp_path / "t.json"
    trace.write_bytes(layout_bytes(load(ROCM / "mi250_minitoy_train.json.gz"), "libkineto"))
    monkeypatch.setattr(kineto_mod, "SPLIT_MIN_BYTES", 1)
    one = kineto_mod.read_kineto(trace, "t", jobs=1)
    methods = []
    split = kineto_mod._read_split
    monkeypatch.setattr(kineto_mod, "_read_split",
                        lambda *a: methods.append(start_method()) or split(*a))
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        two = kineto_mod.read_kineto(trace, "t", jobs=2)
    finally:
        stop.set()
        other.join()
    assert methods == ["spawn"]
    assert one.errors == two.errors == []
    assert reading(two) == reading(one)
