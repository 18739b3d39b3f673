"""The in-process runner (tests/inprocess.py) answers as ``python -m occlint`` does: the
same output, error output and exit code, and nothing of one run left for the next or for
the test process."""

from __future__ import annotations

import ast
import gc
import os
import signal
import sys

import pytest

from tests.conftest import REPO, run_occlint, run_occlint_process
from tests.inprocess import MEMOS, SIGNALS

GAMMA = "fixtures/amd/co/gamma.gfx1100.hsaco"
LAUNCH = ["--device", "w7800", "--block", "256", "--grid", "1000", "--isolated"]
TRACE = "fixtures/traces/kineto/resnet18_train.pt.trace.json.gz"
SOURCE = "fixtures/nvidia/src/stencils.cu"
# module-level dictionaries that are no memo: filled as occlint's modules are imported
REGISTRIES = {("occlint.rules.registry", "RULES")}

SAME_AS_A_PROCESS = {
    "text": [GAMMA, *LAUNCH],
    "json": [GAMMA, *LAUNCH, "--format", "json"],
    "sarif": [GAMMA, *LAUNCH, "--format", "sarif"],
    "github": [GAMMA, *LAUNCH, "--format", "github"],  # a summary on stderr
    "html": [GAMMA, *LAUNCH, "--format", "html"],
    "statistics": [GAMMA, *LAUNCH, "--statistics"],
    "trace": [TRACE, "--isolated"],
    "source": [SOURCE, "--device", "h100", "--isolated", "--format", "json"],
    "help": ["--help"],
    "check-help": ["check", "--help"],
    "calc": ["calc", "--arch", "sm_90", "--registers", "32", "--shared", "4096", "--block",
             "256"],
    "devices": ["devices"],
    "rule": ["rule", "LCH101"],
    "mistyped-command": ["devcies"],
    "missing-input": ["fixtures/does-not-exist.hsaco"],
    "unknown-rule": [GAMMA, "--select", "NOPE123"],
    "exclusive-options": [GAMMA, "--grid", "5", "--problem-size", "1000"],
}


@pytest.mark.parametrize("args", SAME_AS_A_PROCESS.values(), ids=SAME_AS_A_PROCESS.keys())
def test_same_as_a_process(args):
    here = run_occlint(*args, cwd=REPO)
    assert here.out or here.err
    assert here == run_occlint_process(*args, cwd=REPO)


def _process_state() -> tuple:
    return (os.getcwd(), dict(os.environ), sys.stdin, sys.stdout, sys.stderr,
            sys.__stdout__, gc.get_threshold(), gc.isenabled(), gc.get_freeze_count(),
            [signal.getsignal(sig) for sig in SIGNALS])


def test_the_process_is_left_as_it_was(tmp_path):
    """occlint freezes the collector's objects and raises its thresholds (gcpolicy); the
    run's directory, environment and streams are the test's again after it."""
    before = _process_state()
    run = run_occlint(str(REPO / GAMMA), *LAUNCH, cwd=tmp_path, env={"NO_COLOR": "1"})
    assert run.code == 1 and "LCH101" in run.out
    assert _process_state() == before


def test_environment_and_directory_are_the_runs(tmp_path):
    (tmp_path / "occlint.toml").write_text('fail-on = "never"\n')
    assert run_occlint(str(REPO / GAMMA), *LAUNCH[:-1], cwd=tmp_path).code == 0
    forced = run_occlint(str(REPO / GAMMA), *LAUNCH, "--color", "always", cwd=tmp_path,
                         env={"NO_COLOR": "1"})
    assert forced.code == 1 and "\x1b[" not in forced.out


CUDA = """__global__ void scale(float* x) {{ x[blockIdx.x * 96 + threadIdx.x] *= 2.0f; }}
int main() {{ float* x; scale<<<{grid}, 96>>>(x); }}
"""


def test_a_file_rewritten_within_a_clock_tick_is_read_again(tmp_path):
    """occlint keeps a source's model by path, size and mtime for a second read in the
    same run; the next run reads the file afresh, as a new process would."""
    path = tmp_path / "scale.cu"
    path.write_text(CUDA.format(grid=1000))
    stamp = path.stat().st_mtime_ns
    args = ["scale.cu", "--device", "h100", "--isolated", "--format", "json"]
    first = run_occlint(*args, cwd=tmp_path)
    path.write_text(CUDA.format(grid=4000))  # the same size
    os.utime(path, ns=(stamp, stamp))
    second = run_occlint(*args, cwd=tmp_path)
    assert '"grid": 1000' in first.out and '"grid": 4000' in second.out
    assert second == run_occlint_process(*args, cwd=tmp_path)


def test_what_occlint_ships_is_kept_unchanged(tmp_path):
    """The kept caches (KEPT) hold the shipped device database: runs that add devices and
    overlay an architecture leave it as a new process loads it."""
    from occlint.devices import db, launch_params

    devices = tmp_path / "d.toml"
    devices.write_text('[[device]]\nname = "My Box"\narch = "sm_89"\nsms = 7\n\n'
                       "[nvidia_architectures.sm_120]\nmax_blocks_per_sm = 32\n")
    calc = run_occlint("calc", "--device-file", str(devices), "--device", "my-box",
                       "--registers", "32", "--block", "128", "--format", "json")
    assert calc.code == 0 and calc.json()["sms"] == 7, calc.err
    run = run_occlint(str(REPO / GAMMA), *LAUNCH, "--device-file", str(devices), "--device",
                      "h100")
    assert run.code == 1, run.err
    assert run_occlint(str(REPO / SOURCE), "--device", "h100", "--isolated").code in (0, 1)
    assert repr(vars(db.shipped_db())) == repr(vars(db._load_shipped()))
    assert repr(launch_params._table()) == repr(launch_params._table.__wrapped__())


def _module_dicts() -> set[tuple[str, str]]:
    """Every module-level ``NAME = {}`` or ``NAME: ... = {}`` of occlint's modules."""
    found = set()
    for path in sorted((REPO / "occlint").rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            target = node.target if isinstance(node, ast.AnnAssign) else \
                node.targets[0] if isinstance(node, ast.Assign) else None
            value = getattr(node, "value", None)
            empty = (isinstance(value, ast.Dict) and not value.keys) or \
                (isinstance(value, ast.Call) and getattr(value.func, "id", "") == "dict")
            if isinstance(target, ast.Name) and empty:
                found.add((module, target.id))
    return found


def test_every_memo_is_emptied_between_runs():
    """A dictionary that a new module-level cache adds must be listed in MEMOS (emptied
    before each run) or be a registry filled at import."""
    assert _module_dicts() == set(MEMOS) | REGISTRIES
