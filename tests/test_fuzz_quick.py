"""Robustness: a short deterministic pass of the mutation fuzzer (benchmarks/fuzz.py) over
every reader family, and regression tests for what the long campaign found
(docs/robustness.md). Hostile inputs are built here, byte by byte, so that each test shows
what it guards against."""

from __future__ import annotations

import bz2
import json
import struct
import time
import tracemalloc
import zlib

import pytest

from benchmarks import fuzz
from benchmarks.fuzz import (
    BUNDLE_MAGIC,
    Bundle,
    Ccob,
    Concat,
    Fat,
    FatItem,
    Host,
    Raw,
    Zip,
    ZipItem,
)
from occlint.model.kernel import InputError, one_line
from occlint.readers.loader import ReadOptions, read_bytes, read_path
from tests.conftest import REPO

GAMMA = (REPO / "fixtures/amd/co/gamma.gfx1100.hsaco").read_bytes()
GAMMA_90A = (REPO / "fixtures/amd/co/gamma.gfx90a.hsaco").read_bytes()
CUBIN = (REPO / "fixtures/nvidia/cubin/mandelbrot.sm_90.cubin").read_bytes()
AMD_ID = "hipv4-amdgcn-amd-amdhsa--gfx1100"


def _read(data: bytes, **options):
    result = read_bytes(data, "input", ReadOptions(**options))
    for error in result.errors:  # the invariant every test below relies on
        assert "\n" not in error.line() and "\r" not in error.line()
    return result


def _messages(result) -> str:
    return " | ".join(e.message for e in result.errors)


def _timed(data: bytes, **options):
    start = time.process_time()
    result = _read(data, **options)
    return result, time.process_time() - start


# ---------------------------------------------------------------------------------------------
# The deterministic fuzz pass
# ---------------------------------------------------------------------------------------------
QUICK = {"amd-co": 400, "bundle": 250, "ccob": 200, "amd-host": 250, "cubin": 400,
         "fatbin": 120, "nv-host": 120, "archive": 150, "sidecar": 250}


@pytest.fixture(scope="module")
def fuzz_ctx():
    return fuzz.Ctx()


@pytest.mark.parametrize("family", fuzz.FAMILIES)
def test_quick_fuzz_pass(family, fuzz_ctx, tmp_path):
    """No exception escapes, every error is one line, every input is fast; and the
    mutations are meaningful: some inputs still give kernels, others errors."""
    count = QUICK[family]
    with fuzz.fuzz_caps():
        stats, failures, done = fuzz.run_range(
            family, 2024, 0, count, ctx=fuzz_ctx, workdir=tmp_path, time_limit=10.0,
            memory_limit=1024, analyse_every=10, via="mixed", crashers=None)
    assert failures == [], json.dumps(failures, indent=1, default=str)[:4000]
    assert done == count and stats.count == count and stats.generator_errors == 0
    assert stats.kernels > count // 10 and stats.errors > 0, stats


def test_inputs_are_reproducible(fuzz_ctx):
    """(family, seed, index) alone determines an input, whatever ran before it."""
    first = [fuzz.make_input(fuzz_ctx, "ccob", 7, i) for i in (5, 900, 33)]
    again = [fuzz.make_input(fuzz.Ctx(), "ccob", 7, i) for i in (5, 900, 33)]
    assert first == again
    assert len({i.data for i in first}) == 3


