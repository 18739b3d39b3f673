"""Evaluate launch parameters where the file determines them; everything else is unknown.

Known: integer literals; ``const`` / ``constexpr`` / ``static const`` variables (local or
file scope); local variables initialised once and never written again in their function
(no assignment, ``++``/``--`` or ``&x``); ``static`` file-scope variables never written in
the file; object-like ``#define``s defined once in the file; ``dim3 b(16, 16)``,
``dim3 b = {...}``, ``dim3(x, y)``; ``+ - * / % << >> & | ^``, unary ``- + ~``, casts;
``std::min`` / ``std::max`` / ``min`` / ``max``; the members ``.x .y .z`` of a known dim3.
The ceil division ``(n + B - 1) / B`` and ``div_up(n, B)``-style helpers with n unknown are
:class:`Derived` — "a grid derived from the problem size at block B". Function parameters,
template parameters, non-static globals (other files may change them), values from calls,
members and anything else are :class:`Unknown`, with the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from occlint.readers.source.lexical import Define, Layout
from occlint.readers.source.parse import (
    MAX_DEPTH,
    Text,
    ancestors,
    field_of,
    fields,
    in_document_order,
    operator,
    parser,
    scan,
    unwrap,
)

MAX_VALUE = 1 << 63  # larger (or negative) values are treated as unknown


@dataclass(frozen=True, slots=True)
class Unknown:
    reason: str


@dataclass(frozen=True, slots=True)
class Derived:
    """``ceil(n / block)``: a grid derived from the problem size n at ``block``; ``value``
    when the file determines n too."""

    block: int
    value: int | None = None


Scalar = int | Unknown | Derived


@dataclass(frozen=True, slots=True)
class Dim3:
    x: Scalar
    y: Scalar
    z: Scalar


Value = int | Unknown | Derived | Dim3

HELPERS = re.compile(r"(?i)^(div_?up|divup|i_?div_?up|ceil_?div|cdiv|ceildiv|div_?ceil|"
                     r"div_?round_?up|ceil_?div_?int|round_?up_?div|ceil_?divide|"
                     r"num_?blocks)$")
MINMAX = {"min": min, "max": max, "std::min": min, "std::max": max, "fmin": min, "fmax": max,
          "::min": min, "::max": max, "cuda::std::min": min, "cuda::std::max": max}
INTEGER_TYPES = re.compile(r"^(?:(?:unsigned|signed|short|long|int|char|size_t|ssize_t|"
                           r"u?int(?:8|16|32|64)_t|std::size_t|std::u?int(?:8|16|32|64)_t|"
                           r"auto|dim3|index_t|uint|int64|uint64|const|constexpr|static|"
                           r"volatile|inline)\s*)+$")
SCOPES = ("compound_statement", "for_statement", "for_range_loop", "function_definition",
          "lambda_expression", "translation_unit", "if_statement", "while_statement",
          "switch_statement", "catch_clause")
CONTAINERS = ("translation_unit", "declaration_list", "linkage_specification",
              "namespace_definition", "preproc_if", "preproc_ifdef", "preproc_else",
              "preproc_elif", "preproc_elifdef")

def _local_names(function: Any) -> dict[str, list[Any]]:
    """The identifiers a function declares and writes, by role, each in document order:
    ``decl`` (``int n = 4``), ``bare`` (``int n;``), ``dim3`` (``dim3 b(16, 4)``, which
    C++ reads as a function declaration), ``param`` (a parameter's declarator) and
    ``write`` (assigned, incremented, or its address taken)."""
    nodes = scan(function)
    declarations = nodes.get("declaration", [])
    assignments = nodes.get("assignment_expression", [])
    lefts = [left for n in assignments if (left := n.child_by_field_name("left")) is not None]
    writes = [left for left in lefts if left.type == "identifier"]
    writes += [i for left in lefts if left.type == "field_expression"
               and (i := field_of(left, "argument", "identifier")) is not None]
    writes += [i for n in nodes.get("update_expression", [])
               if (i := field_of(n, "argument", "identifier")) is not None]
    writes += [i for n in nodes.get("pointer_expression", []) if operator(n) == "&"
               and (i := field_of(n, "argument", "identifier")) is not None]
    return {
        "decl": [i for n in nodes.get("init_declarator", [])
                 if (i := field_of(n, "declarator", "identifier")) is not None],
        "bare": [i for n in declarations for i in fields(n, "declarator", "identifier")],
        "dim3": [i for n in declarations for f in fields(n, "declarator", "function_declarator")
                 if (i := field_of(f, "declarator", "identifier")) is not None],
        "param": in_document_order(
            [d for kind in ("parameter_declaration", "optional_parameter_declaration")
             for n in nodes.get(kind, []) if (d := field_of(n, "declarator")) is not None]),
        "write": in_document_order(writes),
    }


def parse_int(text: str) -> int | None:
    """A C/C++ integer literal (``0x10``, ``1'000``, ``256u``, ``0b11``, ``017``)."""
    t = text.replace("'", "").rstrip("uUlLzZ")
    try:
        if t[:2] in ("0x", "0X"):
            return int(t[2:], 16)
        if t[:2] in ("0b", "0B"):
            return int(t[2:], 2)
        if len(t) > 1 and t[0] == "0":
            return int(t[1:], 8)
        return int(t, 10)
    except ValueError:
        return None


def _scalar(value: Value) -> Scalar:
    if isinstance(value, Dim3):
        if value.y == 1 and value.z == 1:
            return value.x
        return Unknown("a dim3 used as a number")
    return value


def _identifier_name(node: Any, text: Text) -> str | None:
    """The declared name of a parameter declarator (``int n``, ``int* p``, ``int& r``)."""
    for _ in range(MAX_DEPTH):
        if node is None:
            return None
        if node.type == "identifier":
            return text.of(node)
        node = node.child_by_field_name("declarator") or (
            node.named_children[-1] if node.named_child_count else None)
    return None


def _scope_of(node: Any) -> Any:
    parent = node.parent
    while parent is not None and parent.type not in SCOPES:
        parent = parent.parent
    return parent


def _declaration_of(node: Any) -> Any:
    parent = node.parent
    for _ in range(4):
        if parent is None or parent.type == "declaration":
            return parent
        parent = parent.parent
    return None


def dim3_arguments(declaration: Any, declarator: Any) -> list[Any] | None:
    """``dim3 t(ROWS, COLS);``: C++ reads it as the declaration of a function returning
    dim3 whose parameters are of the types ROWS and COLS; the arguments (the type names), or
    None when it is not of that form (a prototype names its parameters or has other types)."""
    type_node = declaration.child_by_field_name("type")
    params = declarator.child_by_field_name("parameters")
    if type_node is None or params is None or type_node.type != "type_identifier" or \
            type_node.text not in (b"dim3", b"::dim3") or not params.named_children:
        return None
    out = []
    for p in params.named_children:
        kind = p.child_by_field_name("type")
        if p.type != "parameter_declaration" or p.named_child_count != 1 or kind is None \
                or kind.type != "type_identifier":
            return None
        out.append(kind)
    return out


def _initial_value(root: Any) -> Any:
    """The value of the first declaration of a tree (``int v = (...);``), if it has one."""
    first = root.named_children[0] if root.named_child_count else None
    if first is None or first.type != "declaration":
        return None
    init = first.child_by_field_name("declarator")
    return init.child_by_field_name("value") if init is not None and \
        init.type == "init_declarator" else None


_WRITE_OPERATOR = re.compile(rb"\s*(?:\.\s*\w+\s*)?(?:(?:[-+*/%&|^]|<<|>>)?=(?!=)|\+\+|--)")
_NOT_A_TYPE = (b"return", b"case", b"else", b"do", b"throw", b"sizeof", b"co_return")


def lexical_writes(code: bytes, name: str, declared_at: int) -> int:
    """Writes of ``name`` in the file, found lexically (comments blanked): assignments
    (``x =``, ``x +=``, ``x.f =``), ``++``/``--`` and ``&x``, never the declaration at
    ``declared_at`` nor other declarations (``int x = 1`` in a function). Counts what
    could be a write: a name that may be written is unknown, never guessed."""
    word = name.encode()
    count = 0
    for m in re.finditer(rb"\b" + re.escape(word) + rb"\b", code):
        start, end = m.span()
        if start == declared_at:
            continue
        before = code[max(0, start - 64):start].rstrip()
        if before.endswith((b"++", b"--")):
            count += 1
            continue
        if before.endswith(b"&") and not before.endswith(b"&&"):
            prev = before[:-1].rstrip()[-1:]
            if not prev or not (prev.isalnum() or prev in b"_)]"):
                count += 1  # &x (not a & x)
            continue
        if before.endswith((b".", b"->", b"::")):
            continue  # a member or a qualified name of the same spelling
        if not _WRITE_OPERATOR.match(code, end):
            continue
        token = re.search(rb"(\w+)\s*$", before)
        if token and token[1] not in _NOT_A_TYPE and not before.endswith(b"=") and \
                code[end:end + 64].lstrip()[:1] == b"=":
            continue  # a declaration: `int x = 1`
        count += 1
    return count


@dataclass(slots=True)
class _Decl:
    name: str
    declaration: Any  # the declaration node
    init: Any  # the init_declarator, or None
    scope: Any
    parameter: bool = False
    position: int = -1  # of the declared name


class _Locals:
    """The declarations and writes of one function's names (:func:`_local_names`); a name's
    declarations are read when it is first looked up (most are never)."""

    def __init__(self, function: Any, text: Text):
        self.function = function
        found = _local_names(function)
        # name -> (role, node), by role in the order "decl", "dim3", "bare", "param"
        self.found: dict[str, list[tuple[str, Any]]] = {}
        for role in ("decl", "dim3", "bare"):
            for node in found.get(role, []):
                self.found.setdefault(text.name(node), []).append((role, node))
        for node in found.get("param", []):
            name = _identifier_name(node, text)
            if name:
                self.found.setdefault(name, []).append(("param", node))
        self.writes: dict[str, list[int]] = {}
        for node in found.get("write", []):
            self.writes.setdefault(text.name(node), []).append(node.start_byte)
        self._declarations: dict[str, list[_Decl]] = {}

    def declarations(self, name: str) -> list[_Decl]:
        hit = self._declarations.get(name)
        if hit is None:
            hit = self._declarations[name] = [
                d for role, node in self.found.get(name, ())
                if (d := self._declaration(name, role, node)) is not None]
        return hit

    def _declaration(self, name: str, role: str, node: Any) -> _Decl | None:
        if role == "decl":
            declaration = _declaration_of(node)
            if declaration is None:
                return None  # e.g. a condition declaration: treat as not a constant
            return _Decl(name, declaration, node.parent, _scope_of(declaration))
        if role == "dim3":
            declarator = node.parent
            declaration = declarator.parent
            if declaration is None or declaration.type != "declaration" or \
                    dim3_arguments(declaration, declarator) is None:
                return None
            return _Decl(name, declaration, declarator, _scope_of(declaration))
        if role == "bare":
            return _Decl(name, node.parent, None, _scope_of(node.parent))
        scope = node.parent
        while scope is not None and scope.type not in (
                "function_definition", "lambda_expression", "function_declarator"):
            scope = scope.parent
        if scope is not None and scope.type == "function_declarator":
            scope = scope.parent if scope.parent is not None else scope
            if scope.type != "function_definition":
                return None  # a declaration of another function
        return _Decl(name, node, None, scope or self.function, parameter=True)


class Evaluator:
    """Evaluates expressions of one parsed file (see the module docstring)."""

    # how often any evaluation met the depth limit or a name that refers to itself: a
    # declaration's value computed while this count stayed the same depends on nothing
    # but the declaration, the writes of its name and the depth it starts at, and is kept
    # with the depth its computation went to below that start (_declared)
    contingencies = 0
    deepest = 0  # the depth the evaluations reached (since a declaration's started)

    def __init__(self, text: Text, root: Any, layout: Layout | None = None):
        self.text = text
        self.root = root
        self.layout = layout if layout is not None else Layout(text.data)
        self._defines: dict[str, list[Define]] | None = None
        self._globals: dict[str, list[_Decl]] | None = None
        self._functions: dict[int, _Locals] = {}
        self._file_writes: dict[str, int] | None = None
        self._define_values: dict[str, Value] = {}
        self._active: set[int] = set()
        self._declared_values: dict[tuple[int, int, tuple[int, ...]], tuple[Value, int]] = {}
        # a launch read from a #define body: its parameters are unknown, and names are looked
        # up where the macro is defined (the function around it, at that position)
        self.macro_params: frozenset[str] = frozenset()
        self.context: tuple[Any, int] | None = None
        self.parent: Evaluator | None = None  # (a reference to itself would be a cycle)

    def for_macro(self, text: Text, root: Any, params: frozenset[str],
                  context: tuple[Any, int] | None) -> Evaluator:
        """An evaluator for a launch parsed from a ``#define`` body (``text``/``root``):
        the macro's parameters are unknown; other names are looked up in this file, in the
        function ``context[0]`` around the definition at its position ``context[1]``."""
        sub = Evaluator(text, root, self.layout)
        sub._defines, sub._globals = self.defines(), self.globals()
        sub._file_writes, sub._define_values = self._file_writes, self._define_values
        sub.macro_params, sub.context, sub.parent = params, context, self
        return sub

    # -- file-level tables ------------------------------------------------------------------
    def defines(self) -> dict[str, list[Define]]:
        """Object-like ``#define``s of the file (function-like macros are no values)."""
        if self._defines is None:
            self._defines = {name: found for name, found in self.layout.defines.items()
                             if all(d.params is None for d in found)}
        return self._defines

    def globals(self) -> dict[str, list[_Decl]]:
        if self._globals is None:
            table: dict[str, list[_Decl]] = {}
            stack = [self.root]
            while stack:
                node = stack.pop()
                for child in node.named_children:
                    if child.type == "declaration":
                        for init in child.children_by_field_name("declarator"):
                            target = init.child_by_field_name("declarator") \
                                if init.type == "init_declarator" else init
                            if target is not None and target.type == "function_declarator" \
                                    and dim3_arguments(child, target) is not None:
                                init, target = target, target.child_by_field_name("declarator")
                            if target is not None and target.type == "identifier":
                                name = self.text.name(target)
                                table.setdefault(name, []).append(
                                    _Decl(name, child,
                                          init if init.type in ("init_declarator",
                                                                "function_declarator")
                                          else None, self.root, position=target.start_byte))
                    elif child.type in CONTAINERS or child.type == "declaration_list" or (
                            child.type == "namespace_definition"):
                        stack.append(child)
            self._globals = table
        return self._globals

    def file_writes(self, name: str, declared_at: int) -> int:
        if self._file_writes is None:
            self._file_writes = {}
        if name not in self._file_writes:
            self._file_writes[name] = lexical_writes(self.layout.code, name, declared_at)
        return self._file_writes[name]

    def _function_tables(self, function: Any) -> _Locals:
        key = function.id
        hit = self._functions.get(key)
        if hit is None:
            hit = self._functions[key] = _Locals(function, self.text)
        return hit

    # -- lookup -------------------------------------------------------------------------------
    def lookup(self, name: str, at: Any, depth: int) -> Value:
        if name in self.macro_params:
            return Unknown(f"'{name}' is a parameter of the macro")
        function = None
        for parent in ancestors(at):
            if parent.type == "template_declaration":
                params = parent.child_by_field_name("parameters")
                if params is not None:
                    for p in params.named_children:
                        if _identifier_name(p.child_by_field_name("declarator"),
                                            self.text) == name:
                            return Unknown(f"'{name}' is a template parameter")
            if parent.type == "function_definition":
                function = parent  # the outermost one, for lambdas inside functions
        position = at.start_byte
        evaluator = self
        if function is None and self.context is not None:
            function, position = self.context
            evaluator = self.parent or self  # the file's: the function is in its tree
            template = evaluator.lookup_template(name, function)
            if template is not None:
                return template
        if function is not None:
            local = evaluator._local(name, function, position, depth)
            if local is not None:
                return local
        found = self.globals().get(name)
        if found:
            if len(found) > 1:
                return Unknown(f"'{name}' is declared more than once")
            d = found[0]
            qualifiers = self._qualifiers(d.declaration)
            if not ({"const", "constexpr"} & qualifiers):
                if "static" not in qualifiers and not self._anonymous(d.declaration):
                    return Unknown(f"'{name}' is a non-const global (other files may change it)")
                if self.file_writes(name, d.position):
                    return Unknown(f"'{name}' is assigned in the file")
            return self._declared(d, [], depth)
        defines = self.defines().get(name)
        if defines:
            if len({d.value for d in defines}) > 1:
                return Unknown(f"'{name}' is #defined more than once, differently")
            return self._define(name, defines[0], depth)
        return Unknown(f"'{name}' is not determined by this file")

    def lookup_template(self, name: str, node: Any) -> Value | None:
        for parent in (node, *ancestors(node)):
            if parent.type == "template_declaration":
                params = parent.child_by_field_name("parameters")
                for p in params.named_children if params is not None else ():
                    if _identifier_name(p.child_by_field_name("declarator"), self.text) == name:
                        return Unknown(f"'{name}' is a template parameter")
        return None

    def _local(self, name: str, function: Any, position: int, depth: int) -> Value | None:
        """The value of a local or parameter of ``function`` visible at ``position``; None
        when no such name is declared there."""
        table = self._function_tables(function)
        best = None
        for d in table.declarations(name):
            scope = d.scope
            if scope is None or not (scope.start_byte <= position < scope.end_byte):
                continue
            if not d.parameter and d.declaration.start_byte >= position:
                continue
            if best is None or scope.start_byte >= best.scope.start_byte:
                best = d
        if best is None:
            return None
        if best.parameter:
            return Unknown(f"'{name}' is a function parameter")
        scope = best.scope
        written = [b for b in table.writes.get(name, ()) if scope.start_byte <= b < scope.end_byte]
        return self._declared(best, written, depth)

    def _anonymous(self, declaration: Any) -> bool:
        for parent in ancestors(declaration):
            if parent.type == "namespace_definition" and \
                    parent.child_by_field_name("name") is None:
                return True
        return False

    def _qualifiers(self, declaration: Any) -> set[str]:
        out = set()
        for child in declaration.children:
            if child.type in ("type_qualifier", "storage_class_specifier"):
                out.add(self.text.of(child))
        return out

    def _declared(self, d: _Decl, writes: list[int], depth: int) -> Value:
        """The value of the declaration ``d`` (its name written at ``writes``), computed
        once (see :attr:`contingencies`): in launch-heavy functions most names are looked
        up again by later launches."""
        if d.init is None:
            return Unknown(f"'{d.name}' has no initialiser")
        key = (d.init.id, d.declaration.id, tuple(writes))
        kept = self._declared_values.get(key)
        if kept is not None and depth + kept[1] <= MAX_DEPTH:  # the limit is not met
            Evaluator.deepest = max(Evaluator.deepest, depth + kept[1])
            return kept[0]
        outer, before = Evaluator.deepest, Evaluator.contingencies
        Evaluator.deepest = depth
        value = self._declaration_value(d, writes, depth)
        below = Evaluator.deepest - depth
        if Evaluator.contingencies == before:
            self._declared_values[key] = (value, below)
        Evaluator.deepest = max(outer, depth + below)
        return value

    def _declaration_value(self, d: _Decl, writes: list[int], depth: int) -> Value:
        qualifiers = self._qualifiers(d.declaration)
        if not ({"const", "constexpr"} & qualifiers) and writes:
            return Unknown(f"'{d.name}' is assigned more than once")
        type_node = d.declaration.child_by_field_name("type")
        type_text = self.text.of(type_node) if type_node is not None else ""
        if not INTEGER_TYPES.match(type_text):
            return Unknown(f"'{d.name}' is of type {type_text}")
        if id(d.init) in self._active or d.init.id in self._active:
            Evaluator.contingencies += 1
            return Unknown(f"'{d.name}' refers to itself")
        self._active.add(d.init.id)
        try:
            if d.init.type == "function_declarator":  # dim3 b(ROWS, COLS)
                return self._dim3(dim3_arguments(d.declaration, d.init) or [], d.init, depth)
            value_node = d.init.child_by_field_name("value")
            if value_node is None:  # dim3 b(16, 16)
                args = [c for c in d.init.named_children if c.type == "argument_list"]
                if not args:
                    return Unknown(f"'{d.name}' has no initialiser")
                value_node = args[0]
            if value_node.type in ("argument_list", "initializer_list"):
                items = list(value_node.named_children)
                if type_text.endswith("dim3"):
                    return self._dim3(items, value_node, depth)
                if len(items) == 1:
                    return self.evaluate(items[0], depth + 1)
                return Unknown(f"'{d.name}' has an unexpected initialiser")
            value = self.evaluate(value_node, depth + 1)
            if type_text.endswith("dim3") and not isinstance(value, Dim3):
                return Dim3(_scalar(value), 1, 1)
            return value
        finally:
            self._active.discard(d.init.id)

    def _define(self, name: str, define: Define, depth: int) -> Value:
        if name in self._define_values:
            return self._define_values[name]
        body = define.value
        if not body:
            return Unknown(f"'{name}' is #defined without a value")
        if len(body) > 4096:
            return Unknown(f"'{name}' is #defined as a long text")
        self._define_values[name] = Unknown(f"'{name}' refers to itself")
        wrapped = b"int __occlint_v = (" + body + b"\n);"
        tree = parser().parse(wrapped)
        value: Value = Unknown(f"'{name}' is not an expression")
        if not tree.root_node.has_error:
            found = _initial_value(tree.root_node)
            if found is not None:
                sub = Evaluator(Text(wrapped), tree.root_node, self.layout)
                sub._defines = self.defines()  # other #defines of the file, nothing else
                sub._globals = {}
                sub._define_values = self._define_values
                value = sub.evaluate(found, depth + 1)
        self._define_values[name] = value
        return value

    # -- expressions --------------------------------------------------------------------------
    def _dim3(self, items: list[Any], at: Any, depth: int) -> Value:
        if len(items) > 3:
            return Unknown("dim3 with more than three values")
        parts = [_scalar(self.evaluate(i, depth + 1)) for i in items]
        while len(parts) < 3:
            parts.append(1)
        return Dim3(*parts)

    def evaluate(self, node: Any, depth: int = 0) -> Value:
        if depth > MAX_DEPTH:
            Evaluator.contingencies += 1
            return Unknown("expression nested too deeply")
        if depth > Evaluator.deepest:
            Evaluator.deepest = depth
        node = unwrap(node)
        if node is None:
            return Unknown("not an expression")
        kind = node.type
        if kind == "number_literal":
            value = parse_int(self.text.name(node))
            return Unknown(f"{self.text.of(node)} is not an integer") if value is None \
                else value
        if kind in ("identifier", "type_identifier"):  # a type: `dim3 b(ROWS)` (above)
            return self.lookup(self.text.name(node), node, depth)
        if kind == "binary_expression":
            return self._binary(node, depth)
        if kind == "unary_expression":
            operand = _scalar(self.evaluate(node.child_by_field_name("argument"), depth + 1))
            op = operator(node)
            if not isinstance(operand, int):
                return operand if isinstance(operand, Unknown) else Unknown("derived value")
            if op == "-":
                return Unknown("negative value") if operand else 0
            if op == "+":
                return operand
            return Unknown(f"operator {op}")
        if kind == "call_expression":
            return self._call(node, depth)
        if kind == "initializer_list":
            return self._dim3(list(node.named_children), node, depth)
        if kind == "compound_literal_expression":
            value = node.child_by_field_name("value")
            if value is not None:
                return self._dim3(list(value.named_children), node, depth)
        if kind == "field_expression":
            field = self.text.of(node.child_by_field_name("field"))
            base = self.evaluate(node.child_by_field_name("argument"), depth + 1)
            if isinstance(base, Dim3) and field in ("x", "y", "z"):
                return getattr(base, field)
            return base if isinstance(base, Unknown) else Unknown(f"member .{field}")
        if kind == "conditional_expression":
            return Unknown("a conditional expression")
        return Unknown(f"'{self.text.of(node, 40)}' is not determined by this file")

    def _call(self, node: Any, depth: int) -> Value:
        function = node.child_by_field_name("function")
        args_node = node.child_by_field_name("arguments")
        args = list(args_node.named_children) if args_node is not None else []
        name_node = function
        if function is not None and function.type == "template_function":
            name_node = function.child_by_field_name("name")
        name = self.text.of(name_node) if name_node is not None else ""
        short = name.rsplit("::", 1)[-1]
        if name in ("dim3", "::dim3"):
            return self._dim3(args, node, depth)
        if short in ("static_cast", "int", "unsigned", "size_t") and len(args) == 1:
            return self.evaluate(args[0], depth + 1)
        if name in MINMAX and len(args) >= 2:
            values = [_scalar(self.evaluate(a, depth + 1)) for a in args]
            for v in values:
                if not isinstance(v, int):
                    return v if isinstance(v, Unknown) else Unknown("derived value in min/max")
            return MINMAX[name](values)  # type: ignore[arg-type]
        if HELPERS.match(short) and len(args) == 2:
            n = _scalar(self.evaluate(args[0], depth + 1))
            b = _scalar(self.evaluate(args[1], depth + 1))
            if isinstance(b, int) and b > 0:
                if isinstance(n, int):
                    return Derived(b, -(-n // b))
                return Derived(b)
            return b if isinstance(b, Unknown) else Unknown("derived divisor")
        return Unknown(f"the result of {self.text.of(function, 40)}(...)")

    def _binary(self, node: Any, depth: int) -> Value:
        op = operator(node)
        left_node, right_node = node.child_by_field_name("left"), \
            node.child_by_field_name("right")
        right = _scalar(self.evaluate(right_node, depth + 1))
        if op == "/" and isinstance(right, int) and right > 0:
            derived = self._ceil_div(left_node, right, depth)
            if derived is not None:
                return derived
        left = _scalar(self.evaluate(left_node, depth + 1))
        for v in (left, right):
            if isinstance(v, Unknown):
                return v
            if isinstance(v, Derived):
                return Unknown("arithmetic on a grid derived from the problem size")
        a, b = left, right
        assert isinstance(a, int) and isinstance(b, int)
        try:
            result = {
                "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
                "/": lambda: a // b, "%": lambda: a % b,
                "<<": lambda: a << b if b < 64 else MAX_VALUE,
                ">>": lambda: a >> b, "&": lambda: a & b, "|": lambda: a | b,
                "^": lambda: a ^ b,
            }[op]()
        except (KeyError, ZeroDivisionError):
            return Unknown(f"operator {op}")
        if result < 0 or result >= MAX_VALUE:
            return Unknown("value out of range")
        return result

    def _ceil_div(self, left: Any, block: int, depth: int) -> Value | None:
        """``(n + B - 1) / B`` (any order of the terms) with n unknown -> Derived(B)."""
        terms: list[tuple[int, Any]] = []
        stack = [(1, unwrap(left))]
        while stack and len(terms) < 8:
            sign, n = stack.pop()
            if n is not None and n.type == "binary_expression":
                op = operator(n)
                if op in ("+", "-"):
                    stack.append((sign, unwrap(n.child_by_field_name("left"))))
                    stack.append((sign if op == "+" else -sign,
                                  unwrap(n.child_by_field_name("right"))))
                    continue
            terms.append((sign, n))
        if stack or len(terms) < 2:
            return None
        values = []
        for sign, n in terms:
            v = _scalar(self.evaluate(n, depth + 1)) if n is not None else Unknown("?")
            if isinstance(v, Derived):
                return None
            values.append((sign, v))
        unknown = [i for i, (_, v) in enumerate(values) if not isinstance(v, int)]
        if len(unknown) > 1:
            return None
        candidates = unknown or [i for i, (sign, _) in enumerate(values) if sign == 1]
        for i in candidates:
            sign, v = values[i]
            rest = sum(s * x for j, (s, x) in enumerate(values) if j != i)  # type: ignore
            if sign == 1 and rest == block - 1:
                if isinstance(v, int):
                    return Derived(block, -(-v // block)) if v >= 0 else None
                return Derived(block)
        return None
