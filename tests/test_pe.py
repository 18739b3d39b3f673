"""Windows PE/COFF DLLs (fixtures/pe, built by clang-19 / lld-link-19 for
x86_64-pc-windows-msvc by fixtures/build_pe.py): HIP bundles in ``.hip_fat``, a CUDA fatbin
in ``.nv_fatb``, a raw code object in ``.rdata``, against the toolchains' reports."""

from __future__ import annotations

import json
import re
import zipfile
from collections import Counter

import pytest

from occlint.readers.loader import ReadOptions, read_bytes, read_path
from tests.conftest import REPO, run_occlint
from tests.truth.amd_reports import parse_bundler_list, parse_notes
from tests.truth.nvidia_reports import parse_cuobjdump_resource, split_commands

PE = REPO / "fixtures/pe"
HIP, CUDA, HOST = PE / "hip_gamma.dll", PE / "cuda_small.dll", PE / "host_only.dll"
CONTAINERS = REPO / "fixtures/amd/containers"


def _section_offsets(dll) -> dict[str, int]:
    """Section name -> file offset of its data, from llvm-readobj --sections."""
    text = (PE / f"{dll.name}.sections.txt").read_text()
    return {m[1]: int(m[2], 16) for m in re.finditer(
        r"Name: (\S+) \(.*?PointerToRawData: (0x[0-9A-F]+)", text, re.S)}


def _notes(arch: str) -> dict:
    return parse_notes((REPO / f"fixtures/amd/co/gamma.{arch}.notes.txt").read_text())


def test_hip_dll_entries_are_those_the_bundler_lists():
    result = read_path(HIP, "hip_gamma.dll", ReadOptions())
    assert not result.errors, [e.line() for e in result.errors]
    ids = [i for i in parse_bundler_list(
        (CONTAINERS / "gamma.bundle.hipfb.bundler.txt").read_text()) if not i.startswith("host")]
    compressed = [i for i in parse_bundler_list(
        (CONTAINERS / "gamma.ccob2_zstd.hipfb.bundler.txt").read_text())
        if not i.startswith("host")]
    co = (REPO / "fixtures/amd/co/gamma.gfx942.hsaco").read_bytes()
    dll = HIP.read_bytes()
    rdata = dll.index(co) - _section_offsets(HIP)[".rdata"]
    expected = [f".hip_fat/{i}" for i in ids] + [f".hip_fat/bundle1/{i}" for i in compressed] + \
        [f".rdata+{rdata:#x}"]
    assert Counter(k.entry for k in result.kernels) == Counter(expected)


@pytest.mark.parametrize("arch", ["gfx906", "gfx90a", "gfx1100", "gfx942"])
def test_hip_dll_resources_equal_the_compiler_reports(arch):
    """Each entry is the code object built alone for its target (the same source and flags:
    the bundle holds its bytes), whose llvm-readelf notes are the truth."""
    co = (REPO / f"fixtures/amd/co/gamma.{arch}.hsaco").read_bytes()
    if arch != "gfx942":
        assert co in (CONTAINERS / "gamma.bundle.hipfb").read_bytes()
    (meta,) = _notes(arch)["kernels"]
    kernels = [k for k in read_path(HIP, "x", ReadOptions()).kernels if k.arch == arch]
    assert len(kernels) == (1 if arch == "gfx942" else 2)  # the plain and the CCOB bundle
    for k in kernels:
        r = k.resources
        assert k.name == meta[".name"]
        assert k.wavefront_size == meta[".wavefront_size"]
        assert r.vgpr_count == meta[".vgpr_count"]
        assert r.sgpr == meta[".sgpr_count"]
        assert r.lds_bytes == meta[".group_segment_fixed_size"]
        assert r.scratch_bytes == meta[".private_segment_fixed_size"]
        assert r.max_block_size == meta[".max_flat_workgroup_size"]


def test_cuda_dll_resources_equal_cuobjdump():
    result = read_path(CUDA, "cuda_small.dll", ReadOptions())
    assert not result.errors
    text = (REPO / "fixtures/nvidia/containers/small.default.fatbin.cuobjdump.txt").read_text()
    (funcs,) = [parse_cuobjdump_resource(body) for command, body in split_commands(text)
                if command and "--dump-resource-usage" in command]
    def sm(arch: str) -> int:
        return int(re.match(r"sm_(\d+)", arch)[1])

    expected = sorted((f["arch"], f["name"], f["REG"], f["STACK"],
                       f["SHARED"] - 1024 if f["SHARED"] and sm(f["arch"]) >= 90
                       else f["SHARED"]) for f in funcs)
    got = sorted((k.arch, k.name, k.resources.registers, k.resources.local_bytes,
                  k.resources.shared_bytes) for k in result.kernels)
    assert got == expected
    assert {k.entry.split("/")[0] for k in result.kernels} == {".nv_fatb"}


def test_dll_without_gpu_code_named_walked_and_in_a_wheel(tmp_path):
    run = run_occlint(str(HOST), "--isolated", cwd=REPO)
    assert run.code == 2
    assert run.err == (f"occlint: error: {HOST}: no GPU code found in this PE file (no "
                       ".hip_fat, .nv_fatb, embedded bundle, fatbin or device ELF image)\n")
    wheel = tmp_path / "pkg-1.0-cp311-cp311-win_amd64.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
        z.write(HOST, "pkg/_core.pyd")
        z.write(HIP, "pkg/hip_gamma.dll")
        z.write(CUDA, "pkg/bin/cuda_small.exe")
    direct = json.loads(run_occlint(str(PE), "--isolated", "--format", "json", cwd=REPO).out)
    for path in (wheel, PE):
        run = run_occlint(str(path), "--isolated", "--format", "json", cwd=REPO)
        assert run.err == ""
        doc = json.loads(run.out)
        assert doc["summary"]["skipped"] == 1 and not doc["errors"]
        assert sorted((k["entry"], k["name"], k["arch"]) for k in doc["kernels"]) == sorted(
            (k["entry"], k["name"], k["arch"]) for k in direct["kernels"])


@pytest.mark.parametrize("cut", [64, 200, 600, 1100, 5000, 20000])
def test_truncated_or_damaged_dll_is_one_line(cut, tmp_path):
    data = HIP.read_bytes()
    for damaged in (data[:cut], data[:cut] + bytes(100) + data[cut + 100:]):
        result = read_bytes(damaged, "x.dll", ReadOptions())
        assert all("\n" not in e.line() for e in result.errors)
        path = tmp_path / "x.dll"
        path.write_bytes(damaged)
        run = run_occlint(str(path), "--isolated", cwd=REPO)
        assert "Traceback" not in run.err
        assert all(line.startswith("occlint: error: ") for line in run.err.splitlines())
