"""``--format gitlab``: a GitLab Code Quality report (Code Climate subset).

A JSON array with one issue per finding::

    {"description": ..., "check_name": "OCC101", "fingerprint": ..., "severity": "major",
     "location": {"path": "build/k.hsaco", "lines": {"begin": 1}}}

Severity map (GitLab knows info, minor, major, critical, blocker): error -> ``critical``,
warning -> ``major``, info -> ``info``; ``blocker`` is not used (nothing occlint finds
stops a build that already produced the binary).

``path`` is repo-relative (relative to the working directory, i.e. ``$CI_PROJECT_DIR``
in a job); binaries have no lines, so ``begin`` is 1; findings on source launch sites
begin at their line. ``fingerprint`` is the sha256 of the
finding's baseline identity (logical file, target, kernel, device, rule) and its
occurrence among equal identities: unique per finding (GitLab drops duplicates) and
unchanged by unrelated kernels, files or message wording, so merge-request widgets compare
base and head correctly.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from occlint.reporters.sarif import code_scanning_findings, fingerprints, message_text, repo_path

SEVERITY = {"error": "critical", "warning": "major", "info": "info"}


def issue(f: dict[str, Any], fingerprint: tuple[str, int]) -> dict[str, Any]:
    digest, occurrence = fingerprint
    return {
        "description": f"{f['rule']} {f['name']}: {message_text(f)}",
        "check_name": f["rule"],
        "fingerprint": hashlib.sha256(f"{digest}:{occurrence}".encode()).hexdigest(),
        "severity": SEVERITY.get(f["severity"], "major"),
        "location": _location(f),
    }


def _location(f: dict[str, Any]) -> dict[str, Any]:
    source = f.get("source") or {}
    if source.get("path"):  # a binary finding on its kernel's source line (debug info)
        return {"path": repo_path(source["path"]), "lines": {"begin": source["line"]}}
    return {"path": repo_path(f["file"]), "lines": {"begin": f.get("line") or 1}}


def render(doc: dict[str, Any], **_: Any) -> str:
    findings = code_scanning_findings(doc)
    issues = [issue(f, fp) for f, fp in zip(findings, fingerprints(findings), strict=True)]
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"
