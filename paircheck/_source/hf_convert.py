"""What llama.cpp's ``convert_hf_to_gguf.py`` (llama-cpp-python 0.3.36) writes from a Hugging
Face folder: the GGUF key/value section (architecture, vocabulary, special ids, chat
template), emulated without the weights. ``hf_folder`` is the source that uses it.

The converter's choices mirrored here (read from its source, not copied):

* per architecture (``config.json`` ``architectures[0]``, as the converter dispatches): which
  ``set_vocab`` runs (tokenizer.model or tokenizer.json, LlamaHfVocab or gpt2), the special
  ids and flags some classes force afterwards, and ``add_space_prefix`` (``_RECIPES``);
  an architecture not in that table is judged from the files alone, with a note;
* vocab path: a SentencePiece ``tokenizer.model`` -> ``llama`` (texts from the model,
  padded to config ``vocab_size`` with ``[PAD<i>]``, added tokens from
  ``added_tokens.json`` and ``tokenizer_config.json``); otherwise ``tokenizer.json``:
  byte-level BPE -> ``gpt2``, WordPiece -> ``bert`` (with its phantom-space texts),
  BPE with byte fallback -> ``llama`` (LlamaHfVocab), Unigram -> ``t5``;
* ``get_vocab_base``: ids 0..vocab_size-1, a missing id becomes ``[PAD<id>]``;
* the BPE pre-tokenizer: the converter hashes the ids of a check text and looks the hash
  up; paircheck does the same with the ``tokenizers`` package. An unknown hash makes
  the converter stop, which is reported as a note and judged as ``default``;
* ``SpecialVocab``: BOS/EOS/... ids from ``tokenizer_config.json`` tokens matched to
  ``tokenizer.json``'s added tokens, then ``config.json`` ``*_token_id``; the add flags
  from the post-processor first, then ``add_*_token`` in ``tokenizer_config.json``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import struct
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from paircheck import constants as K
from paircheck import llamacpp_tables as T
from paircheck._source.convert_pre_hashes import CHECK_TEXT, PRE_BY_HASH
from paircheck.constants import TokenType, ValueType
from paircheck.errors import InputError
from paircheck.model import GGUFArray

# config model_type -> llama.cpp architecture, where the names differ.
_ARCH_ALIASES = {
    "mistral": "llama",
    "mixtral": "llama",
    "qwen2_moe": "qwen2moe",
    "qwen3_moe": "qwen3moe",
    "gpt_neox": "gptneox",
}


@dataclass(frozen=True)
class _Recipe:
    """What the converter's model class for one ``architectures[0]`` does in ``set_vocab``.

    ``vocab``: ``llama`` (LlamaModel: tokenizer.model, else LlamaHfVocab for a byte-fallback
    BPE tokenizer.json, else gpt2), ``spm_or_gpt2`` (tokenizer.model, else tokenizer.json),
    ``spm`` (tokenizer.model only), ``phi3`` (Phi3MiniModel's own SentencePiece reader unless
    tokenizer_class is GPT2Tokenizer), ``json`` (TextModel._set_vocab_gpt2 / BertModel: the
    tokenizer.json through AutoTokenizer, never tokenizer.model). ``forced``: special ids set
    with ``_set_special_token`` after the vocabulary (kept when the files already name one).
    """

    arch: str
    vocab: str
    forced: tuple[tuple[str, int], ...] = ()
    space_prefix: bool | None = None  # add_add_space_prefix(...) after a SentencePiece vocab


# HF architectures[0] -> the converter's choice. Each comment names the class and the file of
# convert_hf_to_gguf.py's conversion/ package (llama.cpp vendored in llama-cpp-python 0.3.36)
# it was read from; tests/_source/test_converter_oracle.py runs that converter on each of them.
_RECIPES: dict[str, _Recipe] = {
    # conversion/llama.py LlamaModel.set_vocab (MistralForCausalLM/MixtralForCausalLM register there too)
    **dict.fromkeys(
        ("LlamaForCausalLM", "LLaMAForCausalLM", "MistralForCausalLM", "MixtralForCausalLM"), _Recipe("llama", "llama")
    ),
    # conversion/qwen.py Qwen2Model.set_vocab: _set_vocab_sentencepiece, on FileNotFoundError _set_vocab_gpt2
    **dict.fromkeys(("Qwen2ForCausalLM", "Qwen2Model"), _Recipe("qwen2", "spm_or_gpt2")),
    # conversion/qwen.py Qwen3Model(Qwen2Model).set_vocab -> super() (InternS1 aside)
    **dict.fromkeys(("Qwen3ForCausalLM", "Qwen3Model"), _Recipe("qwen3", "spm_or_gpt2")),
    # conversion/qwen.py Qwen2MoeModel: no set_vocab -> TextModel.set_vocab = _set_vocab_gpt2;
    # Qwen3MoeModel.set_vocab -> super() (InternS1 aside)
    "Qwen2MoeForCausalLM": _Recipe("qwen2moe", "json"),
    "Qwen3MoeForCausalLM": _Recipe("qwen3moe", "json"),
    # conversion/gemma.py GemmaModel.set_vocab: sentencepiece, then a second SpecialVocab with
    # prefix 67, suffix 69, middle 68, fsep 70, eot 107 (eot makes 107 end-of-generation)
    "GemmaForCausalLM": _Recipe("gemma", "spm", (("eot", 107),), False),
    # conversion/gemma.py Gemma2Model.set_vocab: sentencepiece, add_space_prefix False
    "Gemma2ForCausalLM": _Recipe("gemma2", "spm", (), False),
    # conversion/gemma.py Gemma3Model.set_vocab: sentencepiece only if tokenizer.model exists, else gpt2
    **dict.fromkeys(
        ("Gemma3ForCausalLM", "Gemma3ForConditionalGeneration"), _Recipe("gemma3", "spm_or_gpt2", (), False)
    ),
    # conversion/phi.py Phi3MiniModel.set_vocab
    "Phi3ForCausalLM": _Recipe("phi3", "phi3"),
    # conversion/deepseek.py DeepseekModel.set_vocab: sentencepiece, else gpt2
    "DeepseekForCausalLM": _Recipe("deepseek", "spm_or_gpt2"),
    # conversion/deepseek.py DeepseekV2Model.set_vocab: _set_vocab_gpt2 (tiktoken fallback not mirrored)
    **dict.fromkeys(("DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM"), _Recipe("deepseek2", "json")),
    # No set_vocab override: TextModel.set_vocab = _set_vocab_gpt2 (conversion/base.py)
    "GPTNeoXForCausalLM": _Recipe("gptneox", "json"),  # conversion/gptneox.py GPTNeoXModel
    **dict.fromkeys(("FalconForCausalLM", "RWForCausalLM"), _Recipe("falcon", "json")),  # conversion/falcon.py
    "GPTBigCodeForCausalLM": _Recipe("starcoder", "json"),  # conversion/starcoder.py StarCoderModel
    "Starcoder2ForCausalLM": _Recipe("starcoder2", "json"),  # conversion/starcoder.py StarCoder2Model
    "CohereForCausalLM": _Recipe("command-r", "json"),  # conversion/command_r.py CommandR2Model
    "Cohere2ForCausalLM": _Recipe("cohere2", "json"),  # conversion/command_r.py Cohere2Model
    # conversion/bert.py XLMRobertaModel.set_vocab -> _xlmroberta_set_vocab (sentencepiece.bpe.model is not
    # read here; a Unigram tokenizer.json is): model_arch BERT
    **dict.fromkeys(("XLMRobertaModel", "XLMRobertaForSequenceClassification"), _Recipe("bert", "json")),
    # conversion/bert.py BertModel.set_vocab: get_vocab_base (tokenizer.json), phantom-space texts
    **dict.fromkeys(
        ("BertModel", "BertForMaskedLM", "BertForSequenceClassification", "CamembertModel"), _Recipe("bert", "json")
    ),
}


# conversion/llama.py LlamaModel.set_vocab, after the vocabulary: CodeLlama (vocab_size 32016)
# gets prefix/suffix/middle 32007..32009 and eot 32010; "granite small models" (49152) add_bos False.
_CODELLAMA_VOCAB, _CODELLAMA_EOT = 32016, 32010


_GRANITE_SMALL_VOCAB = 49152


_SPECIAL_TYPES = ("bos", "eos", "unk", "sep", "pad", "cls", "mask")


_SPECIAL_KEYS = {
    "bos": K.BOS_ID,
    "eos": K.EOS_ID,
    "unk": K.UNK_ID,
    "sep": K.SEP_ID,
    "pad": K.PAD_ID,
    "cls": K.CLS_ID,
    "mask": K.MASK_ID,
    "eot": K.EOT_ID,
    "eom": K.EOM_ID,
}


def json_file(path: Path, location: str) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError) as exc:
        raise InputError(location, f"cannot read {path.name}: {exc}") from None
    if not isinstance(data, dict):
        raise InputError(location, f"{path.name} is not a JSON object")
    return data


@dataclass
class _Converted:
    model: str
    pre: str | None
    tokens: list[bytes]
    merges: int | None = None
    scores: bool = False
    notes: list[str] = field(default_factory=list)
    space_prefix: bool | None = None


# A chat template is a page of Jinja; past this it is not one (and is not read further).
MAX_TEMPLATE_BYTES = 1 << 20


def _chat_template(folder: Path, tok_config: dict[str, Any] | None, location: str) -> str | None:
    """tokenizer.chat_template as gguf-py's SpecialVocab (llama-cpp-python 0.3.36) takes it:
    tokenizer_config.json's chat_template, else chat_template.jinja, else chat_template.json's;
    of a list of named templates, the one named "default". Read as text, never rendered."""
    found: Any = (tok_config or {}).get("chat_template")
    if found is None:
        jinja, as_json = folder / "chat_template.jinja", folder / "chat_template.json"
        if jinja.is_file() and jinja.stat().st_size <= MAX_TEMPLATE_BYTES:
            try:
                found = jinja.read_text(encoding="utf-8", errors="replace")
            except OSError as exc:
                raise InputError(location, f"cannot read {jinja.name}: {exc}") from None
        elif as_json.is_file() and as_json.stat().st_size <= MAX_TEMPLATE_BYTES:
            data = json_file(as_json, location)
            found = data.get("chat_template") if isinstance(data, dict) else None
    if isinstance(found, list):
        found = next((t.get("template") for t in found if isinstance(t, dict) and t.get("name") == "default"), None)
    return found if isinstance(found, str) else None


def _read_tokenizer_json(path: Path, location: str) -> tuple[str, dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text)
    except (OSError, ValueError) as exc:
        raise InputError(location, f"cannot read {path.name}: {exc}") from None
    if not isinstance(data, dict):
        raise InputError(location, f"{path.name} is not a JSON object")
    return text, data


def _json_vocab(tok_json: dict[str, Any], location: str) -> tuple[dict[str, int], dict[str, int]]:
    """The model vocab and the vocab with added tokens, as ``tokenizers``' ``get_vocab``.

    Read from the parsed JSON: loading the file in ``tokenizers`` costs ~0.45 s on a
    150k vocab, and ``get_vocab`` another 0.2 s. Added tokens take their ids from the
    JSON; ``len`` of the second is ``get_vocab_size(with_added_tokens=True)``.
    """
    model = tok_json.get("model")
    raw = model.get("vocab") if isinstance(model, dict) else None
    if isinstance(raw, dict):
        base = raw
    elif isinstance(raw, list):  # Unigram: [[piece, score], ...], the id is the index
        try:
            base = {entry[0]: i for i, entry in enumerate(raw)}
        except (TypeError, IndexError, KeyError):
            raise InputError(location, "tokenizer.json: malformed Unigram vocab") from None
    else:
        raise InputError(location, "tokenizer.json has no model vocab: cannot tell its vocabulary")
    if not set(map(type, base.values())) <= {int} or not set(map(type, base)) <= {str}:
        raise InputError(location, "tokenizer.json: model vocab entries must map strings to integer ids")
    return base, {**base, **_added_ids(tok_json, base)}


def _added_ids(tok_json: dict[str, Any], base: dict[str, int]) -> dict[str, int]:
    """The ids ``tokenizers`` gives the added tokens, which are not always the JSON's ``id``.

    AddedVocabulary::add_tokens: a token the model has keeps the model's id; any other gets
    the model's size for the first one, then one past the largest added id (or the model's
    size again while every added id is below it). So added tokens listed at ids 0..37 but
    absent from the model vocab land at len(vocab).. (found by the converter differential
    test: AutoTokenizer and the converter see them there, and ids 0..37 become [PAD<i>]).
    """
    n_model = len(base)
    ids: dict[str, int] = {}
    for entry in tok_json.get("added_tokens") or []:
        content = entry.get("content") if isinstance(entry, dict) else None
        if not isinstance(content, str) or content in ids:
            continue
        if content in base:
            ids[content] = base[content]
        elif not ids:
            ids[content] = n_model
        else:
            top = max(ids.values())
            ids[content] = top + 1 if top >= n_model or n_model == 0 else n_model
    return ids


def _hf_architecture(config: dict[str, Any]) -> str | None:
    """The class name the converter dispatches on: get_model_architecture of conversion/base.py
    (``architectures[0]``, or the text_config's own ``architectures[0]`` when it has one)."""
    text = config.get("text_config")
    for source in (text if isinstance(text, dict) else {}, config):
        names = source.get("architectures")
        if isinstance(names, list) and names and isinstance(names[0], str):
            return names[0]
    return None


def _vocab_path(
    recipe: _Recipe | None, hf_arch: str | None, folder: Path, has_json: bool, tok_config: dict[str, Any] | None
) -> tuple[bool, bool, str | None]:
    """(read tokenizer.model?, may a byte-fallback BPE be LlamaHfVocab?, note) for the recipe."""
    has_spm = (folder / "tokenizer.model").is_file()
    if recipe is None:  # not mirrored: the choice the files alone suggest
        return has_spm, True, None
    if recipe.vocab == "phi3" and (tok_config or {}).get("tokenizer_class") == "GPT2Tokenizer":
        return False, False, None  # Phi3MiniModel.set_vocab: "Phi-4 model uses GPT2Tokenizer"
    if recipe.vocab in ("spm", "phi3") and not has_spm:
        return (
            False,
            False,
            (
                f"{hf_arch}: convert_hf_to_gguf.py reads only tokenizer.model for this architecture and stops "
                "without it; judged from tokenizer.json"
            ),
        )
    if recipe.vocab == "json":
        if has_json:
            return False, False, None
        return (
            True,
            False,
            (
                f"{hf_arch}: convert_hf_to_gguf.py reads the vocabulary through AutoTokenizer (a tokenizer.json); "
                "judged from tokenizer.model"
            ),
        )
    return has_spm, recipe.vocab == "llama", None


def _forced_specials(
    recipe: _Recipe | None,
    config: dict[str, Any],
    tok_config: dict[str, Any] | None,
    ids: dict[str, int],
    adds: dict[str, bool],
) -> None:
    """Special ids and flags the model class sets after SpecialVocab (see _RECIPES).

    They are written by a second SpecialVocab whose own files rarely name these types, so
    its value replaces the first one's unless config.json/tokenizer_config.json names it.
    """
    if recipe is None:
        return
    forced = list(recipe.forced)
    vocab_size = config.get("vocab_size", 32000)  # LlamaModel: hparams.get("vocab_size", 32000)
    if recipe.vocab == "llama" and vocab_size == _CODELLAMA_VOCAB:
        forced.append(("eot", _CODELLAMA_EOT))
    for typ, tid in forced:
        if f"{typ}_token_id" not in config and f"{typ}_token" not in (tok_config or {}):
            ids[typ] = tid
    if recipe.vocab == "llama" and vocab_size == _GRANITE_SMALL_VOCAB:
        adds["bos"] = False


def _architecture(config: dict[str, Any]) -> tuple[str, str | None]:
    model_type = config.get("model_type")
    text = config.get("text_config")
    if isinstance(text, dict) and isinstance(text.get("model_type"), str) and model_type not in T.ARCHITECTURES:
        model_type = text["model_type"]
    if isinstance(model_type, str):
        arch = _ARCH_ALIASES.get(model_type, model_type)
        if arch in T.ARCHITECTURES:
            return arch, None
    return "llama", (
        f"config.json model_type {model_type!r} is not mapped to a llama.cpp architecture here; "
        "judged with the llama architecture (only the tokenizer is compared)"
    )


def _convert_tokenizer_json(
    tok_json: dict[str, Any],
    tok_text: str,
    base_vocab: dict[str, int],
    vocab: dict[str, int],
    config_vocab: int | None,
    location: str,
    llama_hf: bool = True,
) -> _Converted:
    model = tok_json.get("model") or {}
    mtype = model.get("type")
    notes: list[str] = []
    added = {t.get("content"): t for t in tok_json.get("added_tokens") or [] if isinstance(t, dict)}
    decoder = tok_json.get("decoder")
    # gguf-py LlamaHfVocab.__init__: a BPE with byte_fallback and a Sequence decoder; anything
    # else raises and LlamaModel.set_vocab goes on to _set_vocab_gpt2.
    if (
        llama_hf
        and mtype == "BPE"
        and model.get("byte_fallback")
        and isinstance(decoder, dict)
        and (decoder.get("type") == "Sequence")
    ):
        # A SentencePiece-style BPE without tokenizer.model: LlamaHfVocab, not padded.
        ranked = sorted(vocab.items(), key=lambda kv: kv[1])
        tokens = [text.encode("utf-8") for text, _ in ranked]
        notes.append(
            "SentencePiece-style BPE without tokenizer.model: converted as llama.cpp's LlamaHfVocab would (no padding)"
        )
        return _Converted("llama", "default", tokens, None, True, notes)
    size = config_vocab or len(vocab)
    if vocab and max(vocab.values()) >= size:
        notes.append(
            f"tokenizer ids reach {max(vocab.values())} but config vocab_size is {size}: "
            "convert_hf_to_gguf.py stops on this (assert); judged with the ids that fit"
        )
    by_id: list[str | None]
    ordered = sorted(vocab, key=vocab.__getitem__)  # the common case: ids 0..n-1, once each
    if ordered and vocab[ordered[0]] == 0 and vocab[ordered[-1]] == len(ordered) - 1 == len(set(vocab.values())) - 1:
        by_id = [*ordered[:size], *[None] * (size - len(ordered))]
    else:
        by_id = [None] * size
        for text, i in vocab.items():
            if 0 <= i < size:
                by_id[i] = text
    bert = mtype == "WordPiece"
    texts = by_id
    if bert:  # the phantom-space texts of BertModel.set_vocab, for non-CONTROL tokens
        texts = [None if t is None else t[2:] if t.startswith("##") else "\u2581" + t for t in by_id]
    if None in texts:  # ids without a token: [PAD<id>], type UNUSED
        texts = [f"[PAD{i}]" if t is None else t for i, t in enumerate(texts)]
    tokens = [t.encode() for t in texts if t is not None]
    for content, info in added.items():
        at = vocab.get(content) if isinstance(content, str) else None
        if not isinstance(content, str) or at is None or not 0 <= at < size or by_id[at] != content:
            continue
        if info.get("special") or _looks_special(content):
            tokens[at] = content.encode("utf-8")  # CONTROL: kept verbatim
        else:
            shown = content.replace("\u2581", " ")  # the converter pre-normalizes user-defined spaces
            if bert:
                shown = shown[2:] if shown.startswith("##") else "\u2581" + shown
            tokens[at] = shown.encode("utf-8")
    if mtype == "WordPiece":
        # BertModel.set_vocab writes the pre-tokenizer found by the same hash (bert-bge, ...).
        pre, pre_note = _detect_pre(tok_json, tok_text, base_vocab, location)
        if pre_note:
            notes.append(pre_note)
        return _Converted("bert", pre, tokens, None, False, notes)
    if mtype == "Unigram":
        # conversion/bert.py XLMRobertaModel._xlmroberta_set_vocab reads a Unigram tokenizer.json
        # (no sentencepiece.bpe.model): model t5, pre "default", padded to config vocab_size.
        notes.append("Unigram tokenizer.json: judged as XLMRobertaModel's converter path writes it (t5)")
        return _Converted("t5", "default", tokens, None, True, notes)
    if mtype != "BPE":
        notes.append(f"tokenizer model type {mtype!r}: judged as byte-level BPE (gpt2)")
    pre, pre_note = _detect_pre(tok_json, tok_text, base_vocab, location)
    if pre_note:
        notes.append(pre_note)
    merges = model.get("merges")
    return _Converted("gpt2", pre, tokens, len(merges) if isinstance(merges, list) else 0, False, notes)


def _looks_special(text: str) -> bool:
    # does_token_look_special of the converter.
    return (
        text in ("<pad>", "<mask>", "<2mass>", "[@BOS@]")
        or (text.startswith("<|") and text.endswith("|>"))
        or (text.startswith("<\uff5c") and text.endswith("\uff5c>"))
        or (text.startswith("<unused") and text.endswith(">"))
    )


def _detect_pre(
    tok_json: dict[str, Any], tok_text: str, base_vocab: dict[str, int], location: str
) -> tuple[str, str | None]:
    ids = _check_text_ids(tok_json, tok_text, base_vocab, location)
    digest = hashlib.sha256(str(ids).encode()).hexdigest()
    pre = PRE_BY_HASH.get(digest)
    if pre is not None:
        return pre, None
    return "default", (
        f"the BPE pre-tokenizer is not one convert_hf_to_gguf.py recognizes (hash {digest[:12]}...): "
        "the converter would stop; judged as if it were written as 'default'"
    )


@contextlib.contextmanager
def _quiet_stderr_fd() -> Iterator[None]:
    """Send file descriptor 2 to /dev/null for the duration: a Rust panic inside tokenizers
    prints its message (and, with RUST_BACKTRACE, a backtrace) straight to fd 2 before
    Python sees the exception, and paircheck promises one line on stderr."""
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    try:
        sys.stderr.flush()
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _tokenizer_from_str(text: str, location: str) -> Any:
    from tokenizers import Tokenizer  # imported here: ~50 ms, only for BPE HF folders

    try:
        with _quiet_stderr_fd():
            return Tokenizer.from_str(text)
    except Exception as exc:
        raise InputError(location, f"tokenizers cannot load tokenizer.json: {exc}") from None
    except BaseException as exc:
        # A Rust panic inside tokenizers arrives as pyo3's PanicException, which derives
        # from BaseException, not Exception (found by fuzz/: a BPE vocab with gaps).
        if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
            raise
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(location, f"tokenizers crashed loading tokenizer.json ({reason})") from None


def _byte_level(text: str) -> str:
    """GPT-2's bytes_to_unicode applied to the UTF-8 bytes of ``text``."""
    return "".join(_BYTE_CHARS[b] for b in text.encode("utf-8"))


def _bytes_to_unicode() -> list[str]:
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("\xa1"), ord("\xac") + 1), *range(ord("\xae"), ord("\xff") + 1)]
    chars, extra = [], 0
    for b in range(256):
        if b in keep:
            chars.append(chr(b))
        else:
            chars.append(chr(256 + extra))
            extra += 1
    return chars


