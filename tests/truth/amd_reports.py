"""Parsers for the raw tool reports stored next to occlint's AMD fixtures.

Independent of occlint (standard library only, never imports it): these turn
the compilers' and LLVM tools' own text output into dicts that tests compare
occlint's results against.

Reports (see fixtures/README_amd.md and fixtures/amd/manifest.json):

* ``*.remarks.txt``   clang stderr with ``-Rpass-analysis=kernel-resource-usage``
                      -> :func:`parse_remarks`
* ``*.notes.txt``     ``llvm-readelf --notes`` (metadata msgpack shown as YAML)
                      -> :func:`parse_notes`
* ``*.kd.txt``        ``llvm-objdump-22 -d -j .rodata --mcpu=<gfx>``
                      -> :func:`parse_kd`
* ``*.bundler.txt``   ``clang-offload-bundler --list`` (verbose)
                      -> :func:`parse_bundler_list`, :func:`parse_bundler_report`
* ``*.offloading.txt`` ``llvm-objdump-22 --offloading``
                      -> :func:`parse_offloading`, :func:`parse_bundler_list`
"""

from __future__ import annotations

import json
import re
from pathlib import Path

__all__ = [
    "REPO",
    "load_manifest",
    "parse_bundler_list",
    "parse_bundler_report",
    "parse_kd",
    "parse_notes",
    "parse_offloading",
    "parse_remarks",
    "parse_yaml_subset",
]

REPO = Path(__file__).resolve().parents[2]


def load_manifest(repo: Path | None = None) -> list[dict]:
    """fixtures/amd/manifest.json as a list of dicts."""
    root = repo or REPO
    return json.loads((root / "fixtures" / "amd" / "manifest.json").read_text())


# ---------------------------------------------------------------------------
# -Rpass-analysis=kernel-resource-usage
# ---------------------------------------------------------------------------
_REMARK_RE = re.compile(
    r"^(?P<loc>.*?): remark: (?P<body>.*?)\s*\[-Rpass-analysis=kernel-resource-usage\]\s*$"
)

# remark label -> dict key
_REMARK_KEYS = {
    "SGPRs": "sgprs",  # LLVM <= 19
    "TotalSGPRs": "sgprs",  # LLVM >= 20
    "VGPRs": "vgprs",
    "AGPRs": "agprs",
    "ScratchSize [bytes/lane]": "scratch",
    "Dynamic Stack": "dynamic_stack",
    "Occupancy [waves/SIMD]": "occupancy",
    "SGPRs Spill": "sgpr_spill",
    "VGPRs Spill": "vgpr_spill",
    "LDS Size [bytes/block]": "lds",
}

_REMARK_FIELDS = (
    "name",
    "sgprs",
    "vgprs",
    "agprs",
    "scratch",
    "dynamic_stack",
    "occupancy",
    "sgpr_spill",
    "vgpr_spill",
    "lds",
)


def _remark_value(key: str, raw: str):
    if key == "dynamic_stack":
        low = raw.strip().lower()
        if low in ("true", "false"):
            return low == "true"
        return raw.strip()
    try:
        return int(raw.strip())
    except ValueError:
        return raw.strip()


