"""Searching a mapped library window by window, each window's pages released once searched
(occlint.readers.walker._find_releasing): the same offsets as one search, and released
pages are read again from the file."""

from __future__ import annotations

import mmap

import pytest

from occlint.readers import walker
from occlint.readers.span import Span

MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
START = 100  # where the searched span starts


@pytest.fixture
def mapped(tmp_path):
    page = mmap.PAGESIZE
    data = bytearray(b"\xab" * (8 * page))
    # one magic straddling the boundary of two windows, one inside a window, one at the end
    places = [START + 2 * page - 5, START + 3 * page + 17, len(data) - len(MAGIC)]
    for at in places:
        data[at:at + len(MAGIC)] = MAGIC
    path = tmp_path / "lib.so"
    path.write_bytes(bytes(data))
    with path.open("rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        yield mm, bytes(data), places


def test_windowed_search_finds_what_one_search_finds(mapped, monkeypatch):
    mm, data, places = mapped
    monkeypatch.setattr(walker, "SEARCH_WINDOW", 2 * mmap.PAGESIZE)
    span = Span(mm, START, len(mm))  # a section that does not start on a page
    found, pos = [], 0
    while (at := walker._find_releasing(span, MAGIC, pos)) >= 0:
        found.append(at + span.start)
        pos = at + 1
    assert found == places
    assert bytes(mm[:]) == data  # released pages read again give the file's bytes


def test_release_of_a_buffer_in_memory_changes_nothing():
    data = bytearray(b"x" * 3 * mmap.PAGESIZE)
    Span(data).release(0, len(data))
    assert data == b"x" * 3 * mmap.PAGESIZE


def test_bundle_starts_are_the_first_of_either_magic():
    """walker._BundleStarts searches the compressed magic only up to the next bundle, each
    stretch once: it gives what a search of both magics from each position gives."""
    import random

    rnd = random.Random(7)
    pieces = (walker.BUNDLE_MAGIC, walker.CCOB_MAGIC, walker.BUNDLE_MAGIC[:7], b"CCO")
    for _ in range(300):
        data = b"".join(bytes(rnd.randint(0, 70)) + rnd.choice(pieces)
                        for _ in range(rnd.randint(0, 10))) + bytes(rnd.randint(0, 30))
        starts, pos = walker._BundleStarts(Span(data)), 0
        while pos < len(data):
            found = [p for p in (data.find(walker.BUNDLE_MAGIC, pos),
                                 data.find(walker.CCOB_MAGIC, pos)) if p >= 0]
            assert starts.first(pos) == (min(found) if found else None)
            if not found:
                break
            pos = min(found) + rnd.choice((1, len(walker.BUNDLE_MAGIC), rnd.randint(1, 150)))
