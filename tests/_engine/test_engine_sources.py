"""Table tests of the engines' pure checks, mirrored in paircheck.

Each table's expected values were read from the engine's own source at the release or
commit named above it, not from paircheck's output; a mirror that drifts from that
reading fails here.
"""

from __future__ import annotations

import pytest

from paircheck._engine import koboldcpp, sglang, transformers, vllm
from paircheck._engine.versions import VersionRange, parse_version, pick

# --- vLLM: vllm/config/speculative.py in the vllm 0.33.0 wheel (commit g4ba787ec9) -------------
# SpeculativeConfig.__post_init__: method detection once a draft model is given.
VLLM_DETECT_0_33 = [
    # requested, draft_model_config.model, hf_config.model_type (after override), architectures, runs as
    ("draft_model", "Qwen/Qwen3-0.6B", "qwen3", ("Qwen3ForCausalLM",), "draft_model"),
    ("draft_model", "yuhuili/EAGLE-LLaMA3-Instruct-8B", "llama", ("LlamaForCausalLM",), "eagle"),
    ("draft_model", "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "llama", ("LlamaForCausalLMEagle3",), "eagle3"),
    ("draft_model", "AngelSlim/Qwen3-8B_eagle3", "llama", (), "eagle3"),
    ("draft_model", "z-lab/Qwen3-8B-DFlash-b16", "qwen3", ("DFlashDraftModel",), "dflash"),
    ("draft_model", "org/glimmer", "muse", ("MuseGlimmerAssistantModel",), "dflash"),
    ("draft_model", "deepseek-ai/dspark_qwen3_8b_block7", "qwen3", (), "dspark"),
    ("draft_model", "org/drafter", "qwen3", ("DSparkDraftModel",), "dspark"),
    ("draft_model", "org/drafter", "llama", ("DSparkDraftModel",), "draft_model"),
    ("draft_model", "Qwen/Qwen3.5-0.8B", "qwen3_5_mtp", ("Qwen3_5MTP",), "mtp"),
    ("draft_model", "google/gemma-4-assistant", "gemma4_mtp", ("Gemma4MTPModel",), "mtp"),
    ("mtp", "deepseek-ai/DeepSeek-V3", "deepseek_mtp", ("DeepSeekMTPModel",), "mtp"),
    ("mtp", "Qwen/Qwen2.5-7B", "qwen2", ("Qwen2ForCausalLM",), None),  # Unsupported speculative method: 'mtp'
    ("eagle3", "my-head", "llama", (), "eagle3"),
    ("dflash", "my-head", "qwen3", (), "dflash"),
]


@pytest.mark.parametrize(("requested", "name", "model_type", "archs", "expected"), VLLM_DETECT_0_33)
def test_vllm_detect_method_0_33(requested: str, name: str, model_type: str, archs: tuple[str, ...],
                                 expected: str | None) -> None:
    assert vllm.detect_method(requested, name, model_type, archs, pick(vllm.VERSIONS, "0.33.0")) == expected


# vllm 0.15.0 wheel: no dflash/dspark detection, MTPModelTypes without qwen3_5_mtp.
VLLM_DETECT_0_15 = [
    ("draft_model", "z-lab/Qwen3-8B-DFlash-b16", "qwen3", ("DFlashDraftModel",), "draft_model"),
    ("draft_model", "yuhuili/EAGLE-LLaMA3-Instruct-8B", "llama", (), "eagle"),
    ("draft_model", "Qwen/Qwen3.5-0.8B", "qwen3_5", ("Qwen3_5ForConditionalGeneration",), "draft_model"),
    ("draft_model", "deepseek-ai/DeepSeek-V3", "deepseek_mtp", (), "mtp"),
]


@pytest.mark.parametrize(("requested", "name", "model_type", "archs", "expected"), VLLM_DETECT_0_15)
def test_vllm_detect_method_0_15(requested: str, name: str, model_type: str, archs: tuple[str, ...],
                                 expected: str | None) -> None:
    assert vllm.detect_method(requested, name, model_type, archs, pick(vllm.VERSIONS, "0.15.0")) == expected


# SpeculativeConfig.hf_config_override, vllm 0.33.0 (first argument 0.15.0's where given).
VLLM_OVERRIDE = [
    ("qwen3_5", ("Qwen3_5ForConditionalGeneration",), "qwen3_5_mtp", "qwen3_5"),
    ("qwen3_5_text", ("Qwen3_5ForCausalLM",), "qwen3_5_mtp", "qwen3_5_text"),
    ("qwen3_5_moe", ("Qwen3_5MoeForConditionalGeneration",), "qwen3_5_mtp", "qwen3_5_moe"),
    ("deepseek_v3", ("DeepseekV3ForCausalLM",), "deepseek_mtp", "deepseek_mtp"),
    ("deepseek_v32", ("DeepseekV32ForCausalLM",), "deepseek_mtp", "deepseek_mtp"),
    ("qwen3_next", ("Qwen3NextForCausalLM",), "qwen3_next_mtp", "qwen3_next_mtp"),
    ("glm4_moe", ("Glm4MoeForCausalLM",), "glm4_moe_mtp", "glm4_moe_mtp"),
    ("mimo", ("MiMoForCausalLM",), "mimo_mtp", "mimo_mtp"),
    ("ernie4_5_moe", ("Ernie4_5_MoeForCausalLM",), "ernie_mtp", "ernie_mtp"),
    ("gemma4_assistant", ("Gemma4AssistantForCausalLM",), "gemma4_mtp", "gemma4_assistant"),
    ("qwen2", ("Qwen2ForCausalLM",), "qwen2", "qwen2"),
    ("llama", ("LlamaForCausalLM",), "llama", "llama"),
]


@pytest.mark.parametrize(("model_type", "archs", "newest", "old"), VLLM_OVERRIDE)
def test_vllm_hf_config_override(model_type: str, archs: tuple[str, ...], newest: str, old: str) -> None:
    assert vllm.mtp_model_type(model_type, archs, pick(vllm.VERSIONS, "0.33.0")) == newest
    assert vllm.mtp_model_type(model_type, archs, pick(vllm.VERSIONS, "0.15.0")) == old
    # Every rewrite target is a member of MTPModelTypes (0.33.0), else detection would miss it.
    assert newest == model_type or newest in vllm.MTP_MODEL_TYPES


def test_vllm_every_rewrite_lands_in_mtp_model_types_of_its_release() -> None:
    """In every release read, what hf_config_override writes is in that release's MTPModelTypes
    (else __post_init__ would raise 'Unsupported speculative method'); a table entry dated
    earlier than its MTP type would fail here."""
    for version in vllm.VERSIONS:
        for rule in vllm.REWRITES:
            if (rule.since is None or version.reaches(rule.since)) and not (rule.until and version.reaches(rule.until)):
                assert vllm.is_mtp_type(rule.to, version), (version.label, rule.to)


# vllm 0.33.0 hf_config_override entries paircheck's earlier table lacked (issue #24).
@pytest.mark.parametrize(("model_type", "archs", "config", "expected"), [
    ("mimo_v2", ("MiMoV2ForCausalLM",), {}, "mimo_v2_mtp"),
    ("mimo_v2_flash", ("MiMoV2FlashForCausalLM",), {}, "mimo_v2_mtp"),
    ("mimo_v2", ("MiMoV2OmniForCausalLM",), {}, "mimo_v2_mtp"),
    ("nemotron_h", ("NemotronHForCausalLM",), {"num_nextn_predict_layers": 1}, "nemotron_h_mtp"),
    ("nemotron_h", ("NemotronHForCausalLM",), {"num_nextn_predict_layers": 0}, "nemotron_h"),
    ("nemotron_h", ("NemotronHForCausalLM",), {}, "nemotron_h"),
    ("intern_s2_preview", (), {}, "qwen3_5_mtp"),
    ("interns2_mobius", (), {}, "qwen3_5_mtp"),
    ("inkling_mm_model", (), {}, "inkling_mtp"),
    ("minimax_m3_vl", (), {}, "minimax_m3_mtp"),
    ("minimax_m3", ("MiniMaxM3SparseForConditionalGeneration",), {}, "minimax_m3_mtp"),
    ("glm5_next", (), {}, "glm5_next_mtp"),
    ("deepseek_v41", ("DeepseekV41ForCausalLM",), {}, "deepseek_mtp"),
    ("bailing_moe", ("BailingMoeV2_5ForCausalLM",), {}, "bailing_hybrid_mtp"),
])
def test_vllm_0_33_override_additions(model_type: str, archs: tuple[str, ...], config: dict[str, int],
                                      expected: str) -> None:
    assert vllm.mtp_model_type(model_type, archs, vllm.NEWEST, config) == expected


# --- SGLang: sglang 0.5.15 wheel, srt/speculative/standalone_worker_v2.py --------------------
# StandaloneWorkerV2._validate_vocab_compatibility; the cases are those of SGLang's own CPU
# unit test for it (test_standalone_vocab_check: identical passes, size mismatch raises with
# both sizes, same size with another mapping raises, a missing tokenizer skips the mapping).
_VOCAB = [b"hello", b"world", b"foo", b"<eos>"]
_REMAPPED = [b"hello", b"world", b"<eos>", b"foo"]
_BIGGER = [*_VOCAB, b"extra"]
SGLANG_CASES = [
    (4, 4, _VOCAB, _VOCAB, None),
    (4, 5, _VOCAB, _BIGGER, "size"),
    (4, 4, _VOCAB, _REMAPPED, "mapping"),
    (4, 4, None, _REMAPPED, None),
    (4, 4, _REMAPPED, None, None),
    (4, 4, None, None, None),
    (1000, 2000, None, None, "size"),
    (152064, 151936, _VOCAB, _VOCAB, "size"),  # Qwen2.5-14B + 0.5B: same tokenizer, other padding
]


@pytest.mark.parametrize(("t_size", "d_size", "t_vocab", "d_vocab", "raises"), SGLANG_CASES)
def test_sglang_validate_vocab_compatibility(t_size: int, d_size: int, t_vocab: list[bytes] | None,
                                             d_vocab: list[bytes] | None, raises: str | None) -> None:
    says = sglang.validate_vocab_compatibility(t_size, d_size, t_vocab, d_vocab)
    if raises is None:
        assert says is None
    elif raises == "size":
        assert says is not None and f"target vocab_size={t_size} and draft vocab_size={d_size}" in says
    else:
        assert says is not None and "different token-to-id mappings even though their vocab sizes match" in says


# --- KoboldCpp: gpttype_adapter.cpp (if(diff <= 256) warn, else refuse) and the vendored
# common/speculative.cpp at ad1eee0 (#define SPEC_VOCAB_MAX_SIZE_DIFFERENCE 256) ---------------
KOBOLD_COUNTS = [
    (151936, 151936, "ok"),
    (151936, 152136, "warn"),  # 200 apart: llama.cpp upstream (128) refuses
    (152064, 151936, "warn"),  # 128 apart
    (1000, 1256, "warn"),
    (1256, 1000, "warn"),
    (1000, 1257, "refuse"),
    (152064, 151643, "refuse"),
]


@pytest.mark.parametrize(("target", "draft", "expected"), KOBOLD_COUNTS)
def test_koboldcpp_count_tolerance(target: int, draft: int, expected: str) -> None:
    assert koboldcpp.count_verdict(target, draft) == expected
    assert koboldcpp.SPEC_VOCAB_MAX_SIZE_DIFFERENCE == 256 == koboldcpp.KOBOLD_LIMIT


# --- transformers: generation/utils.py in the 5.24.0 and 4.45.2 wheels ----------------------
@pytest.mark.parametrize(("t", "d", "uad", "expected"), [
    (152064, 152064, True, "same"), (152064, 151936, True, "uad"), (152064, 151936, False, "refused"),
    (32000, 32000, False, "same"),
])
def test_transformers_assistant_path(t: int, d: int, uad: bool, expected: str) -> None:
    assert transformers.assistant_path(t, d, uad) == expected


# --- paircheck's own version ranges -------------------------------------------------------
@pytest.mark.parametrize(("text", "parsed"), [
    ("0.5.15", (0, 5, 15)), ("v1.115", (1, 115)), ("0.5.15.post1", (0, 5, 15)), ("0.10.0rc1", (0, 10, 0)),
    ("4.46", (4, 46)),
])
def test_parse_version(text: str, parsed: tuple[int, ...]) -> None:
    assert parse_version(text) == parsed


def test_pick_ranges() -> None:
    new = VersionRange("X", "0.5.15", None, "src")
    old = VersionRange("X", None, "0.5.15", "src")
    assert pick((new, old), None) is new
    assert pick((new, old), "0.5.14") is old and pick((new, old), "0.5.15") is new
    assert pick((new, old), "0.5.14.post9") is old and pick((new, old), "0.6") is new
    middle = VersionRange("X", "0.30.0", "0.32.7", "src")
    assert middle.contains("0.32.6") and not middle.contains("0.32.7") and not middle.contains("0.29.9")
    with pytest.raises(ValueError, match="not a version"):
        pick((new, old), "latest")
    with pytest.raises(ValueError, match="no rules"):
        pick((middle,), "0.1")


# SGLang 0.5.23's own ModelConfig(model_path=FOLDER, is_draft_model=True), built on a CPU from
# config files alone (sglang 0.5.23 installed with --no-deps, plus orjson, IPython, gguf,
# torchvision), on folders made by tests/hf_build.py: hf_config.architectures afterwards.
# Run by hand on 2026-12-01 (not in CI: see the README); paircheck's mirror must agree.
SGLANG_MODEL_CONFIG_0_5_23 = [
    ("Qwen2ForCausalLM", "qwen2", None),
    ("Qwen3MoeForCausalLM", "qwen3_moe", "Qwen3MoeForCausalLMMTP"),
    ("DeepseekV3ForCausalLM", "deepseek_v3", "DeepseekV3ForCausalLMNextN"),
    ("Glm4MoeForCausalLM", "glm4_moe", "Glm4MoeForCausalLMNextN"),
    ("Qwen3_5ForConditionalGeneration", "qwen3_5", "Qwen3_5ForCausalLMMTP"),
]


@pytest.mark.parametrize(("arch", "model_type", "loaded"), SGLANG_MODEL_CONFIG_0_5_23)
def test_sglang_draft_rewrite_matches_model_config(arch: str, model_type: str, loaded: str | None) -> None:
    assert sglang.draft_architecture((arch,), model_type, pick(sglang.VERSIONS, "0.5.23")) == loaded