def test_fuzz_oracle_catches_violations(fuzz_ctx, tmp_path, monkeypatch):
    """The pass above can fail: an exception or a two-line error is reported."""
    from occlint.readers.walker import ContainerWalker

    def broken(self, span, entry, depth):
        raise KeyError("injected")

    monkeypatch.setattr(ContainerWalker, "read", broken)
    with fuzz.fuzz_caps():
            stats, failures, _ = fuzz.run_range(
            "cubin", 1, 0, 3, ctx=fuzz_ctx, workdir=tmp_path, time_limit=10.0,
            memory_limit=1024, analyse_every=0, via="bytes", crashers=tmp_path / "crashers")
    assert stats.failures == 3 and {f["kind"] for f in failures} == {"exception"}
    assert "KeyError" in failures[0]["detail"]
    assert (tmp_path / "crashers" / "cubin-1-0.bin").exists()

    def two_lines(self, span, entry, depth):
        self.result.errors.append(_Unsafe("x", "line\nline"))

    monkeypatch.setattr(ContainerWalker, "read", two_lines)
    _, failures, _ = fuzz.run_range("cubin", 1, 0, 1, ctx=fuzz_ctx, workdir=tmp_path,
                                    time_limit=10.0, memory_limit=1024, analyse_every=0,
                                    via="bytes")
    assert [f["kind"] for f in failures] == ["multiline"]


class _Unsafe:
    """An error that skips InputError's escaping (to test the fuzzer's oracle)."""

    def __init__(self, file, message):
        self.file, self.message, self.entry = file, message, None

    def line(self):
        return f"{self.file}: {self.message}"


# ---------------------------------------------------------------------------------------------
# Exceptions that escaped (found by the fuzzer)
# ---------------------------------------------------------------------------------------------
def _zip_member(name: str, method: int, stream: bytes, size: int, *, flags: int = 0x800,
                version: int = 20) -> bytes:
    """A one-member zip written by hand (the stream and sizes are taken as given)."""
    raw = name.encode()
    crc = 0
    local = struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, flags, method, 0, 0x21, crc,
                        len(stream), size, len(raw), 0) + raw + stream
    central = struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, version, flags, method,
                          0, 0x21, crc, len(stream), size, len(raw), 0, 0, 0, 0, 0, 0) + raw
    return local + central + struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 1, 1,
                                         len(central), len(local), 0)


@pytest.mark.parametrize("name,data,needle", [
    # zipfile raises zlib.error (not OSError) for a corrupted deflate stream
    ("deflate", _zip_member("k.hsaco", 8, b"\x7fELF\xff\xff\xff\xff" * 8, 4096),
     "cannot extract"),
    # ... lzma.LZMAError for a corrupted LZMA member (LZMA members are no longer read)
    ("lzma", _zip_member("k.hsaco", 14, b"\x09\x14\x05\x00" + bytes(40), 4096),
     "compressed with LZMA"),
    # ... RuntimeError for an encrypted member ("password required")
    ("encrypted", _zip_member("k.hsaco", 0, GAMMA, len(GAMMA), flags=0x801),
     "member is encrypted"),
    # ... NotImplementedError when opening an archive that needs zip version 6.7
    ("version", _zip_member("k.hsaco", 0, GAMMA, len(GAMMA), version=67),
     "not a valid zip archive"),
], ids=lambda v: v if isinstance(v, str) and len(v) < 12 else "")
def test_archive_errors_are_format_errors(name, data, needle):
    result = _read(data)
    assert needle in _messages(result) and not result.kernels


def test_archive_member_with_an_empty_name():
    """ZipInfo.is_dir() indexes the name: IndexError on an empty one."""
    good = Zip((ZipItem("", Raw(GAMMA)), ZipItem("g.hsaco", Raw(GAMMA)))).render()
    result = _read(good)
    assert [k.file for k in result.kernels] == ["input!/g.hsaco"]


