"""A grid-stride loop's blocks past its last element (timing's T_idle), checked against the
H200's own rows: ``characterize.py --only loop_empty`` (fixtures/traces/loop-empty/h200), a
copy of 2^24 floats and of 2^22 float4s by a grid-stride loop in 256- and 1,024-thread
blocks, 4 to 320 blocks an SM (up to ten times more threads than elements), and an empty
kernel in the same grids. Each time is the GPU's (CUDA events); the model sees the facts
the source reader gives the kernels' bodies, the launch and its occupancy."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import pytest

from benchmarks.gpu.device_params import _resident
from occlint.devices.db import shipped_db
from occlint.devices.launch_params import launch_model
from occlint.judgement.timing import Config, predict
from occlint.readers.source.facts import kernel_facts

ROWS = json.loads((Path(__file__).resolve().parents[1] / "fixtures/traces/loop-empty/h200"
                   / "loop-empty.characterization.json").read_text())["loop_empty"]
LOOP = """{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
         i += (long)blockDim.x * gridDim.x)
        %s
}"""
FACTS = {
    "loop_copy": kernel_facts("(const float* __restrict__ a, float* __restrict__ c, long n)",
                              LOOP % "c[i] = 2.0f * a[i];", "grid-stride", {}),
    "loop_copy4": kernel_facts(
        "(const float4* __restrict__ a, float4* __restrict__ c, long n)",
        LOOP % "{ float4 x = a[i]; c[i] = make_float4(2.0f * x.x, 2.0f * x.y, 2.0f * x.z, "
               "2.0f * x.w); }", "grid-stride", {}),
}
DM = launch_model(shipped_db().get("h200"))


def _times() -> dict[tuple[str, int, int], tuple[float, float, int]]:
    """(kernel, block, grid) -> (measured us, predicted us, elements)."""
    by: dict[tuple, list[dict]] = {}
    for r in ROWS:
        by.setdefault((r["kernel"], r["n"], r["block"], r["grid"]), []).append(r)
    out = {}
    for (kernel, n, block, grid), runs in by.items():
        if kernel == "empty":
            continue
        resident = _resident({"registers": runs[0]["registers"], "block": block, "smem": 0})
        predicted = predict(DM, FACTS[kernel], Config(block, grid, resident), n).total
        out[kernel, block, grid] = (statistics.median(r["ms"] for r in runs) * 1e3,
                                    predicted * 1e6, n)
    return out


TIMES = _times()
OVER = sorted(key for key, (_, _, n) in TIMES.items() if key[1] * key[2] > n)


def test_the_rows_are_the_devices():
    assert {r["kernel"] for r in ROWS} == {"loop_copy", "loop_copy4", "empty"}
    assert len(OVER) == 8 and max(k[1] * k[2] / TIMES[k][2] for k in OVER) > 10
    # the idle blocks' cost is real: ten times the threads a float4 copy needs doubles it
    assert TIMES["loop_copy4", 1024, 42240][0] > 1.9 * TIMES["loop_copy4", 1024, 528][0]


@pytest.mark.parametrize("key", OVER)
def test_blocks_past_the_last_element_add_their_starts(key):
    """Against the same copy in 4 blocks an SM, the time of a grid with more threads than
    elements is predicted within 15 % (their starts overlapped with the work, as the
    working blocks' do: 1.14 for 2.02 at ten times the threads)."""
    kernel, block, _ = key
    measured, predicted, _ = TIMES[key]
    base_measured, base_predicted, _ = TIMES[kernel, block, 132 * 4]
    error = math.log((predicted / base_predicted) / (measured / base_measured))
    assert abs(error) < 0.15, (key, error)
