"""What llama.cpp's vocab loader derives from a GGUF's metadata.

The compatibility check compares derived values, not stored keys: a missing
``add_bos_token`` means "true" for a SentencePiece model, a BPE pre-tokenizer can turn
BOS on, an out-of-range id is ignored, an empty token text becomes ``[EMPTY_<i>]``.
``derive_llama_vocab`` mirrors ``llama_vocab::impl::load`` of the reference llama.cpp
step by step, including the ways it refuses a file. It is a pure function of the
metadata: sources call it, rules read its result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from paircheck import constants as K
from paircheck import llamacpp_tables as T
from paircheck.constants import LLAMA_TYPE_NAMES, TokenType, ValueType
from paircheck.errors import InputError
from paircheck.model import GGUFArray, GGUFMetadata, LlamaVocab, LoadFailure, Override

# The special-id keys in the order the loader visits them.
_SPECIAL_ID_KEYS = (
    ("bos", K.BOS_ID),
    ("eos", K.EOS_ID),
    ("eot", K.EOT_ID),
    ("eom", K.EOM_ID),
    ("unk", K.UNK_ID),
    ("sep", K.SEP_ID),
    ("pad", K.PAD_ID),
    ("mask", K.MASK_ID),
    ("fim_pre", K.FIM_PRE_ID),
    ("fim_suf", K.FIM_SUF_ID),
    ("fim_mid", K.FIM_MID_ID),
    ("fim_pad", K.FIM_PAD_ID),
    ("fim_rep", K.FIM_REP_ID),
    ("fim_sep", K.FIM_SEP_ID),
    ("fim_pre", K.PREFIX_ID),
    ("fim_suf", K.SUFFIX_ID),
    ("fim_mid", K.MIDDLE_ID),
)

# Other scalar keys the loader reads with a fixed type (a wrong type fails the load).
_TYPED_KEYS = (
    (K.NAME, ValueType.STRING),
    (K.TOKENIZER_PRE, ValueType.STRING),
    (K.TOKEN_TYPE_COUNT, ValueType.UINT32),
)
_TYPED_BOOL_KEYS_LATE = (
    K.ADD_SEP,
    K.NORMALIZER_LOWERCASE,
    K.NORMALIZER_STRIP_ACCENTS,
)


class _Refused(Exception):
    def __init__(self, message: str, aborts: bool = False) -> None:
        super().__init__(message)
        self.failure = LoadFailure(message, aborts)


@dataclass
class _Keys:
    """Typed access to metadata the way llama_model_loader::get_key does it."""

    kv: Mapping[str, tuple[int, Any]]
    overrides: Mapping[str, Override]

    _KIND_FOR_TYPE: ClassVar[dict[int, str]] = {
        ValueType.UINT32: "int",
        ValueType.BOOL: "bool",
        ValueType.STRING: "str",
    }

    def get(self, key: str, expected: int) -> Any:
        """The value, None when absent; a wrong stored type fails the load."""
        override = self.overrides.get(key)
        if override is not None:
            kind, value = override
            if kind != self._KIND_FOR_TYPE[expected]:
                raise _Refused(f"override for {key} has type {kind}, expected {self._KIND_FOR_TYPE[expected]}")
            # An INT override of a uint32 key is truncated to uint32, as in C++.
            return value & 0xFFFFFFFF if expected == ValueType.UINT32 else value
        entry = self.kv.get(key)
        if entry is None:
            return None
        vtype, value = entry
        if vtype != expected:
            raise _Refused(
                f"key {key} has wrong type {LLAMA_TYPE_NAMES.get(vtype, vtype)} "
                f"but expected type {LLAMA_TYPE_NAMES[expected]}"
            )
        return value

    def array(self, key: str) -> GGUFArray | None:
        entry = self.kv.get(key)
        if entry is None:
            return None
        vtype, value = entry
        if vtype != ValueType.ARRAY:
            raise _Refused(f"invalid gguf type for {key}")
        return value


def derive_llama_vocab(meta: GGUFMetadata, overrides: Mapping[str, Override] | None = None) -> LlamaVocab:
    """Mirror of ``llama_model_load`` up to the end of the vocab load (vocab_only)."""
    vocab = LlamaVocab()
    try:
        _load(meta, _Keys(meta.kv, overrides or {}), vocab)
    except _Refused as refused:
        vocab.failure = refused.failure
    return vocab


def _load(meta: GGUFMetadata, keys: _Keys, v: LlamaVocab) -> None:
    _check_gguf_level(meta)
    arch = keys.get(K.ARCHITECTURE, ValueType.STRING) or ""
    if arch not in T.ARCHITECTURES:
        raise _Refused(f"unknown model architecture: '{arch}'")
    for key, vtype in _TYPED_KEYS:
        keys.get(key, vtype)

    model = keys.get(K.TOKENIZER_MODEL, ValueType.STRING)
    if model is None:
        raise _Refused(f"key not found in model: {K.TOKENIZER_MODEL}")
    v.tokenizer_model = model
    pre = keys.get(K.TOKENIZER_PRE, ValueType.STRING) or ""

    defaults = T.TOKENIZER_MODELS.get(model)
    if defaults is None:
        raise _Refused(f"unknown tokenizer: '{model}'")
    v.vocab_type, v.bos_id, v.eos_id, v.add_bos, v.add_eos = defaults

    if v.vocab_type == T.VOCAB_NONE:
        # The loader returns early: no texts, no special ids, no add keys are read.
        n = keys.get(K.VOCAB_SIZE.format(arch=arch), ValueType.UINT32)
        v.n_tokens = n or 0
        return

    if model in T.NEEDS_MERGES:
        merges = keys.kv.get(K.MERGES)
        if merges is None:
            if not (model != "gemma4" and pre == "kimi-k2"):
                raise _Refused("cannot find tokenizer merges in model file")
        elif merges[0] != ValueType.ARRAY or merges[1].elem_type != ValueType.STRING:
            raise _Refused(f"invalid gguf type for {K.MERGES}")
    if model == "t5":
        _check_charsmap(keys)
    if model == "gemma4":
        pre = "gemma4"

    gemma4_pre = False
    if v.vocab_type == T.VOCAB_BPE:
        if not pre:
            v.loader_warnings.append("missing pre-tokenizer type, using: 'default'")
        elif pre not in T.BPE_PRE_KNOWN:
            raise _Refused(f"unknown pre-tokenizer type: '{pre}'")
        if pre in T.BPE_PRE_ADD_BOS:
            v.add_bos = True
        if pre in T.BPE_PRE_NO_BOS:
            v.bos_id = -1
        gemma4_pre = pre in T.BPE_PRE_GEMMA4
        v.pre = pre or "default"
    keys.get(K.ADD_SPACE_PREFIX, ValueType.BOOL)
    keys.get(K.REMOVE_EXTRA_WHITESPACES, ValueType.BOOL)

    tokens = keys.kv.get(K.TOKENS)
    if tokens is None:
        raise _Refused("cannot find tokenizer vocab in model file")
    if tokens[0] != ValueType.ARRAY or tokens[1].elem_type != ValueType.STRING:
        raise _Refused(f"invalid gguf type for {K.TOKENS}")
    raw: list[bytes] = tokens[1].values or []
    # n_tokens is read into a uint32 in the loader.
    n = len(raw) & 0xFFFFFFFF
    v.n_tokens = n
    _check_side_array(keys, K.SCORES, (ValueType.INT32, ValueType.FLOAT32), "scores", n)
    _check_side_array(keys, K.TOKEN_TYPE, (ValueType.INT32,), "toktypes", n)
    v.texts, token_to_id = _texts(raw[:n], v)
    if model == "hybriddna":
        _strip_dna_markers(v.texts, token_to_id)
    byte_ids = _byte_token_ids(keys, n)
    if v.vocab_type == T.VOCAB_PLAMO2:
        _check_plamo2_bytes(v.texts, byte_ids)

    ids = _special_ids(keys, v)
    v.bos_id, v.eos_id, v.eot_id, v.eom_id = ids["bos"], ids["eos"], ids["eot"], ids["eom"]

    add_bos = keys.get(K.ADD_BOS, ValueType.BOOL)
    if add_bos is not None:
        v.add_bos = bool(add_bos)
    add_eos = keys.get(K.ADD_EOS, ValueType.BOOL)
    if add_eos is not None:
        v.add_eos = bool(add_eos)
    for key in _TYPED_BOOL_KEYS_LATE[:1]:
        keys.get(key, ValueType.BOOL)
    if gemma4_pre and not v.add_bos:
        v.add_bos = True
        v.loader_warnings.append("override 'tokenizer.ggml.add_bos_token' to 'true' for Gemma4")
    for key in _TYPED_BOOL_KEYS_LATE[1:]:
        keys.get(key, ValueType.BOOL)
    suppress = keys.array(K.SUPPRESS_TOKENS)
    if suppress is not None and suppress.elem_type != ValueType.INT32:
        raise _Refused("invalid gguf type for tokenizer.ggml.suppress_tokens")

    v.eot_id, v.eom_id, v.eot_candidates = _detect_eot_eom(v, token_to_id)
    _detect_fim(ids, token_to_id)
    v.eog_ids = _eog_ids(v, ids, token_to_id)
    _check_piece_cache(v, byte_ids)
    _check_name_lookups(keys, arch, pre, token_to_id)


def _check_gguf_level(meta: GGUFMetadata) -> None:
    """Refusals of ggml's GGUF parser, before any model code runs."""
    if meta.big_endian:
        raise _Refused(
            "big-endian GGUF: llama.cpp on a little-endian machine reads its version as "
            "'extremely large' and refuses it (convert it with --bigendian only for big-endian hosts)"
        )
    if meta.duplicate_keys:
        raise _Refused(f"duplicate key '{meta.duplicate_keys[0]}' (gguf_init_from_file refuses the file)")
    if "" in meta.kv:
        raise _Refused("a key is empty (gguf_init_from_file refuses the file)")
    for key, (vtype, value) in meta.kv.items():
        if vtype == ValueType.STRING and len(value) > T.GGUF_MAX_STRING_LENGTH:
            raise _Refused(f"string value of {key} exceeds the GGUF maximum length")
    alignment = meta.kv.get(K.ALIGNMENT)
    if alignment is not None:
        vtype, value = alignment
        if vtype != ValueType.UINT32:
            raise _Refused(f"key 'general.alignment' must be of type u32 but is {LLAMA_TYPE_NAMES.get(vtype, vtype)}")
        if value == 0 or value & (value - 1):
            raise _Refused(f"alignment {value} is not a power of 2")


