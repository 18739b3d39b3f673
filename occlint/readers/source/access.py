"""How a kernel's global accesses spread over a warp's lanes, from its index expressions
(issue 28: the launch-time model's memory traffic).

Each variable the body assigns, and each subscript's index, gets a *spread* along
``threadIdx.x`` and along ``threadIdx.y``: how the value moves from one lane to the next
along that axis —

* ``0``: not at all (the same for every lane: ``blockIdx.x * cols``);
* ``1``: by one (``blockIdx.x * blockDim.x + threadIdx.x``, ``j`` of ``for (j =
  threadIdx.x; ...; j += blockDim.x)``);
* ``k`` > 1: by a literal ``k`` (``2 * i``);
* :data:`STRIDED`: by a value the text does not fix (``x * height``);
* :data:`SCATTERED`: not linearly (a hash, ``%``/``&`` of a product, a loaded value).

A subscript of a global pointer is then *coalesced* (its spread along x is 0 or 1: a warp
reads consecutive elements, or one), *column* (strided along x, by one along y: a 2-D
block's column of lanes reads consecutive elements, a row of them one element each), or
*scattered* (every lane its own 32-byte sector, whatever the block: a gather, a stride in
a 1-D block). Expressions are parsed, not matched: C's operators and precedence, casts,
calls, subscripts; what the parser cannot read stays unknown (None), and the facts keep
the reading every access had before, coalesced.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache

STRIDED = 1 << 20
SCATTERED = 1 << 21
Spread = tuple[int, int]  # along threadIdx.x, along threadIdx.y
UNIFORM: Spread = (0, 0)
WARP_LANES = 32  # NVIDIA's warp: the lanes an access spreads over

_TOKEN = re.compile(r"\s*(?:(0[xX][0-9a-fA-F]+|\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)"
                    r"[fFlLuU]*|([A-Za-z_]\w*(?:\s*(?:\.|->)\s*[A-Za-z_]\w*)*)"
                    r"|(<<|>>|<=|>=|==|!=|&&|\|\||->|[-+*/%&|^~!<>?:()\[\],]))")
_THREAD_X = frozenset({"threadIdx.x", "hipThreadIdx_x", "__lane_id"})
_THREAD_Y = frozenset({"threadIdx.y", "hipThreadIdx_y"})
_TYPES = frozenset({"int", "long", "unsigned", "signed", "short", "char", "float", "double",
                    "size_t", "int64_t", "uint64_t", "int32_t", "uint32_t", "const",
                    "ptrdiff_t", "uint", "ulong", "longlong", "bool", "auto", "half",
                    "__half", "float2", "float4", "int2", "int4"})
# calls whose value moves with their arguments as their arguments do
_PASS = frozenset({"min", "max", "umin", "umax", "llmin", "llmax", "static_cast", "int",
                   "long", "size_t", "__mul24"})
_BINARY = {"*": 13, "/": 13, "%": 13, "+": 12, "-": 12, "<<": 11, ">>": 11, "<": 10,
           ">": 10, "<=": 10, ">=": 10, "==": 9, "!=": 9, "&": 8, "^": 7, "|": 6, "&&": 5,
           "||": 4, "?": 3}


class _Unreadable(Exception):
    pass


def _worse(a: int, b: int) -> int:
    return max(a, b)


def _scale(s: int, k: int | None) -> int:
    """A spread times a factor (None: not a literal)."""
    if s in (0, SCATTERED):
        return s
    if k is None or s == STRIDED or k < 0:
        return STRIDED if s else 0
    return 0 if k == 0 else min(s * k, STRIDED)


class _Value:
    """An expression's spread, its value where a literal fixes it, and its *extent*: the
    elements an index of that value reaches where a literal bounds it (its largest value
    plus one: ``x & 255`` 256, ``k % 64 + 1`` 65)."""
    __slots__ = ("const", "extent", "spread")

    def __init__(self, spread: Spread, const: int | None = None, extent: int | None = None):
        self.spread, self.const, self.extent = spread, const, extent


def _each(a: Spread, b: Spread, f: Callable[[int, int], int]) -> Spread:
    return f(a[0], b[0]), f(a[1], b[1])


def _add(a: int, b: int) -> int:
    if not a or not b:
        return a or b
    return SCATTERED if a == SCATTERED or b == SCATTERED else STRIDED


class _Parser:
    def __init__(self, text: str, env: dict[str, Spread], consts: dict[str, int],
                 extents: dict[str, int] | None = None):
        self.toks: list[str] = []
        at = 0
        text = text.strip()
        while at < len(text):
            m = _TOKEN.match(text, at)
            if m is None or m.end() == at:
                raise _Unreadable
            name = m[2]
            if name and not name.isidentifier():  # a member, spaced: ``p -> n``
                name = "".join(name.split())
            self.toks.append(m[1] or name or m[3])
            at = m.end()
        self.i = 0
        self.env, self.consts, self.extents = env, consts, extents or {}
        # extents only where asked for (extent_of): a spread's parse does without them
        self.binary = _binary if extents is not None else _binary_spread

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, want: str | None = None) -> str:
        t = self.peek()
        if t is None or (want is not None and t != want):
            raise _Unreadable
        self.i += 1
        return t

    def expr(self, floor: int = 0) -> _Value:
        left = self.unary()
        while True:
            op = self.peek()
            prec = _BINARY.get(op or "")
            if prec is None or prec < floor:
                return left
            self.take()
            if op == "?":
                a = self.expr()
                self.take(":")
                b = self.expr(prec)
                left = _Value(_each(a.spread, b.spread, _worse),  # either branch's
                              extent=max(a.extent, b.extent) if a.extent and b.extent
                              else None)
                continue
            right = self.expr(prec + 1)
            left = self.binary(op or "", left, right)

    def unary(self) -> _Value:
        t = self.peek()
        if t == "&" and self.i + 2 < len(self.toks) and self.toks[self.i + 2] == "[" \
                and self.toks[self.i + 1][0].isalpha():
            # an element's address, &p[i]: where it is, as p + i (not the value loaded)
            self.i += 1
            base = self.primary()
            self.take("[")
            index = self.expr()
            self.take("]")
            return _Value(_each(base.spread, index.spread, _add))
        if t in ("-", "+", "~", "!", "&", "*"):
            self.take()
            v = self.unary()
            if t == "-" and v.const is not None:
                return _Value(v.spread, -v.const)
            return _Value(v.spread, extent=v.extent if t == "+" else None) \
                if t in ("-", "+", "&") else \
                _Value(_each(v.spread, v.spread, lambda a, _: SCATTERED if a else 0))
        if t == "(" and self._cast():
            return self.unary()
        return self.postfix(self.primary())

    def _cast(self) -> bool:
        """Skip ``(type)`` at the cursor; whether it was one."""
        j = self.i + 1
        words = []
        while j < len(self.toks) and self.toks[j] not in (")",):
            words.append(self.toks[j])
            j += 1
        if not words or j >= len(self.toks) or not all(
                w in _TYPES or w == "*" for w in words):
            return False
        self.i = j + 1
        return True

    def primary(self) -> _Value:
        t = self.take()
        if t == "(":
            v = self.expr()
            self.take(")")
            return v
        if t[0].isdigit() or t[0] == ".":
            try:
                return _Value(UNIFORM, int(t, 0))
            except ValueError:
                return _Value(UNIFORM)
        if not (t[0].isalpha() or t[0] == "_"):
            raise _Unreadable
        if self.peek() == "(":
            self.take()
            args = []
            while self.peek() != ")":
                args.append(self.expr())
                if self.peek() == ",":
                    self.take()
            self.take(")")
            spread = UNIFORM
            for a in args:
                spread = _each(spread, a.spread, _worse)
            if t in _PASS:
                return _Value(spread)
            return _Value(_each(spread, spread, lambda a, _: SCATTERED if a else 0))
        if t in _THREAD_X:
            return _Value((1, 0))
        if t in _THREAD_Y:
            return _Value((0, 1))
        known = self.env.get(t, self.env.get(re.split(r"\.|->", t)[0], UNIFORM))
        if known is None:  # a variable whose value the parser could not read
            raise _Unreadable
        return _Value(known, self.consts.get(t), self.extents.get(t))

    def postfix(self, v: _Value) -> _Value:
        while self.peek() == "[":
            self.take()
            index = self.expr()
            self.take("]")
            # a loaded value: the same for every lane only where the index is
            moved = _each(v.spread, index.spread, _worse)
            v = _Value(_each(moved, moved, lambda a, _: SCATTERED if a else 0))
        return v


def _divided(x: int, divisor: int | None) -> int:
    """A spread divided by a literal ``divisor`` (None: a value known at run time only, a
    tensor's width or plane as index arithmetic divides by: taken for a warp's span or
    more, so consecutive lanes share one quotient, two where they straddle it)."""
    if x in (0, SCATTERED):
        return x
    if divisor is None and x == 1:
        return 0
    if divisor and x < STRIDED and divisor >= x * WARP_LANES:
        return 0
    return min(x, 1)


def _extent(op: str, a: _Value, b: _Value) -> int | None:
    """The extent of ``a op b`` where a literal bounds it: a mask or a modulus by a literal,
    and what adds a literal to, subtracts one from, scales or divides such a value."""
    if op == "&":
        masks = [v.const + 1 for v in (a, b) if v.const is not None and v.const >= 0]
        return min(masks) if masks else None
    if op == "%":
        return b.const if b.const is not None and b.const > 0 else None
    if op == "+":
        bounded, k = (a, b.const) if a.extent else (b, a.const)
        return bounded.extent + k if bounded.extent and k is not None and k >= 0 else None
    if op == "-":
        return a.extent if a.extent and b.const is not None and b.const >= 0 else None
    if op == "*":
        bounded, k = (a, b.const) if a.extent else (b, a.const)
        return (bounded.extent - 1) * k + 1 if bounded.extent and k and k > 0 else None
    return a.extent if op in ("/", ">>") and b.const is not None and b.const > 0 else None


def _binary(op: str, a: _Value, b: _Value) -> _Value:
    v = _binary_spread(op, a, b)
    v.extent = _extent(op, a, b)
    return v


def _binary_spread(op: str, a: _Value, b: _Value) -> _Value:
    if op in ("+", "-"):
        const = None if a.const is None or b.const is None else \
            a.const + b.const if op == "+" else a.const - b.const
        return _Value(_each(a.spread, b.spread, _add), const)
    if op == "*":
        if a.spread == UNIFORM and b.spread == UNIFORM:
            const = None if a.const is None or b.const is None else a.const * b.const
            return _Value(UNIFORM, const)
        if a.spread == UNIFORM or b.spread == UNIFORM:
            moving, factor = (b, a.const) if a.spread == UNIFORM else (a, b.const)
            return _Value((_scale(moving.spread[0], factor), _scale(moving.spread[1], factor)))
        return _Value(_each(a.spread, b.spread, lambda x, y: SCATTERED if x or y else 0))
    if op == "<<" and b.spread == UNIFORM:
        factor = 1 << b.const if b.const is not None and 0 <= b.const < 31 else None
        return _Value((_scale(a.spread[0], factor), _scale(a.spread[1], factor)))
    if op in ("/", ">>") and b.spread == UNIFORM:
        # lanes share elements (threadIdx.x / 2): no wider than before; a divisor of a
        # warp's whole span or more (i >> 8, i / 64) leaves its lanes one value (two where
        # the span straddles a boundary)
        divisor = b.const if op == "/" else 1 << b.const \
            if b.const is not None and 0 <= b.const < 31 else None
        return _Value(_each(a.spread, a.spread, lambda x, _: _divided(x, divisor)))
    if op in ("%", "&") and b.spread == UNIFORM:
        # a lane's index within a warp or a row (threadIdx.x & 31, i % width) keeps a spread
        # of one; anything wider wraps at an unknown place
        return _Value(_each(a.spread, a.spread, lambda x, _: x if x <= 1 else SCATTERED))
    spread = _each(a.spread, b.spread, _worse)
    return _Value(_each(spread, spread, lambda x, _: SCATTERED if x else 0))


_NAME = re.compile(r"[A-Za-z_]\w*")
_CPP_CAST = re.compile(r"\b(?:static|reinterpret|const)_cast\s*<[^<>;]*>")


def spread_of(text: str, env: dict[str, Spread | None], consts: dict[str, int]
              ) -> Spread | None:
    """The spread of the expression ``text``; None where the parser cannot read it (or a
    variable it names): the model then keeps its reading of a coalesced access."""
    word = text.strip()
    if _NAME.fullmatch(word):  # most indices: one variable
        if word in _THREAD_X:
            return 1, 0
        if word in _THREAD_Y:
            return 0, 1
        return env.get(word, UNIFORM)
    # the same index recurs across kernels (``blockIdx.x * blockDim.x + threadIdx.x``):
    # parsed once for the values its names have
    names = _NAME.findall(text)
    return _parsed(text, tuple((w, env[w]) for w in names if w in env),
                   tuple((w, consts[w]) for w in names if w in consts))


@lru_cache(maxsize=8192)
def _parsed(text: str, env: tuple[tuple[str, Spread | None], ...],
            consts: tuple[tuple[str, int], ...]) -> Spread | None:
    try:
        p = _Parser(_CPP_CAST.sub("", text) if "_cast" in text else text, dict(env),
                    dict(consts))
        v = p.expr()
        if p.peek() is not None:
            raise _Unreadable
        return v.spread
    except (_Unreadable, RecursionError):
        return None


def constant_of(text: str, consts: dict[str, int]) -> int | None:
    """The value of an integer expression of literals and ``consts`` (``TILE + 1``, ``256 +
    2 * R``), or None where it is not one."""
    try:
        p = _Parser(text, {}, consts)
        v = p.expr()
        return v.const if p.peek() is None else None
    except (_Unreadable, RecursionError):
        return None


def extent_of(text: str, values: dict[str, list[str]], consts: dict[str, int]
              ) -> int | None:
    """How many elements an index can reach where a literal bounds it (``b[x & 255]``,
    ``lut[(k + 1) % 64]``, a variable every assignment of which is so bounded): the table
    it reads; None where nothing bounds it or the text cannot be read. ``values``: each
    variable's assigned texts (:func:`assignments`)."""
    names = {w for w in _NAME.findall(text) if w in values}
    extents = {}
    for w in names:
        found = [_extent_parsed(v, (), tuple(consts.items())) for v in values[w]]
        if found and all(found):
            extents[w] = max(e for e in found if e)
    if not extents and "&" not in text and "%" not in text:
        return None
    return _extent_parsed(text, tuple(extents.items()), tuple(consts.items()))


