"""occlint's AMD reader against the toolchain's own reports, for every fixture.

Truth comes from LLVM: ``llvm-readelf --notes`` (LLVM's msgpack decoder of the metadata),
the compiler's ``-Rpass-analysis=kernel-resource-usage`` remarks, ``llvm-objdump``'s
decoding of the kernel descriptors, and ``clang-offload-bundler`` / ``llvm-objdump
--offloading`` listings of containers (parsed by tests/truth/amd_reports.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from occlint.devices.db import shipped_db
from occlint.readers.loader import ReadOptions, read_path
from tests.conftest import REPO
from tests.truth.amd_reports import (
    load_manifest,
    parse_bundler_list,
    parse_kd,
    parse_notes,
    parse_remarks,
)

MANIFEST = load_manifest(REPO)
CODE_OBJECTS = [e for e in MANIFEST if e["kind"] in ("code_object", "relocatable_code_object")]
CONTAINERS = [e for e in MANIFEST if e not in CODE_OBJECTS]


def _align(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def _read(entry):
    result = read_path(REPO / entry["path"], entry["path"], ReadOptions())
    assert not result.errors, [e.line() for e in result.errors]
    return result


@pytest.mark.parametrize("entry", CODE_OBJECTS, ids=[Path(e["path"]).name for e in CODE_OBJECTS])
def test_code_object_matches_llvm_reports(entry):
    result = _read(entry)
    notes = parse_notes((REPO / entry["reports"]["notes"]).read_text())
    remarks = {r["name"]: r for r in parse_remarks((REPO / entry["reports"]["remarks"])
                                                     .read_text())}
    kernels = {k.name: k for k in result.kernels}
    assert sorted(kernels) == sorted(m[".name"] for m in notes["kernels"])
    target = notes.get("target")
    for meta in notes["kernels"]:
        k = kernels[meta[".name"]]
        r = k.resources
        if target:
            assert k.target_id == target.split("--", 1)[1]
        assert k.arch == entry["targets"][0].split(":")[0]
        if entry.get("cov"):
            assert k.code_object_version == entry["cov"]
        assert k.wavefront_size == meta[".wavefront_size"]
        assert r.vgpr_count == meta[".vgpr_count"]
        assert r.agpr == meta.get(".agpr_count", 0)
        assert r.sgpr == meta[".sgpr_count"]
        assert r.lds_bytes == meta[".group_segment_fixed_size"]
        assert r.scratch_bytes == meta[".private_segment_fixed_size"]
        assert r.kernarg_bytes == meta[".kernarg_segment_size"]
        assert r.max_block_size == meta[".max_flat_workgroup_size"]
        assert r.vgpr_spill == meta.get(".vgpr_spill_count", 0)
        assert r.sgpr_spill == meta.get(".sgpr_spill_count", 0)
        if ".uses_dynamic_stack" in meta:
            assert r.dynamic_stack == bool(meta[".uses_dynamic_stack"])
        if ".workgroup_processor_mode" in meta:
            assert r.wgp_mode == bool(meta[".workgroup_processor_mode"])
        assert r.uniform_work_group_size == bool(meta.get(".uniform_work_group_size", 0))
        assert r.reqd_workgroup_size == (tuple(meta[".reqd_workgroup_size"])
                                         if ".reqd_workgroup_size" in meta else None)
        assert r.workgroup_size_hint == (tuple(meta[".workgroup_size_hint"])
                                         if ".workgroup_size_hint" in meta else None)
        remark = remarks.get(k.name)
        if remark is None:
            continue
        # The remark's VGPRs are architectural VGPRs; where the binary only records the
        # unified VGPR+AGPR count, occlint gives alignTo(vgpr, 4) and says it is inexact.
        if r.vgpr_exact:
            assert r.vgpr == remark["vgprs"]
        else:
            assert r.vgpr == _align(remark["vgprs"], 4)
        assert r.agpr == (remark["agprs"] or 0)
        assert r.sgpr == remark["sgprs"]
        assert r.lds_bytes == remark["lds"]
        assert r.scratch_bytes == remark["scratch"]
        assert r.vgpr_spill == remark["vgpr_spill"]
        assert r.sgpr_spill == remark["sgpr_spill"]
        if remark["dynamic_stack"] is not None:
            assert r.dynamic_stack == remark["dynamic_stack"]


@pytest.mark.parametrize("entry", CODE_OBJECTS, ids=[Path(e["path"]).name for e in CODE_OBJECTS])
def test_kernel_descriptor_matches_llvm_objdump(entry):
    """occlint's descriptor decoding vs llvm-objdump's, where llvm-objdump decodes it."""
    decoded = {d["symbol"]: d["directives"] for d in
               parse_kd((REPO / entry["reports"]["kd"]).read_text()) if not d["error"]}
    if not decoded:
        pytest.skip("llvm-objdump refused every descriptor (clang-19 writes the reserved "
                    "GFX10+ SGPR field)")
    notes = parse_notes((REPO / entry["reports"]["notes"]).read_text())
    symbols = {m[".name"]: m[".symbol"] for m in notes["kernels"]}
    for k in _read(entry).kernels:
        d = decoded.get(symbols[k.name])
        if d is None:
            continue
        desc = k.resources.descriptor
        assert desc["group_segment_fixed_size"] == d[".amdhsa_group_segment_fixed_size"]
        assert desc["private_segment_fixed_size"] == d[".amdhsa_private_segment_fixed_size"]
        assert desc["vgprs"] == d[".amdhsa_next_free_vgpr"]
        if ".amdhsa_accum_offset" in d:
            assert desc["accum_offset"] == d[".amdhsa_accum_offset"]
        if ".amdhsa_uses_dynamic_stack" in d:
            assert desc["uses_dynamic_stack"] == bool(d[".amdhsa_uses_dynamic_stack"])
        if ".amdhsa_wavefront_size32" in d:
            assert desc["wave32"] == bool(d[".amdhsa_wavefront_size32"])
        if ".amdhsa_workgroup_processor_mode" in d:
            assert desc["wgp_mode"] == bool(d[".amdhsa_workgroup_processor_mode"])
        # The hardware allocates the descriptor's VGPRs: occlint's vgpr_alloc never
        # allocates fewer than it (granularity aside).
        enc = shipped_db().amd_archs[k.arch].regs(k.wavefront_size).vgpr_encoding_granule
        assert _align(max(k.resources.vgpr_alloc, 1), enc) == d[".amdhsa_next_free_vgpr"]


def _independent_entries(entry) -> list[str]:
    """Device entries the LLVM tools list for a container, as (bundle ordinal, id)."""
    reports = entry["reports"]
    text = (REPO / (reports.get("offloading") or reports.get("bundler"))).read_text()
    return [i for i in parse_bundler_list(text) if not i.startswith("host-")]


@pytest.mark.parametrize("entry", CONTAINERS, ids=[Path(e["path"]).name for e in CONTAINERS])
def test_container_entries_match_llvm_tools(entry):
    result = read_path(REPO / entry["path"], entry["path"], ReadOptions())
    if entry["kind"] == "host_object_no_offload":
        assert not result.kernels and len(result.errors) == 1
        assert "no GPU code" in result.errors[0].message
        return
    assert not result.errors, [e.line() for e in result.errors]
    if entry["kind"] == "rdc_object":
        # -fgpu-rdc: LLVM bitcode, reported as such (info), no kernels with resources.
        assert not result.kernels
        assert {a.kind for a in result.artifacts} == {"bitcode"}
        assert sorted(a.entry.rsplit("-", 1)[-1] for a in result.artifacts) == \
            sorted(entry["targets"])
        return
    listed = _independent_entries(entry)
    found = sorted({k.entry.rsplit("/", 1)[-1] for k in result.kernels})
    assert found == sorted(set(listed))
    # as many (bundle, entry) pairs as the tool lists: every bundle back to back is read
    assert len({k.entry for k in result.kernels}) == len(listed)
    assert {k.arch for k in result.kernels} == set(entry["targets"])


def test_container_kernels_equal_the_bare_code_object():
    """The gamma kernel read through every container equals the bare code object."""
    bare = {e["targets"][0]: _read(e).kernels[0] for e in CODE_OBJECTS
            if Path(e["path"]).name == f"gamma.{e['targets'][0]}.hsaco"}
    checked = 0
    for entry in CONTAINERS:
        if not Path(entry["path"]).name.startswith("gamma.") or "clang22" in entry["path"]:
            continue
        if entry["kind"] in ("rdc_object", "host_object_no_offload"):
            continue
        for k in read_path(REPO / entry["path"], entry["path"], ReadOptions()).kernels:
            if k.name == bare[k.arch].name and "hipcc" not in entry["path"]:
                assert k.resources == bare[k.arch].resources, (entry["path"], k.arch)
                checked += 1
    assert checked >= 20


def test_readme_example_prints_summary_for_w7800(occlint):
    run = occlint("fixtures/amd/co/gamma.gfx1100.hsaco", "--device", "w7800", cwd=REPO)
    assert run.code == 0, run.err
    assert "gamma_correction" in run.out and "W7800" in run.out and "waves per SIMD" in run.out


def test_json_schema_fields_per_kernel(occlint):
    run = occlint("fixtures/amd/containers/gamma.bundle.hipfb", "--format", "json", cwd=REPO)
    assert run.code == 0
    doc = json.loads(run.out)
    assert doc["schema_version"] == 1 and doc["errors"] == []
    for k in doc["kernels"]:
        for key in ("file", "entry", "name", "demangled", "arch", "wavefront_size",
                    "resources", "occupancy"):
            assert key in k
        for key in ("vgpr", "agpr", "vgpr_alloc", "sgpr", "lds_bytes", "scratch_bytes",
                    "vgpr_spill", "sgpr_spill", "dynamic_stack", "max_block_size"):
            assert key in k["resources"]
        for key in ("block_size", "waves_per_simd", "blocks_per_cu", "occupancy", "limiters"):
            assert key in k["occupancy"]
        assert k["entry"].startswith("hipv4-amdgcn-amd-amdhsa--")
        assert k["demangled"] == "gamma_correction(unsigned char*, unsigned long, float)"


def test_device_selects_matching_bundle_entry(occlint):
    run = occlint("fixtures/amd/containers/gamma.bundle.hipfb", "--device", "mi210",
                  "--format", "json", cwd=REPO)
    doc = json.loads(run.out)
    assert [k["arch"] for k in doc["kernels"]] == ["gfx90a"]
    assert doc["kernels"][0]["device"] == "AMD Instinct MI210"


def test_target_filter(occlint):
    run = occlint("fixtures/amd/containers/concat.bundle+ccob2+ccob3.hipfb", "--target",
                  "gfx942", "--format", "json", cwd=REPO)
    assert {k["arch"] for k in json.loads(run.out)["kernels"]} == {"gfx942"}


def test_device_mismatch_is_reported(occlint):
    run = occlint("fixtures/amd/co/gamma.gfx90a.hsaco", "--device", "w7800", "--format",
                  "json", cwd=REPO)
    (k,) = json.loads(run.out)["kernels"]
    assert k["status"] == "arch-mismatch" and k["occupancy"] is None
    assert "gfx90a" in k["message"] and "W7800" in k["message"]


def test_generic_target_uses_device_limits(occlint):
    own = json.loads(occlint("fixtures/amd/co/suite.gfx11-generic.cov6.hsaco", "--format",
                             "json", cwd=REPO).out)["kernels"]
    on_gfx1100 = json.loads(occlint("fixtures/amd/co/suite.gfx11-generic.cov6.hsaco",
                                    "--device", "w7800", "--format", "json", cwd=REPO).out)
    by_name = {k["name"]: k for k in on_gfx1100["kernels"]}
    vgpr96 = next(k for k in own if k["name"] == "vgpr_limited_96")
    # 102 VGPRs: 1024/112 = 9 waves with the generic limits, 1536/120 = 12 on a gfx1100
    assert vgpr96["occupancy"]["waves_per_simd"] == 1024 // 112
    assert by_name["vgpr_limited_96"]["occupancy"]["waves_per_simd"] == 1536 // 120


def test_python_dash_m_reads_a_directory(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "occlint", str(REPO / "fixtures/amd/co"),
                           "--format", "json"], capture_output=True, text=True)
    doc = json.loads(proc.stdout)
    assert len(doc["inputs"]) == len(CODE_OBJECTS)
    assert doc["errors"] == []
    severities = doc["summary"]["findings"]["by_severity"]
    assert proc.returncode == (1 if severities["error"] + severities["warning"] else 0)
    assert severities["warning"] > 0  # the suite has spilling kernels
