"""``--format json`` output validates against docs/schema/occlint-report.schema.json, and the
schema is strict enough to catch mistakes (missing keys, typos, wrong types)."""

from __future__ import annotations

import copy
import importlib.util
import json

import jsonschema
import pytest

from tests.conftest import REPO, run_occlint

SCHEMA_PATH = REPO / "docs" / "schema" / "occlint-report.schema.json"
GAMMA = "fixtures/amd/co/gamma.gfx1100.hsaco"
LAUNCH = ["--device", "w7800", "--block", "256", "--grid", "1000"]
HAS_NVIDIA = importlib.util.find_spec("occlint.readers.nvidia") is not None

CASES = {
    "amd-code-objects": ["fixtures/amd/co"],
    "amd-containers": ["fixtures/amd/containers"],
    "amd-launch-multi-device": [GAMMA, "fixtures/amd/co/gamma.gfx90a.hsaco", "--device", "w7800",
                                "--device", "mi300x", "--block", "256", "--grid", "1000",
                                "--dynamic-lds", "1024"],
    "amd-problem-size": [GAMMA, "--device", "w7800", "--problem-size", "1000000"],
    "amd-arch-only": [GAMMA, "--device", "gfx1100"],
    "errors-and-artifacts": [GAMMA, "fixtures/amd/containers/gamma.rdc_new_driver.o",
                             "fixtures/amd/containers/gamma.rdc_old_driver.o",
                             "README.md", "fixtures/missing.hsaco"],
    "only-errors": ["README.md", "fixtures/missing.hsaco"],
    "nvidia": ["fixtures/nvidia"],
    "nvidia-devices": ["fixtures/nvidia", "--device", "h100", "--device", "rtx4090",
                       "--problem-size", "1000000"],
    "nvidia-launch": ["fixtures/nvidia", "--device", "a100", "--block", "128", "--grid", "77"],
    "traces": ["fixtures/traces"],
    "trace-joined": ["fixtures/traces/kineto/raw_odd.pt.trace.json.gz",
                     "fixtures/traces/kineto/odd_launches.sm_90.cubin"],
    # template instantiations with their source: each one's facts, a pinned width (-2)
    "templates-traced": ["fixtures/traces/templates/h200/templates.pt.trace.json.gz",
                         "fixtures/sources/templates.cu"],
    "templates-binary": ["fixtures/ptx/templates.sm_90.cubin", "fixtures/sources/templates.cu",
                         "--device", "h100", "--block", "32", "--grid", "65536"],
    # launch sites the model prices from source alone (a site's "model"), and their fixes
    "sites-priced": ["tests/sources/site_priced.cu", "tests/sources/cases/block_roles.cu",
                     "--device", "h100"],
}


@pytest.fixture(scope="module")
def schema():
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def validator(schema):
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def report(*args: str, cwd=REPO) -> dict:
    result = run_occlint(*args, "--format", "json", cwd=cwd)
    assert result.code in (0, 1, 2), result.err
    return json.loads(result.out)


def assert_valid(validator, doc: dict) -> None:
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    assert not errors, [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"[:300]
                        for e in errors[:5]]


def test_schema_is_draft_2020_12_with_id(schema):
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].endswith("/docs/schema/occlint-report.schema.json")
    assert schema["properties"]["schema_version"] == {**schema["properties"]["schema_version"],
                                                      "const": 1}
    assert schema["additionalProperties"] is False
    for key in ("kernels", "findings", "summary", "settings", "errors", "inputs"):
        assert key in schema["required"]
        assert schema["properties"][key].get("description") or \
            schema["properties"][key].get("$ref")
    from occlint.pipeline.document import SCHEMA_VERSION

    assert SCHEMA_VERSION == 1


