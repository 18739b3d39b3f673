"""The judge stage: every subject of the run through the rules registered for its kind.

One engine for the three subjects (occlint.model.subject): a compiled kernel and a launch
group are checked by the kernel rules (a launch group through its kernel report, on its
traced grid and block), a launch site by the same rules' site checks. Each gets the advice
it is judged by (occlint.judgement.advice), the same selection, severity overrides and
per-kernel ignores, and keeps its findings most severe first (launch sites: in file order).
Rules of the other scopes check what is not a subject: a whole input (``input``), a source
file (``source``) and a trace's streams (``stream``).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from occlint.judgement.advice import AdviceSettings, advice, site_advice
from occlint.judgement.appraisal import appraise, launch_plan, subject_owner
from occlint.model.subject import Subject
from occlint.rules.registry import RANK, Context, Finding, all_rules, select_rules

DEFAULT_SELECT = ("ALL",)
VENDORS = ("amd", "nvidia")
Check = Callable[..., Iterable[Finding]]


@dataclass(frozen=True)
class RuleSettings:
    select: tuple[str, ...] = DEFAULT_SELECT
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    severity: dict[str, str] = field(default_factory=dict)  # rule code -> severity
    per_kernel_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)  # glob -> codes
    advice: AdviceSettings = field(default_factory=AdviceSettings)
    owners: dict[str, str] = field(default_factory=dict)  # kernel glob -> owner

    def enabled(self) -> frozenset[str]:
        return _enabled((*self.select, *self.extend_select), self.ignore)


@lru_cache(maxsize=64)
def _enabled(select: tuple[str, ...], ignore: tuple[str, ...]) -> frozenset[str]:
    return frozenset(select_rules(list(all_rules()), select, ignore))


@lru_cache(maxsize=64)
def _checks(enabled: frozenset[str]) -> dict[str, tuple[Check, ...]]:
    """The enabled checks for each subject kind and each other scope, in code order."""
    chosen = [r for c, r in all_rules().items() if c in enabled]
    kernel = tuple(r.check for r in chosen if r.scope == "kernel")
    out: dict[str, tuple[Check, ...]] = {
        "kernel": kernel, "launch": kernel,
        "site": tuple(r.site_check for r in chosen if r.site_check is not None)}
    for vendor in VENDORS:  # the kernel rules that can fire for a vendor's kernels
        out[f"kernel:{vendor}"] = out[f"launch:{vendor}"] = tuple(
            r.check for r in chosen
            if r.scope == "kernel" and (not r.vendors or vendor in r.vendors))
    for scope in ("input", "source", "stream", "region"):
        out[scope] = tuple(r.check for r in chosen if r.scope == scope)
    return out


def checks(settings: RuleSettings, scope: str) -> tuple[Check, ...]:
    """The enabled checks of a subject kind or a scope."""
    return _checks(settings.enabled())[scope]


def _ignored_for_kernel(finding: Finding, globs: dict[str, tuple[str, ...]]) -> bool:
    if finding.kernel is None:
        return False
    names = (finding.kernel, finding.demangled or "", f"{finding.file}:{finding.kernel}")
    return any(
        any(fnmatch.fnmatchcase(name, pattern) for name in names)
        and any(c == "ALL" or finding.rule.startswith(c) for c in codes)
        for pattern, codes in globs.items())


def by_severity(f: Finding) -> tuple:
    return (-RANK[f.severity], f.rule)


def in_file_order(f: Finding) -> tuple:
    return (f.line or 0, f.column or 0, f.rule, f.device or "")


ORDER: dict[str, Callable[[Finding], tuple]] = {
    "kernel": by_severity, "launch": by_severity, "site": in_file_order}


def finish_findings(findings: list[Finding], settings: RuleSettings,
                    order: Callable[[Finding], tuple] = by_severity) -> list[Finding]:
    """Drop per-kernel ignores, apply severity overrides, sort (most severe first)."""
    out = []
    for f in findings:
        if _ignored_for_kernel(f, settings.per_kernel_ignores):
            continue
        if f.rule in settings.severity:
            f.severity = settings.severity[f.rule]
        out.append(f)
    out.sort(key=order)
    return out


def _advise(subject: Any, settings: AdviceSettings) -> dict[str, Any]:
    if subject.kind == "site":
        return site_advice(subject, settings)
    return advice(subject, settings)


def _site_plan(site: Any) -> Any:
    """The launch-time model's plan for a launch site, and the report it was priced on
    (occlint.judgement.site_plan; loaded with the first site whose kernel has facts)."""
    facts = site.kernel.facts if site.kernel is not None else None
    if facts is None or not facts.known or facts.loops:
        return None
    from occlint.judgement.site_plan import site_plan

    return site_plan(site)


def judge(subjects: Iterable[Subject], settings: RuleSettings) -> None:
    """Judge each subject: its advice, its findings (kept by ``Subject.keep``), and their
    appraisal: owner, deliberate design, savings (occlint.judgement.appraisal). Kernels
    and launch groups are checked by the rules that can fire for their kernel's vendor."""
    by_kind = _checks(settings.enabled())
    for subject in subjects:
        checked: Any = subject
        if subject.kind == "launch":  # the kernel rules see the group's kernel report
            checked = subject.report  # type: ignore[attr-defined]
            if checked is None:  # not analysed (unknown device): still someone's kernel
                subject.owner = subject_owner(subject, settings.owners)
                continue
            checked.trace = subject
        ctx = Context(settings.advice, _advise(checked, settings.advice))
        priced = None  # the kernel report the plan was priced on
        if subject.kind != "site":
            ctx.plan = launch_plan(subject, checked, settings.owners)
            priced = checked
        elif (sited := _site_plan(subject)) is not None:
            ctx.plan, priced = sited
        found: list[Finding] = []
        kernel = getattr(checked, "kernel", None)
        for check in by_kind.get(f"{subject.kind}:{getattr(kernel, 'vendor', None)}",
                                 by_kind[subject.kind]):
            found.extend(check(checked, ctx))
        appraisal, found = appraise(subject, priced, ctx.advice, found, settings.owners,
                                    ctx.plan)
        findings = finish_findings(found, settings, ORDER[subject.kind])
        for s in {id(subject): subject, id(checked): checked}.values():
            s.advice, s.owner, s.design = ctx.advice, appraisal.owner, appraisal.design
            s.plan = ctx.plan
            s.keep(findings)


def judge_scope(scope: str, items: Iterable[Any], settings: RuleSettings,
                order: Callable[[Finding], tuple] = by_severity) -> list[Finding]:
    """The findings of the ``input`` or ``source`` rules on whole files."""
    found: list[Finding] = []
    for item in items:
        for check in checks(settings, scope):
            found.extend(check(item, Context(settings.advice)))
    return finish_findings(found, settings, order)
