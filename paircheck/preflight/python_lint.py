"""Lint a Python file's speculative-decoding setup without running it (``paircheck lint-py``).

The file is parsed with ``ast`` only. What is read:

* vLLM ``LLM(...)``, ``EngineArgs(...)``, ``AsyncEngineArgs(...)`` (when the file imports
  vllm): keywords are checked against EngineArgs' fields (vllm/engine/arg_utils.py at
  vllm-project/vllm 99d7eb5d6a512cfcc5a2b104f24ebf2d6cda772b) and LLM's named parameters
  (vllm/entrypoints/llm.py at 10fdb8f0d75a3ad1122b87020f1359d3fc51f2ca); LLM passes unknown
  keywords to the EngineArgs dataclass, which raises TypeError. ``speculative_config={...}``
  (a literal dict) gets the same checks as ``vllm serve --speculative-config``.
* ``llm.generate(...)`` on an object made by ``LLM(...)``: its keywords at 10fdb8f0 are
  prompts, sampling_params, use_tqdm, lora_request, priority, tokenization_kwargs.
* transformers ``model.generate(..., assistant_model=...)``: guide spellings of its
  assisted-generation keywords (draft_model=, num_speculative_tokens=) are refused by
  ``_validate_model_kwargs`` (src/transformers/generation/utils.py at huggingface/transformers
  1097d4b3f8dd6440add50f87a2784b03cc0b4c85).
* string literals (and lists of string literals) holding a ``vllm serve`` or llama.cpp
  command: linted like ``lint-cmd``.

Where target and draft are literal names that can be read (local paths, cached repos), the
pair is checked like ``lint-cmd`` does.
"""

from __future__ import annotations

import ast
import json
import shlex
from collections.abc import Callable

from paircheck.errors import InputError
from paircheck.findings import Report
from paircheck.preflight import codes as C
from paircheck.preflight.codes import ERROR, INFO, WARNING, LintFinding, emit
from paircheck.preflight.lint import Describe, LintResult
from paircheck.preflight.vllm import detect_method, lint_speculative_config, suggestion_caveat

