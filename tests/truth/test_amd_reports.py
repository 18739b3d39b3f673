"""Sanity checks of the AMD fixture reports and of the truth parsers.

Runs the parsers in amd_reports.py over every report listed in
fixtures/amd/manifest.json and checks that the independent sources agree:
compiler remarks vs. metadata notes vs. llvm-objdump's kernel descriptors vs.
the command lines recorded in the manifest.  No occlint import.
"""

from __future__ import annotations

import pytest

from .amd_reports import (
    REPO,
    load_manifest,
    parse_bundler_list,
    parse_bundler_report,
    parse_kd,
    parse_notes,
    parse_offloading,
    parse_remarks,
)

MANIFEST = load_manifest() if (REPO / "fixtures/amd/manifest.json").exists() else []
pytestmark = pytest.mark.skipif(not MANIFEST, reason="fixtures/amd/manifest.json missing")

CODE_OBJECTS = [e for e in MANIFEST if e["kind"] in ("code_object", "relocatable_code_object")]
BUNDLES = [e for e in MANIFEST if e["kind"] in ("bundle", "ccob")]
HOST_ELFS = [e for e in MANIFEST if e["kind"] in ("host_object", "shared_library", "executable")]

UNIFIED_VGPR = ("gfx90a", "gfx942", "gfx950")  # .vgpr_count = alignTo(arch, 4) + agpr


def _read(rel: str) -> str:
    return (REPO / rel).read_text(encoding="utf-8")


def _ids(entries):
    return [e["path"] for e in entries]


def _gfx(target: str) -> str:
    return target.split(":")[0]


def _expected_ids(entry) -> set[str]:
    return {f"hipv4-amdgcn-amd-amdhsa--{t}" for t in entry["targets"]}


# ---------------------------------------------------------------------------
def test_manifest_paths_exist():
    assert MANIFEST
    for e in MANIFEST:
        assert (REPO / e["path"]).is_file(), e["path"]
        for rep in e["reports"].values():
            assert (REPO / rep).is_file(), rep
        for src in e["sources"]:
            assert (REPO / src).is_file(), src
        assert "/work/" not in e["command"] and "/tmp/" not in e["command"]


def test_coverage():
    targets = {_gfx(t) for e in CODE_OBJECTS for t in e["targets"]}
    for t in (
        "gfx906",
        "gfx908",
        "gfx90a",
        "gfx942",
        "gfx950",
        "gfx1030",
        "gfx1100",
        "gfx1102",
        "gfx1151",
        "gfx1201",
        "gfx11-generic",
    ):
        assert t in targets
    assert {e["cov"] for e in CODE_OBJECTS} >= {3, 4, 5, 6}
    assert {e["compiler"] for e in CODE_OBJECTS} >= {"clang-15", "clang-19", "clang-22", "hipcc"}
    assert {e["ccob_version"] for e in BUNDLES} >= {None, 1, 2, 3}
    assert any(e["path"] == "fixtures/amd/co/gamma.gfx1100.hsaco" for e in CODE_OBJECTS)


