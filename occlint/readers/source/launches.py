"""Launch sites: ``k<<<g, b, shmem, stream>>>(...)`` and the launch APIs.

``hipLaunchKernelGGL(k, grid, block, shmem, stream, ...)``;
``cudaLaunchKernel`` / ``hipLaunchKernel`` / ``cudaLaunchCooperativeKernel`` /
``hipLaunchCooperativeKernel(k, grid, block, args, shmem, stream)``;
``cudaLaunchKernelEx`` / ``cudaLaunchKernelExC`` / ``hipLaunchKernelEx(&config, k, ...)``
with a ``cudaLaunchConfig_t`` / ``hipLaunchConfig_t`` set in the same function (an
initialiser, designated or positional, or ``config.gridDim = ...`` assigned once);
the driver APIs ``cuLaunchKernel`` / ``hipModuleLaunchKernel(f, gx, gy, gz, bx, by, bz,
shmem, stream, ...)``, the kernel the one ``cuModuleGetFunction(&f, module, "name")`` of
the file names.
Templated kernels (``k<T, 4><<<...>>>``) are reported under their name ``k``.
"""

from __future__ import annotations

import re
from typing import Any

from occlint.model.source import LaunchSite, Param
from occlint.readers.source.evaluate import Derived, Dim3, Evaluator, Unknown, Value
from occlint.readers.source.kernels import base_name
from occlint.readers.source.markers import launch_nodes
from occlint.readers.source.parse import Text, field_of, operator, scan, unwrap

API_ARGS = {  # name -> (kernel, grid, block, shared, stream) argument positions
    "hipLaunchKernelGGL": (0, 1, 2, 3, 4),
    "cudaLaunchKernel": (0, 1, 2, 4, 5),
    "hipLaunchKernel": (0, 1, 2, 4, 5),
    "cudaLaunchCooperativeKernel": (0, 1, 2, 4, 5),
    "hipLaunchCooperativeKernel": (0, 1, 2, 4, 5),
}
EX_APIS = ("cudaLaunchKernelEx", "cudaLaunchKernelExC", "hipLaunchKernelEx",
           "hipLaunchKernelExC")
# the driver APIs: (f, gridX, gridY, gridZ, blockX, blockY, blockZ, shared, stream, ...), the
# function a handle that ``cuModuleGetFunction(&f, module, "name")`` names
DRIVER_APIS = ("cuLaunchKernel", "cuLaunchCooperativeKernel", "hipModuleLaunchKernel",
               "hipModuleLaunchCooperativeKernel")
_GET_FUNCTION = re.compile(rb"(?:cu|hip)ModuleGetFunction\s*\(\s*&\s*([\w.\[\]>-]+?)\s*,"
                           rb"[^,;]*,\s*\"([A-Za-z_]\w*)\"\s*\)")
CONFIG_FIELDS = ("gridDim", "blockDim", "dynamicSmemBytes", "stream")
MAX_SITES = 20_000


def to_param(node: Any, value: Value, text: Text) -> Param:
    reason = None
    block = None

    def part(v) -> int | None:
        nonlocal reason, block
        if isinstance(v, int):
            return v
        if isinstance(v, Derived):
            block = v.block
            return v.value
        if isinstance(v, Unknown) and reason is None:
            reason = v.reason
        return None

    if isinstance(value, Dim3):
        dims = (part(value.x), part(value.y), part(value.z))
    elif isinstance(value, int):
        dims = (value, 1, 1)
    elif isinstance(value, Derived):
        dims = (part(value), 1, 1)
    else:
        part(value)
        dims = (None, None, None)
    return Param(text.of(node), text.span(node), dims, block, reason)


def _kernel_of(node: Any, text: Text) -> tuple[str, str]:
    """The kernel named by a launch API argument: casts, ``&k``, ``HIP_KERNEL_NAME(k)``,
    ``reinterpret_cast<void*>(k)``, a variable holding one (:func:`_through_variable`)."""
    for _ in range(8):
        node = unwrap(node)
        if node is None:
            return "", ""
        if node.type == "pointer_expression":
            node = node.child_by_field_name("argument")
        elif node.type == "call_expression":
            args = node.child_by_field_name("arguments")
            if args is None or args.named_child_count != 1:
                return "", text.of(node)
            node = args.named_children[0]
        else:
            break
    if node.type == "identifier":
        through = _through_variable(node, text.of(node), text)
        if through is not None:
            return through
    return base_name(node, text), text.of(node)


# declarators a variable's name sits in: ``*f``, ``(*f)(int)``, ``&f``
_DECLARATORS = ("pointer_declarator", "parenthesized_declarator", "function_declarator",
                "reference_declarator")
# what names a kernel on the right of ``f = ...``: the name, a template's, a scoped one
_NAMES = ("identifier", "template_function", "qualified_identifier")


