"""Small helpers shared by the commands: colour policy, atomic output, options."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import IO, Any

import click

from occlint.errors import OcclintError


def use_color(stream: IO[str], mode: str = "auto") -> bool:
    """Colour only on a TTY, never when NO_COLOR is set; FORCE_COLOR / --color=always force it."""
    if mode == "never":
        return False
    if os.environ.get("NO_COLOR"):
        return False
    if mode == "always" or os.environ.get("FORCE_COLOR"):
        return True
    return hasattr(stream, "isatty") and stream.isatty()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_output(text: str, output: str | None) -> None:
    """Write to stdout, or atomically to ``output`` (temp file + rename)."""
    if output in (None, "-"):
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    path = Path(output)
    directory = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=directory)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; reports are ordinary files
        os.replace(tmp, path)
    except OSError as exc:
        raise OcclintError(f"cannot write {output}: {exc.strerror or exc}") from None


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