@lru_cache(maxsize=4096)
def _extent_parsed(text: str, extents: tuple[tuple[str, int], ...],
                   consts: tuple[tuple[str, int], ...]) -> int | None:
    try:
        p = _Parser(_CPP_CAST.sub("", text) if "_cast" in text else text, {},
                    dict(consts), dict(extents))
        v = p.expr()
        return None if p.peek() is not None else v.extent
    except (_Unreadable, RecursionError):
        return None


# a variable's assignment at statement level: ``[type] name = value;`` (a for loop's
# initialiser too); not ==, <=, compound assignments, nor an element's store
_ASSIGNMENT = re.compile(r"(?<![\w.\]>])([A-Za-z_]\w*)\s*=(?!=)(?=([^;{}]*))")
# a pointer's declaration (``T* x =``), and one ``auto`` deduces (``auto x = a + k``)
_POINTER_ALIAS = re.compile(r"\*\s*(?:const\s+|__restrict__\s+|__restrict\s+)*"
                            r"([A-Za-z_]\w*)\s*=(?!=)(?=([^;{}]*))")
_AUTO_ALIAS = re.compile(r"auto\b\s*\*?\s*(?:const\s+|__restrict__\s+|__restrict\s+)*"
                         r"([A-Za-z_]\w*)\s*=(?!=)(?=([^;{}]*))")
