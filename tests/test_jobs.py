"""--jobs / ``jobs`` (worker processes), crashes in workers, and the progress line."""

from __future__ import annotations

import io
import json
import os
import pty
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from occlint.cli.progress import ProgressLine
from occlint.config import parse
from occlint.errors import ConfigError
from occlint.pipeline import parallel
from occlint.pipeline.inputs import Candidate
from occlint.pipeline.run import Options, execute
from occlint.pipeline.workers import auto_jobs, largest_first
from occlint.processes import start_method
from occlint.reporters import json_format
from tests import parallel_helpers
from tests.conftest import FIXTURES, REPO, run_occlint_process

AMD_CO = FIXTURES / "amd/co"
GAMMA = AMD_CO / "gamma.gfx1100.hsaco"
SOURCES = REPO / "tests" / "sources"


def _json(jobs, paths=(AMD_CO, FIXTURES / "nvidia"), **kw) -> str:
    opts = Options(paths=[str(p) for p in paths], isolated=True, jobs=jobs, **kw)
    return json_format.render(execute(opts).document)


# -- results do not depend on the number of workers -------------------------------------------
def test_jobs_give_the_same_document():
    one = _json(1, devices=["w7800", "h100"], grid=1000)
    assert json.loads(one)["summary"]["reports"] > 500
    assert _json(2, devices=["w7800", "h100"], grid=1000) == one
    assert _json(3, devices=["w7800", "h100"], grid=1000) == one


def test_large_files_go_out_first_and_come_back_in_order(tmp_path):
    """A binary that is a batch of its own is sent largest first; batches of many files, a
    zip's member groups and sources keep their order after them (the document's order is
    the inputs', test_jobs_give_the_same_document)."""
    def file(name: str, size: int) -> Candidate:
        (tmp_path / name).write_bytes(bytes(size))
        return Candidate(str(tmp_path / name), name, True)

    small, large, many = file("a", 10), file("b", 1000), [file("c", 5000), file("d", 1)]
    group = Candidate(str(tmp_path / "a"), "w.whl", True, group=0)
    source = file("k.cu", 9000)
    assert largest_first([[small], many, [large], [group], [source]]) == [2, 0, 1, 3, 4]


def test_jobs_cli_text_and_exit_code_equal():
    runs = [run_occlint_process(str(AMD_CO), "--device", "w7800", "-j", j, cwd=REPO)
            for j in ("1", "2", "auto")]
    assert {r.code for r in runs} == {1}
    assert runs[0].out == runs[1].out == runs[2].out
    assert runs[0].err == runs[1].err == runs[2].err == ""


@pytest.mark.parametrize("value", ["0", "-1", "two", "1.5", "9999"])
def test_jobs_flag_rejects_bad_values(value):
    run = run_occlint_process(str(GAMMA), "--jobs", value, cwd=REPO)
    assert run.code == 2
    lines = run.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("occlint: error: ") and "--jobs" in lines[0]


def test_jobs_in_configuration(tmp_path, monkeypatch):
    assert parse({"jobs": 3}, "occlint.toml", tmp_path).jobs == 3
    assert parse({"jobs": "auto"}, "occlint.toml", tmp_path).jobs == "auto"
    assert parse({}, "occlint.toml", tmp_path).jobs == "auto"
    for bad in (0, -2, True, "many", 2.5):
        with pytest.raises(ConfigError, match="'jobs' must be"):
            parse({"jobs": bad}, "occlint.toml", tmp_path)
    # the configured value reaches the run, and the command line overrides it
    import occlint.pipeline.run as run_mod

    used = []
    real = run_mod.analyse_all
    monkeypatch.setattr(run_mod, "analyse_all",
                        lambda candidates, jobs, *a: used.append(jobs) or real(candidates,
                                                                                 jobs, *a))
    (tmp_path / "occlint.toml").write_text('jobs = 2\n')
    execute(Options(paths=[str(GAMMA)], config=str(tmp_path / "occlint.toml")))
    execute(Options(paths=[str(GAMMA)], config=str(tmp_path / "occlint.toml"), jobs=1))
    assert used == [2, 1]