@pytest.mark.parametrize("entry", CODE_OBJECTS, ids=_ids(CODE_OBJECTS))
def test_code_object_reports_agree(entry):
    rem = parse_remarks(_read(entry["reports"]["remarks"]))
    notes = parse_notes(_read(entry["reports"]["notes"]))
    kd = parse_kd(_read(entry["reports"]["kd"]))
    target = entry["targets"][0]
    gfx = _gfx(target)

    assert rem, "remarks name no kernel"
    assert notes["kernels"], "notes name no kernel"
    names = [r["name"] for r in rem]
    assert len(set(names)) == len(names)
    by_name = {k[".name"]: k for k in notes["kernels"]}
    assert sorted(names) == sorted(by_name)
    assert sorted(d["symbol"] for d in kd) == sorted(n + ".kd" for n in names)

    # remark format by LLVM version
    label = "TotalSGPRs" if entry["compiler"] == "clang-22" else "SGPRs"
    assert {r["sgpr_label"] for r in rem} == {label}
    mfma = gfx in ("gfx908", "gfx90a", "gfx942", "gfx950")
    assert all((r["agprs"] is not None) == mfma for r in rem)

    # metadata header vs. the command line
    cov = entry["cov"]
    assert notes["version"] == {3: [1, 0], 4: [1, 1], 5: [1, 2], 6: [1, 2]}[cov]
    if cov >= 4:
        assert notes["target"] == f"amdgcn-amd-amdhsa--{target}"
    else:
        assert notes["target"] is None

    for r in rem:
        k = by_name[r["name"]]
        assert k[".symbol"] == r["name"] + ".kd"
        assert k[".wavefront_size"] == entry["wave"]
        assert k[".sgpr_count"] == r["sgprs"]
        agpr = r["agprs"] or 0
        if gfx in UNIFIED_VGPR and agpr:
            assert k[".vgpr_count"] == -(-r["vgprs"] // 4) * 4 + agpr
        elif gfx == "gfx908":
            assert k[".vgpr_count"] == max(r["vgprs"], agpr)
        else:
            assert k[".vgpr_count"] == r["vgprs"]
        if mfma:
            assert k[".agpr_count"] == agpr
        assert k[".private_segment_fixed_size"] == r["scratch"]
        assert k[".group_segment_fixed_size"] == r["lds"]
        assert k[".vgpr_spill_count"] == r["vgpr_spill"]
        assert k[".sgpr_spill_count"] == r["sgpr_spill"]
        assert r["occupancy"] >= 1
        if cov >= 5:
            assert k[".uses_dynamic_stack"] is (r["dynamic_stack"] or False)
            if gfx.startswith("gfx1"):
                assert k[".workgroup_processor_mode"] == (0 if entry["cumode"] else 1)
        else:
            # COV3/4: no .workgroup_processor_mode; .uses_dynamic_stack only from
            # LLVM 15 (clang-15, hipcc), not from clang-19 -mcode-object-version=4
            assert ".workgroup_processor_mode" not in k
            if entry["compiler"] == "clang-19":
                assert ".uses_dynamic_stack" not in k
            elif r["dynamic_stack"] is not None:
                assert k[".uses_dynamic_stack"] is r["dynamic_stack"]

    for d in kd:
        k = by_name[d["symbol"][: -len(".kd")]]
        if d["error"] is None:
            dv = d["directives"]
            assert dv[".amdhsa_group_segment_fixed_size"] == k[".group_segment_fixed_size"]
            assert dv[".amdhsa_private_segment_fixed_size"] == k[".private_segment_fixed_size"]
            assert dv[".amdhsa_next_free_vgpr"] >= k[".vgpr_count"]
            if gfx.startswith("gfx1"):
                assert dv[".amdhsa_wavefront_size32"] == (1 if entry["wave"] == 32 else 0)
        else:
            # clang <= 19 sets the reserved GRANULATED_WAVEFRONT_SGPR_COUNT on gfx10+
            assert "reserved bits" in d["error"]
            assert gfx.startswith("gfx1") and entry["compiler"] in ("clang-15", "clang-19")
            assert len(d["bytes"]) == 64


def test_waves_per_eu_case_pads_descriptor():
    """The one waves_per_eu(1,2) kernel: descriptor VGPRs > metadata .vgpr_count."""
    seen = 0
    for e in CODE_OBJECTS:
        if "suite" not in e["path"]:
            continue
        notes = {k[".name"]: k for k in parse_notes(_read(e["reports"]["notes"]))["kernels"]}
        for d in parse_kd(_read(e["reports"]["kd"])):
            if d["symbol"] == "vgpr_waves_per_eu_1_2_padded.kd" and d["error"] is None:
                k = notes["vgpr_waves_per_eu_1_2_padded"]
                assert d["directives"][".amdhsa_next_free_vgpr"] > k[".vgpr_count"]
                seen += 1
    assert seen


def test_opencl_metadata_keys():
    for e in CODE_OBJECTS:
        if e["language"] != "opencl":
            continue
        ks = {k[".name"]: k for k in parse_notes(_read(e["reports"]["notes"]))["kernels"]}
        assert ks["ocl_reqd_wg_64"][".reqd_workgroup_size"] == [64, 1, 1]
        assert ks["ocl_reqd_wg_64"][".max_flat_workgroup_size"] == 64
        assert ks["ocl_wg_hint_128"][".workgroup_size_hint"] == [128, 1, 1]
        kinds = [a[".value_kind"] for a in ks["ocl_wg_hint_128"][".args"]]
        assert "dynamic_shared_pointer" in kinds


def test_remark_parser_details():
    tail = " [-Rpass-analysis=kernel-resource-usage]\n"
    text = "".join(
        [
            "k.hip:3:1: remark: Function Name: foo" + tail,
            "    3 | __global__ void foo() {\n      | ^\n",
        ]
        + [
            "k.hip:3:1: remark:     " + body + tail
            for body in (
                "TotalSGPRs: 12",
                "VGPRs: 7",
                "ScratchSize [bytes/lane]: 16",
                "Dynamic Stack: True",
                "Occupancy [waves/SIMD]: 10",
                "SGPRs Spill: 0",
                "VGPRs Spill: 2",
                "LDS Size [bytes/block]: 512",
            )
        ]
        + [
            "k.hip:9:1: remark: Function Name: helper" + tail,
            "k.hip:9:1: remark:     Occupancy [waves/SIMD]: 0" + tail,
        ]
    )
    (r,) = parse_remarks(text)
    assert r["name"] == "foo" and r["sgprs"] == 12 and r["sgpr_label"] == "TotalSGPRs"
    assert r["agprs"] is None and r["dynamic_stack"] is True and r["lds"] == 512
    assert r["scratch"] == 16 and r["vgpr_spill"] == 2 and r["occupancy"] == 10
    assert [x["name"] for x in parse_remarks(text, include_functions=True)] == ["foo", "helper"]


# ---------------------------------------------------------------------------
@pytest.mark.parametrize("entry", BUNDLES, ids=_ids(BUNDLES))
def test_bundle_reports(entry):
    rep = parse_bundler_report(_read(entry["reports"]["bundler"]))
    (part,) = rep["parts"]
    ids = part["ids"]
    assert {i for i in ids if not i.startswith("host-")} == _expected_ids(entry)
    assert sum(i.startswith("host-") for i in ids) == 1
    if entry["ccob_version"]:
        v = part["verbose"]
        assert v["Compressed bundle format version"] == str(entry["ccob_version"])
        assert v["Decompression method"] == entry["compression"]
        assert v["Hashes match"] == "Yes"
        head = (REPO / entry["path"]).read_bytes()[:6]
        assert head[:4] == b"CCOB" and int.from_bytes(head[4:6], "little") == entry["ccob_version"]
    else:
        assert part["verbose"].get("Uncompressed bundle") is True
        assert (REPO / entry["path"]).read_bytes()[:24] == b"__CLANG_OFFLOAD_BUNDLE__"


def test_concatenated_bundles():
    concat = [e for e in MANIFEST if e["kind"] == "bundle_concat"]
    assert concat
    for e in concat:
        rep = parse_bundler_report(_read(e["reports"]["bundler"]))
        assert len(rep["parts"]) == len(e["parts"]) >= 2
        for part, meta in zip(rep["parts"], e["parts"], strict=True):
            assert f"offset {meta['offset']} size {meta['size']}" in part["header"]
            assert meta["offset"] % 4096 == 0
            assert part["ids"]
        # a bundler given the whole file sees only the first bundle
        assert rep["whole_file"]["ids"] == rep["parts"][0]["ids"]
        flat = parse_bundler_list(_read(e["reports"]["bundler"]))
        assert flat == [i for p in rep["parts"] for i in p["ids"]]


@pytest.mark.parametrize("entry", HOST_ELFS, ids=_ids(HOST_ELFS))
def test_host_elf_reports(entry):
    sections = _read(entry["reports"]["sections"])
    assert ".hip_fatbin" in sections and ".hipFatBinSegment" in sections
    offl = parse_offloading(_read(entry["reports"]["offloading"]))
    bundles = sorted({o["bundle"] for o in offl})
    n_tu = len(entry.get("members", [None])) - (1 if entry["kind"] == "executable" else 0)
    assert bundles == list(range(max(n_tu, 1)))
    dev = {o["id"] for o in offl if not o["id"].startswith("host-")}
    assert dev == _expected_ids(entry)
    assert parse_bundler_list(_read(entry["reports"]["offloading"])) == [o["id"] for o in offl]


def test_rdc_objects():
    rdc = {e["rdc_driver"]: e for e in MANIFEST if e["kind"] == "rdc_object"}
    new = parse_offloading(_read(rdc["new"]["reports"]["offloading"]))
    assert {o["arch"] for o in new} == set(rdc["new"]["targets"])
    assert {o["kind"] for o in new} == {"llvm ir"}
    assert ".llvm.offloading" in _read(rdc["new"]["reports"]["sections"])
    old = parse_bundler_list(_read(rdc["old"]["reports"]["bundler"]))
    assert {i for i in old if i.startswith("hip-")} == {
        f"hip-amdgcn-amd-amdhsa--{t}" for t in rdc["old"]["targets"]
    }
    assert "__CLANG_OFFLOAD_BUNDLE__" in _read(rdc["old"]["reports"]["sections"])
