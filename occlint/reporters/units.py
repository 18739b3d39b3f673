"""Small text forms shared by the reporters: launch shapes and GPU times."""

from __future__ import annotations


def launch_dims(d: list[int]) -> str:
    """[256, 1, 1] -> "256"; [2, 8, 8] -> "2x8x8"."""
    while len(d) > 1 and d[-1] == 1:
        d = d[:-1]
    return "x".join(str(x) for x in d)


def duration(ns: float) -> str:
    """Nanoseconds as "3.41 ms" or "12.5 µs"."""
    return f"{ns / 1e6:.2f} ms" if ns >= 1_000_000 else f"{ns / 1000:.1f} µs"
