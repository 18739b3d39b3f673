#!/usr/bin/env python3
"""Checkouts of the public trees the source benchmarks measure, from a git directory.

    python3 benchmarks/source_trees.py NAME GIT_DIR DEST

writes into DEST the source files (``.cu .cuh .hip .cpp .cc .cxx .h .hpp``) of the tree
NAME at its pinned commit, read from GIT_DIR (a clone or a bare mirror of the repository),
with ``git ls-tree`` and ``git cat-file``: only those files, so a snapshot whose large
blobs (data sets, documents) are absent still gives the tree. NAME is one of
:data:`SPEED_TREES` (``benchmarks/source_scale.py``'s kernel-heavy tree) or of
``benchmarks.source_recall.TREES`` (the six recall trees, whole directories).

``hecbench-cuda``: the ``.cu`` files of the CUDA versions of HeCBench's benchmarks
(``src/*-cuda/``; 817 files, 8.9 MB at the pinned commit, 541 of them naming a kernel or a
launch): each benchmark is a small application whose ``.cu`` files define its kernels and
launch them from host code, so most files hold kernels and launches and the tree is large
enough that start-up is a small part of a run. The benchmarks' headers (image and
reference libraries such as ``CImg.h``, 2.4 MB) and their HIP / SYCL / OpenMP versions
are left out.
"""

from __future__ import annotations

import argparse
import fnmatch
import subprocess
import sys
from pathlib import Path

SUFFIXES = (".cu", ".cuh", ".hip", ".cpp", ".cc", ".cxx", ".h", ".hpp")
# name -> (GitHub repository, commit, glob of the paths kept)
SPEED_TREES = {
    "hecbench-cuda": ("zjin-lcf/HeCBench", "f27000a5188f8ac79bd43fc95a1b3f890c18823d",
                      "src/*-cuda/*.cu"),
}


def pinned(name: str) -> tuple[str, str, str]:
    """(repository, commit, glob of the kept paths) of a speed or recall tree."""
    if name in SPEED_TREES:
        return SPEED_TREES[name]
    from benchmarks.source_recall import TREES

    repo, commit, directory = TREES[name]
    return repo, commit, (directory.rstrip("/") + "/*" if directory else "*")


def extract(git_dir: Path, commit: str, pattern: str, dest: Path) -> tuple[int, int]:
    """Write the source files of ``commit`` whose paths match ``pattern`` (``fnmatch``:
    ``*`` crosses directories) under ``dest``; (files, bytes)."""
    listing = subprocess.run(["git", "-C", str(git_dir), "ls-tree", "-r", "-z", commit],
                             check=True, capture_output=True).stdout
    blobs = []
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, _, path = entry.partition(b"\t")
        name = path.decode("utf-8", "surrogateescape")
        if meta.split()[1] == b"blob" and name.lower().endswith(SUFFIXES) and \
                fnmatch.fnmatchcase(name, pattern):
            blobs.append((meta.split()[2].decode(), name))
    batch = subprocess.run(["git", "-C", str(git_dir), "cat-file", "--batch"], check=True,
                           capture_output=True,
                           input=b"".join(f"{sha}\n".encode() for sha, _ in blobs)).stdout
    at, size_total = 0, 0
    for _, name in blobs:
        header_end = batch.index(b"\n", at)
        size = int(batch[at:header_end].split()[2])
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(batch[header_end + 1:header_end + 1 + size])
        size_total += size
        at = header_end + 1 + size + 1  # the content's trailing newline
    return len(blobs), size_total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name")
    parser.add_argument("git_dir", type=Path)
    parser.add_argument("dest", type=Path)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    _, commit, pattern = pinned(args.name)
    files, size = extract(args.git_dir, commit, pattern, args.dest)
    print(f"{args.name}: {files} files, {size:,} bytes in {args.dest}")


if __name__ == "__main__":
    main()
