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
