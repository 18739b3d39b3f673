"""Kernel facts from PTX text: what each thread of an ``.entry`` loads, stores and computes
per element, its loop and its atomics (the launch-time model's facts, issue 28).

PTX ships beside cubins (Triton's cache, ``nvcc -ptx``, ``-keep``) and inside fat
binaries. Read here, per entry:

* the element loop: a back edge whose compare is not against a constant; ``grid-stride``
  when its step reads ``%nctaid``, ``block-stride`` when it reads ``%ntid`` only;
  ``per-element`` without one;
* per element (in that loop's body, or the whole entry): bytes of ``ld.global`` and
  ``st.global`` (type width x vector), ``fma``/``mad`` on floats (``fp64``: the share of
  them on doubles), each times the trip
  count of the constant loops around it (a counter from a constant, stepped by a
  constant, compared with a constant); code behind a branch on the thread index alone
  (``if (threadIdx.x < 2)``: a tile's halo) is not the element's;
* independent chains: the FMAs of the element over its longest dependent path of FMAs;
* loop control: the back edges of those constant loops an element runs (the counter's
  add, its compare and the branch each: ``LOOP_CONTROL``);
* atomics (``atom``/``red`` on global memory) by address: one address (from parameters
  only), a block's address (from ``%ctaid``), the thread's own (anything with ``%tid``);
  after the element loop once per thread, behind a thread-index branch once per block;
* ``bar.sync``; dynamic (``.extern``) shared memory indexed by the thread.

What a pattern here does not recognise stays unknown: a loop with a trip count read from
memory leaves ``fma`` None, and the model's range spans the readings it could be.
"""

from __future__ import annotations

import bisect
import math
import re
from dataclasses import dataclass, field

from occlint.model.facts import LOOP_CONTROL, Facts

_ENTRY = re.compile(r"\.entry\s+([\w$.]+)\s*\(", re.M)
_BRANCH = re.compile(r"^\s*(@!?%\w+\s+)?bra(?:\.uni)?\s+(\$?[\w$.]+)\s*;?$")
_REG = re.compile(r"%[\w.]+")
_MEM = re.compile(r"\[([^\]]+)\]")
_SPECIAL = {"%tid": "tid", "%ctaid": "ctaid", "%ntid": "ntid", "%nctaid": "nctaid"}
_WIDTH = {"8": 1, "16": 2, "32": 4, "64": 8, "128": 16}
# the special-function unit's instructions and IEEE float division, as the math functions
# whose measured cost each stands for (timing's math_fma): a function's other instructions
# (its range reduction, its multiplies) are the FMAs counted beside them
_MUFU = {"ex2": "exp2f", "lg2": "__logf", "sin": "__sinf", "cos": "__cosf", "tanh": "exp2f",
         "rsqrt": "rsqrtf"}


def _special_function(code: str) -> str | None:
    """The measured function a float instruction's cost is (None: not one of them)."""
    op, _, rest = code.partition(".")
    if op in _MUFU:
        return _MUFU[op]
    if op in ("rcp", "sqrt", "div"):
        exact = rest.startswith("rn")  # IEEE: a Newton step and its checks
        return ("div" if op != "sqrt" else "sqrtf") if exact else "rsqrtf"
    return None


@dataclass
class _Op:
    index: int
    opcode: str
    dest: str | None
    sources: list[str]  # registers read (a guard's predicate last)
    text: str  # the whole instruction, its guard included
    target: str | None = None  # a branch's label
    guarded: bool = False  # a branch taken on a predicate (``@%p bra``)


@dataclass
class _Loop:
    head: int  # index of the first instruction
    tail: int  # index of the back-edge branch
    trip: int | None = None  # constant trip count; None: a variable loop
    stride: str | None = None  # "grid-stride" / "block-stride" of a variable loop
    unroll: int = 1  # elements a pass of a variable loop's body does (the index's steps)


