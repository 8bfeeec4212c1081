"""Hugging Face transformers assisted generation, read from the released wheels on PyPI.

The decision is made on ``config.get_text_config().vocab_size`` (embedding rows) alone
(GenerationMixin._validate_generation_mode in 5.24.0; _validate_assistant from 4.46.0):
equal rows take the same-tokenizer path, different rows demand Universal Assisted
Decoding (UAD: ``tokenizer`` and ``assistant_tokenizer``), even when the tokenizers are the
same and only the padding differs. Before 4.46.0 different rows are refused outright.
Equal rows with different tokenizers are not checked at all: generation runs and the
assistant's ids mean other text.
"""

from __future__ import annotations

from collections.abc import Sequence

from paircheck._engine.common import (
    DFLASH,
    MODEL,
    MTP_HEAD,
    architecture,
    compare_texts,
    embedding_rows,
    finding,
    is_recurrent,
    kind_check,
    result,
)
from paircheck._engine.sglang import tokenizer_vocab
from paircheck._engine.versions import VersionedEngine, VersionRange, ranges
from paircheck.findings import FAIL, PASS, SKIP, Finding, Report, Rule
from paircheck.model import ModelDescription

ENGINE = "transformers"
UTILS = "src/transformers/generation/utils.py"
NEW_SOURCE = ("huggingface/transformers release 5.24.0 (PyPI wheel), " + UTILS + ", "
              "GenerationMixin._validate_generation_mode")


def _wheels(*versions: str) -> str:
    return " and ".join(f"transformers {v} wheel" for v in versions) + f" ({UTILS})"


# Oldest first: a row per release where the assisted-generation rules changed.
VERSIONS = ranges("transformers", (
    (None, _wheels("4.45.2") + ", GenerationMixin._validate_assistant: different sizes refused",
     "transformers 4.45.2 wheel", ("4.45.2",)),
    ("4.46.0", _wheels("4.46.0", "4.49.0", "5.0.0", "5.5.0", "5.7.0") + ": Universal Assisted Decoding "
     "(_validate_assistant, whose message reads 'moedels', then _validate_generation_mode)",
     "transformers 4.46.0 to 5.7.0 wheels", ("4.46.0", "4.49.0", "5.0.0", "5.5.0", "5.6.2", "5.7.0")),
    ("5.8.0", _wheels("5.8.0", "5.9.0") + ", _get_candidate_generator: a Gemma4Assistant needs a Gemma4 or "
     "Gemma3n target", "transformers 5.8.0 and 5.9.0 wheels", ("5.8.0", "5.9.0")),
    ("5.10.1", _wheels("5.10.1", "5.14.1") + ": Gemma4UnifiedAssistant too",
     "transformers 5.10.1 to 5.14.1 wheels", ("5.10.1", "5.12.0", "5.14.0", "5.14.1")),
    ("5.15.0", _wheels("5.15.0", "5.24.0") + ": speculation_type='dflash' (DFlashTokenCandidateGenerator), "
     "which skips the vocabulary check", "transformers 5.15.0 to 5.24.0 wheels",
     ("5.15.0", "5.15.1", "5.16.0", "5.18.0", "5.20.0", "5.22.0", "5.23.0", "5.24.0")),
))
NEWEST = VERSIONS[0]
V_UAD_SINCE, GEMMA4_SINCE, GEMMA4_UNIFIED_SINCE, DFLASH_SINCE = "4.46.0", "5.8.0", "5.10.1", "5.15.0"
GEMMA4_ERROR = ("Expected class name to start with Gemma4 or Gemma3n. Got {cls}. Gemma4Assistant models require a "
                "target model that provides a shared_kv_states dictionary. Currently, only Gemma4 and Gemma3n "
                "provide a shared_kv_states dictionary.")

UAD_ERROR = ("The main and assistant models have different tokenizers. Please provide `tokenizer` and "
             "`assistant_tokenizer` to `generate()` (see https://huggingface.co/docs/transformers/en/"
             "generation_strategies#universal-assisted-decoding).")
OLD_ERROR = "Make sure the main and assistant model use the same tokenizer"
STATEFUL_ERROR = "assisted generation is not supported with stateful models, such as {cls}"

