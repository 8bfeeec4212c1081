"""SGLang's rules (paircheck._engine.sglang) on in-memory descriptions: STANDALONE's
vocab_size check from 0.5.15, the never-run mapping check, the draft rewrites per release,
the Gemma 4 assistant promotion and the head algorithms. File-free, for the mutation run
(engine.sglang)."""

from __future__ import annotations

import pytest
from rule_desc import desc, hf_desc, statuses, tensors, texts, vocab

from paircheck._engine import sglang as S
from paircheck._engine.versions import pick
from paircheck.findings import FAIL, PASS, RUNS_USELESS, SKIP
from paircheck.model import ModelDescription

LAUNCH = ("python -m sglang.launch_server --model-path TARGET --speculative-algorithm STANDALONE "
          "--speculative-draft-model-path DRAFT")


def at(version: str):  # type: ignore[no-untyped-def]
    return pick(S.VERSIONS, version)


def rows(n: int, v: object = None, name: str = "m.gguf") -> ModelDescription:
    return desc(name, v=v if v is not None else vocab(300), tensor_list=tensors([], rows=n))  # type: ignore[arg-type]


def test_validate_vocab_compatibility() -> None:
    assert S.validate_vocab_compatibility(5, 6, None, None) == S.SIZE_ERROR.format(t=5, d=6)
    assert S.validate_vocab_compatibility(5, 5, None, [b"a"]) is None
    assert S.validate_vocab_compatibility(5, 5, [b"a"], None) is None
    assert S.validate_vocab_compatibility(5, 5, [b"a"], (b"a",)) is None
    assert S.validate_vocab_compatibility(5, 5, [b"a"], [b"b"]) == S.MAPPING_ERROR
    assert S.SIZE_ERROR.format(t=1, d=2).startswith("STANDALONE speculative decoding requires the draft model to share "
                                                    "the same vocabulary as the target model, but got target "
                                                    "vocab_size=1 and draft vocab_size=2.")


def test_draft_tokenizer_and_size_check_since_0_5_15() -> None:
    assert S.draft_tokenizer(at("0.5.15"), [b"a"]) is None
    assert S.draft_tokenizer(at("0.5.14"), [b"a"]) == [b"a"]
    assert S.checks_vocab_size(at("0.5.15")) and not S.checks_vocab_size(at("0.5.14"))


@pytest.mark.parametrize(("archs", "model_type", "version", "loaded"), [
    (("DeepseekV3ForCausalLM",), "", "0.5.10", "DeepseekV3ForCausalLMNextN"),
    (("GlmMoeDsaForCausalLM",), "", "0.5.15", "DeepseekV3ForCausalLMNextN"),
    (("GlmMoeDsaForCausalLM",), "", "0.5.16", "GlmMoeDsaForCausalLMNextN"),
    (("Qwen3MoeForCausalLM",), "", "0.5.12", None),
    (("Qwen3MoeForCausalLM",), "", "0.5.13", "Qwen3MoeForCausalLMMTP"),
    (("Qwen3MoeForCausalLM", "DeepseekV3ForCausalLM"), "", "0.5.12", None),  # only architectures[0]
    (("Qwen2ForCausalLM",), "", "0.5.23", None),
    ((), "dots3_note", "0.5.19", "Dots3NoteForCausalLMNextN"),
    ((), "dots3_note", "0.5.18", None),
    (("Qwen2ForCausalLM",), "dots3_note", "0.5.19", "Dots3NoteForCausalLMNextN"),
    ((), "qwen2", "0.5.23", None),
])
def test_draft_architecture(archs: tuple[str, ...], model_type: str, version: str, loaded: str | None) -> None:
    assert S.draft_architecture(archs, model_type, at(version)) == loaded


def test_tokenizer_vocab() -> None:
    assert S.tokenizer_vocab(desc(v=vocab(0))) is None
    assert S.tokenizer_vocab(desc(v=vocab(4))) == texts(4)
    assert S.tokenizer_vocab(hf_desc(tok_len=3, v=vocab(5))) == texts(3)
    folder = hf_desc(tok_len=None, v=vocab(5))
    assert S.tokenizer_vocab(folder) == texts(5)


def test_config() -> None:
    assert S._config(desc()) == ((), "")
    assert S._config(hf_desc(model_type="qwen2", archs=("A", "B"))) == (("A", "B"), "qwen2")
    folder = hf_desc(model_type="qwen2", archs=("A",))
    folder.hf.extra["config"] = {"model_type": None}  # type: ignore[union-attr]
    assert S._config(folder) == (("A",), "qwen2")  # the facts' model type, when config.json has none
    folder.hf.extra["config"] = "not a dict"  # type: ignore[union-attr]
    assert S._config(folder) == (("A",), "qwen2")


