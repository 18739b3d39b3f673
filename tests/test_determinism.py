"""Determinism (issue 8): the same inputs give byte-identical JSON, SARIF and HTML whatever
the parallelism (--jobs), the order of the paths on the command line, the order the file
system lists a directory in, and the hash seed of the processes.

Every comparison is of whole output texts, byte for byte. ``test_comparison_catches_*``
shows that these comparisons fail when the order of the inputs is not fixed.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
from functools import cache
from pathlib import Path

import pytest

from occlint.pipeline import inputs as inputs_mod
from occlint.pipeline.run import Options, execute
from occlint.reporters import json_format
from tests.conftest import REPO, run_occlint_process

TREES = ["fixtures/amd", "fixtures/nvidia"]
# a listed file that is no GPU binary and a missing path: their errors are ordered too
EXTRA = ["tests/schemas/README.md", "fixtures/does-not-exist.hsaco"]
DEVICES = ["--device", "mi300x", "--device", "h100", "--grid", "1000"]
FORMATS = ["json", "sarif", "html"]


@cache
def reference(fmt: str) -> str:
    """The output of a plain in-process run (--jobs 1, hash seed 0, paths as listed)."""
    run = run_occlint_process(*TREES, *EXTRA, *DEVICES, "--format", fmt, "--jobs", "1", cwd=REPO,
                      env={**os.environ, "PYTHONHASHSEED": "0"})
    assert run.code == 1, run.err  # findings and two unreadable inputs
    assert run.out
    return run.out


def test_reference_covers_both_vendors_and_errors():
    doc = json.loads(reference("json"))
    assert {k["vendor"] for k in doc["kernels"]} == {"amd", "nvidia"}
    assert len(doc["inputs"]) > 200 and len(doc["kernels"]) > 1000
    assert [e["file"] for e in doc["errors"]] == EXTRA


@pytest.mark.parametrize("fmt", FORMATS)
def test_parallel_reordered_other_hash_seed(fmt):
    """--jobs 2, the paths in the opposite order, another hash seed."""
    args = [*reversed(EXTRA), *reversed(TREES)]
    run = run_occlint_process(*args, *DEVICES, "--format", fmt, "--jobs", "2", cwd=REPO,
                      env={**os.environ, "PYTHONHASHSEED": "12345"})
    assert run.code == 1, run.err
    assert run.out == reference(fmt)


@pytest.mark.parametrize("seed", [1, 2])
def test_files_named_in_any_order(seed):
    """Every input named on the command line, shuffled, gives what the directories gave."""
    ref = json.loads(reference("json"))
    gpu_inputs = [i for i in ref["inputs"] if i["path"] not in EXTRA]
    names = [i["path"] for i in gpu_inputs]
    assert len(names) > 200
    # the kernels' sources and PTX in the trees, which the walk read for their facts (they
    # are no inputs of their own: a grid rule asks a kernel whose PTX shows no grid-stride
    # loop nothing)
    names += sorted(str(p.relative_to(REPO)) for tree in TREES
                    for p in (REPO / tree).rglob("*") if p.suffix in (".ptx", ".cu"))
    random.Random(seed).shuffle(names)
    run = run_occlint_process(*names, *DEVICES, "--format", "json", "--jobs", str(seed), cwd=REPO)
    assert run.code == 1, run.err
    doc = json.loads(run.out)
    # the same document, less the two extra inputs (and their errors and IO101 findings)
    assert doc["kernels"] == ref["kernels"] and doc["inputs"] == gpu_inputs
    assert doc["artifacts"] == ref["artifacts"] and doc["errors"] == []
    with_extra = run_occlint_process(*EXTRA[::-1], *names, *DEVICES, "--format", "json", "--jobs",
                             "2", cwd=REPO)
    # the host objects without GPU code that the walk skipped are not named here (archive
    # members without GPU code are skipped in both runs)
    skipped = ref["summary"]["skipped"]
    named = json.loads(with_extra.out)["summary"]["skipped"]
    assert skipped > named and f'"skipped": {skipped},' in reference("json")
    assert with_extra.out == reference("json").replace(f'"skipped": {skipped},',
                                                       f'"skipped": {named},')


def _scandir_orders(root: Path) -> dict[str, list[str]]:
    return {str(d.relative_to(root)): [e.name for e in os.scandir(d)]
            for d in [root, *sorted(p for p in root.rglob("*") if p.is_dir())]}


@pytest.fixture
def copy_dir(tmp_path):
    """A scratch directory, on tmpfs when there is one (it lists files newest first, so a
    copy made in another order is listed in another order; ext4 lists by name hash)."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        path = Path(tempfile.mkdtemp(prefix="occlint-test-", dir=shm))
        yield path
        shutil.rmtree(path, ignore_errors=True)
    else:
        yield tmp_path


