"""Wheels and zip archives: GPU binaries among their members.

Members are streamed one at a time with caps on their size and count; a member larger than
64 MiB is spooled to a temporary file and memory-mapped instead of held in memory. Each
member is reported as ``ARCHIVE!/member/path``; its errors do not stop the other members. A
member without GPU code (a host library beside the kernels) is no error: it is counted in
the summary's ``skipped``.

The members that may hold GPU code are read in groups of GROUP_MEMBERS, in name order
(:func:`member_groups`). A group is a unit of its own: it has its share of the archive's
decompression budget (in proportion to its compressed bytes) and its own error limit, so
that reading the groups in separate worker processes (a large wheel over all CPUs: see
occlint.pipeline.run) gives exactly what reading them one after another in one process gives.
"""

from __future__ import annotations

import itertools
import mmap
import os
import struct
import tempfile
import zipfile
import zlib
from pathlib import PurePosixPath

from occlint.errors import FormatError, NoGpuCode
from occlint.model.kernel import ReadResult
from occlint.readers.formats import ELF_MAGIC, Budget, close_map

MAX_MEMBERS = 1 << 20
GROUP_MEMBERS = 2048
MAX_MEMBER_BYTES = 4 << 30
SPOOL_ABOVE = 64 << 20
# zipfile decompresses these without an output limit (deflate: with one): a few hundred
# bytes of bzip2 would become gigabytes in memory at the first read.
UNBOUNDED_METHODS = {zipfile.ZIP_BZIP2: "bzip2", zipfile.ZIP_LZMA: "LZMA"}
GPU_SUFFIXES = (".hsaco", ".co", ".cubin", ".fatbin", ".hipfb", ".so", ".o", ".a", ".bin",
                ".elf", ".dll", ".pyd", ".exe")


LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature ... file name length, extra field length


def _inflater():
    """Raw deflate: ISA-L's (python-isal, twice as fast as zlib on cubins) when installed."""
    try:
        from isal import isal_zlib
    except ImportError:  # a platform without its wheels
        return zlib
    return isal_zlib


_INFLATE = _inflater()


def _stream_errors() -> tuple[type[Exception], ...]:
    """What a corrupted deflate / LZMA member raises from zipfile (not OSError)."""
    errors: list[type[Exception]] = [zlib.error, _INFLATE.error]
    try:
        import lzma
    except ImportError:  # Python built without lzma: zipfile reports it itself
        pass
    else:
        errors.append(lzma.LZMAError)
    return tuple(errors)


_STREAM_ERRORS = _stream_errors()


def _interesting(info: zipfile.ZipInfo) -> bool:
    if not info.filename or info.is_dir() or not info.file_size:  # is_dir() fails on ''
        return False
    name = PurePosixPath(info.filename)
    return name.suffix in GPU_SUFFIXES or ".so." in name.name


def _open(fh) -> tuple[zipfile.ZipFile, list[zipfile.ZipInfo]]:
    try:
        archive = zipfile.ZipFile(fh)
        infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError) as exc:
        raise FormatError(f"not a valid zip archive: {exc}") from None
    if len(infos) > MAX_MEMBERS:
        raise FormatError(f"zip archive lists {len(infos)} members")
    # Members sharing compressed bytes (several directory entries for one stream) are the
    # classic zip bomb; real archives never overlap (the local headers are left out here).
    extents = sorted((i.header_offset, i.header_offset + i.compress_size, i.filename)
                     for i in infos)
    for (_, end, first), (start, _, second) in itertools.pairwise(extents):
        if start < end:
            raise FormatError(f"zip members {first!r} and {second!r} overlap (a zip bomb?)")
    return archive, infos


def member_groups(infos: list[zipfile.ZipInfo]) -> list[list[zipfile.ZipInfo]]:
    """The members worth reading, in name order, in groups of GROUP_MEMBERS."""
    members = sorted((i for i in infos if _interesting(i)), key=lambda i: i.filename)
    return [members[i:i + GROUP_MEMBERS] for i in range(0, len(members), GROUP_MEMBERS)]


def count_groups(path: str) -> int:
    """How many member groups the archive at ``path`` has (1 when it cannot be read: the
    reader then reports why)."""
    try:
        with open(path, "rb") as fh:
            return max(1, len(member_groups(_open(fh)[1])))
    except (FormatError, OSError):
        return 1


def read_archive(fh, display: str, options, result: ReadResult,
                 group: int | None = None) -> None:
    """Read every member group, or only group number ``group`` (a worker's share)."""

    size = fh.seek(0, os.SEEK_END)
    archive, infos = _open(fh)
    hints = _aoti_hints(archive, infos)
    groups = member_groups(infos)
    weights = [sum(i.compress_size for i in members) for members in groups]
    if not sum(weights):
        weights = [len(members) for members in groups]
    whole = Budget(size, options).left  # all groups together
    for index, members in enumerate(groups):
        if group is not None and index != group:
            continue
        budget = Budget(0, options)
        budget.left = whole * weights[index] // sum(weights)
        part = ReadResult(path=result.path)  # its own error limit
        _read_group(archive, members, display, options, part, budget)
        if hints:
            _apply_aoti_hints(part.kernels, display, hints)
        result.kernels.extend(part.kernels)
        result.artifacts.extend(part.artifacts)
        result.errors.extend(part.errors)
        result.skipped += part.skipped


