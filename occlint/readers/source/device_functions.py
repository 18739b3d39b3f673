"""A kernel's calls to the file's ``__device__`` functions read as their bodies.

``axpby_body<float>(a, b, c, s, n);`` whose definition holds the grid-stride loop, or
``c[i] = load_scaled(a, i, s) + b[i]`` whose helper returns ``p[i] * s``: the source
reader reads a kernel's own text, so the loop and the loads a helper holds were not seen.
A kernel body that calls a function the file defines as ``__device__`` is read with each
call written as that function's text, its parameters replaced by the call's arguments (an
argument that is one name or number as it is, any other in parentheses):

* a call standing as a statement (``f(args);``) becomes the function's body as a block;
* a call in an expression becomes the returned expression, where the function's body is
  a single ``return``;
* a name the file defines more than once (overloads: which one a call picks is the
  types'), a function of any other shape, a call through a pointer or a member: left as
  they are.

Calls are written so to a depth of :data:`DEPTH` (helpers calling helpers), a helper of
at most :data:`MAX_BODY` characters, a kernel's text to at most :data:`MAX_EXPANDED`, and
only where the body names a defined helper: a file without ``__device__`` definitions costs
one search for the word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from occlint.readers.source.access import matching, split_top_level

DEPTH = 3
# the longest helper body written into a kernel, and the longest a kernel's text grows to
# (bounds the work on generated files)
MAX_BODY = 8192
MAX_EXPANDED = 65536
# the name before a definition's parameter list: ``__device__ [qualifiers, a return type]
# name(``, at most HEAD characters from the keyword
_LAST_NAME = re.compile(r"([A-Za-z_]\w*)\s*$")
HEAD = 256
# what may stand between a definition's parameter list and its body
_BEFORE_BODY = re.compile(r"\s*(?:const\b|noexcept\b|__restrict__\b|\s)*\{")
_RETURN_ONLY = re.compile(r"\s*return\b(.*);\s*", re.S)
_NAME = re.compile(r"[A-Za-z_]\w*")
_SPACE = re.compile(r"\s*")
# what follows a called name: its template arguments, then its argument list
_CALL_TAIL = re.compile(r"\s*(?:<[^;{}()]*>)?\s*\(")
_PLAIN = re.compile(r"\s*(?:[A-Za-z_]\w*|\d+(?:\.\d*)?[fFuUlL]*)\s*")


@dataclass(frozen=True, slots=True)
class Helper:
    params: tuple[str, ...]
    body: str  # between its braces
    returned: str | None  # the expression, where the body is one ``return``


def definitions(text: str) -> dict[str, Helper]:
    """The file's ``__device__`` functions with bodies, by name (a name defined more than
    once is left out)."""
    if "__device__" not in text:
        return {}
    found: dict[str, list[Helper]] = {}
    at = text.find("__device__")
    while at >= 0:
        keyword, at = at, text.find("__device__", at + 10)
        open_ = text.find("(", keyword + 10, keyword + HEAD)
        head = text[keyword + 10:open_] if open_ > 0 else ";"
        name = _LAST_NAME.search(head)
        if name is None or any(c in head for c in ";{}="):
            continue  # not a definition's head (a variable, a lambda, a cast)
        close = matching(text, open_, "(", open_ + HEAD * 8)
        if close >= len(text):
            continue
        body = _BEFORE_BODY.match(text, close + 1)
        if body is None:
            continue  # a declaration, or a call
        start = body.end() - 1
        end = matching(text, start, "{", start + MAX_BODY)
        if end >= len(text):
            continue  # longer than MAX_BODY, or not closed
        params = tuple(_param_name(p) for p in split_top_level(text[open_ + 1:close])
                       if p.strip() and p.strip() != "void")
        if any(p is None for p in params):
            continue
        inner = text[start + 1:end]
        ret = _RETURN_ONLY.fullmatch(inner)
        found.setdefault(name[1], []).append(Helper(params, inner,
                                                    ret[1].strip() if ret else None))
    return {name: hs[0] for name, hs in found.items() if len(hs) == 1}


def _param_name(param: str) -> str | None:
    """A parameter's name: its last word, before any default value or array brackets."""
    decl = param.split("=", 1)[0].split("[", 1)[0]
    names = _NAME.findall(decl)
    return names[-1] if len(names) >= 2 or (names and "*" in decl) else None


def expand(body: str, helpers: dict[str, Helper]) -> str | None:
    """``body`` with its calls to ``helpers`` written as their text; None where it calls
    none."""
    if not helpers:
        return None
    out = body
    for _ in range(DEPTH):
        named = [n for n in helpers if n in out]
        if not named:
            break
        written, at, changed = [], 0, False
        for start, name, open_ in _calls(out, named):
            if start < at:
                continue  # inside a call already written
            close = matching(out, open_, "(", open_ + MAX_BODY)
            if close >= len(out):
                continue
            text = _written(helpers[name], out[open_ + 1:close],
                            _statement(out, start, close))
            if text is None:
                continue
            end = close + 1
            if text.startswith("{"):
                end = out.index(";", close) + 1
            written += [out[at:start], text]
            at, changed = end, True
        if not changed:
            break
        grown = "".join([*written, out[at:]])
        if len(grown) > max(MAX_EXPANDED, len(body)):
            break  # what is written so far stands
        out = grown
    return out if out != body else None


def _calls(body: str, names: list[str]) -> list[tuple[int, str, int]]:
    """The calls of ``names`` in ``body``, in order: (where the name starts, the name, its
    argument list's opening parenthesis): ``f(``, ``f<float>(``, not a member's (``x.f(``)
    nor a longer name's (each name found as text, then its surroundings checked: faster
    than a pattern tried at every character)."""
    out = []
    for name in names:
        at = body.find(name)
        while at >= 0:
            end = at + len(name)
            before = body[at - 1] if at else " "
            tail = _CALL_TAIL.match(body, end)
            if tail and not (before.isalnum() or before in "_.>:"):
                out.append((at, name, tail.end() - 1))
            at = body.find(name, end)
    return sorted(out)


@lru_cache(maxsize=1024)
def _names(params: tuple[str, ...]) -> re.Pattern[str]:
    """A use of one of a helper's ``params`` (not a member's)."""
    return re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, params)) + r")\b")


def _statement(body: str, start: int, close: int) -> bool:
    """Whether the call from ``start`` to its closing parenthesis ``close`` stands as a
    statement of its own (``f(args);`` after ``;``, ``{`` or ``}``)."""
    at = start - 1
    while at >= 0 and body[at].isspace():
        at -= 1
    after = _SPACE.match(body, close + 1).end()
    return (at < 0 or body[at] in ";{}") and body.startswith(";", after)


def _written(helper: Helper, args_text: str, statement: bool) -> str | None:
    """A call's text written as the helper's: a block (a statement call) or the returned
    expression in parentheses; None where it cannot be."""
    args = [a.strip() for a in split_top_level(args_text)] if args_text.strip() else []
    if len(args) != len(helper.params):
        return None
    if statement:
        text = helper.body
    elif helper.returned is not None:
        text = helper.returned
    else:
        return None
    if helper.params:
        values = {p: a if _PLAIN.fullmatch(a) else f"({a})"
                  for p, a in zip(helper.params, args, strict=True)}
        text = _names(helper.params).sub(lambda m: values[m[1]], text)
    if statement:
        return "{" + re.sub(r"\breturn\s*;", ";", text) + "}"
    return f"({text})"


__all__ = ["Helper", "definitions", "expand"]
