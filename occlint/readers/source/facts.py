"""A kernel's per-element facts from its source text (issue 28): what each thread loads
and stores per element, its arithmetic, its atomics and their addresses, its loop.

Read from the text of the kernel's parameters and body, comments removed:

* element sizes from the pointer parameters' types (``const float4* a``: 16 bytes);
* a load for every subscript of a pointer parameter read, a store for every one assigned,
  inside the element's work (a grid- or block-stride loop's body, else the whole body);
  loads under a ``threadIdx`` guard (a tile's halo) are a few threads' and not counted;
* arithmetic: ``fma`` calls and multiplications; its independent chains, the variables
  that ``v = fmaf(v, ...)`` steps (two chains issue twice as fast from one warp); in double
  precision where the body or its parameters name ``double`` or a double literal promotes
  a statement (``fp64``);
* type aliases of the file (``typedef float2 Complex;``) read as the types they name, and a
  template's instantiation read from its text with the arguments a launch names;
* a ``for`` loop with literal (or ``#define``d) bounds multiplies what its body holds;
  each pass of such a loop as compiled costs ``LOOP_CONTROL`` instructions (the counter's
  add, its compare, the branch: what NVRTC's PTX holds per back edge), its passes the
  trips over its ``#pragma unroll N`` (none under a bare ``#pragma unroll``, which
  unrolls it whole); without a pragma, LLVM's unroller: whole when the unrolled body
  holds at most ``FULL_UNROLL`` instructions, else passes of about ``PASS`` each;
* ``atomicAdd`` and its kin: one address when the address names no thread or block index,
  a block's address when it names only the block index; one per block when a
  ``threadIdx`` guard leaves it to one thread of each block;
* the stride loop's unrolling as NVRTC compiles it, the elements a pass holds: none where
  the index's type stops it (:func:`unrolled_by_compiler`) or the body keeps a loop of its
  own, else four, two or one by the body's size (``UNROLL_4_SIZE``, ``UNROLL_2_SIZE``).

What the text does not show (a helper function's body, a pointer's type hidden behind a
template parameter) stays None.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
import struct
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import cache, lru_cache

from occlint.model.facts import BLOCK_AS_IS, BLOCK_PINNED, LOOP_CONTROL, OWN_LINES, Facts
from occlint.model.source import TemplateText
from occlint.readers.source import access

TYPE_BYTES = {
    "char": 1, "int8_t": 1, "uint8_t": 1, "bool": 1, "uchar": 1,
    "short": 2, "int16_t": 2, "uint16_t": 2, "half": 2, "__half": 2, "__nv_bfloat16": 2,
    "bfloat16": 2, "hip_bfloat16": 2,
    "int": 4, "unsigned": 4, "float": 4, "int32_t": 4, "uint32_t": 4, "__half2": 4,
    "half2": 4, "__nv_bfloat162": 4, "char4": 4, "uchar4": 4,
    "long": 8, "double": 8, "int64_t": 8, "uint64_t": 8, "size_t": 8, "float2": 8,
    "int2": 8, "uint2": 8, "longlong": 8,
    "float3": 12, "int3": 12,
    "float4": 16, "int4": 16, "uint4": 16, "double2": 16, "long2": 16, "longlong2": 16,
    "double4": 32,
    # POSIX's and CUDA samples' short names (sys/types.h, helper_math.h), C23's and the
    # frameworks' 16-bit floats (PyTorch's c10::Half and c10::BFloat16: a uint16_t each),
    # FP8 (cuda_fp8.h: one byte)
    "uint": 4, "ushort": 2, "ulong": 8, "_Float16": 2, "float16_t": 2, "__hip_bfloat16": 2,
    "at::Half": 2, "c10::Half": 2, "at::BFloat16": 2, "c10::BFloat16": 2,
    "__nv_fp8_e4m3": 1, "__nv_fp8_e5m2": 1,
}
# a pointer the compiler may take to alias no other: ``__restrict__`` and its spellings, or
# a library's macro for it (ggml's GGML_CUDA_RESTRICT)
_RESTRICT = re.compile(r"\b(?:__restrict__|__restrict|restrict|"
                       r"[A-Z][A-Z0-9_]*RESTRICT[A-Z0-9_]*)\b")
# a load through the read-only path (``ld.global.nc``), which no store orders
_LDG = re.compile(r"\b__ldg\s*\(\s*(?:&\s*)?\(?\s*([A-Za-z_]\w*)")
# ``const int width = 2048;`` (or constexpr, static): a name the body holds a literal in
_LOCAL_CONST = re.compile(r"const(?:expr)?\s+(?:unsigned\s+|signed\s+)?"
                          r"(?:int|long|short|size_t|int64_t|int32_t|uint32_t|uint64_t|unsigned)"
                          r"\s+([A-Za-z_]\w*)\s*=\s*(\d+)[uUlL]*\s*;")
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_POINTER = re.compile(r"([A-Za-z_]\w*)\s*(?:const\s*)?\*\s*(?:const\s+)?"
                      r"(?:__restrict__\s+|__restrict\s+|restrict\s+)?([A-Za-z_]\w*)\s*$")
_FOR = re.compile(r"for\s*\(")  # where a word starts (access.word_starts)
_IF = re.compile(r"if\s*\(")
# an index below a bound (``2 * i + 1 < n``): the bound's name
_BELOW = re.compile(r"<\s*\(?\s*(?:\([\w\s]*\)\s*)?([A-Za-z_]\w*)\s*\)?\s*$")
_ELSE_IF = re.compile(r"[\s;}]*else\s+if\s*\(")
_FOR_INIT = re.compile(r"\s*(?:[A-Za-z_][\w:]*\s+)+\**\s*([A-Za-z_]\w*)\s*=([^;,]*)[;,]")
_ATOMIC = re.compile(r"\b(?:atomic(?:Add|Sub|Max|Min|Inc|Dec|Exch|CAS|Or|And|Xor)"
                     r"(?:_system|_block)?|unsafeAtomicAdd)\s*\(")
_FMA = re.compile(r"\b(?:__)?fmaf?(?:_r[nzud])?\s*\(|\b__fmaf_rn\s*\(")
# a statement naming the double type or a name declared double (a variable, a pointer, a
# parameter, a cast) computes in double precision: its multiply-adds are the FP64 pipe's
# (Facts.fp64, the share of the element's multiply-adds in such statements)
_DOUBLE = re.compile(r"\bdouble\b")
# an element index stepping by a block's width that is not blockDim.x
# (_steps_by_own_width): the step before or after blockIdx.x, a cast allowed around either
# (HIP's hipBlockIdx_x spellings too)
_CAST = r"(?:\(\s*[A-Za-z_][\w:]*(?:\s+[A-Za-z_]\w*)?\s*\)\s*)?"
_STEP = r"(?!blockDim\b|gridDim\b|hipBlockDim_x\b|hipGridDim_x\b)(?:[A-Za-z_]\w*|\d+)(?![\w.(\[])"
_BIDX, _TIDX = r"(?:blockIdx\.x|hipBlockIdx_x)", r"(?:threadIdx\.x|hipThreadIdx_x)\b"
_PINNED = re.compile(
    _CAST + _BIDX + r"\s*\*\s*" + _CAST + "(?P<a>" + _STEP + r")\s*\+\s*" + _CAST + _TIDX
    + "|" + _TIDX + r"\s*\+\s*" + _CAST + _BIDX + r"\s*\*\s*" + _CAST + "(?P<b>" + _STEP + ")"
    + r"|(?<![\w.])(?P<c>" + _STEP + r")\s*\*\s*" + _CAST + _BIDX + r"\s*\+\s*" + _CAST
    + _TIDX)
# ... or an unsuffixed floating literal in it (``0.5``, ``2.``, ``1e-5``; not ``0.5f``)
_DOUBLE_LITERAL = re.compile(r"(?<![\w.])(?:(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)"
                             r"(?![\w.])")
_FLOAT_CAST = re.compile(r"\(\s*float\s*\)\s*\Z")
_SUBSCRIPTS = re.compile(r"\[[^\[\]]*\]")
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_STATEMENT_END = re.compile(r"[;{}]")
# single-precision math functions whose cost the device measured (characterize.py
# math_ops; timing's math_fma), and the C++ overloads kernels call on floats by the
# functions' plain names
MATH_FUNCTIONS = ("expf", "__expf", "exp2f", "logf", "__logf", "log2f", "sinf", "cosf",
                  "__sinf", "__cosf", "tanf", "tanhf", "sqrtf", "rsqrtf", "powf", "__powf",
                  "erff")
_MATH_ALIASES = {"exp": "expf", "exp2": "exp2f", "log": "logf", "log2": "log2f",
                 "sin": "sinf", "cos": "cosf", "tan": "tanf", "tanh": "tanhf", "sqrt": "sqrtf",
                 "rsqrt": "rsqrtf", "pow": "powf", "erf": "erff"}
_MATH = re.compile(r"\b(?:std::)?(" + "|".join(
    sorted(MATH_FUNCTIONS + tuple(_MATH_ALIASES), key=len, reverse=True)) + r")\s*\(")
_MATH_STEMS = ("exp", "log", "sin", "cos", "tan", "sqrt", "pow", "erf")  # in every name
_MUL = re.compile(r"[\w\])]\s*\*\s*[\w(.]")
_CHAIN = re.compile(r"\b(\w+)\s*=\s*(?:__)?fmaf?(?:_r[nzud])?\s*\(\s*\1\b")
_THREAD = re.compile(r"\bthreadIdx\b|\bhipThreadIdx_")
# a name assigned the thread's index along x, nothing else (a cast allowed): the name and
# ``=`` just before it
_ASSIGNED_TO = re.compile(r"\b([A-Za-z_]\w*)\s*=\s*(?:\([^()]*\)\s*)?\Z")
# a condition that picks lanes of each warp: the lane index (threadIdx.x & 31, % 32,
# % warpSize) or a variable named for it
_WARP_LANE = re.compile(r"&\s*(?:31|0x1[fF])\b|&\s*\(\s*(?:warpSize|WARP_SIZE)\s*-\s*1\s*\)"
                        r"|%\s*(?:32\b|warpSize\b|WARP_SIZE\b)|\blane(?:_?[iI]d[x]?)?\b")
# the largest table a literal-bounded index reads that the model holds the L1's: the
# l1_lines characterisation's (32 KB); a larger one is priced as the access it is
TABLE_BYTES = 32 * 1024
_BLOCK = re.compile(r"\bblockIdx\b|\bhipBlockIdx_")
_BLOCK_STRIDE = re.compile(r"\+=\s*(?:\(\s*\w+(?:\s+\w+)*\s*\)\s*)?"
                           r"(?:blockDim\.x|hipBlockDim_x)\s*[;)]")
_DEFINE = re.compile(rb"define[ \t]+(\w+)[ \t]+\(?(\d+)\)?[ \t]*$", re.M)
_HASH = re.compile(rb"[ \t]*#[ \t]*")
_TRIP = re.compile(r"^\s*(?:\w+\s+)*(\w+)\s*=\s*(-?\w+)\s*;\s*\w+\s*(<=|<)\s*(\w+)\s*;\s*"
                   r"(?:\+\+\s*\w+|\w+\s*\+\+|\w+\s*\+=\s*(\w+))\s*$")
_OPEN_SUBSCRIPT = re.compile(r"\s*\[")
_BEFORE_NAME = re.compile(r"[\w.&]")
_NAME = re.compile(r"[A-Za-z_]\w*")
# what follows a mask or a modulus by a literal (``& 255``, ``% 64``, ``& 0xff``)
_LITERAL_AFTER = re.compile(r"\s*\(?\s*\d")
_ASSIGNED = re.compile(r"\b([A-Za-z_]\w*)\s*=(?!=)")
_SEPARATORS = re.compile(r"[<(\[>)\],]")
_EXTERN_SHARED = re.compile(r"extern\s+__shared__\s+[\w\s]+?\b(\w+)\s*\[\s*\]")
_UNROLL = re.compile(r"#\s*pragma\s+unroll\b\s*\(?\s*(\w*)\s*\)?\s*$")
# a constant loop without a pragma: LLVM unrolls it whole up to its full-unroll threshold
# (300 instructions at -O3), else in passes (NVRTC's PTX of the held-out suite: a body of
# 16 FMAs unrolled 8 times, 128 a pass)
FULL_UNROLL = 300.0
PASS = 128.0
# a stride loop the index's type lets LLVM unroll (unrolled_by_compiler): four elements a
# pass while its body's size is at most UNROLL_4_SIZE, two up to UNROLL_2_SIZE, one past
# it (the runtime unroller's budget over the body's size). The size: the body's arithmetic
# operators and FMA calls, and a lane for each 4 bytes it loads or stores. Both from
# NVRTC 13.5's PTX of a chain of k FMAs in a float copy loop (unrolled four times up to 44
# FMAs, size 46; twice at 48; once at 96, size 98) and in a float4 one (four times up to
# 32, size 47; twice at 34; once at 80, size 95): fixtures/ptx/unroll, fma_chain_*
UNROLL_4_SIZE = 48
UNROLL_2_SIZE = 94
_OPERATOR = re.compile(r"(?<=[\w)\]])\s*[-+*/](?![-+>])")
# ``typedef unsigned int uint_t;`` / ``using real_t = double;``: words only (no struct body,
# no pointer, no template), each from its keyword (a leading \b costs the search its
# literal prefix: ten times slower; the word before is tested apart)
_TYPEDEF = re.compile(r"typedef\s+((?:[A-Za-z_]\w*\s+)*?[A-Za-z_]\w*)\s+([A-Za-z_]\w*)\s*;")
_WORD_CHAR = re.compile(r"\w")
_USING = re.compile(r"using\s+([A-Za-z_]\w*)\s*=\s*((?:[A-Za-z_]\w*\s+)*?[A-Za-z_]\w*)\s*;")


def defines(data: bytes) -> dict[str, int]:
    r"""``#define NAME 123`` constants of a file: what ``^[ \t]*#[ \t]*define...`` (line by
    line) finds, searched from the word ``define`` (a pattern starting at every line start
    is tried at every byte); the line must hold only blanks and ``#`` before it."""
    out = {}
    for m in _DEFINE.finditer(data):
        line = data.rfind(b"\n", 0, m.start()) + 1
        if _HASH.fullmatch(data, line, m.start()):
            out[m[1].decode()] = int(m[2])
    return out


