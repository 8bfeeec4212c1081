"""The facts several engines share (paircheck._engine.common) on in-memory descriptions:
launch lines, embedding rows, tokenizer sizes, token text comparison, drafter kinds,
recurrence. File-free, for the mutation run (engine.common)."""

from __future__ import annotations

import pytest
from rule_desc import desc, hf_desc, tensors, texts, vocab

from paircheck._engine import common as C
from paircheck.findings import FAIL, PASS, WARN, Rule
from paircheck.model import HFFacts, LocalCopy, TensorInfo

RULE = Rule("XX001", "x", "X", "why", "the fix")


def test_result_and_finding() -> None:
    r = C.result(RULE, FAIL, "broken", n=1)
    assert (r.code, r.name, r.status, r.message, r.details, r.fix) == ("XX001", "x", FAIL, "broken", {"n": 1},
                                                                       "the fix")
    w = C.finding(RULE, "careful", n=2)
    assert (w.status, w.message, w.details) == (WARN, "careful", {"n": 2})


def test_server_model() -> None:
    plain = desc("my model.gguf")
    assert C.shell_path(plain) == "'my model.gguf'"
    assert C.server_model(plain, "target") == ([], "-m 'my model.gguf'")
    assert C.server_model(plain, "draft") == ([], "-md 'my model.gguf'")
    hub = desc("x", hf_ref="org/name:Q4_K_M")
    assert C.server_model(hub, "target") == ([], "-hf org/name:Q4_K_M")
    assert C.server_model(hub, "draft") == ([], "-hfd org/name:Q4_K_M")
    url = desc("https://h/m.gguf", server_file=None)
    url.origin = type(url.origin)(command_name="https://h/m.gguf", form="gguf", model_url="https://h/m.gguf?a=1&b")
    assert C.server_model(url, "target") == ([], "-mu 'https://h/m.gguf?a=1&b'")
    assert C.server_model(url, "draft") == ([], "-md https://h/m.gguf")  # no URL option for a draft
    copy = LocalCopy("it is a folder", ("convert it", "python convert.py"), "out dir/m.gguf")
    folder = desc("org/t", server_file=None, local_copy=copy)
    assert C.server_model(folder, "draft") == (["The draft: it is a folder:", "convert it", "python convert.py"],
                                               "-md 'out dir/m.gguf'")
    bare = desc("some thing", server_file=None)
    assert C.server_model(bare, "target") == ([], "-m 'some thing'")


def test_llama_server_line() -> None:
    t, d = desc("t.gguf"), desc("d.gguf")
    assert C.llama_server_line(t, d, "--spec-type x") == ["llama-server -m t.gguf -md d.gguf --spec-type x"]
    assert C.llama_server_line(t, None, "") == ["llama-server -m t.gguf"]
    copy = LocalCopy("a folder", ("make it",), "m.gguf")
    ft, fd = desc("org/t", server_file=None, local_copy=copy), desc("org/d", server_file=None, local_copy=copy)
    # one model as both sides is made once
    assert C.llama_server_line(ft, fd, "-x") == ["The target: a folder:", "make it", "Then:",
                                                 "llama-server -m m.gguf -md m.gguf -x"]
    other = LocalCopy("another folder", ("make that",), "n.gguf")
    fo = desc("org/o", server_file=None, local_copy=other)
    assert C.llama_server_line(t, fo, "-x") == ["The draft: another folder:", "make that", "Then:",
                                                "llama-server -m t.gguf -md n.gguf -x"]
    assert C.llama_server_line(ft, fo, "-x") == ["The target: a folder:", "make it", "The draft: another folder:",
                                                 "make that", "Then:", "llama-server -m m.gguf -md n.gguf -x"]


def test_architecture_and_keys() -> None:
    d = desc(arch="qwen2", kv={"qwen2.block_count": 4}, tensor_list=tensors(["a", "b"]))
    assert C.architecture(d) == "qwen2" and C.arch_value(d, "block_count") == 4
    assert C.arch_value(d, "missing") is None
    nameless = desc(arch=None, kv={".block_count": 4})
    assert C.architecture(nameless) == "" and C.arch_value(nameless, "block_count") is None
    assert C.tensor_names(d) == frozenset({"a", "b"}) and C.tensor_names(desc()) is None


def test_embedding_rows() -> None:
    assert C.embedding_rows(hf_desc(rows=320)) == C.Rows(320, "config.json vocab_size")
    gguf = desc(tensor_list=tensors(["blk.0.x"], rows=512))
    assert C.embedding_rows(gguf) == C.Rows(512, "token_embd.weight rows")
    # a one-dimensional token_embd does not give rows
    flat = desc(tensor_list=[TensorInfo("token_embd.weight", (64,), 0, 0)])
    assert C.embedding_rows(flat) == C.Rows(None, "embedding rows unknown: no token_embd.weight tensor")
    stored = desc(arch="llama", kv={"llama.vocab_size": 400}, tensor_list=tensors(["x"]))
    assert C.embedding_rows(stored) == C.Rows(400, "llama.vocab_size")
    assert C.embedding_rows(desc(kv={"llama.vocab_size": True}, tensor_list=tensors(["x"]))).value is None
    assert C.embedding_rows(desc()) == C.Rows(None, "embedding rows unknown: tensor infos were not read")
    vocab_only = desc(v=vocab(300), tensor_list=[])
    assert C.embedding_rows(vocab_only) == C.Rows(300, "token count (vocab-only file; the converter pads tokens to "
                                                       "vocab_size)")
    assert C.embedding_rows(desc(v=vocab(0), tensor_list=[])).value is None
    # an HF folder without config vocab_size falls back to its tensors
    folder = hf_desc(rows=None, tensor_list=tensors([], rows=256))
    assert C.embedding_rows(folder) == C.Rows(256, "token_embd.weight rows")
    assert C.rows_detail(hf_desc(rows=1), gguf) == (C.Rows(1, "config.json vocab_size"), C.embedding_rows(gguf))


