"""Issue 31, item 6: the README's CI recipe. Its GitHub Actions and GitLab CI jobs parse,
publish the HTML report they write, name only options occlint has, and their occlint
commands run as written in a repository whose configuration names its paths (examples/);
the gates of its table fail the job as it says."""

from __future__ import annotations

import json
import re
import shlex
import shutil

import pytest

from tests.conftest import FIXTURES, REPO, run_occlint, run_occlint_process

yaml = pytest.importorskip("yaml")

README = (REPO / "README.md").read_text()
CI = README[README.index("### CI\n"):README.index("## Validation on a real GPU")]
GITHUB, GITLAB = (yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", CI, re.S))
TRACE = FIXTURES / "traces" / "kineto" / "resnet18_train.pt.trace.json.gz"


def _check_options() -> set[str]:
    from occlint.cli.check import check

    return {opt for param in check.params for opt in param.opts if opt.startswith("-")}


def _github_commands() -> list[str]:
    return [step["run"] for step in GITHUB["jobs"]["occlint"]["steps"] if "run" in step]


def _gitlab_commands() -> list[str]:
    return list(GITLAB["occlint"]["script"])


def _occlint_args(commands: list[str]) -> list[list[str]]:
    return [shlex.split(c, comments=True)[1:] for c in commands if c.startswith("occlint ")]


def _output_of(args: list[str], fmt: str) -> str:
    assert args[args.index("--format") + 1] == fmt
    return args[args.index("-o") + 1]


def test_the_jobs_publish_the_report_they_write():
    github_steps = GITHUB["jobs"]["occlint"]["steps"]
    assert {True, "on"} & set(GITHUB)  # YAML 1.1 reads a bare `on` as true
    html = [a for a in _occlint_args(_github_commands()) if "html" in a]
    upload = next(s for s in github_steps if s.get("uses", "").startswith(
        "actions/upload-artifact@"))
    assert upload["with"]["path"] == _output_of(html[0], "html")
    gitlab = _occlint_args(_gitlab_commands())
    artifacts = GITLAB["occlint"]["artifacts"]
    assert artifacts["when"] == "always"
    assert _output_of(next(a for a in gitlab if "html" in a), "html") in artifacts["paths"]
    assert artifacts["reports"]["codequality"] == _output_of(
        next(a for a in gitlab if "gitlab" in a), "gitlab")


def test_the_install_line_names_this_project():
    from packaging.requirements import Requirement

    project = (REPO / "pyproject.toml").read_text()
    name = re.search(r'^name = "([^"]+)"', project, re.M)[1]
    home = re.search(r'^Documentation = "([^"#]+)', project, re.M)[1]
    for commands in (_github_commands(), _gitlab_commands()):
        install = next(c for c in commands if "pip install" in c)
        requirement = Requirement(shlex.split(install)[-1])
        assert requirement.name == name and requirement.url.startswith(f"git+{home}@")


def test_every_option_of_the_recipe_exists():
    known = _check_options()
    for command in _github_commands() + _gitlab_commands():
        assert shlex.split(command)[0] in ("occlint", "python"), command
    for args in _occlint_args(_github_commands() + _gitlab_commands()):
        assert {a for a in args if a.startswith("-")} <= known, args
    table = re.findall(r"`(--[\w-]+)", CI)
    assert table and set(table) <= known, set(table) - known


@pytest.mark.parametrize("commands", [_github_commands(), _gitlab_commands()],
                         ids=["github", "gitlab"])
def test_the_jobs_commands_run_as_written(commands, tmp_path):
    """In a copy of examples/ (its configuration names `kernels` and a current baseline):
    the report steps write their files and exit 0, the gate passes."""
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    cwd = tmp_path / "examples"
    runs = [(args, run_occlint_process(*args, cwd=cwd)) for args in _occlint_args(commands)]
    for args, run in runs:
        assert run.code == 0 and "error" not in run.err, (args, run.err)
        if "-o" in args:
            assert (cwd / args[args.index("-o") + 1]).stat().st_size > 0
    html = (cwd / "occlint-report.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and "</html>" in html
    if "--format gitlab" in " ".join(commands):
        assert isinstance(json.loads((cwd / "gl-code-quality-report.json").read_text()), list)


def test_the_gate_fails_the_job_where_the_examples_report_does_not(tmp_path):
    """The report step exits 0 on a trace with warnings; the default gate exits 1."""
    report = run_occlint(str(TRACE), "--format", "html", "-o", str(tmp_path / "r.html"),
                         "--exit-zero", "--isolated")
    gate = run_occlint(str(TRACE), "--fail-on", "warning", "--isolated", "-q")
    assert report.code == 0 and gate.code == 1 and "warning" in gate.out


def test_fail_on_saving_compares_the_users_saving_with_the_threshold():
    doc = json.loads(run_occlint(str(TRACE), "--format", "json", "--isolated").out)
    yours_ms = doc["summary"]["launches"]["user_saving_low_ns"] / 1e6
    assert yours_ms > 1
    below = run_occlint(str(TRACE), "--fail-on", "never", "--fail-on-saving",
                        f"{yours_ms * 0.9:.3f}", "--isolated", "-q")
    above = run_occlint(str(TRACE), "--fail-on", "never", "--fail-on-saving",
                        f"{yours_ms * 1.1:.3f}", "--isolated", "-q")
    assert below.code == 1 and "--fail-on-saving" in below.err
    assert above.code == 0 and above.err == ""
    zero = run_occlint(str(TRACE), "--fail-on-saving", "0", "--exit-zero", "--isolated", "-q")
    assert zero.code == 0
    # a run without traced launches saves nothing: the gate passes
    binary = run_occlint(str(FIXTURES / "amd/co/gamma.gfx1100.hsaco"), "--fail-on-saving", "0",
                         "--isolated")
    assert binary.code == 0
