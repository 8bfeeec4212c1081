"""``paircheck probe TARGET DRAFT...``: check, record, replay, summarise, one result file.

Order of work, chosen so that nothing is loaded in vain and one model is in memory at a
time: every pair is checked first (a draft llama.cpp refuses stops the command before any
server starts); then one llama-server with the target generates every prompt; then, one
after another, a llama-server with each draft is fed the target's tokens. The result file
is rewritten atomically after every prompt, so Ctrl-C or a server that dies keeps what was
measured (``"complete": false`` and ``"error"``).
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from paircheck.errors import InputError
from paircheck.llama_server.http import machine_info, request_json
from paircheck.llama_server.process import RunningServer, crash_hint, llama_server, server_args
from paircheck.llama_server.prompts import PROBE_PROMPTS, Prompt
from paircheck.model import ModelDescription
from paircheck.probe import calibrate, record
from paircheck.probe.replay import PromptTrace, replay, replay_outcomes
from paircheck.probe.result import (
    KIND,
    SCHEMA_VERSION,
    recommendation,
    summary_to_dict,
    workload_to_dict,
    write_result,
)
from paircheck.probe.summary import DEFAULT_P_MIN, K_MAX, DraftSummary, accept_probabilities, summarize
from paircheck.result_file import now, recording
from paircheck.speed.model import Costs, Work, assumed_costs, for_slots
from paircheck.version import __version__
from paircheck.workload import Workload, fill_to_depth

# How long a failed request waits for the server process to be seen exiting, to tell a
# dead server from a network error.
_DEATH_GRACE_S = 2.0
# Flags paircheck sets on the servers it starts; the same ones among the pass-through
# flags would fight them.
# Context beyond the deepest prompt, the longest reply and the widest batch timed: the chat
# template's own tokens and the one-token warm-up.
_CTX_SLACK = 256
_OWN_FLAGS = ("--host", "--port", "-m", "--model", "-md", "--model-draft", "--spec-draft-model", "--spec-type")


@dataclass(frozen=True)
class ProbeSettings:
    n_predict: int = 128
    p_min: tuple[float, ...] = DEFAULT_P_MIN
    temperature: float = 0.0  # 0: greedy, replayed exactly; above: expected values, modelled
    seed: int = 42
    raw: bool = False  # send the prompts as written instead of through the target's chat template
    ctx_size: int = 4096
    timeout: float = 300.0  # seconds without an answer from a server
    ready_timeout: float = 600.0  # seconds for a server to load its model
    server_args: tuple[str, ...] = ()  # passed to every llama-server paircheck starts
    port: int | None = None  # for the servers paircheck starts; default: a free one
    calibrate: bool = True  # measure what each step costs here (probe.calibrate); False: assumed costs
    # The workloads to predict for (workload.parse_grid); empty: one, n_predict tokens after the
    # prompt alone, one request at a time. Recorded once per context depth, at the longest reply.
    workloads: tuple[Workload, ...] = ()
    context_document: str | None = None  # the text deep contexts are filled with; None: built-in

    @property
    def grid(self) -> tuple[Workload, ...]:
        return self.workloads or (Workload(0, self.n_predict, 1),)

    def validate(self) -> None:
        if min(w.n_predict for w in self.grid) < 2:
            raise InputError("--n-predict", "must be at least 2 (the first token is never drafted)")
        if not self.p_min or any(not 0.0 <= p < 1.0 for p in self.p_min):
            raise InputError("--p-min", "values must be in [0, 1)")
        if self.temperature < 0:
            raise InputError("--temperature", "must be >= 0")
        for flag in self.server_args:
            if flag.split("=", 1)[0] in _OWN_FLAGS:
                raise InputError(flag, "paircheck sets this flag on the servers it starts; give it no value after --")

    @property
    def tail_limit(self) -> float:
        positive = [p for p in self.p_min if p > 0]
        return min(positive) if positive else 2.0  # above any confidence: no tail recorded


@dataclass
class Endpoints:
    """Where each model runs: a URL the user started, or None for paircheck to start one."""

    binary: str | None = None
    target_url: str | None = None
    draft_urls: dict[int, str] = field(default_factory=dict)  # by draft index


ProgressFn = Callable[[str, int, int], None]  # (what, done, total)


@dataclass
class Pair:
    path: str
    desc: ModelDescription
    warnings: list[str]
    cost_ratio: float | None


def _local_gguf(desc: ModelDescription, spec: str) -> str:
    """The file llama-server opens with -m (the source says which; none for a folder or a URL)."""
    if desc.origin.server_file is None:
        raise InputError(spec, "the probe starts llama-server on a local GGUF file: give a .gguf path "
                               "(or a running server's --url)")
    return desc.origin.server_file


def check_drafts(target: str, drafts: Sequence[str]) -> tuple[ModelDescription, list[Pair]]:
    """Describe the target and check each draft with llama.cpp's draft-simple rules.

    A refused pair raises InputError with the check's reason: nothing has been loaded yet.
    """
    from paircheck.pipeline import check_descriptions, describe

    target_desc = describe(target)
    pairs: list[Pair] = []
    target_bytes: int | None = None
    for spec in drafts:
        desc = describe(spec)
        report = check_descriptions(target_desc, desc, registry=False, fingerprint=False)
        if not report.compatible:
            index, first = next((i, c) for i, c in enumerate(report.checks) if c.status == "fail")
            # checks[0] is the target's loadable: then the target is at fault, not the draft
            where, what = (target, "llama.cpp cannot load the target") if index == 0 else (
                spec, "llama.cpp refuses this pair")
            raise InputError(where, f"{what} ({first.code} {first.name}: {first.message}); not probed, "
                                    f"nothing was loaded (paircheck {target} {spec} says more)")
        if not pairs:
            target_bytes = _per_token_bytes(target_desc)
        warnings = [f"{w.code} {w.name}: {w.message}" for w in report.warnings if w.code == "LW101"]
        draft_bytes = _per_token_bytes(desc)
        cost = draft_bytes / target_bytes if draft_bytes is not None and target_bytes else None
        pairs.append(Pair(spec, desc, warnings, cost))
    return target_desc, pairs


def _per_token_bytes(desc: ModelDescription) -> int | None:
    """Weight bytes read per decoded token, from the tensor infos; None when the file has none
    (the modelled speedup is then left out, the measured acceptance is not)."""
    from paircheck.speed.model_bytes import read_weight_bytes

    try:
        return read_weight_bytes(desc).per_token
    except InputError:
        return None


@contextmanager
def _server(model: str, url: str | None, settings: ProbeSettings, endpoints: Endpoints,
            log_dir: Path, slots: int = 1) -> Iterator[str]:
    """The URL of a server running ``model``: the user's, or one paircheck starts and stops
    (with ``slots`` slots, each holding ``settings.ctx_size`` tokens)."""
    if url is not None:
        props = request_json(url, "/props", timeout=min(settings.timeout, 30.0))
        running = props.get("model_path") if isinstance(props, dict) else None
        if isinstance(running, str) and Path(running).name != Path(model).name:
            raise InputError(url, f"serves {Path(running).name}, not {Path(model).name}")
        yield url
        return
    if endpoints.binary is None:
        raise InputError(model, "no llama-server to start it with (give --llama-server PATH or a --url)")
    args = server_args(model, None, settings.ctx_size * slots, settings.server_args, slots)
    with llama_server(endpoints.binary, args, settings.ready_timeout, log_dir, port=settings.port) as server:
        with _died(server):
            yield server.url


@contextmanager
def _died(server: RunningServer) -> Iterator[None]:
    """A request that fails because the server died says so, with the end of its log."""
    try:
        yield
    except InputError as exc:
        try:
            # the connection breaks a moment before the dying process can be reaped
            code: int | None = server.process.wait(timeout=_DEATH_GRACE_S)
        except subprocess.TimeoutExpired:
            raise exc from None
        raise InputError(exc.where, f"llama-server exited with code {code} mid-run: {server.log_tail()} "
                                    f"(log: {server.log}){crash_hint(code, server.command)}") from None


@dataclass(frozen=True)
class ProbeOutcome:
    """The result file's content and, per draft in the order given, its summary."""

    data: dict[str, Any]
    summaries: list[DraftSummary]


