"""Kernel launches written in Python: CuPy's ``RawKernel`` and ``RawModule`` kernels called
with their grid and block (``kernel((grid,), (block,), args, shared_mem=...)``).

Read with Python's own parser (``ast``; nothing is imported or run). A kernel is a name
bound once in the script to ``RawKernel(code, "name")`` or ``module.get_function("name")``
(``cp.`` / ``cupy.`` or imported); a call of that name with a grid and a block is a launch
site. Each of the grid's and block's dimensions is evaluated where the script determines
it: literals, names bound once to a literal (in the calling function, else the module),
arithmetic of those; ``(n + B - 1) // B`` and ``-(-n // B)`` are "derived from the problem
size at block B", as the C reader reads ``(n + B - 1) / B``. Anything else is unknown; a
launch whose grid and block the script leaves open is not a site (no rule could judge it:
most of a library's launches pass both in). :func:`read` gives every kernel and launch a
script writes in Python (CuPy's, Numba's, the driver APIs'), its syntax tree parsed once.
"""

from __future__ import annotations

import ast
import operator
import re
import warnings
from collections.abc import Callable
from functools import cached_property
from typing import Any

from occlint.model.source import Body, LaunchSite, Param, SourceKernel, Span
from occlint.readers.source.launches import DRIVER_APIS

# what a script must hold to have such launches (the parse is skipped without it)
MARKERS = (b"RawKernel", b"get_function")
# a name bound to a kernel, read back from the marker to its line's start (the parse is
# skipped where none is called after it)
_BINDING = re.compile(rb"(?:^|[^\w.])(\w+)\s*=\s*(?:[\w.]+\.)?\Z", re.M)
# ... and called with a tuple or a number first (CuPy's ``kernel((grid,), (block,), args)``):
# a script only calling it with its own parameters is not parsed (CuPy's sdist: 7 of its
# 707 scripts parsed, 0.06 CPU s)
_CALL = re.compile(rb"\s*\(\s*[(\d]")
_OPS: dict[type, Callable[[int, int], int]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv, ast.LShift: operator.lshift,
}


class _Script:
    """A script's bytes, and what the readers of this module ask of them once: its lines,
    its syntax tree and its statements (None: it does not parse, or nests blocks past the
    recursion limit), each made when first asked."""

    def __init__(self, data: bytes):
        self.data = data

    @cached_property
    def lines(self) -> list[bytes]:
        return self.data.splitlines()

    @cached_property
    def tree(self) -> ast.Module | None:
        try:
            # Python's warnings about the script (``1if x``: an invalid decimal literal) are
            # the script's, not occlint's to print
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return ast.parse(self.data)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None

    @cached_property
    def statements(self) -> list[tuple[ast.stmt, ast.AST | None]] | None:
        if self.tree is None:
            return None
        try:
            return list(_statements(self.tree.body, None))
        except RecursionError:  # blocks nested past what a script holds: not read
            return None


def read(data: bytes) -> tuple[list[SourceKernel], list[LaunchSite]]:
    """The kernels a script defines in Python (Numba's) and the launch sites it writes in
    Python (CuPy's, Numba's, the driver APIs'), in file order."""
    script = _Script(data)
    kernels, numba_sites = _numba(script)
    sites = [*_cupy(script), *_driver(script), *numba_sites]
    sites.sort(key=lambda s: (s.span.line, s.span.column))
    return kernels, sites


def _judgeable(site: LaunchSite) -> bool:
    """Whether the script fixes the launch's block or grid (else no rule could judge it,
    and its kernel's string is not worth a parse)."""
    return site.block.known or site.grid.known or bool(site.grid.ceil_div_block)


