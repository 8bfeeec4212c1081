"""vLLM's rules, read from vllm/config/speculative.py in every released wheel from 0.14.0 to 0.33.0.

``SpeculativeConfig.__post_init__`` builds the draft's ModelConfig with
``hf_overrides=SpeculativeConfig.hf_config_override``, which rewrites some model types to
MTP types (qwen3_5 -> qwen3_5_mtp, deepseek_v3 -> deepseek_mtp, ...), then detects the
method from the draft even when ``method`` was given as draft_model: names containing
eagle-/eagle3/dflash/dspark, DFlash/DSpark architectures, then ``hf_config.model_type in
MTPModelTypes`` gives "mtp". Only what is left runs as a draft model, and only then are the
vocab sizes compared (``verify_equal_vocab_size_if_draft_model``).

The tables below say in which release each entry first appears (and, for the few that were
removed, the first release without it); ``VERSIONS`` has a range per release where any of
them changed, so ``--engine vllm@0.17.0`` gets 0.17.0's tables, not 0.33.0's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from paircheck._engine.common import (
    DFLASH,
    DSPARK,
    EAGLE,
    EAGLE3,
    MODEL,
    MTP_HEAD,
    architecture,
    compare_texts,
    drafter_kind,
    embedding_rows,
    finding,
    kind_check,
    result,
)
from paircheck._engine.versions import VersionedEngine, VersionRange, ranges
from paircheck.findings import FAIL, PASS, RUNS_USELESS, SKIP, Finding, Report, Rule
from paircheck.model import ModelDescription

ENGINE = "vllm"

WHEEL = "vllm {v} wheel"
SPEC_PY = "vllm/config/speculative.py"


def _wheels(*versions: str) -> str:
    return ", ".join(WHEEL.format(v=v) for v in versions) + f" ({SPEC_PY})"


SOURCE = "vllm-project/vllm release 0.33.0 (PyPI wheel, commit g4ba787ec9), " + SPEC_PY
# Oldest first; each row is a release where the rules below changed.
VERSIONS = ranges("vLLM", (
    (None, _wheels("0.14.0", "0.14.1") + ": a draft that is no EAGLE/Medusa/MLP/MTP checkpoint raises "
     "NotImplementedError (0.10.0 to 0.13.0 wheels, vllm/config.py then vllm/config/speculative.py, were read "
     "for that alone)", "vllm 0.14.0 and 0.14.1 wheels", ("0.14.0", "0.14.1")),
    ("0.15.0", _wheels("0.15.0") + ": draft_model exists but must be given as \"method\"; "
     "verify_equal_vocab_size_if_draft_model; glm4_moe_lite", "vllm 0.15.0 wheel", ("0.15.0",)),
    ("0.15.1", _wheels("0.15.1") + ": step3p5", "vllm 0.15.1 wheel", ("0.15.1",)),
    ("0.16.0", _wheels("0.16.0") + ": glm_moe_dsa, GlmOcr", "vllm 0.16.0 wheel", ("0.16.0",)),
    ("0.17.0", _wheels("0.17.0", "0.17.1", "0.18.0", "0.18.1") + ": \"method\" defaults to draft_model; "
     "qwen3_5/qwen3_5_moe (not the _text types) and nemotron_h rewritten", "vllm 0.17.0 to 0.18.1 wheels",
     ("0.17.0", "0.17.1", "0.18.0", "0.18.1")),
    ("0.19.0", _wheels("0.19.0", "0.19.1") + ": nemotron_h_puzzle", "vllm 0.19.0 and 0.19.1 wheels",
     ("0.19.0", "0.19.1")),
    ("0.20.0", _wheels("0.20.0", "0.20.2") + ": 'dflash' name detection; deepseek_v4, exaone4_5, hy_v3; "
     "NemotronH_Super_Omni_Reasoning_V3's text_config promoted",
     "vllm 0.20.0 and 0.20.2 wheels", ("0.20.0", "0.20.2")),
    ("0.21.0", _wheels("0.21.0") + ": gemma4_assistant, the MiMoV2 family", "vllm 0.21.0 wheel", ("0.21.0",)),
    ("0.22.0", _wheels("0.22.0", "0.22.1") + ": intern_s2_preview", "vllm 0.22.0 and 0.22.1 wheels",
     ("0.22.0", "0.22.1")),
    ("0.23.0", _wheels("0.23.0") + ": step3p7, gemma4_unified_assistant", "vllm 0.23.0 wheel", ("0.23.0",)),
    ("0.24.0", _wheels("0.24.0") + ": minimax_m3_vl", "vllm 0.24.0 wheel", ("0.24.0",)),
    ("0.25.0", _wheels("0.25.0", "0.25.1") + ": 'dspark' detection, use_heterogeneous_vocab, bailing_hybrid",
     "vllm 0.25.0 and 0.25.1 wheels", ("0.25.0", "0.25.1")),
    ("0.26.0", _wheels("0.26.0") + ": inkling, Gemma4DSparkModel", "vllm 0.26.0 wheel", ("0.26.0",)),
    ("0.27.0", _wheels("0.27.0", "0.27.1") + ": kimi_k3", "vllm 0.27.0 and 0.27.1 wheels", ("0.27.0", "0.27.1")),
    ("0.28.0", _wheels("0.28.0") + ": the qwen3_5 _text types, interns2_mobius, dots3_note, BailingMoeV3, "
     "MuseGlimmerAssistantModel", "vllm 0.28.0 wheel", ("0.28.0",)),
    ("0.29.0", _wheels("0.29.0") + ": qwen4_exp, hy_v4, Qwen3 DSpark architectures, "
     "NemotronH_Omni_Reasoning_V3's text_config promoted", "vllm 0.29.0 wheel",
     ("0.29.0",)),
    ("0.30.0", _wheels("0.30.0", "0.31.0") + ": glm5_next, deepseek_v41 (method mtp refused), Qwen3.5's "
     "mtp_num_hidden_layers read from text_config",
     "vllm 0.30.0 and 0.31.0 wheels", ("0.30.0", "0.31.0")),
    ("0.32.0", _wheels("0.32.0") + ": longcat_flash_ngram no longer rewritten", "vllm 0.32.0 wheel", ("0.32.0",)),
    ("0.33.0", SOURCE + ": step5, MuseSparkDSparkModel; medusa/mlp_speculator no longer detected",
     "vllm 0.33.0 wheel", ("0.33.0",)),
))
NEWEST = VERSIONS[0]

SAME_VOCAB_ERROR = ("Target and draft model should have the same vocabulary size. Target model vocab_size={t}. "
                    "Draft model vocab_size={d}. Using models with different tokenizers can cause out-of-bounds "
                    "errors during speculative decoding.")
UNSUPPORTED_ERROR = "Unsupported speculative method: '{method}'"
NO_DRAFT_MODEL_ERROR = ("Speculative decoding with draft model is not supported yet. Please consider using other "
                        "speculative decoding methods such as ngram, medusa, eagle, or mtp.")
# n_predict = 0 (a config declaring no MTP layers), in every release read (0.33.0 speculative.py
# lines 1602-1606): with num_speculative_tokens given, 'self.num_speculative_tokens > n_predict and
# self.num_speculative_tokens % n_predict != 0' divides by zero; without it, 'self.num_speculative_tokens
# = n_predict' makes it 0 and _verify_args (line 1969) raises ValueError instead.
ZERO_LAYERS_ERROR = "ZeroDivisionError: integer modulo by zero"
ZERO_TOKENS_ERROR = "Expected num_speculative_tokens to be greater than zero (0)."
# hf_config_override of an Inkling config whose mtp_config declares no depth (0.26.0 on).
INKLING_NO_MTP_ERROR = "The Inkling checkpoint does not contain MTP weights"
DEEPSEEK_V41_ERROR = ("DeepSeek V4.1 has no classic-MTP draft: its checkpoints ship DSpark stages under mtp.* "
                      "(main_proj/markov_head/confidence_head) and carry no e_proj/h_proj/enorm/hnorm/hc_head "
                      "weights. Use speculative method 'dspark' instead of 'mtp'.")

# MTPModelTypes (a Literal in speculative.py): each member with the first release read that
# has it (None: already in 0.14.0, the oldest read).
MTP_TYPES_SINCE: Mapping[str, str | None] = {
    "deepseek_mtp": None, "mimo_mtp": None, "glm4_moe_mtp": None, "ernie_mtp": None, "exaone_moe_mtp": None,
    "qwen3_next_mtp": None, "longcat_flash_mtp": None, "mtp": None, "pangu_ultra_moe_mtp": None,
    "glm4_moe_lite_mtp": "0.15.0", "step3p5_mtp": "0.15.1", "glm_ocr_mtp": "0.16.0", "nemotron_h_mtp": "0.17.0",
    "qwen3_5_mtp": "0.17.0", "exaone4_5_mtp": "0.20.0", "hy_v3_mtp": "0.20.0", "gemma4_mtp": "0.21.0",
    "mimo_v2_mtp": "0.21.0", "minimax_m3_mtp": "0.24.0", "bailing_hybrid_mtp": "0.25.0", "inkling_mtp": "0.26.0",
    "kimi_k3_mtp": "0.27.0", "bailing_hybrid_v3_mtp": "0.28.0", "dots3_note_mtp": "0.28.0", "hy_v4_mtp": "0.29.0",
    "qwen4_exp_mtp": "0.29.0", "glm5_next_mtp": "0.30.0", "step5_mtp": "0.33.0",
}
MTP_MODEL_TYPES = frozenset(MTP_TYPES_SINCE)  # at 0.33.0


@dataclass(frozen=True)
class Rewrite:
    """One ``if`` of SpeculativeConfig.hf_config_override: what it matches and the model_type it sets."""

    to: str  # hf_config.model_type afterwards
    since: str | None  # first release read that has it (None: 0.14.0, the oldest read)
    model_types: frozenset[str] = frozenset()  # hf_config.model_type in ...
    architectures: frozenset[str] = frozenset()  # hf_config.architectures[0] (as loaded) in ...
    any_architecture: frozenset[str] = frozenset()  # ... in hf_config.architectures
    contains: str = ""  # ... in hf_config.model_type
    needs_nextn: bool = False  # and num_nextn_predict_layers > 0 (nemotron_h)
    layers_key: str | None = "num_nextn_predict_layers"  # n_predict; None: vLLM defaults it to 1
    until: str | None = None  # first release read without it
    # First release that also reads layers_key from text_config when config.json lacks it (None:
    # every release); Qwen3.5's 'if n_predict is None: text_config = get_hf_text_config(hf_config)'
    # first appears in 0.30.0.
    text_since: str | None = None
    # The raise when layers_key reads below 1 (Inkling: mtp_config's depth, default 0).
    missing_error: str | None = None


def _r(to: str, since: str | None, *, types: tuple[str, ...] = (), archs: tuple[str, ...] = (),
       any_arch: tuple[str, ...] = (), contains: str = "", nextn: bool = False,
       key: str | None = "num_nextn_predict_layers", until: str | None = None, text_since: str | None = None,
       missing_error: str | None = None) -> Rewrite:
    return Rewrite(to, since, frozenset(types), frozenset(archs), frozenset(any_arch), contains, nextn, key, until,
                   text_since, missing_error)


# In hf_config_override's order; a later entry with the same match narrows or widens an
# earlier one from its release on (the first matching entry whose releases hold wins).
REWRITES: tuple[Rewrite, ...] = (
    _r("dots3_note_mtp", "0.28.0", types=("dots3_note",), key=None),
    _r("deepseek_mtp", None, types=("deepseek_v3", "deepseek_v32", "deepseek_mtp")),
    _r("deepseek_mtp", "0.16.0", types=("glm_moe_dsa",)),
    _r("deepseek_mtp", "0.20.0", types=("deepseek_v4",)),
    _r("deepseek_mtp", "0.30.0", types=("deepseek_v41",)),
    _r("pangu_ultra_moe_mtp", None, types=("pangu_ultra_moe",)),
    _r("kimi_k3_mtp", "0.27.0", types=("kimi_k3",)),
    _r("mimo_mtp", None, archs=("MiMoForCausalLM",)),
    _r("mimo_v2_mtp", "0.21.0", archs=("MiMoV2ForCausalLM", "MiMoV2OmniForCausalLM", "MiMoV2FlashForCausalLM")),
    _r("glm4_moe_mtp", None, archs=("Glm4MoeForCausalLM",)),
    _r("glm4_moe_lite_mtp", "0.15.0", archs=("Glm4MoeLiteForCausalLM",)),
    _r("glm_ocr_mtp", "0.16.0", archs=("GlmOcrForConditionalGeneration",)),
    _r("ernie_mtp", None, types=("ernie4_5_moe",)),
    _r("nemotron_h_mtp", "0.17.0", types=("nemotron_h",), nextn=True),
    _r("nemotron_h_mtp", "0.19.0", types=("nemotron_h_puzzle",), nextn=True),
    _r("qwen3_next_mtp", None, types=("qwen3_next",)),
    _r("qwen4_exp_mtp", "0.29.0", types=("qwen4_exp", "qwen4_exp_text"), key="mtp_num_hidden_layers"),
    _r("bailing_hybrid_v3_mtp", "0.28.0", archs=("BailingMoeV3ForCausalLM",)),
    _r("bailing_hybrid_v3_mtp", "0.30.0", archs=("BailingMoeV3VLForConditionalGeneration",)),
    _r("bailing_hybrid_mtp", "0.25.0", types=("bailing_hybrid",), any_arch=("BailingMoeV2_5ForCausalLM",)),
    _r("exaone_moe_mtp", None, types=("exaone_moe",)),
    _r("exaone4_5_mtp", "0.20.0", contains="exaone4_5"),
    _r("qwen3_5_mtp", "0.17.0", types=("qwen3_5", "qwen3_5_moe"), key="mtp_num_hidden_layers",
       text_since="0.30.0"),
    _r("qwen3_5_mtp", "0.28.0", types=("qwen3_5_text", "qwen3_5_moe_text"), key="mtp_num_hidden_layers",
       text_since="0.30.0"),
    _r("qwen3_5_mtp", "0.22.0", types=("intern_s2_preview",), key="mtp_num_hidden_layers"),
    _r("qwen3_5_mtp", "0.28.0", types=("interns2_mobius",), key="mtp_num_hidden_layers"),
    _r("longcat_flash_mtp", None, types=("longcat_flash",), key=None),
    _r("longcat_flash_mtp", "0.26.0", types=("longcat_flash_ngram",), key=None, until="0.32.0"),
    _r("step3p5_mtp", "0.15.1", types=("step3p5",), key=None),
    _r("step3p5_mtp", "0.23.0", types=("step3p7",), archs=("Step3p5ForCausalLM", "Step3p7ForConditionalGeneration"),
       key=None),
    _r("step5_mtp", "0.33.0", types=("step5", "step5_vl"), any_arch=("Step5ForCausalLM",
                                                                     "Step5ForConditionalGeneration"), key=None),
    _r("hy_v3_mtp", "0.20.0", types=("hy_v3",)),
    _r("hy_v4_mtp", "0.29.0", types=("hy_v4",)),
    _r("inkling_mtp", "0.26.0", types=("inkling_mm_model", "inkling_model"),
       key="mtp_config.num_nextn_predict_layers", missing_error=INKLING_NO_MTP_ERROR),
    _r("gemma4_mtp", "0.21.0", types=("gemma4_assistant",), key=None),
    _r("gemma4_mtp", "0.23.0", types=("gemma4_unified_assistant",), key=None),
    _r("minimax_m3_mtp", "0.24.0", types=("minimax_m3_vl",), archs=("MiniMaxM3SparseForConditionalGeneration",),
       key=None),
    _r("glm5_next_mtp", "0.30.0", types=("glm5_next",)),
)
# Method detection in __post_init__, by release.
DFLASH_NAME_SINCE = "0.20.0"  # "dflash" in the model name
GLIMMER_SINCE = "0.28.0"  # "MuseGlimmerAssistantModel" in architectures -> dflash
DSPARK_SINCE: Mapping[str, str] = {  # "dspark" in the name, or one of these architectures
    "name": "0.25.0", "Qwen3DSparkModel": "0.25.0", "Gemma4DSparkModel": "0.26.0",
    "Qwen3OmniDSparkModel": "0.29.0", "DSparkDraftModel+qwen3": "0.29.0", "MuseSparkDSparkModel": "0.33.0",
}
# hf_config_override: 'if hf_config.architectures[0] in ("NemotronH_Super_Omni_Reasoning_V3",
# "NemotronH_Omni_Reasoning_V3"): hf_config = hf_config.text_config' ("Promote VLM's text_config so
# MTP detection below fires correctly"); 0.20.0 has the Super one alone (a '==' test).
PROMOTE_TEXT_CONFIG_SINCE: Mapping[str, str] = {
    "NemotronH_Super_Omni_Reasoning_V3": "0.20.0", "NemotronH_Omni_Reasoning_V3": "0.29.0",
}
# 'if self.method is None: if self.model in ("ngram", "[ngram]"): ... else: self.method = "draft_model"'
# (0.17.0 speculative.py lines 339-343); 0.16.0 leaves it None, and an undetected draft ends in
# NotImplementedError("Unsupported speculative method: 'None'").
DEFAULT_DRAFT_MODEL_SINCE = "0.17.0"
MEDUSA_DETECTION_UNTIL = "0.33.0"  # model_type medusa/mlp_speculator detected up to 0.32.0
DEEPSEEK_V41_SINCE = "0.30.0"
HETEROGENEOUS_SINCE = "0.25.0"


def _holds(version: VersionRange, since: str | None, until: str | None = None) -> bool:
    return (since is None or version.reaches(since)) and (until is None or not version.reaches(until))


R_KIND = Rule(
    "VL001", "vllm_drafter_kind", "vLLM runs the draft with the method asked for",
    "SpeculativeConfig.__post_init__ detects the method from the draft even when \"method\": "
    "\"draft_model\" is given: 'eagle-' in the name gives eagle, 'eagle3' eagle3, 'dflash' (from 0.20.0; "
    "MuseGlimmerAssistantModel from 0.28.0) dflash, 'dspark' or a DSpark architecture (from 0.25.0) dspark, "
    "model_type medusa/mlp_speculator (up to 0.32.0) those, and a model_type in MTPModelTypes after "
    "hf_config_override gives mtp. hf_config_override rewrites, by release: deepseek_v3/v32 (v4 from 0.20.0, "
    "v41 from 0.30.0, glm_moe_dsa from 0.16.0), pangu_ultra_moe, MiMo, ERNIE 4.5 MoE, qwen3_next, exaone_moe, "
    "longcat_flash, Glm4Moe (Lite from 0.15.0, GlmOcr from 0.16.0), step3p5 (0.15.1; step3p7 0.23.0; step5 "
    "0.33.0), qwen3_5/qwen3_5_moe (0.17.0; the _text types and interns2_mobius 0.28.0; intern_s2_preview "
    "0.22.0), nemotron_h with num_nextn_predict_layers > 0 (0.17.0; nemotron_h_puzzle 0.19.0; the text_config of a "
    "NemotronH_Super_Omni_Reasoning_V3 VLM from 0.20.0, of NemotronH_Omni_Reasoning_V3 from 0.29.0), exaone4_5 and "
    "hy_v3 (0.20.0), the MiMoV2 family and gemma4_assistant (0.21.0; gemma4_unified_assistant 0.23.0), "
    "minimax_m3_vl (0.24.0), bailing_hybrid (0.25.0), inkling (0.26.0), kimi_k3 (0.27.0), dots3_note and "
    "BailingMoeV3 (0.28.0), qwen4_exp and hy_v4 (0.29.0), glm5_next (0.30.0). So a Qwen3.5 draft given as "
    "draft_model runs as MTP (only its MTP layers are loaded). A method the draft does not fit ends in "
    "NotImplementedError: '" + UNSUPPORTED_ERROR.format(method="...") + "'. Source: "
    + _wheels(*(r.read[0] for r in reversed(VERSIONS))) + ".",
    "Give the method that matches the drafter; for a classic draft model use one whose model_type vLLM "
    "does not rewrite to an MTP type.",
)
R_ROWS = Rule(
    "VL002", "vllm_vocab_size", "Embedding rows are equal",
    "For method draft_model, verify_equal_vocab_size_if_draft_model compares get_vocab_size() (the "
    "config's vocab_size, padding included) of target and draft exactly and raises ValueError: '"
    + SAME_VOCAB_ERROR.format(t="...", d="...") + "'. Qwen2.5 7B+ has 152064 rows, 0.5B-3B have 151936. "
    "Skipped with \"use_heterogeneous_vocab\": true (draft_model only, greedy draft sampling). For a GGUF "
    "the rows are the token_embd tensor's. Source: " + SOURCE + ".",
    "Use a draft with the same padded size, or set \"use_heterogeneous_vocab\": true (method "
    "draft_model, greedy draft sampling), or pad the draft's embedding and config.",
)
R_TOKENS = Rule(
    "VL003", "vllm_same_tokenizer", "The draft uses the target's tokens",
    "Without use_heterogeneous_vocab the draft's ModelConfig gets tokenizer=target_model_config.tokenizer. "
    "If the draft's token table differs, vLLM runs without any error but the draft "
    "proposes ids that mean other text, so almost nothing is accepted. This is paircheck's judgement of "
    "usefulness: vLLM itself prints nothing. Source: " + SOURCE + ".",
    "Use a draft of the same tokenizer family, or \"use_heterogeneous_vocab\": true.",
    effect=RUNS_USELESS,
)
R_MTP = Rule(
    "VL004", "vllm_mtp", "MTP has MTP layers to run",
    "method mtp without a model uses the target itself: its config goes through hf_config_override and "
    "its model_type must then be in MTPModelTypes, otherwise NotImplementedError: '"
    + UNSUPPORTED_ERROR.format(method="mtp") + "'. The MTP layer count is the config's "
    "num_nextn_predict_layers (mtp_num_hidden_layers for Qwen3.5; its text_config fallback, 'if n_predict is "
    "None: text_config = get_hf_text_config(hf_config)', first appears in 0.30.0, so earlier releases leave "
    "n_predict unset for a config that has it only there). With 0 and num_speculative_tokens given, 'self."
    "num_speculative_tokens % n_predict != 0' raises " + ZERO_LAYERS_ERROR + " (seen by paircheck's vLLM "
    "differential test, which gives num_speculative_tokens); with num_speculative_tokens omitted it becomes "
    "n_predict (0) and _verify_args raises ValueError: '" + ZERO_TOKENS_ERROR + "'. An Inkling config whose "
    "mtp_config has no num_nextn_predict_layers >= 1 raises ValueError: '" + INKLING_NO_MTP_ERROR + "' (from "
    "0.26.0, when Inkling was added). For a GGUF, {arch}.nextn_predict_layers. From 0.30.0 a "
    "deepseek_v41 target raises ValueError: '" + DEEPSEEK_V41_ERROR + "'. Source: " + SOURCE + ".",
    "Use a target whose family vLLM runs MTP for, with MTP weights, or another method.",
)
R_DRAFTLESS = Rule(
    "VL005", "vllm_draftless", "ngram and suffix need no draft",
    "ngram (prompt lookup, prompt_lookup_min/max) and suffix (needs arctic-inference: 'Arctic Inference "
    "is required for suffix decoding.') have no pairing constraint. Source: " + SOURCE + ".",
    "Nothing to fix.",
)
R_NO_DRAFT_MODEL = Rule(
    "VL006", "vllm_draft_model_unsupported", "This vLLM has no draft_model method",
    "Up to 0.14.0 a draft that is no EAGLE/Medusa/MLP-speculator/MTP checkpoint raises "
    "NotImplementedError: '" + NO_DRAFT_MODEL_ERROR + "'. Source: " + VERSIONS[-1].source + "; "
    "0.15.0 adds draft_model.",
    "Use vLLM >= 0.15.0, or another method.",
)
W_VERIFIER = Rule(
    "VL101", "vllm_head_target", "vLLM does not check that a head fits the target",
    "vLLM wraps EAGLE heads (EAGLEConfig) without checking that they were trained for this target; a head "
    "for another model loads and accepts little. Source: " + SOURCE + ".",
    "Use the head published for this exact target.",
    kind="warning",
)
W_NAME = Rule(
    "VL102", "vllm_method_by_name", "vLLM would not detect this head from its name",
    "Without an explicit method vLLM detects eagle/eagle3/dflash/dspark only from the name or a DFlash/DSpark "
    "architecture; this head's name lacks the word, so from 0.17.0 (which defaults \"method\" to draft_model: "
    "'self.method = \"draft_model\"') vLLM would treat it as a draft model, and up to 0.16.0 it raises "
    "NotImplementedError: '" + UNSUPPORTED_ERROR.format(method="None") + "'. Source: " + _wheels("0.16.0", "0.17.0")
    + "; " + SOURCE + ".",
    "Pass \"method\" explicitly.",
    kind="warning",
)
RULES = (R_KIND, R_ROWS, R_TOKENS, R_MTP, R_DRAFTLESS, R_NO_DRAFT_MODEL, W_VERIFIER, W_NAME)

HEAD_METHODS = {"eagle": (EAGLE,), "eagle3": (EAGLE3,), "dflash": (DFLASH,), "dspark": (DSPARK,)}


# --- pure mirrors of SpeculativeConfig, per release ---------------------------------------

def _matches(rule: Rewrite, model_type: str, architectures: Sequence[str], config: Mapping[str, Any]) -> bool:
    first = architectures[0] if architectures else ""
    hit = (model_type in rule.model_types or first in rule.architectures
           or bool(rule.any_architecture & set(architectures)) or bool(rule.contains and rule.contains in model_type))
    if hit and rule.needs_nextn:
        nextn = config.get("num_nextn_predict_layers")
        hit = isinstance(nextn, int) and not isinstance(nextn, bool) and nextn > 0
    return hit


def promoted(architectures: Sequence[str], version: VersionRange, config: Mapping[str, Any] | None) -> (
        Mapping[str, Any] | None):
    """The text_config hf_config_override continues with for a Nemotron Omni VLM (``hf_config =
    hf_config.text_config``), or None when it keeps the config as it is."""
    first = architectures[0] if architectures else ""
    text = (config or {}).get("text_config")
    if first in PROMOTE_TEXT_CONFIG_SINCE and version.reaches(PROMOTE_TEXT_CONFIG_SINCE[first]) and isinstance(
            text, Mapping):
        return text
    return None


def rewrite_for(model_type: str, architectures: Sequence[str], version: VersionRange = NEWEST,
                config: Mapping[str, Any] | None = None) -> Rewrite | None:
    """The hf_config_override entry that rewrites this config at ``version``, or None."""
    text = promoted(architectures, version, config)
    if text is not None:  # every check after the promotion reads the text config
        promoted_type = text.get("model_type")
        model_type = promoted_type if isinstance(promoted_type, str) else ""
        architectures = tuple(a for a in text.get("architectures") or () if isinstance(a, str))
        config = text
    for rule in REWRITES:
        if _holds(version, rule.since, rule.until) and _matches(rule, model_type, architectures, config or {}):
            return rule
    return None


def mtp_model_type(model_type: str, architectures: Sequence[str], version: VersionRange = NEWEST,
                   config: Mapping[str, Any] | None = None) -> str:
    """hf_config.model_type after hf_config_override at ``version``."""
    rule = rewrite_for(model_type, architectures, version, config)
    return rule.to if rule is not None else model_type


def is_mtp_type(model_type: str, version: VersionRange = NEWEST) -> bool:
    """``model_type in get_args(MTPModelTypes)`` at ``version``."""
    return model_type in MTP_TYPES_SINCE and _holds(version, MTP_TYPES_SINCE[model_type])


def _dspark(name: str, model_type: str, architectures: Sequence[str], version: VersionRange) -> bool:
    archs = set(architectures)
    checks = {key: key in archs for key in DSPARK_SINCE}
    checks["name"] = "dspark" in name
    checks["DSparkDraftModel+qwen3"] = "DSparkDraftModel" in archs and model_type == "qwen3"
    return any(hit and version.reaches(DSPARK_SINCE[key]) for key, hit in checks.items())


def detect_method(requested: str, model_name: str, model_type: str, architectures: Sequence[str],
                  version: VersionRange = NEWEST) -> str | None:
    """The method vLLM runs once a draft model is given (``model_type`` after hf_config_override),
    or None where it raises NotImplementedError("Unsupported speculative method: ...")."""
    if requested in ("eagle", "eagle3", "dflash", "dspark"):
        return requested
    name = model_name.lower()
    if "eagle-" in name:
        return "eagle"
    if "eagle3" in name:
        return "eagle3"
    if (version.reaches(DFLASH_NAME_SINCE) and "dflash" in name) or (
            version.reaches(GLIMMER_SINCE) and "MuseGlimmerAssistantModel" in architectures):
        return "dflash"
    if _dspark(name, model_type, architectures, version):
        return "dspark"
    if not version.reaches(MEDUSA_DETECTION_UNTIL) and model_type in ("medusa", "mlp_speculator"):
        return model_type
    if is_mtp_type(model_type, version):
        return "mtp"
    if requested == "draft_model":
        return "draft_model"
    return None


def method_unset(model_name: str, model_type: str, architectures: Sequence[str],
                 version: VersionRange = NEWEST) -> str | None:
    """What vLLM runs when the speculative config gives no "method" (None: NotImplementedError)."""
    requested = "draft_model" if version.reaches(DEFAULT_DRAFT_MODEL_SINCE) else ""
    return detect_method(requested, model_name, model_type, architectures, version)


# --- reading the descriptions ------------------------------------------------------------

def hf_config(desc: ModelDescription) -> dict[str, Any] | None:
    """config.json of a Hugging Face folder or repo, or None for a GGUF."""
    return desc.config


def _model_name(desc: ModelDescription) -> str:
    """What vLLM sees as draft_model_config.model: the path or repo id given."""
    return " ".join(x for x in (desc.location, desc.identity.repo or "") if x)


def _config_type(desc: ModelDescription) -> tuple[str, tuple[str, ...]]:
    config = hf_config(desc) or {}
    model_type = config.get("model_type") if isinstance(config.get("model_type"), str) else None
    if model_type is None and desc.hf is not None:
        model_type = desc.hf.model_type
    archs = tuple(a for a in config.get("architectures") or () if isinstance(a, str))
    return model_type or "", archs or (desc.hf.architectures if desc.hf is not None else ())


def mtp_layers(desc: ModelDescription, version: VersionRange = NEWEST) -> tuple[int | None, str]:
    """MTP layer count and where it came from; None when the files do not say."""
    config = hf_config(desc)
    if config is None:
        nextn = desc.metadata.get(f"{architecture(desc)}.nextn_predict_layers")
        if isinstance(nextn, int) and not isinstance(nextn, bool):
            return nextn, f"{architecture(desc)}.nextn_predict_layers"
        if drafter_kind(desc) == MTP_HEAD:
            return 1, "an MTP head"
        return None, "no nextn_predict_layers key"
    model_type, archs = _config_type(desc)
    return config_layers(model_type, archs, config, version)


def config_layers(model_type: str, archs: Sequence[str], config: Mapping[str, Any],
                  version: VersionRange = NEWEST) -> tuple[int | None, str]:
    """n_predict as hf_config_override sets it from config.json at ``version``, and where it came from."""
    rule = rewrite_for(model_type, archs, version, config)
    if rule is not None and rule.layers_key is None:
        return 1, f"vLLM's default for {model_type or archs[0]} (1)"
    if rule is not None and rule.layers_key and "." in rule.layers_key:  # Inkling: mtp_config's depth
        outer, inner = rule.layers_key.split(".", 1)
        holder = config.get(outer)
        value = holder.get(inner) if isinstance(holder, Mapping) else None
        if isinstance(value, int) and not isinstance(value, bool):
            return value, f"config.json {rule.layers_key}"
        return 0, f"config.json has no {rule.layers_key} (vLLM reads 0)"
    keys = [rule.layers_key] if rule is not None and rule.layers_key else ["num_nextn_predict_layers",
                                                                           "mtp_num_hidden_layers"]
    nested = config.get("text_config")
    text: Mapping[str, Any] = nested if isinstance(nested, Mapping) else {}
    reads_text = rule is None or rule.text_since is None or version.reaches(rule.text_since)
    for key in keys:
        for where, holder in (("config.json", config), ("config.json text_config", text if reads_text else {})):
            value = holder.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value, f"{where} {key}"
    if not reads_text and rule is not None and any(key in text for key in keys):
        return None, (f"config.json has no {' or '.join(keys)}; this vLLM does not read text_config's "
                      f"(from {rule.text_since} it does), so n_predict stays unset")
    return None, f"config.json has no {' or '.join(keys)}"


def unread_text_layers(desc: ModelDescription, version: VersionRange = NEWEST) -> int | None:
    """The MTP layer count in text_config that this release does not read into n_predict (Qwen3.5
    before 0.30.0): the model still has those layers, but num_speculative_tokens must then be given."""
    config = hf_config(desc)
    if config is None:
        return None
    model_type, archs = _config_type(desc)
    rule = rewrite_for(model_type, archs, version, config)
    if rule is None or rule.text_since is None or version.reaches(rule.text_since) or not rule.layers_key:
        return None
    text = config.get("text_config")
    value = text.get(rule.layers_key) if isinstance(text, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def config_raises(model_type: str, archs: Sequence[str], config: Mapping[str, Any],
                  version: VersionRange = NEWEST) -> str | None:
    """The ValueError hf_config_override itself raises for this config (an Inkling without MTP depth)."""
    rule = rewrite_for(model_type, archs, version, config)
    if rule is None or rule.missing_error is None:
        return None
    count = config_layers(model_type, archs, config, version)[0]
    return rule.missing_error if count is None or count < 1 else None


def config_error(desc: ModelDescription, version: VersionRange = NEWEST) -> Finding | None:
    """config_raises for a description, as VL004's failure."""
    config = hf_config(desc)
    if config is None:
        return None
    model_type, archs = _config_type(desc)
    error = config_raises(model_type, archs, config, version)
    if error is None:
        return None
    where = config_layers(model_type, archs, config, version)[1]
    return result(R_MTP, FAIL, f"{where}: hf_config_override raises ValueError: '{error}'", layers=0,
                  engine_says=error)