def probe_drafts(
    target: str,
    drafts: Sequence[str],
    settings: ProbeSettings,
    endpoints: Endpoints,
    output: Path | None,
    prompts: Sequence[Prompt] | None = None,
    progress: ProgressFn | None = None,
    checked: tuple[ModelDescription, list[Pair]] | None = None,
) -> ProbeOutcome:
    """Measure each draft's acceptance for ``target``.

    Every pair is checked first (``checked`` when the caller did it): a refused one raises
    before anything is loaded or written. After that, on an InputError or Ctrl-C the partial
    result is saved (``complete: false``, ``error``) and the exception propagates.
    """
    settings.validate()
    if not drafts:
        raise InputError("DRAFT", "give at least one draft to probe")
    grid = settings.grid
    depths = sorted({w.context_tokens for w in grid})
    # One recording per depth, at the longest reply (a shorter one is its head, replay.head),
    # on servers whose context holds the deepest prompt, that reply and the widest batch timed.
    settings = replace(settings, n_predict=max(w.n_predict for w in grid))
    sizes = calibrate.batch_sizes(max(w.parallel for w in grid))
    # servers with as many slots as the most requests at once asked for: the calibration
    # times the steps of that many slots (calibrate.measure_streams), each slot holding a context
    slots = max(w.parallel for w in grid)
    needed = depths[-1] + settings.n_predict + max(sizes) + _CTX_SLACK
    if settings.workloads and needed > settings.ctx_size:
        settings = replace(settings, ctx_size=needed)
    chosen = list(prompts or PROBE_PROMPTS)
    target_desc, pairs = checked or check_drafts(target, drafts)
    target_path = target if endpoints.target_url else _local_gguf(target_desc, target)
    draft_paths = [p.path if i in endpoints.draft_urls else _local_gguf(p.desc, p.path) for i, p in enumerate(pairs)]
    log_dir = Path(tempfile.mkdtemp(prefix="paircheck-probe-"))
    tick = progress or (lambda what, done, total: None)
    result: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "kind": KIND,
        "complete": False,
        "error": None,
        "paircheck_version": __version__,
        "started_at": now(),
        "finished_at": None,
        "machine": machine_info(),
        "target": {"path": target, "url": endpoints.target_url, "n_tokens": target_desc.vocab.n_tokens},
        "template": "raw" if settings.raw else "applied",
        "n_predict": settings.n_predict,
        "sampling": {"temperature": settings.temperature, "seed": settings.seed,
                     "rule": "greedy: exact replay" if settings.temperature == 0 else SAMPLING_RULE},
        "settings": {**asdict(settings), "p_min": list(settings.p_min), "server_args": list(settings.server_args),
                     "draft_max": list(range(1, K_MAX + 1)), "tail_limit": settings.tail_limit},
        "prompts": [{"id": p.id, "kind": p.kind, "text": p.text} for p in chosen],
        "workload_grid": [w.to_dict() for w in grid],
        "context": {"document": "built-in" if settings.context_document is None else "given",
                    "filled": []},
        "generations": [],
        "calibration": None,
        "drafts": [],
        "recommendation": None,
        "log_dir": str(log_dir),
    }

    def save() -> None:
        if output is not None:
            write_result(output, result)

    summaries: list[DraftSummary] = []
    with recording(result, save):
        save()
        # The target's server stays up to the end: the pair's calibration times the target alone
        # between its speculative runs, so that a machine whose speed drifts (a laptop's clock, a
        # shared VM) shifts both alike, as bench run's interleaving does.
        start = time.perf_counter()
        calibrations: list[calibrate.PairCalibration | None] = [None] * len(pairs)
        with _server(target_path, endpoints.target_url, settings, endpoints, log_dir, slots) as target_url:
            gens, target_costs = _generate(target_url, start, chosen, settings, grid, sizes, result, save, tick)
            forced = []
            for i, (pair, path) in enumerate(zip(pairs, draft_paths, strict=True)):
                forced.append(_force(i, pair, path, gens, settings, grid, sizes, endpoints, log_dir, result, save,
                                     tick))
            first = depths[0]
            if target_costs:
                for i, (pair, path, (traces, draft_costs)) in enumerate(zip(pairs, draft_paths, forced, strict=True)):
                    if draft_costs:
                        calibrations[i] = _calibrate_pair(i, target_path, target_url, path, pair, gens[first],
                                                          traces[first], target_costs[first], draft_costs[first],
                                                          settings, endpoints, log_dir, result, save, tick,
                                                          deep=first > 0)
        foreign = [bool(result["drafts"][i]["foreign_tokens"]) for i in range(len(pairs))]
        result["workloads"] = []
        for w in grid:
            # each draft's recording at this depth, as long as this reply (replay.head)
            heads = [[t.head(w.n_predict) for t in traces[w.context_tokens]] for traces, _ in forced]
            at = [_summarize(pair, gens[w.context_tokens], heads[i], chosen, settings,
                             _costs_at(w, calibrations[i], target_costs, forced[i][1], pair, settings))
                  for i, pair in enumerate(pairs)]
            result["workloads"].append(workload_to_dict(w, at, foreign, heads))
            if not summaries:
                summaries = at  # the first grid point is the top level's, as before grids
                for i, summary in enumerate(at):
                    result["drafts"][i].update(summary_to_dict(summary))
                    result["drafts"][i]["complete"] = True
            save()
        result["recommendation"] = recommendation(list(zip(summaries, foreign, strict=True)))
        save()
    return ProbeOutcome(result, summaries)


