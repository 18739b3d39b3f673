"""Cut an XLA profile's ``.xplane.pb`` (an XSpace) down to its GPU planes, for a fixture.

    python3 benchmarks/traces/cut_xplane.py IN.xplane.pb OUT.xplane.pb

An XSpace is a sequence of top-level fields; its planes are field 1, each a length-prefixed
XPlane whose name (field 2) follows its id (field 1). The planes named ``/device:GPU:N``
are copied byte for byte (tag, length and body unchanged); the host planes (Python and
runtime events: most of the file) and the other fields are dropped. The result is itself a
valid XSpace holding exactly what the profiler recorded for the GPUs. (Fields are split
by occlint's wire-format helpers; the bytes copied are the file's own.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from occlint.readers.traces.xplane import field_header, parse_fields


def plane_name(body: bytes) -> bytes:
    return next((value for number, wire, value in parse_fields(body)
                 if number == 2 and wire == 2), b"")


def gpu_planes_only(data: bytes) -> bytes:
    """The XSpace ``data`` with only its ``/device:GPU:N`` planes, each byte for byte."""
    out, i = bytearray(), 0
    while i < len(data):
        start = i
        number, wire, length, i = field_header(data, i)
        assert wire == 2, "top-level XSpace fields are length-delimited"
        body = data[i:i + length]
        i += length
        if number == 1 and plane_name(body).startswith(b"/device:GPU:"):
            out += data[start:i]
    return bytes(out)


def main(src: str, dst: str) -> None:
    Path(dst).write_bytes(gpu_planes_only(Path(src).read_bytes()))

if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