_SEPARATOR = re.compile(r"[()\[\],]")


def _value(text: str) -> str:
    """An assigned value's text up to its declaration's next top-level comma."""
    depth = 0
    for m in _SEPARATOR.finditer(text):
        c = m[0]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
            if depth < 0:  # a for loop's head closing
                return text[:m.start()]
        elif depth == 0:
            return text[:m.start()]
    return text


# where a variable's spread matters: a subscript's index, an atomic's address (its first
# argument, up to its comma)
_USES = re.compile(r"\[([^\[\];]*)|atomic\w*\s*\(([^,;]*)")


def variables(body: str, consts: dict[str, int], offsets: Iterable[str] = ()
              ) -> dict[str, Spread | None]:
    """The spread of every scalar the body assigns that an index, an atomic's address or
    one of ``offsets`` (local pointers' offsets: :func:`aliases`) uses, directly or
    through others (the worst over its assignments; None where one could not be read);
    read twice where a value names a variable assigned after it (a loop's step)."""
    every = _assignment_pairs(body)
    assigned = _grouped(every)
    uses = [g for m in _USES.finditer(body) for g in m.groups() if g] + list(offsets)
    needed = {w for text in uses for w in _NAME.findall(text) if w in assigned}
    todo = list(needed)
    while todo:  # what those are computed from
        for value in assigned[todo.pop()]:
            for w in _NAME.findall(value):
                if w in assigned and w not in needed:
                    needed.add(w)
                    todo.append(w)
    found = [(name, value) for name, value in every if name in needed]
    first: dict[str, int] = {}
    for k, (name, _) in enumerate(found):
        first.setdefault(name, k)
    # a second reading only where a value names a variable assigned after it (a step)
    forward = any(first.get(w, -1) > k for k, (_, value) in enumerate(found)
                  for w in _NAME.findall(value))
    env: dict[str, Spread | None] = {}
    for _ in range(2 if forward else 1):
        for name, value in found:
            s = spread_of(value, env, consts)
            was = env.get(name, UNIFORM)
            env[name] = None if s is None or was is None else _each(was, s, _worse)
    return env


