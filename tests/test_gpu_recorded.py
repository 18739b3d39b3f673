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

from occlint.analysis.kernels import LaunchConfig, analyse_kernel
from occlint.devices.db import shipped_db
from occlint.validate.harness import find_kernel, predicted_max_threads
from tests.conftest import FIXTURES, REPO

RUNS = sorted(p for p in (REPO / "docs" / "validation").glob("h200-*.json*")
              if "static" not in p.name)
SUITE = FIXTURES / "nvidia" / "gpu-suite"


def _results():
    from benchmarks.gpu.summarize import load

    for run in RUNS:
        doc = load(run)
        for r in doc["results"]:
            if "error" not in r:
                yield pytest.param(doc, r, id=f"{run.name.split('.')[0]}:{r['kernel']}")


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


STATIC = REPO / "docs" / "validation" / "h200-2026-11-21-static-fixtures.json.gz"


def _static_results():
    import gzip

    doc = json.loads(gzip.decompress(STATIC.read_bytes()))
    for r in doc["results"]:
        if "error" not in r:
            yield pytest.param(doc, r, id=f"{r['binary']}:{r['kernel']}")


def test_static_check_covers_the_fixtures():
    results = list(_static_results())
    assert len(results) >= 100  # every sm_90 / sm_90a fixture kernel the driver could load
    # relocatable (-rdc) objects, Triton's .reqntid kernels and the GPU suite are included
    binaries = {p.values[1]["binary"] for p in results}
    assert any("/rdc/" in b for b in binaries) and any("triton" in b for b in binaries)


@pytest.mark.parametrize("doc,result", list(_static_results()))
def test_fixture_kernels_equal_the_recorded_driver(doc, result):
    """Every sm_90 fixture kernel, loaded by the CUDA driver without launching
    (benchmarks/gpu/static_check.py): occlint now against the driver then."""
    path = REPO / result["binary"]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == doc["binaries"][result["binary"]]
    kernel = find_kernel(path, result["kernel"])
    device = shipped_db().get("h200")
    dynamic = result["dynamic_shared"]
    attrs = {a["field"]: a["driver"] for a in result["attributes"]}
    res = kernel.resources
    assert res.registers == attrs["registers"]
    assert res.shared_bytes == attrs["shared_bytes"]
    if kernel.relocatable:
        # an unlinked -rdc object: the driver applies no frame (ptxas's frame is what occlint
        # reports, and what nvlink's output gets)
        assert attrs["local_bytes"] == 0
    else:
        assert res.local_bytes == attrs["local_bytes"]
    assert predicted_max_threads(kernel, device, dynamic) == attrs["max_threads_per_block"]
    for row in result["occupancy"]:
        occ = analyse_kernel(kernel, device, LaunchConfig(block=row["block"],
                                                          dynamic_lds=dynamic)).occupancy
        assert occ.blocks_per_sm == row["driver"], row["block"]
