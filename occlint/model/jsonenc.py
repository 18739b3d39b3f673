"""JSON text exactly as ``json.dumps(obj, indent=2, ensure_ascii=False)`` writes it, faster.

With ``indent`` set, the standard library falls back to its pure-Python encoder (a generator
per container and per value); a report of 30,000 kernels spends seconds there. This encoder
builds each container with one ``join``, inlines the common scalars and caches the encoded
keys (a report uses a few hundred distinct ones). Its output is byte-identical to
``json.dumps``: tests/test_jsonenc.py compares the two on every report the fixtures give.
"""

from __future__ import annotations

from json.encoder import encode_basestring as _string  # the C implementation when available
from typing import Any

_DEEP = 128
_INDENTS = ["\n" + "  " * level for level in range(_DEEP)]
_float_repr = float.__repr__
_int_repr = int.__repr__
_INF = float("inf")
_keys: dict[str, str] = {}  # key -> '"key": '
_MAX_CACHED_KEYS = 8192


class RawJSON(str):
    """Text already encoded (by :func:`encode` at the depth it is written at): written as
    is. Sections that many records share are encoded once this way."""

    __slots__ = ()


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == _INF:
        return "Infinity"
    if value == -_INF:
        return "-Infinity"
    return _float_repr(value)


def _key(key: Any) -> str:
    """A dict key as json.dumps writes it (non-string keys are converted as it does)."""
    if isinstance(key, str):
        text = _string(key)
    elif key is True:
        text = '"true"'
    elif key is False:
        text = '"false"'
    elif key is None:
        text = '"null"'
    elif isinstance(key, int):
        text = _string(_int_repr(key))
    elif isinstance(key, float):
        text = _string(_float(key))
    else:
        raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")
    return text + ": "


def encode(obj: Any, level: int = 0) -> str:
    """``json.dumps(obj, indent=2, ensure_ascii=False)`` for a value nested ``level`` deep
    (its inner lines are indented as they would be at that depth of a larger document)."""
    kind = type(obj)
    if kind is dict:
        if not obj:
            return "{}"
        level += 1
        parts: list[str] = []
        append = parts.append
        keys = _keys
        for key, value in obj.items():
            prefix = keys.get(key)  # only str keys are cached
            if prefix is None:
                prefix = _key(key)
                if type(key) is str and len(keys) < _MAX_CACHED_KEYS:
                    keys[key] = prefix
            kind = type(value)
            if kind is str:
                append(prefix + _string(value))
            elif kind is int:
                append(prefix + _int_repr(value))
            elif value is None:
                append(prefix + "null")
            elif value is True:
                append(prefix + "true")
            elif value is False:
                append(prefix + "false")
            elif kind is RawJSON:
                append(prefix + value)
            else:
                append(prefix + encode(value, level))
        if level < _DEEP:
            newline = _INDENTS[level]
            return "{" + newline + ("," + newline).join(parts) + _INDENTS[level - 1] + "}"
        return "{" + _indent(level) + ("," + _indent(level)).join(parts) + _indent(level - 1) + "}"
    if kind is list or kind is tuple:
        if not obj:
            return "[]"
        level += 1
        items: list[str] = []
        append = items.append
        for value in obj:
            kind = type(value)
            if kind is str:
                append(_string(value))
            elif kind is int:
                append(_int_repr(value))
            else:
                append(encode(value, level))
        if level < _DEEP:
            newline = _INDENTS[level]
            return "[" + newline + ("," + newline).join(items) + _INDENTS[level - 1] + "]"
        return "[" + _indent(level) + ("," + _indent(level)).join(items) + _indent(level - 1) + "]"
    if kind is str:
        return _string(obj)
    if kind is RawJSON:
        return obj
    if obj is None:
        return "null"
    if obj is True:
        return "true"
    if obj is False:
        return "false"
    if kind is int:
        return _int_repr(obj)
    if kind is float:
        return _float(obj)
    return _subclass(obj, level)


def _indent(level: int) -> str:
    return _INDENTS[level] if level < _DEEP else "\n" + "  " * level


def _subclass(obj: Any, level: int) -> str:
    """Subclasses of the JSON types, encoded as json.dumps does (by their base type)."""
    if isinstance(obj, str):
        return _string(obj)
    if isinstance(obj, int):
        return _int_repr(obj)
    if isinstance(obj, float):
        return _float(obj)
    if isinstance(obj, (list, tuple)):
        return encode(list(obj), level)
    if isinstance(obj, dict):
        return encode(dict(obj), level)
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


def dumps(obj: Any) -> str:
    """The whole text of ``json.dumps(obj, indent=2, ensure_ascii=False)``."""
    return encode(obj)
