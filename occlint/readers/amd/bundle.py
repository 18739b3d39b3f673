"""Clang offload bundles (``__CLANG_OFFLOAD_BUNDLE__``) and compressed bundles (``CCOB``).

Layouts follow clang's ClangOffloadBundler.rst and llvm/lib/Object/OffloadBundle.cpp:

* bundle: 24-byte magic, u64 entry count, per entry (u64 offset, u64 size, u64 id length,
  id bytes), then the entries' payloads;
* CCOB v1: magic, u16 version, u16 method, u32 uncompressed size, u64 hash (20 bytes);
  v2: ... u32 total size, u32 uncompressed size, u64 hash (24); v3: u64 sizes (32).
  Method 0 = zlib, 1 = zstd. The hash is the low 64 bits of the MD5 of the bundle.

Every size is checked against the bytes actually present, and decompression is streamed
with a hard cap, so lying headers and decompression bombs end in a FormatError.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import struct
import zlib
from dataclasses import dataclass

from occlint.errors import FormatError
from occlint.readers.span import Span

BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
CCOB_MAGIC = b"CCOB"
MAX_ENTRIES = 4096
MAX_ID_LENGTH = 1024
DEFAULT_MAX_DECOMPRESSED = 2 << 30  # 2 GiB; real bundles are far smaller

_COUNT = struct.Struct("<Q")
_ENTRY = struct.Struct("<QQQ")
_CCOB_V1 = struct.Struct("<4sHHIQ")
_CCOB_V2 = struct.Struct("<4sHHIIQ")
_CCOB_V3 = struct.Struct("<4sHHQQQ")
METHODS = {0: "zlib", 1: "zstd"}


@dataclass(frozen=True, slots=True)
class BundleEntry:
    id: str
    offset: int
    size: int

    @property
    def kind(self) -> str:
        """``hip``, ``hipv4``, ``host``, ``openmp``, ..."""
        return self.id.split("-", 1)[0]

    @property
    def target_id(self) -> str:
        """The target id after the 4-field triple: ``gfx90a:xnack+``; '' for host entries."""
        parts = self.id.split("-", 5)
        return parts[5] if len(parts) == 6 else ""

    @property
    def processor(self) -> str:
        return self.target_id.split(":", 1)[0]


def entry_table(read, length: int) -> tuple[list[BundleEntry], int]:
    """The entries of a bundle of ``length`` bytes and the size of its header, read through
    ``read(offset, size, what) -> bytes`` (bounds-checked; offsets only increase, so a bundle
    being decompressed front to back is read the same way as one held whole)."""
    (count,) = _COUNT.unpack(read(len(BUNDLE_MAGIC), _COUNT.size, "bundle entry count"))
    if count > MAX_ENTRIES or count * _ENTRY.size > length:
        raise FormatError(f"offload bundle claims {count} entries: corrupted, or a stray "
                          "magic string")
    pos = len(BUNDLE_MAGIC) + _COUNT.size
    entries = []
    for _ in range(count):
        offset, size, id_len = _ENTRY.unpack(read(pos, _ENTRY.size, "bundle entry header"))
        if id_len > MAX_ID_LENGTH:
            raise FormatError(f"bundle entry id of {id_len} bytes")
        raw_id = read(pos + _ENTRY.size, id_len, "bundle entry id")
        pos += _ENTRY.size + id_len
        try:
            entry_id = raw_id.rstrip(b"\0").decode("ascii")
        except UnicodeDecodeError:
            raise FormatError("bundle entry id is not ASCII") from None
        if size and (offset < pos or offset + size > length):
            raise FormatError(f"bundle entry {entry_id!r} at {offset:#x}+{size:#x} lies "
                              f"outside the bundle ({length} bytes)")
        entries.append(BundleEntry(entry_id, offset, size))
    # Entries must not share bytes: each would be read again, and nested bundles of
    # entries pointing at one payload multiply the work (4096 ** depth).
    placed = sorted((e.offset, e.offset + e.size, e.id) for e in entries if e.size)
    for (_, end, first), (start, _, second) in itertools.pairwise(placed):
        if start < end:
            raise FormatError(f"bundle entries {first!r} and {second!r} overlap: "
                              "corrupted or hostile")
    return entries, pos


class OffloadBundle:
    """An uncompressed offload bundle at the start of ``span``."""

    def __init__(self, span: Span):
        if not span.startswith(BUNDLE_MAGIC):
            raise FormatError("not a clang offload bundle")
        entries, pos = entry_table(span.bytes, len(span))
        self.span = span
        self.entries = entries
        self.header_size = pos
        self.extent = max([pos, *(e.offset + e.size for e in entries)])

    def payload(self, entry: BundleEntry) -> Span:
        return self.span.sub(entry.offset, entry.size, f"bundle entry {entry.id!r}")


@dataclass(frozen=True, slots=True)
class CompressedBundle:
    version: int
    method: str
    header_size: int
    total_size: int | None  # None for v1 (only found by decoding the stream)
    uncompressed_size: int
    hash: int

    @classmethod
    def parse(cls, span: Span) -> CompressedBundle:
        if not span.startswith(CCOB_MAGIC):
            raise FormatError("not a compressed offload bundle")
        (_, version, method) = span.unpack(struct.Struct("<4sHH"), 0, "CCOB header")
        if version == 1:
            _, _, _, uncompressed, digest = span.unpack(_CCOB_V1, 0, "CCOB v1 header")
            total, header = None, _CCOB_V1.size
        elif version == 2:
            _, _, _, total, uncompressed, digest = span.unpack(_CCOB_V2, 0, "CCOB v2 header")
            header = _CCOB_V2.size
        elif version == 3:
            _, _, _, total, uncompressed, digest = span.unpack(_CCOB_V3, 0, "CCOB v3 header")
            header = _CCOB_V3.size
        else:
            raise FormatError(f"unsupported compressed bundle version {version}")
        if method not in METHODS:
            raise FormatError(f"unknown compression method {method} in compressed bundle")
        if total is not None and not header < total <= len(span):
            raise FormatError(f"compressed bundle claims {total} bytes but {len(span)} are "
                              "present: truncated, or its size field lies")
        return cls(version, METHODS[method], header, total, uncompressed, digest)

    def decompress(self, span: Span, limit: int = DEFAULT_MAX_DECOMPRESSED) -> tuple[bytes, int]:
        """(bundle bytes, bytes of ``span`` this compressed bundle occupies).

        Raises FormatError on corrupted streams, decompression bombs and lying sizes."""
        if self.uncompressed_size > limit:
            raise FormatError(f"compressed bundle would decompress to {self.uncompressed_size} "
                              f"bytes, over the {limit}-byte limit")
        end = self.total_size if self.total_size is not None else len(span)
        # a view, not a copy: a v1 header (no total size) takes the rest of its section
        payload = span.view(self.header_size, end - self.header_size, "compressed payload")
        try:
            out, eof, consumed = decompress_capped(self.method, payload,
                                                   self.uncompressed_size + 1)
        finally:
            payload.release()
        if len(out) != self.uncompressed_size:
            more = "more than " if len(out) > self.uncompressed_size else ""
            raise FormatError(f"compressed bundle decompresses to {more}{len(out)} bytes, "
                              f"its header says {self.uncompressed_size}")
        if not eof:
            raise FormatError("compressed bundle payload ends before its compressed stream")
        size = self.total_size if self.total_size is not None else self.header_size + consumed
        return out, size

    def hash_matches(self, data: bytes) -> bool:
        return struct.unpack("<Q", hashlib.md5(data).digest()[:8])[0] == self.hash


ZSTD_SLACK = 4 << 20  # bytes a zstd stream may decompress beyond its cap before it stops


@contextlib.contextmanager
def corrupted_streams(method: str, error: type[FormatError] = FormatError):
    """zlib and zstandard errors (and what a damaged stream makes them raise) as ``error``."""
    try:
        yield
    except (zlib.error, ValueError, MemoryError) as exc:
        raise error(f"{method} stream is corrupted: {exc}") from None
    except Exception as exc:
        if type(exc).__name__ == "ZstdError":
            raise error(f"zstd stream is corrupted: {exc}") from None
        raise


def decompress_capped(method: str, payload, cap: int) -> tuple[bytes, bool, int]:
    """Decompress at most ``cap`` bytes: (output, stream ended, input bytes consumed).

    Memory stays bounded whatever the input claims: zlib takes an output limit; zstd does
    not, so its input is fed in steps small enough that one step cannot expand beyond a
    bounded amount (a zstd block of a few bytes expands to at most 128 KiB): the output
    stays below ``cap`` + ZSTD_SLACK."""
    with corrupted_streams(method):
        if method == "zlib":
            dec = zlib.decompressobj()
            out = dec.decompress(payload, cap)
            consumed = len(payload) - len(dec.unconsumed_tail) - len(dec.unused_data)
            return out, dec.eof, consumed
        if method == "zstd":
            import zstandard

            zdec = zstandard.ZstdDecompressor().decompressobj()
            chunks, total, pos = [], 0, 0
            while pos < len(payload) and total < cap and not zdec.eof:
                # one input byte expands to at most ~32 KiB (a 128 KiB RLE block from 4
                # bytes), so a step of (remaining + slack) >> 15 bytes cannot overshoot the
                # cap by more than the slack (or 128 KiB); without the slack, small entries
                # were fed a few bytes per call (1.7 million calls for one libcurand.so)
                step = max(1, min(1 << 20, (cap - total + ZSTD_SLACK) >> 15))
                part = zdec.decompress(payload[pos:pos + step])
                pos += step
                total += len(part)
                chunks.append(part)
            consumed = min(pos, len(payload)) - (len(zdec.unused_data) if zdec.eof else 0)
            return b"".join(chunks), zdec.eof, consumed
    raise FormatError(f"unsupported compression {method!r}")