def test_auto_jobs(monkeypatch):
    import occlint.pipeline.workers as run_mod

    small = [Candidate(str(GAMMA), "g", True)] * 3
    monkeypatch.setattr(run_mod, "cpu_count", lambda: 4)
    assert auto_jobs(small) == 1  # a few small files: no workers
    assert auto_jobs(small * 100) == 4  # 300 files
    assert auto_jobs(small[:1]) == 1
    monkeypatch.setattr(run_mod, "AUTO_MIN_BYTES", GAMMA.stat().st_size * 2)
    assert auto_jobs(small) == 4  # enough bytes
    monkeypatch.setattr(run_mod, "cpu_count", lambda: 1)
    assert auto_jobs(small * 100) == 1


def test_auto_jobs_weighs_sources_by_the_bytes_parsed(monkeypatch, tmp_path):
    """Sources start workers by the bytes of those that can hold a kernel or a launch (the
    others are not parsed), not by their number."""
    import occlint.pipeline.workers as run_mod

    kernels = FIXTURES / "nvidia/src/gamma.cu"
    no_kernel = tmp_path / "plain.h"  # as large, but nothing a launch could be read from
    no_kernel.write_bytes(b"int f(int x) { return x; }\n".ljust(kernels.stat().st_size, b" "))
    monkeypatch.setattr(run_mod, "cpu_count", lambda: 4)
    with_kernels = [Candidate(str(kernels), "k.cu", True)]
    assert auto_jobs(with_kernels * 300) == 1  # 300 small sources: one process
    monkeypatch.setattr(run_mod, "AUTO_MIN_SOURCE_BYTES", kernels.stat().st_size * 2)
    assert auto_jobs(with_kernels * 2) == 4
    assert auto_jobs(with_kernels) == 1
    assert auto_jobs([Candidate(str(no_kernel), "plain.h", True)] * 2) == 1


def test_auto_jobs_counts_binary_inputs_not_text_files(monkeypatch, tmp_path):
    """Text files beside the sources of a tree (build files, notes) are only sniffed: 300
    of them start no workers, 300 binaries do."""
    import occlint.pipeline.workers as run_mod

    notes = tmp_path / "NOTES.md"
    notes.write_text("# how to build\n")
    monkeypatch.setattr(run_mod, "cpu_count", lambda: 4)
    assert auto_jobs([Candidate(str(notes), "NOTES.md", False)] * 300) == 1
    assert auto_jobs([Candidate(str(GAMMA), "g", False)] * 300) == 4
    monkeypatch.setattr(run_mod, "AUTO_MIN_TEXT_FILES", 300)
    assert auto_jobs([Candidate(str(notes), "NOTES.md", False)] * 300) == 4


def test_large_wheel_is_shared_by_workers_with_the_same_result(tmp_path):
    """A wheel of three member groups: read whole in one process, or one group per task in
    two workers, the document is the same byte for byte (hashes, kernels, errors)."""
    import hashlib
    import zipfile

    from occlint.pipeline.inputs import SPLIT_MIN_BYTES, split_archives
    from occlint.readers.archive import GROUP_MEMBERS

    cubins = sorted(c for c in (FIXTURES / "nvidia/cubin").glob("*.sm_90.cubin")
                    if c.stat().st_size < 8192)
    members = 2 * GROUP_MEMBERS + 5
    wheel = tmp_path / "big.whl"
    expected_kernels = 0
    per_cubin = {c: len(json.loads(_json(1, paths=[c]))["kernels"]) for c in cubins}
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("pkg/README.txt", "not GPU code")
        for i in range(members):
            cubin = cubins[i % len(cubins)]
            data = cubin.read_bytes()
            if i % 997 == 0:
                data = data[:700]  # a truncated member in every group: one error each
            else:
                expected_kernels += per_cubin[cubin]
            archive.writestr(f"pkg/k{i:05d}.cubin", data)
    assert wheel.stat().st_size >= SPLIT_MIN_BYTES
    parts = split_archives([Candidate(str(wheel), "big.whl", True)])
    assert [c.group for c in parts] == [0, 1, 2]

    one = _json(1, paths=[wheel], devices=["h100"], hash_inputs=True)
    assert _json(2, paths=[wheel], devices=["h100"], hash_inputs=True) == one
    doc = json.loads(one)
    (record,) = doc["inputs"]
    assert record["sha256"] == hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert record["kernels"] == len(doc["kernels"]) == expected_kernels
    assert [e["file"].rsplit("/", 1)[1] for e in doc["errors"]] == [
        f"k{i:05d}.cubin" for i in range(0, members, 997)]


