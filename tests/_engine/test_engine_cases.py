"""Engine rules on the pairs people use, built as Hugging Face folders from real tokenizer
data (tests/hf_build.py) and as GGUFs from llama.cpp's real vocab files (tests/corpus.py).

Each case states what the engine's own source does with the pair (see the rule's
provenance, `paircheck explain CODE`) and checks paircheck reports exactly that.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from gguf_mutate import rewrite_gguf, set_tokens, token_texts
from hf_build import build_qwen2_folder

from paircheck.catalog import find_rule
from paircheck.cli import cli, main
from paircheck.errors import InputError
from paircheck.findings import (
    ACCEPTED,
    FAIL,
    PASS,
    REFUSED,
    RUNS_USELESS,
    RUNS_WITHOUT_SPECULATION,
    SKIP,
    UNKNOWN,
    Report,
)
from paircheck.model import ModelDescription
from paircheck.pipeline import check_all_engines, check_descriptions, describe

pytestmark = pytest.mark.corpus


def _check(target: ModelDescription, draft: ModelDescription, engine: str, method: str | None = None) -> Report:
    return check_descriptions(target, draft, engine, method, registry=False, fingerprint=False)


def _qwen_folder(real_vocab: Any, path: Path, vocab_size: int, config: dict[str, Any] | None = None) -> Path:
    """A Qwen2.5-style folder; ``config`` entries replace or extend its config.json."""
    folder = build_qwen2_folder(real_vocab("qwen2"), path, vocab_size, path.name)
    if config:
        data = json.loads((folder / "config.json").read_text())
        data.update(config)
        (folder / "config.json").write_text(json.dumps(data))
    return folder


@pytest.fixture
def qwen25(tmp_path: Path, real_vocab: Any) -> tuple[ModelDescription, ModelDescription]:
    # Qwen2.5-14B-Instruct's config.json says vocab_size 152064, Qwen2.5-0.5B-Instruct's 151936.
    t = describe(str(_qwen_folder(real_vocab, tmp_path / "Qwen2.5-14B-Instruct", 152064)))
    d = describe(str(_qwen_folder(real_vocab, tmp_path / "Qwen2.5-0.5B-Instruct", 151936)))
    return t, d


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_sglang_refuses_padding_difference_since_0_5_15(qwen25: tuple[ModelDescription, ModelDescription]) -> None:
    t, d = qwen25
    assert t.hf is not None and d.hf is not None and t.hf.tokenizer_len == d.hf.tokenizer_len
    newest = _check(t, d, "sglang")
    assert newest.verdict == REFUSED and newest.first_failure is not None
    assert newest.first_failure.code == "SG002"
    assert newest.engine_says is not None
    assert "target vocab_size=152064 and draft vocab_size=151936" in newest.engine_says
    assert newest.engine_says.startswith("STANDALONE speculative decoding requires the draft model")
    assert newest.engine_version.startswith("SGLang >= 0.5.22, rules read from sglang 0.5.22 and 0.5.23 wheels")
    assert _check(t, d, "sglang@0.5.15.post1").verdict == REFUSED
    assert "0.5.15 to before 0.5.16" in _check(t, d, "sglang@0.5.15").engine_version
    before = _check(t, d, "sglang@0.5.14")
    assert before.verdict == ACCEPTED and "0.5.13 to before 0.5.15" in before.engine_version
    # A release newer than the newest read is said to be unread, not assumed.
    assert "rules read up to 0.5.23 (0.5.24 not read" in _check(t, d, "sglang@0.5.24").engine_version
    assert "rules read from 0.5.10 on (0.5.9 not read" in _check(t, d, "sglang@0.5.9").engine_version
    # Same config sizes, same tokenizer: the mapping check passes too.
    same = _check(t, t, "sglang")
    assert same.verdict == ACCEPTED and [c.code for c in same.checks] == ["SG001", "SG002", "SG003"]


def _one_token_changed(src: Path, dst: Path, index: int) -> Path:
    """A copy of a real vocab file whose token ``index`` means other text (same count)."""
    def mutate(meta: Any) -> None:
        texts = token_texts(meta)
        texts[index] = b"paircheck-other-text"
        set_tokens(meta, texts)
    rewrite_gguf(src, dst, mutate)
    return dst


def test_sglang_mapping_check_never_runs(tmp_path: Path, real_vocab: Any) -> None:
    """sglang 0.5.15 to 0.5.23, managers/tp_worker.py TpModelWorker.__init__:
    'if server_args.skip_tokenizer_init or self.is_draft_worker:' (0.5.23: 'get_serving().skip_tokenizer_init')
    '    self.tokenizer = self.processor = None'. So in standalone_worker_v2.py
    _validate_vocab_compatibility, 'and draft_tokenizer is not None' is False and the get_vocab()
    comparison never runs: a same-size draft with other tokens starts and drafts other tokens."""
    t = describe(str(real_vocab("llama-bpe")))
    other = describe(str(_one_token_changed(real_vocab("llama-bpe"), tmp_path / "other.gguf", 1000)))
    for version in ("sglang", "sglang@0.5.15", "sglang@0.5.14", "sglang@0.5.10"):
        report = _check(t, other, version)
        codes = [(c.code, c.status) for c in report.checks]
        assert codes[-1] == ("SG003", FAIL), (version, codes)
        assert report.first_failure is not None and report.first_failure.details["first_id"] == 1000
        # No error text: SGLang says nothing; it starts and drafts other tokens.
        assert report.engine_says is None and report.outcome == RUNS_USELESS, version
        assert "starts without an error" in report.first_failure.message
    assert [c.code for c in _check(t, other, "sglang").checks] == ["SG001", "SG002", "SG003"]
    assert [c.code for c in _check(t, other, "sglang@0.5.14").checks] == ["SG001", "SG003"]
    # The mirror of SGLang's own function agrees: with the draft worker's tokenizer (None from
    # 0.5.15) the mapping comparison is skipped.
    from paircheck._engine import sglang

    tv, dv = sglang.tokenizer_vocab(t), sglang.tokenizer_vocab(other)
    assert sglang.validate_vocab_compatibility(len(tv), len(dv), tv, dv) == sglang.MAPPING_ERROR
    drafted = sglang.draft_tokenizer(sglang.NEWEST, dv)
    assert drafted is None and sglang.validate_vocab_compatibility(len(tv), len(dv), tv, drafted) is None


def _qwen35(real_vocab: Any, path: Path, mtp_layers: int | None) -> Path:
    text: dict[str, Any] = {"model_type": "qwen3_5_text", "vocab_size": 151936}
    if mtp_layers is not None:
        text["mtp_num_hidden_layers"] = mtp_layers
    return _qwen_folder(real_vocab, path, 151936, {
        "model_type": "qwen3_5", "architectures": ["Qwen3_5ForConditionalGeneration"], "text_config": text,
    })


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_vllm_runs_a_qwen3_5_draft_as_mtp(tmp_path: Path, real_vocab: Any) -> None:
    t = describe(str(_qwen_folder(real_vocab, tmp_path / "Qwen3-8B", 151936)))
    d = describe(str(_qwen35(real_vocab, tmp_path / "Qwen3.5-0.8B", 1)))
    report = _check(t, d, "vllm", "draft_model")
    assert report.verdict == REFUSED and report.first_failure is not None
    assert report.first_failure.code == "VL001" and report.first_failure.details["runs_as"] == "mtp"
    assert "qwen3_5_mtp" in report.first_failure.message
    # 0.15.0/0.16.0 do not rewrite qwen3_5: it runs as a draft model there (same rows, same tokens).
    older = _check(t, d, "vllm@0.16.0", "draft_model")
    assert older.verdict == ACCEPTED and [c.code for c in older.checks] == ["VL001", "VL002", "VL003"]
    # Up to 0.14.0 (no qwen3_5 rewrite, no draft_model) the same draft is refused outright.
    none = _check(t, d, "vllm@0.14.0", "draft_model")
    assert none.first_failure is not None and none.first_failure.code == "VL006"


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_vllm_mtp_reads_hf_configs(tmp_path: Path, real_vocab: Any) -> None:
    deepseek = describe(str(_qwen_folder(real_vocab, tmp_path / "DeepSeek-V3", 151936, {
        "model_type": "deepseek_v3", "architectures": ["DeepseekV3ForCausalLM"], "num_nextn_predict_layers": 1})))
    report = _check(deepseek, deepseek, "vllm", "mtp")
    assert report.verdict == ACCEPTED and report.finding("VL004").details["layers"] == 1
    qwen35 = describe(str(_qwen35(real_vocab, tmp_path / "Qwen3.5-27B", 1)))
    assert _check(qwen35, qwen35, "vllm", "draft-mtp").verdict == ACCEPTED
    no_layers = describe(str(_qwen_folder(real_vocab, tmp_path / "DeepSeek-V3-nomtp", 151936, {
        "model_type": "deepseek_v3", "architectures": ["DeepseekV3ForCausalLM"], "num_nextn_predict_layers": 0})))
    assert _check(no_layers, no_layers, "vllm", "mtp").verdict == REFUSED
    undeclared = describe(str(_qwen35(real_vocab, tmp_path / "Qwen3.5-x", None)))
    unknown = _check(undeclared, undeclared, "vllm", "mtp")
    assert unknown.verdict == UNKNOWN and unknown.unknowns[0].code == "VL004"
    qwen2 = describe(str(_qwen_folder(real_vocab, tmp_path / "Qwen2.5-7B", 152064)))
    refused = _check(qwen2, qwen2, "vllm", "mtp")
    assert refused.verdict == REFUSED and refused.engine_says == "Unsupported speculative method: 'mtp'"


def _padded(src: Path, dst: Path, extra: int) -> Path:
    """A copy of a real vocab file with ``extra`` padding tokens appended (shared texts equal)."""
    rewrite_gguf(src, dst, lambda m: set_tokens(m, token_texts(m) + [f"[PAD{i}]".encode() for i in range(extra)]))
    return dst


def test_koboldcpp_tolerates_256_where_llamacpp_stops_at_128(tmp_path: Path, real_vocab: Any) -> None:
    src = real_vocab("qwen2")
    t = describe(str(src))
    d = describe(str(_padded(src, tmp_path / "plus200.gguf", 200)))
    assert (t.vocab.n_tokens, d.vocab.n_tokens) == (151936, 152136)
    kobold = _check(t, d, "koboldcpp")
    assert kobold.verdict == ACCEPTED and [w.code for w in kobold.warnings] == ["KC101"]
    assert "Draft model vocab of (152136) does not match base vocab of (151936)" in kobold.warnings[0].message
    assert not _check(t, d, "llama.cpp").compatible
    far = describe(str(_padded(src, tmp_path / "plus257.gguf", 257)))
    refused = _check(t, far, "koboldcpp")
    assert refused.first_failure is not None and refused.first_failure.code == "KC002"
    assert refused.engine_says == ("Error: Draft model vocab of (152193) is too different from base vocab of "
                                   "(151936). Speculative decoding cannot be used!")


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_lmstudio_mlx_refuses_a_vision_target(tmp_path: Path, real_vocab: Any) -> None:
    d = describe(str(_qwen_folder(real_vocab, tmp_path / "Qwen2.5-0.5B", 151936)))
    text = describe(str(_qwen_folder(real_vocab, tmp_path / "Qwen2.5-7B", 152064)))
    assert _check(text, d, "lmstudio").verdict == ACCEPTED  # base vocab_size equal, padding ignored
    vision = describe(str(_qwen_folder(real_vocab, tmp_path / "Qwen2.5-VL-7B", 152064, {
        "architectures": ["Qwen2_5_VLForConditionalGeneration"], "vision_config": {"depth": 32}})))
    report = _check(vision, d, "lmstudio")
    assert report.verdict == REFUSED and report.first_failure is not None
    assert report.first_failure.code == "LS004"
    assert report.engine_says == "Speculative decoding is not currently supported for batched vision models"


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_ollama_safetensors_drafts(tmp_path: Path, real_vocab: Any) -> None:
    base = describe(str(_qwen35(real_vocab, tmp_path / "Qwen3.5-9B", None)))
    mtp = describe(str(_qwen35(real_vocab, tmp_path / "Qwen3.5-9B-MTP", 1)))
    # Plain ollama create converts a Qwen3.5 MTP draft for a Qwen3.5 base (v0.30.0 on).
    assert _check(base, mtp, "ollama").verdict == ACCEPTED
    assert _check(base, mtp, "ollama@0.30.0").verdict == ACCEPTED
    assert _check(base, mtp, "ollama@0.24.0").verdict == REFUSED  # MLX runner only: not registered
    assert _check(base, mtp, "ollama@0.22.1").verdict == REFUSED  # no DRAFT at all
    # A classic small model is no DRAFT on any path.
    small = describe(str(_qwen_folder(real_vocab, tmp_path / "Qwen2.5-0.5B", 151936)))
    refused = _check(base, small, "ollama")
    assert refused.verdict == REFUSED
    assert "unsupported draft architecture: Qwen2ForCausalLM" in refused.finding("OL001").message
    # A Gemma 4 assistant folder is a registered MLX draft architecture.
    gemma = describe(str(_qwen_folder(real_vocab, tmp_path / "gemma-4-assistant", 151936, {
        "model_type": "gemma4_assistant", "architectures": ["Gemma4AssistantForCausalLM"]})))
    assert _check(base, gemma, "ollama").verdict == ACCEPTED
    dflash = describe(str(_qwen_folder(real_vocab, tmp_path / "Qwen3-8B-DFlash", 151936, {
        "model_type": "qwen3", "architectures": ["DFlashDraftModel"]})))
    assert _check(base, dflash, "ollama").verdict == ACCEPTED
    assert _check(base, dflash, "ollama@0.32.6").verdict == REFUSED  # registered from v0.32.7


def test_transformers_equal_rows_other_tokens_warns(tmp_path: Path, real_vocab: Any) -> None:
    t = describe(str(real_vocab("llama-bpe")))
    other = describe(str(_one_token_changed(real_vocab("llama-bpe"), tmp_path / "other.gguf", 1000)))
    report = _check(t, other, "transformers")
    assert report.verdict == ACCEPTED and [w.code for w in report.warnings] == ["TF102"]
    # The same file twice: nothing from transformers' rules (only the engine-neutral size note).
    assert [w.code for w in _check(t, t, "transformers").warnings if w.code.startswith("TF")] == []
    # Before 4.46.0 different sizes are refused; the padding-only Qwen pair is such a case.


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_transformers_before_uad_refuses_size_difference(qwen25: tuple[ModelDescription, ModelDescription]) -> None:
    t, d = qwen25
    newest = _check(t, d, "transformers")
    assert newest.verdict == ACCEPTED and newest.finding("TF002").details.get("uad")
    old = _check(t, d, "transformers@4.45.2")
    assert old.verdict == REFUSED and old.engine_says == "Make sure the main and assistant model use the same tokenizer"


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_versions_are_validated_and_named(qwen25: tuple[ModelDescription, ModelDescription]) -> None:
    t, d = qwen25
    with pytest.raises(InputError, match="is not a version number"):
        _check(t, d, "sglang@latest")
    with pytest.raises(InputError, match="one rule set"):
        _check(t, d, "llama.cpp@0.3.36")
    for report in check_all_engines(t, d, registry=False, fingerprint=False):
        if report.engine != "llama.cpp":
            assert "rules read from" in report.engine_version, report.engine
        assert report.verdict in (ACCEPTED, REFUSED, UNKNOWN)
        assert (report.verdict == REFUSED) == (not report.compatible)
        assert (report.verdict == UNKNOWN) == (report.compatible and any(c.status == SKIP for c in report.checks))


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_cli_engine_at_version(qwen25: tuple[ModelDescription, ModelDescription], capsys: Any) -> None:
    t, d = qwen25
    runner = CliRunner()
    refused = runner.invoke(cli, ["--engine", "sglang", "--no-registry", t.location, d.location])
    accepted = runner.invoke(cli, ["--engine", "sglang@0.5.14", "--no-registry", t.location, d.location])
    assert (refused.exit_code, accepted.exit_code) == (1, 0), refused.output + accepted.output
    as_json = runner.invoke(cli, ["--engine", "sglang@0.5.14", "--json", "--no-registry", t.location, d.location])
    assert json.loads(as_json.output)["engine_version"].startswith("SGLang 0.5.13 to before 0.5.15")
    with pytest.raises(SystemExit) as exc:
        main(["--engine", "sglang@nope", t.location, d.location])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "not a version number" in err and "Traceback" not in err


def test_every_versioned_rule_cites_its_source() -> None:
    from paircheck._engine import engines

    for engine in engines().values():
        ranges = getattr(engine, "versions", None)
        if not ranges:
            continue
        for rule in engine.rules:
            assert find_rule(rule.code) is rule
            assert "Source: " in rule.explanation, rule.code
        for version in ranges:
            # A range read at no release (KoboldCpp before v1.115) names the users' report instead.
            assert version.source and (" at " in version.source or "wheel" in version.source
                                       or "release" in version.source or "tag" in version.source
                                       or (not version.read and "issue #" in version.source)), version


def test_koboldcpp_draft_types(tmp_path: Path, real_vocab: Any) -> None:
    """speculative_draft_type_from_model: nextn layers make an MTP drafter, an EAGLE-3 head has
    no type of its own, a recurrent classic draft is refused."""
    from test_methods import write_model

    target = describe(str(write_model(tmp_path / "t.gguf", "gemma4", {"gemma4.block_count": 30,
                                                                     "gemma4.embedding_length": 2560})))
    # convert_hf_to_gguf.py writes nextn_predict_layers = block_count for a Gemma 4 assistant.
    kv = {"gemma4-assistant.block_count": 4, "gemma4-assistant.nextn_predict_layers": 4,
          "gemma4-assistant.embedding_length": 256, "gemma4-assistant.embedding_length_out": 2560}
    assistant = describe(str(write_model(tmp_path / "mtp.gguf", "gemma4-assistant", kv)))
    report = _check(target, assistant, "koboldcpp")
    assert report.finding("KC001").details["draft_type"] == "draft-mtp"
    assert [c.code for c in report.checks] == ["KC001", "KC002", "KC004"] and report.verdict == ACCEPTED
    narrow = dict(kv, **{"gemma4-assistant.embedding_length_out": 1024})
    bad = _check(target, describe(str(write_model(tmp_path / "narrow.gguf", "gemma4-assistant", narrow))), "koboldcpp")
    assert bad.first_failure is not None and bad.first_failure.code == "KC004"
    head = describe(str(write_model(tmp_path / "eagle3.gguf", "eagle3", {"eagle3.target_layers": [1, 2, 3]})))
    assert _check(target, head, "koboldcpp").first_failure.code == "KC001"  # type: ignore[union-attr]
    mamba = describe(str(write_model(tmp_path / "mamba.gguf", "mamba", {"mamba.block_count": 2})))
    refused = _check(target, mamba, "koboldcpp")
    assert refused.engine_says == "Error: Speculative decoding cannot be used with Recurrent draft models!"
    llama = describe(str(real_vocab("llama-spm")))
    assert _check(llama, llama, "koboldcpp").finding("KC001").details["draft_type"] == "draft-simple"


def test_koboldcpp_refuses_a_recurrent_draft_before_comparing_counts(tmp_path: Path) -> None:
    """gpttype_adapter.cpp speculative_decoding_setup: 'if(!draft_is_mtp && (llama_model_is_recurrent(draftmodel)
    || llama_model_is_hybrid(draftmodel)))' prints 'Error: Speculative decoding cannot be used with Recurrent
    draft models!', and the count check is its 'else if(draftvocab!=base_n_vocab)': a recurrent draft whose
    token count is 336 away from the target's gets the recurrent error alone, never KC002's."""
    from test_methods import write_model

    target = describe(str(write_model(tmp_path / "t.gguf", "llama", {"llama.block_count": 2},
                                      tokens=[f"t{i}" for i in range(400)])))
    mamba = describe(str(write_model(tmp_path / "mamba.gguf", "mamba", {"mamba.block_count": 2},
                                     tokens=[f"t{i}" for i in range(64)])))
    report = _check(target, mamba, "koboldcpp")
    assert [(c.code, c.status) for c in report.checks] == [("KC001", FAIL)]
    assert report.engine_says == "Error: Speculative decoding cannot be used with Recurrent draft models!"
    assert report.outcome == RUNS_WITHOUT_SPECULATION
    llama = describe(str(write_model(tmp_path / "d.gguf", "llama", {"llama.block_count": 2},
                                     tokens=[f"t{i}" for i in range(64)])))
    plain = _check(target, llama, "koboldcpp")  # the same count gap on an attention draft: KC002
    assert plain.first_failure is not None and plain.first_failure.code == "KC002"


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_sglang_loads_a_rewritten_draft_as_its_mtp_module(tmp_path: Path, real_vocab: Any) -> None:
    """sglang 0.5.13 configs/model_config.py ModelConfig._config_draft_model:
    'if is_draft_model and self.hf_config.architectures[0] == "Qwen3MoeForCausalLM":'
    '    self.hf_config.architectures[0] = "Qwen3MoeForCausalLMMTP"' (for every draft worker,
    STANDALONE included)."""
    t = describe(str(_qwen_folder(real_vocab, tmp_path / "Qwen3-235B-A22B", 151936, {
        "model_type": "qwen3_moe", "architectures": ["Qwen3MoeForCausalLM"]})))
    d = describe(str(_qwen_folder(real_vocab, tmp_path / "Qwen3-30B-A3B", 151936, {
        "model_type": "qwen3_moe", "architectures": ["Qwen3MoeForCausalLM"]})))
    report = _check(t, d, "sglang")
    assert report.verdict == REFUSED and report.first_failure is not None
    assert report.first_failure.code == "SG004"
    assert report.first_failure.details["loaded_as"] == "Qwen3MoeForCausalLMMTP"
    assert report.outcome == RUNS_USELESS and report.engine_says is None
    # 0.5.12 does not rewrite Qwen3-MoE: the same pair runs as a standalone draft there.
    older = _check(t, d, "sglang@0.5.12")
    assert older.verdict == ACCEPTED and "SG004" not in [c.code for c in older.checks]
    # A Qwen3.5 draft is rewritten in every release read.
    q35 = describe(str(_qwen35(real_vocab, tmp_path / "Qwen3.5-0.8B", 1)))
    assert _check(t, q35, "sglang@0.5.10").first_failure.details["loaded_as"] == "Qwen3_5ForCausalLMMTP"  # type: ignore[union-attr]


def _gemma4_assistant(real_vocab: Any, path: Path) -> ModelDescription:
    return describe(str(_qwen_folder(real_vocab, path, 151936, {
        "model_type": "gemma4_assistant", "architectures": ["Gemma4AssistantForCausalLM"]})))


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_sglang_gemma4_assistant_algorithms(tmp_path: Path, real_vocab: Any) -> None:
    """sglang 0.5.12 server_args.py (arg_groups/speculative_hook.py from 0.5.13),
    _resolve_speculative_algorithm_alias: 'if speculative_algorithm == "EAGLE3" and is_gemma4_draft:
    raise ValueError(...)'; NEXTN/EAGLE are promoted to FROZEN_KV_MTP."""
    t = describe(str(_qwen_folder(real_vocab, tmp_path / "gemma-4-31b", 151936, {
        "model_type": "gemma4", "architectures": ["Gemma4ForConditionalGeneration"]})))
    d = _gemma4_assistant(real_vocab, tmp_path / "gemma-4-31b-assistant")
    eagle3 = _check(t, d, "sglang", "EAGLE3")
    assert eagle3.verdict == REFUSED and eagle3.engine_says is not None
    assert eagle3.engine_says.startswith("Gemma4AssistantForCausalLM draft requires --speculative-algorithm NEXTN")
    for method in ("NEXTN", "EAGLE", "draft-mtp"):
        promoted = _check(t, d, "sglang", method)
        assert promoted.verdict == ACCEPTED and promoted.checks[0].details["runs_as"] == "FROZEN_KV_MTP", method
    # 0.5.11 has no Gemma 4 path: the assistant is no EAGLE-3 head there.
    assert _check(t, d, "sglang@0.5.11", "EAGLE3").engine_says is None


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_transformers_gemma4_assistant_needs_a_gemma_target(tmp_path: Path, real_vocab: Any) -> None:
    """transformers 5.24.0 generation/utils.py _get_candidate_generator:
    'if not self.__class__.__name__.startswith(("Gemma4", "Gemma3n")): raise ValueError(
    f"Expected class name to start with Gemma4 or Gemma3n. Got {self.__class__.__name__}."'"""
    d = _gemma4_assistant(real_vocab, tmp_path / "gemma-4-assistant")
    qwen = describe(str(_qwen_folder(real_vocab, tmp_path / "Qwen2.5-7B", 151936)))
    report = _check(qwen, d, "transformers")
    assert report.verdict == REFUSED and report.first_failure is not None
    assert report.first_failure.code == "TF004"
    assert report.engine_says == ("Expected class name to start with Gemma4 or Gemma3n. Got Qwen2ForCausalLM. "
                                  "Gemma4Assistant models require a target model that provides a shared_kv_states "
                                  "dictionary. Currently, only Gemma4 and Gemma3n provide a shared_kv_states "
                                  "dictionary.")
    gemma = describe(str(_qwen_folder(real_vocab, tmp_path / "gemma-4-31b", 151936, {
        "model_type": "gemma4", "architectures": ["Gemma4ForConditionalGeneration"]})))
    ok = _check(gemma, d, "transformers")
    assert ok.verdict == ACCEPTED and ok.finding("TF004").status == PASS  # type: ignore[union-attr]
    # 5.7.0 has no Gemma 4 assistant path: nothing looks at the target's class.
    assert "TF004" not in [c.code for c in _check(qwen, d, "transformers@5.7.0").checks]


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_transformers_dflash_skips_the_vocabulary_check(tmp_path: Path, real_vocab: Any) -> None:
    """transformers 5.15.0 to 5.24.0 _validate_generation_mode: ') is not None and
    generation_config.speculation_type != "dflash":' guards the vocab_size comparison."""
    t = describe(str(_qwen_folder(real_vocab, tmp_path / "Qwen3-8B", 152064)))
    d = describe(str(_qwen_folder(real_vocab, tmp_path / "Qwen3-8B-DFlash-b16", 151936, {
        "model_type": "qwen3", "architectures": ["DFlashDraftModel"]})))
    report = _check(t, d, "transformers", "draft-dflash")
    assert report.method == "dflash" and report.verdict == ACCEPTED
    assert [c.code for c in report.checks] == ["TF005"]  # no TF002: the sizes are not compared
    assert _check(t, d, "transformers@5.14.1", "dflash").verdict == REFUSED
    small = describe(str(_qwen_folder(real_vocab, tmp_path / "Qwen2.5-0.5B", 151936)))
    assert _check(t, small, "transformers", "dflash").first_failure.code == "TF005"  # type: ignore[union-attr]


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_koboldcpp_failures_run_without_speculation(tmp_path: Path, real_vocab: Any) -> None:
    """gpttype_adapter.cpp (the stored version with speculative_decoding_setup; not 26fe21b, which has no
    speculative code): every failure frees the draft and carries on, e.g.
    'printf("Error: failed to initialize speculative decoding state: %s\\n", e.what());' then
    'return false;'. The verdict says "runs, without speculation"."""
    src = real_vocab("qwen2")
    t = describe(str(src))
    far = describe(str(_padded(src, tmp_path / "plus257.gguf", 257)))
    report = _check(t, far, "koboldcpp")
    assert report.verdict == REFUSED and report.outcome == RUNS_WITHOUT_SPECULATION
    other = describe(str(real_vocab("llama-bpe")))  # 128256 tokens against 151936: KC002
    changed = describe(str(_one_token_changed(src, tmp_path / "other.gguf", 1000)))
    strict = _check(t, changed, "koboldcpp")
    assert strict.first_failure is not None and strict.first_failure.code == "KC003"
    assert strict.engine_says == ("Error: failed to initialize speculative decoding state: draft model vocab type "
                                  "must match target model to use speculation")
    assert strict.outcome == RUNS_WITHOUT_SPECULATION
    # Before v1.115 the vendored llama.cpp translated between vocabularies: only the count check.
    assert _check(t, changed, "koboldcpp@1.114").verdict == ACCEPTED
    assert _check(t, other, "koboldcpp").outcome == RUNS_WITHOUT_SPECULATION
    runner = CliRunner()
    human = runner.invoke(cli, ["--engine", "koboldcpp", "--no-registry", t.location, changed.location])
    assert human.exit_code == 1 and human.output.startswith("RUNS, WITHOUT SPECULATION for koboldcpp draft:")
    matrix = runner.invoke(cli, ["--engine", "all", "--no-registry", t.location, changed.location])
    row = next(line for line in matrix.output.splitlines() if line.startswith("koboldcpp"))
    assert " off " in row and "off = runs without speculation" in matrix.output
    js = json.loads(runner.invoke(cli, ["--engine", "koboldcpp", "--json", "--no-registry", t.location,
                                        changed.location]).output)
    assert js["verdict"] == "refused" and js["outcome"] == "runs_without_speculation"


