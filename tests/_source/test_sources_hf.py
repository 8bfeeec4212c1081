"""Hugging Face folders judged as their converted GGUFs; split GGUF shards."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from gguf_mutate import read_kvs, set_tokens, token_texts, write_kvs
from hf_build import build_qwen2_folder

from paircheck.errors import InputError
from paircheck.pipeline import check_pair, describe


def _padded_gguf(src: Path, dst: Path, n: int) -> Path:
    meta = read_kvs(src)
    texts = token_texts(meta)
    set_tokens(meta, texts + [f"[PAD{i}]".encode() for i in range(len(texts), n)])
    write_kvs(meta, dst)
    return dst


def _verdict(report) -> tuple:
    return (report.compatible, tuple((c.name, c.status) for c in report.checks), tuple(w.name for w in report.warnings))


def test_hf_folder_matches_its_converted_gguf(real_vocab, tmp_path: Path) -> None:
    qwen = real_vocab("qwen2")
    folder = build_qwen2_folder(qwen, tmp_path / "Qwen2.5-0.5B-Instruct", 151936)
    hf, gguf = describe(str(folder)), describe(str(qwen))
    assert hf.vocab.texts == gguf.vocab.texts
    for attr in (
        "tokenizer_model",
        "pre",
        "vocab_type",
        "n_tokens",
        "bos_id",
        "eos_id",
        "add_bos",
        "add_eos",
        "eog_ids",
    ):
        assert getattr(hf.vocab, attr) == getattr(gguf.vocab, attr), attr
    assert hf.hf.config_vocab_size == 151936 and hf.hf.tokenizer_len == 151646 and hf.hf.base_vocab_size == 151643


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_hf_pair_verdict_equals_gguf_pair_verdict(real_vocab, tmp_path: Path) -> None:
    qwen = real_vocab("qwen2")
    hf14 = build_qwen2_folder(qwen, tmp_path / "Qwen2.5-14B-Instruct", 152064)
    hf05 = build_qwen2_folder(qwen, tmp_path / "Qwen2.5-0.5B-Instruct", 151936)
    g14 = _padded_gguf(qwen, tmp_path / "q14.gguf", 152064)
    assert _verdict(check_pair(str(hf14), str(hf05))) == _verdict(check_pair(str(g14), str(qwen)))
    # Mixed pair: GGUF target, HF draft.
    assert _verdict(check_pair(str(g14), str(hf05))) == _verdict(check_pair(str(g14), str(qwen)))
    # Past the 128 tolerance the HF pair fails as the GGUFs would.
    hf_far = build_qwen2_folder(qwen, tmp_path / "far", 152192)
    g_far = _padded_gguf(qwen, tmp_path / "far.gguf", 152192)
    assert _verdict(check_pair(str(hf_far), str(hf05))) == _verdict(check_pair(str(g_far), str(qwen)))
    assert not check_pair(str(hf_far), str(hf05)).compatible


def test_folder_without_tokenizer_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(InputError, match="tokenizer"):
        describe(str(tmp_path))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="directory"):
        describe(str(empty))


def test_any_shard_of_a_split_gguf_reads_the_first(gguf_factory, tmp_path: Path) -> None:
    first = gguf_factory("m-00001-of-00003.gguf")
    third = tmp_path / "m-00003-of-00003.gguf"
    third.write_bytes(b"GGUF" + b"\0" * 20)  # later shards hold tensors, no vocab
    desc = describe(str(third))
    assert desc.resolved_path == str(first) and desc.vocab.loadable
    lonely = tmp_path / "x-00002-of-00002.gguf"
    shutil.copy(third, lonely)
    with pytest.raises(InputError, match="00001-of-00002"):
        describe(str(lonely))
