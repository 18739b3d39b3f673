"""NVIDIA readers: cubins (:mod:`.cubin`) and fatbin containers (:mod:`.fatbin`).

The loader (occlint.readers.loader) calls the two functions of this module:

* :func:`read_cubin` for a cubin or relocatable device object (ELF, EM_CUDA);
* :func:`read_fatbins` for fatbin containers stored back to back in a span (a bare
  ``nvcc -fatbin`` file, a host ELF's ``.nv_fatbin`` / ``__nv_relfatbin`` section, or a
  scanned ``.data`` / ``.rodata`` section, where a magic number is only a candidate).

Entry names: ``<prefix>/fatbin<N>/<arch>`` where N counts the containers of the span from 0
(``fatbin<N>/`` is left out when a bare fatbin file or a GPU section holds exactly one
container, starting at its first byte) and ``<arch>`` is ``sm_90a`` (SASS), ``compute_90``
(PTX) or ``lto_90`` (LTO-IR), with ``#2``, ``#3``... appended to repeated archs.

Which entries are read:

1. ``--target`` keeps the ELF entries whose SM is named (``sm_90`` keeps sm_90, sm_90a and
   sm_90f; ``sm_90a`` only sm_90a);
2. with ``--device`` architectures (``ReadOptions.prefer``), for each device the ELF entries
   the driver would load: the highest SM that runs on it (``cubin_runs_on``: same major,
   minor not above the device's; 'a' only on its exact compute capability), an 'a' entry
   before an 'f' one before a plain one of the same SM. When no entry runs on any of the
   devices, all are read (the analysis then reports the mismatch);
3. a PTX entry (``compute_XX``) is reported as an ``Artifact`` (kind "ptx", with the names of
   its ``.entry`` kernels) only when it is the code the driver would JIT-compile: with
   devices or targets, when no ELF entry of the container runs on one of them and the PTX
   can be compiled for it (device/target SM >= XX; 'a' PTX only for exactly XX, 'f' PTX
   only within XX's major); without either, when no ELF entry of the container has XX's
   major version and an SM >= XX (so the usual ``code=[sm_90,compute_90]`` pair is quiet,
   while a PTX-only build or PTX for newer GPUs than any SASS is reported);
4. LTO-IR entries are reported as ``Artifact`` kind "lto-ir".
"""

from __future__ import annotations

import re
import struct

from occlint.devices.models import cubin_runs_on
from occlint.errors import FormatError
from occlint.model.kernel import Artifact, Kernel
from occlint.readers.debuginfo import locate
from occlint.readers.formats import ELF_MAGIC, MAX_DEPTH, MAX_PTX_BYTES, join_entry
from occlint.readers.nvidia.cubin import NvCubin
from occlint.readers.nvidia.fatbin import (
    FATBIN_MAGIC_BYTES,
    KIND_ELF,
    KIND_LTO_IR,
    KIND_PTX,
    FatbinContainer,
    FatbinEntry,
    decompress,
    parse_entry,
)
from occlint.readers.span import Span

__all__ = ["read_cubin", "read_fatbins"]

MAX_BROKEN = 1024  # broken containers of one span kept for reporting (memory stays bounded;
# the reader reports 1000 errors per input, then one line for the rest)
PTX_MESSAGE = "PTX only: the driver JIT-compiles it; no register data"
_SM = re.compile(r"(?:sm|compute|lto)_(\d+)([af]?)")
_PTX_ENTRY = re.compile(rb"\.entry\s+([^\s(]+)")
_VARIANT_RANK = {"a": 2, "f": 1, "": 0}
# Exceptions that a hostile input could still provoke in decoding code; turned into
# FormatError so that the user sees one line, never a traceback.
_DECODE_ERRORS = (struct.error, ValueError, IndexError, KeyError, OverflowError,
                  UnicodeDecodeError)


def read_cubin(span: Span, file: str, entry: str | None, options) -> list[Kernel]:
    """Kernels of a cubin (ET_EXEC) or relocatable device object (ET_REL).

    Device-link stubs (no entry functions) give []. ``options.targets`` applies: a cubin for
    an SM that is not named gives []. Kernels get their source lines when the cubin carries
    line information (``-lineinfo``)."""
    return _read_cubin(span, file, entry, options, "", with_lines=True)


def _read_cubin(span: Span, file: str, entry: str | None, options, variant: str,
                with_lines: bool = False) -> list[Kernel]:
    try:
        cubin = NvCubin(span, file, entry, variant)
        targets = getattr(options, "targets", ())
        if targets and not any(_target_matches(cubin.arch, t) for t in targets):
            return []
        kernels = cubin.kernels()
        if with_lines:
            locate(cubin.elf, kernels)
        return kernels
    except _DECODE_ERRORS as exc:
        raise FormatError(f"malformed cubin: {exc}") from None


