"""LM Studio's rules (paircheck._engine.lmstudio) on in-memory descriptions: the MLX engine's
vision and vocab_size checks for folders, llama.cpp's draft-simple checks for GGUFs.
File-free, for the mutation run (engine.lmstudio)."""

from __future__ import annotations

from rule_desc import desc, hf_desc, statuses, vocab

from paircheck._engine import lmstudio as LS
from paircheck.findings import FAIL, PASS, SKIP, WARN
from paircheck.model import TensorSectionError

PICKER = "In the chat sidebar (Power User mode): Speculative Decoding -> Draft Model"
BATCHED = ("LS101", WARN, "only with max concurrent predictions = 1: the batched text kit refuses drafts too")


def test_mlx_text_pair() -> None:
    t, d = hf_desc("org/t", base=290), hf_desc("org/d", base=290)
    report = LS.ENGINE_OBJ.evaluate(t, d, "draft-simple")
    assert (report.engine, report.method, report.target, report.draft) == ("lmstudio", "draft", t, d)
    assert [(c.code, c.status, c.message) for c in report.checks] == [
        ("LS001", PASS, "the draft is an independent model"),
        ("LS004", PASS, "the target is a text model (no vision_config)"),
        ("LS003", PASS, "tokenizer vocab_size 290 on both sides"),
    ]
    assert [(w.code, w.status, w.message) for w in report.warnings] == [BATCHED]
    assert report.next_steps == [PICKER] and report.engine_says is None


def test_mlx_vision_target() -> None:
    t = hf_desc("org/t", config={"vision_config": {}})
    report = LS.draft(t, hf_desc("org/d"), "draft", LS.VERSIONS[0])
    assert statuses(report) == [("LS001", PASS), ("LS004", FAIL), ("LS003", PASS)]
    assert report.checks[1].message == ("the target's config.json has vision_config: the MLX engine loads it as a "
                                        "batched vision model, which refuses any draft: 'Speculative decoding is not "
                                        "currently supported for batched vision models'")
    assert report.engine_says == LS.VISION_REFUSAL and report.warnings == [] and report.next_steps == []
    both = LS.draft(t, hf_desc("org/d", base=100), "draft", LS.VERSIONS[0])
    assert both.engine_says == LS.VISION_REFUSAL  # the first refusal is what LM Studio says


def test_mlx_vocab_sizes() -> None:
    report = LS.draft(hf_desc("org/t", base=290), hf_desc("org/d", base=280), "draft", LS.VERSIONS[0])
    failed = report.checks[2]
    assert (failed.code, failed.status, failed.message) == ("LS003", FAIL, "tokenizer vocab_size 290 vs 280")
    assert failed.details == {"target": 290, "draft": 280}
    assert report.engine_says == "Draft model is not compatible with main model" and report.next_steps == []
    for t_base, d_base in ((None, 280), (290, None)):
        unknown = LS.draft(hf_desc("org/t", base=t_base), hf_desc("org/d", base=d_base), "draft", LS.VERSIONS[0])
        assert unknown.checks[2].status == SKIP
        assert unknown.checks[2].message == "not checked: tokenizer vocab_size unknown"
        assert unknown.engine_says is None and unknown.next_steps == [PICKER]


def test_has_vision() -> None:
    assert LS.has_vision(hf_desc(config={"vision_config": None}))
    assert not LS.has_vision(hf_desc()) and not LS.has_vision(desc())


def test_gguf_pair_runs_llamacpp_checks() -> None:
    report = LS.ENGINE_OBJ.evaluate(desc("t.gguf"), desc("d.gguf"), "draft")
    assert statuses(report) == [("LS001", PASS), ("LS002", PASS)]
    assert report.checks[1].message == "llama.cpp's draft-simple checks pass"
    assert report.checks[1].details == {"llamacpp": ["LC001", "LC001", "LC002", "LC003", "LC004", "LC005", "LC006"]}
    assert report.warnings == [] and report.next_steps == [PICKER] and report.engine_says is None


def test_gguf_pair_names_the_first_llamacpp_failure() -> None:
    report = LS.ENGINE_OBJ.evaluate(desc("t.gguf", v=vocab(300)), desc("d.gguf", v=vocab(600)), "draft")
    failed = report.checks[1]
    assert (failed.code, failed.status) == ("LS002", FAIL)
    assert failed.message == "LC005 vocab_size: token counts differ by 300: target 300, draft 600 (at most 128 allowed)"
    assert failed.details == {"llamacpp_check": "LC005"}
    assert report.engine_says == "No compatible draft models (the draft is not listed; no reason is shown)"
    assert report.next_steps == []
    # a GGUF target with a folder draft: not the MLX engine
    mixed = LS.ENGINE_OBJ.evaluate(desc("t.gguf"), hf_desc("org/d"), "draft")
    assert [c.code for c in mixed.checks] == ["LS001", "LS002"]
    assert [c.code for c in LS.ENGINE_OBJ.evaluate(hf_desc("org/t"), desc("d.gguf"), "draft").checks] == [
        "LS001", "LS002"]


def test_a_head_is_not_offered() -> None:
    report = LS.ENGINE_OBJ.evaluate(desc("t.gguf"), desc("h.gguf", arch="gemma4-assistant"), "draft")
    assert report.checks[0].status == FAIL
    assert report.checks[0].message == ("the draft is a mtp-head head; LM Studio's draft picker does not offer it; "
                                        "run llama-server with the head's --spec-type")
    assert report.engine_says is None  # the picker just does not list it


def test_gguf_side_that_does_not_load() -> None:
    """The llama.cpp side reads each file's tensor section too: a file llama.cpp cannot open is
    named as the side it is."""
    for side in ("target", "draft"):
        broken = desc(f"{side}.gguf")
        broken.metadata.tensor_error = TensorSectionError("tensor 'output.weight' data is not within the file bounds",
                                                          f"{side}.gguf", 100, 200)
        pair = (broken, desc("d.gguf")) if side == "target" else (desc("t.gguf"), broken)
        report = LS.ENGINE_OBJ.evaluate(*pair, "draft")
        assert report.checks[1].status == FAIL
        assert report.checks[1].message == (f"LC001 loadable: {side}: llama.cpp refuses to load it: tensor "
                                            "'output.weight' data is not within the file bounds")