def test_tensorrt_llm_hint_uses_the_current_decoding_type(real_vocab: Any) -> None:
    """NVIDIA/TensorRT-LLM llm_args.py at 0004396: 'decoding_type: Literal["Draft_Target"] =
    Field(default="Draft_Target")' in a union discriminated by decoding_type."""
    t = describe(str(real_vocab("qwen2")))
    report = _check(t, t, "tensorrt-llm")
    assert report.verdict == ACCEPTED
    assert "decoding_type: Draft_Target, speculative_model: DRAFT" in report.next_steps[0]
    assert "0004396" in report.engine_version


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_vllm_new_rewrites_on_folders(tmp_path: Path, real_vocab: Any) -> None:
    """vllm 0.17.0 speculative.py: 'hf_config.model_type == "nemotron_h" and hasattr(hf_config,
    "num_nextn_predict_layers") and hf_config.num_nextn_predict_layers > 0' -> nemotron_h_mtp; and
    0.30.0: 'DeepSeek V4.1 has no classic-MTP draft' for method mtp."""
    t = describe(str(_qwen_folder(real_vocab, tmp_path / "Qwen3-8B", 151936)))
    nemo = describe(str(_qwen_folder(real_vocab, tmp_path / "Nemotron-H-8B", 151936, {
        "model_type": "nemotron_h", "architectures": ["NemotronHForCausalLM"], "num_nextn_predict_layers": 1})))
    report = _check(t, nemo, "vllm", "draft_model")
    assert report.first_failure is not None and report.first_failure.details["runs_as"] == "mtp"
    assert _check(t, nemo, "vllm@0.16.0", "draft_model").verdict == ACCEPTED
    plain = describe(str(_qwen_folder(real_vocab, tmp_path / "Nemotron-H-4B", 151936, {
        "model_type": "nemotron_h", "architectures": ["NemotronHForCausalLM"], "num_nextn_predict_layers": 0})))
    assert _check(t, plain, "vllm", "draft_model").verdict == ACCEPTED
    v41 = describe(str(_qwen_folder(real_vocab, tmp_path / "DeepSeek-V4.1", 151936, {
        "model_type": "deepseek_v41", "architectures": ["DeepseekV41ForCausalLM"], "num_nextn_predict_layers": 1})))
    refused = _check(v41, v41, "vllm", "mtp")
    assert refused.verdict == REFUSED and refused.engine_says is not None
    assert refused.engine_says.startswith("DeepSeek V4.1 has no classic-MTP draft")
    # 0.29.0 does not rewrite deepseek_v41 at all: 'Unsupported speculative method'.
    assert _check(v41, v41, "vllm@0.29.0", "mtp").engine_says == "Unsupported speculative method: 'mtp'"


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_vllm_nemotron_omni_text_config_is_promoted(tmp_path: Path, real_vocab: Any) -> None:
    """vllm 0.29.0 speculative.py lines 794-799: 'if hf_config.architectures[0] in
    ("NemotronH_Super_Omni_Reasoning_V3", "NemotronH_Omni_Reasoning_V3"): ... hf_config =
    hf_config.text_config', then the nemotron_h test at line 802 runs on that text config. An Omni VLM
    with MTP layers in its text_config is run as MTP, not as the draft model asked for; 0.20.0 (line
    366) promotes the Super one only, 0.19.1 neither."""
    t = describe(str(_qwen_folder(real_vocab, tmp_path / "Qwen3-8B", 151936)))
    text = {"model_type": "nemotron_h", "num_nextn_predict_layers": 1}
    omni = describe(str(_qwen_folder(real_vocab, tmp_path / "Nemotron-Omni", 151936, {
        "model_type": "NemotronH_Nano_Omni_Reasoning_V3", "architectures": ["NemotronH_Omni_Reasoning_V3"],
        "text_config": text})))
    super_ = describe(str(_qwen_folder(real_vocab, tmp_path / "Nemotron-Super-Omni", 151936, {
        "model_type": "NemotronH_Nano_Omni_Reasoning_V3", "architectures": ["NemotronH_Super_Omni_Reasoning_V3"],
        "text_config": text})))
    for draft, first in ((omni, "0.29.0"), (super_, "0.20.0")):
        report = _check(t, draft, f"vllm@{first}", "draft_model")
        assert report.first_failure is not None and report.first_failure.code == "VL001", first
        assert report.first_failure.details["runs_as"] == "mtp" and "nemotron_h_mtp" in report.first_failure.message
        assert _check(t, draft, "vllm", "draft_model").first_failure.details["runs_as"] == "mtp"  # type: ignore
    assert _check(t, omni, "vllm@0.28.0", "draft_model").verdict == ACCEPTED
    assert _check(t, super_, "vllm@0.19.1", "draft_model").verdict == ACCEPTED
    # Without MTP layers in the text config nothing is rewritten, promoted or not.
    plain = describe(str(_qwen_folder(real_vocab, tmp_path / "Nemotron-Omni-plain", 151936, {
        "architectures": ["NemotronH_Omni_Reasoning_V3"], "text_config": dict(text, num_nextn_predict_layers=0)})))
    assert _check(t, plain, "vllm", "draft_model").verdict == ACCEPTED


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_vllm_inkling_without_mtp_depth_raises(tmp_path: Path, real_vocab: Any) -> None:
    """vllm 0.29.0 speculative.py lines 962-967 (the same from 0.26.0, line 557-562): 'mtp_config =
    getattr(hf_config, "mtp_config", None) or {}', 'checkpoint_depths = mtp_config.get(
    "num_nextn_predict_layers", 0)', 'if checkpoint_depths < 1: raise ValueError("The Inkling checkpoint
    does not contain MTP weights")'. paircheck used to assume one layer."""
    bare = describe(str(_qwen_folder(real_vocab, tmp_path / "Inkling", 151936, {
        "model_type": "inkling_model", "architectures": ["InklingForCausalLM"]})))
    for method in ("mtp", "draft_model"):
        report = _check(bare, bare, "vllm", method)
        assert report.verdict == REFUSED and report.first_failure is not None and report.first_failure.code == "VL004"
        assert report.engine_says == "The Inkling checkpoint does not contain MTP weights", method
    deep = describe(str(_qwen_folder(real_vocab, tmp_path / "Inkling-mtp", 151936, {
        "model_type": "inkling_model", "architectures": ["InklingForCausalLM"],
        "mtp_config": {"num_nextn_predict_layers": 2}})))
    accepted = _check(deep, deep, "vllm", "mtp")
    assert accepted.verdict == ACCEPTED and accepted.finding("VL004").details["layers"] == 2
    # 0.25.1 has no Inkling rewrite: not an MTP type there.
    assert _check(bare, bare, "vllm@0.25.1", "mtp").engine_says == "Unsupported speculative method: 'mtp'"


