#!/usr/bin/env python3
"""Mutation fuzzer for occlint's readers (issue 8, item 3).

Seeds are the real fixtures (fixtures/amd/**, fixtures/nvidia/**) and containers built from
them, grouped into reader families::

    amd-co    AMD HSA code objects (.hsaco, relocatable .o)
    bundle    clang offload bundles (incl. nested bundles, bundles of CCOBs/fatbins)
    ccob      compressed offload bundles (CCOB v1/v2/v3, zlib/zstd)
    amd-host  host ELFs embedding AMD code (.hip_fatbin, .llvm.offloading, bundled objects)
    cubin     NVIDIA cubins (ET_EXEC, ET_REL)
    fatbin    NVIDIA fatbins (plain, LZ4, zstd; PTX, LTO-IR)
    nv-host   host ELFs embedding fatbins (.nv_fatbin, __nv_relfatbin, scanned .data)
    archive   .whl/.zip archives of the above (incl. fatbin in host ELF in zip)
    sidecar   Triton cache metadata (.json) beside a cubin / code object

Every input is derived from (family, seed, index) alone, so any failure is reproducible::

    python benchmarks/fuzz.py --family cubin --count 100000 --seed 1
    python benchmarks/fuzz.py --family cubin --seed 1 --replay 4711 --save /tmp/x.bin

A seed is a tree of containers (Raw bytes, Bundle, Ccob, Fat, Host, OffBin, Zip, Concat).
One input = a random tree edit (mutate the bytes of one node and re-render the containers
around it with consistent sizes and hashes, or change a container parameter: version,
method, flags, names, lying sizes, overlapping or self-referencing entries, nesting,
decompression bombs), optionally followed by byte-level mutations of the rendered file
(bit/byte flips, truncation, chunk deletion/duplication/splicing, interesting integers
written at structure fields found by parsing: ELF header / section / program headers,
symbols, notes, kernel descriptors, .nv.info records, bundle entries, CCOB headers, fatbin
headers and entries, zip local/central headers and EOCD; size fields set huge; offsets
pointing at themselves).

Failures (recorded per input, saved with --crashers DIR, minimised):

* ``exception``: any exception escaping ``read_bytes`` / ``read_path`` (or, for a sample
  of inputs, the full ``occlint check`` pipeline: analysis, rules, text and JSON output);
* ``multiline``: an error message that is not one line of printable text;
* ``differential``: the memory-mapped path (``read_path``) and the bytes path
  (``read_bytes``) give different kernels, artifacts or error locations;
* ``slow``: more than --time-limit CPU seconds for one input; ``hang``: no progress for
  --hang-limit wall seconds (the worker is killed);
* ``memory``: the worker's peak RSS grew by more than --memory-limit MiB, or it died.

Caps are scaled down for the campaign so that a decompression bomb that honours them
stays fast: ``max_decompressed`` 64 MiB (default 2 GiB), zip members 96 MiB (4 GiB),
spooling above 16 KiB (64 MiB; so that the spooling path is taken often). Work is linear
in the caps, so the bounds carry over.
"""

from __future__ import annotations

import argparse
import bz2
import contextlib
import copy
import hashlib
import json
import multiprocessing as mp
import os
import queue
import random
import resource
import signal
import struct
import sys
import tempfile
import time
import traceback
import unicodedata
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

FAMILIES = ("amd-co", "bundle", "ccob", "amd-host", "cubin", "fatbin", "nv-host", "archive",
            "sidecar")
FUZZ_MAX_DECOMPRESSED = 64 << 20
FUZZ_MAX_MEMBER = 96 << 20
FUZZ_SPOOL_ABOVE = 16 << 10  # members above it are spooled to a temporary file

BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
CCOB_MAGIC = b"CCOB"
FATBIN_MAGIC = b"\x50\xed\x55\xba"
ELF_MAGIC = b"\x7fELF"
OFFLOAD_MAGIC = b"\x10\xff\x10\xad"
MAGICS = (BUNDLE_MAGIC, CCOB_MAGIC, FATBIN_MAGIC, ELF_MAGIC, OFFLOAD_MAGIC, b"PK\x03\x04",
          b"BC\xc0\xde", b"PK\x01\x02", b"PK\x05\x06")


# =============================================================================================
# Container trees
# =============================================================================================
class Node:
    """A part of an input; ``render()`` gives its bytes (cached: nodes are immutable)."""

    _bytes: bytes | None = None
    _fields: list | None = None

    def render(self) -> bytes:
        if self._bytes is None:
            self._bytes = self._render()
        return self._bytes

    def fields(self) -> list[Field]:
        if self._fields is None:
            self._fields = fields_of(self.render())
        return self._fields

    def kids(self) -> list[Node]:
        return []

    def with_kid(self, index: int, kid: Node) -> Node:
        raise NotImplementedError

    def tweak(self, rng: random.Random, ctx: Ctx) -> Node | None:
        """A parameter change (None: this node has none)."""
        return None

    def _render(self) -> bytes:
        raise NotImplementedError

    def count(self) -> int:
        return 1 + sum(k.count() for k in self.kids())


class Raw(Node):
    def __init__(self, data: bytes, fields: list | None = None):
        self._bytes = bytes(data)
        self._fields = fields


def _replace(items: tuple, index: int, value) -> tuple:
    return (*items[:index], value, *items[index + 1:])


def _mutate_list(rng: random.Random, items: tuple) -> tuple:
    """Drop, duplicate, swap or reverse items."""
    items = list(items)
    op = rng.randrange(4)
    if op == 0 and items:
        del items[rng.randrange(len(items))]
    elif op == 1 and items:
        items.insert(rng.randrange(len(items) + 1), items[rng.randrange(len(items))])
    elif op == 2 and len(items) > 1:
        i, j = rng.randrange(len(items)), rng.randrange(len(items))
        items[i], items[j] = items[j], items[i]
    else:
        items.reverse()
    return tuple(items)


WEIRD_STRINGS = ["", "x" * 300, "a\nocclint: error: fake", "tab\there", "\x1b[31mred\x1b[0m",
                 "ünïcödé", "\u2028sep", "../../etc/passwd", "\0inner-nul", "-" * 5,
                 "hipv4-amdgcn-amd-amdhsa--", "hipv4-amdgcn-amd-amdhsa--gfx9999:xnack+",
                 "hip-amdgcn-amd-amdhsa-unknown-gfx90a:sramecc+:xnack-",
                 "host-x86_64-unknown-linux-gnu-"]