def _costs_at(w: Workload, calib: calibrate.PairCalibration | None, target: dict[int, calibrate.ModelCosts],
              draft: dict[int, calibrate.ModelCosts], pair: Pair, settings: ProbeSettings) -> Costs | None:
    """What each step costs at a workload: the target's and the draft's decode and batches as
    measured at its context depth, the per-round costs fitted on the pair's real runs at the
    shallowest depth (the same at every depth: sampling and bookkeeping do not read the
    context), as a step of ``w.parallel`` slots costs (speed.model.for_slots). Without a
    calibration: the weight bytes' assumed costs (``--no-calibrate``), which know no depth."""
    if calib is None:
        if settings.calibrate or pair.cost_ratio is None:
            return None
        return for_slots(assumed_costs(pair.cost_ratio), w.parallel)
    depth = w.context_tokens
    if depth == min(target):
        costs = calib.costs  # the target's decode as timed between the pair's runs
    else:
        t, d = target[depth], draft[depth]
        costs = Costs(t.decode.median, d.decode.median, t.points, d.points, calib.fit.round_ms,
                      calib.fit.round_token_ms, absolute=True, basis="measured")
    return for_slots(costs, w.parallel, K_MAX + 1, target[depth].slot_steps(w.parallel),
                     draft[depth].slot_steps(w.parallel))


