#!/usr/bin/env python3
"""Build occlint's owner index (occlint/judgement/owner_index.bin) from libraries' wheels.

    pip download --no-deps -d WHEELS nvidia-cudnn-cu13 nvidia-cublas nvidia-nccl-cu13 \\
        nvidia-cufft nvidia-curand nvidia-cusparse nvidia-cusolver torch==2.11.0 \\
        nvidia-cudnn-cu12 nvidia-cublas-cu12 nvidia-nccl-cu12 nvidia-cufft-cu12 \\
        nvidia-curand-cu12 nvidia-cusparse-cu12
    python3 benchmarks/build_owner_index.py WHEELS/*.whl [--out PATH] [--names OUT.json]

Each wheel is read with occlint's own readers (read_path: the archive, every shared
library in it, their fatbins, every cubin of every architecture); the library is named
by the wheel's distribution (LIBRARIES), its version by the wheel's file name. A kernel is
keyed by its base name (occlint.judgement.owner_index.base_name). Keys that several
libraries ship, those of libraries compiled into others (cub::, thrust::, cutlass:: in any
namespace, pytorch_flash::) and names too generic to be told from a user's (GENERIC:
``copy_kernel``) are left out and counted in the header. ``--names``: also write the keys
in clear per library (a JSON file to look names up in; not shipped). Deterministic for
the same wheels.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

from occlint.judgement.owner_index import (
    EMBEDDED,
    INDEX_PATH,
    SIZE_BUDGET,
    base_name,
    encode,
    key_hash,
)
from occlint.readers.formats import ReadOptions
from occlint.readers.loader import read_path

# (distribution name pattern, library, kind), first match wins
LIBRARIES: tuple[tuple[str, str, str], ...] = (
    (r"^nvidia[-_]cudnn", "cuDNN", "library"),
    (r"^nvidia[-_]cublas", "cuBLAS", "library"),
    (r"^nvidia[-_]nccl", "NCCL", "library"),
    (r"^nvidia[-_]cufft", "cuFFT", "library"),
    (r"^nvidia[-_]curand", "cuRAND", "library"),
    (r"^nvidia[-_]cusparse(?!lt)", "cuSPARSE", "library"),
    (r"^nvidia[-_]cusparselt", "cuSPARSELt", "library"),
    (r"^nvidia[-_]cusolver", "cuSOLVER", "library"),
    (r"^torch$", "PyTorch", "framework"),
    (r"^flash[-_]attn", "FlashAttention", "library"),
)


# names too generic to tell a library's kernel from a user's of the same name: an unqualified
# key this short, or a single word and "_kernel" (cuBLAS's copy_kernel, dot_kernel)
GENERIC = re.compile(r"^(?:[A-Za-z0-9]{1,9}|[A-Za-z0-9]+_kernel)$")


def distribution(wheel: Path) -> tuple[str, str]:
    """(distribution, version) from a wheel's file name (PEP 427)."""
    name, version = wheel.name.split("-")[:2]
    return name.replace("_", "-").lower(), version


def library_of(dist: str) -> tuple[str, str]:
    for pattern, library, kind in LIBRARIES:
        if re.search(pattern, dist):
            return library, kind
    raise SystemExit(f"build_owner_index: error: {dist}: no library known for it")


def wheel_keys(wheel: Path) -> tuple[set[str], list[str], int]:
    """(base names, the member files that hold kernels, kernels read) of one wheel."""
    read = read_path(wheel, wheel.name, ReadOptions(max_decompressed=8 << 30))
    if read.errors:
        for e in read.errors[:5]:
            print(f"  {e.path}: {e.message}", file=sys.stderr)
    keys = {base_name(k.demangled or k.name) for k in read.kernels}
    files = sorted({k.file.split("!/", 1)[-1] for k in read.kernels if k.file})
    return keys, files, len(read.kernels)


def build(wheels: list[Path]) -> tuple[dict, list[list[int]], dict[str, list[str]]]:
    by_library: dict[str, set[str]] = defaultdict(set)
    meta: dict[str, dict] = {}
    for wheel in sorted(wheels, key=lambda w: w.name):
        dist, version = distribution(wheel)
        library, kind = library_of(dist)
        started = time.monotonic()
        keys, files, kernels = wheel_keys(wheel)
        print(f"{wheel.name}: {kernels} kernels, {len(keys)} base names "
              f"({time.monotonic() - started:.0f} s)", file=sys.stderr)
        by_library[library] |= keys
        entry = meta.setdefault(library, {"name": library, "kind": kind, "packages": []})
        entry["packages"].append({"package": dist, "version": version, "files": files,
                                  "kernels": kernels})
    owners: dict[str, set[str]] = defaultdict(set)
    for library, keys in by_library.items():
        for key in keys:
            owners[key].add(library)
    shared = {k for k, libs in owners.items() if len(libs) > 1}
    header_only = {k for k in owners if EMBEDDED.search(k)}
    generic = {k for k in owners if GENERIC.match(k)}
    names: dict[str, list[str]] = {}
    keys_out: list[list[int]] = []
    libraries = []
    for library in sorted(by_library):
        kept = sorted(k for k in by_library[library]
                      if k and k not in shared and k not in header_only
                      and k not in generic)
        names[library] = kept
        hashes = sorted({key_hash(k) for k in kept})
        keys_out.append(hashes)
        libraries.append({**meta[library], "keys": len(hashes)})
    header = {
        "key": "base name: qualified name without return type, template arguments and "
               "parameters (occlint.judgement.owner_index.base_name)",
        "hash": "first 8 bytes of BLAKE2b of the key (UTF-8), little-endian",
        "libraries": libraries,
        "left_out": {"shipped_by_several": len(shared - header_only - generic),
                     "embedded_libraries": len(header_only),
                     "generic_names": len(generic - header_only)},
        "builder": "benchmarks/build_owner_index.py",
    }
    return header, keys_out, names


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("wheels", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, default=INDEX_PATH)
    ap.add_argument("--names", type=Path, help="also write the keys in clear (JSON)")
    args = ap.parse_args(argv)
    header, keys, names = build(args.wheels)
    data = encode(header, keys)
    if len(data) > SIZE_BUDGET:
        raise SystemExit(f"build_owner_index: error: {len(data)} bytes, over the "
                         f"{SIZE_BUDGET}-byte budget")
    args.out.write_bytes(data)
    if args.names:
        args.names.write_text(json.dumps(names, indent=1))
    print(f"{args.out}: {len(data)} bytes, "
          + ", ".join(f"{lib['name']} {lib['keys']}" for lib in header["libraries"]),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
