"""What the vocab derivation gives for small metadata built in memory: each refusal with the
words llama.cpp's loader uses, each warning it logs, the special ids, EOT/EOM, FIM and EOG it
finds, and the --override-kv parser.

In-process and without files (microseconds a case), so that a mutation run of ``vocab.py``
tests each of its mutants in a fraction of a second; ``tests/_engine/test_llamacpp_cases.py``
checks the same derivation on real files against libllama and llama-server.
"""

from __future__ import annotations

from typing import Any

import pytest

from paircheck import constants as K
from paircheck import llamacpp_tables as T
from paircheck.constants import TokenType, ValueType
from paircheck.errors import InputError
from paircheck.model import GGUFArray, GGUFMetadata, LlamaVocab
from paircheck.vocab import derive_llama_vocab, parse_override

S, U32, I32, BOOL, ARR = ValueType.STRING, ValueType.UINT32, ValueType.INT32, ValueType.BOOL, ValueType.ARRAY


def _texts(n: int, **at: bytes) -> list[bytes]:
    out = [f"t{i}".encode() for i in range(n)]
    for i, text in at.items():
        out[int(i[1:])] = text
    return out


def _meta(model: str = "llama", tokens: list[bytes] | None = None, *, arch: str = "llama",
          big_endian: bool = False, duplicate_keys: list[str] | None = None, **kv: tuple[int, Any]) -> GGUFMetadata:
    """An SPM ("llama") vocabulary of 20 tokens unless told otherwise; ``kv`` by constant name."""
    toks = _texts(20) if tokens is None else tokens
    entries: dict[str, tuple[int, Any]] = {
        K.ARCHITECTURE: (S, arch),
        K.TOKENIZER_MODEL: (S, model),
        K.TOKENS: (ARR, GGUFArray(S, len(toks), toks)),
    }
    if model in T.NEEDS_MERGES:
        entries[K.MERGES] = (ARR, GGUFArray(S, 1, [b"a b"]))
    for name, value in kv.items():
        key = getattr(K, name) if name.isupper() else name
        if value is None:
            entries.pop(key, None)
        else:
            entries[key] = value
    return GGUFMetadata(3, ">" if big_endian else "<", 0, entries, 0, duplicate_keys or [],)


def _failure(meta: GGUFMetadata, overrides: dict[str, Any] | None = None) -> str | None:
    vocab = derive_llama_vocab(meta, overrides)
    return vocab.failure.message if vocab.failure else None


def _array(elem: int, values: list[Any]) -> tuple[int, GGUFArray]:
    return (ARR, GGUFArray(elem, len(values), values))


# --------------------------------------------------------------------------- a plain SPM vocabulary


def test_a_plain_spm_vocabulary() -> None:
    v = derive_llama_vocab(_meta())
    assert v.failure is None and v.loader_warnings == []
    assert (v.tokenizer_model, v.vocab_type, v.n_tokens) == ("llama", T.VOCAB_SPM, 20)
    assert (v.bos_id, v.eos_id, v.add_bos, v.add_eos) == (1, 2, True, False)
    assert (v.eot_id, v.eom_id, v.eot_candidates, v.pre) == (-1, -1, (), None)
    assert v.texts == _texts(20)
    assert v.eog_ids == frozenset({2})


def test_add_keys_and_special_ids_from_the_file() -> None:
    v = derive_llama_vocab(_meta(ADD_BOS=(BOOL, False), ADD_EOS=(BOOL, True), BOS_ID=(U32, 5), EOS_ID=(U32, 6),
                                 EOT_ID=(U32, 7), EOM_ID=(U32, 8)))
    assert (v.add_bos, v.add_eos, v.bos_id, v.eos_id, v.eot_id, v.eom_id) == (False, True, 5, 6, 7, 8)
    assert v.eog_ids == frozenset({6, 7, 8})
    assert v.eot_candidates == ()


def test_an_out_of_range_special_id_keeps_the_default_and_says_so() -> None:
    v = derive_llama_vocab(_meta(BOS_ID=(U32, 20), EOS_ID=(U32, 19)))
    assert (v.bos_id, v.eos_id) == (1, 19)
    assert v.loader_warnings == ["bad special token: 'tokenizer.ggml.bos_token_id' = 20, using default id 1"]


def test_a_default_id_past_the_vocabulary_is_disabled() -> None:
    # two tokens: the default eos (2) is past the end; the default bos (1) is the last token
    v = derive_llama_vocab(_meta(tokens=[b"a", b"b"]))
    assert (v.bos_id, v.eos_id) == (1, -1)
    assert v.loader_warnings == [
        "default special token 'tokenizer.ggml.eos_token_id' = 2 out of vocab range, disabling"]