def _grouped(every: list[tuple[str, str]]) -> dict[str, list[str]]:
    assigned: dict[str, list[str]] = {}
    for name, value in every:
        assigned.setdefault(name, []).append(value)
    return assigned


def assignments(body: str) -> dict[str, list[str]]:
    """Each variable the body assigns: the texts of its values."""
    return _grouped(_assignment_pairs(body))


@lru_cache(maxsize=8)
def _assignment_pairs(body: str) -> list[tuple[str, str]]:
    """(name, value's text) of each assignment in ``body``, in order: read once a body,
    for :func:`variables` and :func:`assignments` alike (not to be changed). What
    ``_ASSIGNMENT.finditer`` finds, found from each ``=`` (half the time of the pattern
    tried at every character): a name, spaces, a ``=`` that is not ``==``, the name's
    start after no word character, ``.``, ``]`` or ``>``."""
    out = []
    at = body.find("=")
    while at >= 0:
        after = at + 1
        if body.startswith("=", after):
            after += 1  # ``==``: neither ``=`` assigns
        else:
            end = at - 1
            while end >= 0 and body[end].isspace():
                end -= 1
            start = end
            while start >= 0 and (body[start].isalnum() or body[start] == "_"):
                start -= 1
            start += 1
            if start <= end and (body[start] == "_" or (body[start].isascii()
                                 and body[start].isalpha())) and \
                    (start == 0 or not (body[start - 1].isalnum()
                                        or body[start - 1] in "_.]>")):
                stop = _STATEMENT_STOP.search(body, after)
                out.append((body[start:end + 1],
                            _value(body[after:stop.start() if stop else len(body)])))
        at = body.find("=", after)
    return out