_BYTE_CHARS = _bytes_to_unicode()


_SENTINEL = "\uffff<paircheck-unknown>\uffff"


def _check_text_ids(tok_json: dict[str, Any], tok_text: str, base_vocab: dict[str, int], location: str) -> list[int]:
    """The ids of the converter's ``tokenizer.encode(chktxt)``, as the full tokenizer gives them.

    Loading a 150k BPE in ``tokenizers`` costs ~0.45 s, so it is not loaded whole. A
    BPE symbol is always a substring of one pre-tokenized word, so only the vocab
    entries and merges that are substrings of the check text's words can take part:

    1. a probe tokenizer (same normalizer, pre-tokenizer, added tokens; a vocab of
       single characters, no merges) gives the words as the model would see them;
    2. a tokenizer with only the entries found inside those words (model ids kept)
       encodes the check text as the full one does. Added tokens outside the model
       get fresh ids there, so ids are mapped back by token text.

    Anything unexpected (a character the probe lacks, affixes, odd JSON) falls back
    to the full tokenizer.
    """
    model = tok_json.get("model")
    merges = model.get("merges") if isinstance(model, dict) else None
    try:
        if (
            not isinstance(model, dict)
            or model.get("type") != "BPE"
            or not isinstance(merges, list)
            or model.get("continuing_subword_prefix")
            or model.get("end_of_word_suffix")
        ):
            raise _SlowPath
        words = _check_text_words(tok_json, model)
        if any(len(w) > 64 for w in words):
            # No pre-tokenizer splits the check text: its substrings would cost O(n^3)
            # memory (1.6 GB, found by fuzz/); the full tokenizer is cheap enough then.
            raise _SlowPath
        subs = {w[i:j] for w in words for i in range(len(w)) for j in range(i + 1, len(w) + 1)}
        keep = subs | {t.get("content") for t in tok_json.get("added_tokens") or [] if isinstance(t, dict)}
        keep.add(model.get("unk_token"))
        vocab = {k: base_vocab[k] for k in keep.intersection(base_vocab) if isinstance(k, str)}
        if all(isinstance(m, str) for m in merges[:1]):
            pairs = {f"{t[:i]} {t[i:]}" for t in subs for i in range(1, len(t))}
            kept: list[Any] = list(filter(pairs.__contains__, merges))
        else:  # the newer [left, right] form
            kept = [m for m in merges if isinstance(m, list) and "".join(m) in subs]
        small = _tokenizer_from_str(json.dumps(dict(tok_json, model=dict(model, vocab=vocab, merges=kept))), location)
        enc = small.encode(CHECK_TEXT, add_special_tokens=True)
    except (_SlowPath, InputError, TypeError, ValueError, AttributeError):
        return _tokenizer_from_str(tok_text, location).encode(CHECK_TEXT, add_special_tokens=True).ids
    added = _added_ids(tok_json, base_vocab)
    return [
        tid if special else int(base_vocab.get(tok, added.get(tok, tid)) or tid)
        for tid, tok, special in zip(enc.ids, enc.tokens, enc.special_tokens_mask, strict=True)
    ]


