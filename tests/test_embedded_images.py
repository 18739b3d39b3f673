"""Raw device ELF images in host data sections (occlint.readers.embedded): a host library
built by clang/lld with real code objects in .rodata, .lrodata and a section of its own
(fixtures/build_amd_embedded.py), against the compiler's and llvm-readelf's reports."""

from __future__ import annotations

import json
import re
import shutil
import struct
import time
import zipfile

import pytest

from benchmarks.fuzz import Host, Raw
from occlint.readers.loader import ReadOptions, read_bytes, read_path
from tests.conftest import REPO, run_occlint
from tests.truth.amd_reports import load_manifest, parse_notes, parse_remarks

EMBEDDED = json.loads((REPO / "fixtures/amd/embedded/manifest.json").read_text())
LIB = REPO / EMBEDDED["path"]
CODE_OBJECTS = {e["path"]: e for e in load_manifest(REPO)}


def _notes(image: dict) -> dict:
    source = CODE_OBJECTS[image["code_object"]]
    return parse_notes((REPO / source["reports"]["notes"]).read_text())


# kernels in all the images, as llvm-readelf --notes lists them
KERNELS = sum(len(_notes(i)["kernels"]) for i in EMBEDDED["images"])


def _readelf_sections() -> dict[str, int]:
    """Section name -> address, from llvm-readelf -S."""
    text = (REPO / EMBEDDED["reports"]["sections"]).read_text()
    return {m[1]: int(m[2], 16) for m in
            re.finditer(r"\]\s+(\S+)\s+\S+\s+([0-9a-f]{16})\s", text)}


def _readelf_symbols() -> dict[str, int]:
    """Symbol name -> value, from llvm-readelf -s."""
    text = (REPO / EMBEDDED["reports"]["symbols"]).read_text()
    return {m[2]: int(m[1], 16) for m in
            re.finditer(r"^\s*\d+: ([0-9a-f]{16})\s+\d+\s+\S+\s+\S+\s+\S+\s+\S+\s+(\S+)$",
                        text, re.M)}


def _expected_entries() -> dict[str, dict]:
    """Entry name occlint must give each image -> the image's manifest record: a named one
    '<section>/<label>', an unnamed one '<section>+<offset in the section>' where the
    offset comes from the toolchain's symbol table."""
    sections, symbols = _readelf_sections(), _readelf_symbols()
    out = {}
    for image in EMBEDDED["images"]:
        if image["named"]:
            assert symbols[f"__{image['label']}_start"] >= sections[image["section"]]
            out[f"{image['section']}/{image['label']}"] = image
        else:
            offset = symbols[image["label"]] - sections[image["section"]]
            out[f"{image['section']}+{offset:#x}"] = image
    return out


@pytest.fixture(scope="module")
def result():
    read = read_path(LIB, "lib", ReadOptions())
    assert not read.errors, [e.line() for e in read.errors]
    return read


def test_every_image_is_found_once_and_named(result):
    expected = _expected_entries()
    assert len(expected) == 5
    assert sorted({k.entry for k in result.kernels}) == sorted(expected)


@pytest.mark.parametrize("image", EMBEDDED["images"], ids=[i["label"] for i in EMBEDDED["images"]])
def test_image_kernels_match_the_compiler_reports(result, image):
    entry = next(e for e, i in _expected_entries().items() if i is image)
    source = CODE_OBJECTS[image["code_object"]]
    notes = _notes(image)
    remarks = {r["name"]: r for r in
               parse_remarks((REPO / source["reports"]["remarks"]).read_text())}
    kernels = {k.name: k for k in result.kernels if k.entry == entry}
    assert sorted(kernels) == sorted(m[".name"] for m in notes["kernels"])
    for meta in notes["kernels"]:
        k, r = kernels[meta[".name"]], kernels[meta[".name"]].resources
        assert k.arch == source["targets"][0].split(":")[0]
        assert k.wavefront_size == meta[".wavefront_size"]
        assert r.vgpr_count == meta[".vgpr_count"]
        assert r.agpr == meta.get(".agpr_count", 0)
        assert r.sgpr == meta[".sgpr_count"]
        assert r.lds_bytes == meta[".group_segment_fixed_size"]
        assert r.scratch_bytes == meta[".private_segment_fixed_size"]
        assert r.max_block_size == meta[".max_flat_workgroup_size"]
        remark = remarks.get(k.name)
        if remark is not None:
            assert r.sgpr == remark["sgprs"]
            assert r.lds_bytes == remark["lds"]
            assert r.scratch_bytes == remark["scratch"]
            assert r.vgpr_spill == remark["vgpr_spill"]


def test_same_kernels_on_the_command_line_in_a_wheel_and_in_a_walk(tmp_path):
    direct = run_occlint(str(LIB), "--isolated", "--format", "json", cwd=REPO)
    assert direct.err == ""
    kernels = [(k["entry"], k["name"]) for k in json.loads(direct.out)["kernels"]]
    assert len(kernels) == KERNELS
    wheel = tmp_path / "pkg-1.0-py3-none-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
        z.write(LIB, "pkg/lib/libraw_images.so")
    walk = tmp_path / "walk"
    walk.mkdir()
    shutil.copy(LIB, walk / "libraw_images.so")
    for path in (wheel, walk):
        run = run_occlint(str(path), "--isolated", "--format", "json", cwd=REPO)
        assert run.err == ""
        doc = json.loads(run.out)
        assert [(k["entry"], k["name"]) for k in doc["kernels"]] == kernels
        assert doc["summary"]["skipped"] == 0


