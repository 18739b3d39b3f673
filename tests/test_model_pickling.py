"""The model's slotted dataclasses pickle as their class and fields (occlint.model.pickling):
what worker processes send back comes back equal, through the short form."""

from __future__ import annotations

import pickle

import pytest

from occlint.model.finding import Finding
from occlint.model.pickling import by_fields
from occlint.model.source import LaunchSite, Param, SourceFile, SourceKernel, Span, Suppression
from occlint.pipeline.outcome import InputOutcome


def _source() -> SourceFile:
    span = Span(3, 5, 3, 40)
    block = Param("dim3(16, 16)", span, (16, 16, 1))
    grid = Param("(n + 255) / 256", span, (None, 1, 1), 256, "'n' is a function parameter")
    return SourceFile("a.cu", 120, [SourceKernel("k", span, "per-element", (256, None))],
                      [LaunchSite("k", "k<float>", "<<<>>>", span, grid, block, None, "s")],
                      [Suppression(2, ("LCH001",), True)], [Span(9, 1, 9, 4)], False, "nvidia")


def test_models_and_findings_round_trip_through_their_fields():
    source = _source()
    finding = Finding("LCH001", "name", "warning", "message", "a.cu", line=3, column=5,
                      data={"block": 256})
    outcome = InputOutcome({"path": "a.cu"}, (), 0, [], [], [], [finding], True,
                           source={"path": "a.cu"}, source_model=source)
    again = pickle.loads(pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL))
    assert again == outcome and again.source_model == source
    assert again.input_findings == [finding]
    for value in (source, source.kernels[0], source.launches[0], source.launches[0].block,
                  source.suppressions[0], finding, outcome):
        cls, fields = value.__reduce__()
        assert cls is type(value) and cls(*fields) == value


def test_a_field_outside_init_is_refused():
    from dataclasses import dataclass, field

    with pytest.raises(TypeError):
        @by_fields
        @dataclass
        class Hidden:
            shown: int
            hidden: int = field(init=False, default=0)


def test_one_field():
    from dataclasses import dataclass

    @by_fields
    @dataclass(frozen=True, slots=True)
    class One:
        value: tuple[int, int]

    assert One((1, 2)).__reduce__() == (One, ((1, 2),))
