"""Wheels / zip archives and Triton cache metadata beside binaries."""

from __future__ import annotations

import json
import shutil
import zipfile

import pytest

from tests.conftest import REPO

GAMMA = REPO / "fixtures/amd/co/gamma.gfx1100.hsaco"
LIB = REPO / "fixtures/amd/containers/libgamma_small.so"


def _wheel(path, members: dict[str, bytes]):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)


def test_wheel_members_are_read(occlint, tmp_path):
    whl = tmp_path / "pkg-1.0-py3-none-any.whl"
    _wheel(whl, {"pkg/__init__.py": b"", "pkg/kernels/gamma.hsaco": GAMMA.read_bytes(),
                 "pkg/lib/libgamma.so": LIB.read_bytes(), "pkg/data.bin": b"not gpu code"})
    run = occlint(str(whl), "--isolated", "--format", "json")
    assert run.code == 0, run.err
    doc = json.loads(run.out)
    files = {k["file"] for k in doc["kernels"]}
    assert files == {f"{whl}!/pkg/kernels/gamma.hsaco", f"{whl}!/pkg/lib/libgamma.so"}
    # the same kernels as the files on disk
    direct = json.loads(occlint(str(LIB), "--isolated", "--format", "json").out)
    assert len([k for k in doc["kernels"] if k["file"].endswith(".so")]) == \
        len(direct["kernels"])


def test_wheel_bad_member_does_not_stop_the_others(occlint, tmp_path):
    whl = tmp_path / "bad-1.0-py3-none-any.whl"
    _wheel(whl, {"a/broken.hsaco": GAMMA.read_bytes()[:200], "b/gamma.hsaco": GAMMA.read_bytes()})
    run = occlint(str(whl), "--isolated", "--format", "json")
    assert run.code == 1  # IO101 for the broken member
    assert run.err.count("\n") == 1 and "broken.hsaco" in run.err
    assert [k["file"] for k in json.loads(run.out)["kernels"]] == [f"{whl}!/b/gamma.hsaco"]


