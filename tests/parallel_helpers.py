"""Work functions for tests of occlint.pipeline.parallel (module level: workers import
them by name)."""

from __future__ import annotations

import os

DEADLY = {7, 23}  # items whose worker dies


def square_or_die(batch: list[int]) -> list[int]:
    out = []
    for item in batch:
        if item in DEADLY:
            os._exit(70)  # as a segfault or the OOM killer would: no exception, no result
        out.append(item * item)
    return out


def fail_to_start() -> None:
    raise RuntimeError("this worker cannot start")


def timed_sleep(batch: list[float]) -> list[tuple[float, float]]:
    """(start, end) wall-clock times of sleeping each item's seconds."""
    import time

    out = []
    for seconds in batch:
        start = time.time()
        time.sleep(seconds)
        out.append((start, time.time()))
    return out


STATE = {"set_in_parent": False}  # set by a test before it starts workers


def parent_state(batch: list[int]) -> list[bool]:
    """Whether the worker sees what the parent set: a forked worker does, a spawned one
    (a new interpreter) does not."""
    return [STATE["set_in_parent"] for _ in batch]


def tagged(batch: list[int]) -> list[tuple[str, int, int]]:
    """Each item with who read it and how many items its batch held."""
    return [("worker", len(batch), item) for item in batch]
