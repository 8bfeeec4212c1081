"""``paircheck explain [CODE]``: what a rule checks, why, how to fix it, and where it comes from."""

from __future__ import annotations

import click
from click.shell_completion import CompletionItem

from paircheck.api import explain as explain_rule
from paircheck.api import rules as all_rules
from paircheck.cli.options import terminal_width


def _complete_code(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    wanted = incomplete.upper()
    return [CompletionItem(r.code, help=r.title) for r in all_rules() if r.code.startswith(wanted)]


@click.command(epilog="Exit codes: 0 explained, 2 no such rule.")
@click.argument("code", required=False, shell_complete=_complete_code)
def explain(code: str | None) -> None:
    """Explain a rule (by code, e.g. LC005, or name, e.g. vocab_size), or list them all."""
    width = terminal_width()
    if code is None:
        from tabulate import tabulate  # only here: a plain check does not pay for it

        from paircheck._format.text_base import cell

        rules = all_rules()
        # The title wraps in what the other columns leave (each as wide as its widest cell).
        fixed = sum(max(len(h), *(len(v) for v in values)) for h, values in (
            ("code", [r.code for r in rules]), ("name", [r.name for r in rules]), ("kind", [r.kind for r in rules])))
        room = max(20, width - fixed - 3 * 2 - 2)
        rows = [(r.code, r.name, r.kind, cell(r.title, room)) for r in rules]
        click.echo(tabulate(rows, headers=("code", "name", "kind", "title"), tablefmt="simple"))
        return
    rule = explain_rule(code)
    click.echo(click.wrap_text(f"{rule.code} {rule.name}: {rule.title}", width, subsequent_indent="  ") + "\n")
    paragraphs = [rule.explanation, f"Fix: {rule.fix}"]
    if rule.source:
        paragraphs.append(f"Source: {rule.source}")
    for paragraph in paragraphs:
        click.echo(click.wrap_text(paragraph, width) + "\n")
