"""Every engine's rule on real vocab files, synthetic GGUFs with embedding tensors, and
Hugging Face facts (ecosystem.md)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from click.testing import CliRunner
from test_methods import write_model

from paircheck._engine import engines
from paircheck.catalog import find_rule
from paircheck.cli import cli
from paircheck.findings import FAIL, PASS
from paircheck.model import HFFacts
from paircheck.pipeline import check_all_engines, check_descriptions, describe


def _with_rows(path: Path, src: Path, rows: int) -> Path:
    """A copy of a real vocab (same texts) plus a token_embd tensor with ``rows`` rows."""
    d = describe(str(src))
    texts = [t.decode("utf-8", "replace") for t in d.vocab.texts]
    import gguf
    import numpy as np

    w = gguf.GGUFWriter(str(path), "qwen2")
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("qwen2")
    w.add_token_list(texts)
    w.add_token_merges(["a b"])
    w.add_tensor("token_embd.weight", np.zeros((rows, 1), dtype=np.float16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def test_qwen_padding_llamacpp_accepts_vllm_refuses(tmp_path: Path, real_vocab) -> None:  # type: ignore[no-untyped-def]
    # The example: one tokenizer, 152064 vs 151936 embedding rows.
    src = real_vocab("qwen2")
    t = describe(str(_with_rows(tmp_path / "t14b.gguf", src, 152064)))
    d = describe(str(_with_rows(tmp_path / "d05b.gguf", src, 151936)))
    by_engine = {r.engine: r for r in check_all_engines(t, d)}
    assert by_engine["llama.cpp"].compatible
    vllm = by_engine["vllm"]
    assert not vllm.compatible and vllm.first_failure.code == "VL002"
    assert "vocab_size=152064" in vllm.engine_says and "vocab_size=151936" in vllm.engine_says
    tf = by_engine["transformers"]
    assert tf.compatible and tf.finding("TF002").details["uad"] and any(w.code == "TF101" for w in tf.warnings)
    sglang = by_engine["sglang"]  # >= 0.5.15 compares the padded vocab_size exactly
    assert sglang.first_failure is not None and sglang.first_failure.code == "SG002"
    assert by_engine["lmstudio"].compatible and by_engine["koboldcpp"].compatible
    assert not by_engine["ollama"].compatible  # no classic draft path


def test_rows_of_vocab_only_files_are_the_token_count(real_vocab) -> None:  # type: ignore[no-untyped-def]
    # The converter pads the token list to config vocab_size, so a vocab-only file's token
    # count is the row count; qwen2 (151936) against llama-bpe (128256) differs.
    t, d = describe(str(real_vocab("qwen2"))), describe(str(real_vocab("llama-bpe")))
    rows = check_descriptions(t, t, "vllm").finding("VL002")
    assert rows is not None
    assert rows.status == PASS and rows.details["target"] == t.vocab.n_tokens
    assert "token count" in rows.details["target_source"]
    other = check_descriptions(t, d, "vllm")
    assert other.first_failure is not None and other.first_failure.code == "VL002"
    assert other.first_failure.details["draft"] == d.vocab.n_tokens


def test_different_families_per_engine(real_vocab) -> None:  # type: ignore[no-untyped-def]
    t, d = describe(str(real_vocab("llama-spm"))), describe(str(real_vocab("phi-3")))
    reports = {r.engine: r for r in check_all_engines(t, d)}
    llama = check_descriptions(t, d)
    assert reports["lmstudio"].compatible == llama.compatible
    kobold_diff = abs(t.vocab.n_tokens - d.vocab.n_tokens)
    assert (reports["koboldcpp"].finding("KC002").status == FAIL) == (kobold_diff > 256)
    far = {r.engine: r for r in check_all_engines(describe(str(real_vocab("llama-spm"))),
                                                   describe(str(real_vocab("qwen2"))))}
    for name in ("vllm", "sglang", "tensorrt-llm", "koboldcpp", "lmstudio"):
        assert not far[name].compatible, name


def test_mlx_rule_uses_base_tokenizer_size(real_vocab) -> None:  # type: ignore[no-untyped-def]
    base = describe(str(real_vocab("qwen2")))
    t = dataclasses.replace(base, hf=HFFacts(config_vocab_size=152064, tokenizer_len=151665, base_vocab_size=151643))
    d = dataclasses.replace(base, hf=HFFacts(config_vocab_size=151936, tokenizer_len=151665, base_vocab_size=151643))
    lm = check_descriptions(t, d, "lmstudio")
    assert lm.compatible and lm.finding("LS003").status == PASS
    assert not check_descriptions(t, d, "vllm").compatible
    other = dataclasses.replace(base, hf=HFFacts(config_vocab_size=151936, base_vocab_size=32000))
    assert check_descriptions(t, other, "lmstudio").first_failure.code == "LS003"


def test_heads_are_not_draft_models(tmp_path: Path, real_vocab) -> None:  # type: ignore[no-untyped-def]
    t = describe(str(real_vocab("llama-spm")))
    head = describe(str(write_model(tmp_path / "eagle3-head.gguf", "eagle3", {"eagle3.target_layers": [1, 2, 3]})))
    for name in ("vllm", "lmstudio", "sglang", "tensorrt-llm", "transformers"):
        assert not check_descriptions(t, head, name).compatible, name
    vl = check_descriptions(t, head, "vllm", "draft-eagle3")
    assert vl.compatible and not any(w.code == "VL102" for w in vl.warnings)
    renamed = dataclasses.replace(head, location="my-head.gguf")
    assert any(w.code == "VL102" for w in check_descriptions(t, renamed, "vllm", "eagle3").warnings)


def test_ollama_accepts_mtp_drafter(tmp_path: Path) -> None:
    kv = {"gemma4-assistant.block_count": 4, "gemma4-assistant.embedding_length": 256,
          "gemma4-assistant.embedding_length_out": 2560}
    head = describe(str(write_model(tmp_path / "mtp.gguf", "gemma4-assistant", kv)))
    t = describe(str(write_model(tmp_path / "t.gguf", "gemma4", {"gemma4.block_count": 30,
                                                                 "gemma4.embedding_length": 2560})))
    report = check_descriptions(t, head, "ollama")
    assert report.compatible, [c.message for c in report.checks]


def test_every_rule_explained_and_codes_unique() -> None:
    codes = [r.code for e in engines().values() for r in e.rules]
    assert len(codes) == len(set(codes))
    for code in codes:
        rule = find_rule(code)
        assert rule is not None and rule.explanation and rule.fix


def test_cli_engine_all_human_and_json(tmp_path: Path, real_vocab) -> None:  # type: ignore[no-untyped-def]
    runner = CliRunner()
    t, d = str(real_vocab("llama-spm")), str(real_vocab("qwen2"))
    human = runner.invoke(cli, ["--engine", "all", t, d])
    # Only transformers can run two tokenizer families (Universal Assisted Decoding).
    assert human.exit_code == 0, human.output
    assert "1 of 8 engines" in human.output
    head = str(write_model(tmp_path / "eagle3-head.gguf", "eagle3", {"eagle3.target_layers": [1, 2, 3]}))
    refused = runner.invoke(cli, ["--engine", "all", t, head])
    assert refused.exit_code == 1 and "0 of 8 engines" in refused.output
    assert max(len(line) for line in human.output.splitlines()) <= 100
    js = runner.invoke(cli, ["--engine", "all", "--json", t, d])
    data = json.loads(js.output)
    assert next(e["engine"] for e in data["engines"]) == "llama.cpp"
    assert all({"engine", "compatible", "checks"} <= set(e) for e in data["engines"])
    same = runner.invoke(cli, ["--engine", "all", "-q", t, t])
    assert same.exit_code == 0 and same.output == ""
    explain = runner.invoke(cli, ["explain", "VL002"])
    assert "embedding rows" in explain.output.lower()
