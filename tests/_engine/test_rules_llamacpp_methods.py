"""llama.cpp's head and n-gram methods (paircheck._engine.llamacpp_methods) on in-memory
descriptions: EAGLE-3, DFlash/DSpark and MTP requirements, their engine messages and launch
lines, the head warnings and the n-gram suggestion. File-free, for the mutation run
(engine.llamacpp_methods)."""

from __future__ import annotations

from typing import Any

import pytest
from rule_desc import desc, tensors, texts, vocab

from paircheck import constants as K
from paircheck import llamacpp_tables as T
from paircheck._engine import llamacpp_methods as M
from paircheck._engine.llamacpp import R_LOADABLE
from paircheck.findings import FAIL, PASS, SKIP, WARN, Report
from paircheck.model import GGUFArray, Identity, ModelDescription

U32 = 4  # GGUF element type of the layer id arrays


def ids(*values: int) -> GGUFArray:
    return GGUFArray(U32, len(values), list(values))


def target(name: str = "t.gguf", blocks: int | None = 32, embd: int | None = 64, **kv: Any) -> ModelDescription:
    keys: dict[str, Any] = dict(kv)
    if blocks is not None:
        keys["llama.block_count"] = blocks
    if embd is not None:
        keys["llama.embedding_length"] = embd
    return desc(name, arch="llama", kv=keys)


def eagle3(layers: GGUFArray | None = None, hidden: int | None = 64, eps: float | None = 1e-5,
           **kw: Any) -> ModelDescription:
    kv: dict[str, Any] = {}
    if layers is not None:
        kv[K.EAGLE3_TARGET_LAYERS] = layers
    if hidden is not None:
        kv[K.EAGLE3_TARGET_HIDDEN_SIZE] = hidden
    if eps is not None:
        kv[K.EAGLE3_RMS_EPS] = eps
    return desc("e3.gguf", arch="eagle3", kv=kv, **kw)


def dflash(layers: GGUFArray | None = None, eps: float | None = 1e-5, embd: int | None = 64, **kv: Any) -> (
        ModelDescription):
    keys: dict[str, Any] = dict(kv)
    if layers is not None:
        keys[K.DFLASH_TARGET_LAYERS] = layers
    if eps is not None:
        keys[K.DFLASH_RMS_EPS] = eps
    if embd is not None:
        keys["dflash.embedding_length"] = embd
    return desc("df.gguf", arch="dflash", kv=keys)


def rows(report: Report) -> list[tuple[str, str, str]]:
    return [(c.code, c.status, c.message) for c in report.checks]


NGRAM = ["No draft needed: the n-gram methods draft from the prompt and the output so far, for example:",
         "llama-server -m t.gguf --spec-type ngram-mod"]


def test_target_n_layer_and_ints() -> None:
    assert M.target_n_layer(target(blocks=32)) == 32
    assert M.target_n_layer(target(blocks=32, **{"llama.nextn_predict_layers": 2})) == 30
    assert M.target_n_layer(target(blocks=None)) is None
    assert M.target_n_layer(target(blocks=True)) is None  # type: ignore[arg-type]
    assert M._int(3) == 3 and M._int(True) is None and M._int("3") is None


def test_layer_ids() -> None:
    assert M._layer_ids(eagle3(ids(1, 2)), K.EAGLE3_TARGET_LAYERS) == ([1, 2], U32)
    assert M._layer_ids(eagle3(), K.EAGLE3_TARGET_LAYERS) == (None, None)
    counted = eagle3(GGUFArray(5, 3, None))
    assert M._layer_ids(counted, K.EAGLE3_TARGET_LAYERS) == (None, 5)


