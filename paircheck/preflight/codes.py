"""Every code pre-flight can print, declared once (``paircheck explain PF010`` reads them here).

PF: llama.cpp launch lines (common/arg.cpp of the pinned llama.cpp), VS: vLLM (``vllm serve``
and its Python API), OM: Ollama Modelfiles, PY: Python files read by ``lint-py``, LF: the
launch files ``paircheck lint`` reads (compose files, systemd units, manifests, scripts).

A finding is always made from its Rule (``emit``), never from a string literal, so a code
cannot be printed that ``explain`` does not know. The severity belongs to the finding, not
to the rule: the same rule can be an error in one command and a warning in another (a
draft without --spec-type is an error for a local draft, a warning for a Hub repo).

Outcome classes (what the exit code says, see ``LintResult.status``):
* a ``fail`` finding (printed "error") or an incompatible pair makes the command NOT OK (exit 1);
* a finding whose rule is in ``UNCHECKED`` means something the command relies on was not
  checked (unknown launcher, a pair that could not be read, no speculation configured):
  NOT CHECKED (exit 3), never OK.
"""

from __future__ import annotations

from typing import Any

from paircheck.findings import FAIL, INFO, WARN, Finding, Rule

# A lint finding is the check's Finding; its status says how bad it is: "fail" (the launch
# breaks, or speculation silently never happens), "warn", or "info".
ERROR, WARNING = FAIL, WARN
LintFinding = Finding
SEVERITY_WORD = {FAIL: "error", WARN: "warning", INFO: "info"}

_SOURCES = {
    "PF": "ggml-org/llama.cpp as vendored in llama-cpp-python 0.3.36: common/arg.cpp (the generated option "
          "table paircheck/preflight/llama_args.py), common/speculative.cpp, examples/deprecation-warning",
    "VS": "vllm-project/vllm: vllm/config/speculative.py at 002e77c1f0ef9b19cff8b9e21cfbd6feb3d6b443, "
          "vllm/engine/arg_utils.py at 99d7eb5d6a512cfcc5a2b104f24ebf2d6cda772b, vllm/entrypoints/llm.py at "
          "10fdb8f0d75a3ad1122b87020f1359d3fc51f2ca",
    "OM": "ollama/ollama: parser/parser.go and docs/modelfile.mdx at fb30760",
    "PY": "huggingface/transformers src/transformers/generation/utils.py at "
          "1097d4b3f8dd6440add50f87a2784b03cc0b4c85; vLLM as for VS codes",
    "LF": "the Compose Specification (compose-spec/compose-spec, spec.md: Interpolation, command, "
          "entrypoint, volumes), systemd.service(5) and systemd.exec(5) (ExecStart=, Environment=), "
          "Kubernetes' Container API (command, args, env, $(VAR) expansion)",
}


def _rule(code: str, name: str, title: str, explanation: str, fix: str, kind: str = "check") -> Rule:
    return Rule(code, name, title, explanation, fix, kind=kind, source=_SOURCES[code[:2]])


# --- llama.cpp launch lines -------------------------------------------------------------
PF001 = _rule(
    "PF001", "invalid_argument", "Every option exists in the pinned llama.cpp",
    "llama.cpp stops with 'error: invalid argument: X' for an option its argument table "
    "(common/arg.cpp) does not have for that program. Options invented by guides "
    "(--draft-min-accept-tokens) and options removed without a stub (-cd, --spec-replace) end "
    "here. paircheck names the nearest real option from the generated option table.",
    "Use the option paircheck names (see the program's --help).")
PF002 = _rule(
    "PF002", "removed_argument", "No removed option is used",
    "Options removed with a stub throw 'the argument has been removed. use ...' with "
    "llama.cpp's own hint (--draft, --draft-max, --draft-min, --spec-ngram-size-n, ...); the "
    "server does not start.",
    "Use the replacement that llama.cpp's message names.")
PF003 = _rule(
    "PF003", "missing_value", "Every option that takes a value has one",
    "An option at the end of the line without its value: 'expected value for argument'.",
    "Give the value after the option (two arguments, no '=').")
