"""``.nv.info`` / ``.nv.compat`` attribute records (EIATTR / EICOMPAT).

A little-endian stream of 4-byte records with no header (reference notes nvidia.md §1.3)::

    u8  format     1 NVAL (no value), 2 BVAL (u8 value), 3 HVAL (u16 value), 4 SVAL (payload)
    u8  attribute  EIATTR_* code
    u16 value      BVAL/HVAL: the value; SVAL: the payload's byte count; NVAL: 0
    u8  payload[value]   SVAL only

Unknown attribute codes are kept (callers skip them by code); an unknown *format* cannot be
skipped, because its size is unknown, so it is a FormatError, and so is a record whose
payload runs past the end of its section.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from occlint.errors import FormatError

EIFMT_NVAL = 1
EIFMT_BVAL = 2
EIFMT_HVAL = 3
EIFMT_SVAL = 4

# EIATTR codes occlint reads (full table: nvidia.md §1.5).
MAX_THREADS = 0x05
PARAM_CBANK = 0x0A
REQNTID = 0x10
FRAME_SIZE = 0x11
MIN_STACK_SIZE = 0x12
CBANK_PARAM_SIZE = 0x19
MAXREG_COUNT = 0x1B
CRS_STACK_SIZE = 0x1E
MAX_STACK_SIZE = 0x23
REGCOUNT = 0x2F
CTA_PER_CLUSTER = 0x3D
NUM_BARRIERS = 0x4C
ANNOTATIONS = 0x55

ANNOTATION_SPILL_REFILL = 1  # cuobjdump: "SpillRefill"

# EICOMPAT codes (.nv.compat, CUDA 13).
COMPAT_ACCELERATOR_TARGET = 0x09  # 1 for sm_XXa cubins

MAX_RECORDS = 1 << 20

_U32 = struct.Struct("<I")
_U32x2 = struct.Struct("<II")
_U32x3 = struct.Struct("<III")


class Record(NamedTuple):
    fmt: int
    attr: int
    value: int  # BVAL/HVAL value; SVAL payload size; 0 for NVAL
    payload: bytes  # SVAL payload, else b""

    def scalar(self) -> int:
        """The attribute's value: a B/H value, or the first u32 of an SVAL payload."""
        if self.fmt != EIFMT_SVAL:
            return self.value
        if len(self.payload) < 4:
            raise FormatError(f"EIATTR {self.attr:#x}: {len(self.payload)}-byte payload, "
                              "expected at least 4")
        return _U32.unpack_from(self.payload)[0]

    def pair(self) -> tuple[int, int]:
        """(u32, u32) of an 8-byte SVAL payload (symbol index, value)."""
        if self.fmt != EIFMT_SVAL or len(self.payload) < 8:
            raise FormatError(f"EIATTR {self.attr:#x}: expected an 8-byte payload")
        return _U32x2.unpack_from(self.payload)

    def dims(self) -> tuple[int, int, int]:
        """(x, y, z) of a 12-byte SVAL payload."""
        if self.fmt != EIFMT_SVAL or len(self.payload) < 12:
            raise FormatError(f"EIATTR {self.attr:#x}: expected a 12-byte payload")
        return _U32x3.unpack_from(self.payload)


def parse_records(data: bytes, what: str) -> list[Record]:
    """All records of an attribute section (``data`` is the section's bytes)."""
    out: list[Record] = []
    pos, size = 0, len(data)
    new = tuple.__new__  # the fast NamedTuple path
    while pos < size:
        if pos + 4 > size:
            if not any(data[pos:]):
                break  # zero padding
            raise FormatError(f"{what}: truncated attribute record at offset {pos:#x}")
        fmt, attr = data[pos], data[pos + 1]
        value = data[pos + 2] | data[pos + 3] << 8
        pos += 4
        if fmt == EIFMT_SVAL:
            if pos + value > size:
                raise FormatError(f"{what}: attribute {attr:#x} at offset {pos - 4:#x} claims "
                                  f"{value} payload bytes, {size - pos} remain: truncated or "
                                  "corrupted")
            out.append(new(Record, (fmt, attr, value, data[pos:pos + value])))
            pos += value
        elif fmt in (EIFMT_NVAL, EIFMT_BVAL, EIFMT_HVAL):
            out.append(new(Record, (fmt, attr, value & 0xFF if fmt == EIFMT_BVAL else value, b"")))
        elif fmt == 0 and not any(data[pos - 4:]):
            break  # zero padding at the end of the section
        else:
            raise FormatError(f"{what}: attribute record at offset {pos - 4:#x} has unknown "
                              f"format {fmt} (corrupted?)")
        if len(out) > MAX_RECORDS:
            raise FormatError(f"{what}: more than {MAX_RECORDS} attribute records")
    return out