def _check_charsmap(keys: _Keys) -> None:
    key = K.PRECOMPILED_CHARSMAP
    arr = keys.array(key)
    if arr is None:
        return
    if arr.elem_type not in (ValueType.INT8, ValueType.UINT8):
        raise _Refused(f"invalid gguf type for {key}")
    head = bytes(v & 0xFF for v in arr.values[:4]) if arr.values is not None else arr.head[:4]
    if arr.count < 4:
        raise _Refused("precompiled_charsmap too small for xcda_blob_size header!")
    blob_size = int.from_bytes(head, "little")
    if blob_size + 4 >= arr.count:
        raise _Refused("Index out of array bounds in precompiled charsmap!")


def _check_side_array(keys: _Keys, key: str, elem_types: tuple[int, ...], label: str, n: int) -> None:
    entry = keys.kv.get(key)
    if entry is None:
        return
    vtype, arr = entry
    if vtype != ValueType.ARRAY or arr.elem_type not in elem_types:
        raise _Refused(f"invalid gguf type for {key}")
    count = arr.count & 0xFFFFFFFF
    if count < n:
        raise _Refused(f"Index out of array bounds for {label} ({count} < {n})")


def _texts(raw: list[bytes], v: LlamaVocab) -> tuple[list[bytes], dict[bytes, int]]:
    """Token texts as C strings: cut at the first NUL; empty becomes [EMPTY_<i>]."""
    texts = raw
    # Both tests run in C; the per-token loop below is only for the rare odd file.
    if not all(raw) or b"\x00" in b"".join(raw):
        texts = []
        for i, t in enumerate(raw):
            t = t.split(b"\x00", 1)[0]
            if not t:
                v.loader_warnings.append(f"empty token at index {i}")
                t = f"[EMPTY_{i}]".encode()
            texts.append(t)
    token_to_id = dict(zip(texts, range(len(texts)), strict=True))
    if len(token_to_id) != len(texts):
        first: dict[bytes, int] = {}
        for i, t in enumerate(texts):
            if t in first:
                raise _Refused(
                    f"token {i} has the same text as token {first[t]} ({t!r}): "
                    "GGML_ASSERT(id_to_token.size() == token_to_id.size()) aborts the process",
                    aborts=True,
                )
            first[t] = i
    return texts, token_to_id


