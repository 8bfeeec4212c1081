"""Lint ``vllm serve TARGET ... --speculative-config '{json}'`` (vllm/config/speculative.py at 002e77c)."""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Sequence

from paircheck.findings import Report
from paircheck.preflight import codes as C
from paircheck.preflight.codes import ERROR, INFO, WARNING, emit
from paircheck.preflight.lint import Describe, LintResult

METHODS = ("ngram", "ngram_gpu", "medusa", "mlp_speculator", "draft_model", "suffix", "custom_class", "eagle",
           "eagle3", "extract_hidden_states", "mtp", "dflash", "dspark")
FIELDS = frozenset({
    "enforce_eager", "num_speculative_tokens", "model", "method", "draft_tensor_parallel_size",
    "tensor_parallel_size", "quantization", "moe_backend", "attention_backend", "kv_cache_dtype", "max_model_len",
    "revision", "code_revision", "index_share_for_mtp_iteration", "disable_padded_drafter_batch",
    "disable_eagle_block_drop", "use_local_argmax_reduction", "use_heterogeneous_vocab", "prompt_lookup_max",
    "prompt_lookup_min", "parallel_drafting", "num_speculative_tokens_per_batch_size", "suffix_decoding_max_tree_depth",
    "suffix_decoding_max_cached_requests", "suffix_decoding_max_spec_factor", "suffix_decoding_min_token_prob",
    "draft_load_config", "rejection_sample_method", "synthetic_acceptance_rates", "synthetic_acceptance_length",
    "enable_adaptive_verification", "draft_sample_method", "dspark_draft_topk", "speculative_token_tree",
    "disable_by_batch_size",
})


def detect_method(model: str) -> str:
    """vLLM's choice when "method" is omitted, from the draft's name alone."""
    name = model.lower()
    if "." in model and "/" not in model and not os.path.exists(model):
        return "custom_class"
    if name == "ngram":
        return "ngram"
    for needle, method in (("eagle-", "eagle"), ("eagle3", "eagle3"), ("dflash", "dflash"), ("dspark", "dspark")):
        if needle in name:
            return method
    return "draft_model"


def _option(argv: list[str], name: str) -> str | None:
    """argparse-style: ``--name value`` or ``--name=value``; underscores accepted."""
    found = None
    for i, arg in enumerate(argv):
        flag, eq, value = arg.partition("=")
        if flag.replace("_", "-") == name:
            found = value if eq else (argv[i + 1] if i + 1 < len(argv) else "")
    return found


# CLI flags of vLLM's V0 speculative decoding -> their key in --speculative-config.
OLD_FLAGS = {"--speculative-model": "model", "--num-speculative-tokens": "num_speculative_tokens",
             "--speculative-draft-tensor-parallel-size": "draft_tensor_parallel_size",
             "--speculative-max-model-len": "max_model_len",
             "--speculative-disable-by-batch-size": "disable_by_batch_size",
             "--ngram-prompt-lookup-max": "prompt_lookup_max", "--ngram-prompt-lookup-min": "prompt_lookup_min",
             "--speculative-model-quantization": "quantization"}


def _without(argv: list[str], flags: dict[str, str]) -> list[str]:
    """``argv`` without ``flags`` and their values (``--flag value`` or ``--flag=value``)."""
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        flag, eq, _ = arg.partition("=")
        if flag.replace("_", "-") in flags:
            skip = not eq
            continue
        out.append(arg)
    return out


def lint_vllm(argv: list[str], describe: Describe | None) -> LintResult:
    out = LintResult("vllm serve")
    add = out.findings.append
    rest = argv[2:] if len(argv) > 1 and argv[1] == "serve" else argv[1:]
    target = rest[0] if rest and not rest[0].startswith("-") else _option(argv, "--model")
    moved: dict[str, object] = {}
    for old, key in OLD_FLAGS.items():
        value = _option(argv, old)
        if value is not None:
            moved[key] = int(value) if value.isdigit() else value
            add(emit(C.VS001, ERROR, f"{old} does not exist in the vLLM paircheck mirrors (99d7eb5d): vllm serve stops "
                     "with 'unrecognized arguments'", None, argument=old, key=key))
    raw = _option(argv, "--speculative-config")
    if moved:
        config = dict(moved)
        if isinstance(config.get("model"), str) and "method" not in config:
            config = {"method": detect_method(str(config["model"])), **config}
        spelled = json.dumps(config)
        first = next(f for f in out.findings if f.code == C.VS001.code)
        first.fix = f"replace the old flags by --speculative-config '{spelled}'"
        if raw is None:
            out.corrected = _without(argv, OLD_FLAGS) + ["--speculative-config", spelled]
            before = len(out.reports)
            lint_speculative_config(config, target, describe, out, "the --speculative-config it means")
            # The rewrite is offered only as far as paircheck's own check of it goes.
            first.fix += suggestion_caveat(out.reports[before:], describe is not None, target)
            return out
    if raw is None:
        add(emit(C.VS002, INFO, "no --speculative-config: vLLM does not speculate, so there is no pair to check"))
        return out
    try:
        config = json.loads(raw)
    except json.JSONDecodeError as exc:
        add(emit(C.VS003, ERROR, f"--speculative-config is not valid JSON: {exc}"))
        return out
    if not isinstance(config, dict):
        add(emit(C.VS003, ERROR, "--speculative-config must be a JSON object"))
        return out
    lint_speculative_config(config, target, describe, out, "--speculative-config")
    return out


