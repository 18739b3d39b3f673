"""One held-out kernel as its sweep timed it and as the launch-time model predicts it: its
suite entry (the true elements), its timed configurations, its facts read from the suite's
source, and the device's model (tests of the model against time measured on the GPU)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.gpu.heldout import score
from occlint.devices.db import shipped_db
from occlint.devices.launch_params import DeviceModel, launch_model
from occlint.judgement.timing import Config, predict
from occlint.model.facts import Facts
from occlint.occupancy import nvidia
from occlint.readers.source import read_source

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"


@dataclass
class TimedKernel:
    spec: dict[str, Any]  # the suite's entry: family, facts drawn, n, rows, ...
    configs: list[dict[str, Any]]  # the sweep's timed configurations
    registers: int
    facts: Facts  # read from the suite's source by occlint
    model: DeviceModel

    def ms(self, block: int, grid: int | None = None) -> float:
        """The timed configuration of ``block`` threads (and ``grid`` blocks, if given)."""
        return next(c.get("final_ms", c["ms"]) for c in self.configs
                    if c["block"][0] == block and grid in (None, c["grid"][0]))

    def resident(self, block: int) -> int:
        func = nvidia.NvFunction(registers=self.registers, max_threads=1024)
        return nvidia.active_blocks(shipped_db().nv_archs["sm_90"], func, block,
                                    0).blocks_per_sm

    def predicted(self, block: int, grid: int, facts: Facts | None = None,
                  model: DeviceModel | None = None) -> float:
        """The model's seconds for ``block`` x ``grid`` over the suite's true elements."""
        return predict(model or self.model, facts or self.facts,
                       Config(block, grid, self.resident(block)), self.spec["n"]).total


def timed_kernel(seed: int, device: str, name: str) -> TimedKernel:
    """Kernel ``name`` of fixtures/traces/heldout-SEED, timed on ``device`` ("h100",
    "h200": the run's folder and the database's name)."""
    run = TRACES / f"heldout-{seed}"
    spec = next(k for k in json.loads((run / "suite.json").read_text())["kernels"]
                if k["name"] == name)
    sweep = next(k for k in score.load(run / device / "heldout.json")["kernels"]
                 if k["name"] == name)
    facts = next(k.facts for k in read_source(str(run / "kernels.cu"), "kernels.cu").kernels
                 if k.name == name)
    return TimedKernel(spec, sweep["configs"], sweep["registers"], facts,
                       launch_model(shipped_db().get(device)))
