"""tree-sitter set-up for CUDA / HIP sources: the parser, queries, spans and node text.

The ``tree-sitter-cuda`` grammar (a superset of tree-sitter-cpp) parses CUDA and HIP
without headers or a preprocessor. Everything slow is done by tree-sitter in C: parsing,
and queries that find the few nodes occlint looks at (launches, ``__global__`` functions,
``#define``s, comments); Python only walks those nodes' small subtrees, never the whole
tree, and never recursively over unbounded depth.
"""

from __future__ import annotations

from functools import lru_cache
from operator import attrgetter
from typing import Any

from occlint.model.source import Span

MAX_DEPTH = 64  # expressions nested deeper than this are unknown


@lru_cache(maxsize=1)
def language() -> Any:
    import tree_sitter
    import tree_sitter_cuda

    return tree_sitter.Language(tree_sitter_cuda.language())


def parser() -> Any:
    import tree_sitter

    return tree_sitter.Parser(language())


@lru_cache(maxsize=32)
def query(text: str) -> Any:
    import tree_sitter

    return tree_sitter.Query(language(), text)


def in_document_order(nodes: list[Any]) -> list[Any]:
    """Nodes sorted by where they start, an enclosing node before the nodes it holds (two
    stable sorts on attributes: several times faster than one on a tuple)."""
    by_end = sorted(nodes, key=attrgetter("end_byte"), reverse=True)
    return sorted(by_end, key=attrgetter("start_byte"))


LOOPS = ("for_statement", "while_statement", "do_statement", "for_range_loop")
# The nodes the reader reads inside functions and kernel bodies: declarations, writes,
# conditions and loops. They are found by one query of node types alone, their fields
# tested in Python (occlint.readers.source.evaluate, .kernels): tree-sitter compiles a query
# against the whole grammar, about 10 ms for this one, while each pattern that tests a
# field adds several ms (the thirteen such patterns of two queries cost about 50 ms, in
# every process, before the first file).
SCANNED = ("init_declarator", "declaration", "parameter_declaration",
           "optional_parameter_declaration", "assignment_expression", "update_expression",
           "pointer_expression", "if_statement", "conditional_expression", *LOOPS)
_SCAN = "[" + " ".join(f"({t})" for t in SCANNED) + "] @node"


def prepare() -> None:
    """Load the grammar and compile the scan's query now (about 15 ms of CPU): worker
    processes forked after this inherit both instead of each compiling the query."""
    query(_SCAN)


def scan(node: Any) -> dict[str, list[Any]]:
    """The nodes of the :data:`SCANNED` types in ``node``'s subtree (``node`` included),
    by type, each list in document order."""
    import tree_sitter

    found = tree_sitter.QueryCursor(query(_SCAN)).captures(node).get("node", [])
    out: dict[str, list[Any]] = {}
    for n in in_document_order(found):
        out.setdefault(n.type, []).append(n)
    return out


def fields(node: Any, name: str, of_type: str | None = None) -> list[Any]:
    """``node``'s named children in the field ``name`` (of the type ``of_type`` if given):
    what a query's ``name: (of_type)`` matches."""
    return [c for c in node.children_by_field_name(name)
            if c.is_named and (of_type is None or c.type == of_type)]


def field_of(node: Any, name: str, of_type: str | None = None) -> Any:
    """:func:`fields` of a field that holds one node: that node, or None."""
    child = node.child_by_field_name(name)
    if child is None or not child.is_named or (of_type is not None and child.type != of_type):
        return None
    return child


class Text:
    """The file's bytes with line starts, for spans in characters and node text."""

    def __init__(self, data: bytes):
        self.data = data
        self._line_cache: dict[int, bytes] = {}

    def of(self, node: Any, limit: int = 200) -> str:
        raw = self.data[node.start_byte:min(node.end_byte, node.start_byte + limit * 4)]
        text = " ".join(raw.decode("utf-8", "replace").split())
        return text if len(text) <= limit else text[:limit - 1] + "…"

    def name(self, node: Any) -> str:
        """The text of one token (an identifier, a number): :meth:`of` without its
        whitespace folding, which a token never needs."""
        start, end = node.start_byte, node.end_byte
        if end - start > 200:
            return self.of(node)
        return self.data[start:end].decode("utf-8", "replace")

    def column(self, row: int, byte_column: int, line_start: int) -> int:
        """1-based column in characters of a byte column on a row."""
        prefix = self.data[line_start:line_start + byte_column]
        if prefix.isascii():
            return byte_column + 1
        return len(prefix.decode("utf-8", "replace")) + 1

    def span(self, node: Any) -> Span:
        (r0, c0), (r1, c1) = node.start_point, node.end_point
        start_of_first = node.start_byte - c0
        start_of_last = node.end_byte - c1
        return Span(r0 + 1, self.column(r0, c0, start_of_first),
                    r1 + 1, self.column(r1, c1, start_of_last))


def operator(node: Any) -> str:
    """The operator of an expression node (its ``operator`` child: a token whose type is
    its text); "" when there is none, or the parse only assumed one."""
    op = node.child_by_field_name("operator")
    return "" if op is None or op.is_missing else op.type


def unwrap(node: Any) -> Any:
    """The expression inside parentheses and casts (``(int)(x)`` -> ``x``)."""
    for _ in range(MAX_DEPTH):
        if node is None:
            return None
        if node.type == "parenthesized_expression" and node.named_child_count == 1:
            node = node.named_children[0]
        elif node.type == "cast_expression":
            node = node.child_by_field_name("value")
        else:
            return node
    return None


def ancestors(node: Any):
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent
