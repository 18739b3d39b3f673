"""``occlint check PATH...`` (the default command): analyse GPU binaries and lint them."""

from __future__ import annotations

import sys

import click

from occlint.cli.common import device_file_option, output_option, use_color
from occlint.pipeline.output import write_binary, write_output

FORMATS = ["text", "json", "sarif", "github", "gitlab", "junit", "html"]

EPILOG = """\b
Examples:
  occlint kernel.hsaco --device w7800
  occlint gamma.hsaco --device w7800 --block 256 --grid 1000
  occlint build/ --device h100 --format sarif -o occlint.sarif
  occlint libkernels.so --device mi300x --select OCC,SPL --ignore SPL102
  occlint trace.pt.trace.json.gz build/   # a profiler trace, joined to its binaries
  occlint src/ --device w7800             # CUDA / HIP sources: their launch sites
\b
Exit codes: 0 no finding at or above --fail-on, 1 findings, 2 usage, configuration or
unreadable input (nothing analysed) or internal error.
"""


class JobsType(click.ParamType):
    name = "jobs"

    def convert(self, value, param, ctx):
        from occlint.config import parse_jobs
        from occlint.errors import ConfigError

        try:
            return parse_jobs(value, "--jobs")
        except ConfigError as exc:
            self.fail(str(exc).removeprefix("--jobs "), param, ctx)


JOBS = JobsType()


def _codes(values: tuple[str, ...], option: str) -> list[str]:
    """The rule selectors of a repeatable, comma-separated option; unknown ones refused."""
    from occlint.config import check_rule_selectors

    return check_rule_selectors([c.strip() for v in values for c in v.split(",") if c.strip()],
                                option)


# options that contradict each other: (first, second, why)
EXCLUSIVE = (("grid", "problem_size", "--problem-size derives the grid"),
             ("config_path", "isolated", "--isolated reads no configuration file"),
             ("baseline", "write_baseline", "--write-baseline records every finding"))


def _refuse_exclusive(given: dict[str, object]) -> None:
    for first, second, why in EXCLUSIVE:
        if given[first] not in (None, False) and given[second] not in (None, False):
            raise click.UsageError(f"{_flag(first)} and {_flag(second)} cannot be used "
                                   f"together: {why}")
    if given["statistics"] and given["fmt"] != "text":
        raise click.UsageError(f"--statistics prints text, not --format {given['fmt']}")


def _exit_if_nothing_to_analyse(config_path: str | None, isolated: bool) -> None:
    """--allow-no-paths: no path given and none in the configuration is a pass, said on
    stderr (every output format's stdout stays empty)."""
    from occlint.config import load_config

    cfg = load_config(config_path, isolated)
    if not cfg.paths:
        where = f"in {cfg.path}" if cfg.path else "(no configuration file found)"
        click.echo(f"occlint: nothing to analyse: no paths given and no 'paths' {where}",
                   err=True)
        raise click.exceptions.Exit(0)


def _say_if_saving_fails(doc: dict, threshold: float | None, code: int) -> None:
    """--fail-on-saving: one line on stderr when the saving is what fails the run."""
    from occlint.pipeline.run import yours_to_save_ms

    if threshold is not None and code == 1 and yours_to_save_ms(doc) > threshold:
        click.echo(f"occlint: the estimated saving yours to make, at least "
                   f"{yours_to_save_ms(doc):.2f} ms, is over --fail-on-saving {threshold:g} ms",
                   err=True)


def _flag(name: str) -> str:
    return "--config" if name == "config_path" else "--" + name.replace("_", "-")


@click.command(epilog=EPILOG)
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--device", "devices", multiple=True,
              help="Device to analyse for (repeatable); default: each code object's own "
                   "architecture, or 'devices' from the configuration.")
@device_file_option()
@click.option("--target", "targets", multiple=True,
              help="Only analyse container entries for this architecture (gfx942, sm_90).")
@click.option("--block", type=click.IntRange(min=1),
              help="Threads per block of the launch (default: the kernel's required or "
                   "maximum workgroup size, or the launch configuration).")
@click.option("--grid", type=click.IntRange(min=1), help="Blocks per grid of the launch.")
@click.option("--problem-size", type=click.IntRange(min=1),
              help="Elements processed at one per thread (derives the grid).")
@click.option("--dynamic-lds", "--dynamic-shared", "dynamic_lds", type=click.IntRange(min=0),
              help="Dynamic LDS / shared memory per block in bytes.")
@click.option("--include", multiple=True, metavar="GLOB",
              help="In directories, read only files matching a glob (path or file name; "
                   "repeatable). Replaces the configuration's 'include'.")
@click.option("--exclude", multiple=True, metavar="GLOB",
              help="In directories, skip files and directories matching a glob "
                   "(repeatable). Replaces the configuration's 'exclude'.")
@click.option("--extend-exclude", multiple=True, metavar="GLOB",
              help="Globs to skip in addition to the configuration's 'exclude'.")
@click.option("--select", multiple=True, help="Rule codes or prefixes to enable (ALL, OCC, "
              "LCH101); comma-separated or repeated. Replaces the configuration's.")
@click.option("--ignore", multiple=True, help="Rule codes or prefixes to disable.")
@click.option("--extend-select", multiple=True, help="Rule codes or prefixes to enable in "
              "addition to the selection.")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info", "never"]),
              help="Lowest severity that makes the exit code 1 (default: warning).")
@click.option("--fail-on-saving", "fail_on_saving", type=click.FloatRange(min=0), metavar="MS",
              help="Also exit 1 when traced launches could be faster by more than MS "
                   "milliseconds through changes that are yours to make (the low end of "
                   "the estimate: your kernels and launch overhead). With --fail-on never "
                   "only this fails.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even with findings (2 still "
              "reports errors).")
