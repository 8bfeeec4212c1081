"""KoboldCpp's rules (paircheck._engine.koboldcpp) on in-memory descriptions: the draft type
from the file, the recurrent refusal, its own 256-token count check, the vendored llama.cpp
check from v1.115 and the head types' llama.cpp rules. File-free, for the mutation run
(engine.koboldcpp)."""

from __future__ import annotations

import pytest
from rule_desc import desc, statuses, tensors, texts, vocab

from paircheck import llamacpp_tables as T
from paircheck._engine import koboldcpp as K
from paircheck._engine import llamacpp_methods as M
from paircheck.findings import FAIL, PASS, RUNS_WITHOUT_SPECULATION, WARN
from paircheck.model import LoadFailure, TensorSectionError

RUN = "koboldcpp --model TARGET --draftmodel DRAFT --draftamount 8"


@pytest.mark.parametrize(("a", "b", "verdict"), [(300, 300, "ok"), (300, 301, "warn"), (300, 556, "warn"),
                                                  (556, 300, "warn"), (300, 557, "refuse"), (557, 300, "refuse")])
def test_count_verdict(a: int, b: int, verdict: str) -> None:
    assert K.count_verdict(a, b) == verdict


def test_draft_type() -> None:
    assert K.draft_type(desc(arch="dflash")) == M.DFLASH
    assert K.draft_type(desc(arch="dflash", tensor_list=tensors(["markov_w1.weight"]))) == M.DSPARK
    assert K.draft_type(desc(arch="qwen35", kv={"qwen35.nextn_predict_layers": 1})) == "draft-mtp"
    assert K.draft_type(desc(arch="qwen35", kv={"qwen35.nextn_predict_layers": 0})) == "draft-simple"
    assert K.draft_type(desc(arch="qwen35", kv={"qwen35.nextn_predict_layers": True})) == "draft-simple"
    assert K.draft_type(desc(arch="qwen35", kv={"llama.nextn_predict_layers": 1})) == "draft-simple"
    assert K.draft_type(desc(arch="eagle3")) == "draft-simple"


def test_check_size() -> None:
    ok = K.check_size(vocab(300), vocab(556))
    assert (ok.code, ok.status, ok.message) == ("KC003", PASS, "300 vs 556 tokens (difference 256 <= 256)")
    assert ok.details == {"target": 300, "draft": 556, "difference": 256, "max_difference": 256}
    bad = K.check_size(vocab(557), vocab(300))
    assert (bad.code, bad.status, bad.message) == ("KC003", FAIL, "token counts differ by 257 (the vendored "
                                                   "llama.cpp allows 256)")
    assert bad.details == {"target": 557, "draft": 300, "difference": 257, "max_difference": 256}
    assert bad.effect == RUNS_WITHOUT_SPECULATION


def test_are_compatible() -> None:
    t, d = desc("t.gguf"), desc("d.gguf")
    ok = K.are_compatible(t.vocab, d.vocab, t, d)
    assert (ok.code, ok.status, ok.message) == ("KC003", PASS, "the vendored llama.cpp checks pass (token counts "
                                                "within 256, texts equal from id 5)")
    padded = K.are_compatible(vocab(300), vocab(500))  # 200 apart: llama.cpp refuses, the vendored copy does not
    assert padded.status == PASS
    for side in ("target", "draft"):
        broken = vocab(300, failure=LoadFailure("cannot find tokenizer merges in model file"))
        pair = (broken, vocab(300)) if side == "target" else (vocab(300), broken)
        failed = K.are_compatible(*pair)
        assert (failed.code, failed.status) == ("KC003", FAIL)
        assert failed.message == f"{side}: llama.cpp refuses to load it: cannot find tokenizer merges in model file"
        assert failed.details == {"llamacpp_check": "LC001"}
    spm = K.are_compatible(vocab(300), vocab(300, vocab_type=T.VOCAB_SPM))
    assert spm.status == FAIL and spm.message.startswith("LC002 vocab_type: vocab types differ: target BPE")
    assert spm.details == {"llamacpp_check": "LC002"}
    far = K.are_compatible(vocab(300), vocab(600))
    assert far.message == "token counts differ by 300 (the vendored llama.cpp allows 256)"
    assert far.details["max_difference"] == 256  # KoboldCpp's own finding, not wrapped
    other = K.are_compatible(vocab(300), vocab(300, token_texts=texts(5) + texts(295, "x")))
    assert other.message.startswith("LC006 token_text: token 5 differs") and other.details == {
        "llamacpp_check": "LC006"}
    bos = K.are_compatible(vocab(300, add_bos=True), vocab(300))
    assert bos.message.startswith("LC003 ") and bos.status == FAIL
    eos = K.are_compatible(vocab(300, add_eos=True), vocab(300))
    assert eos.message.startswith("LC004 ") and eos.status == FAIL