@pytest.mark.parametrize(("model", "n", "expected"), [
    ("llama", 20, {"unk": 0}),
    ("bert", 120, {"unk": 100, "sep": 102, "pad": 0, "mask": 103}),
    ("t5", 20, {"unk": 2, "pad": 0}),
])
def test_default_ids_of_each_vocabulary_type(model: str, n: int, expected: dict[str, int]) -> None:
    # the defaults past the vocabulary are disabled one by one, each with its warning
    v = derive_llama_vocab(_meta(model, _texts(n)))
    assert v.failure is None
    short = derive_llama_vocab(_meta(model, _texts(1)))
    keys = {"unk": K.UNK_ID, "sep": K.SEP_ID, "pad": K.PAD_ID, "mask": K.MASK_ID}
    disabled = [f"default special token '{keys[name]}' = {i} out of vocab range, disabling"
                for name, i in expected.items() if i >= 1]
    assert [w for w in short.loader_warnings if "bos" not in w and "eos" not in w] == disabled


def test_an_int_override_of_a_uint32_key_is_truncated() -> None:
    v = derive_llama_vocab(_meta(), {K.EOS_ID: ("int", (1 << 32) + 3)})
    assert v.eos_id == 3


def test_an_override_beats_the_stored_value_and_must_have_the_keys_type() -> None:
    meta = _meta(ADD_BOS=(BOOL, True))
    assert derive_llama_vocab(meta, {K.ADD_BOS: ("bool", False)}).add_bos is False
    assert _failure(meta, {K.ADD_BOS: ("int", 0)}) == (
        "override for tokenizer.ggml.add_bos_token has type int, expected bool")
    assert _failure(meta, {K.NAME: ("int", 0)}) == "override for general.name has type int, expected str"


# --------------------------------------------------------------------------- refusals


def test_refusals_of_the_gguf_level() -> None:
    assert _failure(_meta(big_endian=True)) == (
        "big-endian GGUF: llama.cpp on a little-endian machine reads its version as 'extremely large' and "
        "refuses it (convert it with --bigendian only for big-endian hosts)")
    assert _failure(_meta(duplicate_keys=["a.b", "c"])) == "duplicate key 'a.b' (gguf_init_from_file refuses the file)"
    assert _failure(_meta(**{"": (U32, 1)})) == "a key is empty (gguf_init_from_file refuses the file)"
    assert _failure(_meta(ALIGNMENT=(I32, 32))) == "key 'general.alignment' must be of type u32 but is i32"
    assert _failure(_meta(ALIGNMENT=(U32, 0))) == "alignment 0 is not a power of 2"
    assert _failure(_meta(ALIGNMENT=(U32, 48))) == "alignment 48 is not a power of 2"
    assert _failure(_meta(ALIGNMENT=(U32, 1))) is None
    assert _failure(_meta(ALIGNMENT=(U32, 64))) is None


class _Long(str):
    """A string whose length is past GGUF's maximum (without holding a gigabyte)."""

    def __len__(self) -> int:
        return T.GGUF_MAX_STRING_LENGTH + 1


def test_a_string_past_the_gguf_maximum_is_refused() -> None:
    assert _failure(_meta(NAME=(S, _Long("x")))) == "string value of general.name exceeds the GGUF maximum length"


def test_refusals_of_the_model_and_tokenizer_keys() -> None:
    assert _failure(_meta(arch="nope")) == "unknown model architecture: 'nope'"
    assert _failure(_meta(ARCHITECTURE=None)) == "unknown model architecture: ''"
    assert _failure(_meta(TOKENIZER_MODEL=None)) == "key not found in model: tokenizer.ggml.model"
    assert _failure(_meta("sentencepiece")) == "unknown tokenizer: 'sentencepiece'"
    assert _failure(_meta(NAME=(U32, 3))) == "key general.name has wrong type u32 but expected type str"
    assert _failure(_meta(TOKEN_TYPE_COUNT=(S, "3"))) == (
        "key tokenizer.ggml.token_type_count has wrong type str but expected type u32")
    assert _failure(_meta(ADD_BOS=(99, 1))) == (
        "key tokenizer.ggml.add_bos_token has wrong type 99 but expected type bool")
    assert _failure(_meta(TOKENS=None)) == "cannot find tokenizer vocab in model file"
    assert _failure(_meta(TOKENS=(S, "a"))) == "invalid gguf type for tokenizer.ggml.tokens"
    assert _failure(_meta(TOKENS=_array(I32, [1, 2]))) == "invalid gguf type for tokenizer.ggml.tokens"


