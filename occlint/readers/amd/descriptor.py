"""The 64-byte AMDHSA kernel descriptor (``<kernel>.kd``), as in LLVM's AMDGPUUsage."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from occlint.errors import FormatError

KD_SIZE = 64
_KD = struct.Struct("<IIIxxxxq20xIIIHH4x")


@dataclass(frozen=True, slots=True)
class KernelDescriptor:
    group_segment_fixed_size: int
    private_segment_fixed_size: int
    kernarg_size: int
    entry_offset: int
    rsrc3: int
    rsrc1: int
    rsrc2: int
    code_properties: int
    kernarg_preload: int

    @classmethod
    def parse(cls, raw: bytes) -> KernelDescriptor:
        if len(raw) != KD_SIZE:
            raise FormatError(f"kernel descriptor has {len(raw)} bytes, expected {KD_SIZE}")
        return cls(*_KD.unpack(raw))

    # COMPUTE_PGM_RSRC1
    @property
    def granulated_vgprs(self) -> int:
        return self.rsrc1 & 0x3F

    @property
    def granulated_sgprs(self) -> int:
        return (self.rsrc1 >> 6) & 0xF

    @property
    def wgp_mode(self) -> bool:
        """RSRC1 bit 29 (GFX10+)."""
        return bool(self.rsrc1 >> 29 & 1)

    # COMPUTE_PGM_RSRC2
    @property
    def uses_scratch(self) -> bool:
        return bool(self.rsrc2 & 1)

    # kernel_code_properties
    @property
    def wave32(self) -> bool:
        """ENABLE_WAVEFRONT_SIZE32 (GFX10+)."""
        return bool(self.code_properties >> 10 & 1)

    @property
    def uses_dynamic_stack(self) -> bool:
        return bool(self.code_properties >> 11 & 1)

    # COMPUTE_PGM_RSRC3 on gfx90a/gfx942/gfx950
    @property
    def accum_offset(self) -> int:
        """First AGPR index = alignTo(architectural VGPRs, 4) on unified-VGPR targets."""
        return ((self.rsrc3 & 0x3F) + 1) * 4

    def vgprs(self, encoding_granule: int) -> int:
        """VGPRs the hardware allocates per work-item: (GRANULATED + 1) x encoding granule."""
        return (self.granulated_vgprs + 1) * encoding_granule

    def sgprs(self, encoding_granule: int) -> int | None:
        """SGPRs per wave on GFX6-9; None on GFX10+ where the field is reserved."""
        if not encoding_granule:
            return None
        return (self.granulated_sgprs + 1) * encoding_granule

    def to_dict(self, encoding_granule: int | None, sgpr_granule: int,
                unified: bool) -> dict[str, int | bool | None]:
        out: dict[str, int | bool | None] = {
            "group_segment_fixed_size": self.group_segment_fixed_size,
            "private_segment_fixed_size": self.private_segment_fixed_size,
            "kernarg_size": self.kernarg_size,
            "granulated_workitem_vgpr_count": self.granulated_vgprs,
            "vgprs": self.vgprs(encoding_granule) if encoding_granule else None,
            "sgprs": self.sgprs(sgpr_granule),
            "wgp_mode": self.wgp_mode,
            "wave32": self.wave32,
            "uses_dynamic_stack": self.uses_dynamic_stack,
            "enable_private_segment": self.uses_scratch,
            "rsrc1": self.rsrc1, "rsrc2": self.rsrc2, "rsrc3": self.rsrc3,
        }
        if unified:
            out["accum_offset"] = self.accum_offset
        return out