def test_no_existing_container_fixture_gains_image_entries():
    """Cubins inside fatbins kept in .data, code objects inside bundles: never also reported
    as embedded images."""
    for root in ("fixtures/amd/containers", "fixtures/nvidia/containers",
                 "fixtures/nvidia/cubin", "fixtures/nvidia/triton"):
        run = run_occlint(root, "--isolated", "--format", "json", cwd=REPO)
        doc = json.loads(run.out)
        assert doc["kernels"]
        assert not [k["entry"] for k in doc["kernels"]
                    if k["entry"] and re.search(r"^\.[a-z.]+(\+0x|/)", k["entry"]) and
                    not k["entry"].startswith((".hip_fatbin", ".nv_fatbin", ".llvm.offloading",
                                               "__nv_relfatbin"))]


GAMMA = (REPO / "fixtures/amd/co/gamma.gfx1100.hsaco").read_bytes()
AMDGPU_HEADER = GAMMA[:64]


@pytest.mark.parametrize("junk", [
    AMDGPU_HEADER * 2000,  # valid-looking headers whose section tables lie beyond the data
    b"\x7fELF" * 50000,
    GAMMA[:-1],  # a code object cut short: its section table lies past the section
    GAMMA[:64] + bytes(len(GAMMA) - 64),  # no string table
])
def test_false_and_broken_images_are_skipped_quickly(junk):
    host = Host(((".rodata", Raw(junk), 1), (".text", Raw(b"\xc3"), 1))).render()
    start = time.monotonic()
    result = read_bytes(host, "host.so", ReadOptions())
    assert time.monotonic() - start < 5
    assert not result.kernels
    assert [e.message for e in result.errors] == [
        "no GPU code found in this ELF (no .hip_fatbin, .nv_fatbin, __nv_relfatbin, embedded "
        "fatbin or device ELF image)"]


def test_images_at_every_alignment_and_back_to_back():
    for pad in range(8):
        data = b"\x7fELF" * pad + bytes(pad) + GAMMA + GAMMA + b"\x7fE" + GAMMA
        host = Host(((".data.rel.ro", Raw(data), 1),)).render()
        result = read_bytes(host, "host.so", ReadOptions())
        assert not result.errors
        assert len(result.kernels) == 3
        entries = [k.entry for k in result.kernels]
        first = 5 * pad
        assert entries == [f".data.rel.ro+{first:#x}", f".data.rel.ro+{first + len(GAMMA):#x}",
                           f".data.rel.ro+{first + 2 * len(GAMMA) + 2:#x}"]


def test_image_running_past_its_end_symbol_is_an_error(tmp_path):
    data = bytearray(LIB.read_bytes())
    symbols = _readelf_symbols()
    # __gamma_gfx1100_size is an absolute symbol: make it 16 bytes short (both tables)
    size = symbols["__gamma_gfx1100_size"]
    needle = struct.pack("<Q", size)
    assert data.count(needle) >= 2
    lib = tmp_path / "lib.so"
    lib.write_bytes(bytes(data).replace(needle, struct.pack("<Q", size - 16)))
    result = read_path(lib, "lib.so", ReadOptions())
    (error,) = result.errors
    assert error.entry == ".rodata/gamma_gfx1100"
    assert "runs past its __gamma_gfx1100_end / _size bound" in error.message
    gamma = next(i for i in EMBEDDED["images"] if i["label"] == "gamma_gfx1100")
    assert len(result.kernels) == KERNELS - len(_notes(gamma)["kernels"])


@pytest.mark.parametrize(("container", "section"), [
    ("fixtures/amd/containers/gamma.bundle.hipfb", ".rodata"),
    ("fixtures/nvidia/containers/small.default.fatbin", ".data"),
])
def test_code_inside_containers_in_data_sections_is_not_also_an_image(container, section):
    """A bundle or fatbin kept in a data section (NVIDIA libraries keep fatbins in .data)
    holds ELF images of its own: they are its entries, never embedded images as well."""
    data = (REPO / container).read_bytes()
    alone = read_bytes(data, "c", ReadOptions())
    host = Host(((section, Raw(b"\x7fELF junk" + data + bytes(16)), 1),)).render()
    embedded = read_bytes(host, "host.so", ReadOptions())
    assert not alone.errors and not embedded.errors
    assert sorted((k.name, k.arch) for k in embedded.kernels) == \
        sorted((k.name, k.arch) for k in alone.kernels)
    assert not [k.entry for k in embedded.kernels if "+0x" in k.entry]


def test_fake_headers_claiming_huge_section_tables_cost_linear_time():
    """A fake AMDGPU header every 64 bytes of a 4 MiB section, each claiming a section table
    over the rest of the section (made of the next fake headers): without a bound on the
    table bytes examined, the scan would read about 2**37 bytes."""
    size = 4 << 20
    data = bytearray()
    for pos in range(0, size, 64):
        shnum = min(0xFFFF, (size - pos - 64) // 64)
        data += struct.pack("<4sBBBB8xHHIQQQIHHHHHH", b"\x7fELF", 2, 1, 1, 64, 3, 224, 1, 0, 0,
                            64, 0, 64, 56, 0, 64, max(shnum, 1), 0)
    host = Host(((".rodata", Raw(bytes(data)), 1),)).render()
    start = time.monotonic()
    result = read_bytes(host, "host.so", ReadOptions())
    assert time.monotonic() - start < 10
    assert not result.kernels and len(result.errors) == 1
