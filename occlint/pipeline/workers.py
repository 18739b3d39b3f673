"""Where inputs are analysed: in this process, or in worker processes for large runs.

:func:`analyse_all` yields every candidate's outcome batch by batch, in input order, so the
document is the same whatever the parallelism. Workers build their own :class:`Setup` and
write their kernel records to files of their own (occlint.model.records).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

from occlint.config import Config
from occlint.model.records import Sink
from occlint.pipeline.inputs import Candidate
from occlint.pipeline.kinds import analyse_input, failed
from occlint.pipeline.outcome import InputOutcome
from occlint.pipeline.setup import Options, Setup

# "auto" parallelism starts worker processes only for runs this large (below, starting them
# costs more than it saves): files, or bytes to read.
AUTO_MIN_FILES = 256
AUTO_MIN_BYTES = 64 << 20

_WORKER_SETUP: Setup | None = None


def _start_worker(opts: Options, cfg: Config, directory: str) -> None:
    global _WORKER_SETUP
    _WORKER_SETUP = Setup.build(opts, cfg)
    _WORKER_SETUP.sink = Sink(os.path.join(directory, f"worker-{os.getpid()}"))


def _work(batch: list[Candidate]) -> list[InputOutcome | None]:
    assert _WORKER_SETUP is not None
    outcomes = [analyse_input(c, _WORKER_SETUP) for c in batch]
    _WORKER_SETUP.sink.flush()  # the main process reads the records from the file
    return outcomes


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def large_run(candidates: list[Candidate]) -> bool:
    """AUTO_MIN_FILES files or more, or AUTO_MIN_BYTES to read."""
    if len(candidates) >= AUTO_MIN_FILES:
        return True
    size = 0
    for c in candidates:
        try:
            size += os.stat(c.path).st_size
        except OSError:
            continue
    return size >= AUTO_MIN_BYTES


def auto_jobs(candidates: list[Candidate]) -> int:
    """One worker per CPU for a large run (see :func:`large_run`), else 1."""
    cpus = cpu_count()
    if cpus < 2:
        return 1
    return cpus if large_run(candidates) else 1


def chunks(items: list[Candidate], jobs: int, per_worker: int = 8, most: int = 64
           ) -> list[list[Candidate]]:
    """Consecutive runs of ``items``: about ``per_worker`` chunks per worker, at most ``most``
    items each (small chunks keep the workers evenly loaded and the results flowing, large
    ones save messages)."""
    size = max(1, min(most, -(-len(items) // max(jobs * per_worker, 1))))
    return [items[i:i + size] for i in range(0, len(items), size)]


def analyse_all(candidates: list[Candidate], jobs: int, setup: Setup, opts: Options,
                 cfg: Config, directory: Callable[[], str]
                 ) -> Iterator[list[InputOutcome | None]]:
    """Outcomes of every candidate, batch by batch, in order (``directory()``: where
    workers and large runs write their kernel records)."""
    batches = chunks(candidates, jobs)
    done = 0
    if jobs > 1 and len(batches) > 1:
        from occlint.pipeline import parallel  # multiprocessing: imported only when used

        try:
            for result in parallel.ordered_map(
                    _work, batches, min(jobs, len(batches)),
                    crashed=lambda c, message: failed(c, message, setup),
                    initializer=_start_worker, initargs=(opts, cfg, directory())):
                done += 1
                yield result
            return
        except parallel.WorkersUnavailable:
            pass  # go on in this process
    if done < len(batches) and (jobs > 1 or large_run(candidates)):
        setup.sink = Sink(os.path.join(directory(), "main"))  # keep the memory bounded
    for batch in batches[done:]:
        yield [analyse_input(c, setup) for c in batch]
