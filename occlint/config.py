"""Configuration: ``[tool.occlint]`` in pyproject.toml or an ``occlint.toml`` (same keys at
the top level, or under ``[tool.occlint]``), found from the current directory upward.
The command line overrides the file; unknown keys are errors that name the key.

Example::

    [tool.occlint]
    devices = ["w7800", "mi300x"]
    paths = ["build/kernels"]
    select = ["ALL"]
    ignore = ["SPL102"]
    fail-on = "warning"
    oversubscription = 10
    severity = { OCC101 = "error" }
    jobs = "auto"                 # worker processes (an integer, or "auto")

    [tool.occlint.per-kernel-ignores]
    "reference_*" = ["OCC", "LCH003"]

    [tool.occlint.launch."gamma_correction*"]
    block = 256
    grid = 2800

    [tool.occlint.owners]         # who can change a kernel: user, generated, framework,
    "mylib_*" = "user"            # library or library:NAME (occlint.judgement.owner)
    "*fmha*" = "library:FlashAttention"
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from occlint.errors import ConfigError
from occlint.tomlfile import read_toml

FAIL_ON = ("error", "warning", "info", "never")
OWNER_VALUE = re.compile(r"user|generated|framework|library(:[^\x00-\x1f]{1,64})?")
LAUNCH_KEYS = {"block": int, "grid": int, "problem-size": int, "dynamic-lds": int,
               "dynamic-shared": int}


@dataclass
class Config:
    path: Path | None = None  # file the settings came from (None: defaults)
    root: Path = field(default_factory=Path.cwd)  # relative paths resolve against this
    devices: list[str] = field(default_factory=list)
    device_files: list[Path] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    include: list[str] = field(default_factory=list)
    extend_exclude: list[str] = field(default_factory=list)
    select: list[str] = field(default_factory=lambda: ["ALL"])
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    severity: dict[str, str] = field(default_factory=dict)
    per_kernel_ignores: dict[str, list[str]] = field(default_factory=dict)
    owners: dict[str, str] = field(default_factory=dict)  # kernel glob -> owner
    launch: dict[str, dict[str, int]] = field(default_factory=dict)
    fail_on: str = "warning"
    oversubscription: float = 10.0
    preferred_block: int = 256
    occupancy_threshold: float = 0.5
    baseline: Path | None = None
    jobs: int | str = "auto"  # worker processes, or "auto" (see occlint.pipeline.run.auto_jobs)


def _str_list(value: Any, key: str, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: '{key}' must be a list of strings")
    return list(value)


def _number(value: Any, key: str, where: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise ConfigError(f"{where}: '{key}' must be a number in [{low}, {high}], got {value!r}")
    return value


def check_rule_selectors(values: list[str], where: str) -> list[str]:
    """``values`` when each is ALL or a rule code or prefix, else a ConfigError naming
    the nearest known one (the configuration's keys and the command line's options)."""
    from occlint.rules.registry import selector_error

    for value in values:
        problem = selector_error(value)
        if problem:
            raise ConfigError(f"{where}: {problem}")
    return values


def _rule_codes(values: list[str], key: str, where: str) -> list[str]:
    return check_rule_selectors(values, f"{where}: '{key}'")


# launch settings that say one thing twice: the grid, and the dynamic LDS's two names
EXCLUSIVE_LAUNCH_KEYS = (("grid", "problem-size"), ("dynamic-lds", "dynamic-shared"))


def _one_of_each_pair(settings: dict[str, Any], where: str) -> None:
    for first, second in EXCLUSIVE_LAUNCH_KEYS:
        if first in settings and second in settings:
            raise ConfigError(f"{where}: give {first} or {second}, not both")


def parse_jobs(value: Any, what: str) -> int | str:
    """A worker-process count: an integer >= 1 or "auto"."""
    if value == "auto":
        return "auto"
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1024:
        raise ConfigError(f"{what} must be \"auto\" or an integer from 1 to 1024, got {value!r}")
    return value


def parse(table: dict[str, Any], where: str, root: Path) -> Config:
    cfg = Config(path=Path(where) if where else None, root=root)
    for key, value in table.items():
        if key == "devices":
            cfg.devices = _str_list(value, key, where)
        elif key == "device-files":
            cfg.device_files = [root / p for p in _str_list(value, key, where)]
        elif key == "targets":
            cfg.targets = _str_list(value, key, where)
        elif key == "paths":
            cfg.paths = [str(root / p) if not Path(p).is_absolute() else p
                         for p in _str_list(value, key, where)]
        elif key in ("exclude", "include", "extend-exclude"):
            setattr(cfg, key.replace("-", "_"), _str_list(value, key, where))
        elif key in ("select", "ignore", "extend-select"):
            setattr(cfg, key.replace("-", "_"), _rule_codes(_str_list(value, key, where),
                                                            key, where))
        elif key == "severity":
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: 'severity' must be a table of CODE = severity")
            for code, level in value.items():
                _rule_codes([code], "severity", where)
                if level not in ("error", "warning", "info"):
                    raise ConfigError(f"{where}: severity of {code} must be error, warning or "
                                      f"info, got {level!r}")
            cfg.severity = dict(value)
        elif key == "per-kernel-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: 'per-kernel-ignores' must be a table of "
                                  "glob = [codes]")
            cfg.per_kernel_ignores = {g: _rule_codes(_str_list(v, f"per-kernel-ignores.{g}",
                                                               where), key, where)
                                      for g, v in value.items()}
        elif key == "owners":
            if not isinstance(value, dict) or not all(
                    isinstance(v, str) and OWNER_VALUE.fullmatch(v) for v in value.values()):
                raise ConfigError(f"{where}: 'owners' must be a table of kernel glob = "
                                  "\"user\", \"generated\", \"framework\", \"library\" or "
                                  "\"library:NAME\"")
            cfg.owners = dict(value)
        elif key == "launch":
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: 'launch' must be a table of kernel glob = "
                                  "{block, grid, problem-size, dynamic-lds}")
            for glob, settings in value.items():
                if not isinstance(settings, dict):
                    raise ConfigError(f"{where}: launch.{glob!r} must be a table")
                for k, v in settings.items():
                    if k not in LAUNCH_KEYS:
                        raise ConfigError(f"{where}: unknown key {k!r} in launch.{glob!r} "
                                          f"(known: {', '.join(LAUNCH_KEYS)})")
                    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                        raise ConfigError(f"{where}: launch.{glob!r}.{k} must be an integer "
                                          ">= 0")
                _one_of_each_pair(settings, f"{where}: launch.{glob!r}")
                cfg.launch[glob] = dict(settings)
        elif key == "fail-on":
            if value not in FAIL_ON:
                raise ConfigError(f"{where}: 'fail-on' must be one of {', '.join(FAIL_ON)}")
            cfg.fail_on = value
        elif key == "oversubscription":
            cfg.oversubscription = _number(value, key, where, 0.01, 1e6)
        elif key == "preferred-block":
            cfg.preferred_block = int(_number(value, key, where, 1, 1024))
        elif key == "occupancy-threshold":
            cfg.occupancy_threshold = _number(value, key, where, 0, 1)
        elif key == "jobs":
            cfg.jobs = parse_jobs(value, f"{where}: 'jobs'")
        elif key == "baseline":
            if not isinstance(value, str):
                raise ConfigError(f"{where}: 'baseline' must be a path")
            cfg.baseline = root / value
        else:
            raise ConfigError(f"{where}: unknown key {key!r} in [tool.occlint]")
    return cfg


def _table(path: Path) -> dict[str, Any] | None:
    data = read_toml(path, ConfigError)
    tool = data.get("tool", {})
    section = tool.get("occlint") if isinstance(tool, dict) else None
    if path.name == "pyproject.toml":
        return section
    if section is not None:
        return section
    return {k: v for k, v in data.items() if k != "tool"}


def find_config(start: Path | None = None) -> Path | None:
    """The nearest occlint.toml / .occlint.toml / pyproject.toml with [tool.occlint]."""
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        for name in ("occlint.toml", ".occlint.toml"):
            if (directory / name).is_file():
                return directory / name
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file() and _table(pyproject) is not None:
            return pyproject
    return None


def load_config(explicit: str | None = None, isolated: bool = False) -> Config:
    if isolated:
        return Config()
    path = Path(explicit) if explicit else find_config()
    if path is None:
        return Config()
    table = _table(path)
    if table is None:
        raise ConfigError(f"{path}: no [tool.occlint] table")
    return parse(table, str(path), path.parent)
