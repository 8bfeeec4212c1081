"""Ollama's rules (paircheck._engine.ollama) on in-memory descriptions: the DRAFT
instruction per release, the MLX runner's registered architectures, the Qwen3.5 MTP
conversion, and the llama-server spec type a GGUF DRAFT launches. File-free, for the
mutation run (engine.ollama)."""

from __future__ import annotations

import pytest
from rule_desc import desc, hf_desc, statuses

from paircheck._engine import llamacpp_methods as M
from paircheck._engine import ollama as O
from paircheck.findings import FAIL, PASS
from paircheck.model import ModelDescription

MODELFILE = "Modelfile: FROM TARGET / DRAFT ./drafter.gguf / PARAMETER draft_num_predict 3"


def mtp_draft(**kv: object) -> ModelDescription:
    return desc("mtp.gguf", arch="qwen35", kv={"qwen35.nextn_predict_layers": 1, "qwen35.embedding_length": 64, **kv})


def test_releases_are_picked() -> None:
    assert O.ENGINE_OBJ.versions == (O.V_DFLASH, O.V_MTP_ONLY, O.V_MLX_ONLY, O.V_NONE)
    assert [O.ENGINE_OBJ.resolve(m) for m in ("draft-simple", "draft-mtp", "draft-dflash", "draft-eagle3")] == [
        "draft", "draft", "draft", None]


def test_no_draft_instruction_before_0_23_1() -> None:
    t, d = desc("t.gguf"), mtp_draft()
    report = O.ENGINE_OBJ.evaluate(t, d, "draft", "0.23.0")
    assert (report.engine, report.method, report.target, report.draft) == ("ollama", "draft", t, d)
    assert [(c.code, c.status, c.message) for c in report.checks] == [
        ("OL001", FAIL, "this Ollama has no DRAFT instruction (added in v0.23.1)")]
    assert report.engine_says is None and report.next_steps == []


def test_gguf_draft_needs_0_30() -> None:
    t, d = desc("t.gguf"), mtp_draft()
    report = O.ENGINE_OBJ.evaluate(t, d, "draft", "0.24.0")
    assert [(c.code, c.status, c.message) for c in report.checks] == [
        ("OL001", FAIL, "a GGUF DRAFT needs Ollama >= 0.30.0; this release takes a DRAFT only as a safetensors "
                        "directory with ollama create --experimental")]
    assert report.engine_says == "DRAFT model references are not supported with --experimental yet: mtp.gguf"
    assert (report.engine, report.target, report.draft, report.method) == ("ollama", t, d, "draft")


def test_gguf_mtp_draft_runs() -> None:
    t, d = desc("t.gguf", arch="qwen35", kv={"qwen35.embedding_length": 64}), mtp_draft()
    report = O.ENGINE_OBJ.evaluate(t, d, "draft")
    assert report.target is t and report.draft is d
    assert [(c.code, c.status, c.message) for c in report.checks] == [
        ("OL001", PASS, "the DRAFT is launched as --spec-type draft-mtp"),
        ("OL002", PASS, "llama.cpp draft-mtp checks pass")]
    assert report.checks[0].details == {"spec_type": "draft-mtp"}
    assert report.next_steps == [MODELFILE] and report.engine_says is None
    assert report.engine == "ollama" and report.method == "draft"


def test_gguf_plain_model_is_no_draft() -> None:
    report = O.ENGINE_OBJ.evaluate(desc("t.gguf"), desc("d.gguf"), "draft", "0.31.0")
    assert statuses(report) == [("OL001", FAIL), ("OL002", FAIL)]
    assert report.checks[0].message == ("the DRAFT (llama) is an independent model; Ollama would launch it as "
                                        "--spec-type draft-mtp, which needs MTP layers")
    assert report.checks[0].details == {"spec_type": "draft-mtp"}
    assert report.checks[1].message.startswith("LC030 mtp_layers: the draft (llama) has no MTP layers")
    assert report.checks[1].details == {"llamacpp_check": "LC030"}
    assert report.engine_says == M.evaluate_mtp(desc("t.gguf"), desc("d.gguf")).engine_says is not None
    nameless = O.ENGINE_OBJ.evaluate(desc("t.gguf"), desc("d.gguf", arch=None), "draft")
    assert nameless.checks[0].message.startswith("the DRAFT (?) is an independent model")


def test_gguf_mtp_head_that_fails_llamacpp() -> None:
    # a Gemma 4 assistant whose row width is not the target's: the kind passes, llama.cpp's check fails
    t = desc("t.gguf", arch="gemma4", kv={"gemma4.embedding_length": 48})
    head = desc("a.gguf", arch="gemma4-assistant", kv={"gemma4-assistant.embedding_length": 64,
                                                       "gemma4-assistant.embedding_length_out": 32})
    report = O.ENGINE_OBJ.evaluate(t, head, "draft")
    assert statuses(report) == [("OL001", PASS), ("OL002", FAIL)]
    assert report.checks[1].message.startswith("LC031 mtp_width: head row width 32, target 48")
    assert report.engine_says == "GGML_ASSERT: MTP input row width must match the target h_nextn width"
    assert report.next_steps == []
    # a model with MTP layers that llama.cpp refuses is not taken for a drafter
    wide = desc("t.gguf", arch="qwen35", kv={"qwen35.embedding_length": 32})
    refused = O.ENGINE_OBJ.evaluate(wide, mtp_draft(), "draft")
    assert statuses(refused) == [("OL001", FAIL), ("OL002", FAIL)]


@pytest.mark.parametrize(("version", "spec"), [(None, M.DFLASH), ("0.32.7", M.DFLASH), ("0.32.6", M.MTP),
                                               ("0.30.0", M.MTP)])
