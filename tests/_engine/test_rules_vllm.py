"""vLLM's rules (paircheck._engine.vllm) on in-memory descriptions: the method detection, the
hf_config_override rewrites and their MTP layer counts, draft_model's rows and tokens, the
heads' warnings, mtp and the draftless methods, per release. File-free, for the mutation run
(engine.vllm, with tests/_engine/test_engine_boundaries.py)."""

from __future__ import annotations

from typing import Any

import pytest
from rule_desc import desc, hf_desc, statuses, tensors, texts, vocab

from paircheck._engine import vllm as V
from paircheck._engine.versions import pick
from paircheck.findings import FAIL, PASS, RUNS_USELESS, SKIP, WARN, Report
from paircheck.model import ModelDescription


def at(version: str):  # type: ignore[no-untyped-def]
    return pick(V.VERSIONS, version)


def serve(method: str, model: str = "DRAFT") -> str:
    return (f"vllm serve TARGET --speculative-config '{{\"method\": \"{method}\", \"model\": \"{model}\", "
            "\"num_speculative_tokens\": 4}'")


def ev(target: ModelDescription, draft: ModelDescription, method: str, version: str | None = None) -> Report:
    """V.ENGINE_OBJ.evaluate, and the report names the pair and the method (in vLLM's spelling) it judged."""
    report = V.ENGINE_OBJ.evaluate(target, draft, method, version)
    assert report.engine == "vllm" and report.method == V.ENGINE_OBJ.resolve(method)
    assert report.target is target and report.draft is draft
    return report


def rows(n: int, name: str = "m.gguf", **kw: Any) -> ModelDescription:
    return desc(name, tensor_list=tensors([], rows=n), **kw)


def folder(name: str, model_type: str, archs: tuple[str, ...] = (), **config: Any) -> ModelDescription:
    return hf_desc(name, model_type=model_type, archs=archs, config=config, rows=300)


# --- the pure mirrors ------------------------------------------------------------------------

def test_holds() -> None:
    assert V._holds(at("0.20.0"), None) and V._holds(at("0.20.0"), "0.20.0") and not V._holds(at("0.19.1"), "0.20.0")
    assert V._holds(at("0.31.0"), "0.26.0", "0.32.0") and not V._holds(at("0.32.0"), "0.26.0", "0.32.0")


def test_matches() -> None:
    rule = V._r("x_mtp", None, types=("a",), archs=("A",), any_arch=("B",), contains="zz")
    assert V._matches(rule, "a", (), {}) and V._matches(rule, "q", ("A",), {})
    assert not V._matches(rule, "q", ("C", "A"), {})  # architectures[0] only
    assert V._matches(rule, "q", ("C", "B"), {})  # any architecture
    assert V._matches(rule, "xzzx", (), {}) and not V._matches(rule, "q", (), {})
    assert not V._matches(V._r("x", None), "", (), {})  # an empty contains matches nothing
    nextn = V._r("n", None, types=("nemotron_h",), nextn=True)
    assert V._matches(nextn, "nemotron_h", (), {"num_nextn_predict_layers": 1})
    assert not V._matches(nextn, "nemotron_h", (), {"num_nextn_predict_layers": 0})
    assert not V._matches(nextn, "nemotron_h", (), {"num_nextn_predict_layers": True})
    assert not V._matches(nextn, "nemotron_h", (), {})
    assert not V._matches(nextn, "other", (), {"num_nextn_predict_layers": 1})


def test_promoted() -> None:
    text = {"model_type": "nemotron_h"}
    assert V.promoted(("NemotronH_Super_Omni_Reasoning_V3",), at("0.20.0"), {"text_config": text}) == text
    assert V.promoted(("NemotronH_Super_Omni_Reasoning_V3",), at("0.19.1"), {"text_config": text}) is None
    assert V.promoted(("NemotronH_Omni_Reasoning_V3",), at("0.28.0"), {"text_config": text}) is None
    assert V.promoted(("NemotronH_Omni_Reasoning_V3",), at("0.29.0"), {"text_config": text}) == text
    assert V.promoted(("NemotronH_Omni_Reasoning_V3",), at("0.29.0"), {"text_config": "x"}) is None
    assert V.promoted(("NemotronH_Omni_Reasoning_V3",), at("0.29.0"), None) is None
    assert V.promoted((), at("0.29.0"), {"text_config": text}) is None


