"""transformers' assisted-generation rules (paircheck._engine.transformers) on in-memory
descriptions: the path chosen from the embedding rows per release, the stateful target, the
Gemma 4 assistant's target, DFlash, and each warning. File-free, for the mutation run
(engine.transformers)."""

from __future__ import annotations

import pytest
from rule_desc import desc, hf_desc, statuses, tensors, texts, vocab

from paircheck._engine import transformers as TF
from paircheck._engine.versions import pick
from paircheck.findings import FAIL, PASS, SKIP, WARN
from paircheck.model import ModelDescription

PLAIN = "model.generate(**inputs, assistant_model=draft)"
UAD = "model.generate(**inputs, assistant_model=draft, tokenizer=tok, assistant_tokenizer=draft_tok)"


def rows(n: int, v_n: int = 300, **kw: object) -> ModelDescription:
    return desc(f"m{n}.gguf", v=vocab(v_n), tensor_list=tensors([], rows=n), **kw)  # type: ignore[arg-type]


def at(version: str):  # type: ignore[no-untyped-def]
    return pick(TF.VERSIONS, version)


def test_assistant_path() -> None:
    assert TF.assistant_path(5, 5) == "same" and TF.assistant_path(5, 5, False) == "same"
    assert TF.assistant_path(5, 6) == "uad" and TF.assistant_path(5, 6, False) == "refused"


def test_assistant_inside_target() -> None:
    assert TF.assistant_inside_target([b"a", b"b", b"c"], [b"c", b"a"])
    assert not TF.assistant_inside_target([b"a"], [b"a", b"z"])
    assert TF.assistant_inside_target([b"a"], [])


def test_same_rows_same_tokens() -> None:
    t, d = rows(300), rows(300)
    report = TF.ENGINE_OBJ.evaluate(t, d, "draft-simple")
    assert (report.engine, report.method, report.target, report.draft) == ("transformers", "assisted", t, d)
    assert [(c.code, c.status, c.message) for c in report.checks] == [
        ("TF001", PASS, "the draft is an independent model"),
        ("TF003", PASS, "the target is not stateful"),
        ("TF002", PASS, "300 rows on both sides: the same-tokenizer path")]
    assert report.warnings == [] and report.next_steps == [PLAIN] and report.engine_says is None


def test_same_rows_other_tokens_warn() -> None:
    d = desc("d.gguf", v=vocab(300, token_texts=texts(7) + texts(293, "x")), tensor_list=tensors([], rows=300))
    report = TF.ENGINE_OBJ.evaluate(rows(300), d, "assisted")
    assert [(w.code, w.status, w.message) for w in report.warnings] == [
        ("TF102", WARN, "token 7 differs (target 't7', draft 'x0') but the rows are equal: transformers runs the "
                        "pair silently and accepts almost nothing")]
    assert report.compatible


def test_padding_difference_needs_uad_and_crashes_with_sampling() -> None:
    report = TF.ENGINE_OBJ.evaluate(rows(320), rows(300), "assisted")
    uad = report.checks[2]
    assert (uad.code, uad.status, uad.message) == ("TF002", PASS, "rows 320 vs 300: Universal Assisted Decoding "
                                                   "required (pass tokenizer and assistant_tokenizer)")
    assert uad.details == {"target": 320, "draft": 300, "uad": True}
    assert [(w.code, w.message) for w in report.warnings] == [
        ("TF101", "identical token texts, only the padding differs: transformers still demands UAD"),
        ("TF103", "every assistant token exists in the target vocabulary: with do_sample=True generate() raises "
                  "AttributeError: 'AssistantToTargetTranslator' object has no attribute "
                  "'assistant_overlap_token_ids'")]
    assert report.warnings[1].details == {"sampling_crashes": True} and report.warnings[1].status == WARN
    assert report.next_steps == [UAD]


def test_uad_with_other_tokens() -> None:
    d = desc("d.gguf", v=vocab(300, token_texts=texts(7) + texts(293, "x")), tensor_list=tensors([], rows=310))
    report = TF.ENGINE_OBJ.evaluate(rows(300), d, "assisted")
    assert report.checks[2].details["uad"] is True and report.warnings == []  # tokens outside: no crash
    inside = desc("d.gguf", v=vocab(5), tensor_list=tensors([], rows=310))
    assert [w.code for w in TF.ENGINE_OBJ.evaluate(rows(300), inside, "assisted").warnings] == ["TF101", "TF103"]
    textless = desc("d.gguf", v=vocab(0), tensor_list=tensors([], rows=310))
    assert TF.ENGINE_OBJ.evaluate(rows(300), textless, "assisted").warnings == []
    assert TF.ENGINE_OBJ.evaluate(textless, rows(300), "assisted").warnings == []


