"""Deterministic mutation passes over the readers added for issue 14 (PE files, embedded
device images, streamed compressed bundles, AOTInductor packages): every damaged input
gives kernels and/or one-line errors, never an exception, and quickly."""

from __future__ import annotations

import random
import struct
import time
import zlib

import pytest

from occlint.readers.loader import ReadOptions, read_bytes
from tests.conftest import REPO

INPUTS = {
    "pe-hip": REPO / "fixtures/pe/hip_gamma.dll",
    "pe-cuda": REPO / "fixtures/pe/cuda_small.dll",
    "embedded": REPO / "fixtures/amd/embedded/libraw_images.so",
    "ccob-zstd": REPO / "fixtures/amd/containers/gamma.ccob2_zstd.hipfb",
    "ccob-zlib": REPO / "fixtures/amd/containers/gamma.ccob2_zlib.byhand.hipfb",
}


def _mutations(data: bytes, rng: random.Random, count: int):
    """Byte flips (headers most often), truncations, cut-outs, and 64-bit size fields set to
    extreme values."""
    for _ in range(count):
        out = bytearray(data)
        kind = rng.random()
        if kind < 0.5:
            for _ in range(rng.randint(1, 8)):
                at = rng.randrange(min(len(out), 1024)) if rng.random() < 0.6 else \
                    rng.randrange(len(out))
                out[at] = rng.randrange(256)
        elif kind < 0.7:
            out = out[:rng.randrange(1, len(out))]
        elif kind < 0.85:
            at = rng.randrange(len(out))
            del out[at:at + rng.randint(1, 256)]
        else:
            at = rng.randrange(0, max(1, len(out) - 8)) & ~7
            out[at:at + 8] = struct.pack("<Q", rng.choice([0, 1, 2**31, 2**32 - 1, 2**63,
                                                           len(out), len(out) * 2]))
        yield bytes(out)


@pytest.mark.parametrize("name", list(INPUTS))
def test_mutated_inputs_give_one_line_errors(name):
    data = INPUTS[name].read_bytes()
    rng = random.Random(zlib.crc32(name.encode()))
    start = time.monotonic()
    for mutated in _mutations(data, rng, 300):
        result = read_bytes(mutated, name, ReadOptions())  # raises on anything unexpected
        for error in result.errors:
            assert "\n" not in error.line()
    assert time.monotonic() - start < 120