def test_rewrite_for_a_promoted_config() -> None:
    config = {"text_config": {"model_type": "nemotron_h", "num_nextn_predict_layers": 1,
                              "architectures": ["NemotronHForCausalLM", 3]}}
    rule = V.rewrite_for("nemotron_omni", ("NemotronH_Omni_Reasoning_V3",), V.NEWEST, config)
    assert rule is not None and rule.to == "nemotron_h_mtp"
    # a text_config whose model_type is not text is not matched by type
    odd = {"text_config": {"model_type": 7, "num_nextn_predict_layers": 1}}
    assert V.rewrite_for("nemotron_h", ("NemotronH_Omni_Reasoning_V3",), V.NEWEST, odd) is None
    # promoted architectures: architectures[0] of the text config decides
    glm = {"text_config": {"model_type": "x", "architectures": ["Glm4MoeForCausalLM"]}}
    glm_rule = V.rewrite_for("x", ("NemotronH_Omni_Reasoning_V3",), V.NEWEST, glm)
    assert glm_rule is not None and glm_rule.to == "glm4_moe_mtp"
    assert V.rewrite_for("qwen2", ("Qwen2ForCausalLM",)) is None
    assert V.mtp_model_type("qwen2", ()) == "qwen2" and V.mtp_model_type("deepseek_v3", ()) == "deepseek_mtp"
    assert V.mtp_model_type("longcat_flash_ngram", (), at("0.31.0")) == "longcat_flash_mtp"
    assert V.mtp_model_type("longcat_flash_ngram", (), at("0.32.0")) == "longcat_flash_ngram"


def test_is_mtp_type() -> None:
    assert V.is_mtp_type("deepseek_mtp", at("0.14.0")) and V.is_mtp_type("step5_mtp", at("0.33.0"))
    assert not V.is_mtp_type("step5_mtp", at("0.32.0")) and not V.is_mtp_type("qwen2")


@pytest.mark.parametrize(("name", "model_type", "archs", "version", "method"), [
    ("org/eagle-llama", "llama", (), "0.33.0", "eagle"),
    ("org/EAGLE3-llama", "llama", (), "0.33.0", "eagle3"),
    ("org/qwen-dflash", "qwen3", (), "0.20.0", "dflash"),
    ("org/qwen-dflash", "qwen3", (), "0.19.1", "draft_model"),
    ("org/x", "muse", ("MuseGlimmerAssistantModel",), "0.28.0", "dflash"),
    ("org/x", "muse", ("MuseGlimmerAssistantModel",), "0.27.1", "draft_model"),
    ("org/dspark-x", "qwen3", (), "0.25.0", "dspark"),
    ("org/dspark-x", "qwen3", (), "0.24.0", "draft_model"),
    ("org/x", "qwen3", ("Qwen3DSparkModel",), "0.25.0", "dspark"),
    ("org/x", "gemma4", ("Gemma4DSparkModel",), "0.25.1", "draft_model"),
    ("org/x", "qwen3", ("DSparkDraftModel",), "0.29.0", "dspark"),
    ("org/x", "llama", ("DSparkDraftModel",), "0.29.0", "draft_model"),
    ("org/x", "qwen3", ("DSparkDraftModel",), "0.28.0", "draft_model"),
    ("org/x", "x", ("MuseSparkDSparkModel",), "0.33.0", "dspark"),
    ("org/x", "x", ("Qwen3OmniDSparkModel",), "0.29.0", "dspark"),
    ("org/x", "medusa", (), "0.32.0", "medusa"),
    ("org/x", "mlp_speculator", (), "0.32.0", "mlp_speculator"),
    ("org/x", "medusa", (), "0.33.0", "draft_model"),
    ("org/x", "deepseek_mtp", (), "0.33.0", "mtp"),
    ("org/x", "qwen2", (), "0.33.0", "draft_model"),
])
def test_detect_method(name: str, model_type: str, archs: tuple[str, ...], version: str, method: str) -> None:
    assert V.detect_method("draft_model", name, model_type, archs, at(version)) == method


def test_detect_method_requested() -> None:
    for method in ("eagle", "eagle3", "dflash", "dspark"):
        assert V.detect_method(method, "org/x", "qwen2", ()) == method
    assert V.detect_method("", "org/x", "qwen2", ()) is None
    assert V.detect_method("mtp", "org/x", "qwen2", ()) is None
    assert V.method_unset("org/x", "qwen2", (), at("0.17.0")) == "draft_model"
    assert V.method_unset("org/x", "qwen2", (), at("0.16.0")) is None


def test_hf_config_and_names() -> None:
    assert V.hf_config(desc()) is None
    assert V.hf_config(folder("org/x", "qwen2")) == {"model_type": "qwen2", "architectures": [], "vocab_size": 300}
    odd = folder("org/x", "qwen2")
    odd.hf.extra["config"] = ["not", "a", "dict"]  # type: ignore[union-attr]
    assert V.hf_config(odd) is None
    named = desc("local/path")
    assert V._model_name(named) == "local/path"
    named.identity = type(named.identity)(repo="org/eagle-x")
    assert V._model_name(named) == "local/path org/eagle-x"


