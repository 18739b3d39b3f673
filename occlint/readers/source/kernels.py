"""``__global__`` function definitions: name, ``__launch_bounds__`` and the body's shape.

The body classification drives the grid advice:

* ``grid-stride``: an index advanced inside a loop by ``blockDim.x * gridDim.x`` (either
  order, any dimension, casts allowed) or by a variable initialised or assigned that
  product;
* ``per-element``: not grid-stride, and an ``if`` (or a ``?:``) compares an index computed
  from ``threadIdx`` / ``blockIdx`` with a problem's bound (a bounds check; not a loop's
  own counter, a literal or the block's shape: a tree reduction's ``if (tid < s)``): one
  element per thread;
* ``other``: anything else (not recognised: no grid advice depends on it).

The work classification drives the saving estimates (occlint.judgement.cost):

* ``memory``: no loop but the grid-stride loop, and global memory read or written through
  a pointer parameter: a few operations per element loaded, memory-bound on every GPU
  occlint knows;
* ``compute``: a loop inside the per-element work that touches no pointer parameter:
  arithmetic on values held in registers;
* None: anything else (loops over memory: reductions, stencils, tiles): not told.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import replace
from typing import Any

from occlint.model.source import Body, SourceKernel, TemplateText, Work
from occlint.readers.source import device_functions, groups, loop_macros
from occlint.readers.source.evaluate import Evaluator, Unknown, _scalar
from occlint.readers.source.facts import defines, kernel_facts, substituted, type_aliases
from occlint.readers.source.lexical import KERNEL_MARKER
from occlint.readers.source.markers import kernel_definitions
from occlint.readers.source.parse import (
    LOOPS,
    MAX_DEPTH,
    Text,
    field_of,
    in_document_order,
    operator,
    scan,
    unwrap,
)

BLOCK_DIM = re.compile(r"^(blockDim\.[xyz]|hipBlockDim_[xyz]|"
                       r"__builtin_amdgcn_workgroup_size_[xyz]\(\))$")
GRID_DIM = re.compile(r"^(gridDim\.[xyz]|hipGridDim_[xyz])$")
THREAD_INDEX = re.compile(r"\b(threadIdx|blockIdx|hipThreadIdx_[xyz]|hipBlockIdx_[xyz])\b")
# what a body reads to tell its block from the others (or hands to a function that may);
# gridDim alone does not (llm.c's global_sum_single_block_kernel asserts gridDim.x == 1)
BLOCK_INDEX = re.compile(rb"\b(blockIdx|hipBlockIdx_[xyz]|__builtin_amdgcn_workgroup_id_[xyz]|"
                         rb"this_grid|group_index|block_rank|clusterIdx|block_index)\b")
# the literal each of BLOCK_INDEX's words starts with: a file is searched for them (memchr)
# and the pattern tried where one stands, not at every byte
_BLOCK_INDEX_WORDS = (b"blockIdx", b"hipBlockIdx_", b"__builtin_amdgcn_workgroup_id_",
                      b"this_grid", b"group_index", b"block_rank", b"clusterIdx",
                      b"block_index")
_WORD_BYTE = re.compile(rb"\w")
# a block index compared with a constant picks a block's role, it does not split the data
# (``if (threadIdx.x != 0 || blockIdx.x != 0) return;``, ``blockIdx.x == 0 ? send :
# recv``: flashinfer's one- and two-block kernels): more blocks only repeat a role. Read
# where a BLOCK_INDEX word stands: the comparison after it (or before it, reversed), between
# a delimiter and one (not an operand of arithmetic)
_ROLE_AFTER = re.compile(rb"(?:\.[xyz])?\s*[!=]=\s*\d+[uU]?\s*[)&|?:,;\]]")
_ROLE_BEFORE = re.compile(rb"[(!&|?:,;={}\[]\s*\d+[uU]?\s*[!=]=\s*\Z")
_DELIMITED = re.compile(rb"[(!&|?:,;={}\[]\s*\Z")
_ENDS = re.compile(rb"(?:\.[xyz])?\s*[)&|?:,;\]]")
# a body asking a helper or a macro: a call, or a name in capitals (a macro's)
_ASKS = re.compile(rb"\b[A-Za-z_]\w*\s*\(|\b[A-Z][A-Z0-9_]{2,}\b")
# what a body reads to tell its thread from the block's others (a lane, a group's rank, a
# shuffle between lanes); those of them a role's comparison with a constant may read
_THREAD_INDEX = re.compile(rb"\b(?:threadIdx|hipThreadIdx_[xyz]|__builtin_amdgcn_workitem_id_|"
                           rb"__lane_id|laneid|thread_rank|thread_index|this_thread_block|"
                           rb"tiled_partition|coalesced_threads|__shfl|%tid|%laneid)")
_THREAD_ROLE_WORDS = (b"threadIdx", b"hipThreadIdx_")
# ... or a call or a macro that may read one for it (a statement's keyword, a barrier, an
# atomic, a math function, printf and assert read none)
_CALLS = re.compile(rb"\b(?!(?:if|for|while|switch|return|sizeof|static_cast|"
                    rb"reinterpret_cast|const_cast|decltype|alignof|__syncthreads|"
                    rb"__threadfence\w*|atomic\w+|printf|assert|f?abs|f?min|f?max|sqrt|rsqrt|"
                    rb"exp|exp2|log|log2|pow|sin|cos|tanh|floor|ceil|round)f?\s*\()"
                    rb"[A-Za-z_]\w*\s*\(|\b[A-Z][A-Z0-9_]{2,}\b|\basm\b")
# a kernel that talks to other GPUs from its own code: NCCL's device API (a ncclDevComm, an
# LSA barrier, a GIN context), NVSHMEM's or rocSHMEM's calls (one group each); its grid is
# the communicator's (one CTA per barrier or channel), not its data's
_COMMUNICATES = re.compile(rb"\b(?:(ncclDevComm|ncclLsa\w+|ncclGin\w*|ncclTeam\w*)|"
                           rb"(nvshmemx?_\w+)|(rocshmemx?_\w+))\b")
_COMMUNICATION_LIBRARIES = ("NCCL", "NVSHMEM", "rocSHMEM")
COMPARISON = re.compile(r"(<|>)")
_SUBSCRIPT = re.compile(r"\b(\w+)\s*\[")  # a whole word followed by `[`


def base_name(node: Any, text: Text) -> str:
    """``ns::k<T, 4>`` -> ``k``."""
    for _ in range(MAX_DEPTH):
        if node is None:
            return ""
        if node.type in ("template_function", "qualified_identifier", "destructor_name"):
            node = node.child_by_field_name("name")
        else:
            return text.of(node)
    return ""


def _product_terms(node: Any, text: Text) -> list[str] | None:
    """The factors of a product (``a * (b * c)``) as text; None if too deep."""
    out: list[str] = []
    stack = [unwrap(node)]
    while stack:
        n = stack.pop()
        if n is None:
            return None
        if n.type == "binary_expression" and operator(n) == "*":
            stack.append(unwrap(n.child_by_field_name("left")))
            stack.append(unwrap(n.child_by_field_name("right")))
            if len(stack) > 16:
                return None
            continue
        if n.type == "call_expression":  # static_cast<size_t>(blockDim.x)
            args = n.child_by_field_name("arguments")
            if args is not None and args.named_child_count == 1:
                stack.append(unwrap(args.named_children[0]))
                continue
        out.append(text.of(n, 80).replace(" ", ""))
    return out


def is_stride(node: Any, text: Text) -> bool:
    if node is None or text.data.find(b"ridDim", node.start_byte, node.end_byte) < 0:
        return False  # no gridDim / hipGridDim_ term: not read further
    terms = _product_terms(node, text)
    if not terms:
        return False
    return any(BLOCK_DIM.match(t) for t in terms) and any(GRID_DIM.match(t) for t in terms)


def _scaled_stride(node: Any, text: Text, strides: set[str]) -> bool:
    """``4 * stride``: a product naming a variable that holds the grid's threads (a loop
    doing several elements a pass, each a grid's width apart)."""
    if not strides or node.type != "binary_expression" or operator(node) != "*":
        return False
    return any(t in strides for t in _product_terms(node, text) or ())