R_KIND = Rule(
    "TF001", "transformers_drafter_kind", "The assistant is a model transformers can run",
    "assistant_model must be a causal LM (or a Gemma 4 assistant model); EAGLE/DFlash heads are not "
    "assistant models in transformers (a DFlash drafter runs with speculation_type='dflash', method dflash: TF005). "
    "Source: " + NEW_SOURCE + ".",
    "Use an independent small model as assistant_model.",
)
R_PATH = Rule(
    "TF002", "transformers_tokenizer_path", "Which assisted-generation path applies",
    "If self.config.get_text_config().vocab_size == assistant_model.config.get_text_config().vocab_size, the "
    "same-tokenizer path runs (passing assistant_tokenizer is then a ValueError); otherwise generate() "
    "needs tokenizer= and assistant_tokenizer= (Universal Assisted Decoding), else ValueError: '" + UAD_ERROR
    + "'. Before 4.46.0 different sizes raise ValueError('" + OLD_ERROR + "'). Source: " + VERSIONS[-2].source
    + "; " + VERSIONS[-1].source + ".",
    "Pass tokenizer= and assistant_tokenizer= to generate() (transformers >= 4.46.0).",
)
R_STATE = Rule(
    "TF003", "transformers_stateful", "The target is not stateful",
    "For ASSISTED_GENERATION, _validate_generation_mode raises ValueError('" + STATEFUL_ERROR.format(cls="...")
    + "') when the model class sets _is_stateful (recurrent models such as Mamba). paircheck judges "
    "statefulness from the architecture. Source: " + NEW_SOURCE + ".",
    "Use prompt_lookup_num_tokens instead, or an attention-only target.",
)
W_PADDED = Rule(
    "TF101", "transformers_padding_uad", "Same tokens, different padding: forced into UAD",
    "The tokenizers are identical but the embedding rows differ (padding), so transformers takes the UAD "
    "path anyway (it compares vocab_size only): generate() needs tokenizer and assistant_tokenizer, and "
    "with sampling it crashes (TF103). Source: " + NEW_SOURCE + ".",
    "Pass tokenizer and assistant_tokenizer and decode greedily, or use a draft with equal rows.",
    kind="warning",
)
SAMPLING_CRASH = "'AssistantToTargetTranslator' object has no attribute 'assistant_overlap_token_ids'"
W_SAMPLING = Rule(
    "TF103", "transformers_uad_sampling_crash", "UAD with sampling crashes: the assistant's tokens all exist "
    "in the target",
    "With do_sample=True and different vocab sizes, generate() builds an AssistantToTargetTranslator with "
    "assistant_prune_lm_head=True (generation/utils.py). Its __init__ (generation/candidate_generator.py) "
    "sets assistant_overlap_token_ids only when some assistant token is missing from the target vocabulary "
    "(_get_suppress_input_ids non-empty); when none is, as with the same tokenizer at another padding, the "
    "first draft step raises AttributeError: " + SAMPLING_CRASH + ". Greedy decoding takes another "
    "generator and runs. Seen by paircheck's differential test (tests/_engine/test_engine_transformers_oracle.py); "
    "the same family of crash as issue #45307. Source: transformers 5.24.0 wheel, "
    "generation/candidate_generator.py and generation/utils.py.",
    "Decode greedily (do_sample=False), or use a draft with the same padded vocab_size.",
    kind="warning",
)
W_SILENT = Rule(
    "TF102", "transformers_same_rows_other_tokens", "Equal rows, other tokens: runs silently, accepts little",
    "transformers compares only vocab_size: with equal rows it takes the same-tokenizer path and never "
    "looks at the tokenizers, so an assistant from another tokenizer family runs without any error while "
    "its ids mean other text; greedy output stays the target's, but almost nothing is accepted. "
    "Source: " + NEW_SOURCE + ".",
    "Use an assistant of the same tokenizer family (UAD cannot be forced while the sizes are equal).",
    kind="warning",
)
R_GEMMA4 = Rule(
    "TF004", "transformers_gemma4_target", "A Gemma 4 assistant has a Gemma 4 or Gemma 3n target",
    "_get_candidate_generator builds a SinglePositionMultiTokenCandidateGenerator for an assistant whose class "
    "starts with Gemma4Assistant (from 5.8.0; Gemma4UnifiedAssistant from 5.10.1), and first checks the "
    "target: 'if not self.__class__.__name__.startswith((\"Gemma4\", \"Gemma3n\"))' raises ValueError: '"
    + GEMMA4_ERROR.format(cls="...") + "'. paircheck reads the target's class from config.json architectures "
    "(a GGUF's general.architecture gemma4/gemma3n). Source: " + VERSIONS[0].source + ".",
    "Use a Gemma 4 (or Gemma 3n) target with a Gemma 4 assistant, or an independent assistant model.",
)
R_DFLASH = Rule(
    "TF005", "transformers_dflash", "speculation_type='dflash' runs a DFlash drafter (transformers >= 5.15.0)",
    "With generation_config.speculation_type == 'dflash', _validate_generation_mode skips the assistant "
    "checks ('generation_config.speculation_type != \"dflash\"'), so the vocabulary sizes are not compared, "
    "and DFlashTokenCandidateGenerator reads assistant_model.config.target_layer_ids to capture the target's "
    "hidden states. The assistant must be a DFlash drafter; before 5.15.0 there is no such speculation type. "
    "Source: " + VERSIONS[0].source + ".",
    "Pass a DFlash drafter as assistant_model with speculation_type='dflash' (transformers >= 5.15.0).",
)
RULES = (R_KIND, R_PATH, R_STATE, W_PADDED, W_SILENT, W_SAMPLING, R_GEMMA4, R_DFLASH)