def test_config_type() -> None:
    assert V._config_type(desc()) == ("", ())
    assert V._config_type(folder("o", "qwen3", ("Qwen3ForCausalLM",))) == ("qwen3", ("Qwen3ForCausalLM",))
    f = folder("o", "qwen3", ("Qwen3ForCausalLM",))
    f.hf.extra["config"] = {"model_type": 5, "architectures": [1, "A"]}  # type: ignore[union-attr]
    assert V._config_type(f) == ("qwen3", ("A",))  # the facts' type; only text architectures
    f.hf.extra["config"] = {}  # type: ignore[union-attr]
    assert V._config_type(f) == ("qwen3", ("Qwen3ForCausalLM",))


def test_mtp_layers() -> None:
    assert V.mtp_layers(desc(arch="qwen35", kv={"qwen35.nextn_predict_layers": 2})) == (
        2, "qwen35.nextn_predict_layers")
    assert V.mtp_layers(desc(arch="qwen35", kv={"qwen35.nextn_predict_layers": True})) == (
        None, "no nextn_predict_layers key")
    assert V.mtp_layers(desc(arch="gemma4-assistant")) == (1, "an MTP head")
    assert V.mtp_layers(desc()) == (None, "no nextn_predict_layers key")
    assert V.mtp_layers(folder("o", "deepseek_v3", num_nextn_predict_layers=1)) == (
        1, "config.json num_nextn_predict_layers")


def test_config_layers() -> None:
    assert V.config_layers("gemma4_assistant", (), {}) == (1, "vLLM's default for gemma4_assistant (1)")
    assert V.config_layers("", ("MiniMaxM3SparseForConditionalGeneration",), {}, at("0.24.0")) == (
        1, "vLLM's default for MiniMaxM3SparseForConditionalGeneration (1)")
    assert V.config_layers("inkling_model", (), {"mtp_config": {"num_nextn_predict_layers": 2}}) == (
        2, "config.json mtp_config.num_nextn_predict_layers")
    assert V.config_layers("inkling_model", (), {"mtp_config": {"num_nextn_predict_layers": True}}) == (
        0, "config.json has no mtp_config.num_nextn_predict_layers (vLLM reads 0)")
    assert V.config_layers("inkling_model", (), {"mtp_config": 3}) == (
        0, "config.json has no mtp_config.num_nextn_predict_layers (vLLM reads 0)")
    assert V.config_layers("qwen3_5", (), {"mtp_num_hidden_layers": 1}) == (1, "config.json mtp_num_hidden_layers")
    assert V.config_layers("qwen3_5", (), {"text_config": {"mtp_num_hidden_layers": 2}}, at("0.30.0")) == (
        2, "config.json text_config mtp_num_hidden_layers")
    assert V.config_layers("qwen3_5", (), {"text_config": {"mtp_num_hidden_layers": 2}}, at("0.29.0")) == (
        None, "config.json has no mtp_num_hidden_layers; this vLLM does not read text_config's (from 0.30.0 it "
              "does), so n_predict stays unset")
    assert V.config_layers("qwen3_5", (), {}, at("0.29.0")) == (None, "config.json has no mtp_num_hidden_layers")
    assert V.config_layers("qwen3_5", (), {"mtp_num_hidden_layers": False}) == (
        None, "config.json has no mtp_num_hidden_layers")
    # no rewrite: both keys are looked for, the first one first
    assert V.config_layers("qwen2", (), {}) == (None, "config.json has no num_nextn_predict_layers or "
                                                      "mtp_num_hidden_layers")
    assert V.config_layers("qwen2", (), {"mtp_num_hidden_layers": 3, "num_nextn_predict_layers": 4}) == (
        4, "config.json num_nextn_predict_layers")
    assert V.config_layers("qwen2", (), {"text_config": {"mtp_num_hidden_layers": 3}}) == (
        3, "config.json text_config mtp_num_hidden_layers")
    assert V.config_layers("qwen2", (), {"text_config": [1]}) == (None, "config.json has no num_nextn_predict_layers "
                                                                        "or mtp_num_hidden_layers")
    # a rewrite with another key, read from text_config in every release (no text_since)
    assert V.config_layers("intern_s2_preview", (), {"text_config": {"mtp_num_hidden_layers": 1}}, at("0.22.0")) == (
        1, "config.json text_config mtp_num_hidden_layers")


def test_unread_text_layers() -> None:
    qwen = folder("o", "qwen3_5", ("Qwen3_5ForConditionalGeneration",), text_config={"mtp_num_hidden_layers": 1})
    assert V.unread_text_layers(qwen, at("0.29.0")) == 1
    assert V.unread_text_layers(qwen, at("0.30.0")) is None
    assert V.unread_text_layers(desc(), at("0.29.0")) is None
    assert V.unread_text_layers(folder("o", "qwen2"), at("0.29.0")) is None
    deepseek = folder("o", "deepseek_v3", text_config={"num_nextn_predict_layers": 1})
    assert V.unread_text_layers(deepseek, at("0.29.0")) is None  # no text_since: read in every release
    gemma = folder("o", "gemma4_assistant")
    assert V.unread_text_layers(gemma, at("0.29.0")) is None
    bad = folder("o", "qwen3_5", text_config={"mtp_num_hidden_layers": True})
    assert V.unread_text_layers(bad, at("0.29.0")) is None
    textless = folder("o", "qwen3_5", text_config=[1])
    assert V.unread_text_layers(textless, at("0.29.0")) is None