def test_check_range() -> None:
    ok = M._check_range(M.R_E_RANGE, [1, 16, 32], target(), "%d > %d")
    assert (ok.status, ok.message) == (PASS, "layer ids [1, 16, 32] fit the target's 32 layers")
    assert ok.details == {"layer_ids": [1, 16, 32], "target_n_layer": 32}
    bad = M._check_range(M.R_E_RANGE, [1, 33, 40], target(), "EAGLE3: target layer id %d exceeds target n_layer %d")
    assert (bad.status, bad.message) == (FAIL, "layer id 33 > target n_layer 32: EAGLE3: target layer id 33 exceeds "
                                               "target n_layer 32 (the process aborts)")
    assert bad.details == {"layer_ids": [1, 33, 40], "target_n_layer": 32, "aborts": True}
    assert M._check_range(M.R_E_RANGE, None, target(), "").message == "not checked: the head has no layer ids"
    no_blocks = M._check_range(M.R_E_RANGE, [1], target(blocks=None), "")
    assert (no_blocks.status, no_blocks.message) == (SKIP, "not checked: the target has no <arch>.block_count")


def test_eagle3_head_that_fits() -> None:
    t, head = target(), eagle3(ids(2, 16, 29))
    report = M.evaluate_method(t, head, M.EAGLE3)
    assert (report.engine, report.method, report.target, report.draft) == ("llama.cpp", "draft-eagle3", t, head)
    assert report.engine_version == T.REFERENCE_VERSION
    assert rows(report) == [
        ("LC010", PASS, "the draft is an EAGLE-3 head"),
        ("LC011", PASS, "target layers [2, 16, 29]"),
        ("LC012", PASS, "required keys present"),
        ("LC013", PASS, "layer ids [2, 16, 29] fit the target's 32 layers"),
        ("LC014", PASS, "hidden size 64 on both sides")]
    assert report.checks[1].details == {"layer_ids": [2, 16, 29], "elem_type": U32}
    assert report.warnings == [] and report.engine_says is None
    assert report.next_steps == ["llama-server -m t.gguf -md e3.gguf --spec-type draft-eagle3",
                                 "EAGLE-3 is never auto-detected: --spec-type is required."]


def test_eagle3_failures() -> None:
    t = target()
    plain = M.evaluate_eagle3(t, desc("d.gguf"))
    assert rows(plain)[0] == ("LC010", FAIL, "the draft's architecture is 'llama', not eagle3")
    assert plain.checks[0].details == {"architecture": "llama"}
    assert [(c.code, c.status, c.message) for c in plain.checks[1:]] == [
        (code, SKIP, "not checked: the draft is not an EAGLE-3 head") for code in ("LC011", "LC012", "LC013", "LC014")]
    assert plain.engine_says == "draft model is not eagle3 (expected 3 extract layers, got 0); then it runs without " \
                                "speculation"
    assert plain.next_steps == NGRAM
    nameless = M.evaluate_eagle3(t, desc("d.gguf", arch=None))
    assert nameless.checks[0].message == "the draft's architecture is 'missing', not eagle3"
    missing = M.evaluate_eagle3(t, eagle3(None, hidden=None, eps=None))
    assert rows(missing)[1] == ("LC011", FAIL, "eagle3.target_layers is missing: 'EAGLE3 model requires "
                                               "'extract_layers' in GGUF metadata' (the draft fails to load)")
    assert rows(missing)[2] == ("LC012", FAIL, "key not found in model: eagle3.target_hidden_size (the draft fails "
                                               "to load)")
    assert missing.checks[2].details == {"missing": [K.EAGLE3_TARGET_HIDDEN_SIZE, K.EAGLE3_RMS_EPS]}
    assert rows(missing)[3] == ("LC013", SKIP, "not checked: the head has no layer ids")
    assert rows(missing)[4] == ("LC014", SKIP, "not checked: a hidden size is missing")
    assert missing.engine_says == "error loading model hyperparameters: EAGLE3 ... 'extract_layers' ..."
    eps_only = M.evaluate_eagle3(t, eagle3(ids(1, 2, 3), eps=None))
    assert eps_only.checks[2].message.startswith("key not found in model: eagle3.attention.layer_norm_rms_epsilon")
    assert eps_only.engine_says == "error loading model hyperparameters: key not found in model: ..."
    two = M.evaluate_eagle3(t, eagle3(ids(1, 2)))
    assert rows(two)[1] == ("LC011", FAIL, "2 target layers: 'EAGLE3 requires exactly 3 entries in 'extract_layers'' "
                                           "(the draft fails to load)")
    assert two.checks[1].details == {"layer_ids": [1, 2]}
    assert two.engine_says == "error loading model hyperparameters: EAGLE3 ... 'extract_layers' ..."
    four = M.evaluate_eagle3(t, eagle3(ids(1, 2, 3, 4)))
    assert four.checks[1].status == FAIL
    far = M.evaluate_eagle3(t, eagle3(ids(1, 2, 40)))
    assert far.checks[3].message == ("layer id 40 > target n_layer 32: EAGLE3: target layer id 40 exceeds target "
                                     "n_layer 32 (the process aborts)")
    assert far.checks[3].status == FAIL and far.engine_says == ("GGML_ABORT: EAGLE3: target layer id ... exceeds "
                                                                "target n_layer ...")
    wide = M.evaluate_eagle3(t, eagle3(ids(1, 2, 3), hidden=128))
    assert rows(wide)[4] == ("LC014", FAIL, "the head was trained for hidden size 128, the target has 64: it fails at "
                                            "the first batch")
    assert wide.checks[4].details == {"head": 128, "target": 64}
    assert wide.engine_says is None  # nothing checks it at startup
    no_embd = M.evaluate_eagle3(target(embd=None), eagle3(ids(1, 2, 3)))
    assert no_embd.checks[4].status == SKIP


