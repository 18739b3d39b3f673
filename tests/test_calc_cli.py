"""`occlint calc`: the command-line contract, batch mode, and NVIDIA results through the CLI
checked against NVIDIA's cuda_occupancy.h."""

from __future__ import annotations

import json
import random

import pytest

from occlint.devices.db import shipped_db
from tests.oracles.cuda_occupancy import run_driver

SPEC_KEYS = {"blocks_per_cu", "occupancy", "limiters"}
LIMITER_NAMES = {"waves", "warps", "blocks", "threads", "registers", "vgpr", "agpr", "sgpr",
                 "lds", "shared", "barriers", "virtual"}


def test_issue_examples(occlint):
    nv = occlint("calc", "--arch", "sm_90", "--registers", "32", "--shared", "4096",
                 "--dynamic-shared", "0", "--block", "256", "--format", "json")
    assert nv.code == 0, nv.err
    data = nv.json()
    assert set(data) >= SPEC_KEYS and "warps_per_sm" in data
    assert set(data["limiters"]) <= LIMITER_NAMES and data["limiters"]
    amd = occlint("calc", "--arch", "gfx1100", "--wave", "32", "--vgpr", "64", "--agpr", "0",
                  "--sgpr", "32", "--lds", "16384", "--block", "256", "--format", "json")
    assert amd.code == 0, amd.err
    data = amd.json()
    assert set(data) >= SPEC_KEYS and "waves_per_simd" in data
    assert set(data["limiters"]) <= LIMITER_NAMES
    assert 0 <= data["occupancy"] <= 1
    text = occlint("calc", "--device", "w7800", "--vgpr", "64", "--block", "256")
    assert text.code == 0 and "waves/SIMD" in text.out and "W7800" in text.out


def test_one_json_object(occlint):
    run = occlint("calc", "--device", "h100", "--registers", "64", "--block", "128",
                  "--format", "json")
    assert isinstance(json.loads(run.out), dict)


@pytest.mark.parametrize("args,needle", [
    (["calc", "--arch", "sm_90", "--block", "128"], "missing 'registers'"),
    (["calc", "--arch", "sm_90", "--registers", "3"], "--block"),
    (["calc", "--arch", "gfx1100", "--registers", "3", "--block", "64"], "NVIDIA"),
    (["calc", "--arch", "sm_90", "--vgpr", "3", "--block", "64"], "AMD"),
    (["calc", "--arch", "gfx906", "--wave", "32", "--vgpr", "8", "--block", "64"], "wave64"),
    (["calc", "--arch", "sm_91", "--registers", "8", "--block", "64"], "unknown architecture"),
    (["calc", "--arch", "sm_90", "--device", "h100", "--registers", "8", "--block", "64"],
     "exactly one"),
    (["calc", "--arch", "sm_90", "--registers", "-3", "--block", "64"], "-3"),
    (["calc", "--arch", "gfx1100", "--vgpr", "300", "--block", "64"], "VGPRs exceed"),
    (["calc", "--bogus"], "No such option"),
    (["calc", "--arch", "sm_90", "--registers", "300", "--block", "64"],
     f"exceed the {shipped_db().nv_archs['sm_90'].max_regs_per_thread} "),
    (["calc", "--arch", "sm_80", "--registers", "32", "--block", "2048"],
     f"exceeds {shipped_db().nv_archs['sm_80'].max_threads_per_block},"),
    (["calc", "--device", "w7800", "--vgpr", "32", "--block", "2048"],
     f"exceeds {shipped_db().amd_archs['gfx1100'].max_workgroup_size},"),
    (["calc", "--carveout", "101", "--arch", "sm_90", "--registers", "1", "--block", "1"], "101"),
])
def test_bad_input_one_line_exit_2(occlint, args, needle):
    run = occlint(*args)
    assert run.code == 2
    assert run.out == ""
    assert run.err.count("\n") == 1 and run.err.startswith("occlint: error: "), run.err
    assert needle in run.err


