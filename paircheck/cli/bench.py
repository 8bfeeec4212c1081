"""``paircheck bench`` (measure a llama-server), ``bench compare``, ``bench run``, and ``estimate``.

The commands parse options and pick a format; the work is the face's (``paircheck.api``:
bench_server, bench_compare, bench_run, estimate).
"""

from __future__ import annotations

import json
import sys

import click

from paircheck._format import render
from paircheck._format.text_bench import render_bench_result
from paircheck.api import Measure
from paircheck.api._bench import DEFAULT_URL
from paircheck.cli.options import gpu_options, render_options
from paircheck.errors import InputError
from paircheck.outcome import EXIT_ABORTS

EXIT_OK, EXIT_INCOMPATIBLE = 0, 1


def _progress(as_json: bool) -> bool:
    return not as_json and sys.stderr.isatty()


PROMPTS_HELP = ('JSON lines: {"id", "prompt", "n_predict"} (sent raw unless --chat-template), or chat logs '
                '{"id", "messages": [{"role", "content"}, ...]} (always through the target\'s chat template).')
CONTEXT_HELP = ("Tokens of context before each reply (comma-separated, 8k = 8192): each prompt is filled to that "
                "many of the target's tokens from --context-file or a built-in document, and its prefix reused "
                "between runs (cache_prompt). 0: the prompts as given.")
PARALLEL_HELP = "Requests at once (comma-separated): that many clients against a server with that many slots."
CONTEXT_FILE_HELP = "Text to fill the context with (default: paircheck's built-in document)."
TOGETHER_HELP = ("With --parallel N: send each pass's N requests as one request of N prompts, which llama-server "
                 "starts in the same step (as slots under steady load run); N clients' requests arrive apart, and "
                 "with short replies the slots started later run their last rounds alone.")


# This command's --format names: "table" is the text format.
FORMAT_NAMES = {"table": "text", "markdown": "markdown", "json": "json"}


BENCH_EXIT = (
    "Exit codes: 0 measured, 1 (bench run) the check refuses the pair, 2 the server could not be reached "
    "or answered wrongly (what was measured is kept, complete: false), 4 (bench run) the pair is predicted "
    "to abort llama-server at run time (not run)."
)


@click.group("bench", invoke_without_command=True, epilog=BENCH_EXIT)
@click.option("--url", default=DEFAULT_URL, show_default=True, help="The llama-server to measure.")
@click.option("--label", default=None, help="Name of this configuration, e.g. baseline or draft.")
@click.option("--output", default=None, type=click.Path(dir_okay=False), help="The result file (JSON).")
@click.option("--runs", default=5, show_default=True, help="Measured passes over the prompts (after one warm-up).")
@click.option("--warmup", default=1, show_default=True, help="Unrecorded passes first.")
@click.option("--n-predict", "n_predict", default="128", show_default=True, help="Tokens to generate per request.")
@click.option("--context-tokens", "context_tokens", default="0", show_default=True,
              help="Tokens of context before each reply (one value here; bench run takes a list): " + CONTEXT_HELP)
@click.option("--parallel", default="1", show_default=True,
              help="Requests at once, one client each (one value here; the server needs that many slots).")
@click.option("--together", is_flag=True, help=TOGETHER_HELP)
@click.option("--context-file", "context_file", default=None, metavar="FILE", help=CONTEXT_FILE_HELP)
@click.option("--seed", default=42, show_default=True)
@click.option("--prompts", "prompts_file", default=None, help=PROMPTS_HELP)
@click.option("--chat-template/--no-chat-template", default=False, show_default=True,
              help="Wrap each prompt in the server's chat template (default: sent raw).")
