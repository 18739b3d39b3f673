"""Subjects: what occlint judges.

occlint sees a kernel three ways, and each is a *subject* of the same stages:

* a **kernel** compiled into a binary, on a device (occlint.analysis.kernels.KernelReport);
* a **launch group** of a profiler trace: the launches of one kernel with one grid, block
  and resources, on the device that ran them (occlint.analysis.launches.LaunchReport);
* a **launch site** in CUDA / HIP source, checked against the run's devices
  (occlint.analysis.sites.SiteReport).

Each is analysed (occupancy, launch facts joined across the run's inputs), then judged by
one engine (occlint.rules.engine.judge): the rules registered for its kind run on it with
the same selection, severity overrides and per-kernel ignores, and it keeps their findings
and the advice they were drawn from. Baselines and reporters see the findings of every kind
alike (occlint.pipeline.baseline, occlint.pipeline.document.all_findings).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from occlint.model.finding import Finding

Kind = Literal["kernel", "launch", "site"]
KINDS: tuple[Kind, ...] = ("kernel", "launch", "site")


@runtime_checkable
class Subject(Protocol):
    """What every subject offers the judge stage."""

    kind: ClassVar[Kind]
    findings: list[Finding]  # set by the judge stage, most severe first
    advice: dict[str, Any]  # what the rules were told: block, grid and capacity advice
    owner: Any  # who can change it (occlint.judgement.owner.Owner)
    design: dict[str, str] | None  # a deliberate design: {"kind", "reason"}

    def keep(self, findings: list[Finding]) -> None:
        """Take the judged findings (a launch site sets aside the ones its source
        suppresses in a comment)."""
