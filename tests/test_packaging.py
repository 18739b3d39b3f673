"""occlint installs as a normal (non-editable) wheel that carries its device database."""

from __future__ import annotations

import subprocess
import sys
import zipfile

import pytest

from tests.conftest import REPO


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                           "--no-build-isolation", "-w", str(out), str(REPO)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.fail(f"building the wheel failed:\n{proc.stdout}\n{proc.stderr}")
    (path,) = out.glob("occlint-*.whl")
    return path


def test_wheel_contains_device_db_and_entry_point(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    for needed in ("occlint/device_db/amd/architectures.toml",
                   "occlint/device_db/amd/products.toml",
                   "occlint/device_db/nvidia/architectures.toml",
                   "occlint/device_db/nvidia/products.toml",
                   "occlint/__main__.py"):
        assert needed in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "occlint = occlint.cli.main:main" in zipfile.ZipFile(wheel).read(entry_points).decode()
    assert not any(n.startswith(("tests/", "fixtures/")) for n in names)


def test_installed_wheel_finds_its_device_db(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "import occlint, occlint.devices.db as db;"
        "assert occlint.__file__.startswith(sys.argv[1]), occlint.__file__;"
        "root = db._db_root(); assert str(root).startswith(sys.argv[1]), root;"
        "print(len(db.shipped_db().devices))"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(site)], capture_output=True, text=True,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout) >= 45