def test_head_warnings() -> None:
    t = target()
    t.identity = Identity(architecture="llama", name="Llama-3.1-8B-Instruct", basename="Llama-3.1", repo="meta/l")
    other = eagle3(ids(1, 2, 3), v=vocab(300, token_texts=texts(3) + texts(297, "x")))
    other.identity = Identity(architecture="eagle3", base_models=("Qwen/Qwen3-8B", "", "Qwen/Qwen3-4B", "x/y"))
    report = M.evaluate_eagle3(t, other)
    assert [(w.code, w.status, w.message) for w in report.warnings] == [
        ("LW110", WARN, "token 3 differs: target 't3', head 'x0': the head was made for another tokenizer"),
        ("LW111", WARN, "the head was made for Qwen/Qwen3-8B, Qwen/Qwen3-4B; the target is Llama-3.1-8B-Instruct")]
    assert report.warnings[0].details == {"first_id": 3}
    assert report.warnings[1].details == {"head_base_models": ["Qwen/Qwen3-8B", "Qwen/Qwen3-4B", "x/y"]}
    short = eagle3(ids(1, 2, 3), v=vocab(200))
    assert [(w.code, w.message, w.details) for w in M.evaluate_eagle3(target(), short).warnings] == [
        ("LW110", "the head has 200 tokens, the target 300: target tokens past 199 cannot be mirrored",
         {"target": 300, "draft": 200})]
    assert M._warn_vocab(target(), eagle3(v=vocab(0))) is None
    assert M._warn_vocab(target(), eagle3(v=vocab(310))) is None
    assert M._warn_vocab(desc(v=vocab(0)), eagle3(v=vocab(310))) is None


