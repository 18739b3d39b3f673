"""Read any input path into kernels: sniff the format, unwrap containers, collect errors.

Containers nest: a host ELF holds ``.hip_fatbin`` sections with (compressed) offload bundles
back to back; a bundle holds code objects. Files are memory-mapped and walked section by
section, so a 1 GB library is never read whole. Every problem becomes an
:class:`InputError` (one line for the user) and reading goes on with the next part.
"""

from __future__ import annotations

import contextlib
import hashlib
import mmap
import os
from dataclasses import dataclass, field
from pathlib import Path

from occlint.errors import FormatError, NoGpuCode
from occlint.model.kernel import Artifact, InputError, ReadResult
from occlint.readers.span import Span

ELF_MAGIC = b"\x7fELF"
BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
CCOB_MAGIC = b"CCOB"
FATBIN_MAGIC = b"\x50\xed\x55\xba"
BITCODE_MAGICS = (b"BC\xc0\xde", b"\xde\xc0\x17\x0b")
OFFLOAD_BINARY_MAGIC = b"\x10\xff\x10\xad"
ZIP_MAGIC = b"PK\x03\x04"
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


def read_head(path: Path) -> bytes | None:
    """The first 64 bytes of a file (None when it cannot be read)."""
    try:  # os-level calls: this runs for every file of a directory tree
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        try:
            return os.read(fd, 64)
        finally:
            os.close(fd)
    except OSError:
        return None


def looks_like_gpu_binary(path: Path, head: bytes | None = None) -> bool:
    """Cheap test used when recursing into directories: a known magic at the start
    (``head``: the file's first 64 bytes when the caller has read them)."""
    return sniff(path, head) == "gpu"


def sniff(path: Path, head: bytes | None = None) -> str:
    """What a directory walk makes of a file, cheaply: ``gpu`` (read it), ``host`` (a host
    ELF without GPU code: skipped and counted) or ``other`` (not GPU code of any kind).
    ``head``: the file's first 64 bytes when the caller has read them."""
    if head is None:
        head = read_head(path)
    if head is None:
        return "gpu"  # let the reader report the problem
    if head.startswith((BUNDLE_MAGIC, CCOB_MAGIC, FATBIN_MAGIC)):
        return "gpu"
    if head.startswith(ELF_MAGIC) and len(head) >= 20:
        machine = int.from_bytes(head[18:20], "little" if head[5] == 1 else "big")
        if machine in (EM_AMDGPU, EM_CUDA):
            return "gpu"
        return _sniff_host_elf(path)
    if head.startswith(ZIP_MAGIC):
        return "gpu" if path.suffix in ARCHIVE_SUFFIXES else "other"
    if head.startswith(b"MZ") and path.suffix.lower() in (".dll", ".exe", ".pyd"):
        return _sniff_pe(path)
    return "gpu" if path.suffix in (".hsaco", ".co", ".cubin", ".fatbin", ".hipfb") else "other"


ARCHIVE_SUFFIXES = (".whl", ".zip", ".pt2")


def _sniff_pe(path: Path) -> str:
    """``gpu`` for a PE file with a section named for GPU code, or a data section holding a
    container magic or a device ELF image (the reader validates them); ``host`` for another
    PE file; ``other`` when it is not one."""
    from occlint.readers.embedded import ScanBudget, find_images
    from occlint.readers.host import SCAN_MAGICS
    from occlint.readers.pe import GPU_SECTIONS, WRAPPER_SECTIONS, is_pe, pe_sections

    try:
        with path.open("rb") as fh:
            mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            try:
                span = Span(mm)
                if not is_pe(span):
                    return "other"
                for s in pe_sections(span):
                    if s.name in GPU_SECTIONS:
                        return "gpu"
                    if s.data and s.name not in WRAPPER_SECTIONS:
                        data = span.sub(s.offset, s.size)
                        if any(data.find(magic) >= 0 for magic in SCAN_MAGICS) or \
                                any(True for _ in find_images(data, [], ScanBudget(len(span)))):
                            return "gpu"
                return "host"
            finally:
                _close(mm)
    except (OSError, ValueError, FormatError):
        return "other"


