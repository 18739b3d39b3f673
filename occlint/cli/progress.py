"""A one-line progress display on stderr for long runs: ``[12,345/15,970 files] 24,001 kernels``.

Shown only when stderr is a terminal (never in a pipe, a file or CI logs), only once a run
has taken longer than ``DELAY`` seconds (short runs never flash it), redrawn in place with
``\\r`` at most every ``INTERVAL`` seconds, and erased when the run ends, so that nothing of
it stays on the screen.
"""

from __future__ import annotations

import time
from typing import TextIO

DELAY = 0.5
INTERVAL = 0.1


class ProgressLine:
    def __init__(self, stream: TextIO, clock=time.monotonic):
        self.stream = stream
        self.clock = clock
        self.start = clock()
        self.last = 0.0
        self.width = 0  # characters on the line now

    @staticmethod
    def wanted(stream: TextIO, quiet: bool = False) -> bool:
        """A progress line on ``stream``: a terminal, and not ``--quiet``."""
        if quiet:
            return False
        try:
            return stream.isatty()
        except (AttributeError, ValueError):  # no isatty, or a closed stream
            return False

    def update(self, files_done: int, files_total: int, kernels: int) -> None:
        now = self.clock()
        if now - self.start < DELAY or (self.width and now - self.last < INTERVAL):
            return
        self.last = now
        text = f"[{files_done:,}/{files_total:,} files] {kernels:,} kernels"
        self._draw(text + " " * max(self.width - len(text), 0))
        self.width = len(text)

    def close(self) -> None:
        if self.width:
            self._draw(" " * self.width)
            self.stream.write("\r")
            self.stream.flush()
            self.width = 0

    def _draw(self, text: str) -> None:
        try:
            self.stream.write("\r" + text)
            self.stream.flush()
        except (OSError, ValueError):  # the terminal went away: stop drawing
            self.width = 0
            self.start = float("inf")
