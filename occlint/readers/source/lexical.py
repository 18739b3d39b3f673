"""The lexical layout of a CUDA / HIP source, found with regular expressions (C speed).

Before tree-sitter sees a file, occlint finds with ``re`` what needs no grammar: comments
and string literals (blanked in :attr:`Layout.code`, offsets kept), preprocessor lines and
their conditional groups, ``#define``s, the markers of launches and kernels, and the
brace structure of one preprocessor configuration. With these it

* gives tree-sitter only what it must parse: the bodies of functions that hold no launch
  and no kernel are blanked (spaces, newlines kept, so every line and column stays where
  it is) — in kernel-heavy files most of the bytes are device and host code occlint never
  reads;
* builds *configurations* of the preprocessor (:meth:`Layout.configuration`): directive
  lines blanked, and of each ``#if`` group only the branch a condition known in the file
  selects, else the first (every unknown condition true) or the last (every one false).
  A launch whose arguments a ``#if`` splits parses in each, and its values are reported
  where the configurations agree.

Nothing here is a preprocessor: no file is included and no macro is expanded.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

# an all-capitals name alone on its line, the next line opening a loop (lexical's
# loop_macros); ``_Pragma`` with its string (blanked in Layout.code) in place
_LOOP_MACRO = re.compile(rb"^[ \t]*([A-Z][A-Z0-9_]{2,})[ \t]*\r?\n(?=[ \t]*(?:for|while|do)\b)",
                         re.M)
_PRAGMA_OPERATOR = re.compile(rb"\b_Pragma\s*\([^()]*\)")
# capitals opening a line, then a return type and a function's name and parenthesis
_ATTRIBUTE_MACRO = re.compile(
    rb"[ \t]*(?:static[ \t]+|inline[ \t]+)*((?:[A-Z][A-Z0-9_]{2,}[ \t]+)+)"
    rb"(?=(?:const[ \t]+|static[ \t]+|inline[ \t]+)*"
    rb"[A-Za-z_][\w:]*(?:<[^<>;{}\n]*>)?[ \t*&]+[A-Za-z_]\w*[ \t]*\()")
# a macro for ``__restrict__`` after a pointer's star
_RESTRICT_MACRO = re.compile(rb"\*[ \t]*([A-Z][A-Z0-9_]*RESTRICT[A-Z0-9_]*)\b")
# an alignment, a callback's calling convention, a vector type's size: each searched only
# where its word is in the file
_ATTRIBUTES = (
    (b"align__", re.compile(rb"__(?:builtin_)?align__\s*\(\s*\w+\s*\)")),
    (b"CUDART_CB", re.compile(rb"CUDART_CB\b")),
    # a pack of pointers (raft's ``const Vecs*... vecs``), which the grammar does not take:
    # its dots (each element is read as the pointer it is)
    (b"...", re.compile(rb"(?<=\*)[ \t]*\.\.\.(?=[ \t]*[A-Za-z_])")),
    (b"vector_", re.compile(rb"__attribute__\s*\(\(\s*(?:__vector_size__|vector_size|"
                            rb"ext_vector_type)\s*\([^()]*(?:\([^()]*\)[^()]*)*\)\s*\)\)")))
# an execution space, and what follows one on a lambda (its parameters, ``mutable``,
# the other space)
_EXECUTION_SPACE = re.compile(rb"__(?:device|host)__")
_LAMBDA_OPENS = re.compile(rb"\s*(?:\(|mutable\b|__(?:device|host)__)")
_NOISE = re.compile(rb'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])\'', re.S)
# from a "#" (re skips ahead to it; a line-anchored pattern is tried at every byte): the
# caller checks that only blanks precede it on its line
_DIRECTIVE = re.compile(rb"#[ \t]*(\w*)[ \t]*((?:\\\r?\n|[^\n])*)")
# each branch starts with a literal character (no leading \\b): re skips ahead to "<", "h", "c"
LAUNCH_MARKERS = re.compile(rb"<<<|(?:hipLaunchKernelGGL|cudaLaunch(?:Cooperative)?Kernel(?:ExC?)?"
                            rb"|hipLaunch(?:Cooperative)?Kernel(?:ExC?)?"
                            rb"|cuLaunch(?:Cooperative)?Kernel|hipModuleLaunch(?:Cooperative)?Kernel)\b")
KERNEL_MARKER = re.compile(rb"__global__\b")
# a macro of another header standing for ``__global__``: capitals ending in the word KERNEL
# (raft's RAFT_KERNEL, cudf's CUDF_KERNEL, GPU_KERNEL). Not CUB's and Thrust's
# ..._KERNEL_ATTRIBUTES: their kernels launch through their own triple_chevron, which names
# none of them, and reading their dispatch headers cost a quarter of CuPy's sdist's time
KERNEL_MACRO_NAME = re.compile(rb"(?:[A-Z0-9]+_)*KERNEL")
# what may open a kernel's definition on its line before such a macro
_BEFORE_KERNEL_MACRO = re.compile(
    rb'[ \t]*(?:(?:template[ \t]*<[^\n]*>|static|inline|extern[ \t]*"[ \t]*")[ \t]*)*')
# after the macro: a word, and whether a parenthesis follows it (the kernel's name or
# ``__launch_bounds__``: the macro is the return type too)
_AFTER_KERNEL_MACRO = re.compile(rb"[ \t\r\n]+([A-Za-z_]\w*)([ \t\r\n]*\()?")
_QUALIFIERS = ([b"const"], [b"noexcept"], [b"override"], [b"final"], [b"mutable"])
_TRAILING_RETURN = re.compile(rb"\)\s*(?:const\s*)?->\s*[\w:<>,\s*&]+$")
_WORD = re.compile(rb"[A-Za-z_]\w*")
# a driver API's launch is read only in a file that names a kernel's handle by a literal
# (``cuModuleGetFunction(&f, module, "name")``): a launcher of handles it is given
# (jitify's, CUB's driver launcher) names no kernel, and its header is not worth a parse
_NAMED_FUNCTION = re.compile(rb"ModuleGetFunction\s*\([^;()]*\"[^\"\n]+\"\s*\)")  # (blanked)
_BLANK = bytes.maketrans(bytes(range(256)), b" " * 10 + b"\n" + b" " * 245)
OPEN, BRANCH, CLOSE = ("if", "ifdef", "ifndef"), ("elif", "else", "elifdef", "elifndef"), \
    ("endif",)
MAX_CONFIGURATIONS_GROUPS = 4096


def blank(data: bytes) -> bytes:
    """Every byte but newlines as a space: lines and columns stay where they are."""
    return data.translate(_BLANK)


def overwrite(data: bytes, pieces: list[tuple[int, int, bytes]]) -> bytes:
    """``data`` with each ``(start, end, text)`` written in place (``text`` as long as
    ``end - start``, the pieces in order and apart): every offset stays where it is."""
    if not pieces:
        return data
    out, last = [], 0
    for start, end, text in pieces:
        out += [data[last:start], text]
        last = end
    out.append(data[last:])
    return b"".join(out)


def blank_ranges(data: bytes, ranges: list[tuple[int, int]], comments: bool = False
                 ) -> bytes:
    """``data`` with the ranges blanked (:func:`blank`); with ``comments``, each range as
    one ``/* ... */`` of the same length (:func:`_as_comment`): tree-sitter's lexer goes
    through a comment faster than through the spaces before a token (the parse of HeCBench's
    .cu files, most of whose function bodies are blanked: 0.58-0.66 CPU s with spaces,
    0.53-0.58 with comments), and every line, column and offset stays where it is."""
    if not ranges:
        return data
    pieces, last = [], 0
    for start, end in sorted(ranges):
        if start < last:
            start = last
        if end <= start:
            continue
        pieces.append(data[last:start])
        blanked = data[start:end].translate(_BLANK)
        pieces.append(_as_comment(blanked) if comments else blanked)
        last = end
    pieces.append(data[last:])
    return b"".join(pieces)


def end_statement_macros(data: bytes, names: list[bytes]) -> bytes:
    """``data`` with a semicolon after each indented line that is only the name of a
    statement macro (:meth:`Layout.statement_macros`): the name moves one column left into
    its indentation, so every other line, column and offset stays where it is."""
    if not names:
        return data
    alone = re.compile(rb"(?m)^([ \t]*)[ \t](" + b"|".join(map(re.escape, names)) +
                       rb")(?=[ \t]*\r?$)")
    return alone.sub(lambda m: m[1] + m[2] + b";", data)


def _as_comment(blanked: bytes) -> bytes:
    """Blanks as one ``/* ... */`` between the first and the last two spaces (newlines
    kept where they are); unchanged if there is no room for one."""
    first, last = blanked.find(b"  "), blanked.rfind(b"  ")
    if first < 0 or last < first + 2:
        return blanked
    return blanked[:first] + b"/*" + blanked[first + 2:last] + b"*/" + blanked[last + 2:]


@dataclass(slots=True)
class Directive:
    """One preprocessor line (with its continuation lines)."""

    start: int
    end: int  # the end of its last line (before the newline)
    name: str  # "define", "if", "else", ...
    arg: bytes  # the rest of the line, comments blanked, continuations joined by spaces
    arg_start: int
    group: int = -1  # index into Layout.groups for conditional directives
    enclosing: tuple[int, ...] = ()  # the groups it is inside, outermost first


@dataclass(slots=True)
class Group:
    """One ``#if`` ... ``#endif``: its branch directives in order, then the ``#endif``."""

    branches: list[int] = field(default_factory=list)  # directive indices (#if, #elif, #else)
    end: int = -1  # directive index of #endif
    guard: bool = False  # an include guard: `#ifndef X` then `#define X`