@pytest.mark.parametrize("name", ["ADD_SEP", "NORMALIZER_LOWERCASE", "NORMALIZER_STRIP_ACCENTS",
                                  "ADD_SPACE_PREFIX", "REMOVE_EXTRA_WHITESPACES", "ADD_EOS"])
def test_each_bool_key_must_be_a_bool(name: str) -> None:
    assert _failure(_meta(**{name: (U32, 1)})) == (
        f"key {getattr(K, name)} has wrong type u32 but expected type bool")


def test_side_arrays_must_have_the_right_type_and_cover_every_token() -> None:
    scores = [0.0] * 20
    assert _failure(_meta(SCORES=_array(ValueType.FLOAT32, scores))) is None
    assert _failure(_meta(SCORES=_array(ValueType.INT32, [0] * 20))) is None
    assert _failure(_meta(SCORES=_array(ValueType.FLOAT32, scores[:19]))) == (
        "Index out of array bounds for scores (19 < 20)")
    assert _failure(_meta(SCORES=_array(ValueType.UINT8, [0] * 20))) == "invalid gguf type for tokenizer.ggml.scores"
    assert _failure(_meta(SCORES=(ValueType.FLOAT32, 0.0))) == "invalid gguf type for tokenizer.ggml.scores"
    assert _failure(_meta(TOKEN_TYPE=_array(I32, [1] * 19))) == "Index out of array bounds for toktypes (19 < 20)"
    assert _failure(_meta(TOKEN_TYPE=_array(ValueType.FLOAT32, [1.0] * 20))) == (
        "invalid gguf type for tokenizer.ggml.token_type")
    # the count is read into a uint32: 2^32 + 5 elements count as 5
    assert _failure(_meta(SCORES=(ARR, GGUFArray(ValueType.FLOAT32, (1 << 32) + 5, None)))) == (
        "Index out of array bounds for scores (5 < 20)")
    assert _failure(_meta(SCORES=(ARR, GGUFArray(ValueType.FLOAT32, (1 << 32) + 20, None)))) is None


def test_merges_are_needed_by_bpe_models() -> None:
    assert _failure(_meta("gpt2", MERGES=None)) == "cannot find tokenizer merges in model file"
    assert _failure(_meta("gpt2", MERGES=None, TOKENIZER_PRE=(S, "kimi-k2"))) is None  # kimi-k2 has none
    assert _failure(_meta("gemma4", MERGES=None, TOKENIZER_PRE=(S, "kimi-k2"))) == (
        "cannot find tokenizer merges in model file")
    assert _failure(_meta("gpt2", MERGES=_array(I32, [1]))) == "invalid gguf type for tokenizer.ggml.merges"
    assert _failure(_meta("gpt2", MERGES=(S, "a b"))) == "invalid gguf type for tokenizer.ggml.merges"
    assert _failure(_meta("llama", MERGES=None)) is None


def test_the_t5_charsmap_is_checked() -> None:
    def charsmap(values: list[int], elem: int = ValueType.UINT8) -> GGUFMetadata:
        return _meta("t5", PRECOMPILED_CHARSMAP=_array(elem, values))

    assert _failure(_meta("t5")) is None
    assert _failure(charsmap([1, 0, 0, 0, 9, 9])) is None  # a blob of 1 byte in 6
    assert _failure(charsmap([1, 0, 0, 0, 9, 9], ValueType.INT8)) is None
    assert _failure(charsmap([1, 0, 0, 0, 9])) == "Index out of array bounds in precompiled charsmap!"
    assert _failure(charsmap([0, 0, 0])) == "precompiled_charsmap too small for xcda_blob_size header!"
    assert _failure(charsmap([0, 0, 0, 0], ValueType.UINT32)) == (
        "invalid gguf type for tokenizer.ggml.precompiled_charsmap")
    assert _failure(_meta("t5", PRECOMPILED_CHARSMAP=(S, "x"))) == (
        "invalid gguf type for tokenizer.ggml.precompiled_charsmap")
    # -1 as INT8 is the byte 0xff: a blob size of 255 in 8 elements
    assert _failure(charsmap([-1, 0, 0, 0, 0, 0, 0, 0], ValueType.INT8)) == (
        "Index out of array bounds in precompiled charsmap!")
    # an array counted but not kept: its first raw bytes decide
    kept = GGUFArray(ValueType.UINT8, 300, None, head=bytes([2, 1, 0, 0]))  # a blob of 258 bytes: fits
    assert _failure(_meta("t5", PRECOMPILED_CHARSMAP=(ARR, kept))) is None
    cut = GGUFArray(ValueType.UINT8, 262, None, head=bytes([2, 1, 0, 0]))
    assert _failure(_meta("t5", PRECOMPILED_CHARSMAP=(ARR, cut))) == (
        "Index out of array bounds in precompiled charsmap!")


