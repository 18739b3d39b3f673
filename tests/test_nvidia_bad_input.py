"""Broken and hostile NVIDIA inputs: one error line each, never a traceback.

Each input is built at test time in tmp_path by patching a copy of a committed fixture (or
by packing a fatbin around a real cubin). Through the CLI every one must give exactly one
``occlint: error: PATH...: message`` line on stderr, exit code 2 when nothing else could be
analysed, and leave other inputs of the same run analysed (exit code 0 then).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from tests.conftest import run_occlint
from tests.truth.nvidia_reports import parse_ptxas


def occlint(*args: str):
    """The CLI as a user runs it, without configuration files; findings do not change the
    exit code (--exit-zero), errors still give 2."""
    return run_occlint(*args, "--isolated", "--exit-zero")

REPO = Path(__file__).resolve().parent.parent
NV = REPO / "fixtures/nvidia"
CUBIN = NV / "cubin/launch_bounds.sm_90.cubin"  # 4 kernels, spills, launch bounds
GOOD = NV / "cubin/container_kernels.sm_80.cubin"
FATBIN = NV / "containers/small.none.fatbin"
needed = [CUBIN, GOOD, FATBIN, CUBIN.with_suffix(".ptxas.txt")]
pytestmark = pytest.mark.skipif(not all(p.exists() for p in needed),
                                reason="NVIDIA fixtures missing")

FATBIN_MAGIC = 0xBA55ED50
ENTRY = struct.Struct("<HHIQIIHHIIIQQQ")  # 64-byte fatbin entry header
FLAG_64BIT_LINUX = 0x11
FLAG_LZ4, FLAG_ZSTD = 0x2000, 0x8000


# -- helpers: raw ELF / fatbin surgery (struct only) -------------------------------------------
def sections(data: bytes) -> dict[str, tuple[int, int, int]]:
    """{name: (header offset, sh_offset, sh_size)} of a 64-bit little-endian ELF."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shnum, shstrndx = struct.unpack_from("<HH", data, 0x3C)
    headers = [(shoff + 64 * i, *struct.unpack_from("<IIQQQQ", data, shoff + 64 * i))
               for i in range(shnum)]
    names = headers[shstrndx][5]
    out = {}
    for at, name_off, _, _, _, offset, size in headers:
        end = data.index(b"\0", names + name_off)
        out[data[names + name_off:end].decode()] = (at, offset, size)
    return out


def records(data: bytes, offset: int, size: int) -> list[tuple[int, int, int]]:
    """(position, format, attribute) of the .nv.info records in data[offset:offset+size]."""
    out, pos = [], offset
    while pos < offset + size:
        fmt, attr, value = struct.unpack_from("<BBH", data, pos)
        out.append((pos, fmt, attr))
        pos += 4 + (value if fmt == 4 else 0)
    return out


def fatbin(*entries: tuple[int, int, int, bytes, int]) -> bytes:
    """A fatbin container of (kind, sm, flags, payload, uncompressed size) entries."""
    parts = []
    for kind, sm, flags, payload, usize in entries:
        padded = payload + b"\0" * (-len(payload) % 8)
        compressed = len(payload) if flags & (FLAG_LZ4 | FLAG_ZSTD) else 0
        parts.append(ENTRY.pack(kind, 0x101, 64, len(padded), compressed, 0, 8, 1, sm, 0, 0,
                                flags, 0, usize) + padded)
    body = b"".join(parts)
    return struct.pack("<IHHQ", FATBIN_MAGIC, 1, 16, len(body)) + body


def ptxas_truth(path: Path) -> dict[str, dict]:
    return {f["name"]: f for f in parse_ptxas(path.with_suffix(".ptxas.txt").read_text())
            if f["is_entry"]}