def parse_remarks(text: str, include_functions: bool = False) -> list[dict]:
    """Kernel resource-usage remarks, one dict per function, in output order.

    Keys: ``name``, ``sgprs`` (from ``SGPRs:`` or LLVM >= 20 ``TotalSGPRs:``),
    ``vgprs`` (architectural VGPRs), ``agprs`` (None when the line is absent,
    i.e. non-MFMA targets), ``scratch`` (ScratchSize bytes/lane),
    ``dynamic_stack`` (bool; None when absent, e.g. LLVM 15), ``occupancy``,
    ``sgpr_spill``, ``vgpr_spill``, ``lds`` (static LDS bytes/block; None when
    absent), plus ``sgpr_label`` (``"SGPRs"`` or ``"TotalSGPRs"``),
    ``location`` (``file:line:col`` of the first remark) and ``extra`` (any
    label this parser does not know, value as text).

    A function starts at a ``Function Name:`` remark; the source-snippet and
    caret lines clang prints after it, warnings and anything else that is not
    a kernel-resource-usage remark are ignored.

    LLVM 15/16 also report non-kernel (device) functions, with
    ``Occupancy [waves/SIMD]: 0``; they are dropped unless
    ``include_functions`` is true.
    """
    out: list[dict] = []
    cur: dict | None = None
    for line in text.splitlines():
        m = _REMARK_RE.match(line)
        if not m:
            continue
        body = m.group("body").strip()
        label, sep, value = body.rpartition(": ")
        if not sep:
            continue
        if label == "Function Name":
            cur = {f: None for f in _REMARK_FIELDS}
            cur.update(name=value.strip(), sgpr_label=None, location=m.group("loc"), extra={})
            out.append(cur)
            continue
        if cur is None:
            continue
        key = _REMARK_KEYS.get(label)
        if key is None:
            cur["extra"][label] = value.strip()
            continue
        cur[key] = _remark_value(key, value)
        if key == "sgprs":
            cur["sgpr_label"] = label
    if not include_functions:
        out = [r for r in out if r["occupancy"] != 0]
    return out


# ---------------------------------------------------------------------------
# llvm-readelf --notes  (YAML rendering of the msgpack metadata)
# ---------------------------------------------------------------------------
def _scalar(tok: str):
    t = tok.strip()
    if t == "":
        return None
    if len(t) >= 2 and t[0] == t[-1] == "'":
        return t[1:-1].replace("''", "'")
    if len(t) >= 2 and t[0] == t[-1] == '"':
        return bytes(t[1:-1], "utf-8").decode("unicode_escape")
    if t in ("true", "True"):
        return True
    if t in ("false", "False"):
        return False
    if t in ("~", "null"):
        return None
    if re.fullmatch(r"[-+]?\d+", t):
        return int(t)
    if re.fullmatch(r"0x[0-9a-fA-F]+", t):
        return int(t, 16)
    if t.startswith("[") and t.endswith("]"):
        inner = t[1:-1].strip()
        return [_scalar(x) for x in inner.split(",")] if inner else []
    return t


def _split_key(s: str):
    """'key:  value' -> (key, value) or None when s is not a mapping entry."""
    if s.startswith("'"):
        end = s.find("'", 1)
        while end != -1 and s[end + 1 : end + 2] == "'":
            end = s.find("'", end + 2)
        if end == -1 or s[end + 1 : end + 2] != ":":
            return None
        return s[1:end].replace("''", "'"), s[end + 2 :]
    m = re.match(r"^([^\s'\"][^:]*?):(?:\s+(.*))?$", s)
    if not m:
        return None
    return m.group(1), (m.group(2) or "")


def parse_yaml_subset(lines: list[str]):
    """Parse the block-style YAML subset LLVM's msgpack-to-YAML writer emits
    (nested mappings, '- ' sequences, plain/quoted scalars, [a, b] lists)."""
    toks = []
    for raw in lines:
        if not raw.strip() or raw.strip() in ("---", "..."):
            continue
        toks.append((len(raw) - len(raw.lstrip(" ")), raw.strip()))
    pos = 0

    def block(indent):
        nonlocal pos
        if pos >= len(toks):
            return None
        ind, s = toks[pos]
        if s.startswith("- ") or s == "-":
            return seq(ind)
        return mapping(ind)

    def seq(indent):
        nonlocal pos
        res = []
        while pos < len(toks):
            ind, s = toks[pos]
            if ind != indent or not (s.startswith("- ") or s == "-"):
                break
            rest = s[2:].strip() if s != "-" else ""
            if rest == "":
                pos += 1
                res.append(block(indent + 1))
                continue
            kv = _split_key(rest)
            if kv is None:
                pos += 1
                res.append(_scalar(rest))
                continue
            # "- key: value" opens a mapping whose keys sit at indent+2
            toks[pos] = (indent + 2, rest)
            res.append(mapping(indent + 2))
        return res

    def mapping(indent):
        nonlocal pos
        res = {}
        while pos < len(toks):
            ind, s = toks[pos]
            if ind != indent or s.startswith("- "):
                break
            kv = _split_key(s)
            if kv is None:
                break
            key, val = kv
            pos += 1
            if val.strip() == "":
                if pos < len(toks) and (
                    toks[pos][0] > indent
                    or (toks[pos][0] == indent and toks[pos][1].startswith("- "))
                ):
                    res[key] = block(toks[pos][0])
                else:
                    res[key] = None
            else:
                res[key] = _scalar(val)
        return res

    return block(toks[0][0]) if toks else None


