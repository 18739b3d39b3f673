"""Windows PE/COFF files (``.dll``, ``.exe``, ``.pyd``): the sections that may hold GPU code.

PE section names have at most 8 characters, so the toolchains shorten the ELF names: HIP
(clang for ``*-windows-msvc``) puts its offload bundles in ``.hip_fat`` and the wrapper that
points at them in ``.hipFatB`` (``.hipFatBinSegment``); nvcc puts its fatbins in
``.nv_fatb`` and the wrapper in ``.nvFatBi`` (``.nvFatBinSegment``). The wrappers hold only
pointers and are not read. The section table is decoded by ``pefile`` (headers only:
``fast_load``); the contents stay in the input buffer and are handed on as spans, like a host
ELF's (occlint.readers.host).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

from occlint.errors import FormatError, NoGpuCode
from occlint.readers.span import Span

PE_MAGIC = b"MZ"
PE_SUFFIXES = (".dll", ".exe", ".pyd")
BUNDLE_SECTIONS = (".hip_fat",)
FATBIN_SECTIONS = (".nv_fatb",)
WRAPPER_SECTIONS = (".hipFatB", ".nvFatBi")
GPU_SECTIONS = BUNDLE_SECTIONS + FATBIN_SECTIONS
SCN_CNT_INITIALIZED_DATA = 0x40
SCN_MEM_EXECUTE = 0x20000000
MAX_SECTIONS = 96  # the PE loader's own limit


class PeSection(NamedTuple):
    name: str
    offset: int  # in the file
    size: int  # bytes present in the file (the virtual size when smaller: no padding)
    characteristics: int

    @property
    def data(self) -> bool:
        """Initialized, non-executable data (where embedded containers and images sit)."""
        return bool(self.characteristics & SCN_CNT_INITIALIZED_DATA) and \
            not self.characteristics & SCN_MEM_EXECUTE


def is_pe(span: Span) -> bool:
    """``MZ`` and a ``PE\\0\\0`` signature where the DOS header points."""
    if not span.startswith(PE_MAGIC) or len(span) < 64:
        return False
    at = int.from_bytes(span.bytes(0x3C, 4), "little")
    return span.startswith(b"PE\0\0", at)


@functools.cache
def _buffer_pe() -> type:
    """pefile's PE for a buffer: its ``close`` (which PE also calls when a header is
    refused) unmaps a file, which a buffer has not, and runs a full ``gc.collect()`` of the
    process each time: 50 ms a file in a process that holds a large run, for nothing."""
    import pefile

    class BufferPE(pefile.PE):
        def close(self) -> None:
            pass

    return BufferPE


def pe_sections(span: Span) -> list[PeSection]:
    """The section table of the PE file in ``span``; FormatError when it is not one."""
    import pefile

    data = span.buf if span.start == 0 and span.end == len(span.buf) else \
        span.bytes(0, len(span), "PE file")
    try:
        pe = _buffer_pe()(data=data, fast_load=True)
        raw = [(s.Name, s.PointerToRawData, s.SizeOfRawData, s.Misc_VirtualSize,
                s.Characteristics) for s in pe.sections]
    except pefile.PEFormatError as exc:
        raise FormatError(f"malformed PE file: {exc.value}") from None
    except (ValueError, TypeError, IndexError, KeyError, OverflowError, AttributeError,
            MemoryError) as exc:  # pefile on hostile headers
        raise FormatError(f"malformed PE file: {type(exc).__name__}: {exc}") from None
    if len(raw) > MAX_SECTIONS:
        raise FormatError(f"PE file with {len(raw)} sections")
    out = []
    for name, offset, raw_size, virtual_size, characteristics in raw:
        text = name.rstrip(b"\0").decode("utf-8", "replace")
        size = min(raw_size, virtual_size) if virtual_size else raw_size
        if not size:
            continue
        if offset + size > len(span):
            raise FormatError(f"PE section {text!r} at {offset:#x}+{size:#x} lies beyond the end "
                              f"of the file ({len(span)} bytes): truncated or corrupted")
        out.append(PeSection(text, offset, size, characteristics))
    return out


def read_pe(reader, span: Span) -> None:
    """Read a .dll / .exe / .pyd with ``reader`` (occlint.readers.walker.ContainerWalker): bundles
    in ``.hip_fat``, fatbins in ``.nv_fatb``, and in the other initialized data sections the
    containers and device ELF images found by scanning, as in a host ELF's."""
    from occlint.readers.embedded import ScanBudget, find_images
    from occlint.readers.host import no_overlap

    if not is_pe(span):
        raise FormatError("not a GPU binary (an MZ header without a PE signature)")
    errors_before = len(reader.result.errors)
    found = False
    chosen = []
    for s in pe_sections(span):
        if s.name in GPU_SECTIONS or (s.data and s.name not in WRAPPER_SECTIONS):
            chosen.append((s.name, span.sub(s.offset, s.size, f"section {s.name!r}"),
                           s.name not in GPU_SECTIONS))
    no_overlap([(name, section) for name, section, _ in chosen])
    count = len(reader.result.kernels) + len(reader.result.artifacts)
    for name, section, scanned in chosen:
        if not scanned:
            found = True
            if name in BUNDLE_SECTIONS:
                reader.read_bundles(section, name, 1, strict=True)
            else:
                reader.read_fatbins(section, name, 1, strict=True)
        else:
            reader.read_bundles(section, name, 1, strict=False)
            reader.read_fatbins(section, name, 1, strict=False)
    budget = ScanBudget(len(span))
    for name, section, scanned in chosen:
        if scanned:
            for image in find_images(section, reader.claimed, budget):
                entry = f"{name}+{image.offset:#x}"
                try:
                    reader.read(image.span, entry, 1)
                except FormatError as exc:
                    reader.error(str(exc), entry)
    found = found or len(reader.result.kernels) + len(reader.result.artifacts) > count
    if not found and len(reader.result.errors) == errors_before:
        raise NoGpuCode("no GPU code found in this PE file (no .hip_fat, .nv_fatb, "
                        "embedded bundle, fatbin or device ELF image)")