def _has_index(node: Any, text: Text) -> bool:
    """Whether the expression's text (its first 400 characters) names a thread or block
    index; the bytes are searched for "Idx" first, which every such name holds."""
    if text.data.find(b"Idx", node.start_byte, node.end_byte) < 0:
        return False
    return THREAD_INDEX.search(text.of(node, 400)) is not None


def _in_loop(node: Any, stop: Any) -> bool:
    parent = node.parent
    while parent is not None and parent is not stop and parent.id != stop.id:
        if parent.type in LOOPS:
            return True
        parent = parent.parent
    return False


def body_matches(body: Any) -> dict[str, list[Any]]:
    """What :func:`classify` and :func:`work` read of a kernel's body, in one walk: its
    declarations, assignments, conditions and loops (occlint.readers.source.parse.scan)."""
    return scan(body)


def classify(body: Any, text: Text, found: dict[str, list[Any]] | None = None) -> Body:
    if found is None:
        found = body_matches(body)
    strides: set[str] = set()
    indexes: set[str] = set()
    pairs = [(name, value) for n in found.get("init_declarator", [])
             if (name := field_of(n, "declarator", "identifier")) is not None
             and (value := field_of(n, "value")) is not None]
    assigns = found.get("assignment_expression", [])
    conds = [c for kind in ("if_statement", "conditional_expression")
             for n in found.get(kind, []) if (c := field_of(n, "condition")) is not None]
    for name, value in pairs:
        if is_stride(value, text):
            strides.add(text.name(name))
        if _has_index(value, text):
            indexes.add(text.name(name))
    for a in assigns:
        left, right = a.child_by_field_name("left"), a.child_by_field_name("right")
        op = operator(a)
        if op == "=" and left is not None and left.type == "identifier" and right is not None:
            if is_stride(right, text):
                strides.add(text.name(left))
            if _has_index(right, text):
                indexes.add(text.name(left))
    for a in assigns:
        op = operator(a)
        left, right = a.child_by_field_name("left"), a.child_by_field_name("right")
        if right is None or left is None:
            continue
        step = None
        if op == "+=":
            step = right
        elif op == "=" and unwrap(right) is not None and unwrap(right).type == \
                "binary_expression":
            r = unwrap(right)
            if operator(r) == "+" and \
                    text.of(r.child_by_field_name("left")) == text.of(left):
                step = r.child_by_field_name("right")
        if step is None or not _in_loop(a, body):
            continue
        s = unwrap(step)
        if s is not None and (is_stride(s, text) or (s.type == "identifier"
                                                    and text.name(s) in strides)
                              or _scaled_stride(s, text, strides)):
            return "grid-stride"
    counters: set[str] | None = None
    for cond in conds:
        if text.data.find(b"<", cond.start_byte, cond.end_byte) < 0 and \
                text.data.find(b">", cond.start_byte, cond.end_byte) < 0:
            continue  # no comparison (COMPARISON)
        words = text.of(cond, 400)
        if not COMPARISON.search(words):
            continue
        if counters is None:  # a loop's counters, and names holding the block's shape
            counters = set(_COUNTER.findall(text.of(body, 1 << 16))) | {
                text.name(name) for name, value in pairs
                if _BLOCK_SHAPE.match(text.of(value, 200))}
        if _bounds_check(words, indexes, counters):
            return "per-element"
    return "other"


