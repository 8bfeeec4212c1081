"""Registry entries by vocabulary fingerprint: stored values recompute, renamed files are recognised.

The stored fingerprints are recomputed from their pinned source files (tests/corpus.py's
sdist), through paircheck's own HF-folder description, with the side's config vocab_size.
Recognition is tested on real vocab GGUFs copied under a meaningless name with their
name keys stripped: by vocabulary alone a file is "a model with the vocabulary of X",
and only a size in the file narrows it to one entry's side.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus  # noqa: E402
import vocab_sources as VS  # noqa: E402
from gguf_mutate import VT, GGUFMeta, make_kv, rewrite_gguf  # noqa: E402
from test_registry import run  # noqa: E402

from paircheck._registry import consult as RC  # noqa: E402
from paircheck._registry.load import (
    load_registry,  # noqa: E402
    validate,  # noqa: E402
)
from paircheck.pipeline import check_pair, describe  # noqa: E402

NAME_KEYS = ("general.name", "general.basename", "general.size_label", "general.finetune", "general.repo_url")


def _with_vocab() -> list[tuple[str, str, object]]:
    reg = load_registry()
    return [
        (e.id, side, vocab)
        for e in reg
        for side, vocab in (("target", e.target_vocab), ("draft", e.draft_vocab))
        if vocab is not None
    ]


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_every_stored_fingerprint_recomputes_from_its_source(tmp_path: Path) -> None:
    stored = _with_vocab()
    assert len(stored) >= 40  # 42 sides of 26 entries when written; fewer means data was lost
    computed: dict[tuple[str, int], object] = {}
    wrong = []
    for entry_id, side, vocab in stored:
        assert vocab.artifact == VS.CORPUS_ARTIFACT, entry_id  # the only artifact the test can fetch
        path = VS.corpus_file(vocab.file)
        assert corpus.sha256_file(path) == vocab.sha256, f"{entry_id} {side}: {vocab.file} changed"
        key = (vocab.file, vocab.vocab_size)
        if key not in computed:
            computed[key] = VS.recompute(vocab.file, vocab.vocab_size, tmp_path)
        got = computed[key]
        if got.prefix != vocab.prefix or (vocab.full is not None and got.full != vocab.full):
            wrong.append((entry_id, side, vocab.prefix, got.prefix))
    assert not wrong, wrong
    # The HF folder and the GGUF it was rebuilt from agree: the recipe sees what llama.cpp sees.
    gguf = VS.corpus_file(VS.CORPUS_PREFIX + "ggml-vocab-llama-bpe.gguf")
    from paircheck.fingerprint import fingerprints

    assert fingerprints(describe(str(gguf)).vocab) == computed[(VS.CORPUS_PREFIX + "ggml-vocab-llama-bpe.gguf", 128256)]


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_padding_changes_the_full_fingerprint_not_the_prefix(tmp_path: Path) -> None:
    small = VS.recompute(VS.CORPUS_PREFIX + "ggml-vocab-qwen2.gguf", 151936, tmp_path)
    large = VS.recompute(VS.CORPUS_PREFIX + "ggml-vocab-qwen2.gguf", 152064, tmp_path)
    assert small.prefix == large.prefix and small.prefix_end == large.prefix_end == 151552
    assert small.full != large.full  # why "family" sides store only the prefix


ENTRY = """schema_version = 2

[[pair]]
id = "a--b"
family = "testfam"
target = { name = "A-7B" }
draft = { name = "B-1B" }
method = "draft-model"
engines = ["llama.cpp"]
status = "works"
evidence = "ran"
source = { url = "https://example.org/x", kind = "blog" }
quote = "A ran with B."
checked = { on = 2026-11-30, read = ["https://example.org/x"] }
notes = "test"

