"""CI output formats on real runs: SARIF (official schema + GitHub code scanning's needs),
GitHub workflow commands (escaping, caps), GitLab Code Quality, JUnit XML, ``-o FILE``."""

from __future__ import annotations

import importlib.util
import json
import re
import xml.etree.ElementTree as ET
from functools import cache
from pathlib import Path
from urllib.parse import unquote

import jsonschema
import pytest

from tests.conftest import FIXTURES, REPO, run_occlint

SARIF_SCHEMA = Path(__file__).parent / "schemas" / "sarif-schema-2.1.0.json"
GAMMA = "fixtures/amd/co/gamma.gfx1100.hsaco"
MANGLED = b"_Z16gamma_correctionPhmf"
# same length as MANGLED: a workflow-command injection, a real newline, ',' and ':'
HOSTILE = b"a,b:c%0A::error::d\n::e:f"
LAUNCH = ["--device", "w7800", "--block", "256", "--grid", "1000"]
HAS_NVIDIA = importlib.util.find_spec("occlint.readers.nvidia") is not None

CASES = {
    # two warnings (LCH101, LCH103) on one kernel
    "launch": [GAMMA, *LAUNCH],
    # many findings over 69 code objects, every severity but error
    "amd-co": ["fixtures/amd/co"],
    # an unreadable input, a missing path and a second device that cannot run the code (a
    # DEV105 note once, no per-kernel DEV101 flood)
    "errors-multidevice": [GAMMA, "tests/schemas/README.md", "fixtures/does-not-exist.hsaco",
                           "--device", "w7800", "--device", "mi300x", "--block", "256",
                           "--grid", "1000"],
    # containers: bundles, host objects, bitcode artifacts (input-level BIN103 findings)
    "containers": ["fixtures/amd/containers"],
    "nvidia": ["fixtures/nvidia", "--device", "h100", "--grid", "1000"],
}


def _case(name: str) -> list[str]:
    if name == "nvidia" and not HAS_NVIDIA:
        pytest.skip("occlint.readers.nvidia is not available in this checkout")
    return CASES[name]


@cache
def _run(fmt: str, *args: str):
    return run_occlint(*args, "--format", fmt, cwd=REPO)


def output(fmt: str, args: list[str]) -> str:
    result = _run(fmt, *args)
    assert result.code in (0, 1), result.err
    return result.out


def document(args: list[str]) -> dict:
    return json.loads(output("json", args))


def findings(doc: dict) -> list[dict]:
    return [*doc["findings"], *(f for k in doc["kernels"] for f in k["findings"])]


@pytest.fixture(scope="module")
def sarif_validator():
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def hostile_binary(directory: Path, name: str = "evil,name:x.hsaco") -> Path:
    data = (FIXTURES / "amd/co/gamma.gfx1100.hsaco").read_bytes()
    assert len(HOSTILE) == len(MANGLED) and data.count(MANGLED) >= 2  # metadata + symtab
    path = directory / name
    path.write_bytes(data.replace(MANGLED, HOSTILE))
    return path


# --------------------------------------------------------------------------- every format

@pytest.mark.parametrize("fmt", ["sarif", "github", "gitlab", "junit"])
@pytest.mark.parametrize("case", ["launch", "amd-co", "errors-multidevice", "containers"])
def test_exit_code_does_not_depend_on_format(fmt, case):
    args = _case(case)
    assert _run(fmt, *args).code == _run("json", *args).code
    again = run_occlint(*args, "--format", fmt, cwd=REPO)
    assert again.out == _run(fmt, *args).out


# --------------------------------------------------------------------------- SARIF

@pytest.mark.parametrize("case", list(CASES))
def test_sarif_valid_against_official_schema(case, sarif_validator):
    log = json.loads(output("sarif", _case(case)))
    errors = sorted(sarif_validator.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]


URI_REFERENCE = re.compile(r"^[A-Za-z0-9\-._~!$&'()*+,;=:@/%]+$")


