"""The ``occlint`` command: a click group whose default command analyses paths.

``occlint PATH...`` is ``occlint check PATH...``; the other subcommands are ``calc``,
``devices``, ``rule`` and ``validate``. Heavy modules are imported inside the commands so
``occlint --version`` stays fast.
"""

from __future__ import annotations

import os
import sys

import click

from occlint import __version__

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


LAZY_COMMANDS = {
    "check": ("occlint.cli.check", "check"),
    "calc": ("occlint.cli.calc", "calc"),
    "devices": ("occlint.cli.devices", "devices"),
    "rule": ("occlint.cli.rule", "rule"),
    "validate": ("occlint.cli.validate", "validate"),
}

SHORT_HELP = {
    "check": "Analyse GPU binaries, profiler traces and CUDA / HIP sources (the default).",
    "calc": "What-if occupancy calculator (no binary needed).",
    "devices": "List the devices occlint knows.",
    "rule": "Explain a rule, or list all rules.",
    "validate": "Run a kernel on this machine's GPU and compare with the predictions.",
}


def _reject_mistyped_command(word: str) -> None:
    """``occlint devcies``: a first argument that is no file but looks like a command."""
    if word.startswith("-") or os.path.lexists(word):
        return
    import difflib  # (not imported for a path: most runs)

    close = difflib.get_close_matches(word, LAZY_COMMANDS, n=1, cutoff=0.7)
    if close:
        raise click.UsageError(f"{word}: no such file, directory or command; "
                               f"did you mean 'occlint {close[0]}'?")


class OcclintGroup(click.Group):
    """Subcommands imported on first use; ``check`` runs when no subcommand is named."""

    default_command = "check"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in LAZY_COMMANDS and args[0] not in ctx.help_option_names
                        and args[0] != "--version"):
            _reject_mistyped_command(args[0] if args else "-")
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(LAZY_COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in LAZY_COMMANDS:
            return None
        import importlib

        module_name, attr = LAZY_COMMANDS[name]
        return getattr(importlib.import_module(module_name), attr)

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage(ctx.command_path, "[OPTIONS] PATH... | COMMAND [ARGS]...")

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The default command's options first (``occlint PATH`` is how it is run), then
        the group's own, then the subcommands (like ``ruff --help``)."""
        default = self.get_command(ctx, self.default_command)
        assert default is not None
        records = [record for param in default.get_params(ctx) if param.name != "help"
                   if (record := param.get_help_record(ctx)) is not None]
        records += [record for param in self.get_params(ctx)
                    if (record := param.get_help_record(ctx)) is not None]
        with formatter.section("Options"):
            formatter.write_dl(records)
        self.format_commands(ctx, formatter)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, SHORT_HELP[name]) for name in LAZY_COMMANDS])


@click.group(cls=OcclintGroup, context_settings={"help_option_names": ["-h", "--help"],
                                              "max_content_width": 100})
@click.version_option(__version__, "--version", prog_name="occlint",
                      message="%(prog)s %(version)s")
def cli() -> None:
    """Static occupancy and launch-advice linter for AMD and NVIDIA GPU kernels: reads GPU
    binaries, profiler traces (PyTorch profiler, rocprofv3, Nsight Systems) and CUDA / HIP
    sources.

    \b
    Examples:
      occlint kernel.hsaco --device w7800
      occlint build/ --device h100 --format sarif -o occlint.sarif
      occlint trace.pt.trace.json.gz                 # every launch of a profiled run
      occlint src/kernels.cu --device h100           # the launches in a source file
      occlint calc --arch sm_90 --registers 32 --shared 4096 --block 256
      occlint devices
    """


def _debug_requested(argv: list[str]) -> bool:
    return "--debug" in argv or os.environ.get("OCCLINT_DEBUG") not in (None, "", "0")


def _print_traceback() -> None:
    import traceback  # only with --debug

    traceback.print_exc()


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: one-line errors, exit 2, tracebacks only with --debug."""
    from occlint.errors import OcclintError
    from occlint.pipeline import gcpolicy

    gcpolicy.relax()
    args = sys.argv[1:] if argv is None else argv
    try:
        code = cli.main(args=args, prog_name="occlint", standalone_mode=False)
    except click.exceptions.Exit as exc:
        code = exc.exit_code
    except click.UsageError as exc:
        where = exc.ctx.command_path if exc.ctx else "occlint"
        click.echo(f"occlint: error: {exc.format_message()} (see '{where} --help')", err=True)
        code = EXIT_ERROR
    except click.ClickException as exc:
        click.echo(f"occlint: error: {exc.format_message()}", err=True)
        code = EXIT_ERROR
    except click.Abort:
        click.echo("occlint: aborted", err=True)
        code = EXIT_ERROR
    except OcclintError as exc:
        if _debug_requested(args):
            _print_traceback()
        click.echo(f"occlint: error: {exc}", err=True)
        code = EXIT_ERROR
    except BrokenPipeError:
        sys.stderr.close()
        code = EXIT_ERROR
    except KeyboardInterrupt:
        click.echo("occlint: interrupted", err=True)
        code = 130
    except Exception as exc:
        if _debug_requested(args):
            _print_traceback()
        click.echo(f"occlint: internal error: {type(exc).__name__}: {exc} "
                   "(run with --debug for a traceback)", err=True)
        code = EXIT_ERROR
    gcpolicy.before_exit()
    sys.exit(code if isinstance(code, int) else EXIT_OK)