def test_the_suppress_tokens_array_must_hold_int32() -> None:
    assert _failure(_meta(SUPPRESS_TOKENS=_array(I32, [1]))) is None
    assert _failure(_meta(SUPPRESS_TOKENS=_array(U32, [1]))) == "invalid gguf type for tokenizer.ggml.suppress_tokens"
    assert _failure(_meta(SUPPRESS_TOKENS=(I32, 1))) == "invalid gguf type for tokenizer.ggml.suppress_tokens"


# --------------------------------------------------------------------------- BPE pre-tokenizers


def test_bpe_pre_tokenizers() -> None:
    plain = derive_llama_vocab(_meta("gpt2"))
    assert (plain.pre, plain.add_bos, plain.bos_id) == ("default", False, 11)
    assert plain.loader_warnings == ["missing pre-tokenizer type, using: 'default'"]
    assert _failure(_meta("gpt2", TOKENIZER_PRE=(S, "nope"))) == "unknown pre-tokenizer type: 'nope'"
    llama3 = derive_llama_vocab(_meta("gpt2", TOKENIZER_PRE=(S, "llama-bpe")))
    assert (llama3.pre, llama3.add_bos, llama3.loader_warnings) == ("llama-bpe", True, [])
    glm = derive_llama_vocab(_meta("gpt2", TOKENIZER_PRE=(S, "glm4")))
    assert (glm.pre, glm.bos_id, glm.add_bos) == ("glm4", -1, False)
    # the pre of an SPM model is read (and type-checked) but not used
    assert derive_llama_vocab(_meta("llama", TOKENIZER_PRE=(S, "nope"))).pre is None


def test_gemma4_turns_bos_on_unless_the_file_already_does() -> None:
    v = derive_llama_vocab(_meta("gemma4", BOS_ID=(U32, 2)))
    assert (v.pre, v.add_bos, v.bos_id) == ("gemma4", True, 2)
    assert v.loader_warnings == ["override 'tokenizer.ggml.add_bos_token' to 'true' for Gemma4"]
    off = derive_llama_vocab(_meta("gemma4", ADD_BOS=(BOOL, False)))
    assert off.add_bos is True  # the loader turns it on after reading the key
    on = derive_llama_vocab(_meta("gemma4", ADD_BOS=(BOOL, True)))
    assert on.add_bos is True and on.loader_warnings == []
    # gemma4's pre is gemma4, whatever the file says
    assert derive_llama_vocab(_meta("gemma4", TOKENIZER_PRE=(S, "nope"))).pre == "gemma4"
    # a gpt2 model with a Gemma 4 pre-tokenizer
    g = derive_llama_vocab(_meta("gpt2", TOKENIZER_PRE=(S, "granite-embed-multi-311m")))
    assert g.add_bos is True


def test_a_model_without_a_vocabulary() -> None:
    v = derive_llama_vocab(_meta("no_vocab", TOKENS=None, **{"llama.vocab_size": (U32, 32)}))
    assert (v.vocab_type, v.n_tokens, v.failure, v.texts, v.bos_id) == (T.VOCAB_NONE, 32, None, [], -1)
    assert derive_llama_vocab(_meta("none", TOKENS=None)).n_tokens == 0


# --------------------------------------------------------------------------- texts


def test_texts_are_cut_at_a_nul_and_an_empty_one_is_named() -> None:
    v = derive_llama_vocab(_meta(tokens=_texts(8, t3=b"ab\x00cd", t5=b"", t6=b"\x00x")))
    assert v.texts[3] == b"ab" and v.texts[5] == b"[EMPTY_5]" and v.texts[6] == b"[EMPTY_6]"
    assert v.texts[:3] == _texts(3) and v.texts[7] == b"t7"
    assert v.loader_warnings == ["empty token at index 5", "empty token at index 6"]
    # a NUL inside a text alone is enough to walk the texts (no text is empty)
    assert derive_llama_vocab(_meta(tokens=_texts(8, t4=b"t9\x00"))).texts[4] == b"t9"


