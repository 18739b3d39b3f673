"""Kernel argument specifications for ``occlint validate --args``.

A spec is a comma-separated list, one item per kernel parameter, in order:

* ``TYPE[COUNT]:FILL`` — a device buffer of COUNT elements, filled with ``random``,
  ``zeros``, ``ones``, a number (every element), or ``out`` (an output: poisoned, not read);
* ``TYPE:VALUE`` — a scalar passed by value.

TYPE is one of u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 (buffers also f16). Example, the gamma
correction of a 16384 x 16384 RGB image: ``u8[805306368]:random, u64:805306368, f32:2.2``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SIZES = {"u8": 1, "i8": 1, "u16": 2, "i16": 2, "f16": 2, "u32": 4, "i32": 4, "f32": 4,
         "u64": 8, "i64": 8, "f64": 8}
SCALAR_TYPES = {k for k in SIZES if k != "f16"}
MAX_BUFFER_BYTES = 1 << 40
_ITEM = re.compile(r"^\s*(?P<type>[a-z]\d+)\s*(?:\[\s*(?P<count>[0-9_]+)\s*\])?\s*:\s*"
                   r"(?P<value>[^,]+?)\s*$")


class SpecError(ValueError):
    """The --args specification is malformed; the message says where."""


@dataclass(frozen=True, slots=True)
class Arg:
    dtype: str
    count: int | None  # None: a scalar
    fill: str  # buffers: random | zeros | ones | out | a number; scalars: the value text

    @property
    def is_buffer(self) -> bool:
        return self.count is not None

    @property
    def nbytes(self) -> int:
        return SIZES[self.dtype] * (self.count or 1)

    def scalar_value(self) -> int | float:
        text = self.fill.replace("_", "")
        if self.dtype.startswith("f"):
            return float(text)
        value = int(text, 0)
        bits = SIZES[self.dtype] * 8
        low, high = (0, 2**bits - 1) if self.dtype.startswith("u") else \
            (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
        if not low <= value <= high:
            raise SpecError(f"{value} does not fit in {self.dtype}")
        return value


def parse(spec: str) -> list[Arg]:
    if not spec.strip():
        raise SpecError("empty argument specification")
    args = []
    for position, item in enumerate(spec.split(","), 1):
        match = _ITEM.match(item)
        if not match:
            raise SpecError(f"argument {position} ({item.strip()!r}): expected TYPE:VALUE or "
                            "TYPE[COUNT]:FILL, e.g. f32:4.0 or u8[1024]:random")
        dtype, count, value = match["type"], match["count"], match["value"]
        if dtype not in SIZES:
            raise SpecError(f"argument {position}: unknown type {dtype!r} (one of "
                            f"{', '.join(SIZES)})")
        if count is None:
            if dtype not in SCALAR_TYPES:
                raise SpecError(f"argument {position}: {dtype} scalars are not supported")
            arg = Arg(dtype, None, value)
            try:
                arg.scalar_value()
            except ValueError as exc:
                raise SpecError(f"argument {position}: {value!r} is not a valid {dtype}: "
                                f"{exc}") from None
        else:
            n = int(count.replace("_", ""))
            if n <= 0 or n * SIZES[dtype] > MAX_BUFFER_BYTES:
                raise SpecError(f"argument {position}: buffer of {n} elements is out of range")
            if value not in ("random", "zeros", "ones", "out"):
                try:
                    float(value)
                except ValueError:
                    raise SpecError(f"argument {position}: fill {value!r} must be random, "
                                    "zeros, ones, out or a number") from None
            arg = Arg(dtype, n, value)
        args.append(arg)
    return args