def test_classic_draft_from_1_115() -> None:
    t, d = desc("t.gguf"), desc("d.gguf")
    report = K.ENGINE_OBJ.evaluate(t, d, "draft-simple")
    assert (report.engine, report.method, report.target, report.draft) == ("koboldcpp", "draft", t, d)
    assert [(c.code, c.status, c.message) for c in report.checks] == [
        ("KC001", PASS, "--draftmodel runs it as a classic draft model (draft-simple)"),
        ("KC002", PASS, "token counts 300 vs 300 (difference 0 <= 256)"),
        ("KC003", PASS, "the vendored llama.cpp checks pass (token counts within 256, texts equal from id 5)")]
    assert report.checks[0].details == {"draft_type": "draft-simple"}
    assert report.warnings == [] and report.next_steps == [RUN] and report.engine_says is None


def test_vendored_check_fails_from_1_115_only() -> None:
    t, d = desc("t.gguf"), desc("d.gguf", v=vocab(300, token_texts=texts(5) + texts(295, "x")))
    strict = K.ENGINE_OBJ.evaluate(t, d, "draft", "1.115")
    assert statuses(strict) == [("KC001", PASS), ("KC002", PASS), ("KC003", FAIL)]
    assert strict.engine_says == ("Error: failed to initialize speculative decoding state: draft model vocab type must "
                                  "match target model to use speculation")
    assert strict.next_steps == []
    before = K.ENGINE_OBJ.evaluate(t, d, "draft", "1.114")
    assert statuses(before) == [("KC001", PASS), ("KC002", PASS)] and before.next_steps == [RUN]


def test_counts_warn_then_refuse() -> None:
    t = desc("t.gguf", v=vocab(300))
    warned = K.ENGINE_OBJ.evaluate(t, desc("d.gguf", v=vocab(500)), "draft")
    assert warned.checks[1].message == "token counts 300 vs 500 (difference 200 <= 256)"
    assert [(w.code, w.status, w.message) for w in warned.warnings] == [
        ("KC101", WARN, "KoboldCpp prints 'WARNING: Draft model vocab of (500) does not match base vocab of (300). "
                        "Speculative decoding may malfunction!'")]
    assert warned.compatible
    refused = K.ENGINE_OBJ.evaluate(t, desc("d.gguf", v=vocab(600)), "draft")
    failed = refused.checks[1]
    assert (failed.code, failed.status, failed.message) == ("KC002", FAIL, "token counts 300 vs 600 (difference "
                                                            "300 > 256)")
    assert failed.details == {"target": 300, "draft": 600}
    assert refused.engine_says == ("Error: Draft model vocab of (600) is too different from base vocab of (300). "
                                   "Speculative decoding cannot be used!")
    assert refused.warnings == [] and refused.next_steps == []
    assert statuses(refused)[2] == ("KC003", FAIL)  # the vendored check runs too; the first failure speaks


def test_recurrent_draft_is_refused_before_the_count() -> None:
    report = K.ENGINE_OBJ.evaluate(desc("t.gguf"), desc("d.gguf", arch="mamba", v=vocab(900)), "draft")
    assert [(c.code, c.status, c.message) for c in report.checks] == [
        ("KC001", FAIL, "the draft is recurrent/hybrid: 'Error: Speculative decoding cannot be used with Recurrent "
                        "draft models!'")]
    assert report.engine_says == K.RECURRENT and report.next_steps == []


