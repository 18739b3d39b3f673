"""The nodes occlint reads, found from the lexical markers instead of a whole-tree query.

A tree-sitter query visits every node of the tree; in kernel-heavy files that walk cost as
much as a third of the parse. The markers (``__global__``, ``<<<``, the launch APIs' names)
are already known from the lexical pass (:mod:`occlint.readers.source.lexical`), at the
same byte offsets as in the parsed text, so each node is the token at a marker and a few
parents up: the same nodes the queries ``(function_definition "__global__")``,
``(kernel_call_syntax)`` and ``(call_expression function: ...)`` of a launch API capture
(a marker the parse did not see, blanked or inside an ``ERROR``, gives nothing, as the
queries would). Syntax-error regions are found by descending only into subtrees that hold
an error.
"""

from __future__ import annotations

import re
from typing import Any

from occlint.readers.source.lexical import LAUNCH_MARKERS, kernel_markers, launch_markers

# the launch APIs' calls: the text of the function (a name, ``ns::name``, ``name<T>``)
API_NAMES = re.compile(rb"hipLaunchKernelGGL|(cuda|hip)Launch(Kernel|CooperativeKernel|"
                       rb"KernelExC?)(<.*>)?$|(cu|hipModule)Launch(Cooperative)?Kernel$")
FUNCTION_TYPES = ("identifier", "qualified_identifier", "template_function")
_SPACES = re.compile(rb"\s*")


def kernel_definitions(root: Any, code: bytes,
                       macros: list[tuple[int, int, bytes]] = ()) -> list[Any]:
    """The function definitions with a ``__global__`` of their own, or a macro standing for
    it at their head (``macros``: Layout.kernel_macros), in file order."""
    out: list[Any] = []
    seen: set[int] = set()
    for at in kernel_markers(code):
        token = root.descendant_for_byte_range(at, at + 10)
        if token is None or token.type != "__global__":
            continue
        parent = token.parent
        if parent is not None and parent.type == "function_definition" and \
                parent.id not in seen:
            seen.add(parent.id)
            out.append(parent)
    for start, end, written in macros:
        definition = _headed(root, code, start, end, not written.strip())
        if definition is not None and definition.id not in seen:
            seen.add(definition.id)
            out.append(definition)
    if macros:
        out.sort(key=lambda n: n.start_byte)
    return out


def _headed(root: Any, code: bytes, start: int, end: int, blanked: bool) -> Any:
    """The function definition a kernel macro at ``start:end`` heads: read as its return
    type (``void`` or the name) or, blanked, the definition starts at the next word; None
    where the macro heads no definition."""
    at = _SPACES.match(code, end).end() if blanked else start
    node = root.descendant_for_byte_range(at, at + 1)
    for _ in range(3):
        if node is None:
            return None
        parent = node.parent
        if parent is not None and parent.type == "function_definition":
            declarator = parent.child_by_field_name("declarator")
            if parent.start_byte <= at and declarator is not None and \
                    declarator.start_byte > at:
                return parent
            return None
        node = parent
    return None


def launch_nodes(root: Any, code: bytes) -> dict[str, list[Any]]:
    """``config``: the ``<<<...>>>`` of each launch; ``call``: each call of a function
    whose name is a launch API's (as :data:`API_NAMES` matches it), in file order."""
    configs: list[Any] = []
    calls: list[Any] = []
    for at in launch_markers(code):
        if code.startswith(b"<<<", at):
            token = root.descendant_for_byte_range(at, at + 3)
            if token is not None and token.type == "<<<" and token.parent is not None and \
                    token.parent.type == "kernel_call_syntax":
                configs.append(token.parent)
            continue
        m = LAUNCH_MARKERS.match(code, at)
        if m is None:
            continue
        call = _api_call(root.descendant_for_byte_range(at, m.end()))
        if call is not None:
            calls.append(call)
    return {"config": configs, "call": calls}


def _api_call(node: Any) -> Any:
    """The call whose function (the name at a marker, qualified or with template
    arguments) names a launch API; None if the name is not called there."""
    for _ in range(8):
        parent = node.parent if node is not None else None
        if parent is None:
            return None
        if parent.type == "call_expression":
            function = parent.child_by_field_name("function")
            if function is None or function.id != node.id or node.type not in FUNCTION_TYPES:
                return None
            return parent if API_NAMES.search(node.text) else None
        if parent.type not in ("qualified_identifier", "template_function"):
            return None
        node = parent
    return None


def error_regions(root: Any) -> list[Any]:
    """The outermost ``ERROR`` nodes, in file order (only subtrees with an error are
    visited)."""
    out: list[Any] = []
    if not root.has_error:
        return out
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR":
            out.append(node)
            continue
        stack.extend(reversed([c for c in node.children if c.has_error]))
    return out
