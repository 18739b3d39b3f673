"""NVIDIA cubins (ELF, EM_CUDA): target, kernels and their resources.

Sources (reference notes nvidia.md §1):

* architecture: ``e_flags`` (SM in bits 0-7 for EI_ABIVERSION 7, bits 8-15 for 8); the 'a'
  (arch-specific) variant from the fatbin entry flags when the cubin came from a fatbin,
  else ``.nv.compat`` EICOMPAT 0x09, else the v1/v2 ``EF_CUDA_ACCELERATORS`` bit (ptxas 12.x
  sets it, 13.0 does not), else the ptxas command line in ``.note.nv.tkinfo``; 'f' (family)
  only from the fatbin entry flags or that command line;
* kernels: ``STT_FUNC`` symbols with ``STO_CUDA_ENTRY`` (st_other 0x10); cubins that mark no
  symbol at all fall back to the functions owning a ``.nv.constant0.<name>`` parameter bank;
* registers, stack frame, stack size: ``.nv.info`` REGCOUNT / FRAME_SIZE / MIN_STACK_SIZE
  (ET_EXEC) or MAX_STACK_SIZE (ET_REL), keyed by symbol index; registers fall back to
  ``.text.<k>`` ``sh_info >> 24`` before sm_90 (ptxas stopped writing it there on sm_90);
* static shared memory: the size of ``.nv.shared.<k>``. In sm_90+ ET_EXEC cubins that size
  includes the 1 KiB the driver reserves per block: ptxas output has ``.nv.shared.reserved.0``
  (+ the ``__nv_reservedSMEM_offset_0_alias`` symbol), nvlink output only an undefined
  ``.nv.reservedSmem.offset0`` symbol, and both add the 1 KiB. There 1024 is subtracted
  (clamped at 0), which gives what ptxas prints and ``sharedSizeBytes`` reports; the
  occupancy model adds the reserve back once. ET_REL (``-rdc``) objects reference the same
  symbol but their sizes do not include the reserve yet (the device linker adds it);
* everything else from the per-kernel ``.nv.info.<k>`` (launch bounds, register cap,
  clusters, parameter bytes, barriers, spill annotations, CRS stack).

``min_blocks``: ptxas stores no minimum-blocks-per-SM attribute; for ``__launch_bounds__(T,
B)`` it sets MAXREG_COUNT = floor8(min(255, 65536 / (T·B))). occlint inverts that: with a
launch bound T (MAX_THREADS or REQNTID) it reports the B in 2..32 whose cap equals the
recorded MAXREG_COUNT when exactly one does, else None (B = 1 is indistinguishable from "no
minimum", and a -maxrregcount / __maxnreg__ cap can masquerade as a B, which is why a B is
only reported when it alone explains the cap and a launch bound exists).
"""

from __future__ import annotations

import re
from functools import cached_property

from occlint.errors import FormatError
from occlint.model.kernel import Kernel, NvResources
from occlint.readers.elf import EM_CUDA, SHT_NOBITS, ElfImage, Section, Symbol
from occlint.readers.nvidia import eiattr as ea
from occlint.readers.span import Span

ET_REL = 1
ET_EXEC = 2
STT_FUNC = 2
STO_CUDA_ENTRY = 0x10
SHT_CUDA_INFO = 0x70000000
SHT_CUDA_CALLGRAPH = 0x70000001
SHT_CUDA_COMPAT = 0x70000086
SHF_INFO_LINK = 0x40
RESERVED_SMEM_SECTION = ".nv.shared.reserved.0"
RESERVED_SMEM_SYMBOLS = (".nv.reservedSmem.offset0", "__nv_reservedSMEM_offset_0_alias")
RESERVED_SMEM_BYTES = 1024
MAX_KERNELS = 1 << 16
MAX_INFO_BYTES = 64 << 20
MAX_SHARED_BYTES = 1 << 32
_TKINFO_ARCH = re.compile(rb"(?:-arch|--gpu-name)[ =]+sm_(\d+)([af]?)\b")


def sm_name(sm: int, variant: str = "") -> str:
    return f"sm_{sm}{variant}"


