"""``occlint validate``: run a kernel on this machine's GPU and check occlint's predictions."""

from __future__ import annotations

from pathlib import Path

import click

from occlint.cli.common import dumps_json, output_option
from occlint.pipeline.output import write_output

EPILOG = """\b
Examples:
  occlint validate gamma.cubin --kernel gamma_correction_gridstride \\
      --args 'u8[805306368]:random, u64:805306368, f32:2.2' --grid-stride
  occlint validate stencils.cubin --kernel laplacian \\
      --args 'f32[16777216]:random, f32[16777216]:out, i32:256, i32:256, i32:256' \\
      --problem-size 16777216
\b
Exit codes: 0 the static predictions equal the driver's, 1 they differ, 2 no GPU runtime,
bad arguments or an unreadable binary.
"""


def _ints(values: tuple[str, ...]) -> list[int]:
    out = []
    for value in values:
        for part in value.split(","):
            if part.strip():
                try:
                    out.append(int(part))
                except ValueError:
                    raise click.BadParameter(f"{part!r} is not an integer") from None
    return out


def _compare(as_is: str | None, fix: str | None
             ) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """``--as-is B:G --fix B:G``: both or neither."""
    if (as_is is None) != (fix is None):
        raise click.UsageError("give both --as-is BLOCK:GRID and --fix BLOCK:GRID")
    if as_is is None:
        return None
    out = []
    for name, value in (("--as-is", as_is), ("--fix", fix)):
        parts = value.split(":")
        if len(parts) != 2 or not all(p.isdigit() and int(p) > 0 for p in parts):
            raise click.UsageError(f"{name}: expected BLOCK:GRID (positive integers), "
                                   f"got {value!r}")
        out.append((int(parts[0]), int(parts[1])))
    return out[0], out[1]


@click.command(epilog=EPILOG)
@click.argument("binary", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--kernel", required=True, help="Kernel name: mangled, demangled, or a glob.")
@click.option("--args", "args_spec",
              help="Kernel arguments: TYPE[COUNT]:FILL buffers and TYPE:VALUE scalars, "
                   "comma-separated (e.g. 'u8[1024]:random, u64:1024, f32:2.2').")
@click.option("--static-only", is_flag=True,
              help="Only compare occupancy and attributes with the driver; launch nothing "
                   "(no --args needed).")
@click.option("--problem-size", type=click.IntRange(min=1),
              help="Elements at one per thread: grid = ceil(N / block).")
@click.option("--grid-stride", is_flag=True,
              help="The kernel loops over its data (any grid works): sweep grid sizes.")
@click.option("--block", "blocks", multiple=True, help="Restrict the block sweep to these.")
@click.option("--grid", "grids", multiple=True, help="Restrict the grid sweep to these.")
@click.option("--dynamic-shared", "--dynamic-lds", "dynamic_shared", type=click.IntRange(min=0),
              default=0, help="Dynamic shared memory / LDS per block in bytes.")
@click.option("--as-is", "as_is", metavar="BLOCK:GRID",
              help="Time this launch against --fix (a finding's fix) instead of sweeping.")
@click.option("--fix", "fix", metavar="BLOCK:GRID",
              help="The configuration a finding advises (its JSON 'fix': block and grid).")
@click.option("--repeats", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--warmup", type=click.IntRange(min=0), default=2, show_default=True)
@click.option("--device-index", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--oversubscription", type=click.FloatRange(min=0.01),
              help="Oversubscription factor of the recommended grid (default 10).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "html"]), default="text",
              show_default=True)
@output_option()
@click.option("--debug", is_flag=True, help="Show tracebacks for internal errors.")
def validate(binary, kernel, args_spec, static_only, problem_size, grid_stride, blocks, grids,
             dynamic_shared, as_is, fix, repeats, warmup, device_index, oversubscription, fmt,
             output, debug) -> None:
    """Run a kernel on this machine's GPU: compare occlint's static occupancy and resources
    with the driver's, time block and grid sweeps, and rate occlint's launch advice against
    the best measured configuration and common baselines."""
    from occlint.judgement.advice import AdviceSettings
    from occlint.validate.backend import GpuError, NoGpuError
    from occlint.validate.harness import ValidateOptions, run
    from occlint.validate.spec import SpecError, parse

    compare = _compare(as_is, fix)
    if static_only:
        args = []
    else:
        if compare is None and bool(problem_size) == grid_stride:
            raise click.UsageError("give exactly one of --problem-size N (one element per "
                                   "thread) or --grid-stride")
        if not args_spec:
            raise click.UsageError("--args is required unless --static-only")
        try:
            args = parse(args_spec)
        except SpecError as exc:
            raise click.UsageError(f"--args: {exc}") from None
    settings = AdviceSettings(oversubscription=oversubscription or 10.0)
    opts = ValidateOptions(binary=binary, kernel=kernel, args=args, blocks=_ints(blocks),
                           grids=_ints(grids), problem_size=problem_size,
                           grid_stride=grid_stride, dynamic_shared=dynamic_shared,
                           repeats=repeats, warmup=warmup, device_index=device_index,
                           settings=settings, static_only=static_only, compare=compare)
    try:
        result = run(opts)
    except NoGpuError as exc:
        click.echo(f"occlint: error: no GPU runtime: {exc}", err=True)
        raise click.exceptions.Exit(2) from None
    except GpuError as exc:
        if debug:
            raise
        click.echo(f"occlint: error: {binary}: GPU run failed: {exc}", err=True)
        raise click.exceptions.Exit(2) from None
    from occlint.validate.report import render

    write_output(dumps_json(result) if fmt == "json" else render(result, fmt), output)
    agrees = result["occupancy_agrees"] and result["attributes_agree"]
    raise click.exceptions.Exit(0 if agrees else 1)
