"""Bounds-checked views of input bytes.

A :class:`Span` is a window ``[start, end)`` of a buffer (``bytes`` or an ``mmap``): readers
slice spans instead of copying, so a 1 GB library is never loaded whole, and every read is
checked, so a lying size field becomes a :class:`FormatError`, never an IndexError.
"""

from __future__ import annotations

import contextlib
import mmap
import struct
from typing import Any

from occlint.errors import FormatError


def beyond(what: str, offset: int, size: int, length: int) -> FormatError:
    """The error of a read of ``size`` bytes at ``offset`` past the end of ``length`` bytes
    (also raised by readers of data that is not held whole, such as streamed bundles)."""
    return FormatError(f"{what} at offset {offset:#x} (+{size} bytes) lies beyond the end of "
                       f"the data ({length} bytes): truncated or corrupted")


class Span:
    __slots__ = ("buf", "end", "start")

    def __init__(self, buf: Any, start: int = 0, end: int | None = None):
        self.buf = buf
        self.start = start
        self.end = len(buf) if end is None else end
        if not 0 <= self.start <= self.end <= len(buf):
            raise FormatError(f"bad span [{start}, {end}) of {len(buf)} bytes")

    def __len__(self) -> int:
        return self.end - self.start

    def _check(self, offset: int, size: int, what: str) -> int:
        if offset < 0 or size < 0 or offset + size > len(self):
            raise beyond(what, offset, size, len(self))
        return self.start + offset

    def unpack(self, fmt: struct.Struct, offset: int, what: str = "header") -> tuple:
        pos = self._check(offset, fmt.size, what)
        return fmt.unpack_from(self.buf, pos)

    def bytes(self, offset: int, size: int, what: str = "data") -> bytes:
        pos = self._check(offset, size, what)
        return bytes(self.buf[pos:pos + size])

    def view(self, offset: int = 0, size: int | None = None, what: str = "data") -> memoryview:
        """Zero-copy view (the caller must not keep it beyond the buffer's lifetime)."""
        size = len(self) - offset if size is None else size
        pos = self._check(offset, size, what)
        return memoryview(self.buf)[pos:pos + size]

    def sub(self, offset: int, size: int, what: str = "data") -> Span:
        pos = self._check(offset, size, what)
        return Span(self.buf, pos, pos + size)

    def find(self, needle: bytes, offset: int = 0) -> int:
        """Offset of ``needle`` at or after ``offset`` within the span, or -1."""
        if offset >= len(self):
            return -1
        pos = self.buf.find(needle, self.start + offset, self.end)
        return -1 if pos < 0 else pos - self.start

    def release(self, offset: int, size: int) -> None:
        """Done with ``[offset, offset + size)``: when the buffer is a file mapping, its whole
        pages there leave the process's resident memory (``MADV_DONTNEED``; read again from
        the file if touched), so that reading a 1 GB library does not make it resident."""
        if not isinstance(self.buf, mmap.mmap) or not hasattr(mmap, "MADV_DONTNEED"):
            return
        first = -(-(self.start + max(offset, 0)) // mmap.PAGESIZE) * mmap.PAGESIZE
        last = min(self.start + offset + size, self.end) // mmap.PAGESIZE * mmap.PAGESIZE
        if last > first:
            with contextlib.suppress(OSError, ValueError):  # advice only: never an error
                self.buf.madvise(mmap.MADV_DONTNEED, first, last - first)

    def startswith(self, magic: bytes, offset: int = 0) -> bool:
        if offset + len(magic) > len(self):
            return False
        pos = self.start + offset
        return self.buf[pos:pos + len(magic)] == magic

    def cstring(self, offset: int, limit: int = 4096, what: str = "string") -> str:
        """A NUL-terminated string starting at ``offset`` (at most ``limit`` bytes)."""
        self._check(offset, 0, what)
        stop = min(self.end, self.start + offset + limit)
        end = self.buf.find(b"\0", self.start + offset, stop)
        if end < 0:
            raise FormatError(f"{what} at offset {offset:#x} is not NUL-terminated")
        return bytes(self.buf[self.start + offset:end]).decode("utf-8", "replace")