def test_vllm_zero_mtp_layers_say_both_failures(tmp_path: Path, real_vocab: Any) -> None:
    """vllm 0.33.0 speculative.py lines 1602-1606: 'if self.num_speculative_tokens is None:
    self.num_speculative_tokens = n_predict' / 'elif (self.num_speculative_tokens > n_predict and
    self.num_speculative_tokens % n_predict != 0)', and line 1969: '"Expected num_speculative_tokens to be
    greater " f"than zero ({self.num_speculative_tokens})."'. The ZeroDivisionError needs
    num_speculative_tokens set (the command paircheck suggests sets it); omitted, it is the ValueError."""
    zero = describe(str(_qwen_folder(real_vocab, tmp_path / "DeepSeek-V3-nomtp", 151936, {
        "model_type": "deepseek_v3", "architectures": ["DeepseekV3ForCausalLM"], "num_nextn_predict_layers": 0})))
    report = _check(zero, zero, "vllm", "mtp")
    assert report.first_failure is not None and report.first_failure.code == "VL004"
    assert report.engine_says == "ZeroDivisionError: integer modulo by zero"
    assert "Expected num_speculative_tokens to be greater than zero (0)." in report.first_failure.message
    assert "with num_speculative_tokens set" in report.first_failure.message


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_vllm_qwen3_5_text_config_layers_from_0_30(tmp_path: Path, real_vocab: Any) -> None:
    """vllm 0.30.0 speculative.py lines 915-918: 'n_predict = getattr(hf_config, "mtp_num_hidden_layers",
    None)' then 'if n_predict is None: text_config = get_hf_text_config(hf_config); n_predict =
    getattr(text_config, "mtp_num_hidden_layers", None)'; 0.29.0 (line 893) has the first line alone. A
    Qwen3.5 config with the count only in text_config has n_predict unset before 0.30.0: no ZeroDivisionError
    for 0 layers there (and no count paircheck can vouch for), and num_speculative_tokens must be given (line
    1718: 'num_speculative_tokens must be provided with speculative model unless the draft model config
    contains an n_predict parameter.')."""
    zero = describe(str(_qwen35(real_vocab, tmp_path / "Qwen3.5-zero", 0)))
    assert _check(zero, zero, "vllm@0.30.0", "mtp").engine_says == "ZeroDivisionError: integer modulo by zero"
    before = _check(zero, zero, "vllm@0.29.0", "mtp")
    assert before.verdict == UNKNOWN and before.unknowns[0].code == "VL004"
    assert "from 0.30.0 it does" in before.unknowns[0].message
    one = describe(str(_qwen35(real_vocab, tmp_path / "Qwen3.5-one", 1)))
    assert _check(one, one, "vllm@0.30.0", "mtp").verdict == ACCEPTED
    older = _check(one, one, "vllm@0.29.0", "mtp")
    assert older.verdict == ACCEPTED and older.finding("VL004").details["layers"] == 1
    assert "num_speculative_tokens must be provided" in older.finding("VL004").message
    assert "must be provided" not in _check(one, one, "vllm@0.30.0", "mtp").finding("VL004").message


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_eagle_heads_under_the_other_eagle_method(tmp_path: Path, real_vocab: Any) -> None:
    """An EAGLE-3 head under vLLM's method eagle (or an EAGLE-1 head under eagle3 / TensorRT-LLM's
    Eagle3) is the wrong drafter kind; SGLang's EAGLE takes both, its EAGLE3 only EAGLE-3 heads."""
    t = describe(str(_qwen_folder(real_vocab, tmp_path / "Qwen3-8B", 151936)))
    eagle3 = describe(str(_qwen_folder(real_vocab, tmp_path / "Qwen3-8B-eagle3", 151936, {
        "model_type": "llama", "architectures": ["LlamaForCausalLMEagle3"]})))
    eagle1 = describe(str(_qwen_folder(real_vocab, tmp_path / "EAGLE-Qwen3-8B", 151936, {
        "model_type": "eagle", "architectures": ["EagleLlamaForCausalLM"]})))
    assert _check(t, eagle3, "vllm", "eagle3").verdict == ACCEPTED
    assert _check(t, eagle3, "vllm", "eagle").first_failure.code == "VL001"  # type: ignore[union-attr]
    assert _check(t, eagle1, "vllm", "eagle3").first_failure.code == "VL001"  # type: ignore[union-attr]
    assert _check(t, eagle1, "tensorrt-llm", "Eagle3").first_failure.code == "TR001"  # type: ignore[union-attr]
    assert _check(t, eagle3, "sglang", "EAGLE").verdict == ACCEPTED
    assert _check(t, eagle1, "sglang", "EAGLE3").first_failure.code == "SG001"  # type: ignore[union-attr]