def test_warn_other_model() -> None:
    t = target()
    t.identity = Identity(name="Llama-3.1-8B-Instruct", basename="Llama-3.1", repo="meta-llama/Llama-3.1-8B-Instruct")
    head = eagle3()
    for bases, warned in ((("meta-llama/Llama-3.1-8B-Instruct",), False), (("llama 3.1 8b instruct",), False),
                          (("org/Llama-3.1",), False), (("x/Llama-3.1-70B",), False), (("Qwen/Qwen3",), True)):
        head.identity = Identity(architecture="eagle3", base_models=bases)
        assert (M._warn_other_model(t, head) is not None) is warned, bases
    head.identity = Identity(architecture="eagle3")
    assert M._warn_other_model(t, head) is None  # no base model named
    head.identity = Identity(architecture="eagle3", base_models=("Qwen/Qwen3",))
    nameless = target()
    nameless.identity = Identity()
    assert M._warn_other_model(nameless, head) is None
    only_repo = target()
    only_repo.identity = Identity(repo="meta/Llama")
    found = M._warn_other_model(only_repo, head)
    assert found is not None and found.message == "the head was made for Qwen/Qwen3; the target is meta/Llama"
    only_base = target()
    only_base.identity = Identity(basename="Llama")
    found = M._warn_other_model(only_base, head)
    assert found is not None and found.message.endswith("the target is Llama")
    assert M._norm("Llama-3.1 8B!") == "llama318b"


def test_dflash_head_that_fits() -> None:
    t, head = target(), dflash(ids(1, 2), **{K.DFLASH_BLOCK_SIZE: 8})
    report = M.evaluate_method(t, head, M.DFLASH)
    assert (report.engine, report.method, report.target, report.draft) == ("llama.cpp", "draft-dflash", t, head)
    assert rows(report) == [
        ("LC020", PASS, "the draft is a DFlash head"),
        ("LC021", PASS, "required keys present"),
        ("LC022", PASS, "layer ids [1, 2] fit the target's 32 layers"),
        ("LC023", PASS, "hidden size 64 on both sides")]
    assert report.next_steps == ["llama-server -m t.gguf -md df.gguf --spec-type draft-dflash",
                                 "The type is auto-detected from the head when --spec-type is not given; n-max is "
                                 "clamped to the trained block size (8)."]
    default = M.evaluate_dflash(t, dflash(ids(1, 2)))
    assert default.next_steps[-1].endswith("(16).")


def test_dflash_failures() -> None:
    t = target()
    plain = M.evaluate_dflash(t, desc("d.gguf"), M.DSPARK)
    assert rows(plain)[0] == ("LC020", FAIL, "the draft's architecture is 'llama', not dflash: 'DFlash model has no "
                                             "target_layer_ids' (the process aborts)")
    assert plain.checks[0].details == {"architecture": "llama"}
    assert [(c.code, c.status, c.message) for c in plain.checks[1:]] == [
        (code, SKIP, "not checked: the draft is not a DFlash head") for code in ("LC021", "LC022", "LC023", "LC024")]
    assert plain.engine_says == "GGML_ASSERT: DFlash model has no target_layer_ids" and plain.method == "draft-dspark"
    assert plain.next_steps == NGRAM
    assert len(M.evaluate_dflash(t, desc("d.gguf")).checks) == 4  # no DSpark check for draft-dflash
    assert M.evaluate_dflash(t, desc("d.gguf", arch=None)).checks[0].message.startswith(
        "the draft's architecture is 'missing', not dflash")
    bare = M.evaluate_dflash(t, dflash(None, eps=None, embd=None, **{K.DFLASH_HIDDEN_ACTIVATION: "relu"}))
    assert rows(bare)[1] == ("LC021", FAIL, "DFlash model requires 'target_layers' in GGUF metadata (the draft fails "
                                            "to load)")
    assert bare.checks[1].details == {"problems": [
        "DFlash model requires 'target_layers' in GGUF metadata",
        "key not found in model: dflash.attention.layer_norm_rms_epsilon",
        "unsupported DFlash hidden activation: relu"]}
    assert rows(bare)[2] == ("LC022", SKIP, "not checked: the head has no layer ids")
    assert rows(bare)[3] == ("LC023", SKIP, "not checked: an embedding_length is missing")
    assert bare.engine_says == "error loading model hyperparameters: ..."
    empty = M.evaluate_dflash(t, dflash(ids()))
    assert empty.checks[1].details["problems"] == ["DFlash model requires 'target_layers' in GGUF metadata"]
    assert empty.checks[2].message == "not checked: the head has no layer ids"
    for act in M.ACTIVATIONS:
        assert M.evaluate_dflash(t, dflash(ids(1), **{K.DFLASH_HIDDEN_ACTIVATION: act})).checks[1].status == PASS
    far = M.evaluate_dflash(t, dflash(ids(1, 33)))
    assert rows(far)[2] == ("LC022", FAIL, "layer id 33 > target n_layer 32: GGML_ASSERT(lid <= n_layer): 33 > 32 "
                                           "(the process aborts)")
    assert far.engine_says == "GGML_ASSERT(lid <= n_layer)"
    wide = M.evaluate_dflash(t, dflash(ids(1), embd=128))
    assert rows(wide)[3] == ("LC023", FAIL, "head hidden size 128, target 64: it fails at the first batch")
    assert wide.checks[3].details == {"head": 128, "target": 64} and wide.engine_says is None


