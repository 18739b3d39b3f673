"""NVIDIA fatbin containers (magic 0xBA55ED50) and their entries.

Layout (reference notes nvidia.md §2.2-2.4):

* container header, 16 bytes: u32 magic, u16 version (1), u16 header size (16), u64 size of
  the entries that follow;
* entry header, 64 bytes (``header_size`` may be larger; the rest holds option strings):
  u16 kind (1 PTX, 2 ELF, 8 LTO-IR), u16 version, u32 header size, u64 payload size,
  u32 compressed size, u32 options offset, u16 minor, u16 major, u32 arch (SM number),
  u32 identifier offset, u32 identifier length, u64 flags, u64 reserved, u64 uncompressed
  size; the payload follows the header;
* flags: 0x2000 LZ4 (raw block format), 0x8000 zstd, 0x100000 'a' (arch-specific),
  0x200000 'f' (family).

Every size is checked against the bytes present; decompression is capped by the declared
size (itself capped), so lying headers and decompression bombs end in a FormatError.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from occlint.errors import FormatError
from occlint.readers.span import Span

FATBIN_MAGIC = 0xBA55ED50
FATBIN_MAGIC_BYTES = struct.pack("<I", FATBIN_MAGIC)
KIND_PTX = 1
KIND_ELF = 2
KIND_LTO_IR = 8
KIND_NAMES = {KIND_PTX: "ptx", KIND_ELF: "elf", KIND_LTO_IR: "lto-ir"}
FLAG_LZ4 = 0x2000
FLAG_ZSTD = 0x8000
FLAG_ARCH_SPECIFIC = 0x100000
FLAG_FAMILY = 0x200000
MAX_ENTRIES = 1 << 16
MAX_ENTRY_HEADER = 4096
LZ4_MAX_RATIO = 255  # an LZ4 block cannot expand more than ~255 times

_HEADER = struct.Struct("<IHHQ")
_ENTRY = struct.Struct("<HHIQIIHHIIIQQQ")
assert _HEADER.size == 16 and _ENTRY.size == 64


class FatbinEntry(NamedTuple):
    offset: int  # of the entry header, within the container's body
    kind: int
    header_size: int
    payload_size: int
    compressed_size: int
    major: int
    minor: int
    sm: int
    flags: int
    uncompressed_size: int

    @property
    def variant(self) -> str:
        if self.flags & FLAG_ARCH_SPECIFIC:
            return "a"
        if self.flags & FLAG_FAMILY:
            return "f"
        return ""

    @property
    def arch(self) -> str:
        """sm_90a for SASS, compute_90a for PTX, lto_90a for LTO-IR."""
        prefix = {KIND_ELF: "sm", KIND_PTX: "compute", KIND_LTO_IR: "lto"}.get(self.kind,
                                                                              f"kind{self.kind}")
        return f"{prefix}_{self.sm}{self.variant}"

    @property
    def compression(self) -> str | None:
        lz4, zstd = self.flags & FLAG_LZ4, self.flags & FLAG_ZSTD
        if lz4 and zstd:
            raise FormatError(f"fatbin entry {self.arch} is flagged both LZ4 and zstd "
                              "compressed")
        return "lz4" if lz4 else "zstd" if zstd else None


class FatbinContainer:
    """One fatbin container at the start of ``span``."""

    def __init__(self, span: Span):
        magic, version, header_size, size = span.unpack(_HEADER, 0, "fatbin header")
        if magic != FATBIN_MAGIC:
            raise FormatError("not a fatbin")
        if version != 1:
            raise FormatError(f"unsupported fatbin version {version}")
        if not 16 <= header_size <= 256:
            raise FormatError(f"fatbin header size {header_size} is implausible")
        if size > len(span) - header_size:
            raise FormatError(f"fatbin claims {size} bytes of entries but only "
                              f"{max(len(span) - header_size, 0)} follow its header: "
                              "truncated, or its size field lies")
        self.extent = header_size + size
        self.body = span.sub(header_size, size, "fatbin entries")

    def entries(self) -> tuple[list[FatbinEntry], FormatError | None]:
        """The entries that could be decoded, and the error that stopped the walk (or None).

        An absurd number of entries is an error for the whole container (raised)."""
        out: list[FatbinEntry] = []
        body, pos = self.body, 0
        while pos < len(body):
            if len(out) >= MAX_ENTRIES:
                raise FormatError(f"fatbin holds more than {MAX_ENTRIES} entries (corrupted or "
                                  "hostile)")
            try:
                if len(body) - pos < _ENTRY.size and not any(body.bytes(pos, len(body) - pos)):
                    break  # zero padding
                entry = parse_entry(body, pos)
            except FormatError as exc:
                return out, exc
            if entry is None:
                break
            out.append(entry)
            pos += entry.header_size + entry.payload_size
        return out, None

    def payload(self, entry: FatbinEntry) -> Span:
        """The stored (possibly compressed) payload."""
        return self.body.sub(entry.offset + entry.header_size, entry.payload_size,
                             f"fatbin entry {entry.arch} payload")


def parse_entry(body: Span, pos: int) -> FatbinEntry | None:
    """The entry header at ``pos`` (None for an all-zero header: padding)."""
    (kind, _, header_size, payload_size, compressed_size, _, minor, major, sm, _, _, flags, _,
     uncompressed_size) = body.unpack(_ENTRY, pos, "fatbin entry header")
    if kind == 0 and header_size == 0 and payload_size == 0:
        return None
    if not _ENTRY.size <= header_size <= MAX_ENTRY_HEADER:
        raise FormatError(f"fatbin entry at offset {pos:#x} has a header size of {header_size} "
                          "bytes (corrupted?)")
    room = len(body) - pos - header_size
    if payload_size > room:
        raise FormatError(f"fatbin entry at offset {pos:#x} claims {payload_size} payload "
                          f"bytes but only {max(room, 0)} remain in the fatbin: truncated, or "
                          "its size field lies")
    entry = FatbinEntry(pos, kind, header_size, payload_size, compressed_size, major, minor,
                        sm, flags, uncompressed_size)
    if entry.compression is not None:
        if not 0 < compressed_size <= payload_size:
            raise FormatError(f"fatbin entry {entry.arch}: compressed size {compressed_size} "
                              f"does not fit its {payload_size}-byte payload")
        if uncompressed_size == 0:
            raise FormatError(f"fatbin entry {entry.arch} is compressed but records no "
                              "uncompressed size")
    return entry


def decompress(entry: FatbinEntry, stored: Span, limit: int) -> Span:
    """The entry's payload, decompressed when it is compressed (at most ``limit`` bytes)."""
    method = entry.compression
    if method is None:
        return stored
    size = entry.uncompressed_size
    if size > limit:
        raise FormatError(f"fatbin entry {entry.arch} would decompress to {size} bytes, over "
                          f"the {limit}-byte limit")
    data = stored.view(0, entry.compressed_size, "compressed payload")
    try:
        if method == "lz4":
            if size > entry.compressed_size * LZ4_MAX_RATIO + 64:
                raise FormatError(f"fatbin entry {entry.arch} claims {size} bytes from "
                                  f"{entry.compressed_size} LZ4-compressed bytes, more than LZ4 "
                                  "can expand to (corrupted or hostile)")
            import lz4.block

            try:
                out = lz4.block.decompress(data, uncompressed_size=size)
            except (lz4.block.LZ4BlockError, ValueError, MemoryError) as exc:
                raise FormatError(f"fatbin entry {entry.arch}: LZ4 payload is corrupted or "
                                  f"decompresses to more than its declared {size} bytes "
                                  f"({exc})") from None
            eof = True
        else:
            from occlint.readers.amd.bundle import decompress_capped

            out, eof, _ = decompress_capped("zstd", data, size + 1)
    finally:
        data.release()
    if len(out) != size:
        more = "more than " if len(out) > size else ""
        raise FormatError(f"fatbin entry {entry.arch} decompresses to {more}{len(out)} bytes, "
                          f"its header says {size}")
    if not eof:
        raise FormatError(f"fatbin entry {entry.arch}: compressed stream is truncated")
    return Span(out)
