"""Sanity checks of the NVIDIA fixture reports and of the truth parsers.

Runs the parsers in nvidia_reports.py over every report listed in
fixtures/nvidia/manifest.json and checks that the two independent NVIDIA
sources agree (ptxas -v, printed while compiling, vs. cuobjdump, which reads
the finished binary), and that the fixtures contain what their command lines
and sources say.  No occlint import.
"""

from __future__ import annotations

import hashlib
import re

import pytest

from .nvidia_reports import (
    REPO,
    load_manifest,
    parse_cuobjdump_list,
    parse_cuobjdump_resource,
    parse_ptxas,
    parse_ptxas_module,
    split_commands,
)

MANIFEST = load_manifest() if (REPO / "fixtures/nvidia/manifest.json").exists() else []
pytestmark = pytest.mark.skipif(not MANIFEST, reason="fixtures/nvidia/manifest.json missing")

CUBINS = [e for e in MANIFEST if e["kind"] in ("cubin", "rdc_cubin")]
EXEC_CUBINS = [e for e in CUBINS if e["kind"] == "cubin"]
CONTAINERS = [e for e in MANIFEST if e["kind"] not in ("cubin", "rdc_cubin")]

CUBIN_ARCHS = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_120"]
CONTAINER_KERNELS = {
    "_Z27gamma_correction_gridstridePhmf",
    "_Z17smem16k_transposePKfPfi",
    "_Z14regheavy_smallPKfPfi",
}
RESERVED_SMEM = 1024  # sm_90+: .nv.shared.<k> holds static smem + 1 KiB reserved


def _read(rel: str) -> str:
    return (REPO / rel).read_text(encoding="utf-8")


def _ids(entries):
    return [e["path"] for e in entries]


def _sm(arch: str) -> int:
    return int(re.match(r"(?:sm|compute)_(\d+)", arch).group(1))


def _ptxas(e) -> list[dict]:
    return parse_ptxas(_read(e["reports"]["ptxas"]))


def _cuobj(e) -> list[dict]:
    return parse_cuobjdump_resource(_read(e["reports"]["cuobjdump"]))


def _by_name(records):
    out = {}
    for r in records:
        assert r["name"] not in out, f"duplicate {r['name']}"
        out[r["name"]] = r
    return out


def _cubin(stem: str, arch: str, sub: str = "") -> dict:
    path = f"fixtures/nvidia/cubin/{sub}{stem}.{arch}.cubin"
    for e in MANIFEST:
        if e["path"] == path:
            return e
    raise KeyError(path)


def _entries(e) -> dict:
    return {f["name"]: f for f in _ptxas(e) if f["is_entry"]}


# --------------------------------------------------------------------------- #
# Manifest
# --------------------------------------------------------------------------- #
def test_manifest_paths_and_hashes():
    for e in MANIFEST:
        data = (REPO / e["path"]).read_bytes()
        assert len(data) == e["bytes"], e["path"]
        assert hashlib.sha256(data).hexdigest() == e["sha256"], e["path"]
        for rep in e["reports"].values():
            assert (REPO / rep).is_file(), rep
        for src in e["sources"]:
            assert (REPO / src).is_file(), src
        for key in ("command", "path"):
            assert "/work/" not in e[key] and "/tmp/" not in e[key] and "/root/" not in e[key]
        assert e["compiler"].startswith(("nvcc 13.0", "ptxas 12.9"))


def test_manifest_covers_every_source_and_arch():
    have = {e["path"] for e in MANIFEST}
    stems = {p.stem for p in (REPO / "fixtures/nvidia/src").glob("*.cu")}
    stems -= {"container_app", "rdc_extern"}  # app: executables only; extern: -rdc only
    for stem in stems:
        for arch in CUBIN_ARCHS:
            assert f"fixtures/nvidia/cubin/{stem}.{arch}.cubin" in have


def test_reports_have_no_absolute_paths():
    for e in MANIFEST:
        for rep in e["reports"].values():
            text = _read(rep)
            assert str(REPO) not in text and "/tmp/" not in text, rep


# --------------------------------------------------------------------------- #
# Cubins: ptxas -v vs cuobjdump --dump-resource-usage
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("e", CUBINS, ids=_ids(CUBINS))
def test_cubin_has_entries_for_its_arch(e):
    funcs = _ptxas(e)
    entries = [f for f in funcs if f["is_entry"]]
    assert entries, "no entry function in ptxas output"
    for f in funcs:
        assert f["arch"] == e["archs"][0]
        assert f["stack_frame"] is not None and f["spill_stores"] is not None
    for f in entries:
        assert f["registers"] is not None and f["registers"] > 0
        assert f["barriers"] is not None
    assert parse_ptxas_module(_read(e["reports"]["ptxas"]))["archs"] == e["archs"]