SAMPLING_RULE = (
    "sampled: llama-server samples the target at each drafted position and accepts while the "
    "sampled token equals the drafted one (common_sampler_sample_and_accept_n); expected values "
    "from the target's post-sampler probability of each drafted token, along one sampled path"
)


def _generate(url: str, start: float, prompts: Sequence[Prompt], settings: ProbeSettings, grid: Sequence[Workload],
              sizes: Sequence[int], result: dict[str, Any], save: Callable[[], None], tick: ProgressFn
              ) -> tuple[dict[int, list[record.Generation]], dict[int, calibrate.ModelCosts]]:
    """The target's generations on its server (at ``url``, ready since ``start``) at each
    context depth of ``grid``, and, when calibrating, its costs there."""
    depths = sorted({w.context_tokens for w in grid})
    gens: dict[int, list[record.Generation]] = {}
    costs: dict[int, calibrate.ModelCosts] = {}
    result["target"]["server"] = _props(url, settings)
    result["target"]["server_ready_ms"] = calibrate.elapsed_ms(start)
    start = time.perf_counter()
    tick("target", 0, len(prompts) * len(depths))
    for d, depth in enumerate(depths):
        tokenized = [_prompt_tokens(url, prompt, depth, settings, result) for prompt in prompts]
        if settings.calibrate and d == 0:
            calibrate.warm_up(url, tokenized[0], settings.timeout)  # weights paged in before anything is timed
        gens[depth] = []
        for n, (prompt, tokens) in enumerate(zip(prompts, tokenized, strict=True), 1):
            gen = record.generate(url, prompt.id, tokens, prompt.n_predict or settings.n_predict,
                                  settings.temperature, settings.seed, settings.timeout, cache_prompt=depth > 0)
            gens[depth].append(gen)
            entry = {"prompt_id": prompt.id, "context_tokens": depth, "prompt_tokens": list(gen.prompt_tokens),
                     "tokens": list(gen.tokens), "n_predict": gen.n_predict, "stop_type": gen.stop_type,
                     "timings": gen.timings, "client_ms": gen.client_ms}
            if gen.candidates is not None:
                entry["candidates"] = [{str(k): v for k, v in c.items()} for c in gen.candidates]
            result["generations"].append(entry)
            save()
            tick("target", d * len(prompts) + n, len(prompts) * len(depths))
        if settings.calibrate:
            begun = time.perf_counter()
            prefix, filler = _calibration_tokens(gens[depth])
            costs[depth] = calibrate.measure_model(url, prefix, filler, settings.timeout, _decode_of(gens[depth], url),
                                                   sizes, deep=depth > 0,
                                                   parallels=_parallels(grid, depth, result["target"]["server"]))
            if result["calibration"] is None:
                result["calibration"] = {
                    "method": calibrate.METHOD, "measured_at": now(), "server": result["target"]["server"],
                    "server_args": list(settings.server_args), "target": costs[depth].to_dict(), "drafts": [],
                    "ms": calibrate.elapsed_ms(begun), "spread": round(costs[depth].spread, 4), "depths": [],
                }
            result["calibration"]["depths"].append({"context_tokens": depth, "prefix_tokens": len(prefix),
                                                    "target": costs[depth].to_dict(), "drafts": [],
                                                    "ms": calibrate.elapsed_ms(begun)})
            save()
    result["target"]["generation_ms"] = calibrate.elapsed_ms(start)
    return gens, costs


