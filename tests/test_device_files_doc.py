"""docs/device-files.md and examples/lab-devices.toml: the documented format loads and does
what the page says."""

from __future__ import annotations

import re

from occlint.devices.db import load_db, shipped_db
from tests.conftest import REPO

DOC = (REPO / "docs" / "device-files.md").read_text()


def test_example_device_file_adds_a_device(occlint):
    db = load_db([REPO / "examples" / "lab-devices.toml"])
    device = db.get("mi300x-cpx")
    # one XCD of the MI300X: its 304 CUs over 8 XCDs
    assert device.compute_units == shipped_db().get("mi300x").compute_units // 8 == 38
    assert device.arch.name == "gfx942"
    run = occlint("devices", "mi300x-cpx", "--device-file",
                  str(REPO / "examples" / "lab-devices.toml"))
    assert run.code == 0 and "38" in run.out


def test_documented_tables_load_and_overlay(tmp_path):
    blocks = re.findall(r"```toml\n(.*?)```", DOC, re.S)
    assert len(blocks) == 2
    paths = []
    for i, block in enumerate(blocks):
        paths.append(tmp_path / f"{i}.toml")
        paths[-1].write_text(block)
    db = load_db(paths)
    # the overlay changes sm_90 for every product of it; nothing else
    assert db.nv_archs["sm_90"].max_blocks_per_sm == 16
    assert db.get("h100").arch.max_blocks_per_sm == 16
    assert shipped_db().nv_archs["sm_90"].max_blocks_per_sm == 32
    assert db.nv_archs["sm_90"].regs_per_sm == shipped_db().nv_archs["sm_90"].regs_per_sm
    # base = inherits every key, overrides one
    new, base = db.amd_archs["gfx1100-wgp64k"], shipped_db().amd_archs["gfx1100"]
    assert new.lds_per_wgp == 65536 and new.max_workgroup_size == base.max_workgroup_size


def test_a_device_named_like_a_shipped_one_replaces_it(tmp_path):
    path = tmp_path / "lab.toml"
    path.write_text('[[device]]\nname = "NVIDIA H100 lab"\naliases = ["h100"]\n'
                    'arch = "sm_90"\nsms = 114\n')
    assert load_db([path]).get("h100").compute_units == 114


def test_errors_name_the_file_and_entry(occlint, tmp_path):
    path = tmp_path / "lab-devices.toml"
    path.write_text('[[device]]\nname = "x"\narch = "gfx9999"\ncompute_units = 3\n')
    run = occlint("devices", "--device-file", str(path))
    assert run.code == 2
    assert run.err == f"occlint: error: {path}: [[device]] #1 (x): unknown arch 'gfx9999'\n"
