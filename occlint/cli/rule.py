"""``occlint rule``: explain one rule, or list them all (ruff's ``rule`` command)."""

from __future__ import annotations

import click

from occlint.cli.common import dumps_json, format_option
from occlint.pipeline.output import write_output


@click.command()
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="List every rule.")
@format_option(["text", "json", "markdown"])
def rule(code: str | None, show_all: bool, fmt: str) -> None:
    """Explain a rule (occlint rule LCH101), or list every rule (occlint rule --all)."""
    from occlint.rules.registry import all_rules

    rules = all_rules()
    if show_all == bool(code):
        raise click.UsageError("give a rule code, or --all")
    if code:
        selected = [r for c, r in rules.items() if c == code.upper()]
        if not selected:
            import difflib

            close = difflib.get_close_matches(code.upper(), list(rules), n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise click.UsageError(f"unknown rule {code!r}{hint}")
    else:
        selected = list(rules.values())
    if fmt == "json":
        data = [r.to_dict() for r in selected]
        write_output(dumps_json(data if show_all else data[0]), None)
    elif fmt == "markdown":
        write_output("\n".join(r.markdown() for r in selected), None)
    elif show_all:
        width = max(len(r.name) for r in selected)
        lines = [f"{r.code:<7} {r.name:<{width}}  {r.severity:<7}  {r.summary}" for r in selected]
        write_output("\n".join(lines) + "\n", None)
    else:
        write_output(selected[0].markdown(), None)