_STATEMENT_STOP = re.compile(r"[;{}]")


_CAST_TO = re.compile(r"(?:static|reinterpret|const)_cast\s*<([^<>;]*)>\s*\((.*)\)"
                      r"|\(\s*((?:const\s+|volatile\s+)*[A-Za-z_]\w*\s*\*)\s*\)(.*)", re.S)


def _uncast(value: str) -> tuple[str, str | None]:
    """A pointer's value without the cast around it (``reinterpret_cast<const float4*>(a +
    k)``, ``(float4*)a``) and the element type it names (None: no cast)."""
    m = _CAST_TO.fullmatch(value)
    if m is None:
        return value, None
    words = (m[1] or m[3]).replace("*", " ").split()
    inner = (m[2] if m[1] is not None else m[4]).strip()
    depth = 0
    for k, c in enumerate(inner):  # ``(a + k)`` whole in parentheses: a + k
        depth += (c == "(") - (c == ")")
        if depth == 0:
            if k == len(inner) - 1 and inner[0] == "(":
                inner = inner[1:-1].strip()
            break
    return inner, words[-1] if words else None


_WORD_CHAR = re.compile(r"\w")


def word_starts(pattern: re.Pattern[str], text: str) -> list[re.Match[str]]:
    r"""The matches of ``pattern`` (which starts with a word character) that start a word:
    what ``\b`` before it finds, searched from its literal start instead of trying the
    boundary at every character. A match that does not start a word hides no other: one
    starting inside it would start inside the same word."""
    return [m for m in pattern.finditer(text)
            if not m.start() or not _WORD_CHAR.match(text, m.start() - 1)]


def aliases(body: str, pointers: dict[str, int | None]
            ) -> dict[str, tuple[str, str, str | None]]:
    """Local pointers set from a pointer parameter: name -> (the parameter, the offset's
    text, the element type a cast gives it or None): ``const float* x = a + blockIdx.x *
    cols`` is ``a`` at ``blockIdx.x * cols``, ``&a[k]`` ``a`` at ``k``, ``const float4* v
    = reinterpret_cast<const float4*>(a + k)`` ``a`` at ``k`` read as float4 (the offset in
    a's elements), ``reinterpret_cast<const __half*>(a) + k`` ``a`` at ``k`` read as __half
    (the offset in halves)."""
    out: dict[str, tuple[str, str, str | None]] = {}
    declared = list(_POINTER_ALIAS.finditer(body))
    if "auto" in body:
        declared += word_starts(_AUTO_ALIAS, body)
    for m in declared:
        text = _value(m[2]).strip()
        head = _CPP_CAST_HEAD.match(text)
        if head:  # ``reinterpret_cast<const __half*>(a) + k``: a at k, read as __half
            close = matching(text, head.end() - 1, "(")
            rest = text[close + 1:].strip()
            if rest.startswith("+") and rest[1:].strip():
                inner, cast = _uncast(text[:close + 1])
                if inner in pointers:
                    out[m[1]] = (inner, rest[1:].strip(), cast)
                    continue
        value, cast = _uncast(text)
        address = re.fullmatch(r"&\s*([A-Za-z_]\w*)\s*\[(.*)\]", value, re.S)
        if address and address[1] in pointers:
            out[m[1]] = (address[1], address[2], cast)
            continue
        plus = re.fullmatch(r"\(?\s*([A-Za-z_]\w*)\s*\)?\s*\+\s*(.+)", value, re.S)
        if plus and plus[1] in pointers:
            out[m[1]] = (plus[1], plus[2], cast)
        elif value in pointers:
            out[m[1]] = (value, "0", cast)
    return out


# a pointer cast's start (C++'s with its operand's parenthesis, or C's in an outer one),
# a subscript after it, and the parentheses its operand is matched by
_CPP_CAST_HEAD = re.compile(r"(?:static|reinterpret)_cast\s*<([^<>;]*?)\*\s*>\s*\(")
_C_CAST_HEAD = re.compile(r"\(\s*((?:const\s+|volatile\s+)*[A-Za-z_]\w*)\s*\*\s*\)\s*")
_CAST_START = re.compile(_CPP_CAST_HEAD.pattern + r"|\(\s*" + _C_CAST_HEAD.pattern)
_SUBSCRIPTED = re.compile(r"\s*\[")
CAST_SPAN = 512  # a cast's operand longer than this is not read (bounds the search)
_BRACKETS = {"(": re.compile(r"[()]"), "[": re.compile(r"[\[\]]"), "{": re.compile(r"[{}]")}


