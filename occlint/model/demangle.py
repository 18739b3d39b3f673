"""C++ symbol demangling through libstdc++'s ``__cxa_demangle`` (the cxxfilt package)."""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=65536)
def demangle(name: str) -> str:
    """The demangled name, or ``name`` itself when it is not a mangled C++ symbol."""
    if not name.startswith("_Z") or len(name) > 16384:
        return name
    try:
        import cxxfilt

        return cxxfilt.demangle(name, external_only=False)
    except Exception:  # invalid mangling or no libstdc++: keep the raw name
        return name


def qualified_name(demangled: str) -> str:
    """``ns::f<int>`` from ``void ns::f<int>(int*)``: drop the parameter list and a leading
    return type (template functions); keep the name when the form is unexpected."""
    text = demangled.strip()
    if text.endswith(")"):
        depth = 0
        for i in range(len(text) - 1, -1, -1):
            c = text[i]
            if c in ")>":
                depth += 1
            elif c in "(<":
                depth -= 1
                if depth == 0 and c == "(":
                    text = text[:i]
                    break
    depth, cut = 0, -1
    for i, c in enumerate(text):
        if c in "<(":
            depth += 1
        elif c in ">)":
            depth -= 1
        elif c == " " and depth == 0:
            cut = i
    name = text[cut + 1:] if cut >= 0 else text
    return name or demangled


def base_name(demangled: str) -> str:
    """``void ns::k<float, 4>(float*, int)`` -> ``k``; ``k(float*)`` -> ``k``."""
    name = qualified_name(demangled)
    depth, cut = 0, len(name)
    for i, c in enumerate(name):
        if c == "<":
            if depth == 0:
                cut = min(cut, i)
            depth += 1
        elif c == ">":
            depth -= 1
    name = name[:cut]
    return name.rsplit("::", 1)[-1]
