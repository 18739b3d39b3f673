"""benchmarks/scale.py measures on downloads (not in CI); its in-process probes and its
report rendering are checked here on the fixtures, so that they keep working."""

from __future__ import annotations

import argparse
import json

from benchmarks import scale
from tests.conftest import FIXTURES, REPO


def test_stage_and_encoder_probes_run(tmp_path):
    stages = scale.python_snippet(scale.STAGES, str(FIXTURES / "amd/co"), "w7800")
    assert set(stages) == {"walk", "sniff", "read", "analyse", "rules", "record", "encode"}
    assert stages["read"] > 0
    run = scale.measure([*scale.OCCLINT, str(FIXTURES / "amd/co"), "--format", "json", "-o",
                         str(tmp_path / "out.json"), "--exit-zero"], scale._env())
    assert run.code == 0 and run.wall > 0 and run.rss_mb > 0
    encoders = scale.python_snippet(scale.ENCODERS, str(tmp_path / "out.json"))
    assert encoders["equal"] is True


def test_report_renders_from_saved_results(tmp_path):
    sample = scale.Sample(2.0, 3.0, 100.0, 150.0, 0, other_cpu=0.1)
    report = scale.Report(rows=[scale.Row("flashinfer", "occlint", 10000, sample, 3),
                                scale.Row("the same, as the .whl", "occlint", 10000, sample, 3)],
                          timings={"occlint --version": [50.0, 60.0],
                                   f"occlint {scale.SMALL_FILE}": [100.0]},
                          stages={"read": 1.0, "encode": 0.5},
                          encoders={"json.dumps": 2.0, "occlint.jsonenc": 1.0, "equal": True},
                          profiles=7, profiled=900)
    machine = {"cpu": "x", "cores": 2, "memory": "1 GiB", "system": "s", "python": "3",
               "commit": "c", "date": "d", "load_before": 0.1, "load_after": 0.2}
    saved = tmp_path / "results.json"
    saved.write_text(json.dumps({"quick": False, "runs": 3, "machine": machine,
                                 "report": scale.dataclasses.asdict(report)}))
    again, machine_again = scale.load_results(json.loads(saved.read_text()))
    text = scale.markdown(again, machine_again, argparse.Namespace(quick=False, runs=3))
    assert "| ≥ 5,000 kernels/s into JSON (flashinfer, extracted) | 5,000 kernels/s | yes |" \
        in text
    assert "900 flashinfer kernels that run on a B200 have 7 distinct" in text
    assert "(2.0x)" in text and str(REPO) not in text
