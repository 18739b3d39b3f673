"""Without a baseline, the run keeps of each kernel finding only its Tally (rule, name,
severity; the record holds it whole): the summary and the exit code are those that the
records' findings give; with a baseline the findings stay whole."""

from __future__ import annotations

from collections import Counter

import pytest

from occlint.model.finding import Finding, Tally
from occlint.pipeline.run import Options, execute, read_all
from occlint.pipeline.setup import Setup
from tests.conftest import FIXTURES

PATHS = [str(FIXTURES / "amd/co"), str(FIXTURES / "nvidia")]


@pytest.mark.parametrize("jobs", [1, 2])
def test_summary_counts_the_records_findings(jobs):
    out = execute(Options(paths=PATHS, isolated=True, jobs=jobs, exit_zero=True))
    doc = out.doc
    found = [f for k in doc["kernels"] for f in k["findings"]] + doc["findings"]
    assert found, "the fixtures have kernel findings"
    counts = doc["summary"]["findings"]
    assert counts["total"] == len(found)
    assert counts["by_severity"] == {s: sum(f["severity"] == s for f in found)
                                     for s in ("error", "warning", "info")}
    assert {r["rule"]: r["count"] for r in counts["by_rule"]} == \
        Counter(f["rule"] for f in found)


@pytest.mark.parametrize(("baseline", "kind"), [(None, Tally), ("b.json", Finding)])
def test_kernel_findings_whole_only_for_a_baseline(baseline, kind, tmp_path):
    from occlint.config import load_config

    opts = Options(paths=PATHS, isolated=True, jobs=1,
                   write_baseline=str(tmp_path / baseline) if baseline else None)
    cfg = load_config(None, True)
    setup = Setup.build(opts, cfg)
    sections = read_all(_candidates(opts), 1, setup, opts, cfg, None)
    kept = [f for fs in sections.kernel_findings for f in fs]
    assert kept and all(type(f) is kind for f in kept)


def _candidates(opts: Options):
    from occlint.pipeline.inputs import expand_paths

    return expand_paths(opts.paths, [], [])[0]
