"""``paircheck [check] TARGET DRAFT``: the pair check. Parses options, calls the api, renders."""

from __future__ import annotations

import sys

import click

from paircheck._format import format_named
from paircheck.api import DEFAULT_ENGINE, check_all_engines, check_pair, describe, needs_draft
from paircheck.cli.options import (
    ENGINE,
    EXIT_INCOMPATIBLE,
    EXIT_OK,
    METHOD,
    MODEL_PATH,
    render_options,
)
from paircheck.cli.progress import terminal_progress
from paircheck.findings import ACCEPTED
from paircheck.vocab import parse_override

EPILOG = """\b
Examples:
  paircheck target.gguf draft.gguf
  paircheck --engine all Qwen/Qwen2.5-14B-Instruct Qwen/Qwen2.5-0.5B-Instruct
  paircheck --json --method draft-eagle3 target.gguf eagle3-head.gguf
  paircheck target.gguf draft-a.gguf draft-b.gguf draft-c.gguf   (candidates, ranked)

\b
Exit codes: 0 compatible (warnings allowed; with --engine all: at least one engine
accepts; with several drafts: at least one is usable), 1 not compatible, 2 an input
could not be read or the command was misused."""


@click.command(epilog=EPILOG)
@click.argument("target", type=MODEL_PATH)
@click.argument("drafts", metavar="DRAFT [DRAFT ...]", nargs=-1, type=MODEL_PATH)
@click.option("--engine", type=ENGINE, default=DEFAULT_ENGINE, show_default=True,
              help="Whose rule applies: llama.cpp, lmstudio, vllm, transformers, sglang, koboldcpp, ollama, "
              "tensorrt-llm, or all (one row per engine).")
@click.option("--method", type=METHOD, default=None,
              help="Speculative method in any spelling (draft-simple, draft-eagle3, draft-mtp, eagle3, "
              "draft_model, ngram-mod, ...). Default: the engine's own (llama.cpp: draft-simple).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (schema_version 2).")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing; the exit code is the answer.")
@click.option("-v", "--verbose", is_flag=True, help="Show passing checks one by one.")
@click.option("--override-kv", "override_kv", multiple=True, metavar="KEY=TYPE:VALUE",
              help="As llama.cpp's --override-kv: applied to both models.")
@click.option("--no-registry", "no_registry", is_flag=True,
              help="Do not look the pair up in the registry of documented pairs.")
@click.option("-c", "--ctx", "ctx", type=int, default=None,
              help="Also size the pair's memory at this context, as llama-server would (see `paircheck fit`).")
@click.option("--vram", default=None, help="Also check that memory against this device budget, e.g. 24GiB.")
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
) -> None:
    """Is DRAFT usable with TARGET for speculative decoding?

    TARGET and DRAFT are GGUF files (any shard of a split model), Hugging Face model
    folders, Hub repo ids (org/name, org/name:Q4_K_M, org/name/file.gguf) or http(s) URLs
    of GGUF files (only the metadata is read, with range requests). Methods without a
    draft model (ngram-*, suffix) take TARGET alone.

    More than one DRAFT: candidates mode, the drafts ranked as `paircheck scan` ranks them
    (usable first; exit code 0 when at least one is usable).
    """
    if len(drafts) > 1:
        _candidates(target, list(drafts), engine, method, as_json, quiet)
    draft = drafts[0] if drafts else None
    if draft is None and needs_draft(method):
        raise click.UsageError("Missing argument 'DRAFT' (only ngram-* and suffix methods take TARGET alone).")
    overrides = dict(parse_override(item) for item in override_kv)
    # -q prints nothing, so it skips what is only printed: fingerprints and the
    # registry look-up (neither changes the verdict or the exit code).
    shown = as_json or not quiet
    extras = {"registry": shown and not no_registry, "fingerprint": shown}
    # A progress line only for a person watching: never with --json or -q, nor into a pipe.
    progress = terminal_progress if not (quiet or as_json) and sys.stderr.isatty() else None
    if engine == "all":
        target_desc = describe(target, overrides, progress)
        draft_desc = target_desc if draft is None else describe(draft, overrides, progress)
        reports = check_all_engines(target_desc, draft_desc, method, **extras)
        if not quiet:
            click.echo(format_named("json" if as_json else "text").matrix(reports, render_options(verbose)))
        sys.exit(EXIT_OK if any(r.verdict == ACCEPTED for r in reports) else EXIT_INCOMPATIBLE)
    report = check_pair(target, draft, engine=engine, method=method, overrides=overrides, progress=progress, **extras)
    if (ctx is not None or vram is not None) and shown:
        from paircheck.fit import pair_memory

        report.memory = pair_memory(report.target, report.draft, ctx, vram)
    if not quiet:  # -q prints nothing: no format is loaded
        click.echo(format_named("json" if as_json else "text").report(report, render_options(verbose)))
    sys.exit(EXIT_OK if report.compatible else EXIT_INCOMPATIBLE)


def _candidates(target: str, drafts: list[str], engine: str, method: str | None, as_json: bool, quiet: bool) -> None:
    """``paircheck T D1 D2 ...``: the scan's ranking for the given drafts; exits."""
    from paircheck.cli.scan import emit
    from paircheck.scan import compare

    emit(compare(target, drafts, engine, method), as_json, quiet)
