"""What every reader of binaries shares: container magics, read options and limits, the
decompression budget of one input, and small helpers for entry names and mapped files.

The lowest layer of occlint.readers: it imports no other reader, so that the loader, the
container walker, the archive reader and the streaming bundle reader can all use it
without importing one another.
"""

from __future__ import annotations

import contextlib
import mmap
from dataclasses import dataclass, field

from occlint.readers.span import Span

ELF_MAGIC = b"\x7fELF"
BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
CCOB_MAGIC = b"CCOB"
FATBIN_MAGIC = b"\x50\xed\x55\xba"
BITCODE_MAGICS = (b"BC\xc0\xde", b"\xde\xc0\x17\x0b")
OFFLOAD_BINARY_MAGIC = b"\x10\xff\x10\xad"
ZIP_MAGIC = b"PK\x03\x04"
GZIP_MAGIC = b"\x1f\x8b"  # (a gzip'd profiler trace)
ARCHIVE_SUFFIXES = (".whl", ".zip", ".pt2")
# what no profiler trace starts with: GPU binaries and their containers
BINARY_MAGICS = (ELF_MAGIC, BUNDLE_MAGIC, CCOB_MAGIC, FATBIN_MAGIC, ZIP_MAGIC, *BITCODE_MAGICS,
                 OFFLOAD_BINARY_MAGIC)
SOURCE_SUFFIXES = (".cu", ".cuh", ".hip", ".cpp", ".cc", ".cxx", ".h", ".hpp")
# a Python script whose string literals may hold CUDA (load_inline, CuPy's RawKernel)
PYTHON_SUFFIX = ".py"
PTX_SUFFIX = ".ptx"  # PTX text: the launch-time model's facts of its kernels
MAX_PTX_BYTES = 64 << 20  # a PTX file read for facts; past this it is left unread
MAX_DEPTH = 4
MAX_ERRORS = 1000  # per input: the rest are summed up in one line
BUDGET_RATIO = 64  # decompressed bytes one input may produce, per byte of input
EM_AMDGPU = 224
EM_CUDA = 190


@dataclass(frozen=True)
class ReadOptions:
    """Limits and selection that apply while reading."""

    max_decompressed: int = 2 << 30
    targets: tuple[str, ...] = ()  # --target: keep only entries for these processors / SMs
    prefer: tuple[str, ...] = ()  # device architectures: in a multi-target container keep
    # only the matching entries when there are any
    hash_inputs: bool = False
    extra: dict = field(default_factory=dict)
    # NVIDIA fatbins: keep the text of their PTX entries (ReadResult.ptx) and read no SASS
    # (the launch-time model's facts of a traced kernel from the binary it came from)
    ptx_only: bool = False


def needs_whole(head: Span) -> bool:
    """Would reading a container entry that starts with ``head`` need all of its bytes? (No
    for what its first bytes already tell: bitcode, an ELF of another machine, no GPU code.)"""
    if head.startswith(ELF_MAGIC):
        return len(head) < 20 or head.bytes(5, 1) != b"\x01" or \
            int.from_bytes(head.bytes(18, 2), "little") in (EM_AMDGPU, EM_CUDA)
    return any(head.startswith(magic) for magic in (BUNDLE_MAGIC, CCOB_MAGIC, FATBIN_MAGIC,
                                                    OFFLOAD_BINARY_MAGIC))


def close_map(mm: mmap.mmap) -> None:
    with contextlib.suppress(BufferError):  # a view still referenced: the GC unmaps it
        mm.close()


def join_entry(prefix: str | None, part: str) -> str:
    return f"{prefix}/{part}" if prefix else part


class Budget:
    """Bytes that one input may still decompress, all its streams together (zip members,
    compressed bundles, compressed fatbin entries): BUDGET_RATIO times its size, at least
    ``max_decompressed``. Without it many streams, or many bundle entries pointing at one
    stream, would each get the whole per-stream cap."""

    __slots__ = ("left",)

    def __init__(self, input_size: int, options: ReadOptions):
        self.left = max(options.max_decompressed, BUDGET_RATIO * input_size)


_HEX = frozenset(b"0123456789abcdef")


def hashed_prefix(head: bytes) -> int:
    """Bytes of hash before an ELF image in a CuPy kernel cache file (the hex digest of
    the image, 32 or 40 characters as CuPy's versions wrote it), else 0."""
    for n in (32, 40):
        if head[n:n + 4] == ELF_MAGIC and _HEX.issuperset(head[:n]):
            return n
    return 0


def is_ptx(path: object) -> bool:
    return str(path).lower().endswith(PTX_SUFFIX)


def is_source(path: object) -> bool:
    """Is ``path`` named as a CUDA / HIP source (what occlint.readers.source reads), or a
    Python script whose strings may hold one? Here, not in that package, so that telling
    inputs apart does not import the source reader."""
    return str(path).lower().endswith((*SOURCE_SUFFIXES, PYTHON_SUFFIX))


def is_python(path: object) -> bool:
    return str(path).lower().endswith(PYTHON_SUFFIX)


# what a script holds where its strings may be CUDA or it launches a CuPy kernel
PYTHON_MARKERS = (b"__global__", b"<<<", b"RawKernel", b"get_function", b"cuda.jit",
                  b"LaunchKernel")


# a script larger than this, found in a directory, is not read (data, generated code: the
# source reader would not parse it either)
MAX_SCRIPT_BYTES = 4 << 20


def python_may_hold_cuda(path: str) -> bool:
    """Whether a script found in a directory names a kernel or a launch at all (its bytes,
    searched before the source reader is imported: a worker given only a project's
    scripts never imports it); one over MAX_SCRIPT_BYTES is not read."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_SCRIPT_BYTES + 1)
    except OSError:
        return True  # the reader reports it
    return len(data) <= MAX_SCRIPT_BYTES and any(marker in data for marker in PYTHON_MARKERS)