_DNA_MARKER = "\ue000".encode()


def _strip_dna_markers(texts: list[bytes], token_to_id: dict[bytes, int]) -> None:
    if b"<oov>" not in token_to_id:
        return
    start = token_to_id[b"<oov>"] + 1
    for i in range(start, len(texts)):
        t = texts[i]
        if len(t) > len(_DNA_MARKER) and t.endswith(_DNA_MARKER):
            texts[i] = t[: -len(_DNA_MARKER)]


def _special_ids(keys: _Keys, v: LlamaVocab) -> dict[str, int]:
    ids = {name: -1 for name, _ in _SPECIAL_ID_KEYS}
    ids["bos"], ids["eos"] = v.bos_id, v.eos_id
    defaults = {
        T.VOCAB_SPM: {"unk": 0},
        T.VOCAB_WPM: {"unk": 100, "sep": 102, "pad": 0, "mask": 103},
        T.VOCAB_UGM: {"unk": 2, "pad": 0},
        T.VOCAB_PLAMO2: {"unk": 0, "pad": 3},
    }.get(v.vocab_type, {})
    ids.update(defaults)
    n = v.n_tokens
    for name, key in _SPECIAL_ID_KEYS:
        current = ids[name]
        if current >= 0 and current >= n:
            v.loader_warnings.append(f"default special token '{key}' = {current} out of vocab range, disabling")
            current = -1
        new_id = keys.get(key, ValueType.UINT32)
        if new_id is not None:
            if new_id >= n:
                v.loader_warnings.append(f"bad special token: '{key}' = {new_id}, using default id {current}")
            else:
                current = new_id
        ids[name] = current
    return ids


