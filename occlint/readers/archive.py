"""Wheels and zip archives: GPU binaries among their members.

Members are streamed one at a time with caps on their size and count; a member larger than
64 MiB is spooled to a temporary file and memory-mapped instead of held in memory. Each
member is reported as ``ARCHIVE!/member/path``; its errors do not stop the other members.
"""

from __future__ import annotations

import mmap
import tempfile
import zipfile
from pathlib import PurePosixPath

from occlint.errors import FormatError
from occlint.model.kernel import InputError, ReadResult

MAX_MEMBERS = 1 << 20
MAX_MEMBER_BYTES = 4 << 30
SPOOL_ABOVE = 64 << 20
GPU_SUFFIXES = (".hsaco", ".co", ".cubin", ".fatbin", ".hipfb", ".so", ".o", ".a", ".bin",
                ".elf", ".dll")


def _interesting(info: zipfile.ZipInfo) -> bool:
    name = PurePosixPath(info.filename)
    if info.is_dir() or not info.file_size:
        return False
    return name.suffix in GPU_SUFFIXES or ".so." in name.name


def read_archive(fh, display: str, options, result: ReadResult) -> None:
    from occlint.readers.loader import ELF_MAGIC, _close, _Reader
    from occlint.readers.span import Span

    try:
        archive = zipfile.ZipFile(fh)
        infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise FormatError(f"not a valid zip archive: {exc}") from None
    if len(infos) > MAX_MEMBERS:
        raise FormatError(f"zip archive lists {len(infos)} members")
    for info in sorted(infos, key=lambda i: i.filename):
        if not _interesting(info):
            continue
        member = f"{display}!/{info.filename}"
        reader = _Reader(member, options, result)
        try:
            if info.file_size > MAX_MEMBER_BYTES:
                raise FormatError(f"member of {info.file_size} bytes exceeds the "
                                  f"{MAX_MEMBER_BYTES}-byte limit")
            with archive.open(info) as stream:
                head = stream.read(4)
                if head != ELF_MAGIC and not head.startswith((b"__CL", b"CCOB",
                                                              b"\x50\xed\x55\xba")):
                    continue  # not GPU code (data files with GPU-like names)
                if info.file_size <= SPOOL_ABOVE:
                    data = head + stream.read(info.file_size + 1 - len(head))
                    if len(data) != info.file_size:
                        raise FormatError("member size differs from the archive directory "
                                          "(corrupted or a zip bomb)")
                    reader.read(Span(data), None, 0)
                else:
                    with tempfile.TemporaryFile() as tmp:
                        tmp.write(head)
                        copied = len(head)
                        while chunk := stream.read(1 << 20):
                            copied += len(chunk)
                            if copied > info.file_size:
                                raise FormatError("member decompresses beyond its declared "
                                                  "size (zip bomb?)")
                            tmp.write(chunk)
                        tmp.flush()
                        mm = mmap.mmap(tmp.fileno(), 0, access=mmap.ACCESS_READ)
                        try:
                            reader.read(Span(mm), None, 0)
                        finally:
                            _close(mm)
        except FormatError as exc:
            result.errors.append(InputError(member, str(exc)))
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError,
                NotImplementedError) as exc:
            result.errors.append(InputError(member, f"cannot extract: {exc}"))