[pair.target_vocab]
"""
GOOD_VOCAB = {
    "prefix": '"v1p:' + "0" * 32 + '"',
    "scope": '"family"',
    "tokenizer_of": '"org/model"',
    "artifact": '"pypi:x==1 sdist"',
    "file": '"a/b.gguf"',
    "sha256": '"' + "a" * 64 + '"',
    "vocab_size": "32000",
    "vocab_size_from": '"https://example.org/config"',
    "basis": '"same tokenizer release"',
}


def _problems(**changes: str | None) -> list[str]:
    import tomllib

    fields = {**GOOD_VOCAB, **changes}
    body = ENTRY + "".join(f"{k} = {v}\n" for k, v in fields.items() if v is not None)
    return validate(tomllib.loads(body))


def test_schema_checks_the_vocab_table() -> None:
    assert _problems() == []
    assert any("prefix must be" in p for p in _problems(prefix='"v1:' + "0" * 32 + '"'))
    assert any("full is only for scope 'model'" in p for p in _problems(full='"v1:' + "1" * 32 + '"'))
    assert _problems(full='"v1:' + "1" * 32 + '"', scope='"model"') == []
    assert any("needs a 'basis'" in p for p in _problems(basis=None))
    assert any("sha256 must be" in p for p in _problems(sha256='"abc"'))
    assert any("vocab_size must be" in p for p in _problems(vocab_size="0"))
    assert any("missing required field 'vocab_size_from'" in p for p in _problems(vocab_size_from=None))
    assert any("unknown field 'fingerprint'" in p for p in _problems(fingerprint='"v1:00"'))


def _renamed(src: Path, dst: Path, size_label: str | None = None) -> Path:
    """``src`` under a meaningless name, its name keys gone (and a size label if given)."""

    def strip(meta: GGUFMeta) -> None:
        for key in NAME_KEYS:
            meta.drop(key)
        if size_label:
            meta.set(make_kv("general.size_label", size_label, VT.STRING))

    rewrite_gguf(src, dst, strip)
    return dst


@pytest.fixture(scope="module")
def llama3(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return VS.corpus_file(VS.CORPUS_PREFIX + "ggml-vocab-llama-bpe.gguf")


def test_pairs_for_a_renamed_file_names_the_vocabulary_only(llama3: Path, tmp_path: Path) -> None:
    file = _renamed(llama3, tmp_path / "blob-7f3a.gguf")
    desc = describe(str(file))
    assert desc.identity.name is None and "llama" not in file.name
    code, out, err = run("--for", str(file), "--format", "json")
    assert code == 0, err
    ids = {p["id"] for p in json.loads(out)["pairs"]}
    # Every documented Llama 3.x target, none of another family.
    assert "llama-3.1-8b-instruct--llama-3.2-1b-instruct" in ids and "llama-3.1-70b--llama-3.1-8b" in ids
    assert all("llama" in i for i in ids) and not any(i.startswith("qwen") for i in ids)
    assert "a model with the vocabulary of" in err and "no size" in err


def test_a_size_label_narrows_the_vocabulary_to_the_entry_side(llama3: Path, tmp_path: Path) -> None:
    code, out, err = run("--for", str(_renamed(llama3, tmp_path / "m.gguf", "70B")), "--format", "json")
    ids = {p["id"] for p in json.loads(out)["pairs"]}
    assert code == 0 and ids and all("70b" in i for i in ids), ids  # the 8B targets are ruled out by the size
    assert "and size (general.size_label 70B)" in err and "vocabulary and size of Llama-3.1-70B" in err


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_the_check_recognises_a_renamed_documented_pair(llama3: Path, tmp_path: Path) -> None:
    target = _renamed(llama3, tmp_path / "aaa.gguf", "8B")
    draft = _renamed(llama3, tmp_path / "bbb.gguf", "1B")
    report = check_pair(str(target), str(draft))
    found = [f for f in report.registry if f.code == "RG001"]
    assert found, [f.message for f in report.registry]
    ids = {f.details["id"] for f in found}
    assert ids <= {
        "llama-3.1-8b-instruct--llama-3.2-1b-instruct",
        "llama-3.1-8b--llama-3.2-1b",
    }
    assert all(f.details["matched_by"] == {"target": "vocabulary+size", "draft": "vocabulary+size"} for f in found)
    assert "Recognised by vocabulary fingerprint, not by name" in found[0].message
    # Without sizes: "shares the vocabulary prefix of" (all that was compared), never a claim about one model.
    plain = check_pair(str(_renamed(llama3, tmp_path / "c.gguf")), str(_renamed(llama3, tmp_path / "d.gguf")))
    msgs = [f.message for f in plain.registry if f.code == "RG001"]
    assert msgs and all("shares the vocabulary prefix (ids below 128,000) of" in m for m in msgs)
    # A Qwen vocabulary is not taken for Llama 3.
    qwen = _renamed(VS.corpus_file(VS.CORPUS_PREFIX + "ggml-vocab-qwen2.gguf"), tmp_path / "e.gguf", "14B")
    qwen_draft = _renamed(VS.corpus_file(VS.CORPUS_PREFIX + "ggml-vocab-qwen2.gguf"), tmp_path / "f.gguf", "0.5B")
    q = check_pair(str(qwen), str(qwen_draft))
    q_ids = {f.details["id"] for f in q.registry if f.code == "RG001"}
    # Qwen2.5 14B and Qwen2.5-Coder 14B share vocabulary and size: both are offered, nothing else.
    assert q_ids == {
        "qwen2.5-14b--qwen2.5-0.5b",
        "qwen2.5-14b-instruct--qwen2.5-0.5b-instruct",
        "qwen2.5-coder-14b--qwen2.5-coder-0.5b",
    }, q_ids


def test_size_from_tensor_infos(tmp_path: Path) -> None:
    """A file with tensors and no size label is sized by its parameter count."""
    from paircheck.model import TensorInfo

    desc = describe(str(VS.corpus_file(VS.CORPUS_PREFIX + "ggml-vocab-llama-spm.gguf")))
    desc.metadata.tensors = [TensorInfo("token_embd.weight", (4096, 32000), 0, 0),
                             TensorInfo("blk.0.ffn_up.weight", (4096, 1_000_000), 0, 0)]
    desc.identity = type(desc.identity)()  # no size label
    fv = RC.file_vocab(desc)
    assert fv.size_b is not None and abs(fv.size_b - (4096 * 1_032_000) / 1e9) < 1e-9
    assert fv.size_from and fv.size_from.startswith("tensor infos")
