"""``paircheck scan TARGET [DIR ...]``: every model on this machine that can draft for TARGET, ranked."""

from __future__ import annotations

import os
import sys
from typing import TextIO

import click

from paircheck._format import format_named
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
        click.echo(format_named("json" if as_json else "text").scan(result, render_options()))
    sys.exit(EXIT_OK if result.usable else EXIT_INCOMPATIBLE)


class TqdmProgress:
    """The scan's progress callback as a tqdm bar on stderr: one step per file read (cached
    files are not read, so they do not count), the file being read shown after the bar."""

    def __init__(self, stream: TextIO) -> None:
        from tqdm import tqdm  # only on a terminal: never imported for --json, --quiet or a pipe

        self.bar = tqdm(total=None, unit=" files", desc="reading", file=stream, leave=False, dynamic_ncols=True)

    def __call__(self, location: str) -> None:
        self.bar.set_postfix_str(os.path.basename(location)[-40:], refresh=False)
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()


def make_progress(stream: TextIO, as_json: bool, quiet: bool) -> TqdmProgress | None:
    """A progress bar only for a person watching: stderr is a terminal, and neither --json nor --quiet."""
    if quiet or as_json or not stream.isatty():
        return None
    return TqdmProgress(stream)


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

    progress = make_progress(sys.stderr, as_json, quiet)
    try:
        result = scan(target, list(dirs), not no_default_dirs, engine, method, progress=progress,
                      use_cache=not no_cache)
    finally:
        if progress is not None:
            progress.close()  # leave=False: the bar is erased before the ranking prints
    emit(result, as_json, quiet)
