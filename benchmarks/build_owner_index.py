#!/usr/bin/env python3
"""Build occlint's owner index (occlint/judgement/owner_index.bin) from libraries' wheels.

    pip download --no-deps -d WHEELS --only-binary=:all: --python-version 3.11 \\
        --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \\
        --platform manylinux2014_x86_64 nvidia-cudnn-cu13==9.28.1.4 \\
        nvidia-cublas==13.10.0.20 nvidia-nccl-cu13==2.32.3 nvidia-cufft==12.5.0.14 \\
        nvidia-curand==10.4.5.25 nvidia-cusparse==12.9.4.2 nvidia-cusolver==12.4.1.2 \\
        torch==2.11.0 nvidia-cudnn-cu12==9.28.0.42 nvidia-cublas-cu12==12.9.3.13 \\
        nvidia-nccl-cu12==2.32.3 nvidia-cufft-cu12==11.4.1.4 \\
        nvidia-curand-cu12==10.3.10.19 nvidia-cusparse-cu12==12.5.10.65 \\
        bitsandbytes==0.50.2
    # (one FBGEMM release a call: pip resolves each as the one version of the package)
    for v in 0.5.0 1.0.0 1.9.0; do pip download --no-deps -d WHEELS --only-binary=:all: \\
        --python-version 3.11 --platform manylinux_2_28_x86_64 \\
        --platform manylinux2014_x86_64 fbgemm-gpu==$v; done
    python3 benchmarks/build_owner_index.py WHEELS/*.whl [--amd] [--out PATH] [--names OUT.json]

``--amd`` also reads the ROCm libraries' Debian packages (AMD_PACKAGES, pinned by version
and SHA-256, downloaded into ``--cache``): each .deb is unpacked (dpkg-deb) and every ELF
file and offload bundle under usr/lib is read (host libraries, loose Tensile code objects);
the library is named by the package, its version by the .deb's file name.

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
import hashlib
import json
import re
import shutil
import subprocess
import sys
import time
import urllib.request
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
    # FBGEMM_GPU (TorchRec's embeddings), three releases: its kernels are renamed between
    # them (2023's bounds_check_indices_kernel is 2026's bounds_check_indices_kernel_v1)
    (r"^fbgemm[-_]gpu$", "FBGEMM", "library"),
    (r"^bitsandbytes$", "bitsandbytes", "library"),
    # ROCm: Debian's binary packages (.deb)
    (r"^librocblas\d", "rocBLAS", "library"),
    (r"^libhipblaslt\d", "hipBLASLt", "library"),
    (r"^librccl\d", "RCCL", "library"),
    (r"^librocsparse\d", "rocSPARSE", "library"),
    (r"^librocrand\d", "rocRAND", "library"),
    (r"^librocfft\d", "rocFFT", "library"),
    (r"^librocsolver\d", "rocSOLVER", "library"),
    (r"^libmiopen\d", "MIOpen", "library"),
)

# The ROCm libraries' Debian packages, pinned by version and SHA-256 (Debian's Packages
# index); ``--amd`` downloads them into the cache (never committed) and reads them. What
# each holds: host libraries whose .hip_fatbin carries the code objects of every
# architecture, and for rocBLAS and hipBLASLt Tensile's loose code objects (.co, .hsaco).
# MIOpen's and rocFFT's packages hold no code object (their kernels are compiled at run
# time from sources in the library): they are read and give nothing.
DEBIAN = "http://deb.debian.org/debian/pool/main"
AMD_PACKAGES: tuple[tuple[str, str], ...] = (
    ("r/rocblas/librocblas0_5.5.1+dfsg-7_amd64.deb",
     "951dfa1a46ee275dace455f396640cfc63a47927455a0903b73c4e50030574c1"),
    ("h/hipblaslt/libhipblaslt1_7.1.1+dfsg-4_amd64.deb",
     "05159cd3ce6c5c3914c46a1cafd2be4d288b9ae5e7cda87de1beaff3c0c00542"),
    ("r/rccl/librccl1_5.4.3-3+b1_amd64.deb",
     "735e8e0a69f88489bdbd0a8b69bc75a376da92f1129b9ed80a38c99726bfe3a7"),
    ("r/rocsparse/librocsparse0_5.3.0+dfsg-2_amd64.deb",
     "688878bb8cb9ec7970e7b632828d91336a6819860fb0c306372eb6a7199b3b8e"),
    ("r/rocsparse/librocsparse0_5.7.1-6_amd64.deb",
     "867705d9ddfcf38a435c75649a2d7f95dc9defced88f508dabb4770304ebdc61"),
    ("r/rocrand/librocrand1_5.3.3-4_amd64.deb",
     "b145d4e47a26ce14da5f8550a092db8d3c7e2d84174c68885336de40f51b7b81"),
    ("r/rocrand/librocrand1_5.7.1-6_amd64.deb",
     "238510600e4bed0224bb8c699fbcd9a414a800df7d1d05c11aac9097cda2ec8f"),
    ("r/rocfft/librocfft0_6.4.3-1+b1_amd64.deb",
     "7363041e8f560bdceede0eb0416f40dd002b223faed50b9cf8007e62f55d5576"),
    ("m/miopen/libmiopen1_6.4.3+dfsg-1+b1_amd64.deb",
     "a12868f7673c5617c9ec1e5c927a7a23c3a35edf78ae80f27b42d8ac796dbb62"),
)
# Tensile's GEMM kernels (rocBLAS, hipBLASLt) are named in full by their solution, the
# processor included (``Cijk_..._ISA90a_...``): 116,000 names over the eleven processors
# Debian builds for, more than the index's budget. Kept: those of AMD's data-centre GPUs
# (CDNA: MI100 gfx908, MI200 gfx90a, MI300 gfx94x, MI350 gfx950); left out (counted):
# those of the Radeon processors, which the ``Cijk_`` name rule labels Tensile.
TENSILE_ISA = re.compile(r"^Cijk_.*_ISA(\w+?)_")
TENSILE_ISA_KEPT = re.compile(r"^(?:908|90a|94\d|950)$")
# a library forked from another keeps its kernels' names: RCCL's are NCCL's
# (``ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t`` is RCCL 5.4's and NCCL 2.1x's, as the A100
# ranks fixtures show), so such a name tells neither; left out (counted)
FORKED = {"RCCL": re.compile(r"^nccl")}
# PyTorch's own templates (ATen's elementwise and reduce kernels) that an extension library
# instantiates over its functors (FBGEMM's ``at::native::vectorized_elementwise_kernel``):
# PyTorch's code compiled into the library, left out of the library's keys (counted) and
# kept as PyTorch's (where the name names the library, occlint.judgement.owner says so)
FRAMEWORK_TEMPLATES = re.compile(r"^(?:at|c10|torch)::")
CODE_MAGICS = (b"\x7fELF", b"CCOB", b"__CLANG_OFFLOAD_BUNDLE__")
CACHE = Path.home() / ".cache" / "occlint-bench"


# names too generic to tell a library's kernel from a user's of the same name: an unqualified
# key this short, or a single word and "_kernel" (cuBLAS's copy_kernel, dot_kernel)
GENERIC = re.compile(r"^(?:[A-Za-z0-9]{1,9}|[A-Za-z0-9]+_kernel)$")


def distribution(wheel: Path) -> tuple[str, str]:
    """(distribution, version) from a wheel's (PEP 427) or a .deb's file name."""
    if wheel.suffix == ".deb":  # NAME_VERSION_ARCH.deb
        name, version = wheel.name.split("_")[:2]
        return name, version
    name, version = wheel.name.split("-")[:2]
    return name.replace("_", "-").lower(), version


def amd_packages(cache: Path) -> list[Path]:
    """AMD_PACKAGES in ``cache``: downloaded once, checked by SHA-256."""
    out = []
    for suite_path, sha256 in AMD_PACKAGES:
        path = cache / suite_path.rsplit("/", 1)[1]
        if not path.exists():
            cache.mkdir(parents=True, exist_ok=True)
            print(f"  downloading {DEBIAN}/{suite_path}", file=sys.stderr)
            with urllib.request.urlopen(f"{DEBIAN}/{suite_path}") as response, \
                    open(f"{path}.part", "wb") as out_file:
                shutil.copyfileobj(response, out_file)
            Path(f"{path}.part").rename(path)
        digest = hashlib.sha256()
        with path.open("rb") as fh:
            while chunk := fh.read(1 << 24):
                digest.update(chunk)
        if digest.hexdigest() != sha256:
            raise SystemExit(f"build_owner_index: error: {path}: SHA-256 "
                             f"{digest.hexdigest()}, pinned {sha256}")
        out.append(path)
    return out


def deb_files(deb: Path, scratch: Path) -> list[tuple[Path, str]]:
    """(file, its path in the package) for every ELF file or offload bundle (plain or
    compressed: hipBLASLt's Tensile .co) a .deb installs under usr/lib: host libraries (their
    .hip_fatbin) and loose code objects; the .deb is unpacked into
    ``scratch`` (dpkg-deb, once)."""
    root = scratch / deb.name.removesuffix(".deb")
    if not (root / ".done").exists():
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
        (root / ".done").write_text(deb.name)
    out = []
    for path in sorted((root / "usr" / "lib").rglob("*")):
        if path.is_file() and not path.is_symlink():
            with path.open("rb") as fh:
                if fh.read(24).startswith(CODE_MAGICS):
                    out.append((path, str(path.relative_to(root))))
    return out


def library_of(dist: str) -> tuple[str, str]:
    for pattern, library, kind in LIBRARIES:
        if re.search(pattern, dist):
            return library, kind
    raise SystemExit(f"build_owner_index: error: {dist}: no library known for it")


def wheel_keys(wheel: Path, scratch: Path = CACHE / "owner-index") -> tuple[set[str], list[str],
                                                                           int]:
    """(base names, the member files that hold kernels, kernels read) of one wheel or .deb
    (its ELF files under usr/lib, unpacked into ``scratch``)."""
    options = ReadOptions(max_decompressed=8 << 30)
    if wheel.suffix == ".deb":
        reads = [(read_path(path, member, options, listed=False), member)
                 for path, member in deb_files(wheel, scratch)]
    else:
        reads = [(read_path(wheel, wheel.name, options), None)]
    keys: set[str] = set()
    files: set[str] = set()
    kernels = 0
    for read, member in reads:
        for e in read.errors[:5]:
            print(f"  {e.path}: {e.message}", file=sys.stderr)
        keys |= {base_name(k.demangled or k.name) for k in read.kernels}
        if member is not None and read.kernels:
            files.add(member)
        files |= {k.file.split("!/", 1)[-1] for k in read.kernels
                  if k.file and member is None}
        kernels += len(read.kernels)
    return keys, sorted(files), kernels


def build(wheels: list[Path], scratch: Path = CACHE / "owner-index"
          ) -> tuple[dict, list[list[int]], dict[str, list[str]]]:
    by_library: dict[str, set[str]] = defaultdict(set)
    meta: dict[str, dict] = {}
    templates: set[str] = set()  # PyTorch's, instantiated in another library
    for wheel in sorted(wheels, key=lambda w: w.name):
        dist, version = distribution(wheel)
        library, kind = library_of(dist)
        started = time.monotonic()
        keys, files, kernels = wheel_keys(wheel, scratch)
        print(f"{wheel.name}: {kernels} kernels, {len(keys)} base names "
              f"({time.monotonic() - started:.0f} s)", file=sys.stderr)
        if library != "PyTorch":
            templates |= {k for k in keys if FRAMEWORK_TEMPLATES.match(k)}
            keys = {k for k in keys if not FRAMEWORK_TEMPLATES.match(k)}
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
    forked = {k for library, keys in by_library.items() if library in FORKED
              for k in keys if FORKED[library].match(k)}
    other_isa = {k for k in owners if (m := TENSILE_ISA.match(k))
                 and not TENSILE_ISA_KEPT.match(m.group(1))}
    names: dict[str, list[str]] = {}
    keys_out: list[list[int]] = []
    libraries = []
    for library in sorted(by_library):
        kept = sorted(k for k in by_library[library]
                      if k and k not in shared and k not in header_only
                      and k not in generic and k not in other_isa and k not in forked)
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
                     "generic_names": len(generic - header_only),
                     "tensile_radeon": len(other_isa - shared),
                     "forked_names": len(forked - shared),
                     "framework_templates": len(templates)},
        "builder": "benchmarks/build_owner_index.py",
    }
    return (*without_empty(header, keys_out), names)


def without_empty(header: dict, keys: list[list[int]]) -> tuple[dict, list[list[int]]]:
    """The libraries left with no key (none read: MIOpen's, rocFFT's packages; all left out:
    RCCL's) moved from ``libraries`` to ``read_without_keys``, their provenance kept."""
    kept = [(lib, k) for lib, k in zip(header["libraries"], keys, strict=True) if k]
    empty = [lib for lib, k in zip(header["libraries"], keys, strict=True) if not k]
    header = {**header, "libraries": [lib for lib, _ in kept]}
    if empty:
        header["read_without_keys"] = empty
    return header, [k for _, k in kept]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("wheels", nargs="*", type=Path, help="wheels and .deb packages")
    ap.add_argument("--amd", action="store_true",
                    help="also read AMD_PACKAGES (downloaded into --cache)")
    ap.add_argument("--cache", type=Path, default=CACHE)
    ap.add_argument("--out", type=Path, default=INDEX_PATH)
    ap.add_argument("--names", type=Path, help="also write the keys in clear (JSON)")
    args = ap.parse_args(argv)
    wheels = list(args.wheels) + (amd_packages(args.cache) if args.amd else [])
    if not wheels:
        ap.error("no wheel or package to read")
    header, keys, names = build(wheels, args.cache / "owner-index")
    data = encode(header, keys)
    if args.names:
        args.names.write_text(json.dumps(names, indent=1))
    if len(data) > SIZE_BUDGET:
        raise SystemExit(f"build_owner_index: error: {len(data)} bytes, over the "
                         f"{SIZE_BUDGET}-byte budget")
    args.out.write_bytes(data)
    print(f"{args.out}: {len(data)} bytes, "
          + ", ".join(f"{lib['name']} {lib['keys']}" for lib in header["libraries"]),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
