"""The NVIDIA reader against NVIDIA's own tools.

Every expected value comes from the reports committed next to the fixtures (``ptxas -v``,
``cuobjdump --dump-resource-usage`` / ``--list-elf``, parsed by tests/truth/nvidia_reports.py),
from the CUDA sources (``__launch_bounds__``, ``__maxnreg__``, ``__cluster_dims__``), from the
manifest's build commands, or from a few raw header bytes read here with ``struct``; never from
occlint's own output. Parametrized over fixtures/nvidia/manifest.json, so new fixtures are
covered automatically.
"""

from __future__ import annotations

import json
import re
import struct
from collections import Counter
from pathlib import Path

import pytest

from occlint.readers.loader import ReadOptions, read_path
from occlint.readers.nvidia import read_cubin
from occlint.readers.span import Span
from tests.conftest import run_occlint
from tests.truth.nvidia_reports import (
    parse_cuobjdump_list,
    parse_cuobjdump_resource,
    parse_ptxas,
    split_commands,
)


def occlint(*args: str):
    """The CLI as a user runs it, without configuration files; findings do not change the
    exit code (--exit-zero), errors still give 2."""
    return run_occlint(*args, "--isolated", "--exit-zero")

REPO = Path(__file__).resolve().parent.parent
MANIFEST_PATH = REPO / "fixtures/nvidia/manifest.json"
MANIFEST = json.loads(MANIFEST_PATH.read_text()) if MANIFEST_PATH.exists() else []
pytestmark = pytest.mark.skipif(not MANIFEST, reason="fixtures/nvidia/manifest.json missing")

CUBINS = [e for e in MANIFEST if e["kind"] in ("cubin", "rdc_cubin")]
CONTAINERS = [e for e in MANIFEST if e["kind"] not in ("cubin", "rdc_cubin")]
HOST_ELFS = [e for e in CONTAINERS if e["kind"] in ("executable", "shared_library")]
BY_PATH = {e["path"]: e for e in MANIFEST}
CONTAINER_DIR = "fixtures/nvidia/containers"
FATBIN_MAGIC = 0xBA55ED50


def _ids(entries):
    return [e["path"].removeprefix("fixtures/nvidia/") for e in entries]


def _text(rel: str) -> str:
    return (REPO / rel).read_text(encoding="utf-8")


def _read(rel: str, **options):
    return read_path(REPO / rel, rel, ReadOptions(**options))


def _ptxas_entries(entry) -> list[dict]:
    return [f for f in parse_ptxas(_text(entry["reports"]["ptxas"])) if f["is_entry"]]


def _resources(kernels) -> dict:
    """{(arch, name): resource fields} of a list of kernels (for comparisons)."""
    out = {}
    for k in kernels:
        r = k.resources
        out[(k.arch, k.name)] = (r.registers, r.shared_bytes, r.local_bytes,
                                 r.spill_instructions, r.max_block_size, r.max_reg_count,
                                 r.param_bytes, r.barriers, r.stack_bytes, r.cluster_dims)
    return out


def _sm(arch: str) -> int:
    return int(re.match(r"(?:sm|compute)_(\d+)", arch)[1])


# All entry functions ptxas compiled for any fixture: cuobjdump also lists device functions
# (e.g. __cuda_sm3x_div_rn_noftz_f32_slowpath in device-linked cubins), which are no kernels.
ENTRY_NAMES = {f["name"] for e in CUBINS for f in _ptxas_entries(e)}


# -- sources -----------------------------------------------------------------------------------
_ATTRS = ("__launch_bounds__", "__maxnreg__", "__cluster_dims__")
_TOKEN = re.compile(r"\s*(\w+)\s*(\(([^)]*)\))?")