# EngineArgs' dataclass fields at 99d7eb5d (vllm/engine/arg_utils.py, class EngineArgs).
ENGINE_ARGS_FIELDS = frozenset({
    "model", "served_model_name", "tokenizer", "hf_config_path", "runner", "convert", "task", "skip_tokenizer_init",
    "enable_prompt_embeds", "tokenizer_mode", "trust_remote_code", "allowed_local_media_path", "allowed_media_domains",
    "download_dir", "safetensors_load_strategy", "load_format", "config_format", "dtype", "kv_cache_dtype", "seed",
    "max_model_len", "cuda_graph_sizes", "cudagraph_capture_sizes", "max_cudagraph_capture_size",
    "distributed_executor_backend", "pipeline_parallel_size", "tensor_parallel_size", "decode_context_parallel_size",
    "data_parallel_size", "data_parallel_rank", "data_parallel_start_rank", "data_parallel_size_local",
    "data_parallel_address", "data_parallel_rpc_port", "data_parallel_hybrid_lb", "data_parallel_backend",
    "enable_expert_parallel", "all2all_backend", "enable_dbo", "dbo_decode_token_threshold",
    "dbo_prefill_token_threshold", "disable_nccl_for_dp_synchronization", "eplb_config", "enable_eplb",
    "expert_placement_strategy", "_api_process_count", "_api_process_rank", "num_redundant_experts", "eplb_window_size",
    "eplb_step_interval", "eplb_log_balancedness", "max_parallel_loading_workers", "block_size",
    "enable_prefix_caching", "prefix_caching_hash_algo", "disable_sliding_window", "disable_cascade_attn", "swap_space",
    "cpu_offload_gb", "gpu_memory_utilization", "kv_cache_memory_bytes", "max_num_batched_tokens",
    "max_num_partial_prefills", "max_long_partial_prefills", "long_prefill_token_threshold", "max_num_seqs",
    "max_logprobs", "logprobs_mode", "disable_log_stats", "aggregate_engine_logging", "revision", "code_revision",
    "rope_scaling", "rope_theta", "hf_token", "hf_overrides", "tokenizer_revision", "quantization", "enforce_eager",
    "disable_custom_all_reduce", "limit_mm_per_prompt", "enable_mm_embeds", "interleave_mm_strings", "media_io_kwargs",
    "mm_processor_kwargs", "disable_mm_preprocessor_cache", "mm_processor_cache_gb", "mm_processor_cache_type",
    "mm_shm_cache_max_object_size_mb", "mm_encoder_tp_mode", "mm_encoder_attn_backend", "io_processor_plugin",
    "skip_mm_profiling", "video_pruning_rate", "enable_lora", "max_loras", "max_lora_rank", "default_mm_loras",
    "fully_sharded_loras", "max_cpu_loras", "lora_dtype", "lora_extra_vocab_size", "ray_workers_use_nsight",
    "num_gpu_blocks_override", "num_lookahead_slots", "model_loader_extra_config", "ignore_patterns",
    "enable_chunked_prefill", "disable_chunked_mm_input", "disable_hybrid_kv_cache_manager",
    "structured_outputs_config", "reasoning_parser", "guided_decoding_backend", "guided_decoding_disable_fallback",
    "guided_decoding_disable_any_whitespace", "guided_decoding_disable_additional_properties",
    "logits_processor_pattern", "speculative_config", "show_hidden_metrics_for_version", "otlp_traces_endpoint",
    "collect_detailed_traces", "scheduling_policy", "scheduler_cls", "external_parameters", "pooler_config",
    "override_pooler_config", "compilation_config", "worker_cls", "worker_extension_cls", "kv_transfer_config",
    "kv_events_config", "generation_config", "enable_sleep_mode", "override_generation_config", "model_impl",
    "override_attention_dtype", "calculate_kv_scales", "mamba_cache_dtype", "mamba_ssm_cache_dtype", "mamba_block_size",
    "additional_config", "use_tqdm_on_load", "pt_load_map_location", "enable_multimodal_encoder_data_parallel",
    "logits_processors", "async_scheduling", "kv_sharing_fast_prefill"
})
# LLM.__init__'s named parameters at 10fdb8f0 (newer than the EngineArgs above).
LLM_PARAMS = frozenset({
    "model", "runner", "convert", "tokenizer", "tokenizer_mode", "skip_tokenizer_init", "trust_remote_code",
    "allowed_local_media_path", "allowed_media_domains", "tensor_parallel_size", "dtype", "quantization", "revision",
    "tokenizer_revision", "seed", "gpu_memory_utilization", "swap_space", "cpu_offload_gb", "enforce_eager",
    "enable_return_routed_experts", "disable_custom_all_reduce", "hf_token", "hf_overrides", "mm_processor_kwargs",
    "pooler_config", "structured_outputs_config", "profiler_config", "attention_config", "kv_cache_memory_bytes",
    "compilation_config", "logits_processors"
})
ASYNC_ENGINE_ARGS_FIELDS = frozenset({"enable_log_requests", "disable_log_requests"})
GENERATE_PARAMS = frozenset({"prompts", "sampling_params", "use_tqdm", "lora_request", "priority",
                             "tokenization_kwargs", "prompt_token_ids", "prompt_adapter_request",
                             "guided_options_request"})
# Keywords guides give LLM/EngineArgs (some were EngineArgs fields before V1) -> their key in
# speculative_config.
SPEC_KEYWORDS = {
    "draft_model": "model", "speculative_model": "model", "draft_model_name": "model", "assistant_model": "model",
    "num_speculative_tokens": "num_speculative_tokens", "speculative_num_tokens": "num_speculative_tokens",
    "num_draft_tokens": "num_speculative_tokens", "speculative_tokens": "num_speculative_tokens",
    "speculative_draft_tensor_parallel_size": "draft_tensor_parallel_size",
    "speculative_max_model_len": "max_model_len", "speculative_disable_by_batch_size": "disable_by_batch_size",
    "ngram_prompt_lookup_max": "prompt_lookup_max", "ngram_prompt_lookup_min": "prompt_lookup_min",
    "speculative_model_quantization": "quantization", "speculative_method": "method",
    "speculative_algorithm": "method",
}
# Guide spellings for transformers' generate() -> the real keyword.
TRANSFORMERS_KEYWORDS = {
    "draft_model": "assistant_model", "assistant": "assistant_model", "speculative_model": "assistant_model",
    "draft": "assistant_model", "draft_tokenizer": "assistant_tokenizer",
    "num_speculative_tokens": "num_assistant_tokens", "speculative_num_tokens": "num_assistant_tokens",
    "num_draft_tokens": "num_assistant_tokens", "draft_num_tokens": "num_assistant_tokens",
}
VLLM_CONSTRUCTORS = ("LLM", "EngineArgs", "AsyncEngineArgs")
SPEC_WORDS = ("spec", "draft", "ngram", "eagle", "medusa", "mtp", "assistant", "lookahead")


