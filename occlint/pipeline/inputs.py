"""Expand command-line paths: files as given, directories walked; one deterministic order.

The order of the inputs (and so of every report) depends only on their names, never on the
order of the command-line arguments or on the order a file system lists a directory in:
inputs are sorted as a sorted top-down walk visits them (in each directory its files by
name, then its subdirectories by name), over the path as it is displayed.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path, PurePath
from typing import NamedTuple

from occlint.model.kernel import InputError


class Candidate(NamedTuple):
    """A file to read. ``listed``: named on the command line (always read, and reported when
    it is not a GPU binary); else found in a directory (read only when it looks like GPU
    code, see :func:`occlint.readers.sniff.looks_like_gpu_binary`)."""

    path: str
    display: str
    listed: bool
    group: int | None = None  # one member group of a large archive (see split_archives)
    size: int | None = None  # bytes, where the walk read them (else stat when wanted)


# POSIX paths: "/" is the only separator (Windows' PurePath also splits at "\\" and drives)
_PLAIN_PATHS = os.sep == "/" and os.altsep is None
ARCHIVE_SUFFIXES = (".whl", ".zip", ".pt2")
SPLIT_MIN_BYTES = 8 << 20


def split_archives(candidates: list[Candidate]) -> list[Candidate]:
    """Each large wheel or zip (by its name) as one candidate per member group, so that
    worker processes share it; groups read separately give what one read gives (see
    occlint.readers.archive, imported only when there is one)."""
    out: list[Candidate] = []
    for c in candidates:
        groups = 1
        if c.path.lower().endswith(ARCHIVE_SUFFIXES):
            try:
                large = os.stat(c.path).st_size >= SPLIT_MIN_BYTES
            except OSError:
                large = False
            if large:
                from occlint.readers.archive import count_groups

                groups = count_groups(c.path)
        if groups == 1:
            out.append(c)
        else:
            out.extend(c._replace(group=i) for i in range(groups))
    return out


def _matches(path: str, name: str, patterns: list[str]) -> bool:
    """``path`` or its file ``name`` matches a glob (``*`` also matches ``/``; a pattern
    may match the path's tail: ``build/*.co`` matches ``src/build/a.co``)."""
    text = PurePath(path).as_posix()
    return any(fnmatch.fnmatch(text, p) or fnmatch.fnmatch(name, p) or
               fnmatch.fnmatch(text, f"*/{p}") for p in patterns)


def walk_key(display: str) -> tuple[tuple[int, str], ...]:
    """Sort key of a displayed path: a sorted top-down walk's order (files before
    subdirectories, each by name)."""
    parts = display.split("/")
    if not _PLAIN_PATHS or not display or "" in parts[1:-1] or "." in parts:
        # something for PurePath to normalise ("a//b", "./a"); else its parts are the
        # split's, at a third the cost (a walk of thousands of files sorts by it)
        parts = list(PurePath(display).parts)
    else:
        if not parts[0]:
            parts[0] = "/"
        if not parts[-1]:
            parts.pop()
    return (*((1, part) for part in parts[:-1]), (0, parts[-1] if parts else display))


def _walk(root: str, exclude: list[str], include: list[str], files: list[Candidate],
          errors: list[InputError]) -> None:
    """Files under ``root`` (a directory), as ``os.walk`` visits them without following
    symbolic links to directories; one stat per entry at most (``os.scandir``). Excluded
    directories are not entered; with ``include`` globs, only the files matching one."""
    try:
        with os.scandir(root) as listing:
            entries = list(listing)  # in any order: expand_paths sorts
    except OSError as exc:
        errors.append(InputError(str(exc.filename or root),
                                 f"cannot list directory: {exc.strerror}"))
        return
    subdirs: list[str] = []
    prefix = "" if root == "." else root  # as str(Path(".") / name): no "./" prefix
    for entry in entries:
        full = os.path.join(prefix, entry.name)
        if exclude and _matches(full, entry.name, exclude):
            continue
        try:
            if entry.is_dir():
                if not entry.is_symlink():
                    subdirs.append(full)
                continue
            if entry.is_symlink() and not os.path.exists(full):
                errors.append(InputError(full, "broken symbolic link"))
                continue
            if include and not _matches(full, entry.name, include):
                continue
            if entry.is_file():
                # its size now, the one stat a run makes of it (auto_jobs and the
                # workers' batches weigh the inputs by it)
                files.append(Candidate(full, full, False, size=entry.stat().st_size))
        except OSError:
            files.append(Candidate(full, full, False))  # the reader reports the problem
    for subdir in subdirs:
        _walk(subdir, exclude, include, files, errors)


def expand_paths(paths: list[str], exclude: list[str] | None = None,
                 include: list[str] | None = None,
                 ) -> tuple[list[Candidate], list[InputError]]:
    """Every file to read, in :func:`walk_key` order, and errors for paths that do not exist.

    Files named on the command line are always read (and reported if they are not GPU
    binaries); files found inside directories are read only when they look like GPU code
    and match no ``exclude`` glob and, when there are ``include`` globs, one of them
    (matched against the path and the file name)."""
    exclude = exclude or []
    include = include or []
    found: list[Candidate] = []
    errors: list[InputError] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            _walk(str(path), exclude, include, found, errors)
        elif path.exists() or path.is_symlink():
            found.append(Candidate(raw, raw, True))
        else:
            errors.append(InputError(raw, "no such file or directory"))
    files: dict[str, Candidate] = {}
    for candidate in found:  # a file both named and found in a directory is named
        seen = files.get(candidate.display)
        if seen is None or (candidate.listed and not seen.listed):
            files[candidate.display] = candidate
    ordered = sorted(files.values(), key=lambda c: walk_key(c.display))
    errors.sort(key=lambda e: (walk_key(e.file), e.message))
    return ordered, errors