def matching(text: str, start: int, open_: str, end: int | None = None) -> int:
    """Index of the bracket closing the one at ``start``, looking no further than ``end``
    (len(text) where none closes it): only the brackets of that kind are visited."""
    depth = 0
    for m in _BRACKETS[open_].finditer(text, start, len(text) if end is None else end):
        if m[0] == open_:
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return m.start()
    return len(text)


def cast_subscripts(body: str, pointers: dict[str, int | None]
                    ) -> tuple[str, dict[str, tuple[str, str, str | None]]]:
    """The body with each pointer parameter cast and subscripted in place
    (``reinterpret_cast<const char4*>(a)[i]``, ``((float4*)c)[i]``) written as a local
    pointer of its own, padded to the same length, and those pointers as ``aliases``
    gives them: name -> (the parameter, the offset's text, the element type)."""
    out: dict[str, tuple[str, str, str | None]] = {}
    if "_cast" not in body and "*)" not in body:
        return body, out
    edits = []
    for m in _CAST_START.finditer(body):
        # the cast's operand: in its own parentheses (C++), or up to the outer one's close
        opened = m.end() - 1 if m[0].endswith("(") else m.start()
        end = matching(body, opened, "(", opened + CAST_SPAN)
        if end == len(body) or not _SUBSCRIPTED.match(body, end + 1):
            continue
        text = body[m.start():end + 1]
        value, cast = _uncast(text if m[0].endswith("(") else text[1:-1].strip())
        plus = re.fullmatch(r"\(?\s*([A-Za-z_]\w*)\s*\)?(?:\s*\+\s*(.+))?", value, re.S)
        if cast is None or not plus or plus[1] not in pointers:
            continue
        name = f"_cast{len(out)}_"
        if len(name) > len(text):
            continue
        out[name] = (plus[1], plus[2] or "0", cast)
        edits.append((m.start(), end + 1, name.ljust(end + 1 - m.start())))
    for lo, hi, text in reversed(edits):
        body = body[:lo] + text + body[hi:]
    return body, out


# loads and stores written as calls or dereferences: the load intrinsics (``__ldg``,
# ``__ldcs``, ...), the store ones (``__stcs(p, v)``, ...), ``*`` before a parenthesis or a
# pointer cast where no product can be (after an operator, an opening bracket, ``return``)
_LOAD_CALL = re.compile(r"\b__ld(?:g|cs|ca|cg|lu|cv)\s*\(")
_STORE_CALL = re.compile(r"\b__st(?:cs|cg|wb|wt)\s*\(")
_DEREF = re.compile(r"\*\s*(?=\(|(?:static|reinterpret)_cast\b)")
# the names after a star (products' factors, declarators and dereferences alike)
_STARRED = re.compile(r"\*\s*([A-Za-z_]\w*)")
# the names a body declares as pointers (``const float* p = ...``): with the parameters,
# the only names a bare ``*name`` may dereference
_POINTER_NAME = re.compile(r"\*\s*(?:const\s+|__restrict__\s+|__restrict\s+)*([A-Za-z_]\w*)"
                           r"\s*=[^=]")
_DEREF_AFTER = frozenset("=(,;{}?:+-/&|!<>[%^~")
_ADDRESS_OF = re.compile(r"&\s*([A-Za-z_]\w*)\s*\[(.*)\]", re.S)
_POINTER_PLUS = re.compile(r"([A-Za-z_]\w*)\s*(?:\+\s*(.+))?", re.S)
_POINTER_STEP = re.compile(r"\s*\+\s*(.+)", re.S)
_OPERAND = re.compile(r"\s*(?:\(|[A-Za-z_]\w*)")
_BYTES = frozenset({"char", "int8_t", "uint8_t", "uchar", "void"})
_STATEMENT_WORDS = ("return", "else", "do")
_WORD_CHAR = re.compile(r"\w")
_LAST_WORD = re.compile(r"(\w+)\s*$")
_HEAD_WORDS = frozenset({"if", "while", "for", "switch"})
UNSIZED = "\0"  # an access the text does not size (dereferences' second value)


def unwrapped(text: str) -> str:
    """``text`` without the parentheses around all of it."""
    text = text.strip()
    while text.startswith("(") and matching(text, 0, "(") == len(text) - 1:
        text = text[1:-1].strip()
    return text