def _aoti_hints(archive: zipfile.ZipFile, infos: list[zipfile.ZipInfo]
                ) -> dict[str, dict[str, dict]]:
    """AOTInductor packages: package directory -> kernel name -> launch hint, from the
    wrapper sources (occlint.readers.aoti). A source that cannot be read gives none."""
    from occlint.readers import aoti

    out: dict[str, dict[str, dict]] = {}
    for info in sorted(infos, key=lambda i: i.filename):
        where = aoti.package_dir(info.filename)
        if where is None or not info.filename.endswith(aoti.WRAPPER_SUFFIX) or \
                info.file_size > aoti.MAX_SOURCE_BYTES or info.flag_bits & 0x1 or \
                info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            continue
        try:
            with archive.open(info) as stream:
                text = stream.read(aoti.MAX_SOURCE_BYTES + 1).decode("utf-8", "replace")
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, *_STREAM_ERRORS):
            continue
        for name, hint in aoti.launch_hints(text).items():
            out.setdefault(where, {}).setdefault(name, hint)
    return out


def _apply_aoti_hints(kernels: list, display: str, hints: dict[str, dict[str, dict]]) -> None:
    from occlint.readers import aoti

    prefix = f"{display}!/"
    for kernel in kernels:
        where = aoti.package_dir(kernel.file.removeprefix(prefix))
        if where in hints:
            aoti.apply([kernel], hints[where])


def _gpu_code(head: bytes) -> bool:
    return head == ELF_MAGIC or head.startswith((b"__CL", b"CCOB", b"\x50\xed\x55\xba", b"MZ"))


def _small_member(fh, info: zipfile.ZipInfo, budget) -> bytes | None:
    """A stored or deflated member of at most SPOOL_ABOVE bytes, or None when it is not GPU
    code. Its compressed bytes are read after its local header, as zipfile does, and
    inflated with an output limit (and by ISA-L when installed): on a wheel of cubins this
    is the largest cost."""
    fh.seek(info.header_offset)
    header = fh.read(LOCAL_HEADER.size)
    if len(header) != LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
        raise FormatError("cannot extract: bad local file header")
    name_size, extra_size = LOCAL_HEADER.unpack(header)[1:]
    start = info.header_offset + LOCAL_HEADER.size + name_size + extra_size
    if start + info.compress_size > fh.seek(0, os.SEEK_END):  # before any allocation
        raise FormatError("cannot extract: member is truncated")
    fh.seek(start)
    if info.compress_type == zipfile.ZIP_STORED:
        if info.compress_size != info.file_size:
            raise FormatError("member size differs from the archive directory")
        head = fh.read(4)
        if not _gpu_code(head):
            return None
        data = head + fh.read(info.file_size - len(head))
        if len(data) != info.file_size:
            raise FormatError("cannot extract: member is truncated")
    else:
        raw = fh.read(info.compress_size)
        if len(raw) != info.compress_size:
            raise FormatError("cannot extract: member is truncated")
        inflate = _INFLATE.decompressobj(-15)
        head = inflate.decompress(raw, 4)
        if not _gpu_code(head):
            return None
        data = head + inflate.decompress(inflate.unconsumed_tail, info.file_size + 1 - len(head))
        if len(data) != info.file_size:
            raise FormatError("member size differs from the archive directory "
                              "(corrupted or a zip bomb)")
    budget.left -= info.file_size
    if zlib.crc32(data) != info.CRC:
        raise FormatError(f"cannot extract: bad CRC-32 for {info.filename!r}")
    return data


def _read_group(archive: zipfile.ZipFile, members: list[zipfile.ZipInfo], display: str,
                options, result: ReadResult, budget) -> None:
    from occlint.readers.span import Span
    from occlint.readers.walker import ContainerWalker

    limit = budget.left
    for info in members:
        member = f"{display}!/{info.filename}"
        reader = ContainerWalker(member, options, result, budget)
        try:
            if info.flag_bits & 0x1:  # zipfile raises RuntimeError: password required
                raise FormatError("member is encrypted")
            if info.compress_type in UNBOUNDED_METHODS:
                raise FormatError(f"member is compressed with "
                                  f"{UNBOUNDED_METHODS[info.compress_type]}, which occlint does "
                                  "not read (wheels use deflate)")
            if info.file_size > MAX_MEMBER_BYTES:
                raise FormatError(f"member of {info.file_size} bytes exceeds the "
                                  f"{MAX_MEMBER_BYTES}-byte limit")
            if info.file_size > budget.left:
                raise FormatError(f"the archive's members decompress to more than {limit} "
                                  "bytes in all (a zip bomb?)")
            if info.file_size <= SPOOL_ABOVE and info.compress_type in (zipfile.ZIP_STORED,
                                                                        zipfile.ZIP_DEFLATED):
                data = _small_member(archive.fp, info, budget)
                if data is not None:
                    reader.read(Span(data), None, 0)
                continue
            with archive.open(info) as stream:
                head = stream.read(4)
                if not _gpu_code(head):
                    continue  # not GPU code (data files with GPU-like names)
                budget.left -= info.file_size
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
                            close_map(mm)
        except NoGpuCode:  # a host library beside the kernels: not an error in an archive
            result.skipped += 1
        except FormatError as exc:
            reader.error(str(exc), None)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError,
                NotImplementedError, *_STREAM_ERRORS) as exc:
            reader.error(f"cannot extract: {exc}", None)
