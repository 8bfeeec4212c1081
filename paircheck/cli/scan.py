"""``paircheck scan TARGET [DIR ...]``: every model on this machine that can draft for TARGET, ranked."""

from __future__ import annotations

import sys

import click

from paircheck._format import formats
from paircheck.api import DEFAULT_ENGINE
from paircheck.cli.options import ENGINE, EXIT_INCOMPATIBLE, EXIT_OK, METHOD, MODEL_PATH, render_options
from paircheck.scan import ScanResult

EPILOG = """\b
Where it looks (unless --no-default-dirs): the Hugging Face cache (HF_HUB_CACHE, HF_HOME,
XDG_CACHE_HOME or ~/.cache/huggingface/hub), LM Studio (~/.lmstudio/models and
~/.cache/lm-studio/models), llama.cpp's cache (LLAMA_CACHE or ~/.cache/llama.cpp) and
Ollama's store (OLLAMA_MODELS or ~/.ollama/models, named as `ollama list` names them).
Summaries of unchanged files are cached in PAIRCHECK_CACHE_HOME, else XDG_CACHE_HOME/paircheck,
else ~/.cache/paircheck (--no-cache reads every file again).

\b
Examples:
  paircheck scan target.gguf
  paircheck scan --no-default-dirs target.gguf ~/models /data/gguf
  paircheck scan --engine all --json target.gguf

\b
Exit codes: 0 at least one usable draft, 1 none, 2 TARGET could not be read or bad usage."""


def emit(result: ScanResult, as_json: bool, quiet: bool) -> None:
    """Print a scan's ranking and exit: 0 when at least one draft is usable, else 1."""
    if not quiet:
        click.echo(formats()["json" if as_json else "text"].scan(result, render_options()))
    sys.exit(EXIT_OK if result.usable else EXIT_INCOMPATIBLE)


def _progress_line(location: str) -> None:
    click.echo(f"\r\x1b[Kreading {location[-70:]}", err=True, nl=False)


@click.command("scan", epilog=EPILOG)
@click.argument("target", type=MODEL_PATH)
@click.argument("dirs", nargs=-1, type=MODEL_PATH)
@click.option("--no-default-dirs", "no_default_dirs", is_flag=True,
              help="Scan only the DIRs given, not the places models are usually kept.")
@click.option("--engine", type=ENGINE, default=DEFAULT_ENGINE, show_default=True,
              help="Engine whose rules decide (or 'all': usable when one engine accepts).")
@click.option("--method", type=METHOD, default=None, help="Speculative method (default: the engine's draft model).")
@click.option("--no-cache", "no_cache", is_flag=True,
              help="Read every file again (the cache keeps one summary per file, target, engine and method).")
@click.option("--json", "as_json", is_flag=True, help="Print the ranking as JSON (schema_version 2).")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing; the exit code is the answer.")
def scan_cmd(
    target: str, dirs: tuple[str, ...], no_default_dirs: bool, engine: str, method: str | None, as_json: bool,
    quiet: bool, no_cache: bool,
) -> None:
    """Rank every model found in DIRs (and where models are usually kept) as a draft for TARGET."""
    from paircheck.scan import scan

    progress = _progress_line if not (quiet or as_json) and sys.stderr.isatty() else None
    result = scan(target, list(dirs), not no_default_dirs, engine, method, progress=progress, use_cache=not no_cache)
    if progress is not None:
        click.echo("\r\x1b[K", err=True, nl=False)
    emit(result, as_json, quiet)
