"""Issue 31, items 1 and 2: `occlint --help` shows the options of `occlint PATH`; mistyped rule
codes and options that contradict each other are refused with one line and exit 2."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from tests.conftest import FIXTURES

GAMMA = str(FIXTURES / "amd" / "co" / "gamma.gfx1100.hsaco")


def _long_options_of_check() -> set[str]:
    """Every long option of the default command, from its click definition."""
    from occlint.cli.check import check

    return {opt for param in check.params for opt in param.opts if opt.startswith("--")}


def test_main_help_shows_the_default_commands_options_then_the_commands(occlint):
    run = occlint("--help")
    assert run.code == 0
    options, _, commands = run.out.partition("\nCommands:\n")
    shown = set(re.findall(r"(?:^\s+|, )(--[\w-]+)", options, flags=re.MULTILINE))
    wanted = _long_options_of_check() - {"--help"}
    assert wanted <= shown, wanted - shown
    assert {"--version", "--help"} <= shown
    for name in ("check", "calc", "devices", "rule", "validate"):
        assert re.search(rf"^\s+{name}\s", commands, flags=re.MULTILINE), name


def _one_error_line(run) -> str:
    assert run.code == 2 and run.out == ""
    lines = run.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("occlint: error: "), run.err
    assert "Traceback" not in run.err
    return lines[0]


@pytest.mark.parametrize("option,typo,nearest", [
    ("--select", "LHC101", "LCH101"),    # two letters swapped
    ("--ignore", "SLP102", "SPL102"),    # two letters swapped
    ("--extend-select", "OCX", "OCC"),   # a family
    ("--select", "lch", "LCH"),          # lower case
])
def test_a_mistyped_rule_code_names_the_nearest_one(occlint, option, typo, nearest):
    line = _one_error_line(occlint(GAMMA, "--isolated", option, f"OCC,{typo}"))
    assert line.startswith(f"occlint: error: {option}: ")
    assert f"{typo!r}" in line and f"did you mean {nearest!r}?" in line


@pytest.mark.parametrize("selector", ["NOPE123", "LCH999", "OCC1010"])
def test_no_unknown_rule_code_is_accepted(occlint, selector):
    for option in ("--select", "--ignore"):
        _one_error_line(occlint(GAMMA, "--isolated", option, selector))


@pytest.mark.parametrize("selector", ["ALL", "OCC", "LCH1", "LCH101", "OCC,SPL"])
def test_codes_and_prefixes_of_known_rules_stay_valid(occlint, selector):
    run = occlint(GAMMA, "--isolated", "--device", "w7800", "--select", selector,
                  "--ignore", "SPL102")
    assert run.code in (0, 1), run.err


def test_a_mistyped_rule_code_in_the_configuration_is_refused(occlint, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.occlint]\nignore = ["LHC101"]\n')
    line = _one_error_line(occlint(GAMMA, cwd=tmp_path))
    assert "pyproject.toml" in line and "'ignore'" in line
    assert "did you mean 'LCH101'?" in line


@pytest.mark.parametrize("args,names", [
    (["--grid", "5", "--problem-size", "1000"], ("--grid", "--problem-size")),
    (["--isolated", "--config", "CFG"], ("--config", "--isolated")),
    (["--baseline", "CFG", "--write-baseline", "NEW"], ("--baseline", "--write-baseline")),
    (["--statistics", "--format", "json"], ("--statistics", "json")),
])
def test_options_that_contradict_each_other_are_refused(occlint, tmp_path, args, names):
    cfg = tmp_path / "occlint.toml"
    cfg.write_text("fail-on = \"never\"\n")
    paths = {"CFG": str(cfg), "NEW": str(tmp_path / "new.json")}
    line = _one_error_line(occlint(GAMMA, *[paths.get(a, a) for a in args]))
    assert all(name in line for name in names)


def test_isolated_is_documented_as_not_with_config(occlint):
    out = occlint("check", "--help").out
    isolated = out[out.index("--isolated"):].split("\n  -")[0]
    assert "--config" in isolated


def test_a_launch_entry_with_grid_and_problem_size_is_refused(occlint, tmp_path):
    (tmp_path / "occlint.toml").write_text(
        '[launch."gamma*"]\ngrid = 5\nproblem-size = 1000\n')
    line = _one_error_line(occlint(GAMMA, cwd=tmp_path))
    assert "grid" in line and "problem-size" in line


def test_problem_size_on_the_command_line_replaces_the_configurations_grid(occlint, tmp_path):
    (tmp_path / "occlint.toml").write_text('[launch."gamma*"]\ngrid = 5\n')
    run = occlint(GAMMA, "--device", "w7800", "--block", "1024", "--problem-size", "40960",
                  "--format", "json", cwd=tmp_path)
    kernel = run.json()["kernels"][0]
    rules = {f["rule"] for f in kernel["findings"]}
    # a grid of 5 blocks would be smaller than the device (LCH102); 40960 / 1024 is 40
    assert "LCH102" not in rules
    assert (kernel["advice"].get("grid") or {}).get("grid") in (None, 40)


def test_a_text_file_that_is_no_input_says_what_it_begins_with(occlint, tmp_path):
    """A CSV named as rocprofv3 names its kernel traces but holding something else (a
    system-call log from a public repository: Mr-Rolando7013/elfFileDynamicAnalysis's
    kernel_trace.csv) is refused as a text file occlint does not read, its first line shown
    escaped; a non-text file is still "not a GPU binary"."""
    csv = tmp_path / "kernel_trace.csv"
    csv.write_text("ts,pid,tid,comm,fname,dfd,flags,event\n"
                   "827885967129,4067,4067,python3,/sys/devices/system/cpu/online,-100,"
                   "524288,enter_openat\n")
    run = occlint(str(csv), "--isolated")
    assert run.code == 2
    assert run.err.strip().splitlines() == [
        f"occlint: error: {csv}: a text file, not a GPU binary, nor a source, PTX or "
        "profiler trace occlint reads (it begins: 'ts,pid,tid,comm,fname,dfd,flags,event')"]
    hostile = tmp_path / "notes.bin"
    hostile.write_text("\u001b[31mred\u001b[0m")  # an escape sequence: not printable text
    run = occlint(str(hostile), "--isolated")
    assert run.code == 2 and "not a GPU binary" in run.err and "\x1b" not in run.err
    damaged = tmp_path / "trace.json.gz"  # gzip's magic, then no deflate stream
    damaged.write_bytes(b"\x1f\x8b garbage")
    run = occlint(str(damaged), "--isolated")
    assert run.code == 2 and run.err.strip() == (
        f"occlint: error: {damaged}: a gzip file that does not decompress to a profiler "
        "trace occlint reads (damaged, cut short, or another format)")
    quoted = tmp_path / "quoted.txt"
    quoted.write_text("caf\u00e9 au lait " * 10)
    run = occlint(str(quoted), "--isolated")
    assert run.code == 2 and "it begins: " in run.err and "\u00e9" not in run.err


def test_json_that_names_a_schema_version_is_no_trace(occlint, tmp_path):
    """AWS service models (botocore's data/*/service-2.json) and JSON schemas name members
    "schemaVersion"; Kineto's is a number among a trace's first keys. Such files found in a
    directory are not traces (a site-packages scan reported twelve "CPU-only profiles");
    named on the command line, one is refused as a text file occlint does not read."""
    model = {"version": "2.0", "metadata": {"apiVersion": "2020-08-23", "protocol": "rest-json"},
             "shapes": {"FlowDefinition": {"type": "structure", "members": {
                 "schemaVersion": {"shape": "Long"}}}, "Long": {"type": "long"}}}
    folder = tmp_path / "botocore" / "data" / "appflow" / "2020-08-23"
    folder.mkdir(parents=True)
    (folder / "service-2.json").write_text(json.dumps(model, indent=2))
    shutil.copy(GAMMA, tmp_path)  # beside a code object: the directory holds GPU code
    run = occlint(str(tmp_path), "--isolated")
    assert run.code in (0, 1) and run.err == "", run.err
    assert "in 1 input" in run.out
    run = occlint(str(folder / "service-2.json"), "--isolated")
    assert run.code == 2 and "a text file, not a GPU binary" in run.err