def test_dflash2_selector_keys() -> None:
    t = target()
    selector = dflash(ids(1))
    selector.metadata.tensors = tensors(["selector_hidden.weight"])
    assert M.evaluate_dflash(t, selector).checks[1].details["problems"] == [
        "DFlash2 model is missing conv/selector metadata"]
    keys = (K.DFLASH_CONV_KERNEL_SIZE, K.DFLASH_CONV_GROUP_SIZE, K.DFLASH_SELECTOR_RANK, K.DFLASH_SELECTOR_TOP_K)
    for missing in keys:
        head = dflash(ids(1), **{k: 4 for k in keys if k != missing})
        head.metadata.tensors = tensors(["selector_hidden.weight"])
        assert M.evaluate_dflash(t, head).checks[1].status == FAIL, missing
    full = dflash(ids(1), **{k: 4 for k in keys})
    full.metadata.tensors = tensors(["selector_hidden.weight"])
    assert M.evaluate_dflash(t, full).checks[1].status == PASS
    no_selector = dflash(ids(1))
    no_selector.metadata.tensors = tensors(["other.weight"])
    assert M.evaluate_dflash(t, no_selector).checks[1].status == PASS


def test_dspark() -> None:
    t = target()
    head = dflash(ids(1))
    assert rows(M.evaluate_dflash(t, head, M.DSPARK))[4] == ("LC024", SKIP, "not checked: tensor infos were not read")
    head.metadata.tensors = tensors(["markov_w1.weight"])
    spark = M.evaluate_method(t, head, M.DSPARK)
    assert rows(spark)[4] == ("LC024", PASS, "markov_w1.weight present")
    assert spark.next_steps[0] == "llama-server -m t.gguf -md df.gguf --spec-type draft-dspark"
    head.metadata.tensors = tensors(["other.weight"])
    assert rows(M.evaluate_dflash(t, head, M.DSPARK))[4] == ("LC024", FAIL, "no markov_w1.weight: this is a DFlash "
                                                                            "head, not DSpark")


def mtp_target(arch: str = "qwen35", nextn: int | None = 1, embd: int = 64, out: int | None = None,
               path: str | None = None, name: str = "t.gguf") -> ModelDescription:
    kv: dict[str, Any] = {f"{arch}.embedding_length": embd}
    if nextn is not None:
        kv[f"{arch}.nextn_predict_layers"] = nextn
    if out is not None:
        kv[f"{arch}.embedding_length_out"] = out
    d = desc(name, arch=arch, kv=kv)
    d.resolved_path = path
    return d


