"""Small text forms shared by the reporters: launch shapes and GPU times."""

from __future__ import annotations

import re

_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders the numbers in a text by value: "16" before "1024", "sm_90"
    before "sm_100a", "4x1x16" before "32x16"."""
    return tuple((1, int(part)) if part.isdigit() else (0, part)
                 for part in _DIGITS.split(text) if part)


def launch_dims(d: list[int]) -> str:
    """[256, 1, 1] -> "256"; [2, 8, 8] -> "2x8x8"."""
    while len(d) > 1 and d[-1] == 1:
        d = d[:-1]
    return "x".join(str(x) for x in d)


def duration(ns: float) -> str:
    """Nanoseconds as "3.41 ms" or "12.5 µs"."""
    return f"{ns / 1e6:.2f} ms" if ns >= 1_000_000 else f"{ns / 1000:.1f} µs"


def launched_by(record: dict) -> str | None:
    """What launched a launch group, from its JSON ``launched_by``: "aten::addmm in
    Tiny_0.Linear_1 from forward() at train.py:49"; None when the trace links nothing."""
    link = record.get("launched_by") or {}
    frame = link.get("python")
    parts = [link["op"]] if link.get("op") else []
    if link.get("module"):
        parts.append(f"in {link['module']}")
    if frame:
        parts.append(f"{'from ' if parts else ''}{frame['function']}() at "
                     f"{frame.get('path') or frame['file']}:{frame['line']}")
    if link.get("cooperative"):
        parts.append(f"({link.get('api')})")
    return " ".join(parts) or None
