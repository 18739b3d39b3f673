"""Where inputs are analysed: in this process, or in worker processes for large runs.

:func:`analyse_all` yields every candidate's outcome batch by batch, in input order, so the
document is the same whatever the parallelism. Workers build their own :class:`Setup` and
write their kernel records to files of their own (occlint.model.records).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from functools import partial

from occlint.config import Config
from occlint.model.records import Sink
from occlint.pipeline import gcpolicy
from occlint.pipeline.inputs import Candidate
from occlint.pipeline.kinds import analyse_input, failed
from occlint.pipeline.outcome import InputOutcome
from occlint.pipeline.setup import Options, Setup
from occlint.readers.formats import BINARY_MAGICS, is_source
from occlint.readers.sniff import read_head

# "auto" parallelism starts worker processes only for runs this large (below, starting them
# costs more than it saves: spawned, about 0.15 s of CPU each; forked, on Linux, far less,
# but these limits were measured with spawned workers; docs/performance.md): binary inputs
# (GPU code, archives, host binaries) by count, other inputs by bytes (or by a count that
# only trees of many thousands of text files reach: those are only sniffed, about 35 us
# each), and sources by the bytes past the reader's byte test (those of the files that can
# hold a kernel or a launch: the others are only searched for a marker).
AUTO_MIN_FILES = 256
AUTO_MIN_BYTES = 64 << 20
AUTO_MIN_TEXT_FILES = 16384
AUTO_MIN_SOURCE_BYTES = 2 << 20

_WORKER_SETUP: Setup | None = None


def _start_worker(opts: Options, cfg: Config, directory: str) -> None:
    global _WORKER_SETUP
    gcpolicy.relax()
    _WORKER_SETUP = Setup.build(opts, cfg)
    _WORKER_SETUP.sink = Sink(os.path.join(directory, f"worker-{os.getpid()}"))


def _work(batch: list[Candidate]) -> list[InputOutcome | None]:
    assert _WORKER_SETUP is not None
    outcomes = [analyse_input(c, _WORKER_SETUP) for c in batch]
    _WORKER_SETUP.sink.flush()  # the main process reads the records from the file
    return outcomes


def _here(batch: list[Candidate], setup: Setup) -> list[InputOutcome | None] | None:
    """A batch of sources read in this process (None for other inputs: the binary and
    trace readers run in workers, where a crash loses one input, not the run)."""
    if _sources_and_others(batch)[1]:
        return None
    return [analyse_input(c, setup) for c in batch]


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def large_run(candidates: list[Candidate]) -> bool:
    """Enough binary inputs, other inputs or source bytes to parse (see AUTO_MIN_*)."""
    sources, others = _sources_and_others(candidates)
    return _many(others) or _parsed_bytes(sources) >= AUTO_MIN_SOURCE_BYTES


def _sources_and_others(candidates: list[Candidate]
                        ) -> tuple[list[Candidate], list[Candidate]]:
    sources, others = [], []
    for c in candidates:
        (sources if c.group is None and is_source(c.path) else others).append(c)
    return sources, others


def _many(others: list[Candidate]) -> bool:
    """AUTO_MIN_FILES binary inputs (from their first bytes: read only when there are that
    many inputs, about 7 us each), AUTO_MIN_TEXT_FILES inputs, or AUTO_MIN_BYTES."""
    if len(others) >= AUTO_MIN_TEXT_FILES or _bytes(others) >= AUTO_MIN_BYTES:
        return True
    if len(others) < AUTO_MIN_FILES:
        return False
    binaries = 0
    for c in others:
        if c.group is not None or _binary_head(read_head(c.path)):  # (a group: a zip's)
            binaries += 1
            if binaries >= AUTO_MIN_FILES:
                return True
    return False


def _binary_head(head: bytes | None) -> bool:
    return head is not None and (b"\0" in head or head.startswith(BINARY_MAGICS))


def _bytes(candidates: list[Candidate]) -> int:
    size = 0
    for c in candidates:
        if c.size is not None:
            size += c.size
            continue
        try:
            size += os.stat(c.path).st_size
        except OSError:
            continue
    return size


def _parsed_bytes(sources: list[Candidate]) -> int:
    """The bytes of the sources past the reader's byte test, up to AUTO_MIN_SOURCE_BYTES:
    files are read only when their sizes sum to that much (a file with nothing to parse is
    not read again, occlint.readers.source.parsed_bytes)."""
    if _bytes(sources) < AUTO_MIN_SOURCE_BYTES:
        return 0
    from occlint.readers.source import parsed_bytes

    parsed = 0
    for c in sources:
        try:
            parsed += parsed_bytes(c.path, c.display)
        except OSError:
            continue
        if parsed >= AUTO_MIN_SOURCE_BYTES:
            break
    return parsed


def auto_jobs(candidates: list[Candidate]) -> int:
    """One process per CPU for a large run (see :func:`large_run`), else 1 (for sources,
    the main process is one of them: :func:`analyse_all`)."""
    cpus = cpu_count()
    if cpus < 2:
        return 1
    return cpus if large_run(candidates) else 1


def chunks(items: list[Candidate], jobs: int, per_worker: int = 8, most: int = 64
           ) -> list[list[Candidate]]:
    """Consecutive runs of ``items``: about ``per_worker`` chunks per worker, at most ``most``
    items each (small chunks keep the workers evenly loaded and the results flowing, large
    ones save messages). With several workers, a chunk also ends before its files would
    pass an even share of all the bytes: a large library is a chunk of its own, not paired
    with the next large one (a member group of an archive counts no bytes: the groups are
    already of a size)."""
    wanted = max(jobs * per_worker, 1)
    size = max(1, min(most, -(-len(items) // wanted)))
    if jobs < 2:
        return [items[i:i + size] for i in range(0, len(items), size)]
    sizes = [0 if c.group is not None else _bytes([c]) for c in items]
    share = sum(sizes) / wanted
    out: list[list[Candidate]] = []
    chunk: list[Candidate] = []
    held = 0
    for item, nbytes in zip(items, sizes, strict=True):
        if chunk and (len(chunk) >= size or held + nbytes > share):
            out.append(chunk)
            chunk, held = [], 0
        chunk.append(item)
        held += nbytes
    if chunk:
        out.append(chunk)
    return out


def largest_first(batches: list[list[Candidate]]) -> list[int]:
    """The batches' indexes, the binaries that are a batch of their own (what :func:`chunks`
    does with a large library) the largest first, then the other batches (many small files,
    a zip archive's member groups, sources: the last ones are those this process reads
    when it helps) in their order."""
    sizes = [_bytes(batch) if len(batch) == 1 and not _sources_and_others(batch)[0] and
             batch[0].group is None else 0 for batch in batches]
    return sorted(range(len(batches)), key=lambda i: -sizes[i])


def analyse_all(candidates: list[Candidate], jobs: int, setup: Setup, opts: Options,
                 cfg: Config, directory: Callable[[], str]
                 ) -> Iterator[list[InputOutcome | None]]:
    """Outcomes of every candidate, batch by batch, in order (``directory()``: where
    workers and large runs write their kernel records)."""
    only_sources = not _sources_and_others(candidates)[1]
    # sources alone: one batch per file, which parallel.ordered_map sends out together,
    # fewer as the files run out (the main process reads too; see there)
    batches = [[c] for c in candidates] if jobs > 1 and only_sources \
        else chunks(candidates, jobs)
    done = 0
    if jobs > 1 and len(batches) > 1:
        from occlint.pipeline import parallel  # multiprocessing: imported only when used

        # sources are read here too, while the workers start and whenever the next result
        # is not ready: one process less to start (about 0.13 s of CPU), and none idle
        helping = _sources_and_others(batches[-1])[1] == []
        here = partial(_here, setup=setup) if helping else None
        if only_sources:
            from occlint.readers.source.parse import prepare

            prepare()  # before the workers fork: they inherit the compiled query
        # binaries: the largest batches go out first (a large library is a worker's alone:
        # started last, it would be the run's tail); their results wait for their turn
        order = None if only_sources else largest_first(batches)
        held: dict[int, list[InputOutcome | None]] = {}
        try:
            for sent, result in enumerate(parallel.ordered_map(
                    _work, batches if order is None else [batches[i] for i in order],
                    min(jobs - 1 if helping else jobs, len(batches)),
                    crashed=lambda c, message: failed(c, message, setup),
                    initializer=_start_worker, initargs=(opts, cfg, directory()),
                    here=here, merge=only_sources)):
                held[sent if order is None else order[sent]] = result
                while done in held:  # in input order
                    yield held.pop(done)
                    done += 1
            return
        except parallel.WorkersUnavailable:
            pass  # go on in this process
    if done < len(batches) and (jobs > 1 or _many(_sources_and_others(candidates)[1])):
        # many kernel records to come (sources have none): keep the memory bounded
        setup.sink = Sink(os.path.join(directory(), "main"))
    for batch in batches[done:]:
        yield [analyse_input(c, setup) for c in batch]