PF004 = _rule(
    "PF004", "bad_value", "Every value is one the option's handler accepts",
    "The handler throws for values it cannot use: an unknown --spec-type name, a negative "
    "--spec-draft-n-max, a number that std::stoi cannot read, a bad LLAMA_ARG_* variable.",
    "Give a value from the option's --help text.")
PF005 = _rule(
    "PF005", "repeated", "No option is given twice",
    "llama.cpp logs DEPRECATED for a repeated option and keeps only the last value, so the "
    "first one is silently lost (--spec-type is the exception: it accumulates).",
    "Give the option once (comma-separate lists).", kind="warning")
PF006 = _rule(
    "PF006", "env_overridden", "Environment variables that the command line overrides",
    "An LLAMA_ARG_* variable is set for an option that the command line also gives: the "
    "command line wins, the variable is ignored.",
    "Unset the variable or drop the option, so only one source sets it.", kind="note")
PF007 = _rule(
    "PF007", "no_model", "A model is given",
    "Programs other than llama-server stop with 'error: --model is required'.",
    "Add -m TARGET.gguf.")
PF008 = _rule(
    "PF008", "no_speculation", "The command speculates at all",
    "Neither a draft model nor a --spec-type is given: the command runs without speculative "
    "decoding, so there is no pair to check. The lint outcome is NOT CHECKED (exit 3), not OK.",
    "Add -md DRAFT.gguf --spec-type draft-simple (or an n-gram --spec-type), or do not put "
    "paircheck in front of this command.")
PF010 = _rule(
    "PF010", "draft_without_spec_type", "A draft comes with --spec-type",
    "In the pinned llama.cpp the default speculative type list is 'none': a draft given with "
    "-md but no --spec-type is loaded and never used, without any warning (unless the draft's "
    "metadata makes llama.cpp detect MTP/DFlash, see PF013).",
    "Add --spec-type draft-simple.")
PF011 = _rule(
    "PF011", "type_needs_draft", "A draft type has a draft model",
    "--spec-type draft-simple without a draft throws 'draft-simple requires a draft context' "
    "and runs without speculation; draft-eagle3/dflash/dspark are silently skipped.",
    "Add -md DRAFT.gguf (or -hfd REPO).")
PF012 = _rule(
    "PF012", "type_detect_abort", "Type detection from the draft's metadata does not abort",
    "Without --spec-type, llama.cpp reads the draft's <arch>.block_count as UINT32 to detect "
    "MTP; a draft without it aborts with GGML_ASSERT in gguf_get_val_u32.",
    "Give --spec-type explicitly.")
PF013 = _rule(
    "PF013", "type_detected", "Type detected from the draft's metadata",
    "No --spec-type, but the draft is a DFlash/DSpark/MTP head: llama.cpp detects the type "
    "from its metadata (common_speculative_types_from_gguf) and speculates with it.",
    "None needed; give --spec-type to make it explicit.", kind="note")
PF014 = _rule(
    "PF014", "ngram_cache_files", "ngram-cache has cache files",
    "ngram-cache without -lcs/-lcd starts from an empty cache and drafts little at first.",
    "Give -lcs STATIC.bin and/or -lcd DYNAMIC.bin.", kind="note")
PF015 = _rule(
    "PF015", "chained_types", "Draft and n-gram types fail together",
    "All types are set up together: if the draft is refused, the n-gram types are lost too "
    "(no speculation at all).",
    "Make sure the pair passes (paircheck TARGET DRAFT) or drop the draft type.", kind="note")
PF020 = _rule(
    "PF020", "remote_not_checked", "A model given as a Hub repo was not checked",
    "-hf/-hfd repos are downloaded by llama-server at start. paircheck reads the GGUF that "
    "llama-server would pick (its metadata only, by range requests, or from the local Hugging "
    "Face cache) and checks the pair; when it cannot (offline, the Hub unreachable, no such "
    "repo or quant), the pair was not checked. The outcome is then NOT CHECKED (exit 3).",
    "Download the files and give them with -m/-md, or run paircheck on the files.")