def _declared(node: Any, text: Text) -> str:
    """The name a declarator declares (``(*f)(int*)`` -> ``f``)."""
    for _ in range(8):
        if node is None or node.type in _NAMES:
            break
        if node.type == "parenthesized_declarator":
            node = node.named_children[0] if node.named_child_count else None
        elif node.type in _DECLARATORS:
            node = node.child_by_field_name("declarator")
        else:
            return ""
    return text.of(node) if node is not None and node.type == "identifier" else ""


def _named(node: Any, text: Text) -> list[Any] | None:
    """The kernel names a value of a kernel pointer spells (``&k<4>``, ``(void*)k``,
    ``reinterpret_cast<void*>(k)``, both arms of ``c ? k<1> : k<2>``); None where it
    spells anything else (a call's result, a table's entry)."""
    for _ in range(8):
        node = unwrap(node)
        if node is None:
            return None
        if node.type == "pointer_expression":
            node = node.child_by_field_name("argument")
        elif node.type == "conditional_expression":
            arms = [_named(node.child_by_field_name(f), text)
                    for f in ("consequence", "alternative")]
            return None if None in arms else [n for arm in arms for n in arm]  # type: ignore[union-attr]
        elif node.type == "call_expression":
            cast, args = node.child_by_field_name("function"), node.child_by_field_name("arguments")
            if (cast is None or cast.type != "template_function" or args is None
                    or args.named_child_count != 1
                    or not text.of(cast).split("<", 1)[0].endswith("_cast")):
                return None
            node = args.named_children[0]
        else:
            return [node] if node.type in _NAMES else None
    return None


def _holds(outer: Any, node: Any) -> bool:
    return outer.start_byte <= node.start_byte and node.end_byte <= outer.end_byte


def _through_variable(at: Any, name: str, text: Text) -> tuple[str, str] | None:
    """The kernel a launch through the variable ``name`` starts (``auto f = k<32>; if (n >
    32) f = k<64>; f<<<1, n>>>(...)``: flashinfer's choice of a block by size): the one
    kernel every initialiser and assignment of ``name`` in the enclosing function names, as
    (its name, its text where they all spell it alike, else ``name``); None where ``name``
    is assigned nothing there, or more than one kernel, or what is not a kernel's name."""
    function = at
    while function is not None and function.type != "function_definition":
        function = function.parent
    if function is None or not re.search(
            rb"\b" + re.escape(name.encode()) + rb"\s*=(?!=)",
            text.data[function.start_byte:function.end_byte]):
        return None
    found = scan(function)
    # its declaration in a scope holding the launch (the innermost: ``if (small) { auto f =
    # k<32>; ... } else { auto f = k_large<1024>; ... }``), whose scope its assignments are in
    scopes = [(init, init.parent.parent) for init in found.get("init_declarator", [])
              if _declared(init.child_by_field_name("declarator"), text) == name
              and init.parent is not None and init.parent.parent is not None
              and init.start_byte < at.start_byte and _holds(init.parent.parent, at)]
    values, scope = [], function
    if scopes:
        init, scope = scopes[-1]
        values.append(init.child_by_field_name("value"))
    for assign in found.get("assignment_expression", []):
        left = unwrap(assign.child_by_field_name("left"))
        if left is not None and left.type == "identifier" and text.of(left) == name \
                and _holds(scope, assign):
            if operator(assign) != "=":
                return None
            values.append(assign.child_by_field_name("right"))
    kernels = [_named(v, text) for v in values]
    if not kernels or None in kernels:
        return None
    nodes = [n for k in kernels for n in k]  # type: ignore[union-attr]
    names = {base_name(n, text) for n in nodes}
    if len(names) != 1 or "" in names or name in names:
        return None
    texts = {text.of(n) for n in nodes}
    return names.pop(), texts.pop() if len(texts) == 1 else name


def _dims(nodes: list[Any], evaluator: Evaluator, text: Text) -> Param:
    """A driver API's three dimensions (``gridX, gridY, gridZ``) as one parameter."""
    return Param.joined([to_param(n, evaluator.evaluate(n), text) for n in nodes])


def _driver_function(handle: str, text: Text) -> str | None:
    """The kernel a driver API's function handle names: the one ``cu`` / ``hip``
    ``ModuleGetFunction(&handle, module, "name")`` of the file gives it (None: none, or
    several)."""
    if b"ModuleGetFunction" not in text.data:
        return None
    names = {m[2].decode() for m in _GET_FUNCTION.finditer(text.data)
             if m[1].decode("utf-8", "replace") == handle}
    return names.pop() if len(names) == 1 else None


def _broken(node: Any) -> bool:
    if node.has_error:
        return True
    parent = node.parent
    while parent is not None:
        if parent.type == "ERROR":
            return True
        parent = parent.parent
    return False