def test_member_claiming_a_huge_compressed_size(tmp_path):
    """The wheel fast path read ``compress_size`` bytes at once: a directory claiming 4 GiB
    allocated 4 GiB up front (MemoryError under the campaign's RLIMIT_AS; found by the
    fuzzer in the re-run after the ISA-L path was added)."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    data = bytearray(_zip_member("k.hsaco", 8, c.compress(GAMMA) + c.flush(), len(GAMMA)))
    central = data.rindex(b"PK\x01\x02")
    data[central + 20:central + 24] = struct.pack("<I", 0xFFFFFFF0)
    path = tmp_path / "huge.whl"
    path.write_bytes(data)
    tracemalloc.start()
    try:
        result = read_path(path, "huge.whl", ReadOptions())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "member is truncated" in _messages(result) and peak < 16 << 20, peak


def test_host_elf_offset_beyond_2_63():
    """pyelftools raised OverflowError seeking to a section table beyond 2**63."""
    data = bytearray(Host(((".hip_fatbin", Raw(b"x" * 64), 1),)).render())
    struct.pack_into("<Q", data, 40, 1 << 63)  # e_shoff
    assert "lies beyond the end" in _messages(_read(bytes(data)))


def test_deeply_nested_triton_sidecar(tmp_path):
    """json.loads raised RecursionError on a sidecar of 100 000 nested lists."""
    (tmp_path / "k.hsaco").write_bytes(GAMMA)
    (tmp_path / "k.json").write_text("[" * 100_000 + "]" * 100_000)
    result = read_path(tmp_path / "k.hsaco", "k.hsaco", ReadOptions())
    assert len(result.kernels) == 1 and result.kernels[0].launch_hint is None


# ---------------------------------------------------------------------------------------------
# One line per error: names from the binary are untrusted
# ---------------------------------------------------------------------------------------------
def test_input_error_escapes_control_characters():
    error = InputError("a\nb.whl!/x\udcff", "bad \x1b[31m\u2028 ü", "id\t\r")
    assert error.line() == "a\\nb.whl!/x\\udcff[id\\t\\r]: bad \\x1b[31m\\u2028 ü"
    assert one_line("plain ünïcödé text") == "plain ünïcödé text"


@pytest.mark.parametrize("data", [
    # a zip member named with a newline (the fuzzer's first multi-line error)
    Zip((ZipItem("a\nocclint: error: fake.hsaco", Raw(GAMMA[:300])),)).render(),
    # a bundled object whose section name (an entry id) holds an escape sequence
    Host((("__CLANG_OFFLOAD_BUNDLE__hipv4-\x1b[2J\n", Raw(b"junk"), 1),)).render(),
    # a bundle entry id with a line separator
    Bundle((("hipv4-amdgcn-amd-amdhsa--gfx1100\x1b[2J\rfake", Raw(b"junk")),)).render(),
])
def test_untrusted_names_stay_on_one_line(data):
    result = _read(data)
    assert result.errors
    for error in result.errors:
        assert all(c.isprintable() for c in error.line()), error.line()


def test_cli_corrupted_next_to_good_and_only_bad(occlint, tmp_path):
    bad = tmp_path / "bad\nname.whl"
    bad.write_bytes(Zip((ZipItem("lib/x\n.so", Raw(GAMMA[:500])),)).render())
    good = tmp_path / "good.hsaco"
    good.write_bytes(GAMMA)
    run = occlint(str(bad), str(good), "--isolated", "--format", "json")
    assert run.code == 1, run.err  # the good file analysed; the bad one is an IO101 finding
    lines = run.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("occlint: error: ") and "Traceback" \
        not in run.err
    assert "bad\\nname.whl!/lib/x\\n.so" in lines[0]
    assert [k["file"] for k in json.loads(run.out)["kernels"]] == [str(good)]
    only_bad = occlint(str(bad), "--isolated")
    assert only_bad.code == 2 and only_bad.err == run.err and "Traceback" not in only_bad.err
    crasher = tmp_path / "crasher.hsaco"  # one of the mutated inputs, written out
    crasher.write_bytes(GAMMA[:64] + b"\xff" * 32 + GAMMA[96:1000])
    run = occlint(str(crasher), "--isolated")
    assert run.code == 2 and len(run.err.splitlines()) == 1 and "Traceback" not in run.err


# ---------------------------------------------------------------------------------------------
# Bounded time and memory
# ---------------------------------------------------------------------------------------------
def _overlapping_bundle(count: int, payload: bytes) -> bytes:
    """``count`` entries that all point at one payload."""
    ids = [f"{AMD_ID}-{i}".encode() for i in range(count)]
    header = 32 + sum(24 + len(i) for i in ids)
    out = BUNDLE_MAGIC + struct.pack("<Q", count)
    for i in ids:
        out += struct.pack("<QQQ", header, len(payload), len(i)) + i
    return out + payload


def test_overlapping_bundle_entries_are_rejected():
    """Entries sharing bytes multiplied the work: 64 x 64 nested = 4096 kernels from
    12 KB; 4096 entries per level, 4 levels deep: 2**48."""
    flat = _read(_overlapping_bundle(3, GAMMA))
    assert "overlap" in _messages(flat) and not flat.kernels
    nested, seconds = _timed(_overlapping_bundle(64, _overlapping_bundle(64, GAMMA)))
    assert not nested.kernels and "overlap" in _messages(nested) and seconds < 1
    # back-to-back, non-overlapping entries (every real bundle) are still read
    good = Bundle(((AMD_ID, Raw(GAMMA)), ("hipv4-amdgcn-amd-amdhsa--gfx90a", Raw(GAMMA_90A))))
    assert len(_read(good.render()).kernels) == 2


def test_overlapping_host_sections_are_rejected():
    data = bytearray(Host(((".hip_fatbin", Bundle(((AMD_ID, Raw(GAMMA)),)), 1),
                           (".hip_fatbin", Raw(bytes(64)), 1))).render())
    # point the second section at the first one's bytes (as 65535 sections could)
    shoff = struct.unpack_from("<Q", data, 40)[0]
    first, second = shoff + 64, shoff + 128
    data[second + 24:second + 40] = data[first + 24:first + 40]
    result = _read(bytes(data))
    assert "overlap" in _messages(result) and not result.kernels


def test_zip_members_sharing_one_stream_are_rejected():
    """Central directory entries that all point at one local header: a zip bomb."""
    one = Zip((ZipItem("k.hsaco", Raw(GAMMA)),)).render()
    cd = one.index(b"PK\x01\x02")
    eocd = one.index(b"PK\x05\x06")
    entry = one[cd:eocd]
    entries = b"".join(entry.replace(b"k.hsaco", f"{i}.hsaco".encode()) for i in range(10))
    data = one[:cd] + entries + struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 10, 10,
                                            len(entries), cd, 0)
    result = _read(data)
    assert "overlap" in _messages(result) and not result.kernels


def _zstd_zeros(size: int, head: bytes = BUNDLE_MAGIC) -> bytes:
    import zstandard

    c = zstandard.ZstdCompressor(level=1).compressobj(size=size)
    return c.compress(head) + c.compress(bytes(size - len(head))) + c.flush()


def test_decompression_budget_is_per_input():
    """Each stream was capped, but ten 6 MiB streams under an 8 MiB cap all decompressed:
    one input may now decompress max(cap, 64 x its size) in all."""
    size, cap = 6 << 20, 8 << 20
    ccob = Ccob(None, 2, 1, declared=size, stream=_zstd_zeros(size), digest=0)
    result = _read(Concat((ccob,) * 10).render(), max_decompressed=cap)
    over = [e for e in result.errors if "limit" in e.message]
    assert len(over) == 9, _messages(result)
    fat = Fat(tuple(FatItem(2, 90, 0x11, Raw(b""), "zstd", b"", size,
                            _zstd_zeros(size, b"\x7fELF")) for _ in range(10)))
    result = _read(fat.render(), max_decompressed=cap)
    assert len([e for e in result.errors if "limit" in e.message]) == 9, _messages(result)


def test_zip_members_share_the_budget():
    size = 6 << 20
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    stream = c.compress(b"\x7fELF" + bytes(size - 4)) + c.flush()
    members = tuple(ZipItem(f"k{i}.so", Raw(b""), 8, stream, size, 0) for i in range(6))
    result = _read(Zip(members).render(), max_decompressed=8 << 20)
    assert sum("zip bomb" in e.message for e in result.errors) >= 4, _messages(result)



def test_bzip2_members_are_not_decompressed():
    """zipfile inflates bzip2 and LZMA without an output limit: 800 bytes of bzip2 took
    2 GB of memory at the first read of four bytes."""
    bzip = bz2.compress(b"\x7fELF" + bytes((64 << 20) - 4))
    tracemalloc.start()
    try:
        result = _read(Zip((ZipItem("b.so", Raw(b""), 12, bzip, 1000, 0),)).render())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "compressed with bzip2" in _messages(result) and peak < 16 << 20


def test_errors_per_input_are_capped():
    """A section of stray magics gave one error each: 250 000 lines (and as many objects)
    for 1 MB."""
    data = Host(((".nv_fatbin", Raw(b"\x50\xed\x55\xba" * 5000), 1),)).render()
    result = _read(data)
    assert len(result.errors) == 1001
    assert "more than 1000 errors" in result.errors[-1].message


@pytest.mark.parametrize("name", [".data", ".hip_fatbin"])
@pytest.mark.parametrize("section", [b"CCOB" * (1 << 16),
                                     (b"CCOB\x01\x00\x00\x00\x10\x00\x00\x00" + bytes(8))
                                     * 12_000])
def test_scanning_for_magics_is_linear(name, section, monkeypatch):
    """.data full of 'CCOB': each candidate searched the rest of the section for the other
    magic (23 s for 1 MB: quadratic), and a CCOB v1 header (no total size) copied the rest
    of its section. Bytes searched and copied now stay proportional to the section."""
    from occlint.readers.span import Span

    work = {"searched": 0, "copied": 0}
    find, copy = Span.find, Span.bytes

    def counting_find(self, needle, offset=0):
        pos = find(self, needle, offset)
        work["searched"] += (pos if pos >= 0 else len(self)) - offset
        return pos

    def counting_bytes(self, offset, size, what="data"):
        work["copied"] += size
        return copy(self, offset, size, what)

    monkeypatch.setattr(Span, "find", counting_find)
    monkeypatch.setattr(Span, "bytes", counting_bytes)
    _read(Host(((name, Raw(section), 1),)).render())
    assert work["searched"] < 8 * len(section) and work["copied"] < 8 * len(section), work


def test_a_sources_casts_are_read_in_linear_time(monkeypatch):
    """Each cast subscripted in place had its operand's parenthesis matched by a scan to the
    body's end: 3,000 unclosed casts took 11 s. The scan now stops CAST_SPAN characters on:
    what is searched stays proportional to the body."""
    from occlint.readers.source import access
    from occlint.readers.source.facts import kernel_facts

    searched = [0]
    pattern = access._BRACKETS["("]

    class Counting:
        def finditer(self, text, pos, endpos):
            searched[0] += min(endpos, len(text)) - pos
            return pattern.finditer(text, pos, endpos)

    monkeypatch.setitem(access._BRACKETS, "(", Counting())
    body = "reinterpret_cast<const float*>(" * 3000 + "a)[i]"
    kernel_facts("(const float* a, float* c)", body, "per-element", {})
    assert 0 < searched[0] <= 3000 * access.CAST_SPAN < len(body) ** 2 / 100


def test_section_names_are_read_in_linear_time():
    """pyelftools read each section name up to the next NUL anywhere in the file: 4000
    sections naming one 1 MB string took 18 s."""
    names = b"\0" + b"A" * 1_000_000 + b"\0.hip_fatbin\0"
    count = 4000
    sh_off = 64 + len(names) + (-(64 + len(names)) % 8)
    out = bytearray(sh_off) + bytes(64)
    out[64:64 + len(names)] = names
    for _ in range(count):
        out += struct.pack("<IIQQQQIIQQ", 1, 1, 2, 0, 64, 8, 0, 0, 1, 0)
    out += struct.pack("<IIQQQQIIQQ", 0, 3, 0, 0, 64, len(names), 0, 0, 1, 0)
    out[:64] = b"\x7fELF\x02\x01\x01" + bytes(9) + struct.pack(
        "<HHIQQQIHHHHHH", 1, 62, 1, 0, 0, sh_off, 0, 64, 0, 0, 64, count + 2, count + 1)
    result, seconds = _timed(bytes(out))
    assert seconds < 2 and result.errors


def test_looks_like_gpu_binary_reads_section_names_itself(tmp_path):
    from occlint.readers.loader import looks_like_gpu_binary

    lib = tmp_path / "lib.so"
    lib.write_bytes(Host(((".hip_fatbin", Bundle(((AMD_ID, Raw(GAMMA)),)), 1),)).render())
    other = tmp_path / "other.so"
    other.write_bytes(Host(((".text", Raw(b"\xc3" * 16), 1),)).render())
    assert looks_like_gpu_binary(lib) and not looks_like_gpu_binary(other)


def _elf64(machine: int, flags: int, osabi: int, abi: int, e_type: int, sections=(),
           notes: bytes = b"", note_headers: int = 0) -> bytes:
    """A little-endian ELF64: sections (name, type, data, flags, info, link, entsize) and
    ``note_headers`` PT_NOTE program headers that all point at ``notes``."""
    names = bytearray(b"\0")
    name_offs = []
    for s in sections:
        name_offs.append(len(names))
        names += s[0].encode() + b"\0"
    shstr = len(names)
    names += b".shstrtab\0"
    out = bytearray(64 + 56 * note_headers)
    placed = []
    for s in sections:
        out += bytes(-len(out) % 8)
        placed.append((len(out), len(s[2])))
        out += s[2]
    notes_at = len(out)
    out += notes + bytes(-(len(out) + len(notes)) % 8)
    str_at = len(out)
    out += names + bytes(-(len(out) + len(names)) % 8)
    sh_at = len(out)
    out += bytes(64)
    for s, (off, size), name in zip(sections, placed, name_offs, strict=True):
        out += struct.pack("<IIQQQQIIQQ", name, s[1], s[3], 0, off, size, s[5], s[4], 8, s[6])
    out += struct.pack("<IIQQQQIIQQ", shstr, 3, 0, 0, str_at, len(names), 0, 0, 1, 0)
    for i in range(note_headers):
        struct.pack_into("<IIQQQQQQ", out, 64 + 56 * i, 4, 4, notes_at, 0, 0, len(notes),
                         len(notes), 4)
    out[:64] = b"\x7fELF\x02\x01\x01" + bytes([osabi, abi]) + bytes(7) + struct.pack(
        "<HHIQQQIHHHHHH", e_type, machine, 1, 0, 64 if note_headers else 0, sh_at, flags, 64,
        56, note_headers, 64, len(sections) + 2, len(sections) + 1)
    return bytes(out)


def test_note_segments_pointing_at_one_region():
    """1000 PT_NOTE headers over 10 000 empty notes took 15 s (AMDGPU, no metadata); the
    bound on notes is above a linked code object's one metadata note per kernel."""
    from occlint.readers.amd.code_object import MAX_NOTES

    data = _elf64(224, 0x41 | 0x300, 64, 2, 3, notes=bytes(12) * 10_000, note_headers=1000)
    result, seconds = _timed(data)
    assert f"more than {MAX_NOTES} notes" in _messages(result) and seconds < 1