def test_folder_tokenizer_is_len_tokenizer() -> None:
    # a folder's converted list is padded past len(tokenizer): only those texts count for TF103
    t = hf_desc("org/t", rows=320, tok_len=300, v=vocab(320, token_texts=texts(300) + texts(20, "pad")))
    d = hf_desc("org/d", rows=310, tok_len=300, v=vocab(310, token_texts=texts(300) + texts(10, "other")))
    assert [w.code for w in TF.ENGINE_OBJ.evaluate(t, d, "assisted").warnings] == ["TF103"]


def test_before_uad_different_rows_are_refused() -> None:
    report = TF.ENGINE_OBJ.evaluate(rows(320), rows(300), "assisted", "4.45.2")
    failed = report.checks[2]
    assert (failed.code, failed.status, failed.message) == ("TF002", FAIL, "rows 320 vs 300: this transformers has no "
                                                            "Universal Assisted Decoding")
    assert failed.details == {"target": 320, "draft": 300}
    assert report.engine_says == TF.OLD_ERROR and report.next_steps == [] and report.warnings == []
    assert TF.ENGINE_OBJ.evaluate(rows(320), rows(300), "assisted", "4.46.0").checks[2].status == PASS


def test_unknown_rows() -> None:
    report = TF.ENGINE_OBJ.evaluate(desc("t.gguf"), rows(300), "assisted")
    assert report.checks[2].status == SKIP
    assert report.checks[2].message == "not checked: embedding rows unknown: tensor infos were not read"
    other = TF.ENGINE_OBJ.evaluate(rows(300), desc("d.gguf", tensor_list=tensors(["x"])), "assisted")
    assert other.checks[2].message == "not checked: embedding rows unknown: no token_embd.weight tensor"
    assert other.next_steps == [PLAIN]


def test_stateful_target() -> None:
    report = TF.ENGINE_OBJ.evaluate(rows(300, arch="mamba"), rows(320), "assisted", "4.45.2")
    assert statuses(report) == [("TF001", PASS), ("TF003", FAIL), ("TF002", FAIL)]
    assert report.checks[1].message == "the target is a recurrent/stateful model"
    assert report.engine_says == ("assisted generation is not supported with stateful models, such as the target's "
                                  "model class")  # checked before the sizes


def test_a_head_is_no_assistant() -> None:
    report = TF.ENGINE_OBJ.evaluate(rows(300), desc("e.gguf", arch="eagle3"), "assisted")
    assert report.checks[0].status == FAIL
    assert report.checks[0].message == ("the draft is a eagle3 head; transformers cannot run it as assistant_model; "
                                        "use an independent model")
    assert report.engine_says is None and report.next_steps == []
    mtp = TF.ENGINE_OBJ.evaluate(rows(300), rows(300, arch="gemma4-assistant"), "assisted", "5.7.0")
    assert mtp.checks[0].status == PASS and [c.code for c in mtp.checks] == ["TF001", "TF003", "TF002"]


@pytest.mark.parametrize(("cls", "version", "gemma"), [
    ("Gemma4AssistantForCausalLM", "5.8.0", True), ("Gemma4AssistantForCausalLM", "5.7.0", False),
    ("Gemma4UnifiedAssistantForCausalLM", "5.10.1", True), ("Gemma4UnifiedAssistantForCausalLM", "5.9.0", False),
    ("Gemma4ForCausalLM", "5.24.0", False),
])
def test_gemma4_assistant_class(cls: str, version: str, gemma: bool) -> None:
    assert TF.gemma4_assistant_class(cls, at(version)) is gemma


def test_model_class() -> None:
    assert TF.model_class(hf_desc(archs=("Gemma3nForConditionalGeneration",))) == "Gemma3nForConditionalGeneration"
    assert TF.model_class(desc(arch="gemma4")) == "Gemma4ForCausalLM"
    assert TF.model_class(desc(arch="Gemma3n")) == "Gemma3nForCausalLM"
    assert TF.model_class(desc(arch="gemma4-assistant")) == "Gemma4AssistantForCausalLM"
    assert TF.model_class(desc(arch="llama")) == "llama"
    assert TF.model_class(hf_desc(archs=(), arch="gemma4")) == "Gemma4ForCausalLM"