def test_two_tokens_with_the_same_text_abort() -> None:
    v = derive_llama_vocab(_meta(tokens=_texts(8, t6=b"t2")))
    assert v.failure is not None and v.failure.aborts
    assert v.failure.message == ("token 6 has the same text as token 2 (b't2'): "
                                 "GGML_ASSERT(id_to_token.size() == token_to_id.size()) aborts the process")
    # a NUL makes two texts the same
    cut = derive_llama_vocab(_meta(tokens=_texts(8, t7=b"t3\x00x")))
    assert cut.failure is not None and cut.failure.message.startswith("token 7 has the same text as token 3 ")


def test_hybriddna_markers_are_stripped_after_oov() -> None:
    m = "\ue000".encode()
    toks = [b"a" + m, b"<oov>", b"c" + m, m, b"d"]
    v = derive_llama_vocab(_meta("hybriddna", toks))
    assert v.texts == [b"a" + m, b"<oov>", b"c", m, b"d"]
    no_oov = derive_llama_vocab(_meta("hybriddna", [b"x", b"c" + m, b"y"]))
    assert no_oov.texts[1] == b"c" + m


# --------------------------------------------------------------------------- EOT, EOM, FIM, EOG


def test_eot_found_by_text_and_its_candidates() -> None:
    toks = _texts(20, t9=b"<|end_of_text|>", t4=b"<|eot_id|>", t12=b"<|eom_id|>")
    v = derive_llama_vocab(_meta(tokens=toks))
    assert (v.eot_id, v.eot_candidates, v.eom_id) == (4, (4, 9), 12)
    assert v.eot_ambiguous
    assert v.eog_ids == frozenset({2, 4, 9, 12})
    # a key decides: no candidates then
    keyed = derive_llama_vocab(_meta(tokens=toks, EOT_ID=(U32, 9), EOM_ID=(U32, 13)))
    assert (keyed.eot_id, keyed.eot_candidates, keyed.eom_id) == (9, (), 13)


def test_fim_ids_found_by_text_end_generation_when_pad_rep_or_sep() -> None:
    toks = _texts(20, t3=b"<|fim_pad|>", t5=b"<PAD>", t6=b"<|repo_name|>", t7=b"<|file_sep|>", t8=b"<|fim_prefix|>")
    v = derive_llama_vocab(_meta(tokens=toks, EOS_ID=(U32, 19)))
    assert v.eog_ids == frozenset({3, 6, 7, 19})  # the fim pad is the lowest of its texts: <PAD> is not
    keyed = derive_llama_vocab(_meta(tokens=toks, EOS_ID=(U32, 19), FIM_PAD_ID=(U32, 10)))
    assert keyed.eog_ids == frozenset({6, 7, 10, 19})


def test_end_of_generation_texts_and_their_exceptions() -> None:
    toks = _texts(20, t3=b"<|end|>", t4=b"<|return|>", t5=b"<|call|>", t6=b"</s>")
    v = derive_llama_vocab(_meta(tokens=toks, EOS_ID=(U32, 19)))
    assert v.eog_ids == frozenset({4, 5, 6, 19})  # gpt-oss: <|end|> is not the end
    for call, ret in ((b"<|calls|>", b"<|flush|>"), (b"<|call|>", b"<|flush|>")):
        other = derive_llama_vocab(_meta(tokens=_texts(20, t3=b"<|end|>", t4=ret, t5=call), EOS_ID=(U32, 19)))
        assert 3 not in other.eog_ids and {4, 5} <= other.eog_ids
    no_call = derive_llama_vocab(_meta(tokens=_texts(20, t3=b"<|end|>", t4=b"<|return|>"), EOS_ID=(U32, 19)))
    assert no_call.eog_ids == frozenset({3, 4, 19})
    no_return = derive_llama_vocab(_meta(tokens=_texts(20, t3=b"<|end|>", t5=b"<|call|>"), EOS_ID=(U32, 19)))
    assert no_return.eog_ids == frozenset({3, 5, 19})
    # Gemma 4's <|tool_response> ends generation by its text, PLaMo's <|plamo:eos|> as the eos
    gemma = derive_llama_vocab(_meta(tokens=_texts(20, t6=b"</s>", t7=b"<|tool_response>"), EOS_ID=(U32, 19)))
    assert gemma.eog_ids == frozenset({7, 19})
    plamo = derive_llama_vocab(_meta(tokens=_texts(20, t6=b"</s>", t7=b"<|plamo:eos|>"), EOS_ID=(U32, 7)))
    assert plamo.eog_ids == frozenset({7})
    plain = derive_llama_vocab(_meta(tokens=_texts(20, t6=b"</s>"), EOS_ID=(U32, 19)))
    assert plain.eog_ids == frozenset({6, 19})