# a variable a ``for`` loop declares (a reduction's ``s``, an unrolled step's ``k``)
_COUNTER = re.compile(r"\bfor\s*\(\s*(?:[A-Za-z_][\w:]*\s+)+(\w+)\s*=")
_COMPARED = re.compile(r"^(.+?)(<=|>=|<|>)(.+)$", re.S)
# what a bound made of the block's own shape is: a reduction step's `tid < 32`,
# `tid < blockDim.x / 2` (a subset of the block's threads, not a problem size)
_BLOCK_SHAPE = re.compile(r"^[\s\d()+\-*/%<>u]*$|^[\s\d()+\-*/%<>uUlL]*"
                          r"(?:(?:blockDim|hipBlockDim_)[.xyz_]*|warpSize)[\s\w().+\-*/%<>]*$")


_LOADED = re.compile(r"[A-Za-z_]\w*\s*\[[^\[\]]*\]")  # an element: ``x[j]``


def _bounds_check(words: str, indexes: set[str], others: set[str]) -> bool:
    """Whether a condition compares a thread's index with a problem's bound: ``i < n``,
    ``row < rows && col < cols``; not with a literal, the block's shape (``tid < 32``,
    ``tid < blockDim.x / 2``) or a name in ``others`` (a loop's own counter: a tree
    reduction's ``if (tid < s)``; a name holding the block's shape: ``lane < num_warps``):
    those pick some of the block's threads, whatever the problem's size."""
    for part in re.split(r"&&|\|\||\band\b|\bor\b", words.strip().strip("()")):
        m = _COMPARED.match(part.replace("<<", " ").replace(">>", " "))
        if not m:
            continue
        for index, other in ((m[1], m[3]), (m[3], m[1])):
            # an element loaded at the index (``x[j] > best``) is a value, not the index
            index = _LOADED.sub(" ", index)
            if not (THREAD_INDEX.search(index) or any(
                    re.search(rf"\b{re.escape(i)}\b", index) for i in indexes)):
                continue
            bound = other.strip().strip("()= ")
            if not bound or _BLOCK_SHAPE.match(bound) or bound in others:
                continue
            return True
    return False