@pytest.mark.parametrize("e", CUBINS, ids=_ids(CUBINS))
def test_cubin_reg_ptxas_equals_cuobjdump(e):
    ptx = _entries(e)
    cuo = _by_name(_cuobj(e))
    if e["kind"] == "cubin":
        # whole-program cubin: cuobjdump lists exactly the kernels
        assert set(cuo) == set(ptx)
    else:
        # relocatable: device functions are listed too
        assert set(ptx) <= set(cuo)
    for name, f in ptx.items():
        assert cuo[name]["REG"] == f["registers"], name
        assert cuo[name]["arch"] is None  # bare cubin: no per-ELF header


@pytest.mark.parametrize("e", EXEC_CUBINS, ids=_ids(EXEC_CUBINS))
def test_cubin_stack_smem_cmem(e):
    arch = e["archs"][0]
    ptx = _entries(e)
    cuo = _by_name(_cuobj(e))
    for name, f in ptx.items():
        c = cuo[name]
        assert c["STACK"] == f["stack_frame"], name
        assert c["LOCAL"] == 0
        if f["cumulative_stack"] is not None:
            assert f["cumulative_stack"] >= f["stack_frame"]
        if f["cmem0"] is not None:  # CUDA 13 ptxas prints cmem[0] up to sm_89 only
            assert c["CONSTANT[0]"] == f["cmem0"], name
        if _sm(arch) < 90:
            assert c["SHARED"] == f["smem"], name
        elif f["smem"] > 0:
            assert c["SHARED"] == f["smem"] + RESERVED_SMEM, name
        else:
            assert c["SHARED"] in (0, RESERVED_SMEM), name


def test_cmem0_printed_only_below_sm90():
    for e in EXEC_CUBINS:
        if e["compiler"] != "nvcc 13.0":
            continue
        for f in _entries(e).values():
            assert (f["cmem0"] is not None) == (_sm(e["archs"][0]) < 90), e["path"]


def test_rdc_stack_not_in_cuobjdump():
    """ET_REL cubins carry MAX_STACK_SIZE, not MIN_STACK_SIZE: cuobjdump's
    STACK is 0 there although ptxas reports a frame."""
    e = _cubin("stack", "sm_90", "rdc/")
    assert e["kind"] == "rdc_cubin"
    ptx = _entries(e)
    cuo = _by_name(_cuobj(e))
    assert ptx["_Z11local_arrayPKfPKiPfi"]["stack_frame"] == 1024
    assert cuo["_Z11local_arrayPKfPKiPfi"]["STACK"] == 0
    assert "_Z7fib_reci" in cuo  # device function listed in the relocatable object