def model_class(desc: ModelDescription) -> str:
    """The class transformers loads: config.json architectures[0], or for a GGUF its family's."""
    if desc.hf is not None and desc.hf.architectures:
        return desc.hf.architectures[0]
    arch = architecture(desc).lower()
    return {"gemma4": "Gemma4ForCausalLM", "gemma3n": "Gemma3nForCausalLM",
            "gemma4-assistant": "Gemma4AssistantForCausalLM"}.get(arch, arch)


def gemma4_assistant(desc: ModelDescription, version: VersionRange) -> bool:
    """The assistant takes the Gemma 4 path at ``version`` (its class name prefix)."""
    return gemma4_assistant_class(model_class(desc), version)


def gemma4_assistant_class(cls: str, version: VersionRange) -> bool:
    """generation/utils.py: 'assistant_model.__class__.__name__.startswith("Gemma4Assistant")' (5.8.0), the
    tuple ("Gemma4Assistant", "Gemma4UnifiedAssistant") from 5.10.1."""
    return (version.reaches(GEMMA4_SINCE) and cls.startswith("Gemma4Assistant")) or (
        version.reaches(GEMMA4_UNIFIED_SINCE) and cls.startswith("Gemma4UnifiedAssistant"))


def has_dflash(version: VersionRange) -> bool:
    """generation/utils.py 'elif generation_config.speculation_type == "dflash":' exists (5.15.0 on)."""
    return version.reaches(DFLASH_SINCE)


def assistant_path(target_vocab_size: int, assistant_vocab_size: int, uad_available: bool = True) -> str:
    """The path generate() takes: "same" (same-tokenizer), "uad" (needs both tokenizers) or "refused"."""
    if target_vocab_size == assistant_vocab_size:
        return "same"
    return "uad" if uad_available else "refused"


def assistant_inside_target(target_texts: Sequence[bytes], assistant_texts: Sequence[bytes]) -> bool:
    """No assistant token is missing from the target vocabulary: _get_suppress_input_ids is empty.

    (transformers first rewrites the assistant's leading space sign to the target's; both
    sides' texts here are in their own converted form, so a family with another space sign
    simply counts as not inside, which is what the rewrite leaves too in practice.)
    """
    known = set(target_texts)
    return all(text in known for text in assistant_texts)