def test_zip_bomb_member_is_capped(occlint, tmp_path):
    whl = tmp_path / "bomb.zip"
    with zipfile.ZipFile(whl, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("k.hsaco", b"\x7fELF" + bytes(100 << 20))  # 100 MiB of zeros, ~100 KiB
    run = occlint(str(whl), "--isolated")
    assert run.code == 2 and "k.hsaco" in run.err and "Traceback" not in run.err


def test_corrupted_zip(occlint, tmp_path):
    bad = tmp_path / "x.whl"
    bad.write_bytes(b"PK\x03\x04" + b"\xff" * 100)
    run = occlint(str(bad), "--isolated")
    assert run.code == 2 and run.err.startswith("occlint: error: ") and "zip" in run.err


def _read_zip(data: bytes):
    from occlint.readers.loader import ReadOptions, read_bytes

    return read_bytes(data, "w.whl", ReadOptions())


def _two_member_zip(method: int) -> tuple[bytes, list[zipfile.ZipInfo]]:
    import io

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as z:
        z.writestr("a/gamma.hsaco", GAMMA.read_bytes())
        z.writestr("b/gamma.hsaco", GAMMA.read_bytes())
    return buf.getvalue(), zipfile.ZipFile(io.BytesIO(buf.getvalue())).infolist()


@pytest.mark.parametrize("method", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
@pytest.mark.parametrize("damage,needle", [
    ("crc", "bad CRC-32 for 'b/gamma.hsaco'"),
    ("local-header", "bad local file header"),
    ("sizes", "member"),  # the directory's compressed size runs past the end
])
def test_damaged_member_is_one_error_and_the_others_are_read(method, damage, needle):
    data, (_, second) = _two_member_zip(method)
    data = bytearray(data)
    if damage == "crc":  # one bit of the member's bytes (the directory's CRC stays)
        data[second.header_offset + 30 + len(second.filename) + second.compress_size // 2] ^= 1
    elif damage == "local-header":
        data[second.header_offset:second.header_offset + 4] = b"PK\x07\x08"
    else:
        central = data.rindex(b"PK\x01\x02")  # the second member's directory entry
        data[central + 20:central + 24] = (second.compress_size + 100_000).to_bytes(4, "little")
        needle = "member is truncated"
    result = _read_zip(bytes(data))
    messages = [e.message for e in result.errors]
    if damage == "crc" and method == zipfile.ZIP_DEFLATED:  # may break the stream instead
        needle = "cannot extract"
    assert len(messages) == 1 and needle in messages[0], messages
    assert result.errors[0].file == "w.whl!/b/gamma.hsaco"
    assert [k.file for k in result.kernels] == ["w.whl!/a/gamma.hsaco"]


def test_zlib_fallback_reads_the_same(monkeypatch):
    import zlib

    from occlint.readers import archive

    data = _two_member_zip(zipfile.ZIP_DEFLATED)[0]
    fast = _read_zip(data)
    monkeypatch.setattr(archive, "_INFLATE", zlib)
    slow = _read_zip(data)
    assert [(k.file, k.name) for k in fast.kernels] == [(k.file, k.name) for k in slow.kernels]
    assert len(fast.kernels) == 2 and not fast.errors and not slow.errors


def test_directory_walk_includes_wheels(occlint, tmp_path):
    _wheel(tmp_path / "w.whl", {"g.hsaco": GAMMA.read_bytes()})
    (tmp_path / "other.zip").write_bytes(b"PK\x03\x04junk")
    (tmp_path / "notes.txt").write_text("x")
    run = occlint(str(tmp_path), "--isolated", "--format", "json")
    assert run.code == 1  # other.zip is a broken archive: IO101
    assert [k["file"] for k in json.loads(run.out)["kernels"]] == \
        [f"{tmp_path / 'w.whl'}!/g.hsaco"]


def test_triton_cache_metadata_gives_the_launch(occlint, tmp_path):
    """A Triton cache entry: <name>.hsaco beside <name>.json (num_warps, shared, target)."""
    entry = tmp_path / "cache" / "7f3a"
    entry.mkdir(parents=True)
    shutil.copy(GAMMA, entry / "gamma_correction.hsaco")
    (entry / "gamma_correction.json").write_text(json.dumps({
        "name": "_Z16gamma_correctionPhmf", "num_warps": 4, "num_stages": 2,
        "shared": 8192, "target": {"backend": "hip", "arch": "gfx1100", "warp_size": 32}}))
    doc = json.loads(occlint(str(tmp_path / "cache"), "--isolated", "--format", "json").out)
    (k,) = doc["kernels"]
    assert k["occupancy"]["block_size"] == 4 * 32 and k["occupancy"]["block_source"] == "launch"
    assert k["occupancy"]["dynamic_shared_bytes"] == 8192
    # the command line still wins
    doc2 = json.loads(occlint(str(tmp_path / "cache"), "--block", "64", "--isolated",
                              "--format", "json").out)
    assert doc2["kernels"][0]["occupancy"]["block_size"] == 64


def test_real_triton_cache(occlint):
    """A cache written by Triton 3.6 on an H200 (benchmarks/gpu/triton_cache.py): the
    cubins' resources against cuobjdump, the launch against Triton's own metadata."""
    from tests.conftest import FIXTURES
    from tests.truth.nvidia_reports import parse_cuobjdump_resource

    cache = FIXTURES / "nvidia" / "triton"
    doc = json.loads(occlint(str(cache), "--device", "h200", "--isolated", "--format",
                             "json").out)
    kernels = {k["name"]: k for k in doc["kernels"]}
    assert set(kernels) == {"add_kernel", "softmax_kernel"}
    for cubin in cache.glob("*/*.cubin"):
        meta = json.loads(cubin.with_suffix(".json").read_text())
        (report,) = parse_cuobjdump_resource(
            cubin.with_suffix(".cuobjdump.txt").read_text())
        k = kernels[meta["name"]]
        assert report["name"] == meta["name"]
        assert k["resources"]["registers"] == report["REG"]
        # cuobjdump counts the 1 KiB sm_90 reserves per block in kernels that use shared
        # memory; the static allocation is what is left (Triton's is all dynamic)
        assert k["resources"]["shared_bytes"] == report["SHARED"] - (
            1024 if report["SHARED"] else 0)
        occ = k["occupancy"]
        assert occ["block_size"] == meta["num_warps"] * meta["target"]["warp_size"]
        assert occ["dynamic_shared_bytes"] == meta["shared"]
        assert k["resources"]["required_block"] == [occ["block_size"], 1, 1]