# -- selection --------------------------------------------------------------------------------
def _parse_sm(name: str) -> tuple[int, str] | None:
    match = _SM.fullmatch(name.split(":")[0].strip().lower())
    return (int(match[1]), match[2]) if match else None


def _target_matches(arch: str, target: str) -> bool:
    have, want = _parse_sm(arch), _parse_sm(target)
    if have is None or want is None or not target.lower().startswith("sm_"):
        return False
    return have[0] == want[0] and (not want[1] or have[1] == want[1])


def _runs_on(arch: str, device_sm: int) -> bool:
    return cubin_runs_on(arch, divmod(device_sm, 10))


def _ptx_jits_for(sm: int, variant: str, device_sm: int) -> bool:
    if variant == "a":
        return device_sm == sm
    if variant == "f":
        return device_sm // 10 == sm // 10 and device_sm >= sm
    return device_sm >= sm


def _consumers(options) -> list[int]:
    """SMs the user asked about: --device architectures, else --target SMs."""
    for names in (getattr(options, "prefer", ()), getattr(options, "targets", ())):
        sms = [p[0] for p in (_parse_sm(n) for n in names if n.lower().startswith("sm_")) if p]
        if sms:
            return sms
    return []


def select_elf(entries: list[FatbinEntry], options) -> list[FatbinEntry]:
    """The ELF entries to read (see the module docstring)."""
    targets = getattr(options, "targets", ())
    if targets:
        entries = [e for e in entries if any(_target_matches(e.arch, t) for t in targets)]
    prefer = [p[0] for p in (_parse_sm(n) for n in getattr(options, "prefer", ())
                             if n.lower().startswith("sm_")) if p]
    if not prefer or len(entries) < 2:
        return entries
    chosen: set[tuple[int, str]] = set()
    for device_sm in prefer:
        fits = [(e.sm, e.variant) for e in entries if _runs_on(e.arch, device_sm)]
        if fits:
            chosen.add(max(fits, key=lambda f: (f[0], _VARIANT_RANK.get(f[1], 0))))
    if not chosen:
        return entries
    return [e for e in entries if (e.sm, e.variant) in chosen]


def ptx_is_reported(ptx: FatbinEntry, elf: list[FatbinEntry], options) -> bool:
    return _PtxPolicy(elf, options).reported(ptx)


