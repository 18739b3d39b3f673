"""AMDGPU HSA code objects (ELF, EM_AMDGPU): target, metadata note, kernel descriptors.

Resources come from the ``amdhsa.kernels`` metadata (MessagePack, code object v3+) and are
cross-checked against each kernel's 64-byte descriptor. Where the two disagree the kernel
records a :class:`Mismatch`, and occupancy uses what the hardware allocates: the
descriptor's VGPR count (real ROCm libraries contain kernels whose descriptor reserves far
more VGPRs than ``.vgpr_count``).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import msgpack

from occlint.devices.db import shipped_db
from occlint.devices.models import AmdArch
from occlint.errors import FormatError
from occlint.model.kernel import AmdResources, Kernel, Mismatch
from occlint.readers.amd.descriptor import KD_SIZE, KernelDescriptor
from occlint.readers.elf import EM_AMDGPU, ElfImage
from occlint.readers.span import Span

ELFOSABI_AMDGPU_HSA = 64
ELFOSABI_AMDGPU_PAL = 65
ELFOSABI_AMDGPU_MESA3D = 66
NT_AMDGPU_METADATA = 32
NT_AMD_HSA_METADATA = 10  # code object v2 (YAML)
STT_OBJECT = 1
SHN_ABS = 0xFFF1
MAX_KERNELS = 1 << 16
# Most code objects have 1-3 notes; linked ones one metadata note per kernel. Program
# headers may all point at one segment: the count and the bytes of the notes are bounded.
MAX_NOTES = MAX_KERNELS + 64
MAX_NOTE_BYTES = 256 << 20  # rocBLAS 5.5's TensileLibrary_gfx90a.co: 51 MB of notes

# EF_AMDGPU_MACH (LLVM BinaryFormat/ELF.h).
MACH = {
    0x020: "gfx600", 0x021: "gfx601", 0x03A: "gfx602", 0x022: "gfx700", 0x023: "gfx701",
    0x024: "gfx702", 0x025: "gfx703", 0x026: "gfx704", 0x03B: "gfx705", 0x028: "gfx801",
    0x029: "gfx802", 0x02A: "gfx803", 0x03C: "gfx805", 0x02B: "gfx810", 0x02C: "gfx900",
    0x02D: "gfx902", 0x02E: "gfx904", 0x02F: "gfx906", 0x030: "gfx908", 0x031: "gfx909",
    0x032: "gfx90c", 0x03F: "gfx90a", 0x040: "gfx940", 0x04B: "gfx941", 0x04C: "gfx942",
    0x04F: "gfx950", 0x033: "gfx1010", 0x034: "gfx1011", 0x035: "gfx1012", 0x042: "gfx1013",
    0x036: "gfx1030", 0x037: "gfx1031", 0x038: "gfx1032", 0x039: "gfx1033", 0x03E: "gfx1034",
    0x03D: "gfx1035", 0x045: "gfx1036", 0x041: "gfx1100", 0x046: "gfx1101", 0x047: "gfx1102",
    0x044: "gfx1103", 0x043: "gfx1150", 0x04A: "gfx1151", 0x055: "gfx1152", 0x058: "gfx1153",
    0x057: "gfx1154", 0x048: "gfx1200", 0x04E: "gfx1201", 0x049: "gfx1250", 0x05A: "gfx1251",
    0x050: "gfx1310", 0x05D: "gfx1170", 0x05E: "gfx1171", 0x05C: "gfx1172",
    0x051: "gfx9-generic", 0x05F: "gfx9-4-generic", 0x052: "gfx10-1-generic",
    0x053: "gfx10-3-generic", 0x054: "gfx11-generic", 0x059: "gfx12-generic",
    0x05B: "gfx12-5-generic", 0x062: "gfx11-7-generic", 0x063: "gfx13-generic",
}
DYNAMIC_LDS_KINDS = ("dynamic_shared_pointer", "hidden_dynamic_lds_size")
COV_BY_ABI = {0: 2, 1: 3, 2: 4, 3: 5, 4: 6}
_FEATURE_V4 = {0x000: None, 0x100: None, 0x200: "-", 0x300: "+"}  # unsupported/any/off/on


def target_from_flags(e_flags: int, cov: int) -> tuple[str, str]:
    """(processor, target id) from e_flags, as comgr builds the ISA name."""
    processor = MACH.get(e_flags & 0xFF)
    if processor is None:
        raise FormatError(f"unknown AMDGPU processor (EF_AMDGPU_MACH {e_flags & 0xFF:#x})")
    features = ""
    if cov >= 4:
        sramecc = _FEATURE_V4[(e_flags >> 2) & 0x300]
        xnack = _FEATURE_V4[e_flags & 0x300]
        if sramecc:
            features += f":sramecc{sramecc}"
        if xnack:
            features += f":xnack{xnack}"
    else:
        if e_flags & 0x200:
            features += ":sramecc+"
        if e_flags & 0x100:
            features += ":xnack+"
    return processor, processor + features


def arch_for(processor: str) -> AmdArch | None:
    """Limits of a processor, or of the first member of a generic target."""
    db = shipped_db()
    if processor in db.amd_archs:
        return db.amd_archs[processor]
    members = db.amd_generics.get(processor)
    if members and members[0] in db.amd_archs:
        return db.amd_archs[members[0]]
    return None


def _int(meta: dict[str, Any], key: str, default: int | None = None) -> int:
    value = meta.get(key, default)
    if value is None:
        raise FormatError(f"metadata lacks {key}")
    if isinstance(value, bool):
        return int(value)
    if not isinstance(value, int) or value < 0 or value >= 1 << 40:
        raise FormatError(f"metadata {key} is not a sane integer: {value!r}"[:200])
    return value


def _dims(meta: dict[str, Any], key: str) -> tuple[int, int, int] | None:
    value = meta.get(key)
    if value is None:
        return None
    if (not isinstance(value, list) or len(value) != 3
            or not all(isinstance(v, int) and 0 < v < 1 << 31 for v in value)):
        raise FormatError(f"metadata {key} is not three positive integers")
    return (value[0], value[1], value[2])


def _metadata_map(desc: bytes) -> dict[str, Any]:
    try:
        meta = msgpack.unpackb(desc, raw=False, strict_map_key=False)
    except (ValueError, TypeError, msgpack.exceptions.UnpackException) as exc:
        raise FormatError(f"metadata note is not valid MessagePack: {exc}") from None
    if not isinstance(meta, dict):
        raise FormatError("metadata note is not a MessagePack map")
    return meta


def _merged(into: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    """``into`` with the kernels (and printf formats) of a further metadata note, under the
    conditions comgr merges notes on (else the code object cannot be loaded)."""
    kernels, more = into.get("amdhsa.kernels"), meta.get("amdhsa.kernels")
    version = into.get("amdhsa.version")
    if not isinstance(version, list) or meta.get("amdhsa.version") != version:
        raise FormatError("metadata notes of different amdhsa.version cannot be merged")
    if not isinstance(kernels, list) or not isinstance(more, list):
        raise FormatError("a metadata note without an amdhsa.kernels list cannot be merged")
    if "amdhsa.printf" in meta:
        if "amdhsa.printf" in into:
            raise FormatError("two metadata notes with amdhsa.printf cannot be merged")
        into["amdhsa.printf"] = meta["amdhsa.printf"]
    kernels.extend(more)
    if len(kernels) > MAX_KERNELS:
        raise FormatError(f"metadata notes list more than {MAX_KERNELS} kernels")
    return into


def _align(x: int, unit: int) -> int:
    return -(-x // unit) * unit


class AmdCodeObject:
    """One AMDGPU code object; ``kernels()`` builds the model for each kernel in it."""

    def __init__(self, span: Span, file: str, entry: str | None = None):
        self.file = file
        self.entry = entry
        self.elf = ElfImage(span, EM_AMDGPU, "AMDGPU code object")
        if self.elf.osabi in (ELFOSABI_AMDGPU_PAL, ELFOSABI_AMDGPU_MESA3D):
            kind = "PAL" if self.elf.osabi == ELFOSABI_AMDGPU_PAL else "Mesa"
            raise FormatError(f"{kind} graphics code object: only HSA (compute) code objects "
                              "are supported")
        if self.elf.osabi not in (ELFOSABI_AMDGPU_HSA, 0):
            raise FormatError(f"unknown AMDGPU ELF OS/ABI {self.elf.osabi}")
        self.cov = COV_BY_ABI.get(self.elf.abi_version)
        if self.cov is None:
            raise FormatError(f"unknown code object ABI version {self.elf.abi_version}")
        if self.cov == 2:
            raise FormatError("code object v2 is not supported (its metadata is YAML; "
                              "rebuild with a ROCm/LLVM from 2019 or later)")
        self.processor, self.target_id = target_from_flags(self.elf.flags, self.cov)
        self.arch = arch_for(self.processor)

    @cached_property
    def metadata(self) -> dict[str, Any] | None:
        """The metadata note's map. A code object linked from several objects (rocBLAS's
        Tensile libraries: one note per kernel, 14,075 in one file) has several notes; they
        are merged as ROCm's code object manager (comgr) merges them: the ``amdhsa.kernels``
        of each, which must share ``amdhsa.version`` (at most one ``amdhsa.printf``)."""
        merged: dict[str, Any] | None = None
        note_bytes = 0
        for count, (owner, ntype, desc) in enumerate(self.elf.notes()):
            note_bytes += len(desc)
            if count >= MAX_NOTES or note_bytes > MAX_NOTE_BYTES:
                raise FormatError(f"more than {MAX_NOTES} notes or {MAX_NOTE_BYTES} bytes "
                                  "of them: corrupted or hostile")
            if owner == "AMDGPU" and ntype == NT_AMDGPU_METADATA:
                meta = _metadata_map(desc)
                merged = meta if merged is None else _merged(merged, meta)
            elif owner == "AMD" and ntype == NT_AMD_HSA_METADATA:
                raise FormatError("code object v2 is not supported (YAML metadata)")
        return merged

    @cached_property
    def descriptors(self) -> dict[str, KernelDescriptor]:
        """Kernel descriptors by symbol name (``<kernel>.kd``)."""
        out: dict[str, KernelDescriptor] = {}
        sections = self.elf.sections
        for sym in self.elf.symbols_where(
                lambda info, other, shndx, size: info & 0xF == STT_OBJECT and size == KD_SIZE):
            if not sym.name.endswith(".kd"):
                continue
            if not 0 < sym.shndx < len(sections):
                continue
            raw = self.elf.read_at_address(sections[sym.shndx], sym.value, KD_SIZE)
            out[sym.name] = KernelDescriptor.parse(raw)
            if len(out) > MAX_KERNELS:
                raise FormatError("more kernel descriptors than any real code object holds")
        return out

    @cached_property
    def _register_symbols(self) -> dict[str, int]:
        """clang >= 20 writes ``<kernel>.num_vgpr`` / ``.num_agpr`` absolute symbols."""
        return {s.name: s.value for s in self.elf.symbols_where(
                lambda info, other, shndx, size: shndx == SHN_ABS)
                if s.name.endswith((".num_vgpr", ".num_agpr"))}

    def metadata_target(self) -> str | None:
        meta = self.metadata or {}
        target = meta.get("amdhsa.target")
        if isinstance(target, str) and "--" in target:
            return target.split("--", 1)[1]
        return None

    def kernels(self) -> list[Kernel]:
        meta = self.metadata
        target_id = self.metadata_target() or self.target_id
        if meta is None:
            if not self.descriptors:
                return []
            return [self._kernel_from_descriptor(name, kd, target_id)
                    for name, kd in self.descriptors.items()]
        entries = meta.get("amdhsa.kernels", [])
        if not isinstance(entries, list):
            raise FormatError("metadata amdhsa.kernels is not a list")
        if len(entries) > MAX_KERNELS:
            raise FormatError(f"metadata lists {len(entries)} kernels")
        kernels = []
        for entry in entries:
            if not isinstance(entry, dict):
                raise FormatError("metadata kernel entry is not a map")
            kernels.append(self._kernel_from_metadata(entry, target_id))
        return kernels

    # -- building kernels -------------------------------------------------------------------
    def _granules(self, wave: int) -> tuple[int | None, int, bool]:
        arch = self.arch
        if arch is None:
            return None, 0, False
        regs = arch.waves.get(wave) or next(iter(arch.waves.values()))
        return regs.vgpr_encoding_granule, arch.sgpr_encoding_granule, arch.unified_vgpr_file

    def _kernel_from_metadata(self, meta: dict[str, Any], target_id: str) -> Kernel:
        name = meta.get(".name")
        symbol = meta.get(".symbol")
        if not isinstance(name, str) or not name:
            raise FormatError("metadata kernel entry has no .name")
        if len(name) > 65536:
            raise FormatError("kernel name longer than 64 KiB")
        wave = _int(meta, ".wavefront_size", 64)
        if wave not in (32, 64):
            raise FormatError(f"{name}: wavefront size {wave}")
        vgpr_count = _int(meta, ".vgpr_count")
        agpr = _int(meta, ".agpr_count", 0)
        sgpr = _int(meta, ".sgpr_count")
        kd = self.descriptors.get(symbol if isinstance(symbol, str) else f"{name}.kd")
        enc, sgpr_enc, unified = self._granules(wave)
        arch = self.arch
        mismatches: list[Mismatch] = []
        notes: list[str] = []

        # Architectural VGPRs (what the compiler remark calls VGPRs).
        exact_symbol = self._register_symbols.get(f"{name}.num_vgpr")
        vgpr, vgpr_exact = vgpr_count, True
        if arch is not None and agpr:
            if exact_symbol is not None:
                vgpr = exact_symbol
            elif unified:
                vgpr, vgpr_exact = max(vgpr_count - agpr, 0), False
            elif vgpr_count == agpr:
                vgpr_exact = False

        vgpr_alloc = vgpr_count
        desc_dict = None
        if kd is None:
            notes.append("kernel descriptor not found; resources from the metadata note only")
        else:
            desc_dict = kd.to_dict(enc, sgpr_enc, unified)
            if enc:
                desc_vgprs = kd.vgprs(enc)
                if desc_vgprs != _align(max(vgpr_count, 1), enc):
                    vgpr_alloc = desc_vgprs
                    mismatches.append(Mismatch(
                        "vgpr", vgpr_count, desc_vgprs,
                        "descriptor (what the hardware allocates)"))
                # Hand-written metadata may omit .agpr_count although the kernel uses
                # AGPRs; ACCUM_OFFSET (the first AGPR) then lies below the VGPR count.
                hidden_agprs = (unified and not agpr and vgpr_count
                                and kd.accum_offset < min(desc_vgprs, _align(vgpr_count, 4)))
                if hidden_agprs:
                    mismatches.append(Mismatch(
                        "agpr", 0, desc_vgprs - kd.accum_offset,
                        "descriptor: ACCUM_OFFSET shows AGPRs the metadata omits"))
                    agpr = desc_vgprs - kd.accum_offset
                    vgpr, vgpr_exact = kd.accum_offset, False
            desc_sgprs = kd.sgprs(sgpr_enc)
            if desc_sgprs is not None and sgpr and not sgpr <= desc_sgprs < sgpr + 16:
                mismatches.append(Mismatch("sgpr", sgpr, desc_sgprs,
                                           "metadata (LLVM's occupancy uses .sgpr_count)"))
            for field, key, value in (
                ("lds_bytes", ".group_segment_fixed_size", kd.group_segment_fixed_size),
                ("scratch_bytes", ".private_segment_fixed_size", kd.private_segment_fixed_size),
                ("kernarg_bytes", ".kernarg_segment_size", kd.kernarg_size),
            ):
                meta_value = _int(meta, key, value)
                if meta_value != value:
                    mismatches.append(Mismatch(field, meta_value, value, "metadata"))
            if arch is not None and arch.gfx_major >= 10:
                desc_wave = 32 if kd.wave32 else 64
                if desc_wave != wave:
                    mismatches.append(Mismatch("wavefront_size", wave, desc_wave, "descriptor"))
                    wave = desc_wave

        dynamic_stack = meta.get(".uses_dynamic_stack")
        if dynamic_stack is None:
            dynamic_stack = bool(kd and kd.uses_dynamic_stack)
        elif kd is not None and bool(dynamic_stack) != kd.uses_dynamic_stack:
            mismatches.append(Mismatch("dynamic_stack", bool(dynamic_stack),
                                       kd.uses_dynamic_stack, "either (treated as dynamic)"))
            dynamic_stack = True

        wgp_mode: bool | None = None
        if arch is not None and arch.has_wgp:
            meta_wgp = meta.get(".workgroup_processor_mode")
            if kd is not None:
                wgp_mode = kd.wgp_mode
                if meta_wgp is not None and bool(meta_wgp) != kd.wgp_mode:
                    mismatches.append(Mismatch("wgp_mode", bool(meta_wgp), kd.wgp_mode,
                                               "descriptor (what the hardware uses)"))
            elif meta_wgp is not None:
                wgp_mode = bool(meta_wgp)

        args = meta.get(".args", [])
        # OpenCL __local pointer arguments, and (code object v5+) the hidden dynamic LDS
        # size argument LLVM adds only to kernels that use extern __shared__ memory.
        uses_dynamic_lds = isinstance(args, list) and any(
            isinstance(a, dict) and a.get(".value_kind") in DYNAMIC_LDS_KINDS for a in args)

        resources = AmdResources(
            vgpr=vgpr, agpr=agpr, vgpr_count=vgpr_count, vgpr_alloc=vgpr_alloc, sgpr=sgpr,
            lds_bytes=_int(meta, ".group_segment_fixed_size", 0),
            scratch_bytes=_int(meta, ".private_segment_fixed_size", 0),
            vgpr_spill=_int(meta, ".vgpr_spill_count", 0),
            sgpr_spill=_int(meta, ".sgpr_spill_count", 0),
            dynamic_stack=bool(dynamic_stack),
            max_block_size=_int(meta, ".max_flat_workgroup_size", 1024),
            kernarg_bytes=_int(meta, ".kernarg_segment_size", 0),
            wgp_mode=wgp_mode,
            reqd_workgroup_size=_dims(meta, ".reqd_workgroup_size"),
            workgroup_size_hint=_dims(meta, ".workgroup_size_hint"),
            uniform_work_group_size=bool(meta.get(".uniform_work_group_size", False)),
            vgpr_exact=vgpr_exact, descriptor=desc_dict, uses_dynamic_lds=uses_dynamic_lds,
        )
        return Kernel(vendor="amd", file=self.file, entry=self.entry, name=name,
                      arch=self.processor, target_id=target_id, wavefront_size=wave,
                      resources=resources, code_object_version=self.cov,
                      mismatches=mismatches, notes=notes)

    def _kernel_from_descriptor(self, symbol: str, kd: KernelDescriptor,
                                target_id: str) -> Kernel:
        """No metadata note: everything from the descriptor (VGPRs at encoding granularity)."""
        arch = self.arch
        wave = 32 if (arch is not None and arch.gfx_major >= 10 and kd.wave32) else 64
        enc, sgpr_enc, unified = self._granules(wave)
        vgprs = kd.vgprs(enc) if enc else 0
        resources = AmdResources(
            vgpr=vgprs, agpr=0, vgpr_count=vgprs, vgpr_alloc=vgprs,
            sgpr=kd.sgprs(sgpr_enc) or 0, lds_bytes=kd.group_segment_fixed_size,
            scratch_bytes=kd.private_segment_fixed_size, vgpr_spill=0, sgpr_spill=0,
            dynamic_stack=kd.uses_dynamic_stack, max_block_size=1024,
            kernarg_bytes=kd.kernarg_size,
            wgp_mode=kd.wgp_mode if arch is not None and arch.has_wgp else None,
            vgpr_exact=False, descriptor=kd.to_dict(enc, sgpr_enc, unified),
        )
        return Kernel(vendor="amd", file=self.file, entry=self.entry, name=symbol[:-3],
                      arch=self.processor, target_id=target_id, wavefront_size=wave,
                      resources=resources, code_object_version=self.cov,
                      notes=["no metadata note: resources decoded from the kernel descriptor "
                             "(VGPRs rounded to the encoding granule, spills and launch "
                             "bounds unknown)"])