def type_aliases(data: bytes) -> dict[str, str]:
    """A file's ``typedef T Name;`` and ``using Name = T;`` of types the table sizes (a
    vector, a scalar, another such alias), as Name -> T: a kernel's text reads them as
    what they name. A name given types of different sizes (``#if`` branches: llm.c's
    ``floatX``) is left out: which one the build took is not known here."""
    if b"typedef" not in data and b"using" not in data:
        return {}
    text = data.decode("utf-8", "replace")
    told: dict[str, set[str]] = {}
    for pattern, name, target in ((_TYPEDEF, 2, 1), (_USING, 1, 2)):
        for m in pattern.finditer(text):
            if not m.start() or not _WORD_CHAR.match(text, m.start() - 1):
                told.setdefault(m[name], set()).add(" ".join(m[target].split()))
    out: dict[str, str] = {}
    for _ in range(4):  # an alias of an alias
        for name, targets in told.items():
            sizes = {_type_bytes(_spelled(t, out)) for t in targets}
            if len(sizes) == 1 and None not in sizes and name not in TYPE_BYTES:
                out[name] = _spelled(min(targets), out)
    return out


def _type_bytes(type_text: str) -> int | None:
    """The bytes of a type written as words (``unsigned int``, ``const float2``)."""
    sizes = pointer_sizes(f"({type_text}* p)")
    return sizes.get("p")


def _spelled(type_text: str, aliases: dict[str, str]) -> str:
    return " ".join(aliases.get(w, w) for w in type_text.split())


def substituted(text: str, names: dict[str, str]) -> str:
    """``text`` with each of ``names`` it holds (as a whole word) read as its value: a type
    alias as the type it names, a template's parameter as its argument."""
    used = [n for n in names if n in text]
    if not used:
        return text
    named = re.compile(r"\b(?:" + "|".join(map(re.escape, used)) + r")\b")
    return named.sub(lambda m: names[m[0]], text)


def _pointer_params(params: str) -> Iterator[tuple[str, re.Match[str]]]:
    """Each pointer parameter's declaration (stripped: the match's offsets are its) and
    its match of _POINTER (group 2: the name)."""
    for p in access.split_top_level(params.strip("()"), _SEPARATORS):
        p = p.strip()
        m = _POINTER.search(p)
        if m:
            yield p, m


def pointer_sizes(params: str) -> dict[str, int | None]:
    """Pointer parameters and their element sizes (None: a type the table does not know)."""
    out: dict[str, int | None] = {}
    for p, m in _pointer_params(params):
        words = p[:m.start(2)].replace("*", " ").split()
        words = [w for w in words if w not in ("const", "volatile", "__restrict__",
                                               "__restrict", "restrict", "struct")]
        name = words[-1] if words else m[1]
        size = TYPE_BYTES.get(name)
        if name in ("char", "short", "int", "long") and "unsigned" in words:
            size = TYPE_BYTES[name]
        if words[-2:] == ["long", "long"]:
            size = 8
        out[m[2]] = size
    return out


def restricted(params: str) -> frozenset[str]:
    """The pointer parameters declared ``__restrict__`` (or a macro spelling it)."""
    return frozenset(m[2] for p, m in _pointer_params(params) if _RESTRICT.search(p))


def _passes_wait(loads: set[str], stores: set[str], restrict: frozenset[str],
                 read_only: set[str]) -> bool:
    """Whether a stride loop's unrolled passes wait for each other: a load of the next
    pass that the compiler cannot move above this pass's store, which waits for this
    pass's loads (in-order issue). NVRTC's PTX (fixtures/ptx/unroll's ``order_*``): it
    moves a load above a store when either pointer is ``__restrict__`` or the load is an
    ``__ldg`` (``read_only``), never a load of the array it stores (``c[i] += ...``)."""
    return any(load == store or not (load in restrict or store in restrict or
                                     load in read_only)
               for load in loads for store in stores)


def _held(waits: bool, ldg: int, unroll: int | None) -> int | None:
    """The elements a stride loop's pass holds in flight, where the compiler would unroll
    it ``unroll`` times: one where its passes wait for each other or it loads a vector
    through ``__ldg``; not known where it loads a scalar so (``ldg``: the widest such
    load's bytes, 0 for none), which NVRTC 13.5 unrolls and 13.0 does not (its ``__ldg``
    an inline asm: loops.nvrtc-13.0.ptx.gz); else its unrolling."""
    if waits or ldg > 4:
        return 1
    return None if ldg else unroll