def test_copied_directory_listed_in_another_order(copy_dir):
    """A copy made in a shuffled order, which the file system lists differently."""
    tmp_path = copy_dir
    rng = random.Random(7)
    for tree in TREES:
        files = [p for p in (REPO / tree).rglob("*") if p.is_file()]
        rng.shuffle(files)
        for src in files:
            dst = tmp_path / src.relative_to(REPO)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    differs = any(_scandir_orders(REPO / tree) != _scandir_orders(tmp_path / tree)
                  for tree in TREES)
    if not differs:
        pytest.skip("this file system lists the copy in the original order "
                    "(test_directory_listing_order_is_ignored covers the order)")
    (tmp_path / "tests/schemas").mkdir(parents=True)
    shutil.copy2(REPO / EXTRA[0], tmp_path / EXTRA[0])
    # the Triton fixture's line information names this file: findings are located on it
    # when it exists under the working directory, as in the reference run
    (tmp_path / "benchmarks/gpu").mkdir(parents=True)
    shutil.copy2(REPO / "benchmarks/gpu/triton_cache.py",
                 tmp_path / "benchmarks/gpu/triton_cache.py")
    for fmt in FORMATS:
        run = run_occlint_process(*TREES, *EXTRA, *DEVICES, "--format", fmt, "--jobs", "2",
                          cwd=tmp_path)
        assert run.code == 1, run.err
        assert run.out == reference(fmt), fmt


# -- in-process: the directory listing order, and that the comparisons can fail ---------------
def _shuffled_scandir(seed: int):
    real = os.scandir
    rng = random.Random(seed)

    class Listing:
        def __init__(self, path):
            with real(path) as it:
                self.entries = list(it)
            rng.shuffle(self.entries)

        def __enter__(self):
            return iter(self.entries)

        def __exit__(self, *exc):
            return False

    return Listing


def _json_in_process(jobs: int = 1) -> str:
    opts = Options(paths=[*TREES, *EXTRA], devices=["mi300x", "h100"], grid=1000,
                   isolated=True, jobs=jobs)
    return json_format.render(execute(opts).document)


@pytest.fixture
def in_repo(monkeypatch):
    monkeypatch.chdir(REPO)


@pytest.mark.parametrize("seed", [3, 4])
def test_directory_listing_order_is_ignored(in_repo, monkeypatch, seed):
    monkeypatch.setattr(inputs_mod.os, "scandir", _shuffled_scandir(seed))
    assert _json_in_process() == reference("json")


def test_comparison_catches_a_shuffled_order(in_repo, monkeypatch):
    """Without the sort (inputs kept in listing order), a shuffled listing changes the
    output, and the byte comparison above sees it."""
    monkeypatch.setattr(inputs_mod, "walk_key", lambda display: 0)
    monkeypatch.setattr(inputs_mod.os, "scandir", _shuffled_scandir(5))
    shuffled = _json_in_process()
    assert shuffled != reference("json")
    assert sorted(json.loads(shuffled)["inputs"], key=lambda i: i["path"]) == \
        sorted(json.loads(reference("json"))["inputs"], key=lambda i: i["path"])


def test_comparison_catches_command_line_order(in_repo, monkeypatch):
    monkeypatch.setattr(inputs_mod, "walk_key", lambda display: 0)
    opts = Options(paths=[*reversed(TREES), *EXTRA], devices=["mi300x", "h100"], grid=1000,
                   isolated=True)
    assert json_format.render(execute(opts).document) != reference("json")


def test_walk_key_splits_paths_as_purepath_does():
    """The sort key's split of a plain path (no PurePath) gives PurePath's parts: paths drawn
    from separators, dots, empty and odd names, against a key built on PurePath."""
    from pathlib import PurePath

    def by_purepath(display: str) -> tuple:
        parts = PurePath(display).parts
        return (*((1, p) for p in parts[:-1]), (0, parts[-1] if parts else display))

    pieces = ["a", "b", ".", "..", "/", "x.y", ".h", "-", "c d", "\\", "~", "é"]
    rng = random.Random(7)
    paths = ["", "/", "//", "./a", "a/", "/abs/b.cu", "a//b", "a/./b", *(
        "".join(rng.choice(pieces) for _ in range(rng.randrange(9))) for _ in range(20000))]
    assert [inputs_mod.walk_key(p) for p in paths] == [by_purepath(p) for p in paths]