def runs_as(desc: ModelDescription, requested: str, version: VersionRange = NEWEST) -> str | None:
    """detect_method applied to a description (GGUF: name and head kind only)."""
    model_type, archs = _config_type(desc)
    config = hf_config(desc)
    after = mtp_model_type(model_type, archs, version, config) if config is not None else model_type
    if config is None and drafter_kind(desc) == MTP_HEAD:
        after = "mtp"
    return detect_method(requested, _model_name(desc), after, archs, version)


# --- checks ------------------------------------------------------------------------------

def rows_check(rule: Rule, target: ModelDescription, draft: ModelDescription, error: str | None) -> Finding:
    t, d = embedding_rows(target), embedding_rows(draft)
    details = {"target": t.value, "draft": d.value, "target_source": t.source, "draft_source": d.source}
    if t.value is None or d.value is None:
        unknown = t if t.value is None else d
        side = "target" if t.value is None else "draft"
        return result(rule, SKIP, f"not checked: {side} {unknown.source}", **details)
    if t.value == d.value:
        return result(rule, PASS, f"{t.value} rows on both sides", **details)
    return result(rule, FAIL, f"embedding rows differ: target {t.value}, draft {d.value}"
                  + (f": '{error.format(t=t.value, d=d.value)[:70]}...'" if error else ""), **details)


