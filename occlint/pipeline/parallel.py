"""Run the per-input work of a run in worker processes; results come back in input order.

Workers are forked on Linux when this process runs no other thread (a fork copies the
imported modules: no new interpreter to start and occlint to import, about a billion
instructions per worker), else spawned (occlint.processes). Either way each worker is set
up by the same initializer, from the same arguments, so it holds the state a spawned one
would. The work is sent in chunks of consecutive items, a few chunks per worker in flight,
and the results are consumed in submission order, so the output never depends on which
worker was faster.

A worker that dies (a crash in a C extension, the out-of-memory killer) breaks the pool.
The chunks that were in flight are then redone one item at a time in a fresh one-worker
pool: the item that kills that worker too is reported through ``crashed`` and the run goes
on, never hanging. Python exceptions do not kill a worker; the work function decides what
becomes of them. Every pool must first answer a no-op task: when workers cannot start at
all (a program embedding occlint without an ``if __name__ == "__main__":`` guard, no
resources for processes), :class:`WorkersUnavailable` tells the caller to go on in-process.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from functools import partial
from typing import Any, TypeVar

from occlint.processes import start_method

T = TypeVar("T")
R = TypeVar("R")

IN_FLIGHT_PER_WORKER = 4
AHEAD_PER_WORKER = 32  # finished chunks held while an earlier one runs (their results are small)
# when the calling process helps and merging is asked for, consecutive batches go out
# together: at most MOST_MERGED, and a GUIDE-th of a process's share of the batches left,
# so that chunks shrink as the work runs out wherever the workers and the calling process
# meet
GUIDE = 4
MOST_MERGED = 16
CRASH_MESSAGE = ("the worker process reading this input died (a crash or out of memory); "
                 "nothing from it is reported")


class WorkersUnavailable(RuntimeError):
    """Worker processes could not be started (the results yielded so far stand)."""


def _ready() -> bool:
    return True


def _start_worker(initializer: Callable[..., None] | None, initargs: tuple) -> None:
    # Ctrl-C goes to the whole process group: the main process handles it, workers ignore it
    # (else each prints a KeyboardInterrupt traceback).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if initializer is not None:
        initializer(*initargs)


def ordered_map(work: Callable[[list[T]], list[R]], batches: list[list[T]], jobs: int,
                crashed: Callable[[T, str], R], initializer: Callable[..., None] | None = None,
                initargs: tuple = (), here: Callable[[list[T]], list[R] | None] | None = None,
                merge: bool = False) -> Iterator[list[R]]:
    """``work(batch)`` for every batch, in ``jobs`` worker processes, yielded in order.

    ``work`` and ``initializer`` must be module-level functions (they are pickled by name);
    ``crashed(item, message)`` stands in for the result of an item whose worker died.
    ``here(batch)``: the calling process helps: whenever the next result is not ready, it
    takes the last batch not yet sent to a worker and returns its result, or None when that
    batch must go to a worker (then it stops helping); it starts before the workers have,
    and its results are yielded in their turn. With ``merge`` too (small batches of alike
    items: a source file each), consecutive batches are read together (see :data:`GUIDE`;
    each batch's results still come as its own list)."""
    context = multiprocessing.get_context(start_method())

    def pool(workers: int, ready: bool = True) -> ProcessPoolExecutor:
        executor = ProcessPoolExecutor(workers, mp_context=context, initializer=_start_worker,
                                       initargs=(initializer, initargs))
        try:  # one no-op per worker: the executor starts a process per task while none idles
            probes = [executor.submit(_ready) for _ in range(workers)]
            for probe in probes if ready else ():
                probe.result()
        except (BrokenProcessPool, OSError) as exc:
            executor.shutdown(wait=True, cancel_futures=True)
            raise WorkersUnavailable(str(exc)) from None
        return executor

    executor = pool(jobs, ready=here is None)
    # each entry: the batches sent together, and the future of their joined results
    pending: deque[tuple[list[list[T]], Future]] = deque()
    todo = deque(batches)
    helped: list[list[R]] = []  # results of the last batches, done here (last first)
    share = GUIDE * (jobs + 1)  # the processes that read, this one among them

    def together() -> int:
        if here is None or not merge:
            return 1
        return max(1, min(MOST_MERGED, len(todo) // share))

    done = False
    try:
        while True:
            # Keep every worker busy while the oldest chunk (whose results come next) is
            # still running: chunks are submitted while fewer than IN_FLIGHT_PER_WORKER per
            # worker are unfinished, up to AHEAD_PER_WORKER finished ones held for their turn.
            running = sum(not f.done() for _, f in pending)
            while todo and running < jobs * IN_FLIGHT_PER_WORKER and \
                    len(pending) < jobs * AHEAD_PER_WORKER:
                parts = [todo.popleft() for _ in range(min(together(), len(todo)))]
                pending.append((parts, _submit(executor, work, _joined(parts))))
                running += 1
            if not pending:
                yield from reversed(helped)
                done = True
                return
            parts, future = pending[0]
            if not future.done():
                if here is not None:
                    if todo:
                        last = [todo.pop() for _ in range(min(together(), len(todo)))][::-1]
                        result = here(_joined(last))
                        if result is None:
                            todo.extend(last)
                            here = None
                        else:
                            helped.extend(reversed(_split(result, last)))
                        continue
                    taken = _take_back(pending, here, partial(_submit, executor, work))
                    if taken is not False:  # pending changed: look again
                        here = here if taken else None
                        continue
                wait([f for _, f in pending if not f.done()], return_when=FIRST_COMPLETED)
                continue
            pending.popleft()
            try:
                result = future.result()
            except BrokenProcessPool:
                executor.shutdown(wait=True, cancel_futures=True)
                unfinished = [(parts, future), *pending]
                pending.clear()
                for each, done in unfinished:
                    result = _finished(done)
                    if result is None:
                        result = _isolate(work, _joined(each), crashed, pool)
                    yield from _split(result, each)
                executor = pool(jobs)
                continue
            yield from _split(result, parts)
    finally:
        # When done, the idle workers are joined here: left to the interpreter's exit, the
        # executor's wake-up pipe can be closed under its manager thread (CPython 3.11 then
        # prints "Exception ignored ... Bad file descriptor", seen once in 48 runs). When
        # interrupted (Ctrl-C, an error in the consumer), the chunks still running are not
        # waited for.
        executor.shutdown(wait=done, cancel_futures=True)


def _submit(executor: ProcessPoolExecutor, work: Callable[[list[T]], list[R]],
            batch: list[T]) -> Future:
    """``work(batch)`` on a worker; where the pool broke before the submission (a worker
    died while this process was busy), a future that holds the break, handled where the
    result is read as a break seen there is."""
    try:
        return executor.submit(work, batch)
    except BrokenProcessPool as exc:
        broken: Future = Future()
        broken.set_exception(exc)
        return broken


def _joined(parts: list[list[T]]) -> list[T]:
    return parts[0] if len(parts) == 1 else [item for part in parts for item in part]


def _split(result: list[R], parts: list[list[T]]) -> list[list[R]]:
    """The results of batches sent together, batch by batch."""
    if len(parts) == 1:
        return [result]
    out, start = [], 0
    for part in parts:
        out.append(result[start:start + len(part)])
        start += len(part)
    return out


def _take_back(pending: deque, here: Callable[[list[T]], list[R] | None],
               resend: Callable[[list[T]], Future]) -> bool | None:
    """Read here the last batches sent to a worker that no worker has started, so that this
    process does not wait while a worker still has a queue; their entry then holds the
    result: True. False when every batch sent has started; None when ``here`` declines the
    batches (they are sent again with ``resend``, in their place)."""
    for i in range(len(pending) - 1, -1, -1):
        parts, future = pending[i]
        if future.cancel():
            result = here(_joined(parts))
            if result is None:
                pending[i] = (parts, resend(_joined(parts)))
                return None
            done: Future = Future()
            done.set_result(result)
            pending[i] = (parts, done)
            return True
    return False


def _finished(future: Future) -> Any:
    """The result of a future that completed before the pool broke, else None."""
    if future.done() and not future.cancelled() and future.exception() is None:
        return future.result()
    return None


def _isolate(work: Callable[[list[T]], list[R]], batch: list[T],
             crashed: Callable[[T, str], R],
             pool: Callable[[int], ProcessPoolExecutor]) -> list[R]:
    """Redo ``batch`` one item at a time in a one-worker pool, to find the item that kills
    its worker."""
    out: list[R] = []
    executor: ProcessPoolExecutor | None = None
    try:
        for item in batch:
            if executor is None:
                executor = pool(1)
            try:
                out.extend(executor.submit(work, [item]).result())
            except BrokenProcessPool:
                executor.shutdown(wait=True)
                executor = None
                out.append(crashed(item, CRASH_MESSAGE))
    finally:
        if executor is not None:
            executor.shutdown(wait=True)
    return out