# -- bad inputs and crashes -------------------------------------------------------------------
@pytest.fixture
def mixed(tmp_path):
    """Good code objects, a truncated one and a text file named like a code object."""
    for name in ("gamma.gfx1100.hsaco", "gamma.gfx90a.hsaco", "suite.gfx1100.hsaco"):
        (tmp_path / name).write_bytes((AMD_CO / name).read_bytes())
    (tmp_path / "cut.hsaco").write_bytes((AMD_CO / "suite.gfx1100.hsaco").read_bytes()[:3000])
    (tmp_path / "notes.hsaco").write_text("not a code object\n")
    return tmp_path


def test_bad_inputs_with_workers_match_in_process(mixed):
    runs = [run_occlint_process(str(mixed), "--device", "w7800", "-j", j, "--format", "json")
            for j in ("1", "2")]
    assert runs[0].code == runs[1].code == 1
    assert runs[0].out == runs[1].out and runs[0].err == runs[1].err
    lines = runs[1].err.splitlines()
    assert len(lines) == 2 and all(line.startswith("occlint: error: ") for line in lines)
    assert "cut.hsaco" in lines[0] and "notes.hsaco" in lines[1]


def test_nothing_readable_with_workers_exits_2(mixed):
    run = run_occlint_process(str(mixed / "cut.hsaco"), str(mixed / "notes.hsaco"), "-j", "2")
    assert run.code == 2 and len(run.err.splitlines()) == 2


# A sitecustomize module makes every process of a run (main and workers) fail on one file,
# as a bug in a reader or a crash in a C extension would.
SITECUSTOMIZE = textwrap.dedent('''\
    import os
    if os.environ.get("OCCLINT_TEST_FAIL_ON"):
        import occlint.readers.loader as loader
        _real = loader.read_path

        def read_path(path, display, options, *rest):
            if os.path.basename(str(path)) == os.environ["OCCLINT_TEST_FAIL_ON"]:
                if os.environ.get("OCCLINT_TEST_FAIL_HOW") == "exit":
                    os._exit(70)  # the worker dies: no exception, no result
                raise RuntimeError("injected failure")
            return _real(path, display, options, *rest)

        loader.read_path = read_path
''')


def _failing(tmp_path, mixed, how: str, *args: str):
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)]),
           "OCCLINT_TEST_FAIL_ON": "gamma.gfx90a.hsaco", "OCCLINT_TEST_FAIL_HOW": how}
    return run_occlint_process(str(mixed), "--device", "w7800", "--format", "json", *args, env=env)


def test_exception_on_one_input_is_one_error(tmp_path, mixed):
    one = _failing(tmp_path, mixed, "raise", "-j", "1")
    two = _failing(tmp_path, mixed, "raise", "-j", "2")
    assert one.code == two.code == 1  # the other inputs were analysed
    assert one.out == two.out and one.err == two.err
    failed = [e for e in json.loads(one.out)["errors"] if "gamma.gfx90a" in e["file"]]
    assert failed and failed[0]["message"].startswith(
        "internal error: RuntimeError: injected failure")
    assert "Traceback" not in one.err and len(one.err.splitlines()) == 3
    debug = _failing(tmp_path, mixed, "raise", "-j", "2", "--debug")
    assert debug.code == 2 and "Traceback" in debug.err and "injected failure" in debug.err


def test_worker_crash_is_reported_not_hung(tmp_path, mixed):
    start = time.monotonic()
    run = _failing(tmp_path, mixed, "exit", "-j", "2")
    assert time.monotonic() - start < 120
    assert run.code == 1, run.err
    doc = json.loads(run.out)
    crashed = [e for e in doc["errors"] if "gamma.gfx90a" in e["file"]]
    assert crashed and crashed[0]["message"] == parallel.CRASH_MESSAGE
    analysed = {i["path"] for i in doc["inputs"] if i["kernels"]}
    assert {Path(p).name for p in analysed} == {"gamma.gfx1100.hsaco", "suite.gfx1100.hsaco"}
    lines = run.err.splitlines()
    assert any("gamma.gfx90a.hsaco: the worker process" in line for line in lines)
    assert all(line.startswith("occlint: error: ") for line in lines)