def _block_indexed(body: Any, text: Text, helpers: frozenset[bytes] | None) -> bool | None:
    """Whether the body reads which block it is: False where it reads no block index, or
    only compares one with a constant (:func:`_roles_only`), and calls none of the file's
    functions or macros that read one (``helpers``; None: one is read where no definition
    holds it, so any call or macro may) (more blocks do not split its work: an empty
    kernel, a ``<<<1, 1>>>`` test writing ``*out``, a 4 x 4 fill by its threads, llm.c's
    single-block sum calling only blockReduce, flashinfer's two-block scans); None where it
    calls one, and where the body is empty (a stand-in: nothing to tell)."""
    first = BLOCK_INDEX.search(text.data, body.start_byte, body.end_byte)
    if first is not None and not _roles_only(text.data, first.start(), body.end_byte):
        return True
    if not body.named_child_count:
        return None
    if helpers is None:
        if _ASKS.search(text.data, body.start_byte, body.end_byte):
            return None
    elif helpers and any(re.search(rb"\b" + re.escape(h) + rb"\b",
                                   text.data[body.start_byte:body.end_byte]) for h in helpers):
        return None
    return False


def _thread_indexed(body: Any, text: Text) -> bool | None:
    """Whether the body splits its work by thread: True where it reads a thread index other
    than in a comparison with a constant (``threadIdx.x == 0`` picks a thread's role, as
    :func:`_roles_only` reads a block's); False where it reads none that way and calls no
    function or macro that might (raft's ``naiveSignFlipKernel<<<cols, 1>>>``, a block per
    column in one thread: more threads would each repeat the block's work); None where it
    calls one, or the body is empty."""
    data, end = text.data, body.end_byte
    first = _THREAD_INDEX.search(data, body.start_byte, end)
    if first is not None and not _roles_only(data, first.start(), end, _THREAD_INDEX,
                                             _THREAD_ROLE_WORDS):
        return True
    if not body.named_child_count or _CALLS.search(data, body.start_byte, end):
        return None
    return False