# --------------------------------------------------------------------------- #
# What the sources promise
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("arch", CUBIN_ARCHS)
def test_source_expectations(arch):
    gamma = _entries(_cubin("gamma", arch))
    assert len(gamma) == 2 and all("gamma" in n for n in gamma)

    assert list(_entries(_cubin("mandelbrot", arch))) == ["mandelbrot_512"]

    stencils = _entries(_cubin("stencils", arch))
    for k in (
        "divergence",
        "gameoflife",
        "gaussblur",
        "gradient",
        "jacobi",
        "lapgsrb",
        "laplacian",
        "sincos",
        "tricubic",
        "vecadd",
        "wave13pt",
    ):
        assert any(k in n for n in stencils), k
    assert len(stencils) == 12  # vecadd<float> and vecadd<double>
    sincos = next(f for n, f in stencils.items() if "sincos" in n)
    # sinf/cosf slow path (Payne-Hanek reduction) keeps a 32-byte local array
    # up to sm_90a; ptxas 13.0 needs no frame for it on sm_100a/sm_120
    assert (sincos["stack_frame"] > 0) == (_sm(arch) < 100)

    (heavy,) = _entries(_cubin("regheavy", arch)).values()
    assert heavy["registers"] > 128 and heavy["spill_stores"] == 0

    (sp,) = _entries(_cubin("spill", arch)).values()
    assert sp["registers"] <= 64 and sp["spill_stores"] > 0 and sp["spill_loads"] > 0

    smem = {n: f["smem"] for n, f in _entries(_cubin("smem_tiles", arch)).items()}
    assert sorted(smem.values()) == [16384, 49152]

    (dyn,) = _entries(_cubin("dynsmem", arch)).values()
    assert dyn["smem"] == 0 and dyn["barriers"] == 1
    (dyn_c,) = _cuobj(_cubin("dynsmem", arch))
    assert dyn_c["SHARED"] == (RESERVED_SMEM if _sm(arch) >= 90 else 0)

    lb = _entries(_cubin("launch_bounds", arch))
    assert lb["_Z8lb_256_4PKfPfi"]["registers"] <= 64
    assert lb["_Z7lb_1024PKfPfi"]["registers"] <= 64
    assert lb["_Z7lb_nonePKfPfi"]["registers"] > 64
    # (1024, 2) needs 2048 threads/SM: ptxas warns where an SM holds fewer
    lb2 = lb["_Z9lb_1024_2PKfPfi"]
    if arch in ("sm_75", "sm_86", "sm_89", "sm_120"):
        assert lb2["warnings"] and lb2["registers"] == 64
    else:
        assert not lb2["warnings"] and lb2["registers"] <= 32

    (mr,) = _entries(_cubin("maxnreg", arch)).values()
    assert mr["registers"] <= 32

    cl = _entries(_cubin("cluster", arch))
    assert ("_Z13cluster_2x1x1Pf" in cl) == (_sm(arch) >= 90)

    (bp,) = _cuobj(_cubin("bigparam", arch))
    assert bp["CONSTANT[0]"] > 1204

    st = {f["name"]: f for f in _ptxas(_cubin("stack", arch))}
    assert st["_Z11local_arrayPKfPKiPfi"]["stack_frame"] >= 1024
    assert not st["_Z7fib_reci"]["is_entry"]
    assert st["_Z13printf_kerneli"]["cumulative_stack"] is not None


@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_120"])
def test_maxrregcount32(arch):
    (f,) = _entries(_cubin("regheavy", arch, "maxrreg32/")).values()
    assert f["registers"] <= 32 and f["spill_stores"] > 0


def test_ptxas129_blocks_parse():
    c129 = [e for e in CUBINS if e["compiler"] == "ptxas 12.9"]
    assert c129
    archs = {e["archs"][0] for e in c129}
    assert {"sm_80", "sm_90a", "sm_100a", "sm_120"} <= archs
    for e in c129:
        assert (REPO / e["ptx"]).is_file()
        assert ".version 8.8" in _read(e["ptx"])


# --------------------------------------------------------------------------- #
# Containers
# --------------------------------------------------------------------------- #
def _blocks(e):
    return split_commands(_read(e["reports"]["cuobjdump"]))


def _first(e, what: str, all_: bool = False):
    """Records of the first report block whose command matches."""
    for cmd, body in _blocks(e):
        if what in cmd and (("-all" in cmd.split()) == all_):
            return cmd, body
    raise KeyError(what)


@pytest.mark.parametrize("e", CONTAINERS, ids=_ids(CONTAINERS))
def test_container_listing_matches_command(e):
    _, body = _first(e, "--list-elf")
    lst = parse_cuobjdump_list(body)
    elf = [x["arch"] for x in lst if x["kind"] == "elf"]
    ptx = [x["arch"] for x in lst if x["kind"] == "ptx"]
    # cuobjdump names 'f' ELFs without the suffix (sm_100f -> ...sm_100.cubin)
    want_elf = [a[:-1] if a.endswith("f") else a for a in e["archs"]]
    want_ptx = [a.replace("compute_", "sm_") for a in e["ptx_archs"]]
    if e["kind"] in ("executable", "shared_library") and "-rdc=true" not in e["command"]:
        # non-rdc linked binaries: nvcc's device-link stub cubins (no kernels)
        # come first, then the real ones; a plain -c object has only the latter
        assert elf == want_elf + want_elf
    else:
        assert elf == want_elf
    if e["kind"] == "executable" and "-rdc=true" in e["command"]:
        assert ptx == []  # the PTX sits in __nv_relfatbin, listed only with -all
        _, body_all = _first(e, "--list-elf", all_=True)
        lst_all = parse_cuobjdump_list(body_all)
        assert [x["arch"] for x in lst_all if x["kind"] == "ptx"] == want_ptx
        assert len([x for x in lst_all if x["kind"] == "elf"]) == 2 * len(want_elf)
    else:
        assert ptx == want_ptx