def test_config_raises_and_error() -> None:
    assert V.config_raises("inkling_model", (), {}) == V.INKLING_NO_MTP_ERROR
    assert V.config_raises("inkling_model", (), {"mtp_config": {"num_nextn_predict_layers": 0}}) == \
        V.INKLING_NO_MTP_ERROR
    assert V.config_raises("inkling_model", (), {"mtp_config": {"num_nextn_predict_layers": 1}}) is None
    assert V.config_raises("inkling_model", (), {}, at("0.25.1")) is None
    assert V.config_raises("deepseek_v3", (), {}) is None
    assert V.config_error(desc()) is None and V.config_error(folder("o", "qwen2")) is None
    found = V.config_error(folder("o", "inkling_model"))
    assert found is not None and (found.code, found.status) == ("VL004", FAIL)
    assert found.message == ("config.json has no mtp_config.num_nextn_predict_layers (vLLM reads 0): "
                             "hf_config_override raises ValueError: 'The Inkling checkpoint does not contain MTP "
                             "weights'")
    assert found.details == {"layers": 0, "engine_says": V.INKLING_NO_MTP_ERROR}


def test_runs_as() -> None:
    assert V.runs_as(desc("d.gguf"), "draft_model") == "draft_model"
    assert V.runs_as(desc("d.gguf", arch="gemma4-assistant"), "draft_model") == "mtp"
    assert V.runs_as(desc("org/eagle-x.gguf"), "draft_model") == "eagle"
    assert V.runs_as(folder("o", "qwen3_5", ("Qwen3_5ForConditionalGeneration",)), "draft_model") == "mtp"
    assert V.runs_as(folder("o", "qwen3_5", ("Qwen3_5ForConditionalGeneration",)), "draft_model",
                     at("0.16.0")) == "draft_model"
    # a GGUF keeps its type: no config to rewrite
    gguf = desc("d.gguf", arch="deepseek2")
    assert V.runs_as(gguf, "draft_model") == "draft_model"


# --- the checks and reports ------------------------------------------------------------------

def test_rows_check() -> None:
    ok = V.rows_check(V.R_ROWS, rows(300), rows(300), V.SAME_VOCAB_ERROR)
    assert (ok.status, ok.message) == (PASS, "300 rows on both sides")
    assert ok.details == {"target": 300, "draft": 300, "target_source": "token_embd.weight rows",
                          "draft_source": "token_embd.weight rows"}
    bad = V.rows_check(V.R_ROWS, rows(320), rows(300), V.SAME_VOCAB_ERROR)
    assert bad.message == ("embedding rows differ: target 320, draft 300: 'Target and draft model should have the same "
                           "vocabulary size. Target mo...'")
    plain = V.rows_check(V.R_ROWS, rows(320), rows(300), None)
    assert plain.message == "embedding rows differ: target 320, draft 300" and plain.status == FAIL
    unknown = V.rows_check(V.R_ROWS, desc(), rows(300), None)
    assert (unknown.status, unknown.message) == (SKIP, "not checked: target embedding rows unknown: tensor infos "
                                                 "were not read")
    assert unknown.details["target"] is None and unknown.details["draft"] == 300
    other = V.rows_check(V.R_ROWS, rows(300), desc(), None)
    assert other.message == "not checked: draft embedding rows unknown: tensor infos were not read"


def test_draft_model_pair() -> None:
    t, d = rows(300, "t.gguf"), rows(300, "d.gguf")
    report = ev(t, d, "draft-simple")
    assert (report.engine, report.method, report.target, report.draft) == ("vllm", "draft_model", t, d)
    assert [(c.code, c.status, c.message) for c in report.checks] == [
        ("VL001", PASS, "the draft is an independent model"),
        ("VL002", PASS, "300 rows on both sides"),
        ("VL003", PASS, "300 token texts equal from id 0")]
    assert report.warnings == [] and report.engine_says is None and report.next_steps == [serve("draft_model")]


def test_draft_model_rows_and_tokens() -> None:
    report = ev(rows(320), rows(300), "draft_model")
    assert statuses(report) == [("VL001", PASS), ("VL002", FAIL), ("VL003", PASS)]
    assert report.engine_says == V.SAME_VOCAB_ERROR.format(t=320, d=300) and report.next_steps == []
    other = rows(300, v=vocab(300, token_texts=texts(2) + texts(298, "x")))
    useless = ev(rows(300), other, "draft_model")
    failed = useless.checks[2]
    assert (failed.code, failed.status, failed.effect) == ("VL003", FAIL, RUNS_USELESS)
    assert failed.message == ("token 2 differs: target 't2', draft 'x0'; vLLM runs, but the draft's proposals are "
                              "other tokens")
    assert useless.engine_says is None
    head = ev(rows(300), rows(300, arch="eagle3"), "draft_model")
    assert head.checks[0].status == FAIL and head.checks[0].message == (
        "the draft is a eagle3 head; draft_model runs it as a standalone model, which a head is not; use its own "
        "method")