class _SlowPath(Exception):
    pass


def _check_text_words(tok_json: dict[str, Any], model: dict[str, Any]) -> list[str]:
    """The check text's pre-tokenized words (a superset: neighbours may be joined)."""
    alphabet = set(CHECK_TEXT)
    alphabet.update(_byte_level(CHECK_TEXT))
    alphabet.update("\u2581\u0120")
    stub = dict(tok_json, model=dict(model, vocab={_SENTINEL: 0}, merges=[], unk_token=_SENTINEL))
    probe = _tokenizer_from_str(json.dumps(stub), "")
    if probe.normalizer is not None:
        for sample in (CHECK_TEXT, *set(CHECK_TEXT)):
            text = probe.normalizer.normalize_str(sample)
            alphabet.update(text)
            alphabet.update(_byte_level(text))
    if probe.pre_tokenizer is not None:
        for sample in (CHECK_TEXT, *alphabet.copy()):
            for piece, _ in probe.pre_tokenizer.pre_tokenize_str(sample):
                alphabet.update(piece)
    chars = {c: i for i, c in enumerate(sorted(alphabet - {_SENTINEL}), start=1)}
    chars[_SENTINEL] = 0
    stub["model"]["vocab"] = chars
    probe = _tokenizer_from_str(json.dumps(stub), "")
    enc = probe.encode(CHECK_TEXT, add_special_tokens=False)
    if _SENTINEL in enc.tokens:
        raise _SlowPath  # a character no probe foresaw
    words: list[str] = []
    last = None
    for token, word in zip(enc.tokens, enc.word_ids, strict=True):
        if word is not None and word == last and words:
            words[-1] += token
        else:
            words.append(token)
        last = word
    return words


