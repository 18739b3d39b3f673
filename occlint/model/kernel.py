"""The kernel model: what the readers extract from a binary, vendor by vendor.

Readers build these plain objects (no references into file buffers); the analysis, rules
and reporters only ever see this model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Vendor = Literal["amd", "nvidia"]


@dataclass(frozen=True, slots=True)
class Mismatch:
    """Two records in the binary disagree (e.g. AMD metadata note vs kernel descriptor)."""

    field: str
    metadata: Any
    descriptor: Any
    used: str  # which value occlint uses, and why (one phrase)


@dataclass(slots=True)
class AmdResources:
    """Per-kernel resources of an AMD code object (metadata note + kernel descriptor).

    ``vgpr`` is the architectural VGPR count as the compiler's resource remark prints it;
    ``vgpr_count`` the metadata's ``.vgpr_count`` (unified VGPR+AGPR on gfx90a/942/950,
    max(arch, agpr) on gfx908); ``vgpr_alloc`` what determines occupancy (normally
    ``.vgpr_count``; the kernel descriptor's allocation when that is larger).
    """

    vgpr: int
    agpr: int
    vgpr_count: int
    vgpr_alloc: int
    sgpr: int
    lds_bytes: int
    scratch_bytes: int
    vgpr_spill: int
    sgpr_spill: int
    dynamic_stack: bool
    max_block_size: int
    kernarg_bytes: int
    wgp_mode: bool | None = None  # None: not recorded (code object v4 and older)
    reqd_workgroup_size: tuple[int, int, int] | None = None
    workgroup_size_hint: tuple[int, int, int] | None = None
    uniform_work_group_size: bool = False
    vgpr_exact: bool = True  # False when vgpr is only an upper bound (unified count minus AGPRs)
    descriptor: dict[str, Any] | None = None  # decoded kernel descriptor fields
    uses_dynamic_lds: bool = False  # a dynamic_shared_pointer argument (OpenCL __local)


@dataclass(slots=True)
class NvResources:
    """Per-kernel resources of a cubin (.nv.info attributes and per-kernel sections)."""

    registers: int
    shared_bytes: int  # static shared memory, without the driver-reserved 1 KiB
    local_bytes: int  # stack frame per thread (EIATTR_FRAME_SIZE)
    spill_instructions: int  # EIATTR_ANNOTATIONS SpillRefill entries
    max_block_size: int | None  # EIATTR_MAX_THREADS product (launch bound)
    required_block: tuple[int, int, int] | None  # EIATTR_REQNTID
    min_blocks: int | None  # minimum blocks per SM (from __launch_bounds__, when derivable)
    max_reg_count: int | None  # EIATTR_MAXREG_COUNT
    cluster_dims: tuple[int, int, int] | None
    param_bytes: int
    barriers: int
    stack_bytes: int | None = None  # cumulative stack (MIN/MAX_STACK_SIZE)
    crs_stack_bytes: int | None = None
    uses_recursion: bool = False


@dataclass(slots=True)
class Kernel:
    """One kernel in one code object / cubin."""

    vendor: Vendor
    file: str  # the path as given (display name)
    entry: str | None  # bundle entry id, fatbin entry, archive member...; None for a bare ELF
    name: str  # mangled (symbol) name
    arch: str  # processor / SM with variant: gfx1100, gfx11-generic, sm_90a
    target_id: str  # full target id: gfx90a:xnack+ ; sm_90a
    wavefront_size: int
    resources: AmdResources | NvResources
    code_object_version: int | None = None  # AMD code object version; None on NVIDIA
    abi_version: int | None = None  # NVIDIA ELF ABI version (7 or 8)
    mismatches: list[Mismatch] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    ptx_only: bool = False
    relocatable: bool = False  # NVIDIA -rdc object (ET_REL): resources before device linking
    # launch facts found beside the binary (Triton / torch.compile cache metadata):
    # {"block": threads, "dynamic_lds": bytes, "source": "triton"}; AOTInductor packages
    # (occlint.readers.aoti) also "grid" (blocks) when the wrapper's grid is constant
    launch_hint: dict | None = None
    # (file, line) of the kernel's definition from debug information (-g / -lineinfo), the
    # file as the compiler recorded it (occlint.readers.debuginfo)
    source: tuple[str, int] | None = None
    _demangled: str | None = None

    @property
    def demangled(self) -> str:
        if self._demangled is None:
            from occlint.model.demangle import demangle

            self._demangled = demangle(self.name)
        return self._demangled


@dataclass(slots=True)
class Artifact:
    """Something found in an input that is not a kernel with resources: PTX-only entries,
    LLVM bitcode (-fgpu-rdc), device-link stubs, empty bundles. Reported as info."""

    file: str
    entry: str | None
    kind: str  # "bitcode", "ptx", "empty", "host-entry", ...
    arch: str | None
    message: str
    kernels: tuple[str, ...] = ()


@dataclass(slots=True)
class InputError:
    """An input (or part of one) that could not be read.

    Names in it come from the input (archive members, bundle entry ids, section names) and
    are untrusted: control and line-separator characters are escaped, so that the error
    stays one line of text."""

    file: str
    message: str
    entry: str | None = None

    def __post_init__(self) -> None:
        self.file = one_line(self.file)
        self.message = one_line(self.message)
        if self.entry is not None:
            self.entry = one_line(self.entry)

    def line(self) -> str:
        where = f"{self.file}[{self.entry}]" if self.entry else self.file
        return f"{where}: {self.message}"


# Bidirectional-text controls (category Cf, printable to Python) can make a line read other
# than it is (CVE-2021-42574, "Trojan Source"): escaped as well.
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                  "\u2066\u2067\u2068\u2069")


def one_line(text: str) -> str:
    """``text`` with control, surrogate, line-separator and bidirectional-control characters
    backslash-escaped."""
    if text.isprintable() and _BIDI.isdisjoint(text):
        return text
    import unicodedata

    return "".join(c.encode("unicode_escape").decode("ascii")
                   if c in _BIDI or unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp")
                   else c for c in text)


@dataclass(slots=True)
class ReadResult:
    """Everything read from one input path."""

    path: str
    kernels: list[Kernel] = field(default_factory=list)
    artifacts: list[Artifact] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)
    size: int = 0
    sha256: str | None = None
    skipped: int = 0  # archive members without GPU code
    no_gpu_code: bool = False  # a file found in a directory walk that holds none
    # devices of the run its code cannot run on, by device name: the code's targets; ""
    # the targets no device of the run can run (set by the analysis; rule DEV105)
    unfit: dict[str, list[str]] = field(default_factory=dict)
    ptx: list[str] = field(default_factory=list)  # PTX texts (ReadOptions.ptx_only)