@click.option("--show-suppressed", is_flag=True, help="Also list findings suppressed in "
              "source comments (// occlint: ignore[CODE]).")
@click.option("--show-all", is_flag=True, help="Text: list every finding on traced launches, "
              "also on library, framework and generated kernels and infos (by default one "
              "line per library).")
@click.option("--statistics", is_flag=True, help="Print the number of findings per rule "
              "instead of the findings.")
@click.option("--baseline", type=click.Path(dir_okay=False),
              help="Report only findings not recorded in this baseline file.")
@click.option("--write-baseline", type=click.Path(dir_okay=False),
              help="Record the current findings in this baseline file and exit 0.")
@click.option("--oversubscription", type=click.FloatRange(min=0.01),
              help="Target waves as a multiple of the device's wave slots (default 10).")
@click.option("--occupancy-threshold", type=click.FloatRange(0, 1),
              help="Report occupancy limiters below this occupancy (default 0.5).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text",
              show_default=True, help="Output format.")
@output_option()
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False),
              help="Configuration file (default: occlint.toml or pyproject.toml "
                   "[tool.occlint], searched upward).")
@click.option("--isolated", is_flag=True, help="Ignore configuration files (not with "
              "--config).")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto",
              show_default=True, help="Colour text output (never when NO_COLOR is set).")
@click.option("-q", "--quiet", is_flag=True,
              help="Text output: findings only, no summary (github: no summary line on "
                   "stderr); no progress line.")
@click.option("-j", "--jobs", type=JOBS, default=None, metavar="N|auto",
              help="Worker processes reading and analysing inputs; 1 works in this process. "
                   "Default: 'jobs' from the configuration, else auto (one per CPU when there "
                   "are 256+ binary files, 64+ MiB of other inputs or 2+ MiB of CUDA / HIP "
                   "sources that can hold a kernel or a launch). When the last inputs are "
                   "sources, this process reads sources too and N-1 workers start.")
@click.option("--allow-no-paths", is_flag=True,
              help="Exit 0 when no path is given and the configuration names no 'paths' "
                   "(the occlint-build pre-commit hook in a project without them).")
@click.option("--debug", is_flag=True, help="Show tracebacks for internal errors.")
def check(paths, devices, device_files, targets, block, grid, problem_size, dynamic_lds,
          include, exclude, extend_exclude, select, ignore, extend_select, fail_on,
          fail_on_saving, exit_zero, show_suppressed, show_all, statistics, baseline,
          write_baseline, oversubscription, occupancy_threshold, fmt, output, config_path,
          isolated, color, quiet, jobs, allow_no_paths, debug) -> None:
    """Analyse GPU binaries: HSA code objects, offload bundles, cubins, fatbins, and host
    executables or libraries that embed them; profiler traces (PyTorch profiler / Kineto
    JSON, rocprofv3 CSV / JSON / rocpd database, Nsight Systems SQLite export): every
    launch on its real grid and block; and CUDA / HIP sources (.cu .cuh .hip .cpp .cc .cxx
    .h .hpp): their kernel launches. Report findings and launch advice."""
    _refuse_exclusive(click.get_current_context().params)
    if allow_no_paths and not paths:
        _exit_if_nothing_to_analyse(config_path, isolated)
    from occlint.pipeline.run import Options, execute

    opts = Options(
        paths=list(paths), devices=list(devices), device_files=list(device_files),
        targets=list(targets), block=block, grid=grid, problem_size=problem_size,
        dynamic_lds=dynamic_lds, include=list(include), exclude=list(exclude),
        extend_exclude=list(extend_exclude), select=_codes(select, "--select"),
        ignore=_codes(ignore, "--ignore"),
        extend_select=_codes(extend_select, "--extend-select"), fail_on=fail_on,
        fail_on_saving_ms=fail_on_saving, exit_zero=exit_zero,
        baseline=baseline, write_baseline=write_baseline, config=config_path,
        isolated=isolated, oversubscription=oversubscription,
        occupancy_threshold=occupancy_threshold, hash_inputs=fmt == "html", jobs=jobs,
        isolate_failures=not debug,
    )
    from occlint.cli.progress import ProgressLine

    bar = ProgressLine(sys.stderr) if ProgressLine.wanted(sys.stderr, quiet) else None
    try:
        outcome = execute(opts, progress=bar.update if bar else None)
    finally:
        if bar is not None:
            bar.close()
    doc = outcome.document  # kernel records still JSON text: --format json writes them as is
    for error in doc["errors"]:
        where = f"{error['file']}[{error['entry']}]" if error["entry"] else error["file"]
        click.echo(f"occlint: error: {where}: {error['message']}", err=True)
    stale = (doc.get("baseline") or {}).get("stale") or []
    if stale:
        click.echo(f"occlint: warning: {len(stale)} baseline entr"
                   f"{'y is' if len(stale) == 1 else 'ies are'} stale (fixed or gone); "
                   "rewrite the baseline with --write-baseline", err=True)
    _say_if_saving_fails(doc, fail_on_saving, outcome.exit_code)
    if fmt == "json":
        from occlint.reporters import json_format

        write_binary(lambda stream: json_format.write(doc, stream), output)
    else:
        from occlint.reporters import render

        colored = use_color(sys.stdout, color) and output in (None, "-")
        text = render(fmt, outcome.doc, color=colored, statistics=statistics, quiet=quiet,
                      show_suppressed=show_suppressed, show_all=show_all,
                      device_db=outcome.device_db)
        write_output(text, output)
        if fmt == "github" and not quiet:  # stdout: workflow commands only
            from occlint.reporters import github

            click.echo(github.summary(outcome.doc), err=True)
    raise click.exceptions.Exit(outcome.exit_code)