def _convert_sentencepiece(
    folder: Path, config_vocab: int | None, tok_config: dict[str, Any] | None, location: str, phi3: bool = False
) -> _Converted:
    """_create_vocab_sentencepiece of conversion/base.py, or with ``phi3`` the reader of
    conversion/phi.py Phi3MiniModel.set_vocab: added tokens of tokenizer_config.json kept
    verbatim (no does_token_look_special, no \u2581 -> space), then tokenizer.json's."""
    pieces = _read_sentencepiece(folder / "tokenizer.model", location)
    size = config_vocab or len(pieces)
    tokens = [f"[PAD{i}]".encode() for i in range(size)]
    types = [int(TokenType.UNUSED)] * size
    for i, (piece, ptype) in enumerate(pieces[:size]):
        tokens[i] = piece
        types[i] = ptype
    added = json_file(folder / "added_tokens.json", location) or {}
    for text, tid in added.items():
        if isinstance(tid, int) and 0 <= tid < size:
            tokens[tid] = text.encode("utf-8")
            types[tid] = TokenType.USER_DEFINED
    for key, data in ((tok_config or {}).get("added_tokens_decoder") or {}).items():
        try:
            tid = int(key)
        except ValueError:
            continue
        if not isinstance(data, dict) or not isinstance(data.get("content"), str) or not 0 <= tid < size:
            continue
        text = data["content"]
        if not phi3 and not (data.get("special") or _looks_special(text)):
            text = text.replace("\u2581", " ")
        tokens[tid] = text.encode("utf-8")
    if phi3:
        tok_json = json_file(folder / "tokenizer.json", location) or {}
        for entry in tok_json.get("added_tokens") or []:
            if isinstance(entry, dict) and isinstance(entry.get("content"), str) and isinstance(entry.get("id"), int):
                if 0 <= entry["id"] < size:
                    tokens[entry["id"]] = entry["content"].encode("utf-8")
    notes = []
    if len(pieces) > size:
        notes.append(
            f"tokenizer.model has {len(pieces)} pieces but config vocab_size is {size}: the converter drops the rest"
        )
    return _Converted("llama", "default", tokens, None, True, notes)