def test_eagle3_head_has_no_draft_type() -> None:
    report = K.ENGINE_OBJ.evaluate(desc("t.gguf"), desc("e.gguf", arch="eagle3"), "draft")
    assert [(c.code, c.status) for c in report.checks] == [("KC001", FAIL), ("KC002", PASS)]
    assert report.checks[0].message == ("an EAGLE-3 head: KoboldCpp has no EAGLE-3 draft type and would run it as a "
                                        "classic draft model, which it is not")
    assert report.engine_says is None


def test_head_types_get_llamacpps_rules() -> None:
    t = desc("t.gguf", arch="qwen35", kv={"qwen35.embedding_length": 64})
    mtp = desc("m.gguf", arch="qwen35", kv={"qwen35.nextn_predict_layers": 1, "qwen35.embedding_length": 64})
    report = K.ENGINE_OBJ.evaluate(t, mtp, "draft-mtp")
    assert [(c.code, c.status, c.message) for c in report.checks] == [
        ("KC001", PASS, "--draftmodel runs it as an MTP drafter (draft-mtp)"),
        ("KC002", PASS, "token counts 300 vs 300 (difference 0 <= 256)"),
        ("KC004", PASS, "llama.cpp draft-mtp checks pass")]
    assert report.next_steps == [RUN]
    narrow = desc("t.gguf", arch="qwen35", kv={"qwen35.embedding_length": 32})
    failed = K.ENGINE_OBJ.evaluate(narrow, mtp, "draft")
    assert statuses(failed)[2] == ("KC004", FAIL)
    assert failed.checks[2].message.startswith("LC031 mtp_width: head row width 64, target 32")
    assert failed.checks[2].details == {"llamacpp_check": "LC031"}
    assert failed.engine_says == ("Error: failed to initialize speculative decoding state: GGML_ASSERT: MTP input row "
                                  "width must match the target h_nextn width")
    dflash = K.ENGINE_OBJ.evaluate(t, desc("df.gguf", arch="dflash"), "draft")
    assert dflash.checks[0].message == "--draftmodel runs it as a DFlash drafter (draft-dflash)"
    assert dflash.checks[2].code == "KC004" and dflash.checks[2].status == FAIL
    dspark = K.ENGINE_OBJ.evaluate(t, desc("ds.gguf", arch="dflash", tensor_list=tensors(["markov_w1.weight"])),
                                   "draft")
    assert dspark.checks[0].message == "--draftmodel runs it as a DSpark drafter (draft-dspark)"
    # a recurrent MTP drafter is run as MTP: the recurrent check is for classic drafts
    assert report.checks[0].status == PASS
    # a failing head check for which llama.cpp's report has no engine message: none is made up
    assistant = desc("a.gguf", arch="gemma4-assistant", kv={"gemma4-assistant.nextn_predict_layers": 1,
                                                            "gemma4-assistant.embedding_length": 64})
    gemma = desc("t.gguf", arch="gemma4", kv={"gemma4.embedding_length": 64})
    quiet = K.ENGINE_OBJ.evaluate(gemma, assistant, "draft")
    assert statuses(quiet)[2] == ("KC004", FAIL) and quiet.checks[2].message.startswith("LC032 gemma4_assistant")
    assert quiet.engine_says is None


def test_vendored_check_names_the_side_that_does_not_load() -> None:
    for side in ("target", "draft"):
        broken = desc(f"{side}.gguf")
        broken.metadata.tensor_error = TensorSectionError("tensor 'output.weight' data is not within the file bounds",
                                                          f"{side}.gguf", 100, 200)
        pair = (broken, desc("d.gguf")) if side == "target" else (desc("t.gguf"), broken)
        report = K.ENGINE_OBJ.evaluate(*pair, "draft")
        assert report.checks[2].code == "KC003" and report.checks[2].status == FAIL
        assert report.checks[2].message == (f"{side}: llama.cpp refuses to load it: tensor 'output.weight' data is not "
                                            "within the file bounds")


def test_a_failing_head_kind_skips_the_method_checks() -> None:
    # recurrent classic draft: neither KC003 nor KC004
    report = K.ENGINE_OBJ.evaluate(desc("t.gguf"), desc("d.gguf", arch="rwkv7"), "draft", "1.200")
    assert [c.code for c in report.checks] == ["KC001"]