def source_kernels(entry) -> dict[str, dict[str, tuple[int, ...]]]:
    """{kernel identifier: {attribute: arguments}} of the __global__ functions in the sources."""
    out: dict[str, dict[str, tuple[int, ...]]] = {}
    for rel in entry["sources"]:
        src = _text(rel)
        for match in re.finditer(r"__global__\b", src):
            pos, attrs = match.end(), {}
            while (token := _TOKEN.match(src, pos)) is not None:
                pos = token.end()
                if token[1] in _ATTRS:
                    attrs[token[1]] = tuple(int(x) for x in token[3].split(","))
                elif token[2] is not None:
                    out[token[1]] = attrs
                    break
    return out


def identifier(mangled: str) -> str:
    """The function identifier of an Itanium-mangled name (or an extern "C" name)."""
    match = re.match(r"_Z(\d+)", mangled)
    return mangled[match.end():match.end() + int(match[1])] if match else mangled


# -- a tiny independent fatbin walker (fixture sanity checks) ---------------------------------
def fatbin_entries(data: bytes, start: int = 0) -> list[list[dict]]:
    """Entry headers of every fatbin container in ``data`` (struct only, no occlint)."""
    containers, pos = [], start
    while (pos := data.find(struct.pack("<I", FATBIN_MAGIC), pos)) >= 0:
        _, _, hsize, size = struct.unpack_from("<IHHQ", data, pos)
        body, end, entries = pos + hsize, pos + hsize + size, []
        while body < end:
            kind, _, ehs, psize = struct.unpack_from("<HHIQ", data, body)
            flags, = struct.unpack_from("<Q", data, body + 0x28)
            sm, = struct.unpack_from("<I", data, body + 0x1C)
            entries.append({"kind": kind, "sm": sm, "flags": flags,
                            "payload": (body + ehs, psize)})
            body += ehs + psize
        containers.append(entries)
        pos = end
    return containers


