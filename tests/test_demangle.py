"""occlint.model.demangle: libstdc++'s ``__cxa_demangle`` called directly gives what the
cxxfilt package gives (its former implementation), without cxxfilt's library search."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from occlint.model import demangle as demangle_mod
from occlint.pipeline.inputs import expand_paths
from occlint.readers.loader import ReadOptions, read_path
from tests.conftest import FIXTURES, REPO


def _cxxfilt(name: str) -> str:
    import cxxfilt

    try:
        return cxxfilt.demangle(name, external_only=False)
    except Exception:
        return name


def test_every_fixture_kernel_name_demangles_as_cxxfilt_does():
    candidates, _ = expand_paths([str(FIXTURES / "amd"), str(FIXTURES / "nvidia")])
    names = {k.name for c in candidates
             for k in read_path(Path(c.path), c.display, ReadOptions(), None, False).kernels}
    mangled = [n for n in names if n.startswith("_Z")]
    assert len(mangled) > 40
    tricky = ["_Z", "_Zbad", "_Z1fv", "_ZN1a1bE\u00e9", "_Z" + "N1a" * 2000 + "E"]
    for name in mangled + tricky:
        assert demangle_mod.demangle(name) == _cxxfilt(name), name
    assert sum(demangle_mod.demangle(n) != n for n in mangled) > 40  # really demangled


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="cxxfilt elsewhere")
def test_demangling_on_linux_neither_imports_cxxfilt_nor_runs_ldconfig():
    code = ("import sys; from occlint.model.demangle import demangle; "
            "assert demangle('_Z1fv') == 'f()'; print('cxxfilt' in sys.modules)")
    hook = ("import sys; sys.addaudithook(lambda e, a: e == 'subprocess.Popen' "
            "and sys.exit('a subprocess: ' + str(a[0])))")
    run = subprocess.run([sys.executable, "-c", f"{hook}\n{code}"], capture_output=True,
                         text=True, cwd=REPO, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "False"
