"""HF folders of the SentencePiece, WordPiece and Unigram kinds, built from real GGUF vocabs.

Each folder is rebuilt at test time from one of llama.cpp's ggml-vocab files, and what
paircheck derives from the folder (as convert_hf_to_gguf.py of llama-cpp-python 0.3.36
would write it) is compared with what it derives from the GGUF. Where that converter
legitimately writes something else than the (older) converter that made the GGUF, the
difference is asserted exactly.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from gguf_mutate import read_kvs, set_tokens, write_kvs
from hf_build import (
    CONTROL,
    QWEN2_SPLIT,
    bpe_tokenizer_json,
    build_bert_folder,
    build_llama_spm_folder,
    build_qwen2_folder,
    build_xlmr_unigram_folder,
    gguf_vocab,
)

from paircheck._source import hf_convert
from paircheck._source.convert_pre_hashes import CHECK_TEXT, PRE_BY_HASH
from paircheck.pipeline import check_pair, describe

SAME = ("tokenizer_model", "vocab_type", "n_tokens", "bos_id", "eos_id", "add_bos", "add_eos", "eog_ids")


def _verdict(report) -> tuple:
    return (report.compatible, tuple((c.name, c.status) for c in report.checks), tuple(w.name for w in report.warnings))


# --- SentencePiece: tokenizer.model read by paircheck's own protobuf walk -------------


def test_spm_folder_equals_the_llama_spm_gguf(real_vocab, tmp_path: Path) -> None:
    gguf = real_vocab("llama-spm")
    hf, gg = describe(str(build_llama_spm_folder(gguf, tmp_path / "Llama-2-7b-hf"))), describe(str(gguf))
    assert hf.vocab.texts == gg.vocab.texts
    for attr in (*SAME, "pre"):
        assert getattr(hf.vocab, attr) == getattr(gg.vocab, attr), attr
    assert (hf.vocab.tokenizer_model, hf.vocab.n_tokens, hf.vocab.bos_id, hf.vocab.eos_id) == ("llama", 32000, 1, 2)
    assert (hf.vocab.add_bos, hf.vocab.add_eos) == (True, False)
    assert hf.hf.config_vocab_size == 32000 and hf.hf.tokenizer_len is None  # no tokenizer.json
    copy = tmp_path / "copy.gguf"  # the same file twice would add the same-file warning
    copy.write_bytes(gguf.read_bytes())
    assert _verdict(check_pair(str(tmp_path / "Llama-2-7b-hf"), str(gguf))) == _verdict(
        check_pair(str(copy), str(gguf))
    )


def test_spm_added_tokens_and_padding_as_the_converter(real_vocab, tmp_path: Path) -> None:
    """added_tokens.json, then added_tokens_decoder (user-defined \u2581 -> space), ids past
    vocab_size ignored, and [PAD<id>] up to config vocab_size.

    The padding is absolute (``[PAD32003]`` at id 32003): _create_vocab_sentencepiece
    pre-fills ``[PAD{i}] for i in range(vocab_size)``; its relative ``[PAD1]..`` branch
    only runs when vocab_size exceeds that list, which it never does.
    """
    gguf = real_vocab("llama-spm")
    folder = build_llama_spm_folder(
        gguf,
        tmp_path / "chat",
        vocab_size=32005,
        added_tokens_json={"<|im_start|>": 32000, "<|im_end|>": 32001, "<far>": 40000},
        added_tokens_decoder={
            32001: {"content": "<|im_end|>", "special": True},
            32002: {"content": "\u2581\u2581code", "special": False},
            40000: {"content": "<far>", "special": True},
        },
    )
    hf = describe(str(folder))
    texts, _, _ = gguf_vocab(gguf)
    expected = texts + [b"<|im_start|>", b"<|im_end|>", b"  code", b"[PAD32003]", b"[PAD32004]"]
    assert hf.vocab.texts == expected and hf.vocab.n_tokens == 32005
    assert (hf.vocab.bos_id, hf.vocab.eos_id, hf.vocab.add_bos, hf.vocab.add_eos) == (1, 2, True, False)
    # The verdict equals the one on the GGUF the converter would write.
    meta = read_kvs(gguf)
    set_tokens(meta, expected)
    write_kvs(meta, tmp_path / "chat.gguf")
    assert _verdict(check_pair(str(folder), str(gguf))) == _verdict(check_pair(str(tmp_path / "chat.gguf"), str(gguf)))


def test_spm_config_vocab_smaller_than_the_model_drops_pieces(real_vocab, tmp_path: Path) -> None:
    gguf = real_vocab("llama-spm")
    hf = describe(str(build_llama_spm_folder(gguf, tmp_path / "cut", vocab_size=31990)))
    assert hf.vocab.n_tokens == 31990
    assert hf.vocab.texts == gguf_vocab(gguf)[0][:31990]
    assert any("32000 pieces but config vocab_size is 31990" in note for note in hf.notes)


def test_spm_bad_protobuf_is_an_input_error(real_vocab, tmp_path: Path) -> None:
    from paircheck.errors import InputError

    folder = build_llama_spm_folder(real_vocab("llama-spm"), tmp_path / "bad")
    (folder / "tokenizer.model").write_bytes(b"\x0a\xff\xff\xff\x0f")
    with pytest.raises(InputError, match="not a SentencePiece model"):
        describe(str(folder))


# --- WordPiece (bert) ------------------------------------------------------------------


def test_wordpiece_folder_vs_the_bert_bge_gguf(real_vocab, tmp_path: Path) -> None:
    """Equal but for what the 0.3.36 converter writes differently from the older one
    that made ggml-vocab-bert-bge.gguf:

    * ``[unusedN]`` (NORMAL tokens) get the phantom space: BertModel.set_vocab now
      exempts only CONTROL tokens, the old one exempted every ``[...]`` text;
    * SpecialVocab reads the ``[CLS] $A [SEP]`` template: eos = ``[SEP]`` (102) and
      add_eos = true, so 102 is end-of-generation; the GGUF has no eos/add keys;
    * tokenizer.ggml.pre: the check-text hash is bert-bge's, which the converter's
      later ``if`` maps to ``jina-v2-en`` (WPM ignores pre either way).
    """
    gguf = real_vocab("bert-bge")
    folder = build_bert_folder(gguf, tmp_path / "bge-small-en-v1.5")
    hf, gg = describe(str(folder)), describe(str(gguf))
    for attr in ("tokenizer_model", "vocab_type", "n_tokens", "bos_id", "add_bos", "pre"):
        assert getattr(hf.vocab, attr) == getattr(gg.vocab, attr), attr
    assert (hf.vocab.vocab_type_name, hf.vocab.n_tokens, hf.vocab.bos_id) == (gg.vocab.vocab_type_name, 30522, 101)
    assert (gg.vocab.eos_id, gg.vocab.add_eos) == (-1, False) and 102 not in gg.vocab.eog_ids
    assert (hf.vocab.eos_id, hf.vocab.add_eos) == (102, True) and hf.vocab.eog_ids == gg.vocab.eog_ids | {102}
    texts, _, types = gguf_vocab(gguf)
    unused = {i for i, t in enumerate(texts) if types[i] != CONTROL and t.startswith(b"[") and t.endswith(b"]")}
    assert len(unused) == 994
    assert hf.vocab.texts == [b"\xe2\x96\x81" + t if i in unused else t for i, t in enumerate(gg.vocab.texts)]
    assert gg.metadata.kv["tokenizer.ggml.pre"][1] == "bert-bge"
    assert hf.metadata.kv["tokenizer.ggml.pre"][1] == "jina-v2-en"
    assert PRE_BY_HASH["0876d13b50744004aa9aeae05e7b0647eac9d801b5ba4668afc01e709c15e19f"] == "jina-v2-en"
    # The HF numbers, read from the JSON, are what tokenizers reports.
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    assert (hf.hf.tokenizer_len, hf.hf.base_vocab_size) == (tok.get_vocab_size(True), tok.get_vocab_size(False))


# --- Unigram (t5) ------------------------------------------------------------------------


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_unigram_folder_vs_the_nomic_bert_moe_gguf(real_vocab, tmp_path: Path) -> None:
    """An XLM-R tokenizer.json (Unigram) against the GGUF the converter made from
    ``sentencepiece.bpe.model``. Equal but for the padding: that path shifts every
    SentencePiece id by one (``tokens[3:-1]`` realignment), so id i >= 250002 holds
    ``[PAD<i-1>]``; the tokenizer.json path pads with the absolute ``[PAD<i>]``."""
    gguf = real_vocab("nomic-bert-moe")
    folder = build_xlmr_unigram_folder(gguf, tmp_path / "nomic-embed-text-v2-moe")
    hf, gg = describe(str(folder)), describe(str(gguf))
    for attr in SAME:
        assert getattr(hf.vocab, attr) == getattr(gg.vocab, attr), attr
    assert (hf.vocab.tokenizer_model, hf.vocab.n_tokens) == ("t5", 250048)
    assert (hf.vocab.bos_id, hf.vocab.eos_id, hf.vocab.add_bos, hf.vocab.add_eos) == (
        0,
        2,
        True,
        True,
    )  # RobertaProcessing
    n_hf = 250002
    assert hf.vocab.texts[:n_hf] == gg.vocab.texts[:n_hf]
    assert hf.vocab.texts[n_hf:] == [f"[PAD{i}]".encode() for i in range(n_hf, 250048)]
    assert gg.vocab.texts[n_hf:] == [f"[PAD{i - 1}]".encode() for i in range(n_hf, 250048)]
    assert hf.hf.tokenizer_len == hf.hf.base_vocab_size == n_hf
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    assert (hf.hf.tokenizer_len, hf.hf.base_vocab_size) == (tok.get_vocab_size(True), tok.get_vocab_size(False))


# --- The BPE pre-tokenizer hash without loading the whole tokenizer ----------------------

_BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
_QWEN2 = {
    "type": "Sequence",
    "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": QWEN2_SPLIT}, "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
    ],
}
_DIGITS = {"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": True}, _BYTE_LEVEL]}
_PREFIX = dict(_BYTE_LEVEL, add_prefix_space=True)


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
@pytest.mark.parametrize(
    ("vocab", "pre_tokenizer", "normalizer", "expected"),
    [
        ("gpt-2", _BYTE_LEVEL, None, "gpt-2"),
        ("gpt-2", _BYTE_LEVEL, {"type": "NFKC"}, None),
        ("gpt-2", _PREFIX, {"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "Lowercase"}]}, None),
        ("starcoder", _BYTE_LEVEL, None, "starcoder"),
        ("refact", _DIGITS, None, "refact"),
        ("qwen2", _QWEN2, {"type": "NFC"}, "qwen2"),
        ("llama-bpe", _DIGITS, None, None),
        ("deepseek-coder", _PREFIX, None, None),
    ],
)
def test_check_text_ids_equal_the_full_tokenizer(real_vocab, vocab, pre_tokenizer, normalizer, expected) -> None:
    from tokenizers import Tokenizer

    text = bpe_tokenizer_json(real_vocab(vocab), pre_tokenizer, normalizer)
    data = json.loads(text)
    base, _ = hf_convert._json_vocab(data, "t")
    ids = hf_convert._check_text_ids(data, text, base, "t")
    assert ids == Tokenizer.from_str(text).encode(CHECK_TEXT, add_special_tokens=True).ids
    assert PRE_BY_HASH.get(hashlib.sha256(str(ids).encode()).hexdigest()) == expected


def test_a_large_bpe_folder_never_loads_the_whole_tokenizer(real_vocab, tmp_path: Path, monkeypatch) -> None:
    """The speed guard: tokenizers only ever sees small tokenizers (the full one costs ~0.45 s)."""
    import tokenizers

    folder = build_qwen2_folder(real_vocab("qwen2"), tmp_path / "q", 151936)
    sizes: list[int] = []
    real_from_str = tokenizers.Tokenizer.from_str

    def spy(text: str):
        sizes.append(len(text))
        return real_from_str(text)

    class Spy:
        from_str = staticmethod(spy)

        @staticmethod
        def from_file(path: str):
            raise AssertionError("tokenizer.json loaded from file: parsed twice")

    monkeypatch.setattr(tokenizers, "Tokenizer", Spy)
    desc = describe(str(folder))
    assert desc.vocab.pre == "qwen2" and desc.vocab.n_tokens == 151936
    assert sizes and max(sizes) < 1_000_000, sizes