@pytest.mark.parametrize("case", list(CASES))
def test_real_outputs_validate(case, validator):
    if case.startswith("nvidia") and not HAS_NVIDIA:
        pytest.skip("occlint.readers.nvidia is not available in this checkout")
    doc = report(*CASES[case])
    assert_valid(validator, doc)
    if case == "errors-and-artifacts":
        assert doc["errors"] and doc["artifacts"] and doc["findings"]
    if case == "amd-launch-multi-device":
        # gfx90a runs on neither device: analysed for gfx90a itself, said once (DEV105)
        assert {k["device"] for k in doc["kernels"]} == {"AMD Radeon PRO W7800", None}
        assert any(f["rule"] == "DEV105" for f in doc["findings"])
    if case.startswith("nvidia"):
        assert doc["kernels"] and {k["vendor"] for k in doc["kernels"]} == {"nvidia"}


def test_baseline_run_validates(validator, tmp_path):
    baseline = tmp_path / "baseline.json"
    assert run_occlint(GAMMA, *LAUNCH, "--write-baseline", str(baseline), cwd=REPO).code == 0
    # the launch is fixed: both baseline entries are stale; another file brings new findings
    doc = report(GAMMA, "fixtures/amd/co/suite.gfx1100.hsaco", "--device", "w7800",
                 "--block", "256", "--grid", "2800", "--baseline", str(baseline))
    assert_valid(validator, doc)
    assert doc["baseline"]["suppressed"] == 0 and len(doc["baseline"]["stale"]) == 2
    doc = report(GAMMA, *LAUNCH, "--baseline", str(baseline))
    assert_valid(validator, doc)
    assert doc["baseline"]["suppressed"] == 2 and doc["summary"]["findings"]["total"] == 0


def test_config_settings_validate(validator, tmp_path):
    (tmp_path / "occlint.toml").write_text(
        'devices = ["w7800"]\nfail-on = "info"\nignore = ["LCH101"]\n'
        'severity = { LCH103 = "error" }\n'
        '[launch."gamma_correction*"]\nblock = 256\ngrid = 1000\n')
    doc = report(str(REPO / GAMMA), cwd=tmp_path)
    assert_valid(validator, doc)
    (finding,) = doc["kernels"][0]["findings"]
    assert finding["rule"] == "LCH103" and finding["severity"] == "error"


MUTATIONS = {
    "missing top-level key": lambda d: d.pop("summary"),
    "unknown top-level key": lambda d: d.__setitem__("kernel", []),
    "schema version 2": lambda d: d.__setitem__("schema_version", 2),
    "bad severity": lambda d: d["kernels"][0]["findings"][0].__setitem__("severity", "warn"),
    "bad rule code": lambda d: d["kernels"][0]["findings"][0].__setitem__("rule", "lch101"),
    "finding without advice key": lambda d: d["kernels"][0]["findings"][0].pop("advice"),
    "typo in finding": lambda d: d["kernels"][0]["findings"][0].__setitem__("mesage", "x"),
    "occupancy above 1": lambda d: d["kernels"][0]["occupancy"].__setitem__("occupancy", 1.5),
    "string count": lambda d: d["summary"]["findings"].__setitem__("total", "2"),
    "unknown fail_on": lambda d: d["settings"].__setitem__("fail_on", "warnings"),
    "advice typo": lambda d: d["kernels"][0]["advice"].__setitem__("recomended_block", 128),
    "resources of both vendors": lambda d: d["kernels"][0]["resources"].__setitem__(
        "registers", 10),
}


@pytest.fixture(scope="module")
def launch_doc(validator) -> dict:
    """One valid report (two warnings on one kernel) for every mutation to break."""
    doc = report(GAMMA, *LAUNCH)
    assert_valid(validator, doc)
    return doc


@pytest.mark.parametrize("mutation", list(MUTATIONS))
def test_schema_catches_mistakes(mutation, validator, launch_doc):
    broken = copy.deepcopy(launch_doc)
    MUTATIONS[mutation](broken)
    assert list(validator.iter_errors(broken)), mutation
