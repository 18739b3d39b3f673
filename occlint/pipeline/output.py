"""Writing reports and baselines: to stdout, or atomically to a file (temp file + rename),
so that a reader never sees half a report and an interrupted run leaves no temporary file."""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from occlint.errors import OcclintError

# a report's bytes go to the file in pieces this large: a JSON report of thousands of kernel
# records is copied record by record, and 8 KiB pieces cost a system call every few records
WRITE_BUFFER = 1 << 20


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
        with os.fdopen(fd, "wb", buffering=WRITE_BUFFER) as fh:
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
