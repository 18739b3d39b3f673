"""occlint's AMD occupancy against the compiler's own figure.

Every fixture kernel was compiled by Debian's clang with ``-Rpass-analysis=kernel-resource-
usage``; the remark's ``Occupancy [waves/SIMD]`` is LLVM's answer. Two paths are compared:

* ``calc`` fed with the remark's VGPRs/AGPRs/SGPRs/LDS (what a user would type);
* the binary path: occlint reading the code object (metadata + kernel descriptor).

What LLVM's figure means depends on its version (tests/truth, toolchains.md §1.7): LLVM 19
evaluates the kernel's maximum flat workgroup size, LLVM >= 20 the best case over the flat
range [min, max]; LLVM 15 (clang-15, hipcc 5.2) ignores LDS and workgroup size, so its
remarks are not an oracle for occupancy (resources are still compared in
test_amd_reader.py).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from occlint.analysis.kernels import LaunchConfig, amd_kernel_model, analyse
from occlint.devices.db import shipped_db
from occlint.occupancy import amd
from occlint.occupancy.whatif import evaluate
from occlint.readers.loader import ReadOptions, read_path
from tests.conftest import REPO
from tests.truth.amd_reports import load_manifest, parse_notes, parse_remarks

DB = shipped_db()
LLVM_OF = {"clang-19": 19, "clang-22": 22}
# Facts about the fixture sources (fixtures/amd/src/suite.hip), not occlint output:
# kernels whose flat workgroup range does not start at 1.
MIN_FLAT = {"flat_wg_size_64_256": 64}


def _cases():
    for entry in load_manifest(REPO):
        if entry["kind"] not in ("code_object", "relocatable_code_object"):
            continue
        if entry.get("language") != "hip" or entry["compiler"] not in LLVM_OF:
            continue
        remarks = {r["name"]: r for r in
                   parse_remarks((REPO / entry["reports"]["remarks"]).read_text())}
        notes = parse_notes((REPO / entry["reports"]["notes"]).read_text())
        for meta in notes["kernels"]:
            remark = remarks.get(meta[".name"])
            if remark and remark["occupancy"]:
                yield entry, notes, meta, remark


CASES = list(_cases())


def _processor(notes, entry) -> str:
    target = notes.get("target") or ("x--" + entry["targets"][0])
    return target.split("--", 1)[1].split(":")[0]


def _kernel(meta, remark) -> amd.AmdKernel:
    return amd.AmdKernel(wave_size=meta[".wavefront_size"], vgprs=remark["vgprs"],
                         agprs=remark["agprs"] or 0, sgprs=remark["sgprs"], lds=remark["lds"] or 0)


def _wgp(meta) -> bool | None:
    value = meta.get(".workgroup_processor_mode")
    return None if value is None else bool(value)


def _expected_model(entry, arch, kernel, meta, wgp) -> int:
    max_flat = meta[".max_flat_workgroup_size"]
    if LLVM_OF[entry["compiler"]] == 19:
        return amd.occupancy(arch, kernel, max_flat, wgp).waves_per_simd
    return amd.compiler_reported_occupancy(arch, kernel, MIN_FLAT.get(meta[".name"], 1),
                                           max_flat, wgp)


def test_oracle_covers_the_issue_targets_and_limiters():
    seen = {(_processor(n, e), m[".wavefront_size"]) for e, n, m, _ in CASES}
    for target in ("gfx906", "gfx908", "gfx90a", "gfx942", "gfx950"):
        assert (target, 64) in seen, target
    for target in ("gfx1030", "gfx1100", "gfx1102", "gfx1151", "gfx1201"):
        assert (target, 32) in seen and (target, 64) in seen, target
    limiters = Counter()
    for entry, notes, meta, remark in CASES:
        arch = DB.amd_archs[_processor(notes, entry)]
        result = amd.occupancy(arch, _kernel(meta, remark), meta[".max_flat_workgroup_size"],
                               _wgp(meta))
        if remark["occupancy"] < arch.max_waves_per_simd:
            limiters.update(result.limiters)
    for needed in ("vgpr", "agpr", "sgpr", "lds"):
        assert limiters[needed] > 0, f"no {needed}-limited kernel in the fixtures: {limiters}"
    assert len(CASES) > 600


@pytest.mark.parametrize("entry,notes,meta,remark", CASES,
                         ids=[f"{Path(e['path']).name}:{m['.name']}" for e, _, m, _ in CASES])
def test_calc_equals_compiler_remark(entry, notes, meta, remark):
    if "waves_per_eu" in meta[".name"]:
        pytest.skip("amdgpu_waves_per_eu pads the VGPR allocation; the remark's VGPR count "
                    "does not show it (the binary path below reads the padded descriptor)")
    processor = _processor(notes, entry)
    arch = DB.amd_archs[processor]
    kernel, wgp = _kernel(meta, remark), _wgp(meta)
    if LLVM_OF[entry["compiler"]] == 19:
        request = {"arch": processor, "block": meta[".max_flat_workgroup_size"],
                   "wave": kernel.wave_size, "vgpr": kernel.vgprs, "agpr": kernel.agprs,
                   "sgpr": kernel.sgprs, "lds": kernel.lds}
        if wgp is False and arch.has_wgp:
            request["cu_mode"] = True
        assert evaluate(request, DB)["waves_per_simd"] == remark["occupancy"]
    else:
        assert _expected_model(entry, arch, kernel, meta, wgp) == remark["occupancy"]


BY_FILE: dict[str, list] = {}
for _case in CASES:
    BY_FILE.setdefault(_case[0]["path"], []).append(_case)


@pytest.mark.parametrize("path", sorted(BY_FILE))
def test_binary_path_equals_compiler_remark(path):
    result = read_path(REPO / path, path, ReadOptions())
    assert not result.errors
    kernels = {k.name: k for k in result.kernels}
    for entry, _notes, meta, remark in BY_FILE[path]:
        kernel = kernels[meta[".name"]]
        arch = DB.amd_archs[kernel.arch]
        if LLVM_OF[entry["compiler"]] == 19:
            (report,) = analyse([kernel], [], lambda k: LaunchConfig(), DB)
            got = report.occupancy.waves_per_simd
            assert report.block_size == meta[".max_flat_workgroup_size"]
        else:
            got = _expected_model(entry, arch, amd_kernel_model(kernel, arch), meta,
                                  kernel.resources.wgp_mode)
        assert got == remark["occupancy"], meta[".name"]
