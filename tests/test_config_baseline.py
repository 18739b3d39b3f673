"""[tool.occlint] / occlint.toml configuration, suppressions and baselines."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO

GAMMA = REPO / "fixtures/amd/co/gamma.gfx1100.hsaco"
SUITE = REPO / "fixtures/amd/co/suite.gfx906.hsaco"


@pytest.fixture
def project(tmp_path):
    (tmp_path / "build").mkdir()
    shutil.copy(GAMMA, tmp_path / "build" / "gamma.hsaco")
    shutil.copy(SUITE, tmp_path / "build" / "suite.hsaco")
    return tmp_path


def _json(run):
    return json.loads(run.out)


def test_pyproject_table_found_from_subdirectory(occlint, project):
    (project / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.occlint]\ndevices = ["w7800"]\npaths = ["build"]\n'
        'select = ["LCH"]\n\n[tool.occlint.launch."gamma_correction*"]\nblock = 256\n'
        'grid = 1000\n')
    sub = project / "src" / "deep"
    sub.mkdir(parents=True)
    run = occlint("--format", "json", cwd=sub)  # no paths: the config's
    assert run.code == 1, run.err
    doc = _json(run)
    gamma = [k for k in doc["kernels"] if k["name"] == "_Z16gamma_correctionPhmf"]
    assert gamma and gamma[0]["device"] == "AMD Radeon PRO W7800"
    assert gamma[0]["occupancy"]["block_size"] == 256
    assert sorted(f["rule"] for f in gamma[0]["findings"]) == ["LCH101", "LCH103"]
    # suite.hsaco is gfx906: a mismatch with the W7800, but DEV is not selected
    assert all(f["rule"].startswith("LCH") for k in doc["kernels"] for f in k["findings"])


def test_occlint_toml_wins_and_cli_overrides(occlint, project):
    (project / "pyproject.toml").write_text('[tool.occlint]\ndevices = ["mi300x"]\n')
    (project / "occlint.toml").write_text('devices = ["w7800"]\n'
                                          '[launch."gamma_correction*"]\nblock = 256\n'
                                          'grid = 2800\n')
    run = occlint("build/gamma.hsaco", "--format", "json", cwd=project)
    assert run.code == 0 and _json(run)["kernels"][0]["device"] == "AMD Radeon PRO W7800"
    cli = occlint("build/gamma.hsaco", "--grid", "1000", "--format", "json", cwd=project)
    assert cli.code == 1  # --grid overrides the launch configuration
    isolated = occlint("build/gamma.hsaco", "--isolated", "--format", "json", cwd=project)
    assert _json(isolated)["kernels"][0]["device"] is None


@pytest.mark.parametrize("text,needle", [
    ('[tool.occlint]\ncolour = "red"\n', "unknown key 'colour'"),
    ('[tool.occlint]\nselect = ["XYZ"]\n', "unknown rule selector 'XYZ'"),
    ('[tool.occlint]\nfail-on = "sometimes"\n', "fail-on"),
    ('[tool.occlint]\noversubscription = -1\n', "oversubscription"),
    ('[tool.occlint.launch."k*"]\nblocks = 3\n', "unknown key 'blocks'"),
    ('[tool.occlint]\nseverity = { LCH101 = "fatal" }\n', "severity of LCH101"),
    ('[tool.occlint]\ndevices = "w7800"\n', "list of strings"),
    ("[tool.occlint\n", "invalid TOML"),
])
def test_bad_configuration_is_one_line_exit_2(occlint, project, text, needle):
    (project / "pyproject.toml").write_text(text)
    run = occlint("build/gamma.hsaco", cwd=project)
    assert run.code == 2
    assert run.err.count("\n") == 1 and run.err.startswith("occlint: error: "), run.err
    assert needle in run.err and "pyproject.toml" in run.err


def test_a_configuration_not_utf8_is_one_line_exit_2(occlint, project):
    """A byte no UTF-8 text holds (TOML files are UTF-8): one line naming the file, exit 2
    (before: "internal error: UnicodeDecodeError")."""
    (project / "pyproject.toml").write_bytes(b'[tool.occlint]\ndevices = ["\xff"]\n')
    run = occlint("build/gamma.hsaco", cwd=project)
    assert run.code == 2
    assert run.err.count("\n") == 1 and run.err.startswith("occlint: error: "), run.err
    assert "invalid TOML" in run.err and "pyproject.toml" in run.err


def test_unknown_device_in_config(occlint, project):
    (project / "occlint.toml").write_text('devices = ["w7880"]\n')
    run = occlint("build/gamma.hsaco", cwd=project)
    assert run.code == 2 and "did you mean" in run.err and "w7800" in run.err


def test_per_kernel_ignores_and_severity(occlint, project):
    (project / "occlint.toml").write_text(
        'severity = { SPL101 = "error" }\nfail-on = "error"\n'
        '[per-kernel-ignores]\n"sgpr_limited_96" = ["SPL"]\n')
    doc = _json(occlint("build/suite.hsaco", "--format", "json", cwd=project))
    spills = {k["name"]: [f for f in k["findings"] if f["rule"] == "SPL101"]
              for k in doc["kernels"]}
    assert spills["sgpr_limited_96"] == []  # ignored by glob
    assert spills["launch_bounds_1024"] and spills["launch_bounds_1024"][0]["severity"] == "error"
    assert occlint("build/suite.hsaco", cwd=project).code == 1  # an error finding remains


def test_exclude_globs_in_directory_walk(occlint, project):
    (project / "occlint.toml").write_text('paths = ["build"]\nexclude = ["suite*"]\n')
    doc = _json(occlint("--format", "json", cwd=project))
    assert [i["path"] for i in doc["inputs"]] == [str(project / "build" / "gamma.hsaco")]


def _inputs(run) -> list[str]:
    assert run.code in (0, 1), run.err
    return [Path(i["path"]).relative_to(Path(i["path"]).parents[1]).as_posix()
            for i in _json(run)["inputs"]]


@pytest.fixture
def tree(project):
    """build/{gamma,suite}.hsaco plus build/debug/gamma.hsaco and build/gamma.co."""
    (project / "build" / "debug").mkdir()
    shutil.copy(GAMMA, project / "build" / "debug" / "gamma.hsaco")
    shutil.copy(GAMMA, project / "build" / "gamma.co")
    return project


@pytest.mark.parametrize("config,args,expected", [
    ("", [], ["build/gamma.co", "build/gamma.hsaco", "build/suite.hsaco", "debug/gamma.hsaco"]),
    ("", ["--include", "*.co"], ["build/gamma.co"]),
    ("", ["--include", "gamma*", "--exclude", "debug"], ["build/gamma.co", "build/gamma.hsaco"]),
    ('include = ["*.hsaco"]\n', [],
     ["build/gamma.hsaco", "build/suite.hsaco", "debug/gamma.hsaco"]),
    ('include = ["*.hsaco"]\n', ["--include", "suite*"], ["build/suite.hsaco"]),  # replaces
    ('exclude = ["suite*"]\n', ["--exclude", "*/debug"],  # --exclude replaces
     ["build/gamma.co", "build/gamma.hsaco", "build/suite.hsaco"]),
    ('exclude = ["suite*"]\n', ["--extend-exclude", "*/debug"],  # adds
     ["build/gamma.co", "build/gamma.hsaco"]),
    ('extend-exclude = ["*.co"]\nexclude = ["suite*"]\n', [],  # both, in any order
     ["build/gamma.hsaco", "debug/gamma.hsaco"]),
])
def test_include_and_exclude_globs(occlint, tree, config, args, expected):
    (tree / "occlint.toml").write_text(config)
    assert _inputs(occlint("build", *args, "--format", "json", cwd=tree)) == expected


def test_globs_do_not_filter_files_named_on_the_command_line(occlint, tree):
    run = occlint("build/gamma.co", "--include", "*.hsaco", "--exclude", "*.co",
                  "--format", "json", cwd=tree)
    assert _inputs(run) == ["build/gamma.co"]


def test_no_paths_anywhere_is_a_usage_error(occlint, tmp_path):
    run = occlint(cwd=tmp_path)
    assert run.code == 2 and "no paths given" in run.err


# -- baseline -----------------------------------------------------------------------------

def test_baseline_adoption_flow(occlint, project):
    args = ["build/gamma.hsaco", "build/suite.hsaco", "--device", "mi50", "--isolated"]
    first = occlint(*args, "--format", "json", cwd=project)
    assert first.code == 1
    total = _json(first)["summary"]["findings"]["total"]
    assert total > 0
    write = occlint(*args, "--write-baseline", "occlint-baseline.json", cwd=project)
    assert write.code == 0
    baseline = json.loads((project / "occlint-baseline.json").read_text())
    assert sum(e["count"] for e in baseline["findings"]) == total
    assert all("offset" not in e for e in baseline["findings"])
    # same binaries: nothing new
    again = occlint(*args, "--baseline", "occlint-baseline.json", "--format", "json",
                    cwd=project)
    assert again.code == 0, again.out
    doc = _json(again)
    assert doc["summary"]["findings"]["total"] == 0
    assert doc["baseline"]["suppressed"] == total and doc["baseline"]["stale"] == []
    # a new launch problem is reported even with the baseline
    new = occlint(*args, "--baseline", "occlint-baseline.json", "--block", "100",
                  "--format", "json", cwd=project)
    assert new.code == 1
    assert {f["rule"] for k in _json(new)["kernels"] for f in k["findings"]} >= {"LCH001"}


def test_baseline_survives_moving_kernels_and_reports_stale(occlint, project):
    args = ["build/suite.hsaco", "--isolated"]
    occlint(*args, "--write-baseline", "b.json", cwd=project)
    # fewer findings (one file removed from the run): the rest of the baseline is stale
    (project / "build" / "other").mkdir()
    shutil.copy(GAMMA, project / "build" / "other" / "gamma.hsaco")
    run = occlint("build/other/gamma.hsaco", "--baseline", "b.json", "--isolated", cwd=project)
    assert run.code == 0
    assert "stale" in run.err
    # reordering inputs does not change identities
    occlint("build/suite.hsaco", "build/gamma.hsaco", "--isolated", "--write-baseline", "c.json",
            cwd=project)
    swapped = occlint("build/gamma.hsaco", "build/suite.hsaco", "--isolated", "--baseline",
                      "c.json", cwd=project)
    assert swapped.code == 0 and "stale" not in swapped.err


def test_bad_baseline_file(occlint, project):
    (project / "b.json").write_text("{not json")
    run = occlint("build/gamma.hsaco", "--baseline", "b.json", "--isolated", cwd=project)
    assert run.code == 2 and "baseline" in run.err and run.err.count("\n") == 1


def test_output_file_written_atomically(occlint, project):
    run = occlint("build/gamma.hsaco", "--isolated", "--format", "json", "-o", "out/r.json",
                  cwd=project)
    assert run.code == 2 and "cannot write" in run.err  # missing folder: one-line error
    (project / "out").mkdir()
    run = occlint("build/gamma.hsaco", "--isolated", "--format", "json", "-o", "out/r.json",
                  cwd=project)
    assert run.code == 0 and run.out == ""
    assert json.loads((project / "out" / "r.json").read_text())["schema_version"] == 1
    assert [p.name for p in (project / "out").iterdir()] == ["r.json"]


def test_no_color_and_tty(occlint_process, project):
    env_run = occlint_process("build/suite.hsaco", "--isolated", "--color", "always", cwd=project,
                      env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"})
    assert "\x1b[" not in env_run.out
    forced = occlint_process("build/suite.hsaco", "--isolated", "--color", "always", cwd=project)
    assert "\x1b[" in forced.out
    plain = occlint_process("build/suite.hsaco", "--isolated", cwd=project)  # not a TTY
    assert "\x1b[" not in plain.out
