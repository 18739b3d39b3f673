"""What a run over CUDA / HIP sources loads before and besides reading them (issue 20: on a
small kernel-heavy tree, start-up is most of the run). A source tree's other files (build
files, notes) are told apart from GPU code and traces by their first bytes, without the
binary or trace readers; and the source reader compiles one tree-sitter query (each costs
10 ms or more of CPU in every process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

# read in the same process as the CLI, which is then asked what it imported
_RUN = """
import json, runpy, sys
sys.argv = ["occlint", *sys.argv[1:]]
try:
    runpy.run_module("occlint", run_name="__main__")
except SystemExit:
    pass
from occlint.readers.source import parse
print(json.dumps({"modules": sorted(sys.modules),
                  "queries": parse.query.cache_info().currsize}), file=sys.stderr)
"""

# ... the modules alone (asking for the parse cache would load the source reader)
_RUN_MODULES = _RUN.split("from occlint.readers.source")[0] + (
    'print(json.dumps({"modules": sorted(sys.modules)}), file=sys.stderr)')

BINARY_AND_TRACE_READERS = (
    "occlint.readers.loader", "occlint.readers.walker", "occlint.readers.elf",
    "occlint.readers.dwarf", "occlint.readers.debuginfo", "occlint.readers.archive",
    "occlint.readers.traces.kineto", "occlint.readers.traces.rocprof",
    "occlint.readers.traces.nsys", "occlint.readers.traces.xla",
    "occlint.readers.traces.xplane", "occlint.model.launch", "msgspec")


def _cli_in_one_process(*args: str, script: str = _RUN) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", script, *args], capture_output=True,
                          text=True, env=env, cwd=REPO, timeout=300)
    return json.loads(proc.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_source_tree_loads_no_binary_or_trace_reader_and_one_query(tmp_path, jobs):
    (tmp_path / "scale.cu").write_text(
        "__global__ void scale(float *x, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) x[i] *= 2.0f;\n"
        "}\n"
        "void run(float *x, int n) {\n"
        "  int threads = 256;\n"
        "  scale<<<(n + threads - 1) / threads, threads>>>(x, n);\n"
        "}\n")
    (tmp_path / "Makefile").write_text("scale: scale.cu\n\tnvcc -o scale scale.cu\n")
    (tmp_path / "README.md").write_text("# scale\n\nRun `make`.\n")
    out = tmp_path / "report.json"
    seen = _cli_in_one_process(str(tmp_path), "--device", "h100", "--isolated", "-j", jobs,
                               "--format", "json", "-o", str(out), "--exit-zero")
    report = json.loads(out.read_text())
    (source,) = [s for s in report["sources"] if s["launches"]]  # read and evaluated:
    assert source["launches"][0]["block"]["dims"] == [256, 1, 1]  # a local's value
    assert (source["kernels"][0]["body"], source["kernels"][0]["work"]) == (
        "per-element", "memory")  # the kernel body's scan
    loaded = set(seen["modules"])
    assert "occlint.readers.source.evaluate" in loaded
    assert sorted(loaded.intersection(BINARY_AND_TRACE_READERS)) == []
    # one query compiled for the whole tree; with two processes the worker may read the
    # file first (a busy machine), and then the main process compiles none
    assert seen["queries"] == 1 if jobs == "1" else seen["queries"] <= 1


SOURCE_AND_LAUNCH_MODEL = (
    "occlint.model.source", "occlint.analysis.sites", "occlint.pipeline.sources",
    "occlint.readers.source", "occlint.judgement.fastest", "occlint.judgement.timing",
    "occlint.devices.launch_params")


def test_a_binary_loads_neither_the_source_reader_nor_the_launch_time_model(tmp_path):
    """A cubin alone (``occlint kernel.cubin``): no source to read, no launch to price.
    Their modules (about 15 ms of a 90 ms start, half of it creating their dataclasses)
    load only with a source or a launch; the report is what it was."""
    out = tmp_path / "report.json"
    cubin = REPO / "fixtures/nvidia/cubin/bigparam.sm_100a.cubin"
    seen = _cli_in_one_process(str(cubin), "--device", "h100", "--isolated", "--format",
                               "json", "-o", str(out), "--exit-zero", script=_RUN_MODULES)
    assert json.loads(out.read_text())["summary"]["kernels"] >= 1
    assert sorted(set(seen["modules"]).intersection(SOURCE_AND_LAUNCH_MODEL)) == []


def test_a_pytorch_trace_loads_no_rocprof_reader(tmp_path):
    """A Kineto trace alone: the rocprof reader (and sqlite3, csv) load only with a rocprof
    trace, whose agent_info.csv beside it is looked for (about 7 ms of a 300 ms run)."""
    out = tmp_path / "report.json"
    trace = REPO / "fixtures/traces/kineto/links.pt.trace.json.gz"
    seen = _cli_in_one_process(str(trace), "--isolated", "--format", "json", "-o", str(out),
                               "--exit-zero", script=_RUN_MODULES)
    assert json.loads(out.read_text())["launches"]
    loaded = set(seen["modules"])
    assert "occlint.readers.traces.kineto" in loaded
    assert not loaded & {"occlint.readers.traces.rocprof", "sqlite3"}
