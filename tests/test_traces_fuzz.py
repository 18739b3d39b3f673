"""A short deterministic pass of the trace-reader fuzzer (benchmarks/fuzz_traces.py): no
mutated trace may raise, give a multi-line error or take over 10 s."""

from __future__ import annotations

import pytest

from benchmarks.fuzz_traces import mutate, run


@pytest.mark.parametrize("seed", [1, 2])
def test_quick_trace_fuzz_pass(seed):
    assert run(seed, 400) == []


def test_mutation_changes_inputs_reproducibly():
    import random

    data = b'{"traceEvents": [{"ph": "X", "cat": "kernel", "ts": 1}]}' * 4
    a = mutate(random.Random(5), "t.json", data)
    b = mutate(random.Random(5), "t.json", data)
    assert a == b and a != data


def test_an_event_not_utf8_in_a_key_the_fast_path_skips_is_one_error_line(tmp_path, occlint):
    """Fuzz seed 1, input 503 (--inputs 600): invalid UTF-8 in a key of a kernel event's
    args that the typed decoder skips reached json.loads and raised UnicodeDecodeError."""
    event = (b'{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1000.5,"dur":2.0,'
             b'"args":{"device":0,"stream":7,"corr\xc3(elation":16,"registers per thread":16,'
             b'"shared memory":0,"blocks per SM":1.0,"warps per SM":4.0,"grid":[8,1,1],'
             b'"block":[128,1,1],"est. achieved occupancy %":6}}')
    path = tmp_path / "t.pt.trace.json"
    path.write_bytes(b'{"traceEvents":[' + event + b']}')
    run = occlint(str(path))
    assert run.code == 2 and "Traceback" not in run.err
    assert run.err.count("\n") == 1 and run.err.startswith(f"occlint: error: {path}: ")