def _overloaded(data: bytes, name: str, node: Any) -> bool:
    """Whether the file defines another ``__global__`` of this name than ``node`` (rocPRIM's
    empty ``sort_pairs_kernel`` stub for configurations that cannot build, beside the real
    ones, which a launch may name as well): found in the text, since the parse may have
    lost the others."""
    for m in re.finditer(rb"\b" + re.escape(name.encode()) + rb"\s*\(", data):
        if node.start_byte <= m.start() < node.end_byte:
            continue
        head = data[max(0, m.start() - 512):m.start()]
        head = head[max(head.rfind(b";"), head.rfind(b"}")) + 1:]
        if KERNEL_MARKER.search(head):
            return True
    return False


def _communicates(node: Any, text: Text) -> str | None:
    """The library through which the kernel (its parameters and body) talks to other GPUs:
    NCCL's device API, NVSHMEM, rocSHMEM (None: none of them)."""
    m = _COMMUNICATES.search(text.data, node.start_byte, node.end_byte)
    return None if m is None else _COMMUNICATION_LIBRARIES[m.lastindex - 1]  # type: ignore[operator]


def _roles_only(data: bytes, start: int, end: int, pattern: re.Pattern[bytes] = BLOCK_INDEX,
                words: tuple[bytes, ...] = (b"blockIdx", b"hipBlockIdx_")) -> bool:
    """Whether every block index (``pattern``'s match) read in ``data[start:end]`` (the first
    at ``start``) compares it with a constant (``blockIdx.x == 0``, ``0 != blockIdx.y``)."""
    for m in pattern.finditer(data, start, end):
        if not m[0].startswith(words):
            return False  # a grid group's rank, a cluster's index: not a role's test
        before = data[max(0, m.start() - 24):m.start()]
        if not ((_ROLE_AFTER.match(data, m.end()) and _DELIMITED.search(before))
                or (_ROLE_BEFORE.search(before) and _ENDS.match(data, m.end()))):
            return False
    return True


_DEFINITIONS = ("function_definition", "preproc_function_def", "preproc_def")


def _block_index_helpers(root: Any, code: bytes, text: Text, bodies: list[tuple[int, int]]
                         ) -> frozenset[bytes] | None:
    """The names of the file's functions and macros that read a block index outside its
    kernels' bodies (``code``: the file with its comments and strings blanked); None where
    one is read outside any definition. (The tree was parsed with the bodies that hold no
    kernel or launch blanked: a helper's definition still spans its body.)"""
    names: set[bytes] = set()
    spans = sorted(bodies)
    starts = [a for a, _ in spans]
    found = (0, 0)  # the last definition found: its other reads name it again
    for m in _block_index_reads(code):
        k = bisect.bisect_right(starts, m.start()) - 1
        if (k >= 0 and m.start() < spans[k][1]) or found[0] <= m.start() < found[1]:
            continue  # inside a kernel's body (bodies do not overlap), or named already
        node = root.descendant_for_byte_range(m.start(), m.end())
        while node is not None and node.type not in _DEFINITIONS:
            node = node.parent
        name = _definition_name(node) if node is not None else None
        if name is None:
            return None
        names.add(text.data[name.start_byte:name.end_byte].rsplit(b"::", 1)[-1])
        found = (node.start_byte, node.end_byte)
    return frozenset(names)