@dataclass(slots=True)
class Define:
    name: str
    start: int  # of the directive
    value: bytes  # comments blanked, continuations joined
    value_start: int
    params: tuple[str, ...] | None  # function-like macros: the parameter names
    conditional: bool = False  # inside a #if group (not an include guard)


class Layout:
    """Comments, strings, directives, markers and blocks of one file (see the module)."""

    def __init__(self, data: bytes):
        self.data = data
        pieces, last = [], 0
        self.comments: list[tuple[int, int]] = []  # comments that mention occlint
        for m in _NOISE.finditer(data):
            start, end = m.span()
            pieces.append(data[last:start])
            if data[start] in b"\"'":  # keep the quotes: `extern "C"` stays a linkage
                pieces.append(data[start:start + 1] + blank(data[start + 1:end - 1]) +
                              data[end - 1:end])
            else:
                pieces.append(blank(data[start:end]))
                if b"occlint" in data[start:end]:
                    self.comments.append((start, end))
            last = end
        pieces.append(data[last:])
        self.code = b"".join(pieces) if pieces[1:] else data
        self.directives: list[Directive] = []
        self.groups: list[Group] = []
        self.balanced = True  # every #if has its #endif
        self._read_directives()
        self.defines: dict[str, list[Define]] = {}
        self.undefined: set[str] = set()
        for d in self.directives:
            if d.name == "define":
                self._define(d)
            elif d.name == "undef":
                self.undefined.add(d.arg.strip().decode("ascii", "replace"))

    def has_markers(self) -> bool:
        """Whether a kernel or launch marker is in the code (not only in comments or string
        literals, where nothing can be read from it)."""
        return KERNEL_MARKER.search(self.code) is not None or \
            bool(launch_markers(self.code)) or bool(self.kernel_macros())

    def kernel_macros(self) -> list[tuple[int, int, bytes]]:
        """Where a macro stands for ``__global__`` at the head of a definition: (its start,
        its end, what the parse reads there, as long as the name). The macro is the file's
        own (its ``#define`` holds ``__global__`` in some branch: ``#define GPU_KERNEL
        __global__``) or, defined in a header, named as :data:`KERNEL_MACRO_NAME` names it
        and not defined in the file otherwise. Followed by the kernel's name or by
        ``__launch_bounds__`` (``RAFT_KERNEL foo(...)``: its expansion ends in ``void``) the
        parse reads ``void`` in its place (a name shorter than that stays, read as the
        type); followed by a return type or a specifier (``CUDF_KERNEL void foo(...)``) it
        is blanked. Only at a line's start (after ``template <...>``, ``static``, ``inline``
        or ``extern "C"``), outside directives."""
        cached = getattr(self, "_kernel_macros", None)
        if cached is not None:
            return cached
        code = self.code
        names = {n.encode() for n, found in self.defines.items()
                 if any(d.params is None and KERNEL_MARKER.search(d.value) for d in found)}
        if b"KERNEL" in code:
            for at in _found(code, b"KERNEL", 6):
                start, end = _word_around(code, at, at + 6)
                word = code[start:end]
                if word not in names and word.decode() not in self.defines and \
                        KERNEL_MACRO_NAME.fullmatch(word):
                    names.add(word)
        out: list[tuple[int, int, bytes]] = []
        for name in sorted(names):
            for at in _found(code, name, len(name)):
                end = at + len(name)
                if _word_around(code, at, end) != (at, end):
                    continue  # part of a longer name
                after = _AFTER_KERNEL_MACRO.match(code, end)
                line = code.rfind(b"\n", 0, at) + 1
                if after is None or not _BEFORE_KERNEL_MACRO.fullmatch(code, line, at) or \
                        self.directive_at(at) is not None:
                    continue
                if after[2] is None and after[1] != b"__launch_bounds__":
                    out.append((at, end, b" " * len(name)))  # a type or specifier follows
                else:
                    out.append((at, end, b"void".ljust(len(name)) if len(name) >= 4 else name))
        out.sort()
        self._kernel_macros = out
        return out

    # -- directives ---------------------------------------------------------------------------
    def _read_directives(self) -> None:
        code = self.code
        if b"#" not in code:
            return
        stack: list[int] = []
        for m in _directives(code):
            name = m[1].decode("ascii", "replace")
            arg = m[2].replace(b"\\\r\n", b"   ").replace(b"\\\n", b"  ").replace(b"\n", b" ")
            line_start = code.rfind(b"\n", 0, m.start()) + 1
            d = Directive(line_start, m.end(), name, arg, m.start(2), enclosing=tuple(stack))
            index = len(self.directives)
            self.directives.append(d)
            if name in OPEN:
                stack.append(len(self.groups))
                self.groups.append(Group([index]))
                d.group = stack[-1]
            elif name in BRANCH or name in CLOSE:
                if not stack:
                    self.balanced = False
                    continue
                group = self.groups[stack[-1]]
                d.group = stack[-1]
                if name in CLOSE:
                    group.end = index
                    stack.pop()
                else:
                    group.branches.append(index)
        if stack:
            self.balanced = False
        for i, d in enumerate(self.directives):
            if d.name == "ifndef" and i + 1 < len(self.directives):
                after = self.directives[i + 1]
                # `#ifndef X` / `#define X` with no value; `#define X 1` there is a default
                # that the command line may override (-DX=0): not known
                self.groups[d.group].guard = after.name == "define" and \
                    len(self.groups[d.group].branches) == 1 and \
                    after.arg.split() == d.arg.split()[:1]

    def _define(self, d: Directive) -> None:
        m = _WORD.match(d.arg)
        if not m:
            return
        name = m[0].decode("ascii", "replace")
        rest = d.arg[m.end():]
        params = None
        value_start = d.arg_start + m.end()
        if rest.startswith(b"("):
            close = rest.find(b")")
            if close < 0:
                return
            params = tuple(p.strip().decode("ascii", "replace")
                           for p in rest[1:close].split(b",") if p.strip())
            rest = rest[close + 1:]
            value_start += close + 1
        self.defines.setdefault(name, []).append(
            Define(name, d.start, rest.strip(), value_start + len(rest) - len(rest.lstrip()),
                   params, conditional=any(not self.groups[g].guard for g in d.enclosing)))

    def directive_at(self, position: int) -> Directive | None:
        """The directive whose lines hold ``position``, if any."""
        i = bisect.bisect_right(self._starts(), position) - 1
        if i >= 0 and self.directives[i].start <= position <= self.directives[i].end:
            return self.directives[i]
        return None

    def _starts(self) -> list[int]:
        starts = getattr(self, "_starts_cache", None)
        if starts is None:
            starts = [d.start for d in self.directives]
            self._starts_cache = starts
        return starts

    # -- conditions ---------------------------------------------------------------------------
    def defined_before(self, name: str, position: int) -> bool | None:
        """True when the file #defines ``name`` before ``position`` (and never #undefs it);
        None when that is not known here (another file or the command line may)."""
        if name in self.undefined:
            return None
        if any(d.start < position and not d.conditional for d in self.defines.get(name, ())):
            return True
        return None

    def condition(self, d: Directive) -> bool | None:
        """The value of a conditional directive when the file determines it."""
        arg = d.arg.strip()
        if d.name in ("ifdef", "ifndef", "elifdef", "elifndef"):
            m = _WORD.match(arg)
            if not m:
                return None
            name = m[0].decode("ascii", "replace")
            known = self.defined_before(name, d.start)
            if d.name.endswith("ndef"):
                if known is None and self.groups[d.group].guard:
                    return True  # an include guard: #ifndef X / #define X
                return None if known is None else not known
            return known
        if d.name in ("if", "elif"):
            return _evaluate_condition(arg, self, d.start)
        return None

    def configuration(self, unknown: bool) -> list[tuple[int, int]]:
        """The byte ranges to blank for one configuration: every conditional directive line,
        and the branches not taken (a known condition decides; else ``unknown``)."""
        ranges: list[tuple[int, int]] = []
        if not self.balanced:
            return [(d.start, d.end) for d in self.directives if d.group >= 0]
        for d in self.directives:
            if d.group >= 0:
                ranges.append((d.start, d.end))
        for group in self.groups[:MAX_CONFIGURATIONS_GROUPS]:
            taken = False
            bounds = [*group.branches, group.end]
            for i, index in enumerate(group.branches):
                d = self.directives[index]
                value = True if d.name == "else" else self.condition(d)
                active = not taken and (unknown if value is None else value)
                if not active:
                    end = self.directives[bounds[i + 1]].start
                    ranges.append((d.end, end))
                taken = taken or active
        return ranges

    def inactive(self) -> list[tuple[int, int]]:
        """Byte ranges of the branches the file itself excludes (``#if 0``; ``#if USE_X``
        after ``#define USE_X 0``; the ``#else`` of a ``#ifdef X`` after ``#define X``):
        code the compiler never sees. A condition on a name the file does not define is
        not known (the command line or a header may define it)."""
        out: list[tuple[int, int]] = []
        if not self.balanced:
            return out
        for group in self.groups:
            bounds = [*group.branches, group.end]
            taken = False
            for i, index in enumerate(group.branches):
                d = self.directives[index]
                value = True if d.name == "else" else self.condition(d)
                if taken or value is False:
                    out.append((d.end, self.directives[bounds[i + 1]].start))
                taken = taken or value is True
        return _outermost(out)

    def macro_arguments(self) -> list[tuple[int, int]]:
        """The arguments of statement-level uses of the file's function-like macros that
        hold no launch (``LAUNCH_AT(float, 96);``): types as arguments throw tree-sitter's
        recovery off for the lines after them; occlint reads such a launch from the
        ``#define`` itself, so the arguments are blanked (the parentheses kept)."""
        names = [n for n, found in self.defines.items()
                 if any(d.params is not None for d in found)
                 and not LAUNCH_MARKERS.fullmatch(n.encode())]
        if not names:
            return []
        code = self.code
        out: list[tuple[int, int]] = []
        for start, end in _calls(code, names):
            if self.directive_at(start) is not None:
                continue
            before = code[max(0, start - 16):start].rstrip()
            if before and before[-1:] not in b";{})" and not before.endswith((b"else", b"do")):
                continue
            close = _matching(code, end - 1)
            if close < 0 or code[close + 1:close + 64].lstrip()[:1] not in (b";", b"", b"}"):
                continue
            if not LAUNCH_MARKERS.search(code, end, close):
                out.append((end, close))
        return out

    def pragmas(self) -> list[tuple[int, int]]:
        """``#pragma`` lines: tree-sitter takes one between a loop's header and its body
        (``for (...)`` / ``#pragma unroll`` / ``for (...)``, as nvcc allows) for the body,
        and the loop then has none; they hold nothing occlint reads, so they are blanked."""
        return [(d.start, d.end) for d in self.directives if d.name == "pragma"]

    def loop_macros(self) -> list[tuple[int, int]]:
        """A macro alone on its line before a loop (``CUTLASS_PRAGMA_UNROLL``,
        ``TCNN_PRAGMA_UNROLL``: an ``_Pragma("unroll")`` defined in another header) and an
        ``_Pragma(...)`` written in place: tree-sitter reads the name as an expression with
        no semicolon and loses the loop; like ``#pragma`` lines they hold nothing occlint
        reads, so they are blanked. A name the file defines as statements is not one."""
        code = self.code
        if b"PRAGMA" not in code and b"_Pragma" not in code:
            return []
        out = []
        for m in _LOOP_MACRO.finditer(code):
            name = m[1].decode()
            if name in self.defines and any(
                    d.value.rstrip().endswith((b";", b"}")) for d in self.defines[name]):
                continue
            out.append((m.start(1), m.end(1)))
        out.extend((m.start(), m.end()) for m in _PRAGMA_OPERATOR.finditer(code))
        return out

    def lambda_attributes(self) -> list[tuple[int, int]]:
        """``__device__`` / ``__host__`` on a lambda (``[=] __device__ (int i) {...}``, nvcc's
        extended lambdas): the grammar has no place for them and loses the call around the
        lambda; blanked, the lambda parses as C++'s."""
        code = self.code
        out = []
        for m in _EXECUTION_SPACE.finditer(code):
            k = m.start()
            while k and code[k - 1:k] in (b" ", b"\t", b"\r", b"\n"):
                k -= 1
            # after a capture list, or after the space before it on the same lambda
            if (code[k - 1:k] == b"]" or (out and out[-1][1] == k)) and \
                    _LAMBDA_OPENS.match(code, m.end()):
                out.append((m.start(), m.end()))
        return out

    def attributes(self) -> list[tuple[int, int]]:
        """Attributes the grammar has no place for, which hold nothing occlint reads: a
        macro spelling ``__restrict__`` after a pointer's ``*`` (``const float *
        GGML_CUDA_RESTRICT x = p;``: the macro taken for the declared name), a struct's
        ``__align__(16)`` / ``__builtin_align__(32)`` (cuda-samples' alignedTypes, ggml's
        float8), ``CUDART_CB`` before a callback's name, and a vector type's
        ``__attribute__((__vector_size__(16)))`` (AMD's MFMA examples), the dots of a pack of
        pointers. Blanked, the
        declarations parse."""
        code = self.code
        out = []
        if b"RESTRICT" in code:
            out += [(m.start(1), m.end(1)) for m in _RESTRICT_MACRO.finditer(code)]
        for gate, pattern in _ATTRIBUTES:
            if gate in code:
                out += [(m.start(), m.end()) for m in pattern.finditer(code)]
        return out

    def declaring_macros(self) -> list[tuple[int, int]]:
        """Uses of the file's function-like macros that define functions (their ``#define``
        holds ``__global__`` or a body's ``{``), alone on their lines with no semicolon
        (candle's ``SOFTMAX_OP(__nv_bfloat16, float, softmax_bf16)``, DeepSpeed's
        ``INSTANTIATE_..._FOR_TYPES(int32_t, float)``): the grammar reads each as a call
        missing its semicolon and loses the next; blanked whole, the rest of the file
        parses (the functions they would define are the preprocessor's: not read)."""
        names = [n for n, found in self.defines.items()
                 if any(d.params is not None and (b"__global__" in d.value or b"{" in d.value)
                        for d in found) and not LAUNCH_MARKERS.fullmatch(n.encode())]
        if not names:
            return []
        code = self.code
        out: list[tuple[int, int]] = []
        for start, end in _calls(code, names):
            line = code.rfind(b"\n", 0, start) + 1
            if code[line:start].strip() or self.directive_at(start) is not None:
                continue  # not alone at its line's start
            close = _matching(code, end - 1)
            if close < 0:
                continue
            eol = code.find(b"\n", close)
            if not code[close + 1:eol if eol >= 0 else None].strip():
                out.append((start, close + 1))
        return out

    def attribute_macros(self) -> list[tuple[int, int]]:
        """An attribute macro (``DS_D_INLINE``, ``CUTLASS_HOST_DEVICE``: ``__device__
        __forceinline__`` defined in another header; its name holds DEVICE or INLINE)
        opening a line before a function's return type and name (``DS_D_INLINE float
        gated_act_fn(float x, float y);``): the grammar takes it for the type; blanked, the
        declaration parses."""
        code = self.code
        starts = set()  # the lines naming an execution space or inlining in capitals
        for word in (b"DEVICE", b"INLINE"):
            at = code.find(word)
            while at >= 0:
                starts.add(code.rfind(b"\n", 0, at) + 1)
                at = code.find(word, at + len(word))
        out = []
        for line in sorted(starts):
            m = _ATTRIBUTE_MACRO.match(code, line)
            if m is None:
                continue
            name = m[1].split()[0].decode()
            if name not in self.defines or all(d.params is None for d in self.defines[name]):
                out.append((m.start(1), m.end(1)))
        return out

    def statement_macros(self) -> list[bytes]:
        """The file's object-like macros whose body is statements (it ends with ``;`` or
        ``}``): ``THREAD_3D`` alone on its line then stands for declarations, with no
        semicolon of its own."""
        return [name.encode() for name, found in self.defines.items()
                if any(d.params is None and d.value.rstrip().endswith((b";", b"}"))
                       for d in found)]

    def has_conditionals(self, start: int, end: int) -> bool:
        return any(d.group >= 0 and start <= d.start < end for d in self.directives)

    # -- structure ----------------------------------------------------------------------------
    def reducible_bodies(self) -> list[tuple[int, int]]:
        """Interiors of function bodies that hold no launch and no kernel marker, in the
        configuration where every unknown condition is true, and that no conditional group
        crosses: these can be blanked before parsing without changing what occlint reads."""
        view = blank_ranges(self.code, self.configuration(True) + [
            (d.start, d.end) for d in self.directives])
        keep = launch_markers(self.code)
        keep += kernel_markers(self.code)
        macros = [at for at, _, _ in self.kernel_macros()]
        keep += macros
        keep.sort()
        out: list[tuple[int, int]] = []
        stack: list[int] = []
        enclosing: dict[int, bool] = {}  # brace -> whether it opens a body
        boundary = 0  # the end of the last top-level item
        for at in _braces(view):
            if view[at] == 0x7B:  # {
                stack.append(at)
                continue
            if not stack:
                return []  # unbalanced: parse everything
            start = stack.pop()
            if stack and stack[-1] not in enclosing:
                enclosing[stack[-1]] = _is_body(view, stack[-1], 0)
            outermost = not stack or not enclosing[stack[-1]]
            if outermost and _is_body(view, start, boundary) and \
                    not _holds(keep, start, at) and self._closed(start, at) and \
                    b"__global__" not in view[max(boundary, start - 2048):start] and \
                    not _holds(macros, max(boundary, start - 2048), start):
                out.append((start + 1, at))
            if not stack:
                boundary = at + 1
        if stack:
            return []
        return _outermost(out)

    def _closed(self, start: int, end: int) -> bool:
        """No conditional group starts or ends across the range."""
        starts = self._starts()
        first, last = bisect.bisect_left(starts, start), bisect.bisect_left(starts, end)
        inside = {d.group for d in self.directives[first:last] if d.group >= 0}
        if not inside:
            return True
        for g in inside:
            group = self.groups[g]
            first = self.directives[group.branches[0]].start
            last = self.directives[group.end].start if group.end >= 0 else -1
            if not (start <= first < end and start <= last < end):
                return False
        return True


