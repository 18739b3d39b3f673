"""The README's commands and examples stay true."""

from __future__ import annotations

import re

from occlint.config import load_config
from tests.conftest import REPO, run_occlint

README = (REPO / "README.md").read_text()


def test_setup_commands():
    blocks = re.findall(r"```sh\n(.*?)```", README, re.S)
    commands = [line for line in blocks[0].splitlines() if line and not line.startswith("#")]
    assert commands == [
        "python3 -m pip install . && occlint fixtures/amd/co/gamma.gfx1100.hsaco --device w7800",
        "python3 -m pip install '.[test]' && python3 -m pytest",
    ]
    ci = (REPO / ".ci" / "run").read_text()
    assert "python3 -m pip install '.[test]' && python3 -m pytest" in ci


def test_first_command_prints_what_the_readme_shows():
    shown = re.search(r"The first prints:\n\n```text\n(.*?)```", README, re.S).group(1)
    run = run_occlint("fixtures/amd/co/gamma.gfx1100.hsaco", "--device", "w7800", cwd=REPO)
    assert run.code == 0 and run.out == shown


def test_usage_example_findings_are_real():
    run = run_occlint("fixtures/amd/co/gamma.gfx1100.hsaco", "--device", "w7800", "--block",
                      "256", "--grid", "1000", cwd=REPO)
    for line in run.out.splitlines():
        if ": LCH" in line:
            assert line in README, line


def test_configuration_example_loads(tmp_path, monkeypatch):
    block = re.search(r"```toml\n(.*?)```", README, re.S).group(1)
    (tmp_path / "pyproject.toml").write_text(block)
    (tmp_path / "lab-devices.toml").write_text("")
    monkeypatch.chdir(tmp_path)
    cfg = load_config(None, False)
    assert cfg.devices == ["w7800", "mi300x"] and cfg.preferred_block == 256
    assert cfg.launch == {"gamma_correction*": {"block": 256, "grid": 2800}}


def test_trace_example_prints_what_the_readme_shows():
    block = re.search(r"```console\n\$ (occlint fixtures/traces/kineto/\S+[^\n]*)\n(.*?)```",
                      README, re.S)
    args = block.group(1).split()[1:]
    run = run_occlint(*args, cwd=REPO)
    assert run.code == 1 and run.out == block.group(2)


def test_source_example_prints_what_the_readme_shows(tmp_path):
    """The CUDA / HIP source example: tests/sources/gamma.hip.in with block 100, grid 1000,
    run as shown (the file named gamma.hip in the working directory)."""
    block = re.search(r"```console\n\$ occlint gamma\.hip --device w7800 -q[^\n]*\n(.*?)```",
                      README, re.S)
    text = (REPO / "tests" / "sources" / "gamma.hip.in").read_text()
    (tmp_path / "gamma.hip").write_text(text.replace("@BLOCK@", "100").replace("@GRID@", "1000"))
    run = run_occlint("gamma.hip", "--device", "w7800", "-q", "--isolated", cwd=tmp_path)
    assert run.code == 1 and run.out == block.group(1)
