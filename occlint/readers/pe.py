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

from typing import NamedTuple

from occlint.errors import FormatError
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


def pe_sections(span: Span) -> list[PeSection]:
    """The section table of the PE file in ``span``; FormatError when it is not one."""
    import pefile

    data = span.buf if span.start == 0 and span.end == len(span.buf) else \
        span.bytes(0, len(span), "PE file")
    try:
        pe = pefile.PE(data=data, fast_load=True)
        try:
            raw = [(s.Name, s.PointerToRawData, s.SizeOfRawData, s.Misc_VirtualSize,
                    s.Characteristics) for s in pe.sections]
        finally:
            pe.close()
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
