"""The container walker: one input's bytes -> kernels, artifacts and errors.

Containers nest: a host ELF holds ``.hip_fatbin`` sections with (compressed) offload bundles
back to back; a bundle holds code objects; a fatbin holds cubins. :class:`ContainerWalker`
dispatches on each part's magic to the reader of that structure (occlint.readers.amd,
.nvidia, .host, .pe, .embedded), which may hand nested parts back to it. Every problem
becomes an :class:`InputError` and the walk goes on with the next part.
"""

from __future__ import annotations

from occlint.errors import FormatError, NoGpuCode
from occlint.model.kernel import Artifact, InputError, ReadResult
from occlint.readers.debuginfo import locate
from occlint.readers.formats import (
    BITCODE_MAGICS,
    BUNDLE_MAGIC,
    CCOB_MAGIC,
    ELF_MAGIC,
    EM_AMDGPU,
    EM_CUDA,
    FATBIN_MAGIC,
    GZIP_MAGIC,
    MAX_DEPTH,
    MAX_ERRORS,
    OFFLOAD_BINARY_MAGIC,
    ZIP_MAGIC,
    Budget,
    ReadOptions,
    join_entry,
)
from occlint.readers.span import Span

SEARCH_WINDOW = 32 << 20  # bytes searched for a magic before their pages are released


def _find_releasing(span: Span, magic: bytes, pos: int, end: int | None = None) -> int:
    """``span.find(magic, pos)`` for a magic starting before ``end`` (the span's end by
    default), window by window, each window's pages released once searched: one search can
    pass a whole 1 GB library, which would then stay resident."""
    end = len(span) if end is None else min(end, len(span))
    while pos < end:
        window = min(SEARCH_WINDOW, end - pos)
        # the window and the bytes a magic starting in it may reach past its end
        at = span.sub(pos, min(window + len(magic) - 1, len(span) - pos)).find(magic)
        if at >= 0:
            span.release(pos, at)
            return pos + at
        span.release(pos, window)
        pos += window
    return -1


class _BundleStarts:
    """Where the next offload bundle or compressed bundle starts in a span. The compressed
    magic is searched for only up to the next bundle (not through the 1 GB of an uncompressed
    library, whose bundles' bytes the walk then faults in a second time), and no stretch is
    searched twice for one magic: what :meth:`first` returns is the first start of either
    at ``pos`` or after, as a search of each magic from ``pos`` to the span's end gives."""

    def __init__(self, span: Span):
        self.span = span
        # per magic: a start at or after the last query (-1: unknown; None: none to the end)
        self.next: dict[bytes, int | None] = {BUNDLE_MAGIC: -1, CCOB_MAGIC: -1}
        self.clear = {BUNDLE_MAGIC: 0, CCOB_MAGIC: 0}  # none starts from the query to here

    def first(self, pos: int) -> int | None:
        bundle = self._find(BUNDLE_MAGIC, pos, len(self.span))
        compressed = self._find(CCOB_MAGIC, pos, len(self.span) if bundle is None else bundle)
        starts = [p for p in (bundle, compressed) if p is not None]
        return min(starts) if starts else None

    def _find(self, magic: bytes, pos: int, end: int) -> int | None:
        """The first start of ``magic`` in [pos, end), or None."""
        at = self.next[magic]
        if at is None:
            return None
        if at >= pos:
            return at if at < end else None
        start = max(pos, self.clear[magic])
        if start >= end:
            return None
        at = _find_releasing(self.span, magic, start, end)
        if at < 0:
            self.clear[magic] = end
            self.next[magic] = None if end >= len(self.span) else -1
            return None
        self.next[magic] = at
        return at


def _foreign(entry_id: str) -> bool:
    """Whether an offload entry (``sycl-spir64_gen``, ``openmp-spir64``) holds another
    vendor's code: SYCL's and SPIR-V's, for Intel GPUs."""
    kind, _, triple = entry_id.partition("-")
    return kind == "sycl" or triple.startswith("spir")