def _block_index_reads(code: bytes) -> list[re.Match[bytes]]:
    """BLOCK_INDEX's matches in ``code``, in order (what ``finditer`` gives)."""
    out = []
    for word in _BLOCK_INDEX_WORDS:
        at = code.find(word)
        while at >= 0:
            m = BLOCK_INDEX.match(code, at)
            if m is not None and (at == 0 or not _WORD_BYTE.match(code, at - 1)):
                out.append(m)
            at = code.find(word, at + len(word))
    return sorted(out, key=lambda m: m.start())


def _definition_name(node: Any) -> Any:
    """A function's or a macro's name node (None: not found)."""
    if node.type != "function_definition":
        return node.child_by_field_name("name")
    d = node.child_by_field_name("declarator")
    for _ in range(8):
        if d is None or d.type in ("identifier", "field_identifier", "qualified_identifier",
                                   "operator_name", "destructor_name"):
            return d
        if d.type == "template_function":
            return d.child_by_field_name("name")
        d = d.child_by_field_name("declarator")
    return None


def _pointer_parameters(declarator: Any, text: Text) -> list[str]:
    params = declarator.child_by_field_name("parameters")
    out = []
    for p in params.named_children if params is not None else ():
        d = p.child_by_field_name("declarator")
        if d is None or d.type != "pointer_declarator":
            continue
        while d is not None and d.type in ("pointer_declarator", "reference_declarator"):
            d = d.child_by_field_name("declarator")
        if d is not None and d.type == "identifier":
            out.append(text.of(d))
    return out


def _loops(body: Any, found: dict[str, list[Any]]) -> list[Any]:
    """The loops inside ``body`` (found by the scan: no Python walk of the body's tree)."""
    return in_document_order([n for kind in LOOPS for n in found.get(kind, [])
                              if n.id != body.id])


def work(body: Any, kind: Body, pointers: list[str], text: Text,
         found: dict[str, list[Any]] | None = None) -> Work:
    """``memory``, ``compute`` or None (see the module's docstring)."""
    if not pointers:
        return None
    loops = _loops(body, body_matches(body) if found is None else found)
    if kind == "grid-stride":  # the outermost loop stepping by the grid is not extra work
        outer = [n for n in loops if not _in_loop(n, body)]
        loops = [n for n in loops if n not in outer]
    if not loops:
        return "memory"
    names = set(pointers)  # a subscript of a pointer parameter: `p[i]`, `p [i]`
    if any(m[1] in names for n in loops for m in _SUBSCRIPT.finditer(text.of(n, 1 << 16))):
        return None
    return "compute"


def _params(declarator: Any, text: Text, aliases: dict[str, str]) -> str | None:
    """A kernel's parameter list as text, the file's type aliases read as their types."""
    params = declarator.child_by_field_name("parameters")
    if params is None:
        return None
    return substituted(text.data[params.start_byte:params.end_byte].decode(
        "utf-8", "replace"), aliases)


