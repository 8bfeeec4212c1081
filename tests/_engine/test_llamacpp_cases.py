"""The cases that separate a correct mirror of llama.cpp from a naive one.

paircheck mirrors, from metadata alone, the vocab loader (src/llama-vocab.cpp,
``llama_vocab::impl::load``) and ``common_speculative_are_compatible`` (common/speculative.cpp)
of the pinned llama.cpp: the tree vendored in the llama-cpp-python 0.3.36 sdist on PyPI
(``vendor/llama.cpp``; ``tests/llamacpp_build.py`` extracts it). The numbered cases below are
the edges of those two functions: a size difference of exactly 128 or 129, texts differing
at id 4 or 5, a missing add_bos key against true or false, BOS ids compared only when added,
out-of-range ids, the BPE pre-tokenizers that change add_bos, empty and NUL-cut texts,
vocabularies without texts, overrides, a big-endian file.

Each case is checked three ways: paircheck's verdict against the expectation written here;
libllama itself (``tests/oracle.py``: llama.cpp's loader through llama-cpp-python) on the same
vocab files; and, on tiny runnable models carrying those vocabularies, the pinned
llama-server with ``-md --spec-type draft-simple`` (``tests/llamacpp_pair.py``), whose
behaviour must be what paircheck says of the same two files. Target T is SPM ("llama"),
400 tokens, no bos/eos/add keys unless a case says otherwise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import llamacpp_build
import pytest
from llamacpp_pair import disagreements, paircheck_report, run_pair
from oracle import llama_values, oracle_compatible, require_oracle
from tiny_model import TinyShape, write_tiny_llama

from paircheck.pipeline import check_pair, describe

T: dict[str, Any] = {}

CASES: list[tuple[str, dict[str, Any], dict[str, Any], str | None]] = [
    # id, target kwargs, draft kwargs, expected first failure (None = compatible)
    ("1-diff-128-larger", T, {"n_tokens": 528}, None),
    ("2-diff-129-larger", T, {"n_tokens": 529}, "vocab_size"),
    ("3a-diff-128-smaller", T, {"n_tokens": 272}, None),
    ("3b-diff-129-smaller", T, {"n_tokens": 271}, "vocab_size"),
    ("4-text-at-4", T, {"replace": {4: "other"}}, None),
    ("5-text-at-5", T, {"replace": {5: "other"}}, "token_text"),
    ("6a-text-at-last-shared", T, {"replace": {399: "other"}}, "token_text"),
    ("6b-text-in-tail", T, {"n_tokens": 450, "replace": {420: "other"}}, None),
    ("7-missing-add-bos-vs-true", T, {"add_bos": True}, None),
    ("8-missing-add-bos-vs-false", T, {"add_bos": False}, "bos"),
    ("9-no-bos-ids-ignored", {"add_bos": False}, {"add_bos": False, "bos": 7}, None),
    ("10-both-add-bos-ids-differ", T, {"bos": 7}, "bos"),
    ("11-no-eos-ids-ignored", T, {"eos": 9}, None),
    ("12a-both-add-eos-ids-differ", {"add_eos": True}, {"add_eos": True, "eos": 9}, "eos"),
    ("12b-add-eos-differs", T, {"add_eos": True}, "eos"),
    ("13a-bos-out-of-range-keeps-default", T, {"bos": 100000}, None),
    ("13b-bos-ffffffff-keeps-default", T, {"bos": 0xFFFFFFFF}, None),
    ("16-bpe-nopre-vs-llama-bpe", {"model": "gpt2"}, {"model": "gpt2", "pre": "llama-bpe"}, "bos"),
    ("17-llama-bpe-key-beats-pre", {"model": "gpt2"}, {"model": "gpt2", "pre": "llama-bpe", "add_bos": False}, None),
    ("25-spm-vs-bpe", T, {"model": "gpt2"}, "vocab_type"),
    ("25b-gpt2-vs-gemma4-same-type", {"model": "gpt2", "add_bos": True, "bos": 2}, {"model": "gemma4", "bos": 2}, None),
    ("23-empty-vs-word", {"replace": {300: b""}}, T, "token_text"),
    ("22-empty-vs-literal", {"replace": {300: b""}}, {"replace": {300: "[EMPTY_300]"}}, None),
    ("27-unknown-pre-on-bpe", T, {"model": "gpt2", "pre": "no-such-pre"}, "loadable"),
    ("27b-unknown-pre-on-spm-ignored", T, {"pre": "no-such-pre"}, None),
]


@pytest.mark.parametrize("case,target,draft,expected", CASES, ids=[c[0] for c in CASES])
def test_section9_case(gguf_factory, case: str, target: dict, draft: dict, expected: str | None) -> None:
    t = gguf_factory(f"{case}-t.gguf", **target)
    d = gguf_factory(f"{case}-d.gguf", **draft)
    report = check_pair(str(t), str(d))
    first = report.first_failure
    assert (first.name if first else None) == expected, [c.message for c in report.failures]
    assert report.compatible is (expected is None)


# --------------------------------------------------------------------------- through llama.cpp


@pytest.fixture(scope="module")
def oracle() -> None:
    require_oracle()


@pytest.fixture(scope="module")
def server_bin() -> Path:
    return llamacpp_build.ensure_tools()["llama-server"]


#: The runnable models only carry the vocabulary: one layer of width 16.
SHAPE = TinyShape(n_embd=16, n_layer=1, n_head=2, n_head_kv=2, n_ff=32, n_ctx=256)


@pytest.mark.parametrize("case,target,draft,expected", CASES, ids=[c[0] for c in CASES])
def test_section9_case_through_libllama(oracle, gguf_factory, case: str, target: dict, draft: dict,
                                        expected: str | None) -> None:
    """What libllama's loader derives from each file decides the case as expected."""
    t = llama_values(gguf_factory(f"{case}-t.gguf", **target))
    d = llama_values(gguf_factory(f"{case}-d.gguf", **draft))
    assert oracle_compatible(t, d) == (expected is None, expected), (t.get("error"), d.get("error"))


