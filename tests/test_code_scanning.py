"""Code scanning (SARIF, GitHub, GitLab) on real runs' traces (issue 29, item 2): facts the
user cannot act on — library and framework kernels' findings placed on the user's call
sites — become at most one LIB101 note per library and call site; warnings stay where the
user's action is. The truth is the traces read with the standard library's ``json`` (their
kernel events, durations and namespaces) and the recording script's truth file."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import pytest

from occlint.pipeline.run import Options, execute
from occlint.reporters import render
from tests.conftest import FIXTURES

KINETO = FIXTURES / "traces" / "kineto"
# what each library's kernels carry in their names (the trace's own names): cuBLAS' own
# namespace and its CUTLASS instantiations (cutlass_80_simt_sgemm_*, launched by aten::mm)
NAMESPACE = {"cuBLAS": ("cublasLt::", "cutlass_80_"), "PyTorch": ("at::native::",)}
GROUPS = {"cuBLAS": 4, "PyTorch": 2}


def kernel_events(path: Path) -> list[dict]:
    with gzip.open(path) as fh:
        return [e for e in json.load(fh)["traceEvents"] if e.get("cat") == "kernel"]


def run(path: Path) -> dict:
    return execute(Options(paths=[str(path)], isolated=True)).doc


def results(doc: dict) -> list[dict]:
    return json.loads(render("sarif", doc))["runs"][0]["results"]


def where(result: dict) -> tuple[str, int]:
    loc = result["locations"][0]["physicalLocation"]
    return loc["artifactLocation"]["uri"], loc["region"]["startLine"]


@pytest.fixture(scope="module")
def links():
    path = KINETO / "links.pt.trace.json.gz"
    return run(path), json.loads((KINETO / "links.truth.json").read_text()), \
        kernel_events(path)


def test_one_note_per_library_and_call_site(links):
    """`links` (with_stack, an H100): a tiny model's forward() at record_links.py:49 launched
    two cuBLAS GEMMs (CUTLASS instantiations), two cuBLAS split-K reductions and two PyTorch
    kernels (17 info findings on that line before). Code scanning gets two notes there, one
    per library, each with the library's launches and kernel time as the trace records
    them."""
    doc, truth, events = links
    forward = (truth["script"], truth["first_lines"]["forward"])
    at_forward = [r for r in results(doc) if where(r) == forward]
    assert len(at_forward) == 2
    assert {r["ruleId"] for r in at_forward} == {"LIB101"}
    assert {r["level"] for r in at_forward} == {"note"}
    notes = {r["properties"]["data"]["library"]: r for r in at_forward}
    assert set(notes) == set(NAMESPACE)
    for library, marks in NAMESPACE.items():
        mine = [e for e in events if any(m in e["name"] for m in marks)]
        data = notes[library]["properties"]["data"]
        shapes = {(e["name"], tuple(e["args"]["grid"]), tuple(e["args"]["block"]))
                  for e in mine}
        assert data["groups"] == len(shapes) == GROUPS[library]
        assert data["kernel_time_ns"] == pytest.approx(sum(e["dur"] for e in mine) * 1000,
                                                       abs=2)
        assert "forward() at record_links.py:49" in notes[library]["message"]["text"]
    fingerprints = [r["partialFingerprints"]["occlintFinding/v1"] for r in at_forward]
    assert len(set(fingerprints)) == 2 and all(f.endswith(":1") for f in fingerprints)


def test_the_users_own_findings_stay_as_they_are(links):
    """The user's kernels (saxpy from step() at line 69) keep one result per finding, on
    their line; GitHub and GitLab fold the libraries' facts the same way."""
    doc, truth, _ = links
    step = (truth["script"], truth["first_lines"]["step"])
    user = [f for r in doc["launches"] if r["owner"]["kind"] == "user" for f in r["findings"]]
    sarif = results(doc)
    assert sorted(r["ruleId"] for r in sarif if r["ruleId"] != "LIB101") == \
        sorted(f["rule"] for f in user)
    assert Counter(where(r) for r in sarif if r["ruleId"] != "LIB101")[step] == \
        sum(1 for f in user if f.get("source"))
    github = [line for line in render("github", doc).splitlines()
              if f"line={truth['first_lines']['forward']}" in line]
    assert len(github) == 2 and all("title=LIB101" in line for line in github)
    gitlab = [i for i in json.loads(render("gitlab", doc))
              if i["location"]["lines"]["begin"] == truth["first_lines"]["forward"]]
    assert len(gitlab) == 2 and len({i["fingerprint"] for i in gitlab}) == 2


def test_warnings_go_where_the_users_action_is():
    """`mixed` (no with_stack): every warning of the document (the user's kernels, each
    stream's launch overhead) is a SARIF warning of its own; the libraries' and framework's
    140 info findings are one note per library (the libraries of the launch groups that
    carry them), whose kernel times are the trace's."""
    path = KINETO / "mixed.pt.trace.json.gz"
    doc = run(path)
    sarif = results(doc)
    warnings = [f for r in doc["launches"] for f in r["findings"] if f["severity"] == "warning"]
    assert Counter(r["ruleId"] for r in sarif if r["level"] == "warning") == \
        Counter(f["rule"] for f in warnings)
    theirs = [r for r in doc["launches"] if r["owner"]["kind"] in ("library", "framework")]
    facts = [f for r in theirs for f in r["findings"] if f["severity"] == "info"]
    assert len(facts) == 140
    notes = [r for r in sarif if r["ruleId"] == "LIB101"]
    libraries = {r["owner"]["library"] for r in theirs
                 if any(f["severity"] == "info" for f in r["findings"])}
    assert sorted(n["properties"]["data"]["library"] for n in notes) == sorted(libraries)
    assert not [r for r in sarif if r["ruleId"] != "LIB101" and r["level"] == "note"
                and any(r["message"]["text"].startswith(k["kernel"]) for k in theirs)]
    durations = {}
    for e in kernel_events(path):
        key = (e["name"], tuple(e["args"]["grid"]), tuple(e["args"]["block"]))
        durations[key] = durations.get(key, 0) + e["dur"] * 1000
    for n in notes:
        data = n["properties"]["data"]
        groups = [r for r in theirs if r["owner"]["library"] == data["library"]
                  and any(f["severity"] == "info" for f in r["findings"])]
        assert data["groups"] == len(groups)
        assert data["kernel_time_ns"] == pytest.approx(
            sum(durations[(r["kernel"], tuple(r["grid"]), tuple(r["block"]))]
                for r in groups), abs=len(groups))
        assert sum(data["rules"].values()) == sum(
            1 for r in groups for f in r["findings"] if f["severity"] == "info")
    from occlint.reporters import github

    assert "; 4 LIB101 notes hold the 140 facts about library and framework kernels" in \
        github.summary(doc)


def test_lib101_follows_the_selection():
    """--ignore LIB101 drops the notes (the JSON keeps every finding either way)."""
    doc = execute(Options(paths=[str(KINETO / "links.pt.trace.json.gz")], isolated=True,
                          ignore=["LIB101"])).doc
    assert not [r for r in results(doc) if r["ruleId"] == "LIB101"]
    assert any(f["severity"] == "info" for r in doc["launches"]
               if r["owner"]["kind"] == "library" for f in r["findings"])
