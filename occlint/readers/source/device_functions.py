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
_RETURN_LAST = re.compile(r"(.*[;{}]\s*)return\b(.*);\s*", re.S)
# what a statement assigns a call's value to: ``float t = ``, ``t += ``
_ASSIGNING = re.compile(r"\s*(?P<decl>(?:const\s+)?[A-Za-z_][\w:<>]*\s*\**)?\s*"
                        r"(?<![\w])(?P<name>[A-Za-z_]\w*)\s*(?P<op>[-+*/]?=)\s*")
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
    last: str | None = None  # the body with its one, last ``return X;`` as "\x01X;"


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
        last = _RETURN_LAST.fullmatch(inner) if inner.count("return") == 1 else None
        found.setdefault(name[1], []).append(Helper(
            params, inner, ret[1].strip() if ret else None,
            f"{last[1]}\x01{last[2].strip()};" if last else None))
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
            helper, args = helpers[name], out[open_ + 1:close]
            statement = _statement(out, start, close)
            text = _written(helper, args, statement)
            if text is None:
                # ``float t = f(args);``: its body, its one return assigning the name
                begin, text = _assigned(out, start, close, helper, args)
                if text is None or begin < at:
                    continue
                start, statement = begin, True
            end = out.index(";", close) + 1 if statement else close + 1
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
    statement of its own (``f(args);`` after ``;``, ``{``, ``}``, a control head's ``)``
    or ``else``)."""
    at = start - 1
    while at >= 0 and body[at].isspace():
        at -= 1
    after = _SPACE.match(body, close + 1).end()
    return (at < 0 or body[at] in ";{})" or body.endswith("else", 0, at + 1)) \
        and body.startswith(";", after)


def _assigned(body: str, start: int, close: int, helper: Helper, args_text: str
              ) -> tuple[int, str | None]:
    """A call that is all a statement assigns (``float t = f(args);``, ``t += f(args);``)
    of a helper whose body ends in its one ``return``: (where the statement starts, its
    text to its ``;`` written as the declaration and the body, the return assigning); None
    where it is not one."""
    if helper.last is None or not body.startswith(";", _SPACE.match(body, close + 1).end()):
        return start, None
    begin = max(body.rfind(c, 0, start) for c in ";{}") + 1
    lhs = _ASSIGNING.fullmatch(body, begin, start)
    block = _written(helper, args_text, True, keep_return=True)
    if lhs is None or block is None:
        return start, None
    declared = f"{lhs['decl']} {lhs['name']}; " if lhs["decl"] else ""
    block = block.replace("\x01", f"{lhs['name']} {lhs['op']} ", 1)
    return begin, body[begin:lhs.start("decl") if lhs["decl"] else lhs.start("name")] \
        + declared + block


def _written(helper: Helper, args_text: str, statement: bool, keep_return: bool = False
             ) -> str | None:
    """A call's text written as the helper's: a block (a statement call, or ``keep_return``:
    its body to its last return) or the returned expression in parentheses; None where it
    cannot be. In a block an argument that is no plain name or number is a local of the
    parameter's name (``auto x = a + row * cols;``, which the reader reads as ``a``'s alias);
    elsewhere every parameter is replaced by its argument."""
    args = [a.strip() for a in split_top_level(args_text)] if args_text.strip() else []
    if len(args) != len(helper.params):
        return None
    block = statement or keep_return
    if keep_return:
        text = helper.last
    elif statement:
        text = helper.body
    elif helper.returned is not None:
        text = helper.returned
    else:
        return None
    plain = {p: a for p, a in zip(helper.params, args, strict=True) if _PLAIN.fullmatch(a)}
    locals_ = "".join(f"auto {p} = {a}; " for p, a in zip(helper.params, args, strict=True)
                      if block and p not in plain)
    values = plain if block else {p: plain.get(p, f"({a})")
                                  for p, a in zip(helper.params, args, strict=True)}
    if values:
        text = _names(tuple(values)).sub(lambda m: values[m[1]], text)
    if block:
        return "{" + locals_ + re.sub(r"\breturn\s*;", ";", text) + "}"
    return f"({text})"


__all__ = ["Helper", "definitions", "expand"]