@dataclass
class _Entry:
    name: str
    ops: list[_Op] = field(default_factory=list)
    labels: dict[str, int] = field(default_factory=dict)
    extern_shared: set[str] = field(default_factory=set)
    max_threads: int = 0  # its .maxntid's product (0: none)


_BRACE = re.compile(r"[{}]")
_MAXNTID = re.compile(r"\.maxntid\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?")
_GUARD_PREFIX = re.compile(r"^@!?%\w+\s+")
_SKIP = (".reg", ".pragma", ".loc", ".shared", ".local", "//")
MAX_OPS = 100_000  # instructions of one entry read for facts; past this: none (unknown)
# what an instruction touching global memory starts with, and a barrier
_GLOBAL = ("ld.global", "st.global", "atom.global", "red.global")
_BARRIERS = ("bar.sync", "barrier.sync")


def _split(text: str) -> list[_Entry]:
    """The ``.entry`` bodies, in one pass over the text (a body that never closes ends
    the reading)."""
    out = []
    extern = set(re.findall(r"\.extern\s+\.shared\s+[^;]*?([\w$]+)\s*\[\s*\]", text))
    pos = 0
    while (m := _ENTRY.search(text, pos)) is not None:
        start = text.find("{", m.end())
        if start < 0:
            break
        depth, end = 0, -1
        for b in _BRACE.finditer(text, start):
            depth += 1 if b[0] == "{" else -1
            if depth == 0:
                end = b.start()
                break
        if end < 0:
            break
        pos = end + 1
        entry = _Entry(m[1], extern_shared=extern)
        bound = _MAXNTID.search(text, m.end(), start)
        if bound:
            entry.max_threads = math.prod(int(v) for v in bound.groups() if v)
        for line in text[start + 1:end].split("\n"):
            line = line.strip()
            if not line or line.startswith(_SKIP):
                continue
            if line.endswith(":"):
                entry.labels[line[:-1]] = len(entry.ops)
                continue
            _add(entry, line.split("//", 1)[0].rstrip().rstrip(";").rstrip())
            if len(entry.ops) > MAX_OPS:
                entry.ops = []
                break
        out.append(entry)
    return out


def _add(entry: _Entry, line: str) -> None:
    body = _GUARD_PREFIX.sub("", line) if line.startswith("@") else line
    parts = body.split(None, 1)
    if not parts:
        return
    opcode = parts[0]
    args = parts[1] if len(parts) > 1 else ""
    operands = _OPERANDS.split(args) if args else []
    dest = None
    if operands and not opcode.startswith(_NO_DEST) and operands[0].startswith("%"):
        dest = operands[0].strip()
        operands = operands[1:]
    elif opcode.startswith("setp") and operands:
        dest = operands[0].split("|")[0].strip()
        operands = operands[1:]
    sources = _REG.findall(",".join(operands)) if operands else []
    if body is not line:
        sources += _REG.findall(line[:len(line) - len(body)])  # a guard predicate
    op = _Op(len(entry.ops), opcode, dest, sources, line)
    if opcode.startswith("bra"):
        m = _BRANCH.match(line)
        if m:
            op.target, op.guarded = m[2], bool(m[1])
    entry.ops.append(op)


_OPERANDS = re.compile(r",(?![^{]*})")
_FLOAT = ("%f", "%fd", "%h")
_NO_DEST = ("st.", "bra", "red.", "bar", "ret", "setp")


class _Defs:
    """Where each register is written, to find its value's definition at an instruction."""

    def __init__(self, entry: _Entry):
        self.ops = entry.ops
        self.at: dict[str, list[int]] = {}
        for op in entry.ops:
            if op.dest is not None:
                self.at.setdefault(op.dest, []).append(op.index)

    def before(self, reg: str | None, index: int, low: int = 0) -> _Op | None:
        """The last write of ``reg`` before instruction ``index`` (at ``low`` or after)."""
        at = self.at.get(reg or "")
        if not at:
            return None
        i = bisect.bisect_left(at, index)
        return self.ops[at[i - 1]] if i and at[i - 1] >= low else None