def _parallels(grid: Sequence[Workload], depth: int, props: dict[str, Any]) -> list[int]:
    """The numbers of requests at once to time at ``depth``: those the grid asks for there,
    up to the slots the server has (a user's own server may have fewer: those are priced as
    speed.model.for_slots does without a measurement)."""
    has = props.get("total_slots")
    return [w.parallel for w in grid if w.context_tokens == depth and w.parallel > 1
            and (not isinstance(has, int) or w.parallel <= has)]


def _prompt_tokens(url: str, prompt: Prompt, depth: int, settings: ProbeSettings, result: dict[str, Any]
                   ) -> tuple[int, ...]:
    """The prompt as the target's tokens: through its chat template unless raw, and at a
    context depth, after a document filling the context to that many tokens (workload)."""
    def tokens_of(text: str) -> tuple[int, ...]:
        templated = text if settings.raw else record.apply_template(url, text, settings.timeout)
        return record.tokenize(url, templated, settings.timeout)

    if depth <= 0:
        return tokens_of(prompt.text)
    filled = fill_to_depth(prompt.text, depth, lambda text: len(tokens_of(text)), settings.context_document)
    result["context"]["filled"].append({"context_tokens": depth, "prompt_id": prompt.id, "tokens": filled.tokens,
                                        "document_repeated": filled.repeated})
    return tokens_of(filled.text)


def _calibration_tokens(gens: Sequence[record.Generation]) -> tuple[list[int], list[int]]:
    """A prefix to hold in the cache (the longest prompt and half its generation: batches are
    timed about where verification happens) and tokens to extend it with (the rest)."""
    gen = max(gens, key=lambda g: len(g.tokens))
    half = len(gen.tokens) // 2
    filler = list(gen.tokens[half:]) + [t for g in gens if g is not gen for t in g.tokens]
    return list(gen.prompt_tokens) + list(gen.tokens[:half]), filler


