"""``--format sarif``: SARIF 2.1.0 for GitHub code scanning and other SARIF consumers.

One run, ``tool.driver`` listing every enabled or firing rule — the firing ones with their
documentation (``fullDescription``, ``help``), the others by name and summary, which keeps
the log small — and one result per finding, except the facts about library and framework
kernels (their launch groups' info findings), which become at most one ``LIB101`` note per
library and call site (:func:`code_scanning_findings`; GitHub's and GitLab's reporters
do the same). The choices GitHub code scanning needs:

* ``locations[0].physicalLocation.artifactLocation.uri`` is the input file as a
  repo-relative POSIX path (relative to the working directory when the file is inside
  it, percent-encoded); a file outside it gets an absolute ``file://`` URI. No
  ``originalUriBaseIds`` (code scanning does not honour them), never an empty URI.
  ``region.startLine`` is 1: binaries have no lines, the kernel is a logical location;
  findings on CUDA / HIP launch sites carry their region (start and end line and column).
* ``partialFingerprints["occlintFinding/v1"]`` = ``sha256(identity) + ":" + occurrence``
  where identity is the baseline identity (logical file name, target, kernel, device,
  rule; :func:`occlint.pipeline.baseline.identity`) and occurrence counts results of the same
  identity from 1 in document order. Nothing else (messages, offsets, other kernels or
  files) enters it, so fingerprints survive unrelated changes.
* At most :data:`MAX_RESULTS` results (GitHub's per-run limit): the most severe are kept
  and ``run.properties`` records how many were left out.

Output is deterministic: stable key order, no timestamps, no absolute paths for files
inside the working directory. The helpers here (paths, fingerprints, finding order) are
shared by the GitHub, GitLab and JUnit reporters.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections import Counter
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from occlint.model.demangle import qualified_name
from occlint.reporters.units import launch_dims

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
INFORMATION_URI = "https://github.com/occlint/occlint"
FINGERPRINT_KEY = "occlintFinding/v1"
MAX_RESULTS = 25_000  # GitHub code scanning: results per run
MAX_DESCRIPTION = 1024  # GitHub: shortDescription / fullDescription length

LEVEL = {"error": "error", "warning": "warning", "info": "note"}
PROBLEM_SEVERITY = {"error": "error", "warning": "warning", "info": "recommendation"}
PRECISION = "high"  # computed from the binary's own records, not heuristics on source
RANK = {"info": 0, "warning": 1, "error": 2}

FAMILY_TAGS = {
    "OCC": ["occupancy"],
    "SPL": ["registers", "spills"],
    "LCH": ["launch-configuration"],
    "DEV": ["target"],
    "DYN": ["lds"],
    "BIN": ["binary"],
    "IO": ["input"],
}


# --------------------------------------------------------------------------- shared helpers

def _cwd() -> Path:
    return Path(os.path.abspath(os.getcwd()))


def repo_path(file: str, cwd: Path | None = None) -> str:
    """``file`` as a POSIX path relative to the working directory when it lies inside it,
    else as an absolute POSIX path (never empty)."""
    if not file:
        return "."
    cwd = cwd or _cwd()
    path = Path(os.path.abspath(file))
    for a, b in ((path, cwd), (path.resolve(), cwd.resolve())):
        try:
            rel = a.relative_to(b)
        except ValueError:
            continue
        return rel.as_posix() if rel.parts else "."
    return path.as_posix()


def artifact_uri(file: str, cwd: Path | None = None) -> str:
    """A SARIF ``uri``: percent-encoded relative reference, or ``file://`` when outside."""
    rel = repo_path(file, cwd)
    if PurePosixPath(rel).is_absolute():
        return Path(rel).as_uri()
    return quote(rel, safe="/")


def _finding_object(f: dict[str, Any]):
    from occlint.model.finding import Finding

    values = {fl.name: f.get(fl.name) for fl in dataclasses.fields(Finding)}
    values["data"] = values["data"] or {}
    return Finding(**values)


def identity(f: dict[str, Any], cwd: Path | None = None) -> tuple[str, ...]:
    """The baseline identity of a finding dict (see occlint.pipeline.baseline)."""
    from occlint.pipeline.baseline import identity as baseline_identity

    return baseline_identity(_finding_object(f), cwd or _cwd())


def identity_hash(key: tuple[str, ...]) -> str:
    return hashlib.sha256("\x1f".join(key).encode("utf-8", "surrogatepass")).hexdigest()


def fingerprints(findings: list[dict[str, Any]], cwd: Path | None = None
                 ) -> list[tuple[str, int]]:
    """(sha256 of the identity, occurrence 1..n among equal identities) per finding; a
    LIB101 note's identity adds what it is about (the library and the call site)."""
    cwd = cwd or _cwd()
    seen: Counter = Counter()
    out = []
    for f in findings:
        key = identity(f, cwd) + tuple(f.get("identity") or ())
        seen[key] += 1
        out.append((identity_hash(key), seen[key]))
    return out


