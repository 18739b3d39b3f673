"""The frame the SQLite trace readers share (Nsight Systems exports, rocpd databases):
read-only connections with lenient text, and :func:`sqlite_kind`, which tells them apart.
A module of its own: sniffing the other inputs of a run does not import sqlite3."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from occlint.model.kernel import InputError
from occlint.readers.traces import RecordCheck, TraceError, TraceRead


def sqlite_uri(path: Path) -> str:
    """A read-only ``file:`` URI for ``path`` (``?``, ``#`` and ``%`` in it escaped)."""
    import urllib.request

    return f"file:{urllib.request.pathname2url(str(Path(path).absolute()))}?mode=ro"


def _text(data: bytes) -> str:
    """SQLite TEXT as str; invalid UTF-8 (a damaged or hostile database) replaced."""
    return data.decode("utf-8", "replace")


# The sqlite3 module raises UnicodeDecodeError, not sqlite3.Error, when SQLite's own message
# about a damaged schema is not UTF-8.
SQLITE_ERRORS = (sqlite3.Error, UnicodeDecodeError)


def open_sqlite(path: Path, immutable: bool = False) -> sqlite3.Connection:
    """A read-only connection whose TEXT values are decoded leniently (names are untrusted)."""
    db = sqlite3.connect(sqlite_uri(path) + ("&immutable=1" if immutable else ""), uri=True)
    db.text_factory = _text
    return db


def table_names(db: sqlite3.Connection) -> set[str]:
    """The tables and views of a database."""
    return {row[0] for row in db.execute(
        "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}


def read_sqlite(path: Path, display: str, fmt: str, body, what: str) -> TraceRead:
    """The frame of the SQLite readers: open read-only, ``body(db, read, check)`` streams the
    launches; a database damaged part-way keeps what was read plus one error (``what``
    names the records: "kernel launches", "kernel dispatches")."""
    from occlint.model.launch import LaunchCollector

    read = TraceRead(LaunchCollector(display, fmt))
    check = RecordCheck(display)
    try:
        db = open_sqlite(path)
    except SQLITE_ERRORS as exc:
        raise TraceError(f"cannot open the database: {exc}") from None
    try:
        body(db, read, check)
    except SQLITE_ERRORS as exc:
        if not read.collector.launches:
            raise TraceError(f"cannot read the database: {exc}") from None
        read.errors.append(InputError(display, f"stops after {read.collector.launches} "
                                               f"{what}: {exc}"))
    finally:
        db.close()
    read.errors[:0] = check.errors()
    return read


def sqlite_kind(path: Path) -> str | None:
    """'nsys' or 'rocpd' for an SQLite database of either profiler, else None."""
    try:
        with open_sqlite(path, immutable=True) as db:
            names = table_names(db)
    except SQLITE_ERRORS:
        return None
    if "CUPTI_ACTIVITY_KIND_KERNEL" in names or "TARGET_INFO_GPU" in names:
        return "nsys"
    if any(n.startswith("rocpd_") for n in names):
        return "rocpd"
    return None
