"""paircheck.constants copies names from the gguf package (to keep numpy off the hot path):
these tests fail the moment the two disagree. Also: one spelling per method and engine."""

from __future__ import annotations

import gguf
import pytest

from paircheck import constants as K


def test_value_types_match_gguf() -> None:
    assert {t.name: int(t) for t in K.ValueType} == {t.name: int(t) for t in gguf.GGUFValueType}


def test_token_types_match_gguf() -> None:
    assert {t.name: int(t) for t in K.TokenType} == {t.name: int(t) for t in gguf.TokenType}


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (K.ARCHITECTURE, gguf.Keys.General.ARCHITECTURE),
        (K.NAME, gguf.Keys.General.NAME),
        (K.ALIGNMENT, gguf.Keys.General.ALIGNMENT),
        (K.TOKENIZER_MODEL, gguf.Keys.Tokenizer.MODEL),
        (K.TOKENIZER_PRE, gguf.Keys.Tokenizer.PRE),
        (K.TOKENS, gguf.Keys.Tokenizer.LIST),
        (K.TOKEN_TYPE, gguf.Keys.Tokenizer.TOKEN_TYPE),
        (K.SCORES, gguf.Keys.Tokenizer.SCORES),
        (K.MERGES, gguf.Keys.Tokenizer.MERGES),
        (K.BOS_ID, gguf.Keys.Tokenizer.BOS_ID),
        (K.EOS_ID, gguf.Keys.Tokenizer.EOS_ID),
        (K.EOT_ID, gguf.Keys.Tokenizer.EOT_ID),
        (K.EOM_ID, gguf.Keys.Tokenizer.EOM_ID),
        (K.UNK_ID, gguf.Keys.Tokenizer.UNK_ID),
        (K.SEP_ID, gguf.Keys.Tokenizer.SEP_ID),
        (K.PAD_ID, gguf.Keys.Tokenizer.PAD_ID),
        (K.MASK_ID, gguf.Keys.Tokenizer.MASK_ID),
        (K.ADD_BOS, gguf.Keys.Tokenizer.ADD_BOS),
        (K.ADD_EOS, gguf.Keys.Tokenizer.ADD_EOS),
        (K.FIM_PRE_ID, gguf.Keys.Tokenizer.FIM_PRE_ID),
        (K.FIM_SUF_ID, gguf.Keys.Tokenizer.FIM_SUF_ID),
        (K.FIM_MID_ID, gguf.Keys.Tokenizer.FIM_MID_ID),
        (K.PRECOMPILED_CHARSMAP, gguf.Keys.Tokenizer.PRECOMPILED_CHARSMAP),
        (K.CHAT_TEMPLATE, gguf.Keys.Tokenizer.CHAT_TEMPLATE),
        (K.BLOCK_COUNT.format(arch="llama"), gguf.Keys.LLM.BLOCK_COUNT.format(arch="llama")),
        (K.VOCAB_SIZE.format(arch="llama"), gguf.Keys.LLM.VOCAB_SIZE.format(arch="llama")),
        (K.SPLIT_COUNT, gguf.Keys.Split.LLM_KV_SPLIT_COUNT),
        (K.SPLIT_NO, gguf.Keys.Split.LLM_KV_SPLIT_NO),
    ],
)
def test_keys_match_gguf(ours: str, theirs: str) -> None:
    assert ours == theirs


@pytest.mark.parametrize(
    ("spelling", "canonical"),
    [
        ("draft-simple", "draft-simple"),
        ("draft-model", "draft-simple"),  # the registry's word
        ("draft_model", "draft-simple"),  # vLLM's
        ("DraftTarget", "draft-simple"),  # TensorRT-LLM's
        ("draft", "draft-simple"),  # LM Studio's and KoboldCpp's
        ("EAGLE3", "draft-eagle3"),
        ("mtp", "draft-mtp"),
        ("mlp_speculator", "mlp-speculator"),
        ("ngram-mod", "ngram-mod"),
        ("no-such-method", None),
    ],
)
def test_every_method_spelling_has_one_canonical_name(spelling: str, canonical: str | None) -> None:
    assert K.canonical_method(spelling) == canonical


def test_canonical_names_are_fixed_points() -> None:
    assert all(K.canonical_method(m) == m for m in K.METHODS)
    assert all(K.canonical_engine(e) == e for e in K.KNOWN_ENGINES)
    assert all(K.canonical_method(s) is not None for s in K.method_spellings())


@pytest.mark.parametrize(("spelling", "canonical"), [("llamacpp", "llama.cpp"), ("LM-Studio", "lmstudio"),
                                                      ("trtllm", "tensorrt-llm"), ("vLLM", "vllm"), ("x", None)])
def test_engine_spellings(spelling: str, canonical: str | None) -> None:
    assert K.canonical_engine(spelling) == canonical
