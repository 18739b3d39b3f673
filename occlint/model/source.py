"""The source model: kernel definitions and launch sites read from CUDA / HIP source.

The source reader (occlint.readers.source) builds these plain objects; the launch-site rules
(occlint.rules.sites) and the report document only see this model. Every value read from a
source is either known (the file determines it) or unknown — never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from occlint.model.facts import Facts, threads_are_work
from occlint.model.pickling import by_fields

Body = Literal["grid-stride", "per-element", "other"]
Work = Literal["memory", "compute"] | None  # what bounds its time, when the source tells


@by_fields
@dataclass(frozen=True, slots=True)
class Span:
    """Where something is in a source file: 1-based line and column (in characters)."""

    line: int
    column: int
    end_line: int
    end_column: int

    def to_dict(self) -> dict[str, int]:
        return {"line": self.line, "column": self.column, "end_line": self.end_line,
                "end_column": self.end_column}


@by_fields
@dataclass(frozen=True, slots=True)
class Param:
    """One launch parameter (grid, block, dynamic shared memory) as the file determines it.

    ``dims``: x, y, z, each an int when known, else None. ``ceil_div_block``: the grid is
    derived from the problem size as ``(n + B - 1) / B`` (or a ``div_up``-style helper) at
    block B, with n unknown. ``reason``: why a part is unknown (the first unknown name)."""

    text: str
    span: Span
    dims: tuple[int | None, int | None, int | None]
    ceil_div_block: int | None = None
    reason: str | None = None

    @property
    def known(self) -> bool:
        return all(d is not None for d in self.dims)

    @property
    def total(self) -> int | None:
        """Threads (block) or blocks (grid) in all: the product of the dimensions."""
        if not self.known:
            return None
        x, y, z = self.dims
        return x * y * z  # type: ignore[operator]

    @staticmethod
    def joined(parts: list[Param]) -> Param:
        """Three dimensions given one argument each (a driver API's ``gridX, gridY,
        gridZ``) as one parameter, placed from the first to the last."""
        first, last = parts[0].span, parts[-1].span
        return Param(", ".join(p.text for p in parts),
                     Span(first.line, first.column, last.end_line, last.end_column),
                     (parts[0].dims[0], parts[1].dims[0], parts[2].dims[0]),
                     parts[0].ceil_div_block, next((p.reason for p in parts if p.reason), None))

    @property
    def fixed(self) -> bool:
        """Known, and not derived from the problem size (a grid-stride style grid)."""
        return self.known and self.ceil_div_block is None

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, **self.span.to_dict(), "known": self.known,
                "dims": list(self.dims), "value": self.total,
                "derived_from_problem_size": self.ceil_div_block is not None,
                "ceil_div_block": self.ceil_div_block, "unknown_reason": self.reason}


@by_fields
@dataclass(frozen=True, slots=True)
class TemplateText:
    """A template kernel's text, for the facts of the instantiations a run names
    (occlint.readers.source.facts.instantiated): its template parameters' names in order,
    its parameter list and body (macros and device functions expanded), the body's shape,
    its file's integer #defines and its launch bounds' threads."""

    parameters: tuple[str, ...]
    params: str
    body: str
    shape: str
    defines: tuple[tuple[str, int], ...] = ()
    max_threads: int | None = None


@by_fields
@dataclass(frozen=True, slots=True)
class SourceKernel:
    """A ``__global__`` function defined in the file."""

    name: str
    span: Span  # of the name
    body: Body
    launch_bounds: tuple[int | None, int | None] | None = None  # (max threads, min blocks)
    template: bool = False
    file: str = ""  # the file that defines it (for launches in other files)
    work: Work = None  # memory- or compute-bound, when its body tells
    facts: Facts | None = None  # what a thread does per element (the launch-time model's)
    # its body reads which block it is (blockIdx and the like): False for one that reads no
    # block index (every block does the same work: one block by design); None: not known
    # (no body, an empty one, or one that may ask a helper or macro of its file that reads it)
    block_indexed: bool | None = None
    # a template's text, whose facts each instantiation gets (None: not a template, or one
    # whose parameters are not read: a pack, a template template parameter)
    instantiable: TemplateText | None = None
    # its body reads which thread it is (threadIdx, a lane, a group's rank): False for one
    # that reads none and calls nothing that might (a block's one thread does its work);
    # None: not known
    thread_indexed: bool | None = None
    # the library through which it talks to other GPUs from its own code ("NCCL": its device
    # API, "NVSHMEM", "rocSHMEM"): its grid is the communicator's; None: none
    communicates: str | None = None
    # its body is empty (``dummy() {}``: a launch-overhead benchmark, a synchronisation
    # point): it does no work that any block or grid could split
    empty: bool = False

    @property
    def threads_are_work(self) -> bool:
        return threads_are_work(self.block_indexed, self.body, self.facts,
                                self.thread_indexed)

    @property
    def queued_on_one_address(self) -> bool:
        """Its atomics on one address queue longer with more threads or blocks
        (:attr:`occlint.model.facts.Facts.queued_on_one_address`)."""
        return self.facts is not None and self.facts.queued_on_one_address

    def to_dict(self) -> dict[str, Any]:
        bounds = None
        if self.launch_bounds is not None:
            bounds = {"max_threads": self.launch_bounds[0],
                      "min_blocks": self.launch_bounds[1]}
        return {"name": self.name, **self.span.to_dict(), "body": self.body,
                "work": self.work, "launch_bounds": bounds, "template": self.template,
                "facts": self.facts.to_dict() if self.facts else None}


@by_fields
@dataclass(frozen=True, slots=True)
class LaunchSite:
    """One kernel launch: ``k<<<g, b, shmem, stream>>>(...)`` or a launch API call."""

    kernel: str  # the kernel's name without namespaces or template arguments
    kernel_text: str  # as written: ``ns::k<float, 4>``
    api: str  # "<<<>>>", "hipLaunchKernelGGL", "cudaLaunchKernel", ...
    span: Span  # of the whole launch expression
    grid: Param | None
    block: Param | None
    shared: Param | None = None
    stream: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "kernel_text": self.kernel_text, "api": self.api,
                **self.span.to_dict(),
                "grid": self.grid.to_dict() if self.grid else None,
                "block": self.block.to_dict() if self.block else None,
                "shared": self.shared.to_dict() if self.shared else None,
                "stream": self.stream}


@by_fields
@dataclass(frozen=True, slots=True)
class Suppression:
    """``// occlint: ignore[LCH001, LCH101]`` (codes empty: every rule) on ``line``."""

    line: int
    codes: tuple[str, ...]
    own_line: bool  # the comment is alone on its line: it also covers the next line

    def covers(self, line: int, code: str) -> bool:
        if line != self.line and not (self.own_line and line == self.line + 1):
            return False
        return not self.codes or any(code.startswith(c) for c in self.codes)


@by_fields
@dataclass(slots=True)
class SourceFile:
    """Everything read from one source file."""

    path: str
    size: int = 0
    kernels: list[SourceKernel] = field(default_factory=list)
    launches: list[LaunchSite] = field(default_factory=list)
    suppressions: list[Suppression] = field(default_factory=list)
    error_regions: list[Span] = field(default_factory=list)  # syntax errors: nothing read
    truncated: bool = False  # over the size cap: not parsed
    vendor_hint: str | None = None  # "amd" for HIP sources, "nvidia" for CUDA, else None

    def kernel(self, name: str) -> SourceKernel | None:
        for k in self.kernels:
            if k.name == name:
                return k
        return None
