"""The package's folders show the pipeline, and imports follow it.

readers -> model -> analysis (occupancy, launches) -> judgement (advice, cost) -> rules ->
pipeline -> reporters -> CLI: a module imports only from its own stage or earlier ones
(module-level and deferred imports alike), so there are no import cycles between stages.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "occlint"

# (stage, packages/modules in it), earliest first
STAGES = [
    ("basics", ["occlint", "occlint.errors", "occlint.tomlfile", "occlint.devices",
                "occlint.model"]),
    ("readers", ["occlint.readers"]),
    ("occupancy", ["occlint.occupancy"]),
    ("analysis", ["occlint.analysis"]),
    ("judgement", ["occlint.judgement"]),
    ("rules", ["occlint.rules"]),
    ("pipeline", ["occlint.config", "occlint.pipeline"]),
    ("reporters", ["occlint.reporters"]),
    ("entry points", ["occlint.cli", "occlint.validate", "occlint.__main__"]),
]


def stage_of(module: str) -> int:
    best, rank = -1, -1
    for i, (_, prefixes) in enumerate(STAGES):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, rank = len(p), i
    return rank


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(source: str, module: str, is_package: bool = False) -> list[tuple[int, str]]:
    """(line, module) of every import of occlint in ``source``, the text of ``module``."""
    tree = ast.parse(source)
    package = module if is_package else module.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.startswith("occlint")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            if name.startswith("occlint"):
                if name == "occlint":  # from occlint import x: the submodule x
                    out += [(node.lineno, f"occlint.{a.name}") for a in node.names]
                else:
                    out.append((node.lineno, name))
    return out


def test_every_module_has_a_stage():
    missing = [module_name(p) for p in PACKAGE.rglob("*.py")
               if stage_of(module_name(p)) < 0]
    assert not missing


def violations(source: str, here: str, is_package: bool = False) -> list[str]:
    wrong = []
    for line, target in imports(source, here, is_package):
        if target == "occlint" or stage_of(target) <= stage_of(here):
            continue
        wrong.append(f"{here}:{line} ({STAGES[stage_of(here)][0]}) imports {target} "
                     f"({STAGES[stage_of(target)][0]})")
    return wrong


def test_imports_go_to_the_same_or_an_earlier_stage():
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        wrong += violations(path.read_text(encoding="utf-8"), module_name(path),
                            path.name == "__init__.py")
    assert not wrong, "\n".join(wrong)


def test_top_level_holds_only_entry_points_and_shared_basics():
    loose = sorted(p.name for p in PACKAGE.glob("*.py"))
    # processes.py: how worker processes start, for the inputs' pool (pipeline) and a split
    # trace's (readers) alike
    assert loose == ["__init__.py", "__main__.py", "config.py", "errors.py", "processes.py",
                     "tomlfile.py"]


def test_the_check_can_fail():
    """Deferred, relative and ``from occlint import`` imports of a later stage are caught;
    imports of the same or an earlier stage are not."""
    source = ("from occlint.model.finding import Finding\n"
              "def f():\n"
              "    from occlint.pipeline.run import execute\n"
              "    from ..rules import engine\n"
              "    from occlint import reporters\n"
              "    from .formats import ELF_MAGIC\n")
    found = violations(source, "occlint.readers.loader")
    assert [w.split(" imports ")[1].split(" ")[0] for w in found] == [
        "occlint.pipeline.run", "occlint.rules", "occlint.reporters"]
