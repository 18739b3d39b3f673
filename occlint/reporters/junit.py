"""``--format junit``: JUnit XML for the test tabs of Jenkins, GitLab, Azure and others.

Layout::

    <testsuites name="occlint" tests= failures= errors=>
      <testsuite name="build/k.hsaco" tests= failures= errors=>    one per input file
        <testcase classname="build/k.hsaco"
                  name="k(float*) [gfx942] @ MI300X: OCC101 vgpr-limited">
          <failure type="OCC101" message="...">details</failure>  one per finding >= fail_on
          <system-out>findings below fail_on</system-out>           (on the kernel's first)
        </testcase>
        <testcase name="k2(int) [gfx942] @ MI300X"/>               a kernel without failures
        <testcase name="BIN103 llvm-bitcode [entry]"/>            input-level findings
        <testcase name="read [entry]"><error message="..."/></testcase>
                                                 input errors with no IO101 finding

Per kernel record (kernel x device) and per launch group of a trace: one testcase for each
finding at or above the run's ``fail_on`` (none when it is ``never``), named after the
kernel and the rule, with its one ``failure``; one passing testcase when there is none. A
testcase never holds two failures (test viewers show one per case). The ``failures``
attributes count failed testcases (the JUnit convention), which here equals the failing
findings.
Built with xml.etree (escaping for free); characters XML 1.0 cannot carry are replaced.
No timestamps or durations: the output is deterministic.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from occlint.reporters.sarif import RANK, message_text, repo_path
from occlint.reporters.units import launch_dims

# characters not allowed in XML 1.0 documents
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _x(value: Any) -> str:
    return _INVALID_XML.sub("\ufffd", str(value))


def _fails(severity: str, fail_on: str) -> bool:
    return fail_on in RANK and RANK.get(severity, 0) >= RANK[fail_on]


def _details(f: dict[str, Any]) -> str:
    lines = [f"{f['rule']} {f['name']} ({f['severity']}): {message_text(f)}"]
    if f.get("line") is not None:
        lines.append(f"at: {f['file']}:{f['line']}:{f['column']}")
    if f.get("source"):
        lines.append(f"source: {f['source'].get('path') or f['source']['file']}:"
                     f"{f['source']['line']}")
    for key in ("kernel", "arch", "device", "entry"):
        if f.get(key):
            lines.append(f"{key}: {f[key]}")
    return "\n".join(lines)


class _Suite:
    def __init__(self, name: str):
        self.element = ET.Element("testsuite", {"name": _x(name)})
        self.tests = self.failures = self.errors = 0

    def case(self, classname: str, name: str) -> ET.Element:
        self.tests += 1
        return ET.SubElement(self.element, "testcase",
                             {"classname": _x(classname), "name": _x(name)})

    def add_findings(self, classname: str, name: str, findings: list[dict[str, Any]],
                     fail_on: str) -> None:
        """One testcase per finding at or above ``fail_on``, each with its one ``failure``
        (named ``NAME: RULE rule-name``), or one passing testcase ``NAME`` when none is; the
        findings below ``fail_on`` go to the first testcase's ``system-out``."""
        failing = [f for f in findings if _fails(f["severity"], fail_on)]
        cases = [self.failed_case(classname, f"{name}: {f['rule']} {f['name']}", f)
                 for f in failing]
        first = cases[0] if cases else self.case(classname, name)
        passing = [f for f in findings if not _fails(f["severity"], fail_on)]
        if passing:
            out = ET.SubElement(first, "system-out")
            out.text = _x("\n".join(_details(f) for f in passing))

    def failed_case(self, classname: str, name: str, f: dict[str, Any]) -> ET.Element:
        case = self.case(classname, name)
        failure = ET.SubElement(case, "failure", {"type": _x(f["rule"]),
                                                  "message": _x(f["message"])})
        failure.text = _x(_details(f))
        self.failures += 1
        return case

    def finish(self) -> ET.Element:
        self.element.set("tests", str(self.tests))
        self.element.set("failures", str(self.failures))
        self.element.set("errors", str(self.errors))
        return self.element


def _kernel_case_name(k: dict[str, Any]) -> str:
    name = f"{k.get('demangled') or k['name']} [{k.get('target_id') or k.get('arch')}]"
    if k.get("device"):
        name += f" @ {k['device']}"
    if k.get("entry"):
        name += f" ({k['entry']})"
    return name


def junit_tree(doc: dict[str, Any]) -> ET.Element:
    fail_on = (doc.get("settings") or {}).get("fail_on") or "warning"
    suites: dict[str, _Suite] = {}

    def suite(file: str) -> _Suite:
        path = repo_path(file)
        if path not in suites:
            suites[path] = _Suite(path)
        return suites[path]

    for i in doc.get("inputs") or []:
        suite(i["path"])
    for k in doc.get("kernels") or []:
        suite(k["file"]).add_findings(repo_path(k["file"]), _kernel_case_name(k),
                                      k.get("findings") or [], fail_on)
    for launch in doc.get("launches") or []:
        s = suite(launch["trace"])
        name = (f"{launch['kernel']} <<<{launch_dims(launch['grid'])}, "
                f"{launch_dims(launch['block'])}>>> x{launch['count']}"
                + (f" @ {launch['device']}" if launch.get("device") else ""))
        s.add_findings(repo_path(launch["trace"]), name, launch.get("findings") or [], fail_on)
    io_reported = set()
    for f in doc.get("findings") or []:
        s = suite(f["file"])
        name = f"{f['rule']} {f['name']}" + (f" [{f['entry']}]" if f.get("entry") else "")
        if f.get("line") is not None:  # a source launch site: where it is
            name = f"{f['rule']} {f['name']} at {f['line']}:{f['column']}" + (
                f" ({f['kernel']})" if f.get("kernel") else "")
        if _fails(f["severity"], fail_on):
            case = s.failed_case(repo_path(f["file"]), name, f)
        else:
            case = s.case(repo_path(f["file"]), name)
            ET.SubElement(case, "system-out").text = _x(_details(f))
        if f.get("line") is not None:
            case.set("file", _x(repo_path(f["file"])))
            case.set("line", str(f["line"]))
        if f["rule"] == "IO101":
            io_reported.add((f["file"], f.get("entry"), f["message"]))
    for e in doc.get("errors") or []:
        if (e["file"], e.get("entry"), e["message"]) in io_reported:
            continue
        s = suite(e["file"])
        case = s.case(repo_path(e["file"]),
                      "read" + (f" [{e['entry']}]" if e.get("entry") else ""))
        ET.SubElement(case, "error", {"type": "unreadable-input",
                                      "message": _x(e["message"])})
        s.errors += 1

    root = ET.Element("testsuites", {"name": "occlint"})
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for s in suites.values():
        root.append(s.finish())
        totals["tests"] += s.tests
        totals["failures"] += s.failures
        totals["errors"] += s.errors
    for key, value in totals.items():
        root.set(key, str(value))
    return root


def render(doc: dict[str, Any], **_: Any) -> str:
    root = junit_tree(doc)
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") \
        + "\n"