@click.option("--timeout", default=300.0, show_default=True, help="Seconds without an answer before giving up.")
@click.option("--json", "as_json", is_flag=True, help="Print the result JSON instead of a summary.")
@click.pass_context
def bench(
    ctx: click.Context,
    url: str,
    label: str | None,
    output: str | None,
    runs: int,
    warmup: int,
    n_predict: str,
    context_tokens: str,
    parallel: str,
    together: bool,
    context_file: str | None,
    seed: int,
    prompts_file: str | None,
    chat_template: bool,
    timeout: float,
    as_json: bool,
) -> None:
    """Measure a running llama-server (one configuration) into a JSON file.

    \b
      paircheck bench --label baseline --output baseline.json
      paircheck bench --label draft --output draft.json     (server restarted with -md)
      paircheck bench compare baseline.json draft.json
      paircheck bench run TARGET DRAFT                       (all of it, one command)
    """
    if ctx.invoked_subcommand is not None:
        return
    from paircheck.api import bench_server

    if not label or not output:
        raise InputError("bench", "--label and --output are needed to measure (or use `bench compare` / `bench run`)")
    measure = Measure(runs, warmup, n_predict, context_tokens, parallel, together, context_file, seed, prompts_file,
                      chat_template, timeout)
    result = bench_server(url, label, output, measure, _progress(as_json))
    path = output
    if as_json:
        click.echo(json.dumps(result, indent=1, ensure_ascii=False))
    else:
        click.echo(f"MEASURED {label}: {len(result['requests'])} requests against {url}, written to {path}")
        click.echo(render_bench_result(result, render_options().width))


@bench.command("compare", epilog="Exit codes: 0 compared, 2 a result file could not be read or the two have "
               "nothing to compare (an empty run, no prompt in common).")
@click.argument("baseline")
@click.argument("draft")
@click.option("--probe", "probe_file", default=None, metavar="FILE",
              help="A `paircheck probe` result: print what it predicted for this draft and setting beside the "
                   "measurement.")
