"""The cyclic garbage collector's settings for a run.

A large run holds millions of objects that live until the end (kernel models, metadata
maps, caches); with CPython's default thresholds the collector scans them over and over:
about 13 % of the CPU of two ROCm libraries with 248,000 kernels (Debian's librocsparse0
5.3.0 and 5.7.1, ``-j 1``: 32.4 CPU s, 28.3 with these settings, the same as with the
collector off). occlint makes few reference cycles, so young collections can be rare; the
objects of the imports are frozen out of every collection.
"""

from __future__ import annotations

import gc

THRESHOLDS = (100_000, 50, 100)  # CPython 3.11's defaults: (700, 10, 10)


def relax() -> None:
    """Collect rarely, and never the objects that exist now (those of the imports)."""
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)


def before_exit() -> None:
    """Leave what the run still holds out of the collections the interpreter makes as it
    exits (its last collections traverse every object not frozen: HeCBench's sources, 21
    -> 8 ms from the command's end to the process's; docs/performance.md)."""
    gc.freeze()
