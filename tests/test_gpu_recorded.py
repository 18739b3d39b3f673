"""occlint today against the CUDA driver's answers recorded on an H200 (docs/validation/).

The validation run stored, for every suite kernel, the driver's blocks per SM at every
block size (cuOccupancyMaxActiveBlocksPerMultiprocessor), its function attributes
(cuFuncGetAttribute) and the device's limits (cuDeviceGetAttribute). The cubins it ran are
committed (fixtures/nvidia/gpu-suite, byte-identical: their SHA-256 is checked against the
run's record where the run kept one). This re-derives occlint's numbers from those cubins
now and compares them with the driver's — no GPU needed, and a change to the readers, the
engine or the device database that breaks agreement with the hardware fails here.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from occlint.analysis import LaunchConfig, analyse_kernel
from occlint.devices.db import shipped_db
from occlint.validate.harness import find_kernel, predicted_max_threads
from tests.conftest import FIXTURES, REPO

RUNS = sorted((REPO / "docs" / "validation").glob("h200-*.json"))
SUITE = FIXTURES / "nvidia" / "gpu-suite"


def _results():
    for run in RUNS:
        doc = json.loads(run.read_text())
        for r in doc["results"]:
            if "error" not in r:
                yield pytest.param(doc, r, id=f"{run.stem}:{r['kernel']}")


def test_runs_are_committed():
    assert len(RUNS) >= 2 and len(list(_results())) >= 17 * len(RUNS)


@pytest.mark.parametrize("doc,result", list(_results()))
def test_static_numbers_equal_the_recorded_driver(doc, result):
    cubin = SUITE / Path(result["binary"]).name
    recorded_hash = (doc.get("binaries") or {}).get(cubin.name)
    if recorded_hash:
        assert hashlib.sha256(cubin.read_bytes()).hexdigest() == recorded_hash
    kernel = find_kernel(cubin, result["kernel"])
    device = shipped_db().get("h200")
    assert device.compute_units == result["device"]["units"]
    arch = device.arch
    for check in result["database_check"]:
        assert getattr(arch, check["field"]) == check["driver"], check["field"]
    attrs = {a["field"]: a["driver"] for a in result["attributes"]}
    res = kernel.resources
    assert res.registers == attrs["registers"]
    assert res.shared_bytes == attrs["shared_bytes"]
    assert res.local_bytes == attrs["local_bytes"]
    assert predicted_max_threads(kernel, device) == attrs["max_threads_per_block"]
    for row in result["occupancy"]:
        occ = analyse_kernel(kernel, device, LaunchConfig(block=row["block"])).occupancy
        assert occ.blocks_per_sm == row["driver"], row["block"]