def test_draft_model_before_0_15() -> None:
    report = ev(rows(300), rows(300), "draft_model", "0.14.1")
    assert [(c.code, c.status, c.message) for c in report.checks] == [
        ("VL006", FAIL, "this vLLM has no draft_model method: 'Speculative decoding with draft model is not "
                        "supported yet...'")]
    assert report.engine_says == V.NO_DRAFT_MODEL_ERROR and report.next_steps == []
    # a draft detected as something else still goes that way
    eagle = ev(rows(300), rows(300, "org/eagle-x"), "draft_model", "0.14.1")
    assert eagle.checks[0].code == "VL001"


def test_draft_model_detected_as_another_method() -> None:
    t = rows(300)
    qwen = folder("org/q", "qwen3_5", ("Qwen3_5ForConditionalGeneration",), mtp_num_hidden_layers=1)
    report = ev(t, qwen, "draft_model")
    assert [(c.code, c.status, c.message) for c in report.checks] == [
        ("VL001", FAIL, "vLLM does not run this draft as draft_model but as MTP (it loads only the draft's MTP "
                        "layers, as if they were the target's): model_type 'qwen3_5' becomes 'qwen3_5_mtp' in "
                        "hf_config_override")]
    assert report.checks[0].details == {"runs_as": "mtp"} and report.engine_says is None
    direct = ev(t, folder("org/m", "deepseek_mtp", num_nextn_predict_layers=1), "draft_model")
    assert direct.checks[0].message.endswith(": model_type 'deepseek_mtp' is an MTP type")
    eagle = ev(t, rows(300, "org/eagle-x"), "draft_model")
    assert eagle.checks[0].message == ("vLLM does not run this draft as draft_model but as eagle: detected from the "
                                       "draft's name or kind")
    gguf_head = ev(t, desc("a.gguf", arch="gemma4-assistant"), "draft_model")
    assert gguf_head.checks[0].message.endswith("as if they were the target's): detected from the draft's name or "
                                                "kind")


def test_draft_model_detected_as_mtp_with_zero_layers_or_v41() -> None:
    zero = folder("org/q", "qwen3_5", ("Qwen3_5ForConditionalGeneration",), mtp_num_hidden_layers=0)
    report = ev(rows(300), zero, "draft_model")
    assert [(c.code, c.status) for c in report.checks] == [("VL004", FAIL)]
    assert report.checks[0].message == (
        "the draft has no MTP layers (config.json mtp_num_hidden_layers = 0): with num_speculative_tokens set vLLM "
        "divides it by n_predict = 0 (ZeroDivisionError: integer modulo by zero); without it, it becomes 0 and vLLM "
        "raises 'Expected num_speculative_tokens to be greater than zero (0).'")
    assert report.checks[0].details == {"layers": 0, "engine_says": V.ZERO_LAYERS_ERROR}
    assert report.engine_says == V.ZERO_LAYERS_ERROR
    v41 = folder("org/t", "deepseek_v41")
    mtp_draft = folder("org/d", "deepseek_v3", num_nextn_predict_layers=1)
    refused = ev(v41, mtp_draft, "draft_model")
    assert [(c.code, c.status, c.message) for c in refused.checks] == [
        ("VL004", FAIL, "DeepSeek V4.1 has no classic-MTP draft: vLLM refuses method mtp for it (use dspark)")]
    assert refused.engine_says == V.DEEPSEEK_V41_ERROR
    assert ev(v41, mtp_draft, "draft_model", "0.29.0").checks[0].code == "VL001"
    # an eagle draft for a v41 target is not refused as MTP
    assert ev(v41, rows(300, "org/eagle-x"), "draft_model").checks[0].code == "VL001"


def test_draft_model_config_raises_first() -> None:
    report = ev(rows(300), folder("org/i", "inkling_model"), "draft_model")
    assert statuses(report) == [("VL004", FAIL)] and report.engine_says == V.INKLING_NO_MTP_ERROR
    assert report.engine == "vllm" and report.method == "draft_model"


def test_head_methods() -> None:
    t, h = rows(300), rows(300, "org/eagle3-head", arch="eagle3")
    report = ev(t, h, "draft-eagle3")
    assert (report.engine, report.method, report.target, report.draft) == ("vllm", "eagle3", t, h)
    assert [(c.code, c.status, c.message) for c in report.checks] == [("VL001", PASS, "the draft is a eagle3 head")]
    assert [(w.code, w.status, w.message) for w in report.warnings] == [
        ("VL101", WARN, "vLLM will not check that this head was trained for the target")]
    assert report.next_steps == [serve("eagle3")]
    model = ev(t, rows(300), "eagle")
    assert model.checks[0].message == ("the draft is an independent model; method eagle needs a eagle head; use method "
                                       "draft_model for an independent model")
    assert model.warnings == [] and model.next_steps == []