def test_mtp_on_the_target() -> None:
    t = mtp_target(path="/m/t.gguf")
    same = mtp_target(path="/m/t.gguf", nextn=None)
    report = M.evaluate_method(t, same, M.MTP)
    assert (report.engine, report.method, report.target, report.draft) == ("llama.cpp", "draft-mtp", t, same)
    assert rows(report) == [("LC030", PASS, "the target has 1 MTP layer(s)"),
                            ("LC031", PASS, "the MTP context is built on the target itself")]
    assert report.checks[0].details == {"nextn_predict_layers": 1}
    assert report.next_steps == ["llama-server -m t.gguf --spec-type draft-mtp",
                                 "No -md: the target's own MTP layers draft."]
    assert report.warnings == []  # no head warnings for the target's own layers
    # not even when the target (a fine-tune) names a base model other than itself
    t.identity = Identity(architecture="qwen35", name="My-Finetune", base_models=("Qwen/Qwen3.5-9B",))
    same.identity = t.identity
    assert M.evaluate_mtp(t, same).warnings == []
    assert [w.code for w in M.evaluate_mtp(t, mtp_target(name="h.gguf", nextn=1)).warnings] == []
    assert M.same_model(t, same) and not M.same_model(mtp_target(), mtp_target())


def test_mtp_separate_head() -> None:
    t, head = mtp_target(nextn=None), mtp_target(name="h.gguf")
    report = M.evaluate_mtp(t, head)
    assert rows(report) == [("LC030", PASS, "the draft has 1 MTP layer(s)"),
                            ("LC031", PASS, "row width 64 on both sides")]
    assert report.next_steps == ["llama-server -m t.gguf -md h.gguf --spec-type draft-mtp"]
    narrow = M.evaluate_mtp(mtp_target(nextn=None, embd=64, out=32), head)
    assert rows(narrow)[1] == ("LC031", FAIL, "head row width 64, target 32: 'MTP input row width must match the "
                                              "target h_nextn width' (the process aborts)")
    assert narrow.engine_says == "GGML_ASSERT: MTP input row width must match the target h_nextn width"
    assert narrow.next_steps == ["No draft needed: the n-gram methods draft from the prompt and the output so far, "
                                 "for example:", "llama-server -m t.gguf --spec-type ngram-mod"]
    short = mtp_target(name="h.gguf")
    short.vocab = vocab(100)
    assert [w.code for w in M.evaluate_mtp(t, short).warnings] == ["LW110"]


def test_mtp_layer_failures() -> None:
    t = mtp_target(nextn=None)
    none = M.evaluate_mtp(t, mtp_target(name="h.gguf", nextn=None))
    assert rows(none)[0] == ("LC030", FAIL, "the draft (qwen35) has no MTP layers (qwen35.nextn_predict_layers is "
                                            "absent): llama-server exits with 'failed to create MTP context'")
    assert none.checks[0].details == {"architecture": "qwen35", "nextn_predict_layers": 0}
    assert none.engine_says == ("context type MTP requested but model doesn't contain MTP layers; failed to create MTP "
                                "context (the server exits)")
    zero = M.evaluate_mtp(t, mtp_target(name="h.gguf", nextn=0))
    assert zero.checks[0].message.startswith("the draft (qwen35) has no MTP layers (qwen35.nextn_predict_layers is "
                                             "absent)")
    negative = M.evaluate_mtp(t, mtp_target(name="h.gguf", nextn=-1))
    assert negative.checks[0].message.startswith("the draft (qwen35) has no MTP layers (qwen35.nextn_predict_layers "
                                                 "is -1)")
    nameless = desc("h.gguf", arch=None)
    assert M.evaluate_mtp(t, nameless).checks[0].message.startswith("the draft (?) has no MTP layers")
    router = M.evaluate_mtp(t, mtp_target(arch="graniteswitch", name="h.gguf"))
    assert rows(router)[0] == ("LC030", FAIL, "the draft (graniteswitch) uses its one nextn layer as a router layer, "
                                              "not MTP (router_layer >= 0): llama-server exits with 'failed to create "
                                              "MTP context'")
    assert router.checks[0].details == {"architecture": "graniteswitch"}
    unknown = M.evaluate_mtp(t, mtp_target(arch="llama", name="h.gguf", nextn=2))
    assert rows(unknown)[0] == ("LC030", FAIL, "the draft declares 2 MTP layer(s), but architecture 'llama' has no "
                                               "MTP-loading code in this version")
    assert unknown.checks[0].details == {"architecture": "llama"}