def _read_sentencepiece(path: Path, location: str) -> list[tuple[bytes, int]]:
    """The pieces of a SentencePiece ModelProto: field 1 repeated {1: piece, 3: type}.

    A minimal protobuf walk, so that sentencepiece (a compiled dependency) is not needed.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(location, f"cannot read tokenizer.model: {exc.strerror or exc}") from None
    pieces: list[tuple[bytes, int]] = []
    try:
        for field_no, wire, value in _proto_fields(data):
            if field_no == 1 and wire == 2:
                piece, ptype = b"", TokenType.NORMAL
                for f2, w2, v2 in _proto_fields(value):
                    if f2 == 1 and w2 == 2:
                        piece = v2
                    elif f2 == 3 and w2 == 0:
                        ptype = v2
                pieces.append((piece, ptype))
    except (IndexError, ValueError, struct.error):
        raise InputError(location, "tokenizer.model is not a SentencePiece model (bad protobuf)") from None
    if not pieces:
        raise InputError(location, "tokenizer.model has no pieces (not a SentencePiece model?)")
    return pieces


def _varint(data: bytes, i: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, i
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _proto_fields(data: bytes) -> Any:
    i, end = 0, len(data)
    while i < end:
        key, i = _varint(data, i)
        field_no, wire = key >> 3, key & 7
        value: int | bytes
        if wire == 0:
            value, i = _varint(data, i)
        elif wire == 1:
            value, i = data[i : i + 8], i + 8
        elif wire == 2:
            length, i = _varint(data, i)
            if i + length > end:
                raise ValueError("truncated")
            value, i = data[i : i + length], i + length
        elif wire == 5:
            value, i = data[i : i + 4], i + 4
        else:
            raise ValueError(f"wire type {wire}")
        yield field_no, wire, value


def _token_content(entry: Any) -> str | None:
    if isinstance(entry, str):
        return entry
    if isinstance(entry, dict) and isinstance(entry.get("content"), str):
        return entry["content"]
    return None


def _special_vocab(
    tok_json: dict[str, Any] | None,
    tok_config: dict[str, Any] | None,
    config: dict[str, Any],
    n_vocab: int | None,
) -> tuple[dict[str, int], dict[str, bool]]:
    """SpecialVocab of gguf-py: the special ids and add flags the converter writes."""
    ids: dict[str, int] = {}
    adds: dict[str, bool] = {}
    types = list(_SPECIAL_TYPES)
    cfg = dict(tok_config or {})

    def put(typ: str, tid: Any) -> None:
        if isinstance(tid, int) and not isinstance(tid, bool) and tid >= 0 and typ not in ids:
            if n_vocab is None or tid < n_vocab:
                ids[typ] = tid

    added_tokens = (tok_json or {}).get("added_tokens") or []
    if tok_json is not None:
        bos, cls = _token_content(cfg.get("bos_token")), _token_content(cfg.get("cls_token"))
        eos, sep = _token_content(cfg.get("eos_token")), _token_content(cfg.get("sep_token"))
        if not bos and cls and cfg:
            cfg["bos_token"] = bos = cls
        if not eos and sep and cfg:
            cfg["eos_token"] = eos = sep
        post = tok_json.get("post_processor") or {}
        for proc in post.get("processors", [post]) if isinstance(post, dict) else []:
            ptype = proc.get("type") if isinstance(proc, dict) else None
            if ptype == "ByteLevel":
                adds.setdefault("bos", False)
                adds.setdefault("eos", False)
            elif ptype == "RobertaProcessing":
                adds.update(bos=True, eos=True, sep=True)
            elif ptype == "TemplateProcessing":
                single = proc.get("single") or []
                if len(single) > 1:
                    first = (single[0].get("SpecialToken") or {}).get("id")
                    if first:
                        if not cfg:
                            bos = first
                        elif first not in (bos, cls):
                            if not bos:
                                cfg["bos_token"] = bos = first
                            if not cls:
                                cfg["cls_token"] = cls = first
                        adds["bos"] = first in (bos, cls)
                    last = (single[-1].get("SpecialToken") or {}).get("id")
                    if last:
                        if not cfg:
                            eos = last
                        elif last != eos:
                            if "eot" not in types:
                                types.append("eot")
                                cfg["eot_token"] = eos
                            elif "eom" not in types:
                                types.append("eom")
                                cfg["eom_token"] = eos
                            cfg["eos_token"] = eos = last
                        adds["eos"] = last == eos
    if cfg:
        for typ in types:
            flag = cfg.get(f"add_{typ}_token")
            if isinstance(flag, bool) and typ not in adds:
                adds[typ] = flag
            content = _token_content(cfg.get(f"{typ}_token"))
            if content is None:
                continue
            tid = next((t.get("id") for t in added_tokens if isinstance(t, dict) and t.get("content") == content), None)
            put(typ, tid)
    nested = config.get("text_config")
    text_config: dict[str, Any] = nested if isinstance(nested, dict) else {}
    for typ in types:
        tid = config.get(f"{typ}_token_id")
        if tid is None:
            tid = text_config.get(f"{typ}_token_id")
        put(typ, tid)
    # The writer has no handler for some add flags (only bos, eos, sep exist in GGUF).
    adds = {k: v for k, v in adds.items() if k in ("bos", "eos", "sep")}
    return ids, adds


@dataclass
class Conversion:
    """The key/value section the converter would write, what it says about the folder
    (notes), the llama.cpp architecture, and the tokenizer.json vocabularies (base, and with
    the added tokens) the HF-native numbers come from."""

    kv: dict[str, tuple[int, Any]]
    notes: list[str]
    arch: str
    base_vocab: dict[str, int] | None
    full_vocab: dict[str, int] | None


def convert_folder(folder: Path, location: str, config: dict[str, Any], tok_config: dict[str, Any] | None,
                   config_vocab: int | None, repo_id: str | None) -> Conversion:
    """The converter's output for ``folder`` (whose config.json and tokenizer_config.json are
    ``config`` and ``tok_config``; ``config_vocab``: config.json's checked vocab_size)."""
    tok_json_path = folder / "tokenizer.json"
    tok_json: dict[str, Any] | None = None
    tok_text = ""
    if tok_json_path.is_file():
        # Read and parsed once: tokenizers is only loaded for the BPE pre-tokenizer hash,
        # and then only with the entries the converter's check text can reach.
        tok_text, tok_json = _read_tokenizer_json(tok_json_path, location)

    base_vocab: dict[str, int] | None = None
    full_vocab: dict[str, int] | None = None
    if tok_json is not None:
        base_vocab, full_vocab = _json_vocab(tok_json, location)
    hf_arch = _hf_architecture(config)
    recipe = _RECIPES.get(hf_arch or "")
    use_spm, llama_hf, vocab_note = _vocab_path(recipe, hf_arch, folder, tok_json is not None, tok_config)
    if use_spm:
        phi3 = recipe is not None and recipe.vocab == "phi3"
        conv = _convert_sentencepiece(folder, config_vocab, tok_config, location, phi3=phi3)
        if recipe is not None and recipe.space_prefix is not None:
            conv.space_prefix = recipe.space_prefix
    else:
        assert tok_json is not None and full_vocab is not None and base_vocab is not None
        conv = _convert_tokenizer_json(tok_json, tok_text, base_vocab, full_vocab, config_vocab, location, llama_hf)
    if vocab_note:
        conv.notes.append(vocab_note)
    if conv.model == "t5" and not use_spm:
        # XLMRobertaModel._xlmroberta_set_vocab: add_space_prefix(tokenizer.add_prefix_space), which
        # XLMRobertaTokenizer takes from tokenizer_config.json, default True.
        flag = (tok_config or {}).get("add_prefix_space", True)
        conv.space_prefix = flag if isinstance(flag, bool) else True
    if recipe is not None and recipe.vocab == "llama" and isinstance(tok_config, dict):
        # LlamaModel.set_vocab writes add_prefix_space of tokenizer_config.json before any vocabulary.
        if isinstance(tok_config.get("add_prefix_space"), bool):
            conv.space_prefix = tok_config["add_prefix_space"]

    if recipe is not None:
        arch, arch_note = recipe.arch, None
    else:
        arch, arch_note = _architecture(config)
        if hf_arch is None:
            arch_note = (arch_note + "; " if arch_note else "") + (
                "config.json names no architectures: convert_hf_to_gguf.py stops (Failed to detect model "
                "architecture); the vocabulary is judged from the tokenizer files alone"
            )
        elif arch_note is None:
            arch_note = (
                f"config.json architecture {hf_arch!r}: its convert_hf_to_gguf.py set_vocab is not mirrored here; "
                "the vocabulary is judged from the tokenizer files alone"
            )
    kv: dict[str, tuple[int, Any]] = {
        K.ARCHITECTURE: (ValueType.STRING, arch),
        K.NAME: (ValueType.STRING, folder.name if repo_id is None else repo_id.split("/")[-1]),
        K.TOKENIZER_MODEL: (ValueType.STRING, conv.model),
    }
    if conv.pre is not None:
        kv[K.TOKENIZER_PRE] = (ValueType.STRING, conv.pre)
    n = len(conv.tokens)
    kv[K.TOKENS] = (ValueType.ARRAY, GGUFArray(ValueType.STRING, n, conv.tokens))
    if conv.scores:
        kv[K.SCORES] = (ValueType.ARRAY, GGUFArray(ValueType.FLOAT32, n, None))
    kv[K.TOKEN_TYPE] = (ValueType.ARRAY, GGUFArray(ValueType.INT32, n, None))
    if conv.merges is not None:
        kv[K.MERGES] = (ValueType.ARRAY, GGUFArray(ValueType.STRING, conv.merges, None))
    if conv.space_prefix is not None:
        kv[K.ADD_SPACE_PREFIX] = (ValueType.BOOL, conv.space_prefix)
    n_vocab = n if conv.model == "llama" else None
    ids, adds = _special_vocab(tok_json, tok_config, config, n_vocab)
    _forced_specials(recipe, config, tok_config, ids, adds)
    for typ, tid in ids.items():
        kv[_SPECIAL_KEYS[typ]] = (ValueType.UINT32, tid)
    for typ, flag in adds.items():
        kv[f"tokenizer.ggml.add_{typ}_token"] = (ValueType.BOOL, flag)
    template = _chat_template(folder, tok_config, location)
    if template is not None:
        kv[K.CHAT_TEMPLATE] = (ValueType.STRING, template)
    notes = [*conv.notes, *([arch_note] if arch_note else [])]
    return Conversion(kv, notes, arch, base_vocab, full_vocab)
