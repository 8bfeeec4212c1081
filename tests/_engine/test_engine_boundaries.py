"""One test per release boundary of every versioned engine.

Each row names the first release whose source has a rule, quotes the line of that release's
source that makes it (read from the PyPI wheel or the tag named in the engine module's
VERSIONS), and checks that paircheck's mirror gives the new behaviour for that release and
the old one for the release before. A row whose quote was read wrong, or a range split at
the wrong release, fails here. The quotes were checked against the wheels: present from the
release on, absent in the one before.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from paircheck._engine import engines, koboldcpp, sglang, transformers, vllm
from paircheck._engine.versions import VersionRange, pick


def _at(engine: Any, version: str) -> VersionRange:
    return pick(engine.VERSIONS, version)


def _vllm_type(model_type: str, archs: tuple[str, ...] = (), **config: Any) -> Callable[[VersionRange], str]:
    return lambda v: vllm.mtp_model_type(model_type, archs, v, config)


def _vllm_detect(name: str, model_type: str = "qwen3", archs: tuple[str, ...] = ()) -> Callable[[VersionRange], Any]:
    return lambda v: vllm.detect_method("draft_model", name, model_type, archs, v)


# (release, the release before it, "LINE: quoted line" of vllm/config/speculative.py in that release's wheel,
# probe, value at release). Each quote was found at LINE of the release's file and not in the release before.
VLLM_BOUNDARIES: list[tuple[str, str, str, Callable[[VersionRange], Any], Any]] = [
    ("0.15.0", "0.14.1", '213: if hf_config.architectures[0] == "Glm4MoeLiteForCausalLM":',
     _vllm_type("glm4_moe_lite", ("Glm4MoeLiteForCausalLM",)), "glm4_moe_lite_mtp"),
    ("0.15.0", "0.14.1", "682: def verify_equal_vocab_size_if_draft_model(self):",
     lambda v: v.reaches("0.15.0"), True),  # the draft_model method exists (0.14.1: 'Speculative decoding
    # with draft model is not supported yet')
    ("0.15.1", "0.15.0", '256: if hf_config.model_type == "step3p5":', _vllm_type("step3p5"), "step3p5_mtp"),
    ("0.16.0", "0.15.1", '184: if hf_config.model_type in ("deepseek_v3", "deepseek_v32", "glm_moe_dsa"):',
     _vllm_type("glm_moe_dsa"), "deepseek_mtp"),
    ("0.17.0", "0.16.0", '302: if hf_config.model_type in ("qwen3_5", "qwen3_5_moe"):',
     _vllm_type("qwen3_5", ("Qwen3_5ForConditionalGeneration",)), "qwen3_5_mtp"),
    ("0.17.0", "0.16.0", '274: hf_config.model_type == "nemotron_h" ... and hf_config.num_nextn_predict_layers > 0',
     _vllm_type("nemotron_h", ("NemotronHForCausalLM",), num_nextn_predict_layers=1), "nemotron_h_mtp"),
    ("0.19.0", "0.18.1", '296: hf_config.model_type in {"nemotron_h", "nemotron_h_puzzle"}',
     _vllm_type("nemotron_h_puzzle", num_nextn_predict_layers=1), "nemotron_h_mtp"),
    ("0.20.0", "0.19.1", '591: elif "dflash" in self.draft_model_config.model.lower():',
     _vllm_detect("z-lab/Qwen3-8B-DFlash-b16", "qwen3", ("DFlashDraftModel",)), "dflash"),
    ("0.20.0", "0.19.1", '398: if "exaone4_5" in hf_config.model_type:', _vllm_type("exaone4_5"), "exaone4_5_mtp"),
    ("0.21.0", "0.20.2", '491: if hf_config.model_type == "gemma4_assistant":',
     _vllm_type("gemma4_assistant", ("Gemma4AssistantForCausalLM",)), "gemma4_mtp"),
    ("0.21.0", "0.20.2", '339: "MiMoV2ForCausalLM",', _vllm_type("mimo_v2", ("MiMoV2ForCausalLM",)), "mimo_v2_mtp"),
    ("0.22.0", "0.21.0", '470: if hf_config.model_type == "intern_s2_preview":', _vllm_type("intern_s2_preview"),
     "qwen3_5_mtp"),
    ("0.23.0", "0.22.1", '512: if hf_config.model_type in ("gemma4_assistant", "gemma4_unified_assistant"):',
     _vllm_type("gemma4_unified_assistant"), "gemma4_mtp"),
    ("0.24.0", "0.23.0", '533: hf_config.model_type == "minimax_m3_vl"', _vllm_type("minimax_m3_vl"), "minimax_m3_mtp"),
    ("0.25.0", "0.24.0", '849: "dspark" in self.draft_model_config.model.lower()',
     _vllm_detect("deepseek-ai/dspark_qwen3_8b_block7"), "dspark"),
    ("0.25.0", "0.24.0", '471: hf_config.model_type == "bailing_hybrid"', _vllm_type("bailing_hybrid"),
     "bailing_hybrid_mtp"),
    ("0.26.0", "0.25.1", '557: if hf_config.model_type in ("inkling_mm_model", "inkling_model"):',
     _vllm_type("inkling_model"), "inkling_mtp"),
    ("0.26.0", "0.25.1", '885: or "Gemma4DSparkModel" in self.draft_model_config.architectures',
     _vllm_detect("org/drafter", "gemma4", ("Gemma4DSparkModel",)), "dspark"),
    ("0.27.0", "0.26.0", '359: if hf_config.model_type == "kimi_k3":', _vllm_type("kimi_k3"), "kimi_k3_mtp"),
    ("0.28.0", "0.27.1", '554: "qwen3_5_text",', _vllm_type("qwen3_5_text", ("Qwen3_5ForCausalLM",)), "qwen3_5_mtp"),
    ("0.28.0", "0.27.1", '948: "MuseGlimmerAssistantModel"', _vllm_detect("org/glimmer", "muse",
                                                                     ("MuseGlimmerAssistantModel",)), "dflash"),
    ("0.29.0", "0.28.0", '821: if hf_config.model_type in {"qwen4_exp", "qwen4_exp_text"}:', _vllm_type("qwen4_exp"),
     "qwen4_exp_mtp"),
    ("0.29.0", "0.28.0", '1301: and self.draft_model_config.hf_config.model_type == "qwen3"',
     _vllm_detect("org/drafter", "qwen3", ("DSparkDraftModel",)), "dspark"),
    ("0.30.0", "0.29.0", '682: if hf_config.model_type in ("deepseek_v4", "deepseek_v41"):', _vllm_type("deepseek_v41"),
     "deepseek_mtp"),
    ("0.30.0", "0.29.0", '1046: if hf_config.model_type == "glm5_next":', _vllm_type("glm5_next"), "glm5_next_mtp"),
    ("0.32.0", "0.31.0", '962: if hf_config.model_type == "longcat_flash": (0.31.0: in ("longcat_flash", '
     '"longcat_flash_ngram"))', _vllm_type("longcat_flash_ngram"), "longcat_flash_ngram"),
    ("0.33.0", "0.32.0", '1055: if hf_config.model_type in ("step5", "step5_vl") or {', _vllm_type("step5"),
     "step5_mtp"),
    ("0.33.0", "0.32.0", '1496: elif self.method == "draft_model": (0.32.0: elif ...model_type == "medusa":)',
     _vllm_detect("org/medusa-head", "medusa"), "draft_model"),
    ("0.17.0", "0.16.0", '339: if self.method is None: ... else: self.method = "draft_model"',
     lambda v: vllm.method_unset("org/plain-draft", "qwen3", ("Qwen3ForCausalLM",), v), "draft_model"),
    ("0.20.0", "0.19.1", '366: if hf_config.architectures[0] == "NemotronH_Super_Omni_Reasoning_V3": ... hf_config = '
     'hf_config.text_config', _vllm_type("nemotron_omni", ("NemotronH_Super_Omni_Reasoning_V3",),
                                      text_config={"model_type": "nemotron_h", "num_nextn_predict_layers": 1}),
     "nemotron_h_mtp"),
    ("0.29.0", "0.28.0", '796: "NemotronH_Omni_Reasoning_V3", (0.28.0 line 487: == '
     '"NemotronH_Super_Omni_Reasoning_V3")',
     _vllm_type("nemotron_omni", ("NemotronH_Omni_Reasoning_V3",),
                text_config={"model_type": "nemotron_h", "num_nextn_predict_layers": 1}), "nemotron_h_mtp"),
    ("0.26.0", "0.25.1", '562: raise ValueError("The Inkling checkpoint does not contain MTP weights")',
     lambda v: vllm.config_raises("inkling_model", (), {}, v), vllm.INKLING_NO_MTP_ERROR),
    ("0.30.0", "0.29.0", '916: if n_predict is None: text_config = get_hf_text_config(hf_config) (0.29.0 line 893: '
     'the hf_config read alone)', lambda v: vllm.config_layers("qwen3_5", ("Qwen3_5ForConditionalGeneration",),
                                                              {"text_config": {"mtp_num_hidden_layers": 1}}, v)[0], 1),
]


@pytest.mark.parametrize(("release", "before", "quote", "probe", "value"), VLLM_BOUNDARIES,
                         ids=[f"{r[0]}:{r[2][:40]}" for r in VLLM_BOUNDARIES])
def test_vllm_boundary(release: str, before: str, quote: str, probe: Callable[[VersionRange], Any],
                       value: Any) -> None:
    assert quote
    new, old = _at(vllm, release), _at(vllm, before)
    assert new.low == release and release in new.read, "the boundary is a range of its own, read at that wheel"
    assert probe(new) == value
    assert probe(old) != value


def test_vllm_deepseek_v41_mtp_refused_from_0_30() -> None:
    """vllm 0.30.0 speculative.py: 'DeepSeek V4.1 has no classic-MTP draft: its checkpoints ship DSpark
    stages under mtp.*'. paircheck's mirror raises the same text for an MTP draft of such a target."""
    assert vllm.DEEPSEEK_V41_ERROR.startswith("DeepSeek V4.1 has no classic-MTP draft: its checkpoints ship DSpark")
    assert _at(vllm, "0.30.0").reaches(vllm.DEEPSEEK_V41_SINCE) and not _at(vllm, "0.29.0").reaches("0.30.0")


def _sglang_arch(arch: str, model_type: str = "") -> Callable[[VersionRange], Any]:
    return lambda v: sglang.draft_architecture((arch,), model_type, v)


# (release, before, quoted line at release, probe, value at release); files under python/sglang/srt/.
SGLANG_BOUNDARIES: list[tuple[str, str, str, Callable[[VersionRange], Any], Any]] = [
    ("0.5.11", "0.5.10", 'configs/model_config.py: and self.hf_config.architectures[0] == "HYV3ForCausalLM"',
     _sglang_arch("HYV3ForCausalLM"), "HYV3ForCausalLMNextN"),
    ("0.5.12", "0.5.11", 'configs/model_config.py:416: if is_draft_model and self.hf_config.architectures[0] in '
     '["DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", ...] (0.5.11 line 345: without DeepseekV32)',
     _sglang_arch("DeepseekV32ForCausalLM"),
     "DeepseekV3ForCausalLMNextN"),
    ("0.5.12", "0.5.11", 'server_args.py:340: "--speculative-algorithm NEXTN or EAGLE; EAGLE3 is "',
     lambda v: v.reaches(sglang.GEMMA4_ASSISTANTS["Gemma4AssistantForCausalLM"]), True),
    ("0.5.13", "0.5.12", 'configs/model_config.py:477: if is_draft_model and self.hf_config.architectures[0] == '
     '"Qwen3MoeForCausalLM":', _sglang_arch("Qwen3MoeForCausalLM"), "Qwen3MoeForCausalLMMTP"),
    ("0.5.15", "0.5.14", "speculative/standalone_worker_v2.py:223: if target_vocab_size != draft_vocab_size: "
     "(0.5.14: the file has no vocabulary check)", sglang.checks_vocab_size, True),
    ("0.5.15", "0.5.14", "managers/tp_worker.py:280: if server_args.skip_tokenizer_init or self.is_draft_worker: "
     "(0.5.14 line 276: if server_args.skip_tokenizer_init:)",
     lambda v: sglang.draft_tokenizer(v, [b"a"]), None),
    ("0.5.16", "0.5.15", 'configs/model_config.py:614: and self.hf_config.architectures[0] == '
     '"InklingForConditionalGeneration"', _sglang_arch("InklingForConditionalGeneration"),
     "InklingForConditionalGenerationMTP"),
    ("0.5.16", "0.5.15", 'configs/model_config.py:561: if is_draft_model and self.hf_config.architectures[0] == '
     '"GlmMoeDsaForCausalLM": ... = "GlmMoeDsaForCausalLMNextN"', _sglang_arch("GlmMoeDsaForCausalLM"),
     "GlmMoeDsaForCausalLMNextN"),
    ("0.5.17", "0.5.16", 'configs/model_config.py: "Qwen3_5ForCausalLM",', _sglang_arch("Qwen3_5ForCausalLM"),
     "Qwen3_5ForCausalLMMTP"),
    ("0.5.18", "0.5.17", 'configs/model_config.py: "InternS2MobiusForConditionalGeneration",',
     _sglang_arch("InternS2MobiusForConditionalGeneration"), "Qwen3_5ForCausalLMMTP"),
    ("0.5.19", "0.5.18", "configs/model_config.py: if is_draft_model and isinstance(self.hf_text_config, "
     "Dots3Config):", _sglang_arch("Dots3ForCausalLM", "dots3_note"), "Dots3NoteForCausalLMNextN"),
    ("0.5.20", "0.5.19", 'configs/model_config.py: and self.hf_config.architectures[0] == '
     '"Qwen4ExpForConditionalGeneration"', _sglang_arch("Qwen4ExpForConditionalGeneration"),
     "Qwen4ExpForCausalLMMTP"),
    ("0.5.21", "0.5.20", 'configs/model_config.py: and self.hf_config.architectures[0] == "GigaChat35ForCausalLM"',
     _sglang_arch("GigaChat35ForCausalLM"), "GigaChat35ForCausalLMNextN"),
    ("0.5.22", "0.5.21", 'configs/model_config.py: "ExaoneMoeForCausalLM",', _sglang_arch("ExaoneMoeForCausalLM"),
     "ExaoneMoEForCausalLMMTP"),
    ("0.5.12", "0.5.11", 'configs/model_config.py:424: is_draft_model and self.hf_config.architectures[0] == '
     '"DeepseekV4ForCausalLM"', _sglang_arch("DeepseekV4ForCausalLM"), "DeepseekV4ForCausalLMNextN"),
    ("0.5.12", "0.5.11", 'configs/model_config.py:473: "InternS2PreviewForConditionalGeneration",',
     _sglang_arch("InternS2PreviewForConditionalGeneration"), "Qwen3_5ForCausalLMMTP"),
    ("0.5.13", "0.5.12", 'configs/model_config.py:457: and self.hf_config.architectures[0] == '
     '"Step3p7ForConditionalGeneration"', _sglang_arch("Step3p7ForConditionalGeneration"), "Step3p5MTP"),
    ("0.5.13", "0.5.12", 'configs/model_config.py:495: "NemotronHPuzzleForCausalLM",',
     _sglang_arch("NemotronHPuzzleForCausalLM"), "NemotronHForCausalLMMTP"),
    ("0.5.13", "0.5.12", 'configs/model_config.py:435: self.hf_config.architectures[0] = "Glm4MoeLiteForCausalLMNextN"',
     _sglang_arch("Glm4MoeLiteForCausalLM"), "Glm4MoeLiteForCausalLMNextN"),
]


@pytest.mark.parametrize(("release", "before", "quote", "probe", "value"), SGLANG_BOUNDARIES,
                         ids=[f"{r[0]}:{r[2][:40]}" for r in SGLANG_BOUNDARIES])
def test_sglang_boundary(release: str, before: str, quote: str, probe: Callable[[VersionRange], Any],
                         value: Any) -> None:
    assert quote
    new, old = _at(sglang, release), _at(sglang, before)
    assert new.low == release and release in new.read
    assert probe(new) == value
    assert probe(old) != value


TF_BOUNDARIES: list[tuple[str, str, str, Callable[[VersionRange], Any], Any]] = [
    ("4.46.0", "4.45.2", "generation/utils.py _validate_assistant: 'The main and assistant moedels have different "
     "tokenizers'", lambda v: transformers.assistant_path(152064, 151936, v.reaches(transformers.V_UAD_SINCE)),
     "uad"),
    ("5.8.0", "5.7.0", 'generation/utils.py:990: elif assistant_model is not None and '
     'assistant_model.__class__.__name__.startswith("Gemma4Assistant"): (5.7.0: no Gemma4Assistant in the file)',
     lambda v: transformers.gemma4_assistant_class("Gemma4AssistantForCausalLM", v), True),
    ("5.10.1", "5.9.0", 'generation/utils.py: ("Gemma4Assistant", "Gemma4UnifiedAssistant")',
     lambda v: transformers.gemma4_assistant_class("Gemma4UnifiedAssistantForCausalLM", v), True),
    ("5.15.0", "5.14.1", 'generation/utils.py:1064: elif generation_config.speculation_type == "dflash": (and '
     'line 1587; 5.14.1: no "dflash" in generation/)', transformers.has_dflash, True),
]


@pytest.mark.parametrize(("release", "before", "quote", "probe", "value"), TF_BOUNDARIES,
                         ids=[r[0] for r in TF_BOUNDARIES])
def test_transformers_boundary(release: str, before: str, quote: str, probe: Callable[[VersionRange], Any],
                               value: Any) -> None:
    assert quote
    new, old = _at(transformers, release), _at(transformers, before)
    assert new.low == release and release in new.read
    assert probe(new) == value
    assert probe(old) != value


# The boundaries the source audit of issue 35 found unverified, each now quoted with its line.
AUDITED = {"sglang": ("0.5.12", "0.5.13", "0.5.15", "0.5.16"), "transformers": ("5.8.0", "5.15.0")}


def test_every_boundary_quote_names_its_line() -> None:
    """vLLM's quotes are 'LINE: text' of vllm/config/speculative.py; the audited SGLang and transformers
    boundaries name 'file.py:LINE: text' of that release's wheel, so a reader can open the line."""
    for release, _, quote, *_ in VLLM_BOUNDARIES:
        assert re.match(r"\d+: \S", quote), (release, quote)
    for engine, rows in (("sglang", SGLANG_BOUNDARIES), ("transformers", TF_BOUNDARIES)):
        for release, _, quote, *_ in rows:
            if release in AUDITED[engine]:
                assert re.match(r"[\w/]+\.py:\d+: \S", quote), (engine, release, quote)