def elf_section(data: bytes, name: str) -> tuple[int, int]:
    """(offset, size) of a section of a 64-bit little-endian ELF."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shnum, shstrndx = struct.unpack_from("<HH", data, 0x3C)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + 64 * i) for i in range(shnum)]
    names_off = headers[shstrndx][4]
    for h in headers:
        end = data.index(b"\0", names_off + h[0])
        if data[names_off + h[0]:end].decode() == name:
            return h[4], h[5]
    raise KeyError(name)


# ---------------------------------------------------------------------------------------------
def test_manifest_covers_the_brief():
    kinds = Counter(e["kind"] for e in MANIFEST)
    assert kinds["cubin"] and kinds["rdc_cubin"] and kinds["fatbin"] and kinds["executable"]
    archs = {a for e in CUBINS for a in e["archs"]}
    assert {"sm_90a", "sm_100a"} <= archs
    assert {e["compiler"] for e in CUBINS} >= {"nvcc 13.0", "ptxas 12.9"}


@pytest.mark.parametrize("entry", CUBINS, ids=_ids(CUBINS))
def test_cubin_matches_ptxas(entry):
    """Registers, static shared memory, stack frame, spills and barriers equal ptxas -v."""
    result = _read(entry["path"])
    assert not result.errors, [e.line() for e in result.errors]
    truth = _ptxas_entries(entry)
    assert sorted(k.name for k in result.kernels) == sorted(f["name"] for f in truth)
    data = (REPO / entry["path"]).read_bytes()
    by_name = {k.name: k for k in result.kernels}
    for t in truth:
        k = by_name[t["name"]]
        res = k.resources
        where = f"{entry['path']}:{t['name']}"
        assert k.vendor == "nvidia" and k.wavefront_size == 32 and k.entry is None
        assert k.arch == k.target_id == entry["archs"][0] == t["arch"], where
        assert k.abi_version == data[8], where  # EI_ABIVERSION
        assert res.registers == t["registers"], where
        assert res.shared_bytes == t["smem"], where
        assert res.local_bytes == t["stack_frame"], where
        spilled = t["spill_stores"] + t["spill_loads"] > 0
        assert (res.spill_instructions > 0) == spilled, where
        if t["barriers"] is not None:
            assert res.barriers == t["barriers"], where
        if t["cumulative_stack"] is not None:
            assert res.stack_bytes == t["cumulative_stack"], where


@pytest.mark.parametrize("entry", CUBINS, ids=_ids(CUBINS))
def test_cubin_launch_bounds_match_source(entry):
    """__launch_bounds__(T, B), __maxnreg__, -maxrregcount and __cluster_dims__ as written,
    with B reported only where ptxas honoured it (it warns when it ignores it)."""
    declared = source_kernels(entry)
    warnings = {f["name"]: f["warnings"] for f in _ptxas_entries(entry)}
    maxrreg = next((int(o.split("=")[1]) for o in entry.get("options", [])
                    if o.startswith("-maxrregcount=")), None)
    result = _read(entry["path"])
    assert result.kernels
    for k in result.kernels:
        attrs = declared[identifier(k.name)]
        res = k.resources
        bounds = attrs.get("__launch_bounds__")
        assert res.max_block_size == (bounds[0] if bounds else None), k.name
        assert res.required_block is None
        ignored = any("minnctapersm" in w for w in warnings[k.name])
        blocks = bounds[1] if bounds and len(bounds) > 1 else 1
        assert res.min_blocks == (blocks if blocks > 1 and not ignored else None), k.name
        if "__maxnreg__" in attrs:
            assert res.max_reg_count == attrs["__maxnreg__"][0]
        elif maxrreg is not None:
            assert res.max_reg_count == maxrreg
        elif not bounds:
            assert res.max_reg_count == 255
        if "__cluster_dims__" in attrs and _sm(k.arch) >= 90:
            assert res.cluster_dims == attrs["__cluster_dims__"]
        else:
            assert res.cluster_dims is None


def test_abi_versions_7_and_8_both_decode():
    seen = Counter()
    for entry in CUBINS:
        abi = (REPO / entry["path"]).read_bytes()[8]
        kernels = _read(entry["path"]).kernels
        assert kernels and all(k.abi_version == abi for k in kernels)
        seen[abi] += 1
    assert seen[7] and seen[8]


@pytest.mark.parametrize("entry", [e for e in CUBINS if e["kind"] == "rdc_cubin"],
                         ids=_ids([e for e in CUBINS if e["kind"] == "rdc_cubin"]))
def test_rdc_objects(entry):
    data = (REPO / entry["path"]).read_bytes()
    assert struct.unpack_from("<H", data, 16)[0] == 1  # ET_REL
    kernels = _read(entry["path"]).kernels
    assert kernels
    for k in kernels:
        # stack.cu: recursive_fib calls the self-recursive fib_rec (the -rdc call graph shows it)
        assert k.resources.uses_recursion == (identifier(k.name) == "recursive_fib")


# -- containers ----------------------------------------------------------------------------
def _cuobjdump_functions(entry) -> list[dict]:
    """Functions cuobjdump saw, from its plain run, else from its -all run (an -rdc object
    keeps its code in __nv_relfatbin, which plain cuobjdump may skip)."""
    text = _text(entry["reports"]["cuobjdump"])
    blocks = {cmd: body for cmd, body in split_commands(text)
              if cmd and "--dump-resource-usage" in cmd}
    plain = [parse_cuobjdump_resource(b) for c, b in blocks.items() if "-all" not in c.split()]
    funcs = plain[0] if plain else []
    if not funcs:
        every = [parse_cuobjdump_resource(b) for c, b in blocks.items() if "-all" in c.split()]
        funcs = every[0] if every else []
    return funcs


@pytest.mark.parametrize("entry", CONTAINERS, ids=_ids(CONTAINERS))
def test_container_kernels_match_cuobjdump(entry):
    """Kernel count per file and per arch, registers, stack and shared memory equal
    cuobjdump's (its SHARED is the section size: on sm_90+ linked cubins it includes the
    1 KiB reserve, which occlint leaves out, as ptxas does)."""
    result = _read(entry["path"])
    assert not result.errors, [e.line() for e in result.errors]
    funcs = [f for f in _cuobjdump_functions(entry) if f["name"] in ENTRY_NAMES]
    assert funcs or not entry["archs"]  # a PTX-only fatbin has no SASS
    assert Counter((k.arch, k.name) for k in result.kernels) == \
        Counter((f["arch"], f["name"]) for f in funcs)
    relocatable = entry["kind"] == "rdc_object"
    expected = sorted(
        (f["arch"], f["name"], f["REG"], f["STACK"],
         f["SHARED"] - 1024 if f["SHARED"] and _sm(f["arch"]) >= 90 and not relocatable
         else f["SHARED"]) for f in funcs)
    got = sorted((k.arch, k.name, k.resources.registers, k.resources.local_bytes,
                  k.resources.shared_bytes) for k in result.kernels)
    assert got == expected


def test_variants_are_read_from_containers():
    arch_specific = _read(f"{CONTAINER_DIR}/small.arch-specific.fatbin").kernels
    assert {k.arch for k in arch_specific} == {"sm_90a", "sm_100a"}
    family = _read(f"{CONTAINER_DIR}/small.family.fatbin").kernels
    assert {k.arch for k in family} == {"sm_100f", "sm_120f"}


def _same_build(entry, reference):
    return entry["archs"] == reference["archs"] and entry["sources"] == reference["sources"]


REFERENCE = BY_PATH.get(f"{CONTAINER_DIR}/small.none.fatbin")
COMPRESSED = [e for e in CONTAINERS if REFERENCE and e is not REFERENCE
              and e["kind"] == "fatbin" and _same_build(e, REFERENCE)
              and isinstance(e["compress_mode"], str)]


@pytest.mark.parametrize("entry", COMPRESSED, ids=_ids(COMPRESSED))
def test_compressed_fatbins_read_like_uncompressed(entry):
    result = _read(entry["path"])
    assert not result.errors
    assert _resources(result.kernels) == _resources(_read(REFERENCE["path"]).kernels)


def test_compression_fixtures_hold_what_they_claim():
    """Sanity check of the fixtures themselves: LZ4 and zstd ELF entries are present."""
    flags = {}
    for entry in COMPRESSED:
        data = (REPO / entry["path"]).read_bytes()
        flags[entry["path"]] = {e["flags"] & 0xA000 for c in fatbin_entries(data) for e in c
                                if e["kind"] == 2}
    assert any(0x2000 in f for f in flags.values()), "no LZ4-compressed cubin"
    assert any(0x8000 in f for f in flags.values()), "no zstd-compressed cubin"


def test_executables_read_like_their_fatbin():
    if REFERENCE is None:
        pytest.skip("small.none.fatbin missing")
    reference = _resources(_read(REFERENCE["path"]).kernels)
    for entry in HOST_ELFS + [e for e in CONTAINERS if e["kind"] == "host_object"]:
        if "-rdc=true" in entry["command"] or not _same_build(entry, REFERENCE):
            continue  # -rdc builds differ (registers change after device linking)
        assert _resources(_read(entry["path"]).kernels) == reference, entry["path"]


def test_ptx_only_entries_are_artifacts():
    entry = BY_PATH[f"{CONTAINER_DIR}/small.ptx-only.fatbin"]
    expected = {f["name"] for e in CUBINS if "container_kernels.cu" in e["sources"][0]
                for f in _ptxas_entries(e)}
    result = _read(entry["path"])
    assert not result.kernels and not result.errors
    [artifact] = result.artifacts
    assert artifact.kind == "ptx" and artifact.arch == entry["ptx_archs"][0] == "compute_90"
    assert set(artifact.kernels) == expected
    # PTX next to SASS for the same architecture is not reported ...
    assert not _read(REFERENCE["path"]).artifacts
    # ... and PTX that cannot be compiled for the device asked about is not either.
    assert not _read(entry["path"], prefer=("sm_80",)).artifacts
    assert len(_read(entry["path"], prefer=("sm_90",)).artifacts) == 1


def test_two_containers_back_to_back():
    entry = BY_PATH[f"{CONTAINER_DIR}/small.concat.fatbin"]
    data = (REPO / entry["path"]).read_bytes()
    assert len(fatbin_entries(data)) == len(entry["parts"]) == 2
    result = _read(entry["path"])
    assert not result.errors
    first = _read(entry["parts"][0])
    assert _resources(result.kernels) == _resources(first.kernels)
    assert [a.kind for a in result.artifacts] == ["ptx"]
    assert {k.entry.split("/")[0] for k in result.kernels} == {"fatbin0"}
    assert result.artifacts[0].entry.startswith("fatbin1/")


@pytest.mark.parametrize("entry", HOST_ELFS, ids=_ids(HOST_ELFS))
def test_device_link_stubs_are_not_kernels(entry):
    """nvcc puts a device-link fatbin of kernel-less stub cubins before the real one; cuobjdump
    lists those ELF files but no function in them."""
    data = (REPO / entry["path"]).read_bytes()
    offset, size = elf_section(data, ".nv_fatbin")
    containers = fatbin_entries(data[:offset + size], offset)
    listed = [x for x in parse_cuobjdump_list(_text(entry["reports"]["cuobjdump"]))
              if x["kind"] == "elf" and "-all" not in (x["command"] or "").split()]
    assert len(listed) == sum(1 for c in containers for e in c if e["kind"] == 2)
    if "-rdc=true" in entry["command"]:
        return  # -rdc: one device-linked container, no separate stubs
    assert len(containers) == 2
    for stub in containers[0]:
        assert stub["kind"] == 2 and stub["flags"] & 0xA000 == 0
        start, length = stub["payload"]
        stub_elf = data[start:start + length]
        assert stub_elf[:4] == b"\x7fELF" and struct.unpack_from("<H", stub_elf, 18)[0] == 190
        assert read_cubin(Span(stub_elf), "stub", None, ReadOptions()) == []


# -- selection ---------------------------------------------------------------------------------
def test_device_architecture_selects_the_driver_choice():
    path = REFERENCE["path"]
    archs = lambda **o: {k.arch for k in _read(path, **o).kernels}  # noqa: E731
    assert archs(prefer=("sm_90",)) == {"sm_90"}
    assert archs(prefer=("sm_89",)) == {"sm_80"}  # sm_80 SASS runs on CC 8.9
    assert archs(prefer=("sm_86", "sm_120")) == {"sm_80", "sm_120"}
    assert archs(prefer=("sm_103",)) == set(REFERENCE["archs"])  # sm_100a is CC-10.0-only
    assert archs(targets=("sm_80",)) == {"sm_80"}
    assert archs(targets=("sm_100",)) == {"sm_100a"}
    specific = f"{CONTAINER_DIR}/small.arch-specific.fatbin"
    assert {k.arch for k in _read(specific, prefer=("sm_90",)).kernels} == {"sm_90a"}
    family = f"{CONTAINER_DIR}/small.family.fatbin"
    assert {k.arch for k in _read(family, prefer=("sm_103",)).kernels} == {"sm_100f"}


# -- CLI ---------------------------------------------------------------------------------------
def test_cli_device_h100_reads_sm_90_only():
    path = f"{CONTAINER_DIR}/small.default.fatbin"
    run = occlint(str(REPO / path), "--device", "h100", "--format", "json")
    assert run.code == 0, run.err
    assert "Traceback" not in run.err
    doc = run.json()
    assert doc["kernels"] and {k["arch"] for k in doc["kernels"]} == {"sm_90"}
    assert {k["status"] for k in doc["kernels"]} == {"ok"}
    assert {k["name"] for k in doc["kernels"]} == {
        f["name"] for e in CUBINS if e["path"].endswith("container_kernels.sm_90.cubin")
        for f in _ptxas_entries(e)}


def test_cli_target_sm_80():
    run = occlint(str(REPO / CONTAINER_DIR / "app"), "--target", "sm_80", "--format", "json")
    assert run.code == 0, run.err
    doc = run.json()
    assert doc["kernels"] and {k["arch"] for k in doc["kernels"]} == {"sm_80"}