class NvCubin:
    """One cubin; ``kernels()`` builds the model for each kernel (entry function) in it."""

    def __init__(self, span: Span, file: str, entry: str | None = None, variant: str = ""):
        self.file = file
        self.entry = entry
        self.elf = elf = ElfImage(span, EM_CUDA, "cubin")
        if elf.type not in (ET_REL, ET_EXEC):
            raise FormatError(f"cubin has ELF type {elf.type}, expected ET_EXEC or ET_REL")
        flags = elf.flags
        if elf.abi_version >= 8:  # EF_CUDA_SM_MASK 0xff00, EF_CUDA_ACCELERATORS 0x8
            self.sm, accelerator = (flags >> 8) & 0xFF, bool(flags & 0x8)
        else:  # v1: EF_CUDA_SM 0xff, EF_CUDA_ACCELERATORS 0x800
            self.sm, accelerator = flags & 0xFF, bool(flags & 0x800)
        if self.sm < 20:
            raise FormatError(f"cubin e_flags {flags:#x} name no SM (EI_ABIVERSION "
                              f"{elf.abi_version})")
        self.variant = variant or ("a" if accelerator else "") or self._recorded_variant()
        self.arch = sm_name(self.sm, self.variant)

    # -- target ------------------------------------------------------------------------------
    def _recorded_variant(self) -> str:
        compat = self.elf.section(".nv.compat")
        if compat is not None and compat.type == SHT_CUDA_COMPAT:
            data = self._section_bytes(compat)
            for rec in ea.parse_records(data, ".nv.compat"):
                if rec.attr == ea.COMPAT_ACCELERATOR_TARGET and rec.fmt != ea.EIFMT_SVAL:
                    if rec.value == 1:
                        return "a"
                    break
        tkinfo = self.elf.section(".note.nv.tkinfo")
        if tkinfo is not None and tkinfo.type != SHT_NOBITS:
            data = self.elf.span.bytes(tkinfo.offset, min(tkinfo.size, 4096), "tkinfo note")
            match = _TKINFO_ARCH.search(data)
            if match and int(match[1]) == self.sm:
                return match[2].decode()
        return ""

    # -- raw tables --------------------------------------------------------------------------
    def _section_bytes(self, section: Section) -> bytes:
        if section.size > MAX_INFO_BYTES:
            raise FormatError(f"section {section.name!r} of {section.size} bytes is "
                              "implausibly large")
        return self.elf.section_span(section).bytes(0, section.size, f"section {section.name!r}")

    @cached_property
    def symbols(self) -> list[Symbol]:
        return self.elf.symbols()

    @cached_property
    def _module_info(self) -> dict[int, dict[int, int]]:
        """{symbol index: {EIATTR code: value}} from the module-level ``.nv.info``."""
        out: dict[int, dict[int, int]] = {}
        section = self.elf.section(".nv.info")
        if section is None:
            return out
        for rec in ea.parse_records(self._section_bytes(section), ".nv.info"):
            if rec.attr in (ea.REGCOUNT, ea.FRAME_SIZE, ea.MIN_STACK_SIZE, ea.MAX_STACK_SIZE):
                sym, value = rec.pair()
                out.setdefault(sym, {})[rec.attr] = value
        return out

    @cached_property
    def _per_text(self) -> dict[int, dict[str, Section]]:
        """Per-kernel sections by the index of the ``.text.<k>`` section they belong to."""
        out: dict[int, dict[str, Section]] = {}
        for section in self.elf.sections:
            name = section.name
            if name.startswith(".nv.info.") and section.type == SHT_CUDA_INFO:
                kind = "info"
            elif name.startswith(".nv.shared.") and name != RESERVED_SMEM_SECTION:
                kind = "shared"
            elif name.startswith(".nv.constant0."):
                kind = "constant0"
            else:
                continue
            out.setdefault(section.info, {})[kind] = section
        return out

    @cached_property
    def reserves_smem(self) -> bool:
        """Does the static shared size of this cubin's kernels include the driver's 1 KiB?"""
        if self.sm < 90 or self.elf.type != ET_EXEC:
            return False
        if self.elf.section(RESERVED_SMEM_SECTION) is not None:
            return True
        return any(s.name in RESERVED_SMEM_SYMBOLS for s in self.symbols)

    @cached_property
    def _call_edges(self) -> dict[int, set[int]]:
        """caller symbol -> callee symbols, from ``.nv.callgraph`` (pairs of u32; pairs with
        callee 0xfffffffc..0xffffffff are list markers)."""
        edges: dict[int, set[int]] = {}
        section = next((s for s in self.elf.sections if s.type == SHT_CUDA_CALLGRAPH), None)
        if section is None:
            return edges
        data = self._section_bytes(section)
        marker = 0
        for pos in range(0, len(data) - 7, 8):
            caller = int.from_bytes(data[pos:pos + 4], "little")
            callee = int.from_bytes(data[pos + 4:pos + 8], "little")
            if callee >= 0xFFFFFFFC:
                marker = 0xFFFFFFFF - callee  # 0: call edges follow; 1..3: other lists
                continue
            if marker == 0:
                edges.setdefault(caller, set()).add(callee)
        return edges

    @cached_property
    def _info_cache(self) -> dict[int, tuple[dict[int, ea.Record], int]]:
        return {}

    @cached_property
    def _reaches_cycle(self) -> dict[int, bool]:
        """Functions explored by :meth:`_recursive`: does a call cycle lie below each?"""
        return {}

    def _recursive(self, root: int) -> bool:
        """Is a call cycle reachable from ``root``? What was explored for one kernel is kept
        for the next, so that all kernels together cost O(call edges), not O(kernels x
        edges)."""
        edges = self._call_edges
        if not edges:
            return False
        known = self._reaches_cycle
        if root in known:
            return known[root]
        on_path = {root}
        stack = [(root, iter(edges.get(root, ())))]
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                known[node] = False  # everything below it explored: no cycle
                on_path.discard(node)
                stack.pop()
                continue
            if child in on_path or known.get(child):
                for above, _ in stack:
                    known[above] = True
                return True
            if child not in known:
                on_path.add(child)
                stack.append((child, iter(edges.get(child, ()))))
        return False

    def _kernel_info(self, section: Section) -> tuple[dict[int, ea.Record], int]:
        """(attributes by code, spill instructions) of a per-kernel ``.nv.info.<k>``; kept
        per section (entry symbols that share one would each parse it again)."""
        cache = self._info_cache
        if section.index in cache:
            return cache[section.index]
        info: dict[int, ea.Record] = {}
        spills = 0
        what = section.name
        for rec in ea.parse_records(self._section_bytes(section), what):
            if rec.attr == ea.ANNOTATIONS:
                payload = rec.payload
                if len(payload) % 8:
                    raise FormatError(f"{what}: EIATTR_ANNOTATIONS payload of "
                                      f"{len(payload)} bytes is not a list of pairs")
                spills += sum(1 for pos in range(0, len(payload), 8)
                              if int.from_bytes(payload[pos:pos + 4], "little")
                              == ea.ANNOTATION_SPILL_REFILL)
            else:
                info[rec.attr] = rec
        cache[section.index] = (info, spills)
        return info, spills

    # -- kernels -----------------------------------------------------------------------------
    def entry_symbols(self) -> list[Symbol]:
        nsections = len(self.elf.sections)

        def function(info: int, other: int, shndx: int, size: int) -> bool:
            return info & 0xF == STT_FUNC and 0 < shndx < nsections

        entries = self.elf.symbols_where(
            lambda info, other, shndx, size: other & STO_CUDA_ENTRY
            and function(info, other, shndx, size))
        if not entries and not self.elf.symbols_where(
                lambda info, other, shndx, size: other & STO_CUDA_ENTRY):
            # No symbol marked at all (an older toolchain?): functions with a parameter bank.
            entries = [s for s in self.elf.symbols_where(function)
                       if "constant0" in self._per_text.get(s.shndx, {})]
        if len(entries) > MAX_KERNELS:
            raise FormatError(f"cubin claims {len(entries)} kernels")
        return entries

    def kernels(self) -> list[Kernel]:
        return [self._kernel(sym) for sym in self.entry_symbols()]

    def _kernel(self, sym: Symbol) -> Kernel:
        if not sym.name:
            raise FormatError(f"kernel symbol {sym.index} has no name")
        sections = self.elf.sections
        text = sections[sym.shndx]
        own = self._per_text.get(sym.shndx, {})
        module = self._module_info.get(sym.index, {})
        notes: list[str] = []

        registers = module.get(ea.REGCOUNT)
        if registers is None:
            registers = text.info >> 24 if self.sm < 90 else 0
            notes.append("no EIATTR_REGCOUNT: register count from the .text section header"
                         if self.sm < 90 else
                         "no EIATTR_REGCOUNT: register count unknown (0 assumed)")

        shared = 0
        if "shared" in own:
            shared = own["shared"].size
            if shared > MAX_SHARED_BYTES:
                raise FormatError(f"{sym.name}: {shared} bytes of static shared memory is "
                                  "implausible (corrupted?)")
            if self.reserves_smem:
                shared = max(shared - RESERVED_SMEM_BYTES, 0)

        info, spills = self._kernel_info(own["info"]) if "info" in own else ({}, 0)

        max_threads = _dims(info, ea.MAX_THREADS)
        required = _dims(info, ea.REQNTID)
        cluster = _dims(info, ea.CTA_PER_CLUSTER)
        max_reg = info[ea.MAXREG_COUNT].scalar() if ea.MAXREG_COUNT in info else None
        if ea.CBANK_PARAM_SIZE in info:
            params = info[ea.CBANK_PARAM_SIZE].scalar()
        elif ea.PARAM_CBANK in info:
            params = info[ea.PARAM_CBANK].pair()[1] >> 16
        else:
            params = 0
        if ea.NUM_BARRIERS in info:
            barriers = info[ea.NUM_BARRIERS].scalar()
        else:
            barriers = (text.flags >> 20) & 0x1F  # CUDA 12.x: barrier count in sh_flags
        crs = info[ea.CRS_STACK_SIZE].scalar() if ea.CRS_STACK_SIZE in info else None
        stack = module.get(ea.MIN_STACK_SIZE, module.get(ea.MAX_STACK_SIZE))

        max_block = _product(max_threads)
        resources = NvResources(
            registers=registers,
            shared_bytes=shared,
            local_bytes=module.get(ea.FRAME_SIZE, 0),
            spill_instructions=spills,
            max_block_size=max_block,
            required_block=required,
            min_blocks=derive_min_blocks(_product(required) or max_block, max_reg),
            max_reg_count=max_reg,
            cluster_dims=cluster,
            param_bytes=params,
            barriers=barriers,
            stack_bytes=stack,
            crs_stack_bytes=crs,
            uses_recursion=self._recursive(sym.index),
        )
        if self.elf.type == ET_REL:
            notes.append("relocatable device code (-rdc): resources before device linking")
        return Kernel(vendor="nvidia", file=self.file, entry=self.entry, name=sym.name,
                      arch=self.arch, target_id=self.arch, wavefront_size=32,
                      resources=resources, abi_version=self.elf.abi_version, notes=notes,
                      relocatable=self.elf.type == ET_REL)


def _dims(info: dict[int, ea.Record], code: int) -> tuple[int, int, int] | None:
    """An (x, y, z) attribute; None when absent or degenerate (a zero extent)."""
    if code not in info:
        return None
    dims = info[code].dims()
    return dims if all(dims) else None


def _product(dims: tuple[int, int, int] | None) -> int | None:
    if dims is None:
        return None
    x, y, z = dims
    return x * y * z


def maxreg_for(threads: int, blocks: int) -> int:
    """The register cap ptxas derives from ``__launch_bounds__(threads, blocks)``."""
    per_thread = 65536 // (threads * blocks)
    return 255 if per_thread >= 255 else per_thread // 8 * 8


def derive_min_blocks(threads: int | None, max_reg: int | None) -> int | None:
    """minBlocksPerMultiprocessor of ``__launch_bounds__``, when the register cap pins it."""
    if not threads or max_reg is None or max_reg >= 255 or threads > 1024:
        return None
    fits = [b for b in range(1, 33) if threads * b <= 2048 and maxreg_for(threads, b) == max_reg]
    if len(fits) == 1 and fits[0] > 1:
        return fits[0]
    return None
