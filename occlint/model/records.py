"""Kernel records held as JSON text, in memory or in files, in document order.

A run's ``kernels`` can be hundreds of megabytes of JSON. Each record is encoded once, where
it is made (in a worker process, see occlint.pipeline.run), exactly as ``--format json`` writes it
inside the document (:func:`encode`, at depth 2), and stays text:

* a :class:`Sink` takes the texts of one input and gives a :class:`Texts` reference: the
  bytes themselves (in the main process), or where the worker wrote them in its own file
  (in a worker: nothing large crosses the pipe, and no process holds them all);
* :class:`KernelRecords` lists the references of a run; past ``SPOOL_BYTES`` in memory it
  moves them to a file of its own. The JSON reporter copies the texts to the output
  (:meth:`KernelRecords.write`); iterating decodes them for the other reporters.

The files live in a temporary directory that the KernelRecords owns and removes when it is
closed or collected.
"""

from __future__ import annotations

import bisect
import json
import os
import shutil
import weakref
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

DEPTH = 2
SEPARATOR = b",\n    "  # between two records of the "kernels" list, at DEPTH


def encode(record: dict[str, Any]) -> bytes:
    """A kernel record as the document's JSON text holds it."""
    from occlint.model.jsonenc import encode as encode_json

    return encode_json(record, DEPTH).encode("utf-8")


@dataclass(frozen=True, slots=True)
class Texts:
    """The texts of consecutive records, SEPARATOR between them: ``data`` in memory, or at
    ``start`` of the file ``path``."""

    lengths: tuple[int, ...]
    data: bytes | None = None
    path: str | None = None
    start: int = 0

    @property
    def size(self) -> int:
        return sum(self.lengths) + len(SEPARATOR) * max(len(self.lengths) - 1, 0)

    def offsets(self) -> list[int]:
        """Where each record starts (in ``data``, or in the file)."""
        out, pos = [], 0 if self.data is not None else self.start
        for length in self.lengths:
            out.append(pos)
            pos += length + len(SEPARATOR)
        return out