class _Region:
    """The spans of a body's constant-trip loops and of its guarded blocks."""

    def __init__(self, body: str, heads: list[tuple[int, int]], consts: dict[str, int],
                 alias: re.Pattern[str] | None = None):
        # the constant loops: where each starts, its body's span, its trips and its
        # pragma's unroll (0: whole; None: no pragma)
        self.loops: list[tuple[int, int, int, float, int | None]] = []
        self.guards: list[tuple[int, int, str]] = []  # start, end, "warp" or "block"
        # else-branches over a bound's last few elements: ``if (2 * i + 1 < n) {float2}
        # else if (2 * i < n) {float}``; a thread's element is the first branch's
        self.tails: list[tuple[int, int]] = []
        self.counters: dict[int, str] = {}  # a constant loop's start -> its counter
        for head_start, head_end in heads:
            head = body[head_start:head_end]
            end = self._statement_end(body, head_end + 1)
            counted = _TRIP.match(head)
            trips = self._trips(counted, consts)
            if trips is not None:  # a loop of unknown trips weighs its body once
                self.loops.append((head_start, head_end + 1, end, trips,
                                   self._unroll(body, head_start, consts)))
                self.counters[head_start] = counted[1]
        # names holding the thread's index (``unsigned tid = threadIdx.x;``, ``alias``): a
        # guard on them is a guard on the thread, as the reduction idiom ``if (tid == 0)``
        # writes it
        for m in access.word_starts(_IF, body):
            cond_end = access.matching(body, m.end() - 1, "(")
            cond = body[m.end():cond_end]
            lane = _WARP_LANE.search(cond)
            if (lane or _THREAD.search(cond) or (alias and alias.search(cond))) and not re.search(
                    r"\b(n|N|size|count|len)\b|<\s*\w*[nN]\w*", cond):
                self.guards.append((cond_end + 1, self._statement_end(body, cond_end + 1),
                                    "warp" if lane else "block"))
            bound = _BELOW.search(cond)
            if bound and "else" in body:
                self._tail(body, cond_end, bound[1])

    def _tail(self, body: str, cond_end: int, bound: str) -> None:
        """The else-branch after an if's statement (ending its condition at ``cond_end``)
        where that branch is an if against the same ``bound``: a remainder."""
        end = self._statement_end(body, cond_end + 1)
        m = _ELSE_IF.match(body, end + 1)
        if m is None:
            return
        close = access.matching(body, m.end() - 1, "(")
        other = _BELOW.search(body[m.end():close])
        if other and other[1] == bound:
            self.tails.append((m.start(), self._statement_end(body, close + 1)))

    def in_tail(self, at: int) -> bool:
        return any(s <= at <= e for s, e in self.tails)

    @staticmethod
    def _statement_end(body: str, at: int) -> int:
        i = at
        while i < len(body) and body[i].isspace():
            i += 1
        if i < len(body) and body[i] == "{":
            return access.matching(body, i, "{")
        j = body.find(";", i)
        return len(body) if j < 0 else j

    @staticmethod
    def _trips(m: re.Match[str] | None, consts: dict[str, int]) -> float | None:
        """The trips of a loop whose head ``_TRIP`` matched as ``m`` (None: not counted)."""
        if not m:
            return None

        def value(word: str | None, default: int | None = None) -> int | None:
            if word is None:
                return default
            if re.fullmatch(r"-?\d+", word):
                return int(word)
            return consts.get(word)

        start, bound, step = value(m[2]), value(m[4]), value(m[5], 1)
        if start is None and step and step > 1 and _NAME.fullmatch(m[2]):
            # a lane's or a thread's walk by a literal stride (``for (int j = lane; j <
            # 1024; j += 32)``): its start is within a stride, its share of the bound
            start = 0
        if start is None or bound is None or not step or step < 0:
            return None
        span = bound - start + (1 if m[3] == "<=" else 0)
        return max(0.0, -(-span // step))

    @staticmethod
    def _unroll(body: str, head_start: int, consts: dict[str, int]) -> int | None:
        """The unroll factor of the ``#pragma unroll`` on the line before the loop starting
        at ``head_start`` (0: unrolled whole; None: no pragma, or a count not known)."""
        line_end = max(body.rfind("\n", 0, head_start), 0)
        m = _UNROLL.search(body, body.rfind("\n", 0, line_end) + 1, line_end)
        if m is None:
            return None
        if not m[1]:
            return 0
        n = int(m[1]) if m[1].isdigit() else consts.get(m[1])
        return max(n, 1) if n is not None else None

    def control(self, lo: int, hi: int, arithmetic: list[int]) -> float:
        """Loop-control instructions per element of the constant loops in ``lo..hi``,
        whose arithmetic is at ``arithmetic`` (each place an instruction)."""
        total = 0.0
        for loop in self.loops:
            if lo <= loop[0] <= hi and loop[3]:
                passes = self._passes(loop, arithmetic)
                if passes > 1:  # one pass is no loop: no back edge
                    total += self.weight(loop[0]) * passes * LOOP_CONTROL
        return total

    def _passes(self, loop: tuple[int, int, int, float, int | None],
                arithmetic: list[int]) -> float:
        """The passes a constant loop runs as compiled (0 or 1: unrolled whole)."""
        at, start, end, trips, unroll = loop
        if not trips:
            return 0.0
        if unroll is None and any(start <= a <= end for a, *_ in self.loops):
            return trips  # LLVM unrolls innermost loops: one holding a loop stays
        if unroll is None:
            pass_ = sum(self.weight(a) for a in arithmetic
                        if start <= a <= end) / (trips * self.weight(at))
            unrolled = trips * max(pass_, 1.0)
            return 0.0 if unrolled <= FULL_UNROLL else math.ceil(unrolled / PASS)
        return -(-trips // unroll) if unroll else 0.0

    def keeps_a_loop(self, lo: int, hi: int, heads: list[tuple[int, int]],
                     arithmetic: list[int]) -> bool:
        """Whether ``lo..hi`` holds a loop the compiler leaves a loop: one of unknown trips,
        or a constant one it does not unroll whole."""
        constant = {loop[0]: loop for loop in self.loops}
        return any(lo <= start <= hi and (start not in constant
                                          or self._passes(constant[start], arithmetic) > 1)
                   for start, _ in heads)

    def weight(self, at: int) -> float:
        w = 1.0
        for _, start, end, trips, _ in self.loops:
            if start <= at <= end:
                w *= trips
        return w

    def access_weight(self, at: int, index: str,
                      values: Callable[[], dict[str, list[str]]]) -> float:
        """An access's passes: the trips of the constant loops around ``at`` whose counter
        its ``index`` names (or a value its variables are assigned names: ``values``); a
        loop it does not depend on reads the same element each pass (``a[i]`` in ``for (e
        ...) acc += a[i] * b[e]``: once from memory, the rest the caches')."""
        w, names = 1.0, None
        for head, start, end, trips, _ in self.loops:
            if start <= at <= end:
                counter = self.counters.get(head)
                if counter is not None and names is None:
                    names = _index_names(index, values)
                if counter is None or counter in names:
                    w *= trips
        return w

    def guarded(self, at: int) -> bool:
        return any(s <= at <= e for s, e, _ in self.guards)

    def guard_lanes(self, at: int) -> str | None:
        """Which lanes a guard around ``at`` leaves: "block" (one thread of each block, or
        a few), "warp" (one lane of each warp: ``(threadIdx.x & 31) == 0``, ``lane ==
        0``), None (no guard)."""
        kinds = {kind for s, e, kind in self.guards if s <= at <= e}
        return "block" if "block" in kinds else "warp" if kinds else None


def _loop_heads(body: str) -> list[tuple[int, int]]:
    """Where the head of each ``for`` loop starts and where its ``)`` is."""
    return [(m.end(), access.matching(body, m.end() - 1, "("))
            for m in access.word_starts(_FOR, body)]


def _stride_heads(body: str, loop: str, heads: list[tuple[int, int]]
                  ) -> list[tuple[int, int]]:
    """The heads of the grid- or block-stride loops (where each starts, where its ``)``
    is): every pass a kernel makes over its elements (softmax's three over a row)."""
    if loop not in ("grid-stride", "block-stride"):
        return []
    out = []
    for head_start, head_end in heads:
        head = body[head_start:head_end]
        if ("gridDim" in head or "GridDim" in head) if loop == "grid-stride" \
                else _BLOCK_STRIDE.search(head + ";"):
            out.append((head_start, head_end))
    if out or loop != "grid-stride":
        return _without_tails(body, out) if loop == "grid-stride" else out
    for head_start, head_end in heads:  # stepped by a variable holding the grid's threads
        step = body[head_start:head_end].rsplit(";", 1)[-1]
        m = re.fullmatch(r"\s*\w+\s*\+=\s*(?:\d+\s*\*\s*)?([A-Za-z_]\w*)(?:\s*\*\s*\d+)?\s*",
                         step)
        if m and re.search(rf"\b{m[1]}\s*=[^;]*(?:gridDim|GridDim)", body):
            out.append((head_start, head_end))
    return _without_tails(body, out)


def _without_tails(body: str, heads: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Stride loops less those over a vector loop's remainder: a later loop that starts
    at the first's bound (``for (i = tid; i < n4; ...) {float4} for (i = n4 * 4 + tid; i <
    n; ...) {float}``), a few elements of the whole."""
    if len(heads) < 2:
        return heads
    bound = _BOUND.match(body[heads[0][0]:heads[0][1]].split(";")[1]) \
        if body.count(";", *heads[0]) >= 2 else None
    if not bound or bound[2].isdigit():
        return heads
    starts = re.compile(rf"=[^;]*\b{re.escape(bound[2])}\b")
    return [heads[0]] + [h for h in heads[1:]
                         if not starts.search(body[h[0]:h[1]].split(";")[0])]


def _element_spans(body: str, heads: list[tuple[int, int]], region: _Region
                   ) -> list[tuple[int, int]]:
    """The parts of the body that are one element's work: the stride loops' bodies (each
    once: a loop inside another stride loop is part of it), else the whole body."""
    spans: list[tuple[int, int]] = []
    for head in heads:
        lo, hi = head[1] + 1, region._statement_end(body, head[1] + 1)
        if not any(a <= lo <= b for a, b in spans):
            spans.append((lo, hi))
    return spans or [(0, len(body))]


# the index types of a stride loop, by how the compiler treats them (unrolled_by_compiler)
_SIGNED_32 = frozenset({"int", "signed", "signed int", "int32_t"})
_SIGNED_64 = frozenset({"long", "long int", "long long", "long long int", "int64_t",
                        "ptrdiff_t", "ssize_t", "intptr_t", "long_t"})
_UNSIGNED = frozenset({"unsigned", "unsigned int", "uint", "uint32_t", "size_t", "uint64_t",
                       "unsigned long", "unsigned long int", "unsigned long long",
                       "unsigned long long int", "uintptr_t"})
_UNSIGNED_64 = frozenset({"size_t", "uint64_t", "unsigned long", "unsigned long int",
                          "unsigned long long", "unsigned long long int", "uintptr_t"})
_BOUND = re.compile(r"^\s*(\w+)\s*(?:<=?|!=)\s*([A-Za-z_]\w*)\s*$")
_INIT = re.compile(r"^\s*(?:const\s+)?((?:[A-Za-z_]\w*\s+)*?[A-Za-z_]\w*)\s+(\w+)\s*=\s*(.+?)\s*$",
                   re.S)
_ASSIGN = re.compile(r"^\s*()(\w+)\s*=\s*(.+?)\s*$", re.S)  # no type: group 1 empty
_STEP = re.compile(r"^\s*(\w+)\s*\+=\s*(.+?)\s*$|^\s*(\w+)\s*=\s*\3\s*\+\s*(.+?)\s*$", re.S)
_CAST = re.compile(r"^\(\s*(?:const\s+)?([A-Za-z_][\w\s]*?)\s*\)\s*")
_SPECIAL = re.compile(r"^(?:threadIdx|blockIdx|blockDim|gridDim)\.[xyz]$|"
                      r"^hip(?:ThreadIdx|BlockIdx|BlockDim|GridDim)_[xyz]$")
_UNSIGNED_REGISTER = re.compile(r"(?:blockDim|gridDim)\.[xyz]|hip(?:BlockDim|GridDim)_[xyz]")
_SIGNED_CAST_REGISTER = re.compile(
    r"\(\s*(?:int|int32_t|long|long long|int64_t|ptrdiff_t)\s*\)\s*"
    r"(?:(?:blockDim|gridDim)\.[xyz]|hip(?:BlockDim|GridDim)_[xyz])")


def _bare(expr: str) -> str:
    """``expr`` without its outer parentheses and leading casts."""
    while True:
        expr = access.unwrapped(expr)
        m = _CAST.match(expr)
        if not (m and m.end() < len(expr)):
            return expr
        expr = expr[m.end():]


def _signed_type(words: str) -> bool | None:
    kind = " ".join(words.split())
    return True if kind in _SIGNED_32 | _SIGNED_64 else False if kind in _UNSIGNED else None


def _signed(expr: str, body: str) -> bool | None:
    """Whether the stride ``expr`` has a signed type as C++ reads it: a literal, a variable
    declared signed, a cast to a signed type of all of it; unsigned where a block or grid
    dimension (``unsigned int``) enters it uncast."""
    expr = access.unwrapped(expr)
    m = _CAST.match(expr)
    if m and m.end() < len(expr):
        rest = expr[m.end():].strip()
        if re.fullmatch(r"[\w.]+", rest) or access.unwrapped(rest) != rest:  # the cast takes all
            return _signed_type(m[1])
    if re.fullmatch(r"\d+", expr):
        return True
    if re.fullmatch(r"[A-Za-z_]\w*", expr):
        decl = re.search(rf"([A-Za-z_][\w ]*?)\s+{expr}\s*=", body)
        return _signed_type(decl[1].replace("const", " ")) if decl else None
    if _UNSIGNED_REGISTER.search(_SIGNED_CAST_REGISTER.sub("0", expr)):
        return False
    factors = expr.split("*")
    if len(factors) > 1 and all(re.fullmatch(r"\s*\w+\s*", f) for f in factors):
        # ``4 * stride``: signed where every factor is (int times int is int)
        kinds = [_signed(f.strip(), body) for f in factors]
        return False if False in kinds else True if all(kinds) else None
    return None


def _declared(name: str, text: str, ends: str = ";=,)") -> str | None:
    """The type ``name`` is declared with in ``text`` (a body before the loop, or a
    parameter list, whose last one ends in ``)``): its last declaration, followed by one
    of ``ends``, ``const`` left out; None where none is read."""
    if name not in text:
        return None
    found = _declaration(name, ends).findall(text)
    return " ".join(w for w in found[-1].split() if w != "const") if found else None


@lru_cache(maxsize=256)
def _declaration(name: str, ends: str) -> re.Pattern[str]:
    return re.compile(rf"([A-Za-z_][\w ]*?)\s+{name}\s*[{ends}]")


def unrolled_by_compiler(body: str, head: tuple[int, int] | None,
                         params: str = "") -> bool | None:
    """Whether the compiler may unroll the stride loop with the head at ``head`` (LLVM's
    runtime unrolling, which needs the trip count of a loop that cannot wrap; how far, the
    body's size decides: :func:`_unroll`): what NVRTC 13 does to each form of the loop
    (fixtures/ptx/unroll: 185 forms and their PTX):

    * an unsigned index (``unsigned``, ``size_t``): never;
    * an ``int`` index: when the stride is signed (``i += (int)blockDim.x``, an ``int``
      variable), not when a block or grid dimension enters it uncast (``blockDim.x *
      gridDim.x`` is unsigned);
    * a 64-bit signed index (``long``, ``int64_t``, ``ptrdiff_t``): always, but for a
      start of a bare thread or block index stepped by a bare dimension (``for (long j =
      threadIdx.x; j < cols; j += blockDim.x)``, a block per row).

    Where the index is compared with a variable of another type, C compares them in the
    wider one and the compiler does not unroll: an ``int`` index against a 64-bit or an
    unsigned bound (``int i ...; i < n`` with ``long n``), or stepped by a 64-bit
    variable; a 64-bit index against an unsigned 64-bit bound when an ``int`` variable
    steps it (fixtures/ptx/unroll's mixed forms; ``params``: the kernel's parameter list,
    where the bound is most often declared).

    An index declared before the loop is read from its declaration; None where neither
    says (a type the table does not know: a template's, a library's alias)."""
    if head is None:
        return None
    parts = body[head[0]:head[1]].split(";")
    if len(parts) != 3:
        return None
    step = _STEP.match(parts[2])
    init = _INIT.match(parts[0]) or _ASSIGN.match(parts[0])
    if not init or not step or (step[1] or step[3]) != init[2]:
        return None
    kind = init[1]
    if not kind:  # ``for (i = ...)``: the index declared before the loop
        kind = _declared(init[2], body[:head[0]], ";=,")
        if kind is None:
            return None
    kind = " ".join(w for w in kind.split() if w != "const")
    stride = step[2] if step[1] else step[4]
    if kind in _UNSIGNED:
        return False
    bound = _BOUND.match(parts[1])
    bound = _declared(bound[2], body[:head[0]]) or _declared(bound[2], params) \
        if bound and bound[1] == init[2] else None
    steps = _declared(stride.strip(), body[:head[0]]) \
        if re.fullmatch(r"\s*[A-Za-z_]\w*\s*", stride) else None
    if kind in _SIGNED_32:
        if bound in _SIGNED_64 | _UNSIGNED or steps in _SIGNED_64 | _UNSIGNED_64:
            return False
        return _signed(stride, body)
    if kind in _SIGNED_64:
        if bound in _UNSIGNED_64 and steps in _SIGNED_32:
            return False
        return not (_SPECIAL.match(_bare(init[3])) and _SPECIAL.match(_bare(stride)))
    return None


def _unroll(body: str, head: tuple[int, int] | None, span: tuple[int, int], region: _Region,
            heads: list[tuple[int, int]], arithmetic: list[int], fmas: list[int],
            lanes: float, params: str = "", consts: dict[str, int] | None = None
            ) -> int | None:
    """The elements a pass of the stride loop holds as compiled (``Facts.unroll``): the
    count of a ``#pragma unroll N`` on it (NVRTC unrolls even a block per row's loop so:
    zoo set 19's row sum, four loads a pass in its PTX); one
    where the index's type stops the unrolling (unrolled_by_compiler), the body holds an
    atomic (NVRTC leaves such a loop alone, whatever the atomic) or keeps a
    loop of its own (LLVM unrolls innermost loops), else four or two or one by the body's
    size (UNROLL_4_SIZE, UNROLL_2_SIZE): its operators and FMA calls (at ``fmas``), each
    times the trips of a constant loop around it, and ``lanes`` (4-byte words loaded and
    stored).
    None: an index type occlint does not know, and a body the compiler could unroll."""
    pragma = _Region._unroll(body, head[0], consts or {}) if head is not None else None
    if pragma:
        return pragma
    rule = unrolled_by_compiler(body, head, params)
    if rule is False:
        return 1
    if head is None:
        return None
    lo, hi = span
    if "tomic" in body and _ATOMIC.search(body, lo, hi):
        return 1  # nor one holding an atomic (fixtures/ptx/unroll's atomic_* forms)
    if region.keeps_a_loop(lo, hi, heads, arithmetic):  # the stride loop's own head is
        return 1  # before its body's span
    ops = [m.start() for m in _OPERATOR.finditer(body, lo, hi)] + fmas
    size = sum(region.weight(at) for at in ops) + lanes
    by_size = 4 if size <= UNROLL_4_SIZE else 2 if size <= UNROLL_2_SIZE else 1
    return None if rule is None and by_size > 1 else by_size


def _loop_of(body: str, heads: list[tuple[int, int]], shape: str) -> str:
    if shape in ("grid-stride", "per-element"):
        return shape
    for head_start, head_end in heads:
        if _BLOCK_STRIDE.search(body[head_start:head_end] + ";"):
            return "block-stride"
    return "other"


@lru_cache(maxsize=256)
def instantiated(template: TemplateText, arguments: tuple[str, ...]) -> Facts | None:
    """The facts of a template kernel's instantiation for ``arguments`` (a demangled name's:
    occlint.model.demangle.template_arguments): each parameter's name in its text read as
    its argument (a type's name, an integer's value); None where they do not pair up."""
    if len(arguments) != len(template.parameters) or not all(
            len(a) <= MAX_ARGUMENT_CHARS and _ARGUMENT.fullmatch(a) for a in arguments):
        return None  # (a trace's name is untrusted text: only a type's or a value's)
    values = dict(zip(template.parameters, map(_argument, arguments), strict=True))
    facts = kernel_facts(substituted(template.params, values),
                         substituted(template.body, values), template.shape,
                         dict(template.defines))
    return replace(facts, max_threads=template.max_threads) if template.max_threads \
        else facts


# a template argument a name may give the kernel's text: a type or a value, short
MAX_ARGUMENT_CHARS = 256
_ARGUMENT = re.compile(r"[\w:<>,*&()\[\]\s.+-]+")


def _argument(text: str) -> str:
    """A demangled template argument as source text: ``(int)4`` and ``4u`` as ``4``."""
    text = text.strip()
    cast = re.fullmatch(r"\([\w\s:]+\)\s*(-?\d+)", text)
    if cast:
        return cast[1]
    number = re.fullmatch(r"(-?\d+)[uUlL]*", text)
    return number[1] if number else text


def kernel_facts(params: str, body: str, shape: str, consts: dict[str, int]) -> Facts:
    """The facts of a kernel whose parameter list and body are ``params`` and ``body``
    (text), and whose body the source reader classified as ``shape``."""
    pointers = pointer_sizes(_COMMENTS.sub(" ", params))
    body = _COMMENTS.sub(" ", body)
    local = {m[1]: int(m[2]) for m in _LOCAL_CONST.finditer(body)} if "const" in body else None
    if local:  # a body's own integer constants, as the file's #defines
        consts = {**consts, **local}

    @cache
    def sizes() -> dict[str, int | None]:
        """The parameters' and the local pointers' element sizes (dereferences asks)."""
        return {**pointers, **{alias: pointers[param] if cast is None else TYPE_BYTES.get(cast)
                               for alias, (param, _, cast) in access.aliases(
                                   body, pointers).items() if alias not in pointers}}

    read_only = {m[1] for m in _LDG.finditer(body)} if "__ldg" in body else set()
    body, unsized = access.dereferences(body, sizes, frozenset(pointers))
    heads = _loop_heads(body) if "for" in body else []
    loop = _loop_of(body, heads, shape)
    thread_index = _thread_alias(body)
    region = _Region(body, heads, consts, thread_index)
    stride_heads = _stride_heads(body, loop, heads)
    spans = _element_spans(body, stride_heads, region)

    def span_of(at: int) -> int | None:
        """The element span ``at`` is in (its index in ``spans``), None outside them."""
        return next((k for k, (lo, hi) in enumerate(spans) if lo <= at <= hi), None)

    offsets = {name: "0" for name in pointers}
    body, casts = access.cast_subscripts(body, pointers)
    bases = {name: name for name in pointers}  # a local pointer's parameter
    for alias, (param, offset, cast) in (*casts.items(),
                                         *access.aliases(body, pointers).items()):
        if alias not in pointers:
            pointers[alias] = pointers[param] if cast is None else TYPE_BYTES.get(cast)
            offsets[alias] = offset
            bases[alias] = bases.get(param, param)
    env = access.variables(body, consts, offsets.values()) if "=" in body else {}
    # a for loop's own index (``for (int kk = ty; ...)``): inside that loop, its value
    # there, not the worst over every loop that reuses the name
    scoped = []
    for head_start, head_end in heads:
        m = _FOR_INIT.match(body, head_start, head_end)
        if m and m[1] in env:  # an index some access uses
            scoped.append((head_start, region._statement_end(body, head_end + 1), m[1],
                           access.spread_of(m[2], env, consts)))

    def env_at(at: int) -> dict[str, access.Spread | None]:
        inner = [(name, spread) for lo, hi, name, spread in scoped if lo <= at <= hi]
        return {**env, **dict(inner)} if inner else env

    # variables holding the grid's threads (``int stride = blockDim.x * gridDim.x``)
    grid_strides = _grid_stride_names(body) if "ridDim" in body else frozenset()
    load = store = column = scattered = sectors = reread = cached = 0.0
    # a literal bounding an index (a mask, a modulus) makes a table of what it reads
    bounded = _literal_bound(body)
    values = cache(lambda: access.assignments(body))
    cached_loads: list[tuple[int, bool, float, float]] = []
    two_d = "threadIdx.y" in body or "hipThreadIdx_y" in body
    seen: set[tuple[str, str, int]] = set()  # loads: (array, neighbourhood, pass)
    stored: set[tuple[str, str, int]] = set()  # stores: (array, index, pass)
    strided: set[tuple[str, str, int, bool]] = set()  # small strides' sectors, once
    first_pass: dict[tuple[str, str], int] = {}  # a row's load -> the pass first making it
    reread_rows: dict[str, float] = {}
    unknown = unsized  # an access the text does not size
    loop_loads: set[str] = set()
    loop_stores: set[str] = set()
    for name, size in pointers.items():
        for at, end in _subscripts(name, body):
            span = span_of(at)
            if span is None or region.guarded(at) or region.in_tail(at):
                continue
            close = access.matching(body, end - 1, "[")
            again = False
            after = body[close + 1:close + 4].lstrip()
            written = after.startswith("=") and not after.startswith("==")
            compound = re.match(r"[-+*/|&^]=", after) is not None
            if size is None:
                unknown = True
                continue
            index = body[end:close]
            if span == 0:  # the stride loop's: what its passes load and store
                if written or compound:
                    loop_stores.add(bases[name])
                if not written or compound:
                    loop_loads.add(bases[name])
            weight = region.access_weight(at, index, values) if region.loops else 1.0
            if not written and not compound:
                # a neighbour of an element this thread already loads (a stencil's
                # a[i - 1], a[i + width]; x[j] * x[j]): the caches hold it
                near = (name, _neighbourhood(index, grid_strides), span)
                if near in seen:
                    continue
                seen.add(near)
                again = loop == "block-stride" and \
                    first_pass.setdefault(near[:2], span) != span  # a later pass
            elif written and not compound:
                # the same element stored again in a pass (an if's branches each storing
                # c[i]): one store
                element = (name, "".join(index.split()), span)
                if element in stored:
                    continue
                stored.add(element)
            offset = offsets[name]
            spread = access.spread_of(index if offset == "0" else f"{offset} + ({index})",
                                      env_at(at), consts)
            kind, moved = access.moved(spread, size) if spread else ("coalesced", size)
            # a small stride: the sectors between move too, once for the neighbours beside
            # it (c[2 * i] and c[2 * i + 1] stored: one pair's sectors; a pixel's p[0] ..
            # p[3]); not where a constant loop around it walks the elements between
            streamed = moved if kind == "coalesced" and weight == 1 else size
            if again and not written and not compound:
                # a later pass over the same row: what it streams (a float2's pair, x[2 * j]
                # and x[2 * j + 1]: 8 bytes), as its row's bytes resident in the SM's cache
                reread += streamed * weight
                reread_rows[name] = streamed
            if streamed > size:
                near = _neighbourhood(index, grid_strides)
                pair = (name, "" if near.isdigit() else near, span, written or compound)
                if pair in strided:
                    continue
                strided.add(pair)
            w = weight * ((written or compound) + (not written or compound))
            if written or compound:
                store += streamed * weight
            if not written or compound:
                load += streamed * weight
            extent = access.extent_of(index, values(), consts) \
                if bounded and not written and not compound else None
            if extent and extent * size <= TABLE_BYTES:
                # a table a literal bounds (``lut[x & 255]``) that every thread reads: the
                # L1's, each request the lines its lanes pick among the table's
                cached += streamed * weight
                lines = -(-int(extent * size) // 128)
                cached_loads.append((spread[0] if spread and spread[0] <= 1 else -lines,
                                     bool(spread and spread[1]), size, weight))
                continue
            if weight > 1 and spread and not written and not compound and (
                    spread[0] == 0 or (two_d and spread[1] == 0)):
                # a table a constant loop walks that many threads read: the caches'
                cached += size * weight
                stride = spread[0] if spread[0] < access.STRIDED else -OWN_LINES
                cached_loads.append((stride, bool(spread[1]), size, weight))
                continue
            if kind == "column":
                column += size * w
            elif kind == "scattered":
                scattered += size * w
                sectors += moved * w
    # the literal every match of a pattern holds, tested first: most bodies have none
    fmas = [m.start() for lo, hi in spans for m in _FMA.finditer(body, lo, hi)] \
        if "fma" in body else []
    subscripts = _subscript_spans(body) if "[" in body else []
    arithmetic = fmas + [m.start() for lo, hi in spans for m in _MUL.finditer(body, lo, hi)
                         if not _inside(subscripts, m.start())]
    fma = sum(region.weight(at) for at in arithmetic)
    calls: dict[str, float] = {}
    for lo, hi in spans if any(stem in body for stem in _MATH_STEMS) else ():
        for m in _MATH.finditer(body, lo, hi):
            if body[m.start() - 1:m.start()] == ".":
                continue  # a member's method of that name
            name = _MATH_ALIASES.get(m[1], m[1])
            calls[name] = calls.get(name, 0.0) + region.weight(m.start())
    one = one_thread = per_block = one_block = one_warp = data = shared_set = 0.0
    maxes: list[bool] = []  # each one-address atomic: whether an atomicMax / atomicMin
    shared_arrays = {m[1] for m in _SHARED_ARRAY.finditer(body)} \
        if "__shared__" in body else set()  # the SM's: their atomics queue at no L2
    values: dict[str, list[str]] | None = None  # each name's assigned values, read once
    for m in _ATOMIC.finditer(body) if "tomic" in body else ():
        close = access.matching(body, m.end() - 1, "(")
        address = body[m.end():close].split(",")[0]
        base = _ADDRESS_BASE.match(address)
        if base and base[1] in shared_arrays:
            continue  # the SM's shared memory: no queue at the L2
        looped = span_of(m.start()) is not None and bool(stride_heads)
        spread = access.spread_of(address, env_at(m.start()), consts)
        own = _THREAD.search(address) or (spread is not None and spread != access.UNIFORM
                                          and access.SCATTERED not in spread)
        if own and values is None:
            values = _assigned(body)
        if own and not _THREAD.search(address) and _loaded(address, values):
            own, spread = False, None  # a row a loaded value picks (a token's embedding)
        if own:
            # a thread's own word: its block's own where the address reads the block index
            # (no queue), else one of a set every block adds to (a privatised histogram's
            # flush): each word queues one atomic a block
            if not looped and not _block_indexed(address, values):
                shared_set += region.weight(m.start())
            continue
        if spread is None or access.SCATTERED in spread:
            data += region.weight(m.start())  # an address the data (or unread text) picks
            continue
        # an integer max / min on one address: its lanes merge in the warp, and the L2
        # takes a request faster than a float add (measured)
        maxes.append(m[0].startswith(("atomicMax", "atomicMin")))
        lanes = region.guard_lanes(m.start())
        if lanes == "warp" and not looped:  # one lane of each warp
            one_warp += 1.0
        elif lanes == "warp":  # ... each pass: a 32nd of the elements' (a warp's ballot)
            one += region.weight(m.start()) / access.WARP_LANES
        elif lanes and not looped:  # one thread of each block
            one_block += 1.0
        elif _BLOCK.search(address):
            per_block += region.weight(m.start()) if looped else 1.0
        elif loop in ("grid-stride", "block-stride") and not looped:
            one_thread += 1.0
        else:
            one += region.weight(m.start())
    shared = False
    for m in _EXTERN_SHARED.finditer(body) if "extern" in body else ():
        if re.search(rf"\b{re.escape(m[1])}\s*\[[^\]]*threadIdx", body):
            shared = True
    control = sum(region.control(lo, hi, arithmetic) for lo, hi in spans) \
        if region.loops else 0.0
    chains = (len({c for lo, hi in spans for c in _CHAIN.findall(body, lo, hi)})
              if "fma" in body else 0) or 1
    head = stride_heads[0] if stride_heads else None
    passes = len(stride_heads) if loop == "block-stride" else 0
    trees = _trees(body, heads, region, stride_heads)
    unroll = _unroll(body, head, spans[0], region, heads, arithmetic, fmas, (load + store) / 4,
                     params, consts)
    if loop in ("grid-stride", "block-stride") and unroll != 1:
        read_bases = {bases.get(n, n) for n in read_only}
        unroll = _held(bool(loop_stores) and _passes_wait(loop_loads, loop_stores,
                                                          restricted(params), read_bases),
                       max((pointers.get(n) or 4 for n in read_only
                            if bases.get(n, n) in loop_loads), default=0), unroll)
    static_arrays = _shared_arrays(body, consts)
    bounds = _block_bounds(body, static_arrays, consts, region, thread_index)
    if loop != "block-stride" and "lockIdx" in body and _steps_by_own_width(body):
        # (a block-stride loop steps by the launch's width from there: any width covers)
        bounds = (BLOCK_PINNED, *bounds[1:])
    return Facts(loop=loop, load_bytes=None if unknown else load,
                 store_bytes=None if unknown else store, fma=fma, control=control,
                 fp64=_fp64_share(params, body, arithmetic, region) if fma else 0.0,
                 block_limit=bounds[0], block_limit_y=bounds[1], pow2_block=bounds[2],
                 static_shared=_static_shared(static_arrays),
                 chains=chains, atomics_one=one,
                 atomics_one_thread=one_thread, atomics_block=per_block,
                 atomics_one_block=one_block, atomics_one_warp=one_warp, atomics_data=data,
                 atomics_set=shared_set, atomics_max=bool(maxes) and all(maxes),
                 shared_per_thread=shared, barrier="__syncthreads" in body,
                 unroll=unroll,
                 column_bytes=0.0 if unknown else column,
                 scattered_bytes=0.0 if unknown else scattered,
                 scattered_sectors=0.0 if unknown else sectors, passes=passes,
                 reread_bytes=0.0 if unknown else reread,
                 reread_row_bytes=0.0 if unknown else sum(reread_rows.values()),
                 cached_bytes=0.0 if unknown else cached,
                 cached_loads=() if unknown else tuple(cached_loads),
                 math=tuple(sorted(calls.items())),
                 reductions=_reductions(body, stride_heads, region, shared_arrays)
                 if passes else 0, trees=trees,
                 sums=_block_sums(body, stride_heads, region)
                 if loop == "grid-stride" and not trees else 0)


# an atomic's address: the array (or pointer) it indexes, ``&bins[k]``, ``out + k``
_ADDRESS_BASE = re.compile(r"\s*&?\s*\(?\s*([A-Za-z_]\w*)")
_BLOCK_WORDS = re.compile(_BLOCK.pattern + r"|\bgridDim\b|\bhipGridDim_")


# an assignment's name and (looked ahead, so that ``a = b = c`` gives both) its value
_ASSIGNED = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*=(?!=)\s*(?=([^;]*))")


def _thread_alias(body: str) -> re.Pattern[str] | None:
    """A pattern of the names holding the thread's index along x and nothing else (set
    once, not a loop's counter: ``for (int t = threadIdx.x; t < 256; t += blockDim.x)``
    walks other indices), or None."""
    found = []
    for word in ("threadIdx.x", "hipThreadIdx_x"):
        at = body.find(word)
        while at >= 0:  # each ``= threadIdx.x;``: the name before it
            end = at + len(word)
            if body[end:end + 8].lstrip().startswith(";"):
                before = _ASSIGNED_TO.search(body, max(0, at - 80), at)
                if before:
                    found.append(before[1])
            at = body.find(word, end)
    aliases = [name for name in dict.fromkeys(found) if _set_once(name, body)]
    return re.compile(r"\b(?:" + "|".join(map(re.escape, aliases)) + r")\b") \
        if aliases else None


def _halves_block(body: str) -> bool:
    """A loop halving the block down to one (a tree reduction); its step's ``>>=`` or
    ``/=`` looked for first."""
    return (">>=" in body or "/=" in body) and bool(_HALVED_BLOCK.search(body))


def _set_once(name: str, body: str) -> bool:
    """Whether ``name`` is assigned once in ``body`` (no other ``=``, ``+=``, ``++``)."""
    word = re.escape(name)
    assigned = sum(1 for _ in itertools.islice(re.finditer(
        rf"\b{word}\s*(?:[-+*/%&|^]?=(?!=)|\+\+|--)", body), 2))
    return assigned == 1 and not re.search(rf"(?:\+\+|--)\s*{word}\b", body)


def _shared_arrays(body: str, consts: dict[str, int]
                   ) -> list[tuple[str, int | None, list[int | None]]]:
    """The body's static ``__shared__`` arrays: each one's name, its element's bytes (None:
    a type not known here) and its extents (None: one not known here)."""
    if "__shared__" not in body:
        return []
    out = []
    for m in _SHARED_ARRAY_DIMS.finditer(body):
        words = body[m.start():m.start(1)].split()[1:]  # the words between it and the name
        size = next((TYPE_BYTES[w] for w in reversed(words) if w in TYPE_BYTES), None)
        out.append((m[1], size,
                    [_constant(d, consts) for d in re.findall(r"\[([^\[\]]+)\]", m[2])]))
    return out


def _block_bounds(body: str, shared: list[tuple[str, int | None, list[int | None]]],
                  consts: dict[str, int], region: _Region,
                  thread_index: re.Pattern[str] | None) -> tuple[int, int, bool]:
    """(the most threads along x, and along y, the body's static shared arrays allow, 0 for
    no bound; whether its block must be a power of two): an array of N words that every
    thread writes at its own index (``__shared__ float s[256]; s[tid] = ...``, or past a
    halo, ``s[threadIdx.x + R]``; a tile's ``t[threadIdx.y][threadIdx.x]``; no guard on the
    thread around the write) holds that many threads at most; a body that halves its block
    (``for (s = blockDim.x / 2; s > 0; s >>= 1)``, a tree reduction) sums every thread's
    word only when the block is a power of two."""
    if "__shared__" not in body or ("Idx.x" not in body and "Idx_x" not in body
                                    and thread_index is None):
        return 0, 0, "__shared__" in body and _halves_block(body)
    limits = [0, 0]
    unknown = [False, False]

    def offset(index: str, axis: int) -> int | None:
        """The constant past the thread's own index along ``axis`` that ``index`` adds (0
        for the index alone), None when it is not such an index."""
        m = _THREAD_INDEX[axis].fullmatch(index)
        if m is None and axis == 0 and thread_index is not None \
                and thread_index.fullmatch(index.partition("+")[0].strip()):
            m = re.fullmatch(r"(\w+)(?:\s*\+\s*(\w+))?", index)
        if m is None:
            return None
        return _constant(m[2], consts) if m[2] else 0

    def bound(axis: int, size: int | None, add: int | None) -> None:
        if size is None:  # an extent not known here (a template's parameter)
            unknown[axis] = True
        elif add is not None and size - add > 0:
            limits[axis] = size - add if not limits[axis] else min(limits[axis], size - add)

    arrays: dict[str, list[int | None]] = {}
    for name, _, dims in shared:
        if len(dims) in (1, 2):
            arrays.setdefault(name, dims)
    done: set[str] = set()
    writes = re.compile(r"\b(" + "|".join(map(re.escape, arrays)) + r")"
                        + _SUBSCRIPT_WRITE.pattern[len(r"\b(\w+)"):]) if arrays else None
    for sub in writes.finditer(body) if writes else ():  # one pass over their writes
        name = sub[1]
        dims = arrays.get(name)
        if dims is None or name in done or (sub[3] is None) != (len(dims) == 1) \
                or region.guarded(sub.start()):
            continue
        if len(dims) == 1:
            add = offset(sub[2], 0)
            if add is not None:
                bound(0, dims[0], add)
                done.add(name)
        else:
            add_y, add_x = offset(sub[2], 1), offset(sub[3], 0)
            if add_y is not None and add_x is not None:
                bound(0, dims[1], add_x)
                bound(1, dims[0], add_y)
                done.add(name)
    # an extent not known here: the launch as it is fits it, a wider block may not
    return (limits[0] or (BLOCK_AS_IS if unknown[0] else 0),
            limits[1] or (BLOCK_AS_IS if unknown[1] else 0), _halves_block(body))


def _steps_by_own_width(body: str) -> bool:
    """Whether the body's element index steps by something else than ``blockDim.x`` a block
    (``blockIdx.x * TILE_DIM + threadIdx.x``, ``threadIdx.x + blockIdx.x * 256``): its
    blocks are as wide as that, not as the launch says (a name the body sets from
    ``blockDim.x`` is the block's width)."""
    values = None
    for m in _pinned(body):
        step = m["a"] or m["b"] or m["c"]
        if step.isdigit():
            return True
        if values is None:
            values = _assigned(body)
        if not any("blockDim" in v for v in values.get(step, ())):
            return True
    return False


# how far a _PINNED match reaches before and after its blockIdx.x (casts, a step's name)
_PINNED_REACH = 160


def _pinned(body: str):
    """_PINNED's matches, searched only about each ``blockIdx.x`` of the body (the pattern
    tried at every name of a long body cost 0.1 ms a kernel)."""
    at, seen = body.find("lockIdx"), 0  # blockIdx, hipBlockIdx_x
    while at >= 0:
        for m in _PINNED.finditer(body, max(seen, at - _PINNED_REACH), at + _PINNED_REACH):
            seen = m.end()
            yield m
        at = body.find("lockIdx", at + 7)


def _static_shared(shared: list[tuple[str, int | None, list[int | None]]]) -> int | None:
    """The bytes of the static ``__shared__`` arrays (0 for none), or None where an extent
    or an element's type is not known here."""
    total = 0
    for _, size, dims in shared:
        if size is None or None in dims:
            return None
        total += size * math.prod(d for d in dims if d is not None)
    return total


def _constant(text: str, consts: dict[str, int]) -> int | None:
    """An array's extent as an integer expression of literals and #defined constants
    (``TILE_DIM + 1``, ``256 + 2 * R``), or None."""
    if len(text) > MAX_EXTENT_CHARS:
        return None  # (an array's extent as code writes it is short; untrusted text)
    return access.constant_of(text, consts)


def _double_names(params: str, body: str) -> frozenset[str]:
    """Names declared double (or a pointer to doubles): parameters, and each declarator of
    a ``double`` declaration in the body (``double v = x[i], t = 0.0;``)."""
    names: set[str] = set()
    for param in access.split_top_level(params.strip("() "), _SEPARATORS):
        if _DOUBLE.search(param) and (found := _NAME.findall(param.split("=")[0])):
            names.add(found[-1])
    for m in _DOUBLE.finditer(body):
        end = _STATEMENT_END.search(body, m.end())
        declaration = body[m.end():end.start() if end else len(body)]
        if "(" in declaration.split("=")[0]:
            continue  # a cast or a function's return type, not a declaration
        depth, start = 0, 0
        for i, ch in enumerate(declaration + ","):
            depth += ch in "([{<"
            depth -= ch in ")]}>"
            if ch == "," and depth == 0:
                found = _NAME.findall(declaration[start:i].split("=")[0].split("[")[0])
                if found and found[-1] not in ("const", "__restrict__"):
                    names.add(found[-1])
                start = i + 1
    return frozenset(names)


def _fp64_share(params: str, body: str, arithmetic: list[int], region: _Region) -> float:
    """The share of an element's multiply-adds (``arithmetic``: their places, weighted by
    the constant loops around them) in statements that compute in double precision: that
    name the double type or a name declared double, or that a double literal promotes
    (:func:`_promoted`)."""
    literals = _DOUBLE_LITERAL.search(body) is not None
    if "double" not in body and "double" not in params and not literals:
        return 0.0
    names = _double_names(params, body) if "double" in body or "double" in params else ()
    double = re.compile(r"\bdouble\b" + "".join(rf"|\b{re.escape(n)}\b" for n in names))
    ends = [m.start() for m in _STATEMENT_END.finditer(body)]  # ``;``, ``{``, ``}``
    total = in_double = 0.0
    for at in arithmetic:
        i = bisect.bisect_left(ends, at)
        start = ends[i - 1] + 1 if i else 0
        end = ends[i] if i < len(ends) else len(body)
        weight = region.weight(at)
        total += weight
        if double.search(body, start, end) or (literals and _promoted(body[start:end])):
            in_double += weight
    return in_double / total if total else 0.0


def _promoted(statement: str) -> bool:
    """Whether an unsuffixed floating literal (``0.3``: a double) makes a statement's
    arithmetic double precision. By C++'s conversions it always does; the compiler takes
    one operation back to float where the literal is a float exactly (``v * 255.0``,
    ``x * 0.5``: rounding the double result gives the float one), not a literal a float
    cannot hold (``0.3``, ``1e-5``) nor several operations (``a * 0.5 + b * 2.0``):
    NVRTC's PTX of fixtures/sources/promotions.cu. A literal cast to float is none."""
    statement = _STRING.sub('""', statement)  # (a static_assert's message)
    values = [float(m[0]) for m in _DOUBLE_LITERAL.finditer(statement)
              if not _FLOAT_CAST.search(statement, 0, m.start())]
    if not values:
        return False
    if any(struct.unpack("f", struct.pack("f", v))[0] != v for v in values):
        return True
    return len(_OPERATOR.findall(_SUBSCRIPTS.sub("[]", statement))) > 1


def _subscript_spans(body: str) -> list[tuple[int, int]]:
    """The outermost ``[...]`` of the body, in order: an element's address, whose
    multiplications are the integer pipe's (and, in a loop, strength-reduced to adds by the
    compiler), not the arithmetic's multiply-adds (``a[row * n + col]``: NVRTC's PTX has no
    ``fma`` for it)."""
    out: list[tuple[int, int]] = []
    at = body.find("[")
    while at >= 0:
        end = access.matching(body, at, "[")
        out.append((at, end))
        at = body.find("[", end)
    return out


def _inside(spans: list[tuple[int, int]], at: int) -> bool:
    """Whether ``at`` lies inside one of ``spans`` (ordered, not overlapping)."""
    i = bisect.bisect_right(spans, (at, math.inf)) - 1
    return i >= 0 and spans[i][0] < at < spans[i][1]


def _assigned(body: str) -> dict[str, list[str]]:
    """The values the body assigns each name, in order."""
    out: dict[str, list[str]] = {}
    for m in _ASSIGNED.finditer(body):
        out.setdefault(m[1], []).append(m[2])
    return out


def _through(text: str, values: dict[str, list[str]], test: Callable[[str], bool],
             depth: int = 2, itself: bool = True) -> bool:
    """Whether ``test`` holds for ``text`` (``itself``) or for a value assigned a variable it
    names (``values``: :func:`_assigned`; ``depth`` assignments deep)."""
    if itself and test(text):
        return True
    for name in set(_NAME.findall(text)) if depth else ():
        for value in values.get(name, ()):
            if _through(value, values, test, depth - 1):
                return True
    return False


def _block_indexed(text: str, values: dict[str, list[str]]) -> bool:
    """Whether ``text`` reads the block index, itself or through its variables."""
    return _through(text, values, lambda t: bool(_BLOCK_WORDS.search(t)))


def _loaded(address: str, values: dict[str, list[str]]) -> bool:
    """Whether an atomic's ``address`` names a variable the body assigns an array's
    element to (``ix = inp[b * T + t]``; an element's address, ``&a[i]``, is not one),
    or one assigned from such a variable."""
    return _through(address, values, lambda t: "[" in t and not t.startswith("&"),
                    itself=False)


# a block's reduction after a pass: a barrier, cub's (``BlockReduce(...).Sum(``), or a call
# given a shared array the body declares (``block_sum(t, red)``)
_SHARED_ARRAY = re.compile(r"__shared__\s+[\w\s:<>]+?\b(\w+)\s*\[")
MAX_EXTENT_CHARS = 64
# a static shared array and its extents (``[256]``, ``[TILE][TILE + 1]``)
_SHARED_ARRAY_DIMS = re.compile(r"__shared__\s+[\w\s:<>]+?\b(\w+)\s*((?:\[[^\[\];]+\]\s*)+)")
# a write to an element of an array of one or two subscripts (``s[tid] =``, ``t[y][x] =``)
_SUBSCRIPT_WRITE = re.compile(r"\b(\w+)\s*\[\s*([^\[\]]+?)\s*\](?:\s*\[\s*([^\[\]]+?)\s*\])?"
                              r"\s*=(?!=)")
# the thread's own index along x and along y, and a constant past it
_THREAD_INDEX = (re.compile(r"(threadIdx\.x|hipThreadIdx_x)(?:\s*\+\s*(\w+))?"),
                 re.compile(r"(threadIdx\.y|hipThreadIdx_y)(?:\s*\+\s*(\w+))?"))
# a loop halving the block down to one (``for (s = blockDim.x / 2; s > 0; s >>= 1)``)
_HALVED_BLOCK = re.compile(r"\bfor\s*\([^;]*=\s*\(?\s*(?:blockDim\.x|hipBlockDim_x)\s*\)?\s*"
                           r"(?:/\s*2|>>\s*1)\s*;[^;]*;[^)]*(?:>>=\s*1|/=\s*2)")
_REDUCE_CALL = re.compile(r"__syncthreads\s*\(|\)\s*\.\s*(?:Reduce|Sum)\s*\(")


# a loop's step that halves its counter (a tree written for a block size it names:
# ``for (int h = 512; h > 0; h >>= 1)``)
_HALVING = re.compile(r">>=\s*1\b|/=\s*2\b|=\s*\w+\s*(?:>>\s*1|/\s*2)\b")


def _trees(body: str, heads: list[tuple[int, int]], region: _Region,
           stride_heads: list[tuple[int, int]]) -> int:
    """Loops over the block's threads whose every step ends at a barrier: a tree or a
    scan in shared memory (``for (s = blockDim.x / 2; s > 0; s >>= 1) {... __syncthreads();
    }``, or from a literal, halving), its steps following the block, not a stride loop
    over elements."""
    if "__syncthreads" not in body:
        return 0
    count = 0
    for head in heads:
        if head in stride_heads:
            continue
        lo, hi = head
        text = body[lo:hi]
        step = text.split(";")[-1]
        if "+=" in step or not ("blockDim" in text or _HALVING.search(step)):
            continue
        end = region._statement_end(body, hi + 1)
        if "__syncthreads" in body[hi:end]:
            count += 1
    return count


# a block's sum by warp shuffles and a barrier (the zoo's block_sum as read inlined), or
# cub's
_SHUFFLE_SUM = re.compile(r"__shfl\w*\s*\(|\)\s*\.\s*(?:Reduce|Sum)\s*\(")


def _after_each(body: str, heads: list[tuple[int, int]], region: _Region) -> list[str]:
    """The text after each loop of ``heads``, up to the next one (or the body's end)."""
    ends = [region._statement_end(body, hi + 1) for _, hi in heads]
    return [body[end + 1:heads[k + 1][0] if k + 1 < len(heads) else len(body)]
            for k, end in enumerate(ends)]


def _block_sums(body: str, heads: list[tuple[int, int]], region: _Region) -> int:
    """The grid-stride loops followed, before the next loop or the body's end, by a
    block's sum through warp shuffles and a barrier (or cub's BlockReduce)."""
    return sum(bool(_SHUFFLE_SUM.search(after)) and ("__syncthreads" in after or ".Sum" in after
                                                     or ".Reduce" in after)
               for after in _after_each(body, heads, region))


def _reductions(body: str, heads: list[tuple[int, int]], region: _Region,
                shared: set[str]) -> int:
    """The passes of a block per row that end in a block's reduction: between the end of
    the pass's loop and the next pass (or the body's end); ``shared``: the body's shared
    arrays."""
    names = "|".join(map(re.escape, shared))
    given = re.compile(rf"\w\s*\([^;]*\b(?:{names})\b") if shared else None
    return sum(bool(_REDUCE_CALL.search(after) or (given and given.search(after)))
               for after in _after_each(body, heads, region))


# a last term of an index that moves it to a neighbour: a literal, a name (a row's
# width), or their product
_NEIGHBOUR = re.compile(r"[-+](?:\d+|[A-Za-z_]\w*|\d+\*[A-Za-z_]\w*|[A-Za-z_]\w*\*\d+)$")


def _index_names(index: str, values: Callable[[], dict[str, list[str]]]) -> set[str]:
    """The words of an index and of the values its variables are assigned (one level)."""
    words = set(_NAME.findall(index))
    assigned = values()
    for w in list(words):
        for value in assigned.get(w, ()):
            words.update(_NAME.findall(value))
    return words


def _literal_bound(body: str) -> bool:
    """Whether the body masks or takes a modulus by a literal (``x & 255``, ``k % 64``; not
    ``&&``): what makes an index's table (access.extent_of). Each ``&`` and ``%`` looked
    at, not a pattern tried at every character."""
    for op in "&%":
        at = body.find(op)
        while at >= 0:
            if (not at or body[at - 1] not in "&%") and _LITERAL_AFTER.match(body, at + 1):
                return True
            at = body.find(op, at + 1)
    return False


def _grid_stride_names(body: str) -> frozenset[str]:
    """The variables a statement assigns a value naming the grid's dimension (``int stride
    = blockDim.x * gridDim.x``), found from each ``gridDim`` back to its statement's start."""
    out = set()
    at = body.find("ridDim")
    while at >= 0:
        start = max(body.rfind(";", 0, at), body.rfind("{", 0, at), body.rfind("}", 0, at))
        last = None
        for m in _ASSIGNED.finditer(body, start + 1, at):
            last = m
        if last is not None and "=" not in body[last.end():at]:
            out.add(last[1])
        at = body.find("ridDim", at + 6)
    return frozenset(out)


def _neighbourhood(index: str, far: frozenset[str] = frozenset()) -> str:
    """An index without the terms that move it to a neighbour (``i - 1``, ``i + width``:
    ``i``); a term naming one of ``far`` (a variable holding the grid's threads: ``i +
    2 * stride`` is another thread's element, read once) moves it to no neighbour."""
    text = re.sub(r"\s+", "", index)
    while (m := _NEIGHBOUR.search(text)) and m.start():
        if far and (term := _NAME.search(m[0])) and term[0] in far:
            break
        text = text[:m.start()]
    return text


def _subscripts(name: str, body: str) -> list[tuple[int, int]]:
    r"""Where each subscript ``name[`` / ``name [`` of the body starts and ends, not preceded by
    a word character, ``.`` or ``&``: what ``(?<![\w.&])name\s*\[`` finds, found from the
    name's occurrences (no pattern compiled per name)."""
    out = []
    at = body.find(name)
    while at >= 0:
        after = _OPEN_SUBSCRIPT.match(body, at + len(name))
        if after is not None and (not at or not _BEFORE_NAME.match(body, at - 1)):
            out.append((at, after.end()))
            at = body.find(name, after.end())
        else:
            at = body.find(name, at + 1)
    return out
