"""Compressed offload bundles (CCOB) read front to back while they are decompressed.

A compressed bundle is never decompressed whole: :class:`Inflater` produces its bytes a
bounded amount at a time (hashing them as they pass), :class:`BundleStream` parses the
bundle header from the first bytes and then hands out one entry at a time, in offset order,
each under :data:`MAX_ENTRY_BYTES`; the bytes between and after the entries are decompressed
and dropped. A header that lies, or a decompression bomb, so costs the memory of one entry
at most (a stream that decompresses to less or more than its header says is found at the
end, as before, and nothing read from it is reported).

Errors are those of decompressing the bundle whole, in the same order: a corrupted stream,
a length that differs from the header's, a stream that ends early, then a payload that is
not an offload bundle, then the bundle header's own errors.
"""

from __future__ import annotations

import hashlib
import struct
import zlib

from occlint.errors import FormatError
from occlint.readers.amd.bundle import (
    BUNDLE_MAGIC,
    ZSTD_SLACK,
    BundleEntry,
    CompressedBundle,
    corrupted_streams,
    entry_table,
)
from occlint.readers.formats import join_entry, needs_whole
from occlint.readers.span import Span, beyond

MAX_ENTRY_BYTES = 512 << 20  # one entry held in memory at a time; real ones are far smaller
IN_STEP = 1 << 16  # compressed bytes fed at a time (zlib copies what it leaves unconsumed)
OUT_STEP = 16 << 20  # decompressed bytes produced at a time while skipping or draining
NOT_A_BUNDLE = "compressed bundle does not hold an offload bundle"


class StreamBroken(FormatError):
    """The compressed stream itself is at fault (corrupted, or shorter than its header
    says): the whole compressed bundle fails, with :meth:`BundleStream.finish`'s error."""


class Inflater:
    """A zlib or zstd stream decompressed front to back: at most ``cap`` bytes come out,
    and what is held at any time is bounded whatever the stream claims."""

    def __init__(self, method: str, payload: memoryview, cap: int):
        self.method = method
        self.payload = payload
        self.available = len(payload)
        self.cap = cap
        self.fed = 0  # compressed bytes handed to the decompressor
        self.produced = 0  # decompressed bytes handed out
        self.md5: hashlib._Hash | None = hashlib.md5()  # None: not wanted any more
        self._tail = b""  # zlib: fed but not yet consumed
        self._pending = b""  # zstd: produced beyond what was asked for, from _at on
        self._at = 0
        self.broken: StreamBroken | None = None  # a corrupted stream stays corrupted
        if method == "zlib":
            self._dec = zlib.decompressobj()
        elif method == "zstd":
            import zstandard

            self._dec = zstandard.ZstdDecompressor().decompressobj()
        else:
            raise FormatError(f"unsupported compression {method!r}")

    @property
    def eof(self) -> bool:
        return self._dec.eof

    @property
    def consumed(self) -> int:
        """Compressed bytes the stream took (its end, once ``eof``)."""
        unused = len(self._dec.unused_data) if self._dec.eof else 0
        return min(self.fed, self.available) - len(self._tail) - unused

    def _produce(self, want: int) -> bytes:
        """Up to ``want`` (>= 1) new bytes; b'' at the end of the stream or its input."""
        if self.broken is not None:
            raise self.broken
        try:
            return self._decompress(want)
        except StreamBroken as exc:
            self.broken = exc
            raise

    def _decompress(self, want: int) -> bytes:
        with corrupted_streams(self.method, StreamBroken):
            if self.method == "zlib":
                while not self._dec.eof:
                    if not self._tail:
                        if self.fed >= len(self.payload):
                            return b""
                        self._tail = self.payload[self.fed:self.fed + IN_STEP]
                        self.fed += len(self._tail)
                    out = self._dec.decompress(self._tail, want)
                    self._tail = self._dec.unconsumed_tail
                    if out:
                        return out
                return b""
            if self._at < len(self._pending):
                out = self._pending[self._at:self._at + want]
                self._at += len(out)
                return out
            while not self._dec.eof and self.fed < len(self.payload):
                # one input byte expands to at most ~32 KiB: a step this small cannot
                # produce more than ``want`` + ZSTD_SLACK (see bundle.decompress_capped)
                step = max(1, min(1 << 20, (want + ZSTD_SLACK) >> 15))
                part = self._dec.decompress(self.payload[self.fed:self.fed + step])
                self.fed += step
                if part:
                    self._pending, self._at = part, min(want, len(part))
                    return part[:want]
            return b""

    def read(self, size: int) -> bytearray:
        """The next ``size`` bytes (fewer at the end of the stream or at the cap)."""
        buf = bytearray(size)  # zero pages until written: memory grows with the data
        view = memoryview(buf)
        got = 0
        while got < size:
            chunk = self._produce(min(size - got, OUT_STEP, self.cap - self.produced)) \
                if self.produced < self.cap else b""
            if not chunk:
                break
            view[got:got + len(chunk)] = chunk
            got += len(chunk)
            self.produced += len(chunk)
            if self.md5 is not None:
                self.md5.update(chunk)
        view.release()
        if got < size:
            del buf[got:]
        return buf

    def skip(self, size: int | None = None) -> None:
        """Drop the next ``size`` bytes (None: up to the end of the stream, or the cap)."""
        left = self.cap if size is None else size
        while left > 0 and self.produced < self.cap:
            chunk = self._produce(min(left, OUT_STEP, self.cap - self.produced))
            if not chunk:
                return
            left -= len(chunk)
            self.produced += len(chunk)
            if self.md5 is not None:
                self.md5.update(chunk)