PF021 = _rule(
    "PF021", "model_unreadable", "Both models can be read",
    "A model file that paircheck cannot read (missing, truncated, not a GGUF): the llama.cpp "
    "program the line starts (llama-server, llama-cli, ...) would fail to load it.",
    "Fix the path or the file.")
PF022 = _rule(
    "PF022", "model_unreachable", "The model files can be reached from here",
    "A launch file names its model by a path inside a container that no volume maps to this "
    "machine (a named volume, a path baked into the image, a Kubernetes volume), or by a "
    "variable whose value is only known when it runs. That is not an error: the flags are "
    "still checked, but the pair was not, so the outcome is NOT CHECKED (exit 3; not with "
    "--no-check).",
    "Mount the models with a bind volume (./models:/models) or check the pair itself: paircheck TARGET DRAFT.")
PF030 = _rule(
    "PF030", "unknown_launcher", "The launcher is one paircheck knows",
    "paircheck reads llama.cpp programs (llama-server, llama-cli, ...; legacy names too), "
    "'vllm serve', and Ollama Modelfiles. Any other program is not checked at all: the "
    "outcome is NOT CHECKED (exit 3), so a launch script does not proceed on a check that "
    "did not happen.",
    "Put paircheck in front of a launcher it knows, or check the pair itself: paircheck TARGET DRAFT.")
PF040 = _rule(
    "PF040", "legacy_binary", "The program has its current name",
    "llama.cpp renamed its programs with a 'llama-' prefix on 2024-06-12 (PR #7809): main "
    "became llama-cli, server llama-server, speculative llama-speculative, and so on. The "
    "pinned llama.cpp has no CMake target for the old names (its Makefile stops with 'The "
    "Makefile build has been replaced by CMake'); where an old build left the 2024 stub "
    "(examples/deprecation-warning), it prints \"WARNING: The binary 'main' is deprecated. "
    "Please use 'llama-cli' instead.\" and exits 1. paircheck lints the rest of the line as "
    "the new program.",
    "Use the new name paircheck gives.")
PF041 = _rule(
    "PF041", "binary_removed", "The program still exists",
    "Some programs of the 2024 rename no longer exist in the pinned llama.cpp (llama-infill, "
    "llama-gritlm, llama-save-load-state, ...); others are now stubs that only print a "
    "deprecation warning (llama-llava-cli: use llama-mtmd-cli).",
    "Use llama-server or llama-cli, which do speculative decoding.")
PF042 = _rule(
    "PF042", "no_speculation_program", "The program can speculate",
    "Only llama-server, llama-cli, llama-speculative, llama-speculative-simple (draft "
    "models) and llama-lookup (n-grams) speculate. llama-simple parses its own few options "
    "(-m, -n, -ngl) and llama-completion has no speculative options.",
    "Use llama-server or llama-cli with -md DRAFT --spec-type draft-simple.")
PF050 = _rule(
    "PF050", "flag_not_in_build", "The llama-server that will run has every flag",
    "The option table paircheck parses with is the pinned llama.cpp's. When the program of the "
    "line is on this machine (its path, or its name on PATH, as run would start it), its own "
    "--help lists the flags that build has: a flag the pinned llama.cpp knows but the installed "
    "build lacks (older builds: --spec-draft-n-max was --draft-max) makes that build stop with "
    "its own error, which paircheck quotes from running the binary with that flag and --help "
    "(nothing is loaded: llama.cpp parses every argument before it starts).",
    "Use the build's spelling (its --help; paircheck names the nearest), or update llama.cpp.")
PF051 = _rule(
    "PF051", "flag_only_in_build", "A flag the pinned llama.cpp lacks is in the installed build",
    "The pinned llama.cpp refuses this flag (PF001/PF002), but the --help of the build that will "
    "run lists it: that build accepts it, so it is not an error for this machine. paircheck's "
    "own reading of the line still uses the pinned table.",
    "Nothing to do for this build; the pinned llama.cpp (and newer builds) spell it otherwise.")