# --------------------------------------------------------------------------- BYTE tokens


def _typed(n: int, byte_at: dict[int, bytes], model: str = "llama") -> GGUFMetadata:
    toks = _texts(n)
    types = [TokenType.NORMAL] * n
    for i, text in byte_at.items():
        toks[i], types[i] = text, TokenType.BYTE
    return _meta(model, toks, TOKEN_TYPE=_array(I32, [int(t) for t in types]))


def test_a_byte_token_must_read_as_0xhh() -> None:
    assert _failure(_typed(20, {3: b"<0x41>", 4: b"<0x42>"})) is None
    assert _failure(_typed(20, {3: b"<0x41>", 9: b"ab"})) == (
        "basic_string::substr: __pos (which is 3) > this->size() (which is 2) "
        "(token 9 is typed BYTE but its text b'ab' is not '<0xHH>')")
    assert _failure(_typed(20, {9: b"abc"})) is None  # long enough for substr
    # an end-of-generation token typed BYTE is rendered as text
    assert _failure(_typed(20, {2: b"ab"})) is None
    # a BYTE type past the vocabulary's end is not looked at
    meta = _meta(TOKEN_TYPE=_array(I32, [1] * 20 + [6]))
    assert _failure(meta) is None
    wpm = _typed(120, {110: b"<0x41>"}, "bert")
    wpm_fail = derive_llama_vocab(wpm).failure
    assert wpm_fail is not None and wpm_fail.aborts
    assert wpm_fail.message == ("token 110 is typed BYTE, which a WPM (bert) vocab cannot decode: "
                                "GGML_ABORT in token_to_byte aborts the process")
    # RWKV decodes no BYTE tokens: no refusal
    assert _failure(_typed(20, {9: b"ab"}, "rwkv")) is None


def test_plamo2_needs_every_byte_token() -> None:
    toks = [b"<unk>"] + [f"<0x{b:02X}>".encode() for b in range(256)] + [f"w{i}".encode() for i in range(10)]
    types = [TokenType.NORMAL] + [TokenType.BYTE] * 256 + [TokenType.NORMAL] * 10
    full = _meta("plamo2", toks, TOKEN_TYPE=_array(I32, [int(t) for t in types]))
    assert _failure(full) is None
    missing = list(toks)
    missing[1 + 0x41] = b"<0xZZ>"  # not hex
    assert _failure(_meta("plamo2", missing, TOKEN_TYPE=_array(I32, [int(t) for t in types]))) == (
        "Byte token for <0x65> is not set")
    short = list(toks)
    short[1 + 0x07] = b"<0x7>"
    assert _failure(_meta("plamo2", short, TOKEN_TYPE=_array(I32, [int(t) for t in types]))) == (
        "Byte token for <0x7> is not set")
    at_zero = [b"<0x00>"] + toks[2:] + [b"pad"]  # the byte 0 at id 0 does not count
    types0 = [TokenType.BYTE] * 256 + [TokenType.NORMAL] * 11
    assert _failure(_meta("plamo2", at_zero, TOKEN_TYPE=_array(I32, [int(t) for t in types0]))) == (
        "Byte token for <0x0> is not set")
    wrong_end = list(toks)
    wrong_end[1 + 0x30] = b"<0x30]"
    assert _failure(_meta("plamo2", wrong_end, TOKEN_TYPE=_array(I32, [int(t) for t in types]))) == (
        "Byte token for <0x48> is not set")


# --------------------------------------------------------------------------- Phi-3 lookups


def test_phi3_names_make_llamacpp_look_up_four_texts() -> None:
    need = {"t10": b"</s>", "t11": b"<unk>", "t12": b"<s>", "t13": b"<|endoftext|>"}
    assert _failure(_meta(tokens=_texts(20, **need), NAME=(S, "Phi-3 mini"))) is None
    for name in ("Phi-3 mini", "my phi3"):
        assert _failure(_meta(tokens=_texts(20, t10=b"</s>", t11=b"<unk>", t12=b"<s>"), NAME=(S, name))) == (
            f"general.name '{name.lower()}' makes llama.cpp look up token '<|endoftext|>', which this vocab "
            "lacks (unordered_map::at throws)")
    assert _failure(_meta(NAME=(S, "phi-3"))) == (
        "general.name 'phi-3' makes llama.cpp look up token '</s>', which this vocab lacks (unordered_map::at throws)")
    assert _failure(_meta(NAME=(S, "phi-2"))) is None
    for pre in ("jina-v2-de", "jina-v2-es", "jina-v2-code"):
        assert _failure(_meta("gpt2", TOKENIZER_PRE=(S, pre), NAME=(S, "phi-3"))) is None
    for arch in ("nomic-bert-moe", "jina-bert-v3"):
        assert _failure(_meta(arch=arch, NAME=(S, "phi-3"))) is None


