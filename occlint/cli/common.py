"""Small helpers shared by the commands: colour policy, atomic output, options."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, BinaryIO

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
    write_binary(lambda fh: fh.write(text.encode("utf-8")), output)


def write_binary(writer: Callable[[BinaryIO], Any], output: str | None) -> None:
    """Let ``writer`` write UTF-8 bytes to stdout, or atomically to ``output``."""
    if output in (None, "-"):
        sys.stdout.flush()
        stream = getattr(sys.stdout, "buffer", None)
        if stream is None:  # a text-only stdout (an embedding application, a test runner)
            buffer = io.BytesIO()
            writer(buffer)
            sys.stdout.write(buffer.getvalue().decode("utf-8"))
        else:
            writer(stream)
            stream.flush()
        return
    path = Path(output)
    directory = path.parent if str(path.parent) else Path(".")
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=directory)
        with os.fdopen(fd, "wb") as fh:
            writer(fh)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; reports are ordinary files
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise OcclintError(f"cannot write {output}: {exc.strerror or exc}") from None
    finally:
        if tmp is not None:  # failed or interrupted: leave no temporary file behind
            with contextlib.suppress(OSError):
                os.unlink(tmp)


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