class _PtxPolicy:
    """:func:`ptx_is_reported` for the PTX entries of one container: the ELF entries are
    summed up once, so that each PTX entry costs O(1) (a container may hold 65536 entries:
    comparing every PTX entry with every ELF entry would take minutes)."""

    def __init__(self, elf: list[FatbinEntry], options):
        self.consumers = _consumers(options)
        self.served = {c: any(_runs_on(e.arch, c) for e in elf) for c in self.consumers}
        self.highest: dict[int, int] = {}  # major version -> highest SM of an ELF entry
        for e in elf:
            self.highest[e.sm // 10] = max(self.highest.get(e.sm // 10, -1), e.sm)

    def reported(self, ptx: FatbinEntry) -> bool:
        if self.consumers:
            return any(_ptx_jits_for(ptx.sm, ptx.variant, c) and not self.served[c]
                       for c in self.consumers)
        return self.highest.get(ptx.sm // 10, -1) < ptx.sm


# -- containers -------------------------------------------------------------------------------
def _plausible(span: Span, start: int) -> FatbinContainer | None:
    """A container at ``start`` whose header and first entry header are sane, else None."""
    try:
        container = FatbinContainer(span.sub(start, len(span) - start))
        if container.extent - 16 < 64 or container.body.start - span.start - start != 16:
            return None
        first = parse_entry(container.body, 0)
        if first is None or first.kind not in (KIND_PTX, KIND_ELF, KIND_LTO_IR):
            return None
        return container
    except FormatError:
        return None


def read_fatbins(reader, span: Span, prefix: str | None, depth: int, strict: bool) -> None:
    """Walk the fatbin containers stored back to back in ``span``.

    ``strict``: the span is meant to hold fatbins (a fatbin file, ``.nv_fatbin``,
    ``__nv_relfatbin``), so every problem is reported with ``reader.error``; otherwise it
    is a scanned data section, where a magic number that does not start a plausible
    container is skipped silently."""
    if depth > MAX_DEPTH:
        raise FormatError("containers nested too deeply")
    found: list[tuple[int, FatbinContainer | None, str | None]] = []
    pos = broken = 0
    while pos < len(span):
        start = span.find(FATBIN_MAGIC_BYTES, pos)
        if start < 0:
            break
        if strict:
            try:
                container = FatbinContainer(span.sub(start, len(span) - start))
            except FormatError as exc:
                broken += 1
                if broken <= MAX_BROKEN:
                    found.append((start, None, str(exc)))
                pos = start + 1
                continue
        else:
            container = _plausible(span, start)
            if container is None:
                pos = start + 1
                continue
        found.append((start, container, None))
        reader.claim(span, start, container.extent)
        pos = start + max(container.extent, 1)
    single = strict and len(found) == 1 and found[0][0] == 0
    for ordinal, (_, container, error) in enumerate(found):
        label = prefix if single else join_entry(prefix, f"fatbin{ordinal}")
        if container is None:
            reader.error(error, label)
            continue
        try:
            _read_container(reader, container, label)
        except FormatError as exc:
            reader.error(str(exc), label)
        except _DECODE_ERRORS as exc:
            reader.error(f"malformed fatbin: {exc}", label)


def _read_container(reader, container: FatbinContainer, label: str | None) -> None:
    entries, error = container.entries()
    names = _entry_names(entries)
    elf = [e for e in entries if e.kind == KIND_ELF]
    options = reader.options
    if options.ptx_only:
        _keep_ptx(reader, container, entries)
        return
    ptx_policy = _PtxPolicy(elf, options)
    for item in select_elf(elf, options):
        name = join_entry(label, names[item.offset])
        try:
            data = _decompress(reader, item, container)
            if not data.startswith(ELF_MAGIC):
                raise FormatError("fatbin ELF entry does not hold an ELF file")
            reader.result.kernels.extend(
                _read_cubin(data, reader.file, name, options, item.variant))
        except FormatError as exc:
            reader.error(str(exc), name)
    for item in entries:
        name = join_entry(label, names[item.offset])
        if item.kind == KIND_PTX and ptx_policy.reported(item):
            try:
                data = _decompress(reader, item, container)
                kernels = tuple(dict.fromkeys(
                    m.decode("utf-8", "replace")
                    for m in _PTX_ENTRY.findall(data.bytes(0, len(data), "PTX text"))))
            except FormatError as exc:
                reader.error(str(exc), name)
                continue
            reader.result.artifacts.append(Artifact(reader.file, name, "ptx", item.arch,
                                                    PTX_MESSAGE, kernels))
        elif item.kind == KIND_LTO_IR:
            reader.result.artifacts.append(Artifact(
                reader.file, name, "lto-ir", item.arch,
                "LTO-IR (-dlto / code=lto_XX): compiled to SASS at link time; no register "
                "data"))
        elif item.kind not in (KIND_ELF, KIND_PTX):
            reader.result.artifacts.append(Artifact(
                reader.file, name, "unknown", None,
                f"fatbin entry of unknown kind {item.kind}: skipped"))
    if error is not None:
        where = len(entries)
        reader.error(f"fatbin entry {where}: {error}" if where else str(error), label)


def _keep_ptx(reader, container: FatbinContainer, entries: list[FatbinEntry]) -> None:
    """The PTX entries' text, up to MAX_PTX_BYTES in all (ReadOptions.ptx_only)."""
    left = MAX_PTX_BYTES - sum(len(t) for t in reader.result.ptx)
    for item in entries:
        if item.kind != KIND_PTX:
            continue
        try:
            data = _decompress(reader, item, container)
        except FormatError:
            continue  # the facts are a bonus: an entry that cannot be read gives none
        if len(data) > left:
            return
        left -= len(data)
        reader.result.ptx.append(data.bytes(0, len(data), "PTX text").decode(
            "utf-8", "replace"))


def _decompress(reader, item: FatbinEntry, container: FatbinContainer) -> Span:
    """The entry's payload; compressed streams of one input share one budget."""
    limit = reader.decompression_limit()
    if item.compression is not None:
        reader.decompressing(item.uncompressed_size, limit)
    return decompress(item, container.payload(item), limit)


def _entry_names(entries: list[FatbinEntry]) -> dict[int, str]:
    names: dict[int, str] = {}
    seen: dict[str, int] = {}
    for entry in entries:
        arch = entry.arch
        seen[arch] = seen.get(arch, 0) + 1
        names[entry.offset] = arch if seen[arch] == 1 else f"{arch}#{seen[arch]}"
    return names
