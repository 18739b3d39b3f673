"""Multi-rank runs: one trace per rank read together and compared.

Fixtures: fixtures/traces/ranks (fixtures/build_traces_ranks.py: two ranks of a 128-rank
PyTorch job, HolisticTraceAnalysis tests/data/trace_filter). The truth: the traces read with
``json`` (``distributedInfo.rank``, the kernel events' ``dur``).
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import jsonschema

from occlint.pipeline.ranks import trace_rank
from occlint.pipeline.run import Options, execute

REPO = Path(__file__).resolve().parent.parent
RANKS = REPO / "fixtures" / "traces" / "ranks"
MI350X = REPO / "fixtures" / "traces" / "rocprof" / "public" / "mi350x_results.json.gz"


def truth() -> dict[str, tuple[int, float]]:
    """"rank N" -> (kernel events, kernel time in ns) of each fixture, read with json."""
    out = {}
    for path in sorted(RANKS.glob("rank-*.json.gz")):
        trace = json.loads(gzip.decompress(path.read_bytes()))
        kernels = [e for e in trace["traceEvents"] if e.get("cat") == "kernel"]
        out[f"rank {trace['distributedInfo']['rank']}"] = (
            len(kernels), sum(e["dur"] for e in kernels) * 1000)
    return out


def test_ranks_compared_slowest_first():
    expected = truth()
    assert len(expected) == 2
    doc = execute(Options(paths=[str(RANKS)], isolated=True, devices=["a100"])).doc
    ranks = doc["summary"]["launches"]["ranks"]
    assert [r["rank"] for r in ranks] == sorted(expected, key=lambda k: -expected[k][1])
    fastest = min(t for _, t in expected.values())
    for r in ranks:
        count, time = expected[r["rank"]]
        assert r["launches"] == count
        assert abs(r["kernel_time_ns"] - time) <= r["groups"]  # groups round to whole ns
        assert r["over_fastest"] == round(r["kernel_time_ns"] / min(
            x["kernel_time_ns"] for x in ranks) - 1, 4)
        assert abs(r["kernel_time_ns"] / fastest - 1 - r["over_fastest"]) < 1e-3
        (device,) = r["devices"]
        assert device["device"] == "NVIDIA A100-SXM4-40GB"
        assert device["launches"] == count
    schema = json.loads((REPO / "docs/schema/occlint-report.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(doc)


def test_text_and_html_list_the_slowest_rank_first(tmp_path):
    expected = truth()
    slowest, fastest = sorted(expected, key=lambda k: -expected[k][1])
    proc = subprocess.run([sys.executable, "-m", "occlint", str(RANKS), "--device", "a100"],
                          capture_output=True, text=True, cwd=REPO)
    out = proc.stdout
    assert "2 ranks, slowest first" in out
    assert out.index(f"    {slowest} ") < out.index(f"    {fastest} ")
    slow_file = f"rank-{slowest.split()[1]}.json.gz  (kineto"
    fast_file = f"rank-{fastest.split()[1]}.json.gz  (kineto"
    assert out.index(slow_file) < out.index(fast_file)  # its launch groups come first
    html = tmp_path / "r.html"
    subprocess.run([sys.executable, "-m", "occlint", str(RANKS), "--device", "a100",
                    "--format", "html", "-o", str(html)], check=False, cwd=REPO)
    page = html.read_text()
    table = page[page.index('id="rank-table"'):page.index("</table>", page.index("rank-table"))]
    assert table.index(f">{slowest}<") < table.index(f">{fastest}<")
    rows = page[page.index('id="launch-table"'):]
    assert rows.index(f"rank-{slowest.split()[1]}.json.gz") < rows.index(
        f"rank-{fastest.split()[1]}.json.gz")


def test_one_rank_gives_no_comparison():
    doc = execute(Options(paths=[str(RANKS / "rank-0.json.gz")], isolated=True)).doc
    assert "ranks" not in doc["summary"]["launches"]
    assert doc["inputs"][0]["rank"] == "rank 0"


def test_rank_of_each_format(tmp_path):
    tool = json.loads(gzip.decompress(MI350X.read_bytes()))["rocprofiler-sdk-tool"][0]
    assert trace_rank(MI350X, "rocprofv3-json") == f"pid {tool['metadata']['pid']}"
    assert trace_rank(Path("/x/4242_kernel_trace.csv"), "rocprofv3-csv") == "pid 4242"
    assert trace_rank(Path("/x/77_results.db"), "rocpd") == "pid 77"
    assert trace_rank(Path("/x/report_rank3.sqlite"), "nsys") == "rank 3"
    assert trace_rank(Path("/x/run.sqlite"), "nsys") is None
    plain = tmp_path / "worker_rank-12.pt.trace.json"
    plain.write_text('{"traceEvents": []}')
    assert trace_rank(plain, "kineto") == "rank 12"  # no distributedInfo: the file name
    inside = tmp_path / "trace.json"
    inside.write_text('{"distributedInfo": {"backend": "nccl", "rank": 5}, "traceEvents": []}')
    assert trace_rank(inside, "kineto") == "rank 5"
    # rank 0 is a rank (TraceLens' B200 trace of an 8-rank job read as none)
    inside.write_text('{"distributedInfo": {"backend": "nccl", "rank": 0}, "traceEvents": []}')
    assert trace_rank(inside, "kineto") == "rank 0"