def subject(f: dict[str, Any]) -> str:
    """What a finding is about: ``kernel @ device``, ``[entry]`` or ``''``."""
    if f.get("kernel"):
        who = f.get("demangled") or f["kernel"]
        launch = f.get("launch")
        if launch:
            who += f" <<<{launch_dims(launch['grid'])}, {launch_dims(launch['block'])}>>>"
        return who + (f" @ {f['device']}" if f.get("device") else "")
    if f.get("entry"):
        return f"[{f['entry']}]"
    return ""


def message_text(f: dict[str, Any]) -> str:
    """One line: subject, message and the concrete advice when there is one."""
    who = subject(f)
    text = f"{who}: {f['message']}" if who else f["message"]
    if f.get("advice"):
        text += f" — help: {f['advice']}"
    return text


def code_scanning_findings(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The findings code scanning shows (SARIF, GitHub, GitLab): every finding of the
    document, except that the info findings of library and framework launch groups (facts
    the user cannot act on) are folded into at most one LIB101 note per library and call
    site (occlint.rules.report), after the rest; without LIB101 enabled they are left out.
    Warnings and errors stay where they are."""
    from occlint.model.finding import OVERHEAD_RULES
    from occlint.rules.report import NOT_THE_CALLERS, library_facts

    out = list(doc.get("findings") or [])
    for k in doc.get("kernels") or []:
        out.extend(k.get("findings") or [])
    for r in doc.get("launches") or []:
        theirs = (r.get("owner") or {}).get("kind") in NOT_THE_CALLERS
        out.extend(f for f in r.get("findings") or []  # launch overhead: the caller's
                   if not (theirs and f["severity"] == "info"
                           and f["rule"] not in OVERHEAD_RULES))
    if "LIB101" in enabled_rules(doc):
        severity = ((doc.get("settings") or {}).get("severity") or {}).get("LIB101")
        for note in library_facts(doc):
            if severity:
                note["severity"] = severity
            out.append(note)
    return out


def enabled_rules(doc: dict[str, Any]) -> set[str]:
    from occlint.rules.registry import all_rules, select_rules

    settings = doc.get("settings") or {}
    select = [*(settings.get("select") or ["ALL"]), *(settings.get("extend_select") or [])]
    return select_rules(list(all_rules()), select, settings.get("ignore") or [])


def most_severe(findings: list[dict[str, Any]], limit: int) -> list[int]:
    """Indexes of at most ``limit`` findings, most severe first, then in document order;
    returned in document order."""
    order = sorted(range(len(findings)), key=lambda i: (-RANK.get(findings[i]["severity"], 0), i))
    return sorted(order[:max(limit, 0)])


# --------------------------------------------------------------------------- SARIF

def _one_line(text: str, limit: int = MAX_DESCRIPTION) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _help_text(rule) -> str:
    parts = [rule.summary]
    for title, body in rule.docs.items():
        parts += ["", f"{title}:", body]
    return "\n".join(parts)


def rule_descriptor(code: str, rule, fallback: dict[str, Any] | None = None,
                    severity: str | None = None, full: bool = True) -> dict[str, Any]:
    """A ``reportingDescriptor``; ``severity`` is a configured override of the default.
    ``full``: with the rule's documentation (``fullDescription``, ``help``) — for the rules
    that fire; the others enabled in the run are listed by name and summary only."""
    if rule is None:  # a finding of a rule this version does not register
        name = (fallback or {}).get("name") or code
        severity = (fallback or {}).get("severity", "warning")
        return {
            "id": code, "name": name,
            "shortDescription": {"text": name},
            "fullDescription": {"text": name},
            "help": {"text": name, "markdown": f"# {code} {name}\n"},
            "defaultConfiguration": {"level": LEVEL.get(severity, "warning")},
            "properties": {"tags": ["gpu"], "precision": "high",
                           "problem.severity": PROBLEM_SEVERITY.get(severity, "warning")},
        }
    severity = severity if severity in LEVEL else rule.severity
    family = rule.family
    tags = ["gpu", "performance" if family not in ("BIN", "IO") else "correctness",
            *FAMILY_TAGS.get(family, [])]
    what = rule.docs.get("What it does", "")
    out: dict[str, Any] = {
        "id": code,
        "name": rule.name,
        "shortDescription": {"text": _one_line(rule.summary)},
    }
    if full:
        out["fullDescription"] = {"text": _one_line(f"{rule.summary} {what}".strip())}
        out["help"] = {"text": _help_text(rule), "markdown": rule.markdown()}
    out["defaultConfiguration"] = {"level": LEVEL[severity]}
    out["properties"] = {"tags": tags, "precision": PRECISION,
                         "problem.severity": PROBLEM_SEVERITY[severity]}
    return out


def region(f: dict[str, Any]) -> dict[str, int]:
    """The finding's source region (1-based lines and columns); line 1 for binaries."""
    if f.get("line") is None:
        return {"startLine": 1}
    out = {"startLine": f["line"], "startColumn": f["column"]}
    if f.get("end_line") is not None:
        out.update(endLine=f["end_line"], endColumn=f["end_column"])
    return out


def result_object(f: dict[str, Any], rule_index: int, fingerprint: tuple[str, int],
                  cwd: Path, baseline: bool) -> dict[str, Any]:
    location: dict[str, Any] = {
        "physicalLocation": {
            "artifactLocation": {"uri": artifact_uri(f["file"], cwd)},
            "region": region(f),
        },
    }
    if f.get("kernel"):
        demangled = f.get("demangled") or f["kernel"]
        location["logicalLocations"] = [{
            "name": qualified_name(demangled),
            "fullyQualifiedName": demangled,
            "decoratedName": f["kernel"],
            "kind": "function",
        }]
    elif f.get("entry"):
        location["logicalLocations"] = [{"name": f["entry"], "kind": "module"}]
    related = None
    source = f.get("source") or {}
    if source.get("path"):  # the kernel's source under the repository (debug information)
        related = [{**location, "id": 0, "message": {"text": "the binary"}}]
        location = {"physicalLocation": {
            "artifactLocation": {"uri": artifact_uri(source["path"], cwd)},
            "region": {"startLine": source["line"]}},
            **({"logicalLocations": location["logicalLocations"]}
               if "logicalLocations" in location else {})}
    digest, occurrence = fingerprint
    properties: dict[str, Any] = {"severity": f["severity"]}
    for key in ("arch", "device", "entry", "kernel", "data", "source", "fix"):
        if f.get(key):
            properties[key] = f[key]
    result: dict[str, Any] = {
        "ruleId": f["rule"],
        "ruleIndex": rule_index,
        "level": LEVEL.get(f["severity"], "warning"),
        "message": {"text": message_text(f)},
        "locations": [location],
        **({"relatedLocations": related} if related else {}),
        "partialFingerprints": {FINGERPRINT_KEY: f"{digest}:{occurrence}"},
    }
    if baseline:
        result["baselineState"] = "new"
    result["properties"] = properties
    return result


def sarif_log(doc: dict[str, Any], max_results: int = MAX_RESULTS,
              cwd: Path | None = None) -> dict[str, Any]:
    from occlint.rules.registry import all_rules

    cwd = cwd or _cwd()
    registry = all_rules()
    findings = code_scanning_findings(doc)
    fps = fingerprints(findings, cwd)

    firing = {f["rule"]: f for f in reversed(findings)}
    codes = sorted(enabled_rules(doc) | set(firing))
    overrides = (doc.get("settings") or {}).get("severity") or {}
    rules = [rule_descriptor(c, registry.get(c), firing.get(c), overrides.get(c),
                             full=c in firing) for c in codes]
    index = {c: i for i, c in enumerate(codes)}

    kept = most_severe(findings, max_results)
    baseline = bool(doc.get("baseline"))
    results = [result_object(findings[i], index[findings[i]["rule"]], fps[i], cwd, baseline)
               for i in kept]
    omitted = Counter(findings[i]["severity"] for i in set(range(len(findings))) - set(kept))

    tool = doc.get("tool") or {}
    version = str(tool.get("version") or "")
    driver: dict[str, Any] = {"name": "occlint"}
    if version:
        driver["version"] = version
        driver["semanticVersion"] = version
    driver["informationUri"] = INFORMATION_URI
    driver["rules"] = rules

    notifications = []
    for e in doc.get("errors") or []:
        where = f"{e['file']}[{e['entry']}]" if e.get("entry") else e["file"]
        notifications.append({
            "level": "error",
            "message": {"text": f"{where}: {e['message']}"},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": artifact_uri(e["file"], cwd)}}}],
        })
    # as the exit code: unsuccessful only when inputs failed and nothing could be analysed
    analysed = bool(doc.get("kernels") or doc.get("artifacts"))
    invocation: dict[str, Any] = {"executionSuccessful": analysed or not notifications}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications

    summary = doc.get("summary") or {}
    properties: dict[str, Any] = {
        "schemaVersion": doc.get("schema_version"),
        "inputs": summary.get("inputs"),
        "kernels": summary.get("kernels"),
        "reports": summary.get("reports"),
        "devices": [d["name"] for d in doc.get("devices") or [] if d],
        "failOn": (doc.get("settings") or {}).get("fail_on"),
        "resultsTotal": len(findings),
        "resultsReported": len(results),
        "truncated": len(results) < len(findings),
    }
    if properties["truncated"]:
        properties["omittedBySeverity"] = {s: omitted.get(s, 0)
                                           for s in ("error", "warning", "info")}
        properties["truncationReason"] = (
            f"GitHub code scanning accepts at most {max_results} results per run; the "
            "most severe were kept (--format json lists every finding)")
    if doc.get("baseline"):
        b = doc["baseline"]
        properties["baseline"] = {"path": repo_path(b["path"], cwd),
                                  "suppressed": b.get("suppressed", 0),
                                  "stale": len(b.get("stale") or [])}

    run = {
        "tool": {"driver": driver},
        "invocations": [invocation],
        "results": results,
        "properties": properties,
    }
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def render(doc: dict[str, Any], max_results: int = MAX_RESULTS, **_: Any) -> str:
    return json.dumps(sarif_log(doc, max_results), indent=2, ensure_ascii=False) + "\n"
