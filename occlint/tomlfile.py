"""Reading TOML files (configuration, device database) with one-line errors.

The shipped tables (device_db/) are read through their parsed mirrors beside them
(``NAME.toml`` + :data:`MIRROR_SUFFIX`, JSON: ``python -m occlint.tomlfile FILE...`` writes
them; tests/test_toml_mirror.py checks each against its TOML) when a mirror was made from
the very bytes of its TOML: tomllib is pure Python, and the five shipped tables took 11 ms of
every run to parse (docs/performance.md).
"""

from __future__ import annotations

import json
import sys
import zlib
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


def read_toml(path: Path, error: type[Exception]) -> dict[str, Any]:
    """The table in ``path``; a missing, unreadable or invalid file raises ``error``."""
    return _parsed(_read(path, error), path, error)


def _read(path: Path, error: type[Exception]) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise error(f"{path}: {exc.strerror or exc}") from None


def _parsed(raw: bytes, path: Path, error: type[Exception]) -> dict[str, Any]:
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise error(f"{path}: invalid TOML: {exc}") from None


MIRROR_SUFFIX = ".parsed.json"


def mirror_of(path: Path) -> Path:
    return path.with_name(path.name + MIRROR_SUFFIX)


def read_shipped_toml(path: Path, error: type[Exception]) -> dict[str, Any]:
    """The table in a shipped ``path``: its mirror's where the mirror was made from these
    bytes (their CRC-32), else the TOML's, as :func:`read_toml` reads it."""
    raw = _read(path, error)
    try:
        doc = json.loads(mirror_of(path).read_bytes())
        if isinstance(doc, dict) and doc.get("crc32") == zlib.crc32(raw):
            return doc["table"]
    except (OSError, ValueError, KeyError):
        pass  # no mirror, or not one of this TOML: parse it
    return _parsed(raw, path, error)


def write_mirror(path: Path) -> Path:
    """Write ``path``'s parsed mirror (for the shipped tables; run after editing one)."""
    raw = path.read_bytes()
    out = mirror_of(path)
    out.write_text(json.dumps({"crc32": zlib.crc32(raw), "table": tomllib.loads(raw.decode())},
                              separators=(",", ":")) + "\n")
    return out


if __name__ == "__main__":  # python -m occlint.tomlfile device_db/**/*.toml
    for name in sys.argv[1:]:
        print(write_mirror(Path(name)))