# --------------------------------------------------------------------------- --override-kv


def test_parse_override() -> None:
    assert parse_override("a.b=int:-3") == ("a.b", ("int", -3))
    assert parse_override("a=float:0.5") == ("a", ("float", 0.5))
    assert parse_override("a=bool:true") == ("a", ("bool", True))
    assert parse_override("a=bool:false") == ("a", ("bool", False))
    assert parse_override("a=str:x:y=z") == ("a", ("str", "x:y=z"))
    assert parse_override("a=str:") == ("a", ("str", ""))


@pytest.mark.parametrize(("text", "message"), [
    ("a", "expected KEY=TYPE:VALUE, got 'a'"),
    ("a=int", "expected KEY=TYPE:VALUE, got 'a=int'"),
    ("=int:1", "expected KEY=TYPE:VALUE, got '=int:1'"),
    ("a=int:x", "invalid int value in 'a=int:x'"),
    ("a=float:x", "invalid float value in 'a=float:x'"),
    ("a=bool:yes", "invalid bool value in 'a=bool:yes'"),
    ("a=bool:True", "invalid bool value in 'a=bool:True'"),
    ("a=u32:1", "unknown type 'u32' in 'a=u32:1' (int, float, bool, str)"),
])
def test_parse_override_refuses(text: str, message: str) -> None:
    with pytest.raises(InputError) as refused:
        parse_override(text)
    assert (refused.value.where, refused.value.message) == ("--override-kv", message)


def test_a_vocab_is_a_fresh_object_each_time() -> None:
    meta = _meta()
    assert derive_llama_vocab(meta) == derive_llama_vocab(meta, {}) and isinstance(derive_llama_vocab(meta), LlamaVocab)


# --------------------------------------------------------------------------- edges the mutation run found


class _AtMost(str):
    """A string exactly GGUF's maximum long: still readable."""

    def __len__(self) -> int:
        return T.GGUF_MAX_STRING_LENGTH


def test_a_string_of_exactly_the_gguf_maximum_is_read() -> None:
    assert _failure(_meta(NAME=(S, _AtMost("x")))) is None


def test_an_alignment_of_an_unknown_type_is_named_by_its_number() -> None:
    assert _failure(_meta(ALIGNMENT=(99, 32))) == "key 'general.alignment' must be of type u32 but is 99"


def test_a_charsmap_of_exactly_four_elements_and_one_counted_but_not_kept() -> None:
    assert _failure(_meta("t5", PRECOMPILED_CHARSMAP=_array(ValueType.UINT8, [0, 0, 0, 0]))) == (
        "Index out of array bounds in precompiled charsmap!")
    # the size is the first four bytes only: a fifth does not count
    five = GGUFArray(ValueType.UINT8, 300, None, head=bytes([2, 1, 0, 0, 1]))
    assert _failure(_meta("t5", PRECOMPILED_CHARSMAP=(ARR, five))) is None


def test_a_byte_token_at_id_0_is_checked_too() -> None:
    assert _failure(_typed(20, {0: b"ab"})) == (
        "basic_string::substr: __pos (which is 3) > this->size() (which is 2) "
        "(token 0 is typed BYTE but its text b'ab' is not '<0xHH>')")
    # unless it ends generation (the eos at id 0)
    meta = _typed(20, {0: b"ab"})
    meta.kv[K.EOS_ID] = (U32, 0)
    assert _failure(meta) is None


def test_a_byte_token_after_an_end_of_generation_one_is_checked() -> None:
    assert _failure(_typed(20, {2: b"ab", 9: b"cd"})) == (
        "basic_string::substr: __pos (which is 3) > this->size() (which is 2) "
        "(token 9 is typed BYTE but its text b'cd' is not '<0xHH>')")


def test_a_plamo2_byte_token_that_is_not_hex_does_not_hide_the_others() -> None:
    toks = [b"<unk>", b"<0xZZ>"] + [f"<0x{b:02X}>".encode() for b in range(256)] + [b"w"]
    types = [TokenType.NORMAL] + [TokenType.BYTE] * 257 + [TokenType.NORMAL]
    assert _failure(_meta("plamo2", toks, TOKEN_TYPE=_array(I32, [int(t) for t in types]))) is None