def test_dflash_drafts_from_0_32_7(version: str | None, spec: str) -> None:
    head = desc("df.gguf", arch="dflash")
    report = O.ENGINE_OBJ.evaluate(desc("t.gguf"), head, "draft", version)
    assert report.checks[0].status == PASS and report.checks[0].details == {"spec_type": spec}
    assert report.checks[1].status == FAIL  # this head has no keys at all
    chosen = O.ENGINE_OBJ.versions[0] if version is None else next(
        r for r in O.ENGINE_OBJ.versions if r.contains(version))
    assert O.launched_method(head, chosen) == spec


def test_launched_method() -> None:
    assert O.launched_method(desc(arch="dflash")) == M.DFLASH
    assert O.launched_method(desc(arch="qwen35")) == M.MTP
    assert O.launched_method(desc(arch="dflash"), O.V_MTP_ONLY) == M.MTP


@pytest.mark.parametrize(("version", "arch", "ok"), [
    ("0.32.7", "DFlashDraftModel", True), ("0.32.7", "gemma4_unified_assistant", True),
    ("0.32.7", "MuseGlimmerAssistantModel", True), ("0.31.0", "DFlashDraftModel", False),
    ("0.31.0", "Gemma4AssistantForCausalLM", True), ("0.24.0", "gemma4_assistant", True),
    ("0.24.0", "DFlashLagunaForCausalLM", False),
])
def test_mlx_runner_architectures(version: str, arch: str, ok: bool) -> None:
    d = hf_desc("org/drafter", model_type="x", archs=(arch,))
    report = O.ENGINE_OBJ.evaluate(desc("t.gguf"), d, "draft", version)
    assert (report.engine, report.method, report.target.location, report.draft) == ("ollama", "draft", "t.gguf", d)
    if ok:
        assert [(c.code, c.status, c.message) for c in report.checks] == [
            ("OL001", PASS, f"the MLX runner has draft architecture {arch} (ollama create --experimental)")]
        assert report.engine_says is None
    else:
        assert report.checks[0].status == FAIL and report.checks[0].details == {"architecture": arch}
        assert report.engine_says == f"unsupported draft architecture: {arch}"


def test_mlx_runner_takes_model_type_without_architectures() -> None:
    d = hf_desc("org/drafter", model_type="gemma4_assistant", archs=())
    assert O.ENGINE_OBJ.evaluate(desc("t.gguf"), d, "draft").checks[0].status == PASS
    blank = hf_desc("org/drafter", model_type="", archs=())
    report = O.ENGINE_OBJ.evaluate(desc("t.gguf"), blank, "draft", "0.24.0")
    assert report.checks[0].message == ("'unsupported draft architecture: ?' on the MLX runner; plain ollama create: "
                                        "'no GGUF conversion'")
    assert report.engine_says == "unsupported draft architecture: ?"


QWEN35_DRAFT = {"mtp_num_hidden_layers": 1}


def test_qwen35_mtp_draft_conversion() -> None:
    d = hf_desc("org/mtp", model_type="qwen3_5", archs=("Qwen3_5ForCausalLM",), config=QWEN35_DRAFT)
    for target in (desc("t.gguf", arch="qwen35"), desc("t.gguf", arch="qwen35moe"),
                   hf_desc("org/t", model_type="qwen3_5_moe_text", archs=("X",))):
        report = O.ENGINE_OBJ.evaluate(target, d, "draft", "0.30.0")
        assert [(c.code, c.status, c.message) for c in report.checks] == [
            ("OL001", PASS, "ollama create converts it as a Qwen3.5 MTP draft (ConvertQwen35MTPDraft)")]
    for model_type in ("qwen3_5", "qwen3_5_text", "qwen3_5_moe"):
        assert O._qwen35_mtp_draft(hf_desc("org/t", model_type=model_type, archs=("X",)), d) is None
    other = O.ENGINE_OBJ.evaluate(desc("t.gguf", arch="llama"), d, "draft")
    assert other.checks[0].message == ("'unsupported draft architecture: Qwen3_5ForCausalLM' on the MLX runner; "
                                       "plain ollama create: 'MTP draft safetensors require a qwen3.5 base model, "
                                       "got 'llama''")
    assert O._qwen35_mtp_draft(desc("t.gguf", arch=None), d) == ("MTP draft safetensors require a qwen3.5 base "
                                                                  "model, got '?'")
    assert O._qwen35_mtp_draft(hf_desc("org/t", model_type="qwen2", arch="qwen35"), d) is None  # GGUF arch kept
    embedded = desc("t.gguf", arch="qwen35", kv={"qwen35.nextn_predict_layers": 1})
    assert O._qwen35_mtp_draft(embedded, d) == "MTP draft safetensors require a base model without embedded MTP layers"
    no_layers = hf_desc("org/mtp", model_type="qwen3_5", archs=("Qwen3_5ForCausalLM",))
    assert O._qwen35_mtp_draft(desc("t.gguf", arch="qwen35"), no_layers) == ("MTP draft safetensors did not contain "
                                                                             "mtp tensors")
    zero = hf_desc("org/mtp", model_type="qwen3_5", archs=("Qwen3_5ForCausalLM",), config={"mtp_num_hidden_layers": 0})
    assert O._qwen35_mtp_draft(desc("t.gguf", arch="qwen35"), zero) is not None
    # before 0.30.0 there is no conversion
    mlx = O.ENGINE_OBJ.evaluate(desc("t.gguf", arch="qwen35"), d, "draft", "0.24.0")
    assert mlx.checks[0].status == FAIL and mlx.checks[0].message.endswith("plain ollama create: 'no GGUF conversion'")