class ContainerWalker:
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
        elif depth == 0 and (line := _text_line(span)) is not None:
            raise FormatError("a text file, not a GPU binary, nor a source, PTX or profiler "
                              f"trace occlint reads (it begins: {line})")
        elif depth == 0 and span.startswith(GZIP_MAGIC):  # a trace would have been read
            raise FormatError("a gzip file that does not decompress to a profiler trace "
                              "occlint reads (damaged, cut short, or another format)")
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
        locate(code_object.elf, kernels)
        if not kernels:
            self.result.artifacts.append(Artifact(
                self.file, entry, "empty", code_object.target_id, "code object has no kernels"))
        self.result.kernels.extend(kernels)

    def read_bundles(self, span: Span, prefix: str | None, depth: int, strict: bool) -> None:
        """Walk (compressed) offload bundles stored back to back in ``span``."""
        from occlint.readers.amd.bundle import CompressedBundle, OffloadBundle

        pos, ordinal = 0, 0
        starts = _BundleStarts(span)
        while pos < len(span):
            start = starts.first(pos)
            if start is None:
                break
            label = join_entry(prefix, f"bundle{ordinal}") if ordinal or not strict else prefix
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
            span.release(start, size)  # read: its pages need not stay resident
            pos = start + max(size, 1)
            ordinal += 1

    def _foreign_code(self, entry: str | None, what: str) -> None:
        self.result.artifacts.append(Artifact(
            self.file, entry, "foreign", None,
            f"SYCL / SPIR-V device code ({what}, Intel GPUs): occlint reads AMD and NVIDIA "
            "code"))

    def device_entries(self, entries: list, prefix: str | None) -> list:
        """A bundle's device entries occlint reads: not the host's, and not another
        vendor's (SYCL's SPIR-V for Intel GPUs: an artifact, said in the JSON)."""
        out = []
        for e in entries:
            if e.kind == "host" or not e.size:
                continue
            if _foreign(e.id):
                self._foreign_code(join_entry(prefix, e.id), e.id)
                continue
            out.append(e)
        return out

    def read_bundle_entries(self, bundle, prefix: str | None, depth: int) -> None:
        device_entries = self.device_entries(bundle.entries, prefix)
        chosen = self._select(device_entries, lambda e: e.processor)
        for item in chosen:
            name = join_entry(prefix, item.id)
            payload = bundle.payload(item)
            try:
                self.read(payload, name, depth + 1)
            except FormatError as exc:
                self.error(str(exc), name)
            payload.release(0, len(payload))
        self._no_device_code(bundle.entries, device_entries, prefix)

    def _no_device_code(self, entries: list, device_entries: list, prefix: str | None) -> None:
        if not device_entries and not any(_foreign(e.id) for e in entries):
            what = "no entries" if not entries else "no device code (host entry only)"
            self.error(f"offload bundle has {what}", prefix)

    def read_compressed_bundle(self, ccob, span: Span, limit: int, label: str | None,
                               depth: int) -> int:
        from occlint.readers.amd.stream import read_compressed_bundle

        return read_compressed_bundle(self, ccob, span, limit, label, depth)

    def read_offload_binary(self, span: Span, entry: str | None) -> None:
        from occlint.readers.amd.offload_binary import read_offload_binary

        for item in read_offload_binary(span):
            name = join_entry(entry, f"{item.kind}-{item.triple}-{item.arch}".strip("-"))
            if _foreign(f"{item.kind}-{item.triple}"):
                self._foreign_code(name, f"{item.kind}-{item.triple}")
            elif item.image.startswith(ELF_MAGIC):
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
            elif name in (".nv_fatbin", "__nv_relfatbin"):
                self.read_fatbins(section, name, 1, strict=True)
            elif scanned:
                self.read_bundles(section, name, 1, strict=False)
                self.read_fatbins(section, name, 1, strict=False)
            elif name.startswith(BUNDLE_MAGIC.decode()):
                # Objects bundled with --type=o keep each entry in its own section named
                # __CLANG_OFFLOAD_BUNDLE__<entry id>; the section holds the payload itself.
                entry_id = name[len(BUNDLE_MAGIC.decode()):]
                if _foreign(entry_id):
                    self._foreign_code(entry_id, entry_id)
                elif not entry_id.startswith("host-"):
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


def _matches(processor: str, wanted: str) -> bool:
    """Does a container entry's processor satisfy a --target / device architecture?"""
    from occlint.devices.db import shipped_db

    processor, wanted = processor.split(":")[0].lower(), wanted.split(":")[0].lower()
    if processor == wanted:
        return True
    members = shipped_db().amd_generics.get(processor)
    return bool(members and wanted in members)


def _text_line(span: Span) -> str | None:
    """The first line of a file that is text (its first KiB printable UTF-8), shown
    escaped and cut to 60 characters; None for binary data."""
    head = span.bytes(0, min(len(span), 1024), "file head")
    for cut in range(4 if len(head) == 1024 else 1):  # a character the KiB cuts short
        try:
            text = head[:len(head) - cut].decode("utf-8")
            break
        except UnicodeDecodeError:
            continue
    else:
        return None
    text = text.lstrip("\ufeff")
    if not text.strip() or any(not (c.isprintable() or c in "\t\r\n") for c in text):
        return None
    line = text.strip().splitlines()[0]
    return ascii(line[:60] + ("..." if len(line) > 60 else ""))