def test_tokenizer_sizes() -> None:
    assert C.tokenizer_len(hf_desc(tok_len=310, v=vocab(300))) == 310
    assert C.tokenizer_len(hf_desc(tok_len=None, v=vocab(300))) == 300
    assert C.tokenizer_len(desc(v=vocab(299))) == 299
    assert C.base_vocab_size(hf_desc(base=280)) == 280 and C.base_vocab_size(desc()) is None


def test_compare_texts() -> None:
    a, b = desc(v=vocab(10)), desc(v=vocab(12))
    assert C.compare_texts(a, b) == C.TextComparison(None, 10)
    other = desc(v=vocab(10, token_texts=texts(4) + [b"\n"] + texts(5, "y")))
    assert C.compare_texts(a, other) == C.TextComparison(4, 10, "'t4'", "'\\n'")
    assert C.compare_texts(a, desc(v=vocab(0))) is None and C.compare_texts(desc(v=vocab(0)), a) is None
    first = desc(v=vocab(3, token_texts=[b"x", b"t1", b"t2"]))
    assert C.compare_texts(a, first) == C.TextComparison(0, 3, "'t0'", "'x'")


@pytest.mark.parametrize(("arch", "tensor_list", "hf", "kind"), [
    ("eagle3", None, None, C.EAGLE3), ("EAGLE3", None, None, C.EAGLE3),
    ("dflash", None, None, C.DFLASH), ("dflash", tensors(["markov_w1.weight"]), None, C.DSPARK),
    ("dflash", tensors(["x"]), None, C.DFLASH),
    ("gemma4-assistant", None, None, C.MTP_HEAD), ("glm4_mtp", None, None, C.MTP_HEAD),
    ("llama", None, None, C.MODEL), ("", None, None, C.MODEL),
    ("llama", None, HFFacts(model_type="eagle3_llama"), C.EAGLE3),
    ("llama", None, HFFacts(architectures=("DSparkDraftModel",)), C.DSPARK),
    ("llama", None, HFFacts(architectures=("DFlashDraftModel",)), C.DFLASH),
    ("llama", None, HFFacts(model_type="eagle"), C.EAGLE),
    ("llama", None, HFFacts(architectures=("MedusaModel",)), C.MEDUSA),
    ("llama", None, HFFacts(model_type="mlp_speculator"), C.MLP_SPECULATOR),
    ("llama", None, HFFacts(architectures=("MLPSpeculatorPreTrainedModel",)), C.MLP_SPECULATOR),
    ("llama", None, HFFacts(model_type="gemma4_assistant"), C.MTP_HEAD),
    ("llama", None, HFFacts(model_type="deepseek_mtp"), C.MTP_HEAD),
    ("llama", None, HFFacts(architectures=("ErnieMTPModel",)), C.MTP_HEAD),
    ("llama", None, HFFacts(model_type="qwen2", architectures=("Qwen2ForCausalLM",)), C.MODEL),
    ("llama", None, HFFacts(), C.MODEL),
])
def test_drafter_kind(arch: str, tensor_list: list[TensorInfo] | None, hf: HFFacts | None, kind: str) -> None:
    d = desc(arch=arch, tensor_list=tensor_list)
    d.hf = hf
    assert C.drafter_kind(d) == kind
    assert C.is_head(d) == (kind != C.MODEL)


def test_is_recurrent() -> None:
    for arch in ("mamba", "Mamba2", "qwen35", "nemotron-h", "kimi-linear"):
        assert C.is_recurrent(desc(arch=arch))
    assert not C.is_recurrent(desc(arch="llama"))
    for model_type in ("falcon_mamba", "rwkv7", "jamba", "qwen3_next", "qwen3_5_moe", "lfm2", "LFM2"):
        assert C.is_recurrent(hf_desc(model_type=model_type, arch="x"))
    assert not C.is_recurrent(hf_desc(model_type="qwen3", arch="x"))
    none_type = hf_desc(arch="x")
    none_type.hf = HFFacts()
    assert not C.is_recurrent(none_type)


def test_kind_check() -> None:
    ok = C.kind_check(RULE, desc(), (C.MODEL,), "what;", "instead")
    assert (ok.status, ok.message, ok.details) == (PASS, "the draft is an independent model", {"drafter": "model"})
    head = C.kind_check(RULE, desc(arch="eagle3"), (C.EAGLE3,), "what;", "instead")
    assert (head.status, head.message) == (PASS, "the draft is a eagle3 head")
    bad = C.kind_check(RULE, desc(arch="eagle3"), (C.MODEL,), "it needs a model;", "use X")
    assert (bad.status, bad.message, bad.details) == (FAIL, "the draft is a eagle3 head; it needs a model; use X",
                                                      {"drafter": "eagle3"})
    assert bad.fix == "the fix" and bad.code == "XX001"
    model = C.kind_check(RULE, desc(), (C.EAGLE3,), "it needs a head;", "use Y")
    assert model.message == "the draft is an independent model; it needs a head; use Y"