def test_standalone_equal() -> None:
    t, d = rows(300, name="t.gguf"), rows(300, name="d.gguf")
    report = S.ENGINE_OBJ.evaluate(t, d, "draft-simple")
    assert (report.engine, report.method, report.target, report.draft) == ("sglang", "STANDALONE", t, d)
    assert [(c.code, c.status, c.message) for c in report.checks] == [
        ("SG001", PASS, "the draft is an independent model"),
        ("SG002", PASS, "vocab_size 300 on both sides"),
        ("SG003", PASS, "300 tokens map to the same ids")]
    assert report.checks[1].details == {"target": 300, "draft": 300, "target_source": "token_embd.weight rows",
                                        "draft_source": "token_embd.weight rows"}
    assert report.checks[2].details == {"compared": 300}
    assert report.next_steps == [LAUNCH] and report.engine_says is None


def test_standalone_size_differs_from_0_5_15() -> None:
    report = S.ENGINE_OBJ.evaluate(rows(320), rows(300), "STANDALONE")
    assert statuses(report) == [("SG001", PASS), ("SG002", FAIL)]  # the mapping is not reached
    assert report.checks[1].message == "vocab_size differs: target 320, draft 300"
    assert report.checks[1].details == {"target": 320, "draft": 300, "target_source": "token_embd.weight rows",
                                        "draft_source": "token_embd.weight rows",
                                        "engine_says": S.SIZE_ERROR.format(t=320, d=300)}
    assert report.engine_says == S.SIZE_ERROR.format(t=320, d=300) and report.next_steps == []
    old = S.ENGINE_OBJ.evaluate(rows(320), rows(300), "STANDALONE", "0.5.14")
    assert statuses(old) == [("SG001", PASS), ("SG003", PASS)] and old.next_steps == [LAUNCH]


def test_standalone_size_unknown() -> None:
    report = S.ENGINE_OBJ.evaluate(desc("t.gguf"), rows(300), "STANDALONE")
    assert report.checks[1].status == SKIP
    assert report.checks[1].message == "not checked: target embedding rows unknown: tensor infos were not read"
    assert report.checks[2].code == "SG003"  # an unknown size is not a failure: the mapping is compared
    other = S.ENGINE_OBJ.evaluate(rows(300), desc("d.gguf", tensor_list=tensors(["x"])), "STANDALONE")
    assert other.checks[1].message == "not checked: draft embedding rows unknown: no token_embd.weight tensor"
    assert other.checks[1].details == {"target": 300, "draft": None, "target_source": "token_embd.weight rows",
                                       "draft_source": "embedding rows unknown: no token_embd.weight tensor"}


def test_mapping_check() -> None:
    other = rows(300, vocab(300, token_texts=texts(9) + texts(291, "x")))
    report = S.ENGINE_OBJ.evaluate(rows(300), other, "STANDALONE")
    failed = report.checks[2]
    assert (failed.code, failed.status, failed.effect) == ("SG003", FAIL, RUNS_USELESS)
    assert failed.message == ("token 9 differs: target b't9', draft b'x0'; SGLang starts without an error (its mapping "
                              "check never runs: the draft worker has no tokenizer) and drafts other tokens")
    assert failed.details == {"first_id": 9}
    assert report.engine_says is None and report.next_steps == []
    old = S.ENGINE_OBJ.evaluate(rows(300), other, "STANDALONE", "0.5.14")
    assert old.checks[1].message.endswith("; this SGLang has no vocabulary check and starts without an error and "
                                          "drafts other tokens")
    longer = S.ENGINE_OBJ.evaluate(rows(300), rows(300, vocab(310)), "STANDALONE")
    assert longer.checks[2].status == FAIL
    assert longer.checks[2].message == ("the tokenizers have 300 and 310 tokens; SGLang starts without an error (its "
                                        "mapping check never runs: the draft worker has no tokenizer)")
    textless = S.ENGINE_OBJ.evaluate(rows(300), rows(300, vocab(0)), "STANDALONE")
    assert textless.checks[2].status == SKIP
    assert textless.checks[2].message == "not checked: a side has no token texts"
    assert S.ENGINE_OBJ.evaluate(rows(300, vocab(0)), rows(300), "STANDALONE").checks[2].status == SKIP


def test_rewritten_draft() -> None:
    d = hf_desc("org/qwen3moe", model_type="qwen3_moe", archs=("Qwen3MoeForCausalLM",), rows=300)
    t = hf_desc("org/t", rows=300)
    report = S.ENGINE_OBJ.evaluate(t, d, "STANDALONE")
    assert statuses(report) == [("SG001", PASS), ("SG004", FAIL), ("SG002", PASS), ("SG003", PASS)]
    assert report.checks[1].message == ("SGLang loads this draft (Qwen3MoeForCausalLM) as Qwen3MoeForCausalLMMTP: "
                                        "ModelConfig._config_draft_model rewrites it for every draft worker, so the "
                                        "draft's MTP module runs, not the model")
    assert report.checks[1].details == {"loaded_as": "Qwen3MoeForCausalLMMTP"}
    assert report.engine_says is None and report.next_steps == []
    assert statuses(S.ENGINE_OBJ.evaluate(t, d, "STANDALONE", "0.5.12")) == [("SG001", PASS), ("SG003", PASS)]
    dots = hf_desc("org/dots", model_type="dots3_note", archs=(), rows=300)
    assert S.ENGINE_OBJ.evaluate(t, dots, "STANDALONE").checks[1].message.startswith(
        "SGLang loads this draft (dots3_note) as Dots3NoteForCausalLMNextN")