def parse_notes(text: str) -> dict:
    """AMDGPU metadata from ``llvm-readelf --notes`` output.

    Returns ``{"target": amdhsa.target or None (code object v3 has none),
    "version": amdhsa.version list, "kernels": [...], "printf": list|None,
    "metadata": the whole decoded map}``.  Each kernel dict holds every key of
    the kernel map as printed (``.name``, ``.symbol``, ``.vgpr_count``,
    ``.agpr_count``, ``.sgpr_count``, ``.vgpr_spill_count``,
    ``.sgpr_spill_count``, ``.group_segment_fixed_size``,
    ``.private_segment_fixed_size``, ``.kernarg_segment_size``,
    ``.wavefront_size``, ``.max_flat_workgroup_size``, ``.uses_dynamic_stack``,
    ``.workgroup_processor_mode``, ``.uniform_work_group_size``,
    ``.reqd_workgroup_size``, ``.workgroup_size_hint``, ``.args`` ...) with
    integers as int, true/false as bool, lists as lists.  Keys absent from the
    note are absent from the dict.  Several metadata notes in one file are
    merged (kernels concatenated).
    """
    lines = text.splitlines()
    docs: list[list[str]] = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == "---":
            j = i + 1
            while j < len(lines) and lines[j].strip() != "...":
                j += 1
            docs.append(lines[i + 1 : j])
            i = j + 1
        else:
            i += 1
    merged: dict = {}
    kernels: list[dict] = []
    for doc in docs:
        data = parse_yaml_subset(doc) or {}
        if not isinstance(data, dict):
            continue
        kernels.extend(data.get("amdhsa.kernels") or [])
        for k, v in data.items():
            if k != "amdhsa.kernels":
                merged.setdefault(k, v)
    merged["amdhsa.kernels"] = kernels
    return {
        "target": merged.get("amdhsa.target"),
        "version": merged.get("amdhsa.version"),
        "printf": merged.get("amdhsa.printf"),
        "kernels": kernels,
        "metadata": merged,
    }


# ---------------------------------------------------------------------------
# llvm-objdump -d -j .rodata  (kernel descriptors as .amdhsa_* directives)
# ---------------------------------------------------------------------------
def parse_kd(text: str) -> list[dict]:
    """Kernel descriptors decoded by llvm-objdump.

    One dict per ``<symbol.kd>`` in order (other .rodata symbols are skipped):
    ``symbol``, ``address`` (int), ``directives``
    ({'.amdhsa_next_free_vgpr': 64, ...}; empty when decoding failed),
    ``comments`` (``; NAME value`` lines, e.g. SHARED_VGPR_COUNT),
    ``error`` (llvm-objdump's message when it refused the descriptor, e.g.
    clang-19's non-zero GRANULATED_WAVEFRONT_SGPR_COUNT on gfx10+, else None)
    and ``bytes`` (the raw 64 bytes llvm-objdump printed in that case).
    """
    res: list[dict] = []
    cur = None
    for line in text.splitlines():
        m = re.match(r"^([0-9a-fA-F]+) <(.+)>:\s*$", line)
        if m:
            if not m.group(2).endswith(".kd"):
                cur = None  # other .rodata objects (e.g. ROCm headers' __HIP_Coordinates)
                continue
            cur = {
                "symbol": m.group(2),
                "address": int(m.group(1), 16),
                "directives": {},
                "comments": {},
                "error": None,
                "bytes": [],
            }
            res.append(cur)
            continue
        if cur is None:
            continue
        s = line.strip()
        if s.startswith("; error decoding"):
            cur["error"] = s.split(": ", 1)[1] if ": " in s else s
        elif s.startswith(".byte"):
            code = s[len(".byte") :].split("//")[0]
            cur["bytes"].extend(int(b, 0) for b in code.replace(",", " ").split())
        elif s.startswith(".amdhsa_") and not s.startswith(".amdhsa_kernel"):
            k, _, v = s.partition(" ")
            cur["directives"][k] = _scalar(v)
        elif s.startswith("; ") and re.match(r"^; [A-Z0-9_]+ \S+$", s):
            k, v = s[2:].split(" ", 1)
            cur["comments"][k] = _scalar(v)
    return res