def test_ordered_map_isolates_the_item_that_kills_its_worker():
    batches = [list(range(i, i + 5)) for i in range(0, 40, 5)]
    results = [r for chunk in parallel.ordered_map(
        parallel_helpers.square_or_die, batches, 2,
        crashed=lambda item, message: ("crashed", item)) for r in chunk]
    assert results == [("crashed", i) if i in parallel_helpers.DEADLY else i * i
                       for i in range(40)]


def test_ordered_map_with_the_calling_process_helping():
    """``here`` takes the last batches while the next result is not ready, then those sent
    to the worker that it has not started (the worker, starting, cannot have taken more
    than two); every result still comes in order, with the workers' crash isolation for
    the batches they ran, and a batch ``here`` declines (None) goes to a worker, as every
    batch before it."""
    batches = [list(range(i, i + 5)) for i in range(0, 40, 5)]
    helped: list[int] = []

    def here(batch: list[int]) -> list[int] | None:
        if batch[0] == 10:  # declined: this batch and the rest go to the workers
            return None
        helped.append(batch[0])
        return [-item for item in batch]

    results = [r for chunk in parallel.ordered_map(
        parallel_helpers.square_or_die, batches, 1,
        crashed=lambda item, message: ("crashed", item), here=here) for r in chunk]
    assert helped == sorted(helped, reverse=True)  # from the last batch back
    assert 35 in helped and 15 in helped  # not sent to the worker; sent but not started
    assert all(first > 10 for first in helped)
    assert results == [-i if i - i % 5 in helped else
                       ("crashed", i) if i in parallel_helpers.DEADLY else i * i
                       for i in range(40)]


def test_sources_read_in_the_main_process_too(tmp_path, monkeypatch):
    """With two processes for many sources, the main process reads some of them and one
    worker the rest (none started for the main's share), sent as one batch per file (they
    go out together: test_batches_go_out_together_fewer_as_they_run_out); the document is
    the one of -j 1."""
    from occlint.pipeline import workers

    text = (SOURCES / "gamma.hip.in").read_text()
    for i in range(40):
        (tmp_path / f"g{i:02d}.hip").write_text(
            text.replace("@BLOCK@", str(32 * (1 + i % 8))).replace("@GRID@", str(i + 1)))
    sizes, read_here = [], []
    real_map, real_here = parallel.ordered_map, workers._here
    sent: list[list] = []
    monkeypatch.setattr(parallel, "ordered_map", lambda *a, **kw: sizes.append(a[2]) or
                        sent.extend(a[1]) or real_map(*a, **kw))
    monkeypatch.setattr(workers, "_here", lambda batch, setup: read_here.append(batch) or
                        real_here(batch, setup))
    one, two = _json(1, paths=[tmp_path]), _json(2, paths=[tmp_path])
    assert one == two
    assert sizes == [1] and read_here  # one worker, and the main process read sources
    assert sum(map(len, sent)) == 40 and max(map(len, sent)) == 1


def test_batches_go_out_together_fewer_as_they_run_out():
    """When the calling process helps, consecutive batches are read together, at most
    MOST_MERGED, fewer as they run out, from the front by the worker and from the back by
    the calling process, so the chunks are smallest where the two meet; each batch's
    results come in order, as their own list."""
    batches = [[i] for i in range(300)]
    results = list(parallel.ordered_map(
        parallel_helpers.tagged, batches, 1, crashed=lambda item, message: None,
        here=lambda batch: [("here", len(batch), item) for item in batch], merge=True))
    assert [[item] for ((_, _, item),) in results] == batches
    sizes = [size for ((_, size, _),) in results]
    assert max(sizes) == parallel.MOST_MERGED  # the worker's first chunk
    lowest = sizes.index(min(sizes))
    assert sizes[:lowest] == sorted(sizes[:lowest], reverse=True)
    assert sizes[lowest:] == sorted(sizes[lowest:])
    assert min(sizes) == 1  # the last chunk cut


