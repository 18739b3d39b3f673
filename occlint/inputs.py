"""Expand command-line paths: files as given, directories walked (sorted, deterministic)."""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path

from occlint.model.kernel import InputError
from occlint.readers.loader import looks_like_gpu_binary


def _excluded(path: Path, patterns: list[str]) -> bool:
    text = path.as_posix()
    return any(fnmatch.fnmatch(text, p) or fnmatch.fnmatch(path.name, p) or
               fnmatch.fnmatch(text, f"*/{p}") for p in patterns)


def expand_paths(paths: list[str], exclude: list[str] | None = None,
                 ) -> tuple[list[tuple[Path, str]], list[InputError]]:
    """(path, display name) for every file to read, and errors for paths that do not exist.

    Files named on the command line are always read (and reported if they are not GPU
    binaries); files found inside directories are read only when they look like GPU code
    and match no ``exclude`` glob (matched against the path and the file name)."""
    exclude = exclude or []
    files: list[tuple[Path, str]] = []
    errors: list[InputError] = []
    seen: set[str] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for root, dirs, names in os.walk(path, onerror=lambda e: errors.append(
                    InputError(str(e.filename), f"cannot list directory: {e.strerror}"))):
                dirs[:] = sorted(d for d in dirs if not _excluded(Path(root) / d, exclude))
                for name in sorted(names):
                    full = Path(root) / name
                    if _excluded(full, exclude):
                        continue
                    if full.is_symlink() and not full.exists():
                        errors.append(InputError(str(full), "broken symbolic link"))
                        continue
                    if full.is_file() and looks_like_gpu_binary(full):
                        display = str(full)
                        if display not in seen:
                            seen.add(display)
                            files.append((full, display))
        elif path.exists() or path.is_symlink():
            if raw not in seen:
                seen.add(raw)
                files.append((path, raw))
        else:
            errors.append(InputError(raw, "no such file or directory"))
    return files, errors
