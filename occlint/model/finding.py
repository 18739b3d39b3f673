"""The findings model: one finding of one rule on one subject, and where it points.

Every rule yields :class:`Finding` objects; every reporter renders their dicts
(:meth:`Finding.to_dict`), and baselines identify them (occlint.pipeline.baseline).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, NamedTuple

from occlint.model.pickling import by_fields

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")
RANK = {"info": 0, "warning": 1, "error": 2}

# the launch-overhead rules: of a stream's bursts (LCH201) and of a function of the user's
# a graph could capture (LCH202), the caller's whoever owns the kernels; their savings are
# of the GPU's idle time, not of any launch group's
OVERHEAD_RULES = ("LCH201", "LCH202")


@by_fields
@dataclass(slots=True)
class Finding:
    rule: str
    name: str
    severity: Severity
    message: str
    file: str
    kernel: str | None = None  # mangled name
    demangled: str | None = None
    arch: str | None = None
    device: str | None = None
    entry: str | None = None
    advice: str | None = None  # the concrete next step, when there is one
    data: dict[str, Any] = field(default_factory=dict)
    # launch group of a trace the finding is about: {"trace", "group", "grid", "block",
    # "time_at_stake_ns"}; None for findings on binaries
    launch: dict[str, Any] | None = None
    # where in a source file (1-based; columns in characters): findings on launch sites
    line: int | None = None
    column: int | None = None
    end_line: int | None = None
    end_column: int | None = None
    # binary findings: the kernel's definition from debug information,
    # {"file": as recorded, "line": n, "path": the file under the working directory or None}
    source: dict[str, Any] | None = None
    # what its fix would save: {"low", "high" (shares of the time), "low_ns", "high_ns"
    # (launch groups), "basis"} (occlint.judgement.cost); None: no estimate
    saving: dict[str, Any] | None = None
    # the configuration the advice names, as data: {"block": [x, y, z], "grid": [x, y, z],
    # "dynamic_shared": bytes} (occlint.judgement.fastest); None: no launch change advised
    fix: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"rule": self.rule, "name": self.name, "severity": self.severity,
               "message": self.message, "advice": self.advice, "file": self.file,
               "entry": self.entry, "kernel": self.kernel, "demangled": self.demangled,
               "arch": self.arch, "device": self.device, "data": self.data}
        if self.launch is not None:
            out["launch"] = self.launch
        if self.line is not None:  # only located findings carry a region
            out.update(line=self.line, column=self.column, end_line=self.end_line,
                       end_column=self.end_column)
        if self.source is not None:
            out["source"] = self.source
        if self.saving is not None:
            out["saving"] = self.saving
        if self.fix is not None:
            out["fix"] = self.fix
        return out


class Tally(NamedTuple):
    """What a run's summary and exit code need of a finding whose record is already encoded
    (its rule, name and severity): what worker processes send back per kernel finding when
    no baseline needs the findings whole (few distinct ones, so pickled once per batch)."""

    rule: str
    name: str
    severity: Severity


_TALLIES: dict[tuple[str, str, str], Tally] = {}


def tally(finding: Finding) -> Tally:
    """The one :class:`Tally` object of the finding's rule, name and severity."""
    key = (finding.rule, finding.name, finding.severity)
    found = _TALLIES.get(key)
    if found is None:
        found = _TALLIES[key] = Tally(*key)
    return found


def source_location(source: tuple[str, int] | None) -> dict[str, Any] | None:
    """A kernel's (file, line) from debug information as findings and records carry it."""
    if source is None:
        return None
    return {"file": source[0], "line": source[1], "path": resolve(source[0])}


def resolve(file: str, root: Path | None = None) -> str | None:
    """The recorded source file as a path under ``root`` (default: the working
    directory) when it exists there: as recorded, or the longest tail of it that does
    (``/build/x/src/k.cu`` -> ``src/k.cu``); else None."""
    return _resolve(file, str(root or os.getcwd()))


MAX_WALK = 20_000  # files looked at under the working directory for a file by its name


@lru_cache(maxsize=1024)
def find_under(file: str, root: str | None = None) -> str | None:
    """A relative file as a path under ``root`` (default: the working directory): as
    :func:`resolve` does, else the one file under it whose path ends with ``file`` (PyTorch
    writes a script's frames relative to the script's folder); None when there is none or
    more than one, or the walk reaches :data:`MAX_WALK` files first. Hidden folders,
    ``site-packages`` and ``node_modules`` are not searched."""
    base = root or os.getcwd()
    found = _resolve(file, base)
    if found is not None or file.startswith("/") or ".." in file.split("/"):
        return found
    tail, seen, matches = "/" + file.strip("/"), 0, []
    for folder, dirs, files in os.walk(base):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")
                         and d not in ("site-packages", "node_modules", "__pycache__"))
        rel = os.path.relpath(folder, base).replace(os.sep, "/")
        for name in files:
            path = name if rel == "." else f"{rel}/{name}"
            if ("/" + path).endswith(tail):
                matches.append(path)
        seen += len(files)
        if seen >= MAX_WALK or len(matches) > 1:
            return None
    return matches[0] if len(matches) == 1 else None


@lru_cache(maxsize=1024)
def _resolve(file: str, base: str) -> str | None:
    root = Path(base)
    parts = [p for p in file.split("/") if p not in ("", ".")]
    if ".." in parts:
        return None
    for i in range(len(parts)):
        candidate = root.joinpath(*parts[i:])
        if candidate.is_file():
            return "/".join(parts[i:])
    return None
