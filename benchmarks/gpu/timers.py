"""Timing helpers the GPU scripts share (run on the lent machine; torch imported there),
and :func:`save_trace`: a profiler's trace written gzip'd.

* :func:`events`: median milliseconds of ``fn()`` between two CUDA events (device time);
* :func:`wall`: median milliseconds of ``fn()`` between two device synchronisations
  (what a caller waits: host launch costs included);
* :func:`graphed`: ``fn`` captured in a CUDA graph (warmed up on a side stream first, as
  torch.cuda.graphs asks), returned as its replay.
"""

from __future__ import annotations

import gzip
import shutil
import statistics
import time
from collections.abc import Callable
from pathlib import Path


def events(fn: Callable[[], object], reps: int = 30, warm: int = 3) -> float:
    import torch

    for _ in range(warm):
        fn()
    ms = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ms.append(a.elapsed_time(b))
    return statistics.median(ms)


def wall(fn: Callable[[], object], reps: int = 50, warm: int = 3) -> float:
    import torch

    for _ in range(warm):
        fn()
    s = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        s.append(time.perf_counter() - t)
    return statistics.median(s) * 1e3


def graphed(fn: Callable[[], object], warm: int = 3) -> Callable[[], None]:
    import torch

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(warm):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph.replay


def save_trace(prof, path: Path) -> Path:
    """The PyTorch profiler's trace at ``path`` + ".gz" (the JSON it exports, gzip'd)."""
    prof.export_chrome_trace(str(path))
    with open(path, "rb") as f, gzip.open(f"{path}.gz", "wb") as g:
        shutil.copyfileobj(f, g)
    path.unlink()
    return Path(f"{path}.gz")