def _subscript_of(operand: str, pointers: dict[str, int | None]) -> str | None:
    """The subscript an address means: ``&a[i]`` and ``a + i`` are ``a[i]``, and so are
    they cast to another pointer type (``reinterpret_cast<const float4*>(&a[4 * i])``): the
    lanes' offsets, in ``a``'s elements, say what a warp moves (four floats apart: 16 bytes
    a lane; one apart: their float4s overlap and the caches serve the overlap, 4 bytes a
    lane: access.moved), whatever width each lane reads. A cast that binds to the pointer
    alone counts the cast's elements (``reinterpret_cast<const float4*>(a) + i``,
    ``(const float4*)a + i``): its subscript of the cast (cast_subscripts). A cast of an
    address in a byte pointer or one of no known type (``*(const float*)(p + i * nb)``)
    is UNSIZED: what it moves is not known. None where it is no pointer and offset."""
    text = unwrapped(operand)
    cast, m = None, _CPP_CAST_HEAD.match(text)
    if m:
        close = matching(text, m.end() - 1, "(")
        rest = _POINTER_STEP.fullmatch(text, close + 1)
        if close == len(text) - 1:
            cast, text = m[1].strip(), unwrapped(text[m.end():-1])
        elif rest:  # reinterpret_cast<const float4*>(a) + i: i in the cast's elements
            return f"{text[:close + 1]}[{rest[1].strip()}]"
        else:
            return None
    elif (m := _C_CAST_HEAD.match(text)) is not None:
        rest = text[m.end():]
        if not (rest.startswith("(") and matching(rest, 0, "(") == len(rest) - 1):
            # (const float4*)a + i: the cast binds to a, i counts its elements
            plus = _POINTER_PLUS.fullmatch(rest)
            return f"reinterpret_cast<{m[1].strip()}*>({plus[1]})" \
                f"[{(plus[2] or '0').strip()}]" if plus else None
        cast, text = m[1].strip(), unwrapped(rest)
    if cast is not None and (_CPP_CAST_HEAD.match(text) or _C_CAST_HEAD.match(text)):
        return None  # a cast of a cast (a byte offset: (const char*)x + off)
    address = _ADDRESS_OF.fullmatch(text)
    if address and matching(text, address.start(2) - 1, "[") == len(text) - 1:
        base, offset = address[1], address[2].strip()
    elif not address and (plus := _POINTER_PLUS.fullmatch(text)):
        base, offset = plus[1], (plus[2] or "0").strip()
    else:
        return None
    if cast is not None and base not in pointers:
        return f"reinterpret_cast<{cast}*>({base} + ({offset}))[0]"
    if cast is not None and pointers[base] in (None, 1) and cast.split()[-1] not in _BYTES:
        return UNSIZED  # a byte offset (``(const char*)x + i * nb``): the access's stride
    return f"{base}[{offset}]"


def split_top_level(text: str, separators: re.Pattern[str] = _SEPARATOR) -> list[str]:
    """``text`` split at its commas outside brackets: those ``separators`` matches (the
    brackets and the comma; with ``<>`` too, a parameter list's templates)."""
    depth, at, out = 0, 0, []
    for m in separators.finditer(text):
        c = m[0]
        if c in "<([":
            depth += 1
        elif c in ">)]":
            depth -= 1
        elif depth == 0:
            out.append(text[at:m.start()])
            at = m.end()
    return [*out, text[at:]]


def _statement_starts(body: str, end: int) -> bool:
    """Whether a statement starts at ``end``: after ``return``, ``else``, ``do``, or the
    head of an ``if``, ``while``, ``for`` (``if (i < n) *(c + i) = v;``)."""
    for word in _STATEMENT_WORDS:
        start = end - len(word)
        if body.startswith(word, start) and (start <= 0 or not _WORD_CHAR.match(body, start - 1)):
            return True
    if body[end - 1] != ")":
        return False
    opened = _opening(body, end - 1)
    if opened is None:
        return False
    word = _LAST_WORD.search(body, max(0, opened - 12), opened)
    return word is not None and word[1] in _HEAD_WORDS


def _opening(body: str, close: int) -> int | None:
    """Where the parenthesis closing at ``close`` opens (looking back CAST_SPAN at most)."""
    depth = 0
    for at in range(close, max(-1, close - CAST_SPAN), -1):
        c = body[at]
        if c == ")":
            depth += 1
        elif c == "(":
            depth -= 1
            if depth == 0:
                return at
    return None


def _after_cast(body: str, end: int) -> bool:
    """Whether ``body`` ends at ``end`` in a cast to a value type (``(unsigned char)``): a
    ``*`` after it dereferences, as after an operator."""
    if body[end - 1] != ")":
        return False
    words = body[body.rfind("(", 0, end) + 1:end - 1].split()
    return bool(words) and all(w in _TYPES for w in words)


def _before(body: str, at: int) -> int:
    """Where the text before ``at`` ends, blanks left out."""
    while at and body[at - 1].isspace():
        at -= 1
    return at


def _operand_starts(body: str, end: int) -> bool:
    """Whether an operand starts at ``end`` (a ``*`` there dereferences, no product being
    possible): at the body's start, after an operator or an opening bracket, or at a
    statement's start."""
    return not end or body[end - 1] in _DEREF_AFTER or _statement_starts(body, end)


