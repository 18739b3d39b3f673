"""tree-sitter set-up for CUDA / HIP sources: the parser, queries, spans and node text.

The ``tree-sitter-cuda`` grammar (a superset of tree-sitter-cpp) parses CUDA and HIP
without headers or a preprocessor. Everything slow is done by tree-sitter in C: parsing,
and queries that find the few nodes occlint looks at (launches, ``__global__`` functions,
``#define``s, comments); Python only walks those nodes' small subtrees, never the whole
tree, and never recursively over unbounded depth.
"""

from __future__ import annotations

from functools import lru_cache
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


def captures(query_text: str, node: Any, start: int | None = None,
             end: int | None = None) -> dict[str, list[Any]]:
    """Captures of a query under ``node`` (optionally within a byte range)."""
    import tree_sitter

    cursor = tree_sitter.QueryCursor(query(query_text))
    if start is not None and end is not None:
        cursor.set_byte_range(start, end)
    found = cursor.captures(node)
    # in document order, whatever order the query engine returns them in
    return {k: sorted(v, key=lambda n: (n.start_byte, -n.end_byte)) for k, v in found.items()}


def matches(query_text: str, node: Any) -> list[dict[str, Any]]:
    """Each match of a query under ``node``: capture name -> its (first) node."""
    import tree_sitter

    cursor = tree_sitter.QueryCursor(query(query_text))
    return [{k: v[0] for k, v in found.items() if v} for _, found in cursor.matches(node)]


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
