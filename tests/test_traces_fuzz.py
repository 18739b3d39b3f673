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
