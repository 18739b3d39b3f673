"""Rules on the finished report, for code scanning (SARIF, GitHub, GitLab): what the reader
can act on stays where it is; what they cannot is folded (issue 29).

A launch group of a library's or framework's kernel (``owner`` library / framework) has
findings that are facts about that library's launch: with ``with_stack`` they sit on the
user's line that called it, as many as the library launched kernels there (183 notes on one
recorded run, 108 on one function). :func:`library_facts` folds them into at most one note
per library and call site (LIB101); the JSON and HTML keep every finding.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from occlint.model.finding import OVERHEAD_RULES
from occlint.rules.registry import RULES, rule

# owners whose launches the caller cannot change (occlint.judgement.appraisal)
NOT_THE_CALLERS = ("library", "framework")


@rule("LIB101", "library-kernel-facts", "info", scope="report")
def library_facts(doc: dict[str, Any], ctx: Any = None) -> Iterator[dict[str, Any]]:
    """Facts about a library's or framework's kernels launched from one place in your code.

    What it does:
    In code scanning (SARIF, GitHub and GitLab annotations) only: the info findings of the
    launch groups of one library or framework (cuBLAS, cuDNN, PyTorch, ...) launched from
    one call site of yours (a trace recorded with `with_stack=True`: the function and line
    `launched_by` names; without it, the trace) become one note. It says how many launch
    groups and how much kernel time the library spent there, and which rules' facts they
    carry, with how many of each. Warnings and errors on those groups (launch overhead,
    a severity you configured) stay findings of their own.
    Why it matters:
    A library's grids, blocks, registers and shared memory are its own; what you can change
    is the shapes you call it with. One note per call site keeps those facts from burying
    the findings on your own kernels (one recorded run put 108 notes about cuDNN, cuBLAS and
    PyTorch kernels on one function).
    How to fix:
    Nothing to fix in the library. `--format json` or `html` lists each launch group with
    its findings and owner; `[tool.occlint.owners]` makes a library of your own team's
    yours, and its findings then stand on their own; `--ignore LIB101` drops these notes.
    Example:
    cuBLAS launched 2 launch groups (14.3 µs) from forward() at model.py:49: one note,
    "facts: LCH102 x2, LCH103 x2 (grid smaller than the device, ...)".
    """
    folded: dict[tuple, dict[str, Any]] = {}
    for r in doc.get("launches") or []:
        owner = r.get("owner") or {}
        if owner.get("kind") not in NOT_THE_CALLERS:
            continue
        facts = [f for f in r["findings"] if f["severity"] == "info"
                 and f["rule"] not in OVERHEAD_RULES]  # the stream's, the caller's
        if not facts:
            continue
        label = owner.get("library") or owner["kind"]
        source = next((f["source"] for f in facts if f.get("source")), None)
        where = (source["file"], source["line"]) if source else None
        key = (r["trace"], label, where)
        note = folded.get(key)
        if note is None:
            note = folded[key] = {"label": label, "kind": owner["kind"], "trace": r["trace"],
                                  "source": source, "records": [], "rules": {},
                                  "devices": set(), "arch": set(), "callers": set()}
        note["records"].append(r)
        for f in facts:
            note["rules"][f["rule"]] = note["rules"].get(f["rule"], 0) + 1
        if r.get("device"):
            note["devices"].add(r["device"])
        if r.get("arch"):
            note["arch"].add(r["arch"])
        op = (r.get("launched_by") or {}).get("op")
        if op:
            note["callers"].add(op)
    for note in folded.values():
        yield _note(note)


def _duration(ns: float) -> str:
    """Nanoseconds as the reporters write them ("3.41 ms", "12.5 µs")."""
    return f"{ns / 1e6:.2f} ms" if ns >= 1_000_000 else f"{ns / 1000:.1f} µs"


def _note(note: dict[str, Any]) -> dict[str, Any]:
    records = note["records"]
    time = sum(r["total_ns"] for r in records)
    frame = ((records[0].get("launched_by") or {}).get("python") or {})
    where = (f" from {frame['function']}() at {frame['file']}:{frame['line']}"
             if note["source"] and frame.get("function") else "")
    callers = sorted(note["callers"])
    by = f" (by {', '.join(callers[:3])}{', ...' if len(callers) > 3 else ''})" \
        if callers else ""
    rules = sorted(note["rules"].items())
    names = ", ".join(RULES[c].name for c, _ in rules[:3] if c in RULES)
    facts = ", ".join(f"{c} x{n}" for c, n in rules)
    groups = len(records)
    message = (f"{note['label']} ({note['kind']}): {groups} launch group"
               f"{'s' if groups != 1 else ''} of its kernels{where}{by}, {_duration(time)} of "
               f"kernel time, with facts about its own launches (nothing of yours to change "
               f"in them but the shapes you call it with): {facts} "
               f"({names}{', ...' if len(rules) > 3 else ''})")
    devices = sorted(note["devices"])
    return {
        "rule": "LIB101", "name": RULES["LIB101"].name, "severity": "info",
        "message": message, "file": note["trace"], "kernel": None, "demangled": None,
        "arch": ", ".join(sorted(note["arch"])) or None,
        "device": ", ".join(devices) or None, "entry": None,
        "advice": "--format json or html lists each launch group and its findings",
        "data": {"library": note["label"], "owner_kind": note["kind"], "groups": groups,
                 "kernel_time_ns": time, "rules": dict(rules),
                 "kernels": sorted({r["kernel"] for r in records})[:20],
                 "callers": callers},
        "source": note["source"], "line": None, "column": None, "end_line": None,
        "end_column": None, "launch": None, "saving": None, "fix": None,
        # what the note is about, for its fingerprint: the library and the call site
        "identity": [note["label"], *(map(str, (note["source"]["file"],
                                                note["source"]["line"]))
                                     if note["source"] else [])],
    }