def test_head_name_warning() -> None:
    t = rows(300)
    h = rows(300, "head.gguf", arch="eagle3")
    report = ev(t, h, "eagle3")
    assert [(w.code, w.message) for w in report.warnings][1] == (
        "VL102", "the name 'head.gguf' lacks 'eagle3': without \"method\": \"eagle3\" vLLM runs it as a draft_model")
    old = ev(t, h, "eagle3", "0.16.0")
    assert old.warnings[1].message == ("the name 'head.gguf' lacks 'eagle3': without \"method\": \"eagle3\" vLLM "
                                       "raises 'Unsupported speculative method: 'None'' (no default before 0.17.0)")
    dflash = rows(300, "org/eagle-dflash", arch="dflash")
    other = ev(t, dflash, "dflash")
    assert other.warnings[1].message == ("the name 'org/eagle-dflash' lacks 'dflash': without \"method\": \"dflash\" "
                                         "vLLM runs it as eagle")


def test_head_method_missing_in_the_release() -> None:
    t, h = rows(300), rows(300, "org/x-dflash", arch="dflash")
    old = ev(t, h, "dflash", "0.19.1")
    assert [(c.code, c.status, c.message) for c in old.checks] == [("VL001", FAIL, "this vLLM has no method 'dflash'")]
    assert old.engine_says is None and old.warnings == []
    assert ev(t, h, "dflash", "0.20.0").checks[0].status == PASS
    spark = desc("org/x-dspark", arch="dflash", tensor_list=tensors(["markov_w1.weight"], rows=300))
    assert ev(t, spark, "dspark", "0.24.0").checks[0].message == "this vLLM has no method 'dspark'"
    assert ev(t, spark, "dspark", "0.25.0").checks[0].status == PASS
    assert ev(t, rows(300, "org/eagle-x", arch="eagle3"), "eagle3", "0.14.0").checks[0].status == \
        PASS


def test_mtp_on_the_target_itself() -> None:
    t = folder("org/q", "qwen3_5", ("Qwen3_5ForConditionalGeneration",), mtp_num_hidden_layers=1)
    t.resolved_path = "/m/q"
    same = folder("org/q", "qwen3_5", ("Qwen3_5ForConditionalGeneration",))
    same.resolved_path = "/m/q"
    report = ev(t, same, "draft-mtp")
    assert [(c.code, c.status, c.message) for c in report.checks] == [
        ("VL004", PASS, "the target has 1 MTP layer (config.json mtp_num_hidden_layers)")]
    assert report.checks[0].details == {"layers": 1}
    assert report.next_steps == [serve("mtp", "(omit for the target's own MTP layers)")]
    two = folder("org/d", "deepseek_v3", num_nextn_predict_layers=2)
    assert ev(rows(300), two, "mtp").checks[0].message == (
        "the draft has 2 MTP layers (config.json num_nextn_predict_layers)")


def test_mtp_refusals() -> None:
    plain = folder("org/p", "qwen2", ("Qwen2ForCausalLM",))
    report = ev(rows(300), plain, "mtp")
    assert [(c.code, c.status, c.message) for c in report.checks] == [
        ("VL004", FAIL, "the draft's model_type 'qwen2' is not one vLLM runs MTP for: 'Unsupported speculative method: "
                        "'mtp''")]
    assert report.checks[0].details == {"runs_as": None}  # detect_method("mtp", ...) finds nothing
    assert report.engine_says == "Unsupported speculative method: 'mtp'"
    typeless = folder("org/p", "", ())
    assert ev(rows(300), typeless, "mtp").checks[0].message.startswith(
        "the draft's model_type '?' is not one")
    inkling = ev(rows(300), folder("org/i", "inkling_model"), "mtp")
    assert inkling.engine_says == V.INKLING_NO_MTP_ERROR and inkling.method == "mtp"
    v41 = ev(folder("org/t", "deepseek_v41"), folder("org/d", "deepseek_v3",
                                                                        num_nextn_predict_layers=1), "mtp")
    assert v41.checks[0].message.startswith("DeepSeek V4.1 has no classic-MTP draft")
    zero = ev(rows(300), folder("org/d", "deepseek_v3", num_nextn_predict_layers=0), "mtp")
    assert zero.checks[0].details == {"layers": 0, "engine_says": V.ZERO_LAYERS_ERROR}
    assert zero.checks[0].message.startswith("the draft has no MTP layers (config.json num_nextn_predict_layers = 0)")


