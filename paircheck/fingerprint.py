"""Vocabulary fingerprints: a short, stable hash of exactly what llama.cpp compares.

``common_speculative_are_compatible`` (llama.cpp's draft-simple check) reads five
things of each vocabulary, as the loader derives them: the vocab type, BOS (whether
it is added and, only when it is, its id), EOS (likewise), the token count, and the
token texts from id 5 up. :func:`fingerprint` hashes precisely those values, so

* **equal fingerprints => compatible**: two loadable files with the same fingerprint
  pass llama.cpp's check against each other, by construction (same type, same add
  flags and ids, same count, byte-equal texts from id 5 to the end);
* **different fingerprints do not mean incompatible**: the check tolerates token
  counts up to 128 apart and compares texts only up to the smaller count, and it
  ignores ids 0-4. A Qwen2.5 0.5B (151936 tokens) and 14B (152064) have different
  fingerprints and are compatible. Then compare the files themselves, or the
  :func:`prefix_fingerprint`, which says more (see there).

What goes in (format ``v1``): SHA-256 over the bytes below, the first 128 bits shown
as 32 lowercase hex digits after a ``v1:`` prefix::

    b"paircheck-vocab-fingerprint\n"
    texts[5] + b"\0" + texts[6] + b"\0" + ... + texts[n-1]   # NUL-joined
    b"\0\0"
    b"v1 type=<vocab_type> bos=<0|1>:<id> eos=<0|1>:<id> n=<n_tokens>\n"

``vocab_type`` is llama.cpp's enum value (1 SPM, 2 BPE, 3 WPM, 4 UGM, ...); a BOS or
EOS id is written only when that token is added, else -1 (llama.cpp compares the ids
only then). The texts are the loader's: cut at the first NUL byte and never empty (an
empty text becomes ``[EMPTY_<id>]``), so NUL-joining them is unambiguous and the first
double NUL ends them. The prefix fingerprint (``v1p:``) is the same stream with texts
only up to :func:`prefix_end` and the trailer ``v1p type=.. bos=.. eos=.. end=<id>``;
the texts come first so one pass of the hash serves both.

Nothing else goes in: not the GGUF version or byte order, not the model's name or any
other key, not the pre-tokenizer or merges (llama.cpp does not compare those;
paircheck's LW104 warning does). Any change to this recipe is a new format version
(``v2:``); a ``v1:`` value never changes meaning.

A file llama.cpp cannot load, and a vocabulary without token texts (type NONE, which
llama.cpp aborts on when comparing), have no fingerprint (None).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from paircheck import llamacpp_tables as T
from paircheck.model import LlamaVocab

VERSION = "v1"
PREFIX_VERSION = "v1p"
HEX_DIGITS = 32  # 128 bits of SHA-256
# Texts below this id are not compared by llama.cpp (SPEC_VOCAB_CHECK_START_TOKEN_ID).
START_ID = T.SPEC_VOCAB_CHECK_START_TOKEN_ID
MAX_SIZE_DIFFERENCE = T.SPEC_VOCAB_MAX_SIZE_DIFFERENCE
# The prefix fingerprint covers texts up to a multiple of this many ids.
PREFIX_BLOCK = 1024


MAGIC = b"paircheck-vocab-fingerprint\n"
_END_OF_TEXTS = b"\0\0"


def _trailer(vocab: LlamaVocab, label: str, count: str) -> bytes:
    bos = vocab.bos_id if vocab.add_bos else -1
    eos = vocab.eos_id if vocab.add_eos else -1
    return (
        f"{label} type={vocab.vocab_type} bos={int(vocab.add_bos)}:{bos} "
        f"eos={int(vocab.add_eos)}:{eos} {count}\n"
    ).encode()


def _fingerprintable(vocab: LlamaVocab) -> bool:
    return vocab.loadable and vocab.vocab_type != T.VOCAB_NONE and len(vocab.texts) == vocab.n_tokens


def fingerprint(vocab: LlamaVocab) -> str | None:
    """``v1:<32 hex>`` of what llama.cpp's check compares, or None (see the module doc)."""
    return fingerprints(vocab).full


def prefix_end(n_tokens: int) -> int:
    """The id up to which (exclusive) :func:`prefix_fingerprint` hashes texts.

    The largest multiple of PREFIX_BLOCK at or below ``n_tokens - 128``, so that files
    whose counts differ by padding (151936 vs 152064) usually share the same end.
    """
    return max(START_ID, (max(n_tokens - MAX_SIZE_DIFFERENCE, 0) // PREFIX_BLOCK) * PREFIX_BLOCK)


def prefix_fingerprint(vocab: LlamaVocab) -> str | None:
    """``v1p:<32 hex>``: the same values, texts only from id 5 up to :func:`prefix_end`.

    Weaker than :func:`fingerprint` and meant for family members padded to different
    sizes: equal prefix fingerprints mean the same type and BOS/EOS rules and equal
    texts up to the prefix end. The pair is then compatible for llama.cpp if also the
    token counts differ by at most 128 and the texts between the prefix end and the
    smaller count agree, which only the files can tell. Different prefix fingerprints
    with the same prefix end mean incompatible (every id below the prefix end is
    compared); with different prefix ends they prove nothing.
    """
    return fingerprints(vocab).prefix


@dataclass(frozen=True)
class Fingerprints:
    full: str | None
    prefix: str | None
    prefix_end: int | None


def fingerprints(vocab: LlamaVocab) -> Fingerprints:
    """Both fingerprints from one join of the texts and one pass of the hash."""
    if not _fingerprintable(vocab):
        return Fingerprints(None, None, None)
    texts = vocab.texts
    n = len(texts)
    joined = memoryview(b"\0".join(texts))  # the costly step: one pass over all texts
    size = len(joined)
    start = sum(map(len, texts[:START_ID])) + START_ID if n > START_ID else size
    end = prefix_end(n)
    tail = texts[end:]
    if end <= START_ID or n <= START_ID:
        cut = start  # the prefix has no texts
    elif not tail:
        cut = size
    else:  # drop the tail texts and the NUL before each
        cut = size - sum(map(len, tail)) - len(tail)
    h = hashlib.sha256(MAGIC)
    h.update(joined[start:cut])
    hp = h.copy()
    hp.update(_END_OF_TEXTS + _trailer(vocab, PREFIX_VERSION, f"end={end}"))
    h.update(joined[cut:])
    h.update(_END_OF_TEXTS + _trailer(vocab, VERSION, f"n={vocab.n_tokens}"))
    return Fingerprints(
        f"{VERSION}:{h.hexdigest()[:HEX_DIGITS]}",
        f"{PREFIX_VERSION}:{hp.hexdigest()[:HEX_DIGITS]}",
        end,
    )
