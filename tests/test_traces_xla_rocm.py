"""JAX (XLA) profiles recorded on AMD GPUs: TraceLens' XSpaces of MI300X and MI355X runs
(fixtures/traces/xla/rocm, cut to their GPU planes by fixtures/build_traces_rocm.py).

Truth: the same files decoded by Google's protobuf library (tests/truth/xspace.py), the
kernel_details split here by hand, the architecture each run's kernels name (Tensile's
``ISA942``, Composable Kernel's ``gfx950_t``), and TraceLens' own report of the legacy run
(kernel_launchers_summary.csv: per kernel name, launches and total time).
"""

from __future__ import annotations

import csv
import gzip
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from occlint.pipeline.run import Options, execute
from tests.conftest import FIXTURES
from tests.truth import xspace

ROCM = FIXTURES / "traces" / "xla" / "rocm"
NEW = ROCM / "mi300x_conv.xplane.pb"  # rocprofiler-sdk: private_mem / group_mem
LEGACY = ROCM / "mi300x_conv_legacy.xplane.pb"  # roctracer: CUDA's fields, regs unset
MI355X = ROCM / "mi355x_te_attn.xplane.pb"
FILES = [NEW, LEGACY, MI355X]


def run(path: Path, *more: str) -> dict:
    return execute(Options(paths=[str(path), *more], isolated=True)).doc


def details(text: str) -> dict[str, str]:
    return dict(token.split(":", 1) for token in text.split())


def truth_groups(path: Path) -> Counter:
    """Launches per (GPU, kernel name without the descriptor's .kd, grid, block)."""
    out: Counter = Counter()
    for e in xspace.kernel_events(path):
        d = details(e.stats["kernel_details"])
        name = e.name[:-3] if e.name.endswith(".kd") else e.name
        out[(e.plane.removeprefix("/device:"), name, d["grid"], d["block"])] += 1
    return out


def occlint_groups(doc: dict) -> Counter:
    """Launches per (kernel, grid, block) in occlint's report."""
    out: Counter = Counter()
    for r in doc["launches"]:
        out[(r["kernel"], ",".join(map(str, r["grid"])), ",".join(map(str, r["block"])))] \
            += r["count"]
    return out


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_kernel_event_counted_and_grouped(path):
    doc = run(path)
    truth = truth_groups(path)
    assert doc["errors"] == []
    assert sum(r["count"] for r in doc["launches"]) == sum(truth.values())
    by_name_grid_block: Counter = Counter()
    for (_, name, grid, block), n in truth.items():
        by_name_grid_block[(name, grid, block)] += n
    assert occlint_groups(doc) == by_name_grid_block


@pytest.mark.parametrize(("path", "isa"), [(NEW, r"ISA(\d{3})"), (LEGACY, r"ISA(\d{3})"),
                                           (MI355X, r"ck_tile::(gfx\d{3})_t")],
                         ids=lambda v: getattr(v, "name", v))
def test_device_derived_from_the_plane(path, isa):
    """The GPU plane names no product: its CUs and HIP's major.minor give the gfx
    architecture, which the run's own library kernels name in theirs."""
    stats = xspace.plane_stats(path)["/device:GPU:0"]
    named = {m for e in xspace.kernel_events(path) for m in re.findall(isa, e.name)}
    assert len(named) == 1
    arch = named.pop()
    arch = arch if arch.startswith("gfx") else f"gfx{arch}"
    assert arch.startswith(f"gfx{stats['compute_cap_major']}{stats['compute_cap_minor']}")
    doc = run(path)
    for r in doc["launches"]:
        assert r["arch"] == arch
        assert r["device_source"] == "derived"
    units = {f["data"]["units"] for r in doc["launches"] for f in r["findings"]
             if "units" in f.get("data", {})}
    assert units == {stats["core_count"]}  # the grid rules count the plane's CUs


def test_legacy_rocm_registers_are_ignored_and_said_so():
    """Before rocprofiler-sdk XLA's ROCm tracer wrote CUDA's fields and never set the
    registers or the static shared memory (regs:2191500840): the launches are analysed by
    their block and grid, with the dynamic LDS the launch gave, and a note says why."""
    raw = [details(e.stats["kernel_details"]) for e in xspace.kernel_events(LEGACY)]
    assert all(int(d["regs"]) > 512 for d in raw)  # no AMD GPU has that many VGPRs
    doc = run(LEGACY)
    assert doc["errors"] == []
    (note,) = doc["inputs"][0]["notes"]
    assert "never set" in note and "ignored" in note
    for r in doc["launches"]:
        trace = r["resources"]["trace"]
        assert trace["vgpr"] is None and trace["lds_bytes"] is None
        assert trace["dynamic_lds"] == 0  # dynamic_shared:0 in every record
        assert r["status"] == "no-registers"