@pytest.mark.parametrize("case", list(CASES))
def test_sarif_meets_github_code_scanning_requirements(case):
    args = _case(case)
    text = output("sarif", args)
    log = json.loads(text)
    doc = document(args)
    assert log["$schema"].startswith("https://") and log["version"] == "2.1.0"
    assert len(log["runs"]) == 1
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "occlint"
    assert driver["version"] == driver["semanticVersion"] == doc["tool"]["version"]
    assert driver["informationUri"].startswith("https://")
    rules = driver["rules"]
    assert [r["id"] for r in rules] == sorted({r["id"] for r in rules})
    firing = {result["ruleId"] for result in run["results"]}
    for r in rules:
        assert re.fullmatch(r"[A-Z]+\d{3}", r["id"]) and r["name"]
        assert 0 < len(r["shortDescription"]["text"]) <= 1024
        # the documentation of the rules that fire (code scanning shows it beside the alert)
        assert ("help" in r) == ("fullDescription" in r) == (r["id"] in firing)
        if r["id"] not in firing:
            continue
        assert 0 < len(r["fullDescription"]["text"]) <= 1024
        assert r["help"]["text"].strip() and r["help"]["markdown"].startswith(f"# {r['id']} ")
        assert "## How to fix" in r["help"]["markdown"]
        assert r["defaultConfiguration"]["level"] in ("error", "warning", "note")
        props = r["properties"]
        assert props["tags"] and len(props["tags"]) <= 20
        assert props["precision"] in ("very-high", "high", "medium", "low")
        assert props["problem.severity"] in ("error", "warning", "recommendation")
    all_f = findings(doc)
    assert len(run["results"]) == len(all_f)
    assert run["properties"]["resultsTotal"] == len(all_f)
    assert run["properties"]["truncated"] is False
    level = {"error": "error", "warning": "warning", "info": "note"}
    inputs = {Path(f["file"]).as_posix() for f in all_f}
    for result, f in zip(run["results"], all_f, strict=True):
        assert result["ruleId"] == f["rule"] == rules[result["ruleIndex"]]["id"]
        assert result["level"] == level[f["severity"]]
        assert f["message"] in result["message"]["text"]
        if f["advice"]:
            assert f["advice"] in result["message"]["text"]
        (location,) = result["locations"]
        physical = location["physicalLocation"]
        uri = physical["artifactLocation"]["uri"]
        assert "uriBaseId" not in physical["artifactLocation"]
        assert uri and URI_REFERENCE.match(uri), uri
        assert not uri.startswith(("/", "file:")) and ".." not in uri.split("/")
        source = (f.get("source") or {}).get("path")
        if source:  # debug information located the kernel in a file of the repository
            assert uri == source and physical["region"] == {"startLine": f["source"]["line"]}
            related = result["relatedLocations"][0]["physicalLocation"]
            assert unquote(related["artifactLocation"]["uri"]) in inputs
        else:
            # repo-relative: the path as run from the repository root (percent-encoded: an
            # archive member's '!/' is '%21/')
            assert unquote(uri) in inputs
        if source:
            pass
        elif f.get("line") is None:  # binaries have no lines
            assert physical["region"] == {"startLine": 1}
        else:  # a finding on a CUDA / HIP source: its region
            assert physical["region"]["startLine"] == f["line"]
            assert physical["region"]["startColumn"] == f["column"]
        fingerprint = result["partialFingerprints"]["occlintFinding/v1"]
        assert re.fullmatch(r"[0-9a-f]{64}:[1-9]\d*", fingerprint)
        if f["kernel"]:
            (logical,) = location["logicalLocations"]
            assert logical["kind"] == "function"
            assert logical["decoratedName"] == f["kernel"]
            assert logical["fullyQualifiedName"] == f["demangled"]
            assert logical["name"]
        props = result["properties"]
        assert props["severity"] == f["severity"]
        assert props.get("arch") == f["arch"] and props.get("device") == f["device"]
        assert props.get("entry") == f["entry"]
    assert "originalUriBaseIds" not in run
    assert "TimeUtc" not in text  # no timestamps: deterministic