def _origins(entry: _Entry) -> dict[str, set[str]]:
    """Register -> what it is computed from: tid, ctaid, ntid, nctaid, param, shared
    (an extern shared symbol). Two passes carry values around loops."""
    out: dict[str, set[str]] = {}
    shared = entry.extern_shared
    # floating-point values are never an address, an index or a bound: left out
    ops = [op for op in entry.ops if op.dest is not None and not op.dest.startswith(_FLOAT)]
    for _ in range(2):
        for op in ops:
            got = _origins_of(out, op.sources)
            if op.opcode.startswith("ld.param"):
                got.add("param")
            elif shared and op.opcode.startswith(("mov", "cvta")) and \
                    op.text.rsplit(",", 1)[-1].strip() in shared:
                got.add("shared")
            out[op.dest] = got | out[op.dest] if op.dest in out else got
    return out


def _loops(entry: _Entry, origins: dict[str, set[str]], defs: _Defs) -> list[_Loop]:
    loops = []
    for op in entry.ops:
        head = entry.labels.get(op.target) if op.target else None
        if head is None or head > op.index:
            continue
        loop = _Loop(head, op.index)
        leave = op if op.guarded else _exit(entry, loop)
        compare = defs.before(leave.sources[-1], leave.index) \
            if leave is not None and leave.sources else None
        if compare is not None and compare.opcode.startswith("setp"):
            loop.trip = _trip(loop, compare, defs)
            if loop.trip is None:
                seen = _origins_of(origins, compare.sources)
                for r in compare.sources:
                    step = defs.before(r, compare.index, head)
                    if step is not None and step.opcode.startswith("add"):
                        seen |= _origins_of(origins, step.sources)
                loop.stride = "grid-stride" if "nctaid" in seen else \
                    "block-stride" if "ntid" in seen else None
                loop.unroll = _steps(loop, compare, origins, defs)
        loops.append(loop)
    return loops


_IMM = re.compile(r"^-?\d+$")


def _steps(loop: _Loop, compare: _Op, origins: dict[str, set[str]], defs: _Defs) -> int:
    """How many elements a pass of the loop steps the index it compares: the index at the
    bottom of the pass as the index at its top plus a multiple of the stride, read from
    the adds, shifts and constant multiplies that define it in the pass (the compiler's
    unrolling: ``i += s; i += s``, ``i += s << 1``, ``t = s << 1; i = t + (t + i)``). A
    loop over pointers (its index from a parameter) counts its adds only."""
    index = next((r for r in compare.sources
                  if defs.before(r, compare.index, loop.head) is not None), None)
    if index is None:
        return 1
    if "param" in origins.get(index, set()):
        return max(_adds(loop, index, compare.index, defs), 1)
    seen: dict[tuple[str, int], tuple[int, int]] = {}

    def linear(reg: str, at: int, depth: int) -> tuple[int, int]:
        """``reg`` at instruction ``at`` as (a, b): a times the index at the top of the
        pass plus b strides; (0, 0) where it is neither (a constant, another value)."""
        d = defs.before(reg, at, loop.head)
        if d is None:  # not written in the pass before here: the index at the top, or a
            # value from before the loop (the stride, or a constant multiple of it)
            return (1, 0) if reg == index else (0, _multiple(defs.before(reg, loop.head)))
        if depth > 16:
            return 0, 0
        if (reg, d.index) not in seen:
            seen[reg, d.index] = _combine(d, [linear(r, d.index, depth + 1)
                                              for r in d.sources])
        return seen[reg, d.index]

    top, strides = linear(index, compare.index, 0)
    return strides if top == 1 and 1 <= strides <= 64 else 1


