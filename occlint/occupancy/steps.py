"""Next steps: how much of a resource to cut to reach the next occupancy step.

The search asks the occupancy engine itself (occupancy is monotone in every resource), so
the answer is exact for whatever model the engine implements; no cliff formula is written
twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from occlint.devices.models import AmdArch, NvArch
from occlint.occupancy import amd, nvidia

UNITS = {"vgpr": "VGPRs", "agpr": "AGPRs", "sgpr": "SGPRs", "lds": "bytes of LDS",
         "registers": "registers per thread", "shared": "bytes of shared memory per block"}


@dataclass(frozen=True, slots=True)
class NextStep:
    """For one resource: the largest value that gains occupancy, or why none does."""

    resource: str
    current: int
    target: int | None  # largest value with higher occupancy; None: cutting gains nothing
    occupancy_now: int  # waves/SIMD (AMD) or blocks/SM (NVIDIA)
    occupancy_then: int | None
    blocked_by: tuple[str, ...] = ()  # what still limits when this resource is cut to 0

    @property
    def cut(self) -> int | None:
        return None if self.target is None else self.current - self.target

    def describe(self, metric: str) -> str:
        return describe(self.to_dict(), metric)

    def to_dict(self) -> dict:
        return {"resource": self.resource, "current": self.current, "target": self.target,
                "occupancy_now": self.occupancy_now, "occupancy_then": self.occupancy_then,
                "blocked_by": list(self.blocked_by), "cut": self.cut}


def describe(step: dict, metric: str) -> str:
    """One sentence for a serialized NextStep (``to_dict`` form)."""
    unit = UNITS.get(step["resource"], step["resource"])
    if step["target"] is None:
        others = ", ".join(step["blocked_by"]) or "other limits"
        return f"cutting {unit} alone gains nothing (also limited by {others})"
    return (f"cut {step['cut']} {unit} ({step['current']} -> {step['target']}) for "
            f"{step['occupancy_then']} {metric} (now {step['occupancy_now']})")


def _search(metric: Callable[[int], int], current: int) -> tuple[int | None, int]:
    """Largest v < current with metric(v) > metric(current), by bisection."""
    now = metric(current)
    if current <= 0 or metric(0) <= now:
        return None, now
    lo, hi = 0, current - 1  # metric(lo) > now holds; find the largest such value
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if metric(mid) > now:
            lo = mid
        else:
            hi = mid - 1
    return lo, now


def amd_steps(arch: AmdArch, kernel: amd.AmdKernel, block: int, wgp_mode: bool | None,
              result: amd.AmdOccupancy) -> list[NextStep]:
    steps: list[NextStep] = []

    def waves(k: amd.AmdKernel) -> int:
        return amd.occupancy(arch, k, block, wgp_mode).waves_per_simd

    for resource in result.limiters:
        if resource == "vgpr" and kernel.vgpr_alloc is not None:
            field, current = "vgpr_alloc", kernel.vgpr_alloc
        elif resource in ("vgpr", "agpr", "sgpr", "lds"):
            field = {"vgpr": "vgprs", "agpr": "agprs", "sgpr": "sgprs", "lds": "lds"}[resource]
            current = getattr(kernel, field)
        else:
            continue
        target, now = _search(lambda v, f=field: waves(replace(kernel, **{f: v})), current)
        blocked: tuple[str, ...] = ()
        then = None
        if target is None:
            blocked = tuple(x for x in amd.occupancy(
                arch, replace(kernel, **{field: 0}), block, wgp_mode).limiters if x != resource)
        else:
            then = waves(replace(kernel, **{field: target}))
        steps.append(NextStep(resource, current, target, now, then, blocked))
    return steps


def nvidia_steps(arch: NvArch, func: nvidia.NvFunction, block: int, dynamic_shared: int,
                 carveout: int, result: nvidia.NvOccupancy) -> list[NextStep]:
    steps: list[NextStep] = []

    def blocks(f: nvidia.NvFunction, dyn: int) -> int:
        try:
            return nvidia.active_blocks(arch, f, block, dyn, carveout).blocks_per_sm
        except nvidia.OccupancyInputError:
            return 0

    for resource in result.limiters:
        if resource == "registers":
            current = func.registers
            target, now = _search(lambda v: blocks(replace(func, registers=v), dynamic_shared),
                                  current)
            probe = (replace(func, registers=0), dynamic_shared)
            then_args = None if target is None else (replace(func, registers=target),
                                                     dynamic_shared)
        elif resource == "shared":
            # Cut dynamic shared memory first, then static: the total per block is what counts.
            current = func.static_shared + dynamic_shared

            def total(v: int) -> tuple[nvidia.NvFunction, int]:
                dyn = min(dynamic_shared, v)
                return replace(func, static_shared=v - dyn), dyn

            target, now = _search(lambda v: blocks(*total(v)), current)
            probe = total(0)
            then_args = None if target is None else total(target)
        else:
            continue
        blocked: tuple[str, ...] = ()
        then = None
        if then_args is None:
            r0 = nvidia.active_blocks(arch, probe[0], block, probe[1], carveout)
            blocked = tuple(x for x in r0.limiters if x != resource)
        else:
            then = blocks(*then_args)
        steps.append(NextStep(resource, current, target, now, then, blocked))
    return steps
