"""Run the rules over a run's reports: selection, severity overrides, per-kernel ignores."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from occlint.judgement.advice import AdviceSettings, advice
from occlint.rules.registry import RANK, Finding, Rule, all_rules, select_rules

DEFAULT_SELECT = ("ALL",)


@dataclass(frozen=True)
class RuleSettings:
    select: tuple[str, ...] = DEFAULT_SELECT
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    severity: dict[str, str] = field(default_factory=dict)  # rule code -> severity
    per_kernel_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)  # glob -> codes
    advice: AdviceSettings = field(default_factory=AdviceSettings)

    def enabled(self) -> set[str]:
        return set(_enabled((*self.select, *self.extend_select), self.ignore))


@lru_cache(maxsize=64)
def _enabled(select: tuple[str, ...], ignore: tuple[str, ...]) -> frozenset[str]:
    return frozenset(select_rules(list(all_rules()), select, ignore))


@lru_cache(maxsize=64)
def _rules(enabled: frozenset[str]) -> tuple[tuple[Rule, ...], tuple[Rule, ...]]:
    """(kernel-scope, input-scope) rules among ``enabled``, in code order."""
    chosen = [r for c, r in all_rules().items() if c in enabled]
    return (tuple(r for r in chosen if r.scope == "kernel"),
            tuple(r for r in chosen if r.scope == "input"))


@dataclass
class Context:
    settings: AdviceSettings
    advice: dict[str, Any] = field(default_factory=dict)


def _ignored_for_kernel(finding: Finding, globs: dict[str, tuple[str, ...]]) -> bool:
    if finding.kernel is None:
        return False
    names = (finding.kernel, finding.demangled or "", f"{finding.file}:{finding.kernel}")
    return any(
        any(fnmatch.fnmatchcase(name, pattern) for name in names)
        and any(c == "ALL" or finding.rule.startswith(c) for c in codes)
        for pattern, codes in globs.items())


def finish_findings(findings: list[Finding], settings: RuleSettings) -> list[Finding]:
    """Drop per-kernel ignores, apply severity overrides, sort (most severe first)."""
    out = []
    for f in findings:
        if _ignored_for_kernel(f, settings.per_kernel_ignores):
            continue
        if f.rule in settings.severity:
            f.severity = settings.severity[f.rule]
        out.append(f)
    out.sort(key=lambda f: (-RANK[f.severity], f.rule))
    return out


def enabled_codes(settings: RuleSettings) -> frozenset[str]:
    return _enabled((*settings.select, *settings.extend_select), settings.ignore)


def apply_rules(reports: list, inputs: list, settings: RuleSettings) -> list[Finding]:
    """Attach findings and advice to each report; return the input-level findings."""
    kernel_rules, input_rules = _rules(
        _enabled((*settings.select, *settings.extend_select), settings.ignore))

    def finish(findings: list[Finding]) -> list[Finding]:
        return finish_findings(findings, settings)

    for report in reports:
        ctx = Context(settings.advice, advice(report, settings.advice))
        report.advice = ctx.advice
        found: list[Finding] = []
        for r in kernel_rules:
            found.extend(r.check(report, ctx))
        report.findings = finish(found)
    input_findings: list[Finding] = []
    for result in inputs:
        for r in input_rules:
            input_findings.extend(r.check(result, Context(settings.advice)))
    return finish(input_findings)