def _cubin(kernels: int, records: int, callgraph: bytes = b"", name_len: int = 1) -> bytes:
    """An sm_90 cubin whose ``kernels`` entry symbols share one .text / .nv.info."""
    strtab = b"\0" + b"k" * name_len + b"\0"
    info = struct.pack("<BBH", 3, 0x1B, 32) * records  # EIATTR_MAXREG_COUNT 32
    symbols = bytes(24) + b"".join(
        struct.pack("<IBBHQQ", 1 + i % name_len, 0x12, 0x10, 3, 0, 16) for i in range(kernels))
    sections = [(".strtab", 3, strtab, 0, 0, 0, 0), (".symtab", 2, symbols, 0, 1, 1, 24),
                (".text.k", 1, bytes(16), 6, 0, 0, 0),
                (".nv.info.k", 0x70000000, info, 0x40, 3, 2, 0)]
    if callgraph:
        sections.append((".nv.callgraph", 0x70000001, callgraph, 0, 0, 2, 8))
    return _elf64(190, 90 << 8, 0x33, 8, 2, sections)


def test_kernels_sharing_an_info_section():
    """1000 kernels x 10 000 records: each kernel parsed the section again (6 s)."""
    result, seconds = _timed(_cubin(1000, 10_000))
    assert len(result.kernels) == 1000 and seconds < 2
    assert {k.resources.max_reg_count for k in result.kernels} == {32}