# -- the bad inputs ----------------------------------------------------------------------------
def truncated_cubin():
    data = CUBIN.read_bytes()
    return data[:len(data) // 2]


def corrupted_elf_header():
    data = bytearray(CUBIN.read_bytes())
    struct.pack_into("<Q", data, 0x28, 1 << 60)  # e_shoff far beyond the file
    return bytes(data)


def wrong_elf_class():
    data = bytearray(CUBIN.read_bytes())
    data[4] = 1  # ELFCLASS32
    return bytes(data)


def truncated_nv_info_record():
    data = bytearray(CUBIN.read_bytes())
    _, offset, size = sections(data)[".nv.info"]
    pos, fmt, _ = records(data, offset, size)[-1]
    assert fmt == 4
    struct.pack_into("<H", data, pos + 2, 0xFFFF)  # the last record claims 64 KiB of payload
    return bytes(data)


def fatbin_header_size_lies():
    data = bytearray(FATBIN.read_bytes())
    struct.pack_into("<Q", data, 8, 1 << 40)
    return bytes(data)


def fatbin_entry_size_lies():
    data = bytearray(FATBIN.read_bytes())
    struct.pack_into("<Q", data, 16 + 8, 1 << 40)  # first entry's payload size
    return bytes(data)


def fatbin_entry_header_size_absurd():
    data = bytearray(FATBIN.read_bytes())
    struct.pack_into("<I", data, 16 + 4, 0xFFFFFFF0)
    return bytes(data)


def fatbin_absurd_entry_count():
    return fatbin(*[(1, 90, FLAG_64BIT_LINUX, b"", 0)] * 70000)


def lz4_claims_huge_size():
    import lz4.block

    cubin = CUBIN.read_bytes()
    return fatbin((2, 90, FLAG_64BIT_LINUX | FLAG_LZ4,
                   lz4.block.compress(cubin, store_size=False), 1 << 40))


def lz4_claims_more_than_lz4_can_expand():
    return fatbin((2, 90, FLAG_64BIT_LINUX | FLAG_LZ4, b"\x1f\0" * 8, 1 << 30))


def lz4_bomb():
    import lz4.block

    payload = lz4.block.compress(b"\0" * (8 << 20), store_size=False)
    return fatbin((2, 90, FLAG_64BIT_LINUX | FLAG_LZ4, payload, 4096))


def zstd_claims_huge_size():
    import zstandard

    return fatbin((2, 90, FLAG_64BIT_LINUX | FLAG_ZSTD,
                   zstandard.ZstdCompressor().compress(CUBIN.read_bytes()), 1 << 40))


def zstd_bomb():
    import zstandard

    payload = zstandard.ZstdCompressor(level=19).compress(b"\0" * (64 << 20))
    return fatbin((2, 90, FLAG_64BIT_LINUX | FLAG_ZSTD, payload, 4096))


def zstd_garbage():
    return fatbin((2, 90, FLAG_64BIT_LINUX | FLAG_ZSTD, b"\x28\xb5\x2f\xfd" + b"\xff" * 60,
                   4096))


def nested_fatbin():
    return fatbin((2, 90, FLAG_64BIT_LINUX, FATBIN.read_bytes(), 0))


def host_elf_in_fatbin():
    header = bytearray(64)
    header[:7] = b"\x7fELF\x02\x01\x01"
    struct.pack_into("<HHI", header, 16, 2, 62, 1)  # ET_EXEC, EM_X86_64
    struct.pack_into("<H", header, 0x34, 64)
    return fatbin((2, 90, FLAG_64BIT_LINUX, bytes(header), 0))


def entry_names_beyond_the_budget():
    """A symbol table of entry functions that all name one kernel name, far more name bytes
    than the string table holds (only entry names are decoded: still bounded)."""
    data = bytearray(CUBIN.read_bytes())
    table = sections(bytes(data))
    at, offset, size = table[".symtab"]
    strtab_size = table[".strtab"][2]
    rows = [data[pos:pos + 24] for pos in range(offset, offset + size, 24)]
    entry = next(r for r in rows if r[5] & 0x10)  # st_other: STO_CUDA_ENTRY
    name_len = data.index(b"\0", table[".strtab"][1] + struct.unpack_from("<I", entry)[0]) - \
        (table[".strtab"][1] + struct.unpack_from("<I", entry)[0])
    count = (16 * strtab_size + (1 << 20)) // name_len + 100
    struct.pack_into("<QQ", data, at + 24, len(data), 24 * count)  # sh_offset, sh_size
    return bytes(data) + bytes(entry) * count


def empty_file():
    return b""


def not_gpu_code():
    return b"This is a text file, not a GPU binary.\n" * 10


BAD = [truncated_cubin, corrupted_elf_header, wrong_elf_class, truncated_nv_info_record,
       fatbin_header_size_lies, fatbin_entry_size_lies, fatbin_entry_header_size_absurd,
       fatbin_absurd_entry_count, lz4_claims_huge_size, lz4_claims_more_than_lz4_can_expand,
       lz4_bomb, zstd_claims_huge_size, zstd_bomb, zstd_garbage, nested_fatbin,
       host_elf_in_fatbin, entry_names_beyond_the_budget, empty_file, not_gpu_code]


def _error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


@pytest.mark.parametrize("make", BAD, ids=[f.__name__ for f in BAD])
def test_bad_input_gives_one_error_line(make, tmp_path):
    path = tmp_path / f"{make.__name__}.bin"
    path.write_bytes(make())
    run = occlint(str(path), "--format", "json")
    assert "Traceback" not in run.err
    lines = _error_lines(run.err)
    assert len(lines) == 1, run.err
    assert lines[0].startswith(f"occlint: error: {path}"), lines[0]
    assert run.code == 2, (run.code, run.err)
    assert json.loads(run.out)["kernels"] == []


def test_bad_inputs_do_not_stop_good_ones(tmp_path):
    paths = []
    for make in BAD:
        path = tmp_path / f"{make.__name__}.bin"
        path.write_bytes(make())
        paths.append(str(path))
    run = occlint(*paths, str(GOOD), "--format", "json")
    assert "Traceback" not in run.err
    assert run.code == 0, run.err
    lines = _error_lines(run.err)
    assert len(lines) == len(BAD), run.err
    for path in paths:
        assert sum(line.startswith(f"occlint: error: {path}") for line in lines) == 1, path
    doc = json.loads(run.out)
    assert {k["name"] for k in doc["kernels"]} == set(ptxas_truth(GOOD))


def test_error_in_a_later_entry_keeps_the_earlier_ones(tmp_path):
    data = bytearray(FATBIN.read_bytes())
    pos, last = 16, None
    while pos < len(data):
        _, _, header, size = struct.unpack_from("<HHIQ", data, pos)
        last, pos = pos, pos + header + size
    struct.pack_into("<Q", data, last + 8, 1 << 40)  # the last entry (PTX) lies
    path = tmp_path / "last_entry_lies.fatbin"
    path.write_bytes(bytes(data))
    run = occlint(str(path), "--format", "json")
    assert "Traceback" not in run.err
    assert run.code == 0 and len(_error_lines(run.err)) == 1, run.err
    assert len(json.loads(run.out)["kernels"]) == 15  # 5 archs x 3 kernels


def test_unknown_eiattr_codes_are_skipped(tmp_path):
    data = bytearray(CUBIN.read_bytes())
    patched = 0
    for name, (_, offset, size) in sections(data).items():
        if name.startswith(".nv.info"):
            for pos, _, attr in records(data, offset, size):
                if attr in (0x37, 0x36, 0x1C):  # CUDA_API_VERSION, SW_WAR, EXIT_INSTR_OFFSETS
                    data[pos + 1] = 0x7E  # not an EIATTR code of CUDA 13.0 (table ends at 0x60)
                    patched += 1
    assert patched
    path = tmp_path / "unknown_attrs.cubin"
    path.write_bytes(bytes(data))
    run = occlint(str(path), "--format", "json")
    assert run.code == 0 and not run.err, run.err
    truth = ptxas_truth(CUBIN)
    kernels = json.loads(run.out)["kernels"]
    assert {k["name"] for k in kernels} == set(truth)
    for k in kernels:
        assert k["resources"]["registers"] == truth[k["name"]]["registers"]
        assert k["resources"]["local_bytes"] == truth[k["name"]]["stack_frame"]


@pytest.mark.parametrize("method", ["lz4", "zstd"])
def test_crafted_compressed_entry_reads_like_the_cubin(method, tmp_path):
    """Positive control for the hand-built fatbins above: a correct header reads fine."""
    cubin = CUBIN.read_bytes()
    if method == "lz4":
        import lz4.block

        payload, flag = lz4.block.compress(cubin, store_size=False), FLAG_LZ4
    else:
        import zstandard

        payload, flag = zstandard.ZstdCompressor().compress(cubin), FLAG_ZSTD
    path = tmp_path / f"{method}.fatbin"
    path.write_bytes(fatbin((2, 90, FLAG_64BIT_LINUX | flag, payload, len(cubin))))
    run = occlint(str(path), "--format", "json")
    assert run.code == 0 and not run.err, run.err
    truth = ptxas_truth(CUBIN)
    kernels = json.loads(run.out)["kernels"]
    assert {k["name"]: k["resources"]["registers"] for k in kernels} == \
        {name: t["registers"] for name, t in truth.items()}