def _cupy(script: _Script) -> list[LaunchSite]:
    """The launch sites of the script's CuPy kernels. Only a script binding a name to a
    kernel and calling that name after with a tuple or a number first is parsed
    (:data:`_BINDING`, :data:`_CALL`): most of a Python project's files are not."""
    data = script.data
    if not any(m in data for m in MARKERS):
        return []
    bindings = _bindings(data)
    if not any(_called(data, name, end) for name, end in bindings) or \
            script.statements is None:
        return []
    wanted = {name.decode() for name, _ in bindings}
    bound: dict[str, list[str | None]] = {}
    calls: list[tuple[ast.Call, ast.AST | None]] = []  # each with its function
    for stmt, function in script.statements:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], ast.Name):
            bound.setdefault(stmt.targets[0].id, []).append(_kernel_name(stmt.value))
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and \
                isinstance(stmt.value.func, ast.Name) and \
                stmt.value.func.id in wanted and len(stmt.value.args) >= 2:
            calls.append((stmt.value, function))  # a launch is a statement of its own
    kernels = {name: found[0] for name, found in bound.items()
               if len(found) == 1 and found[0] is not None}
    calls = [(c, f) for c, f in calls if c.func.id in kernels]  # type: ignore[attr-defined]
    if not calls:
        return []
    sites = (_site(call, kernels[call.func.id], values, script.lines)  # type: ignore[attr-defined]
             for call, values in _scoped(script.tree, calls))  # type: ignore[arg-type]
    return [site for site in sites if _judgeable(site)]


def _bindings(data: bytes) -> list[tuple[bytes, int]]:
    """(name, where its binding ends) for each ``name = ...RawKernel(`` or
    ``name = ...get_function(`` of the script, found from the markers (``bytes.find``)."""
    out = []
    for marker in MARKERS:
        at = data.find(marker)
        while at >= 0:
            line = data.rfind(b"\n", 0, at) + 1
            m = _BINDING.search(data, line, at)
            if m is not None and data[at + len(marker):at + len(marker) + 8].lstrip()[:1] \
                    == b"(":
                out.append((m[1], at + len(marker)))
            at = data.find(marker, at + len(marker))
    return out


def _called(data: bytes, name: bytes, start: int) -> bool:
    """Whether ``name`` is called after ``start`` with a tuple or a number first
    (``name((``, ``name(1,``), found with ``bytes.find``."""
    at = data.find(name, start)
    while at >= 0:
        before = data[at - 1:at]
        m = _CALL.match(data, at + len(name))
        if m is not None and not (before.isalnum() or before in (b"_", b".")):
            return True
        at = data.find(name, at + len(name))
    return False


def _statements(body: list[ast.stmt], function: ast.AST | None):
    """Each statement of ``body`` and of the blocks nested in it, with the function it is
    in (expressions are not entered: a launch and a binding are statements)."""
    for stmt in body:
        yield stmt, function
        inner = stmt if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
        for name in ("body", "orelse", "finalbody"):
            block = getattr(stmt, name, None)
            if isinstance(block, list):
                yield from _statements(block, inner)
        for handler in getattr(stmt, "handlers", ()):
            yield from _statements(handler.body, inner)
        for case in getattr(stmt, "cases", ()):
            yield from _statements(case.body, inner)


def _kernel_name(value: ast.expr) -> str | None:
    """``RawKernel(code, "name")`` / ``x.get_function("name")`` -> "name"."""
    if not isinstance(value, ast.Call):
        return None
    called = _called_name(value)
    if called == "RawKernel":
        arg = value.args[1] if len(value.args) > 1 else next(
            (k.value for k in value.keywords if k.arg == "name"), None)
    elif called == "get_function" and value.args:
        arg = value.args[0]
    else:
        return None
    return arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else None