# --- vLLM ---------------------------------------------------------------------------------
VS001 = _rule(
    "VS001", "removed_flag", "No removed speculative flag",
    "--speculative-model, --num-speculative-tokens, --speculative-draft-tensor-parallel-size, "
    "--speculative-max-model-len, --ngram-prompt-lookup-max/min were replaced by one "
    "--speculative-config JSON: vLLM's CLI options are made from EngineArgs' fields, and "
    "EngineArgs at vllm-project/vllm 99d7eb5d has only speculative_config, so argparse stops "
    "with 'unrecognized arguments'.",
    "Put the values in --speculative-config '{\"method\": \"draft_model\", \"model\": DRAFT, "
    "\"num_speculative_tokens\": N}'.")
VS002 = _rule(
    "VS002", "no_speculation", "vLLM is told to speculate",
    "Without --speculative-config (or speculative_config= in Python) vLLM does not "
    "speculate; there is no pair to check, so the outcome is NOT CHECKED (exit 3).",
    "Add --speculative-config '{\"method\": \"draft_model\", \"model\": DRAFT, \"num_speculative_tokens\": 4}'.")
VS003 = _rule(
    "VS003", "bad_json", "The speculative config is a JSON object",
    "--speculative-config must parse as a JSON object, else argparse refuses the command.",
    "Quote the JSON for the shell: --speculative-config '{\"model\": ...}'.")
VS004 = _rule(
    "VS004", "unknown_field", "Every speculative config field exists",
    "SpeculativeConfig (vllm/config/speculative.py at 002e77c) is a pydantic dataclass "
    "that refuses extra fields.",
    "Use the field names of vLLM's SpeculativeConfig.")
VS005 = _rule(
    "VS005", "tensor_parallel_size", "No tensor_parallel_size in the speculative config",
    "tensor_parallel_size inside the speculative config is an error in vLLM.",
    "Use draft_tensor_parallel_size (1 or the target's).")
VS006 = _rule(
    "VS006", "unknown_method", "The method is one vLLM has",
    "\"method\" must be one of vLLM's speculative methods.",
    "Use one of: ngram, ngram_gpu, medusa, mlp_speculator, draft_model, suffix, eagle, eagle3, mtp, dflash, dspark.")
VS007 = _rule(
    "VS007", "no_method", "A method or a model is given",
    "A speculative config with neither \"method\" nor \"model\" is refused.",
    "Give \"method\" (and \"model\" for draft methods).")
VS008 = _rule(
    "VS008", "method_detected", "The method is given, not guessed",
    "Without \"method\", vLLM guesses it from the draft's name (eagle3, dflash, ... or "
    "draft_model); some releases (0.13) then refuse draft models.",
    "Add \"method\" explicitly.", kind="warning")
VS009 = _rule(
    "VS009", "num_tokens", "num_speculative_tokens is a positive integer",
    "num_speculative_tokens must be given (or come from the draft's config) and be > 0.",
    "Add \"num_speculative_tokens\": 4 (a common start).")
VS010 = _rule(
    "VS010", "heterogeneous_vocab", "use_heterogeneous_vocab only with draft_model",
    "use_heterogeneous_vocab only works with method='draft_model'.",
    "Drop it or use method draft_model.")
VS011 = _rule(
    "VS011", "not_checked", "The pair could be read",
    "The target or the draft could not be read (no network, not in the Hub cache, not a "
    "local path): the pair was not checked, so the outcome is NOT CHECKED (exit 3).",
    "Download both models (huggingface-cli download) or give local paths, then lint again.")
VS012 = _rule(
    "VS012", "head_not_detected", "vLLM detects the head's kind from its name",
    "The draft is a head (EAGLE-3, DFlash, ...) whose name does not tell vLLM which one, so "
    "vLLM would run it as the wrong method.",
    "Add \"method\" with the head's kind.")
VS020 = _rule(
    "VS020", "engine_kwarg", "Speculative settings go in speculative_config",
    "vLLM's LLM(...) passes extra keywords to EngineArgs, a dataclass: a keyword it does not "
    "have raises TypeError (\"EngineArgs.__init__() got an unexpected keyword argument "
    "'draft_model'\"). Since V1, every speculative setting is in one dict, "
    "speculative_config (EngineArgs at vllm-project/vllm 99d7eb5d; LLM at 10fdb8f0): "
    "draft_model=, speculative_model=, num_speculative_tokens=, speculative_num_tokens= "
    "(as keywords of LLM/EngineArgs/AsyncEngineArgs) do not exist.",
    "LLM(model=TARGET, speculative_config={\"method\": \"draft_model\", \"model\": DRAFT, "
    "\"num_speculative_tokens\": 4}).")
