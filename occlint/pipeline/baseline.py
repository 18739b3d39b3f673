"""Baselines: record today's findings, later report only new ones.

A finding's identity is (file's logical name, target, kernel, device, rule) — never byte
offsets, bundle ordinals or messages, which change when unrelated code changes. Counts
handle the same identity appearing more than once. Entries that no longer match anything
are stale (fixed, or the kernel is gone) and are reported so the baseline can shrink.
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from pathlib import Path, PurePosixPath
from typing import Any

from occlint.errors import ConfigError
from occlint.model.finding import Finding

VERSION = 1


def logical_name(file: str, root: Path | None = None) -> str:
    """The file as a stable, repo-relative POSIX path."""
    path = Path(file)
    if root is not None:
        with contextlib.suppress(ValueError):  # outside the project: keep it as given
            path = path.resolve().relative_to(root.resolve())
    return str(PurePosixPath(*path.parts)) if path.parts else file


def identity(f: Finding, root: Path | None = None) -> tuple[str, str, str, str, str]:
    kernel = f.kernel or ""
    if f.launch:  # a launch group of a trace: the kernel with its launch shape
        grid = "x".join(map(str, f.launch["grid"]))
        block = "x".join(map(str, f.launch["block"]))
        kernel = f"{kernel} <<<{grid}, {block}>>>"
    return (logical_name(f.file, root), f.arch or "", kernel, f.device or "", f.rule)


def write(path: str, findings: list[Finding], root: Path | None = None) -> None:
    counts = Counter(identity(f, root) for f in findings)
    entries = [{"file": k[0], "target": k[1], "kernel": k[2], "device": k[3], "rule": k[4],
                "count": n} for k, n in sorted(counts.items())]
    doc = {"version": VERSION, "tool": "occlint", "findings": entries}
    from occlint.pipeline.output import write_output

    write_output(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", path)


def load(path: str) -> Counter:
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read baseline: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: baseline is not valid JSON: {exc.msg}") from None
    if not isinstance(doc, dict) or doc.get("version") != VERSION or \
            not isinstance(doc.get("findings"), list):
        raise ConfigError(f"{path}: not an occlint baseline (version {VERSION})")
    counts: Counter = Counter()
    for e in doc["findings"]:
        try:
            key = (e["file"], e["target"], e["kernel"], e["device"], e["rule"])
            counts[key] += int(e.get("count", 1))
        except (KeyError, TypeError, ValueError):
            raise ConfigError(f"{path}: malformed baseline entry {e!r}"[:300]) from None
    return counts


def apply(findings: list[Finding], baseline: Counter, root: Path | None = None
          ) -> tuple[list[Finding], int, list[dict[str, Any]]]:
    """(new findings, how many the baseline suppressed, stale baseline entries)."""
    remaining = Counter(baseline)
    new, suppressed = [], 0
    for f in findings:
        key = identity(f, root)
        if remaining[key] > 0:
            remaining[key] -= 1
            suppressed += 1
        else:
            new.append(f)
    stale = [{"file": k[0], "target": k[1], "kernel": k[2], "device": k[3], "rule": k[4],
              "count": n} for k, n in sorted(remaining.items()) if n > 0]
    return new, suppressed, stale
