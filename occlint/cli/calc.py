"""``occlint calc``: what-if occupancy for both vendors, no binary needed."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from occlint.cli.common import device_file_option, dumps_json, format_option
from occlint.pipeline.output import write_output

EPILOG = """\b
Examples:
  occlint calc --arch sm_90 --registers 32 --shared 4096 --block 256
  occlint calc --device h100 --registers 96 --shared 0 --dynamic-shared 65536 --block 128
  occlint calc --arch gfx1100 --wave 32 --vgpr 64 --agpr 0 --sgpr 32 --lds 16384 --block 256
  occlint calc --batch cases.jsonl > results.jsonl
"""


@click.command(epilog=EPILOG)
@click.option("--arch", help="Architecture: gfx name (gfx1100) or SM (sm_90, sm_90a).")
@click.option("--device", help="Device name instead of --arch (see 'occlint devices').")
@click.option("--block", type=click.IntRange(min=1), help="Threads (work-items) per block.")
@click.option("--registers", type=click.IntRange(min=0),
              help="NVIDIA: registers per thread (ptxas 'Used N registers').")
@click.option("--shared", type=click.IntRange(min=0),
              help="NVIDIA: static shared memory per block in bytes (without the reserved 1 KiB).")
@click.option("--dynamic-shared", type=click.IntRange(min=0),
              help="NVIDIA: dynamic shared memory per block in bytes.")
@click.option("--carveout", type=click.IntRange(-1, 100),
              help="NVIDIA: shared-memory carveout preference in percent (-1 = none).")
@click.option("--optin/--no-optin", default=None,
              help="NVIDIA: opted in to more than 48 KiB of shared memory per block "
                   "(default: exactly when the launch needs it).")
@click.option("--barriers", type=click.IntRange(min=0),
              help="NVIDIA: block barriers the kernel uses (default 1, as the CUDA runtime).")
@click.option("--wave", type=click.Choice(["32", "64"]),
              help="AMD: wavefront size (default: the target's HIP default).")
@click.option("--vgpr", type=click.IntRange(min=0),
              help="AMD: architectural VGPRs (the compiler remark's 'VGPRs').")
@click.option("--agpr", type=click.IntRange(min=0), help="AMD: accumulation VGPRs ('AGPRs').")
@click.option("--sgpr", type=click.IntRange(min=0),
              help="AMD: SGPRs (they limit occupancy on GFX9 only).")
@click.option("--lds", type=click.IntRange(min=0),
              help="AMD: LDS per workgroup in bytes (static + dynamic).")
@click.option("--cu-mode", is_flag=True, default=None,
              help="AMD RDNA: kernel compiled with -mcumode (default: WGP mode).")
@click.option("--batch", type=click.File("r"),
              help="JSON Lines of requests (keys = long option names, '_' for '-'); "
                   "one JSON result line per input line, in order.")
@format_option(["text", "json"])
@device_file_option()
def calc(fmt: str, batch, device_files: tuple[str, ...], **options: Any) -> None:
    """What-if occupancy calculator for AMD and NVIDIA targets.

    Computes active blocks per CU/SM, occupancy and what limits it, exactly as NVIDIA's
    cuda_occupancy.h and LLVM's AMDGPU backend do, and how much to cut to reach the next step.
    """
    from occlint.devices.db import load_db
    from occlint.occupancy.whatif import CalcError, evaluate

    db = load_db(Path(p) for p in device_files)
    if batch is not None:
        given = [k for k, v in options.items() if v is not None]
        if given:
            flag = "--" + given[0].replace("_", "-")
            raise click.UsageError(f"--batch cannot be combined with {flag}")
        _run_batch(batch, db, evaluate, CalcError)
        return
    request = {k: v for k, v in options.items() if v is not None}
    if "wave" in request:
        request["wave"] = int(request["wave"])
    if request.get("block") is None:
        raise click.UsageError("missing option '--block'")
    try:
        result = evaluate(request, db)
    except CalcError as exc:
        raise click.UsageError(str(exc)) from None
    write_output(dumps_json(result) if fmt == "json" else format_text(result), None)


def _run_batch(stream, db, evaluate, calc_error) -> None:
    """One JSON result per input line, in order; a bad line gets an ``{"error"}`` result, one
    error line on stderr naming it, and the run exits 2 after the other lines."""
    out = sys.stdout
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    name = getattr(stream, "name", "-")
    bad = 0
    for number, line in enumerate(stream, 1):
        try:
            if not line.strip():
                raise calc_error("empty line")
            request = json.loads(line)
            if not isinstance(request, dict):
                raise calc_error("expected a JSON object")
            result = evaluate(request, db)
        except json.JSONDecodeError as exc:
            result = {"error": f"line {number}: invalid JSON: {exc.msg}"}
        except calc_error as exc:
            result = {"error": f"line {number}: {exc}"}
        if "error" in result:
            bad += 1
            click.echo(f"occlint: error: {name}: {result['error']}", err=True)
        out.write(dumps(result) + "\n")
    out.flush()
    if bad:
        raise click.exceptions.Exit(2)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def format_text(r: dict[str, Any]) -> str:
    from occlint.occupancy.steps import describe

    target = r["arch"] + (f" ({r['device']})" if r["device"] else "")
    lines = []
    if r["vendor"] == "nvidia":
        lines.append(f"{target}: block {r['block_size']}, {r['registers']} registers/thread, "
                     f"{r['shared']} B static + {r['dynamic_shared']} B dynamic shared memory")
        lines.append(f"  blocks/SM       {r['blocks_per_sm']}")
        lines.append(f"  warps/SM        {r['warps_per_sm']} of {r['max_warps_per_sm']}  "
                     f"(occupancy {_pct(r['occupancy'])})")
        metric = "blocks/SM"
    else:
        lines.append(f"{target}: block {r['block_size']}, wave{r['wave_size']}, "
                     f"{r['vgpr']} VGPRs + {r['agpr']} AGPRs, {r['sgpr']} SGPRs, "
                     f"{r['lds']} B LDS, {'WGP' if r['wgp_mode'] else 'CU'} mode")
        lines.append(f"  waves/SIMD      {r['waves_per_simd']} of {r['max_waves_per_simd']}  "
                     f"(occupancy {_pct(r['occupancy'])})")
        lines.append(f"  blocks/{r['unit']:<8} {r['blocks_per_cu']}  "
                     f"({r['waves_per_cu']} waves; HIP runtime API would say "
                     f"{r['hip_blocks_per_cu']})")
        metric = "waves/SIMD"
    lines.append(f"  limited by      {', '.join(r['limiters'])}")
    limits = " · ".join(f"{k} {v}" for k, v in r["limits"].items())
    lines.append(f"  limits          {limits}  ({metric} each resource allows)")
    if r.get("reason"):
        lines.append(f"  cannot launch   {r['reason']}")
    for step in r["next_steps"] if r["occupancy"] < 1 else ():  # at 100 %: no next step
        lines.append(f"  next step       {describe(step, metric)}")
    if r["vendor"] == "nvidia":
        lines.append(f"  best block size {r['max_potential_block_size']} "
                     "(cudaOccupancyMaxPotentialBlockSize)")
    lines.append(f"  model           {r['model']}")
    return "\n".join(lines) + "\n"
