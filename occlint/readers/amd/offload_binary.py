"""LLVM OffloadBinary (``.llvm.offloading``, magic 0x10FF10AD), written by clang's new
offload driver (``--offload-new-driver``, ``-fgpu-rdc``). Layout: llvm/Object/OffloadBinary.h
(header: magic, u32 version, u64 size, u64 entry offset, u64 entry size; entry: u16 image
kind, u16 offload kind, u32 flags, u64 string offset, u64 string count, u64 image offset,
u64 image size; string map of (u64 key offset, u64 value offset)). Several binaries may
follow each other, 8-byte aligned."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

from occlint.errors import FormatError
from occlint.readers.span import Span

MAGIC = b"\x10\xff\x10\xad"
_HEADER = struct.Struct("<4sIQQQ")
_ENTRY = struct.Struct("<HHIQQQQ")
_STRING = struct.Struct("<QQ")
IMAGE_KINDS = {0: "none", 1: "object", 2: "bitcode", 3: "cubin", 4: "fatbinary", 5: "ptx"}
# LLVM <= 20 numbers the kinds 1, 2, 3; later versions use bit flags (HIP = 4, SYCL = 8).
OFFLOAD_KINDS = {0: "none", 1: "openmp", 2: "cuda", 3: "hip", 4: "hip", 8: "sycl"}
MAX_STRINGS = 256


@dataclass(frozen=True, slots=True)
class OffloadImage:
    image_kind: str
    kind: str
    triple: str
    arch: str
    image: Span


def read_offload_binary(span: Span) -> Iterator[OffloadImage]:
    pos = 0
    while pos + _HEADER.size <= len(span) and span.startswith(MAGIC, pos):
        _, version, size, entry_offset, entry_size = span.unpack(_HEADER, pos,
                                                                     "OffloadBinary header")
        if version not in (1, 2) or not _HEADER.size <= size <= len(span) - pos:
            raise FormatError(f"OffloadBinary header is invalid (version {version}, "
                              f"size {size})")
        binary = span.sub(pos, size)
        if entry_size < _ENTRY.size:
            raise FormatError("OffloadBinary entry is too small")
        image_kind, offload_kind, _, str_off, n_str, img_off, img_size = binary.unpack(
            _ENTRY, entry_offset, "OffloadBinary entry")
        if n_str > MAX_STRINGS:
            raise FormatError(f"OffloadBinary claims {n_str} strings")
        strings = {}
        for i in range(n_str):
            key_off, value_off = binary.unpack(_STRING, str_off + i * _STRING.size,
                                               "OffloadBinary string map")
            strings[binary.cstring(key_off, 256)] = binary.cstring(value_off, 4096)
        yield OffloadImage(IMAGE_KINDS.get(image_kind, str(image_kind)),
                           OFFLOAD_KINDS.get(offload_kind, str(offload_kind)),
                           strings.get("triple", ""), strings.get("arch", ""),
                           binary.sub(img_off, img_size, "OffloadBinary image"))
        pos += (size + 7) & ~7
