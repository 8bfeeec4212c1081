"""Vocabulary fingerprints (paircheck.fingerprint).

The promise: equal fingerprints => llama.cpp's draft-simple check passes. Different
fingerprints promise nothing (counts may differ by up to 128). These tests pin what
goes into the hash, check the promise on the real vocab files and on generated
variants, and freeze the value of one synthetic file so a format change cannot
slip in unnoticed.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import sys
from pathlib import Path

import pytest
from oracle import llama_values, require_oracle

from paircheck import fingerprint as F
from paircheck._registry.load import fingerprint_matches
from paircheck.cli import main
from paircheck.model import LlamaVocab
from paircheck.pipeline import check_descriptions, describe


def _fps(path: Path) -> F.Fingerprints:
    return F.fingerprints(describe(str(path)).vocab)


def _reference(v: LlamaVocab, end: int, label: str, count: str) -> str:
    """The recipe of the module docstring, written out naively."""
    bos = v.bos_id if v.add_bos else -1
    eos = v.eos_id if v.add_eos else -1
    data = (
        b"paircheck-vocab-fingerprint\n"
        + b"\0".join(v.texts[5:end])
        + b"\0\0"
        + f"{label} type={v.vocab_type} bos={int(v.add_bos)}:{bos} eos={int(v.add_eos)}:{eos} {count}\n".encode()
    )
    return f"{label}:{hashlib.sha256(data).hexdigest()[:32]}"


# --------------------------------------------------------------------------- format


def test_format_is_versioned_hex(gguf_factory) -> None:
    fp = _fps(gguf_factory())
    assert fp.full is not None and fp.full.startswith("v1:") and len(fp.full) == 3 + 32
    assert fp.prefix is not None and fp.prefix.startswith("v1p:")
    int(fp.full[3:], 16)
    assert fp.full == fp.full.lower()


# Frozen: a change here means the v1 recipe changed, which needs a new version.
FROZEN_FULL = "v1:b4bbdfb3c9c9ed236e0cca0f57301e08"


def test_stable_value_for_fixed_synthetic_file(gguf_factory) -> None:
    fp = _fps(gguf_factory())  # ggufgen defaults: SPM, 400 tokens
    assert fp.full == FROZEN_FULL
    assert fp.prefix_end == 5  # 400 - 128 < 1024: the prefix has no texts


@pytest.mark.parametrize("n_tokens", [3, 5, 6, 132, 133, 1152, 1153, 2300])
def test_fast_path_equals_reference_recipe(gguf_factory, n_tokens: int) -> None:
    v = describe(str(gguf_factory(n_tokens=n_tokens))).vocab
    fp = F.fingerprints(v)
    assert fp.full == _reference(v, v.n_tokens, "v1", f"n={v.n_tokens}")
    assert fp.prefix == _reference(v, fp.prefix_end, "v1p", f"end={fp.prefix_end}")
    assert F.fingerprint(v) == fp.full and F.prefix_fingerprint(v) == fp.prefix


def test_reference_recipe_on_a_real_file(real_vocab) -> None:
    v = describe(str(real_vocab("qwen2"))).vocab
    fp = F.fingerprints(v)
    assert fp.prefix_end == 151552
    assert fp.full == _reference(v, v.n_tokens, "v1", f"n={v.n_tokens}")
    assert fp.prefix == _reference(v, fp.prefix_end, "v1p", f"end={fp.prefix_end}")


def test_prefix_end() -> None:
    assert F.prefix_end(151936) == F.prefix_end(152064) == 151552
    assert F.prefix_end(32000) == F.prefix_end(32064) == 31744
    assert F.prefix_end(0) == F.prefix_end(100) == 5


# --------------------------------------------------------------------------- invariance


def test_same_vocab_same_fingerprint_across_gguf_version_and_unrelated_keys(gguf_factory) -> None:
    base = _fps(gguf_factory())
    same = [
        gguf_factory(version=2),
        gguf_factory(extra_kv={"general.name": "Something Else 7B", "general.repo_url": "https://huggingface.co/a/b"}),
        gguf_factory(scores=False, token_types=False),
        gguf_factory(arch="qwen2"),
        gguf_factory(replace={0: "<zero>", 4: "four"}),  # ids 0-4 are not compared
    ]
    for path in same:
        assert _fps(path) == base, path
    # The id of a BOS that is not added is not compared, so it is not hashed either.
    assert _fps(gguf_factory(add_bos=False)) == _fps(gguf_factory(add_bos=False, bos=7))


def test_pre_tokenizer_is_not_part_of_it(real_vocab) -> None:
    # qwen2 and qwen35 differ only in tokenizer.ggml.pre, which llama.cpp does not compare.
    assert _fps(real_vocab("qwen2")).full == _fps(real_vocab("qwen35")).full


def test_big_endian_file_has_none_on_this_host(gguf_factory) -> None:
    # llama.cpp on a little-endian host refuses a big-endian file: nothing to compare.
    desc = describe(str(gguf_factory(endian="big")))
    assert not desc.vocab.loadable
    assert F.fingerprint(desc.vocab) is None


def test_big_endian_claim_is_llamacpps_own(gguf_factory) -> None:
    """The premise above, from llama.cpp itself (libllama through tests/oracle.py): on this
    little-endian host it refuses the big-endian file and loads its little-endian twin."""
    require_oracle()
    assert sys.byteorder == "little"
    path = gguf_factory(endian="big")
    refused = llama_values(path)
    assert refused["loaded"] is False and "endianness" in refused["error"]
    assert llama_values(gguf_factory(endian="little"))["loaded"] is True


def test_no_fingerprint_without_texts(gguf_factory) -> None:
    assert F.fingerprint(describe(str(gguf_factory(model="no_vocab", vocab_size=400))).vocab) is None
    assert F.fingerprints(LlamaVocab()) == F.Fingerprints(None, None, None)


# --------------------------------------------------------------------------- sensitivity

CHANGED = {
    "text at id 5": dict(replace={5: "changed"}),
    "last text": dict(replace={399: "changed"}),
    "one token more": dict(n_tokens=401),
    "one token less": dict(n_tokens=399),
    "add_bos flipped": dict(add_bos=False),
    "bos id (added)": dict(bos=3, add_bos=True),
    "add_eos on": dict(add_eos=True),
    "eos id (added)": dict(eos=3, add_eos=True),
    "vocab type": dict(model="gpt2", pre="qwen2"),
}


@pytest.mark.parametrize("label", sorted(CHANGED))
def test_any_compared_value_changes_it(gguf_factory, label: str) -> None:
    base = describe(str(gguf_factory(add_bos=True, bos=1, eos=2)))
    kwargs = dict(add_bos=True, bos=1, eos=2)
    kwargs.update(CHANGED[label])
    other = describe(str(gguf_factory(**kwargs)))
    assert F.fingerprint(other.vocab) != F.fingerprint(base.vocab)


# --------------------------------------------------------------------------- the promise


def _assert_promise(descs: dict[str, object]) -> int:
    """Equal fingerprints => compatible; equal prefix ends and different prefixes => not."""
    equal_pairs = 0
    fps = {name: F.fingerprints(d.vocab) for name, d in descs.items()}
    for (a, da), (b, db) in itertools.product(descs.items(), repeat=2):
        fa, fb = fps[a], fps[b]
        if fa.full is None or fb.full is None:
            continue
        report = check_descriptions(da, db, registry=False, fingerprint=False)
        if fa.full == fb.full:
            equal_pairs += 1
            assert report.compatible, (a, b, [c.message for c in report.failures])
        if fa.prefix_end == fb.prefix_end and fa.prefix != fb.prefix:
            assert not report.compatible, (a, b)
    return equal_pairs


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_equal_fingerprints_mean_compatible_real_files(corpus: Path) -> None:
    descs = {p.name: describe(str(p)) for p in sorted(corpus.glob("ggml-vocab-*.gguf"))}
    assert len(descs) == 19
    # Every file with itself, plus qwen2/qwen35 both ways.
    assert _assert_promise(descs) >= 19 + 2


def test_equal_fingerprints_mean_compatible_generated_variants(gguf_factory) -> None:
    variants = {
        "base": {},
        "v2": dict(version=2),
        "named": dict(extra_kv={"general.name": "X"}),
        "id0": dict(replace={0: "other"}),
        "id5": dict(replace={5: "other"}),
        "n+1": dict(n_tokens=401),
        "n+128": dict(n_tokens=528),
        "n+129": dict(n_tokens=529),
        "no-bos": dict(add_bos=False),
        "no-bos-other-id": dict(add_bos=False, bos=9),
        "eos": dict(add_eos=True),
        "bpe": dict(model="gpt2", pre="qwen2"),
        "bpe-llama3": dict(model="gpt2", pre="llama-bpe"),
        "big-n": dict(n_tokens=1300),
        "big-n-pad": dict(n_tokens=1400),
        "big-n-diff": dict(n_tokens=1300, replace={1000: "x"}),
    }
    descs = {name: describe(str(gguf_factory(f"{name}.gguf", **kw))) for name, kw in variants.items()}
    assert _assert_promise(descs) > len(variants)
    fps = {name: F.fingerprint(d.vocab) for name, d in descs.items()}
    # Compatible but different: the fingerprint does not claim to be the whole story.
    assert fps["base"] != fps["n+128"]
    assert check_descriptions(descs["base"], descs["n+128"], registry=False).compatible


def test_prefix_fingerprint_shared_by_padded_family_members(real_vocab) -> None:
    spm, phi3 = describe(str(real_vocab("llama-spm"))), describe(str(real_vocab("phi-3")))
    a, b = F.fingerprints(spm.vocab), F.fingerprints(phi3.vocab)
    assert a.full != b.full and a.prefix == b.prefix  # 32000 vs 32064 tokens


# --------------------------------------------------------------------------- matching


def test_fingerprint_matches() -> None:
    full = "v1:" + "0123456789abcdef" * 2
    assert fingerprint_matches(full, full)
    assert fingerprint_matches("v1:0123456789abcdef", full)  # shortened to 16 digits
    assert fingerprint_matches("0123456789abcdef0123", full)  # bare hex is v1
    assert not fingerprint_matches("v1:0123456789abcde", full)  # fewer than 16 digits
    assert not fingerprint_matches("v2:0123456789abcdef", full)
    assert not fingerprint_matches("v1:1123456789abcdef", full)
    assert not fingerprint_matches(None, full) and not fingerprint_matches(full, None)


# --------------------------------------------------------------------------- output


def test_human_and_json_show_fingerprints(gguf_factory, capsys) -> None:
    t, d = gguf_factory(), gguf_factory(n_tokens=401)
    with pytest.raises(SystemExit) as exc:
        main([str(t), str(d)])
    assert exc.value.code == 4  # the draft's extra id 400 is a real token: accepted at load, aborts at run time
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("fingerprint"))
    assert FROZEN_FULL in row and row.count("v1:") == 2

    with pytest.raises(SystemExit):
        main(["--json", str(t), str(d)])
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema_version"] == 3
    assert doc["target"]["fingerprint"] == FROZEN_FULL
    assert doc["draft"]["fingerprint"].startswith("v1:") and doc["draft"]["fingerprint"] != FROZEN_FULL
    assert doc["target"]["fingerprint_prefix"].startswith("v1p:")
    assert doc["target"]["fingerprint_prefix_end"] == 5


def test_quiet_skips_the_extras(gguf_factory, capsys) -> None:
    t = gguf_factory()
    with pytest.raises(SystemExit) as exc:
        main(["-q", str(t), str(t)])
    assert exc.value.code == 0 and capsys.readouterr().out == ""
