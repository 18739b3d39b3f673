"""occlint's command run in this process, as ``python -m occlint`` would run it: the same
entry point (``occlint.cli.main.main``), stdout and stderr captured as bytes and decoded as
``subprocess.run(..., text=True)`` decodes them, the exit status from ``SystemExit``.

A run in a new process costs about 0.2 CPU s more (starting Python and importing occlint):
about 80 CPU s of the suite over its ~500 runs (docs/performance.md, issue 31). What a
process would start afresh is set afresh here, and what a run changes is put back:

- the working directory, ``os.environ`` (replaced by ``env`` when given), stdin (``stdin``,
  else empty), stdout and stderr (no terminal: ``isatty()`` is false, as with a pipe; the
  ``sys.__std*__`` streams too, so that the help's width is the fallback a pipe gets);
- the garbage collector's thresholds and frozen objects (``occlint.pipeline.gcpolicy``),
  the signal handlers;
- occlint's caches: every ``functools`` cache of its modules and the memo dictionaries of
  :data:`MEMOS` are emptied before each run (some are keyed by a file's path, size and
  mtime, which a test that rewrites a file within a clock tick would fool), but those of
  what occlint ships (:data:`KEPT`).

What a process reads once as it starts (``PYTHONHASHSEED``, ``PYTHONPATH``, an environment
variable read at import) and what is about the process itself (the console script, worker
processes, a terminal, signals) is tested through :func:`tests.conftest.run_occlint_process`.
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

# module-level dictionaries that memoise within a run (occlint.rules.registry.RULES is a
# registry filled at import, not a memo); tests/test_inprocess.py checks the list is whole
MEMOS = (
    ("occlint.model.jsonenc", "_keys"),
    ("occlint.model.finding", "_TALLIES"),
    ("occlint.judgement.advice", "_ADVICE"),
    ("occlint.pipeline.document", "_SHARED"),
    ("occlint.readers.source", "_CACHE"),
    ("occlint.readers.source.vendor", "_HEADERS"),
)
# caches of what occlint ships (read-only data files of the package, a tree-sitter language,
# a class), the same in every process: kept (the device database is 30 ms of a 35 ms run)
KEPT = {("occlint.devices.db", "shipped_db"), ("occlint.devices.launch_params", "_table"),
        ("occlint.readers.source.parse", "language"), ("occlint.readers.pe", "_buffer_pe")}
SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGPIPE", "SIGCHLD")
                if hasattr(signal, name))


class _Sink(io.BytesIO):
    """A stream's bytes, still readable after the run closed the stream (occlint closes
    stderr on a broken pipe)."""

    def close(self) -> None:
        pass


def forget_caches() -> None:
    """Empty occlint's caches: its modules' ``functools`` caches and :data:`MEMOS`."""
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "occlint" or name.startswith("occlint.")):
            continue
        for attr, value in list(vars(module).items()):
            if callable(getattr(value, "cache_clear", None)) \
                    and getattr(value, "__module__", None) == name and (name, attr) not in KEPT:
                value.cache_clear()
    for module_name, attr in MEMOS:
        module = sys.modules.get(module_name)
        if module is not None:
            getattr(module, attr).clear()


def _decode(data: bytes) -> str:
    """As ``subprocess.run(..., text=True)`` decodes (universal newlines)."""
    return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


@contextlib.contextmanager
def _environment(env: dict[str, str] | None, cwd: Path | str | None) -> Iterator[None]:
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
    try:
        if cwd is not None:
            os.chdir(cwd)
        yield
    finally:
        os.chdir(saved_cwd)
        if os.environ != saved_env:
            os.environ.clear()
            os.environ.update(saved_env)


@contextlib.contextmanager
def _process_state() -> Iterator[None]:
    """The collector's settings and the signal handlers, put back after the run."""
    thresholds, enabled = gc.get_threshold(), gc.isenabled()
    handlers = {sig: signal.getsignal(sig) for sig in SIGNALS}
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
        (gc.enable if enabled else gc.disable)()
        for sig, handler in handlers.items():
            if handler is not None and signal.getsignal(sig) != handler:
                signal.signal(sig, handler)


@contextlib.contextmanager
def _streams(stdin: str | None) -> Iterator[tuple[_Sink, _Sink]]:
    out, err = _Sink(), _Sink()
    names = ("stdin", "stdout", "stderr", "__stdin__", "__stdout__", "__stderr__")
    saved = {name: getattr(sys, name) for name in names}
    new_in = io.TextIOWrapper(io.BytesIO((stdin or "").encode("utf-8")), encoding="utf-8")
    new_out = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    new_err = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace",
                               write_through=True)
    for name in names:
        setattr(sys, name, {"stdin": new_in, "stdout": new_out}.get(name.strip("_"), new_err))
    try:
        yield out, err
    finally:
        for stream in (new_out, new_err):
            with contextlib.suppress(ValueError):  # closed by the run
                stream.flush()
        for name, stream in saved.items():
            setattr(sys, name, stream)


def run_in_process(args: list[str], cwd: Path | str | None = None, stdin: str | None = None,
                   env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """``python -m occlint ARGS`` in this process: (exit status, stdout, stderr)."""
    from occlint.cli.main import main

    forget_caches()
    with _environment(env, cwd), _process_state(), _streams(stdin) as (out, err):
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            if exc.code is None or isinstance(exc.code, int):
                code = exc.code or 0
            else:  # what the interpreter does with a message
                print(exc.code, file=sys.stderr)
                code = 1
    return code, _decode(out.getvalue()), _decode(err.getvalue())
