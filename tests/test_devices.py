"""The device database and `occlint devices`."""

from __future__ import annotations

import pytest

from occlint.devices.db import load_db, shipped_db
from occlint.errors import DeviceDbError, UnknownDeviceError

REQUIRED_AMD = ["mi50", "mi60", "mi100", "mi210", "mi250", "mi250x", "mi300a", "mi300x",
                "mi325x", "mi350x", "mi355x", "w6800", "rx6900xt", "w7800", "w7900",
                "rx7900xtx", "rx7900xt", "rx7800xt", "rx7600", "strix-halo", "rx9070",
                "rx9070xt", "rx9060xt"]
REQUIRED_NVIDIA = ["v100", "t4", "a100-40gb", "a100-80gb", "a100-pcie-40gb", "a100-pcie-80gb",
                   "a10", "a30", "a40", "rtx3090", "l4", "l40", "l40s", "rtx4090",
                   "rtx6000-ada", "h100-sxm", "h100-pcie", "h100-nvl", "h200", "gh200", "b200",
                   "rtx5090", "rtx-pro-6000", "agx-orin"]


@pytest.mark.parametrize("name", REQUIRED_AMD + REQUIRED_NVIDIA)
def test_required_products_exist(name):
    device = shipped_db().get(name)
    assert device.compute_units and device.compute_units > 0
    assert device.source


def test_required_archs_of_products():
    db = shipped_db()
    expect = {"mi50": "gfx906", "mi100": "gfx908", "mi250x": "gfx90a", "mi300x": "gfx942",
              "mi355x": "gfx950", "w6800": "gfx1030", "w7800": "gfx1100", "rx7800xt": "gfx1101",
              "rx7600": "gfx1102", "strix-halo": "gfx1151", "rx9070xt": "gfx1201",
              "rx9060xt": "gfx1200", "v100": "sm_70", "t4": "sm_75", "a100": "sm_80",
              "rtx3090": "sm_86", "agx-orin": "sm_87", "rtx4090": "sm_89", "h100": "sm_90",
              "b200": "sm_100", "rtx5090": "sm_120"}
    for name, arch in expect.items():
        assert db.get(name).arch.name == arch, name


@pytest.mark.parametrize("name,expected", [
    ("w7800", "AMD Radeon PRO W7800"), ("W7800", "AMD Radeon PRO W7800"),
    ("radeon-pro-w7800", "AMD Radeon PRO W7800"), ("Radeon PRO W7800", "AMD Radeon PRO W7800"),
    ("radeon_pro_w7800", "AMD Radeon PRO W7800"), ("mi300x", "AMD Instinct MI300X"),
    ("MI300X", "AMD Instinct MI300X"), ("h100", "NVIDIA H100 80GB HBM3 (SXM5)"),
    ("h100-sxm", "NVIDIA H100 80GB HBM3 (SXM5)"), ("H100 SXM", "NVIDIA H100 80GB HBM3 (SXM5)"),
])
def test_names_and_aliases(name, expected):
    assert shipped_db().get(name).name == expected


def test_architecture_as_device():
    db = shipped_db()
    gfx = db.get("gfx1100")
    assert gfx.arch_only and gfx.compute_units is None and gfx.arch.name == "gfx1100"
    sm = db.get("sm_90a")
    assert sm.arch_only and sm.arch.name == "sm_90" and sm.arch_variant == "a"
    assert db.get("SM_80").arch.name == "sm_80"


def test_unknown_device_suggests_closest():
    with pytest.raises(UnknownDeviceError) as info:
        shipped_db().get("w7880")
    assert "w7800" in info.value.suggestions


def test_rdna_scheduling_units_are_wgps():
    w7800 = shipped_db().get("w7800")
    assert w7800.compute_units == 70 and w7800.wgps == 35
    assert w7800.scheduling_units(wgp_mode=True) == 35
    assert w7800.scheduling_units(wgp_mode=False) == 70
    assert shipped_db().get("mi300x").scheduling_units() == 304