def _sniff_host_elf(path: Path) -> str:
    """``gpu`` when a host ELF has a section named for GPU code, a data section that holds
    a container magic (the reader validates it) or a device ELF image; ``host`` when not;
    ``other`` when its section headers cannot be read."""
    from occlint.readers.embedded import images_in
    from occlint.readers.host import gpu_sections, section_table

    try:
        with path.open("rb") as fh:
            mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            try:
                span = Span(mm)
                table = section_table(span)
                found = any(True for _ in gpu_sections(span, table)) or \
                    any(True for _ in images_in(span, table, []))
            finally:
                _close(mm)
    except (OSError, ValueError, FormatError):  # not something we recognise
        return "other"
    return "gpu" if found else "host"


AMD_SECTIONS = (".hip_fatbin", ".llvm.offloading")
NVIDIA_SECTIONS = (".nv_fatbin", "__nv_relfatbin")
GPU_SECTIONS = AMD_SECTIONS + NVIDIA_SECTIONS
SCANNED_SECTIONS = (".data", ".rodata", ".data.rel.ro", ".nvFatBinSegment")


def _read_mapped(fh, display: str, options: ReadOptions, result: ReadResult,
                 hash_it: bool, group: int | None = None) -> None:
    mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        _read_buffer(mm, fh, display, options, result, hash_it, group)
    finally:
        _close(mm)


def _read_buffer(buf, fh, display: str, options: ReadOptions, result: ReadResult,
                 hash_it: bool, group: int | None = None) -> None:
    """Read a whole input held in ``buf`` (``fh``: the same bytes as a file, for zip);
    ``group``: only that member group of a zip archive (occlint.readers.archive)."""
    if hash_it:
        result.sha256 = hashlib.sha256(buf).hexdigest()
    if buf[:4] == ZIP_MAGIC:
        from occlint.readers.archive import read_archive

        read_archive(fh, display, options, result, group)
    elif not group:  # (a group of a file that is no longer an archive: nothing)
        _Reader(display, options, result).read(Span(buf), None, 0)


def read_bytes(data: bytes, display: str, options: ReadOptions) -> ReadResult:
    """:func:`read_path` for an input already in memory (no Triton sidecar lookup).

    The fuzzer (benchmarks/fuzz.py) and tests use it; problems end up in ``errors``."""
    import io

    result = ReadResult(path=display, size=len(data))
    try:
        if not data:
            raise FormatError("empty file")
        _read_buffer(data, io.BytesIO(data), display, options, result, options.hash_inputs)
    except FormatError as exc:
        result.errors.append(InputError(display, str(exc)))
    return result