def test_sarif_rules_are_the_enabled_and_firing_ones():
    log = json.loads(output("sarif", [GAMMA, *LAUNCH, "--select", "OCC"]))
    ids = [r["id"] for r in log["runs"][0]["tool"]["driver"]["rules"]]
    assert ids and all(i.startswith("OCC") for i in ids)
    assert not log["runs"][0]["results"]
    log = json.loads(output("sarif", [GAMMA, *LAUNCH]))
    from occlint.rules.registry import all_rules

    assert [r["id"] for r in log["runs"][0]["tool"]["driver"]["rules"]] == list(all_rules())


def test_sarif_stays_small_documenting_only_the_rules_that_fire():
    """Two findings: the log carries the two firing rules' documentation, the other enabled
    rules by name and summary only (issue 22: 92 KB before)."""
    text = output("sarif", [GAMMA, *LAUNCH])
    run = json.loads(text)["runs"][0]
    assert len(run["results"]) == 2
    documented = [r["id"] for r in run["tool"]["driver"]["rules"] if "help" in r]
    assert documented == sorted({r["ruleId"] for r in run["results"]})
    # 31.6 KB before LIB101's name and summary (issue 29); 34.0 KB with LCH107 and LCH108's;
    # 35.1 KB with BIN105's; 36.0 KB with the two findings' fixes as data (issue 28)
    assert len(text.encode()) < 36_500


def test_sarif_logical_location_names_the_kernel():
    (result, _) = json.loads(output("sarif", CASES["launch"]))["runs"][0]["results"]
    (logical,) = result["locations"][0]["logicalLocations"]
    assert logical == {"name": "gamma_correction",
                       "fullyQualifiedName":
                           "gamma_correction(unsigned char*, unsigned long, float)",
                       "decoratedName": "_Z16gamma_correctionPhmf", "kind": "function"}
    assert result["properties"]["arch"] == "gfx1100"
    assert result["properties"]["device"] == "AMD Radeon PRO W7800"


@pytest.mark.parametrize(("demangled", "name"), [
    ("gamma_correction(unsigned char*, unsigned long, float)", "gamma_correction"),
    ("void ns::tile<(anonymous namespace)::Op, 4>(float const*, int)",
     "ns::tile<(anonymous namespace)::Op, 4>"),
    ("k(void (*)(int), int)", "k"),
    ("plain_c_kernel", "plain_c_kernel"),
])
def test_sarif_logical_name(demangled, name):
    from occlint.model.demangle import qualified_name

    assert qualified_name(demangled) == name


def test_sarif_rule_level_follows_severity_overrides():
    from occlint.reporters import sarif

    doc = document(CASES["launch"])
    doc["settings"]["severity"] = {"LCH103": "error"}  # as a configuration would record it
    rules = {r["id"]: r for r in sarif.sarif_log(doc)["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["LCH103"]["defaultConfiguration"]["level"] == "error"
    assert rules["LCH101"]["defaultConfiguration"]["level"] == "warning"


def test_sarif_uri_is_repo_relative_for_absolute_arguments():
    absolute = str(REPO / GAMMA)
    log = json.loads(output("sarif", [absolute, *LAUNCH]))
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in log["runs"][0]["results"]}
    assert uris == {GAMMA}


def test_sarif_uri_outside_the_working_directory_is_a_file_uri(tmp_path):
    path = tmp_path / "dir with space" / "k.hsaco"
    path.parent.mkdir()
    path.write_bytes((REPO / GAMMA).read_bytes())
    result = run_occlint(str(path), *LAUNCH, "--format", "sarif", cwd=REPO)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in json.loads(result.out)["runs"][0]["results"]}
    assert uris == {path.as_uri()} and "%20" in path.as_uri()


def _fingerprints(args: list[str], file: str) -> set[tuple[str, str]]:
    run = json.loads(output("sarif", args))["runs"][0]
    return {(r["ruleId"], r["partialFingerprints"]["occlintFinding/v1"]) for r in run["results"]
            if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == file}