def _directives(code: bytes) -> list[re.Match[bytes]]:
    """The preprocessor lines: a ``#`` with only blanks before it on its line."""
    out = []
    at = code.find(b"#")
    while at >= 0:
        line_start = code.rfind(b"\n", 0, at) + 1
        if code[line_start:at].strip(b" \t\r\f\v"):
            at = code.find(b"#", at + 1)  # in a line of code (`a # b` is no directive)
            continue
        m = _DIRECTIVE.match(code, at)
        assert m is not None  # the pattern matches any "#"
        out.append(m)
        at = code.find(b"#", m.end())
    return out


_CALL_OPEN = re.compile(rb"\s*\(")


def _found(code: bytes, needle: bytes, step: int = 1) -> Iterator[int]:
    """Where ``needle`` occurs in ``code``, in order, found with ``bytes.find`` (each search
    from ``step`` bytes past the last find): a literal pattern tried at every byte by ``re``
    is several times slower on HeCBench's files."""
    at = code.find(needle)
    while at >= 0:
        yield at
        at = code.find(needle, at + step)


def _calls(code: bytes, names: list[str]) -> list[tuple[int, int]]:
    """Where one of the identifiers ``names`` is called: (the name's start, the end of
    its ``(``), in order; a name is a whole word (what ``\\b(?:a|b)\\s*\\(`` finds)."""
    out = []
    for name in names:
        word = name.encode()
        for at in _found(code, word):
            before = code[at - 1:at]
            if not at or not (before.isalnum() or before == b"_"):
                m = _CALL_OPEN.match(code, at + len(word))
                if m is not None:
                    out.append((at, m.end()))
    out.sort()
    return out