class Sink:
    """Takes the texts of one input at a time: keeps them (``path`` None) or appends them
    to the file ``path`` (``flush`` before another process reads them)."""

    def __init__(self, path: str | None = None):
        self.path = path
        self._file: BinaryIO | None = None
        self._pos = 0

    def add(self, texts: Iterable[bytes]) -> Texts:
        if self.path is None:
            items = list(texts)
            return Texts(tuple(map(len, items)), data=SEPARATOR.join(items))
        if self._file is None:
            self._file = open(self.path, "ab")  # noqa: SIM115 (open while the run goes on)
            self._pos = self._file.tell()
        lengths: list[int] = []
        start = self._pos
        for text in texts:  # written one by one: never all of one input's texts in memory
            if lengths or start:
                # a SEPARATOR before every record but the file's first: one input's texts
                # and the next's, where they follow in the document, are copied as one
                self._file.write(SEPARATOR)
                if not lengths:
                    start += len(SEPARATOR)
            self._file.write(text)
            lengths.append(len(text))
        texts_ref = Texts(tuple(lengths), path=self.path, start=start)
        if lengths:
            self._pos = start + texts_ref.size
        return texts_ref

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class KernelRecords:
    """The ``kernels`` of a document, as JSON texts (see the module docstring). A record can
    be replaced (the baseline drops suppressed findings)."""

    SPOOL_BYTES = 32 << 20

    def __init__(self, texts: list[bytes] | None = None):
        self._chunks: list[Texts] = []
        self._firsts: list[int] = []  # index of each chunk's first record
        self._count = 0
        self._in_memory = 0
        self._offsets: dict[int, list[int]] = {}  # chunk -> its records' offsets (as read)
        self._replaced: dict[int, bytes] = {}
        self._readers: dict[str, BinaryIO] = {}
        self._directory: str | None = None
        self._spool: Sink | None = None
        self._cleanup: weakref.finalize | None = None
        if texts:
            self.add(Sink().add(texts))

    # -- building ---------------------------------------------------------------------------
    def directory(self) -> str:
        """A temporary directory for files of records (this object removes it)."""
        if self._directory is None:
            import tempfile

            self._directory = tempfile.mkdtemp(prefix="occlint-")
            self._cleanup = weakref.finalize(self, _remove, self._directory, self._readers)
        return self._directory

    def add(self, texts: Texts) -> None:
        if not texts.lengths:
            return
        if texts.data is not None:
            self._in_memory += len(texts.data)
            if self._in_memory > self.SPOOL_BYTES:
                texts = self._to_file(texts)
        self._chunks.append(texts)
        self._firsts.append(self._count)
        self._count += len(texts.lengths)

    def _to_file(self, texts: Texts) -> Texts:
        if self._spool is None:
            self._spool = Sink(os.path.join(self.directory(), "records"))
            for i, chunk in enumerate(self._chunks):  # what is in memory so far, too
                if chunk.data is not None:
                    self._chunks[i] = self._spool_chunk(chunk)
            self._in_memory = 0
        return self._spool_chunk(texts)

    def _spool_chunk(self, chunk: Texts) -> Texts:
        assert self._spool is not None and chunk.data is not None
        data = chunk.data
        pieces = (data[o:o + n] for o, n in zip(chunk.offsets(), chunk.lengths, strict=True))
        out = self._spool.add(pieces)
        self._spool.flush()
        return out

    # -- reading ----------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._count

    def _locate(self, index: int) -> tuple[Texts, int, int]:
        """(chunk, where record ``index`` starts, its length)."""
        n = bisect.bisect_right(self._firsts, index) - 1
        chunk, i = self._chunks[n], index - self._firsts[n]
        offsets = self._offsets.get(n)
        if offsets is None:
            offsets = self._offsets[n] = chunk.offsets()
        return chunk, offsets[i], chunk.lengths[i]

    def _read(self, path: str, start: int, size: int) -> bytes:
        reader = self._readers.get(path)
        if reader is None:
            reader = self._readers[path] = open(path, "rb")  # noqa: SIM115 (cached)
        reader.seek(start)
        data = reader.read(size)
        if len(data) != size:
            raise OSError(f"kernel records file {path} was truncated")
        return data

    def __getitem__(self, index: int) -> bytes:
        """The JSON text of record ``index``."""
        index = range(self._count)[index]  # negative indices, IndexError
        if index in self._replaced:
            return self._replaced[index]
        chunk, start, length = self._locate(index)
        if chunk.data is not None:
            return chunk.data[start:start + length]
        return self._read(chunk.path, start, length)

    def __setitem__(self, index: int, text: bytes) -> None:
        self._replaced[range(self._count)[index]] = text

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (json.loads(self[i]) for i in range(self._count))

    def write(self, stream: BinaryIO) -> None:
        """Write the records, separated as in the document, to a binary stream."""
        replaced = sorted(self._replaced)
        run: tuple[str, int, int] | None = None  # a file's bytes to copy: path, start, end
        for n, (chunk, first) in enumerate(zip(self._chunks, self._firsts, strict=True)):
            at = bisect.bisect_left(replaced, first)
            edited = at < len(replaced) and replaced[at] < first + len(chunk.lengths)
            if run is not None and not edited and chunk.path == run[0] \
                    and chunk.start == run[2] + len(SEPARATOR):  # the file holds the separator
                run = (run[0], run[1], chunk.start + chunk.size)
                continue
            if run is not None:
                self._copy(run[0], run[1], run[2] - run[1], stream)
                run = None
            if n:
                stream.write(SEPARATOR)
            if edited:
                stream.write(SEPARATOR.join(self[first + i]
                                            for i in range(len(chunk.lengths))))
            elif chunk.data is not None:
                stream.write(chunk.data)
            else:
                run = (chunk.path, chunk.start, chunk.start + chunk.size)
        if run is not None:
            self._copy(run[0], run[1], run[2] - run[1], stream)

    def _copy(self, path: str, start: int, size: int, stream: BinaryIO,
              step: int = 1 << 20) -> None:
        while size > 0:
            data = self._read(path, start, min(step, size))
            stream.write(data)
            start += len(data)
            size -= len(data)

    def close(self) -> None:
        """Close the files and remove the temporary directory (the records are gone)."""
        if self._spool is not None:
            self._spool.close()
        if self._cleanup is not None:
            self._cleanup()


def _remove(directory: str, readers: dict[str, BinaryIO]) -> None:
    for reader in readers.values():
        reader.close()
    readers.clear()
    shutil.rmtree(directory, ignore_errors=True)
