#!/usr/bin/env python3
"""Recall of occlint's source reader on public trees, against an independent count.

    python3 benchmarks/source_recall.py NAME=PATH [NAME=PATH ...] [--list]

Each PATH is a checkout of a public tree (pinned by commit in :data:`TREES`; bring one
with ``git archive COMMIT`` of a clone; nothing is downloaded here). The independent count
is a deliberately simple scan that shares no code with occlint: comments and string
literals are blanked by one regular expression, then every ``<<<`` and every call of a
launch API (``hipLaunchKernelGGL(``, ``cudaLaunchKernel(``, ...) is a launch site, except
the definitions of the API names themselves (``#define hipLaunchKernelGGL(``) and a
``<<<`` whose kernel is a parameter of the ``#define`` it sits in (a wrapper: its uses are
the sites). Its block argument is evaluated by a second, regex-only evaluator: integer
literals, ``dim3(...)`` of them, and names bound once in the file by ``#define N value``,
``const``/``constexpr``/``static const`` ``int N = value;`` or ``dim3 N(...)``.

For every site the scan finds, occlint must report a launch on that line (recall), and
where both evaluate the block, the values must agree (no wrong value); where only the
scan determines it, occlint's missing value is listed. ``--list`` prints every
disagreement for review by hand (docs/performance.md says what the review found).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# the trees the figures in docs/performance.md were measured on (name -> repo, commit, dir)
TREES = {
    "llm.c": ("karpathy/llm.c", "f1e2ace651495b74ae22d45d1723443fd00ecd3a", ""),
    "cuda-samples": ("NVIDIA/cuda-samples", "c94ff366aed18c797b8a85dfaac7817b0228b420", ""),
    "rocm-examples": ("ROCm/rocm-examples", "7dfb7d402794c33031be2847eaa06ee6732f07cb", ""),
    "HIP-Examples": ("ROCm/HIP-Examples", "cdf9d101acd9a3fc89ee750f73c1f1958cbd5cc3", ""),
    "HPCTrainingExamples": ("amd/HPCTrainingExamples",
                            "aaaa72d4dca9a9c3587be883deaf2d0f109fcbfb", ""),
    "ggml-cuda": ("ggml-org/ggml", "d99724f2b141fed9e1a9f402213506c081433465",
                  "src/ggml-cuda"),
}
SUFFIXES = (".cu", ".cuh", ".hip", ".cpp", ".cc", ".cxx", ".h", ".hpp")
_NOISE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"', re.S)
_API = re.compile(r"\b(hipLaunchKernelGGL|(?:cuda|hip)Launch(?:Cooperative)?Kernel(?:Ex)?)"
                  r"\s*(?:<[^;()]*>)?\s*\(")
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)(\([^)]*\))?((?:\\\n|[^\n])*)", re.M)
_INT = re.compile(r"^\s*\(?\s*(\d+)[uUlL]*\s*\)?\s*$")


def blank(text: str) -> str:
    """Comments and strings as spaces (newlines kept: lines stay where they are)."""
    return _NOISE.sub(lambda m: re.sub(r"[^\n]", " ", m[0]), text)


def split_args(text: str, start: int, close: str) -> tuple[list[str], int]:
    """Top-level comma-separated arguments from ``start`` up to the closing ``close``."""
    depth, args, cur, i = 0, [], [], start
    while i < len(text):
        if text.startswith(close, i) and depth == 0:
            args.append("".join(cur))
            return args, i
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth < 0:
                break
        if c == "," and depth == 0:
            args.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    return [], -1


class Names:
    """Names bound once in a file, by the simplest regexes."""

    def __init__(self, code: str):
        self.values: dict[str, list[str]] = {}
        for m in _DEFINE.finditer(code):
            if not m[2]:
                self.values.setdefault(m[1], []).append(m[3].replace("\\\n", " "))
        for m in re.finditer(r"\b(?:const|constexpr)\s+(?:unsigned\s+|signed\s+)?"
                             r"(?:int|size_t|unsigned|long|short|uint32_t|int32_t)\s+"
                             r"(\w+)\s*=\s*([^;]+);", code):
            self.values.setdefault(m[1], []).append(m[2])
        for m in re.finditer(r"\bdim3\s+(\w+)\s*\(([^;]*)\)\s*;", code):
            self.values.setdefault(m[1], []).append(f"dim3({m[2]})")
        for m in re.finditer(r"\bdim3\s+(\w+)\s*=\s*([^;]*);", code):
            self.values.setdefault(m[1], []).append(m[2])
        self.assigned = {m[1] for m in re.finditer(r"\b(\w+)\s*(?:[-+*/|&]?=(?!=)|\+\+|--)",
                                                   code)}

    def value(self, expr: str, depth: int = 0) -> int | None:
        """Threads in all, when the expression is a literal, dim3 of literals or a name
        bound once to one (products only: the scan is kept simple on purpose)."""
        expr = expr.strip()
        if depth > 8:
            return None
        m = _INT.match(expr)
        if m:
            return int(m[1])
        m = re.fullmatch(r"(?:dim3\s*)?[({]([^(){}]*)[)}]", expr) or \
            re.fullmatch(r"dim3\s*\((.*)\)", expr)
        if m and expr.startswith(("dim3", "{")):
            parts, _ = split_args(m[1] + ")", 0, ")")
            vals = [self.value(p, depth + 1) for p in parts]
            if not parts or len(parts) > 3 or None in vals:
                return None
            out = 1
            for v in vals:
                out *= v  # type: ignore[operator]
            return out
        m = re.fullmatch(r"\(?\s*(\w+)\s*\*\s*(\w+)\s*\)?", expr)
        if m:
            a, b = self.value(m[1], depth + 1), self.value(m[2], depth + 1)
            return a * b if a is not None and b is not None else None
        if re.fullmatch(r"\w+", expr):
            bound = self.values.get(expr, [])
            if len(bound) == 1 and (expr not in self.assigned or expr.isupper()):
                return self.value(bound[0], depth + 1)
        return None


_CONDITION = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b[ \t]*(.*)$")
_GUARDED = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]*(\S*)[ \t]*$")


def dead_lines(code: str) -> set[int]:
    """1-based lines in branches the file itself rules out, by a line-by-line reading of
    its own: ``#if 0``, and ``#if N`` / ``#ifdef N`` / ``#ifndef N`` / ``#if defined(N)``
    where N was #defined (to nothing or an integer) outside every conditional group but
    include guards (``#ifndef G`` then ``#define G``); every other condition is unknown
    and all of its branches are live."""
    fixed: dict[str, int] = {}
    stack: list[dict] = []  # per group: state of the branch (True/False/None), taken, guard
    dead: set[int] = set()
    for number, line in enumerate(code.split("\n"), 1):
        m = _CONDITION.match(line)
        if m:
            kind, arg = m[1], m[2].strip()
            if kind in ("if", "ifdef", "ifndef"):
                value = _condition(kind, arg, fixed)
                stack.append({"state": value, "taken": value is True, "guard": None,
                              "name": arg if kind == "ifndef" and value is None else None})
            elif stack and kind in ("elif", "else"):
                group = stack[-1]
                group["state"] = False if group["taken"] else (
                    None if kind == "elif" or group["state"] is None else True)
                group["taken"] = group["taken"] or group["state"] is True
                group["name"] = None
            elif stack and kind == "endif":
                stack.pop()
            continue
        if any(g["state"] is False for g in stack):
            dead.add(number)
            continue
        d = _GUARDED.match(line)
        if not d:
            continue
        if stack and stack[-1]["name"] == d[1] and not d[2]:
            stack[-1]["guard"] = True  # `#ifndef G` / `#define G`: an include guard
        elif all(g["guard"] for g in stack) and re.fullmatch(r"\(?\d*\)?", d[2]):
            fixed[d[1]] = int(d[2].strip("()") or 1)
    return dead


def _condition(kind: str, arg: str, fixed: dict[str, int]) -> bool | None:
    if kind == "if" and re.fullmatch(r"\(?0\)?", arg):
        return False
    m = re.fullmatch(r"(!?)\s*(?:defined\s*\(\s*(\w+)\s*\)|(\w+))", arg) if kind == "if" \
        else re.fullmatch(r"()(\w+)()", arg)
    name = (m[2] or m[3]) if m else None
    if name is None or name not in fixed:
        return None
    if kind == "if":
        value = True if m[2] else bool(fixed[name])
        return not value if m[1] else value
    return kind == "ifdef"


def scan(text: str) -> list[tuple[int, str | None, int | None]]:
    """(line, block text, block value) of every launch site the simple scan sees, but
    those in branches the file rules out (:func:`dead_lines`)."""
    code = blank(text)
    names = Names(code)
    dead = dead_lines(code)
    wrappers = []  # spans of #define bodies whose launch is of a macro parameter
    for m in _DEFINE.finditer(code):
        params = set(re.findall(r"\w+", m[2] or ""))
        body = m[3].replace("\\\n", " \n")
        k = re.search(r"(\w+)\s*(?:<[^<>]*>)?\s*<<<", body)
        if k and k[1] in params:
            wrappers.append((m.start(3), m.end(3)))
    out = []
    for m in re.finditer(r"<<<", code):
        if any(a <= m.start() < b for a, b in wrappers):
            continue
        args, _ = split_args(code, m.end(), ">>>")
        block = args[1].strip() if len(args) > 1 else None
        out.append((code.count("\n", 0, m.start()) + 1, block,
                    names.value(block) if block else None))
    for m in _API.finditer(code):
        line_start = code.rfind("\n", 0, m.start()) + 1
        if re.match(r"[ \t]*#[ \t]*define", code[line_start:m.start()]):
            continue  # the API's own definition by a wrapper header
        before = code[max(0, m.start() - 40):m.start()]
        if re.search(r"(?:\w[\w:*&<>]*\s+|::)$", before) and not re.search(
                r"(?:return|else|do)\s+$", before):
            continue  # a declaration of the API (a type before the name)
        args, _ = split_args(code, m.end(), ")")
        position = 2 if m[1] == "hipLaunchKernelGGL" or not m[1].endswith(("Ex", "ExC")) \
            else None
        block = args[position].strip() if position is not None and len(args) > position \
            else None
        out.append((code.count("\n", 0, m.start()) + 1, block,
                    names.value(block) if block else None))
    return sorted(site for site in out if site[0] not in dead)


def occlint_sites(path: Path) -> dict[str, list[dict]]:
    sys.path.insert(0, str(REPO))
    from occlint.pipeline.run import Options, execute

    doc = execute(Options(paths=[str(path)], jobs=1, isolated=True, exit_zero=True)).doc
    return {s["path"]: s["launches"] for s in doc.get("sources") or []}


def measure(name: str, root: Path, listing: bool) -> dict:
    found = {str(Path(k).resolve()): v for k, v in occlint_sites(root).items()}
    expected = hit = blocks = blocks_known = wrong = 0
    notes = []
    for path in sorted(root.rglob("*")):
        if not path.is_file() or not path.name.lower().endswith(SUFFIXES):
            continue
        rel = path.relative_to(root).as_posix()
        sites = scan(path.read_text("utf-8", "replace"))
        if not sites:
            continue
        reported = found.get(str(path.resolve()), [])
        for line, text, value in sites:
            expected += 1
            near = [s for s in reported if s["line"] <= line <= s["end_line"]]
            if not near:
                notes.append(f"{name}:{rel}:{line}: missed")
                continue
            hit += 1
            if value is None:
                continue
            blocks += 1
            got = {s["block"]["value"] for s in near if s.get("block")}
            if value in got:
                blocks_known += 1
            elif got - {None}:
                wrong += 1
                notes.append(f"{name}:{rel}:{line}: block {text!r}: scan {value}, occlint "
                             f"{sorted(got - {None})}")
            else:
                notes.append(f"{name}:{rel}:{line}: block {text!r}: scan {value}, occlint "
                             "unknown")
    if listing:
        print("\n".join(notes))
    return {"tree": name, "sites": expected, "found": hit,
            "recall": round(100 * hit / expected, 2) if expected else None,
            "blocks_determined_by_scan": blocks, "reported_equal": blocks_known,
            "different": wrong}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="+", help="NAME=PATH")
    parser.add_argument("--list", action="store_true", help="print every disagreement")
    args = parser.parse_args()
    rows = []
    for spec in args.trees:
        name, _, path = spec.partition("=")
        rows.append(measure(name, Path(path), args.list))
    total = {k: sum(r[k] for r in rows) for k in ("sites", "found", "blocks_determined_by_scan",
                                                 "reported_equal", "different")}
    total["recall"] = round(100 * total["found"] / total["sites"], 2) if total["sites"] else None
    print(json.dumps({"trees": rows, "total": total}, indent=2))


if __name__ == "__main__":
    main()
