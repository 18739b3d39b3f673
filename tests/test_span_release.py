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