def test_gemma4_assistant_needs_a_gemma_target() -> None:
    head = rows(300, arch="gemma4-assistant")
    ok = TF.ENGINE_OBJ.evaluate(rows(300, arch="gemma4"), head, "draft-mtp")
    assert ok.checks[-1].code == "TF004" and ok.checks[-1].status == PASS
    assert ok.checks[-1].message == "a Gemma 4 assistant with a Gemma4ForCausalLM target"
    bad = TF.ENGINE_OBJ.evaluate(rows(300), head, "assisted")
    assert (bad.checks[-1].code, bad.checks[-1].status) == ("TF004", FAIL)
    assert bad.checks[-1].message == "a Gemma 4 assistant needs a Gemma4/Gemma3n target, not llama"
    assert bad.engine_says == TF.GEMMA4_ERROR.format(cls="llama") and bad.next_steps == []
    nameless = TF.ENGINE_OBJ.evaluate(rows(300, arch=None), head, "assisted")
    assert nameless.checks[-1].message.endswith("not an unknown class")
    assert nameless.engine_says == TF.GEMMA4_ERROR.format(cls="?")
    three = TF.ENGINE_OBJ.evaluate(hf_desc(archs=("Gemma3nForCausalLM",), rows=300), head, "assisted")
    assert three.checks[-1].status == PASS
    # a stateful target's error comes first
    both = TF.ENGINE_OBJ.evaluate(rows(300, arch="mamba"), head, "assisted")
    assert both.engine_says == TF.STATEFUL_ERROR.format(cls="the target's model class")


def test_dflash() -> None:
    head, t = desc("df.gguf", arch="dflash"), rows(300)
    report = TF.ENGINE_OBJ.evaluate(t, head, "draft-dflash")
    assert (report.engine, report.method, report.target, report.draft) == ("transformers", "dflash", t, head)
    assert [(c.code, c.status, c.message) for c in report.checks] == [("TF005", PASS, "the draft is a dflash head")]
    assert report.next_steps == ["model.generate(**inputs, assistant_model=dflash_drafter, speculation_type='dflash')"]
    old = TF.ENGINE_OBJ.evaluate(t, head, "dflash", "5.14.1")
    assert [(c.code, c.status, c.message) for c in old.checks] == [
        ("TF005", FAIL, "this transformers has no speculation_type='dflash' (added in 5.15.0)")]
    assert (old.engine, old.method, old.target, old.draft) == ("transformers", "dflash", t, head)
    assert TF.has_dflash(at("5.15.0")) and not TF.has_dflash(at("5.14.1"))
    model = TF.ENGINE_OBJ.evaluate(t, rows(300), "dflash")
    assert model.checks[0].message == ("the draft is an independent model; speculation_type='dflash' needs a DFlash "
                                       "drafter; use assisted generation for an independent model")
    assert model.engine_says is None and model.next_steps == []
    stateful = TF.ENGINE_OBJ.evaluate(rows(300, arch="mamba"), head, "dflash")
    assert statuses(stateful) == [("TF005", PASS), ("TF003", FAIL)]
    assert stateful.checks[1].message == "the target is a recurrent/stateful model"
    assert stateful.engine_says == TF.STATEFUL_ERROR.format(cls="the target's model class")
    assert stateful.next_steps == []


def test_prompt_lookup() -> None:
    t, d = rows(300), rows(1)
    for name in ("ngram-mod", "ngram-cache", "prompt_lookup"):
        report = TF.ENGINE_OBJ.evaluate(t, d, name)
        assert (report.engine, report.method, report.target, report.draft) == ("transformers", "prompt_lookup", t, d)
        assert [(c.code, c.status, c.message) for c in report.checks] == [
            ("TF001", PASS, "prompt lookup needs no assistant (prompt_lookup_num_tokens=N)")]


def test_wheels_cite_each_release() -> None:
    assert TF._wheels("5.8.0", "5.9.0") == ("transformers 5.8.0 wheel and transformers 5.9.0 wheel "
                                            "(src/transformers/generation/utils.py)")
