"""``--format json``: the report document as is (schema: docs/schema/).

The text is what ``json.dumps(doc, indent=2, ensure_ascii=False)`` gives (occlint.model.jsonenc),
written piece by piece: kernel records held as JSON text (occlint.model.records.KernelRecords)
go out as they are, so a large report is never one string in memory.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any, BinaryIO

from occlint.model.jsonenc import encode
from occlint.model.records import KernelRecords


def chunks(doc: dict[str, Any]) -> Iterator[bytes | KernelRecords]:
    """The document's JSON text (UTF-8) in pieces; kernel records held as text come as
    their KernelRecords (see :func:`write`)."""
    if not doc:
        yield b"{}\n"
        return
    separator = "{\n  "
    for key, value in doc.items():
        head = separator + encode(key) + ": "
        separator = ",\n  "
        if not isinstance(value, KernelRecords):
            yield (head + encode(value, 1)).encode("utf-8")
        elif not len(value):
            yield (head + "[]").encode("utf-8")
        else:
            yield (head + "[\n    ").encode("utf-8")
            yield value  # the records: written by KernelRecords.write
            yield b"\n  ]"
    yield b"\n}\n"


def write(doc: dict[str, Any], stream: BinaryIO) -> None:
    for piece in chunks(doc):
        if isinstance(piece, KernelRecords):
            piece.write(stream)
        else:
            stream.write(piece)


def render(doc: dict[str, Any], **_: Any) -> str:
    buffer = io.BytesIO()
    write(doc, buffer)
    return buffer.getvalue().decode("utf-8")
