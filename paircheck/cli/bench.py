"""``paircheck bench`` (measure a llama-server), ``bench compare``, ``bench run``, and ``estimate``.

The commands parse options and pick a format; the work is in ``paircheck.bench``.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from paircheck._format import render
from paircheck._format.text_bench import render_bench_result
from paircheck.bench.compare import FORMATS, Comparison
from paircheck.bench.measure import DEFAULT_URL, BenchSettings, load_bench_result, run_bench
from paircheck.cli.options import gpu_options, pick_device, render_options
from paircheck.errors import InputError
from paircheck.outcome import EXIT_ABORTS

EXIT_OK, EXIT_INCOMPATIBLE = 0, 1
# This command's --format names: "table" is the text format.
FORMAT_NAMES = {"table": "text", "markdown": "markdown", "json": "json"}


def _progress(as_json: bool) -> bool:
    return not as_json and sys.stderr.isatty()


def _prompts(path: str | None) -> Any:
    if path is None:
        return None
    from paircheck.llama_server.prompts import load_prompts

    return load_prompts(path, allow_messages=True)


def _document(path: str | None) -> tuple[str | None, str]:
    """``--context-file``: the text to fill a context depth with, and how results name it."""
    if path is None:
        return None, "built-in"
    from paircheck.workload import read_document

    try:
        text = read_document(path)
    except InputError as exc:  # the same reading as probe's, the option named
        raise InputError(path, f"{exc.message} (--context-file)") from None
    return text, path


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


def _render(comp: Comparison, fmt: str) -> str:
    return render(FORMAT_NAMES[fmt], comp, render_options())


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
    from paircheck.workload import parse_grid

    grid = parse_grid(context_tokens, n_predict, parallel)
    if len(grid) > 1:
        raise InputError("--context-tokens/--n-predict/--parallel", "one value each here: bench measures one "
                         "server configuration into one file (bench run TARGET DRAFT takes lists)")
    if not label or not output:
        raise InputError("bench", "--label and --output are needed to measure (or use `bench compare` / `bench run`)")
    prompts = _prompts(prompts_file)
    document, source = _document(context_file)
    w = grid[0]
    settings = BenchSettings(url, runs, warmup, w.n_predict, seed, chat_template, timeout, w.context_tokens,
                             w.parallel, together)
    path = Path(output)
    try:
        result = run_bench(settings, label, path, prompts, _progress(as_json), document=document,
                           context_source=source)
    except InputError as exc:
        raise InputError(exc.where, f"{exc.message} (partial results kept in {path}, complete: false)") from None
    except KeyboardInterrupt:
        raise InputError(str(path), "interrupted; partial results kept (complete: false)") from None
    if as_json:
        click.echo(json.dumps(result, indent=1, ensure_ascii=False))
    else:
        click.echo(f"MEASURED {label}: {len(result['requests'])} requests against {url}, written to {path}")
        click.echo(render_bench_result(result, render_options().width))


def _attach_prediction(comp: Comparison, probe_file: str | None, draft: str | None, draft_max: int | None,
                       p_min: float) -> None:
    """``--probe FILE``: what that probe predicted for this draft and setting, shown beside the
    measurement (the file is read even if it then has nothing for the draft: a bad file is an error)."""
    if probe_file is None:
        return
    from paircheck.probe.result import load_probe_result as load_probe
    from paircheck.probe.result import prediction_for

    data = load_probe(probe_file)
    if draft is None:
        raise InputError("--probe", "the draft's file is not known from these bench results (no server_command)")
    comp.predicted = prediction_for(data, draft, probe_file, draft_max, p_min)


def _server_setting(result: dict[str, Any]) -> tuple[str | None, int | None, float]:
    """The draft file, --spec-draft-n-max and --spec-draft-p-min of a bench result's server command."""
    command = [str(w) for w in result.get("server_command") or []]

    def value(*flags: str) -> str | None:
        for i, w in enumerate(command[:-1]):
            if w in flags:
                return command[i + 1]
        return None

    k, p = value("--spec-draft-n-max", "--draft-max", "--draft"), value("--spec-draft-p-min", "--draft-p-min")
    try:
        return value("-md", "--model-draft"), int(k) if k else None, float(p) if p else 0.0
    except ValueError:
        return value("-md", "--model-draft"), None, 0.0


@bench.command("compare", epilog="Exit codes: 0 compared, 2 a result file could not be read or the two have "
               "nothing to compare (an empty run, no prompt in common).")