def test_mtp_layers_unknown_or_unread() -> None:
    gguf = ev(rows(300), desc("d.gguf"), "mtp")
    assert [(c.code, c.status, c.message) for c in gguf.checks] == [
        ("VL004", FAIL, "the draft declares no MTP layers (no nextn_predict_layers key)")]
    unknown = ev(rows(300), folder("org/d", "deepseek_v3"), "mtp")
    assert [(c.status, c.message) for c in unknown.checks] == [
        (SKIP, "the draft declares no MTP layers (config.json has no num_nextn_predict_layers)")]
    qwen = folder("org/q", "qwen3_5", ("Qwen3_5ForConditionalGeneration",), text_config={"mtp_num_hidden_layers": 2})
    unread = ev(rows(300), qwen, "mtp", "0.29.0")
    assert [(c.status, c.details) for c in unread.checks] == [(PASS, {"layers": 2})]
    assert unread.checks[0].message.startswith("the draft has 2 MTP layers in text_config, which this vLLM does not "
                                               "read into n_predict (from 0.30.0 it does)")
    one = folder("org/q", "qwen3_5", ("Qwen3_5ForConditionalGeneration",), text_config={"mtp_num_hidden_layers": 1})
    assert ev(rows(300), one, "mtp", "0.29.0").checks[0].message.startswith(
        "the draft has 1 MTP layer in text_config")
    none = folder("org/q", "qwen3_5", ("Qwen3_5ForConditionalGeneration",), text_config={"mtp_num_hidden_layers": 0})
    assert ev(rows(300), none, "mtp", "0.29.0").checks[0].status == SKIP
    gguf_mtp = ev(rows(300), desc("d.gguf", arch="x", kv={"x.nextn_predict_layers": 1}), "mtp")
    assert gguf_mtp.checks[0].status == PASS


def test_draftless() -> None:
    t, d = rows(300), rows(1)
    for name, method in (("ngram-mod", "ngram"), ("suffix", "suffix"), ("ngram", "ngram")):
        report = ev(t, d, name)
        assert (report.engine, report.method, report.target, report.draft) == ("vllm", method, t, d)
        assert [(c.code, c.status, c.message) for c in report.checks] == [
            ("VL005", PASS, f"{method} needs no draft model")]
        assert report.next_steps == [serve(method)]


def test_report_engine_says() -> None:
    t, d = rows(300), rows(300)
    assert V._report("x", t, d, [V.R_KIND.result(FAIL, "m")], says="s").engine_says == "s"
    assert V._report("x", t, d, [V.R_KIND.result(FAIL, "m", engine_says="e")], says="s").engine_says == "e"
    assert V._report("x", t, d, [V.R_KIND.result(PASS, "m")], says="s").engine_says is None
    warned = V._report("x", t, d, [V.R_KIND.result(PASS, "m")], [None, V.W_VERIFIER.warn("w")])
    assert [w.message for w in warned.warnings] == ["w"]


# --- the survivors of the first mutation run: values each path passes on ---------------------

def test_r_builds_the_rewrite_it_names() -> None:
    assert V._r("x_mtp", None) == V.Rewrite("x_mtp", None)  # the same defaults as Rewrite's
    assert V._r("x_mtp", "0.1.0", types=("a",), archs=("A",), any_arch=("B",), contains="c", nextn=True, key="k",
                until="0.2.0", text_since="0.1.5", missing_error="e") == V.Rewrite(
        "x_mtp", "0.1.0", frozenset({"a"}), frozenset({"A"}), frozenset({"B"}), "c", True, "k", "0.2.0", "0.1.5", "e")
    assert V._wheels("0.14.0", "0.14.1") == "vllm 0.14.0 wheel, vllm 0.14.1 wheel (vllm/config/speculative.py)"


def test_tokens_check() -> None:
    ok = V.tokens_check(V.R_TOKENS, rows(300), rows(310), "x")
    assert (ok.code, ok.status, ok.message, ok.details) == ("VL003", PASS, "300 token texts equal from id 0",
                                                            {"compared": 300})
    skip = V.tokens_check(V.R_TOKENS, rows(300), rows(300, v=vocab(0)), "x")
    assert (skip.code, skip.status, skip.message) == ("VL003", SKIP, "not checked: a side has no token texts")
    bad = V.tokens_check(V.R_TOKENS, rows(300), rows(300, v=vocab(300, token_texts=texts(4) + texts(296, "y"))), "e")
    assert bad.details == {"first_id": 4} and bad.message == "token 4 differs: target 't4', draft 'y0'; e"


