"""The converter's per-architecture choices that test_converter_oracle.py cannot run.

Each expectation comes from reading the pinned convert_hf_to_gguf.py (llama.cpp vendored in
llama-cpp-python 0.3.36); the file and function are named in each test. Where the converter
stops on a folder, there is no GGUF to compare with, so these folders are checked here.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hf_build import build_llama_spm_folder, build_qwen2_folder

from paircheck.pipeline import describe


def _set_arch(folder: Path, arch: str) -> Path:
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config["architectures"] = [arch]
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def test_gemma2_reads_only_tokenizer_model(real_vocab, tmp_path: Path) -> None:
    """conversion/gemma.py Gemma2Model.set_vocab calls _set_vocab_sentencepiece alone, which
    raises FileNotFoundError without tokenizer.model: the converter stops; paircheck says so."""
    folder = _set_arch(build_qwen2_folder(real_vocab("qwen2"), tmp_path / "g2", 151936), "Gemma2ForCausalLM")
    desc = describe(str(folder))
    assert desc.identity.architecture == "gemma2"
    assert desc.vocab.tokenizer_model == "gpt2"
    assert any("reads only tokenizer.model" in note and "Gemma2ForCausalLM" in note for note in desc.notes)


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_qwen3_moe_takes_tokenizer_json_where_qwen3_takes_tokenizer_model(real_vocab, tmp_path: Path) -> None:
    """conversion/qwen.py: Qwen2Model.set_vocab (Qwen3Model inherits it) tries
    _set_vocab_sentencepiece first; Qwen2MoeModel has no set_vocab (TextModel._set_vocab_gpt2)
    and Qwen3MoeModel.set_vocab calls super(). With both files the two differ."""
    spm = build_llama_spm_folder(real_vocab("llama-spm"), tmp_path / "spm")
    dense = build_qwen2_folder(real_vocab("qwen2"), tmp_path / "dense", 151936)
    shutil.copy(spm / "tokenizer.model", dense / "tokenizer.model")
    moe = _set_arch(Path(shutil.copytree(dense, tmp_path / "moe")), "Qwen3MoeForCausalLM")
    _set_arch(dense, "Qwen3ForCausalLM")
    d, m = describe(str(dense)), describe(str(moe))
    assert (d.identity.architecture, d.vocab.tokenizer_model) == ("qwen3", "llama")
    assert (m.identity.architecture, m.vocab.tokenizer_model, m.vocab.pre) == ("qwen3moe", "gpt2", "qwen2")


def test_phi3_keeps_user_defined_texts_verbatim(real_vocab, tmp_path: Path) -> None:
    """conversion/phi.py Phi3MiniModel.set_vocab copies added_tokens_decoder contents as they
    are; base.py _create_vocab_sentencepiece (LlamaModel) turns \\u2581 into spaces in
    non-special ones."""
    decoder = {32000: {"content": "\u2581\u2581code", "special": False}}
    llama = build_llama_spm_folder(real_vocab("llama-spm"), tmp_path / "llama", 32001, added_tokens_decoder=decoder)
    phi = _set_arch(Path(shutil.copytree(llama, tmp_path / "phi")), "Phi3ForCausalLM")
    assert describe(str(llama)).vocab.texts[32000] == b"  code"
    assert describe(str(phi)).vocab.texts[32000] == "\u2581\u2581code".encode()


def test_an_architecture_not_mirrored_says_so(real_vocab, tmp_path: Path) -> None:
    folder = _set_arch(build_qwen2_folder(real_vocab("qwen2"), tmp_path / "x", 151936), "Gemma4ForCausalLM")
    desc = describe(str(folder))
    assert desc.identity.architecture == "qwen2"  # model_type qwen2 of the config, as before
    assert any("'Gemma4ForCausalLM'" in note and "not mirrored" in note for note in desc.notes)


def test_llama_writes_add_prefix_space_of_tokenizer_config(real_vocab, tmp_path: Path) -> None:
    """conversion/llama.py LlamaModel.set_vocab: add_add_space_prefix(tokenizer_config
    add_prefix_space) before any vocabulary path."""
    folder = build_llama_spm_folder(real_vocab("llama-spm"), tmp_path / "l")
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    (folder / "tokenizer_config.json").write_text(json.dumps({**config, "add_prefix_space": False}))
    assert describe(str(folder)).metadata.kv["tokenizer.ggml.add_space_prefix"][1] is False
