"""Independent parsers for the NVIDIA tool reports committed with the fixtures.

These read the text that NVIDIA's own tools printed (``ptxas -v`` and
``cuobjdump``) and never look at the binaries, so they give occlint's binary
parsers an independent truth.  Pure stdlib; deliberately does not import
occlint.

Formats handled (see fixtures/README_nvidia.md for examples):

* ``ptxas -v`` from ptxas 13.0 (direct or via ``nvcc -Xptxas -v``) and 12.9:
  ``Compiling entry function 'NAME' for 'sm_XX'``, ``Function properties for
  NAME`` + ``N bytes stack frame, N bytes spill stores, N bytes spill loads``,
  ``Used N registers, used N barriers[, N bytes smem][, N bytes cumulative
  stack size][, N bytes cmem[K]]...``, module lines ``N bytes gmem[, N bytes
  cmem[K]]`` and ``ptxas warning : ...`` lines.  Older ptxas versions without
  the ``used N barriers`` item parse too (barriers is then None).
* ``cuobjdump --dump-resource-usage`` for bare cubins (no header) and for
  fatbins / host binaries (a ``Fatbin elf code:`` / ``Fatbin ptx code:`` header
  block with ``arch = sm_XX`` before each image).
* ``cuobjdump --list-elf --list-ptx`` (``ELF file    1: name.1.sm_75.cubin``).
* Report files in fixtures/nvidia/containers/ concatenate several commands;
  each block starts with a ``$ cuobjdump ...`` line.  :func:`split_commands`
  separates them, and every parsed record carries the ``command`` it came from
  (None when the text has no ``$`` lines).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

__all__ = [
    "REPO",
    "load_manifest",
    "parse_cuobjdump_list",
    "parse_cuobjdump_resource",
    "parse_ptxas",
    "parse_ptxas_module",
    "split_commands",
]

REPO = Path(__file__).resolve().parents[2]


def load_manifest(repo: Path | None = None) -> list[dict]:
    """fixtures/nvidia/manifest.json as a list of dicts (paths in it are
    relative to the repository root; every command ran from there)."""
    root = repo or REPO
    return json.loads((root / "fixtures" / "nvidia" / "manifest.json").read_text())


# --------------------------------------------------------------------------- #
# ptxas -v
# --------------------------------------------------------------------------- #
_PTXAS_PREFIX = re.compile(r"^ptxas (info|warning|error|fatal)\s*:\s?(.*)$")
_COMPILING = re.compile(r"^Compiling entry function '(?P<name>[^']+)' for '(?P<arch>[^']+)'$")
_COMPILING_FUNC = re.compile(r"^Compiling function '(?P<name>[^']+)' for '(?P<arch>[^']+)'$")
_PROPS = re.compile(r"^Function properties for (?P<name>\S+)$")
_FRAME = re.compile(
    r"^\s*(?P<frame>\d+) bytes stack frame, (?P<st>\d+) bytes spill stores, "
    r"(?P<ld>\d+) bytes spill loads\s*$"
)
_USED = re.compile(r"^Used (?P<regs>\d+) registers(?P<rest>.*)$")
_BARRIERS = re.compile(r"used (\d+) barriers")
_SMEM = re.compile(r"(\d+) bytes smem")
_CMEM = re.compile(r"(\d+) bytes cmem\[(\d+)\]")
_CUMSTACK = re.compile(r"(\d+) bytes cumulative stack size")
_GMEM = re.compile(r"^(\d+) bytes gmem(.*)$")
_ENTRY_IN_WARNING = re.compile(r"\bentry (\S+)")


def _new_func(name: str, arch: str | None, is_entry: bool) -> dict:
    return {
        "name": name,
        "arch": arch,
        "is_entry": is_entry,
        "registers": None,
        "barriers": None,
        "smem": None,
        "stack_frame": None,
        "spill_stores": None,
        "spill_loads": None,
        "cmem0": None,
        "cmem": {},
        "cumulative_stack": None,
        "warnings": [],
    }


def parse_ptxas(text: str) -> list[dict]:
    """One dict per function block of ``ptxas -v`` output, in output order.

    Keys: ``name``, ``arch`` (``'sm_90a'``; for a device function the arch of
    the entry compile around it), ``is_entry`` (True for ``Compiling entry
    function`` blocks, False for device functions that only get a ``Function
    properties`` block), ``registers``, ``barriers``, ``smem`` (static shared
    bytes as ptxas prints them, 0 when an entry's Used line has no smem item),
    ``stack_frame``, ``spill_stores``, ``spill_loads``, ``cmem0`` (bytes of
    constant bank 0 when printed, else None), ``cmem`` ({bank: bytes}),
    ``cumulative_stack`` (None when not printed), ``warnings`` (ptxas warning
    lines that name this entry).  Device functions have ``registers``,
    ``barriers`` and ``smem`` None: ptxas prints no Used line for them.
    """
    funcs: list[dict] = []
    cur: dict | None = None  # record that the next lines belong to
    entry: dict | None = None  # current entry (from "Compiling entry function")
    arch: str | None = None
    warnings: list[str] = []
    pending_arch: list[dict] = []  # device functions seen before any arch
    for raw in text.splitlines():
        line = raw.rstrip()
        m = _PTXAS_PREFIX.match(line)
        if not m:
            fm = _FRAME.match(line)
            if fm and cur is not None:
                cur["stack_frame"] = int(fm["frame"])
                cur["spill_stores"] = int(fm["st"])
                cur["spill_loads"] = int(fm["ld"])
            continue
        level, body = m.group(1), m.group(2).strip()
        if level != "info":
            warnings.append(body)
            continue
        cm = _COMPILING.match(body) or _COMPILING_FUNC.match(body)
        if cm:
            arch = cm["arch"]
            is_entry = body.startswith("Compiling entry")
            cur = _new_func(cm["name"], arch, is_entry)
            funcs.append(cur)
            entry = cur if is_entry else None
            for f in pending_arch:
                f["arch"] = arch
            pending_arch.clear()
            continue
        pm = _PROPS.match(body)
        if pm:
            name = pm["name"]
            if entry is not None and entry["name"] == name and entry["stack_frame"] is None:
                cur = entry
            else:
                cur = _new_func(name, arch, False)
                funcs.append(cur)
                if arch is None:
                    pending_arch.append(cur)
                entry = None
            continue
        um = _USED.match(body)
        if um and cur is not None:
            rest = um["rest"]
            cur["registers"] = int(um["regs"])
            b = _BARRIERS.search(rest)
            cur["barriers"] = int(b.group(1)) if b else None
            s = _SMEM.search(rest)
            cur["smem"] = int(s.group(1)) if s else 0
            cs = _CUMSTACK.search(rest)
            cur["cumulative_stack"] = int(cs.group(1)) if cs else None
            for nbytes, bank in _CMEM.findall(rest):
                cur["cmem"][int(bank)] = int(nbytes)
            cur["cmem0"] = cur["cmem"].get(0)
            continue
        # "N bytes gmem", "Compile time = ...": module-level or timing lines
    for w in warnings:
        em = _ENTRY_IN_WARNING.search(w)
        if em:
            for f in funcs:
                if f["name"] == em.group(1):
                    f["warnings"].append(w)
    return funcs


def parse_ptxas_module(text: str) -> dict:
    """Module-level facts of ``ptxas -v`` output: ``gmem`` (bytes, None if not
    printed), ``cmem`` ({bank: bytes} from the gmem line, e.g. user
    ``__constant__`` data in bank 3 and printf strings/literals in bank 4),
    ``warnings`` (all ``ptxas warning`` lines, text after the colon) and
    ``archs`` (every arch named by a Compiling line, in order, deduplicated)."""
    out = {"gmem": None, "cmem": {}, "warnings": [], "archs": []}
    for raw in text.splitlines():
        m = _PTXAS_PREFIX.match(raw.rstrip())
        if not m:
            continue
        level, body = m.group(1), m.group(2).strip()
        if level != "info":
            out["warnings"].append(body)
            continue
        g = _GMEM.match(body)
        if g:
            out["gmem"] = (out["gmem"] or 0) + int(g.group(1))
            for nbytes, bank in _CMEM.findall(g.group(2)):
                out["cmem"][int(bank)] = out["cmem"].get(int(bank), 0) + int(nbytes)
            continue
        cm = _COMPILING.match(body) or _COMPILING_FUNC.match(body)
        if cm and cm["arch"] not in out["archs"]:
            out["archs"].append(cm["arch"])
    return out


# --------------------------------------------------------------------------- #
# cuobjdump
# --------------------------------------------------------------------------- #
def split_commands(text: str) -> list[tuple[str | None, str]]:
    """Split a report into ``(command, output)`` blocks at ``$ `` lines.
    Text before the first ``$`` line (or a report without any) comes back
    with command None."""
    blocks: list[tuple[str | None, list[str]]] = [(None, [])]
    for line in text.splitlines():
        if line.startswith("$ "):
            blocks.append((line[2:].strip(), []))
        else:
            blocks[-1][1].append(line)
    out = [(c, "\n".join(lines)) for c, lines in blocks]
    if out and out[0][0] is None and not out[0][1].strip() and len(out) > 1:
        out = out[1:]
    return out


_FUNC = re.compile(r"^\s*Function (?P<name>.+):\s*$")
_RES_ITEM = re.compile(r"([A-Z_]+(?:\[\d+\])?):(\d+)")
_HDR_KIND = re.compile(r"^Fatbin (elf|ptx) code:\s*$")
_HDR_KV = re.compile(r"^(arch|code version|host|compile_size|identifier|ptxasOptions)\s*=\s*(.*)$")


def parse_cuobjdump_resource(text: str) -> list[dict]:
    """One dict per ``Function NAME:`` of ``cuobjdump --dump-resource-usage``.

    Keys: ``name``; every ``KEY:value`` item as an int under its own name
    (``REG``, ``STACK``, ``SHARED``, ``LOCAL``, ``CONSTANT[0]``,
    ``CONSTANT[2]``, ``TEXTURE``, ``SURFACE``, ``SAMPLER``, ...); ``CONSTANT``
    ({bank: bytes}); ``arch`` (from the enclosing ``Fatbin elf code`` header,
    e.g. ``'sm_90a'`` / ``'sm_100f'``; None for a bare cubin, whose output has
    no header); ``elf_index`` (1-based count of ELF images in this command's
    output: fatbin headers, or ``Resource usage:`` blocks of a bare cubin);
    ``compressed`` (the image header said ``compressed``; None for a bare
    cubin); ``identifier`` (header ``identifier =`` value or None);
    ``command`` (the ``$`` line of the block, None if absent).
    """
    out: list[dict] = []
    for command, body in split_commands(text):
        elf_index = 0
        hdr: dict = {}
        in_header = False
        header_kind = None
        cur: dict | None = None
        seen_header_for_current = False
        for raw in body.splitlines():
            line = raw.rstrip()
            hk = _HDR_KIND.match(line)
            if hk:
                header_kind = hk.group(1)
                in_header = True
                hdr = {"arch": None, "compressed": False, "identifier": None}
                if header_kind == "elf":
                    elf_index += 1
                    seen_header_for_current = True
                cur = None
                continue
            if in_header:
                if line.startswith("==="):
                    continue
                kv = _HDR_KV.match(line.strip())
                if kv:
                    key, val = kv.group(1), kv.group(2).strip()
                    if key == "arch":
                        hdr["arch"] = val
                    elif key == "identifier":
                        hdr["identifier"] = val
                    continue
                if line.strip() == "compressed":
                    hdr["compressed"] = True
                    continue
                if line.strip() == "":
                    continue
                in_header = False
            if line.strip() == "Resource usage:":
                if not seen_header_for_current:
                    elf_index += 1  # bare cubin: one block per ELF
                    hdr = {"arch": None, "compressed": None, "identifier": None}
                seen_header_for_current = False
                cur = None
                continue
            fm = _FUNC.match(line)
            if fm:
                cur = {
                    "name": fm["name"].strip(),
                    "arch": hdr.get("arch"),
                    "elf_index": elf_index,
                    "compressed": hdr.get("compressed"),
                    "identifier": hdr.get("identifier"),
                    "command": command,
                    "CONSTANT": {},
                }
                out.append(cur)
                continue
            if cur is not None and line.startswith(" ") and _RES_ITEM.search(line):
                for key, val in _RES_ITEM.findall(line):
                    cur[key] = int(val)
                    cb = re.match(r"CONSTANT\[(\d+)\]", key)
                    if cb:
                        cur["CONSTANT"][int(cb.group(1))] = int(val)
                cur = None
                continue
    return out


_LIST = re.compile(r"^(?P<kind>ELF|PTX) file\s+(?P<idx>\d+):\s+(?P<file>\S+)\s*$")
_ARCH_IN_NAME = re.compile(r"\.(?P<arch>(?:sm|compute)_\d+[a-z]?)\.(?:cubin|ptx)$")


def parse_cuobjdump_list(text: str) -> list[dict]:
    """Entries printed by ``cuobjdump --list-elf --list-ptx``.

    One dict per ``ELF file N: ...`` / ``PTX file N: ...`` line: ``kind``
    ('elf' | 'ptx'), ``index`` (cuobjdump's per-kind number), ``file`` (the
    name cuobjdump would extract to), ``arch`` (taken from that name, e.g.
    ``'sm_100a'``; note cuobjdump names an ``sm_100f`` ELF ``...sm_100.cubin``
    while ``--dump-resource-usage`` says ``arch = sm_100f``), ``command``.
    """
    out = []
    for command, body in split_commands(text):
        for raw in body.splitlines():
            m = _LIST.match(raw.strip())
            if not m:
                continue
            am = _ARCH_IN_NAME.search(m["file"])
            out.append(
                {
                    "kind": m["kind"].lower(),
                    "index": int(m["idx"]),
                    "file": m["file"],
                    "arch": am.group("arch") if am else None,
                    "command": command,
                }
            )
    return out