def _bare_dereferences(body: str, name: str) -> Iterator[tuple[int, int]]:
    """Where ``*name`` (or ``* name``) stands, not followed by a subscript, a call or a
    member (``*p``, not ``*p[i]``): its star's and its name's end (searched as text: a
    pattern compiled for each name costs more than the search)."""
    for spelling in ("*" + name, "* " + name):
        at = body.find(spelling)
        while at >= 0:
            stop = at + len(spelling)
            rest = body[stop:stop + 3].lstrip()
            if not (stop < len(body) and (body[stop].isalnum() or body[stop] == "_")) and \
                    not rest.startswith(("[", "(", ".", "->")):
                yield at, stop
            at = body.find(spelling, stop)


def dereferences(body: str, pointers: Callable[[], dict[str, int | None]],
                 params: frozenset[str] = frozenset()) -> tuple[str, bool]:
    """The body with the loads and stores it writes as calls or dereferences written as
    subscripts, which the facts read: ``__ldg(&a[i])`` and ``__ldg(a + i)`` as ``(a[i])``,
    ``*(a + i)`` as ``a[i]``, ``*reinterpret_cast<const float4*>(&a[4 * i])`` as
    ``a[4 * i]`` (:func:`_subscript_of`), ``__stcs(&c[i], v)`` as ``c[i] = (v)``, a
    pointer's own element ``*p`` (a walk by pointers) as ``p[0]``. The
    text changes length: this runs before any position in it is taken. And whether one
    was an access the text does not size (:data:`UNSIZED`). ``pointers``: the parameters'
    and the local pointers' element sizes, asked for where a candidate is found;
    ``params``: the pointer parameters' names."""
    if "__ld" not in body and "__st" not in body and "*" not in body:
        return body, False
    edits: list[tuple[int, int, str]] = []
    unsized = False
    for pattern, store in ((_LOAD_CALL, False), (_STORE_CALL, True)):
        for m in pattern.finditer(body) if ("__st" if store else "__ld") in body else ():
            close = matching(body, m.end() - 1, "(", m.end() + CAST_SPAN)
            if close == len(body):
                continue
            args = split_top_level(body[m.end():close])
            sub = _subscript_of(args[0], pointers()) \
                if len(args) == (2 if store else 1) else None
            if sub == UNSIZED:
                unsized = True
            elif sub:
                edits.append((m.start(), close + 1,
                              f"{sub} = ({args[1].strip()})" if store else f"({sub})"))
    for m in _DEREF.finditer(body) if "*" in body else ():
        end = _before(body, m.start())
        if not _operand_starts(body, end) and not _after_cast(body, end):
            continue  # a product (x * (y)), a declarator
        head = _CPP_CAST_HEAD.match(body, m.end())
        opened = head.end() - 1 if head else m.end()
        close = matching(body, opened, "(", opened + CAST_SPAN)
        if close == len(body):
            continue
        if not head and _C_CAST_HEAD.fullmatch(body, m.end(), close + 1):
            # *(const float2*)(&a[2 * i]), *(float4*)p: the cast's operand follows it
            after = _OPERAND.match(body, close + 1)
            if after is None:
                continue
            close = matching(body, after.end() - 1, "(", after.end() + CAST_SPAN) \
                if after[0].endswith("(") else after.end() - 1
            if close == len(body):
                continue
        sub = _subscript_of(body[m.end():close + 1], pointers())
        if sub == UNSIZED:
            unsized = True
        elif sub:
            edits.append((m.start(), close + 1, sub))
    # ``*p``: a pointer's own element (a loop walking a pointer), searched for by name (a
    # parameter or a local pointer), after an operator or at a statement's start; the
    # sizes asked for only where one is found
    starred = set(_STARRED.findall(body)) if "*" in body else set()
    names = starred & (params | set(_POINTER_NAME.findall(body))) if starred else ()
    for name in names:
        for start, stop in _bare_dereferences(body, name):
            if _operand_starts(body, _before(body, start)) and (
                    name in params or name in pointers()):
                edits.append((start, stop, f"{name}[0]"))
    last = len(body) + 1
    for lo, hi, text in sorted(edits, reverse=True):
        if hi <= last:  # the outermost of overlapping ones: the later one is inside it
            body = body[:lo] + text + body[hi:]
            last = lo
    return body, unsized


def moved(spread: Spread, size: float) -> tuple[str, float]:
    """How an access of ``size`` bytes at ``spread`` moves: ("coalesced", size), ("column",
    size) or ("scattered", bytes moved per lane: a 32-byte sector, or the element where it
    is larger)."""
    x, y = spread
    if x <= 1:
        return "coalesced", size
    if x * size <= 32:
        # a small literal stride streams through whole sectors, the elements between
        # included: an interleaved pair's a[2 * i] moves its a[2 * i + 1] too (a
        # neighbour, loaded once), the even elements alone move both
        return "coalesced", x * size
    if x == STRIDED and y == 1:
        return "column", size
    return "scattered", max(32.0, size)