def _combine(d: _Op, parts: list[tuple[int, int]]) -> tuple[int, int]:
    """An add, a shift or multiply by a constant, or a move of values each (index
    multiple, stride multiple): the same of its result; (0, 0) for anything else."""
    last = d.text.rsplit(",", 1)[-1].strip().rstrip(";")
    if d.opcode.startswith("add") and len(parts) == 2:
        return parts[0][0] + parts[1][0], parts[0][1] + parts[1][1]
    if d.opcode.startswith(("shl", "mul")) and len(parts) == 1 and _IMM.match(last):
        k = 1 << min(int(last), 8) if d.opcode.startswith("shl") else int(last)
        return parts[0][0] * k, parts[0][1] * k
    if d.opcode.startswith("mov") and len(parts) == 1:
        return parts[0]
    return 0, 0


def _adds(loop: _Loop, r: str, at: int, defs: _Defs) -> int:
    """The adds in the pass that step a pointer ``r`` from its value at the top."""
    count = 0
    for _ in range(16):
        d = defs.before(r, at, loop.head)
        if d is None or not d.opcode.startswith("add"):
            break
        count += 1
        inside = [x for x in d.sources if defs.before(x, d.index, loop.head) is not None]
        if not inside:
            break
        r, at = inside[0], d.index
    return count


def _multiple(op: _Op | None) -> int:
    """A step's multiple of the stride: ``shl s, 1`` 2, ``mul s, 4`` 4, else 1."""
    if op is None:
        return 1
    last = op.text.rsplit(",", 1)[-1].strip()
    if not _IMM.match(last):
        return 1
    if op.opcode.startswith("shl") and 0 < int(last) <= 3:
        return 1 << int(last)
    if op.opcode.startswith("mul") and 1 < int(last) <= 8:
        return int(last)
    return 1


def _exit(entry: _Entry, loop: _Loop) -> _Op | None:
    """An unconditional back edge's loop leaves by a guarded branch past its end."""
    for o in entry.ops[loop.head:loop.tail]:
        if o.guarded and entry.labels.get(o.target or "", -1) > loop.tail:
            return o
    return None


def _trip(loop: _Loop, compare: _Op, defs: _Defs) -> int | None:
    """A counter from a constant, stepped by a constant, compared with a constant."""
    operands = compare.text.split(None, 1)[1].split(",")
    limit = next((int(x) for x in (o.strip() for o in operands[1:]) if _IMM.match(x)), None)
    counter = compare.sources[0] if compare.sources else None
    if limit is None or counter is None:
        return None
    step = defs.before(counter, compare.index, loop.head)
    if step is None or not step.opcode.startswith("add"):
        return None
    inc = next((int(x) for x in (o.strip() for o in step.text.split(",")[1:])
                if _IMM.match(x)), None)
    first = defs.before(counter, loop.head)
    init = 0
    if first is not None:
        value = first.text.rsplit(",", 1)[-1].strip()
        if not (first.opcode.startswith("mov") and _IMM.match(value)):
            return None
        init = int(value)
    if not inc:
        return None
    trip = (limit - init) // inc
    return trip if 0 < trip <= 1 << 20 else None


def _bytes(opcode: str) -> int:
    parts = opcode.split(".")
    vector = 1
    for p in parts:
        if p in ("v2", "v4", "v8"):
            vector = int(p[1])
    width = next((_WIDTH[p[1:]] for p in reversed(parts) if p[1:] in _WIDTH
                  and p[0] in "bfsu"), 4)
    return width * vector


def _thread_guarded(entry: _Entry, origins: dict[str, set[str]], defs: _Defs) -> list[bool]:
    """Per instruction: skipped by a forward branch on a predicate of the thread index
    alone (``if (threadIdx.x < 2)``, ``if (threadIdx.x == 0)``)."""
    marks = [0] * (len(entry.ops) + 1)
    for op in entry.ops:
        if not op.guarded or not op.sources:
            continue
        target = entry.labels.get(op.target or "", -1)
        if target <= op.index:
            continue
        compare = defs.before(op.sources[-1], op.index)
        if compare is None or not compare.opcode.startswith("setp"):
            continue
        # a register of unknown origin (a float, say) makes it more than the thread's
        if _origins_of(origins, compare.sources, unknown={""}) == {"tid"}:
            marks[op.index + 1] += 1
            marks[target] -= 1
    return _running(marks)