VS021 = _rule(
    "VS021", "generate_kwarg", "LLM.generate takes no speculative settings",
    "LLM.generate(prompts, sampling_params, *, use_tqdm, lora_request, priority, "
    "tokenization_kwargs) (vllm/entrypoints/llm.py at 10fdb8f0): speculation is set once "
    "for the engine; any other keyword raises TypeError.",
    "Move the setting into LLM(..., speculative_config={...}).")
VS022 = _rule(
    "VS022", "unknown_engine_kwarg", "Every LLM/EngineArgs keyword exists",
    "A keyword that EngineArgs at 99d7eb5d does not have and LLM at 10fdb8f0 does not "
    "name; newer vLLM releases may have added it, older ones raise TypeError.",
    "Check the keyword against your vLLM version's EngineArgs.", kind="warning")
VS023 = _rule(
    "VS023", "config_not_literal", "The speculative config can be read without running the file",
    "speculative_config is not a literal dict (a variable, a function call): paircheck reads "
    "the file with ast and never runs it, so the config was not checked.",
    "Write speculative_config as a literal dict, or lint the running command line.")

# --- Ollama Modelfiles --------------------------------------------------------------------
OM001 = _rule(
    "OM001", "invalid_command", "Every line is a Modelfile instruction",
    "ollama create refuses a Modelfile with an unknown instruction (parser/parser.go at "
    "fb30760: 'command must be one of \"from\", \"license\", ...').",
    "Use FROM, DRAFT, PARAMETER, ... (SPECULATE is not one).")
OM002 = _rule(
    "OM002", "no_from", "The Modelfile has a FROM line",
    "A Modelfile without FROM cannot be created.",
    "Add FROM ./target.gguf.")
OM003 = _rule(
    "OM003", "unknown_parameter", "No invented draft parameter",
    "Ollama has no draft_model/draft/n_draft/spec_type PARAMETER; guides that show one are "
    "wrong. The draft is a DRAFT line; its token count is PARAMETER draft_num_predict.",
    "Use a DRAFT line and PARAMETER draft_num_predict.")
OM004 = _rule(
    "OM004", "draft_num_predict", "draft_num_predict is a positive integer",
    "draft_num_predict must be a non-negative integer; 0 turns speculative decoding off.",
    "PARAMETER draft_num_predict 3.")
OM005 = _rule(
    "OM005", "draft_missing", "The DRAFT file exists",
    "DRAFT must be a local path that exists.",
    "Download the drafter first.")
OM006 = _rule(
    "OM006", "draft_is_from", "DRAFT is not the FROM model",
    "'DRAFT must not reference the same local path as FROM'.",
    "Point DRAFT at the small model.")
OM007 = _rule(
    "OM007", "from_not_local", "The FROM model is a local file",
    "A remote FROM model rejects DRAFT ('DRAFT cannot be used with remote models'); the "
    "pair was not checked, so the outcome is NOT CHECKED (exit 3).",
    "FROM a local GGUF.")
OM008 = _rule(
    "OM008", "not_checked", "The Modelfile's pair could be read",
    "FROM or DRAFT could not be read: the pair was not checked (NOT CHECKED, exit 3).",
    "Fix the paths or the files.")
OM009 = _rule(
    "OM009", "no_draft", "draft_num_predict has a draft",
    "draft_num_predict without DRAFT only matters for a model with embedded MTP tensors.",
    "Add a DRAFT line, or drop the parameter.")
OM010 = _rule(
    "OM010", "no_draft_line", "The Modelfile speculates at all",
    "No DRAFT line: Ollama does not speculate (unless the model embeds MTP tensors); there "
    "is no pair to check, so the outcome is NOT CHECKED (exit 3).",
    "Add DRAFT ./drafter.gguf.")

