"""Kernel source lines from debug information: a -g AMD code object, a -lineinfo cubin.

The fixtures come from fixtures/build_debuginfo.py (clang-22 -g, nvcc 13.0 -lineinfo).
Oracles: the line of each kernel's ``__global__`` definition in its source file (read by
the test), and llvm-dwarfdump-22's output written next to each fixture.
"""

from __future__ import annotations

import json
import re

import pytest

from occlint.model.finding import resolve
from occlint.readers.debuginfo import kernel_lines
from tests.conftest import FIXTURES, REPO

DEBUG = FIXTURES / "debug"
AMD_G = DEBUG / "gamma.gfx1100.g.hsaco"
NV_LINEINFO = DEBUG / "gamma.sm_90.lineinfo.cubin"


def definition_line(path, kernel: str) -> int:
    lines = path.read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1)
                if "__global__" in line and re.search(rf"\b{kernel}\(", line))


def test_amd_code_object_with_dwarf():
    lines = kernel_lines(AMD_G.read_bytes())
    expected = definition_line(FIXTURES / "amd/src/gamma.hip", "gamma_correction")
    assert lines["_Z16gamma_correctionPhmf"] == ("fixtures/amd/src/gamma.hip", expected)
    dump = (DEBUG / "gamma.gfx1100.g.dwarfdump.txt").read_text()
    block = dump[dump.index('DW_AT_linkage_name\t("_Z16gamma_correctionPhmf")'):][:400]
    assert f"DW_AT_decl_line\t({expected})" in block
    assert 'DW_AT_decl_file\t("./fixtures/amd/src/gamma.hip")' in block


def test_cubin_with_lineinfo():
    lines = kernel_lines(NV_LINEINFO.read_bytes())
    src = FIXTURES / "nvidia/src/gamma.cu"
    for symbol, kernel in (("_Z27gamma_correction_gridstridePhmf", "gamma_correction_gridstride"),
                           ("_Z28gamma_correction_per_elementPhmf",
                            "gamma_correction_per_element")):
        file, line = lines[symbol]
        assert file.endswith("/fixtures/nvidia/src/gamma.cu")
        assert line == definition_line(src, kernel)
        assert resolve(file, REPO) == "fixtures/nvidia/src/gamma.cu"
    # llvm-dwarfdump: each sequence starts at one of the kernels' lines
    dump = (DEBUG / "gamma.sm_90.lineinfo.debug_line.txt").read_text()
    starts = re.findall(r"^0x0000000000000000\s+(\d+)", dump, re.M)
    assert sorted(map(int, starts)) == sorted(line for _, line in lines.values())


def test_binaries_without_debug_info_have_no_location():
    assert kernel_lines((FIXTURES / "amd/co/gamma.gfx1100.hsaco").read_bytes()) == {}
    assert kernel_lines(b"\x7fELF garbage") == {}