class BundleStream:
    """The offload bundle inside a compressed bundle, read front to back."""

    def __init__(self, ccob: CompressedBundle, span: Span, limit: int):
        if ccob.uncompressed_size > limit:
            raise FormatError(f"compressed bundle would decompress to {ccob.uncompressed_size} "
                              f"bytes, over the {limit}-byte limit")
        self.ccob = ccob
        self.length = ccob.uncompressed_size  # what the header says
        end = ccob.total_size if ccob.total_size is not None else len(span)
        # a view, not a copy: a v1 header (no total size) takes the rest of its section
        self._payload = span.view(ccob.header_size, end - ccob.header_size,
                                  "compressed payload")
        self.inflater = Inflater(ccob.method, self._payload, self.length + 1)
        self.entries: list[BundleEntry] = []

    @property
    def pos(self) -> int:
        return self.inflater.produced

    def _read(self, offset: int, size: int, what: str = "data") -> bytearray:
        """Bytes ``[offset, offset + size)`` of the bundle; offsets only increase."""
        if offset < 0 or size < 0 or offset + size > self.length:
            raise beyond(what, offset, size, self.length)
        if offset < self.pos:
            raise FormatError(f"{what} at offset {offset:#x} lies before bytes already read")
        self.inflater.skip(offset - self.pos)
        data = self.inflater.read(size)
        if len(data) < size:
            raise StreamBroken("the stream ends before its header's size")
        return data

    def header(self) -> list[BundleEntry]:
        """The bundle's entries. FormatError: not a bundle, or a bad header (before it,
        :meth:`finish` says whether the stream itself is at fault)."""
        if self.length < len(BUNDLE_MAGIC) or \
                self._read(0, len(BUNDLE_MAGIC)) != BUNDLE_MAGIC:
            self.inflater.md5 = None  # no hash is checked then: drain the rest faster
            raise FormatError(NOT_A_BUNDLE)
        self.entries, _ = entry_table(self._read, self.length)
        return self.entries

    def entry(self, item: BundleEntry) -> Span:
        """One entry's bytes; an entry over MAX_ENTRY_BYTES only its first 64 bytes (what
        tells an entry that is no GPU code from one too large to read)."""
        if item.size > MAX_ENTRY_BYTES:
            return Span(self._read(item.offset, 64, f"bundle entry {item.id!r}"))
        return Span(self._read(item.offset, item.size, f"bundle entry {item.id!r}"))

    def finish(self) -> int:
        """Decompress what is left (dropping it) and check the stream as a whole: its length,
        its end. Returns the bytes of the input this compressed bundle occupies."""
        try:
            self.inflater.skip()
        finally:
            self._payload.release()
        produced = self.inflater.produced
        if produced != self.length:
            more = "more than " if produced > self.length else ""
            raise FormatError(f"compressed bundle decompresses to {more}{produced} bytes, "
                              f"its header says {self.length}")
        if not self.inflater.eof:
            raise FormatError("compressed bundle payload ends before its compressed stream")
        if self.ccob.total_size is not None:
            return self.ccob.total_size
        return self.ccob.header_size + self.inflater.consumed

    def hash_matches(self) -> bool:
        """Call after :meth:`finish`."""
        assert self.inflater.md5 is not None
        return struct.unpack("<Q", self.inflater.md5.digest()[:8])[0] == self.ccob.hash


def read_compressed_bundle(reader, ccob: CompressedBundle, span: Span, limit: int,
                           label: str | None, depth: int) -> int:
    """Read a compressed bundle with ``reader`` (occlint.readers.walker.ContainerWalker),
    decompressed front to back one entry at a time; what its entries give is kept aside
    and reported only once the whole stream proved sound, in the order of the bundle's
    entry table, as if it had been decompressed whole. Returns the bytes of ``span`` it
    occupies."""
    from occlint.model.kernel import ReadResult

    stream = BundleStream(ccob, span, limit)
    try:
        entries = stream.header()
    except FormatError as exc:
        stream.finish()  # a corrupted or short stream is what is wrong, if it is
        if str(exc) != NOT_A_BUNDLE:
            _check_hash(reader, stream, label)
        raise
    device_entries = reader.device_entries(entries, label)
    chosen = reader._select(device_entries, lambda e: e.processor)
    parts: dict[int, ReadResult] = {}
    outer = reader.result
    try:
        for item in sorted(chosen, key=lambda e: e.offset):
            name = join_entry(label, item.id)
            reader.result = parts[id(item)] = ReadResult(path=outer.path)
            try:
                payload = stream.entry(item)
                if item.size > MAX_ENTRY_BYTES and needs_whole(payload):
                    raise FormatError(f"bundle entry of {item.size} bytes is over the "
                                      f"{MAX_ENTRY_BYTES}-byte limit per entry")
                reader.read(payload, name, depth + 1)
            except FormatError as exc:
                if isinstance(exc, StreamBroken):
                    raise
                reader.error(str(exc), name)
    except FormatError:  # the stream broke: its length or end says what is wrong
        reader.result = outer
        stream.finish()
        raise
    finally:
        reader.result = outer
    size = stream.finish()
    _check_hash(reader, stream, label)
    for item in chosen:
        part = parts[id(item)]
        outer.kernels.extend(part.kernels)
        outer.artifacts.extend(part.artifacts)
        for error in part.errors:
            reader.error(error.message, error.entry)
    reader._no_device_code(entries, device_entries, label)
    return size


def _check_hash(reader, stream: BundleStream, label: str | None) -> None:
    if not stream.hash_matches():
        reader.error("compressed bundle hash does not match its contents (corrupted?)",
                     label)