def assisted(target: ModelDescription, draft: ModelDescription, method: str, version: VersionRange) -> Report:
    checks = [kind_check(R_KIND, draft, (MODEL, MTP_HEAD), "transformers cannot run it as assistant_model;",
                         "use an independent model")]
    warnings: list[Finding] = []
    says = None
    # _validate_generation_mode checks statefulness before it compares the vocab sizes.
    if is_recurrent(target):
        checks.append(result(R_STATE, FAIL, "the target is a recurrent/stateful model"))
        says = STATEFUL_ERROR.format(cls="the target's model class")
    else:
        checks.append(result(R_STATE, PASS, "the target is not stateful"))
    t, d = embedding_rows(target), embedding_rows(draft)
    cmp = compare_texts(target, draft)
    if t.value is None or d.value is None:
        checks.append(result(R_PATH, SKIP, f"not checked: {(t if t.value is None else d).source}"))
    else:
        path = assistant_path(t.value, d.value, uad_available=version.reaches(V_UAD_SINCE))
        if path == "same":
            checks.append(result(R_PATH, PASS, f"{t.value} rows on both sides: the same-tokenizer path"))
            if cmp is not None and cmp.first_difference is not None:
                warnings.append(finding(W_SILENT, f"token {cmp.first_difference} differs (target {cmp.target_text}, "
                                        f"draft {cmp.draft_text}) but the rows are equal: transformers runs the pair "
                                        "silently and accepts almost nothing"))
        elif path == "uad":
            checks.append(result(R_PATH, PASS, f"rows {t.value} vs {d.value}: Universal Assisted Decoding required "
                                 "(pass tokenizer and assistant_tokenizer)", target=t.value, draft=d.value, uad=True))
            if cmp is not None and cmp.first_difference is None:
                warnings.append(finding(W_PADDED, "identical token texts, only the padding differs: transformers "
                                        "still demands UAD"))
            t_vocab, d_vocab = tokenizer_vocab(target), tokenizer_vocab(draft)
            if version.reaches(V_UAD_SINCE) and t_vocab is not None and d_vocab is not None \
                    and assistant_inside_target(t_vocab, d_vocab):
                warnings.append(finding(W_SAMPLING, f"every assistant token exists in the target vocabulary: with "
                                        f"do_sample=True generate() raises AttributeError: {SAMPLING_CRASH}",
                                        sampling_crashes=True))
        else:
            checks.append(result(R_PATH, FAIL, f"rows {t.value} vs {d.value}: this transformers has no Universal "
                                 "Assisted Decoding", target=t.value, draft=d.value))
            says = says or OLD_ERROR
    if gemma4_assistant(draft, version):
        # _get_candidate_generator runs after _validate_generation_mode.
        cls = model_class(target)
        if cls.startswith(("Gemma4", "Gemma3n")):
            checks.append(result(R_GEMMA4, PASS, f"a Gemma 4 assistant with a {cls} target"))
        else:
            checks.append(result(R_GEMMA4, FAIL, f"a Gemma 4 assistant needs a Gemma4/Gemma3n target, not "
                                 f"{cls or 'an unknown class'}"))
            says = says or GEMMA4_ERROR.format(cls=cls or "?")
    report = Report(ENGINE, method, target, draft, checks, warnings)
    if report.first_failure is not None:
        report.engine_says = says
    if report.compatible:
        uad = any(c.details.get("uad") for c in checks)
        report.next_steps.append("model.generate(**inputs, assistant_model=draft"
                                 + (", tokenizer=tok, assistant_tokenizer=draft_tok)" if uad else ")"))
    return report


def dflash(target: ModelDescription, draft: ModelDescription, method: str, version: VersionRange) -> Report:
    if not has_dflash(version):
        checks = [result(R_DFLASH, FAIL, "this transformers has no speculation_type='dflash' (added in 5.15.0)")]
        return Report(ENGINE, method, target, draft, checks)
    checks = [kind_check(R_DFLASH, draft, (DFLASH,), "speculation_type='dflash' needs a DFlash drafter;",
                         "use assisted generation for an independent model")]
    if is_recurrent(target):  # the stateful check runs for every assisted mode, dflash included
        checks.append(result(R_STATE, FAIL, "the target is a recurrent/stateful model"))
    report = Report(ENGINE, method, target, draft, checks)
    if report.first_failure is not None and report.first_failure.code == R_STATE.code:
        report.engine_says = STATEFUL_ERROR.format(cls="the target's model class")
    if report.compatible:
        report.next_steps.append("model.generate(**inputs, assistant_model=dflash_drafter, speculation_type='dflash')")
    return report


def prompt_lookup(target: ModelDescription, draft: ModelDescription, method: str, version: VersionRange) -> Report:
    checks = [result(R_KIND, PASS, "prompt lookup needs no assistant (prompt_lookup_num_tokens=N)")]
    return Report(ENGINE, method, target, draft, checks)


ENGINE_OBJ = VersionedEngine(
    ENGINE, ("assisted", "dflash", "prompt_lookup"), "assisted", RULES,
    {"assisted": assisted, "dflash": dflash, "prompt_lookup": prompt_lookup}, VERSIONS,
    {"draft-simple": "assisted", "draft-mtp": "assisted", "draft-dflash": "dflash", **{m: "prompt_lookup" for m in (
        "ngram-simple", "ngram-map-k", "ngram-map-k4v", "ngram-mod", "ngram-cache")}},
)
