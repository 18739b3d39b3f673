"""The launch-time model's facts of the run's kernels, from its PTX files: which file and
entry define each kernel (a scan of their text before the run), and the facts themselves,
read when a launch or kernel asks for them (occlint.readers.nvidia.ptx); a source's
template kernel's, for the instantiation a launch names."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from occlint.readers.formats import MAX_PTX_BYTES


def ptx_entries(candidates: list[Any]) -> dict[str, tuple[tuple[str, str], ...]]:
    """Kernel base name -> the (PTX file, entry) pairs that define it, from the run's PTX
    files: their entry names only (a facts index of a Triton cache of thousands of kernels
    costs a scan of their text; a kernel's facts are read when a launch asks for them)."""
    from occlint.model.demangle import base_name, demangle
    from occlint.readers.nvidia.ptx import entry_names

    out: dict[str, list[tuple[str, str]]] = {}
    for c in candidates:
        text = _ptx_text(c.path)
        for name in entry_names(text) if text else ():
            out.setdefault(base_name(demangle(name)), []).append((c.path, name))
    return {name: tuple(where) for name, where in out.items()}


def _ptx_text(path: str) -> str | None:
    try:
        p = Path(path)
        if p.stat().st_size > MAX_PTX_BYTES:
            return None
        return p.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


@lru_cache(maxsize=64)
def _ptx_file_facts(path: str) -> dict[str, Any]:
    """The facts of each entry of a PTX file; in a Triton cache (its IR beside it) with
    the tile each program works on."""
    from dataclasses import replace

    from occlint.readers.nvidia.ptx import facts_by_entry
    from occlint.readers.sidecars import triton_tile

    text = _ptx_text(path)
    facts = facts_by_entry(text) if text else {}
    tile = triton_tile(Path(path)) if len(facts) == 1 else None
    return {name: replace(f, tile=tile) if tile and f.loop == "per-element" else f
            for name, f in facts.items()}


def indexed_facts(entry: dict[str, Any]) -> Any:
    """A kernel's facts from the run's facts index: its source's, else its PTX's (read
    now; None where the files that define it disagree)."""
    if "facts" in entry or "ptx" not in entry:
        return entry.get("facts")
    told = {_ptx_file_facts(path).get(name) for path, name in entry["ptx"]}
    return next(iter(told)) if len(told) == 1 else None


def resolved(entry: dict[str, Any], kernel: str) -> dict[str, Any]:
    """A kernel's index entry with the facts ``kernel`` (a demangled name) gets: its PTX's,
    read now, and a template's instantiation's (:func:`instantiation`)."""
    if "ptx" in entry and "facts" not in entry:
        entry = {**entry, "facts": indexed_facts(entry)}
    return instantiation(entry, kernel) if "template" in entry else entry


def instantiation(entry: dict[str, Any], kernel: str) -> dict[str, Any]:
    """The index entry of a template kernel as the instantiation ``kernel`` (a demangled
    name) sees it: the facts of its text with the name's template arguments, where they
    pair with its parameters (else the template's own, read without them)."""
    from occlint.model.demangle import template_arguments
    from occlint.readers.source.facts import instantiated

    arguments = template_arguments(kernel)
    facts = instantiated(entry["template"], arguments) if arguments else None
    return entry if facts is None else {**entry, "facts": facts}


def embedded_facts(file: str, name: str) -> Any:
    """A traced kernel's facts from the PTX its binary embeds beside the SASS (nvcc's
    default ``-arch=sm_XX`` keeps both), when the binary the trace's launches were joined
    to is a file of the run; None where it holds no PTX of ``name`` (its mangled name)."""
    if "!" in file or not Path(file).is_file():
        return None  # an archive's member: its PTX is not read again
    return _binary_ptx_facts(file).get(name)


@lru_cache(maxsize=16)
def _binary_ptx_facts(file: str) -> dict[str, Any]:
    """Every PTX entry's facts of one binary, read once: its fatbins' PTX only (no SASS)."""
    from occlint.readers.formats import ReadOptions
    from occlint.readers.loader import read_path
    from occlint.readers.nvidia.ptx import facts_by_entry

    result = read_path(Path(file), file, ReadOptions(ptx_only=True))
    out: dict[str, Any] = {}
    for text in result.ptx:
        for name, facts in facts_by_entry(text).items():
            out.setdefault(name, facts)
    return out
