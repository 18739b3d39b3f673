"""C++ symbol demangling through libstdc++'s ``__cxa_demangle``.

On Linux the library is loaded by its soname and called as the cxxfilt package calls it;
elsewhere, or when that fails, through cxxfilt itself. (Importing cxxfilt looks both
libraries up with ``ctypes.util.find_library``, which runs ``ldconfig -p`` twice: about
8 ms of CPU in every process that demangles, each worker of a run included.)
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import cache, lru_cache


@lru_cache(maxsize=65536)
def demangle(name: str) -> str:
    """The demangled name, or ``name`` itself when it is not a mangled C++ symbol."""
    if not name.startswith("_Z") or len(name) > 16384:
        return name
    try:
        return _demangler()(name)
    except Exception:  # invalid mangling or no libstdc++: keep the raw name
        return name


@cache
def _demangler() -> Callable[[str], str]:
    if sys.platform.startswith("linux"):
        try:
            return _libstdcxx("libstdc++.so.6", "libc.so.6")
        except (OSError, AttributeError):  # not there: cxxfilt searches further
            pass
    import cxxfilt

    return lambda name: cxxfilt.demangle(name, external_only=False)


def _libstdcxx(library: str, libc: str) -> Callable[[str], str]:
    """``__cxa_demangle`` of ``library``, called and checked as cxxfilt's Demangler does
    (raises on a status other than 0, as it does, so that the name is kept)."""
    import ctypes

    class CharP(ctypes.c_char_p):  # a subclass: ctypes keeps the pointer, to free it
        pass

    function = ctypes.CDLL(library).__cxa_demangle
    function.restype = CharP
    free = ctypes.CDLL(libc).free
    free.argtypes = [ctypes.c_void_p]

    def call(name: str) -> str:
        status = ctypes.c_int()
        text = function(ctypes.c_char_p(name.encode()), None, None, ctypes.pointer(status))
        try:
            demangled = text.value
        finally:
            free(text)
        if status.value != 0 or demangled is None:
            raise ValueError(f"__cxa_demangle status {status.value}")
        return demangled.decode()

    return call


def qualified_name(demangled: str) -> str:
    """``ns::f<int>`` from ``void ns::f<int>(int*)``: drop the parameter list and a leading
    return type (template functions) and the demangler's clone suffixes (a ROCm kernel's
    descriptor symbol ``f.kd`` reads ``f(int*) [clone .kd]``); keep the name when the form
    is unexpected."""
    text = demangled.strip()
    while text.endswith("]") and " [clone ." in text:
        text = text[:text.rindex(" [clone .")].rstrip()
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


def template_arguments(demangled: str) -> tuple[str, ...] | None:
    """``void ns::k<float, 4>(float*, int)`` -> ``("float", "4")``: the arguments of the
    function's own template (not its namespace's or class's); None when it has none."""
    name = qualified_name(demangled)
    depth, start, end = 0, -1, -1
    for i, c in enumerate(name):
        if c == "<":
            if depth == 0:
                start = i
            depth += 1
        elif c == ">":
            depth -= 1
            if depth == 0:
                end = i
        elif c == ":" and depth == 0:
            start = end = -1  # a scope's arguments: the name's own come after it
    if start < 0 or end < start or end != len(name) - 1:
        return None
    out, depth, piece = [], 0, start + 1
    for i in range(start + 1, end):
        c = name[i]
        if c in "<(":
            depth += 1
        elif c in ">)":
            depth -= 1
        elif c == "," and depth == 0:
            out.append(name[piece:i].strip())
            piece = i + 1
    out.append(name[piece:end].strip())
    return tuple(out) if any(out) else None