@click.option("--format", "fmt", type=click.Choice(tuple(FORMAT_NAMES)), default="table", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
def bench_compare(baseline: str, draft: str, probe_file: str | None, fmt: str, as_json: bool) -> None:
    """Compare two bench results: speedup on equal work, acceptance, equal outputs."""
    from paircheck.api import bench_compare as compare_results

    click.echo(render(FORMAT_NAMES["json" if as_json else fmt], compare_results(baseline, draft, probe_file),
                      render_options()))


@bench.command("run", context_settings={"ignore_unknown_options": False})
@click.argument("target")
@click.argument("draft")
@click.argument("extra", nargs=-1, type=click.UNPROCESSED)
@click.option("--llama-server", "llama_server", default=None, help="The llama-server binary (default: on PATH).")
@click.option("--output-dir", "output_dir", default=None, type=click.Path(file_okay=False),
              help="Where baseline.json, draft.json and the server logs go (default: ./paircheck-bench-TIME); "
                   "with several workloads, one folder per workload in it.")
@click.option("--ctx-size", "ctx_size", type=click.IntRange(min=1), default=None,
              help="Context size of both servers, split across their --parallel slots (default: each slot holds "
                   "the deepest --context-tokens plus the longest reply and 256, at least 4096).")
@click.option("--runs", default=5, show_default=True)
@click.option("--warmup", default=1, show_default=True)
@click.option("--n-predict", "n_predict", default="128", show_default=True,
              help="Tokens to generate per request (comma-separated for several).")
@click.option("--context-tokens", "context_tokens", default="0", show_default=True, help=CONTEXT_HELP)
@click.option("--parallel", default="1", show_default=True, help=PARALLEL_HELP)
@click.option("--together", is_flag=True, help=TOGETHER_HELP)
@click.option("--context-file", "context_file", default=None, metavar="FILE", help=CONTEXT_FILE_HELP)
@click.option("--seed", default=42, show_default=True)
@click.option("--prompts", "prompts_file", default=None, help=PROMPTS_HELP)
@click.option("--chat-template/--no-chat-template", default=False, show_default=True)
@click.option("--timeout", default=300.0, show_default=True, help="Seconds without an answer before giving up.")
@click.option("--ready-timeout", "ready_timeout", default=600.0, show_default=True,
              help="Seconds to wait for each server to load its models.")
@click.option("--max-runs", "max_runs", type=click.IntRange(min=1), default=None,
              help="While either side's runs vary more than 10%, add runs to both, up to this many "
                   "(default: 3 x --runs).")
@click.option("--sequential", is_flag=True,
              help="Measure the target alone, then the pair, instead of interleaving the two servers' runs (for "
                   "two servers that do not fit in memory together).")
@click.option("--draft-max", "draft_max", type=click.IntRange(min=1), default=None,
              help="The pair's --spec-draft-n-max (default: llama-server's, 3).")
@click.option("--p-min", "p_min", type=click.FloatRange(0.0, 1.0, max_open=True), default=None,
              help="The pair's --spec-draft-p-min (default: llama-server's, 0).")
@click.option("--probe", "probe_file", default=None, metavar="FILE",
              help="A `paircheck probe` result: measure its prompts (template, --n-predict) at its fastest setting "
                   "for DRAFT (unless --draft-max is given) and print what it predicted beside the measurement.")
@click.option("--format", "fmt", type=click.Choice(tuple(FORMAT_NAMES)), default="table", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
def bench_run(
    target: str,
    draft: str,
    extra: tuple[str, ...],
    llama_server: str | None,
    output_dir: str | None,
    ctx_size: int | None,
    runs: int,
    warmup: int,
    n_predict: str,
    context_tokens: str,
    parallel: str,
    together: bool,
    context_file: str | None,
    seed: int,
    prompts_file: str | None,
    chat_template: bool,
    timeout: float,
    ready_timeout: float,
    max_runs: int | None,
    sequential: bool,
    draft_max: int | None,
    p_min: float | None,
    probe_file: str | None,
    fmt: str,
    as_json: bool,
) -> None:
    """Check the pair, then bench TARGET alone and TARGET with DRAFT on llama-server, and compare.

    Both servers are up and their runs interleaved (baseline, draft, draft, baseline, ...),
    so a change in the machine's speed hits both; runs are added while they vary. Flags after
    `--` go to both servers unchanged (e.g. `-- -ngl 99 -t 8`). With lists of --context-tokens,
    --n-predict and --parallel, every combination is measured: one verdict line each.
    """
    from paircheck.api import bench_run as measure_pair

    fmt = "json" if as_json else fmt
    measure = Measure(runs, warmup, n_predict, context_tokens, parallel, together, context_file, seed, prompts_file,
                      chat_template, timeout)
    done = measure_pair(target, draft, measure, extra=extra, llama_server=llama_server, output_dir=output_dir,
                        ctx_size=ctx_size, ready_timeout=ready_timeout, max_runs=max_runs, sequential=sequential,
                        draft_max=draft_max, p_min=p_min, probe_file=probe_file, progress=_progress(fmt == "json"))
    if done.comparison is None:
        assert done.check is not None
        click.echo(render("text", done.check, render_options()), err=fmt == "json")
        if done.check.compatible:  # accepted at load: the server would die during the measurement
            click.echo("not measured: paircheck predicts llama-server aborts with this pair at run time", err=True)
            sys.exit(EXIT_ABORTS)
        click.echo("not measured: the check refuses this pair (llama.cpp would not start with it)", err=True)
        sys.exit(EXIT_INCOMPATIBLE)
    if fmt == "json":
        from paircheck._format.json_format import bench_run_to_dict

        click.echo(json.dumps(bench_run_to_dict(done.points), indent=2, ensure_ascii=False))
        return
    from paircheck._format.text_bench_grid import render_grid, workload_line

    if len(done.points) == 1:
        click.echo(render(FORMAT_NAMES[fmt], done.comparison, render_options()))
        click.echo(workload_line(done.comparison, done.points[0].ctx_size, render_options().width))
    else:
        comps = [p.comparison for p in done.points if p.comparison is not None]
        machine = (done.baseline or {}).get("machine")
        click.echo(render_grid(comps, [p.ctx_size for p in done.points], machine, fmt == "markdown",
                               render_options().width))
    click.echo(f"results: {done.baseline_file}, {done.draft_file}" if len(done.points) == 1
               else f"results: {done.points[0].folder.parent}/<workload>/baseline.json, draft.json (one folder per "
                    "workload)")


ACCEPTANCE_RATE_HELP = (
    "Accepted / drafted (0..1] as llama-server prints it (\"draft acceptance = 0.74 (296 accepted / 400 "
    "generated)\"), and as draftbench and llama-speculative's 'accept' report it: measured at --draft-max K "
    "(needed) and --p-min P (default 0). Turned into the per-token rate by the same model the published "
    "points use (docs/estimate.md).")
PER_TOKEN_HELP = ("The per-token acceptance a (0..1): the chance that each drafted token is the target's, "
                  "position after position, at p-min 0 (Leviathan et al.'s alpha; not what llama-server prints).")
OLD_ACCEPTANCE = ("no longer taken (it read as the per-token rate): give --acceptance-rate R (accepted / drafted, "
                  "as llama-server prints it, with the --draft-max and --p-min it ran at) or "
                  "--per-token-acceptance A")


def _old_acceptance(_ctx: click.Context, _param: click.Parameter, value: float | None) -> None:
    if value is not None:
        raise InputError("--acceptance", OLD_ACCEPTANCE)


@click.command(
    "estimate",
    epilog="Exit codes: 0 modelled, 2 an input could not be read. A model, never a measurement: bench run measures.",
)
@click.argument("target")
@click.argument("draft")
@click.option("--acceptance-rate", "acceptance_rate", type=float, default=None, help=ACCEPTANCE_RATE_HELP)
@click.option("--per-token-acceptance", "per_token_acceptance", type=float, default=None, help=PER_TOKEN_HELP)
@click.option("--acceptance", "old_acceptance", type=float, default=None, hidden=True, expose_value=False,
              callback=_old_acceptance)
@click.option("--draft-max", "draft_max", type=int, default=None,
              help="The --spec-draft-n-max to predict at, and the one --acceptance-rate was measured at (default: "
              "the fastest of 1..16 on a device; without one, llama.cpp's default, 3).")
@click.option("--p-min", "p_min", type=float, default=None,
              help="The --spec-draft-p-min to predict at, and the one --acceptance-rate was measured at (default: "
              "0 with --acceptance-rate, as llama-server's default; else the fastest of 0, 0.5, 0.75, 0.9).")
@click.option("--draft-min", "draft_min", type=click.IntRange(min=0), default=None,
              help="The --spec-draft-n-min --acceptance-rate was measured at and to predict at (default 0).")
@click.option("--from", "from_file", default=None,
              help="Take the acceptance from a bench result, or the measured counts from a probe result.")
@click.option("--cost-ratio", "cost_ratio", type=float, default=None,
              help="Draft/target cost per token c, instead of summing the models' weight sizes "
              "from their tensor infos.")
@click.option("--verify-cost", "verify_growth", type=click.FloatRange(min=0), default=None,
              help="Without a device: the cost of each verified draft token, in target decodes, to model the "
              "speedup with (GIVEN costs; without it no speedup is printed: it depends on the device).")
@click.option("--round-cost", "round_cost", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="With --verify-cost: the fixed cost of each speculative round, in target decodes.")
@gpu_options
@click.option("--vram", default=None, help="The device's memory, e.g. 24GiB (default: the table's or the detected).")
@click.option("--backend", "backend", type=click.Choice(["cuda", "metal", "rocm", "vulkan", "cpu"]), default=None,
              help="The llama.cpp backend the device runs (default: the vendor's: CUDA on NVIDIA, Metal on Apple, "
              "ROCm/Vulkan on AMD and Intel).")
@click.option("--context-tokens", "context_tokens", default="0", show_default=True,
              help="Tokens already in the context when a reply starts (its KV cache is read at every decode); "
              "a comma-separated list gives one row each.")
@click.option("--n-predict", "n_predict", default="128", show_default=True,
              help="Tokens per reply (the decodes read the KV cache as it grows); a list gives one row each.")
@click.option("--parallel", "parallel", default="1", show_default=True,
              help="Requests at once (llama-server --parallel N, N clients): one verification batch carries every "
              "request's draft; a list gives one row each.")
@click.option("--json", "as_json", is_flag=True)
def estimate(
    target: str,
    draft: str,
    acceptance_rate: float | None,
    per_token_acceptance: float | None,
    draft_max: int | None,
    p_min: float | None,
    draft_min: int | None,
    from_file: str | None,
    cost_ratio: float | None,
    verify_growth: float | None,
    round_cost: float,
    gpu: str | None,
    bandwidth: float | None,
    vram: str | None,
    backend: str | None,
    context_tokens: str,
    n_predict: str,
    parallel: str,
    as_json: bool,
) -> None:
    """PREDICT tokens/s of TARGET alone and with DRAFT on a device (--gpu, --bandwidth, or the GPU found
    here), or say what the speedup depends on when there is none."""
    from paircheck.api import estimate as predict

    result = predict(target, draft, acceptance=per_token_acceptance, acceptance_rate=acceptance_rate,
                     draft_max=draft_max, p_min=p_min, draft_min=draft_min, from_file=from_file, cost_ratio=cost_ratio,
                     verify_cost=verify_growth, round_cost=round_cost, gpu=gpu, bandwidth=bandwidth, vram=vram,
                     backend=backend, context_tokens=context_tokens, n_predict=n_predict, parallel=parallel,
                     detect=True)
    click.echo(render("json" if as_json else "text", result, render_options()))
