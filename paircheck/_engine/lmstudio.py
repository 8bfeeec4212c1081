"""LM Studio's rules (ecosystem.md section 2): its llama.cpp engine for GGUF, its MLX engine
for MLX/Hugging Face folders. The llama.cpp side's filter is closed source; it is observed to
follow llama.cpp's rule, with known gaps (MTP drafters never offered). The MLX engine
(mlx_engine/model_kit.py at 08f0c07) compares the tokenizers' base ``vocab_size`` exactly.
"""

from __future__ import annotations

from paircheck._engine import llamacpp
from paircheck._engine.common import MODEL, TableEngine, base_vocab_size, kind_check, result
from paircheck.findings import FAIL, PASS, SKIP, Finding, Report, Rule
from paircheck.model import ModelDescription

ENGINE = "lmstudio"
VERSION = "LM Studio >= 0.3.10 (speculative decoding since 2025-02); MLX engine at 08f0c07"

R_KIND = Rule(
    "LS001", "lmstudio_drafter_kind", "LM Studio offers the draft in its picker",
    "LM Studio's draft dropdown lists independent small models only: MTP drafters "
    "(gemma4-assistant) are indexed but never offered (bug tracker #2044, #2150), and there is "
    "no choice of EAGLE/DFlash methods. Such a head works with llama-server --spec-type draft-mtp.",
    "Run llama-server directly with the head's own --spec-type, or pick an independent draft.",
)
R_GGUF = Rule(
    "LS002", "lmstudio_llamacpp", "LM Studio's llama.cpp engine accepts the pair",
    "For GGUF models LM Studio runs llama.cpp; its filter follows llama.cpp's draft-simple "
    "rule (vocab type, BOS/EOS, token counts within 128, equal token texts). When nothing "
    "qualifies the dropdown shows 'No compatible draft models'. A stale cached verdict (e.g. "
    "after an mmproj file was added) can hide a compatible draft.",
    "Use a draft from the same tokenizer family; `paircheck TARGET DRAFT` names the failing "
    "llama.cpp check.",
)
R_MLX = Rule(
    "LS003", "lmstudio_mlx_vocab", "The MLX engine's tokenizer sizes are equal",
    "For MLX models LM Studio's open mlx-engine loads the draft's tokenizer and requires "
    "draft_tokenizer.vocab_size == main tokenizer.vocab_size (the base vocabulary, without "
    "added tokens); otherwise 'Draft model is not compatible with main model'. Embedding "
    "padding does not matter here. Batched/vision MLX models refuse any draft.",
    "Use a draft whose tokenizer has the same base vocabulary.",
)
RULES = (R_KIND, R_GGUF, R_MLX)


def draft(target: ModelDescription, d: ModelDescription, method: str) -> Report:
    checks: list[Finding] = [kind_check(R_KIND, d, (MODEL,), "LM Studio's draft picker does not offer it;",
                                            "run llama-server with the head's --spec-type")]
    mlx = target.hf is not None and d.hf is not None
    says = None
    if mlx:
        checks.append(result(R_GGUF, SKIP, "not used: Hugging Face/MLX folders run on the MLX engine"))
        t_base, d_base = base_vocab_size(target), base_vocab_size(d)
        if t_base is None or d_base is None:
            checks.append(result(R_MLX, SKIP, "not checked: tokenizer vocab_size unknown"))
        elif t_base == d_base:
            checks.append(result(R_MLX, PASS, f"tokenizer vocab_size {t_base} on both sides"))
        else:
            checks.append(result(R_MLX, FAIL, f"tokenizer vocab_size {t_base} vs {d_base}", target=t_base, draft=d_base))
            says = "Draft model is not compatible with main model"
    else:
        inner = llamacpp.run_checks(target.vocab, d.vocab, target, d)
        first = next((c for c in inner if c.status == FAIL), None)
        if first is None:
            checks.append(result(R_GGUF, PASS, "llama.cpp's draft-simple checks pass", llamacpp=[c.code for c in inner]))
        else:
            checks.append(result(R_GGUF, FAIL, f"{first.code} {first.name}: {first.message}", llamacpp_check=first.code))
            says = "No compatible draft models (the draft is not listed; no reason is shown)"
        checks.append(result(R_MLX, SKIP, "not used: GGUF files run on the llama.cpp engine"))
    report = Report(ENGINE, method, target, d, checks, engine_version=VERSION, engine_says=says)
    if report.compatible:
        report.next_steps.append("In the chat sidebar (Power User mode): Speculative Decoding -> Draft Model")
    return report


ENGINE_OBJ = TableEngine(ENGINE, ("draft",), "draft", RULES, {"draft": draft}, {"draft-simple": "draft"})