def test_gemma4_assistant() -> None:
    t = desc("t.gguf", arch="gemma4", kv={"gemma4.embedding_length": 32})
    good = desc("a.gguf", arch="gemma4-assistant", kv={"gemma4-assistant.embedding_length": 64,
                                                       "gemma4-assistant.embedding_length_out": 32})
    report = M.evaluate_mtp(t, good)
    assert rows(report) == [("LC030", PASS, "the draft is a Gemma 4 assistant (an MTP drafter)"),
                            ("LC031", PASS, "row width 32 on both sides"),
                            ("LC032", PASS, "embedding_length_out 32 (target hidden size)")]
    for out in (None, 64):
        kv = {"gemma4-assistant.embedding_length": 64}
        if out is not None:
            kv["gemma4-assistant.embedding_length_out"] = out
        bad = M.evaluate_mtp(t, desc("a.gguf", arch="gemma4-assistant", kv=kv))
        assert rows(bad)[2] == ("LC032", FAIL, "embedding_length_out is missing or equals embedding_length: 'Gemma 4 "
                                               "assistant requires embedding_length_out to carry the target hidden "
                                               "size'")
        assert bad.engine_says is None or bad.checks[1].status == FAIL


def test_check_width() -> None:
    assert M._check_width(M.R_M_WIDTH, None, 3, "w", "f").message == "not checked: an embedding_length is missing"
    assert M._check_width(M.R_M_WIDTH, 3, None, "w", "f").status == SKIP
    assert M._embd_out(mtp_target(embd=64, out=32)) == 32 and M._embd_out(mtp_target(embd=64)) == 64


@pytest.mark.parametrize("method", M.NGRAM_METHODS)
def test_ngram(method: str) -> None:
    t, d = target(), desc("d.gguf")
    report = M.evaluate_method(t, d, method)
    assert (report.engine, report.method, report.target, report.draft) == ("llama.cpp", method, t, d)
    assert report.engine_version == T.REFERENCE_VERSION
    assert rows(report) == [("LC040", PASS, f"{method} needs no draft model and no metadata")]
    assert report.next_steps == [f"llama-server -m t.gguf {M.NGRAM_FLAGS[method]}"]


def test_unknown_method() -> None:
    with pytest.raises(ValueError) as raised:
        M.evaluate_method(target(), desc(), "draft-simple")
    assert str(raised.value) == "not a llama.cpp method handled here: draft-simple"


def test_ngram_suggestion_not_for_a_target_that_does_not_load() -> None:
    t = target()
    failing = Report("llama.cpp", "x", t, desc(), [M.R_E_ARCH.result(FAIL, "x")])
    assert M.ngram_suggestion(failing) == NGRAM
    draft_broken = Report("llama.cpp", "x", t, desc(), [R_LOADABLE.result(FAIL, "d", side="draft")])
    assert M.ngram_suggestion(draft_broken) == NGRAM
    target_passes = Report("llama.cpp", "x", t, desc(), [R_LOADABLE.result(PASS, "t", side="target"),
                                                         M.R_E_ARCH.result(FAIL, "x")])
    assert M.ngram_suggestion(target_passes) == NGRAM
    broken = Report("llama.cpp", "x", t, desc(), [M.R_E_ARCH.result(FAIL, "x"),
                                                  R_LOADABLE.result(FAIL, "t", side="target")])
    assert M.ngram_suggestion(broken) == []