def test_every_path_reads_the_release_asked_for() -> None:
    inkling = folder("org/i", "inkling_model")
    assert V.config_error(inkling, at("0.25.1")) is None  # Inkling is rewritten from 0.26.0
    assert statuses(ev(rows(300), inkling, "draft_model", "0.25.1"))[0] == ("VL001", PASS)
    assert ev(rows(300), inkling, "mtp", "0.25.1").engine_says == "Unsupported speculative method: 'mtp'"
    qwen = folder("org/q", "qwen3_5", ("Qwen3_5ForConditionalGeneration",), mtp_num_hidden_layers=1)
    assert statuses(ev(rows(300), qwen, "draft_model", "0.16.0"))[0] == ("VL001", PASS)  # no rewrite yet
    assert ev(rows(300), qwen, "mtp", "0.16.0").checks[0].message == (
        "the draft's model_type 'qwen3_5' is not one vLLM runs MTP for: 'Unsupported speculative method: 'mtp''")
    # Qwen3.5's layers only in text_config, 0 of them: read from 0.30.0 on
    zero_text = folder("org/q", "qwen3_5", ("Qwen3_5ForConditionalGeneration",),
                       text_config={"mtp_num_hidden_layers": 0})
    assert ev(rows(300), zero_text, "draft_model", "0.29.0").checks[0].code == "VL001"
    assert ev(rows(300), zero_text, "draft_model", "0.30.0").checks[0].code == "VL004"
    # a type in MTPModelTypes only from a later release
    assert V.detect_method("draft_model", "org/x", "step5_mtp", (), at("0.32.0")) == "draft_model"
    assert V.detect_method("draft_model", "org/x", "step5_mtp", (), at("0.33.0")) == "mtp"
    # name detection that a later release added
    dflash_named = rows(300, "org/x-dflash")
    assert V.runs_as(dflash_named, "draft_model", at("0.19.1")) == "draft_model"
    assert V.method_unset("org/x-dflash", "qwen3", (), at("0.19.1")) == "draft_model"
    assert V.method_unset("org/x", "qwen3", ("DSparkDraftModel",), at("0.29.0")) == "dspark"
    eagle_head = rows(300, "org/x-dflash", arch="eagle3")
    assert ev(rows(300), eagle_head, "eagle3", "0.19.1").warnings[1].message == (
        "the name 'org/x-dflash' lacks 'eagle3': without \"method\": \"eagle3\" vLLM runs it as a draft_model")
    glimmer = hf_desc("org/g", model_type="muse", archs=("MuseGlimmerAssistantModel",), arch="dflash")
    assert [w.code for w in ev(rows(300), glimmer, "dflash", "0.20.0").warnings] == ["VL101", "VL102"]
    assert [w.code for w in ev(rows(300), glimmer, "dflash", "0.28.0").warnings] == ["VL101"]


def test_the_config_decides_a_rewrite_that_needs_mtp_layers() -> None:
    nemotron = folder("org/n", "nemotron_h", ("NemotronHForCausalLM",), num_nextn_predict_layers=1)
    assert V.runs_as(nemotron, "draft_model") == "mtp"
    assert ev(rows(300), nemotron, "draft_model").checks[0].message.endswith(
        ": model_type 'nemotron_h' becomes 'nemotron_h_mtp' in hf_config_override")
    plain = folder("org/n", "nemotron_h", ("NemotronHForCausalLM",), num_nextn_predict_layers=0)
    assert V.runs_as(plain, "draft_model") == "draft_model"


def test_mtp_reports() -> None:
    # a count in config.json wins over an unread text_config one
    both = folder("org/q", "qwen3_5", ("Qwen3_5ForConditionalGeneration",), mtp_num_hidden_layers=1,
                  text_config={"mtp_num_hidden_layers": 2})
    assert ev(rows(300), both, "mtp", "0.29.0").checks[0].message == (
        "the draft has 1 MTP layer (config.json mtp_num_hidden_layers)")
    unread = folder("org/q", "qwen3_5", ("Qwen3_5ForConditionalGeneration",), text_config={"mtp_num_hidden_layers": 2})
    assert ev(rows(300), unread, "mtp", "0.29.0").checks[0].message == (
        "the draft has 2 MTP layers in text_config, which this vLLM does not read into n_predict (from 0.30.0 it "
        "does): give num_speculative_tokens, else 'num_speculative_tokens must be provided with speculative model "
        "unless the draft model config contains an n_predict parameter.'")
    eagle_named = folder("org/eagle-x", "qwen2", ("Qwen2ForCausalLM",))
    refused = ev(rows(300), eagle_named, "mtp")
    assert refused.checks[0].details == {"runs_as": "eagle"}
    v41 = ev(folder("org/t", "deepseek_v41"), folder("org/d", "deepseek_v3", num_nextn_predict_layers=1), "mtp")
    assert v41.engine_says == V.DEEPSEEK_V41_ERROR


def test_draft_model_messages() -> None:
    report = ev(rows(320), rows(300), "draft_model")
    assert report.checks[1].message == ("embedding rows differ: target 320, draft 300: 'Target and draft model should "
                                        "have the same vocabulary size. Target mo...'")
    old = ev(rows(300), rows(300, "org/eagle3-h", arch="eagle3"), "dflash", "0.19.1")
    assert old.checks[0].details == {"engine_says": None}
