"""Which library ships a kernel, from the libraries' own binaries: a compact name index.

``benchmarks/build_owner_index.py`` reads the kernels embedded in the libraries' wheels
(cuDNN, cuBLAS/cuBLASLt, NCCL, cuFFT, cuRAND, cuSPARSE, libtorch_cuda) with occlint's own
readers and writes ``owner_index.bin`` beside this module. A kernel is keyed by its
**base name**: its qualified name without return type, template arguments and parameters
(``void cudnn::foo<float, 3>(int)`` -> ``cudnn::foo``; an ``extern "C"`` name is its own
key), which is the same whether the name comes from a cubin's symbol table, a trace
(CUPTI's demangling) or Nsight Systems, and which one template's many instances share.

Left out of the index, counted in its header: base names that more than one library ships
(they decide nothing), those of libraries compiled into whoever uses them (``cub::``,
``thrust::``, ``cutlass::`` in any namespace, PyTorch's vendored ``pytorch_flash::``: the
name rules label those) and names too generic to tell from a user's (``copy_kernel``).

The file: ``OCCLIDX1``, a little-endian u32 header length, the header (JSON: the hash, the
libraries in order with their kind, packages, versions and key counts), then each
library's keys as sorted little-endian u64 (the first 8 bytes of BLAKE2b of the key in
UTF-8). Its size budget is 1 MiB (docs/owners.md).
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
from array import array
from bisect import bisect_left
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

MAGIC = b"OCCLIDX1"
INDEX_PATH = Path(__file__).with_name("owner_index.bin")
SIZE_BUDGET = 1 << 20
# libraries compiled into the library that uses them (header-only CUB, Thrust, CUTLASS,
# CuTe, whatever namespace they are wrapped in: PyTorch's ``at_cuda_detail::cub::``), and
# FlashAttention's kernels as PyTorch vendors them (``pytorch_flash::``), and ROCm's
# header-only rocPRIM, hipCUB, rocThrust (``thrust::``) and Composable Kernel (``ck::``,
# ``ck_tile::``) that rocSPARSE, rocRAND or PyTorch compile into themselves: the name rules
# label those by the library they come from
EMBEDDED = re.compile(r"(?:^|::)(?:cub|thrust|cutlass|cute|pytorch_flash|flash|rocprim|hipcub"
                      r"|ck|ck_tile)::")
_ANONYMOUS = "(anonymous namespace)"
_RETURN_TYPE = re.compile(r"^(?:void|int|unsigned int|float)\s+(?=[A-Za-z_(])")


_NV_STATIC = re.compile(r"^__nv_static_\d+__\w*?_(?=_Z)")  # nvcc's internal-linkage prefix
_SOURCE_NAME = re.compile(r"(\d+)")


def _mangled_base(name: str) -> str | None:
    """The qualified name a mangled (Itanium) name starts with, read from the mangling
    itself (``_ZN4xmma4gemm6kernelI...`` -> ``xmma::gemm::kernel``): the demangler gives up on
    some of the libraries' longest names; None where the mangling is not that simple."""
    pos, parts = 2, []
    nested = name.startswith("_ZN")
    if nested:
        pos = 3
        while pos < len(name) and name[pos] in "KVr":  # cv-qualifiers of a member
            pos += 1
    while pos < len(name):
        if name[pos] == "L" and name[pos + 1:pos + 2].isdigit():
            pos += 1  # internal linkage (``static``: _ZL18haxpy_mlt_8_kernel, rocBLAS)
        if name.startswith("St", pos) and not parts:
            parts.append("std")
            pos += 2
            continue
        digits = _SOURCE_NAME.match(name, pos)
        if digits is None:
            break
        size = int(digits.group(1))
        start = digits.end()
        ident = name[start:start + size]
        if len(ident) != size:
            return None
        parts.append(_ANONYMOUS if ident.startswith("_GLOBAL__N") else ident)
        pos = start + size
        if not nested:
            break
    if not parts or (nested and pos < len(name) and name[pos] not in "IE"):
        return None
    return "::".join(parts)


def base_name(name: str) -> str:
    """A kernel's qualified name without return type, template arguments or parameters,
    from its demangled or its mangled name (the same key from either)."""
    name = _NV_STATIC.sub("", name.strip(), count=1)
    if name.startswith("_Z"):
        found = _mangled_base(name)
        if found is not None:
            return found
        name = _demangled(name)
    text = _RETURN_TYPE.sub("", name, count=1).replace(_ANONYMOUS, "\x00")
    depth, out = 0, []
    for ch in text:
        if ch == "<":
            depth += 1
        elif ch == ">" and depth:
            depth -= 1
        elif depth == 0:
            if ch == "(":
                break
            out.append(ch)
    return "".join(out).strip().replace("\x00", _ANONYMOUS)


@cache
def _demangled(name: str) -> str:
    try:
        import cxxfilt

        return cxxfilt.demangle(name)
    except Exception:
        return name


def key_hash(key: str) -> int:
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")


@dataclass(frozen=True, slots=True)
class IndexedLibrary:
    name: str
    kind: str  # "library" or "framework"
    packages: tuple[dict[str, Any], ...]  # {"package", "version", "files"}
    keys: array  # sorted u64 hashes


@dataclass(frozen=True, slots=True)
class OwnerIndex:
    header: dict[str, Any]
    libraries: tuple[IndexedLibrary, ...]

    def lookup(self, name: str) -> IndexedLibrary | None:
        """The one library that ships a kernel of this name, or None."""
        h = key_hash(base_name(name))
        for lib in self.libraries:
            i = bisect_left(lib.keys, h)
            if i < len(lib.keys) and lib.keys[i] == h:
                return lib
        return None


def encode(header: dict[str, Any], keys: list[list[int]]) -> bytes:
    """The index file of ``header`` (its ``libraries`` in the order of ``keys``)."""
    text = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    body = b"".join(array("Q", sorted(k)).tobytes() for k in keys)
    return MAGIC + struct.pack("<I", len(text)) + text + body


def decode(data: bytes) -> OwnerIndex:
    if data[:8] != MAGIC or len(data) < 12:
        raise ValueError("not an occlint owner index")
    (size,) = struct.unpack_from("<I", data, 8)
    try:
        header = json.loads(data[12:12 + size])
        listed = [(lib["name"], lib["kind"], tuple(lib["packages"]), int(lib["keys"]))
                  for lib in header["libraries"]]
    except (ValueError, KeyError, TypeError):
        raise ValueError("owner index: its header is damaged") from None
    pos, libraries = 12 + size, []
    for name, kind, packages, count in listed:
        keys = array("Q")
        keys.frombytes(data[pos:pos + 8 * count])
        pos += 8 * count
        libraries.append(IndexedLibrary(name, kind, packages, keys))
    if pos != len(data):
        raise ValueError("owner index: its keys do not match its header")
    return OwnerIndex(header, tuple(libraries))


@cache
def shipped_index() -> OwnerIndex | None:
    """The index shipped with occlint (None when the file is absent)."""
    try:
        return decode(INDEX_PATH.read_bytes())
    except (OSError, ValueError):
        return None
