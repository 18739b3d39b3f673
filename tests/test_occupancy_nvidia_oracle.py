"""occlint's NVIDIA engine against NVIDIA's own cuda_occupancy.h, over random cases.

The C++ driver (tests/oracles/cuda_occupancy_driver.cpp) is compiled against the CUDA
toolkit's header on this machine; every case is fed to both and all outputs compared:
status, active blocks, limiting-factor bits, each per-resource limit, allocated registers
and shared memory, the max-potential block size and min grid, and the available dynamic
shared memory.
"""

from __future__ import annotations

import random

import pytest

from occlint.devices.db import shipped_db
from occlint.occupancy import nvidia as nv
from tests.oracles.cuda_occupancy import run_driver

CASES_PER_ARCH = 1500


@pytest.fixture
def driver(occ_driver):
    return occ_driver


def _random_case(rng: random.Random, arch) -> dict:
    optin_cap = arch.smem_per_block_optin
    static = rng.choice([0, 0, rng.randrange(0, 49153), rng.randrange(0, optin_cap + 1),
                         rng.choice([1024, 4096, 16384, 49152])])
    dyn = rng.choice([0, 0, rng.randrange(0, 8193), rng.randrange(0, optin_cap + 2048)])
    limit_config = rng.random() < 0.7  # OPTIN as the runtime uses, else DEFAULT
    max_dyn = rng.choice([
        max(arch.smem_per_block - static, 0), max(optin_cap - static, 0),
        rng.randrange(0, optin_cap + 1), dyn,
    ])
    block = rng.choice([rng.randrange(1, 1025), 32 * rng.randrange(1, 33),
                        rng.randrange(1, 1100), 1024, 1025, 64, 96, 33])
    carveout = rng.choice([-1, -1, 0, 100, 50, rng.randrange(0, 101), rng.randrange(-3, 104)])
    return {
        "registers": rng.choice([0, rng.randrange(0, 257), rng.randrange(1, 65),
                                 rng.randrange(200, 258)]),
        "static": static, "dyn": dyn, "optin": limit_config, "max_dyn": max_dyn,
        "barriers": rng.choice([1, 1, 0, 2, rng.randrange(0, 17)]),
        "virtual": rng.choice([0, 0, 0, 1, rng.randrange(0, 40)]),
        "func_max_threads": rng.choice([1024, 1024, rng.randrange(1, 1025), 2048]),
        "carveout": carveout, "block": block,
        "avail_blocks": rng.choice([1, 2, rng.randrange(1, 40)]),
        "sms": rng.randrange(1, 200),
    }


def _driver_row(arch, c) -> list[int]:
    return [arch.cc[0], arch.cc[1], arch.max_threads_per_block, arch.max_threads_per_sm,
            arch.regs_per_block, arch.regs_per_sm, arch.warp_size, arch.smem_per_block,
            arch.smem_per_sm, c["sms"], arch.smem_per_block_optin, arch.smem_reserved_per_block,
            c["func_max_threads"], c["registers"], c["static"], int(c["optin"]), c["max_dyn"],
            c["barriers"], c["virtual"], c["carveout"], c["block"], c["dyn"],
            c["avail_blocks"], 0]


def _occlint_row(arch, c) -> list[int]:
    func = nv.NvFunction(registers=c["registers"], static_shared=c["static"],
                         max_threads=c["func_max_threads"], optin=c["optin"],
                         max_dynamic_shared=c["max_dyn"], barriers=c["barriers"],
                         virtual_resources=c["virtual"])
    row: list[int] = []
    try:
        r = nv.active_blocks(arch, func, c["block"], c["dyn"], c["carveout"])
        lim = r.limits
        row += [0, r.blocks_per_sm, r.limiting_factors, lim["registers"], lim["shared"],
                lim["warps"], lim["blocks"], lim["barriers"], lim["virtual"],
                r.allocated_registers_per_block, r.allocated_shared_per_block]
    except nv.OccupancyInputError as exc:
        row += [exc.code]
    try:
        p = nv.max_potential_block_size(arch, func, c["dyn"], c["carveout"], c["sms"])
        row += [0, p.min_grid_size, p.block_size]
    except nv.OccupancyInputError as exc:
        row += [exc.code]
    try:
        row += [0, nv.available_dynamic_shared(arch, func, c["avail_blocks"], c["block"],
                                               c["carveout"])]
    except nv.OccupancyInputError as exc:
        row += [exc.code]
    return row


def _comparable(driver_out: list[int]) -> list[int]:
    """Keep only the fields the header defines for each call's status."""
    row: list[int] = [driver_out[0]]
    if driver_out[0] == 0:
        row += driver_out[1:11]
    row.append(driver_out[11])
    if driver_out[11] == 0:
        row += driver_out[12:14]
    row.append(driver_out[14])
    if driver_out[14] == 0:
        row.append(driver_out[15])
    return row


@pytest.mark.parametrize("sm", sorted(shipped_db().nv_archs))
def test_engine_equals_cuda_occupancy_h(driver, sm):
    arch = shipped_db().nv_archs[sm]
    rng = random.Random(f"occlint-{sm}")
    cases = [_random_case(rng, arch) for _ in range(CASES_PER_ARCH)]
    expected = run_driver(driver, [_driver_row(arch, c) for c in cases])
    assert len(expected) == len(cases)
    mismatches = []
    for case, want in zip(cases, expected, strict=True):
        got = _occlint_row(arch, case)
        if got != _comparable(want):
            mismatches.append((case, got, _comparable(want)))
    assert not mismatches, f"{len(mismatches)} mismatches, first: {mismatches[:3]}"


def test_case_count_covers_requirement():
    # Issue: at least 10,000 random cases across CC 7.0-12.0.
    modern = [s for s, a in shipped_db().nv_archs.items() if a.cc[0] >= 7]
    assert CASES_PER_ARCH * len(modern) >= 10_000
