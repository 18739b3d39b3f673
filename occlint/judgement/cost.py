"""What a finding costs: the share of a launch group's kernel time it says is lost.

These are the upper bounds Nsight Compute's estimated speedups give (idle lanes of every
wave, the partial last wave, idle units, theoretical occupancy); the time at stake of a
launch group is the largest over its findings.
"""

from __future__ import annotations

from occlint.analysis.kernels import KernelReport
from occlint.model.finding import Finding


def lost_fraction(f: Finding, report: KernelReport | None) -> float | None:
    """The share of a launch group's time a finding says is lost (upper bounds)."""
    d = f.data
    if f.rule == "LCH001" and report is not None:
        lanes = -(-d["block"] // d["wave_size"]) * d["wave_size"]
        return d["idle_lanes"] / lanes  # idle lanes of every wave (Nsight: the same)
    if f.rule == "LCH101":
        return d["cost"] / (1 + d["cost"])  # the busiest unit's extra blocks
    if f.rule == "LCH102":
        return (d["units"] - d["grid"]) / d["units"]  # idle units (Nsight's "Small Grid")
    if f.rule == "LCH105":
        return d["partial_share"]  # the partial wave's share (Nsight's tail effect)
    if f.rule in ("LCH003",):
        return 1 - d["occupancy"] / d["best"] if d.get("best") else None
    if f.rule.startswith("OCC") and report is not None and report.occupancy is not None:
        return 1 - report.occupancy.occupancy  # Nsight's theoretical-occupancy estimate
    return None