@pytest.mark.slow  # runs the pinned llama-server
@pytest.mark.parametrize("case,target,draft,expected", CASES, ids=[c[0] for c in CASES])
def test_section9_case_through_llama_server(oracle, server_bin: Path, gguf_factory, tmp_path: Path, case: str,
                                            target: dict, draft: dict, expected: str | None) -> None:
    """llama-server on runnable models of the two vocabularies does what paircheck says of
    those model files, and that is the case's expectation."""
    t = write_tiny_llama(tmp_path / "t-model.gguf", gguf_factory(f"{case}-t.gguf", **target), seed=0, shape=SHAPE)
    d = write_tiny_llama(tmp_path / "d-model.gguf", gguf_factory(f"{case}-d.gguf", **draft), seed=1, shape=SHAPE)
    report = paircheck_report(t, d)
    first = report.first_failure
    assert (first.name if first else None) == expected
    got = run_pair(server_bin, t, d, tmp_path / "server.log")
    problems = disagreements(report, got, t, d)
    assert problems == [], f"{case}: {got.summary()}\n" + "\n".join(problems)


def test_case_14_15_wrong_key_types_fail_the_load(gguf_factory) -> None:
    from gguf import GGUFValueType

    bos_i32 = gguf_factory(raw_kv=[("tokenizer.ggml.bos_token_id", GGUFValueType.INT32, 1)])
    add_u8 = gguf_factory(raw_kv=[("tokenizer.ggml.add_bos_token", GGUFValueType.UINT8, 1)])
    v1 = describe(str(bos_i32)).vocab
    v2 = describe(str(add_u8)).vocab
    assert v1.load_error == "key tokenizer.ggml.bos_token_id has wrong type i32 but expected type u32"
    assert v2.load_error == "key tokenizer.ggml.add_bos_token has wrong type u8 but expected type bool"
    report = check_pair(str(gguf_factory()), str(bos_i32))
    assert [c.status for c in report.checks][:2] == ["pass", "fail"]
    assert report.first_failure.details["side"] == "draft"


