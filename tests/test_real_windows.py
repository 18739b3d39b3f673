"""A real Windows wheel: cupy-cuda12x 13.3.0 for win_amd64 (69.6 MB), whose .pyd files keep
their CUDA fatbins in the PE section ``.nv_fatb`` (with the ``.nvFatBi`` wrapper).

Runs where the wheel is in the cache directory (``$OCCLINT_CACHE``, default /work/cache, as
benchmarks/scale.py uses), or downloads it with pip when ``OCCLINT_DOWNLOAD=1`` (CI sets
it); skipped when neither works. The toolchain's view (llvm-readobj-19 --sections of each
.pyd) says which members hold ``.nv_fatb``; occlint must find kernels in exactly those, and
no errors.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO, run_occlint

SPEC = "cupy-cuda12x==13.3.0"
WHEEL = "cupy_cuda12x-13.3.0-cp311-cp311-win_amd64.whl"
CACHE = Path(os.environ.get("OCCLINT_CACHE", "/work/cache"))


def _wheel() -> Path:
    path = CACHE / WHEEL
    if path.is_file():
        return path
    if os.environ.get("OCCLINT_DOWNLOAD") != "1":
        pytest.skip(f"{WHEEL} not in {CACHE} (OCCLINT_DOWNLOAD=1 downloads it)")
    CACHE.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", SPEC,
                        "--platform", "win_amd64", "--python-version", "3.11",
                        "--only-binary=:all:", "-d", str(CACHE)], check=True,
                       capture_output=True, timeout=900)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"{SPEC} could not be downloaded here: {exc}")
    return path


def test_real_windows_cuda_wheel(tmp_path):
    wheel = _wheel()
    readobj = shutil.which("llvm-readobj-19")
    if readobj is None:
        pytest.skip("llvm-readobj-19 is missing")
    with_fatbins = set()
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if name.endswith((".pyd", ".dll")):
                member = Path(z.extract(name, tmp_path))
                sections = subprocess.run([readobj, "--sections", str(member)], check=True,
                                          capture_output=True, text=True).stdout
                if "Name: .nv_fatb " in sections:
                    with_fatbins.add(name)
    assert with_fatbins  # the toolchain sees CUDA code in some of them
    run = run_occlint(str(wheel), "--isolated", "--format", "json", cwd=REPO)
    assert run.err == ""
    doc = json.loads(run.out)
    assert not doc["errors"]
    assert {k["file"].split("!/", 1)[1] for k in doc["kernels"]} == with_fatbins
    assert all(k["entry"].startswith(".nv_fatb/") for k in doc["kernels"])
    assert doc["summary"]["skipped"] > 0  # the .pyd files without GPU code
