"""The README's commands and examples stay true."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from occlint.config import load_config
from tests.conftest import REPO, run_occlint, run_occlint_process

README = (REPO / "README.md").read_text()


def test_setup_commands():
    blocks = re.findall(r"```sh\n(.*?)```", README, re.S)
    commands = [line for line in blocks[0].splitlines() if line and not line.startswith("#")]
    assert commands[:3] == [
        "python3 -m venv .venv && . .venv/bin/activate",
        "python3 -m pip install . && occlint fixtures/amd/co/gamma.gfx1100.hsaco --device w7800",
        "python3 -m pip install '.[test]' && python3 -m pytest",
    ]
    # the optional oracles: the packages .ci/run installs
    ci_packages = re.search(r"APT_PACKAGES=\((.*?)\)", (REPO / ".ci" / "run").read_text())
    assert commands[3:] == ["sudo apt-get install " + ci_packages.group(1)]
    ci = (REPO / ".ci" / "run").read_text()
    assert "python3 -m pip install '.[test]' && python3 -m pytest" in ci


def test_first_command_prints_what_the_readme_shows():
    shown = re.search(r"The first prints:\n\n```text\n(.*?)```", README, re.S).group(1)
    run = run_occlint_process("fixtures/amd/co/gamma.gfx1100.hsaco", "--device", "w7800",
                              cwd=REPO)
    assert run.code == 0 and run.out == shown


def test_usage_example_findings_are_real():
    run = run_occlint("fixtures/amd/co/gamma.gfx1100.hsaco", "--device", "w7800", "--block",
                      "256", "--grid", "1000", cwd=REPO)
    for line in run.out.splitlines():
        if ": LCH" in line:
            assert line in README, line


def test_configuration_example_is_the_shipped_example():
    """The README's configuration is examples/pyproject.toml, byte for byte; it loads, and
    the device file it names is beside it."""
    block = re.search(r"```toml\n(.*?)```", README, re.S).group(1)
    assert block == (REPO / "examples" / "pyproject.toml").read_text()
    cfg = load_config(str(REPO / "examples" / "pyproject.toml"), False)
    assert cfg.devices == ["w7800", "mi300x-cpx"] and cfg.preferred_block == 256
    assert cfg.launch == {"gamma_correction*": {"block": 256, "grid": 2800}}
    assert [p.name for p in cfg.device_files] == ["lab-devices.toml"]
    assert all(p.is_file() for p in cfg.device_files)


def test_example_kernels_are_the_fixtures():
    """examples/kernels/ holds copies of fixtures (their provenance is the fixtures')."""
    for path in sorted((REPO / "examples" / "kernels").iterdir()):
        fixture = REPO / "fixtures" / "amd" / "containers" / path.name
        assert path.read_bytes() == fixture.read_bytes(), path.name


def test_example_baseline_is_current(occlint):
    """The shipped baseline records exactly today's findings: nothing new, nothing stale."""
    run = occlint(cwd=REPO / "examples")
    assert run.code == 0 and run.err == "", run.err  # no stale entries either
    assert re.search(r": no findings \(\d+ in the baseline\)\n$", run.out), run.out[-200:]


# `occlint validate` launches kernels: it needs a GPU and cuda-python (docs/validation.md)
NEEDS_A_GPU = ("occlint validate",)


def _console_commands() -> list[tuple[str, list[str], str | None]]:
    """(block number, commands, the output shown after the last one) of every console and
    sh block (the set-up block is CI's own first step)."""
    blocks = []
    for i, (kind, body) in enumerate(re.findall(r"```(console|sh)\n(.*?)```", README, re.S)):
        if "pip install" in body:
            continue
        if kind == "sh":
            commands = [line for line in body.splitlines() if line.strip()]
            blocks.append((f"sh-{i}", commands, None))
            continue
        commands, shown = [], []
        for line in body.splitlines():
            if commands and commands[-1].endswith("\\"):  # a continued command
                commands[-1] = commands[-1][:-1] + " " + line.strip()
            elif line.startswith("$ "):
                commands.append(line[2:])
                shown = []
            else:
                shown.append(line)
        blocks.append((f"console-{i}", commands, "\n".join(shown) + "\n" if shown else None))
    return blocks


def _run_block(commands: list[str], cwd: Path) -> list[tuple[str, int, str, str]]:
    """Run the commands in one bash session (``cd`` carries over), ``occlint`` being this
    checkout's; (command, exit code, stdout, stderr) of each."""
    script = [f"occlint() {{ {shlex.quote(sys.executable)} -m occlint \"$@\"; }}",
              f"python3() {{ {shlex.quote(sys.executable)} \"$@\"; }}"]
    for n, command in enumerate(commands):
        script.append(f"( {command}\n) > {cwd}/.out{n} 2> {cwd}/.err{n}; echo $? > {cwd}/.rc{n}")
        if command.startswith("cd "):
            script.append(command)
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "COLUMNS": "100"}
    subprocess.run(["bash", "-c", "\n".join(script)], cwd=cwd, env=env, check=True,
                   timeout=600)
    return [(c, int((cwd / f".rc{n}").read_text()), (cwd / f".out{n}").read_text(),
             (cwd / f".err{n}").read_text()) for n, c in enumerate(commands)]


@pytest.mark.parametrize("name,commands,shown", _console_commands(),
                         ids=[b[0] for b in _console_commands()])
def test_every_readme_command_runs_as_written(name, commands, shown, tmp_path):
    """Every command of the README, as written, from a clone's root (here a directory with
    the clone's fixtures, tests, benchmarks and examples): no error, exit 0 or 1 (findings), and the
    output the README shows after a command is what it prints."""
    for entry in ("fixtures", "tests"):
        (tmp_path / entry).symlink_to(REPO / entry)
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    # the scripts traces name their frames in (found by a walk, which skips links)
    shutil.copytree(REPO / "benchmarks" / "gpu", tmp_path / "benchmarks" / "gpu",
                    ignore=shutil.ignore_patterns("__pycache__"))
    commands = [c for c in commands if not c.startswith(NEEDS_A_GPU)]
    if not commands:
        pytest.skip("needs a GPU")
    results = _run_block(commands, tmp_path)
    for command, code, _out, err in results:
        assert code in (0, 1) and "error" not in err, (command, code, err)
    if shown is not None:
        command, _, out, _ = results[-1]
        assert out == shown, command


def test_trace_example_prints_what_the_readme_shows():
    block = re.search(r"```console\n\$ (occlint fixtures/traces/kineto/\S+[^\n]*)\n(.*?)```",
                      README, re.S)
    args = block.group(1).split()[1:]
    run = run_occlint_process(*args, cwd=REPO)
    assert run.code == 1 and run.out == block.group(2)
