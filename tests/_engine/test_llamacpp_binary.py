"""paircheck's llama.cpp draft-simple verdict against the pinned llama-server itself.

``test_differential.py`` compares paircheck with the values libllama derives and with a
Python transcription of ``common_speculative_are_compatible``; a misreading shared by that
transcription and paircheck would pass both. Here nothing is transcribed: the pinned
``llama-server`` (``tests/llamacpp_build.py``) is started with ``-m T -md D --spec-type
draft-simple`` on tiny runnable models carrying a real (or minimally edited) vocabulary
(``tests/tiny_model.py``), and what it does (``tests/llamacpp_pair.py`` reads its log) is
compared with what paircheck says of the same two files:

* a refused file: the same side, and paircheck's loader error in the server's own error
  line; where paircheck says the loader aborts, the process dies on the assertion it names;
* an incompatible pair: the same first failing check, every value its log line quotes
  (vocab types, add flags and ids, sizes, the first differing id and the texts of that id),
  the log level paircheck claims for it, the line paircheck says llama.cpp prints, and the
  server then serving without speculation, as paircheck says;
* an accepted pair: speculation runs (the draft proposes tokens). Where paircheck warns
  that ids exist in one model only, one model is built to produce such an id
  (``favour``): the server aborts with "failed to add token ID", ID inside the range
  paircheck names, whichever model has the extra ids.

The sample covers every first-failing check and both crash directions
(:func:`test_sample_covers_every_check`). Measured on the 2-core development machine (shared
with other jobs), ``pytest tests/_engine/test_llamacpp_binary.py``: 26-30 s for the module,
model writing included; the slowest pair (a 128k-token draft) takes 5 s. Each server runs
one thread, and the pinned build is the one ``tests/llamacpp_build.py`` makes for CI anyway.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import llamacpp_build
import pytest
from gguf import GGUFValueType as VT
from gguf_mutate import GGUFMeta, make_kv, rewrite_gguf, set_tokens, token_texts
from llamacpp_pair import disagreements, paircheck_report, run_pair
from oracle import require_oracle
from tiny_model import TinyShape, write_tiny_llama

from paircheck.llamacpp_tables import SPEC_VOCAB_MAX_SIZE_DIFFERENCE

pytestmark = pytest.mark.slow  # runs the pinned llama-speculative-simple

#: Small enough that a 128k-token vocabulary is a 16 MB file: only the pair check matters.
SHAPE = TinyShape(n_embd=16, n_layer=1, n_head=2, n_head_kv=2, n_ff=32, n_ctx=256)
PROMPT = "The quick brown fox jumps over the lazy dog"


def _dup_text(meta: GGUFMeta) -> None:
    texts = token_texts(meta)
    texts[7] = texts[8]  # two ids, one text: the loader's GGML_ASSERT
    set_tokens(meta, texts)


#: Minimal edits of a real vocabulary, for the cases no pair of real files shows.
EDITS: dict[str, Callable[[GGUFMeta], None]] = {
    "add_eos": lambda m: m.set(make_kv("tokenizer.ggml.add_eos_token", True, VT.BOOL)),
    "bos_i32": lambda m: m.set(make_kv("tokenizer.ggml.bos_token_id", 1, VT.INT32)),
    "dup_text": _dup_text,
}


@dataclass(frozen=True)
class Model:
    vocab: str  # a real vocab file (short name)
    edit: str | None = None  # a key of EDITS
    favour: int | None = None  # the id the model predicts after any context


@dataclass(frozen=True)
class Pair:
    name: str
    target: Model
    draft: Model


SPM, PHI3 = Model("llama-spm"), Model("phi-3")
#: The ordered pairs. The expected outcome is not written here: it is paircheck's, and
#: the test asserts that the server does the same.
SAMPLE = [
    Pair("spm-self", SPM, SPM),
    Pair("neox-mpt", Model("gpt-neox"), Model("mpt")),  # two files, one vocabulary
    # phi-3 = llama-spm + 64 ids: accepted, then fatal once an extra id is produced.
    Pair("spm-phi3-draft-proposes-32010", SPM, Model("phi-3", favour=32010)),
    Pair("phi3-spm-target-emits-32010", Model("phi-3", favour=32010), SPM),
    Pair("spm-gpt2", SPM, Model("gpt-2")),
    Pair("dscoder-starcoder", Model("deepseek-coder"), Model("starcoder")),  # add_bos differs
    Pair("dscoder-llama-bpe", Model("deepseek-coder"), Model("llama-bpe")),  # bos ids differ
    Pair("spm-spm-add-eos", SPM, Model("llama-spm", "add_eos")),
    Pair("gpt2-starcoder", Model("gpt-2"), Model("starcoder")),
    Pair("refact-starcoder", Model("refact"), Model("starcoder")),
    Pair("spm-draft-bos-i32", SPM, Model("llama-spm", "bos_i32")),
    Pair("target-bos-i32-spm", Model("llama-spm", "bos_i32"), SPM),
    Pair("spm-draft-dup-text", SPM, Model("llama-spm", "dup_text")),
    Pair("target-dup-text-phi3", Model("llama-spm", "dup_text"), PHI3),
]


@pytest.fixture(scope="module", autouse=True)
def _need_oracle() -> None:
    require_oracle()  # the token pieces and texts quoted by the server come from libllama


@pytest.fixture(scope="module")
def server_bin() -> Path:
    return llamacpp_build.ensure_tools()["llama-server"]


@pytest.fixture(scope="module")
def build(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Callable[[Model], Path]:
    """``build(model) -> path`` of its tiny runnable GGUF, written once per module."""
    root = tmp_path_factory.mktemp("tiny-pairs")
    made: dict[Model, Path] = {}

    def get(model: Model) -> Path:
        if model not in made:
            vocab = corpus / f"ggml-vocab-{model.vocab}.gguf"
            stem = f"{model.vocab}-{model.edit or 'real'}-{model.favour or 'random'}"
            if model.edit is not None:
                edited = root / f"{stem}.vocab.gguf"
                rewrite_gguf(vocab, edited, EDITS[model.edit])
                vocab = edited
            made[model] = write_tiny_llama(root / f"{stem}.gguf", vocab, seed=len(made), shape=SHAPE,
                                           favour=model.favour)
        return made[model]

    return get


@pytest.mark.parametrize("pair", SAMPLE, ids=[p.name for p in SAMPLE])
def test_pair_as_llama_server_runs_it(server_bin: Path, build: Callable[[Model], Path], tmp_path: Path,
                                      pair: Pair) -> None:
    target, draft = build(pair.target), build(pair.draft)
    report = paircheck_report(target, draft)
    got = run_pair(server_bin, target, draft, tmp_path / "server.log", prompt=PROMPT)
    problems = disagreements(report, got, target, draft)
    assert problems == [], f"{pair.name}: {got.summary()}\n" + "\n".join(problems)


def test_sample_covers_every_check(build: Callable[[Model], Path]) -> None:
    """The sample reaches every first failure paircheck can report for draft-simple, each
    loadable variant (target, draft, an abort) and the crash in both directions, so the
    agreement above is agreement on all of them."""
    reports = {p.name: paircheck_report(build(p.target), build(p.draft)) for p in SAMPLE}
    firsts = {r.first_failure.name if r.first_failure else None for r in reports.values()}
    assert firsts == {None, "loadable", "vocab_type", "bos", "eos", "vocab_size", "token_text"}
    loadable = {(f.details["side"], bool(f.details["aborts"])) for r in reports.values()
                if (f := r.first_failure) is not None and f.name == "loadable"}
    assert loadable == {("target", False), ("draft", False), ("target", True), ("draft", True)}
    tails = {w.details["larger"] for r in reports.values() if r.compatible
             for w in r.warnings if w.name == "vocab_tail"}
    assert tails == {"target", "draft"}
    sizes = [f.details["difference"] for r in reports.values()
             if (f := r.finding("LC005")) is not None and f.status == "fail"]
    assert sizes and min(sizes) > SPEC_VOCAB_MAX_SIZE_DIFFERENCE


def test_without_spec_type_the_draft_is_loaded_but_unused(server_bin: Path, build: Callable[[Model], Path],
                                                          tmp_path: Path) -> None:
    """What paircheck tells the user of an accepted pair, held against the server: -md alone
    loads the draft, yet nothing is drafted, and nothing says so."""
    target = draft = build(SPM)
    report = paircheck_report(target, draft)
    assert report.compatible
    assert "Without --spec-type the draft is loaded but never used, silently." in report.next_steps
    got = run_pair(server_bin, target, draft, tmp_path / "server.log", prompt=PROMPT, spec_type=None)
    assert got.outcome == "accepted" and got.ran is True, got.summary()
    assert f"loading draft model '{draft}'" in got.log
    assert got.draft_n is None  # the server did not speculate
    assert not [ln for ln in got.log.splitlines() if " W " in ln[:16] and "draft" in ln]
    # ...while the same pair with --spec-type draft-simple does draft.
    assert run_pair(server_bin, target, draft, tmp_path / "with.log", prompt=PROMPT).draft_n