def tokens_check(rule: Rule, target: ModelDescription, draft: ModelDescription, effect: str) -> Finding:
    cmp = compare_texts(target, draft)
    if cmp is None:
        return result(rule, SKIP, "not checked: a side has no token texts")
    if cmp.first_difference is None:
        return result(rule, PASS, f"{cmp.compared} token texts equal from id 0", compared=cmp.compared)
    return result(rule, FAIL, f"token {cmp.first_difference} differs: target {cmp.target_text}, draft "
                  f"{cmp.draft_text}; {effect}", first_id=cmp.first_difference)


def _report(method: str, target: ModelDescription, draft: ModelDescription, checks: list[Finding],
            warnings: Sequence[Finding | None] = (), says: str | None = None) -> Report:
    report = Report(ENGINE, method, target, draft, checks, [w for w in warnings if w is not None])
    first = report.first_failure
    if first is not None and first.name == "vllm_vocab_size":
        report.engine_says = SAME_VOCAB_ERROR.format(t=first.details["target"], d=first.details["draft"])
    elif first is not None:
        report.engine_says = first.details.get("engine_says") or says
    if report.compatible:
        model = "DRAFT" if method != "mtp" else "(omit for the target's own MTP layers)"
        report.next_steps.append(
            f"vllm serve TARGET --speculative-config '{{\"method\": \"{method}\", \"model\": \"{model}\", "
            "\"num_speculative_tokens\": 4}'")
    return report