def read_path(path: Path, display: str, options: ReadOptions,
              group: int | None = None, listed: bool = True) -> ReadResult:
    """Read one file. ``group``: read only that member group of a zip archive (a worker's
    share of a large wheel; the other groups' workers neither hash the file nor report
    what is wrong with the archive as a whole). ``listed``: named on the command line, where
    a file without GPU code is an error; else (found in a directory) ``no_gpu_code`` says
    so, and the run counts it as skipped."""
    result = ReadResult(path=display)
    try:
        with path.open("rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            result.size = size
            if size == 0:
                raise FormatError("empty file")
            _read_mapped(fh, display, options, result, options.hash_inputs and not group,
                         group)
        if result.kernels:
            from occlint.readers.sidecars import triton_hint

            hint = triton_hint(path)
            if hint:
                for kernel in result.kernels:
                    if hint.get("kernel") in (None, kernel.name):
                        kernel.launch_hint = hint
            from occlint.readers import aoti

            hints = aoti.directory_hints(path)  # a file of an extracted AOTInductor package
            if hints:
                aoti.apply(result.kernels, hints)
    except NoGpuCode as exc:
        if listed:
            result.errors.append(InputError(display, str(exc)))
        else:
            result.no_gpu_code = True
    except FormatError as exc:
        result.errors.append(InputError(display, str(exc)))
    except IsADirectoryError:
        result.errors.append(InputError(display, "is a directory"))
    except PermissionError:
        result.errors.append(InputError(display, "permission denied"))
    except FileNotFoundError:
        result.errors.append(InputError(display, "no such file"))
    except OSError as exc:
        result.errors.append(InputError(display, f"cannot read: {exc.strerror or exc}"))
    return result


def _needs_whole(head: Span) -> bool:
    """Would reading a container entry that starts with ``head`` need all of its bytes? (No
    for what its first bytes already tell: bitcode, an ELF of another machine, no GPU code.)"""
    if head.startswith(ELF_MAGIC):
        return len(head) < 20 or head.bytes(5, 1) != b"\x01" or \
            int.from_bytes(head.bytes(18, 2), "little") in (EM_AMDGPU, EM_CUDA)
    return any(head.startswith(magic) for magic in (BUNDLE_MAGIC, CCOB_MAGIC, FATBIN_MAGIC,
                                                    OFFLOAD_BINARY_MAGIC))


def _close(mm: mmap.mmap) -> None:
    with contextlib.suppress(BufferError):  # a view still referenced: the GC unmaps it
        mm.close()


def _join(prefix: str | None, part: str) -> str:
    return f"{prefix}/{part}" if prefix else part


class Budget:
    """Bytes that one input may still decompress, all its streams together (zip members,
    compressed bundles, compressed fatbin entries): BUDGET_RATIO times its size, at least
    ``max_decompressed``. Without it many streams, or many bundle entries pointing at one
    stream, would each get the whole per-stream cap."""

    __slots__ = ("left",)

    def __init__(self, input_size: int, options: ReadOptions):
        self.left = max(options.max_decompressed, BUDGET_RATIO * input_size)


class _Reader:
    """Walks one input; appends kernels, artifacts and errors to ``result``."""

    def __init__(self, file: str, options: ReadOptions, result: ReadResult,
                 budget: Budget | None = None):
        self.file = file
        self.options = options
        self.result = result
        self.budget = budget  # set by the first read() unless shared (archive members)
        # byte ranges of the input read as bundles or fatbins found in data sections: the
        # scan for embedded device images leaves them alone (their cubins are theirs)
        self.claimed: list[tuple[int, int]] = []

    def claim(self, span: Span, offset: int, size: int) -> None:
        self.claimed.append((span.start + offset, span.start + offset + max(size, 1)))

    def error(self, message: str, entry: str | None) -> None:
        errors = self.result.errors
        if len(errors) < MAX_ERRORS:
            errors.append(InputError(self.file, message, entry))
        elif len(errors) == MAX_ERRORS:
            errors.append(InputError(self.file, f"more than {MAX_ERRORS} errors: the others "
                                                "are not reported"))

    def decompression_limit(self) -> int:
        """The most the next compressed stream may decompress to."""
        return min(self.options.max_decompressed, self.budget.left)

    def decompressing(self, declared: int, limit: int) -> None:
        """Charge a stream's declared size to the budget before it is decompressed (the
        decompressor stops there; a stream that turns out corrupted cost as much)."""
        if declared <= limit:  # else the reader refuses it before any work
            self.budget.left -= declared

    # -- dispatch ---------------------------------------------------------------------------
    def read(self, span: Span, entry: str | None, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise FormatError("containers nested too deeply (self-referencing bundle?)")
        if self.budget is None:
            self.budget = Budget(len(span), self.options)
        if span.startswith(ELF_MAGIC):
            machine = int.from_bytes(span.bytes(18, 2, "ELF header"), "little") \
                if len(span) >= 20 and span.bytes(5, 1) == b"\x01" else None
            if machine == EM_AMDGPU:
                self.read_amd_code_object(span, entry)
            elif machine == EM_CUDA:
                self.read_cubin(span, entry)
            elif depth == 0:
                self.read_host_elf(span)
            else:
                raise FormatError(f"container entry is an ELF for machine {machine}, "
                                  "not GPU code")
        elif span.startswith(BUNDLE_MAGIC) or span.startswith(CCOB_MAGIC):
            self.read_bundles(span, entry, depth, strict=True)
        elif span.startswith(FATBIN_MAGIC):
            self.read_fatbins(span, entry, depth, strict=True)
        elif any(span.startswith(magic) for magic in BITCODE_MAGICS):
            self.result.artifacts.append(Artifact(
                self.file, entry, "bitcode", None,
                "LLVM bitcode (-fgpu-rdc or LTO), no resource data until it is linked"))
        elif span.startswith(OFFLOAD_BINARY_MAGIC):
            self.read_offload_binary(span, entry)
        elif span.startswith(ZIP_MAGIC):
            raise FormatError("zip archive nested inside another container")
        elif depth == 0 and span.startswith(b"MZ"):
            self.read_pe(span)
        else:
            raise FormatError("not a GPU binary (no AMDGPU/CUDA ELF, offload bundle or "
                              "fatbin found)")

    # -- AMD --------------------------------------------------------------------------------
    def read_amd_code_object(self, span: Span, entry: str | None) -> None:
        from occlint.readers.amd.code_object import AmdCodeObject

        code_object = AmdCodeObject(span, self.file, entry)
        if not self._wanted(code_object.processor):
            return
        kernels = code_object.kernels()
        _locate(span, kernels)
        if not kernels:
            self.result.artifacts.append(Artifact(
                self.file, entry, "empty", code_object.target_id, "code object has no kernels"))
        self.result.kernels.extend(kernels)

    def read_bundles(self, span: Span, prefix: str | None, depth: int, strict: bool) -> None:
        """Walk (compressed) offload bundles stored back to back in ``span``."""
        from occlint.readers.amd.bundle import CompressedBundle, OffloadBundle

        pos, ordinal = 0, 0
        found: dict[bytes, int | None] = {BUNDLE_MAGIC: -1, CCOB_MAGIC: -1}  # None: no more
        while pos < len(span):
            for magic, at in found.items():  # search again only once passed: linear time
                if at is not None and at < pos:
                    at = span.find(magic, pos)
                    found[magic] = at if at >= 0 else None
            starts = [p for p in found.values() if p is not None]
            if not starts:
                break
            start = min(starts)
            label = _join(prefix, f"bundle{ordinal}") if ordinal or not strict else prefix
            rest = span.sub(start, len(span) - start)
            try:
                if rest.startswith(CCOB_MAGIC):
                    ccob = CompressedBundle.parse(rest)
                    limit = self.decompression_limit()
                    self.decompressing(ccob.uncompressed_size, limit)
                    size = self.read_compressed_bundle(ccob, rest, limit, label, depth)
                else:
                    bundle = OffloadBundle(rest)
                    size = bundle.extent
                    self.read_bundle_entries(bundle, label, depth)
            except FormatError as exc:
                if strict:
                    self.error(str(exc), label)
                pos = start + 1  # a stray or broken magic: look for the next one
                continue
            self.claim(span, start, size)
            pos = start + max(size, 1)
            ordinal += 1

    def read_bundle_entries(self, bundle, prefix: str | None, depth: int) -> None:
        device_entries = [e for e in bundle.entries if e.kind != "host" and e.size]
        chosen = self._select(device_entries, lambda e: e.processor)
        for item in chosen:
            name = _join(prefix, item.id)
            try:
                self.read(bundle.payload(item), name, depth + 1)
            except FormatError as exc:
                self.error(str(exc), name)
        self._no_device_code(bundle.entries, device_entries, prefix)

    def _no_device_code(self, entries: list, device_entries: list, prefix: str | None) -> None:
        if not device_entries:
            what = "no entries" if not entries else "no device code (host entry only)"
            self.error(f"offload bundle has {what}", prefix)

    def read_compressed_bundle(self, ccob, span: Span, limit: int, label: str | None,
                               depth: int) -> int:
        from occlint.readers.amd.stream import read_compressed_bundle

        return read_compressed_bundle(self, ccob, span, limit, label, depth)

    def read_offload_binary(self, span: Span, entry: str | None) -> None:
        from occlint.readers.amd.offload_binary import read_offload_binary

        for item in read_offload_binary(span):
            name = _join(entry, f"{item.kind}-{item.triple}-{item.arch}".strip("-"))
            if item.image.startswith(ELF_MAGIC):
                try:
                    self.read(item.image, name, MAX_DEPTH)
                except FormatError as exc:
                    self.error(str(exc), name)
            else:
                self.result.artifacts.append(Artifact(
                    self.file, name, "bitcode", item.arch or None,
                    "LLVM bitcode (-fgpu-rdc, new offload driver), no resource data until "
                    "it is linked"))

    # -- NVIDIA -----------------------------------------------------------------------------
    def read_cubin(self, span: Span, entry: str | None) -> None:
        from occlint.readers.nvidia import read_cubin

        kernels = read_cubin(span, self.file, entry, self.options)
        _locate(span, kernels)
        if not kernels and entry is None:  # a bare cubin without kernels
            self.result.artifacts.append(Artifact(
                self.file, entry, "empty", None,
                "cubin has no kernels (a device-link stub, or device functions only)"))
        self.result.kernels.extend(kernels)

    def read_fatbins(self, span: Span, prefix: str | None, depth: int, strict: bool) -> None:
        from occlint.readers.nvidia import read_fatbins

        read_fatbins(self, span, prefix, depth, strict)

    # -- host executables and libraries -------------------------------------------------------
    def read_host_elf(self, span: Span) -> None:
        from occlint.readers.host import gpu_sections, section_table

        found = False
        errors_before = len(self.result.errors)  # (archive members share one result)
        table = section_table(span)
        sections = list(gpu_sections(span, table))
        has_linked_fatbin = any(name == ".nv_fatbin" for name, _, _ in sections)
        for name, section, scanned in sections:
            before = len(self.result.kernels) + len(self.result.artifacts)
            if name == "__nv_relfatbin" and has_linked_fatbin:
                # -rdc executables keep each TU's relocatable fatbin next to the linked one;
                # the linked cubins in .nv_fatbin carry the final resources (as cuobjdump).
                continue
            if name == ".llvm.offloading":
                try:
                    self.read_offload_binary(section, name)
                except FormatError as exc:
                    self.error(str(exc), name)
            elif name in NVIDIA_SECTIONS:
                self.read_fatbins(section, name, 1, strict=True)
            elif scanned:
                self.read_bundles(section, name, 1, strict=False)
                self.read_fatbins(section, name, 1, strict=False)
            elif name.startswith(BUNDLE_MAGIC.decode()):
                # Objects bundled with --type=o keep each entry in its own section named
                # __CLANG_OFFLOAD_BUNDLE__<entry id>; the section holds the payload itself.
                entry_id = name[len(BUNDLE_MAGIC.decode()):]
                if not entry_id.startswith("host-"):
                    try:
                        self.read(section, entry_id, 1)
                    except FormatError as exc:
                        self.error(str(exc), entry_id)
            else:  # .hip_fatbin
                self.read_bundles(section, name, 1, strict=True)
            found = found or not scanned
            if len(self.result.kernels) + len(self.result.artifacts) > before:
                found = True
        if self.read_embedded_images(span, table):
            found = True
        if not found and len(self.result.errors) == errors_before:
            raise NoGpuCode("no GPU code found in this ELF (no .hip_fatbin, .nv_fatbin, "
                            "__nv_relfatbin, embedded fatbin or device ELF image)")

    def read_embedded_images(self, span: Span, table: list) -> bool:
        from occlint.readers.embedded import read_embedded

        return read_embedded(self, span, table)

    # -- Windows PE/COFF ------------------------------------------------------------------------
    def read_pe(self, span: Span) -> None:
        from occlint.readers.pe import read_pe

        read_pe(self, span)

    # -- selection ----------------------------------------------------------------------------
    def _wanted(self, processor: str) -> bool:
        targets = self.options.targets
        return not targets or any(_matches(processor, t) for t in targets)

    def _select(self, items: list, processor_of) -> list:
        """--target filter, then prefer the entries that match a --device architecture."""
        targets = self.options.targets
        if targets:
            items = [i for i in items if any(_matches(processor_of(i), t) for t in targets)]
        prefer = self.options.prefer
        if prefer:
            matching = [i for i in items if any(_matches(processor_of(i), p) for p in prefer)]
            if matching:
                return matching
        return items


def _locate(span: Span, kernels: list) -> None:
    """Kernel source lines from debug information, when the ELF carries it."""
    if not kernels or span.find(b".debug_line\x00") < 0:
        return
    from occlint.readers.debuginfo import MAX_DEBUG_BYTES, kernel_lines

    if len(span) > MAX_DEBUG_BYTES:
        return
    lines = kernel_lines(span.view())
    for k in kernels:
        if k.name in lines:
            k.source = lines[k.name]


def _matches(processor: str, wanted: str) -> bool:
    """Does a container entry's processor satisfy a --target / device architecture?"""
    from occlint.devices.db import shipped_db

    processor, wanted = processor.split(":")[0].lower(), wanted.split(":")[0].lower()
    if processor == wanted:
        return True
    members = shipped_db().amd_generics.get(processor)
    return bool(members and wanted in members)