# --- launch files (paircheck lint) ------------------------------------------------------
LF001 = _rule(
    "LF001", "unset_variable", "Every variable a compose file uses is set",
    "Compose replaces ${VAR} and $VAR from the shell's environment and the .env file next to "
    "the compose file; a variable set in neither becomes an empty string (Compose only warns "
    "'The \"VAR\" variable is not set. Defaulting to a blank string.'), so the launcher sees "
    "an empty argument or none.",
    "Set the variable in .env, or give a default: ${VAR:-value}.", kind="warning")
LF002 = _rule(
    "LF002", "required_variable", "Every required variable is set",
    "${VAR:?message} and ${VAR?message} make Compose stop with the message when VAR is unset "
    "(or empty, for :?): the service is never created.",
    "Set the variable in .env or in the environment.")
LF003 = _rule(
    "LF003", "runtime_variable", "Variables known only at run time",
    "A systemd unit or a shell script uses a variable it does not set itself (Environment=, "
    "an assignment in the script): its value is only known when the command runs, so the "
    "words it gives were checked as written and a model named by it was not read.",
    "Set the variable in the file (Environment=, VAR=value) to have it checked.", kind="note")

# --- Python files (lint-py) ---------------------------------------------------------------
PY001 = _rule(
    "PY001", "nothing_found", "The file launches something paircheck reads",
    "No vLLM LLM/EngineArgs/AsyncEngineArgs call, no 'vllm serve'/'llama-server' string and "
    "no transformers generate(...) was found: nothing was checked (NOT CHECKED, exit 3).",
    "Lint the launch command instead: paircheck lint-cmd \"...\".")
PY010 = _rule(
    "PY010", "generate_kwarg", "transformers generate() gets the assisted-generation keywords",
    "transformers' generate() passes unknown keywords to the model and then raises "
    "\"The following `model_kwargs` are not used by the model: [...] (note: typos in the "
    "generate arguments will also show up in this list)\" (src/transformers/generation/utils.py "
    "_validate_model_kwargs at huggingface/transformers 1097d4b3). The draft is "
    "assistant_model=, its tokenizer assistant_tokenizer=, the draft length "
    "num_assistant_tokens=.",
    "model.generate(**inputs, assistant_model=draft) (add tokenizer= and assistant_tokenizer= "
    "when the vocabularies differ).")
PY011 = _rule(
    "PY011", "pair_not_resolved", "The models in the file can be read",
    "The target or the draft is not a literal name that paircheck can read (a variable, "
    "an unreachable Hub id): the pair was not checked (NOT CHECKED, exit 3).",
    "Use literal local paths or cached repo ids, or run paircheck TARGET DRAFT.")

RULES: tuple[Rule, ...] = (
    PF001, PF002, PF003, PF004, PF005, PF006, PF007, PF008, PF010, PF011, PF012, PF013, PF014, PF015, PF020,
    PF021, PF022, PF030, PF040, PF041, PF042, PF050, PF051,
    VS001, VS002, VS003, VS004, VS005, VS006, VS007, VS008, VS009, VS010, VS011, VS012, VS020, VS021, VS022,
    VS023,
    OM001, OM002, OM003, OM004, OM005, OM006, OM007, OM008, OM009, OM010,
    PY001, PY010, PY011,
    LF001, LF002, LF003,
)

# Rules whose finding means "something was not checked": the outcome is NOT CHECKED.
UNCHECKED: frozenset[str] = frozenset(
    r.code for r in (PF008, PF020, PF022, PF030, PF042, VS002, VS011, VS023, OM007, OM008, OM010, PY001, PY011))
# Of those, the ones that only come from not reading the models (what --no-check asks for).
PAIR_UNCHECKED: frozenset[str] = frozenset(r.code for r in (PF020, PF022, VS011, OM007, OM008, PY011))


def emit(rule: Rule, status: str, message: str, fix: str | None = None, **details: Any) -> Finding:
    """A finding of ``rule`` with status fail/warn/info; ``fix`` is this finding's own fix (None:
    the message says it all, e.g. llama.cpp's own text for a removed option)."""
    return Finding(rule.code, rule.name, status, message, dict(details), fix)
