"""CUDA / HIP source held in a Python file's string literals.

PyTorch's ``torch.utils.cpp_extension.load_inline(cuda_sources=...)``, CuPy's
``RawKernel`` / ``RawModule`` and Numba-less tutorials keep their kernels (and for
``load_inline`` the host code launching them) in a string of the script. :func:`cuda_in`
gives the file as the source reader can parse it: the text of every string literal that
holds a launch (``<<<``) or, asked for, a kernel (``__global__``), everything else
blanked, newlines kept, so every line and column is the Python file's own.

A literal is taken as written (a raw string's text, or an ordinary one's with its escapes
as C reads them in a C string literal: ``"%d\\n"`` stays an escaped newline); an f-string's
doubled braces are C's single ones and each replacement field a name of its length, whose
value is not known. Strings
assembled at run time (concatenation, ``.format``, templates) are read piece by piece:
what a piece alone does not say stays unknown. Nothing is executed or imported.
"""

from __future__ import annotations

import re

from occlint.readers.source.lexical import blank

# a comment, or a string literal's opening (its prefix letters, its quotes)
_OPENING = re.compile(rb"#[^\n]*|(?<![\w])([rRbBuUfF]{0,2})(\"\"\"|'''|\"|')")
_MARKERS = (b"__global__", b"<<<")
# an f-string's replacement field (no nesting: a name of its length stands for it)
_FIELD = re.compile(rb"\{[^{}\n]*\}")


def cuda_in(data: bytes, kernels: bool | frozenset[bytes] = True) -> bytes | None:
    """The file with only the text of its CUDA-holding string literals kept (see the
    module): those launching a kernel (``<<<``), and those that only define one: every
    one with ``kernels`` True, those naming one of ``kernels`` where it is a set of names
    (the kernels its Python launches call); None where no literal holds what is asked."""
    markers = _MARKERS if kernels else _MARKERS[1:]
    if not any(marker in data for marker in markers):
        return None
    kept: list[tuple[int, int, bool]] = []  # content start, end, an f-string
    at, n = 0, len(data)
    while at < n:
        m = _OPENING.search(data, at)
        if m is None:
            break
        if m[2] is None:  # a comment
            at = m.end()
            continue
        quote, start = m[2], m.end()
        end = _closing(data, start, quote)
        if end < 0:
            break  # an unterminated string: the rest is not read
        text = data[start:end]
        if b"<<<" in text or (kernels and b"__global__" in text and (
                kernels is True or any(name in text for name in kernels))):
            kept.append((start, end, b"f" in m[1].lower()))
        at = end + len(quote)
    if not kept:
        return None
    pieces, last = [], 0
    for start, end, formatted in kept:
        pieces.append(blank(data[last:start]))
        text = data[start:end]
        pieces.append(_unformatted(text) if formatted else text)
        last = end
    pieces.append(blank(data[last:]))
    return b"".join(pieces)


def _closing(data: bytes, start: int, quote: bytes) -> int:
    """Where the literal opened before ``start`` with ``quote`` closes (-1: it does not):
    a backslash escapes the next byte, in a raw string too (``r"\\""`` holds two bytes); a
    one-quote literal ends at its line's end."""
    at = start
    single = len(quote) == 1
    while True:
        end = data.find(quote, at)
        if end < 0:
            return -1
        if single and data.find(b"\n", at, end) >= 0:
            return -1
        backslashes = 0
        k = end - 1
        while k >= start and data[k] == 0x5C:
            backslashes += 1
            k -= 1
        if backslashes % 2 == 0:
            return end
        at = end + 1


def _unformatted(text: bytes) -> bytes:
    """An f-string's text as C: ``{{`` and ``}}`` its braces (one brace and a space, the
    length kept), each replacement field a name as long as it (``{DTYPE}`` a type, ``{N}``
    a value, neither known)."""
    text = text.replace(b"{{", b"\x00 ").replace(b"}}", b"\x01 ")
    text = _FIELD.sub(lambda m: b"_" * len(m[0]), text)
    return text.replace(b"\x00", b"{").replace(b"\x01", b"}")
