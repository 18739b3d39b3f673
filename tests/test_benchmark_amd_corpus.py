"""benchmarks/amd_corpus.py measures on downloads (not in CI); its independent kernel count
(llvm-readelf over the code objects it cuts out) and its attribution of occlint's kernels to
packages are checked here on the fixtures."""

from __future__ import annotations

from benchmarks import amd_corpus, scale
from tests.conftest import FIXTURES, skip_or_fail


def test_pins_are_complete_and_distinct():
    assert len(amd_corpus.PACKAGES) == 8
    assert len({p.pin.sha256 for p in amd_corpus.PACKAGES}) == 8
    assert all(len(p.pin.sha256) == 64 for p in amd_corpus.PACKAGES)


def test_code_objects_and_count_agree_with_occlint(tmp_path, occlint, monkeypatch):
    monkeypatch.setattr(scale, "WAIT_FOR_IDLE", False)  # as the benchmark runs it
    tool = scale.llvm_readelf()
    if tool is None:
        skip_or_fail("llvm-readelf not installed")
    library = FIXTURES / "amd/containers/libgamma_small.so"  # a host library, .hip_fatbin
    loose = FIXTURES / "amd/linked"  # a folder: a linked code object, its notes as text
    found = amd_corpus.code_objects([library, loose], tmp_path / "scratch")
    linked = loose / "linked.gfx90a.co"
    assert found[-1] == (str(linked), linked) and len(found) > 1
    assert {container for container, _ in found} == {str(library), str(linked)}
    read = [[container, *amd_corpus.readelf_kernels(tool, co)] for container, co in found]
    assert read[-1][1:] == ["gfx90a", 2]
    counted = sum(kernels for _, _, kernels in read)
    assert counted == scale.readelf_notes(tool, [co for _, co in found], 1)[1]
    doc = occlint(str(library), str(loose), "--format", "json").json()
    assert len(doc["kernels"]) == counted
    by_package = amd_corpus.per_package(doc, {"lib": [library], "loose": [loose]})
    assert by_package == {"lib": counted - 2, "loose": 2}
    # with a device, occlint reads only the library's code objects for its processor
    arch = read[0][1]
    doc = occlint(str(library), str(loose), "--device", DEVICE_OF[arch], "--format",
                  "json").json()
    assert len(doc["kernels"]) == amd_corpus.expected_kernels(read, arch) < counted


DEVICE_OF = {"gfx90a": "mi250x", "gfx942": "mi300x", "gfx1100": "w7900", "gfx1030": "w6800",
             "gfx908": "mi100", "gfx906": "mi50"}