def test_sarif_fingerprints_survive_unrelated_files_and_kernels():
    alone = _fingerprints([GAMMA, *LAUNCH], GAMMA)
    assert len(alone) == 2
    # other files (one for another architecture: DEV101) before and after it
    more = _fingerprints(["fixtures/amd/co/gamma.gfx1030.hsaco", GAMMA,
                          "fixtures/amd/co/suite.gfx1100.hsaco",
                          "fixtures/amd/containers/gamma.rdc_new_driver.o", *LAUNCH], GAMMA)
    assert more == alone
    # the same file given by absolute path, from the repository root
    assert _fingerprints([str(REPO / GAMMA), *LAUNCH], GAMMA) == alone
    # messages change with the grid, the identity does not
    assert _fingerprints([GAMMA, "--device", "w7800", "--block", "256", "--grid", "1001"],
                         GAMMA) == alone


@pytest.mark.parametrize("case", ["amd-co", "errors-multidevice", "containers", "nvidia"])
def test_sarif_fingerprints_are_unique(case):
    results = json.loads(output("sarif", _case(case)))["runs"][0]["results"]
    prints = [r["partialFingerprints"]["occlintFinding/v1"] for r in results]
    assert len(prints) == len(set(prints))


def test_sarif_truncates_to_the_most_severe(sarif_validator):
    from occlint.reporters import sarif

    doc = document(CASES["errors-multidevice"])
    total = len(findings(doc))
    assert total == 5  # 2 errors (IO101), 2 warnings, a note (DEV105: not for the MI300X)
    log = json.loads(sarif.render(doc, max_results=3))
    assert not list(sarif_validator.iter_errors(log))
    run = log["runs"][0]
    assert [r["level"] for r in run["results"]] == ["error", "error", "warning"]
    props = run["properties"]
    assert props["truncated"] is True and props["resultsTotal"] == total
    assert props["resultsReported"] == 3
    assert props["omittedBySeverity"] == {"error": 0, "warning": 1, "info": 1}
    assert sarif.MAX_RESULTS == 25_000


