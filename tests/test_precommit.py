"""The pre-commit hooks of .pre-commit-hooks.yaml, run by the real pre-commit: ``try-repo``
in a project without configuration, ``run`` with a configuration naming the hook repository
at its HEAD (what try-repo does, with the hooks' environment installed once), and the
README's snippet as written.

A temporary git repository holds a GPU binary (``kernels/``, committed) and the same
binary as a git-ignored build output (``build/``), plus an ``occlint.toml`` with
``devices = ["w7800"]``, ``paths = ["build"]`` and a launch configuration for
``gamma_correction*``. Both hooks must fail with a bad launch (block 256, grid 1000: a tail
effect and too few waves) and pass with a good one (grid 2800).

pre-commit builds a virtualenv and pip-installs occlint from the hook repository, which
needs PyPI for the dependencies (reachable here and in CI). ``PRE_COMMIT_HOME`` is a
temporary directory shared by the module, so that install happens once. The hook
repository is this repository when its work tree is clean (CI); otherwise a snapshot of
the work tree (tracked and untracked, not ignored, files) committed to a temporary
repository, because pre-commit only sees committed changes.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, REPO, skip_or_fail

pytestmark = pytest.mark.slow

GOOD_GRID, BAD_GRID = 2800, 1000


def _git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0")
    return env


def _git(*args: str, cwd: Path) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          env=_git_env(), timeout=120)
    assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stderr}"
    return proc.stdout


def _pre_commit() -> list[str]:
    if importlib.util.find_spec("pre_commit") is not None:
        return [sys.executable, "-m", "pre_commit"]
    exe = shutil.which("pre-commit")
    if exe is None:
        skip_or_fail("pre-commit is not installed (pip install pre-commit)")
    return [exe]


def _commit_all(repo: Path) -> None:
    _git("add", "-A", cwd=repo)
    _git("-c", "user.name=occlint tests", "-c", "user.email=tests@occlint.invalid",
         "-c", "commit.gpgsign=false", "commit", "-q", "--no-verify", "-m", "snapshot",
         cwd=repo)


@pytest.fixture(scope="module")
def tools():
    if shutil.which("git") is None:
        skip_or_fail("git is not installed")
    return _pre_commit()


@pytest.fixture(scope="module")
def hook_repo(tools, tmp_path_factory) -> Path:
    """A git repository whose HEAD holds this work tree (with .pre-commit-hooks.yaml)."""
    inside = subprocess.run(["git", "rev-parse", "--is-inside-work-tree"], cwd=REPO,
                            capture_output=True, text=True, env=_git_env())
    if inside.returncode == 0:
        dirty = _git("--no-optional-locks", "status", "--porcelain", cwd=REPO)
        if not dirty.strip():
            return REPO
        files = _git("ls-files", "-z", "--cached", "--others", "--exclude-standard",
                     cwd=REPO).split("\0")
    else:  # an unpacked sdist: everything but caches
        files = [str(p.relative_to(REPO)) for p in REPO.rglob("*")
                 if p.is_file() and "__pycache__" not in p.parts]
    snapshot = tmp_path_factory.mktemp("hook-repo")
    for name in filter(None, files):
        source = REPO / name
        if not source.is_file():  # deleted in the work tree
            continue
        target = snapshot / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    _git("init", "-q", cwd=snapshot)
    _commit_all(snapshot)
    return snapshot


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def _project(root: Path, grid: int) -> Path:
    root.mkdir()
    binary = (FIXTURES / "amd/co/gamma.gfx1100.hsaco").read_bytes()
    (root / "kernels").mkdir()
    (root / "kernels" / "gamma.gfx1100.hsaco").write_bytes(binary)
    (root / "build").mkdir()
    (root / "build" / "gamma.gfx1100.hsaco").write_bytes(binary)
    (root / ".gitignore").write_text("build/\n")
    (root / "occlint.toml").write_text(
        'devices = ["w7800"]\n'
        'paths = ["build"]\n'
        '\n'
        '[launch."gamma_correction*"]\n'
        'block = 256\n'
        f'grid = {grid}\n')
    _git("init", "-q", cwd=root)
    _git("add", "-A", cwd=root)  # staged is enough for --all-files
    return root


def _pre_commit_env(home: Path) -> dict[str, str]:
    env = _git_env()
    # no .pyc compiled at install (the hooks' environment: a few seconds of CPU)
    env.update(PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never", NO_COLOR="1",
               PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_COMPILE="1")
    env.pop("VIRTUAL_ENV", None)
    return env


def _try_repo(tools, clone: Path, home: Path, project: Path, hook: str):
    """What ``pre-commit try-repo CLONE HOOK --all-files`` does, through a configuration
    that names the clone's ``main`` as the README's snippet does: try-repo installs the
    hooks' environment anew in a store of its own at every call (15 s each), ``run`` once
    in ``home`` for every test of the module."""
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {clone.as_posix()}\n    rev: main\n"
        f"    hooks:\n      - id: {hook}\n")
    _git("add", ".pre-commit-config.yaml", cwd=project)
    return subprocess.run([*tools, "run", hook, "--all-files", "--color", "never"],
                          cwd=project, capture_output=True, text=True,
                          env=_pre_commit_env(home), timeout=900)


def test_try_repo_runs_both_hooks_in_a_project_without_configuration(tools, hook_repo,
                                                                      tmp_path):
    """``pre-commit try-repo`` itself (all the repository's hooks) in a project without
    configuration and with a staged kernel without findings: both hooks pass."""
    project = tmp_path / "project"
    (project / "kernels").mkdir(parents=True)
    (project / "kernels" / "gamma.gfx1100.hsaco").write_bytes(
        (FIXTURES / "amd/co/gamma.gfx1100.hsaco").read_bytes())
    _git("init", "-q", cwd=project)
    _git("add", "-A", cwd=project)
    proc = subprocess.run([*tools, "try-repo", str(hook_repo), "--all-files", "--color",
                           "never"], cwd=project, capture_output=True, text=True,
                          env=_pre_commit_env(tmp_path / "home"), timeout=900)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    for name in ("occlint (GPU occupancy lint)",
                 "occlint (build outputs from [tool.occlint] paths)"):
        assert any(line.startswith(name) and line.endswith("Passed")
                   for line in out.splitlines()), out[-4000:]


@pytest.mark.parametrize("hook", ["occlint", "occlint-build"])
@pytest.mark.parametrize("grid", [BAD_GRID, GOOD_GRID])
def test_hook_fails_on_bad_launch_and_passes_on_good_one(hook, grid, tools, readme_clone,
                                                         pre_commit_home, tmp_path):
    project = _project(tmp_path / "project", grid)
    proc = _try_repo(tools, readme_clone, pre_commit_home, project, hook)
    out = proc.stdout + proc.stderr
    if "An unexpected error has occurred" in out or "CalledProcessError" in out:
        pytest.fail(f"pre-commit could not run the hook:\n{out[-4000:]}")
    name = {"occlint": "occlint (GPU occupancy lint)",
            "occlint-build": "occlint (build outputs from [tool.occlint] paths)"}[hook]
    status = [line for line in out.splitlines() if line.startswith(name)]
    assert status, out[-4000:]
    if grid == BAD_GRID:
        assert proc.returncode == 1, out[-4000:]
        assert status[0].endswith("Failed"), status
        assert "LCH101" in out and "LCH103" in out
        assert "exit code: 1" in out
        seen = "build/gamma.gfx1100.hsaco" if hook == "occlint-build" \
            else "kernels/gamma.gfx1100.hsaco"
        assert seen in out
    else:
        assert proc.returncode == 0, out[-4000:]
        assert status[0].endswith("Passed"), status


def test_manifest_declares_both_hooks():
    yaml = pytest.importorskip("yaml")
    hooks = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"occlint", "occlint-build"}
    staged, build = hooks["occlint"], hooks["occlint-build"]
    assert staged["entry"] == "occlint" and build["entry"] == "occlint --allow-no-paths"
    assert staged["language"] == build["language"] == "python"
    assert staged["files"] == r"\.(cu|cuh|hip|cpp|cc|cxx|h|hpp|hsaco|co|cubin|fatbin)$"
    assert staged["types"] == ["file"] and staged["require_serial"] is True
    assert build["pass_filenames"] is False and build["always_run"] is True


def _gamma_source(block: int, grid: int) -> str:
    text = (REPO / "tests" / "sources" / "gamma.hip.in").read_text()
    return text.replace("@BLOCK@", str(block)).replace("@GRID@", str(grid))


def test_hook_blocks_a_bad_launch_in_a_staged_source_then_passes(tools, readme_clone,
                                                                 pre_commit_home, tmp_path):
    """The occlint hook installed as a git pre-commit hook: a commit of gamma.hip with a
    100-thread block and 1000 blocks on a W7800 is refused (LCH001, LCH101, LCH103 on the
    launching line); the fixed program (256 x 2800) commits."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "occlint.toml").write_text('devices = ["w7800"]\n')
    (project / ".pre-commit-config.yaml").write_text(
        "repos:\n"
        f"  - repo: {readme_clone.as_posix()}\n"
        "    rev: main\n"
        "    hooks:\n"
        "      - id: occlint\n")
    (project / "README.md").write_text("not linted\n")
    env = _pre_commit_env(pre_commit_home)
    _git("init", "-q", cwd=project)
    install = subprocess.run([*tools, "install"], cwd=project, capture_output=True, text=True,
                             env=env, timeout=300)
    assert install.returncode == 0, install.stdout + install.stderr

    def commit(message: str):
        return subprocess.run(
            ["git", "-c", "user.name=occlint tests", "-c", "user.email=tests@occlint.invalid",
             "-c", "commit.gpgsign=false", "commit", "-m", message],
            cwd=project, capture_output=True, text=True, env=env, timeout=900)

    (project / "gamma.hip").write_text(_gamma_source(100, 1000))
    _git("add", "-A", cwd=project)
    first = commit("bad launch")
    out = first.stdout + first.stderr
    if "An unexpected error has occurred" in out:
        pytest.fail(f"pre-commit could not run the hook:\n{out[-4000:]}")
    assert first.returncode != 0, out[-4000:]
    lines = (project / "gamma.hip").read_text().splitlines()
    launch = next(i for i, line in enumerate(lines, 1) if "<<<" in line)
    block_col = lines[launch - 1].index("blockSize>>>") + 1
    grid_col = lines[launch - 1].index("gridSize,") + 1
    assert f"gamma.hip:{launch}:{block_col}: LCH001" in out
    assert f"gamma.hip:{launch}:{grid_col}: LCH101" in out
    assert f"gamma.hip:{launch}:{grid_col}: LCH103" in out
    assert _git("rev-list", "--all", "--count", cwd=project).strip() == "0"  # refused

    (project / "gamma.hip").write_text(_gamma_source(256, 2800))
    _git("add", "-A", cwd=project)
    second = commit("good launch")
    assert second.returncode == 0, (second.stdout + second.stderr)[-4000:]
    assert "Passed" in second.stdout + second.stderr
    assert _git("rev-list", "--all", "--count", cwd=project).strip() == "1"


# --- the README's snippet, as written (issue 31) ---------------------------------------------

README_URL = "https://github.com/occlint/occlint"


def _readme_snippet() -> str:
    import re

    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("### pre-commit"):]
    return re.search(r"```yaml\n(.*?)```", section, re.S).group(1)