def _zero_layers(who: str, where: str) -> Finding:
    # engine_says is the crash of the command paircheck suggests (num_speculative_tokens given).
    return result(R_MTP, FAIL, f"{who} has no MTP layers ({where} = 0): with num_speculative_tokens set vLLM "
                  f"divides it by n_predict = 0 ({ZERO_LAYERS_ERROR}); without it, it becomes 0 and vLLM raises "
                  f"'{ZERO_TOKENS_ERROR}'", layers=0, engine_says=ZERO_LAYERS_ERROR)


def _v41_refusal(target: ModelDescription, version: VersionRange) -> Finding | None:
    """From 0.30.0, a draft detected as MTP for a deepseek_v41 target raises ValueError."""
    if version.reaches(DEEPSEEK_V41_SINCE) and _config_type(target)[0] == "deepseek_v41":
        return result(R_MTP, FAIL, "DeepSeek V4.1 has no classic-MTP draft: vLLM refuses method mtp for it "
                      "(use dspark)", engine_says=DEEPSEEK_V41_ERROR)
    return None


def draft_model(target: ModelDescription, draft: ModelDescription, method: str, version: VersionRange) -> Report:
    raised = config_error(draft, version)
    if raised is not None:  # the draft's ModelConfig is built (hf_overrides) before the method is detected
        return _report(method, target, draft, [raised])
    detected = runs_as(draft, "draft_model", version)
    if not version.reaches("0.15.0") and detected == "draft_model":
        check = result(R_NO_DRAFT_MODEL, FAIL, "this vLLM has no draft_model method: 'Speculative decoding with "
                       "draft model is not supported yet...'")
        return _report(method, target, draft, [check], says=NO_DRAFT_MODEL_ERROR)
    if detected != "draft_model":
        what = {"mtp": "MTP (it loads only the draft's MTP layers, as if they were the target's)"}.get(
            str(detected), str(detected))
        model_type, archs = _config_type(draft)
        after = mtp_model_type(model_type, archs, version, hf_config(draft))
        why = (f"model_type {model_type!r} becomes {after!r} in hf_config_override"
               if detected == "mtp" and after != model_type else
               f"model_type {model_type!r} is an MTP type" if detected == "mtp" and hf_config(draft) is not None
               else "detected from the draft's name or kind")
        checks = [result(R_KIND, FAIL, f"vLLM does not run this draft as draft_model but as {what}: {why}",
                         runs_as=detected)]
        v41 = _v41_refusal(target, version) if detected == "mtp" else None
        if v41 is not None:  # __post_init__ raises before anything runs
            checks = [v41]
        elif detected == "mtp" and mtp_layers(draft, version)[0] == 0:
            checks = [_zero_layers("the draft", mtp_layers(draft, version)[1])]
        return _report(method, target, draft, checks)
    checks = [
        kind_check(R_KIND, draft, (MODEL,), "draft_model runs it as a standalone model, which a head is not;",
                   "use its own method"),
        rows_check(R_ROWS, target, draft, SAME_VOCAB_ERROR),
        tokens_check(R_TOKENS, target, draft, "vLLM runs, but the draft's proposals are other tokens"),
    ]
    return _report(method, target, draft, checks)