def test_sarif_errors_become_tool_notifications():
    run = json.loads(output("sarif", CASES["errors-multidevice"]))["runs"][0]
    (invocation,) = run["invocations"]
    assert invocation["executionSuccessful"] is True  # the other input was analysed
    texts = [n["message"]["text"] for n in invocation["toolExecutionNotifications"]]
    assert any("does-not-exist.hsaco" in t for t in texts)
    assert any("README.md" in t for t in texts)
    result = run_occlint("README.md", "fixtures/does-not-exist.hsaco", "--format", "sarif",
                         cwd=REPO)
    assert result.code == 2
    (invocation,) = json.loads(result.out)["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    assert len(invocation["toolExecutionNotifications"]) == 2
    (invocation,) = json.loads(output("sarif", CASES["launch"]))["runs"][0]["invocations"]
    assert invocation == {"executionSuccessful": True}


def test_sarif_baseline_marks_new_results(tmp_path):
    baseline = tmp_path / "baseline.json"
    write = run_occlint(GAMMA, *LAUNCH, "--write-baseline", str(baseline), cwd=REPO)
    assert write.code == 0, write.err
    res = run_occlint(GAMMA, "fixtures/amd/co/gamma.gfx1030.hsaco", *LAUNCH, "--baseline",
                      str(baseline), "--format", "sarif", cwd=REPO)
    run = json.loads(res.out)["runs"][0]
    assert run["results"] and {r["baselineState"] for r in run["results"]} == {"new"}
    assert run["properties"]["baseline"]["suppressed"] == 2


# --------------------------------------------------------------------------- GitHub

COMMAND_LINE = re.compile(r"^::(error|warning|notice) file=([^,:\n]*),title=([^,:\n]*)::(.*)$")


def _unescape(value: str, prop: bool = False) -> str:
    """What the Actions runner does with an escaped value."""
    if prop:
        value = value.replace("%3A", ":").replace("%2C", ",")
    return value.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def _commands(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.lstrip().startswith("::")]


def test_github_annotations_on_a_real_run():
    text = output("github", CASES["launch"])
    lines = text.splitlines()
    assert len(lines) == 2
    for line, rule in zip(lines[:2], ("LCH101 grid-tail-effect",
                                      "LCH103 grid-below-oversubscription-target"),
                          strict=True):
        match = COMMAND_LINE.match(line)
        assert match, line
        assert match[1] == "warning" and match[2] == GAMMA and match[3] == rule
        assert "gamma_correction(unsigned char*, unsigned long, float)" in match[4]
        assert "help: " in match[4]
    assert "%25 longer" in lines[0]  # the '%' of "1.5%" is escaped
    assert _run("github", *CASES["launch"]).err.startswith("occlint: 2 findings (2 warnings)")


@pytest.mark.parametrize("case", ["launch", "amd-co", "errors-multidevice", "containers"])
def test_github_stdout_holds_only_workflow_commands(case):
    result = _run("github", *_case(case))
    lines = result.out.splitlines()
    assert lines and all(COMMAND_LINE.match(line) for line in lines), lines[-1:]
    summary = [line for line in result.err.splitlines() if not line.startswith("occlint: error")]
    assert len(summary) == 1 and re.match(r"occlint: \d+ findings? ", summary[0]), summary
    quiet = run_occlint(*_case(case), "--format", "github", "-q", cwd=REPO)
    assert quiet.out == result.out and quiet.err.splitlines() == [
        line for line in result.err.splitlines() if line.startswith("occlint: error")]


def test_github_without_findings_writes_nothing_on_stdout():
    result = run_occlint(GAMMA, "--device", "w7800", "--format", "github", cwd=REPO)
    assert result.code == 0 and result.out == ""
    assert result.err == "occlint: 0 findings\n"


def test_github_error_and_notice_commands():
    text = output("github", CASES["errors-multidevice"])
    kinds = [COMMAND_LINE.match(line)[1] for line in _commands(text)]
    assert kinds == ["error", "error", "warning", "warning", "notice"]
    text = output("github", CASES["containers"])
    assert {COMMAND_LINE.match(line)[1] for line in _commands(text)} == {"notice"}


def test_github_hostile_kernel_and_file_names_cannot_inject_commands(tmp_path):
    path = hostile_binary(tmp_path)
    doc = json.loads(run_occlint(path.name, *LAUNCH, "--format", "json", cwd=tmp_path).out)
    (kernel,) = doc["kernels"]
    assert kernel["name"] == HOSTILE.decode()  # metadata and symbol table both carry it
    assert len(kernel["findings"]) == 2
    result = run_occlint(path.name, *LAUNCH, "--format", "github", cwd=tmp_path)
    assert result.code == 1
    commands = _commands(result.out)
    assert len(commands) == 2  # exactly the intended ones: one per finding
    for line in commands:
        match = COMMAND_LINE.match(line)
        assert match and match[1] == "warning", line
        assert match[2] == "evil%2Cname%3Ax.hsaco"
        assert _unescape(match[2], prop=True) == path.name
        assert "%250A%3A" not in match[4]  # ':' stays literal in data, only '%' escaped
        assert "a,b:c%250A::error::d%0A::e:f" in match[4]
        assert HOSTILE.decode() in _unescape(match[4])
    # nothing else in the output looks like a command, under any line-splitting rule
    assert result.out.splitlines() == commands
    assert result.err.startswith("occlint: 2 findings")
    assert result.out.count("\n") == len(result.out.splitlines())  # only \n line breaks


def test_text_report_escapes_control_characters_in_names(tmp_path):
    # A kernel name may hold a newline and a terminal escape: printed raw, it would forge an
    # "occlint: error:" line or recolour the terminal.
    hostile = b"ee\n\x1b[31mocclint: err\x1b[0m"
    assert len(hostile) == len(MANGLED)
    data = (FIXTURES / "amd/co/gamma.gfx1100.hsaco").read_bytes().replace(MANGLED, hostile)
    path = tmp_path / "evil\x1b[1m.hsaco"
    path.write_bytes(data)
    doc = json.loads(run_occlint(path.name, *LAUNCH, "--format", "json", cwd=tmp_path).out)
    assert doc["kernels"][0]["name"] == hostile.decode()  # JSON carries the name verbatim
    result = run_occlint(path.name, *LAUNCH, cwd=tmp_path)
    assert result.code == 1
    assert "\x1b" not in result.out  # no raw ESC anywhere (NO_COLOR output)
    assert not any(line.startswith("occlint: err") for line in result.out.splitlines())
    assert r"ee\n\x1b[31mocclint: err\x1b[0m" in result.out
    assert r"evil\x1b[1m.hsaco" in result.out
    assert sum(r"e\n\x1b" in line for line in result.out.splitlines()) == 3  # 2 findings + kernel


def test_github_escaping_functions():
    from occlint.reporters.github import escape_data, escape_property

    assert escape_data("a%b\r\nc:d,e") == "a%25b%0D%0Ac:d,e"
    assert escape_property("a%b\r\nc:d,e") == "a%25b%0D%0Ac%3Ad%2Ce"
    for sep in ("\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u2029", "\x00", "\x1b"):
        assert len(escape_data(f"x{sep}::error::y").splitlines()) == 1
        assert sep not in escape_data(sep)


def test_github_caps_annotations_and_says_how_many_were_not_shown():
    doc = document(CASES["amd-co"])
    by_severity = doc["summary"]["findings"]["by_severity"]
    total = doc["summary"]["findings"]["total"]
    text = output("github", CASES["amd-co"])
    commands = _commands(text)
    kinds = [COMMAND_LINE.match(line)[1] for line in commands]
    expected = {"error": min(10, by_severity["error"]), "warning": min(10, by_severity["warning"]),
                "notice": min(10, by_severity["info"])}
    assert {k: kinds.count(k) for k in expected} == expected
    assert len(commands) <= 30 < 50  # per-step limit per type; under the per-job limit
    assert text.splitlines() == commands
    summary = _run("github", *CASES["amd-co"]).err.splitlines()[-1]
    hidden = total - len(commands)
    assert hidden > 0
    assert summary.startswith(f"occlint: {total} findings")
    assert f"{hidden} not shown" in summary and "--format sarif" in summary
    assert "--format json" in summary


def test_github_cap_is_configurable_per_type():
    from occlint.reporters import github

    doc = document(CASES["errors-multidevice"])
    text = github.render(doc, max_per_type=1)
    kinds = [COMMAND_LINE.match(line)[1] for line in _commands(text)]
    assert kinds == ["error", "warning", "notice"] and len(text.splitlines()) == 3
    assert "2 not shown" in github.summary(doc, max_per_type=1)


# --------------------------------------------------------------------------- GitLab

GITLAB_SEVERITIES = {"info", "minor", "major", "critical", "blocker"}


@pytest.mark.parametrize("case", list(CASES))
def test_gitlab_code_quality_report(case):
    args = _case(case)
    issues = json.loads(output("gitlab", args))
    doc = document(args)
    all_f = findings(doc)
    assert isinstance(issues, list) and len(issues) == len(all_f)
    severity = {"error": "critical", "warning": "major", "info": "info"}
    for issue, f in zip(issues, all_f, strict=True):
        assert set(issue) == {"description", "check_name", "fingerprint", "severity", "location"}
        assert issue["check_name"] == f["rule"]
        assert f["message"] in issue["description"]
        assert issue["severity"] in GITLAB_SEVERITIES
        assert issue["severity"] == severity[f["severity"]]
        source = (f.get("source") or {}).get("path")  # debug information: the kernel's line
        begin = f["source"]["line"] if source else f.get("line") or 1  # 1: binaries
        assert issue["location"]["lines"] == {"begin": begin}
        path = issue["location"]["path"]
        assert path and not path.startswith("/")
        assert path == (source or Path(f["file"]).as_posix())
        assert re.fullmatch(r"[0-9a-f]{64}", issue["fingerprint"])
    prints = [i["fingerprint"] for i in issues]
    assert len(prints) == len(set(prints)), "GitLab drops issues with duplicate fingerprints"


def test_gitlab_fingerprints_are_stable():
    def prints(args):
        return {i["fingerprint"] for i in json.loads(output("gitlab", args))
                if i["location"]["path"] == GAMMA}

    alone = prints([GAMMA, *LAUNCH])
    assert len(alone) == 2
    assert prints(["fixtures/amd/co/gamma.gfx1030.hsaco", GAMMA, *LAUNCH]) == alone


# --------------------------------------------------------------------------- JUnit

def _junit(args: list[str]) -> ET.Element:
    root = ET.fromstring(output("junit", args).encode("utf-8"))
    assert root.tag == "testsuites"
    return root


def _check_counts(root: ET.Element) -> None:
    cases = root.findall("./testsuite/testcase")
    assert int(root.get("tests")) == len(cases)
    assert int(root.get("failures")) == sum(1 for c in cases if c.find("failure") is not None)
    assert int(root.get("errors")) == sum(1 for c in cases if c.find("error") is not None)
    for suite in root.findall("testsuite"):
        own = suite.findall("testcase")
        assert int(suite.get("tests")) == len(own)
        assert int(suite.get("failures")) == sum(1 for c in own if c.find("failure") is not None)


@pytest.mark.parametrize("case", list(CASES))
def test_junit_parses_and_counts_failures(case):
    args = _case(case)
    root = _junit(args)
    doc = document(args)
    _check_counts(root)
    rank = {"info": 0, "warning": 1, "error": 2}
    fail_on = doc["settings"]["fail_on"]
    failing = [f for f in findings(doc) if rank[f["severity"]] >= rank[fail_on]]
    failures = root.findall("./testsuite/testcase/failure")
    assert sorted(x.get("type") for x in failures) == sorted(f["rule"] for f in failing)
    assert {x.get("message") for x in failures} == {f["message"] for f in failing}
    # never two failures in one testcase (issue 22)
    assert all(len(c.findall("failure")) <= 1 for c in root.iter("testcase"))
    # per kernel x device and per launch group: one testcase per failing finding, or one
    # passing testcase; one per input-level finding; one per error IO101 missed
    reported = {(f["file"], f["entry"], f["message"]) for f in doc["findings"]
                if f["rule"] == "IO101"}
    missed = [e for e in doc["errors"] if (e["file"], e["entry"], e["message"]) not in reported]
    per_record = sum(max(1, sum(rank[f["severity"]] >= rank.get(fail_on, 3)
                                for f in r["findings"]))
                     for r in [*doc["kernels"], *doc.get("launches", [])])
    assert int(root.get("tests")) == per_record + len(doc["findings"]) + len(missed)
    files = [*(i["path"] for i in doc["inputs"]), *(k["file"] for k in doc["kernels"]),
             *(f["file"] for f in doc["findings"]), *(e["file"] for e in doc["errors"])]
    assert len(root.findall("testsuite")) == len({Path(p).as_posix() for p in files})


def test_junit_passing_and_failing_testcases():
    root = _junit([GAMMA, "--device", "w7800", "--block", "256", "--grid", "2800"])
    (case,) = root.findall("./testsuite/testcase")
    assert list(case) == [] and root.get("failures") == "0" and root.get("tests") == "1"
    root = _junit(CASES["launch"])
    cases = root.findall("./testsuite/testcase")
    assert [[f.get("type") for f in c.findall("failure")] for c in cases] == [
        ["LCH101"], ["LCH103"]]
    assert root.get("failures") == "2"
    kernel = "gamma_correction(unsigned char*, unsigned long, float) [gfx1100] @ " \
             "AMD Radeon PRO W7800"
    assert [c.get("name") for c in cases] == [
        f"{kernel}: LCH101 grid-tail-effect",
        f"{kernel}: LCH103 grid-below-oversubscription-target"]
    assert {c.get("classname") for c in cases} == {GAMMA}


def test_junit_respects_fail_on():
    root = _junit([*CASES["errors-multidevice"], "--fail-on", "error"])
    _check_counts(root)
    assert sorted(f.get("type") for f in root.iter("failure")) == ["IO101", "IO101"]
    outs = "".join(o.text for o in root.iter("system-out"))
    assert "LCH101" in outs and "LCH103" in outs  # below fail_on: shown, not failing
    root = _junit([*CASES["launch"], "--fail-on", "never"])
    assert root.get("failures") == "0" and not list(root.iter("failure"))


def test_junit_multi_device_and_input_errors():
    root = _junit(CASES["errors-multidevice"])
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {GAMMA, "tests/schemas/README.md", "fixtures/does-not-exist.hsaco"}
    names = [c.get("name") for c in suites[GAMMA].findall("testcase")]
    # analysed for the device that can run it; DEV105 says once why not for the MI300X
    assert [n.rsplit(" @ ", 1)[-1] for n in names] == [
        "AMD Radeon PRO W7800: LCH101 grid-tail-effect",
        "AMD Radeon PRO W7800: LCH103 grid-below-oversubscription-target",
        "DEV105 device-not-analysed"]
    for name in ("tests/schemas/README.md", "fixtures/does-not-exist.hsaco"):
        (case,) = suites[name].findall("testcase")
        assert case.find("failure").get("type") == "IO101"
    # with IO101 ignored the unreadable inputs still show, as JUnit errors
    root = _junit([*CASES["errors-multidevice"], "--ignore", "IO101"])
    _check_counts(root)
    assert root.get("errors") == "2"
    assert "no such file or directory" in {e.get("message") for e in root.iter("error")}


def test_junit_input_level_findings_are_testcases_of_their_file():
    root = _junit(["fixtures/amd/containers/gamma.rdc_new_driver.o"])
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == "fixtures/amd/containers/gamma.rdc_new_driver.o"
    names = sorted(c.get("name") for c in suite.findall("testcase"))
    assert names == ["BIN103 llvm-bitcode [.llvm.offloading/hip-amdgcn-amd-amdhsa-gfx1100]",
                     "BIN103 llvm-bitcode [.llvm.offloading/hip-amdgcn-amd-amdhsa-gfx90a]"]
    assert root.get("failures") == "0"  # info, below the default fail-on (warning)
    root = _junit(["fixtures/amd/containers/gamma.rdc_new_driver.o", "--fail-on", "info"])
    assert root.get("failures") == "2"


def test_junit_hostile_names_are_escaped(tmp_path):
    path = hostile_binary(tmp_path, "a<b>&'\".hsaco")
    result = run_occlint(path.name, *LAUNCH, "--format", "junit", cwd=tmp_path)
    root = ET.fromstring(result.out.encode("utf-8"))
    cases = list(root.iter("testcase"))
    assert len(cases) == 2  # LCH101 and LCH103, one testcase each
    for case in cases:
        assert case.get("classname") == path.name
        assert case.get("name").startswith(HOSTILE.decode())


# --------------------------------------------------------------------------- -o FILE

@pytest.mark.parametrize("fmt", ["sarif", "github", "gitlab", "junit"])
def test_output_file_is_written_atomically(fmt, tmp_path):
    target = tmp_path / "reports" / f"occlint.{fmt}"
    target.parent.mkdir()
    target.write_text("stale previous report\n")
    result = run_occlint(*CASES["launch"], "--format", fmt, "-o", str(target), cwd=REPO)
    assert result.code == 1 and result.out == ""
    assert target.read_text(encoding="utf-8") == output(fmt, CASES["launch"])
    assert [p.name for p in target.parent.iterdir()] == [target.name]  # no temp files left


def test_output_file_in_a_missing_directory_fails_cleanly(tmp_path):
    target = tmp_path / "missing" / "occlint.sarif"
    result = run_occlint(*CASES["launch"], "--format", "sarif", "-o", str(target), cwd=REPO)
    assert result.code == 2 and "cannot write" in result.err
    assert not target.parent.exists()