@click.argument("baseline")
@click.argument("draft")
@click.option("--probe", "probe_file", default=None, metavar="FILE",
              help="A `paircheck probe` result: print what it predicted for this draft and setting beside the "
                   "measurement.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
def bench_compare(baseline: str, draft: str, probe_file: str | None, fmt: str, as_json: bool) -> None:
    """Compare two bench results: speedup on equal work, acceptance, equal outputs."""
    from paircheck.bench.compare import compare, nothing_comparable

    draft_result, baseline_result = load_bench_result(draft), load_bench_result(baseline)
    why = nothing_comparable(baseline_result, draft_result)
    if why is not None:
        # Not a comparison that found nothing (exit 0, "0 baseline runs"): the input is unusable.
        raise InputError(f"{baseline} and {draft}", f"nothing to compare: {why}")
    comp = compare(baseline_result, draft_result)
    path, k, p = _server_setting(draft_result)
    _attach_prediction(comp, probe_file, path, k if k is not None else 3, p)
    click.echo(_render(comp, "json" if as_json else fmt))


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
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
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
    from paircheck.bench.runner import check_ctx_size, run_pair
    from paircheck.llama_server.process import find_llama_server
    from paircheck.workload import parse_grid

    fmt = "json" if as_json else fmt
    # Every input is read before anything is started: bad input costs no server start.
    grid = parse_grid(context_tokens, n_predict, parallel)
    if runs < 1 or warmup < 0:
        raise InputError("bench run", "--runs must be >= 1 and --warmup >= 0")
    prompts = _prompts(prompts_file)
    document, source = _document(context_file)
    out = Path(output_dir) if output_dir else Path(f"paircheck-bench-{datetime.now():%Y%m%d-%H%M%S}")
    if probe_file is not None:
        # the probe's own prompts, template and length, and its fastest setting for this draft
        # unless given: the measurement then confirms (or not) exactly what was predicted
        from paircheck.llama_server.prompts import Prompt
        from paircheck.probe.result import load_probe_result as load_probe
        from paircheck.probe.result import prediction_for
        from paircheck.workload import Workload

        probed = load_probe(probe_file)  # a bad file is named before anything is started
        if prompts is None:
            prompts = [Prompt(str(p["id"]), str(p["text"]), str(p.get("kind") or "user"))
                       for p in probed.get("prompts", []) if isinstance(p, dict) and "id" in p and "text" in p]
            chat_template = probed.get("template") == "applied"
            probe_n = int(probed.get("n_predict") or 0)
            if probe_n > 0:
                grid = list(dict.fromkeys(Workload(w.context_tokens, probe_n, w.parallel) for w in grid))
        if draft_max is None:
            best = prediction_for(probed, draft, probe_file)
            if best is not None:
                draft_max, p_min = best["draft_max"], p_min if p_min is not None else (best["p_min"] or None)
    if ctx_size is not None:
        check_ctx_size(ctx_size, grid, prompts)
    binary = find_llama_server(llama_server)
    first = grid[0]
    settings = BenchSettings(DEFAULT_URL, runs, warmup, first.n_predict, seed, chat_template, timeout,
                             first.context_tokens, first.parallel, together)
    draft_args = ([] if draft_max is None else ["--spec-draft-n-max", str(draft_max)]) + (
        [] if p_min is None else ["--spec-draft-p-min", f"{p_min:g}"])
    try:
        done = run_pair(target, draft, binary, out, settings, prompts, ctx_size, extra,
                        _progress(fmt == "json"), ready_timeout=ready_timeout, max_runs=max_runs,
                        sequential=sequential, draft_args=draft_args, grid=grid, document=document,
                        context_source=source)
    except KeyboardInterrupt:
        raise InputError(str(out), "interrupted; partial results kept there (complete: false)") from None
    except InputError as exc:
        raise InputError(exc.where, f"{exc.message} (results so far in {out})") from None
    if done.comparison is None:
        assert done.check is not None
        click.echo(render("text", done.check, render_options()), err=fmt == "json")
        if done.check.compatible:  # accepted at load: the server would die during the measurement
            click.echo("not measured: paircheck predicts llama-server aborts with this pair at run time", err=True)
            sys.exit(EXIT_ABORTS)
        click.echo("not measured: the check refuses this pair (llama.cpp would not start with it)", err=True)
        sys.exit(EXIT_INCOMPATIBLE)
    _attach_prediction(done.comparison, probe_file, draft, draft_max or 3, p_min or 0.0)
    if fmt == "json":
        from paircheck._format.json_format import bench_run_to_dict

        click.echo(json.dumps(bench_run_to_dict(done.points), indent=2, ensure_ascii=False))
        return
    from paircheck._format.text_bench_grid import render_grid, workload_line

    if len(done.points) == 1:
        click.echo(_render(done.comparison, fmt))
        click.echo(workload_line(done.comparison, done.points[0].ctx_size, render_options().width))
    else:
        comps = [p.comparison for p in done.points if p.comparison is not None]
        machine = (done.baseline or {}).get("machine")
        click.echo(render_grid(comps, [p.ctx_size for p in done.points], machine, fmt == "markdown",
                               render_options().width))
    click.echo(f"results: {done.baseline_file}, {done.draft_file}" if len(done.points) == 1
               else f"results: {out}/<workload>/baseline.json, draft.json (one folder per workload)")


def _is_probe(path: str) -> bool:
    """A probe result (paircheck probe) rather than a bench result: read its kind."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False  # the bench reader says what is wrong with the file
    return b'"kind": "paircheck-probe"' in head


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


def _bench_p_min(path: str) -> float:
    """The --spec-draft-p-min a bench result's server ran with (0, the pinned default, when not set)."""
    try:
        command = [str(w) for w in json.loads(Path(path).read_text(encoding="utf-8")).get("server_command") or []]
    except (OSError, ValueError, AttributeError):
        return 0.0
    for flag in ("--spec-draft-p-min", "--draft-p-min"):
        if flag in command[:-1]:
            try:
                return float(command[command.index(flag) + 1])
            except ValueError:
                return 0.0
    return 0.0


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
    from paircheck.pipeline import describe
    from paircheck.speed.acceptance import RATE, Acceptance
    from paircheck.speed.estimate import DEFAULT_DRAFT_MAX, estimate_pair
    from paircheck.workload import parse_grid

    if draft_max is not None and draft_max < 1:
        # Checked here, before any default can stand in for it (0 used to become 3).
        raise InputError("--draft-max", f"must be >= 1, got {draft_max}")
    if p_min is not None and not 0.0 <= p_min < 1.0:
        raise InputError("--p-min", f"must be at least 0 and below 1, got {p_min:g}")
    given = [o for o, v in (("--acceptance-rate", acceptance_rate), ("--per-token-acceptance", per_token_acceptance),
                            ("--from", from_file)) if v is not None]
    if len(given) > 1:
        raise InputError(given[1], f"give one of {', '.join(given)}, not several")
    reported = None
    if acceptance_rate is not None:
        if not 0.0 < acceptance_rate <= 1.0:
            raise InputError("--acceptance-rate", f"must be above 0 and at most 1, got {acceptance_rate:g}")
        if draft_max is None:
            raise InputError("--acceptance-rate", "needs --draft-max K: the --spec-draft-n-max it was measured at "
                             "(accepted / drafted depends on it)")
        reported = Acceptance(acceptance_rate, RATE, draft_max, p_min or 0.0, draft_min or 0, "given")
        p_min = p_min or 0.0
    if per_token_acceptance is not None:
        if not 0.0 <= per_token_acceptance <= 1.0:
            raise InputError("--per-token-acceptance", f"must be between 0 and 1, got {per_token_acceptance:g}")
        reported = Acceptance(per_token_acceptance, basis="given")
    grid = parse_grid(context_tokens, n_predict, parallel)
    picked = pick_device(gpu, bandwidth, vram)
    hardware = picked.hardware if picked is not None else None
    if hardware is not None and backend is not None:
        from dataclasses import replace

        hardware = replace(hardware, backend_class="rocm/vulkan" if backend in ("rocm", "vulkan") else backend)
    basis = picked.basis if picked is not None else "table"
    source = None
    if from_file is not None and _is_probe(from_file):
        from paircheck.probe.estimate_from import estimate_from_probe

        result = estimate_from_probe(describe(target), describe(draft), from_file, draft_max, cost_ratio,
                                     hardware, basis, grid[0].context_tokens)
        result.device_note = picked.note if picked is not None else None
        click.echo(render("json" if as_json else "text", result, render_options()))
        return
    borrowed = None
    if from_file is not None:
        from paircheck.bench.from_result import acceptance_from, other_models_warning

        measured = acceptance_from(from_file)
        source = f"bench:{from_file}"
        draft_max = draft_max or measured.draft_max
        # accepted / drafted at the server's setting (its defaults, the pinned build's, when not set)
        at_k, at_p = measured.draft_max or DEFAULT_DRAFT_MAX, _bench_p_min(from_file)
        reported = Acceptance(measured.acceptance, RATE, at_k, at_p, 0, "measured",
                              f"in {from_file} (draft_n_accepted / draft_n)")
    target_desc, draft_desc = describe(target), describe(draft)
    if from_file is not None:
        borrowed = other_models_warning(measured, from_file, target_desc, draft_desc)
    result = estimate_pair(target_desc, draft_desc, None, draft_max or DEFAULT_DRAFT_MAX, source,
                           cost_ratio, verify_growth or 0.0, round_cost, hardware, basis, None, draft_max,
                           reported=reported, p_min=p_min, workloads=grid, draft_min=draft_min,
                           costs_given=verify_growth is not None)
    if borrowed is not None:
        result.warnings.insert(0, borrowed)  # whose number it is comes before what is made of it
    result.device_note = picked.note if picked is not None else None
    if as_json:
        click.echo(render("json", result, render_options()))
    else:
        click.echo(render("text", result, render_options()))