def test_koboldcpp_boundary_is_issue_2325() -> None:
    """vendored common/speculative.cpp at ad1eee0: 'throw
    std::runtime_error("draft model vocab type must match target model to use speculation")', caught by
    speculative_state_setup: 'printf("Error: failed to initialize speculative decoding state: %s\\n",
    e.what());'. Issue #2325: 'Drafting does not work since v1.115'."""
    strict, before = _at(koboldcpp, "1.115"), _at(koboldcpp, "1.114")
    assert strict.low == "1.115" and before.high == "1.115"
    assert strict.reaches("1.115") and not before.reaches("1.115")
    assert "issue #2325" in before.source and not before.read  # not read at a release: said so
    assert koboldcpp.SETUP_FAILED.format(what="x") == "Error: failed to initialize speculative decoding state: x"


def test_every_versions_line_lists_its_boundaries() -> None:
    """The README's version table is the engines' own ``boundaries``: one entry per range."""
    for engine in engines().values():
        versions = getattr(engine, "versions", ())
        if len(versions) < 2:
            continue
        listed = engine.boundaries.split(", ")
        assert len(listed) == len(versions), engine.name
        assert all(r.low in listed for r in versions if r.low), engine.name


def test_readme_version_table_is_the_engines_boundaries() -> None:
    """docs/engines.md: each versioned engine's row lists exactly its boundaries."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "docs" / "engines.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip(): line.split("|")[2].strip()
            for line in readme.splitlines() if line.startswith("| ") and line.count("|") == 3}
    for engine in engines().values():
        versions = getattr(engine, "versions", ())
        if len(versions) < 2:
            continue
        assert rows.get(engine.name) == engine.boundaries, engine.name
