"""``paircheck probe TARGET DRAFT... [-- SERVER FLAGS]``: measure acceptance on llama-server.

The command parses options and picks a format; the work is the face's (``paircheck.api.probe``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from paircheck.cli.options import render_options

PROBE_EXIT = (
    "Exit codes: 0 measured; 2 an input could not be read, a draft llama.cpp refuses (nothing is "
    "loaded), a server that cannot load a model, dies mid-run or cannot get its port (what was "
    "measured is kept in the result file, complete: false)."
)


class ServerFlagsAfterDashes(click.Command):
    """``-- FLAGS`` go to every llama-server unchanged; click would mix them into the drafts."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            i = args.index("--")
            ctx.meta["server_args"] = tuple(args[i + 1:])
            args = args[:i]
        return super().parse_args(ctx, args)


def progress_bars(enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm import tqdm

    bars: dict[str, Any] = {}

    def tick(what: str, done: int, total: int) -> None:
        bar = bars.get(what)
        if bar is None:
            label = "target" if what == "target" else Path(what).name
            bar = bars[what] = tqdm(total=total, desc=label[:24], unit="prompt", leave=False)
        bar.n = done
        bar.refresh()
        if done >= total:
            bar.close()

    return tick


@click.command("probe", cls=ServerFlagsAfterDashes, epilog=PROBE_EXIT)
@click.argument("target")
@click.argument("drafts", nargs=-1, required=True)
@click.option("--llama-server", "llama_server", default=None,
              help="The llama-server binary to start (default: llama-server on PATH).")
@click.option("--url", "target_url", default=None, help="A running llama-server that serves TARGET.")
@click.option("--draft-url", "draft_urls", multiple=True,
              help="A running llama-server for a draft, in the order of DRAFTS (repeat; the rest are started).")
@click.option("--prompts", "prompts_file", default=None,
              help='JSON lines: {"id", "prompt", "kind", "n_predict"} (default: 5 built in, one per kind).')
@click.option("--raw", is_flag=True, help="Send the prompts as written, not through the target's chat template.")
@click.option("--n-predict", "n_predict", default="128", show_default=True,
              help="Tokens the target generates per prompt (the reply's length); a comma-separated list "
                   "predicts each (recorded once, at the longest).")
@click.option("--context-tokens", "context_tokens", default="0", show_default=True,
              help="Tokens already in the context when the reply starts: each prompt is put after a document "
                   "filling the context to that depth (0: the prompt alone); a comma-separated list, e.g. 512,8k, "
                   "measures each depth.")
@click.option("--parallel", default="1", show_default=True,
              help="Requests served at once (llama-server --parallel): priced with batches timed across that many "
                   "slots; a comma-separated list predicts each.")
@click.option("--context-file", "context_file", default=None, type=click.Path(dir_okay=False),
              help="UTF-8 text to fill deep contexts with (default: paircheck's own documentation, built in).")
@click.option("--p-min", "p_min", default="0,0.5,0.75,0.9", show_default=True,
              help="--spec-draft-p-min values to replay (0, the default, is always included).")
@click.option("--temperature", default=0.0, show_default=True,
              help="0: greedy, replayed exactly; above 0: expected acceptance under llama-server's sampling rule.")
@click.option("--seed", default=42, show_default=True)
@click.option("--ctx-size", "ctx_size", default=4096, show_default=True,
              help="Context of the servers paircheck starts.")
@click.option("--port", default=None, type=int, help="Port of the servers paircheck starts (default: a free one).")
@click.option("--timeout", default=300.0, show_default=True, help="Seconds without an answer before giving up.")
@click.option("--ready-timeout", "ready_timeout", default=600.0, show_default=True,
              help="Seconds to wait for each server to load its model.")
@click.option("--output", "-o", "output", default=None, type=click.Path(dir_okay=False),
              help="The result file (default: ./paircheck-probe-TIME.json).")
@click.option("--no-calibrate", "no_calibrate", is_flag=True,
              help="Do not measure what each step costs here: speeds are then MODELLED from assumed costs "
                   "(weight bytes), speedups only.")
@click.option("--json", "as_json", is_flag=True, help="Print the result JSON instead of the summary.")
@click.pass_context
def probe(
    ctx: click.Context,
    target: str,
    drafts: tuple[str, ...],
    llama_server: str | None,
    target_url: str | None,
    draft_urls: tuple[str, ...],
    prompts_file: str | None,
    raw: bool,
    n_predict: str,
    context_tokens: str,
    parallel: str,
    context_file: str | None,
    p_min: str,
    temperature: float,
    seed: int,
    ctx_size: int,
    port: int | None,
    timeout: float,
    ready_timeout: float,
    output: str | None,
    no_calibrate: bool,
    as_json: bool,
) -> None:
    """MEASURE how many draft tokens TARGET accepts from each DRAFT, for every --spec-draft-n-max.

    The target generates each prompt once on llama-server; each draft is then fed the
    target's tokens on its own llama-server (one model in memory at a time), and
    llama-server's draft-simple loop is replayed on what was recorded: drafted and accepted
    tokens per target pass for draft lengths 1..16 and each --p-min, exact for greedy
    decoding. Then it times each step of the speculative loop here (the target's and each
    draft's decode, batches of 1 to 17 tokens at 8 sizes, and four short speculative runs per
    pair) and PREDICTS tokens/s for every setting; where none beats the target alone it says
    to run without a draft. Flags after `--` go to every server (e.g. `-- -ngl 99 -t 8`).

    \b
      paircheck probe target.gguf draft-a.gguf draft-b.gguf
      paircheck probe target.gguf draft.gguf --raw --n-predict 256 -- -ngl 99
      paircheck probe target.gguf draft.gguf --context-tokens 0,8k --parallel 1,4
      paircheck estimate target.gguf draft.gguf --from probe.json
    """
    from paircheck._format import render
    from paircheck.api import probe_drafts as measure

    done = measure(target, drafts, n_predict=n_predict, context_tokens=context_tokens, parallel=parallel,
                   context_file=context_file, p_min=p_min, temperature=temperature, seed=seed, raw=raw,
                   ctx_size=ctx_size, timeout=timeout, ready_timeout=ready_timeout,
                   server_args=tuple(ctx.meta.get("server_args", ())), port=port, calibrate=not no_calibrate,
                   prompts_file=prompts_file, llama_server=llama_server, target_url=target_url,
                   draft_urls=draft_urls, output=output, progress=progress_bars(not as_json and sys.stderr.isatty()))
    outcome, path = done.outcome, done.path
    if as_json:
        click.echo(json.dumps(outcome.data, indent=1, ensure_ascii=False))
    else:
        click.echo(render("text", outcome, render_options()))
        click.echo(f"results: {path}")