def test_rocprofiler_sdk_fields_are_read():
    """private_mem (scratch per work-item) and group_mem (LDS per work-group) as given."""
    truth = {(e.name.removesuffix(".kd"), details(e.stats["kernel_details"])["group_mem"],
              details(e.stats["kernel_details"])["private_mem"])
             for e in xspace.kernel_events(MI355X)}
    doc = run(MI355X)
    seen = {(r["kernel"], str(r["resources"]["trace"]["lds_bytes"]),
             str(r["resources"]["trace"]["scratch_bytes"])) for r in doc["launches"]}
    assert seen == truth
    assert any(int(lds) > 0 for _, lds, _ in truth)


def test_legacy_times_equal_tracelens_report():
    """TraceLens' report of the same run: launches and total time per kernel name, and the
    GPU's busy time."""
    doc = run(LEGACY)
    with open(ROCM / "mi300x_conv_legacy.tracelens_gpu_timeline.csv", newline="") as fh:
        computation = sum(float(row["time ms"]) for row in csv.DictReader(fh)
                          if row["type"] == "computation_time")  # over its two GPUs
    assert doc["summary"]["launches"]["kernel_time_ns"] / 1e6 == pytest.approx(computation,
                                                                               abs=1e-6)
    ours: dict[str, list[float]] = {}
    for r in doc["launches"]:
        ours.setdefault(r["kernel"], [0, 0.0])
        ours[r["kernel"]][0] += r["count"]
        ours[r["kernel"]][1] += r["total_ns"]
    with open(ROCM / "mi300x_conv_legacy.tracelens_summary.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(ours) == 5
    for row in rows:
        mine = ours[row["name"]]
        assert mine[0] == int(row["Count"])
        assert mine[1] / 1000 == pytest.approx(float(row["total_direct_kernel_time_sum"]),
                                               abs=0.01)


def test_owners_of_rocm_runtime_and_miopen_kernels():
    """ROCclr's copy kernel (hipMemcpy on the GPU) and MIOpen's Im3d2Col are libraries':
    their findings are info and no saving is counted as the user's."""
    doc = run(NEW)
    owners = {r["kernel"]: (r["owner"]["kind"], r["owner"]["library"]) for r in doc["launches"]}
    assert owners["__amd_rocclr_copyBuffer"] == ("library", "HIP runtime")
    assert owners["Im3d2Col"] == ("library", "MIOpen")
    copy = next(r for r in doc["launches"] if r["kernel"] == "__amd_rocclr_copyBuffer")
    assert copy["finding_codes"] and all(f["severity"] == "info" for f in copy["findings"])
    assert doc["summary"]["launches"]["user_saving_high_ns"] == 0


def test_grid_rules_on_the_derived_device():
    """The grid rules need no registers: a grid of 1024 blocks on the 304 CUs of the
    MI300X plane is not a multiple of them (LCH101)."""
    doc = run(NEW)
    record = next(r for r in doc["launches"] if r["kernel"] == "Im3d2Col")
    assert record["grid"] == [1024, 1, 1] and 1024 % 304
    assert "LCH101" in record["finding_codes"]


def test_a_rocm_trace_json_reads_its_xplane_vendor_first(tmp_path):
    """The trace.json.gz beside an AMD XSpace: its kernel_details are read as ROCm's (the
    XSpace's GPUs are read before the trace), the same launches as the XSpace alone."""
    events = [{"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:GPU:0"}},
              {"ph": "M", "pid": 1, "tid": 1, "name": "thread_name",
               "args": {"name": "Stream #1"}}]
    for e in xspace.kernel_events(LEGACY):
        events.append({"ph": "X", "pid": 1, "tid": 1, "name": e.name, "ts": e.start_ps / 1e6,
                       "dur": e.duration_ps / 1e6,
                       "args": {"kernel_details": e.stats["kernel_details"],
                                "hlo_op": e.stats.get("hlo_op", "")}})
    trace = tmp_path / "host.trace.json.gz"
    trace.write_bytes(gzip.compress(json.dumps({"displayTimeUnit": "ns",
                                                "traceEvents": events}).encode()))
    (tmp_path / "host.xplane.pb").write_bytes(LEGACY.read_bytes())
    doc = run(trace)
    assert doc["errors"] == []
    assert sum(r["count"] for r in doc["launches"]) == len(events) - 2
    assert all(r["arch"] == "gfx942" and r["status"] == "no-registers"
               for r in doc["launches"])
