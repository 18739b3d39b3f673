"""A kernel held in a Python string, passed with the trace that ran it (a CuPy RawKernel
launched in blocks of 100 threads, recorded with the PyTorch profiler on an H200 and timed
at every block of whole warps: benchmarks/gpu/python_strings.py,
fixtures/traces/python/h200). The times are the device's, never occlint's."""

from __future__ import annotations

import json

from tests.conftest import REPO

RUN = REPO / "fixtures" / "traces" / "python" / "h200"
SCRIPT = REPO / "fixtures" / "sources" / "python" / "saxpy_raw.py"
TOLERANCE = 0.015  # timing noise allowed beyond a claimed range


def _group(occlint, *paths):
    doc = occlint(str(RUN / "python.pt.trace.json.gz"), *map(str, paths), "--format",
                  "json").json()
    (group,) = doc["launches"]
    return group


def test_the_script_gives_the_traced_kernel_its_facts_and_the_claim_holds(occlint):
    """With the script, the launch group's facts are the string's (a float read and
    written a thread): a warning whose fix, timed, reaches 0.95 of the best block and saves
    what it claims. Without it, the same fix is priced over every reading (from no saving
    up: an info)."""
    times = json.loads((RUN / "times.json").read_text())
    ms = {int(b): t for b, t in times["ms"].items()}
    traced, best = ms[times["block"]], min(ms.values())
    group = _group(occlint, SCRIPT)
    assert group["kernel"] == "saxpy_raw" and group["kernel_facts"] == "source"
    (f,) = [f for f in group["findings"] if f.get("fix")]
    assert f["severity"] == "warning"
    block = f["fix"]["block"][0]
    assert best / ms[block] >= 0.95
    saved = 1 - ms[block] / traced
    assert f["saving"]["low"] - TOLERANCE <= saved <= f["saving"]["high"] + TOLERANCE
    alone = _group(occlint)
    assert alone["kernel_facts"] is None
    assert all(f["severity"] == "info" and f["saving"]["low"] == 0
               for f in alone["findings"] if f.get("fix"))
