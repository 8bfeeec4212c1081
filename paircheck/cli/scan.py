"""``paircheck scan TARGET [DIR ...]``: every model on this machine that can draft for TARGET, ranked."""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

import click

from paircheck._format import render
from paircheck.api import DEFAULT_ENGINE
from paircheck.api._scan import DEFAULT_CALLS, DEFAULT_N_PREDICT, DEFAULT_READS
from paircheck.cli.options import (
    ENGINE,
    EXIT_INCOMPATIBLE,
    EXIT_OK,
    METHOD,
    MODEL_PATH,
    gpu_options,
    render_options,
)
from paircheck.cli.probe import ServerFlagsAfterDashes
from paircheck.outcome import EXIT_UNCHECKED

EPILOG = """\b
Where it looks (unless --no-default-dirs): the GGUFs beside a local
TARGET (its own folder, not below it), the Hugging Face cache
(HF_HUB_CACHE, HF_HOME, XDG_CACHE_HOME or ~/.cache/huggingface/hub), LM
Studio (~/.lmstudio/models and ~/.cache/lm-studio/models), llama.cpp's
cache (LLAMA_CACHE or ~/.cache/llama.cpp) and Ollama's store (OLLAMA_MODELS
or ~/.ollama/models, named as `ollama list` names them); the line under
the verdict says where it looked. Summaries of unchanged files are cached
in PAIRCHECK_CACHE_HOME, else XDG_CACHE_HOME/paircheck, else
~/.cache/paircheck (--no-cache reads every file again).

\b
With --hub it also searches the Hugging Face Hub (HF_ENDPOINT, HF_TOKEN)
for drafts you do not have yet: the registry's documented drafts, the
target's family from the same publisher and their GGUF repos, judged from
their headers (range requests, nothing downloaded), at most --hub-calls API
calls and --hub-reads candidates read. HF_HUB_OFFLINE=1: the registry and
the local scan only.

\b
Examples:
  paircheck scan target.gguf
  paircheck scan --no-default-dirs target.gguf ~/models /data/gguf
  paircheck scan --engine all --json target.gguf
  paircheck scan --hub Qwen/Qwen2.5-14B-Instruct-GGUF:Q4_K_M
  paircheck scan --hub --gpu "RTX 3090" Qwen/Qwen2.5-14B-Instruct-GGUF:Q4_K_M
  paircheck scan --probe 3 target.gguf ~/models -- -ngl 99   (measure the 3 best on llama-server)

\b
Exit codes: 0 at least one usable draft, 1 none, 3 none usable among those
checked but some not checked (offline, not read, needs access), 2 TARGET could
not be read or bad usage."""


def emit(result: Any, as_json: bool, quiet: bool) -> None:
    """Print a scan's ranking and exit: 0 when at least one draft is usable; 3 when none is
    but some were not checked (not "none usable": unknown); else 1."""
    if not quiet:
        click.echo(render("json" if as_json else "text", result, render_options()))
    sys.exit(EXIT_OK if result.usable else EXIT_UNCHECKED if result.unchecked else EXIT_INCOMPATIBLE)


class TqdmProgress:
    """The scan's progress callback as a tqdm bar on stderr: one step per file read (cached
    files are not read, so they do not count), the file being read shown after the bar."""

    def __init__(self, stream: TextIO) -> None:
        from tqdm import tqdm  # only on a terminal: never imported for --json, --quiet or a pipe

        # No monitor thread: the scan forks its workers (paircheck.scan.rank._read_all), and a fork
        # of a process with threads may deadlock (Python 3.12 warns of it).
        tqdm.monitor_interval = 0
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


@click.command("scan", epilog=EPILOG, cls=ServerFlagsAfterDashes)
@click.argument("target", type=MODEL_PATH)
@click.argument("dirs", nargs=-1, type=MODEL_PATH)
@click.option("--no-default-dirs", "no_default_dirs", is_flag=True,
              help="Scan only the DIRs given, not the places models are usually kept.")
@click.option("--engine", type=ENGINE, default=DEFAULT_ENGINE, show_default=True,
              help="Engine whose rules decide (or 'all': usable when one engine accepts).")
@click.option("--method", type=METHOD, default=None, help="Speculative method (default: the engine's draft model).")
@click.option("--no-cache", "no_cache", is_flag=True,
              help="Read every file again (the cache keeps one summary per file, target, engine and method).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Files read at a time, each in a process of its own (default: the CPUs this process may use, "
              "at most 4, on Linux; elsewhere 1).")
@click.option("--hub", is_flag=True, help="Also search the Hugging Face Hub for drafts (judged from their headers).")
@click.option("--hub-calls", type=click.IntRange(1, 1000), default=DEFAULT_CALLS, show_default=True,
              help="With --hub: at most this many API calls (searches, model infos; a listing page is one).")
@click.option("--hub-reads", type=click.IntRange(0, 1000), default=DEFAULT_READS, show_default=True,
              help="With --hub: at most this many candidates read (a GGUF header, or a repo's tokenizer files).")
@click.option("--json", "as_json", is_flag=True, help="Print the ranking as JSON (schema_version 3).")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing; the exit code is the answer.")
@click.option("--probe", "probe_count", type=click.IntRange(min=0), default=0, show_default=True,
              help="Measure the acceptance of the N best usable GGUF drafts with `paircheck probe` "
              "(runs llama-server; flags after -- go to it) and rank them by it.")
@click.option("--llama-server", "llama_server", default=None, help="With --probe: the llama-server binary.")
@click.option("--probe-output", "probe_output", default=None, type=click.Path(dir_okay=False),
              help="With --probe: the probe's result file (default: ./paircheck-probe-TIME.json).")
@click.option("--n-predict", "n_predict", default=DEFAULT_N_PREDICT, show_default=True,
              help="With --probe: tokens per prompt.")
@gpu_options
@click.option("--vram", default=None, help="The device's memory, e.g. 24GiB (default: the table's or the detected).")
@click.option("-c", "--ctx", "context", type=click.IntRange(min=0), default=None,
              help="With a GPU: tokens already in the context when a reply starts, as estimate's "
              "--context-tokens (default 0: a short prompt; replies of --n-predict tokens).")
@click.pass_context
def scan_cmd(
    ctx: click.Context, target: str, dirs: tuple[str, ...], no_default_dirs: bool, engine: str, method: str | None,
    as_json: bool, quiet: bool, no_cache: bool, jobs: int | None, hub: bool, hub_calls: int, hub_reads: int,
    probe_count: int, llama_server: str | None, probe_output: str | None, n_predict: int, gpu: str | None,
    bandwidth: float | None, vram: str | None, context: int | None,
) -> None:
    """Rank every model found in DIRs (and where models are usually kept) as a draft for TARGET."""
    from paircheck.api import scan_drafts
    from paircheck.cli.probe import progress_bars

    progress = make_progress(sys.stderr, as_json, quiet)
    try:
        result = scan_drafts(target, dirs, default_folders=not no_default_dirs, engine=engine, method=method,
                             progress=progress, use_cache=not no_cache, jobs=jobs, hub=hub, hub_calls=hub_calls,
                             hub_reads=hub_reads, probe=probe_count, llama_server=llama_server,
                             probe_output=probe_output, n_predict=n_predict,
                             server_args=tuple(ctx.meta.get("server_args", ())),
                             probe_progress=progress_bars(not (as_json or quiet) and sys.stderr.isatty()),
                             gpu=gpu, bandwidth=bandwidth, vram=vram, context=context, detect=True)
    finally:
        if progress is not None:
            progress.close()  # leave=False: the bar is erased before the ranking prints
    emit(result, as_json, quiet)