def _name_detects(draft: ModelDescription, method: str, version: VersionRange) -> bool:
    return runs_as(draft, "draft_model", version) == method


def head(target: ModelDescription, draft: ModelDescription, method: str, version: VersionRange) -> Report:
    if method == "dspark" and not version.reaches(DSPARK_SINCE["name"]) or (
            method == "dflash" and not version.reaches(DFLASH_NAME_SINCE)):
        check = result(R_KIND, FAIL, f"this vLLM has no method {method!r}", engine_says=None)
        return _report(method, target, draft, [check])
    checks = [kind_check(R_KIND, draft, HEAD_METHODS[method], f"method {method} needs a {method} head;",
                         "use method draft_model for an independent model")]
    warnings: list[Finding | None] = []
    if checks[0].status == PASS:
        warnings.append(finding(W_VERIFIER, "vLLM will not check that this head was trained for the target"))
        if not _name_detects(draft, method, version):
            unset = runs_as(draft, "draft_model" if version.reaches(DEFAULT_DRAFT_MODEL_SINCE) else "", version)
            does = ("runs it as a draft_model" if unset == "draft_model" else
                    f"runs it as {unset}" if unset else
                    "raises '" + UNSUPPORTED_ERROR.format(method="None") + "' (no default before 0.17.0)")
            warnings.append(finding(W_NAME, f"the name {draft.location!r} lacks {method!r}: without "
                                    f"\"method\": \"{method}\" vLLM {does}"))
    return _report(method, target, draft, checks, warnings)


