"""llama.cpp's draft-simple rule (paircheck._engine.llamacpp) on in-memory vocabularies and
descriptions: the loadable check and its messages, the five checks of
common_speculative_are_compatible, the --override-kv suggestion, every warning, llama-server's
own words and the launch lines. File-free, for the mutation run (engine.llamacpp); the same
rules on real files are in tests/_engine/test_llamacpp_cases.py and test_engines.py."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from rule_desc import desc, texts, vocab

from paircheck import constants as K
from paircheck import llamacpp_tables as T
from paircheck._engine import llamacpp as L
from paircheck.findings import FAIL, PASS, SKIP, WARN, Finding
from paircheck.model import Download, GGUFArray, LoadFailure, ModelDescription, Origin, TensorSectionError

NGRAM = ["No draft needed: the n-gram methods draft from the prompt and the output so far, for example:",
         "llama-server -m t.gguf --spec-type ngram-mod"]
LAUNCH = ["llama-server -m t.gguf -md d.gguf --spec-type draft-simple",
          "Without --spec-type the draft is loaded but never used, silently."]


def pair(t: Any = None, d: Any = None, **kw: Any) -> tuple[ModelDescription, ModelDescription]:
    return desc("t.gguf", v=t if t is not None else vocab(), **kw), desc("d.gguf", v=d if d is not None else vocab(),
                                                                           **kw)


def cut(file: str = "/m/t.gguf", have: int | None = 1000, need: int | None = 5000, **kw: Any) -> TensorSectionError:
    return TensorSectionError("tensor 'blk.0.w' data is not within the file bounds, model is corrupted or "
                              "incomplete", file, have, need, incomplete=True, **kw)


# --- loadable ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("n", "shown"), [(999, "999 bytes"), (1000, "1.0 KB"), (1_500_000, "1.5 MB"),
                                          (2_000_000_000, "2.0 GB"), (999_999, "1000.0 KB"),
                                          (1_000_000_000, "1.0 GB"), (1_000_000, "1.0 MB")])
def test_size_text(n: int, shown: str) -> None:
    assert L._size_text(n) == shown


def test_incomplete_reason() -> None:
    d = desc("t.gguf")
    d.resolved_path = "/m/t.gguf"
    assert L._incomplete_reason(cut(), d) == ("the file is incomplete: 1.0 KB of 5.0 KB; the download was probably "
                                              "interrupted")
    assert L._incomplete_reason(cut(have=1_000_100, need=1_000_200), d) == (
        "the file is incomplete: 1,000,100 bytes of 1,000,200 bytes; the download was probably interrupted")
    assert L._incomplete_reason(cut(file="/m/t-00002-of-00003.gguf"), d).startswith(
        "shard t-00002-of-00003.gguf is incomplete: 1.0 KB of 5.0 KB")
    assert L._incomplete_reason(cut(file="C:\\m\\x.safetensors", loader="safetensors"), d).startswith(
        "file x.safetensors is incomplete")
    assert L._incomplete_reason(cut(), None).startswith("the file is incomplete")
    assert L._incomplete_reason(cut(need=None), d) == ("the file is incomplete: it ends after 1.0 KB inside its list "
                                                       "of tensors; the download was probably interrupted")
    assert L._incomplete_reason(cut(have=6000), d).startswith("the file is incomplete: it ends after 6.0 KB")
    assert L._incomplete_reason(cut(have=None), d) == ("the file is incomplete: it ends inside its list of tensors; "
                                                       "the download was probably interrupted")
    assert L._incomplete_reason(cut(have=None, loader="safetensors"), d).endswith("it ends inside its header; the "
                                                                                  "download was probably interrupted")
    assert L._incomplete_reason(cut(reason="shard 2 of 3 is missing"), d) == "shard 2 of 3 is missing"


def test_incomplete_fix() -> None:
    assert L._incomplete_fix(None, cut()) == ("Resume the download (e.g. `wget -c URL -O /m/t.gguf` or `curl -C - -o "
                                              "/m/t.gguf URL`) or download the file again.")
    hub = desc("org/x", form="hf-folder")
    assert L._incomplete_fix(hub, cut(file="https://hf.co/x.safetensors", loader="safetensors")).startswith(
        "The copy on the Hub is itself incomplete")
    assert L._incomplete_fix(hub, cut(file="https://hf.co/x.gguf")).startswith("Resume the download")
    assert L._incomplete_fix(hub, cut(file="/m/x.safetensors", loader="safetensors")).startswith("Resume the download")
    remote = desc("https://h/x.gguf")
    remote.origin = Origin("https://h/x.gguf", "gguf", remote=True)
    assert L._incomplete_fix(remote, cut()) == ("The file on the server is itself cut short: tell its publisher, or "
                                                "take another copy or quant.")
    resumed = desc("x")
    resumed.origin = Origin("x", "gguf", download=Download(("hf download org/x", "wget -c URL"), True, "URL: a link"))
    assert L._incomplete_fix(resumed, cut()) == "Resume the download: hf download org/x (or: wget -c URL) (URL: a link)"
    again = desc("x")
    again.origin = Origin("x", "gguf", download=Download(("hf download org/x f.gguf",), False))
    assert L._incomplete_fix(again, cut()) == "Download it again: hf download org/x f.gguf"


def test_check_loadable() -> None:
    ok = L.check_loadable("target", vocab())
    assert (ok.code, ok.status, ok.message, ok.details) == ("LC001", PASS, "target: llama.cpp loads the vocabulary",
                                                            {"side": "target"})
    refused = L.check_loadable("draft", vocab(failure=LoadFailure("unknown pre-tokenizer type: 'x'")))
    assert (refused.status, refused.message) == (FAIL, "draft: llama.cpp refuses to load it: unknown pre-tokenizer "
                                                       "type: 'x'")
    assert refused.details == {"side": "draft", "error": "unknown pre-tokenizer type: 'x'", "aborts": False}
    assert refused.fix == L.R_LOADABLE.fix
    dies = L.check_loadable("draft", vocab(failure=LoadFailure("GGML_ASSERT(x) aborts the process", aborts=True)))
    assert dies.message == "draft: llama.cpp aborts the process while loading it: GGML_ASSERT(x) aborts the process"
    assert dies.details["aborts"] is True
    clip = desc("mmproj.gguf", arch="clip", v=vocab(failure=LoadFailure("no vocab")))
    projector = L.check_loadable("draft", clip.vocab, clip)
    assert projector.message == ("draft: a vision projector (mmproj: general.architecture clip), not a language model; "
                                 "llama.cpp refuses to load it: no vocab")
    assert projector.fix == ("Give the language model itself as the draft; a projector goes to llama-server beside its "
                             "model, with --mmproj.")


def test_check_loadable_tensor_section() -> None:
    d = desc("t.gguf")
    d.resolved_path = "/m/t.gguf"
    d.metadata.tensor_error = cut()
    found = L.check_loadable("target", d.vocab, d)
    assert found.message == ("target: the file is incomplete: 1.0 KB of 5.0 KB; the download was probably interrupted. "
                             "llama.cpp refuses to load it: tensor 'blk.0.w' data is not within the file bounds, model "
                             "is corrupted or incomplete")
    assert found.details == {"side": "target", "error": cut().message, "aborts": False, "incomplete": True,
                             "file": "/m/t.gguf", "file_size": 1000, "needed": 5000, "loader": "llama.cpp"}
    assert found.fix is not None and found.fix.startswith("Resume the download (e.g. `wget -c URL -O /m/t.gguf`")
    d.vocab = vocab(failure=LoadFailure("bad vocab"))
    assert L.check_loadable("target", d.vocab, d).message.endswith(" (and then: bad vocab)")
    d.metadata.kv_complete = False  # cut inside the keys: the vocabulary's failure is the same cut
    assert not L.check_loadable("target", d.vocab, d).message.endswith("bad vocab)")
    corrupt = desc("t.gguf")
    corrupt.metadata.tensor_error = TensorSectionError("tensor 'x' has offset 5, expected 0", "/m/t.gguf", 10, None)
    plain = L.check_loadable("target", corrupt.vocab, corrupt)
    assert plain.message == "target: llama.cpp refuses to load it: tensor 'x' has offset 5, expected 0"
    assert plain.fix == L.R_LOADABLE.fix
    corrupt.metadata.tensor_error = TensorSectionError("m", "/m/x", 10, None, loader="safetensors",
                                                       reason="a shard is missing")
    assert L.check_loadable("draft", corrupt.vocab, corrupt).message == ("draft: a shard is missing. safetensors "
                                                                         "refuses to load it: m")


# --- the five checks --------------------------------------------------------------------------

def test_check_vocab_type() -> None:
    ok = L.check_vocab_type(vocab(), vocab())
    assert (ok.code, ok.status, ok.message) == ("LC002", PASS, "both are BPE")
    assert ok.details == {"target": T.VOCAB_BPE, "draft": T.VOCAB_BPE, "target_name": "BPE", "draft_name": "BPE"}
    bad = L.check_vocab_type(vocab(), vocab(vocab_type=T.VOCAB_SPM))
    assert (bad.status, bad.message) == (FAIL, "vocab types differ: target BPE (gpt2), draft SPM (llama)")
    assert bad.details == {"target": T.VOCAB_BPE, "draft": T.VOCAB_SPM, "target_name": "BPE", "draft_name": "SPM"}


def test_check_bos_and_eos() -> None:
    neither = L.check_bos(vocab(bos=1), vocab(bos=7))
    assert (neither.code, neither.status, neither.message) == ("LC003", PASS, "neither adds BOS (ids not compared)")
    assert neither.details == {"target_add": False, "draft_add": False, "target_id": 1, "draft_id": 7}
    both = L.check_bos(vocab(add_bos=True), vocab(add_bos=True))
    assert (both.status, both.message) == (PASS, "both add BOS 1")
    ids = L.check_bos(vocab(add_bos=True, bos=1), vocab(add_bos=True, bos=7))
    assert (ids.status, ids.message) == (FAIL, "both add BOS but the ids differ: target 1, draft 7")
    one = L.check_bos(vocab(add_bos=True), vocab())
    assert (one.status, one.message) == (FAIL, "the target adds BOS, the draft never adds it (add: 1 - 0)")
    other = L.check_bos(vocab(), vocab(add_bos=True))
    assert other.message == "the target never adds BOS, the draft adds it (add: 0 - 1)"
    eos = L.check_eos(vocab(add_eos=True), vocab())
    assert (eos.code, eos.message) == ("LC004", "the target appends EOS, the draft never appends it (add: 1 - 0)")
    assert L.check_eos(vocab(add_eos=True, eos=2), vocab(add_eos=True, eos=3)).message == (
        "both add EOS but the ids differ: target 2, draft 3")
    assert L.check_eos(vocab(eos=2), vocab(eos=3)).status == PASS


def test_check_vocab_size() -> None:
    ok = L.check_vocab_size(vocab(300), vocab(428))
    assert (ok.code, ok.status, ok.message) == ("LC005", PASS, "300 vs 428 tokens (difference 128 <= 128)")
    assert ok.details == {"target": 300, "draft": 428, "difference": 128, "max_difference": 128}
    bad = L.check_vocab_size(vocab(429), vocab(300))
    assert (bad.status, bad.message) == (FAIL, "token counts differ by 129: target 429, draft 300 (at most 128 "
                                               "allowed)")
    assert bad.details == {"target": 429, "draft": 300, "difference": 129, "max_difference": 128}


def test_first_text_difference() -> None:
    assert L.first_text_difference(vocab(300), vocab(400)) is None
    differ = vocab(300, token_texts=texts(5) + [b"x"] + texts(300)[6:])
    assert L.first_text_difference(vocab(300), differ) == 5
    early = vocab(300, token_texts=[b"x"] * 5 + texts(300)[5:])
    assert L.first_text_difference(vocab(300), early) is None  # ids 0-4 are not compared
    assert L.first_text_difference(vocab(5), vocab(5, token_texts=[b"x"] * 5)) is None
    assert L.first_text_difference(vocab(6), vocab(6, token_texts=texts(5) + [b"x"])) == 5
    big = texts(10_000)
    for at in (4_100, 8_191, 8_192, 9_999):
        changed = big[:at] + [b"x"] + big[at + 1:]
        assert L.first_text_difference(vocab(10_000, token_texts=big), vocab(10_000, token_texts=changed)) == at
    # the count, not the list's length, bounds the comparison
    longer = vocab(300, token_texts=texts(300) + [b"x"])
    assert L.first_text_difference(vocab(300, token_texts=texts(300) + [b"y"]), longer) is None


def test_check_token_text() -> None:
    ok = L.check_token_text(vocab(300), vocab(310))
    assert (ok.code, ok.status, ok.message, ok.details) == ("LC006", PASS, "295 token texts equal (ids 5..299)",
                                                            {"compared": 295})
    tiny = L.check_token_text(vocab(3), vocab(3))
    assert tiny.message == "0 token texts equal (ids 5..2)" and tiny.details == {"compared": 0}
    other = vocab(300, token_texts=texts(7) + [b"x\n"] + texts(300)[8:10] + [b"y"] * 290)
    bad = L.check_token_text(vocab(300), other)
    assert (bad.status, bad.message) == (FAIL, "token 7 differs: target 't7', draft 'x\\n' (291 of 295 compared ids "
                                               "differ)")
    assert bad.details == {"first_id": 7, "target_text": "'t7'", "draft_text": "'x\\n'", "differing": 291,
                           "compared": 295}
    none = vocab(10, vocab_type=T.VOCAB_NONE)
    both = L.check_token_text(none, none)
    assert (both.status, both.message) == (FAIL, "neither vocabulary has token texts: llama.cpp aborts (GGML_ASSERT) "
                                                 "when it reads them")
    assert both.details == {"first_id": 5, "aborts": True}
    one = L.check_token_text(none, vocab(10))
    assert (one.status, one.message) == (SKIP, "no token texts to compare (vocab type NONE)")
    assert L.check_token_text(vocab(10), none).status == SKIP
    short = vocab(5, vocab_type=T.VOCAB_NONE)
    assert L.check_token_text(short, short).status == PASS
    assert L.check_token_text(short, vocab(5)).status == PASS


def test_run_checks_skip_when_a_file_does_not_load() -> None:
    broken = vocab(failure=LoadFailure("x"))
    checks = L.run_checks(broken, vocab())
    assert [(c.code, c.status) for c in checks] == [("LC001", FAIL), ("LC001", PASS)] + [
        (code, SKIP) for code in ("LC002", "LC003", "LC004", "LC005", "LC006")]
    assert checks[2].message == "not checked: a file does not load"
    assert [c.status for c in L.run_checks(vocab(), broken)][2:] == [SKIP] * 5
    assert [c.status for c in L.run_checks(vocab(), vocab())] == [PASS] * 7


def test_bos_override_suggestion() -> None:
    checks = L.run_checks(vocab(add_bos=True), vocab())
    assert checks[3].fix == ("--override-kv tokenizer.ggml.add_bos_token=bool:false makes the pair pass (llama-server "
                             "applies it to both models, so one of them then sees prompts it was not trained on); a "
                             "draft from the same family needs no override.")
    # ids differ while both add BOS: with add_bos false they are not compared
    ids = L.run_checks(vocab(add_bos=True, bos=1), vocab(add_bos=True, bos=7))
    assert "bool:false" in str(ids[3].fix)
    # when another check still fails, no override is suggested
    blocked = L.run_checks(vocab(add_bos=True), vocab(add_eos=True))
    assert blocked[3].fix == L.SAME_FAMILY_FIX
    # an override to true: both must add the same id
    t = vocab(add_bos=False, bos=1)
    d = vocab(add_bos=True, bos=1)
    assert "bool:false" in str(L.run_checks(t, d)[3].fix)
    assert L.run_checks(vocab(), vocab())[3].fix is None


def test_bos_fix_without_a_way_out() -> None:
    # add_bos false passes LC003 whatever the ids, and no other check reads add_bos, so when false does
    # not make the pair pass nothing does: the fix is the same-family one
    checks = [L.R_BOS.result(FAIL, "x")]
    L._bos_fix(vocab(), vocab(vocab_type=T.VOCAB_SPM), checks)
    assert checks[0].fix == L.SAME_FAMILY_FIX


# --- warnings -------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "padding"), [(b"[PAD123]", True), (b"<|PAD_TOKEN|>", True), (b"<pad_1>", True),
                                               (b"[pad]", True), (b"<unused99>", True), (b"[UNUSED_1]", True),
                                               (b"<|unused_3|>", True), (b"<|reserved_special_token_0|>", True),
                                               (b"<|extra_1|>", True), (b"hello", False), (b" [PAD]", False)])
def test_is_padding(text: bytes, padding: bool) -> None:
    assert L._is_padding(text) is padding


def test_vocab_tail_draft_has_real_tokens() -> None:
    d = vocab(305, token_texts=texts(300) + [b"[PAD0]", b"new", b"[PAD2]", b"more", b"last"])
    found = L.warn_vocab_tail(vocab(300), d)
    assert found is not None and (found.code, found.status) == ("LW101", WARN)
    assert found.message == ("the draft has ids 300..304 that the target lacks; llama-server aborts (get_sub_batch: "
                             "failed to add token) the first time the draft proposes one (3 of them are real tokens; "
                             "e.g. 301 'new', 303 'more', 304 'last')")
    assert found.details == {"larger": "draft", "first_id": 300, "last_id": 304, "real_tokens": 3,
                             "real_ids": [301, 303, 304], "aborts": True,
                             "abort": "llama-server loads the pair, then aborts the first time the draft proposes "
                                      "one of the 3 real tokens the target lacks among ids 300..304"}


def test_vocab_tail_target_larger_one_real_token() -> None:
    t = vocab(302, token_texts=texts(300) + [b"<|unused0|>", b"tool"])
    found = L.warn_vocab_tail(t, vocab(300))
    assert found is not None
    assert found.message == ("target ids 300..301 cannot be mirrored by the draft; llama-server aborts (get_sub_batch: "
                             "failed to add token) when the prompt or output contains one (1 of them are real tokens; "
                             "e.g. 301 'tool')")
    assert found.details["abort"] == ("llama-server loads the pair, then aborts when the prompt or output contains one "
                                      "of the target's 1 real token the draft lacks among ids 300..301")
    assert found.details["larger"] == "target" and "harmless" not in found.details


def test_vocab_tail_padding_only_or_none() -> None:
    t = vocab(304, token_texts=texts(300) + [b"[PAD0]", b"[PAD1]", b"[PAD2]", b"[PAD3]"])
    found = L.warn_vocab_tail(t, vocab(300))
    assert found is not None and found.details["aborts"] is False and found.details["harmless"] is True
    assert found.message.endswith("(all of them look like padding, which is never sampled: harmless, --strict does "
                                  "not fail on it; e.g. 300 '[PAD0]', 301 '[PAD1]', 302 '[PAD2]')")
    assert "abort" not in found.details and found.details["real_ids"] == []
    textless = L.warn_vocab_tail(vocab(302, token_texts=[]), vocab(300))
    assert textless is not None and "harmless" not in textless.details  # nothing read: not claimed harmless
    assert textless.message.endswith("e.g. 300 (none), 301 (none))")
    assert L.warn_vocab_tail(vocab(300), vocab(300)) is None
    assert L.warn_vocab_tail(vocab(300), vocab(429)) is None  # refused by LC005 anyway
    assert L.warn_vocab_tail(vocab(300), vocab(428)) is not None


def test_end_of_generation() -> None:
    t = vocab(300, eos=2, eog_ids=frozenset({2, 9}))
    d = vocab(300, eos=2, eog_ids=frozenset({2}))
    found = L.warn_end_of_generation(t, d)
    assert found is not None and (found.code, found.status) == ("LW102", WARN)
    assert found.message == ("the draft does not stop at the target's end-of-generation token(s) 't9': it keeps "
                             "drafting past the target's end")
    assert found.details == {"target_eog": ["'t2'", "'t9'"], "draft_eog": ["'t2'"], "target_eos": 2, "draft_eos": 2}
    many = vocab(300, eog_ids=frozenset({2, 3, 4, 5, 6, 400}))
    assert L.warn_end_of_generation(many, vocab(300)).message.startswith(  # type: ignore[union-attr]
        "the draft does not stop at the target's end-of-generation token(s) 't2', 't3', 't4', 't5': it")
    assert L.warn_end_of_generation(d, t) is None  # the draft stops at more: fine
    moved = vocab(300, eos=3, eog_ids=frozenset({2}))
    eos = L.warn_end_of_generation(vocab(300, eos=2, eog_ids=frozenset({2})), moved)
    assert eos is not None and eos.message == "EOS differs: target 2 't2', draft 3 't3'"
    same_text = vocab(300, eos=3, token_texts=texts(3) + [b"t2"] + texts(300)[4:])
    assert L.warn_end_of_generation(vocab(300, eos=2), same_text) is None  # another id, the same text
    assert L.warn_end_of_generation(vocab(0), d) is None and L.warn_end_of_generation(t, vocab(0)) is None


def test_loader_defaults() -> None:
    assert L.warn_loader_defaults("target", vocab()) is None
    v = vocab(loader_warnings=["empty token at index 5", "empty token at index 6", "a", "b", "c", "d"])
    found = L.warn_loader_defaults("draft", v)
    assert found is not None and (found.code, found.status) == ("LW103", WARN)
    assert found.message == "draft: a; b; c; d"
    assert found.details == {"side": "draft", "loader_warnings": ["a", "b", "c", "d", "2 empty token text(s) replaced "
                                                                                       "with [EMPTY_<id>]"]}
    only = L.warn_loader_defaults("target", vocab(loader_warnings=["empty token at index 1"]))
    assert only is not None and only.message == "target: 1 empty token text(s) replaced with [EMPTY_<id>]"


def merges(n: int) -> dict[str, Any]:
    return {K.MERGES: GGUFArray(8, n, None)}


def test_tokenization() -> None:
    t, d = pair(kv=merges(100))
    assert L.warn_tokenization(t, d) is None
    t2 = desc("t.gguf", v=replace(vocab(), pre="llama-bpe"), kv=merges(100))
    found = L.warn_tokenization(t2, d)
    assert found is not None and (found.code, found.status) == ("LW104", WARN)
    assert found.message == "pre-tokenizer 'llama-bpe' vs 'qwen2', the same number of merges (100)"
    assert found.details == {"target_pre": "llama-bpe", "draft_pre": "qwen2", "target_merges": 100,
                             "draft_merges": 100}
    d2 = desc("d.gguf", kv=merges(90))
    assert L.warn_tokenization(t, d2).message == "the same pre-tokenizer 'qwen2', 100 vs 90 merges"  # type: ignore
    assert L.warn_tokenization(t, desc("d.gguf")).details["draft_merges"] is None  # type: ignore[union-attr]
    spm = desc("d.gguf", v=vocab(vocab_type=T.VOCAB_SPM), kv=merges(90))
    assert L.warn_tokenization(t, spm) is None and L.warn_tokenization(spm, t) is None


@pytest.mark.parametrize(("arch", "method"), [("eagle3", "draft-eagle3"), ("dflash", "draft-dflash"),
                                              ("gemma4-assistant", "draft-mtp")])
def test_warn_head(arch: str, method: str) -> None:
    found = L.warn_head(desc(arch=arch))
    assert found is not None and (found.code, found.status) == ("LW105", WARN)
    assert found.message == f"the draft's architecture is {arch!r}: it is a head for {method}, not a standalone draft"
    assert found.details == {"architecture": arch, "method": method}
    assert L.warn_head(desc(arch="llama")) is None and L.warn_head(desc(arch=None)) is None


def test_warn_none() -> None:
    none6 = vocab(6, vocab_type=T.VOCAB_NONE)
    found = L.warn_none(none6, none6)
    assert found is not None and found.code == "LW106"
    assert found.message == "both files have no vocabulary; llama.cpp aborts while comparing them"
    assert L.warn_none(vocab(5, vocab_type=T.VOCAB_NONE), none6) is None
    assert L.warn_none(none6, vocab(6)) is None


# --- what llama-server says, and the report ---------------------------------------------------

def test_engine_message() -> None:
    t, d = pair()
    d.resolved_path = "/m/d.gguf"
    msg = L.engine_message
    loaded = L.R_LOADABLE.result(FAIL, "x", side="draft", error="e", aborts=False)
    assert msg(loaded, t, d) == "failed to load draft model, '/m/d.gguf', then: exiting due to model loading error"
    target_side = L.R_LOADABLE.result(FAIL, "x", side="target", error="e", aborts=False)
    assert msg(target_side, t, d) == "failed to load model, 't.gguf', then: exiting due to model loading error"
    dies = L.R_LOADABLE.result(FAIL, "x", side="draft", error="duplicate text: GGML_ASSERT(a == b) aborts the process",
                               aborts=True)
    assert msg(dies, t, d) == "no error line: the process aborts while reading the draft (GGML_ASSERT(a == b) failed)"
    vt = L.check_vocab_type(vocab(), vocab(vocab_type=T.VOCAB_SPM))
    assert msg(vt, t, d) == ("'draft model vocab type must match target model to use speculation but vocab_type_dft "
                             "= 1 while vocab_type_tgt = 2', then 'failed to initialize speculative decoding context: "
                             "draft model vocab type must match target model to use speculation', and the server then "
                             "runs without speculation (the draft is unloaded)")
    bos = L.check_bos(vocab(add_bos=True, bos=1), vocab(add_bos=True, bos=7))
    assert msg(bos, t, d) == ("'draft model bos tokens must match target model to use speculation. add: 1 - 1, id: 1 - "
                              "7)', then 'failed to initialize speculative decoding context: draft model vocab type "
                              "must match target model to use speculation', and the server then runs without "
                              "speculation (the draft is unloaded)")
    eos = L.check_eos(vocab(add_eos=True), vocab())
    assert str(msg(eos, t, d)).startswith("'draft model eos tokens must match target model to use speculation. add: "
                                          "1 - 0, id: 2 - 2)'")
    size = L.check_vocab_size(vocab(500), vocab(300))
    assert msg(size, t, d) == ("only 'failed to initialize speculative decoding context: draft model vocab type must "
                               "match target model to use speculation' (the reason is logged at debug level only), "
                               "and the server then runs without speculation (the draft is unloaded)")
    text = L.check_token_text(vocab(300), vocab(300, token_texts=[b"x"] * 300))
    assert msg(text, t, d) == msg(size, t, d)
    none = vocab(10, vocab_type=T.VOCAB_NONE)
    assert msg(L.check_token_text(none, none), t, d) == (
        "no error line: the process aborts in the check (GGML_ASSERT(pimpl->type != LLAMA_VOCAB_TYPE_NONE) failed, in "
        "llama_vocab::token_get_text)")
    assert msg(Finding("XX", "other", FAIL, "m"), t, d) is None


@pytest.mark.parametrize(("error", "shown"), [
    ("x GGML_ASSERT(a) aborts the process", "GGML_ASSERT(a) failed"),
    ("x GGML_ABORT: no", "GGML_ABORT: no"), ("GGML_ABORT(y) aborts the process", "GGML_ABORT(y)"),
    ("GGML_ASSERT(a) then GGML_ASSERT(b) aborts the process", "GGML_ASSERT(a) then GGML_ASSERT(b) failed"),
    ("plain", "GGML_ASSERT"),
])
def test_assertion(error: str, shown: str) -> None:
    assert L._assertion(error) == shown


def test_installed_note() -> None:
    ref = T.REFERENCE_LLAMA_VERSION
    assert L.installed_note(ref, "found") == (f"found: llama.cpp {ref}, the version of the pinned reference (a build "
                                              "of it may differ from the vendored source)")
    assert L.installed_note("99.0", "found") == (f"found: newer than the pinned reference ({ref}), and no later "
                                                 "llama.cpp source was read, so the pinned rules apply as they are "
                                                 "(common_speculative_are_compatible may have changed)")
    assert L.installed_note("0.0.1", "found") == (f"found: not the pinned reference ({ref}); the pinned rules apply as "
                                                  "they are")
    assert L.installed_note("b1234-local", "found").startswith("found: not the pinned reference")


def test_evaluate_compatible() -> None:
    t, d = pair()
    report = L.evaluate(t, d)
    assert (report.engine, report.method, report.target, report.draft) == ("llama.cpp", "draft-simple", t, d)
    assert report.engine_version == T.REFERENCE_VERSION
    assert [c.code for c in report.checks] == ["LC001", "LC001", "LC002", "LC003", "LC004", "LC005", "LC006"]
    assert report.warnings == [] and report.engine_says is None and report.next_steps == LAUNCH
    engine = L.LlamaCppEngine()
    via = engine.evaluate(t, d, "draft-simple")
    assert via.next_steps == LAUNCH and via.method == "draft-simple"


def test_evaluate_refused() -> None:
    t, d = pair(vocab(300), vocab(500))
    report = L.LlamaCppEngine().evaluate(t, d, "draft-simple")
    assert report.first_failure is not None and report.first_failure.code == "LC005"
    assert report.engine_says is not None and report.engine_says.startswith("only 'failed to initialize")
    assert report.next_steps == NGRAM
    assert L.evaluate(t, d).next_steps == []  # the n-gram way forward is the engine's, not the rule's
    # pair warnings are noise for a refused pair; the head and loader warnings are not
    t2 = desc("t.gguf", v=vocab(300, loader_warnings=["x"]))
    head = desc("d.gguf", arch="eagle3", v=vocab(300, eog_ids=frozenset({9}), vocab_type=T.VOCAB_SPM))
    warned = L.evaluate(t2, head)
    assert [w.code for w in warned.warnings] == ["LW105", "LW103"]


def test_evaluate_aborts_at_run_time() -> None:
    t, d = pair(vocab(300), vocab(301, token_texts=texts(300) + [b"real"]))
    report = L.LlamaCppEngine().evaluate(t, d, "draft-simple")
    assert [w.code for w in report.warnings] == ["LW101"] and report.run_time_aborts
    assert report.next_steps == [
        "Use a draft with exactly the target's token count, e.g. the smallest model of the same series; to rank the "
        "models you have:", "paircheck scan t.gguf", *NGRAM]
    harmless = pair(vocab(300), vocab(301, token_texts=texts(300) + [b"[PAD]"]))
    assert L.evaluate(*harmless).next_steps == LAUNCH


def test_evaluate_pair_warnings() -> None:
    t = desc("t.gguf", v=vocab(300, eog_ids=frozenset({2, 9})), kv=merges(5))
    d = desc("d.gguf", v=vocab(300, eog_ids=frozenset({2}), loader_warnings=["y"]), kv=merges(6))
    report = L.evaluate(t, d)
    assert [w.code for w in report.warnings] == ["LW102", "LW104", "LW103"]
    assert report.warnings[-1].message == "draft: y"
    none = vocab(10, vocab_type=T.VOCAB_NONE, token_texts=[])
    # two NONE vocabularies: LC006 fails (abort), so LW106 is not added either
    assert [w.code for w in L.evaluate(desc("t", v=none), desc("d", v=none)).warnings] == []


def test_engine_object() -> None:
    engine = L.LlamaCppEngine()
    assert engine.name == "llama.cpp" and engine.default_method == "draft-simple" and engine.versions == ()
    assert engine.methods[:2] == ("draft-simple", "draft-eagle3") and "ngram-cache" in engine.methods
    assert engine.resolve(None) == "draft-simple" and engine.resolve("draft-mtp") == "draft-mtp"
    assert engine.resolve("eagle3") is None
    assert engine.rules[: len(L.RULES)] == L.RULES and len(engine.rules) > len(L.RULES)
    t, d = pair()
    ngram = engine.evaluate(t, d, "ngram-mod")
    assert ngram.method == "ngram-mod" and ngram.checks[0].code == "LC040"



# --- the survivors of the first mutation run --------------------------------------------------

def test_incomplete_edges() -> None:
    d = desc("t.gguf")
    d.resolved_path = "/m/t.gguf"
    # a relative shard name: no folder to cut off
    assert L._incomplete_reason(cut(file="t-00002.gguf"), d).startswith("shard t-00002.gguf is incomplete")
    # as many bytes as needed, yet cut: the end is inside the tensor list
    assert L._incomplete_reason(cut(have=5000, need=5000), d).startswith("the file is incomplete: it ends after 5.0 KB")
    hub = desc("org/x", form="hf-folder")
    assert L._incomplete_fix(hub, cut(file="http://hub.local/x.safetensors", loader="safetensors")) == (
        "The copy on the Hub is itself incomplete (its header declares more than the Hub holds): tell the "
        "repository's owners, or use another repository.")


def test_check_loadable_names_the_shard_and_the_download() -> None:
    d = desc("t.gguf")
    d.resolved_path = "/m/t-00001-of-00002.gguf"
    d.origin = Origin("t.gguf", "gguf", download=Download(("hf download org/t",), True))
    d.metadata.tensor_error = cut(file="/m/t-00002-of-00002.gguf")
    found = L.check_loadable("target", d.vocab, d)
    assert found.message.startswith("target: shard t-00002-of-00002.gguf is incomplete: 1.0 KB of 5.0 KB")
    assert found.fix == "Resume the download: hf download org/t"


def test_evaluate_reads_each_sides_file() -> None:
    for side in ("target", "draft"):
        t, d = pair()
        broken = t if side == "target" else d
        broken.resolved_path = f"/m/{side}.gguf"
        broken.metadata.tensor_error = TensorSectionError("tensor 'x' has offset 5, expected 0", f"/m/{side}.gguf",
                                                          10, None)
        report = L.evaluate(t, d)
        checks = report.checks[:2]
        assert [c.status for c in checks] == ([FAIL, PASS] if side == "target" else [PASS, FAIL])
        assert [c.details["side"] for c in checks] == ["target", "draft"]
        what = "model" if side == "target" else "draft model"
        assert report.engine_says == (f"failed to load {what}, '/m/{side}.gguf', then: exiting due to model loading "
                                      "error")
    t, d = pair()
    assert [c.message for c in L.run_checks(t.vocab, d.vocab, t, d)[:2]] == [
        "target: llama.cpp loads the vocabulary", "draft: llama.cpp loads the vocabulary"]


def test_evaluate_keeps_the_head_warning_with_the_pair_warnings() -> None:
    t = desc("t.gguf", v=vocab(300, loader_warnings=["kept the type default for BOS"]))
    head = desc("d.gguf", arch="eagle3", v=vocab(300, eog_ids=frozenset({9})))
    report = L.evaluate(t, head)
    assert [(w.code, w.message) for w in report.warnings][0][0] == "LW105"
    assert [w.code for w in report.warnings] == ["LW105", "LW103"]
    assert report.warnings[-1].message == "target: kept the type default for BOS"


def test_both_add_bos_details() -> None:
    both = L.check_bos(vocab(add_bos=True, bos=1), vocab(add_bos=True, bos=1))
    assert both.details == {"target_add": True, "draft_add": True, "target_id": 1, "draft_id": 1}


def test_end_of_generation_id_edges() -> None:
    zero = L.warn_end_of_generation(vocab(300, eog_ids=frozenset({0})), vocab(300))
    assert zero is not None and zero.details["target_eog"] == ["'t0'"]
    # an id past the texts is not read
    assert L.warn_end_of_generation(vocab(300, eog_ids=frozenset({300})), vocab(300)) is None


def test_first_text_difference_starts_at_5() -> None:
    differ = vocab(300, token_texts=[b"x"] + texts(300)[1:7] + [b"y"] + texts(300)[8:])
    assert L.first_text_difference(vocab(300), differ) == 7


def test_installed_note_same_release_other_spelling() -> None:
    assert L.installed_note("0.5.0", "found").startswith("found: not the pinned reference (0.5.0-dev)")


def test_vocab_tail_lists_twenty_ids() -> None:
    d = vocab(330, token_texts=texts(300) + texts(30, "new"))
    found = L.warn_vocab_tail(vocab(300), d)
    assert found is not None and found.details["real_ids"] == list(range(300, 320))
    assert found.details["real_tokens"] == 30


def test_engine_head_method_judges_the_pair() -> None:
    t, d = pair()
    report = L.LlamaCppEngine().evaluate(t, d, "draft-mtp")
    assert report.target is t and report.draft is d and report.method == "draft-mtp"