def test_a_head_under_standalone() -> None:
    report = S.ENGINE_OBJ.evaluate(rows(300), desc("e.gguf", arch="eagle3"), "STANDALONE")
    assert report.checks[0].status == FAIL
    assert report.checks[0].message == ("the draft is a eagle3 head; STANDALONE runs it as a standalone model; use "
                                        "EAGLE3")


@pytest.mark.parametrize(("method", "arch", "ok"), [
    ("EAGLE3", "eagle3", True), ("EAGLE3", "llama", False), ("EAGLE", "eagle3", True),
    ("EAGLE", "glm4_mtp", True), ("NEXTN", "glm4_mtp", True), ("NEXTN", "llama", False),
    ("EAGLE3", "glm4_mtp", False),
])
def test_head_algorithms(method: str, arch: str, ok: bool) -> None:
    t, d = rows(300), desc("h.gguf", arch=arch)
    report = S.ENGINE_OBJ.evaluate(t, d, method)
    assert (report.engine, report.method, report.target, report.draft) == ("sglang", method, t, d)
    assert report.checks[0].status == (PASS if ok else FAIL) and len(report.checks) == 1
    if not ok:
        needs = "an EAGLE-3 head" if method == "EAGLE3" else "an EAGLE or MTP head"
        assert report.checks[0].message.endswith(f"; {method} needs {needs}; use STANDALONE")


def test_gemma4_assistant() -> None:
    head = hf_desc("org/assistant", model_type="gemma4_assistant", archs=("Gemma4AssistantForCausalLM",))
    t = rows(300)
    nextn = S.ENGINE_OBJ.evaluate(t, head, "draft-mtp")
    assert [(c.code, c.status, c.message) for c in nextn.checks] == [
        ("SG001", PASS, "a Gemma 4 assistant: SGLang promotes NEXTN to FROZEN_KV_MTP")]
    assert nextn.checks[0].details == {"runs_as": "FROZEN_KV_MTP"}
    assert (nextn.engine, nextn.method, nextn.target, nextn.draft) == ("sglang", "NEXTN", t, head)
    eagle3 = S.ENGINE_OBJ.evaluate(t, head, "EAGLE3")
    assert [(c.code, c.status, c.message) for c in eagle3.checks] == [
        ("SG001", FAIL, "a Gemma 4 assistant (Gemma4AssistantForCausalLM) under EAGLE3 raises ValueError")]
    assert eagle3.engine_says == S.GEMMA4_EAGLE3_ERROR
    assert (eagle3.engine, eagle3.method, eagle3.target, eagle3.draft) == ("sglang", "EAGLE3", t, head)
    # before 0.5.12 it is an MTP head like any other
    old = S.ENGINE_OBJ.evaluate(t, head, "EAGLE3", "0.5.11")
    assert old.checks[0].message.endswith("; EAGLE3 needs an EAGLE-3 head; use STANDALONE")
    unified = hf_desc("org/u", model_type="x", archs=("Other", "Gemma4UnifiedAssistantForCausalLM"))
    assert S._gemma4_assistant(unified, at("0.5.13")) == "Gemma4UnifiedAssistantForCausalLM"
    assert S._gemma4_assistant(unified, at("0.5.12")) is None


def test_ngram_and_engine_says_fallback() -> None:
    t, d = rows(300), rows(1)
    report = S.ENGINE_OBJ.evaluate(t, d, "ngram-mod")
    assert (report.engine, report.method, report.target, report.draft) == ("sglang", "NGRAM", t, d)
    assert [(c.code, c.status, c.message) for c in report.checks] == [
        ("SG001", PASS, "NGRAM needs no draft (CUDA only)")]
    failing = S._report("STANDALONE", t, d, [S.R_KIND.result(FAIL, "x")], says="said")
    assert failing.engine_says == "said"
    assert S._report("STANDALONE", t, d, [S.R_KIND.result(FAIL, "x")]).engine_says is None
    assert S._report("STANDALONE", t, d, [S.R_KIND.result(PASS, "x")], says="said").engine_says is None


def test_wheels_cite_each_release() -> None:
    assert S._wheels("0.5.14", "0.5.15") == ("sgl-project/sglang release 0.5.14 (PyPI wheel sglang-0.5.14) and "
                                             "sgl-project/sglang release 0.5.15 (PyPI wheel sglang-0.5.15)")