def _bound_once(body: list[ast.stmt]) -> dict[str, ast.expr]:
    """Names assigned exactly once among ``body``'s statements (not in nested functions or
    classes) -> the expression; a name assigned more than once, augmented or a loop's
    target is not bound once."""
    seen: dict[str, ast.expr | None] = {}

    def visit(stmts: list[ast.stmt]) -> None:
        for stmt in stmts:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                seen[stmt.name] = None
                continue
            for node in ast.walk(stmt):
                if isinstance(node, ast.Assign):
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            seen[target.id] = node.value if target.id not in seen else None
                elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr,
                                       ast.comprehension)):
                    target = getattr(node, "target", None)
                    for name in ast.walk(target) if target is not None else ():
                        if isinstance(name, ast.Name):
                            if isinstance(node, ast.AnnAssign) and node.value is not None \
                                    and name.id not in seen:
                                seen[name.id] = node.value
                            else:
                                seen[name.id] = None

    visit(body)
    return {k: v for k, v in seen.items() if v is not None}


def _scoped(tree: ast.Module, calls: list[tuple[ast.Call, ast.AST | None]]):
    """Each call with the names its arguments may use: those its function binds once, over
    the module's."""
    module_values = _bound_once(tree.body)
    scopes: dict[int, dict[str, ast.expr]] = {}
    for call, function in calls:
        yield call, module_values if function is None else scopes.setdefault(
            id(function), _local_values(function, module_values))


def _local_values(function: ast.AST, module_values: dict[str, ast.expr]
                  ) -> dict[str, ast.expr]:
    """The names a function binds once, over the module's (its parameters unknown)."""
    args = function.args  # type: ignore[attr-defined]
    params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    values = {k: v for k, v in module_values.items() if k not in params}
    values.update(_bound_once(function.body))  # type: ignore[attr-defined]
    return values


def _site(call: ast.Call, kernel: str, values: dict[str, ast.expr], lines: list[bytes]
          ) -> LaunchSite:
    grid, block = call.args[0], call.args[1]
    shared = next((k.value for k in call.keywords if k.arg == "shared_mem"), None)
    return LaunchSite(kernel, kernel, "cupy", _span(call, lines),
                      _param(grid, values, lines), _param(block, values, lines),
                      _param(shared, values, lines) if shared is not None else None)


def _param(node: ast.expr, values: dict[str, ast.expr], lines: list[bytes]) -> Param:
    """A grid, block or shared size: a tuple of up to three dimensions or one number."""
    items = list(node.elts) if isinstance(node, ast.Tuple) else [node]
    dims: list[int | None] = []
    ceil: int | None = None
    reason: str | None = None
    for i, item in enumerate(items[:3]):
        value, why = _evaluate(item, values, 0)
        if isinstance(value, tuple):  # (n + B - 1) // B
            dims.append(None)
            if i == 0 and all(_evaluate(x, values, 0)[0] == 1 for x in items[1:]):
                ceil = value[1]
        else:
            dims.append(value)
        reason = reason or why
    while len(dims) < 3:
        dims.append(1)
    text = _segment(node, lines)
    return Param(text, _span(node, lines), (dims[0], dims[1], dims[2]), ceil,
                 None if ceil is not None or all(d is not None for d in dims) else reason)


