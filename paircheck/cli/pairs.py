"""``paircheck pairs``: browse the registry of documented target/draft pairs."""

from __future__ import annotations

from pathlib import Path

import click

from paircheck._format import render
from paircheck.api import registry_choices
from paircheck.atomic import write_text_atomic
from paircheck.cli.options import METHOD, render_options
from paircheck.constants import canonical_engine
from paircheck.errors import InputError

# "table" is what this command has always called the text format.
FORMAT_NAMES = {"table": "text", "markdown": "markdown", "json": "json", "csv": "csv", "html": "html"}

EPILOG = """\b
Examples:
  paircheck pairs --family qwen2.5
  paircheck pairs --for Qwen/Qwen2.5-14B-Instruct
  paircheck pairs --for ./models/target.gguf --format json
  paircheck pairs --method draft-simple --engine llama.cpp --evidence measured
  paircheck pairs --format html --output pairs.html   # one page: filter, search, sort

\b
Exit codes: 0 listed (also when nothing matches), 2 bad option, missing
file or registry."""


CHOICES = registry_choices()


def _lower(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    return value.strip().casefold() if value else value


def _engine(_ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if not value:
        return None
    canonical = canonical_engine(value)
    if canonical is None:
        known = ", ".join(CHOICES["engine"])
        raise click.BadParameter(f"{value!r} is not an engine the registry knows: {known}", param=param)
    return canonical


@click.command("pairs", epilog=EPILOG, short_help="List documented target/draft pairs.")
@click.option("--family", callback=_lower, metavar="FAMILY",
              help="Model family, exact or prefix (gemma -> gemma2, gemma3, gemma4).")
@click.option("--method", type=METHOD, help="Speculative method, any spelling (draft-simple = draft-model).")
@click.option("--engine", callback=_engine, metavar="ENGINE",
              help="Engine the pair is documented for, working or failing (llama.cpp, vllm, ...).")
@click.option("--status", type=click.Choice(CHOICES["status"], case_sensitive=False),
              help="Documented as working or failing.")
@click.option("--evidence", type=click.Choice(CHOICES["evidence"], case_sensitive=False), metavar="LEVEL",
              help="Evidence level for at least one engine, or for --engine: " + ", ".join(CHOICES["evidence"])
              + " (measured, ran: shown running; recommended, computed: not).")
@click.option("--search", metavar="TEXT", help="Words that must all occur in names, repos, notes or URLs.")
@click.option("--for", "for_target", metavar="TARGET",
              help="List documented drafts for TARGET (repo id, file, folder or name).")
@click.option("--format", "fmt", type=click.Choice(list(FORMAT_NAMES), case_sensitive=False), default="table",
              show_default=True, help="Output format.")
@click.option("--output", "-o", "output", type=click.Path(path_type=Path), metavar="FILE",
              help="Write to FILE instead of standard output (e.g. --format html --output pairs.html).")
@click.option("--registry", "registry_path", type=click.Path(exists=True, path_type=Path),
              help="Registry folder or TOML file (default: the shipped registry).")
def pairs(
    family: str | None,
    method: str | None,
    engine: str | None,
    status: str | None,
    evidence: str | None,
    search: str | None,
    for_target: str | None,
    fmt: str,
    output: Path | None,
    registry_path: Path | None,
) -> None:
    """List documented target/draft pairs, or the drafts documented for one target."""
    from paircheck.api import pairs as documented

    found = documented(for_target, family=family, method=method, engine=engine, status=status, evidence=evidence,
                       search=search, registry_path=registry_path)
    entries, query = found.entries, found.query
    if found.note:
        # On stderr so --format json/csv stay parseable; the list is the entries of that vocabulary.
        click.echo(f"note: {found.note}", err=True)
    name = FORMAT_NAMES[fmt.casefold()]
    if not entries and name in ("json", "csv"):
        # Machine formats stay parseable (empty list / header only); the note goes to stderr.
        click.echo("no documented pairs match" if query is None else f"no documented drafts for {query.display()}",
                   err=True)
    text = render(name, found, render_options())
    if output is None:
        click.echo(text)
        return
    write_output(output, text + "\n")
    click.echo(f"{output}: {len(entries)} pair{'s' if len(entries) != 1 else ''} written ({name})", err=True)


def write_output(path: Path, text: str) -> None:
    """Write the whole file or leave the old one (atomic); a bad path is one error line."""
    try:
        write_text_atomic(path, text)
    except OSError as exc:
        raise InputError(str(path), f"cannot write: {exc.strerror or exc}") from None