def test_user_device_file_adds_and_overrides(tmp_path):
    path = tmp_path / "devices.toml"
    path.write_text('''
[[device]]
name = "Lab W7800 (CU mode board)"
aliases = ["lab-w7800"]
arch = "gfx1100"
compute_units = 70
wgps = 35

[[device]]
name = "AMD Radeon PRO W7800"
aliases = ["w7800"]
arch = "gfx1100"
compute_units = 68

[amd_architectures.gfx1100x]
base = "gfx1100"
max_waves_per_simd = 12

[[device]]
name = "Hypothetical"
arch = "gfx1100x"
compute_units = 8
''')
    db = load_db([path])
    assert db.get("lab-w7800").compute_units == 70
    assert db.get("w7800").compute_units == 68
    assert db.get("radeon-pro-w7800").compute_units == 68  # shipped alias now maps to override
    assert db.get("hypothetical").arch.max_waves_per_simd == 12
    assert sum(d.name == "AMD Radeon PRO W7800" for d in db.devices) == 1
    # the shipped DB is untouched
    assert shipped_db().get("w7800").compute_units == 70


@pytest.mark.parametrize("text,message", [
    ('[[device]]\nname = "x"\narch = "gfx1100"\ncompute_units = 4\ncolour = 1\n',
     "unknown key 'colour'"),
    ('[[device]]\nname = "x"\narch = "gfx9999"\ncompute_units = 4\n', "unknown arch 'gfx9999'"),
    ('[[device]]\nname = "x"\narch = "gfx1100"\n', "compute_units or sms"),
    ('[amd_architectures.g]\nbase = "gfx1100"\nmax_waves = 3\n', "unknown key 'max_waves'"),
    ('[amd_architectures.g]\nbase = "g"\n', "cycle"),
    ('oops = [\n', "invalid TOML"),
    ('[gadgets]\n', "unknown top-level key 'gadgets'"),
])
def test_bad_device_file(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(DeviceDbError) as info:
        load_db([path])
    assert message in str(info.value)
    assert str(path) in str(info.value)


def test_devices_command_counts(occlint):
    run = occlint("devices", "--format", "json")
    assert run.code == 0
    devices = run.json()["devices"]
    assert sum(d["vendor"] == "amd" for d in devices) >= 20
    assert sum(d["vendor"] == "nvidia" for d in devices) >= 25
    text = occlint("devices")
    assert text.code == 0 and "w7800" in text.out and "h100" in text.out


def test_devices_command_one_device(occlint):
    run = occlint("devices", "w7800", "--format", "json")
    assert run.code == 0
    assert run.json()["wgps"] == 35 and run.json()["arch"] == "gfx1100"


def test_unknown_device_is_one_line_exit_2(occlint):
    run = occlint("devices", "w7880")
    assert run.code == 2
    assert run.err.count("\n") == 1 and run.err.startswith("occlint: error: ")
    assert "w7800" in run.err
    calc = occlint("calc", "--device", "nosuchgpu", "--registers", "3", "--block", "64")
    assert calc.code == 2 and calc.err.count("\n") == 1 and "unknown device" in calc.err


def test_device_file_option(occlint, tmp_path):
    path = tmp_path / "d.toml"
    path.write_text('[[device]]\nname = "My Box"\narch = "sm_89"\nsms = 7\n')
    run = occlint("calc", "--device-file", str(path), "--device", "my-box", "--registers", "32",
                  "--block", "128", "--format", "json")
    assert run.code == 0, run.err
    assert run.json()["sms"] == 7


def test_user_file_overlays_a_shipped_architecture(tmp_path):
    path = tmp_path / "overlay.toml"
    path.write_text("[nvidia_architectures.sm_120]\nmax_blocks_per_sm = 32\n")
    db = load_db([path])
    assert db.nv_archs["sm_120"].max_blocks_per_sm == 32
    assert db.nv_archs["sm_120"].max_threads_per_sm == 1536  # the rest is kept
    assert db.get("rtx5090").arch.max_blocks_per_sm == 32  # products follow the overlay
    assert shipped_db().nv_archs["sm_120"].max_blocks_per_sm == 24