@pytest.mark.parametrize("e", CONTAINERS, ids=_ids(CONTAINERS))
def test_container_resource_usage(e):
    _, body = _first(e, "--dump-resource-usage")
    recs = parse_cuobjdump_resource(body)
    if not e["archs"]:
        assert recs == []  # PTX only
        return
    kernels = [r for r in recs if not r["name"].startswith("__cuda")]
    by_arch: dict[str, set] = {}
    for r in kernels:
        by_arch.setdefault(r["arch"], set()).add(r["name"])
    assert sorted(by_arch) == sorted(e["archs"])
    for names in by_arch.values():
        assert names == CONTAINER_KERNELS
    rdc = "-rdc=true" in e["command"]
    for r in kernels:
        if r["arch"] not in CUBIN_ARCHS or rdc:
            continue  # no whole-program cubin for sm_100f/sm_120f; rdc code differs
        ref = _entries(_cubin("container_kernels", r["arch"]))[r["name"]]
        assert r["REG"] == ref["registers"], (r["arch"], r["name"])
        assert r["STACK"] == ref["stack_frame"]


def test_compression_flags_in_cuobjdump_headers():
    """cuobjdump prints 'compressed' in an image header when the entry is."""

    def elf_compressed(name):
        e = next(x for x in CONTAINERS if x["path"].endswith("/" + name))
        _, body = _first(e, "--dump-resource-usage")
        return {r["arch"]: r["compressed"] for r in parse_cuobjdump_resource(body)}

    assert set(elf_compressed("small.none.fatbin").values()) == {False}
    assert set(elf_compressed("small.default.fatbin").values()) == {False}
    assert set(elf_compressed("small.speed.fatbin").values()) == {False}
    assert set(elf_compressed("small.size.fatbin").values()) == {True}
    assert set(elf_compressed("small.compress-all.fatbin").values()) == {True}
    assert set(elf_compressed("small.speed-compress-all.fatbin").values()) == {True}
    assert set(elf_compressed("small.rdc.o").values()) == {True}


def test_arch_specific_and_family_names():
    def archs(name):
        e = next(x for x in CONTAINERS if x["path"].endswith("/" + name))
        _, body = _first(e, "--dump-resource-usage")
        return sorted({r["arch"] for r in parse_cuobjdump_resource(body)})

    assert archs("small.arch-specific.fatbin") == ["sm_100a", "sm_90a"]
    assert archs("small.family.fatbin") == ["sm_100f", "sm_120f"]


def test_concat_holds_both_parts():
    e = next(x for x in CONTAINERS if x["path"].endswith("/small.concat.fatbin"))
    _, body = _first(e, "--list-elf")
    lst = parse_cuobjdump_list(body)
    assert [x["arch"] for x in lst if x["kind"] == "ptx"] == ["sm_120", "sm_90"]
    assert len([x for x in lst if x["kind"] == "elf"]) == 5


# --------------------------------------------------------------------------- #
# Parser unit tests on literal snippets (formats of other CUDA versions)
# --------------------------------------------------------------------------- #
def test_parse_ptxas_older_format_without_barriers():
    text = (
        "ptxas info    : 0 bytes gmem\n"
        "ptxas info    : Compiling entry function '_Z1kPf' for 'sm_70'\n"
        "ptxas info    : Function properties for _Z1kPf\n"
        "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Used 8 registers, 1024 bytes smem, 356 bytes cmem[0]\n"
    )
    (f,) = parse_ptxas(text)
    assert f["registers"] == 8 and f["barriers"] is None and f["smem"] == 1024
    assert f["cmem0"] == 356 and f["is_entry"] and f["arch"] == "sm_70"


def test_parse_cuobjdump_bare_and_fatbin():
    bare = (
        "\nResource usage:\n Common:\n  GLOBAL:0\n Function k:\n"
        "  REG:10 STACK:0 SHARED:1024 LOCAL:0 CONSTANT[0]:536 TEXTURE:0 SURFACE:0 SAMPLER:0\n"
    )
    (r,) = parse_cuobjdump_resource(bare)
    assert r["arch"] is None and r["REG"] == 10 and r["SHARED"] == 1024
    assert r["CONSTANT"] == {0: 536}
    fat = (
        "\nFatbin elf code:\n================\narch = sm_90a\ncode version = [1,8]\nhost = linux\n"
        "compile_size = 64bit\ncompressed\n"
        + bare
        + "\nFatbin ptx code:\n================\narch = sm_90a\ncode version = [9,0]\n"
        "host = linux\ncompile_size = 64bit\ncompressed\nptxasOptions = \n"
    )
    (r,) = parse_cuobjdump_resource(fat)
    assert r["arch"] == "sm_90a" and r["compressed"] is True and r["elf_index"] == 1