def mtp(target: ModelDescription, draft: ModelDescription, method: str, version: VersionRange) -> Report:
    same = bool(target.resolved_path) and target.resolved_path == draft.resolved_path
    base = target if same else draft
    who = "the target" if same else "the draft"
    checks: list[Finding] = []
    raised = config_error(base, version)
    if raised is not None:
        return _report(method, target, draft, [raised])
    detected = runs_as(base, "mtp", version) if hf_config(base) is not None else None
    count, where = mtp_layers(base, version)
    if hf_config(base) is not None and detected != "mtp":
        model_type = _config_type(base)[0]
        checks.append(result(R_MTP, FAIL, f"{who}'s model_type {model_type or '?'!r} is not one vLLM runs MTP for: "
                             f"'{UNSUPPORTED_ERROR.format(method='mtp')}'", runs_as=detected))
        return _report(method, target, draft, checks, says=UNSUPPORTED_ERROR.format(method="mtp"))
    v41 = _v41_refusal(target, version)
    if v41 is not None:
        return _report(method, target, draft, [v41])
    unread = unread_text_layers(base, version) if count is None else None
    if unread is not None and unread > 0:
        checks.append(result(R_MTP, PASS, f"{who} has {unread} MTP layer{'s' if unread != 1 else ''} in text_config, "
                             "which this vLLM does not read into n_predict (from 0.30.0 it does): give "
                             "num_speculative_tokens, else 'num_speculative_tokens must be provided with "
                             "speculative model unless the draft model config contains an n_predict parameter.'",
                             layers=unread))
    elif count is None:
        status = SKIP if hf_config(base) is not None else FAIL
        checks.append(result(R_MTP, status, f"{who} declares no MTP layers ({where})"))
    elif count > 0:
        checks.append(result(R_MTP, PASS, f"{who} has {count} MTP layer{'s' if count != 1 else ''} ({where})",
                             layers=count))
    else:
        checks.append(_zero_layers(who, where))
    return _report(method, target, draft, checks)


def draftless(target: ModelDescription, draft: ModelDescription, method: str, version: VersionRange) -> Report:
    return _report(method, target, draft, [result(R_DRAFTLESS, PASS, f"{method} needs no draft model")])


ENGINE_OBJ = VersionedEngine(
    name=ENGINE,
    methods=("draft_model", "eagle", "eagle3", "dflash", "dspark", "mtp", "ngram", "suffix"),
    default_method="draft_model",
    rules=RULES,
    functions={"draft_model": draft_model, "eagle": head, "eagle3": head, "dflash": head, "dspark": head,
               "mtp": mtp, "ngram": draftless, "suffix": draftless},
    versions=VERSIONS,
    aliases={"draft-simple": "draft_model", "draft-eagle3": "eagle3", "draft-mtp": "mtp", "draft-dflash": "dflash",
             "draft-dspark": "dspark", "ngram-simple": "ngram", "ngram-map-k": "ngram", "ngram-map-k4v": "ngram",
             "ngram-mod": "ngram", "ngram-cache": "ngram"},
)
