"""TensorRT-LLM's rules (paircheck._engine.tensorrt_llm) on in-memory descriptions: the
drafter kind per decoding config, the same-tokenizer check, the rows warning and the
suggested config. File-free, for the mutation run (engine.tensorrt_llm)."""

from __future__ import annotations

from rule_desc import desc, statuses, tensors, texts, vocab

from paircheck._engine import tensorrt_llm as TR
from paircheck.findings import FAIL, PASS, RUNS_USELESS, SKIP, WARN

HINT = ("trtllm-serve TARGET --config config.yaml with speculative_config: {decoding_type: Draft_Target, "
        "speculative_model: DRAFT, max_draft_len: 4}")


def test_draft_target_same_tokens() -> None:
    t, d = desc("t.gguf", tensor_list=tensors([], rows=300)), desc("d.gguf", tensor_list=tensors([], rows=300))
    report = TR.ENGINE_OBJ.evaluate(t, d, "draft-simple")
    assert (report.engine, report.method, report.target, report.draft) == ("tensorrt-llm", "DraftTarget", t, d)
    assert statuses(report) == [("TR001", PASS), ("TR002", PASS)]
    assert report.checks[0].message == "the draft is an independent model"
    assert report.checks[1].message == "300 token texts equal from id 0"
    assert report.warnings == [] and report.next_steps == [HINT]
    assert report.engine_version == ("TensorRT-LLM (all versions), rules read from TensorRT-LLM llm_args.py at "
                                     "0004396")


def test_draft_target_other_tokens_and_rows() -> None:
    t = desc("t.gguf", tensor_list=tensors([], rows=300))
    d = desc("d.gguf", v=vocab(300, token_texts=texts(3) + texts(297, "x")), tensor_list=tensors([], rows=320))
    report = TR.ENGINE_OBJ.evaluate(t, d, "DraftTarget")
    assert statuses(report) == [("TR001", PASS), ("TR002", FAIL)]
    failed = report.checks[1]
    assert failed.message == ("token 3 differs: target 't3', draft 'x0'; TensorRT-LLM runs, but hardly any draft "
                              "token is accepted")
    assert failed.effect == RUNS_USELESS and failed.details == {"first_id": 3}
    assert [(w.code, w.status, w.message) for w in report.warnings] == [
        ("TR101", WARN, "rows 300 vs 320: the engine-build flow crashed on this ('Incompatible buffer sizes', issue "
                        "#2789)")]
    assert report.next_steps == []


def test_rows_unknown_or_equal_give_no_warning() -> None:
    t, d = desc("t.gguf"), desc("d.gguf", tensor_list=tensors([], rows=320))
    assert TR.draft_target(t, d, "DraftTarget", TR.VERSIONS[0]).warnings == []  # target rows unknown
    assert TR.draft_target(d, t, "DraftTarget", TR.VERSIONS[0]).warnings == []  # draft rows unknown


def test_no_texts_is_unchecked() -> None:
    report = TR.ENGINE_OBJ.evaluate(desc("t.gguf"), desc("d.gguf", v=vocab(0)), "DraftTarget")
    assert statuses(report) == [("TR001", PASS), ("TR002", SKIP)]
    assert report.checks[1].message == "not checked: a side has no token texts"
    assert report.next_steps == [HINT]  # unknown is not a failure


def test_a_head_for_draft_target_and_a_model_for_eagle3() -> None:
    head = desc("head.gguf", arch="eagle3")
    report = TR.ENGINE_OBJ.evaluate(desc("t.gguf"), head, "DraftTarget")
    assert report.checks[0].status == FAIL
    assert report.checks[0].message == ("the draft is a eagle3 head; DraftTarget runs it as a standalone model; "
                                        "use Eagle3 or MTP")
    eagle = TR.ENGINE_OBJ.evaluate(desc("t.gguf"), head, "draft-eagle3")
    assert eagle.engine == "tensorrt-llm" and eagle.method == "Eagle3"
    assert statuses(eagle) == [("TR001", PASS)] and eagle.warnings == []
    assert eagle.target.location == "t.gguf" and eagle.draft is head
    plain = TR.ENGINE_OBJ.evaluate(desc("t.gguf"), desc("d.gguf"), "Eagle3")
    assert plain.checks[0].message == ("the draft is an independent model; Eagle3 needs an EAGLE-3 head; use "
                                       "DraftTarget")
    assert plain.checks[0].status == FAIL and plain.next_steps == []


def test_ngram() -> None:
    t, d = desc("t.gguf"), desc("d.gguf")
    for name in ("ngram-mod", "ngram-simple", "NGram"):
        report = TR.ENGINE_OBJ.evaluate(t, d, name)
        assert (report.engine, report.method) == ("tensorrt-llm", "NGram") and report.target is t and report.draft is d
        assert [(c.code, c.status, c.message) for c in report.checks] == [("TR001", PASS, "NGram needs no draft")]


def test_engine() -> None:
    e = TR.ENGINE_OBJ
    assert (e.name, e.methods, e.default_method) == ("tensorrt-llm", ("DraftTarget", "Eagle3", "NGram"), "DraftTarget")
    assert e.rules == (TR.R_KIND, TR.R_TOKENS, TR.W_ROWS) and TR.W_ROWS.kind == "warning"
    assert e.resolve(None) == "DraftTarget" and e.resolve("draft-mtp") is None
