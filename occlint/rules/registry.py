"""The rule registry and the findings model.

A rule is a function decorated with :func:`rule`: it receives one :class:`KernelReport`
(or, for input-level rules, one file's read result) and yields :class:`Finding` objects.
Its docstring is its documentation: a one-line summary, then the sections
``What it does``, ``Why it matters``, ``How to fix`` and ``Example``
(``occlint rule CODE`` prints them; SARIF and the HTML report reuse them).

A rule may also check launch sites in CUDA / HIP source (:func:`site_rule`, in
occlint.rules.sites): the same code, its finding located at the line and column of the
launch argument that causes it (``Finding.line`` / ``column``). Rules of scope ``source``
check only source files.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from occlint.judgement.advice import AdviceSettings
from occlint.model.finding import RANK, SEVERITIES, Finding, Severity, source_location

__all__ = ["RANK", "RULES", "SECTIONS", "SEVERITIES", "Context", "Finding", "Rule", "Severity",
           "all_rules", "kernel_finding", "rule", "select_rules", "site_rule"]

SECTIONS = ("What it does", "Why it matters", "How to fix", "Example")


@dataclass
class Context:
    """What a check is told besides its subject: the advice settings, and the advice drawn
    for the subject (occlint.judgement.advice) that its findings quote."""

    settings: AdviceSettings
    advice: dict[str, Any] = field(default_factory=dict)
    plan: Any = None  # the launch-time model's plan (occlint.judgement.fastest.Plan)

@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity
    scope: Literal["kernel", "input", "stream", "region", "source", "report"]
    summary: str
    docs: dict[str, str]
    check: Callable[..., Iterable[Finding]]
    site_check: Callable[..., Iterable[Finding]] | None = None  # on source launch sites
    # the kernel vendors it can fire for (its check finds nothing for the others: the engine
    # skips it there); empty: every vendor
    vendors: tuple[str, ...] = ()

    @property
    def family(self) -> str:
        return re.match(r"[A-Z]+", self.code).group(0)

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "name": self.name, "severity": self.severity,
                "scope": self.scope, "summary": self.summary,
                "docs": {k.lower().replace(" ", "_"): v for k, v in self.docs.items()}}

    def markdown(self) -> str:
        parts = [f"# {self.code} {self.name}", "", self.summary, "",
                 f"Default severity: **{self.severity}**."]
        for title, text in self.docs.items():
            parts += ["", f"## {title}", "", text]
        return "\n".join(parts) + "\n"


RULES: dict[str, Rule] = {}


def _parse_docs(doc: str) -> tuple[str, dict[str, str]]:
    lines = [line.strip() for line in (doc or "").strip().splitlines()]
    summary = lines[0] if lines else ""
    docs: dict[str, str] = {}
    current, buf = None, []
    for line in lines[1:]:
        if line.rstrip(":") in SECTIONS and line.endswith(":"):
            if current:
                docs[current] = "\n".join(buf).strip()
            current, buf = line.rstrip(":"), []
        elif current:
            buf.append(line)
    if current:
        docs[current] = "\n".join(buf).strip()
    return summary, docs


def plural(n: int, noun: str) -> str:
    """``noun`` for one, ``noun + "s"`` otherwise: "1 SM", "2 SMs"."""
    return noun if n == 1 else noun + "s"


def rule(code: str, name: str, severity: Severity,
         scope: Literal["kernel", "input", "stream", "region", "source", "report"] = "kernel",
         vendors: tuple[str, ...] = ()):
    def register(func: Callable[..., Iterable[Finding]]) -> Callable[..., Iterable[Finding]]:
        summary, docs = _parse_docs(func.__doc__ or "")
        missing = [s for s in SECTIONS if s not in docs]
        if missing or not summary:
            raise ValueError(f"rule {code} lacks documentation sections {missing}")
        if code in RULES:
            raise ValueError(f"rule code {code} registered twice")
        RULES[code] = Rule(code, name, severity, scope, summary, docs, func, vendors=vendors)
        return func
    return register


def site_rule(code: str):
    """Attach a launch-site check to the registered rule ``code`` (same documentation)."""
    def register(func: Callable[..., Iterable[Finding]]) -> Callable[..., Iterable[Finding]]:
        import dataclasses

        RULES[code] = dataclasses.replace(RULES[code], site_check=func)
        return func
    return register


def all_rules() -> dict[str, Rule]:
    """Every rule, by code (importing the rule modules registers them)."""
    from occlint.rules import (  # noqa: F401
        binary,
        launch,
        occupancy,
        report,
        resources,
        sites,
        target,
        trace,
    )

    return dict(sorted(RULES.items()))


def selector_error(selector: str) -> str | None:
    """What is wrong with a --select / --ignore value, or None for ALL or the code or
    prefix of a registered rule (OCC, LCH1, LCH101). The nearest known family (for a
    selector of three letters or fewer) or code is suggested."""
    codes = list(all_rules())
    if selector == "ALL" or any(code.startswith(selector) for code in codes):
        return None
    import difflib  # only for a mistyped selector

    families = ["ALL", *dict.fromkeys(code[:3] for code in codes)]
    candidates = families if len(selector) <= 3 else codes
    close = difflib.get_close_matches(selector.upper(), candidates, n=1, cutoff=0.0)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown rule selector {selector!r}{hint} (see 'occlint rule --all')"


def kernel_finding(rule_code: str, report, message: str, advice: str | None = None,
                   severity: Severity | None = None, fix: dict[str, Any] | None = None,
                   **data: Any) -> Finding:
    r = RULES[rule_code]
    k = report.kernel
    return Finding(rule=r.code, name=r.name, severity=severity or r.severity, message=message,
                   file=k.file, kernel=k.name, demangled=k.demangled, arch=k.arch,
                   device=report.device.name if report.device else None, entry=k.entry,
                   advice=advice, data=data, source=source_location(k.source), fix=fix)


def select_rules(codes: Iterable[str], select: Iterable[str], ignore: Iterable[str]) -> set[str]:
    """ruff-style selection: prefixes (OCC, OCC1, OCC101) or ALL; ignore wins over select."""
    def matches(code: str, prefix: str) -> bool:
        return prefix == "ALL" or code.startswith(prefix)

    chosen = {c for c in codes if any(matches(c, p) for p in select)}
    return {c for c in chosen if not any(matches(c, p) for p in ignore)}