class _Config:
    """The fields of a launch configuration variable set in a function."""

    def __init__(self, name: str, at: Any, text: Text):
        self.fields: dict[str, Any] = {}
        self.ambiguous: set[str] = set()
        function = at
        while function is not None and function.type != "function_definition":
            function = function.parent
        scope = function or at
        found = scan(scope)
        for init in found.get("init_declarator", []):
            n = field_of(init, "declarator", "identifier")
            v = field_of(init, "value", "initializer_list")
            if n is None or v is None:
                continue
            if text.of(n) != name or n.start_byte > at.start_byte:
                continue
            items = list(v.named_children)
            if items and all(i.type == "initializer_pair" for i in items):
                for pair in items:
                    designator = pair.child_by_field_name("designator")
                    value = pair.child_by_field_name("value")
                    field = text.of(designator).lstrip(".") if designator is not None else ""
                    if value is not None:
                        self._set(field, value)
            else:
                for field, value in zip(CONFIG_FIELDS, items, strict=False):
                    self._set(field, value)
        for assign in found.get("assignment_expression", []):
            right = field_of(assign, "right")
            left = field_of(assign, "left", "field_expression")
            if right is None or left is None:
                continue
            variable = field_of(left, "argument", "identifier")
            field = field_of(left, "field", "field_identifier")
            if variable is not None and field is not None and text.of(variable) == name \
                    and variable.start_byte < at.start_byte:
                self._set(text.of(field), right)

    def _set(self, field: str, node: Any) -> None:
        if field in self.fields:
            self.ambiguous.add(field)
        self.fields[field] = node

    def get(self, field: str) -> Any:
        return None if field in self.ambiguous else self.fields.get(field)


def launches(root: Any, text: Text, evaluator: Evaluator,
             found: dict[str, list[Any]] | None = None) -> tuple[list[LaunchSite], bool]:
    """Every launch site outside broken regions, in file order; and whether the cap
    (:data:`MAX_SITES`) cut the list. ``found``: the ``<<<...>>>`` and the launch APIs'
    calls (:func:`occlint.readers.source.markers.launch_nodes`), when the caller has them."""
    sites: list[LaunchSite] = []
    if found is None:
        found = launch_nodes(root, text.data)
    configs = found.get("config", [])
    calls = found.get("call", [])
    truncated = len(configs) + len(calls) > MAX_SITES
    for config in configs[:MAX_SITES]:
        call = config.parent
        if call is None or _broken(call):
            continue
        args = list(config.named_children)
        function = call.child_by_field_name("function")
        params = [to_param(a, evaluator.evaluate(a), text) for a in args[:3]]
        while len(params) < 3:
            params.append(None)  # type: ignore[arg-type]
        stream = text.of(args[3]) if len(args) > 3 else None
        name, written = base_name(function, text), text.of(function)
        if function is not None and function.type == "identifier":
            name, written = _through_variable(call, name, text) or (name, written)
        sites.append(LaunchSite(name, written, "<<<>>>", text.span(call), params[0],
                                params[1], params[2], stream))
    for call in calls[:MAX_SITES]:
        if _broken(call):
            continue
        function = call.child_by_field_name("function")
        api = base_name(function, text)
        args_node = call.child_by_field_name("arguments")
        args = list(args_node.named_children) if args_node is not None else []
        if api in API_ARGS:
            k, g, b, s, st = API_ARGS[api]
            if len(args) <= b:
                continue
            name, written = _kernel_of(args[k], text)
            if not name:
                continue
            grid = to_param(args[g], evaluator.evaluate(args[g]), text)
            block = to_param(args[b], evaluator.evaluate(args[b]), text)
            shared = to_param(args[s], evaluator.evaluate(args[s]), text) \
                if len(args) > s else None
            stream = text.of(args[st]) if len(args) > st else None
            sites.append(LaunchSite(name, written, api, text.span(call), grid, block, shared,
                                    stream))
        elif api in DRIVER_APIS and len(args) >= 7:
            written = text.of(args[0])
            name = _driver_function(written, text) or written
            grid = _dims(args[1:4], evaluator, text)
            block = _dims(args[4:7], evaluator, text)
            shared = to_param(args[7], evaluator.evaluate(args[7]), text) \
                if len(args) > 7 else None
            stream = text.of(args[8]) if len(args) > 8 else None
            sites.append(LaunchSite(name, written, api, text.span(call), grid, block, shared,
                                    stream))
        elif api in EX_APIS and len(args) >= 2:
            name, written = _kernel_of(args[1], text)
            config = unwrap(args[0])
            if config is not None and config.type == "pointer_expression":
                config = config.child_by_field_name("argument")
            if not name:
                continue
            values: list[Param | None] = [None, None, None]
            stream_node = None
            if config is not None and config.type == "identifier":
                fields = _Config(text.of(config), call, text)
                for i, field in enumerate(("gridDim", "blockDim", "dynamicSmemBytes")):
                    node = fields.get(field)
                    if node is not None:
                        values[i] = to_param(node, evaluator.evaluate(node), text)
                stream_node = fields.get("stream")
            # else a configuration not set in this function (`&p.cfg`): values unknown
            sites.append(LaunchSite(name, written, api, text.span(call), values[0], values[1],
                                    values[2], text.of(stream_node) if stream_node else None))
    sites.sort(key=lambda s: (s.span.line, s.span.column))
    return sites, truncated


__all__ = ["launches", "re", "to_param"]