class Bundle(Node):
    """``__CLANG_OFFLOAD_BUNDLE__``: entries (id, node); ``place`` overrides (offset, size)."""

    def __init__(self, entries: tuple, align: int = 8, place: tuple = (), count: int | None = None):
        self.entries, self.align, self.place, self.count_override = entries, align, place, count

    def kids(self):
        return [n for _, n in self.entries]

    def with_kid(self, index, kid):
        return Bundle(_replace(self.entries, index, (self.entries[index][0], kid)), self.align,
                      self.place, self.count_override)

    def _render(self):
        entries = self.entries
        size = len(BUNDLE_MAGIC) + 8 + sum(24 + len(i.encode("utf-8", "surrogateescape"))
                                           for i, _ in entries)
        align = max(self.align, 1)
        pos = -(-size // align) * align
        offsets, payloads = [], []
        for _, node in entries:
            data = node.render()
            offsets.append(pos if data else 0)
            payloads.append(data)
            pos = -(-(pos + len(data)) // align) * align
        places = dict(self.place)
        head = bytearray(BUNDLE_MAGIC + struct.pack(
            "<Q", len(entries) if self.count_override is None else self.count_override))
        for k, ((entry_id, _), off, data) in enumerate(zip(entries, offsets, payloads,
                                                           strict=True)):
            raw_id = entry_id.encode("utf-8", "surrogateescape")
            off, size = places.get(k, (off, len(data)))
            head += struct.pack("<QQQ", off & (2**64 - 1), size & (2**64 - 1), len(raw_id))
            head += raw_id
        out = bytearray(head)
        for off, data in zip(offsets, payloads, strict=True):
            if data:
                out += bytes(max(off - len(out), 0))
                out += data
        return bytes(out)

    def tweak(self, rng, ctx):
        n = len(self.entries)
        op = rng.randrange(8)
        if op == 0 or not n:
            return Bundle(_mutate_list(rng, self.entries) if n else
                          (("hipv4-amdgcn-amd-amdhsa--gfx1100", ctx.pick_leaf(rng, "amd-co")),),
                          self.align, (), None)
        if op == 1:  # an entry id from the zoo
            k = rng.randrange(n)
            return Bundle(_replace(self.entries, k, (rng.choice(WEIRD_STRINGS),
                                                     self.entries[k][1])), self.align)
        if op == 2:  # nest: the bundle (or a sibling container) inside itself
            k = rng.randrange(n)
            inner = self if rng.random() < 0.5 else ctx.pick_tree(rng, "bundle")
            return Bundle(_replace(self.entries, k, (self.entries[k][0], inner)), self.align)
        if op == 3:  # overlapping or self-referencing entries
            k = rng.randrange(n)
            choice = rng.randrange(5)
            total = len(self.render())
            off = [0, 8, 24, 32, total - 1, total][rng.randrange(6)] if choice < 3 else \
                rng.randrange(max(total, 1))
            size = rng.choice([1, 64, total, total - off, 2**63, 2**64 - 1, 0])
            return Bundle(self.entries, self.align, ((*self.place, (k, (off, size)))))
        if op == 4:
            return Bundle(self.entries, self.align, self.place,
                          rng.choice([0, n + 1, 4096, 4097, 2**32, 2**63, 2**64 - 1]))
        if op == 5:
            return Bundle(self.entries, rng.choice([1, 8, 64, 4096]), self.place)
        if op == 6:  # many entries sharing one payload region
            k = rng.randrange(n)
            reps = rng.choice([2, 16, 200])
            entries = tuple((f"hipv4-amdgcn-amd-amdhsa--gfx90a-{i}", self.entries[k][1])
                            for i in range(reps))
            return Bundle(entries, self.align)
        k = rng.randrange(n)
        return Bundle(_replace(self.entries, k, (self.entries[k][0],
                                                 ctx.pick_tree(rng, rng.choice(FAMILIES[:7])))),
                      self.align)


def _compress(method: int, data: bytes, level: int = 3) -> bytes:
    if method == 0:
        return zlib.compress(data, 6)
    import zstandard

    return zstandard.ZstdCompressor(level=level).compress(data)


class Ccob(Node):
    """Compressed offload bundle around ``inner``; ``stream`` replaces the compressed bytes."""

    def __init__(self, inner: Node | None, version: int = 2, method: int = 1,
                 declared: int | None = None, total: int | None = None,
                 digest: int | None = None, stream: bytes | None = None):
        self.inner, self.version, self.method = inner, version, method
        self.declared, self.total, self.digest, self.stream = declared, total, digest, stream

    def kids(self):
        return [self.inner] if self.inner is not None else []

    def with_kid(self, index, kid):
        return Ccob(kid, self.version, self.method, self.declared, self.total, self.digest,
                    None)

    def _render(self):
        payload = self.inner.render() if self.inner is not None else b""
        comp = self.stream if self.stream is not None else _compress(self.method, payload)
        digest = self.digest if self.digest is not None else \
            struct.unpack("<Q", hashlib.md5(payload).digest()[:8])[0]
        declared = len(payload) if self.declared is None else self.declared
        if self.version == 1:
            head = struct.pack("<4sHHIQ", CCOB_MAGIC, 1, self.method, declared & 0xFFFFFFFF,
                               digest)
        elif self.version == 3:
            total = 32 + len(comp) if self.total is None else self.total
            head = struct.pack("<4sHHQQQ", CCOB_MAGIC, 3, self.method, total & (2**64 - 1),
                               declared & (2**64 - 1), digest)
        else:
            total = 24 + len(comp) if self.total is None else self.total
            head = struct.pack("<4sHHIIQ", CCOB_MAGIC, self.version & 0xFFFF, self.method,
                               total & 0xFFFFFFFF, declared & 0xFFFFFFFF, digest)
        return head + comp

    def tweak(self, rng, ctx):
        args = dict(inner=self.inner, version=self.version, method=self.method,
                    declared=self.declared, total=self.total, digest=self.digest,
                    stream=self.stream)
        op = rng.randrange(7)
        if op == 0:
            args["version"] = rng.choice([1, 2, 3, 0, 4, 0xFFFF])
        elif op == 1:
            args["method"] = rng.choice([0, 1, 2, 0xFFFF])
            args["stream"] = None
        elif op == 2:
            real = len(self.inner.render()) if self.inner is not None else 0
            args["declared"] = rng.choice([0, 1, real - 1, real + 1, real * 2, 2**32 - 1,
                                           2**63, FUZZ_MAX_DECOMPRESSED,
                                           FUZZ_MAX_DECOMPRESSED + 1, 2 << 30])
        elif op == 3:
            args["total"] = rng.choice([0, 1, 23, 24, 31, 32, 2**32 - 1, 2**64 - 1,
                                        rng.randrange(1 << 16)])
        elif op == 4:
            args["digest"] = rng.getrandbits(64)
        elif op == 5:  # decompression bomb
            size, method, stream = ctx.bomb(rng)
            args.update(inner=None, method=method, stream=stream, declared=rng.choice(
                [size, size // 1024, size - 1, size + 1, FUZZ_MAX_DECOMPRESSED,
                 2**32 - 1]), digest=rng.getrandbits(64))
        else:  # the stream of another CCOB, or the stream truncated
            comp = _compress(self.method, self.inner.render() if self.inner else b"")
            args["stream"] = comp[:rng.randrange(len(comp) + 1)]
        return Ccob(**args)


FLAG_LZ4, FLAG_ZSTD, FLAG_A, FLAG_F = 0x2000, 0x8000, 0x100000, 0x200000


@dataclass(frozen=True)
class FatItem:
    kind: int
    sm: int
    flags: int
    node: Node
    compress: str | None = None  # None, "lz4", "zstd"
    extra: bytes = b""  # header bytes after the 64-byte entry header (option strings)
    declared: int | None = None  # uncompressed size override
    stream: bytes | None = None  # compressed bytes override
    version: int = 0x0101


class Fat(Node):
    """A fatbin container (0xBA55ED50) of FatItems."""

    def __init__(self, items: tuple, version: int = 1, header_size: int = 16,
                 size: int | None = None):
        self.items, self.version, self.header_size, self.size = items, version, header_size, size

    def kids(self):
        return [i.node for i in self.items]

    def with_kid(self, index, kid):
        item = self.items[index]
        new = FatItem(item.kind, item.sm, item.flags, kid, item.compress, item.extra, None,
                      None, item.version)
        return Fat(_replace(self.items, index, new), self.version, self.header_size, self.size)

    def _render(self):
        body = bytearray()
        for item in self.items:
            raw = item.node.render()
            flags = item.flags & ~(FLAG_LZ4 | FLAG_ZSTD)
            if item.compress == "lz4":
                import lz4.block

                stored = item.stream if item.stream is not None else \
                    lz4.block.compress(raw, store_size=False)
                flags |= FLAG_LZ4
            elif item.compress == "zstd":
                stored = item.stream if item.stream is not None else _compress(1, raw)
                flags |= FLAG_ZSTD
            else:
                stored = raw
            flags |= item.flags & (FLAG_LZ4 | FLAG_ZSTD)
            padded = stored + bytes(-len(stored) % 8)
            header_size = 64 + len(item.extra)
            declared = len(raw) if item.declared is None else item.declared
            body += struct.pack("<HHIQIIHHIIIQQQ", item.kind & 0xFFFF, item.version,
                                header_size, len(padded),
                                len(stored) & 0xFFFFFFFF if item.compress else 0,
                                64 if item.extra else 0, 0 if item.kind == 1 else 8,
                                (item.sm // 10 if item.kind == 1 else 1) & 0xFFFF,
                                item.sm & 0xFFFFFFFF,
                                0, 0, flags & (2**64 - 1), 0,
                                declared & (2**64 - 1) if item.compress else 0)
            body += item.extra + padded
        size = len(body) if self.size is None else self.size
        return struct.pack("<IHHQ", 0xBA55ED50, self.version & 0xFFFF,
                           self.header_size & 0xFFFF, size & (2**64 - 1)) + \
            bytes(max(self.header_size - 16, 0)) + bytes(body)

    def tweak(self, rng, ctx):
        items = self.items
        op = rng.randrange(9)
        if op == 0 or not items:
            return Fat(_mutate_list(rng, items) if items else
                       (FatItem(2, 90, 0x11, ctx.pick_leaf(rng, "cubin")),), self.version)
        k = rng.randrange(len(items))
        it = items[k]
        if op == 1:
            flip = rng.choice([FLAG_LZ4, FLAG_ZSTD, FLAG_A, FLAG_F, FLAG_LZ4 | FLAG_ZSTD,
                               1 << rng.randrange(64)])
            new = FatItem(it.kind, it.sm, it.flags ^ flip, it.node, it.compress, it.extra,
                          it.declared, it.stream, it.version)
        elif op == 2:
            new = FatItem(rng.choice([0, 1, 2, 4, 8, 16, 0xFFFF]), it.sm, it.flags, it.node,
                          it.compress, it.extra, it.declared, it.stream, it.version)
        elif op == 3:
            new = FatItem(it.kind, rng.choice([0, 1, 19, 20, 52, 75, 90, 100, 120, 255, 256,
                                               2**32 - 1]), it.flags, it.node, it.compress,
                          it.extra, it.declared, it.stream, it.version)
        elif op == 4:
            new = FatItem(it.kind, it.sm, it.flags, it.node,
                          rng.choice([None, "lz4", "zstd"]), it.extra, None, None, it.version)
        elif op == 5:
            real = len(it.node.render())
            new = FatItem(it.kind, it.sm, it.flags, it.node, it.compress or "zstd", it.extra,
                          rng.choice([0, 1, real - 1, real + 1, real * 300, 2**32,
                                      FUZZ_MAX_DECOMPRESSED + 1, 2**64 - 1]), it.stream,
                          it.version)
        elif op == 6:  # bomb
            size, method, stream = ctx.bomb(rng, lz4_ok=True)
            comp = {0: "zstd", 1: "zstd", 2: "lz4"}[method] if method else "zstd"
            if method == 0:  # zlib is not a fatbin method: use zstd
                size, method, stream = ctx.bomb(rng, methods=(1,))
            new = FatItem(2, it.sm, it.flags, Raw(b""), comp, it.extra,
                          rng.choice([size, size - 1, size // 255, FUZZ_MAX_DECOMPRESSED]),
                          stream, it.version)
        elif op == 7:
            new = FatItem(it.kind, it.sm, it.flags, it.node, it.compress,
                          rng.choice([b"", bytes(8), b"-O3 --generate-line-info\0\0\0\0\0\0\0\0",
                                      rng.randbytes(rng.randrange(1, 64)), bytes(4033)]),
                          it.declared, it.stream, it.version)
        else:
            return Fat(items, rng.choice([0, 1, 2]), rng.choice([0, 8, 16, 17, 64, 256, 257]),
                       rng.choice([None, 0, 1, 2**32, 2**63]))
        return Fat(_replace(items, k, new), self.version, self.header_size, self.size)


class Host(Node):
    """A host ELF (any class / byte order) with the given sections (name, node, sh_type)."""

    def __init__(self, sections: tuple, bits: int = 64, endian: str = "<", machine: int = 62,
                 e_type: int = 1):
        self.sections, self.bits, self.endian, self.machine = sections, bits, endian, machine
        self.e_type = e_type

    def kids(self):
        return [n for _, n, _ in self.sections]

    def with_kid(self, index, kid):
        name, _, sh_type = self.sections[index]
        return Host(_replace(self.sections, index, (name, kid, sh_type)), self.bits,
                    self.endian, self.machine, self.e_type)

    def _render(self):
        e, is64 = self.endian, self.bits == 64
        names = bytearray(b"\0")
        name_offs = []
        for name, _, _ in [*self.sections, (".shstrtab", None, 3)]:
            name_offs.append(len(names))
            names += name.encode("utf-8", "surrogateescape") + b"\0"
        ehsize = 64 if is64 else 52
        out = bytearray(ehsize)
        placed = []
        for (_, node, sh_type), _ in zip(self.sections, name_offs, strict=False):
            data = node.render()
            out += bytes(-len(out) % 16)
            placed.append((len(out), len(data), sh_type))
            if sh_type != 8:
                out += data
        out += bytes(-len(out) % 8)
        placed.append((len(out), len(names), 3))
        out += names
        out += bytes(-len(out) % 8)
        shoff = len(out)
        shdr = struct.Struct(e + ("IIQQQQIIQQ" if is64 else "IIIIIIIIII"))
        out += bytes(shdr.size)  # null section
        for (off, size, sh_type), name_off in zip(placed, name_offs, strict=True):
            out += shdr.pack(name_off, sh_type, 2 if sh_type != 3 else 0, 0, off, size, 0, 0,
                             16 if sh_type != 3 else 1, 0)
        ident = ELF_MAGIC + bytes([2 if is64 else 1, 1 if e == "<" else 2, 1, 0]) + bytes(8)
        if is64:
            head = ident + struct.pack(e + "HHIQQQIHHHHHH", self.e_type, self.machine, 1, 0, 0,
                                       shoff, 0, 64, 0, 0, shdr.size, len(placed) + 1,
                                       len(placed))
        else:
            head = ident + struct.pack(e + "HHIIIIIHHHHHH", self.e_type, self.machine, 1, 0, 0,
                                       shoff, 0, 52, 0, 0, shdr.size, len(placed) + 1,
                                       len(placed))
        out[:ehsize] = head
        return bytes(out)

    def tweak(self, rng, ctx):
        op = rng.randrange(5)
        secs = self.sections
        if op == 0:
            return Host(secs, rng.choice([32, 64]), rng.choice("<>"), self.machine, self.e_type)
        if op == 1 and secs:
            k = rng.randrange(len(secs))
            name = rng.choice([".hip_fatbin", ".nv_fatbin", "__nv_relfatbin", ".llvm.offloading",
                               ".data", ".rodata", ".data.rel.ro", ".ldata", ".text",
                               "__CLANG_OFFLOAD_BUNDLE__hipv4-amdgcn-amd-amdhsa--gfx1100",
                               "__CLANG_OFFLOAD_BUNDLE__host-x86_64-unknown-linux-gnu-",
                               "__CLANG_OFFLOAD_BUNDLE__" + rng.choice(WEIRD_STRINGS),
                               "\udcff\udcfe.bad"])
            return Host(_replace(secs, k, (name, secs[k][1], secs[k][2])), self.bits,
                        self.endian, self.machine, self.e_type)
        if op == 2 and secs:
            k = rng.randrange(len(secs))
            return Host(_replace(secs, k, (secs[k][0], secs[k][1], rng.choice([1, 8, 0, 7]))),
                        self.bits, self.endian, self.machine, self.e_type)
        if op == 3:
            return Host(_mutate_list(rng, secs) if secs else secs, self.bits, self.endian,
                        self.machine, self.e_type)
        return Host(secs, self.bits, self.endian, rng.choice([62, 3, 183, 224, 190, 0, 0xFFFF]),
                    rng.choice([1, 2, 3, 4]))


class OffBin(Node):
    """An LLVM OffloadBinary (0x10FF10AD) around one image."""

    def __init__(self, image: Node, triple: str = "amdgcn-amd-amdhsa", arch: str = "gfx1100",
                 image_kind: int = 1, offload_kind: int = 3, version: int = 1):
        self.image, self.triple, self.arch = image, triple, arch
        self.image_kind, self.offload_kind, self.version = image_kind, offload_kind, version

    def kids(self):
        return [self.image]

    def with_kid(self, index, kid):
        return OffBin(kid, self.triple, self.arch, self.image_kind, self.offload_kind,
                      self.version)

    def _render(self):
        strings = [(b"triple", self.triple.encode("utf-8", "surrogateescape")),
                   (b"arch", self.arch.encode("utf-8", "surrogateescape"))]
        header, entry = 32, 40
        map_off = header + entry
        str_off = map_off + 16 * len(strings)
        blob, offsets = bytearray(), []
        for key, value in strings:
            k = str_off + len(blob)
            blob += key + b"\0"
            v = str_off + len(blob)
            blob += value + b"\0"
            offsets.append((k, v))
        image = self.image.render()
        img_off = str_off + len(blob)
        img_off += -img_off % 8
        size = img_off + len(image)
        size += -size % 8
        out = bytearray(struct.pack("<4sIQQQ", OFFLOAD_MAGIC, self.version, size, header, entry))
        out += bytes(header - len(out))
        out += struct.pack("<HHIQQQQ", self.image_kind, self.offload_kind, 0, map_off,
                           len(strings), img_off, len(image))
        for k, v in offsets:
            out += struct.pack("<QQ", k, v)
        out += blob
        out += bytes(img_off - len(out))
        out += image
        out += bytes(size - len(out))
        return bytes(out)

    def tweak(self, rng, ctx):
        return OffBin(self.image, rng.choice(["amdgcn-amd-amdhsa", "nvptx64-nvidia-cuda",
                                              *WEIRD_STRINGS]),
                      rng.choice(["gfx1100", "gfx90a:xnack+", "sm_90", *WEIRD_STRINGS]),
                      rng.choice([0, 1, 2, 3, 4, 5, 0xFFFF]), rng.choice([0, 1, 2, 3, 4, 8, 77]),
                      rng.choice([1, 1, 2, 3, 0]))


def _dos_time() -> tuple[int, int]:
    return (12 << 11) | (0 << 5), ((2024 - 1980) << 9) | (1 << 5) | 1


@dataclass(frozen=True)
class ZipItem:
    name: str
    node: Node
    method: int = 8  # 0 stored, 8 deflate, 12 bzip2, 14 lzma (garbage)
    stream: bytes | None = None  # compressed bytes override (bombs)
    size: int | None = None  # declared uncompressed size override
    crc: int | None = None


class Zip(Node):
    """A zip archive written by hand (so that sizes, CRCs and streams can lie)."""

    def __init__(self, members: tuple, comment: bytes = b"", cd_count: int | None = None):
        self.members, self.comment, self.cd_count = members, comment, cd_count

    def kids(self):
        return [m.node for m in self.members]

    def with_kid(self, index, kid):
        m = self.members[index]
        return Zip(_replace(self.members, index, ZipItem(m.name, kid, m.method)), self.comment,
                   self.cd_count)

    def _render(self):
        out, central = bytearray(), bytearray()
        dtime, ddate = _dos_time()
        for m in self.members:
            data = m.node.render()
            if m.stream is not None:
                stream = m.stream
            elif m.method == 8:
                c = zlib.compressobj(6, zlib.DEFLATED, -15)
                stream = c.compress(data) + c.flush()
            elif m.method == 12:
                stream = bz2.compress(data)
            elif m.method == 14:
                stream = b"\x09\x14\x05\x00" + data[:64]
            else:
                stream = data
            crc = zlib.crc32(data) if m.crc is None else m.crc
            size = len(data) if m.size is None else m.size
            name = m.name.encode("utf-8", "surrogateescape")
            flags = 0x800
            offset = len(out)
            out += struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, flags, m.method, dtime,
                               ddate, crc & 0xFFFFFFFF, len(stream) & 0xFFFFFFFF,
                               size & 0xFFFFFFFF, len(name), 0) + name + stream
            central += struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, 20, flags, m.method,
                                   dtime, ddate, crc & 0xFFFFFFFF, len(stream) & 0xFFFFFFFF,
                                   size & 0xFFFFFFFF, len(name), 0, 0, 0, 0, 0o644 << 16,
                                   offset) + name
        count = len(self.members) if self.cd_count is None else self.cd_count
        cd_off = len(out)
        out += central
        out += struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, count & 0xFFFF, count & 0xFFFF,
                           len(central), cd_off, len(self.comment)) + self.comment
        return bytes(out)

    def tweak(self, rng, ctx):
        members = self.members
        op = rng.randrange(7)
        if op == 0 or not members:
            return Zip(_mutate_list(rng, members) if members else
                       (ZipItem("k.hsaco", ctx.pick_leaf(rng, "amd-co")),), self.comment)
        k = rng.randrange(len(members))
        m = members[k]
        if op == 1:
            new = ZipItem(m.name, m.node, rng.choice([0, 8, 12, 14, 99]))
        elif op == 2:
            suffix = rng.choice([".so", ".hsaco", ".cubin", ".fatbin", ".so.1", ".o", ".txt",
                                 "/", ""])
            new = ZipItem(rng.choice(WEIRD_STRINGS) + suffix, m.node, m.method)
        elif op == 3:  # zip bomb
            size, _, stream = ctx.bomb(rng, methods=(0,), raw_deflate=True)
            new = ZipItem(m.name, Raw(b""), 8, stream,
                          rng.choice([size, size - 1, size // 1000, 2**32 - 1, FUZZ_MAX_MEMBER]),
                          rng.getrandbits(32))
        elif op == 4:
            data = m.node.render()
            new = ZipItem(m.name, m.node, m.method, None,
                          rng.choice([0, len(data) - 1, len(data) + 1, 2**32 - 1]),
                          rng.choice([None, rng.getrandbits(32)]))
        elif op == 5:  # nesting: a zip or an archive-worthy tree as a member
            new = ZipItem(rng.choice(["inner.zip", "lib/libx.so", "x.whl"]),
                          rng.choice([self, ctx.pick_tree(rng, rng.choice(FAMILIES[:7]))]),
                          rng.choice([0, 8]))
        else:
            return Zip(members, rng.choice([b"", b"\n" * 10, rng.randbytes(40)]),
                       rng.choice([None, 0, len(members) + 1, 0xFFFF]))
        return Zip(_replace(members, k, new), self.comment, self.cd_count)


class Concat(Node):
    """Containers back to back, with optional padding between them."""

    def __init__(self, parts: tuple, pad: int = 0):
        self.parts, self.pad = parts, pad

    def kids(self):
        return list(self.parts)

    def with_kid(self, index, kid):
        return Concat(_replace(self.parts, index, kid), self.pad)

    def _render(self):
        out = bytearray()
        for p in self.parts:
            out += p.render()
            out += bytes(-len(out) % self.pad if self.pad else 0)
        return bytes(out)

    def tweak(self, rng, ctx):
        return Concat(_mutate_list(rng, self.parts), rng.choice([0, 8, 4096]))


# =============================================================================================
# Structure fields (for targeted integer mutations)
# =============================================================================================
# (offset, width, endian "<" or ">", tag) with tag: "size", "offset", "count", "index", "any"
Field = tuple


def _elf_fields(data: bytes, base: int, out: list, depth: int) -> None:
    if len(data) < 52:
        return
    is64, e = data[4] == 2, "<" if data[5] != 2 else ">"
    out += [(base + 4, 1, e, "any"), (base + 5, 1, e, "any"), (base + 7, 1, e, "any"),
            (base + 8, 1, e, "any"), (base + 16, 2, e, "any"), (base + 18, 2, e, "any")]
    try:
        if is64:
            (phoff, shoff, _, _, _, phnum, _, shnum,
             shstrndx) = struct.unpack_from(e + "QQIHHHHHH", data, 32)
            out += [(base + 32, 8, e, "offset"), (base + 40, 8, e, "offset"),
                    (base + 48, 4, e, "any"), (base + 54, 2, e, "size"), (base + 56, 2, e, "count"),
                    (base + 58, 2, e, "size"), (base + 60, 2, e, "count"),
                    (base + 62, 2, e, "index")]
        else:
            (phoff, shoff, _flags, _, _phentsize, phnum, _shentsize, shnum,
             shstrndx) = struct.unpack_from(e + "IIIHHHHHH", data, 28)
            out += [(base + 28, 4, e, "offset"), (base + 32, 4, e, "offset"),
                    (base + 36, 4, e, "any"), (base + 42, 2, e, "size"), (base + 44, 2, e, "count"),
                    (base + 46, 2, e, "size"), (base + 48, 2, e, "count"),
                    (base + 50, 2, e, "index")]
    except struct.error:
        return
    if is64:
        sh = [(0, 4, "index"), (4, 4, "any"), (8, 8, "any"), (16, 8, "offset"),
              (24, 8, "offset"), (32, 8, "size"), (40, 4, "index"), (44, 4, "any"),
              (48, 8, "any"), (56, 8, "size")]
        ph = [(0, 4, "any"), (8, 8, "offset"), (32, 8, "size"), (40, 8, "size")]
    else:
        sh = [(0, 4, "index"), (4, 4, "any"), (8, 4, "any"), (12, 4, "offset"),
              (16, 4, "offset"), (20, 4, "size"), (24, 4, "index"), (28, 4, "any"),
              (32, 4, "any"), (36, 4, "size")]
        ph = [(0, 4, "any"), (4, 4, "offset"), (16, 4, "size"), (20, 4, "size")]
    shsize = 64 if is64 else 40
    phsize = 56 if is64 else 32
    for i in range(min(phnum, 64)):
        p = phoff + i * phsize
        if p + phsize > len(data):
            break
        out += [(base + p + o, w, e, t) for o, w, t in ph]
    sections = []
    for i in range(min(shnum, 4096)):
        p = shoff + i * shsize
        if p + shsize > len(data):
            break
        out += [(base + p + o, w, e, t) for o, w, t in sh]
        if is64:
            vals = struct.unpack_from(e + "IIQQQQIIQQ", data, p)
        else:
            vals = struct.unpack_from(e + "IIIIIIIIII", data, p)
        sections.append(vals)
    names = b""
    if 0 < shstrndx < len(sections):
        s = sections[shstrndx]
        names = data[s[4]:s[4] + s[5]]

    def name_of(s) -> str:
        end = names.find(b"\0", s[0])
        return names[s[0]:end].decode("latin-1") if end >= 0 else ""

    for s in sections:
        name, sh_type, off, size = name_of(s), s[1], s[4], s[5]
        if sh_type == 8 or off + size > len(data) or size == 0:
            continue
        if sh_type == 2:  # symbols
            entsize = 24 if is64 else 16
            sym = [(0, 4, "index"), (4, 1, "any"), (5, 1, "any"), (6, 2, "index"),
                   (8, 8, "offset"), (16, 8, "size")] if is64 else \
                [(0, 4, "index"), (4, 4, "offset"), (8, 4, "size"), (12, 1, "any"),
                 (13, 1, "any"), (14, 2, "index")]
            for i in range(min(size // entsize, 512)):
                out += [(base + off + i * entsize + o, w, e, t) for o, w, t in sym]
            if data[18:20] == b"\xe0\x00" and is64:  # AMDGPU: kernel descriptors
                _kd_fields(data, sections, s, names, base, out)
        elif sh_type == 7:  # notes
            pos = off
            while pos + 12 <= off + size:
                namesz, descsz, _ = struct.unpack_from(e + "III", data, pos)
                out += [(base + pos, 4, e, "size"), (base + pos + 4, 4, e, "size"),
                        (base + pos + 8, 4, e, "any")]
                pos += 12 + ((namesz + 3) & ~3) + ((descsz + 3) & ~3)
        elif name.startswith(".nv.info") or name == ".nv.compat":
            pos = off
            while pos + 4 <= off + size:
                fmt, value = data[pos], int.from_bytes(data[pos + 2:pos + 4], "little")
                out += [(base + pos, 1, "<", "any"), (base + pos + 1, 1, "<", "any"),
                        (base + pos + 2, 2, "<", "size")]
                if fmt == 4:
                    for q in range(pos + 4, min(pos + 4 + value, off + size) - 3, 4):
                        out.append((base + q, 4, "<", "any"))
                    pos += 4 + value
                else:
                    pos += 4
        elif name == ".nv.callgraph":
            for q in range(off, off + min(size, 256) - 3, 4):
                out.append((base + q, 4, "<", "index"))
        if depth < 3 and (name in (".hip_fatbin", ".nv_fatbin", "__nv_relfatbin",
                                   ".llvm.offloading", ".data", ".rodata", ".nvFatBinSegment")
                          or name.startswith("__CLANG_OFFLOAD_BUNDLE__")):
            _scan(data[off:off + size], base + off, out, depth + 1)


def _kd_fields(data, sections, symtab, names, base, out) -> None:
    strtab = sections[symtab[6]] if symtab[6] < len(sections) else None
    if strtab is None:
        return
    st = data[strtab[4]:strtab[4] + strtab[5]]
    for i in range(min(symtab[5] // 24, 512)):
        p = symtab[4] + i * 24
        name_off, _, _, shndx, value, _size = struct.unpack_from("<IBBHQQ", data, p)
        end = st.find(b"\0", name_off)
        if end < 0 or not st[name_off:end].endswith(b".kd") or not 0 < shndx < len(sections):
            continue
        sec = sections[shndx]
        pos = sec[4] + value - sec[3]
        if pos >= 0 and pos + 64 <= len(data):
            out += [(base + pos + o, w, "<", t) for o, w, t in
                    [(0, 4, "size"), (4, 4, "size"), (8, 4, "size"), (16, 8, "offset"),
                     (44, 4, "any"), (48, 4, "any"), (52, 4, "any"), (56, 2, "any"),
                     (58, 2, "any")]]


def _bundle_fields(data: bytes, base: int, out: list, depth: int) -> int:
    if len(data) < 32:
        return 0
    count = struct.unpack_from("<Q", data, 24)[0]
    out.append((base + 24, 8, "<", "count"))
    pos, end = 32, 32
    for _ in range(min(count, 256)):
        if pos + 24 > len(data):
            break
        off, size, id_len = struct.unpack_from("<QQQ", data, pos)
        out += [(base + pos, 8, "<", "offset"), (base + pos + 8, 8, "<", "size"),
                (base + pos + 16, 8, "<", "size")]
        pos += 24 + id_len
        if size and off + size <= len(data):
            end = max(end, off + size)
            if depth < 3:
                _scan_one(data[off:off + size], base + off, out, depth + 1)
    return end


def _fatbin_fields(data: bytes, base: int, out: list, depth: int) -> int:
    if len(data) < 16:
        return 0
    _, _, hsize, size = struct.unpack_from("<IHHQ", data, 0)
    out += [(base + 4, 2, "<", "any"), (base + 6, 2, "<", "size"), (base + 8, 8, "<", "size")]
    pos, end = hsize, min(hsize + size, len(data))
    n = 0
    while pos + 64 <= end and n < 512:
        kind, _, ehs, psize, _csize, _, _, _, _, _, _, flags, _, _usize = struct.unpack_from(
            "<HHIQIIHHIIIQQQ", data, pos)
        out += [(base + pos + o, w, "<", t) for o, w, t in
                [(0, 2, "any"), (4, 4, "size"), (8, 8, "size"), (16, 4, "size"),
                 (20, 4, "offset"), (28, 4, "any"), (40, 8, "any"), (56, 8, "size")]]
        if ehs < 64 or not psize:
            break
        payload = pos + ehs
        if depth < 3 and kind == 2 and not flags & (FLAG_LZ4 | FLAG_ZSTD):
            _scan_one(data[payload:payload + psize], base + payload, out, depth + 1)
        pos = payload + psize
        n += 1
    return end


def _ccob_fields(data: bytes, base: int, out: list) -> int:
    if len(data) < 8:
        return 0
    version = struct.unpack_from("<H", data, 4)[0]
    out += [(base + 4, 2, "<", "any"), (base + 6, 2, "<", "any")]
    if version == 1:
        out += [(base + 8, 4, "<", "size"), (base + 12, 8, "<", "any")]
        return len(data)
    if version == 3:
        out += [(base + 8, 8, "<", "size"), (base + 16, 8, "<", "size"),
                (base + 24, 8, "<", "any")]
        return struct.unpack_from("<Q", data, 8)[0] if len(data) >= 16 else 0
    out += [(base + 8, 4, "<", "size"), (base + 12, 4, "<", "size"), (base + 16, 8, "<", "any")]
    return struct.unpack_from("<I", data, 8)[0] if len(data) >= 12 else 0


def _zip_fields(data: bytes, base: int, out: list) -> None:
    pos = 0
    while True:
        pos = data.find(b"PK", pos)
        if pos < 0 or len(out) > 4000:
            return
        sig = data[pos:pos + 4]
        if sig == b"PK\x03\x04":
            out += [(base + pos + o, w, "<", t) for o, w, t in
                    [(6, 2, "any"), (8, 2, "any"), (14, 4, "any"), (18, 4, "size"),
                     (22, 4, "size"), (26, 2, "size"), (28, 2, "size")]]
        elif sig == b"PK\x01\x02":
            out += [(base + pos + o, w, "<", t) for o, w, t in
                    [(8, 2, "any"), (10, 2, "any"), (16, 4, "any"), (20, 4, "size"),
                     (24, 4, "size"), (28, 2, "size"), (30, 2, "size"), (32, 2, "size"),
                     (42, 4, "offset")]]
        elif sig == b"PK\x05\x06":
            out += [(base + pos + o, w, "<", t) for o, w, t in
                    [(8, 2, "count"), (10, 2, "count"), (12, 4, "size"), (16, 4, "offset"),
                     (20, 2, "size")]]
        pos += 2


def _scan_one(data: bytes, base: int, out: list, depth: int) -> int:
    """Fields of the structure starting at data[0]; returns its extent (0: unknown)."""
    head = data[:24]
    try:
        if head.startswith(ELF_MAGIC):
            _elf_fields(data, base, out, depth)
            return len(data)
        if head.startswith(BUNDLE_MAGIC):
            return _bundle_fields(data, base, out, depth)
        if head.startswith(CCOB_MAGIC):
            return _ccob_fields(data, base, out)
        if head.startswith(FATBIN_MAGIC):
            return _fatbin_fields(data, base, out, depth)
        if head.startswith(OFFLOAD_MAGIC):
            out += [(base + 4, 4, "<", "any"), (base + 8, 8, "<", "size"),
                    (base + 16, 8, "<", "offset"), (base + 24, 8, "<", "size")]
            if len(data) >= 32:
                entry = struct.unpack_from("<Q", data, 16)[0]
                out += [(base + entry + o, w, "<", t) for o, w, t in
                        [(0, 2, "any"), (2, 2, "any"), (8, 8, "offset"), (16, 8, "count"),
                         (24, 8, "offset"), (32, 8, "size")]]
            return 0
        if head.startswith(b"PK\x03\x04"):
            _zip_fields(data, base, out)
            return len(data)
    except (struct.error, IndexError, ValueError, OverflowError):
        pass
    return 0


def _scan(data: bytes, base: int, out: list, depth: int) -> None:
    """Fields of every container found by magic in ``data`` (back to back or scattered)."""
    for magic in (BUNDLE_MAGIC, CCOB_MAGIC, FATBIN_MAGIC, OFFLOAD_MAGIC):
        pos = data.find(magic)
        n = 0
        while pos >= 0 and n < 64:
            _scan_one(data[pos:], base + pos, out, depth)
            out.append((base + pos, len(magic), "<", "magic"))
            pos = data.find(magic, pos + 1)
            n += 1


def fields_of(data: bytes) -> list[Field]:
    out: list[Field] = []
    if data.startswith(ELF_MAGIC) or data.startswith(b"PK\x03\x04") or \
            data.startswith(OFFLOAD_MAGIC):
        _scan_one(data, 0, out, 0)
    else:
        _scan(data, 0, out, 0)
    return [f for f in out if f[0] >= 0 and f[0] + f[1] <= len(data)]


# =============================================================================================
# Byte-level mutations
# =============================================================================================
INTERESTING = [0, 1, 2, 3, 4, 7, 8, 15, 16, 24, 31, 32, 63, 64, 127, 128, 255, 256, 512, 1000,
               1024, 4095, 4096, 4097, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000,
               0xFFFFFFFF, 2**32, 2**40, 2**62, 2**63 - 1, 2**63, 2**64 - 1]


def _write_int(buf: bytearray, off: int, width: int, endian: str, value: int) -> None:
    value &= (1 << (8 * width)) - 1
    buf[off:off + width] = value.to_bytes(width, "little" if endian == "<" else "big")


def _read_int(buf, off, width, endian) -> int:
    return int.from_bytes(buf[off:off + width], "little" if endian == "<" else "big")


def mutate_bytes(rng: random.Random, data: bytes, fields: list, ctx: Ctx,
                 rounds: int | None = None) -> bytes:
    buf = bytearray(data)
    rounds = rounds or 1 + min(int(rng.expovariate(0.7)), 7)
    for _ in range(rounds):
        n = len(buf)
        op = rng.random()
        if fields and op < 0.40:
            off, width, endian, tag = rng.choice(fields)
            if off + width > len(buf):
                continue
            old = _read_int(buf, off, width, endian)
            choice = rng.random()
            if tag in ("size", "count") and choice < 0.4:
                value = rng.choice([2**(8 * width) - 1, 2**(8 * width - 1), 2**(8 * width - 1) - 1,
                                    n, n + 1, n - 1, old * 2, old * 4096, 0x7FFFFFFF])
            elif tag == "offset" and choice < 0.4:  # self-reference / at another header
                value = rng.choice([off, 0, off - 24, rng.choice(fields)[0], n, n - 1, old + 1,
                                    old - 1])
            elif choice < 0.6:
                value = rng.choice(INTERESTING)
            elif choice < 0.85:
                value = old + rng.choice([-1, 1, -2, 2, -8, 8, -64, 64, rng.randrange(-999, 999)])
            else:
                value = _read_int(buf, *rng.choice(fields)[:3]) if fields else 0
            _write_int(buf, off, width, endian, value)
        elif n and op < 0.55:
            for _ in range(rng.choice([1, 1, 2, 4, 8])):
                pos = rng.randrange(n)
                buf[pos] ^= 1 << rng.randrange(8)
        elif n and op < 0.65:
            for _ in range(rng.choice([1, 2, 4])):
                buf[rng.randrange(n)] = rng.choice([0, 0xFF, 0x7F, 0x80, 0x01, rng.randrange(256)])
        elif n and op < 0.72:  # truncation (often at a structure boundary)
            if fields and rng.random() < 0.5:
                cut = max(0, rng.choice(fields)[0] + rng.randrange(-2, 9))
            else:
                cut = rng.randrange(n)
            del buf[cut:]
        elif n and op < 0.78:
            a = rng.randrange(n)
            b = min(n, a + rng.choice([1, 4, 8, 16, 64, 512, 4096]))
            del buf[a:b]
        elif n and op < 0.84:  # duplicate a chunk
            a = rng.randrange(n)
            b = min(n, a + rng.choice([1, 8, 64, 512, 4096]))
            pos = rng.randrange(len(buf) + 1)
            buf[pos:pos] = buf[a:b]
        elif op < 0.90:  # splice from another seed
            other = ctx.any_bytes(rng)
            if other:
                a = rng.randrange(len(other))
                chunk = other[a:a + rng.choice([16, 64, 512, 4096, 65536])]
                pos = rng.randrange(len(buf) + 1)
                if rng.random() < 0.5:
                    buf[pos:pos + len(chunk)] = chunk
                else:
                    buf[pos:pos] = chunk
        elif op < 0.95:  # a magic at a random place or at an offset field's target
            magic = rng.choice(MAGICS)
            pos = rng.randrange(len(buf) + 1)
            if fields and rng.random() < 0.5:
                f = rng.choice(fields)
                pos = min(_read_int(buf, *f[:3]), len(buf)) if f[0] + f[1] <= len(buf) else pos
            buf[pos:pos + len(magic)] = magic
        else:
            buf += rng.choice([bytes(rng.choice([1, 8, 4096])), rng.randbytes(rng.randrange(1, 64)),
                               bytes(buf[:rng.randrange(len(buf) + 1)])])
    return bytes(buf)


def mutate_msgpack_note(rng: random.Random, data: bytes) -> bytes | None:
    """AMD code object: decode the metadata note, change a value, re-append it at the end of
    the file and point the note section / PT_NOTE at it."""
    import msgpack

    if not data.startswith(ELF_MAGIC) or data[18:20] != b"\xe0\x00" or len(data) < 64:
        return None
    try:
        phoff, shoff = struct.unpack_from("<QQ", data, 32)
        phnum, _, shnum = struct.unpack_from("<HHH", data, 56)
        notes = []
        for i in range(shnum):
            vals = struct.unpack_from("<IIQQQQIIQQ", data, shoff + 64 * i)
            if vals[1] == 7:
                notes.append(("s", shoff + 64 * i, vals[4], vals[5]))
        for i in range(phnum):
            vals = struct.unpack_from("<IIQQQQQQ", data, phoff + 56 * i)
            if vals[0] == 4:
                notes.append(("p", phoff + 56 * i, vals[2], vals[5]))
        if not notes:
            return None
        _, _, off, size = notes[0]
        pos = off
        while pos + 12 <= off + size:
            namesz, descsz, ntype = struct.unpack_from("<III", data, pos)
            name = data[pos + 12:pos + 12 + namesz]
            dpos = pos + 12 + ((namesz + 3) & ~3)
            if name.rstrip(b"\0") == b"AMDGPU" and ntype == 32:
                meta = msgpack.unpackb(data[dpos:dpos + descsz], raw=False,
                                       strict_map_key=False)
                break
            pos = dpos + ((descsz + 3) & ~3)
        else:
            return None
    except (struct.error, ValueError, TypeError, OverflowError,
            msgpack.exceptions.UnpackException):
        return None
    _mutate_json_like(rng, meta, depth=0)
    try:
        desc = msgpack.packb(meta, use_bin_type=True)
    except (TypeError, ValueError, OverflowError):
        return None
    note = struct.pack("<III", 7, len(desc), 32) + b"AMDGPU\0\0" + desc
    note += bytes(-len(note) % 4)
    out = bytearray(data + bytes(-len(data) % 8))
    new_off = len(out)
    out += note
    for kind, hdr, _, _ in notes:
        if kind == "s":
            struct.pack_into("<QQ", out, hdr + 24, new_off, len(note))
        else:
            struct.pack_into("<Q", out, hdr + 8, new_off)
            struct.pack_into("<QQ", out, hdr + 32, len(note), len(note))
    return bytes(out)


JUNK_VALUES = [None, True, False, 0, -1, 1, 3, 2**31, 2**32, 2**63 - 1, -(2**63), 2**64 - 1,
               1e308, float("nan"), float("inf"), -0.0, "", "x", "a\nb", "\x1b[2J", "ü" * 100,
               [], [1, 2], [0, 0, 0], [1, 1, 1], [2**31, 1, 1], [-1, 1, 1], {}, {"x": 1},
               b"bytes", [[[[[]]]]], 64, 32, 1024, 1025, 65536]


def _junk(rng: random.Random):
    """A value of JUNK_VALUES (a copy: the mutations change lists and dicts in place)."""
    return copy.deepcopy(rng.choice(JUNK_VALUES))


def _mutate_json_like(rng: random.Random, obj, depth: int) -> None:
    """Change one value somewhere inside a dict/list tree (in place)."""
    for _ in range(rng.choice([1, 1, 2, 3])):
        node, d = obj, depth
        while True:
            if isinstance(node, dict) and node:
                key = rng.choice(list(node))
                child = node[key]
                if isinstance(child, dict | list) and child and rng.random() < 0.7 and d < 8:
                    node, d = child, d + 1
                    continue
                op = rng.random()
                if op < 0.7:
                    node[key] = _junk(rng)
                elif op < 0.85:
                    del node[key]
                else:
                    node[rng.choice([".name", ".symbol", ".vgpr_count", ".sgpr_count",
                                     ".wavefront_size", ".group_segment_fixed_size",
                                     ".max_flat_workgroup_size", ".reqd_workgroup_size",
                                     ".args", "amdhsa.kernels", "amdhsa.target", "num_warps",
                                     "shared", "target", "name", "warp_size", "backend",
                                     ".agpr_count", ".uses_dynamic_stack"])] = \
                        _junk(rng)
            elif isinstance(node, list) and node:
                i = rng.randrange(len(node))
                child = node[i]
                if isinstance(child, dict | list) and child and rng.random() < 0.7 and d < 8:
                    node, d = child, d + 1
                    continue
                op = rng.random()
                if op < 0.6:
                    node[i] = _junk(rng)
                elif op < 0.8:
                    node.append(node[i] if not isinstance(node[i], dict | list) else
                                json.loads(json.dumps(node[i], default=str)))
                else:
                    del node[i]
            break


# =============================================================================================
# Corpora
# =============================================================================================
def _files(pattern: str, max_size: int = 1 << 30) -> list[Path]:
    return [p for p in sorted(REPO.glob(pattern))
            if p.is_file() and p.stat().st_size <= max_size]


def _bytes(path: str) -> bytes:
    return (REPO / path).read_bytes()


def _decompose_ccob(data: bytes) -> Node:
    try:
        version, method = struct.unpack_from("<HH", data, 4)
        from occlint.readers.amd.bundle import CompressedBundle
        from occlint.readers.span import Span

        ccob = CompressedBundle.parse(Span(data))
        inner, _ = ccob.decompress(Span(data))
        return Ccob(_decompose_bundle(inner), version, method)
    except Exception:
        return Raw(data)


def _decompose_bundle(data: bytes) -> Node:
    try:
        from occlint.readers.amd.bundle import OffloadBundle
        from occlint.readers.span import Span

        bundle = OffloadBundle(Span(data))
        if bundle.extent != len(data):
            return Raw(data)
        return Bundle(tuple((e.id, Raw(data[e.offset:e.offset + e.size]))
                            for e in bundle.entries), 4096)
    except Exception:
        return Raw(data)


def _decompose_fatbin(data: bytes) -> Node:
    try:
        from occlint.readers.nvidia.fatbin import FatbinContainer, decompress
        from occlint.readers.span import Span

        container = FatbinContainer(Span(data))
        entries, error = container.entries()
        if error is not None or container.extent != len(data):
            return Raw(data)
        items = []
        for e in entries:
            raw = decompress(e, container.payload(e), 1 << 30)
            raw = raw.bytes(0, len(raw)) if hasattr(raw, "bytes") else bytes(raw)
            if not e.compression:
                raw = raw[:e.payload_size]
            head = 16 + e.offset
            extra = data[head + 64:head + e.header_size]
            items.append(FatItem(e.kind, e.sm, e.flags & ~(FLAG_LZ4 | FLAG_ZSTD), Raw(raw),
                                 e.compression, extra))
        return Fat(tuple(items))
    except Exception:
        return Raw(data)


def _small_cubins() -> list[Path]:
    return _files("fixtures/nvidia/cubin/*.sm_*.cubin", 8000)


class Ctx:
    """Seeds of every family, bombs, and helpers for the mutators (one per process)."""

    def __init__(self):
        self._trees: dict[str, list[Node]] = {}
        self._bombs: dict[tuple, bytes] = {}
        self._all_bytes: list[bytes] | None = None

    def trees(self, family: str) -> list[Node]:
        if family not in self._trees:
            self._trees[family] = build_corpus(family)
        return self._trees[family]

    def pick_tree(self, rng: random.Random, family: str) -> Node:
        return rng.choice(self.trees(family))

    def pick_leaf(self, rng: random.Random, family: str) -> Node:
        return rng.choice([t for t in self.trees(family) if isinstance(t, Raw)] or
                          self.trees(family))

    def any_bytes(self, rng: random.Random) -> bytes:
        if self._all_bytes is None:
            self._all_bytes = [t.render() for f in ("amd-co", "cubin", "bundle", "fatbin")
                               for t in self.trees(f)]
        return rng.choice(self._all_bytes)

    def bomb(self, rng: random.Random, methods=(0, 1), lz4_ok: bool = False,
             raw_deflate: bool = False) -> tuple[int, int, bytes]:
        """(size, method, stream): a valid stream of ``size`` bytes (a magic, then zeros).
        method 0 zlib (raw deflate for zip), 1 zstd, 2 LZ4 block."""
        choices = list(methods) + ([2] if lz4_ok else [])
        method = rng.choice(choices)
        size = rng.choice(LZ4_BOMBS if method == 2 else BOMBS)
        return size, method, self.bomb_stream(method, size, raw_deflate)

    def bomb_stream(self, method: int, size: int, raw_deflate: bool) -> bytes:
        key = (method, size, raw_deflate)
        if key not in self._bombs:
            self._bombs[key] = _bomb_stream(method, size, raw_deflate)
        return self._bombs[key]

    def prepare(self) -> None:
        """Build every corpus and bomb now, so that their memory and time are not counted
        against the first input that uses them."""
        for family in FAMILIES:
            self.trees(family)
        self.any_bytes(random.Random(0))
        for size in BOMBS:
            for method, raw in ((0, False), (0, True), (1, False)):
                self.bomb_stream(method, size, raw)
        for size in LZ4_BOMBS:
            self.bomb_stream(2, size, False)


BOMBS = (1 << 20, FUZZ_MAX_DECOMPRESSED >> 1, FUZZ_MAX_DECOMPRESSED + 1, 256 << 20)
LZ4_BOMBS = (1 << 16, 1 << 20, 8 << 20)


def _bomb_stream(method: int, size: int, raw_deflate: bool) -> bytes:
    head = BUNDLE_MAGIC if not raw_deflate else ELF_MAGIC
    chunk = bytes(1 << 20)
    if method == 2:
        import lz4.block

        return lz4.block.compress(ELF_MAGIC + bytes(size - 4), store_size=False)
    if method == 0:
        c = zlib.compressobj(9, zlib.DEFLATED, -15 if raw_deflate else 15)
        parts = [c.compress(head)]
        left = size - len(head)
        while left > 0:
            parts.append(c.compress(chunk[:left]))
            left -= len(chunk)
        parts.append(c.flush())
        return b"".join(parts)
    import zstandard

    head = BUNDLE_MAGIC if not raw_deflate else ELF_MAGIC
    c = zstandard.ZstdCompressor(level=1).compressobj(size=size)
    parts = [c.compress(head)]
    left = size - len(head)
    while left > 0:
        parts.append(c.compress(chunk[:left]))
        left -= len(chunk)
    parts.append(c.flush())
    return b"".join(parts)


AMD_IDS = ["hipv4-amdgcn-amd-amdhsa--gfx90a", "hipv4-amdgcn-amd-amdhsa--gfx1100",
           "hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-", "hip-amdgcn-amd-amdhsa--gfx906"]


def build_corpus(family: str) -> list[Node]:
    """The seed trees of one family (deterministic)."""
    co = [Raw(p.read_bytes()) for p in _files("fixtures/amd/co/gamma.*.hsaco")]
    co += [Raw(p.read_bytes()) for p in _files("fixtures/amd/co/ocl_kernels.*")
           if p.suffix in (".hsaco", ".o")]
    gamma = Raw(_bytes("fixtures/amd/co/gamma.gfx1100.hsaco"))
    gamma90a = Raw(_bytes("fixtures/amd/co/gamma.gfx90a.hsaco"))
    cubins = [Raw(p.read_bytes()) for p in _small_cubins()]
    small_cubin = Raw(_bytes("fixtures/nvidia/cubin/mandelbrot.sm_90.cubin"))
    ptx = Raw(b"//\n.version 8.0\n.target sm_90\n.visible .entry kern(\n.param .u64 p)\n{ ret; }\n")

    def small_fat(compress=None) -> Fat:
        return Fat((FatItem(2, 80, 0x11, Raw(_bytes("fixtures/nvidia/cubin/dynsmem.sm_80.cubin")),
                            compress),
                    FatItem(2, 90, 0x11, small_cubin, compress),
                    FatItem(1, 90, 0x11, ptx, compress or "zstd", b"-O3\0\0\0\0\0" + bytes(8))))

    def small_bundle() -> Bundle:
        return Bundle((("host-x86_64-unknown-linux-gnu-", Raw(b"")),
                       (AMD_IDS[0], gamma90a), (AMD_IDS[1], gamma)), 4096)

    if family == "amd-co":
        extra = [Raw(p.read_bytes()) for p in _files("fixtures/amd/co/s*.gfx1100.hsaco")]
        extra += [Raw(_bytes(f"fixtures/amd/co/{n}.hsaco")) for n in  # AGPRs, gfx9 SGPRs
                  ("suite.gfx90a", "suite.gfx942", "suite.gfx906", "sweep.gfx950")]
        return co + extra
    if family == "cubin":
        featured = [p for name in ("spill", "stack", "regheavy", "smem_tiles", "bigparam",
                                   "maxnreg") for p in _files(
                                       f"fixtures/nvidia/cubin/{name}.sm_*.cubin", 32000)]
        return cubins + [Raw(p.read_bytes()) for p in featured] + \
            [Raw(p.read_bytes()) for p in _files("fixtures/nvidia/cubin/rdc/*.cubin", 20000)] + \
            [Raw(p.read_bytes()) for p in _files("fixtures/nvidia/cubin/cuda12.9/*.cubin", 10000)]
    if family == "bundle":
        real = [_decompose_bundle(_bytes(f"fixtures/amd/containers/{n}")) for n in
                ("gamma.bundle.hipfb", "small.bundle.hipfb", "gamma.hipcc_genco.gfx90a.hipfb")]
        raw = [Raw(_bytes("fixtures/amd/containers/concat.bundle+bundle.hipfb"))]
        return real + raw + [
            small_bundle(),
            Bundle(((AMD_IDS[1], small_bundle()),), 8),  # bundle in bundle
            Bundle(((AMD_IDS[1], Ccob(small_bundle())), (AMD_IDS[0], gamma90a)), 64),
            Bundle((("hipv4-nvptx64-nvidia-cuda--sm_90", small_fat()),), 8),
            Bundle((("openmp-amdgcn-amd-amdhsa--gfx1100", OffBin(gamma)),
                    ("hip-amdgcn-amd-amdhsa--gfx1100", Raw(b"BC\xc0\xde" + bytes(60)))), 8),
            Bundle((("host-x86_64-unknown-linux-gnu-", Raw(b"")),), 8),
            Concat((small_bundle(), Ccob(small_bundle(), 3, 1), small_bundle()), 8),
        ]
    if family == "ccob":
        real = [_decompose_ccob(p.read_bytes()) for p in
                _files("fixtures/amd/containers/gamma.ccob*.hipfb")]
        raw = [Raw(p.read_bytes()) for p in _files("fixtures/amd/containers/gamma.ccob*.hipfb")]
        raw.append(Raw(_bytes("fixtures/amd/containers/concat.bundle+ccob2+ccob3.hipfb")))
        synth = [Ccob(small_bundle(), v, m) for v in (1, 2, 3) for m in (0, 1)]
        synth.append(Ccob(Bundle(((AMD_IDS[1], Ccob(small_bundle(), 2, 0)),), 8), 3, 1))
        synth.append(Concat((Ccob(small_bundle(), 2, 1), Ccob(small_bundle(), 1, 0)), 0))
        return real + raw + synth
    if family == "amd-host":
        real = [Raw(p.read_bytes()) for p in _files("fixtures/amd/containers/*", 70000)
                if p.suffix not in (".txt", ".hipfb")]
        synth = [
            Host(((".hip_fatbin", Concat((small_bundle(), Ccob(small_bundle(), 2, 1)), 4096), 1),
                  (".text", Raw(b"\xc3" * 16), 1))),
            Host(((".hip_fatbin", Ccob(small_bundle(), 3, 0), 1),), 32, ">", 20),
            Host(((".llvm.offloading", Concat((OffBin(gamma), OffBin(gamma90a, arch="gfx90a"),
                                               OffBin(Raw(b"BC\xc0\xde" + bytes(28)),
                                                      image_kind=2)), 8), 1),)),
            Host((("__CLANG_OFFLOAD_BUNDLE__hipv4-amdgcn-amd-amdhsa--gfx1100", gamma, 1),
                  ("__CLANG_OFFLOAD_BUNDLE__host-x86_64-unknown-linux-gnu-", Raw(b"\0" * 8), 1))),
            Host(((".data", Concat((Raw(bytes(40)), small_bundle(), Raw(b"CCOB" + bytes(20)),
                                    Ccob(small_bundle())), 8), 1),), 64, "<", 62, 3),
        ]
        return real + synth
    if family == "fatbin":
        real = [Raw(p.read_bytes()) for p in _files("fixtures/nvidia/containers/*.fatbin", 70000)]
        trees = [_decompose_fatbin(p.read_bytes()) for p in
                 _files("fixtures/nvidia/containers/*.fatbin", 70000)]
        synth = [small_fat(), small_fat("lz4"), small_fat("zstd"),
                 Concat((small_fat(), small_fat("lz4")), 8),
                 Fat((FatItem(8, 90, 0x11, Raw(b"BC\xc0\xde" + bytes(60))),
                      FatItem(1, 100, 0x11 | FLAG_A, ptx, "lz4"))),
                 Fat((FatItem(2, 90, 0x11, small_fat()),))]  # a fatbin where an ELF belongs
        return real + trees + synth
    if family == "nv-host":
        real = [Raw(p.read_bytes()) for p in _files("fixtures/nvidia/containers/*", 200000)
                if "." not in p.name or p.suffix in (".o", ".so")]
        synth = [
            Host(((".nv_fatbin", small_fat("lz4"), 1), (".nvFatBinSegment", Raw(bytes(24)), 1))),
            Host(((".nv_fatbin", small_fat(), 1), ("__nv_relfatbin", small_fat("zstd"), 1))),
            Host((("__nv_relfatbin", Concat((small_fat(), small_fat("lz4")), 8), 1),), 32, ">",
                 21),
            Host(((".rodata", Concat((Raw(b"\x50\xed\x55\xba" + bytes(12)), small_fat(),
                                      Raw(bytes(64)), small_fat("zstd")), 16), 1),), 64, "<",
                  62, 3),
        ]
        return real + synth
    if family == "archive":
        lib = Raw(_bytes("fixtures/amd/containers/libgamma_small_ccob2.so"))
        whl = Zip((ZipItem("pkg/__init__.py", Raw(b"")),
                   ZipItem("pkg/kernels/gamma.hsaco", gamma),
                   ZipItem("pkg/kernels/mandel.cubin", small_cubin, 0),
                   ZipItem("pkg/lib/libgamma.so", lib),
                   ZipItem("pkg/kernels/small.fatbin", small_fat("lz4")),
                   ZipItem("pkg/data.bin", Raw(b"not gpu code"))))
        nested = Zip((ZipItem("lib/libnv.so.1", Host(((".nv_fatbin", small_fat("zstd"), 1),))),
                      ZipItem("lib/libamd.so", Host(((".hip_fatbin", Ccob(small_bundle()), 1),))),
                      ZipItem("x/bundle.hipfb", small_bundle(), 12)))
        return [whl, nested, Zip((ZipItem("k.hsaco", gamma, 0),)),
                Zip((ZipItem("dir/", Raw(b"")), ZipItem("a.co", gamma90a, 8)))]
    if family == "sidecar":
        out = []
        for d in sorted((REPO / "fixtures/nvidia/triton").iterdir()):
            for meta in sorted(d.glob("*.json")):
                binary = meta.with_suffix(".cubin")
                if binary.exists():
                    out.append(Raw(binary.read_bytes() + b"\0JSON\0" + meta.read_bytes()))
        hip = {"name": "_Z16gamma_correctionPhmf", "num_warps": 4, "num_stages": 2,
               "shared": 8192, "target": {"backend": "hip", "arch": "gfx1100", "warp_size": 32}}
        out.append(Raw(gamma.render() + b"\0JSON\0" + json.dumps(hip).encode()))
        return out
    raise ValueError(f"unknown family {family!r}")


# =============================================================================================
# One input
# =============================================================================================
def _pick_path(rng: random.Random, node: Node) -> list[tuple[Node, int]]:
    path: list[tuple[Node, int]] = []
    while True:
        kids = node.kids()
        if not kids or rng.random() < 0.35:
            return [*path, (node, -1)]
        i = rng.randrange(len(kids))
        path.append((node, i))
        node = kids[i]


def mutate_tree(rng: random.Random, tree: Node, ctx: Ctx, family: str) -> Node:
    path = _pick_path(rng, tree)
    target = path[-1][0]
    new: Node | None = None
    r = rng.random()
    if r < 0.35:
        new = target.tweak(rng, ctx)
    if new is None:
        data = target.render()
        meta = None
        if data[:4] == ELF_MAGIC and data[18:20] == b"\xe0\x00" and rng.random() < 0.3:
            meta = mutate_msgpack_note(rng, data)
        new = Raw(meta if meta is not None else
                  mutate_bytes(rng, data, target.fields(), ctx))
    for parent, index in reversed(path[:-1]):
        new = parent.with_kid(index, new)
    return new


class Input(NamedTuple):
    data: bytes
    meta: bytes | None  # Triton sidecar JSON (family "sidecar")
    how: str  # which seed, which kinds of mutation
    variant: dict  # command-line options: --target, --device, --block, --grid, ...


# What the inputs are read with: mostly the defaults; else --target / --device selection
# (ReadOptions.targets / .prefer), and for the inputs that go through ``occlint check``,
# launch settings too.
VARIANTS = [{}] * 8 + [
    {"devices": ["w7800"]}, {"devices": ["h100"]}, {"devices": ["mi300x", "h100"]},
    {"devices": ["b200"]}, {"devices": ["t4"]}, {"devices": ["mi250", "rtx4090"]},
    {"targets": ["sm_90"]}, {"targets": ["gfx1100"]}, {"targets": ["sm_90a", "gfx90a"]},
    {"targets": ["gfx11-generic"]}, {"targets": ["sm_80"], "devices": ["a100"]},
    {"hash": True}]
LAUNCHES = [{}, {}, {"block": 1}, {"block": 1024}, {"block": 1025}, {"block": 100000},
            {"grid": 1}, {"grid": 10**9}, {"problem_size": 10**12}, {"dynamic_lds": 2**31},
            {"block": 96, "grid": 7, "dynamic_lds": 65536}]


def make_input(ctx: Ctx, family: str, seed: int, index: int) -> Input:
    """Input ``index`` of ``family`` for ``seed`` (a pure function of the three)."""
    variant = dict(random.Random(f"{family}:{seed}:{index}:options").choice(VARIANTS))
    variant.update(random.Random(f"{family}:{seed}:{index}:launch").choice(LAUNCHES))
    rng = random.Random(f"{family}:{seed}:{index}")
    trees = ctx.trees(family)
    k = rng.randrange(len(trees))
    tree = trees[k]
    if family == "sidecar":
        binary, meta = tree.render().split(b"\0JSON\0", 1)
        r = rng.random()
        if r < 0.6:
            try:
                obj = json.loads(meta)
                _mutate_json_like(rng, obj, 0)
                if rng.random() < 0.05:
                    obj = [obj] * rng.choice([1, 1000])
                meta = json.dumps(obj, default=str).encode()
            except ValueError:
                pass
        elif r < 0.7:
            meta = b"[" * rng.choice([1000, 100000, 600000]) + b"]" * rng.choice([0, 1000])
        elif r < 0.75:
            meta = rng.choice([b"", b"\xff\xfe", b"{" * 5, b"null", b"1e99999", b'"' + b"x" * 100])
        else:
            meta = mutate_bytes(rng, meta, [], ctx)
        if rng.random() < 0.1:
            binary = mutate_bytes(rng, binary, [], ctx, 1)
        return Input(binary, meta, f"seed {k}", variant)
    how = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        tree = mutate_tree(rng, tree, ctx, family)
    data = tree.render()
    how.append(f"tree {k}")
    if rng.random() < 0.35:
        fields = tree.fields() if rng.random() < 0.5 else []
        data = mutate_bytes(rng, data, fields, ctx)
        how.append("bytes")
    if family == "archive" and not data.startswith(b"PK"):
        data = b"PK\x03\x04" + data[4:]
    return Input(data, None, "+".join(how), variant)


# =============================================================================================
# Oracle
# =============================================================================================
def _one_line(text: str) -> bool:
    return all(unicodedata.category(c) not in ("Cc", "Cs", "Zl", "Zp") for c in text)


class Violation(Exception):
    pass


class Differential(Exception):
    pass


def _fuzz_options(variant: dict):
    from occlint.devices.db import shipped_db
    from occlint.readers.loader import ReadOptions

    db = shipped_db()
    return ReadOptions(max_decompressed=FUZZ_MAX_DECOMPRESSED,
                       targets=tuple(variant.get("targets", ())),
                       prefer=tuple(db.get(d).arch_name for d in variant.get("devices", ())),
                       hash_inputs=bool(variant.get("hash")))


@contextlib.contextmanager
def fuzz_caps():
    """Scale the caps down (see the module docstring), also for ``occlint check`` runs;
    restored on exit."""
    import inspect

    from occlint.readers import archive
    from occlint.readers.loader import ReadOptions

    saved = archive.MAX_MEMBER_BYTES, archive.SPOOL_ABOVE, ReadOptions.__init__.__defaults__
    names = [p.name for p in inspect.signature(ReadOptions).parameters.values()
             if p.default is not inspect.Parameter.empty]
    defaults = list(saved[2])
    defaults[names.index("max_decompressed")] = FUZZ_MAX_DECOMPRESSED
    archive.MAX_MEMBER_BYTES, archive.SPOOL_ABOVE = FUZZ_MAX_MEMBER, FUZZ_SPOOL_ABOVE
    ReadOptions.__init__.__defaults__ = tuple(defaults)
    try:
        yield
    finally:
        archive.MAX_MEMBER_BYTES, archive.SPOOL_ABOVE, ReadOptions.__init__.__defaults__ = saved


def _outline(result) -> list:
    return [[(k.name, k.entry, k.arch) for k in result.kernels],
            [(a.entry, a.kind) for a in result.artifacts],
            [(e.file, e.entry) for e in result.errors]]  # OS error texts may differ


def _check_result(result) -> None:
    for error in result.errors:
        line = error.line()
        if not _one_line(line):
            raise Violation(f"multiline error: {line[:300]!r}")


def check_input(inp: Input, via: str, workdir: Path, analyse: bool) -> dict:
    """Read one input as the CLI does; raise on a violation. Returns a small summary."""
    from occlint.readers.loader import read_bytes, read_path

    data, meta, variant = inp.data, inp.meta, inp.variant
    options = _fuzz_options(variant)
    if meta is not None or via == "file" or analyse:
        path = workdir / ("input.whl" if data[:4] == b"PK\x03\x04" else "input.bin")
        path.write_bytes(data)
        side = path.with_suffix(".json")
        if meta is not None:
            side.write_bytes(meta)
        elif side.exists():
            side.unlink()
        result = read_path(path, "input", options)
        from occlint.readers.loader import looks_like_gpu_binary

        looks_like_gpu_binary(path)  # what a directory walk asks first
        if meta is None and via == "file":  # the memory-mapped path and the bytes path agree
            again = read_bytes(data, "input", options)
            if _outline(again) != _outline(result):
                raise Differential(f"read_path and read_bytes differ: {_outline(result)} vs "
                                   f"{_outline(again)}"[:600])
    else:
        result = read_bytes(data, "input", options)
    _check_result(result)
    if analyse:
        from occlint.pipeline.run import Options, execute
        from occlint.reporters import render

        launch = {k: variant[k] for k in ("block", "grid", "problem_size", "dynamic_lds")
                  if k in variant}
        outcome = execute(Options(paths=[str(path)], isolated=True,
                                  devices=list(variant.get("devices", ())),
                                  targets=list(variant.get("targets", ())),
                                  hash_inputs=bool(variant.get("hash")), **launch))
        for error in outcome.doc["errors"]:
            text = f"{error['file']}[{error['entry']}]: {error['message']}"
            if not _one_line(text):
                raise Violation(f"multiline error (check): {text[:300]!r}")
        formats = ["text", "json", "sarif", "github", "gitlab", "junit"]
        if variant.get("hash"):  # as --format html (which hashes the inputs)
            formats.append("html")
        for fmt in formats:
            text = render(fmt, outcome.doc, color=False, statistics=False, quiet=False,
                          device_db=outcome.device_db)
            text.encode("utf-8")  # what writing it to stdout does
            if fmt == "text" and not all(_one_line(line) for line in text.splitlines()):
                raise Violation("text report line with control characters: "
                                f"{next(x for x in text.splitlines() if not _one_line(x))!r}"
                                [:300])
    return {"kernels": len(result.kernels), "errors": len(result.errors),
            "first": result.errors[0].message[:48] if result.errors else ""}


def _signature(exc: BaseException) -> str:
    tb = traceback.extract_tb(exc.__traceback__)
    frames = [f for f in tb if "occlint" in f.filename and "benchmarks" not in f.filename]
    where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "?"
    last = tb[-1] if tb else None
    inner = f"{Path(last.filename).name}:{last.lineno}" if last else "?"
    return f"{type(exc).__name__} at {where} (raised in {inner})"


# =============================================================================================
# Workers and the campaign
# =============================================================================================
@dataclass
class Stats:
    count: int = 0
    kernels: int = 0  # inputs that still gave kernels
    errors: int = 0  # inputs with at least one error
    failures: int = 0
    generator_errors: int = 0  # inputs the fuzzer failed to build (not counted as inputs)
    # analysed inputs whose text report has control characters (names from the binary)
    cpu_max: float = 0.0
    cpu_total: float = 0.0
    rss_max_mib: float = 0.0
    messages: Counter = field(default_factory=Counter)

    def add(self, other: Stats) -> None:
        self.count += other.count
        self.kernels += other.kernels
        self.errors += other.errors
        self.failures += other.failures
        self.generator_errors += other.generator_errors
        self.cpu_max = max(self.cpu_max, other.cpu_max)
        self.cpu_total += other.cpu_total
        self.rss_max_mib = max(self.rss_max_mib, other.rss_max_mib)
        self.messages.update(other.messages)


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class _Alarm(BaseException):
    pass


def _on_alarm(signum, frame):
    raise _Alarm()


def run_range(family: str, seed: int, start: int, stop: int, *, ctx: Ctx, workdir: Path,
              time_limit: float, memory_limit: float, analyse_every: int, via: str,
              progress=None, slot: int = 0, crashers: Path | None = None,
              minimise: bool = True) -> tuple[Stats, list[dict], int]:
    """Fuzz inputs [start, stop) of one family; returns (stats, failures, the index it
    stopped at: ``stop``, or earlier when the worker's peak RSS grew over the limit)."""
    stats, failures = Stats(), []
    baseline = _rss_mib()
    previous_handler = signal.signal(signal.SIGALRM, _on_alarm)
    try:
        return _run_range(family, seed, start, stop, ctx, workdir, time_limit, memory_limit,
                          analyse_every, via, progress, slot, crashers, minimise, stats,
                          failures, baseline)
    finally:
        signal.signal(signal.SIGALRM, previous_handler)


def _run_range(family, seed, start, stop, ctx, workdir, time_limit, memory_limit,
               analyse_every, via, progress, slot, crashers, minimise, stats, failures,
               baseline):
    done = start
    for index in range(start, stop):
        if progress is not None:
            progress[slot] = index
        done = index + 1
        try:
            inp = make_input(ctx, family, seed, index)
        except Exception as exc:  # a bug of the fuzzer itself: count it, go on
            stats.generator_errors += 1
            stats.messages[f"generator: {_signature(exc)}"] += 1
            continue
        mode = via if via != "mixed" else ("file" if index % 8 == 7 else "bytes")
        analyse = bool(analyse_every) and index % analyse_every == analyse_every - 1
        failure = None
        cpu0 = time.process_time()
        signal.setitimer(signal.ITIMER_REAL, max(time_limit * 5, 10))
        try:
            summary = check_input(inp, mode, workdir, analyse)
            stats.kernels += summary["kernels"] > 0
            stats.errors += summary["errors"] > 0
            stats.messages[summary["first"]] += 1
        except _Alarm:
            failure = ("slow", f"over {max(time_limit * 5, 10):.0f} s wall")
        except Violation as exc:
            failure = ("multiline", str(exc))
        except Differential as exc:
            failure = ("differential", str(exc))
        except MemoryError:
            failure = ("memory", "MemoryError")
        except Exception as exc:
            failure = ("exception", _signature(exc) + ": " + str(exc)[:200],
                       "".join(traceback.format_exception(exc))[-4000:])
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        cpu = time.process_time() - cpu0
        stats.count += 1
        stats.cpu_total += cpu
        stats.cpu_max = max(stats.cpu_max, cpu)
        if failure is None and cpu > time_limit:
            failure = ("slow", f"{cpu:.2f} s CPU")
        rss = _rss_mib()
        stats.rss_max_mib = max(stats.rss_max_mib, rss)
        grew = rss - baseline > memory_limit
        if failure is None and grew:
            failure = ("memory", f"peak RSS {rss:.0f} MiB (+{rss - baseline:.0f} MiB)")
        if failure is not None:
            stats.failures += 1
            record = {"family": family, "seed": seed, "index": index, "kind": failure[0],
                      "detail": failure[1], "how": inp.how, "size": len(inp.data),
                      "mode": mode, "analyse": analyse, "variant": inp.variant}
            if len(failure) > 2:
                record["traceback"] = failure[2]
            if crashers is not None:
                record["saved"] = _save_crasher(crashers, record, inp, workdir,
                                                minimise and failure[0] in
                                                ("exception", "multiline", "differential"))
            failures.append(record)
        if grew:
            break  # the peak cannot come down: the parent restarts this worker
    return stats, failures, done


def _save_crasher(directory: Path, record: dict, inp: Input, workdir: Path,
                  minimise: bool) -> str:
    directory.mkdir(parents=True, exist_ok=True)
    stem = f"{record['family']}-{record['seed']}-{record['index']}"
    (directory / f"{stem}.bin").write_bytes(inp.data)
    if inp.meta is not None:
        (directory / f"{stem}.json").write_bytes(inp.meta)
    if minimise:
        small = minimise_input(inp, record, workdir)
        if small is not None and len(small) < len(inp.data):
            (directory / f"{stem}.min.bin").write_bytes(small)
            record["minimised_size"] = len(small)
    (directory / f"{stem}.txt").write_text(json.dumps(record, indent=2) + "\n")
    return str(directory / f"{stem}.bin")


def _same_failure(inp: Input, record: dict, workdir: Path) -> bool:
    try:
        check_input(inp, record["mode"], workdir, record["analyse"])
    except Violation:
        return record["kind"] == "multiline"
    except Differential:
        return record["kind"] == "differential"
    except Exception as exc:
        return record["kind"] == "exception" and record["detail"].startswith(_signature(exc))
    return False


def minimise_input(inp: Input, record: dict, workdir: Path,
                   budget_s: float = 20.0) -> bytes | None:
    """Delta debugging: drop chunks (halving their size) while the same failure remains;
    at most ``budget_s`` seconds."""
    deadline = time.monotonic() + budget_s
    if not _same_failure(inp, record, workdir):
        return None
    data = inp.data
    chunk = max(len(data) // 2, 1)
    while chunk >= 1 and time.monotonic() < deadline:
        pos, changed = 0, False
        while pos < len(data) and time.monotonic() < deadline:
            trial = data[:pos] + data[pos + chunk:]
            if trial and _same_failure(inp._replace(data=trial), record, workdir):
                data, changed = trial, True
            else:
                pos += chunk
        if not changed:
            chunk //= 2
    return data


def _worker(family, seed, tasks, results, progress, slot, args_dict):
    limit = args_dict["address_space"] << 20
    if limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    crashers = Path(args_dict["crashers"]) if args_dict["crashers"] else None
    caps = fuzz_caps() if args_dict["scaled_caps"] else contextlib.nullcontext()
    with caps, tempfile.TemporaryDirectory(prefix="occlint-fuzz-", dir=args_dict["tmp"]) as tmp:
        if args_dict["scaled_caps"]:
            from occlint.readers.loader import ReadOptions

            assert ReadOptions().max_decompressed == FUZZ_MAX_DECOMPRESSED
        ctx = Ctx()
        ctx.prepare()
        workdir = Path(tmp)
        while True:
            task = tasks.get()
            if task is None:
                return
            start, stop = task
            stats, failures, done = run_range(
                family, seed, start, stop, ctx=ctx, workdir=workdir,
                time_limit=args_dict["time_limit"], memory_limit=args_dict["memory_limit"],
                analyse_every=args_dict["analyse_every"], via=args_dict["via"],
                progress=progress, slot=slot, crashers=crashers)
            progress[slot] = -1  # idle: not a hang
            results.put((slot, start, done, stop, stats, failures))
            if done < stop:
                return  # memory high-water mark reached: let the parent restart us


def campaign(family: str, seed: int, count: int, jobs: int, args_dict: dict,
             chunk: int = 500, start: int = 0, log=print) -> tuple[Stats, list[dict]]:
    """Fuzz ``count`` inputs of ``family`` with ``jobs`` worker processes."""
    ctx_mp = mp.get_context("fork")
    tasks = ctx_mp.Queue()
    results = ctx_mp.Queue()
    progress = ctx_mp.Array("q", jobs, lock=False)
    pending = [(s, min(s + chunk, start + count)) for s in range(start, start + count, chunk)]
    for t in pending:
        tasks.put(t)
    outstanding = set(pending)
    workers: dict[int, mp.Process] = {}
    last_move: dict[int, tuple[int, float]] = {}
    total, failures = Stats(), []
    t0 = time.monotonic()
    last_log = t0

    def spawn(slot: int) -> None:
        progress[slot] = -1
        p = ctx_mp.Process(target=_worker, args=(family, seed, tasks, results, progress, slot,
                                                 args_dict), daemon=True)
        p.start()
        workers[slot] = p
        last_move[slot] = (-1, time.monotonic())

    for slot in range(jobs):
        spawn(slot)
    hang_limit = args_dict["hang_limit"]
    while outstanding:
        try:
            slot, s, done, stop, stats, fails = results.get(timeout=2)
            total.add(stats)
            failures += fails
            outstanding.discard(next(t for t in outstanding if t[0] == s and t[1] == stop))
            if done < stop:
                outstanding.add((done, stop))
                tasks.put((done, stop))
                workers[slot].join(timeout=30)
                spawn(slot)
        except queue.Empty:
            pass
        now = time.monotonic()
        for slot, p in list(workers.items()):
            index = progress[slot]
            prev, since = last_move[slot]
            if index != prev:
                last_move[slot] = (index, now)
                continue
            died = not p.is_alive() and p.exitcode not in (0, None)
            if died or (index >= 0 and now - since > hang_limit):
                kind = "hang" if p.is_alive() else "died"
                p.kill()
                p.join()
                task = next((t for t in outstanding if t[0] <= index < t[1]), None)
                failures.append({"family": family, "seed": seed, "index": index, "kind": kind,
                                 "detail": f"worker {'stuck' if kind == 'hang' else 'died'} "
                                           f"(exit {p.exitcode})", "how": "", "size": -1})
                total.failures += 1
                if task is not None:  # its finished inputs were not reported: again
                    outstanding.discard(task)
                    for part in ((task[0], index), (index + 1, task[1])):
                        if part[0] < part[1]:
                            outstanding.add(part)
                            tasks.put(part)
                    total.count += 1  # the failing input itself
                spawn(slot)
        if now - last_log > 60:
            last_log = now
            rate = total.count / max(now - t0, 1e-9)
            log(f"  {family}: {total.count}/{count} inputs, {total.failures} failures, "
                f"{rate:.0f}/s")
    for _ in workers:
        tasks.put(None)
    for p in workers.values():
        p.join(timeout=30)
        if p.is_alive():
            p.kill()
    return total, failures


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--family", action="append", choices=[*FAMILIES, "all"],
                    help="reader family (repeatable; default all)")
    ap.add_argument("--count", type=int, default=10000, help="inputs per family")
    ap.add_argument("--start", type=int, default=0, help="first input index")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2)))
    ap.add_argument("--time-limit", type=float, default=2.0, help="CPU seconds per input")
    ap.add_argument("--hang-limit", type=float, default=120.0, help="wall seconds without "
                    "progress before a worker is killed")
    ap.add_argument("--memory-limit", type=float, default=512.0,
                    help="MiB of peak RSS growth per worker")
    ap.add_argument("--address-space", type=int, default=4096,
                    help="RLIMIT_AS of each worker in MiB (0: none)")
    ap.add_argument("--analyse-every", type=int, default=64, help="every Nth input also goes "
                    "through the full check pipeline (0: never)")
    ap.add_argument("--via", choices=["bytes", "file", "mixed"], default="mixed")
    ap.add_argument("--crashers", default=os.path.join(tempfile.gettempdir(),
                                                       "occlint-fuzz-crashers"),
                    help="directory for failing inputs ('' to not save)")
    ap.add_argument("--json", help="write the per-family results to this JSON file")
    ap.add_argument("--replay", type=int, help="rebuild input INDEX, check it, print the result")
    ap.add_argument("--save", help="with --replay: write the input to this file")
    ap.add_argument("--chunk", type=int, default=500)
    ap.add_argument("--full-caps", action="store_true", help="read with occlint's real caps "
                    "(2 GiB per stream, 4 GiB per zip member) instead of the scaled ones: "
                    "slower, and raise --memory-limit to ~5000")
    args = ap.parse_args(argv)
    families = list(FAMILIES) if not args.family or "all" in args.family else args.family

    if args.replay is not None:
        caps = fuzz_caps() if not args.full_caps else contextlib.nullcontext()
        with caps, tempfile.TemporaryDirectory() as tmp:
            inp = make_input(Ctx(), families[0], args.seed, args.replay)
            if args.save:
                Path(args.save).write_bytes(inp.data)
                if inp.meta is not None:
                    Path(args.save).with_suffix(".json").write_bytes(inp.meta)
            print(f"{families[0]} seed {args.seed} input {args.replay}: {len(inp.data)} "
                  f"bytes ({inp.how}), options {inp.variant}")
            print(check_input(inp, "file", Path(tmp), True))
        return 0

    args_dict = {"time_limit": args.time_limit, "memory_limit": args.memory_limit,
                 "analyse_every": args.analyse_every, "via": args.via,
                 "crashers": args.crashers or None, "hang_limit": args.hang_limit,
                 "address_space": args.address_space, "tmp": "/dev/shm"
                 if os.path.isdir("/dev/shm") else None, "scaled_caps": not args.full_caps}
    report = {"seed": args.seed, "start": args.start, "count": args.count, "families": {},
              "scaled_caps": not args.full_caps,
              "python": sys.version.split()[0], "machine": os.uname().machine,
              "cpus": os.cpu_count()}
    exit_code = 0
    for family in families:
        t0 = time.monotonic()
        stats, failures = campaign(family, args.seed, args.count, args.jobs, args_dict,
                                   args.chunk, args.start)
        wall = time.monotonic() - t0
        kinds = Counter(f["kind"] for f in failures)
        signatures = Counter(f["detail"].split(":")[0] for f in failures)
        print(f"{family}: {stats.count} inputs in {wall:.0f} s ({stats.count / wall:.0f}/s), "
              f"{stats.kernels} still gave kernels, {stats.errors} reported errors, "
              f"{stats.failures} failures {dict(kinds)}; max CPU/input {stats.cpu_max:.3f} s, "
              f"peak RSS {stats.rss_max_mib:.0f} MiB"
              + (f"; {stats.generator_errors} fuzzer errors" if stats.generator_errors else ""),
              flush=True)
        for sig, n in signatures.most_common(20):
            print(f"    {n:6d}  {sig}")
        report["families"][family] = {
            "inputs": stats.count, "wall_s": round(wall, 1), "with_kernels": stats.kernels,
            "with_errors": stats.errors, "failures": stats.failures, "by_kind": dict(kinds),
            "generator_errors": stats.generator_errors,
            "cpu_max_s": round(stats.cpu_max, 3), "cpu_mean_ms": round(
                1000 * stats.cpu_total / max(stats.count, 1), 3),
            "peak_rss_mib": round(stats.rss_max_mib), "signatures": dict(signatures),
            "top_messages": stats.messages.most_common(12),
            "failure_examples": failures[:50]}
        if failures:
            exit_code = 1
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=2, default=str) + "\n")
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
