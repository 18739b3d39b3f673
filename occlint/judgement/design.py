"""Deliberate designs: launches whose low occupancy or single wave is the point, not a defect.

* **persistent** kernels: the grid is the device's resident capacity (one block per unit,
  or every unit full), one wave that loops over the work itself;
* **shared-memory pipelines**: tile kernels (GEMM, attention) whose occupancy is bounded
  by the shared memory they stage tiles through (64 KiB or more per block: Hopper's
  wgmma/TMA and Ampere's cp.async pipelines hold one or two such blocks per SM by design);
* **cooperative** launches (``cudaLaunchCooperativeKernel``): the grid must be resident;
* **communication** kernels (NCCL / RCCL collectives): their time is waiting, not work.

A kernel whose source the run has, read there as one element per thread or a grid-stride
loop, is no such design whatever its grid or shared memory. A deliberate design gets no
finding against the design (:data:`BY_DESIGN`, per kind; issue 29): a persistent or
cooperative kernel no grid, tail or occupancy finding (its grid is the resident capacity,
or must be), a shared-memory pipeline no occupancy or oversubscription finding, nor the
launch-time model's other block or grid (its occupancy is the stages it holds); the
pipeline's tile count against the units (LCH101, LCH102, LCH105) stays, a fact. The JSON
says why (``design``).
"""

from __future__ import annotations

import re
from typing import Any

from occlint.analysis.kernels import KernelReport
from occlint.judgement.owner import Owner
from occlint.occupancy import amd

PIPELINE_MIN_SHARED = 64 << 10
TILE_NAME = re.compile(r"gemm|wgmma|tma|mma|attention|attn|fmha|flash|conv|xmma|cutlass|"
                       r"nvjet|Cijk_", re.IGNORECASE)
# the findings against each design, not raised on it: a persistent or cooperative grid is
# the resident capacity by definition (no grid, tail, occupancy finding, nor the model's
# other configuration, LCH106); a tile pipeline hides latency in the shared memory that
# bounds its occupancy (no occupancy limiter, block for occupancy, more waves in flight,
# nor the model's other block or grid: its block is its tile's, its occupancy its stages)
RESIDENT = ("OCC", "LCH003", "LCH101", "LCH102", "LCH103", "LCH104", "LCH105", "LCH106",
            "LCH107", "LCH108")
BY_DESIGN: dict[str, tuple[str, ...]] = {
    "persistent": RESIDENT, "cooperative": RESIDENT,
    "shared-memory-pipeline": ("OCC", "LCH003", "LCH103", "LCH106", "LCH107", "LCH108"),
}


def _shared_per_block(report: KernelReport) -> int:
    occ = report.occupancy
    if isinstance(occ, amd.AmdOccupancy):
        res = report.kernel.resources
        return getattr(res, "lds_bytes", 0) + report.launch.dynamic_lds
    return getattr(occ, "allocated_shared_per_block", 0)


COMMUNICATION = ("NCCL", "RCCL")


def communication(owner: Owner | None, talks: str | None = None
                  ) -> dict[str, str] | None:
    """A collective's kernel (NCCL, RCCL), or one whose source talks to other GPUs
    through ``talks`` (NCCL's device API, NVSHMEM, rocSHMEM): its time is spent waiting on
    the other ranks and the links, which no grid, block or occupancy change shortens: no
    saving is estimated."""
    if owner is not None and owner.library in COMMUNICATION:
        return {"kind": "communication",
                "reason": f"a {owner.library} collective: its time waits on the other ranks "
                          "and the links, not on its launch shape or occupancy"}
    if talks is not None:
        return {"kind": "communication",
                "reason": f"it talks to other GPUs through {talks} (its source): its time "
                          "waits on the other ranks and the links, not on its launch shape "
                          "or occupancy"}
    return None


def deliberate(report: KernelReport, advice: dict[str, Any], owner: Owner | None = None,
               cooperative: bool = False) -> dict[str, str] | None:
    """{"kind", "reason"} when the launch is a deliberate design, else None. A user's
    kernel is taken as a shared-memory pipeline only when its name says it is a tile
    kernel (:data:`TILE_NAME`); a library's or generator's whenever its shared memory
    bounds its occupancy."""
    facts = report.launch.facts
    shape = report.launch.body or (facts.loop if facts is not None else None)
    if shape in ("per-element", "grid-stride") and not cooperative:
        return None  # its source (or its PTX) shows a kernel of another shape
    if cooperative:
        return {"kind": "cooperative",
                "reason": "a cooperative launch: every block must be resident at once"}
    occ, cap = report.occupancy, advice.get("capacity")
    grid = report.launch.grid
    if occ is None or not cap:
        return None
    if grid and grid in (cap["units"], cap["concurrent_blocks"]):
        return {"kind": "persistent",
                "reason": f"grid of {grid} blocks is the device's resident capacity "
                          f"({cap['units']} {cap['unit']}s x {cap['blocks_per_unit']}): "
                          "one wave of a persistent kernel"}
    shared = _shared_per_block(report)
    limiters = getattr(occ, "limiters", ())
    tile = (owner is not None and not owner.user) or TILE_NAME.search(report.kernel.demangled
                                                                    or report.kernel.name)
    if tile and shared >= PIPELINE_MIN_SHARED and ("shared" in limiters or "lds" in limiters):
        return {"kind": "shared-memory-pipeline",
                "reason": f"{shared // 1024} KiB of shared memory per block bounds its "
                          "occupancy: a tile kernel pipelining through shared memory"}
    return None


def moot(design: dict[str, str] | None, rule: str) -> bool:
    """Whether ``rule``'s finding is against the deliberate ``design`` (not raised)."""
    return design is not None and rule.startswith(BY_DESIGN.get(design["kind"], ()))
