"""occlint validate on a real NVIDIA GPU (runs where the CUDA driver and a GPU are present;
CI machines have none, so there it is skipped)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def gpu_arch():
    from occlint.validate.backend import NoGpuError

    try:
        from occlint.validate.cuda import CudaBackend

        backend = CudaBackend()
    except NoGpuError as exc:
        pytest.skip(f"no CUDA GPU here: {exc}")
    arch = backend.device().arch
    backend.close()
    return arch


def _cubin(gpu_arch: str):
    cubin = REPO / f"fixtures/nvidia/cubin/launch_bounds.{gpu_arch}.cubin"
    if not cubin.exists():
        pytest.skip(f"no fixture cubin for {gpu_arch}")
    return cubin


# lb_none: every thread reads all n inputs and writes out[blockIdx.x * blockDim.x +
# threadIdx.x] without a bounds check, so out needs grid x block >= problem size + 1023.
N_IN, PROBLEM = 2048, 65536


def test_predictions_equal_the_driver(occlint, gpu_arch):
    run = occlint("validate", str(_cubin(gpu_arch)), "--kernel", "lb_none",
                  "--args", f"f32[{N_IN}]:random, f32[{PROBLEM + 1024}]:out, i32:{N_IN}",
                  "--problem-size", str(PROBLEM), "--repeats", "3", "--format", "json")
    assert run.code == 0, run.err + run.out
    result = json.loads(run.out)
    assert result["occupancy_agrees"] and result["attributes_agree"]
    assert len(result["occupancy"]) >= 10
    assert 0 < result["recommended"]["ratio"] <= 1
    assert all(c["equal"] for c in result["database_check"])


def test_a_faulting_kernel_is_one_error_line(occlint, gpu_arch):
    # out is a null pointer (a u64 scalar of 0): the kernel's store faults
    run = occlint("validate", str(_cubin(gpu_arch)), "--kernel", "lb_none",
                  "--args", f"f32[{N_IN}]:random, u64:0, i32:{N_IN}",
                  "--problem-size", str(PROBLEM), "--block", "256", "--repeats", "1")
    assert run.code == 2, run.err + run.out
    assert run.err.count("\n") == 1 and "GPU run failed" in run.err, run.err