def kernel_markers(code: bytes) -> list[int]:
    """Positions of ``__global__`` as a whole word (:data:`KERNEL_MARKER`; in
    ``__global__global__`` the one at 8)."""
    return [at for at in _found(code, b"__global__")
            if not ((after := code[at + 10:at + 11]).isalnum() or after == b"_")]


def _word_around(code: bytes, start: int, end: int) -> tuple[int, int]:
    """The bounds of the identifier holding ``code[start:end]``."""
    while start and (code[start - 1:start].isalnum() or code[start - 1:start] == b"_"):
        start -= 1
    while end < len(code) and (code[end:end + 1].isalnum() or code[end:end + 1] == b"_"):
        end += 1
    return start, end


def _braces(code: bytes) -> list[int]:
    """Positions of ``{`` and ``}``, in order."""
    return sorted([*_found(code, b"{"), *_found(code, b"}")])


def launch_markers(code: bytes) -> list[int]:
    """Positions of ``<<<`` and of the launch APIs' names (:data:`LAUNCH_MARKERS`), found with
    ``bytes.find``: the regex alone, tried at every "c" and "h", is slower."""
    out = list(_found(code, b"<<<", 3))
    named: bool | None = None  # whether a driver API's kernel is named by a literal
    for at in _found(code, b"Launch", 6):
        for start in (at - 4, at - 3, at - 2, at - 9):  # cuda, hip, cu, hipModule Launch...
            if start >= 0 and LAUNCH_MARKERS.match(code, start):
                if start in (at - 2, at - 9):  # a driver API's
                    if named is None:
                        named = _NAMED_FUNCTION.search(code) is not None
                    if not named:
                        break
                if _word_around(code, start, start)[0] == start:
                    out.append(start)  # (not the end of a longer name: tcuLaunchKernel)
                break
    return sorted(out)