def _evaluate(node: ast.expr, values: dict[str, ast.expr], depth: int
              ) -> tuple[Any, str | None]:
    """An int, ``("ceil", B)`` for a ceiling division by B of an unknown size, or None with
    the reason it is not known."""
    if depth > 16:
        return None, "too deep"
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and \
            not isinstance(node.value, bool):
        return node.value, None
    if isinstance(node, ast.Name):
        bound = values.get(node.id)
        if bound is None:
            return None, f"'{node.id}' is not bound once in the script"
        return _evaluate(bound, {k: v for k, v in values.items() if k != node.id}, depth + 1)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
            node.func.id == "int" and len(node.args) == 1:
        return _evaluate(node.args[0], values, depth + 1)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = node.operand  # -(-n // B): a ceiling division
        if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.FloorDiv) and \
                isinstance(inner.left, ast.UnaryOp) and isinstance(inner.left.op, ast.USub):
            b, _ = _evaluate(inner.right, values, depth + 1)
            n, _ = _evaluate(inner.left.operand, values, depth + 1)
            if isinstance(b, int) and b > 0:
                return (-(-n // b), None) if isinstance(n, int) else (("ceil", b), None)
        v, why = _evaluate(inner, values, depth + 1)
        return (-v, None) if isinstance(v, int) else (None, why)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, why = _evaluate(node.left, values, depth + 1)
        right, why2 = _evaluate(node.right, values, depth + 1)
        if isinstance(node.op, ast.FloorDiv) and isinstance(right, int) and right > 0 \
                and not isinstance(left, int) and _adds(node.left, right - 1, values):
            return ("ceil", right), None  # (n + B - 1) // B
        if isinstance(left, int) and isinstance(right, int):
            if isinstance(node.op, ast.FloorDiv) and right == 0:
                return None, "a division by zero"
            if isinstance(node.op, ast.LShift) and not 0 <= right < 64:
                return None, "a shift past 64 bits"
            value = _OPS[type(node.op)](left, right)
            return (value, None) if abs(value) < 1 << 63 else (None, "past 64 bits")
        return None, why or why2
    return None, f"'{ast.unparse(node)[:40]}' is not a number the script fixes"


def _adds(node: ast.expr, k: int, values: dict[str, ast.expr]) -> bool:
    """Whether ``node`` is ``n + k`` (or ``n + B - 1`` with B - 1 == k) for some unknown n."""
    if not isinstance(node, ast.BinOp):
        return False
    if isinstance(node.op, ast.Add):
        right, _ = _evaluate(node.right, values, 1)
        return right == k
    if isinstance(node.op, ast.Sub) and isinstance(node.left, ast.BinOp) and \
            isinstance(node.left.op, ast.Add):
        b, _ = _evaluate(node.left.right, values, 1)
        one, _ = _evaluate(node.right, values, 1)
        return isinstance(b, int) and isinstance(one, int) and b - one == k
    return False


def _segment(node: ast.AST, lines: list[bytes]) -> str:
    """The node's text (ast's offsets are UTF-8 bytes of its lines)."""
    first, last = node.lineno, node.end_lineno or node.lineno  # type: ignore[attr-defined]
    if not 0 < first <= last <= len(lines):
        return ""
    if first == last:
        text = lines[first - 1][node.col_offset:node.end_col_offset]  # type: ignore[attr-defined]
    else:
        text = b"\n".join([lines[first - 1][node.col_offset:],  # type: ignore[attr-defined]
                           *lines[first:last - 1],
                           lines[last - 1][:node.end_col_offset]])  # type: ignore[attr-defined]
    return text.decode("utf-8", "replace")


def _span(node: ast.AST, lines: list[bytes]) -> Span:
    """The node's place, columns in characters (ast's are UTF-8 bytes)."""
    def column(line: int, offset: int) -> int:
        text = lines[line - 1] if 0 < line <= len(lines) else b""
        return len(text[:offset].decode("utf-8", "replace")) + 1

    end_line = node.end_lineno or node.lineno  # type: ignore[attr-defined]
    return Span(node.lineno, column(node.lineno, node.col_offset),  # type: ignore[attr-defined]
                end_line, column(end_line, node.end_col_offset or 0))  # type: ignore[attr-defined]


# -- Numba ---------------------------------------------------------------------------------
# a script defining Numba CUDA kernels (``@cuda.jit``) and launching one
# (``kernel[grid, block](args)``): the parse is skipped without both
NUMBA_MARKER = b"cuda.jit"
# Python's own functions a kernel may call (they read no index)
_BUILTINS = frozenset(("range", "len", "min", "max", "abs", "int", "float", "bool", "round"))
_SUBSCRIPT_CALL = re.compile(rb"\w\[[^\[\]\n]+\]\s*\(")


def _numba(script: _Script) -> tuple[list[SourceKernel], list[LaunchSite]]:
    """The script's Numba kernels (functions decorated ``@cuda.jit``: their body's shape
    read from ``cuda.grid`` / ``cuda.gridsize`` and the thread and block indices they read;
    what a thread loads is Python's, not known) and their launches ``kernel[grid,
    block](args)`` (grid and block as CuPy's are evaluated; a stream and a shared size
    after them), in file order."""
    data = script.data
    if NUMBA_MARKER not in data or not _SUBSCRIPT_CALL.search(data) or \
            script.statements is None:
        return [], []
    statements, lines = script.statements, script.lines
    defined: dict[str, list[SourceKernel]] = {}
    launched: list[tuple[ast.Call, ast.AST | None]] = []
    for stmt, _ in statements:
        if isinstance(stmt, ast.FunctionDef) and any(_is_jit(d) for d in stmt.decorator_list):
            defined.setdefault(stmt.name, []).append(_numba_kernel(stmt, lines))
    if not defined:
        return [], []
    # a name several kernels of the script share (numba's tests: a `kernel` in each
    # test) is one kernel only where they read alike; else its launches' body is unknown
    kernels = {name: found[0] for name, found in defined.items()
               if len({(k.body, k.block_indexed, k.thread_indexed, k.empty)
                       for k in found}) == 1}
    for stmt, function in statements:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Subscript) and \
                isinstance(call.func.value, ast.Name) and call.func.value.id in defined:
            launched.append((call, function))
    sites = []
    for call, values in _scoped(script.tree, launched):  # type: ignore[arg-type]
        config = call.func.slice  # type: ignore[attr-defined]
        parts = list(config.elts) if isinstance(config, ast.Tuple) else [config]
        if len(parts) < 2:
            continue
        name = call.func.value.id  # type: ignore[attr-defined]
        grid, block = _param(parts[0], values, lines), _param(parts[1], values, lines)
        shared = _param(parts[3], values, lines) if len(parts) > 3 else None
        stream = _segment(parts[2], lines) if len(parts) > 2 else None
        sites.append(LaunchSite(name, name, "numba", _span(call, lines), grid, block, shared,
                                stream))
    return sorted(kernels.values(), key=lambda k: k.span.line), sites


def _is_jit(decorator: ast.expr) -> bool:
    """``@cuda.jit``, ``@numba.cuda.jit``, ``@cuda.jit(...)``."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return isinstance(target, ast.Attribute) and target.attr == "jit" and \
        isinstance(target.value, (ast.Name, ast.Attribute)) and \
        (target.value.id if isinstance(target.value, ast.Name) else target.value.attr) == "cuda"


def _numba_kernel(function: ast.FunctionDef, lines: list[bytes]) -> SourceKernel:
    """A Numba kernel's model: a grid-stride loop (``range(i, n, cuda.gridsize(1))``, a
    stride of ``cuda.gridDim.x * cuda.blockDim.x``), one element per thread (``i =
    cuda.grid(1)`` and a comparison of it guarding the work), else another shape; whether
    it reads its block and thread indices (``cuda.grid`` reads both)."""
    names = {n.attr for n in ast.walk(function) if isinstance(n, ast.Attribute)}
    calls = {n.func.attr for n in ast.walk(function)
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    grid = "grid" in calls
    # a call of the script's own (a device function) may read an index for it
    asks = any(isinstance(n, ast.Call) and (
        (isinstance(n.func, ast.Name) and n.func.id not in _BUILTINS) or
        (isinstance(n.func, ast.Attribute) and not (
            isinstance(n.func.value, ast.Name) and n.func.value.id in ("cuda", "math"))))
        for n in ast.walk(function))
    block_indexed = True if grid or "blockIdx" in names else None if asks else False
    thread_indexed = True if grid or {"threadIdx", "laneid"} & names else \
        None if asks else False
    strided = "gridsize" in calls or ({"gridDim", "blockDim"} <= names and any(
        isinstance(n, ast.For) and isinstance(n.iter, ast.Call) and
        isinstance(n.iter.func, ast.Name) and n.iter.func.id == "range" and
        len(n.iter.args) == 3 for n in ast.walk(function)))
    guarded = any(isinstance(n, ast.If) and isinstance(n.test, ast.Compare) and
                  any(isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE))
                      for op in n.test.ops) for n in ast.walk(function))
    body: Body = "grid-stride" if strided else \
        "per-element" if grid and guarded else "other"
    name_span = _span(function, lines)
    line = lines[function.lineno - 1] if function.lineno <= len(lines) else b""
    at = line.find(function.name.encode())
    if at >= 0:
        column = len(line[:at].decode("utf-8", "replace")) + 1
        name_span = Span(function.lineno, column, function.lineno,
                         column + len(function.name))
    empty = all(isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and
                isinstance(s.value, ast.Constant)) for s in function.body)
    return SourceKernel(function.name, name_span, body,
                        block_indexed=None if empty else block_indexed,
                        thread_indexed=None if empty else thread_indexed, empty=empty)


# -- the driver APIs from Python (cuda-python, hip-python) ---------------------------------
DRIVER_MARKERS = (b"cuLaunchKernel", b"hipModuleLaunchKernel")
_GET_FUNCTIONS = ("cuModuleGetFunction", "hipModuleGetFunction")


def _driver(script: _Script) -> list[LaunchSite]:
    """cuda-python's ``cuda.cuLaunchKernel(kernel, gx, gy, gz, bx, by, bz, shmem, stream,
    ...)`` and hip-python's ``hipModuleLaunchKernel``: the kernel the handle's
    ``err, kernel = cuda.cuModuleGetFunction(module, b"name")`` names (else the handle's
    text), the grid and block their three arguments each."""
    data = script.data
    if not any(m in data for m in DRIVER_MARKERS) or b"ModuleGetFunction" not in data or \
            script.statements is None:
        return []
    handles: dict[str, set[str | None]] = {}
    calls: list[tuple[ast.Call, ast.AST | None]] = []
    for stmt, function in script.statements:
        value = stmt.value if isinstance(stmt, (ast.Assign, ast.Expr)) else None
        if not isinstance(value, ast.Call):
            continue
        called = _called_name(value)
        if called in _GET_FUNCTIONS and isinstance(stmt, ast.Assign) and len(value.args) > 1:
            target = stmt.targets[0]
            handle = target.elts[-1] if isinstance(target, ast.Tuple) and target.elts \
                else target
            literal = value.args[1]
            name = literal.value if isinstance(literal, ast.Constant) else None
            if isinstance(handle, ast.Name):
                handles.setdefault(handle.id, set()).add(
                    name.decode("ascii", "replace") if isinstance(name, bytes) else
                    name if isinstance(name, str) else None)
        elif called in DRIVER_APIS and len(value.args) >= 7:
            calls.append((value, function))
    lines = script.lines
    sites = []
    for call, values in _scoped(script.tree, calls):  # type: ignore[arg-type]
        handle = call.args[0]
        written = _segment(handle, lines)
        named = handles.get(handle.id, set()) if isinstance(handle, ast.Name) else set()
        kernel = next(iter(named)) if len(named) == 1 and None not in named else written
        api = _called_name(call) or "cuLaunchKernel"
        grid = _three(call.args[1:4], values, lines)
        block = _three(call.args[4:7], values, lines)
        shared = _param(call.args[7], values, lines) if len(call.args) > 7 else None
        stream = _segment(call.args[8], lines) if len(call.args) > 8 else None
        sites.append(LaunchSite(kernel, written, api, _span(call, lines), grid, block, shared,
                                stream))
    return [site for site in sites if _judgeable(site)]


def _called_name(call: ast.Call) -> str | None:
    """``cuda.cuLaunchKernel(...)`` / ``cuLaunchKernel(...)`` -> "cuLaunchKernel"."""
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else \
        func.id if isinstance(func, ast.Name) else None


def _three(nodes: list[ast.expr], values: dict[str, ast.expr], lines: list[bytes]) -> Param:
    """Three dimensions given one argument each, as one parameter."""
    return Param.joined([_param(n, values, lines) for n in nodes])