def suggestion_caveat(reports: Sequence[Report] | None, checking: bool, target: str | None) -> str:
    """What a suggested speculative_config is worth by paircheck's own vLLM check: nothing to
    add when vLLM accepts the pair, else why it is offered anyway (refused, or not checked)."""
    refused = [r for r in reports or () if r.first_failure is not None]
    if refused:
        first = refused[0].first_failure
        assert first is not None
        where = f" --for {shlex.quote(target)}" if target else ""
        return (f"; but vLLM refuses this pair ({first.code}, see the pair check), so it would still fail: pick "
                f"a draft vLLM accepts (paircheck pairs{where} --engine vllm)")
    if not reports:
        why = "--no-check" if not checking else "the models could not be read"
        return f" (the pair itself was not checked: {why})"
    return ""


def lint_speculative_config(config: dict[str, object], target: str | None, describe: Describe | None,
                            out: LintResult, where: str = "--speculative-config") -> None:
    """SpeculativeConfig's checks, for the CLI's JSON and for Python's speculative_config={...}."""
    add = out.findings.append
    for key in sorted(set(config) - FIELDS):
        add(emit(C.VS004, ERROR, f"unknown field {key!r} in {where} (pydantic refuses extra fields)",
                 "see vLLM's SpeculativeConfig for the field names", field=key))
    if "tensor_parallel_size" in config:
        add(emit(C.VS005, ERROR, f"tensor_parallel_size inside {where} is an error",
                 "use draft_tensor_parallel_size (1 or the target's)"))
    method = config.get("method")
    model = config.get("model")
    if method is not None and method not in METHODS:
        add(emit(C.VS006, ERROR, f"unknown method {method!r}", f"one of {', '.join(METHODS)}", method=method))
    if method is None and model is None:
        add(emit(C.VS007, ERROR, "neither \"method\" nor \"model\" is given"))
    if method is None and isinstance(model, str):
        detected = detect_method(model)
        add(emit(C.VS008, WARNING, f"no \"method\": vLLM picks {detected!r} from the name {model!r}; some releases "
                 "(0.13) then refuse draft models", f"add \"method\": \"{detected}\"", method=detected))
        method = detected
    n = config.get("num_speculative_tokens")
    if n is None and method not in ("ngram", "suffix", "mtp"):
        add(emit(C.VS009, WARNING, "num_speculative_tokens is not given: it must come from the draft's config, else "
                 "vLLM refuses"))
    elif n is not None and (not isinstance(n, int) or isinstance(n, bool) or n <= 0):
        add(emit(C.VS009, ERROR, f"num_speculative_tokens must be a positive integer, got {n!r}"))
    if config.get("use_heterogeneous_vocab") and method != "draft_model":
        add(emit(C.VS010, ERROR, "use_heterogeneous_vocab only works with method='draft_model'"))
    if describe is None or method not in ("draft_model", "eagle", "eagle3", "dflash", "dspark", "mtp"):
        return
    if not target or not isinstance(model, str):
        add(emit(C.VS011, INFO, "pair not checked: the target or the draft is not given as a name"))
        return
    from paircheck.errors import InputError
    from paircheck.pipeline import check_descriptions

    try:
        t, d = describe(target), describe(model)
    except InputError as exc:
        add(emit(C.VS011, INFO, f"pair not checked: {exc}"))
        return
    if method == "draft_model" and config.get("use_heterogeneous_vocab"):
        return  # any vocabulary is allowed then
    report = check_descriptions(t, d, "vllm", str(method))
    out.reports.append(report)
    kind_fail = next((c for c in report.checks if c.name == "vllm_drafter_kind" and c.status == "fail"), None)
    if kind_fail is not None and "method" not in config:
        drafter = kind_fail.details.get("drafter")
        add(emit(C.VS012, ERROR, f"{model!r} is a {drafter} head but vLLM would detect {method!r} from its name",
                 f"add \"method\": \"{drafter}\"", drafter=drafter))
