"""Shared fixtures: running the CLI in-process and as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.inprocess import run_in_process

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
# bytecode where PYTHONDONTWRITEBYTECODE is set (see pytest_configure): shared by the workers
# and their processes, kept between sessions (Python writes each file atomically)
PYCACHE = os.path.join(tempfile.gettempdir(),
                       f"occlint-tests-pycache-{getattr(os, 'getuid', int)()}")


def pytest_configure(config):
    """With PYTHONDONTWRITEBYTECODE set (some CI images and sandboxes set it), every process
    of the session compiled what it imports from source: the xdist workers occlint and the
    rewritten test modules (3 CPU s each), and each of the suite's ~100 runs of
    ``python -m occlint`` (the others run in the test process: tests/inprocess.py) occlint's
    modules (0.09 CPU s a run). The variable is dropped for the workers and processes
    started from here (this runs before xdist starts its workers) and their bytecode kept
    under the temp directory (PYTHONPYCACHEPREFIX), never in the checkout."""
    if os.environ.pop("PYTHONDONTWRITEBYTECODE", None):
        os.environ.setdefault("PYTHONPYCACHEPREFIX", PYCACHE)


@dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self):
        return json.loads(self.out)


def run_occlint(*args: str, cwd: Path | None = None, stdin: str | None = None,
                env: dict | None = None) -> Run:
    """Run occlint's command as ``python -m occlint`` would, in this process (tests/inprocess:
    the same entry point, output and exit code; no interpreter to start and occlint to
    import). For what only a new process shows, :func:`run_occlint_process`."""
    return Run(*run_in_process(list(args), cwd=cwd, stdin=stdin, env=env))


def run_occlint_process(*args: str, cwd: Path | None = None, stdin: str | None = None,
                        env: dict | None = None) -> Run:
    """Run ``python -m occlint`` as users do (separate process, real exit code): for what is
    about the process itself (the entry point, an environment read at start-up, worker
    processes, a terminal) and a representative set of runs end to end.

    The package under test is this checkout's, whatever the working directory (a stale
    ``pip install .`` elsewhere on sys.path must not answer instead)."""
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    proc = subprocess.run([sys.executable, "-m", "occlint", *args], capture_output=True,
                          text=True, cwd=cwd, input=stdin, env=env, timeout=600)
    return Run(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def occlint():
    return run_occlint


@pytest.fixture
def occlint_process():
    return run_occlint_process


def skip_or_fail(reason: str) -> None:
    """Skip a test whose independent oracle is missing here; in CI (CI=true) fail instead,
    because .ci/run installs every oracle the suite needs."""
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"required test tool missing in CI: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def occ_driver(tmp_path_factory):
    """NVIDIA's cuda_occupancy.h compiled into a small driver (tests/oracles)."""
    from tests.oracles.cuda_occupancy import build_driver

    try:
        return build_driver(tmp_path_factory.mktemp("occ"))
    except RuntimeError as exc:
        skip_or_fail(str(exc))