def test_call_graph_walk_is_shared_between_kernels():
    """1000 kernels above a 100 000-edge chain: one walk each took 110 s."""
    chain = b"".join(struct.pack("<II", 100_000 + i, 100_001 + i) for i in range(100_000))
    calls = b"".join(struct.pack("<II", i, 100_000) for i in range(1, 1001))
    result, seconds = _timed(_cubin(1000, 1, calls + chain))
    assert len(result.kernels) == 1000 and seconds < 3
    assert not any(k.resources.uses_recursion for k in result.kernels)
    # a cycle at the end of the chain is still found from every kernel
    cycle = struct.pack("<II", 200_000, 100_000)
    result = _read(_cubin(50, 1, calls[:50 * 8] + chain + cycle))
    assert [k.resources.uses_recursion for k in result.kernels] == [True] * 50


@pytest.mark.parametrize("edges,expected", [
    ([(1, 2), (2, 3)], {1: False, 2: False, 3: False}),
    ([(1, 2), (2, 1)], {1: True, 2: True}),
    ([(1, 1)], {1: True}),
    ([(1, 2), (2, 3), (3, 2), (4, 1), (5, 6)], {1: True, 2: True, 3: True, 4: True,
                                                 5: False, 6: False}),
])
def test_recursion_detection(edges, expected):
    graph = b"".join(struct.pack("<II", a, b) for a, b in edges)
    kernels = max(expected)
    result = _read(_cubin(kernels, 1, graph))
    by_index = {i + 1: k.resources.uses_recursion for i, k in enumerate(result.kernels)}
    assert {i: by_index[i] for i in expected} == expected