def test_ordered_map_keeps_both_workers_busy_behind_a_long_chunk():
    """The first chunk (whose results come first) runs long: the other worker goes on with
    the later chunks meanwhile, beyond the chunks in flight when it started (it idled once
    those were done: one large library ahead of many small files)."""
    batches = [[2.0], *([[0.01]] * 30)]
    results = [r for chunk in parallel.ordered_map(
        parallel_helpers.timed_sleep, batches, 2, crashed=lambda item, message: None)
        for r in chunk]
    head_end = results[0][1]
    started_meanwhile = sum(1 for start, _ in results[1:] if start < head_end)
    assert started_meanwhile > 2 * parallel.IN_FLIGHT_PER_WORKER + 8


def test_chunks_leave_a_large_file_alone(tmp_path):
    """With workers, a file of more than an even share of the bytes is a chunk of its own;
    small files share chunks, in input order."""
    from occlint.pipeline.inputs import Candidate
    from occlint.pipeline.workers import chunks

    sizes = [1, 1, 1, 1000, 1000, 1, 1, 1, 1, 1, 1, 1] * 4
    items = []
    for i, size in enumerate(sizes):
        path = tmp_path / f"{i:02d}.bin"
        path.write_bytes(bytes(size))
        items.append(Candidate(str(path), path.name, True))
    batches = chunks(items, 2)
    assert [c for batch in batches for c in batch] == items
    large = [batch for batch in batches if any(Path(c.path).stat().st_size == 1000
                                                for c in batch)]
    assert len(large) == 8 and all(len(batch) == 1 for batch in large)
    assert chunks(items, 1) == [items[i:i + 6] for i in range(0, len(items), 6)]


def _seen_by_workers(monkeypatch) -> list[bool]:
    monkeypatch.setitem(parallel_helpers.STATE, "set_in_parent", True)
    return [r for chunk in parallel.ordered_map(parallel_helpers.parent_state, [[1], [2]], 2,
                                                crashed=lambda item, message: None)
            for r in chunk]


@pytest.mark.skipif(sys.platform != "linux", reason="workers are forked only on Linux")
def test_workers_are_forked_on_linux_without_threads(monkeypatch):
    assert threading.active_count() == 1
    assert start_method() == "fork"
    assert _seen_by_workers(monkeypatch) == [True, True]  # forked: the parent's state


def test_workers_are_spawned_while_other_threads_run(monkeypatch):
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert start_method() == "spawn"
        assert _seen_by_workers(monkeypatch) == [False, False]  # new interpreters
    finally:
        stop.set()
        other.join()


def test_ordered_map_reports_workers_that_cannot_start():
    with pytest.raises(parallel.WorkersUnavailable):
        list(parallel.ordered_map(parallel_helpers.square_or_die, [[1], [2]], 2,
                                  crashed=lambda item, message: None,
                                  initializer=parallel_helpers.fail_to_start))


def test_run_goes_on_in_process_when_workers_cannot_start(monkeypatch):
    import occlint.pipeline.run as run_mod

    def unavailable(*args, **kwargs):
        raise parallel.WorkersUnavailable("no processes here")
        yield  # a generator, like the real one

    monkeypatch.setattr(parallel, "ordered_map", unavailable)
    assert _json(2, paths=[AMD_CO]) == _json(1, paths=[AMD_CO])
    assert run_mod  # the run used the patched module


# -- progress line ----------------------------------------------------------------------------
class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_line_draws_after_the_delay_and_clears():
    now = [0.0]
    stream = FakeTerminal()
    line = ProgressLine(stream, clock=lambda: now[0])
    line.update(1, 10, 2)
    assert stream.getvalue() == ""  # a short run never shows it
    now[0] = 1.0
    line.update(12345, 15970, 24001)
    assert stream.getvalue() == "\r[12,345/15,970 files] 24,001 kernels"
    now[0] = 1.05
    line.update(12346, 15970, 24003)  # too soon to redraw
    now[0] = 1.2
    line.update(15970, 15970, 31623)
    width = len("[15,970/15,970 files] 31,623 kernels")
    line.close()
    assert stream.getvalue().endswith("\r" + " " * width + "\r")
    assert not ProgressLine.wanted(io.StringIO())
    assert ProgressLine.wanted(FakeTerminal()) and not ProgressLine.wanted(FakeTerminal(), True)