def test_ids_0_from_keys_are_kept() -> None:
    toks = _texts(20, t0=b"</s>", t3=b"<|fim_pad|>", t5=b"<|eot_id|>", t6=b"<|eom_id|>", t7=b"<|tool_response>")
    v = derive_llama_vocab(_meta(tokens=toks, EOS_ID=(U32, 0), EOT_ID=(U32, 0), EOM_ID=(U32, 0),
                                 FIM_PAD_ID=(U32, 0)))
    assert (v.eos_id, v.eot_id, v.eom_id, v.eot_candidates) == (0, 0, 0, ())
    # id 0 is the fim pad, the eos and </s>: Gemma 4's <|tool_response> makes </s> ordinary
    assert v.eog_ids == frozenset({5, 6, 7})
    # the fim pad alone at id 0 (the eos elsewhere)
    pad = derive_llama_vocab(_meta(tokens=_texts(20, t3=b"<|fim_pad|>"), EOS_ID=(U32, 19), FIM_PAD_ID=(U32, 0)))
    assert pad.eog_ids == frozenset({0, 19})


def test_the_defaults_each_bad_id_falls_back_to() -> None:
    # an id past the vocabulary is ignored, with the default it keeps in the warning
    keys = {"UNK_ID": K.UNK_ID, "SEP_ID": K.SEP_ID, "PAD_ID": K.PAD_ID, "MASK_ID": K.MASK_ID}
    bad = {name: (U32, 1 << 20) for name in keys}
    plamo = [b"<unk>"] + [f"<0x{b:02X}>".encode() for b in range(256)] + [b"w"]
    plamo_types = _array(I32, [1] + [int(TokenType.BYTE)] * 256 + [1])
    for model, tokens, extra, defaults in (
        ("llama", _texts(20), {}, {"UNK_ID": 0, "SEP_ID": -1, "PAD_ID": -1, "MASK_ID": -1}),
        ("bert", _texts(120), {}, {"UNK_ID": 100, "SEP_ID": 102, "PAD_ID": 0, "MASK_ID": 103}),
        ("t5", _texts(20), {}, {"UNK_ID": 2, "SEP_ID": -1, "PAD_ID": 0, "MASK_ID": -1}),
        ("plamo2", plamo, {"TOKEN_TYPE": plamo_types}, {"UNK_ID": 0, "SEP_ID": -1, "PAD_ID": 3, "MASK_ID": -1}),
    ):
        v = derive_llama_vocab(_meta(model, tokens, **bad, **extra))
        assert v.failure is None, model
        assert v.loader_warnings == [f"bad special token: '{keys[name]}' = {1 << 20}, using default id {i}"
                                     for name, i in defaults.items()], model


def test_a_default_id_0_of_an_empty_vocabulary_is_disabled() -> None:
    v = derive_llama_vocab(_meta(tokens=[]))
    assert v.loader_warnings == [
        "default special token 'tokenizer.ggml.bos_token_id' = 1 out of vocab range, disabling",
        "default special token 'tokenizer.ggml.eos_token_id' = 2 out of vocab range, disabling",
        "default special token 'tokenizer.ggml.unknown_token_id' = 0 out of vocab range, disabling"]


def test_a_text_is_cut_at_its_first_nul() -> None:
    assert derive_llama_vocab(_meta(tokens=_texts(8, t3=b"ab\x00cd\x00ef"))).texts[3] == b"ab"


def test_a_string_override() -> None:
    v = derive_llama_vocab(_meta("gpt2"), {K.TOKENIZER_PRE: ("str", "llama-bpe")})
    assert (v.pre, v.add_bos) == ("llama-bpe", True)


def test_gemma4_warns_before_a_late_key_fails_the_load() -> None:
    # llama.cpp logs the Gemma 4 override, then reads normalizer.lowercase and fails on its type
    v = derive_llama_vocab(_meta("gemma4", NORMALIZER_LOWERCASE=(U32, 1)))
    assert v.failure is not None
    assert v.failure.message == "key tokenizer.ggml.normalizer.lowercase has wrong type u32 but expected type bool"
    assert v.loader_warnings == ["override 'tokenizer.ggml.add_bos_token' to 'true' for Gemma4"]
    sep = derive_llama_vocab(_meta("gemma4", ADD_SEP=(U32, 1)))
    assert sep.loader_warnings == []  # add_sep is read before