def _matching(code: bytes, open_at: int, limit: int = 8192) -> int:
    """The position of the ``)`` closing the ``(`` at ``open_at``; -1 if not found soon."""
    depth = 0
    for m in re.compile(rb"[()]").finditer(code, open_at, open_at + limit):
        depth += 1 if code[m.start()] == 0x28 else -1
        if depth == 0:
            return m.start()
    return -1


def _is_body(view: bytes, brace: int, boundary: int) -> bool:
    """Whether the ``{`` at ``brace`` opens a function body (``) {``, ``) const {``,
    ``-> T {``); also a statement's block, which is only ever inside a function."""
    head = view[max(boundary, brace - 512):brace].rstrip()
    if head.endswith(b")") or head.rsplit(None, 1)[-1:] in _QUALIFIERS:
        return True
    return b"->" in head[-200:] and _TRAILING_RETURN.search(head[-200:]) is not None


def _holds(sorted_positions: list[int], start: int, end: int) -> bool:
    i = bisect.bisect_left(sorted_positions, start)
    return i < len(sorted_positions) and sorted_positions[i] < end


def _outermost(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if out and start < out[-1][1]:
            continue
        out.append((start, end))
    return out


_CONDITION_TOKENS = re.compile(rb"\s*(?:(\d+)[uUlL]*|defined\s*\(\s*(\w+)\s*\)|defined\s+(\w+)|"
                               rb"([A-Za-z_]\w*)|(&&|\|\||==|!=|<=|>=|[!<>()+\-*]))")


def _evaluate_condition(arg: bytes, layout: Layout, position: int) -> bool | None:
    """``#if`` expressions of integers, ``defined``, names #defined earlier in the file to
    integers and ``! && || == != < > <= >= + - *``; None for anything else or unknown."""
    if len(arg) > 200:
        return None
    out: list[str] = []
    pos = 0
    text = arg.rstrip()
    while pos < len(text):
        m = _CONDITION_TOKENS.match(text, pos)
        if not m or m.end() == pos:
            return None
        pos = m.end()
        if m[1] is not None:
            out.append(str(int(m[1])))
        elif m[2] is not None or m[3] is not None:
            name = (m[2] or m[3]).decode("ascii", "replace")
            known = layout.defined_before(name, position)
            if known is None:
                return None
            out.append("1")
        elif m[4] is not None:
            value = _define_int(layout, m[4].decode("ascii", "replace"), position)
            if value is None:
                return None
            out.append(str(value))
        else:
            op = m[5].decode()
            out.append({"&&": " and ", "||": " or ", "!": " not "}.get(op, op))
    return _arithmetic("".join(out))


def _arithmetic(expression: str) -> bool | None:
    """The truth of an expression of integers, ``not and or``, ``+ - *`` and comparisons
    (read with ``ast``, evaluated node by node: nothing is executed)."""
    import ast
    import operator

    ops: dict[type, Any] = {ast.Add: operator.add, ast.Sub: operator.sub,
                            ast.Mult: operator.mul, ast.Eq: operator.eq, ast.NotEq: operator.ne,
                            ast.Lt: operator.lt, ast.Gt: operator.gt, ast.LtE: operator.le,
                            ast.GtE: operator.ge}

    def value(node: ast.AST) -> int:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return int(not value(node.operand))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = value(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BoolOp):
            parts = [value(v) for v in node.values]
            return int(all(parts) if isinstance(node.op, ast.And) else any(parts))
        if isinstance(node, ast.BinOp) and type(node.op) in ops:
            result = ops[type(node.op)](value(node.left), value(node.right))
            if abs(result) > 1 << 64:
                raise ValueError("out of range")
            return result
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in ops:
            return int(ops[type(node.ops[0])](value(node.left), value(node.comparators[0])))
        raise ValueError("not a preprocessor expression")

    try:
        return bool(value(ast.parse(expression, mode="eval").body))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _define_int(layout: Layout, name: str, position: int) -> int | None:
    found = [d for d in layout.defines.get(name, ()) if d.start < position]
    if len(found) != 1 or name in layout.undefined or found[0].params is not None:
        return None
    if found[0].conditional:
        return None
    m = re.fullmatch(rb"\(?\s*(\d+)[uUlL]*\s*\)?", found[0].value)
    return int(m[1]) if m else None