def test_findings_carry_the_source_location(occlint):
    run = occlint(str(AMD_G.relative_to(REPO)), "--device", "w7800", "--block", "256",
                  "--grid", "1000", "--format", "sarif", cwd=REPO)
    line = definition_line(FIXTURES / "amd/src/gamma.hip", "gamma_correction")
    results = json.loads(run.out)["runs"][0]["results"]
    assert {r["ruleId"] for r in results} == {"LCH101", "LCH103"}
    for r in results:
        physical = r["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uri"] == "fixtures/amd/src/gamma.hip"
        assert physical["region"] == {"startLine": line}
        related = r["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert related == "fixtures/debug/gamma.gfx1100.g.hsaco"
    doc = occlint(str(NV_LINEINFO.relative_to(REPO)), "--device", "h100", "--grid", "1000",
                  "--format", "json", cwd=REPO).json()
    for k in doc["kernels"]:
        assert k["source"]["path"] == "fixtures/nvidia/src/gamma.cu"
        for f in k["findings"]:
            assert f["source"] == k["source"]
    gh = occlint(str(NV_LINEINFO.relative_to(REPO)), "--device", "h100", "--grid", "1000",
                 "--format", "github", cwd=REPO).out
    assert "file=fixtures/nvidia/src/gamma.cu,line=" in gh


def test_source_not_in_the_repository_stays_on_the_binary(occlint, tmp_path):
    (tmp_path / "k.hsaco").write_bytes(AMD_G.read_bytes())
    run = occlint("k.hsaco", "--device", "w7800", "--block", "256", "--grid", "1000",
                  "--format", "sarif", cwd=tmp_path)
    for r in json.loads(run.out)["runs"][0]["results"]:
        assert r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "k.hsaco"
        assert "relatedLocations" not in r
        assert r["properties"]["source"]["path"] is None


def test_json_with_sources_validates(occlint):
    import pytest

    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((REPO / "docs/schema/occlint-report.schema.json").read_text())
    doc = occlint("fixtures/debug", "--device", "h100", "--device", "w7800", "--grid", "1000",
                  "--format", "json", cwd=REPO).json()
    jsonschema.validate(doc, schema)


ROCSPARSE = DEBUG / "rocsparse-gemmi.gfx1030.co"


def dwarfdump_definitions(path) -> dict[str, tuple[str, int]]:
    """{linkage name: (decl_file, decl_line)} of the subprogram DIEs with a low_pc that
    llvm-dwarfdump --name printed (the kernels' definitions)."""
    import posixpath

    out = {}
    for block in path.read_text().split("\n\n"):
        if "DW_TAG_subprogram" not in block or "DW_AT_low_pc" not in block:
            continue
        name = re.search(r'DW_AT_linkage_name\t\("([^"]+)"\)', block)[1]
        file = re.search(r'DW_AT_decl_file\t\("([^"]+)"\)', block)[1]
        line = int(re.search(r"DW_AT_decl_line\t\((\d+)\)", block)[1])
        out[name] = (posixpath.normpath(file), line)
    return out


def test_rocsparse_code_object_lines_match_llvm_dwarfdump():
    """A real -g code object of Debian's librocsparse0 (fixtures/build_rocsparse_debug.py):
    the DIE search gives each kernel the declaration line llvm-dwarfdump prints. Among its
    false matches (bytes inside other DIEs) is one that decodes as a subprogram with the
    kernel's address but another name: it must not win."""
    from occlint.readers.amd.debuglines import kernel_lines as search
    from occlint.readers.elf import ElfImage
    from occlint.readers.span import Span

    expected = dwarfdump_definitions(DEBUG / "rocsparse-gemmi.gfx1030.dwarfdump.txt")
    assert len(expected) == 16
    assert kernel_lines(ROCSPARSE.read_bytes()) == expected
    assert search(ElfImage(Span(ROCSPARSE.read_bytes()))) == expected  # no DIE walk


def test_rocsparse_kernels_carry_their_lines(occlint):
    expected = dwarfdump_definitions(DEBUG / "rocsparse-gemmi.gfx1030.dwarfdump.txt")
    doc = occlint(str(ROCSPARSE.relative_to(REPO)), "--format", "json", cwd=REPO).json()
    assert len(doc["kernels"]) == 16
    for k in doc["kernels"]:
        file, line = expected[k["name"]]
        assert (k["source"]["file"], k["source"]["line"]) == (file, line)


@pytest.mark.parametrize("method", ["zlib", "zstd"])
def test_compressed_debug_sections_give_the_same_lines(method):
    """Debug sections compressed (SHF_COMPRESSED, by llvm-objcopy-22, as Debian trixie's
    ROCm libraries ship them) are decompressed and searched: llvm-dwarfdump's lines, and
    no DIE walk (which took 8 s for librocrand.so.1.1 of librocrand1 5.7.1)."""
    from occlint.readers.amd.debuglines import kernel_lines as search
    from occlint.readers.elf import ElfImage
    from occlint.readers.span import Span

    path = DEBUG / f"rocsparse-gemmi.gfx1030.{method}.co"
    elf = ElfImage(Span(path.read_bytes()))
    info = elf.section(".debug_info")
    assert elf.compression(info)[0] == method
    assert elf.contents_size(info) == ElfImage(Span(ROCSPARSE.read_bytes())).section(
        ".debug_info").size
    expected = dwarfdump_definitions(DEBUG / "rocsparse-gemmi.gfx1030.dwarfdump.txt")
    assert search(elf) == expected
    assert kernel_lines(path.read_bytes()) == expected


def _chdr_at(data: bytes, name: str) -> int:
    from occlint.readers.elf import ElfImage
    from occlint.readers.span import Span

    return ElfImage(Span(data)).section(name).offset


def test_compressed_debug_sections_that_lie_give_no_lines():
    """A compression header that announces more than the debug-size cap, one that
    announces more than the stream holds, a damaged stream, an unknown method: no lines, no
    error, and nothing larger than the cap is allocated."""
    data = (DEBUG / "rocsparse-gemmi.gfx1030.zlib.co").read_bytes()
    at = _chdr_at(data, ".debug_info")
    for patch in ((at + 8, (1 << 40).to_bytes(8, "little")),  # ch_size: 1 TiB
                  (at + 8, (1 << 20).to_bytes(8, "little")),  # more than the stream holds
                  (at + 40, bytes(64)),  # zeroes inside the zlib stream
                  (at, (7).to_bytes(4, "little"))):  # ch_type 7: no such method
        damaged = bytearray(data)
        damaged[patch[0]:patch[0] + len(patch[1])] = patch[1]
        assert kernel_lines(bytes(damaged)) == {}


def test_truncated_debug_info_gives_what_it_can():
    data = ROCSPARSE.read_bytes()
    for cut in (len(data) // 3, len(data) // 2, len(data) - 100):
        assert isinstance(kernel_lines(data[:cut]), dict)
    damaged = bytearray(data)
    damaged[0x860:0x8000] = bytes(0x8000 - 0x860)  # zeroes over most of .debug_info
    assert kernel_lines(bytes(damaged)) == {}


@pytest.mark.parametrize("size", [4, 8])
def test_debug_addr_indexes_searched_or_tabled_agree(size, monkeypatch):
    """A unit's .debug_addr indexes of the kernels' addresses: searched in the section (few
    kernels) or from a dict of the unit's table (many) give the first index in the unit's
    own table; entries outside it (another unit's, past its DWARF 5 header's length) are
    not indexes."""
    from types import SimpleNamespace

    from occlint.readers import dwarf
    from occlint.readers.amd import debuglines

    def entries(*values: int) -> bytes:
        return b"".join(v.to_bytes(size, "little") for v in values)

    A, B, C, D = 0x1000, 0x2000, 0x3000, 0x4000
    other = entries(C, A)  # another unit's table, before this one
    table = entries(B, A, A, B)
    header = (4 + len(table)).to_bytes(4, "little") + b"\x05\x00" + bytes([size, 0])
    data = other + b"\x01" + entries(D) + header + table + entries(C)  # C: past the table
    base = len(other) + 1 + size + len(header)
    sections = object.__new__(debuglines._Sections)
    sections.data, sections._places = {".debug_addr": data}, {}
    unit = SimpleNamespace(address_size=size, top={dwarf.AT_ADDR_BASE: base})
    expected = {A: 1, B: 0}
    assert debuglines._address_indexes(sections, unit, [A, B, C, D]) == expected
    monkeypatch.setattr(debuglines, "SCANS_MOST", 0)
    assert debuglines._address_indexes(sections, unit, [A, B, C, D]) == expected
