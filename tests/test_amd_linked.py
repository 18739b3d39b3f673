"""Code objects linked from several objects carry one metadata note per object (rocBLAS's
Tensile libraries: one per kernel). Fixture: fixtures/build_linked_code_object.py (clang-22,
ld.lld-22); oracle: llvm-readelf-22 --notes written next to it."""

from __future__ import annotations

import pytest

from occlint.errors import FormatError
from occlint.readers.amd.code_object import _merged
from tests.conftest import FIXTURES, REPO
from tests.truth.amd_reports import parse_notes

LINKED = FIXTURES / "amd/linked/linked.gfx90a.co"


def test_every_metadata_note_gives_its_kernels(occlint):
    notes_text = (FIXTURES / "amd/linked/linked.gfx90a.notes.txt").read_text()
    assert notes_text.count("NT_AMDGPU_METADATA") == 2  # one note per linked object
    expected = {k[".name"]: k for k in parse_notes(notes_text)["kernels"]}
    doc = occlint(str(LINKED.relative_to(REPO)), "--device", "mi250x", "--format", "json",
                  cwd=REPO).json()
    assert sorted(k["name"] for k in doc["kernels"]) == sorted(expected) == ["axpy", "scale"]
    for kernel in doc["kernels"]:
        note = expected[kernel["name"]]
        assert kernel["resources"]["vgpr_count"] == note[".vgpr_count"]
        assert kernel["resources"]["sgpr"] == note[".sgpr_count"]


def test_notes_merge_as_comgr_merges_them():
    def note(version, *names, printf=None):
        meta = {"amdhsa.version": version, "amdhsa.kernels": [{".name": n} for n in names]}
        if printf is not None:
            meta["amdhsa.printf"] = printf
        return meta

    merged = _merged(note([1, 2], "a"), note([1, 2], "b", printf=["1:4:%d"]))
    assert [k[".name"] for k in merged["amdhsa.kernels"]] == ["a", "b"]
    assert merged["amdhsa.printf"] == ["1:4:%d"]
    for first, second in ((note([1, 2], "a"), note([1, 1], "b")),
                          (note([1, 2], "a", printf=["x"]), note([1, 2], "b", printf=["y"])),
                          ({"amdhsa.version": [1, 2]}, note([1, 2], "b"))):
        with pytest.raises(FormatError):
            _merged(first, second)


def test_symbols_where_keeps_what_symbols_has():
    """The filtered symbol reader (names decoded only for the symbols kept) gives the same
    symbols, in the same order, as filtering the whole table."""
    from occlint.readers.elf import ElfImage
    from occlint.readers.span import Span

    for path in (LINKED, FIXTURES / "debug/rocsparse-gemmi.gfx1030.co"):
        elf = ElfImage(Span(path.read_bytes()))
        everything = elf.symbols()
        for keep in (lambda info, other, shndx, size: info & 0xF == 1 and size == 64,
                     lambda info, other, shndx, size: info & 0xF == 2 and shndx,
                     lambda info, other, shndx, size: shndx == 0xFFF1):
            kept = elf.symbols_where(keep)
            assert kept == [s for s in everything if keep(s.info, s.other, s.shndx, s.size)]
        objects = elf.symbols_where(lambda info, other, shndx, size: info & 0xF == 1 and size == 64)
        assert len(objects) >= 2