def _decode_of(gens: Sequence[record.Generation], where: str) -> calibrate.Measured | None:
    """The target's decode from its own generations (per prompt), as bench would read it."""
    values = [ms for g in gens if g.timings and (ms := calibrate.decode_ms_of(g.timings, where)) is not None]
    return calibrate.Measured.of(values) if values else None


def _props(url: str, settings: ProbeSettings) -> dict[str, Any]:
    props = request_json(url, "/props", timeout=min(settings.timeout, 30.0))
    if not isinstance(props, dict):
        return {}
    return {k: props.get(k) for k in ("model_path", "build_info", "total_slots")}


def _force(index: int, pair: Pair, path: str, gens: dict[int, list[record.Generation]], settings: ProbeSettings,
           grid: Sequence[Workload], sizes: Sequence[int], endpoints: Endpoints, log_dir: Path, result: dict[str, Any],
           save: Callable[[], None], tick: ProgressFn
           ) -> tuple[dict[int, list[PromptTrace]], dict[int, calibrate.ModelCosts]]:
    entry: dict[str, Any] = {"path": pair.path, "complete": False, "warnings": list(pair.warnings),
                             "cost_ratio": pair.cost_ratio, "traces": []}
    result["drafts"].append(entry)
    stats = record.ForceStats()
    traces: dict[int, list[PromptTrace]] = {}
    costs: dict[int, calibrate.ModelCosts] = {}
    start = time.perf_counter()
    total = sum(len(g) for g in gens.values())
    force_ms = 0.0
    with _server(path, endpoints.draft_urls.get(index), settings, endpoints, log_dir,
                 max(w.parallel for w in grid)) as url:
        entry["server"] = _props(url, settings)
        ready_ms = calibrate.elapsed_ms(start)
        tick(pair.path, 0, total)
        done = 0
        for d, (depth, at) in enumerate(gens.items()):
            start = time.perf_counter()
            traces[depth] = []
            for gen in at:
                trace = record.teacher_force(url, gen, settings.tail_limit, settings.timeout, stats,
                                             target_vocab=result["target"]["n_tokens"])
                traces[depth].append(trace)
                entry["traces"].append({"prompt_id": gen.prompt_id, "context_tokens": depth,
                                        "draft_top": list(trace.draft_top),
                                        "draft_conf": [round(c, 6) for c in trace.draft_conf],
                                        "tails": {str(k): [round(c, 6) for c in v] for k, v in trace.tails.items()},
                                        "near_ties": {str(k): v for k, v in trace.near_ties.items()}})
                save()
                done += 1
                tick(pair.path, done, total)
            force_ms += calibrate.elapsed_ms(start)
            if result["calibration"] is not None:
                start = time.perf_counter()
                prefix, filler = _calibration_tokens(at)
                if d == 0:
                    calibrate.warm_up(url, prefix, settings.timeout)
                costs[depth] = calibrate.measure_model(url, prefix, filler, settings.timeout, None, sizes,
                                                       deep=depth > 0,
                                                       parallels=_parallels(grid, depth, entry["server"]))
                measured = {"path": pair.path, **costs[depth].to_dict(), "ms": calibrate.elapsed_ms(start)}
                if d == 0:
                    result["calibration"]["drafts"].append(dict(measured))
                result["calibration"]["depths"][d]["drafts"].append(measured)
    entry["foreign_tokens"] = [list(f) for f in stats.foreign]
    # What teacher forcing cost: requests, tokens the draft decoded (those past a mismatch
    # included), and the time of the requests (ms) apart from loading the model.
    entry["cost"] = {"requests": stats.requests, "decoded": stats.decoded, "server_ready_ms": ready_ms,
                     "ms": round(force_ms, 1)}
    save()
    return traces, costs


