"""What a kernel's thread does per element: the facts the launch-time model reads.

Read from a kernel's CUDA / HIP source (occlint.readers.source.facts); None where the
source does not tell, and the model then widens its range over what it could be
(occlint.judgement.fastest).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from occlint.model.pickling import by_fields

# the loop structure: one element per thread; a loop over the grid (``i += blockDim.x *
# gridDim.x``); a loop over the block (``j += blockDim.x``: a block per row or tile)
LOOPS = ("per-element", "grid-stride", "block-stride")
OWN_LINES = 1 << 20  # cached_loads' stride -OWN_LINES: each lane its own line
# instructions a pass of a constant loop costs besides its body: the counter's add, its
# compare and the branch (NVRTC's PTX per back edge)
LOOP_CONTROL = 3.0


def threads_are_work(block_indexed: bool | None, body: str | None,
                     facts: Facts | None, thread_indexed: bool | None = None) -> bool:
    """A kernel whose source reads no block index (``block_indexed`` False) and loops over
    nothing: its threads are its work (SGEMM_CUDA's simplest_kernel: 16 threads fill a 4 x
    4 array; flashinfer's prefix sums of ``threadIdx.x < n`` in one block), and another
    block size computes something else, or leaves elements out. So is one whose source
    reads no thread index (``thread_indexed`` False): each of a block's threads does the
    block's whole work, and more of them would repeat it."""
    return thread_indexed is False or (block_indexed is False and
                                       body in ("other", "per-element")
                                       and not (facts and facts.loops))


def width_pinned(facts: Facts | None) -> bool:
    """Whether the kernel's element index steps by a width of its own (BLOCK_PINNED): a
    block of another width needs that width changed in the code too."""
    return facts is not None and facts.block_limit == BLOCK_PINNED


# Facts.block_limit where a shared array of an extent not known from the source (a
# template's parameter, a -D define) is written at the thread's own index: the block may
# be no wider than the launch as it is
BLOCK_AS_IS = -1
# ... where the kernel's element index multiplies the block index by something else than
# blockDim.x (``blockIdx.x * TILE + threadIdx.x``: a constant, a template's or the caller's
# block size): a launch of another width skips or repeats elements: the launch's width
BLOCK_PINNED = -2


@by_fields
@dataclass(frozen=True, slots=True)
class Facts:
    loop: str  # one of LOOPS, or "other"
    load_bytes: float | None = None  # global memory a thread reads per element
    store_bytes: float | None = None  # ... writes
    fma: float | None = None  # arithmetic per element (multiply-adds)
    # the share of that arithmetic in double precision (the FP64 pipe's: its rate is the
    # device's fp64_ratio below the FP32 one)
    fp64: float = 0.0
    # the most threads along x its static shared arrays hold (an array the thread's index
    # subscripts; 0: no bound) and whether its block must be a power of two (a tree
    # reduction halving blockDim): blocks the advice may not take
    block_limit: int = 0  # (BLOCK_AS_IS: no wider than the launch; BLOCK_PINNED: its width)
    block_limit_y: int = 0  # ... along y (a tile's [y][x] array)
    pow2_block: bool = False
    # the most threads a block of the kernel may have as compiled (``__launch_bounds__``'s
    # first argument, PTX's ``.maxntid``; 0: the device's)
    max_threads: int = 0
    # the bytes of its static ``__shared__`` arrays (None: an extent or a type not known)
    static_shared: int | None = None
    chains: int = 1  # independent dependency chains the arithmetic runs in (its ILP)
    control: float = 0.0  # loop-control instructions per element (inner loops' passes)
    atomics_one: float = 0.0  # atomics to one address per element (in the element's work)
    atomics_one_thread: float = 0.0  # ... per thread, after its loop
    atomics_block: float = 0.0  # atomics per thread to an address of its block
    atomics_one_block: float = 0.0  # atomics to one address per block (one thread's)
    atomics_one_warp: float = 0.0  # ... per warp (one lane's, after its loop)
    # atomics per element to addresses the data picks (a histogram's bins): how they
    # queue is the data's, not priced
    atomics_data: float = 0.0
    # atomics a block adds to each word of a set every block shares (a privatised
    # histogram's flush, ``atomicAdd(&bins[threadIdx.x], ...)``): a queue of one a block
    # on each word
    atomics_set: float = 0.0
    # the atomics on one address (or on each block's own) are all atomicMax / atomicMin
    atomics_max: bool = False
    shared_per_thread: bool = False  # dynamic shared memory indexed by the thread
    barrier: bool = False  # __syncthreads() in the body
    source: str = "source"  # where the facts come from
    # the elements a program (block) works on when that is a compile-time tile (Triton's
    # BLOCK constexpr) rather than one per thread; 0: not a tile kernel
    tile: int = 0
    # the elements a pass of the stride loop holds as compiled (the compiler's unrolling:
    # their loads in flight at once, as the characterisation's loops held
    # timing.CURVE_UNROLL); 1: not unrolled; None: not known
    unroll: int | None = None
    # of load_bytes + store_bytes, the accesses a warp's lanes do not make to consecutive
    # elements (occlint.readers.source.access): consecutive along threadIdx.y, strided
    # along x (a column of a 2-D block's lanes reads consecutive elements); each lane to
    # its own sectors whatever the block (a gather, a stride in a 1-D block), and the
    # bytes those move (a 32-byte sector a lane, or the element where it is larger)
    column_bytes: float = 0.0
    scattered_bytes: float = 0.0
    scattered_sectors: float = 0.0
    # a block-stride loop (a block per row): its passes over the row, and of them those
    # that end in a block's reduction (a barrier, or a call given the body's shared
    # array); 0: one pass, or not known (the PTX reader)
    passes: int = 0
    reductions: int = 0
    # loops over the block's threads with a barrier a step (a tree or a scan in shared
    # memory, its steps following blockDim), each once a block
    trees: int = 0
    # block sums after a grid-stride loop that are not trees (warp shuffles through a
    # shared array, a barrier: the zoo's block_sum), each once a block
    sums: int = 0
    # of load_bytes, the loads of a row an earlier pass of the block already read (a
    # softmax's second and third reads of x), and the bytes per element of the rows they
    # read again (the SM's cache holds them while the resident blocks' rows fit)
    reread_bytes: float = 0.0
    reread_row_bytes: float = 0.0
    # of load_bytes, the loads of a table many threads read, a constant loop walking it
    # (a naive matrix product's a[y * K + k] and b[k * n + x]): the caches' (L1, L2), not
    # DRAM's; and a table a literal bounds (``lut[x & 255]``); each (its stride along x in
    # elements: 0 the same for every lane, -L each lane a line of its own among the
    # table's L, -OWN_LINES among as many as it likes; whether it moves along y; its
    # bytes; its loads per element), from which the model counts the 128-byte lines a
    # warp's request touches
    cached_bytes: float = 0.0
    cached_loads: tuple[tuple[int, bool, float, float], ...] = ()
    # single-precision math functions called per element (expf, tanhf, rsqrtf, ...), each
    # with its calls: the device's measured cost of each is added to the arithmetic
    math: tuple[tuple[str, float], ...] = ()

    @property
    def loops(self) -> bool:
        return self.loop in ("grid-stride", "block-stride")

    @property
    def queued_on_one_address(self) -> bool:
        """Atomics on one address whose queue grows with the launch's elements, threads,
        warps or blocks: more of them is slower, not faster."""
        return bool(self.atomics_one or self.atomics_one_thread or self.atomics_one_warp
                    or self.atomics_one_block)

    @property
    def atomics(self) -> bool:
        return bool(self.atomics_one or self.atomics_one_thread or self.atomics_block
                    or self.atomics_one_block or self.atomics_one_warp or self.atomics_set)

    @property
    def known(self) -> bool:
        return self.load_bytes is not None and self.fma is not None

    def to_dict(self) -> dict[str, Any]:
        return {"loop": self.loop, "load_bytes": self.load_bytes,
                "store_bytes": self.store_bytes, "fma": self.fma,
                **({"fp64": self.fp64} if self.fp64 else {}),
                **({"block_limit": self.block_limit} if self.block_limit else {}),
                **({"block_limit_y": self.block_limit_y} if self.block_limit_y else {}),
                **({"pow2_block": True} if self.pow2_block else {}),
                **({"max_threads": self.max_threads} if self.max_threads else {}),
                **({"static_shared": self.static_shared}
                   if self.static_shared is not None else {}),
                "chains": self.chains,
                "loop_control": self.control,
                "atomics_one_address": self.atomics_one + self.atomics_one_thread,
                "atomics_one_address_per": ("element" if self.atomics_one else "thread"
                                            if self.atomics_one_thread else None),
                "atomics_per_block_address": self.atomics_block,
                "atomics_one_address_per_block": self.atomics_one_block,
                **({"atomics_one_address_per_warp": self.atomics_one_warp}
                   if self.atomics_one_warp else {}),
                **({"atomics_data_addressed": self.atomics_data} if self.atomics_data else {}),
                **({"atomics_per_block_on_shared_words": self.atomics_set}
                   if self.atomics_set else {}),
                **({"atomics_max_min": True} if self.atomics_max else {}),
                "shared_per_thread": self.shared_per_thread, "barrier": self.barrier,
                "source": self.source, **({"tile": self.tile} if self.tile else {}),
                **({"unroll": self.unroll} if self.unroll is not None else {}),
                **({"column_bytes": self.column_bytes} if self.column_bytes else {}),
                **({"scattered_bytes": self.scattered_bytes,
                    "scattered_moved_bytes": self.scattered_sectors}
                   if self.scattered_bytes else {}),
                **({"row_passes": self.passes, "block_reductions": self.reductions}
                   if self.passes else {}),
                **({"block_trees": self.trees} if self.trees else {}),
                **({"block_sums": self.sums} if self.sums else {}),
                **({"reread_bytes": self.reread_bytes,
                    "reread_row_bytes": self.reread_row_bytes} if self.reread_bytes else {}),
                **({"cached_bytes": self.cached_bytes} if self.cached_bytes else {}),
                **({"math_calls": dict(self.math)} if self.math else {})}
