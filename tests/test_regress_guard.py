"""benchmarks/regress.py times real downloads (not in CI); what decides its verdict is
checked here: the figures recorded in docs/performance.md are read back, and a figure more
than the tolerance above its record, or a different count, fails."""

from __future__ import annotations

from benchmarks import regress


def result(name: str, count: int, ratio: float) -> dict:
    return {"name": name, "what": f"the {name} input", "count": count, "ratio": ratio,
            "ratios": [ratio], "cpu": [ratio], "reference_cpu": [1.0],
            "reference": "cuobjdump" if name == "cubins" else "python", "speed": 2.0}


def test_docs_record_every_figure():
    recorded = regress.recorded(regress.DOC.read_text(encoding="utf-8"))
    assert set(recorded) == {item.name for item in regress.ITEMS} | set(regress.TREE_ITEMS)
    assert all(count > 0 and ratio > 0 for count, ratio in recorded.values())


def test_a_written_table_reads_back():
    results = [result("cubins", 792, 1.6084), result("rocsparse", 88137, 30.5)]
    text = "before\n" + regress.table(results, "meta") + "\nafter\n"
    assert regress.recorded(text) == {"cubins": (792, 1.608), "rocsparse": (88137, 30.5)}


def test_verdicts():
    old = (88137, 30.0)
    assert regress.compare(result("rocsparse", 88137, 34.0), old, 0.15)[1] is None
    verdict, failure = regress.compare(result("rocsparse", 88137, 34.6), old, 0.15)
    assert failure and "REGRESSION" in verdict
    assert regress.compare(result("rocsparse", 88136, 20.0), old, 0.15)[1] == \
        "count 88,136, recorded 88,137"
    assert regress.compare(result("rocsparse", 1, 1.0), None, 0.15) == ("no record", None)
