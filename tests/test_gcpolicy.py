"""The collector's settings for a run (occlint.pipeline.gcpolicy): what a command holds at
its end is frozen, out of the collections the interpreter makes as it exits."""

from __future__ import annotations

import gc

import pytest


def test_what_a_run_holds_is_left_out_of_the_exit_collections(monkeypatch):
    from occlint.cli import main as cli_main

    held: list[list[int]] = []
    monkeypatch.setattr(cli_main.cli, "main",
                        lambda **_: held.extend([i] for i in range(1000)) or 0)
    thresholds = gc.get_threshold()
    try:
        with pytest.raises(SystemExit) as exit_:
            cli_main.main(["--version"])
        assert exit_.value.code == 0
        # made after the start's freeze (gcpolicy.relax), frozen at the end: in no
        # generation the collector traverses
        collected = {id(o) for o in gc.get_objects()}
        assert len(held) == 1000 and all(gc.is_tracked(x) for x in held)
        assert not any(id(x) in collected for x in held)
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