# ---------------------------------------------------------------------------
# clang-offload-bundler --list  /  llvm-objdump --offloading
# ---------------------------------------------------------------------------
_ID_RE = re.compile(r"^(host|hip|hipv4|hcc|openmp|cuda|sycl|fpga)-[A-Za-z0-9_.\-:+]*$")
_EXTRACT_RE = re.compile(r"^Extracting offload bundle: (?P<file>.*?)\.(?P<idx>\d+)\.(?P<id>\S+)$")


def parse_bundler_report(text: str) -> dict:
    """Structured view of a ``*.bundler.txt``.

    ``{"parts": [{"header": str|None, "ids": [...], "verbose": {...}}],
    "whole_file": {...}|None}``.  A plain report is one part with header None.
    Reports of files holding several bundles back to back (written by
    build_amd.py) have ``# part N: ...`` sections and a final ``# whole file``
    section (what the bundler sees when given the whole file: the first
    bundle only).  ``verbose`` holds the OFFLOAD_BUNDLER_VERBOSE fields, e.g.
    ``{"Compressed bundle format version": "2", "Decompression method":
    "zstd", "Hashes match": "Yes", ...}`` or ``{"Uncompressed bundle": True}``.
    """
    sections: list[dict] = []
    cur = {"header": None, "ids": [], "verbose": {}}
    sections.append(cur)
    whole = None
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("# part ") or s.startswith("# whole file"):
            cur = {"header": s, "ids": [], "verbose": {}}
            if s.startswith("# whole file"):
                whole = cur
            else:
                sections.append(cur)
            continue
        if not s or s.startswith("#"):
            continue
        if _ID_RE.match(s):
            cur["ids"].append(s)
        elif s == "Uncompressed bundle.":
            cur["verbose"]["Uncompressed bundle"] = True
        elif ": " in s:
            k, v = s.split(": ", 1)
            cur["verbose"][k.strip()] = v.strip()
    if sections[0]["header"] is None and not sections[0]["ids"] and len(sections) > 1:
        sections.pop(0)
    return {"parts": sections, "whole_file": whole}


def parse_offloading(text: str) -> list[dict]:
    """``llvm-objdump-22 --offloading`` output.

    For ``.hip_fatbin`` bundles: one dict per extracted entry,
    ``{"bundle": index of the bundle in the section, "id": entry id}``.
    For ``.llvm.offloading`` (new driver, OffloadBinary): one dict per
    ``OFFLOADING IMAGE [n]`` with its fields (``kind``, ``arch``, ``triple``,
    ``producer``) and ``image`` = n.
    """
    res: list[dict] = []
    cur = None
    for line in text.splitlines():
        s = line.strip()
        m = _EXTRACT_RE.match(s)
        if m:
            res.append({"bundle": int(m.group("idx")), "id": m.group("id")})
            cur = None
            continue
        m = re.match(r"^OFFLOADING IMAGE \[(\d+)\]:$", s)
        if m:
            cur = {"image": int(m.group(1))}
            res.append(cur)
            continue
        if cur is not None and s:
            parts = s.split(None, 1)
            if len(parts) == 2:
                cur[parts[0]] = parts[1].strip()
    return res


def parse_bundler_list(text: str) -> list[str]:
    """Entry ids listed in a bundler or offloading report, in order.

    Accepts ``clang-offload-bundler --list`` output (verbose lines ignored;
    for multi-part reports the ids of every ``# part`` in order, without the
    ``# whole file`` section) and ``llvm-objdump --offloading`` output
    (``Extracting offload bundle: <file>.<n>.<id>`` lines, all bundles).
    """
    if "Extracting offload bundle:" in text:
        return [e["id"] for e in parse_offloading(text) if "id" in e]
    rep = parse_bundler_report(text)
    return [i for part in rep["parts"] for i in part["ids"]]