def test_ptx_entries_against_elf_entries():
    """30 000 PTX x 30 000 ELF entries: every PTX entry was compared with every ELF entry
    (64 s for 4 MB)."""
    body = bytearray()
    for kind, sm in [(2, 75)] * 30_000 + [(1, 90)] * 30_000:
        body += struct.pack("<HHIQIIHHIIIQQQ", kind, 0x101, 64, 8, 0, 0, 8, 1, sm, 0, 0, 0x11,
                            0, 0) + bytes(8)
    data = struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + bytes(body)
    result, seconds = _timed(data)
    assert len(result.artifacts) == 30_000 and seconds < 5


@pytest.mark.parametrize("seed", range(40))
def test_ptx_policy_matches_the_definition(seed):
    """The O(1)-per-entry PTX decision equals the module docstring's rule, entry by entry."""
    import random

    from occlint.readers.nvidia import _consumers, _ptx_jits_for, _PtxPolicy, _runs_on
    from occlint.readers.nvidia.fatbin import FatbinEntry

    rng = random.Random(seed)

    def entry(kind):
        sm = rng.choice([50, 52, 60, 70, 75, 80, 86, 89, 90, 100, 103, 120, 121])
        flags = rng.choice([0, 0x100000, 0x200000])
        return FatbinEntry(0, kind, 64, 0, 0, sm // 10, sm % 10, sm, flags, 0)

    elf = [entry(2) for _ in range(rng.randrange(0, 5))]
    options = ReadOptions(prefer=tuple(rng.sample(["sm_75", "sm_80", "sm_90", "sm_100",
                                                   "sm_120"], rng.randrange(0, 3))),
                          targets=tuple(rng.sample(["sm_90", "sm_80"], rng.randrange(0, 2))))
    policy = _PtxPolicy(elf, options)
    for _ in range(20):
        ptx = entry(1)
        consumers = _consumers(options)
        if consumers:
            want = any(_ptx_jits_for(ptx.sm, ptx.variant, c)
                       and not any(_runs_on(e.arch, c) for e in elf) for c in consumers)
        else:
            want = not any(e.sm // 10 == ptx.sm // 10 and e.sm >= ptx.sm for e in elf)
        assert policy.reported(ptx) == want


def test_symbol_and_section_names_stay_proportional():
    """200 000 symbols naming one 4 KB string took 400 MB; 20 000 sections naming one
    100 KB string took 1.9 GB."""
    tracemalloc.start()
    try:
        result = _read(_cubin(200_000, 1, name_len=4000))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "symbol names add up" in _messages(result) and peak < 100 << 20
    names = b"\0" + b"s" * 100_000 + b"\0"
    sections = [(".x", 1, b"", 0, 0, 0, 0)] * 20_000
    data = bytearray(_elf64(190, 90 << 8, 0x33, 8, 2, sections))
    shoff, shstrndx = struct.unpack_from("<Q", data, 40)[0], 20_001
    str_at = len(data)
    data += names
    for i in range(1, 20_001):
        struct.pack_into("<I", data, shoff + 64 * i, 1)
    struct.pack_into("<QQ", data, shoff + 64 * shstrndx + 24, str_at, len(names))
    tracemalloc.start()
    try:
        result = _read(bytes(data))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "section names add up" in _messages(result) and peak < 100 << 20


def test_nested_containers_stay_bounded(tmp_path):
    """fatbin in host ELF in zip, bundle in CCOB in bundle: read, within the depth limit."""
    fat = Fat((FatItem(2, 90, 0x11, Raw(CUBIN), "lz4"),))
    inner = Bundle(((AMD_ID, Raw(GAMMA)),))
    archive = Zip((ZipItem("lib/libnv.so", Host(((".nv_fatbin", fat, 1),))),
                   ZipItem("lib/libamd.so", Host(((".hip_fatbin", Ccob(Bundle(
                       ((AMD_ID, Ccob(inner, 3, 0)),))), 1),))))).render()
    result = _read(archive)
    assert sorted(k.vendor for k in result.kernels) == ["amd", "nvidia"], _messages(result)
    deep = Raw(GAMMA)
    for _ in range(6):
        deep = Bundle(((AMD_ID, Ccob(Bundle(((AMD_ID, deep),)))),))
    result = _read(deep.render())
    assert "nested too deeply" in _messages(result) and not result.kernels



def test_campaign_runs_workers_with_scaled_caps(tmp_path):
    """The command itself: worker processes, the per-family JSON, the scaled caps."""
    out = tmp_path / "fuzz.json"
    code = fuzz.main(["--family", "cubin", "--count", "60", "--seed", "3", "--jobs", "2",
                      "--chunk", "20", "--crashers", "", "--json", str(out)])
    doc = json.loads(out.read_text())
    assert code == 0 and doc["scaled_caps"] is True
    assert doc["families"]["cubin"]["inputs"] == 60 and doc["families"]["cubin"]["failures"] == 0