@pytest.fixture(scope="module")
def readme_clone(hook_repo, tmp_path_factory) -> Path:
    """A clone of this repository (its work tree's snapshot) whose `main` is that snapshot:
    the branch the README's snippet names."""
    head = _git("rev-parse", "HEAD", cwd=hook_repo).strip()
    clone = tmp_path_factory.mktemp("clone") / "occlint"
    _git("clone", "-q", "--no-checkout", str(hook_repo), str(clone), cwd=hook_repo)
    _git("checkout", "-q", "-B", "main", head, cwd=clone)
    return clone


def _run_snippet(tools, clone: Path, home: Path, project: Path, *args: str):
    return subprocess.run([*tools, *args], cwd=project, capture_output=True, text=True,
                          env=_pre_commit_env(home), timeout=900)


@pytest.mark.parametrize("configured", [False, True])
def test_readme_snippet_runs_both_hooks(configured, tools, readme_clone, pre_commit_home,
                                        tmp_path):
    """The snippet as the README writes it (only the repository's address points at the
    clone): in a project without configuration both hooks pass (a kernel without findings
    is staged; occlint-build has no `paths`); in one whose configuration names a bad launch
    and `paths`, both fail on it. `pre-commit autoupdate` then pins a commit SHA, as the
    README says."""
    snippet = _readme_snippet()
    assert snippet.count(README_URL) == 1
    if configured:
        project = _project(tmp_path / "project", BAD_GRID)
    else:
        project = tmp_path / "project"
        (project / "kernels").mkdir(parents=True)
        (project / "kernels" / "gamma.gfx1100.hsaco").write_bytes(
            (FIXTURES / "amd/co/gamma.gfx1100.hsaco").read_bytes())
        _git("init", "-q", cwd=project)
    (project / ".pre-commit-config.yaml").write_text(
        snippet.replace(README_URL, readme_clone.as_posix()))
    _git("add", "-A", cwd=project)
    proc = _run_snippet(tools, readme_clone, pre_commit_home, project, "run", "--all-files",
                        "--color", "never")
    out = proc.stdout + proc.stderr
    if "An unexpected error has occurred" in out:
        pytest.fail(f"pre-commit could not run the hooks:\n{out[-4000:]}")
    status = {name: line for line in out.splitlines()
              for name in ("occlint (GPU occupancy lint)",
                           "occlint (build outputs from [tool.occlint] paths)")
              if line.startswith(name)}
    assert len(status) == 2, out[-4000:]
    if configured:
        assert proc.returncode == 1 and all(s.endswith("Failed") for s in status.values()), out
        assert "build/gamma.gfx1100.hsaco" in out and "kernels/gamma.gfx1100.hsaco" in out
    else:
        assert proc.returncode == 0 and all(s.endswith("Passed") for s in status.values()), out
        update = _run_snippet(tools, readme_clone, pre_commit_home, project, "autoupdate")
        assert update.returncode == 0, update.stdout + update.stderr
        head = _git("rev-parse", "main", cwd=readme_clone).strip()
        assert f"rev: {head}" in (project / ".pre-commit-config.yaml").read_text()
