"""AOTInductor packages (fixtures/nvidia/aoti, built with torch 2.11 on an H100): kernels
from both layouts (cubin files; cubins embedded in the wrapper .so) against cuobjdump, and
the launch facts of the wrapper source."""

from __future__ import annotations

import json
import re
import zipfile

import pytest

from tests.conftest import FIXTURES, run_occlint
from tests.truth.nvidia_reports import parse_cuobjdump_resource

AOTI = FIXTURES / "nvidia" / "aoti"
PACKAGES = {"files": AOTI / "aoti_files.pt2", "embedded": AOTI / "aoti_embedded.pt2"}
TRUTH = {r["name"]: r for r in
         parse_cuobjdump_resource((AOTI / "aoti_files.cuobjdump.txt").read_text())}


def _document(*args: str) -> dict:
    run = run_occlint(*args, "--device", "h100", "--isolated", "--format", "json")
    assert run.code in (0, 1) and run.err == "", run.err
    return json.loads(run.out)


def _launches(package) -> dict[str, tuple[int, int, int]]:
    """name -> (wave size x num_warps, shared bytes, ...) read from the package's wrapper
    source with a regular expression of the test's own."""
    with zipfile.ZipFile(package) as z:
        (source,) = [n for n in z.namelist() if n.endswith(".wrapper.cpp")]
        text = z.read(source).decode()
    threads = int(re.search(r"(\d+)\*numWarps", text)[1])
    return {m[1]: (threads * int(m[2]), int(m[3])) for m in re.finditer(
        r"launchKernel\(kernels_\.(\w+), grid_0, grid_1, grid_2, (\d+), (\d+),", text)}


def _capability(layout: str) -> str:
    with zipfile.ZipFile(PACKAGES[layout]) as z:
        (meta,) = [n for n in z.namelist() if n.endswith(".wrapper_metadata.json")]
        return json.loads(z.read(meta))["AOTI_COMPUTE_CAPABILITY"]


@pytest.mark.parametrize("layout", list(PACKAGES))
def test_kernels_and_resources_equal_cuobjdump(layout):
    doc = _document(str(PACKAGES[layout]))
    assert not doc["errors"]
    kernels = {k["name"]: k for k in doc["kernels"]}
    assert set(kernels) == set(TRUTH)
    for name, truth in TRUTH.items():
        r = kernels[name]["resources"]
        assert r["registers"] == truth["REG"]
        assert r["local_bytes"] == truth["LOCAL"]
        assert r["stack_bytes"] == truth["STACK"]
        # cuobjdump's SHARED is the section size: on sm_90 it includes the 1 KiB reserve
        assert r["shared_bytes"] == truth["SHARED"] - (1024 if truth["SHARED"] else 0)
        # the package metadata's compute capability (Triton builds for sm_90a)
        assert kernels[name]["arch"].removesuffix("a") == f"sm_{_capability(layout)}"


def test_both_layouts_give_the_same_kernels():
    files, embedded = (_document(str(p)) for p in PACKAGES.values())
    strip = [{k: v for k, v in kernel.items() if k not in ("file", "entry", "id")}
             for kernel in files["kernels"]]
    assert strip == [{k: v for k, v in kernel.items() if k not in ("file", "entry", "id")}
                     for kernel in embedded["kernels"]]
    assert {k["entry"] for k in embedded["kernels"]} == {f".rodata/{n}" for n in TRUTH}
    assert all(k["file"].endswith(".cubin") and k["entry"] is None for k in files["kernels"])
    # the wrapper .so of the files layout holds no GPU code: skipped, no error
    assert files["summary"]["skipped"] == 1 and embedded["summary"]["skipped"] == 0


@pytest.mark.parametrize("layout", list(PACKAGES))
def test_launch_facts_come_from_the_wrapper_source(layout):
    launches = _launches(PACKAGES[layout])
    assert set(launches) == set(TRUTH)
    for k in _document(str(PACKAGES[layout]))["kernels"]:
        block, shared = launches[k["name"]]
        occ = k["occupancy"]
        assert (occ["block_size"], occ["block_source"]) == (block, "launch")
        assert occ["dynamic_shared_bytes"] == shared
        # ptxas recorded Triton's block as the kernel's required block: the same number
        assert k["resources"]["required_block"] == [block, 1, 1]


def test_extracted_package_gives_the_same_launches(tmp_path):
    with zipfile.ZipFile(PACKAGES["files"]) as z:
        z.extractall(tmp_path)
    packaged = {k["name"]: k["occupancy"] for k in _document(str(PACKAGES["files"]))["kernels"]}
    walked = _document(str(tmp_path))
    assert {k["name"]: k["occupancy"] for k in walked["kernels"]} == packaged
    assert walked["summary"]["skipped"] == 1  # the wrapper .so, found by the walk


def test_constant_grid_becomes_the_launch_grid():
    from occlint.readers.aoti import launch_hints

    source = """
    uint32_t grid_0 = 120;
    uint32_t grid_1 = 2;
    uint32_t grid_2 = 1;
    launchKernel(kernels_.k_const, grid_0, grid_1, grid_2, 4, 0, kernel_args_, stream_);
    uint32_t grid_0 = xnumel;
    launchKernel(kernels_.k_var, grid_0, grid_1, grid_2, 8, 512, kernel_args_, stream_);
    static inline void launchKernel(...) { cuLaunchKernel(func, gridX, gridY, gridZ,
        32*numWarps, 1, 1, sharedMemBytes, stream, args, nullptr); }
    """
    hints = launch_hints(source)
    assert hints["k_const"]["grid"] == 240 and hints["k_const"]["block"] == 128
    assert "grid" not in hints["k_var"] and hints["k_var"]["dynamic_lds"] == 512


def test_hostile_wrapper_source_is_parsed_in_linear_time():
    import time

    from occlint.readers.aoti import launch_hints

    for text in ("launchKernel(kernels_.a, " + " " * (4 << 20),
                 ("launchKernel(kernels_.a, x" + "y" * 64) * 50000,
                 "uint32_t grid_0 = " * 200000):
        start = time.monotonic()
        assert launch_hints(text) == {}
        assert time.monotonic() - start < 2
