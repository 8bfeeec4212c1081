"""``paircheck [check] TARGET DRAFT``: the pair check. Parses options, calls the api, renders."""

from __future__ import annotations

import os
import sys

import click

from paircheck._format import render
from paircheck.cli.options import (
    ENGINE,
    METHOD,
    MODEL_PATH,
    fail_on_options,
    render_options,
    resolve_fail_on,
)
from paircheck.cli.progress import terminal_progress
from paircheck.constants import LLAMACPP, RULE_ENGINES
from paircheck.findings import EveryEngine
from paircheck.installed import Installed, detect, enabled
from paircheck.outcome import matrix_exit, report_exit
from paircheck.pipeline import (
    DEFAULT_ENGINE,
    check_all_engines,
    check_pair,
    describe,
    find_engine,
    needs_draft,
    read_cache,
    readable_target,
)
from paircheck.vocab import parse_override

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
    extras = {"registry": shown and not no_registry, "fingerprint": shown}
    # A progress line only for a person watching: never with --json or -q, nor into a pipe.
    progress = terminal_progress if not (quiet or as_json) and sys.stderr.isatty() else None
    options = render_options(verbose, level)
    cache = None if no_cache else read_cache(os.environ)
    if engine == "all":
        target_desc = readable_target(describe(target, overrides, progress, cache))
        draft_desc = target_desc if draft is None else describe(draft, overrides, progress, cache)
        on_machine = {name: hit for name in RULE_ENGINES
                      if (hit := _installed(name, shown, llama_server)) is not None}
        reports = check_all_engines(target_desc, draft_desc, method, installed=on_machine, **extras)
        if not quiet:
            click.echo(render("json" if as_json else "text", EveryEngine(reports), options))
        sys.exit(matrix_exit(reports, level))
    chosen, asked = find_engine(engine)
    installed = None if asked else _installed(chosen.name, shown, llama_server)
    report = check_pair(target, draft, engine=engine, method=method, overrides=overrides, progress=progress,
                        cache=cache, installed=installed, **extras)
    if (ctx is not None or vram is not None) and shown:
        from paircheck.fit import pair_memory

        report.memory = pair_memory(report.target, report.draft, ctx, vram)
    if probe_file is not None and draft is not None:
        from paircheck.probe.result import advice_for, load_probe_result, with_draft_length, without_draft

        data = load_probe_result(probe_file)  # read even when the pair is refused: a bad file is an error
        advice = advice_for(data, draft, probe_file)
        if advice is not None and report.compatible:
            steps = (without_draft(report.next_steps) if advice.draft_max is None
                     else with_draft_length(report.next_steps, advice.draft_max, advice.p_min))
            report.next_steps = [*steps, advice.note]
    if not quiet:  # -q prints nothing: no format is loaded
        click.echo(render("json" if as_json else "text", report, options))
    sys.exit(report_exit(report, level))


def _installed(engine: str, shown: bool, llama_server: str | None) -> Installed | None:
    """The engine on this machine, unless PAIRCHECK_INSTALLED=off. llama.cpp's one rule set
    does not depend on it, so it is only asked when something is printed."""
    if not enabled(os.environ) or (engine == LLAMACPP and not shown):
        return None
    return detect(engine, llama_server)


def _candidates(target: str, drafts: list[str], engine: str, method: str | None, as_json: bool, quiet: bool) -> None:
    """``paircheck T D1 D2 ...``: the scan's ranking for the given drafts; exits."""
    from paircheck.cli.scan import emit
    from paircheck.scan import compare

    emit(compare(target, drafts, engine, method), as_json, quiet)
