"""Bad AMD inputs: one line ``occlint: error: PATH: ...`` each, other inputs still analysed,
exit code 2 only when nothing could be analysed, never a traceback, bounded memory."""

from __future__ import annotations

import hashlib
import json
import os
import struct
import zlib
from pathlib import Path

import pytest
import zstandard

from tests.conftest import REPO

GOOD = REPO / "fixtures/amd/co/gamma.gfx1100.hsaco"
BUNDLE = REPO / "fixtures/amd/containers/gamma.bundle.hipfb"
CCOB2 = REPO / "fixtures/amd/containers/gamma.ccob2_zstd.hipfb"


def _ccob(payload: bytes, method: int, declared: int, version: int = 2,
          total: int | None = None) -> bytes:
    digest = struct.unpack("<Q", hashlib.md5(payload).digest()[:8])[0]
    comp = zlib.compress(payload) if method == 0 else zstandard.ZstdCompressor().compress(payload)
    if version == 3:
        head = struct.pack("<4sHHQQQ", b"CCOB", 3, method, total or 32 + len(comp), declared,
                           digest)
    else:
        head = struct.pack("<4sHHIIQ", b"CCOB", 2, method, total or 24 + len(comp), declared,
                           digest)
    return head + comp


def _bundle(entries: list[tuple[str, bytes]], align: int = 64) -> bytes:
    header = b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", len(entries))
    size = len(header) + sum(24 + len(i) for i, _ in entries)
    offsets, pos = [], -(-size // align) * align
    for _, payload in entries:
        offsets.append(pos)
        pos = -(-(pos + len(payload)) // align) * align
    for (entry_id, payload), offset in zip(entries, offsets, strict=True):
        header += struct.pack("<QQQ", offset, len(payload), len(entry_id)) + entry_id.encode()
    out = bytearray(header.ljust(offsets[0] if offsets else len(header), b"\0"))
    for (_, payload), offset in zip(entries, offsets, strict=True):
        out[len(out):offset] = b"\0" * (offset - len(out))
        out += payload
    return bytes(out)


def _patch(data: bytes, offset: int, fmt: str, value) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def _kd_offset(data: bytes) -> int:
    """File offset of the first kernel descriptor (located with pyelftools, independently)."""
    import io

    from elftools.elf.elffile import ELFFile

    elf = ELFFile(io.BytesIO(data))
    sym = next(s for s in elf.get_section_by_name(".symtab").iter_symbols()
               if s.name.endswith(".kd"))
    section = elf.get_section(sym["st_shndx"])
    return section["sh_offset"] + sym["st_value"] - section["sh_addr"]


GOOD_BYTES = GOOD.read_bytes()
ZEROS = bytes(64 << 20)
NESTED = GOOD_BYTES
for _ in range(6):  # bundles inside bundles, deeper than any real container
    NESTED = _bundle([("hipv4-amdgcn-amd-amdhsa--gfx1100", NESTED)])

BAD_INPUTS = {
    "truncated.hsaco": GOOD_BYTES[: len(GOOD_BYTES) // 2],
    "header-only.hsaco": GOOD_BYTES[:40],
    "section-table-beyond-end.hsaco": _patch(GOOD_BYTES, 0x28, "<Q", 1 << 40),
    "bad-metadata.hsaco": GOOD_BYTES.replace(b"amdhsa.kernels", b"\xc1\xc1\xc1\xc1\xc1\xc1"
                                             b"\xc1\xc1\xc1\xc1\xc1\xc1\xc1\xc1"),
    "code-object-v2.hsaco": _patch(GOOD_BYTES, 8, "<B", 0),
    "unknown-processor.hsaco": _patch(GOOD_BYTES, 0x30, "<I", 0x7F),
    "text.co": b"this is not a GPU binary\n" * 10,
    "empty.hsaco": b"",
    "empty-bundle.hipfb": _bundle([]),
    "host-only-bundle.hipfb": _bundle([("host-x86_64-unknown-linux-gnu-", b"")]),
    "absurd-count.hipfb": b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", 1 << 40),
    "entry-beyond-end.hipfb": _patch(BUNDLE.read_bytes(), 32 + 8, "<Q", 1 << 30),
    "self-referencing.hipfb": NESTED,
    "ccob-total-lies.hipfb": _patch(CCOB2.read_bytes(), 8, "<I", 1 << 30),
    "ccob-truncated.hipfb": CCOB2.read_bytes()[:-100],
    "ccob-bad-version.hipfb": _patch(CCOB2.read_bytes(), 4, "<H", 9),
    "ccob-bad-method.hipfb": _patch(CCOB2.read_bytes(), 6, "<H", 7),
    "ccob-corrupt-stream.hipfb": CCOB2.read_bytes()[:40] + b"\xff" * 200
    + CCOB2.read_bytes()[240:],
    # 64 MiB of zeros that the header claims are 4 KiB: a decompression bomb
    "ccob-bomb-zstd.hipfb": _ccob(ZEROS, 1, 4096),
    "ccob-bomb-zlib.hipfb": _ccob(ZEROS, 0, 4096, version=3),
    # a header promising more than any real bundle (over the 2 GiB limit)
    "ccob-huge-claim.hipfb": _ccob(b"x" * 100, 1, 3 << 30, version=3),
    "ccob-not-a-bundle.hipfb": _ccob(b"just text, no bundle inside" * 10, 1, 270),
}


@pytest.fixture(scope="module")
def bad_dir(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("bad")
    for name, data in BAD_INPUTS.items():
        (directory / name).write_bytes(data)
    return directory


def _assert_one_line_errors(stderr: str, count: int) -> None:
    assert "Traceback" not in stderr
    lines = stderr.splitlines()
    assert len(lines) == count, stderr
    assert all(line.startswith("occlint: error: ") for line in lines), stderr


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_input_one_line_exit_2(occlint, bad_dir, name):
    run = occlint(str(bad_dir / name))
    assert run.code == 2, (run.out, run.err)
    _assert_one_line_errors(run.err, 1)
    assert str(bad_dir / name) in run.err


@pytest.mark.parametrize("name,needle", [
    ("truncated.hsaco", "truncated"),
    ("code-object-v2.hsaco", "code object v2 is not supported"),
    ("text.co", "not a GPU binary"),
    ("empty.hsaco", "empty file"),
    ("empty-bundle.hipfb", "no entries"),
    ("host-only-bundle.hipfb", "no device code"),
    ("absurd-count.hipfb", "claims"),
    ("self-referencing.hipfb", "nested too deeply"),
    ("ccob-total-lies.hipfb", "size field lies"),
    ("ccob-bomb-zstd.hipfb", "more than"),
    ("ccob-bomb-zlib.hipfb", "more than"),
    ("ccob-huge-claim.hipfb", "limit"),
    ("unknown-processor.hsaco", "unknown AMDGPU processor"),
])
def test_bad_input_messages(occlint, bad_dir, name, needle):
    run = occlint(str(bad_dir / name))
    assert needle in run.err, run.err


def test_other_inputs_still_analysed(occlint, bad_dir):
    names = sorted(BAD_INPUTS)
    run = occlint(*(str(bad_dir / n) for n in names), str(GOOD), "--format", "json")
    # the good file is analysed; each unreadable input is an IO101 finding (severity error)
    assert run.code == 1
    _assert_one_line_errors(run.err, len(names))
    doc = json.loads(run.out)
    assert [k["name"] for k in doc["kernels"]] == ["_Z16gamma_correctionPhmf"]
    assert sorted(f["file"] for f in doc["findings"] if f["rule"] == "IO101") == \
        sorted(str(bad_dir / n) for n in names)


def test_directory_with_bad_and_unreadable_files(occlint, bad_dir, tmp_path):
    directory = tmp_path / "tree"
    (directory / "sub").mkdir(parents=True)
    (directory / "sub" / "good.hsaco").write_bytes(GOOD_BYTES)
    (directory / "bad.hsaco").write_bytes(BAD_INPUTS["truncated.hsaco"])
    (directory / "notes.txt").write_text("not a binary; skipped in directories\n")
    (directory / "dangling.hsaco").symlink_to(directory / "missing.hsaco")
    unreadable = directory / "locked.hsaco"
    unreadable.write_bytes(GOOD_BYTES)
    unreadable.chmod(0)
    expected_errors = 2 + (0 if os.geteuid() == 0 else 1)  # root can read mode-000 files
    run = occlint(str(directory), "--format", "json")
    unreadable.chmod(0o600)
    assert run.code == 1  # good.hsaco analysed; the others are IO101 error findings
    _assert_one_line_errors(run.err, expected_errors)
    assert "broken symbolic link" in run.err and "bad.hsaco" in run.err
    assert "notes.txt" not in run.err


def test_missing_path(occlint):
    run = occlint("does/not/exist.hsaco")
    assert run.code == 2
    _assert_one_line_errors(run.err, 1)
    assert "no such file" in run.err


def test_metadata_descriptor_disagreement_is_reported(occlint, tmp_path):
    data = bytearray(GOOD_BYTES)
    kd = _kd_offset(GOOD_BYTES)
    rsrc1 = struct.unpack_from("<I", data, kd + 48)[0]
    struct.pack_into("<I", data, kd + 48, (rsrc1 & ~0x3F) | 20)  # (20+1)*8 = 168 VGPRs
    path = tmp_path / "padded.hsaco"
    path.write_bytes(bytes(data))
    run = occlint(str(path), "--format", "json")
    assert run.code == 1, run.err  # BIN101 is a warning
    (k,) = json.loads(run.out)["kernels"]
    assert k["resources"]["vgpr_count"] == 10 and k["resources"]["vgpr_alloc"] == 168
    assert [f["rule"] for f in k["findings"]] == ["BIN101"]
    assert any(m["field"] == "vgpr" and m["metadata"] == 10 and m["descriptor"] == 168
               for m in k["mismatches"])
    # occupancy follows the hardware allocation: 1536 / alignTo(168, 24) = 9 waves
    assert k["occupancy"]["waves_per_simd"] == 1536 // 168


def test_code_object_without_metadata_uses_descriptors(occlint, tmp_path):
    data = GOOD_BYTES.replace(b"AMDGPU\0\0", b"XXXXXX\0\0")  # rename the note owner
    path = tmp_path / "nometa.hsaco"
    path.write_bytes(data)
    run = occlint(str(path), "--format", "json")
    assert run.code == 0, run.err
    (k,) = json.loads(run.out)["kernels"]
    assert k["name"] == "_Z16gamma_correctionPhmf"
    assert k["resources"]["vgpr_alloc"] == 16  # the descriptor's (1+1) x 8
    assert any("no metadata note" in n for n in k["notes"])


def test_debug_shows_traceback_only_for_internal_errors(occlint_process, bad_dir):
    run = occlint_process(str(bad_dir / "truncated.hsaco"), "--debug")
    assert run.code == 2 and "Traceback" not in run.err