_EOT_TEXTS = (
    "<|eot_id|>",
    "<|im_end|>",
    "<|end|>",
    "<end_of_turn>",
    "<|endoftext|>",
    "<|end_of_text|>",
    "<EOT>",
    "_<EOT>",
    "[EOT]",
    "<\uff5cend\u2581of\u2581sentence\uff5c>",
    "<end_of_utterance>",
)


def _detect_eot_eom(v: LlamaVocab, token_to_id: dict[bytes, int]) -> tuple[int, int, tuple[int, ...]]:
    """EOT/EOM found by text when no key set them, and the EOT candidates.

    llama.cpp takes the first EOT-looking text in its std::unordered_map's iteration
    order, which depends on the C++ library's string hash. When several texts qualify
    (Llama 3: <|eot_id|> and <|end_of_text|>), which one it takes is not knowable from the
    file, so the candidates are kept; ``eot_id`` is then the lowest, for internal use only
    (formats show the candidates instead). The check never reads EOT; end-of-generation
    uses every candidate, as llama.cpp's EOG set does.
    """
    eot, eom = v.eot_id, v.eom_id
    candidates: tuple[int, ...] = ()
    if eot < 0:
        candidates = tuple(sorted(token_to_id[t.encode()] for t in _EOT_TEXTS if t.encode() in token_to_id))
        eot = candidates[0] if candidates else -1
    if eom < 0:
        eom = token_to_id.get(b"<|eom_id|>", -1)
    return eot, eom, candidates


# FIM ids found by text when no key set them; fim_pad/rep/sep end generation.
_FIM_TEXTS = {
    "fim_pre": (
        "<|fim_prefix|>",
        "<fim-prefix>",
        "<fim_prefix>",
        "<\uff5cfim\u2581begin\uff5c>",
        "<PRE>",
        "\u2581<PRE>",
        "<|code_prefix|>",
        "<|prefix|>",
    ),
    "fim_suf": (
        "<|fim_suffix|>",
        "<fim-suffix>",
        "<fim_suffix>",
        "<\uff5cfim\u2581hole\uff5c>",
        "<SUF>",
        "\u2581<SUF>",
        "<|code_suffix|>",
        "<|suffix|>",
    ),
    "fim_mid": (
        "<|fim_middle|>",
        "<fim-middle>",
        "<fim_middle>",
        "<\uff5cfim\u2581end\uff5c>",
        "<MID>",
        "\u2581<MID>",
        "<|code_middle|>",
        "<|middle|>",
    ),
    "fim_pad": ("<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"),
    "fim_rep": ("<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"),
    "fim_sep": ("<|file_sep|>",),
}


def _detect_fim(ids: dict[str, int], token_to_id: dict[bytes, int]) -> None:
    """As for EOT, llama.cpp takes the first match in hash order; we take the lowest id."""
    for name, texts in _FIM_TEXTS.items():
        if ids[name] < 0:
            found = [token_to_id[t.encode()] for t in texts if t.encode() in token_to_id]
            if found:
                ids[name] = min(found)