def test_case_14_15_through_libllama(oracle, gguf_factory) -> None:
    """llama.cpp's loader refuses both files with exactly the message paircheck quotes."""
    from gguf import GGUFValueType

    for key, vtype in (("tokenizer.ggml.bos_token_id", GGUFValueType.INT32),
                       ("tokenizer.ggml.add_bos_token", GGUFValueType.UINT8)):
        path = gguf_factory(raw_kv=[(key, vtype, 1)])
        r = llama_values(path)
        assert r["loaded"] is False and r["aborted"] is False
        assert describe(str(path)).vocab.load_error in r["error"]


LOADER_DEFAULTS = [
    ({"model": "gpt2"}, 11, 11, False, False),  # case 20: BPE defaults are 11, not -1
    ({"model": "bert"}, 101, -1, True, False),  # case 21: WPM
    ({"model": "t5"}, -1, 1, False, True),  # case 21: UGM
    ({"model": "gpt2", "pre": "chatglm-bpe"}, -1, 11, False, False),  # case 19
    ({"model": "gpt2", "pre": "glm4", "bos": 7}, 7, 11, False, False),  # case 19
    ({"model": "gemma4", "add_bos": False}, -1, -1, True, False),  # case 18: forced
    ({"model": "gpt2", "pre": "granite-embed-multi-311m", "add_bos": False}, 11, 11, True, False),
    ({"n_tokens": 2, "tokens": ["<unk>", "<s>"]}, 1, -1, True, False),  # case 28
]


@pytest.mark.parametrize("kwargs,bos,eos,add_bos,add_eos", LOADER_DEFAULTS)
def test_loader_defaults(gguf_factory, kwargs, bos, eos, add_bos, add_eos) -> None:
    v = describe(str(gguf_factory(**kwargs))).vocab
    assert v.load_error is None
    assert (v.bos_id, v.eos_id, v.add_bos, v.add_eos) == (bos, eos, add_bos, add_eos)


@pytest.mark.parametrize("kwargs,bos,eos,add_bos,add_eos", LOADER_DEFAULTS)
def test_loader_defaults_through_libllama(oracle, gguf_factory, kwargs, bos, eos, add_bos, add_eos) -> None:
    r = llama_values(gguf_factory(**kwargs))
    assert r["loaded"], r.get("error")
    assert (r["bos"], r["eos"], r["add_bos"], r["add_eos"]) == (bos, eos, add_bos, add_eos)


def test_case_24_nul_duplicate_aborts_and_nul_is_cut(gguf_factory) -> None:
    dup = describe(str(gguf_factory(replace={7: b"\xe2\x96\x81w6\x00b"}))).vocab
    assert dup.failure is not None and dup.failure.aborts
    cut = describe(str(gguf_factory(replace={7: b"abc\x00def"}))).vocab
    assert cut.load_error is None and cut.texts[7] == b"abc"


def test_case_24_through_libllama(oracle, gguf_factory) -> None:
    dup = llama_values(gguf_factory(replace={7: b"\xe2\x96\x81w6\x00b"}))
    assert dup["aborted"] is True and "GGML_ASSERT(id_to_token.size() == token_to_id.size())" in dup["error"]
    cut = llama_values(gguf_factory(replace={7: b"abc\x00def"}))
    assert cut["loaded"] and cut["texts"][7] == b"abc"


@pytest.mark.slow  # runs the pinned llama-server
def test_case_24_through_llama_server(oracle, server_bin: Path, gguf_factory, tmp_path: Path) -> None:
    """A draft whose texts collide once cut at NUL: paircheck says the process aborts, and it does."""
    t = write_tiny_llama(tmp_path / "t.gguf", gguf_factory(), seed=0, shape=SHAPE)
    d = write_tiny_llama(tmp_path / "d.gguf", gguf_factory(replace={7: b"\xe2\x96\x81w6\x00b"}), seed=1, shape=SHAPE)
    report = paircheck_report(t, d)
    assert report.first_failure.name == "loadable" and report.first_failure.details["aborts"]
    got = run_pair(server_bin, t, d, tmp_path / "server.log")
    assert disagreements(report, got, t, d) == [], got.summary()


