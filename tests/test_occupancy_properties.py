"""Properties both engines must have, checked with hypothesis.

- occupancy never rises when a kernel uses more of any resource;
- a reported next step is exact: at the target value occupancy is higher, one unit above it
  is not; "gains nothing" means even zero of that resource does not help.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from occlint.devices.db import shipped_db
from occlint.occupancy import amd, nvidia, steps

DB = shipped_db()
AMD_TARGETS = ["gfx906", "gfx908", "gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100",
               "gfx1102", "gfx1151", "gfx1201", "gfx1250"]
NV_TARGETS = sorted(a for a, x in DB.nv_archs.items() if x.cc[0] >= 7)


@st.composite
def amd_case(draw):
    arch = DB.amd_archs[draw(st.sampled_from(AMD_TARGETS))]
    wave = draw(st.sampled_from(arch.wave_sizes))
    agpr = draw(st.integers(0, 128)) if (arch.agprs or arch.unified_vgpr_file) else 0
    vgpr = draw(st.integers(0, 256 if agpr == 0 else 128))
    if arch.unified_vgpr_file and agpr:
        vgpr = min(vgpr, 512 - agpr - 4)
    kernel = amd.AmdKernel(wave_size=wave, vgprs=vgpr, agprs=agpr,
                           sgprs=draw(st.integers(0, arch.addressable_sgprs)),
                           lds=draw(st.integers(0, arch.lds_per_workgroup)))
    block = draw(st.integers(1, 1024))
    wgp = draw(st.sampled_from([None, False]))
    return arch, kernel, block, wgp


@settings(max_examples=400, deadline=None)
@given(amd_case(), st.sampled_from(["vgprs", "agprs", "sgprs", "lds"]), st.integers(1, 64))
def test_amd_more_resources_never_help(case, field, extra):
    arch, kernel, block, wgp = case
    step = extra * (64 if field == "lds" else 1)
    bigger = replace(kernel, **{field: getattr(kernel, field) + step})
    try:
        worse = amd.occupancy(arch, bigger, block, wgp)
    except ValueError:
        return  # beyond what the target can address
    base = amd.occupancy(arch, kernel, block, wgp)
    assert worse.waves_per_simd <= base.waves_per_simd
    assert worse.blocks_per_cu <= base.blocks_per_cu


@settings(max_examples=300, deadline=None)
@given(amd_case())
def test_amd_next_steps_are_exact(case):
    arch, kernel, block, wgp = case
    result = amd.occupancy(arch, kernel, block, wgp)
    field_of = {"vgpr": "vgprs", "agpr": "agprs", "sgpr": "sgprs", "lds": "lds"}
    for step in steps.amd_steps(arch, kernel, block, wgp, result):
        field = field_of[step.resource]

        def waves(value, f=field):
            return amd.occupancy(arch, replace(kernel, **{f: value}), block, wgp).waves_per_simd

        if step.target is None:
            assert waves(0) <= result.waves_per_simd
        else:
            assert waves(step.target) > result.waves_per_simd
            assert waves(step.target + 1) <= result.waves_per_simd


@st.composite
def nv_case(draw):
    arch = DB.nv_archs[draw(st.sampled_from(NV_TARGETS))]
    func = nvidia.NvFunction(registers=draw(st.integers(0, 255)),
                             static_shared=draw(st.integers(0, 48 * 1024)))
    return arch, func, draw(st.integers(1, 1024)), draw(st.integers(0, 16384)), \
        draw(st.sampled_from([-1, 0, 25, 50, 100]))


@settings(max_examples=400, deadline=None)
@given(nv_case(), st.sampled_from(["registers", "static_shared"]), st.integers(1, 2000))
def test_nvidia_more_resources_never_help(case, field, extra):
    arch, func, block, dyn, carveout = case
    base = nvidia.active_blocks(arch, func, block, dyn, carveout).blocks_per_sm
    bigger = replace(func, **{field: min(getattr(func, field) + extra,
                                         255 if field == "registers" else 10**6)})
    assert nvidia.active_blocks(arch, bigger, block, dyn, carveout).blocks_per_sm <= base


@settings(max_examples=300, deadline=None)
@given(nv_case())
def test_nvidia_next_steps_are_exact(case):
    arch, func, block, dyn, carveout = case
    result = nvidia.active_blocks(arch, func, block, dyn, carveout)
    for step in steps.nvidia_steps(arch, func, block, dyn, carveout, result):
        if step.resource == "registers":
            def blocks(v):
                return nvidia.active_blocks(arch, replace(func, registers=v), block, dyn,
                                            carveout).blocks_per_sm
        else:
            def blocks(v):
                d = min(dyn, v)
                return nvidia.active_blocks(arch, replace(func, static_shared=v - d), block, d,
                                            carveout).blocks_per_sm
        if step.target is None:
            assert blocks(0) <= result.blocks_per_sm
        else:
            assert blocks(step.target) > result.blocks_per_sm
            assert blocks(step.target + 1) <= result.blocks_per_sm