def _running(marks: list[int]) -> list[bool]:
    out, depth = [], 0
    for m in marks[:-1]:
        depth += m
        out.append(depth > 0)
    return out


def _multipliers(count: int, loops: list[_Loop], outer: _Loop | None) -> list[float | None]:
    """Per instruction: the product of the trip counts of the constant loops around it
    (the element loop aside); None inside a loop counted from memory."""
    logs, unknown = [0.0] * (count + 1), [0] * (count + 1)
    for lp in loops:
        if lp is outer:
            continue
        if lp.trip is None:
            unknown[lp.head] += 1
            unknown[lp.tail + 1] -= 1
        else:
            logs[lp.head] += math.log(lp.trip)
            logs[lp.tail + 1] -= math.log(lp.trip)
    out: list[float | None] = []
    total, open_unknown = 0.0, 0
    for i in range(count):
        total += logs[i]
        open_unknown += unknown[i]
        out.append(None if open_unknown else float(round(math.exp(total))))
    return out


def _chains(fmas: list[_Op]) -> int:
    """FMAs over the longest dependent path through them."""
    depth: dict[str, int] = {}
    longest = 0
    for op in fmas:
        d = 1 + max((depth.get(s, 0) for s in op.sources), default=0)
        if op.dest:
            depth[op.dest] = d
        longest = max(longest, d)
    return max(1, round(len(fmas) / longest)) if longest else 1


def _facts(entry: _Entry) -> Facts:
    origins = _origins(entry)
    defs = _Defs(entry)
    loops = _loops(entry, origins, defs)
    # the element loop: the first over the grid or the block that touches global memory
    # (a loop counted from memory inside it, or without one, leaves the arithmetic
    # unknown); one over the block's threads in shared memory alone (a histogram zeroed,
    # a tree's steps) is not it
    variable = [lp for lp in loops if lp.trip is None and lp.stride]
    strided = [lp for lp in variable if _holds(entry, lp, _GLOBAL)]
    # a loop over the block's threads in shared memory with a barrier a step: a tree or a
    # scan, once a block
    trees = sum(1 for lp in variable if lp not in strided and _holds(entry, lp, _BARRIERS))
    outer = min(strided, key=lambda lp: lp.head) if strided else None
    loop = outer.stride if outer else "per-element"
    region = range(outer.head, outer.tail + 1) if outer else range(len(entry.ops))
    guarded = _thread_guarded(entry, origins, defs)
    times = _multipliers(len(entry.ops), loops, outer)

    load = store = 0.0
    math: dict[str, float] = {}
    fma: float | None = 0.0
    fma64 = 0.0  # ... of them in double precision
    atomics = {"one": 0.0, "one_thread": 0.0, "block": 0.0, "one_block": 0.0}
    inner_fmas: list[_Op] = []
    shared_thread = barrier = False
    for op in entry.ops:
        code = op.opcode
        if code.startswith(_BARRIERS):
            barrier = True
        if code.startswith(("st.shared", "ld.shared")):
            seen = _address_origins(op, origins)
            if "shared" in seen and "tid" in seen:
                shared_thread = True
        inside = op.index in region
        if code.startswith(("atom.", "red.")) and ".shared" not in code:
            kind = _address(op, origins)
            if kind == "one" and guarded[op.index]:  # once per block, behind tid == 0
                atomics["one_block"] += 1
            elif kind == "one":  # per element inside the loop, per thread after it
                atomics["one" if inside or outer is None else "one_thread"] += 1
            elif kind == "block" and not guarded[op.index]:  # each thread, its block's
                atomics["block"] += 1
            continue
        if not inside or guarded[op.index]:
            continue
        n = times[op.index]
        if code.startswith("ld.global"):
            load += _bytes(code) * (n or 1)
        elif code.startswith("st.global"):
            store += _bytes(code) * (n or 1)
        elif code.endswith(".f32") and (name := _special_function(code)) is not None:
            math[name] = math.get(name, 0.0) + (n or 1)
        elif code.startswith(("fma.", "mad.")) and (".f32" in code or ".f64" in code
                                                    or ".f16" in code):
            if n is None:
                fma = None
            elif fma is not None:
                fma += n
                fma64 += n if ".f64" in code else 0
            inner_fmas.append(op)
    control = sum(times[lp.tail] or 0.0 for lp in loops
                  if lp is not outer and lp.trip is not None and lp.tail in region
                  and not guarded[lp.tail]) * LOOP_CONTROL
    per = outer.unroll if outer else 1
    load, store, control = load / per, store / per, control / per
    fp64 = fma64 / fma if fma else 0.0  # (before the unrolling's divide: a share)
    fma = fma / per if fma is not None else None
    return Facts(loop=loop, load_bytes=load, store_bytes=store, fma=fma, fp64=fp64,
                 control=control,
                 math=tuple(sorted((name, n / per) for name, n in math.items())),
                 chains=_chains(inner_fmas), atomics_one=atomics["one"],
                 atomics_one_thread=atomics["one_thread"], atomics_block=atomics["block"],
                 atomics_one_block=atomics["one_block"],
                 shared_per_thread=shared_thread, barrier=barrier, source="ptx",
                 unroll=max(_held(entry, lp) for lp in strided) if strided else None,
                 trees=trees, max_threads=entry.max_threads)