def test_case_26_no_vocab(gguf_factory) -> None:
    small = gguf_factory(model="no_vocab", vocab_size=4)
    other = gguf_factory(model="none", vocab_size=5)
    big1 = gguf_factory(model="no_vocab", vocab_size=1000)
    big2 = gguf_factory(model="none", vocab_size=1000)
    assert check_pair(str(small), str(other)).compatible
    report = check_pair(str(big1), str(big2))
    assert not report.compatible and report.first_failure.name == "token_text"
    assert report.first_failure.details["aborts"] is True


@pytest.mark.slow  # runs the pinned llama-server
def test_case_26_through_libllama_and_llama_server(oracle, server_bin: Path, gguf_factory, tmp_path: Path) -> None:
    """Without texts llama.cpp loads both files (type NONE, the size from <arch>.vocab_size);
    with more than 5 ids the check itself asserts, which only the real binary can show."""
    pairs = {"small": ({"model": "no_vocab", "vocab_size": 4}, {"model": "none", "vocab_size": 5}),
             "big": ({"model": "no_vocab", "vocab_size": 1000}, {"model": "none", "vocab_size": 1000})}
    outcomes = {}
    for name, (tk, dk) in pairs.items():
        tv, dv = gguf_factory(f"{name}-t.gguf", **tk), gguf_factory(f"{name}-d.gguf", **dk)
        lt, ld = llama_values(tv), llama_values(dv)
        assert (lt["vocab_type"], lt["n_tokens"], ld["vocab_type"], ld["n_tokens"]) == (
            0, tk["vocab_size"], 0, dk["vocab_size"])
        t = write_tiny_llama(tmp_path / f"{name}-t-model.gguf", tv, seed=0, shape=SHAPE)
        d = write_tiny_llama(tmp_path / f"{name}-d-model.gguf", dv, seed=1, shape=SHAPE)
        report = paircheck_report(t, d)
        got = run_pair(server_bin, t, d, tmp_path / f"{name}.log")
        assert disagreements(report, got, t, d) == [], got.summary()
        outcomes[name] = got.outcome
    assert outcomes == {"small": "accepted", "big": "aborted_checking"}


def test_case_29_override_applies_to_both(gguf_factory) -> None:
    t, d = gguf_factory(), gguf_factory(add_bos=False)
    assert check_pair(str(t), str(d)).first_failure.name == "bos"
    report = check_pair(str(t), str(d), overrides={"tokenizer.ggml.add_bos_token": ("bool", False)})
    assert report.compatible


@pytest.mark.slow  # runs the pinned llama-server
def test_case_29_through_libllama_and_llama_server(oracle, server_bin: Path, gguf_factory, tmp_path: Path) -> None:
    """--override-kv reaches both models: the BOS mismatch is gone in the real server too."""
    tv, dv = gguf_factory("t.gguf"), gguf_factory("d.gguf", add_bos=False)
    override = {"tokenizer.ggml.add_bos_token": False}
    assert (llama_values(tv)["add_bos"], llama_values(dv)["add_bos"]) == (True, False)
    assert (llama_values(tv, override)["add_bos"], llama_values(dv, override)["add_bos"]) == (False, False)
    t = write_tiny_llama(tmp_path / "t-model.gguf", tv, seed=0, shape=SHAPE)
    d = write_tiny_llama(tmp_path / "d-model.gguf", dv, seed=1, shape=SHAPE)
    outcomes = []
    for flags, overrides in (((), None), (("--override-kv", "tokenizer.ggml.add_bos_token=bool:false"),
                                          {"tokenizer.ggml.add_bos_token": ("bool", False)})):
        report = paircheck_report(t, d, overrides=overrides)
        got = run_pair(server_bin, t, d, tmp_path / "server.log", extra=flags)
        assert disagreements(report, got, t, d) == [], got.summary()
        outcomes.append((got.outcome, got.check))
    assert outcomes == [("incompatible", "bos"), ("accepted", None)]