def kernels(root: Any, text: Text, evaluator: Evaluator, file: str = "",
            found: list[Any] | None = None) -> list[SourceKernel]:
    """The ``__global__`` definitions (``found``: the query's captures, when the caller ran
    it together with other queries)."""
    out: list[SourceKernel] = []
    if found is None:
        found = kernel_definitions(root, text.data)
    consts = defines(text.data) if found else {}
    aliases = type_aliases(text.data) if found else {}
    # a file naming NCCL or a SHMEM library: its kernels may talk to other GPUs
    talks = bool(found) and (b"nccl" in text.data or b"shmem" in text.data)
    # a block index read outside the kernels' bodies: a helper or macro that may hand one on
    bodies = [(b.start_byte, b.end_byte) for n in found
              if (b := n.child_by_field_name("body")) is not None]
    helpers = _block_index_helpers(root, evaluator.layout.code, text, bodies) if found \
        else frozenset()
    # grid-stride loops written as a macro (CUDA_KERNEL_LOOP): read as the loops they are
    loops = loop_macros.loop_definitions(evaluator.layout.defines) \
        if found and b"LOOP" in text.data else {}
    # the file's __device__ functions: a kernel's calls to them read as their text
    device = device_functions.definitions(text.data.decode("utf-8", "replace")) \
        if found and b"__device__" in text.data else {}
    for node in found:
        if node.has_error:
            continue  # nothing from broken regions
        declarator = node.child_by_field_name("declarator")
        for _ in range(8):  # pointer / reference declarators around the function declarator
            if declarator is None or declarator.type == "function_declarator":
                break
            declarator = declarator.child_by_field_name("declarator")
        if declarator is None:
            continue
        name_node = declarator.child_by_field_name("declarator")
        name = base_name(name_node, text)
        if not name:
            continue
        bounds = None
        for child in node.named_children:
            if child.type == "launch_bounds":
                values = []
                for arg in child.named_children[:2]:
                    v = _scalar(evaluator.evaluate(arg))
                    values.append(v if isinstance(v, int) else None)
                while len(values) < 2:
                    values.append(None)
                bounds = (values[0], values[1])
        body = node.child_by_field_name("body")
        in_body = body_matches(body) if body is not None else {}
        kind: Body = classify(body, text, in_body) if body is not None else "other"
        template = node.parent is not None and node.parent.type == "template_declaration"
        what = work(body, kind, _pointer_parameters(declarator, text), text, in_body) \
            if body is not None else None
        facts = instantiable = None
        if body is not None:
            source = text.data[body.start_byte:body.end_byte].decode("utf-8", "replace")
            expanded = loop_macros.expand(source, loops) if loops else None
            # cooperative groups' indices, read as the registers they stand for
            expanded = groups.expand(expanded or source) or expanded
            expanded = device_functions.expand(expanded or source, device) or expanded
            if expanded is not None and kind == "other" and \
                    loop_macros.steps_by_the_grid(expanded):
                kind = "grid-stride"
            params = _params(declarator, text, aliases)
            if params is not None:
                source = substituted(expanded or source, aliases)
                facts = kernel_facts(params, source, kind, consts)
                if bounds is not None and bounds[0]:
                    facts = replace(facts, max_threads=bounds[0])
                if template:
                    instantiable = _template_text(node.parent, params, source, kind, text,
                                                  consts, bounds)
        indexed = _block_indexed(body, text, helpers) if body is not None else None
        threads = _thread_indexed(body, text) if body is not None else None
        out.append(SourceKernel(name, text.span(name_node), kind, bounds, template, file,
                                what, facts, indexed, instantiable, threads,
                                _communicates(node, text) if talks else None,
                                body is not None and not body.named_child_count
                                and not _overloaded(text.data, name, node)))
    return out


def _template_text(declaration: Any, params: str, body: str, kind: Body, text: Text,
                   consts: dict[str, int], bounds: tuple[int | None, int | None] | None
                   ) -> TemplateText | None:
    """What an instantiation's facts are read from (None: a parameter pack or a template
    template parameter, whose arguments a name does not spell one for one)."""
    names = _template_parameters(declaration, text)
    if not names:
        return None
    return TemplateText(names, params, body, kind, tuple(sorted(consts.items())),
                        bounds[0] if bounds else None)


def _template_parameters(declaration: Any, text: Text) -> tuple[str, ...] | None:
    """The names of a template's parameters, in order."""
    listed = declaration.child_by_field_name("parameters")
    if listed is None:
        return None
    names = []
    for p in listed.named_children:
        if p.type in ("type_parameter_declaration", "optional_type_parameter_declaration"):
            name = next((c for c in p.named_children if c.type == "type_identifier"), None)
        elif p.type in ("parameter_declaration", "optional_parameter_declaration"):
            name = p.child_by_field_name("declarator")
        else:  # a pack, a template template parameter
            return None
        if name is None or name.type not in ("type_identifier", "identifier"):
            return None
        names.append(text.of(name))
    return tuple(names)


__all__ = ["Unknown", "base_name", "classify", "is_stride", "kernels"]
