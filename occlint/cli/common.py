"""Small helpers shared by the commands: colour policy, JSON text, options (atomic output:
occlint.pipeline.output)."""

from __future__ import annotations

import json
import os
from typing import IO, Any

import click


def use_color(stream: IO[str], mode: str = "auto") -> bool:
    """Colour only on a TTY, never when NO_COLOR is set; FORCE_COLOR / --color=always force it."""
    if mode == "never":
        return False
    if os.environ.get("NO_COLOR"):
        return False
    if mode == "always" or os.environ.get("FORCE_COLOR"):
        return True
    return hasattr(stream, "isatty") and stream.isatty()


def dumps_json(obj: Any) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


def format_option(choices: list[str], default: str = "text"):
    return click.option("--format", "fmt", type=click.Choice(choices), default=default,
                        show_default=True, help="Output format.")


def output_option():
    return click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True),
                        default=None,
                        help="Write the report to FILE (atomically) instead of stdout.")


def device_file_option():
    return click.option("--device-file", "device_files", multiple=True,
                        type=click.Path(exists=True, dir_okay=False),
                        help="TOML file adding or overriding devices (repeatable).")