def _eog_ids(v: LlamaVocab, ids: dict[str, int], token_to_id: dict[bytes, int]) -> frozenset[int]:
    eog = {ids[k] for k in ("fim_pad", "fim_rep", "fim_sep") if ids[k] >= 0}
    eog.update(token_to_id[t.encode()] for t in T.EOG_TEXTS if t.encode() in token_to_id)
    eog.update(i for i in (v.eos_id, v.eot_id, v.eom_id) if i >= 0)
    texts = {v.texts[i]: i for i in eog if 0 <= i < len(v.texts)}
    # gpt-oss / solar-open: <|end|> is not the end when <|return|>/<|call|> exist.
    has_call = b"<|call|>" in texts or b"<|calls|>" in texts
    if b"<|end|>" in texts and has_call and (b"<|return|>" in texts or b"<|flush|>" in texts):
        eog.discard(texts[b"<|end|>"])
    # Gemma 4 and PLaMo have an ordinary </s>.
    if b"</s>" in texts and (b"<|tool_response>" in texts or b"<|plamo:eos|>" in texts):
        eog.discard(texts[b"</s>"])
    return frozenset(eog)


def _byte_token_ids(keys: _Keys, n: int) -> list[int]:
    """Ids typed BYTE in tokenizer.ggml.token_type (found with C-speed scans)."""
    entry = keys.kv.get(K.TOKEN_TYPE)
    if entry is None or entry[1].values is None:
        return []
    types = entry[1].values
    found: list[int] = []
    start = 0
    while True:
        try:
            i = types.index(TokenType.BYTE, start, n)
        except ValueError:
            return found
        found.append(i)
        start = i + 1


def _check_plamo2_bytes(texts: list[bytes], byte_ids: list[int]) -> None:
    """The PLaMo-2 tokenizer needs a <0xHH> BYTE token (at an id other than 0) per byte."""
    have = set()
    for i in byte_ids:
        text = texts[i]
        if i and len(text) == 6 and text.startswith(b"<0x") and text.endswith(b">"):
            try:
                have.add(int(text[3:5], 16))
            except ValueError:
                continue
    for value in range(256):
        if value not in have:
            raise _Refused(f"Byte token for <0x{value}> is not set")


def _check_piece_cache(v: LlamaVocab, byte_ids: list[int]) -> None:
    """Building the token-to-piece cache decodes every BYTE token as '<0xHH>':
    a shorter text throws (substr) and a WPM vocab aborts."""
    control_like = {v.texts[i] for i in v.eog_ids if 0 <= i < len(v.texts)}
    for i in byte_ids:
        text = v.texts[i]
        if text in control_like:
            continue  # marked CONTROL by the loader, rendered as text
        if v.vocab_type == T.VOCAB_WPM:
            raise _Refused(
                f"token {i} is typed BYTE, which a WPM (bert) vocab cannot decode: "
                "GGML_ABORT in token_to_byte aborts the process",
                aborts=True,
            )
        if v.vocab_type in (T.VOCAB_SPM, T.VOCAB_UGM, T.VOCAB_BPE) and len(text) < 3:
            raise _Refused(
                f"basic_string::substr: __pos (which is 3) > this->size() (which is {len(text)}) "
                f"(token {i} is typed BYTE but its text {text!r} is not '<0xHH>')"
            )


def _check_name_lookups(keys: _Keys, arch: str, pre: str, token_to_id: dict[bytes, int]) -> None:
    """Phi-3 models get token attributes by text; a missing text throws out_of_range."""
    name = (keys.get(K.NAME, ValueType.STRING) or "").lower()
    if any(s in pre for s in ("jina-v2-de", "jina-v2-es", "jina-v2-code")) or any(
        s in arch for s in ("nomic-bert-moe", "jina-bert-v3")
    ):
        return
    if "phi-3" in name or "phi3" in name:
        for text in ("</s>", "<unk>", "<s>", "<|endoftext|>"):
            if text.encode() not in token_to_id:
                raise _Refused(
                    f"general.name '{name}' makes llama.cpp look up token '{text}', which this "
                    "vocab lacks (unordered_map::at throws)"
                )


def parse_override(text: str) -> tuple[str, Override]:
    """``KEY=TYPE:VALUE`` as llama.cpp's --override-kv takes it (int, float, bool, str)."""
    key, sep, typed = text.partition("=")
    kind, sep2, raw = typed.partition(":")
    if not sep or not sep2 or not key:
        raise InputError("--override-kv", f"expected KEY=TYPE:VALUE, got {text!r}")
    try:
        if kind == "int":
            return key, ("int", int(raw))
        if kind == "float":
            return key, ("float", float(raw))
        if kind == "bool":
            if raw not in ("true", "false"):
                raise ValueError
            return key, ("bool", raw == "true")
        if kind == "str":
            return key, ("str", raw)
    except ValueError:
        raise InputError("--override-kv", f"invalid {kind} value in {text!r}") from None
    raise InputError("--override-kv", f"unknown type {kind!r} in {text!r} (int, float, bool, str)")
