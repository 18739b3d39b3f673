"""Cut an XLA profile's ``.xplane.pb`` (an XSpace) down to its GPU planes, for a fixture.

    python3 benchmarks/traces/cut_xplane.py IN.xplane.pb OUT.xplane.pb

An XSpace is a sequence of top-level fields; its planes are field 1, each a length-prefixed
XPlane whose name (field 2) follows its id (field 1). The planes named ``/device:GPU:N``
are copied byte for byte (tag, length and body unchanged); the host planes (Python and
runtime events: most of the file) and the other fields are dropped. The result is itself a
valid XSpace holding exactly what the profiler recorded for the GPUs.
"""

from __future__ import annotations

import sys
from pathlib import Path


def varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, i
        shift += 7


def plane_name(body: bytes) -> bytes:
    i = 0
    while i < len(body):
        tag, i = varint(body, i)
        if tag & 7 == 0:
            _, i = varint(body, i)
            continue
        length, i = varint(body, i)
        if tag >> 3 == 2:
            return body[i:i + length]
        i += length
    return b""


def main(src: str, dst: str) -> None:
    data = Path(src).read_bytes()
    out, i = bytearray(), 0
    while i < len(data):
        start = i
        tag, i = varint(data, i)
        assert tag & 7 == 2, "top-level XSpace fields are length-delimited"
        length, i = varint(data, i)
        body = data[i:i + length]
        i += length
        if tag >> 3 == 1 and plane_name(body).startswith(b"/device:GPU:"):
            out += data[start:i]
    Path(dst).write_bytes(bytes(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