PROGRESS_NOW = ("import occlint.cli.progress as p, sys; p.DELAY = 0.0; p.INTERVAL = 0.0; "
                "from occlint.cli.main import main; main(sys.argv[1:])")


def _run_with_stderr(stderr_is_tty: bool, *args: str) -> tuple[int, str, str]:
    """Run occlint (progress shown at once) with stdout to a pipe and stderr to a pty or
    a pipe; return (exit code, stdout, stderr)."""
    cmd = [sys.executable, "-c", PROGRESS_NOW, *args]
    if not stderr_is_tty:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=300)
        return proc.returncode, proc.stdout, proc.stderr
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave, cwd=REPO)
    os.close(slave)
    out: list[bytes] = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read()))
    reader.start()
    err = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every process holding the pty has exited
            break
        if not chunk:
            break
        err += chunk
    os.close(master)
    reader.join(timeout=300)
    proc.wait(timeout=300)
    return proc.returncode, b"".join(out).decode(), err.decode()


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_progress_on_a_terminal(jobs):
    code, out, err = _run_with_stderr(True, str(AMD_CO), "--format", "json", "-j", jobs)
    assert code == 1 and json.loads(out)["summary"]["inputs"] > 30
    assert "\r[" in err and " files] " in err and " kernels" in err
    total = err.split("/")[1].split(" ")[0]
    assert f"[{total}/{total} files]" in err  # the last redraw: every file done
    assert err.endswith("\r") and err.rstrip("\r ").endswith("kernels")  # erased at the end


def test_no_progress_in_a_pipe_or_when_quiet():
    code, out, err = _run_with_stderr(False, str(AMD_CO), "--format", "json")
    assert code == 1 and err == "" and out.startswith("{")
    code, out, err = _run_with_stderr(True, str(AMD_CO), "-q")
    assert code == 1 and err == ""


def test_deciding_reads_no_source_twice_and_changes_no_model(tmp_path):
    """What -j auto reads of the sources to decide (occlint.readers.source.parsed_bytes) is
    the size of those it parses, and the model read_source then gives is the one a fresh
    read gives: kept for a file with nothing to parse, never for one with a kernel."""
    from occlint.readers import source

    kernels = FIXTURES / "nvidia/src/gamma.cu"
    plain = tmp_path / "plain.h"
    plain.write_text("// the kernels are in gamma.cu\nint f(int x) { return x; }\n")
    assert source.parsed_bytes(kernels, "k.cu") == kernels.stat().st_size
    assert source.parsed_bytes(plain, "plain.h") == 0
    assert (source._key(plain, "plain.h", True) in source._CACHE,
            source._key(kernels, "k.cu", True) in source._CACHE) == (True, False)
    kept = source.read_source(plain, "plain.h")
    assert kept == source.parse_source(plain.read_bytes(), "plain.h")
    assert kept.size == plain.stat().st_size and not kept.launches and not kept.kernels


def test_batches_go_out_alone_unless_merging_is_asked_for():
    """Chunks of binaries are cut by size (chunks): without ``merge`` each goes out as it
    is, the calling process helping or not."""
    batches = [[i] for i in range(100)]
    results = list(parallel.ordered_map(
        parallel_helpers.tagged, batches, 1, crashed=lambda item, message: None,
        here=lambda batch: [("here", len(batch), item) for item in batch]))
    assert [[item] for ((_, _, item),) in results] == batches
    assert {size for ((_, size, _),) in results} == {1}


def test_a_pool_broken_before_a_submission_is_a_break_not_an_internal_error():
    """A worker that dies while the main process is busy breaks the pool before the next
    submission, which then raises BrokenProcessPool itself (seen once under a loaded
    machine: "internal error: BrokenProcessPool"); the submission now holds the break in
    its future, recovered where results are read, as a break seen there is."""
    from concurrent.futures.process import BrokenProcessPool

    from occlint.pipeline import parallel

    class Broken:
        def submit(self, *args):
            raise BrokenProcessPool("a child process terminated abruptly")

    future = parallel._submit(Broken(), len, [1, 2])
    assert future.done() and isinstance(future.exception(), BrokenProcessPool)
