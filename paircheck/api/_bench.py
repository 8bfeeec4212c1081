"""``paircheck bench`` (measure a running llama-server), ``bench compare`` and ``bench run``
as library functions: each reads and checks its inputs before anything is started, and
returns what its command renders. The measuring itself is ``paircheck.bench``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paircheck.bench.measure import DEFAULT_URL
from paircheck.errors import InputError

if TYPE_CHECKING:
    from paircheck.bench.compare import Comparison
    from paircheck.bench.runner import PairRun
    from paircheck.llama_server.prompts import Prompt



@dataclass(frozen=True)
class Measure:
    """How to measure, as ``bench`` and ``bench run`` take it: passes, the workload (each of
    context_tokens, n_predict, parallel a comma-separated list; ``bench`` takes one value
    each), the prompts and how they are sent."""

    runs: int = 5
    warmup: int = 1
    n_predict: str = "128"
    context_tokens: str = "0"
    parallel: str = "1"
    together: bool = False
    context_file: str | None = None
    seed: int = 42
    prompts_file: str | None = None
    chat_template: bool = False
    timeout: float = 300.0


def _prompts(path: str | None) -> list[Prompt] | None:
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


def bench_server(url: str, label: str, output: str, measure: Measure = Measure(),
                 progress: bool = False) -> dict[str, Any]:
    """``paircheck bench``: measure the llama-server at ``url`` (one configuration, named
    ``label``) into the JSON file ``output``; the result as written. What was measured before
    an error or Ctrl-C is kept in the file (complete: false)."""
    from paircheck.bench.measure import BenchSettings, run_bench
    from paircheck.workload import parse_grid

    grid = parse_grid(measure.context_tokens, measure.n_predict, measure.parallel)
    if len(grid) > 1:
        raise InputError("--context-tokens/--n-predict/--parallel", "one value each here: bench measures one "
                         "server configuration into one file (bench run TARGET DRAFT takes lists)")
    prompts = _prompts(measure.prompts_file)
    document, source = _document(measure.context_file)
    w = grid[0]
    settings = BenchSettings(url, measure.runs, measure.warmup, w.n_predict, measure.seed, measure.chat_template,
                             measure.timeout, w.context_tokens, w.parallel, measure.together)
    path = Path(output)
    try:
        return run_bench(settings, label, path, prompts, progress, document=document, context_source=source)
    except InputError as exc:
        raise InputError(exc.where, f"{exc.message} (partial results kept in {path}, complete: false)") from None
    except KeyboardInterrupt:
        raise InputError(str(path), "interrupted; partial results kept (complete: false)") from None


def _attach_prediction(comp: Comparison, probe_file: str | None, draft: str | None, draft_max: int | None,
                       p_min: float) -> None:
    """``--probe FILE``: what that probe predicted for this draft and setting, shown beside the
    measurement (the file is read even if it then has nothing for the draft: a bad file is an error)."""
    if probe_file is None:
        return
    from paircheck.probe.result import load_probe_result, prediction_for

    data = load_probe_result(probe_file)
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


def bench_compare(baseline: str, draft: str, probe_file: str | None = None) -> Comparison:
    """``paircheck bench compare``: two bench results compared (speedup on equal work,
    acceptance, equal outputs), with a probe's prediction for the draft's setting beside it."""
    from paircheck.bench.compare import compare, nothing_comparable
    from paircheck.bench.measure import load_bench_result
    from paircheck.speed.estimate import DEFAULT_DRAFT_MAX

    draft_result, baseline_result = load_bench_result(draft), load_bench_result(baseline)
    why = nothing_comparable(baseline_result, draft_result)
    if why is not None:
        # Not a comparison that found nothing (exit 0, "0 baseline runs"): the input is unusable.
        raise InputError(f"{baseline} and {draft}", f"nothing to compare: {why}")
    comp = compare(baseline_result, draft_result)
    path, k, p = _server_setting(draft_result)
    _attach_prediction(comp, probe_file, path, k if k is not None else DEFAULT_DRAFT_MAX, p)
    return comp


def bench_run(target: str, draft: str, measure: Measure = Measure(), *, extra: tuple[str, ...] = (),
              llama_server: str | None = None, output_dir: str | None = None, ctx_size: int | None = None,
              ready_timeout: float = 600.0, max_runs: int | None = None, sequential: bool = False,
              draft_max: int | None = None, p_min: float | None = None, probe_file: str | None = None,
              progress: bool = False) -> PairRun:
    """``paircheck bench run``: check the pair, then measure TARGET alone and with DRAFT on
    llama-server (``llama_server``: the binary, else the one on PATH) at every workload of
    ``measure``, interleaved, and compare. With ``probe_file``, the probe's prompts, template,
    reply length and (unless given) its fastest setting for this draft. Every input is read
    before anything is started. The result's ``comparison`` is None when the check refuses the
    pair or predicts it aborts (``check`` says which): nothing was measured."""
    from paircheck.bench.measure import BenchSettings
    from paircheck.bench.runner import check_ctx_size, run_pair
    from paircheck.llama_server.process import find_llama_server
    from paircheck.speed.estimate import DEFAULT_DRAFT_MAX
    from paircheck.workload import Workload, parse_grid

    grid = parse_grid(measure.context_tokens, measure.n_predict, measure.parallel)
    if measure.runs < 1 or measure.warmup < 0:
        raise InputError("bench run", "--runs must be >= 1 and --warmup >= 0")
    prompts = _prompts(measure.prompts_file)
    document, source = _document(measure.context_file)
    chat_template = measure.chat_template
    out = Path(output_dir) if output_dir else Path(f"paircheck-bench-{datetime.now():%Y%m%d-%H%M%S}")
    if probe_file is not None:
        # the probe's own prompts, template and length, and its fastest setting for this draft
        # unless given: the measurement then confirms (or not) exactly what was predicted
        from paircheck.llama_server.prompts import Prompt
        from paircheck.probe.result import load_probe_result, prediction_for

        probed = load_probe_result(probe_file)  # a bad file is named before anything is started
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
    settings = BenchSettings(DEFAULT_URL, measure.runs, measure.warmup, first.n_predict, measure.seed, chat_template,
                             measure.timeout, first.context_tokens, first.parallel, measure.together)
    draft_args = ([] if draft_max is None else ["--spec-draft-n-max", str(draft_max)]) + (
        [] if p_min is None else ["--spec-draft-p-min", f"{p_min:g}"])
    try:
        done = run_pair(target, draft, binary, out, settings, prompts, ctx_size, extra, progress,
                        ready_timeout=ready_timeout, max_runs=max_runs, sequential=sequential,
                        draft_args=draft_args, grid=grid, document=document, context_source=source)
    except KeyboardInterrupt:
        raise InputError(str(out), "interrupted; partial results kept there (complete: false)") from None
    except InputError as exc:
        raise InputError(exc.where, f"{exc.message} (results so far in {out})") from None
    if done.comparison is not None:
        _attach_prediction(done.comparison, probe_file, draft, draft_max or DEFAULT_DRAFT_MAX, p_min or 0.0)
    return done


def bench_p_min(path: str) -> float:
    """The --spec-draft-p-min a bench result's server ran with (0, the pinned default, when not set)."""
    try:
        result = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0.0
    return _server_setting(result)[2] if isinstance(result, dict) else 0.0