def _holds(entry: _Entry, loop: _Loop, opcodes: tuple[str, ...]) -> bool:
    """Whether ``loop`` holds an instruction of one of ``opcodes`` (prefixes)."""
    return any(op.opcode.startswith(opcodes) for op in entry.ops[loop.head:loop.tail + 1])


def _held(entry: _Entry, loop: _Loop) -> int:
    """The elements a pass of ``loop`` holds in flight: its unrolled elements, or one where
    its coherent loads (not ``ld.global.nc``, which nothing orders after a store) come in
    as many runs between stores as it has elements: a store waits for its element's
    loads, and the next element's loads, which the compiler could not move above it,
    wait behind the store (the source reader's ``facts._passes_wait``)."""
    if loop.unroll <= 1:
        return loop.unroll
    runs, last = 0, ""
    for op in entry.ops[loop.head:loop.tail + 1]:
        if op.opcode.startswith("ld.global") and not op.opcode.startswith("ld.global.nc"):
            runs += last != "ld"
            last = "ld"
        elif op.opcode.startswith("st.global"):
            last = "st"
    return 1 if runs >= loop.unroll else loop.unroll


def _address_origins(op: _Op, origins: dict[str, set[str]]) -> set[str]:
    """What the address an instruction reads or writes is computed from."""
    addr = _MEM.search(op.text)
    return _origins_of(origins, _REG.findall(addr[1]) if addr else [])


def _origins_of(origins: dict[str, set[str]], regs: list[str],
                unknown: set[str] | frozenset[str] = frozenset()) -> set[str]:
    """What registers are computed from, together (a special register is its own origin;
    a register of no known origin counts as ``unknown``)."""
    out: set[str] = set()
    for r in regs:
        special = _SPECIAL.get(r.split(".", 1)[0])
        out |= {special} if special else origins.get(r, unknown)
    return out


def _address(op: _Op, origins: dict[str, set[str]]) -> str:
    """An atomic's address: "one" (parameters only), "block" (with %ctaid, no %tid),
    "thread" (with %tid)."""
    seen = _address_origins(op, origins)
    if "tid" in seen:
        return "thread"
    if "ctaid" in seen:
        return "block"
    return "one"


def facts_by_entry(text: str) -> dict[str, Facts]:
    """Each ``.entry``'s facts (its mangled name as the PTX spells it)."""
    return {e.name: _facts(e) for e in _split(text)}


def entry_names(text: str) -> list[str]:
    """The ``.entry`` names, without reading their bodies (what a run asks for first)."""
    return _ENTRY.findall(text)