def _calibrate_pair(index: int, target: str, target_url: str, draft: str, pair: Pair,
                    gens: Sequence[record.Generation],
                    traces: Sequence[PromptTrace], target_costs: calibrate.ModelCosts,
                    draft_costs: calibrate.ModelCosts, settings: ProbeSettings, endpoints: Endpoints, log_dir: Path,
                    result: dict[str, Any], save: Callable[[], None], tick: ProgressFn, deep: bool = False
                    ) -> calibrate.PairCalibration | None:
    """The pair's cost per round, from real speculative runs at two draft lengths (one server
    with both models); None when it cannot be run here (no binary, or a draft that would
    abort the server). ``deep``: the recordings are at a context depth, whose prefix every run
    reuses from the cache (calibrate.spec_run)."""
    record_ = result["calibration"]["drafts"][index]
    if result["drafts"][index]["foreign_tokens"]:
        record_["round"] = "not measured: the draft proposes ids the target lacks, which abort llama-server"
        return None
    if endpoints.binary is None or endpoints.target_url or index in endpoints.draft_urls:
        record_["round"] = "not measured: the pair's speculative runs need paircheck to start llama-server"
        return None
    # the longest recorded generation: the most rounds to fit on
    at = max(range(len(gens)), key=lambda j: len(gens[j].tokens))
    # its first SPEC_TOKENS tokens: enough rounds to fit two costs on, at a fraction of the
    # time of the whole generation (the replay of the head is as exact as of the whole)
    gen, trace = gens[at], traces[at].head(calibrate.SPEC_TOKENS)
    n_predict, expected = trace.n_predict, gen.tokens[:len(trace.target)]
    runs = []
    alone: list[float] = []
    start = time.perf_counter()
    tick(f"{pair.path} (pair)", 0, len(calibrate.ROUND_LENGTHS))
    for n, k in enumerate(calibrate.ROUND_LENGTHS, 1):
        args = server_args(target, draft, settings.ctx_size, settings.server_args) + ["--spec-draft-n-max", str(k)]
        with llama_server(endpoints.binary, args, settings.ready_timeout, log_dir, port=settings.port) as server:
            with _died(server):
                calibrate.warm_up(server.url, gen.prompt_tokens, settings.timeout)
                counts = replay(trace, k, 0.0)
                work = Work(counts.tokens, counts.batches, counts.draft_decodes)
                outcomes = {o: Work(c.tokens, c.batches, c.draft_decodes) for o, c in replay_outcomes(trace, k).items()}
                for _ in range(calibrate.SPEC_REPEATS):
                    # the target alone, then the pair, in turn: the same prompt, the same tokens
                    alone.append(calibrate.alone_run(target_url, gen.prompt_tokens, n_predict, settings.timeout,
                                                     deep))
                    runs.append(calibrate.spec_run(server.url, gen.prompt_id, gen.prompt_tokens, expected,
                                                   n_predict, k, work, (counts.drafted, counts.accepted),
                                                   settings.timeout, outcomes, deep))
        tick(f"{pair.path} (pair)", n, len(calibrate.ROUND_LENGTHS))
    # the target's decode as it was while the pair ran (its own generations came earlier)
    interleaved = calibrate.ModelCosts(calibrate.Measured.of(alone), target_costs.batches, target_costs.samples,
                                       target_costs.streams)
    calib = calibrate.calibrate_pair(interleaved, draft_costs, runs)
    record_.update({**calib.to_dict(), "round_calibration_ms": calibrate.elapsed_ms(start)})
    save()
    return calib


def _summarize(pair: Pair, gens: Sequence[record.Generation], traces: Sequence[PromptTrace],
               prompts: Sequence[Prompt], settings: ProbeSettings, costs: Costs | None) -> DraftSummary:
    """The draft's summary at one workload, priced with its costs (None: counts only)."""
    probs = None
    if settings.temperature > 0:
        probs = [accept_probabilities(t, g.candidates or ()) for t, g in zip(traces, gens, strict=True)]
    return summarize(pair.path, [(p.id, p.kind) for p in prompts], traces, settings.p_min, costs, probs)
