"""``paircheck [check] TARGET DRAFT``: the pair check. Parses options, calls the api, renders."""

from __future__ import annotations

import sys

import click

from paircheck._format import render
from paircheck.api import DEFAULT_ENGINE
from paircheck.cli.options import (
    ENGINE,
    METHOD,
    MODEL_PATH,
    fail_on_options,
    render_options,
    resolve_fail_on,
)
from paircheck.cli.progress import terminal_progress
from paircheck.constants import LLAMACPP, canonical_engine
from paircheck.outcome import matrix_exit, report_exit

EPILOG = """\b
Examples:
  paircheck target.gguf draft.gguf
  paircheck --engine all Qwen/Qwen2.5-14B-Instruct Qwen/Qwen2.5-0.5B-Instruct
  paircheck --json --method draft-eagle3 target.gguf eagle3-head.gguf
  paircheck target.gguf draft-a.gguf draft-b.gguf draft-c.gguf   (candidates, ranked)
  paircheck --strict target.gguf draft.gguf && llama-server ...   (a launch-script hook)

\b
Exit codes: 0 compatible (warnings allowed; with --engine all: at least
one engine accepts; with several drafts: at least one is usable), 1 not
compatible, 2 an input could not be read or the command was misused, 3
(--fail-on warning) a deciding check could not be made, 4 accepted at load
but predicted to abort at run time (ABORTS AT RUN TIME), 5 a warning
--fail-on slow/warning asks to fail on."""


@click.command(epilog=EPILOG)
@click.argument("target", type=MODEL_PATH)
@click.argument("drafts", metavar="DRAFT [DRAFT ...]", nargs=-1, type=MODEL_PATH)
@click.option("--engine", type=ENGINE, default=DEFAULT_ENGINE, show_default=True,
              help="Whose rule applies: llama.cpp, lmstudio, vllm, transformers, sglang, koboldcpp, ollama, "
              "tensorrt-llm, or all (one row per engine).")
@click.option("--method", type=METHOD, default=None,
              help="Speculative method in any spelling (draft-simple, draft-eagle3, draft-mtp, eagle3, "
              "draft_model, ngram-mod, ...). Default: the engine's own (llama.cpp: draft-simple).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (schema_version 3).")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing; the exit code is the answer.")
@click.option("-v", "--verbose", is_flag=True, help="Show passing checks one by one.")
@click.option("--override-kv", "override_kv", multiple=True, metavar="KEY=TYPE:VALUE",
              help="As llama.cpp's --override-kv: applied to both models.")
@click.option("--no-registry", "no_registry", is_flag=True,
              help="Do not look the pair up in the registry of documented pairs.")
@click.option("-c", "--ctx", "ctx", type=int, default=None,
              help="Also size the pair's memory at this context, as llama-server would (see `paircheck fit`).")
@click.option("--vram", default=None,
              help="Also check that memory against this device budget, e.g. 24GiB (a bare number is GiB).")
@click.option("--probe", "probe_file", default=None, metavar="FILE",
              help="A `paircheck probe` result: the launch line gets the --spec-draft-n-max it measured best.")
@click.option("--no-cache", "no_cache", is_flag=True,
              help="Read both files even when unchanged since paircheck last read them, and keep "
              "nothing (the read cache: PAIRCHECK_CACHE_HOME, XDG_CACHE_HOME/paircheck or ~/.cache/paircheck).")
@click.option("--llama-server", "llama_server", default=None, metavar="PATH",
              help="The llama-server whose version the verdict names (default: llama-server on PATH, "
              "the one `run`, `bench` and `probe` start).")
@fail_on_options
def check(
    target: str,
    drafts: tuple[str, ...],
    engine: str,
    method: str | None,
    as_json: bool,
    quiet: bool,
    verbose: bool,
    override_kv: tuple[str, ...],
    no_registry: bool,
    ctx: int | None,
    vram: str | None,
    probe_file: str | None,
    no_cache: bool,
    llama_server: str | None,
    fail_on: str | None,
    strict: bool,
) -> None:
    """Is DRAFT usable with TARGET for speculative decoding?

    TARGET and DRAFT are GGUF files (any shard of a split model), Hugging Face model
    folders, Hub repo ids (org/name, org/name:Q4_K_M, org/name/file.gguf) or http(s) URLs
    of GGUF files (only the metadata is read, with range requests). Methods without a
    draft model (ngram-*, suffix) take TARGET alone.

    More than one DRAFT: candidates mode, the drafts ranked as `paircheck scan` ranks them
    (usable first; exit code 0 when at least one is usable).
    """
    from paircheck.api import check as check_pair
    from paircheck.api import check_every_engine, needs_draft, parse_override

    level = resolve_fail_on(fail_on, strict)
    if len(drafts) > 1:
        _candidates(target, list(drafts), engine, method, as_json, quiet)
    draft = drafts[0] if drafts else None
    if draft is None and needs_draft(method):
        raise click.UsageError("Missing argument 'DRAFT' (only ngram-* and suffix methods take TARGET alone).")
    overrides = dict(parse_override(item) for item in override_kv)
    # -q prints nothing, so it skips what is only printed: fingerprints and the
    # registry look-up (neither changes the verdict or the exit code).
    shown = as_json or not quiet
    # A progress line only for a person watching: never with --json or -q, nor into a pipe.
    progress = terminal_progress if not (quiet or as_json) and sys.stderr.isatty() else None
    options = render_options(verbose, level)
    registry = shown and not no_registry
    if engine == "all":
        reports = check_every_engine(target, draft, method=method, overrides=overrides, registry=registry,
                                     fingerprint=shown, progress=progress, use_cache=not no_cache,
                                     detect_installed=True, llama_server=llama_server)
        if not quiet:
            click.echo(render("json" if as_json else "text", reports, options))
        sys.exit(matrix_exit(reports.reports, level))
    # llama.cpp's one rule set does not depend on its version: it is only asked for to be shown
    detect = shown or canonical_engine(engine.partition("@")[0]) != LLAMACPP
    report = check_pair(target, draft, engine=engine, method=method, overrides=overrides, registry=registry,
                        fingerprint=shown, progress=progress, use_cache=not no_cache, detect_installed=detect,
                        llama_server=llama_server, ctx=ctx if shown else None, vram=vram if shown else None,
                        probe_file=probe_file)
    if not quiet:  # -q prints nothing: no format is loaded
        click.echo(render("json" if as_json else "text", report, options))
    sys.exit(report_exit(report, level))


def _candidates(target: str, drafts: list[str], engine: str, method: str | None, as_json: bool, quiet: bool) -> None:
    """``paircheck T D1 D2 ...``: the scan's ranking for the given drafts; exits."""
    from paircheck.api import compare_drafts
    from paircheck.cli.scan import emit

    emit(compare_drafts(target, drafts, engine=engine, method=method), as_json, quiet)
