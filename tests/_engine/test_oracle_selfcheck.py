"""The oracle itself must be right before it can judge paircheck.

The expected values are the documented table "What llama.cpp's loader makes of them"
from the corpus README (derived by llama.cpp 0.3.36's loader, i.e. llama.cpp's behaviour,
not paircheck's). If ``tests/oracle.py`` reproduces them for all 19 real files, its
ctypes plumbing (params, vocab getters, worker protocol) is trusted for the differential
tests. A few hand-made files check the worker's error paths (load error, abort) and a
handful of known compatibility verdicts check ``oracle_compatible``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from gguf import GGUFValueType as VT
from gguf_mutate import make_kv, read_kvs, rewrite_gguf, set_tokens, token_texts
from oracle import llama_values, oracle_compatible, require_oracle

SPM, BPE, WPM, UGM = 1, 2, 3, 4

#: file -> (vocab_type, add_bos, add_eos, bos, eos, n_tokens), copied from the corpus
#: README table "What llama.cpp's loader makes of them".
EXPECTED: dict[str, tuple[int, bool, bool, int, int, int]] = {
    "ggml-vocab-aquila.gguf": (BPE, False, False, 0, 0, 100008),
    "ggml-vocab-baichuan.gguf": (SPM, True, False, 1, 2, 64000),
    "ggml-vocab-bert-bge.gguf": (WPM, True, False, 101, -1, 30522),
    "ggml-vocab-command-r.gguf": (BPE, True, False, 5, 255001, 256000),
    "ggml-vocab-deepseek-coder.gguf": (BPE, True, False, 32013, 32014, 32256),
    "ggml-vocab-deepseek-llm.gguf": (BPE, True, False, 100000, 100001, 102400),
    "ggml-vocab-falcon.gguf": (BPE, False, False, 11, 11, 65024),
    "ggml-vocab-gemma-4.gguf": (BPE, True, False, 2, 1, 262144),
    "ggml-vocab-gpt-2.gguf": (BPE, False, False, 50256, 50256, 50257),
    "ggml-vocab-gpt-neox.gguf": (BPE, False, False, 0, 0, 50432),
    "ggml-vocab-llama-bpe.gguf": (BPE, True, False, 128000, 128001, 128256),
    "ggml-vocab-llama-spm.gguf": (SPM, True, False, 1, 2, 32000),
    "ggml-vocab-mpt.gguf": (BPE, False, False, 0, 0, 50432),
    "ggml-vocab-nomic-bert-moe.gguf": (UGM, True, True, 0, 2, 250048),
    "ggml-vocab-phi-3.gguf": (SPM, True, False, 1, 32000, 32064),
    "ggml-vocab-qwen2.gguf": (BPE, False, False, 151643, 151643, 151936),
    "ggml-vocab-qwen35.gguf": (BPE, False, False, 151643, 151643, 151936),
    "ggml-vocab-refact.gguf": (BPE, False, False, 0, 0, 49216),
    "ggml-vocab-starcoder.gguf": (BPE, False, False, 0, 0, 49152),
}


@pytest.fixture(scope="module", autouse=True)
def _need_oracle() -> None:
    require_oracle()


@pytest.fixture(scope="module")
def files(corpus: Path) -> dict[str, Path]:
    found = {p.name: p for p in Path(corpus).glob("ggml-vocab-*.gguf")}
    assert set(found) == set(EXPECTED), "corpus does not hold exactly the 19 files"
    return found


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_oracle_reproduces_documented_table(files: dict[str, Path], name: str) -> None:
    r = llama_values(files[name])
    assert r["loaded"], r.get("error")
    got = (r["vocab_type"], r["add_bos"], r["add_eos"], r["bos"], r["eos"], r["n_tokens"])
    assert got == EXPECTED[name]
    texts = r["texts"]
    assert len(texts) == r["n_tokens"]
    assert all(isinstance(t, bytes) and t and b"\0" not in t for t in texts)
    assert len(set(texts)) == len(texts)  # llama.cpp asserts uniqueness at load time


def test_texts_are_the_stored_strings(files: dict[str, Path]) -> None:
    """llama_vocab_get_text returns the stored token strings unchanged (no NUL/empty in
    this file), so the blob transfer and splitting is lossless."""
    p = files["ggml-vocab-llama-spm.gguf"]
    assert llama_values(p)["texts"] == token_texts(read_kvs(p))


def test_known_verdicts(files: dict[str, Path]) -> None:
    """A few pairs whose outcome follows directly from the table above."""
    v = {n: llama_values(files[n]) for n in
         ("ggml-vocab-qwen2.gguf", "ggml-vocab-qwen35.gguf", "ggml-vocab-llama-spm.gguf",
          "ggml-vocab-phi-3.gguf", "ggml-vocab-gpt-2.gguf", "ggml-vocab-bert-bge.gguf")}
    # same vocabulary, different pre string (pre is not compared)
    assert oracle_compatible(v["ggml-vocab-qwen2.gguf"], v["ggml-vocab-qwen35.gguf"]) == (True, None)
    assert oracle_compatible(v["ggml-vocab-llama-spm.gguf"], v["ggml-vocab-llama-spm.gguf"]) == (True, None)
    # SPM vs BPE
    assert oracle_compatible(v["ggml-vocab-llama-spm.gguf"], v["ggml-vocab-gpt-2.gguf"]) == (False, "vocab_type")
    # Same bos/eos flags; the eos ids differ (2, 32000) but add_eos is false, so they are not
    # compared; the sizes differ by 64 (<= 128), and phi-3's first 32000 texts are llama-spm's
    # (read here with the test's own GGUF codec): compatible, in both orders. The pinned
    # llama-server accepts the pair too (test_llamacpp_binary.py, where it then aborts only
    # once an id >= 32000 is produced).
    spm, phi3 = v["ggml-vocab-llama-spm.gguf"], v["ggml-vocab-phi-3.gguf"]
    assert (spm["eos"], phi3["eos"], spm["add_eos"], phi3["add_eos"]) == (2, 32000, False, False)
    assert phi3["n_tokens"] - spm["n_tokens"] == 64
    assert token_texts(read_kvs(files["ggml-vocab-phi-3.gguf"]))[:32000] == token_texts(
        read_kvs(files["ggml-vocab-llama-spm.gguf"]))
    assert oracle_compatible(spm, phi3) == (True, None)
    assert oracle_compatible(phi3, spm) == (True, None)
    assert oracle_compatible(v["ggml-vocab-bert-bge.gguf"], v["ggml-vocab-bert-bge.gguf"]) == (True, None)


def test_worker_survives_load_error_and_abort(files: dict[str, Path], tmp_path: Path) -> None:
    """A load error is reported with the loader's message; an abort (duplicate token
    text -> GGML_ASSERT) is reported as aborted and the next request still works."""
    src = files["ggml-vocab-llama-spm.gguf"]

    bad = tmp_path / "bad_bos_type.gguf"
    rewrite_gguf(src, bad, lambda m: m.set(make_kv("tokenizer.ggml.bos_token_id", 1, VT.INT32)))
    r = llama_values(bad)
    assert r["loaded"] is False and r["aborted"] is False
    assert "wrong type i32 but expected type u32" in r["error"]

    dup = tmp_path / "dup.gguf"

    def make_dup(m):
        t = token_texts(m)
        t[7] = t[8]
        set_tokens(m, t)

    rewrite_gguf(src, dup, make_dup)
    r = llama_values(dup)
    assert r["loaded"] is False and r["aborted"] is True
    assert "GGML_ASSERT" in r["error"]

    assert llama_values(files["ggml-vocab-phi-3.gguf"])["loaded"] is True


def test_overrides_are_applied(files: dict[str, Path]) -> None:
    """--override-kv style: add_bos forced false on an SPM file (default true)."""
    src = files["ggml-vocab-llama-spm.gguf"]
    r = llama_values(src, {"tokenizer.ggml.add_bos_token": False})
    assert r["loaded"] and r["add_bos"] is False
    assert llama_values(src)["add_bos"] is True