def test_text_failure_names_id_and_both_texts(gguf_factory) -> None:
    t = gguf_factory(replace={123: "a b\n"})
    d = gguf_factory(replace={123: "a\tb"})
    failure = check_pair(str(t), str(d)).first_failure
    assert failure.details["first_id"] == 123
    assert failure.details["target_text"] == repr("a b\n")
    assert failure.details["draft_text"] == repr("a\tb")


def test_vocab_tail_warning_names_the_range(real_vocab) -> None:
    report = check_pair(str(real_vocab("llama-spm")), str(real_vocab("phi-3")))
    assert report.compatible
    tail = next(w for w in report.warnings if w.name == "vocab_tail")
    assert (tail.details["larger"], tail.details["first_id"], tail.details["last_id"]) == ("draft", 32000, 32063)
    assert "32000..32063" in tail.message
    reverse = check_pair(str(real_vocab("phi-3")), str(real_vocab("llama-spm")))
    assert next(w for w in reverse.warnings if w.name == "vocab_tail").details["larger"] == "target"


def test_big_endian_file_is_read_but_llamacpp_refuses_it(gguf_factory) -> None:
    le = describe(str(gguf_factory(bos=7)))
    be = describe(str(gguf_factory(bos=7, endian="big")))
    assert be.metadata.big_endian and not le.metadata.big_endian
    assert be.metadata.get("tokenizer.ggml.bos_token_id") == 7
    assert be.metadata.get("tokenizer.ggml.tokens").values == le.metadata.get("tokenizer.ggml.tokens").values
    assert be.vocab.failure is not None and "big-endian" in be.vocab.failure.message


def test_big_endian_file_through_libllama(oracle, gguf_factory) -> None:
    """The claim above, from llama.cpp itself: on this (little-endian) host its GGUF reader
    refuses the big-endian file (the version reads byte-swapped) and loads the other."""
    import sys

    assert sys.byteorder == "little"
    be = llama_values(gguf_factory(bos=7, endian="big"))
    assert be["loaded"] is False and be["aborted"] is False
    assert "mismatch between the host and model endianness" in be["error"]
    assert llama_values(gguf_factory(bos=7))["loaded"] is True


def test_gguf_v2_reads_like_v3(gguf_factory) -> None:
    v2 = describe(str(gguf_factory(version=2)))
    v3 = describe(str(gguf_factory()))
    assert v2.metadata.version == 2 and v3.metadata.version == 3
    assert v2.vocab.texts == v3.vocab.texts and v2.vocab.load_error is None
    assert check_pair(str(gguf_factory(version=2)), str(gguf_factory())).compatible


def test_bos_override_is_suggested_only_when_it_makes_the_pair_pass(gguf_factory) -> None:
    from paircheck.pipeline import check_pair

    # Only the add_bos flag differs: the override with the value that works is named...
    t, d = gguf_factory(add_bos=True), gguf_factory(add_bos=False)
    bos = check_pair(str(t), str(d), registry=False).finding("LC003")
    assert bos is not None and bos.status == "fail"
    assert bos.fix is not None and "add_bos_token=bool:" in bos.fix
    value = bos.fix.split("bool:", 1)[1].split()[0]
    fixed = check_pair(
        str(t), str(d), registry=False, overrides={"tokenizer.ggml.add_bos_token": ("bool", value == "true")}
    )
    assert fixed.compatible  # ...and applying it really makes the pair pass
    # The flag differs but so do the texts: no override is suggested (it would only move the failure).
    other = gguf_factory(add_bos=False, replace={100: "something else"})
    bos = check_pair(str(t), str(other), registry=False).finding("LC003")
    assert bos is not None and bos.status == "fail" and bos.fix is not None and "override" not in bos.fix
