"""The launch-time model at a launch site read from source alone (issue 28).

A site whose kernel's source gives its facts (one element per thread: what each thread
loads, stores and computes, its static shared arrays) and whose block and grid the file
fixes is priced as a traced launch with that source is (occlint.judgement.fastest), but
for what only the compiler knows: its registers. The advice is the model's at
:data:`ADVISED_REGISTERS` a thread; the range spans that advice priced at
:data:`WIDE_REGISTERS` too. A grid the file derives from the problem size (``(n + 255) /
256``) is priced at the model's assumed work (fastest.ASSUMED_ELEMENTS). Loops are not
priced here: their work is the loop's bound, which a trace's time tells and a source does
not (on the held-out suite, priced at an assumed work, a grid-stride loop's advice reached
0.91 of the best and was slower than the launch for 52 of 1,042 launches). NVIDIA devices
only: an AMD kernel's VGPRs and LDS granules are another reading (its sites keep the
rules' own estimates). Measured on the held-out suite and the zoo: docs/validation.md,
"Launch sites from source alone".
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from occlint.analysis.kernels import KernelReport, LaunchConfig, analyse_kernel
from occlint.devices.launch_params import launch_model
from occlint.devices.models import NvArch
from occlint.judgement import fastest
from occlint.model.kernel import Kernel, NvResources

# a thread's registers, which only the compiler knows: one element a thread of a few
# loads, stores and FMAs compiles to 16-32 on sm_80-sm_90 (cuda-samples, llm.c; the
# held-out suite draws 8-69); a round reading, not fitted. The advice is the model's here...
ADVISED_REGISTERS = 32
# ... and its range spans the same move at twice that (half the warps of a full SM)
WIDE_REGISTERS = 64
# the least the advice must save at WIDE_REGISTERS too, as the model predicts it: chosen
# on the held-out suite's fit halves (benchmarks/gpu/heldout/sites.py) among 0, 0.03 and
# 0.05, the one keeping 0.97 of the best with the fewest launches advised slower and false
# warnings (0: 0.9771, 5 slower, 3 false; 0.03: 0.9727, 3 and 1; 0.05: 0.9713, 3 and 1)
WIDE_GAIN = 0.03
REGISTERS_UNKNOWN = (f"its registers (only the compiler knows them): the advice is the "
                     f"model's at {ADVISED_REGISTERS} a thread, its range spans the same "
                     f"launch at {WIDE_REGISTERS}")


def site_plan(s: Any, db: Any = None) -> tuple[fastest.Plan, KernelReport] | None:
    """The model's plan for the launch site ``s`` (an occlint.analysis.sites.SiteReport)
    on its one device, and the kernel report it was priced on; None where the site is not
    one the model prices from source alone (see the module's doc)."""
    devices = [t.device for t in s.targets if t.device is not None]
    k = s.kernel
    if len(devices) != 1 or k is None or s.binaries or not isinstance(devices[0].arch, NvArch):
        return None  # (a binary of it in the run: its own report is priced, at this block)
    device, facts = devices[0], k.facts
    if (facts is None or not facts.known or facts.loops or facts.static_shared is None
            or not (facts.load_bytes or facts.store_bytes) or facts.atomics_data
            or k.block_indexed is False or k.thread_indexed is False or k.communicates
            or launch_model(device) is None):
        # (a body that moves no data: an empty stand-in, or one not read; atomics to
        # addresses the data picks: how they queue is the data's, which a trace's time
        # tells and a source does not)
        return None
    block, grid, shared = s.site.block, s.site.grid, s.site.shared
    if block is None or not block.known or grid is None:
        return None
    dynamic = 0 if shared is None else shared.total
    if dynamic is None:
        return None
    unknown = [REGISTERS_UNKNOWN]
    if grid.fixed:
        grid_dims, problem = grid.dims, None
    elif grid.ceil_div_block is not None and block.dims[1:] == (1, 1):
        grid_dims, problem = None, int(fastest.ASSUMED_ELEMENTS)
        unknown.append(f"the problem's size (the grid follows it): assumed "
                       f"{fastest.ASSUMED_ELEMENTS:,.0f} elements")
    else:
        return None

    def report(registers: int) -> KernelReport:
        return _report(s, device, registers, block.dims, grid_dims, problem, dynamic, db)

    priced = report(ADVISED_REGISTERS)
    advised = fastest.plan(priced) if priced.occupancy is not None else None
    if advised is None:
        return None
    advised = replace(advised, unknown=(*advised.unknown, *unknown))
    if advised.saving is None:
        return advised, priced
    if advised.now.total - advised.fastest.total < advised.device.floor_us * 1e-6:
        # a move saving less than the shortest kernel lasts (a launch of a few hundred
        # elements): not worth a change
        return _kept(advised), priced
    widened = report(WIDE_REGISTERS)
    now, there = (replace(c, resident=fastest.resident(widened, c)) if widened.occupancy
                  else None for c in (advised.current, advised.best))
    if not (now and now.resident and there and there.resident):
        return _kept(advised), priced  # the launch or the advice may not run at that reading
    wide = fastest.launched_as(advised, now)
    if min(fastest.gains(wide, there)) < WIDE_GAIN:  # the advice may not pay: keep the launch
        return _kept(advised), priced
    moved = fastest.price(wide, there)
    low, high = min(advised.saving.low, moved.low), max(advised.saving.high, moved.high)
    return replace(advised, saving=replace(advised.saving, low=max(0.0, low),
                                           high=min(1.0, high))), priced


def _kept(plan: fastest.Plan) -> fastest.Plan:
    """``plan`` advising the launch as it is."""
    return replace(plan, best=plan.current, fastest=plan.now, saving=None)


def _report(s: Any, device: Any, registers: int, block: tuple, grid: tuple | None,
            problem: int | None, dynamic: int, db: Any) -> KernelReport:
    """The site's kernel as a compiled one would be, at ``registers`` a thread."""
    k, facts = s.kernel, s.kernel.facts
    bound = k.launch_bounds[0] if k.launch_bounds else None
    kernel = Kernel(vendor="nvidia", file=s.source.path, entry=None, name=s.site.kernel,
                    arch=device.arch.name, target_id=device.arch.name,
                    wavefront_size=device.arch.warp_size,
                    resources=NvResources(registers=registers, shared_bytes=facts.static_shared,
                                          local_bytes=0, spill_instructions=0,
                                          max_block_size=bound, required_block=None,
                                          min_blocks=None, max_reg_count=None,
                                          cluster_dims=None, param_bytes=0,
                                          barriers=1 if facts.barrier else 0))
    kernel._demangled = s.site.kernel
    total = block[0] * block[1] * block[2]
    launch = LaunchConfig(block=total, grid=(grid[0] * grid[1] * grid[2]) if grid else None,
                          problem_size=problem, dynamic_lds=dynamic, body=k.body, work=k.work,
                          facts=facts, block_indexed=k.block_indexed,
                          thread_indexed=k.thread_indexed, block_dims=block, grid_dims=grid)
    report = analyse_kernel(kernel, device, launch, db)
    report.block_source = "source"
    return report
