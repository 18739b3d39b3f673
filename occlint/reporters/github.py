"""``--format github``: GitHub Actions workflow commands (annotations).

One line per shown finding::

    ::error file=build/k.hsaco,title=DEV101 arch-mismatch::k(float*) @ MI300X: code object ...

``error`` findings become ``::error``, ``warning`` ``::warning`` and ``info`` ``::notice``.
Values are escaped as actions/toolkit does (data: ``%`` ``\\r`` ``\\n``; properties also
``:`` and ``,``), and every other control or line-separator character is replaced, so a
crafted kernel or file name can neither end the line nor start a workflow command of its
own.

GitHub shows at most 10 annotations of each type per step and 50 per job; the rest are
dropped silently. So at most :data:`MAX_PER_TYPE` (10) of each type are written, the most
severe types first and in document order within a type (at most 30 lines, under the job
limit). Standard output holds nothing but workflow commands (a log scraper or a step that
tees it into a file sees only annotations); the summary line — how many findings, how many
were not shown (``--format sarif`` for code scanning and ``--format json`` always carry all
of them) — is :func:`summary`, which the CLI writes to standard error.
"""

from __future__ import annotations

import re
from typing import Any

from occlint.reporters.sarif import code_scanning_findings, message_text, repo_path

COMMAND = {"error": "error", "warning": "warning", "info": "notice"}
ORDER = ("error", "warning", "info")
MAX_PER_TYPE = 10  # GitHub: annotations of one type per step

# C0/C1 controls except \r and \n (escaped instead), DEL, Unicode line/paragraph separators
_UNSAFE = re.compile("[\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029]")


def _clean(value: str) -> str:
    return _UNSAFE.sub("\ufffd", value)


def escape_data(value: str) -> str:
    """Escape a command's message (actions/toolkit ``escapeData``)."""
    return _clean(value).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """Escape a command property value (actions/toolkit ``escapeProperty``)."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def command(f: dict[str, Any]) -> str:
    kind = COMMAND.get(f["severity"], "warning")
    props = {"file": repo_path(f["file"])}
    source = f.get("source") or {}
    if source.get("path"):  # a binary finding on its kernel's source line (debug info)
        props.update(file=repo_path(source["path"]), line=str(source["line"]))
    elif f.get("line") is not None:  # a source location: the annotation sits on the line
        props.update(line=str(f["line"]), col=str(f["column"]))
        if f.get("end_line") is not None:
            props.update(endLine=str(f["end_line"]), endColumn=str(f["end_column"]))
    props["title"] = f"{f['rule']} {f['name']}"
    rendered = ",".join(f"{k}={escape_property(v)}" for k, v in props.items())
    return f"::{kind} {rendered}::{escape_data(message_text(f))}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _shown(doc: dict[str, Any], max_per_type: int
           ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, int]]:
    findings = code_scanning_findings(doc)
    shown: list[dict[str, Any]] = []
    counts = {s: 0 for s in ORDER}
    for severity in ORDER:
        of_type = [f for f in findings if f["severity"] == severity]
        counts[severity] = len(of_type)
        shown.extend(of_type[:max(max_per_type, 0)])
    return findings, shown, counts


def render(doc: dict[str, Any], max_per_type: int = MAX_PER_TYPE, **_: Any) -> str:
    """The workflow commands, one a line, and nothing else ('' without findings)."""
    _, shown, _ = _shown(doc, max_per_type)
    return "".join(command(f) + "\n" for f in shown)


def summary(doc: dict[str, Any], max_per_type: int = MAX_PER_TYPE) -> str:
    """One plain line: the findings by severity, how many were not shown as annotations,
    how many library facts the LIB101 notes fold, how many the baseline suppressed (written
    to standard error, never to the commands)."""
    findings, shown, counts = _shown(doc, max_per_type)
    total = len(findings)
    hidden = total - len(shown)
    by_severity = ", ".join(_plural(counts[s], s if s != "info" else "info finding")
                            for s in ORDER if counts[s])
    line = f"occlint: {_plural(total, 'finding')}"
    if by_severity:
        line += f" ({by_severity})"
    if hidden:
        line += (f"; {hidden} not shown as annotations (GitHub shows at most "
                 f"{max_per_type} per type and step) — --format sarif or --format json "
                 "lists all of them")
    elif total:
        line += "; all shown as annotations"
    notes = sum(f["rule"] == "LIB101" for f in findings)
    if notes:
        facts = sum(sum(f["data"]["rules"].values()) for f in findings
                    if f["rule"] == "LIB101")
        line += (f"; {_plural(notes, 'LIB101 note')} hold the {facts} facts about library "
                 "and framework kernels (--format json lists each)")
    if doc.get("baseline"):
        line += f"; {doc['baseline'].get('suppressed', 0)} in the baseline"
    return _clean(line)