def _name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _literal(node: ast.expr | None) -> object:
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NOT_LITERAL


_NOT_LITERAL = object()


def _imports(tree: ast.Module) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module.split(".")[0])
    return found


class _Linter:
    def __init__(self, tree: ast.Module, describe: Describe | None,
                 lint_command: Callable[[list[str]], LintResult]) -> None:
        self.tree = tree
        self.describe = describe
        self.lint_command = lint_command
        self.out = LintResult("python")
        self.imports = _imports(tree)
        self.assigned: dict[str, ast.Call] = {}  # variable -> the call it was last assigned from
        self.found = 0

    def add(self, finding: LintFinding, line: int) -> None:
        finding.message = f"line {line}: {finding.message}"
        finding.details.setdefault("line", line)
        self.out.findings.append(finding)

    def run(self) -> LintResult:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.assigned[target.id] = node.value
        calls = sorted((n for n in ast.walk(self.tree) if isinstance(n, ast.Call)),
                       key=lambda n: (n.lineno, n.col_offset))
        for call in calls:
            name = _name(call.func)
            if name in VLLM_CONSTRUCTORS and "vllm" in self.imports:
                self.vllm_constructor(call, name)
            elif name == "generate" and isinstance(call.func, ast.Attribute):
                self.generate(call, call.func.value)
        for node in ast.walk(self.tree):
            self.command_literal(node)
        if not self.found:
            self.out.findings.append(emit(
                C.PY001, INFO, "no vLLM LLM/EngineArgs call, no launch command string and no generate(...) with an "
                "assistant model: nothing was checked"))
        self.out.findings.sort(key=lambda f: f.details.get("line", 0))
        return self.out

    # --- vLLM ---------------------------------------------------------------------------
    def vllm_constructor(self, call: ast.Call, name: str) -> None:
        self.found += 1
        keywords = {kw.arg: kw.value for kw in call.keywords if kw.arg is not None}
        target_node = call.args[0] if call.args else keywords.get("model")
        target = _literal(target_node)
        target_name = target if isinstance(target, str) else None
        accepted = ENGINE_ARGS_FIELDS | (LLM_PARAMS if name == "LLM" else frozenset()) | (
            ASYNC_ENGINE_ARGS_FIELDS if name == "AsyncEngineArgs" else frozenset())
        moved: dict[str, object] = {}
        for kw in call.keywords:
            if kw.arg is None or kw.arg in accepted:
                continue
            key = SPEC_KEYWORDS.get(kw.arg)
            value = _literal(kw.value)
            if key is not None:
                moved[key] = value if value is not _NOT_LITERAL else kw.arg.upper()
            if key is not None or any(w in kw.arg.lower() for w in SPEC_WORDS):
                self.add(emit(C.VS020, ERROR, f"{name}(...) has no keyword {kw.arg}=: vLLM raises \"TypeError: "
                              f"EngineArgs.__init__() got an unexpected keyword argument '{kw.arg}'\"",
                              None, keyword=kw.arg, call=name), kw.value.lineno)
            else:
                self.add(emit(C.VS022, WARNING, f"{name}(...) keyword {kw.arg}= is not an EngineArgs field in the vLLM "
                              "paircheck mirrors (99d7eb5d): older and that vLLM raise TypeError",
                              "check it against your vLLM version", keyword=kw.arg, call=name), kw.value.lineno)
        for later in self._generate_calls_on(call):
            for kw in later.keywords:
                key = SPEC_KEYWORDS.get(kw.arg or "")
                if key is not None and kw.arg not in GENERATE_PARAMS:
                    value = _literal(kw.value)
                    moved.setdefault(key, value if value is not _NOT_LITERAL else (kw.arg or "").upper())
        if moved:
            config = self._config_from(moved)
            fix = f"speculative_config={_py_dict(config)}"
            checked: list[Report] | None = None
            if "speculative_config" not in keywords:
                checked = self._check_config(config, target_name, call.lineno, "the speculative_config it means")
            # The rewrite is offered only as far as paircheck's own check of it goes.
            said = "" if checked is None else suggestion_caveat(checked, self.describe is not None, target_name)
            for finding in self.out.findings:
                if finding.code == C.VS020.code and finding.details.get("call") == name and finding.fix is None:
                    target_word = _py_repr(target_name) if target_name else "TARGET"
                    finding.fix = f"write {name}({target_word}, ..., {fix}){said}"
        spec = keywords.get("speculative_config")
        if spec is not None:
            value = _literal(spec)
            if isinstance(value, dict):
                self._check_config(value, target_name, spec.lineno, "speculative_config")
            elif value is None:
                self.add(emit(C.VS002, INFO, f"{name}(speculative_config=None): vLLM does not speculate"), spec.lineno)
            else:
                self.add(emit(C.VS023, INFO, f"{name}(speculative_config=...) is not a literal dict: not checked"),
                         spec.lineno)
        elif not moved and name == "LLM":
            self.add(emit(C.VS002, INFO, "LLM(...) without speculative_config: vLLM does not speculate, so there is "
                          "no pair to check"), call.lineno)

    def _generate_calls_on(self, made: ast.Call) -> list[ast.Call]:
        """``x.generate(...)`` calls where ``x = <made>``: their speculative keywords belong in the engine."""
        names = {name for name, call in self.assigned.items() if call is made}
        return [n for n in ast.walk(self.tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                and n.func.attr == "generate" and isinstance(n.func.value, ast.Name) and n.func.value.id in names]

    def _config_from(self, moved: dict[str, object]) -> dict[str, object]:
        config: dict[str, object] = {}
        model = moved.get("model")
        method = moved.get("method")
        if method is None and isinstance(model, str):
            method = detect_method(model)
        if method is not None:
            config["method"] = method
        if model is not None:
            config["model"] = model
        for key, value in moved.items():
            config.setdefault(key, value)
        return config

    def _check_config(self, config: dict[str, object], target: str | None, line: int,
                      where: str) -> list[Report]:
        sub = LintResult("python")
        lint_speculative_config(config, target, self.describe, sub, where)
        for finding in sub.findings:
            self.add(finding, line)
        self.out.reports += sub.reports
        return sub.reports

    def generate(self, call: ast.Call, receiver: ast.expr) -> None:
        made_by = self.assigned.get(receiver.id) if isinstance(receiver, ast.Name) else None
        if made_by is not None and _name(made_by.func) == "LLM" and "vllm" in self.imports:
            self.vllm_generate(call)
            return
        keywords = {kw.arg for kw in call.keywords if kw.arg}
        guessed = bool(keywords & (set(TRANSFORMERS_KEYWORDS) | {"assistant_model"}))
        if "transformers" not in self.imports and ("vllm" in self.imports or not guessed):
            return  # another library's generate(): an unknown receiver in a vLLM file is not transformers
        self.transformers_generate(call, receiver, made_by)

    def vllm_generate(self, call: ast.Call) -> None:
        self.found += 1
        for kw in call.keywords:
            if kw.arg is None or kw.arg in GENERATE_PARAMS:
                continue
            key = SPEC_KEYWORDS.get(kw.arg)
            value = _literal(kw.value)
            shown = _py_repr(value) if value is not _NOT_LITERAL else kw.arg.upper()
            setting = f"\"{key}\": {shown}" if key else f"{kw.arg}={shown}"
            self.add(emit(C.VS021, ERROR, f"LLM.generate(...) has no keyword {kw.arg}=: vLLM raises \"TypeError: "
                          f"LLM.generate() got an unexpected keyword argument '{kw.arg}'\"; speculation is set once, "
                          "for the engine", f"put {setting} in LLM(..., speculative_config={{...}}) (see the LLM line)",
                          keyword=kw.arg), kw.value.lineno)

    # --- transformers -------------------------------------------------------------------
    def transformers_generate(self, call: ast.Call, receiver: ast.expr, made_by: ast.Call | None) -> None:
        self.found += 1
        assistant: ast.expr | None = None
        for kw in call.keywords:
            if kw.arg == "assistant_model":
                assistant = kw.value
            real = TRANSFORMERS_KEYWORDS.get(kw.arg or "")
            if real is None:
                continue
            if real == "assistant_model":
                assistant = kw.value
            self.add(emit(C.PY010, ERROR, f"generate(...) has no keyword {kw.arg}=: transformers raises \"ValueError: "
                          f"The following `model_kwargs` are not used by the model: ['{kw.arg}']\"",
                          f"write {real}= instead of {kw.arg}=", keyword=kw.arg, real=real), kw.value.lineno)
        if assistant is None:
            return
        target = _pretrained_name(made_by)
        draft = _pretrained_name(self.assigned.get(assistant.id) if isinstance(assistant, ast.Name) else
                                 assistant if isinstance(assistant, ast.Call) else None)
        if self.describe is None:
            return
        if target is None or draft is None:
            self.add(emit(C.PY011, INFO, "the target or the assistant model is not loaded from a literal name in this "
                          "file (X.from_pretrained(\"...\")): the pair was not checked"), call.lineno)
            return
        from paircheck.pipeline import check_descriptions

        try:
            t, d = self.describe(target), self.describe(draft)
        except InputError as exc:
            self.add(emit(C.PY011, INFO, f"pair not checked: {exc}"), call.lineno)
            return
        self.out.reports.append(check_descriptions(t, d, "transformers"))

    # --- command strings ----------------------------------------------------------------
    def command_literal(self, node: ast.AST) -> None:
        argv: list[str] | None = None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value.strip()
            first = text.split(None, 1)[0] if text else ""
            if not (first.endswith("vllm") and text.split()[1:2] == ["serve"]) and first.rsplit("/", 1)[-1] not in (
                    "llama-server", "llama-cli"):
                return
            try:
                argv = shlex.split(text)
            except ValueError:
                return
        elif isinstance(node, ast.List | ast.Tuple) and node.elts and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
            words = [str(e.value) for e in node.elts if isinstance(e, ast.Constant)]
            head = words[0].rsplit("/", 1)[-1]
            if (head == "vllm" and words[1:2] == ["serve"]) or head in ("llama-server", "llama-cli"):
                argv = words
        if not argv or len(argv) < 2:
            return
        self.found += 1
        line = getattr(node, "lineno", 0)
        sub = self.lint_command(argv)
        for finding in sub.findings:
            self.add(finding, line)
        self.out.reports += sub.reports


def _pretrained_name(call: ast.Call | None) -> str | None:
    """The literal model name of ``X.from_pretrained("name", ...)``."""
    if call is None or _name(call.func) != "from_pretrained":
        return None
    node = call.args[0] if call.args else next(
        (kw.value for kw in call.keywords if kw.arg == "pretrained_model_name_or_path"), None)
    value = _literal(node)
    return value if isinstance(value, str) else None


def _py_repr(value: object) -> str:
    return json.dumps(value) if isinstance(value, (str, int, float, bool)) or value is None else repr(value)


def _py_dict(config: dict[str, object]) -> str:
    return "{" + ", ".join(f"{json.dumps(k)}: {_py_repr(v)}" for k, v in config.items()) + "}"


def lint_python(source: str, filename: str, describe: Describe | None,
                lint_command: Callable[[list[str]], LintResult]) -> LintResult:
    """Lint a Python file's text; ``lint_command(argv)`` lints command strings found in it."""
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:
        raise InputError(filename, f"not valid Python (line {exc.lineno}): {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise InputError(filename, f"cannot parse it as Python: {type(exc).__name__}") from None
    return _Linter(tree, describe, lint_command).run()
