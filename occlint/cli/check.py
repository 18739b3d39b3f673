"""``occlint check PATH...`` (the default command): analyse GPU binaries."""

from __future__ import annotations

from pathlib import Path

import click

from occlint.cli.common import (
    device_file_option,
    dumps_json,
    format_option,
    output_option,
    use_color,
    write_output,
)

EPILOG = """\b
Examples:
  occlint kernel.hsaco --device w7800
  occlint libkernels.so --device mi300x --device w7800 --format json -o report.json
  occlint build/ --device h100 --block 256 --dynamic-shared 16384
"""


@click.command(epilog=EPILOG)
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--device", "device_names", multiple=True,
              help="Device to analyse for (repeatable); default: each code object's own "
                   "architecture.")
@device_file_option()
@click.option("--target", "targets", multiple=True,
              help="Only analyse container entries for this architecture (gfx942, sm_90).")
@click.option("--block", type=click.IntRange(min=1),
              help="Threads per block of the launch (default: the kernel's required or "
                   "maximum workgroup size).")
@click.option("--dynamic-lds", "--dynamic-shared", "dynamic_lds", type=click.IntRange(min=0),
              default=0, help="Dynamic LDS / shared memory per block in bytes.")
@format_option(["text", "json"])
@output_option()
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto",
              show_default=True, help="Colour the text output (never when NO_COLOR is set).")
@click.option("--debug", is_flag=True, help="Show tracebacks for internal errors.")
def check(paths: tuple[str, ...], device_names: tuple[str, ...], device_files: tuple[str, ...],
          targets: tuple[str, ...], block: int | None, dynamic_lds: int, fmt: str,
          output: str | None, color: str, debug: bool) -> None:
    """Analyse GPU binaries: HSA code objects, offload bundles, cubins, fatbins, and host
    executables or libraries that embed them."""
    import sys

    from occlint.analysis import LaunchConfig, analyse
    from occlint.devices.db import load_db
    from occlint.inputs import expand_paths
    from occlint.model.report import Run, document
    from occlint.readers.loader import ReadOptions, read_path

    if not paths:
        raise click.UsageError("no paths given")
    db = load_db(Path(p) for p in device_files)
    devices = [db.get(name) for name in device_names]
    files, path_errors = expand_paths(list(paths))
    options = ReadOptions(targets=tuple(targets),
                          prefer=tuple(d.arch.name for d in devices))
    inputs = [read_path(path, display, options) for path, display in files]
    launch = LaunchConfig(block=block, dynamic_lds=dynamic_lds)
    kernels = [k for r in inputs for k in r.kernels]
    reports = analyse(kernels, devices, lambda kernel: launch, db)
    run = Run(inputs=inputs, reports=reports, devices=devices, errors=path_errors)
    doc = document(run)

    for error in doc["errors"]:
        where = f"{error['file']}[{error['entry']}]" if error["entry"] else error["file"]
        click.echo(f"occlint: error: {where}: {error['message']}", err=True)
    if fmt == "json":
        text = dumps_json(doc)
    else:
        from occlint.reporters.text import render

        text = render(doc, use_color(sys.stdout, color) and output in (None, "-"))
    write_output(text, output)
    nothing = not kernels and not any(r.artifacts for r in inputs)
    if doc["errors"] and nothing:
        raise click.exceptions.Exit(2)