def test_batch_in_order_and_errors_continue(occlint, tmp_path):
    lines = [
        {"arch": "sm_90", "block": 256, "registers": 32, "shared": 4096},
        {"arch": "gfx1100", "block": 256, "wave": 32, "vgpr": 64, "lds": 16384},
        {"arch": "sm_90", "block": 256},  # missing registers
        "not json",
        {"device": "w7800", "block": 128, "vgpr": 40, "colour": "red"},
        [1, 2],
        {"device": "mi300x", "block": 512, "vgpr": 100, "agpr": 64, "sgpr": 40},
    ]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    run = occlint("calc", "--batch", str(path))
    assert run.code == 2, run.err
    out = [json.loads(line) for line in run.out.splitlines()]
    assert len(out) == len(lines)
    # one error line on stderr for each bad input line, naming the file and the line
    assert run.err.splitlines() == [f"occlint: error: {path}: {out[i]['error']}"
                                    for i in (2, 3, 4, 5)]
    assert [e.split(": ")[3] for e in run.err.splitlines()] == [
        "line 3", "line 4", "line 5", "line 6"]
    assert out[0]["arch"] == "sm_90" and "warps_per_sm" in out[0]
    assert out[1]["arch"] == "gfx1100" and "waves_per_simd" in out[1]
    assert set(out[2]) == {"error"} and "registers" in out[2]["error"]
    assert set(out[3]) == {"error"} and "invalid JSON" in out[3]["error"]
    assert "colour" in out[4]["error"]
    assert "error" in out[5]
    assert out[6]["device"] == "AMD Instinct MI300X" and out[6]["arch"] == "gfx942"


def test_batch_from_stdin(occlint_process):
    run = occlint_process("calc", "--batch", "-",
                          stdin='{"arch": "sm_80", "block": 96, "registers": 40}\n')
    assert run.code == 0 and json.loads(run.out)["blocks_per_sm"] >= 1


def test_batch_rejects_single_options(occlint, tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text("{}\n")
    run = occlint("calc", "--batch", str(path), "--block", "64")
    assert run.code == 2 and "--batch cannot be combined" in run.err


@pytest.fixture
def driver(occ_driver):
    return occ_driver


def test_batch_results_equal_cuda_occupancy_h(occlint, tmp_path, driver):
    """Through the CLI: runtime-like attributes (OPTIN, max dynamic = limit - static)."""
    rng = random.Random(7)
    db = shipped_db()
    archs = [a for a in db.nv_archs.values() if a.cc[0] >= 7]
    requests, rows = [], []
    for _ in range(2000):
        arch = rng.choice(archs)
        static = rng.choice([0, rng.randrange(0, 49152)])
        dyn = rng.choice([0, rng.randrange(0, arch.smem_per_block_optin)])
        req = {"arch": arch.name, "block": rng.randrange(1, 1025),
               "registers": rng.randrange(0, 256), "shared": static, "dynamic_shared": dyn,
               "carveout": rng.choice([-1, rng.randrange(0, 101)])}
        optin = static + dyn > arch.smem_per_block
        max_dyn = max((arch.smem_per_block_optin if optin else arch.smem_per_block) - static, 0)
        requests.append(req)
        rows.append([arch.cc[0], arch.cc[1], arch.max_threads_per_block, arch.max_threads_per_sm,
                     arch.regs_per_block, arch.regs_per_sm, arch.warp_size, arch.smem_per_block,
                     arch.smem_per_sm, 1, arch.smem_per_block_optin,
                     arch.smem_reserved_per_block, 1024, req["registers"], static, 1, max_dyn,
                     1, 0, req["carveout"], req["block"], dyn, 1, 0])
    path = tmp_path / "req.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in requests))
    run = occlint("calc", "--batch", str(path))
    assert run.code == 0, run.err
    results = [json.loads(line) for line in run.out.splitlines()]
    expected = run_driver(driver, rows)
    names = {1: "warps", 2: "registers", 4: "shared", 8: "blocks", 16: "barriers"}
    for req, got, want in zip(requests, results, expected, strict=True):
        assert want[0] == 0, (req, want)
        assert got["blocks_per_sm"] == want[1], (req, got, want)
        assert set(got["limiters"]) == {n for bit, n in names.items() if want[2] & bit}, req
        assert got["max_potential_block_size"] == want[13], req
        warps = -(-req["block"] // 32)
        arch = db.nv_archs[req["arch"]]
        assert got["warps_per_sm"] == want[1] * warps
        assert got["occupancy"] == round(want[1] * warps / (arch.max_threads_per_sm // 32), 6)


def test_python_dash_m_and_version(occlint_process):
    from occlint import __version__

    run = occlint_process("--version")
    assert run.code == 0 and run.out.strip() == f"occlint {__version__}"
    help_run = occlint_process("--help")
    assert help_run.code == 0 and "calc" in help_run.out and "devices" in help_run.out
