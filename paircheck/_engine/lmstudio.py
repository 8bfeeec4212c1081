"""LM Studio's rules: its llama.cpp engine for GGUF, its MLX engine for MLX/Hugging Face folders.

The MLX side is open source (lmstudio-ai/mlx-engine at 08f0c07): ``load_model`` in
mlx_engine/generate.py loads any config.json with ``vision_config`` as a
BatchedVisionModelKit, whose ``is_draft_model_compatible`` returns False and whose
``load_draft_model`` raises; a text model's ModelKit compares the tokenizers' base
``vocab_size`` exactly. The llama.cpp side's draft filter is closed source: no source is
public, so it is modelled as llama.cpp's own draft-simple rule, as observed.
"""

from __future__ import annotations

from paircheck._engine import llamacpp
from paircheck._engine.common import MODEL, base_vocab_size, kind_check, result
from paircheck._engine.versions import VersionedEngine, VersionRange
from paircheck._engine.vllm import hf_config
from paircheck.findings import FAIL, PASS, SKIP, Finding, Report, Rule
from paircheck.model import ModelDescription

ENGINE = "lmstudio"
MLX_SOURCE = "lmstudio-ai/mlx-engine at 08f0c0758a804168e258c4cfb80891a8fc9eccb1"
CLOSED = ("no public source: LM Studio's llama.cpp-engine draft filter is closed; modelled on llama.cpp's "
          "draft-simple rule (pinned llama.cpp of llama-cpp-python 0.3.36), as observed")
VERSIONS = (VersionRange("LM Studio", None, None, f"{MLX_SOURCE} (MLX engine); {CLOSED} (GGUF)",
                         cite="mlx-engine at 08f0c07; the llama.cpp side is closed source"),)

NOT_COMPATIBLE = "Draft model is not compatible with main model"
VISION_REFUSAL = "Speculative decoding is not currently supported for batched vision models"

R_KIND = Rule(
    "LS001", "lmstudio_drafter_kind", "LM Studio offers the draft in its picker",
    "LM Studio's draft dropdown lists independent small models only: MTP drafters (gemma4-assistant) "
    "are indexed but never offered (bug tracker #2044, #2150), and there is no choice of EAGLE/DFlash "
    "methods. Source: " + CLOSED + ". Such a head works with llama-server --spec-type draft-mtp.",
    "Run llama-server directly with the head's own --spec-type, or pick an independent draft.",
)
R_GGUF = Rule(
    "LS002", "lmstudio_llamacpp", "LM Studio's llama.cpp engine accepts the pair",
    "For GGUF models LM Studio runs llama.cpp; its filter follows llama.cpp's draft-simple rule (vocab "
    "type, BOS/EOS, token counts within 128, equal token texts). When nothing qualifies the dropdown shows "
    "'No compatible draft models'. Source: " + CLOSED + ".",
    "Use a draft from the same tokenizer family; `paircheck TARGET DRAFT` names the failing llama.cpp check.",
)
R_MLX = Rule(
    "LS003", "lmstudio_mlx_vocab", "The MLX engine's tokenizer sizes are equal",
    "ModelKit._is_draft_model_compatible (mlx_engine/model_kit/model_kit.py) loads the draft's tokenizer "
    "and returns False unless draft_tokenizer.vocab_size == self.tokenizer.vocab_size (the base "
    "vocabulary, without added tokens); _load_draft_model then raises ValueError('" + NOT_COMPATIBLE + "'). "
    "Embedding padding does not matter here. Source: " + MLX_SOURCE + ".",
    "Use a draft whose tokenizer has the same base vocabulary.",
)
R_VISION = Rule(
    "LS004", "lmstudio_mlx_vision", "The MLX target is not a vision model",
    "load_model (mlx_engine/generate.py) loads a model whose config.json has 'vision_config' as a "
    "BatchedVisionModelKit; its is_draft_model_compatible returns False and load_draft_model raises "
    "ValueError('" + VISION_REFUSAL + "') (mlx_engine/model_kit/batched_vision/model_kit.py). "
    "Source: " + MLX_SOURCE + ".",
    "Use a text-only target (or the GGUF build on the llama.cpp engine) for speculative decoding.",
)
W_BATCHED = Rule(
    "LS101", "lmstudio_mlx_parallel", "Parallel predictions turn a text MLX model into a batched one",
    "load_model uses the batched kit for a text model too when max_seq_nums > 1 and its cache can merge; "
    "'max_seq_nums=1 remains an escape hatch for sequential generation and speculative decoding'. With "
    "parallel predictions on, the draft is refused like for a vision model. Source: " + MLX_SOURCE + ".",
    "Set max concurrent predictions to 1 for the model you use with a draft.",
    kind="warning",
)
RULES = (R_KIND, R_GGUF, R_MLX, R_VISION, W_BATCHED)


def has_vision(desc: ModelDescription) -> bool:
    config = hf_config(desc)
    return config is not None and "vision_config" in config


def draft(target: ModelDescription, d: ModelDescription, method: str, version: VersionRange) -> Report:
    checks: list[Finding] = [kind_check(R_KIND, d, (MODEL,), "LM Studio's draft picker does not offer it;",
                                            "run llama-server with the head's --spec-type")]
    warnings: list[Finding] = []
    says = None
    if target.hf is not None and d.hf is not None:  # MLX / Hugging Face folders run on the MLX engine
        if has_vision(target):
            checks.append(result(R_VISION, FAIL, "the target's config.json has vision_config: the MLX engine loads "
                                 f"it as a batched vision model, which refuses any draft: '{VISION_REFUSAL}'"))
            says = VISION_REFUSAL
        else:
            checks.append(result(R_VISION, PASS, "the target is a text model (no vision_config)"))
            warnings.append(W_BATCHED.warn("only with max concurrent predictions = 1: the batched text kit "
                                           "refuses drafts too"))
        t_base, d_base = base_vocab_size(target), base_vocab_size(d)
        if t_base is None or d_base is None:
            checks.append(result(R_MLX, SKIP, "not checked: tokenizer vocab_size unknown"))
        elif t_base == d_base:
            checks.append(result(R_MLX, PASS, f"tokenizer vocab_size {t_base} on both sides"))
        else:
            checks.append(result(R_MLX, FAIL, f"tokenizer vocab_size {t_base} vs {d_base}",
                                 target=t_base, draft=d_base))
            says = says or NOT_COMPATIBLE
    else:
        inner = llamacpp.run_checks(target.vocab, d.vocab)
        first = next((c for c in inner if c.status == FAIL), None)
        if first is None:
            checks.append(result(R_GGUF, PASS, "llama.cpp's draft-simple checks pass",
                                 llamacpp=[c.code for c in inner]))
        else:
            checks.append(result(R_GGUF, FAIL, f"{first.code} {first.name}: {first.message}",
                                 llamacpp_check=first.code))
            says = "No compatible draft models (the draft is not listed; no reason is shown)"
    report = Report(ENGINE, method, target, d, checks, warnings)
    if report.first_failure is not None:
        report.engine_says = says
    if report.compatible:
        report.next_steps.append("In the chat sidebar (Power User mode): Speculative Decoding -> Draft Model")
    return report


ENGINE_OBJ = VersionedEngine(ENGINE, ("draft",), "draft", RULES, {"draft": draft}, VERSIONS, {"draft-simple": "draft"})
