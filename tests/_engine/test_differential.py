"""Differential tests: paircheck against llama.cpp itself.

paircheck predicts, from metadata alone, what llama.cpp's vocab loader derives and what
``common_speculative_are_compatible`` decides. ``tests/oracle.py`` asks the real
llama.cpp (llama-cpp-python 0.3.36, in a worker process) for the same things. Any
difference is a paircheck bug (or an oracle bug, which ``test_oracle_selfcheck.py``
guards against). The tests therefore compare *everything the check reads*, not just the
final verdict, so that a bug cannot hide behind a verdict that happens to agree.

a. The 19 real files: derived values per file, and all 361 ordered pairs.
b. Hypothesis-made single mutations of the smaller real files (one changed key, dropped
   key, retyped key, resized token list or altered token text), compared as a file and
   as (original, mutated) and (mutated, original) pairs.
c. Every BPE pre-tokenizer the pinned loader knows (``BPE_PRE_KNOWN``, checked against the
   strings src/llama-vocab.cpp compares), each with and without add_bos/bos/eos keys: the
   add_bos class and the special ids of every entry come from libllama, not from a sample.

Without llama_cpp the module is skipped, or fails when ``PAIRCHECK_REQUIRE_ORACLE=1``
(CI) so that the oracle cannot silently disappear.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from itertools import count
from pathlib import Path
from typing import Any

import llamacpp_build
import pytest
from gguf import GGUFValueType as VT
from gguf_mutate import GGUFMeta, make_kv, read_kvs, rewrite_gguf, set_tokens, token_texts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle import llama_values, oracle_compatible, require_oracle

ALL_FILES = [
    "aquila", "baichuan", "bert-bge", "command-r", "deepseek-coder", "deepseek-llm", "falcon",
    "gemma-4", "gpt-2", "gpt-neox", "llama-bpe", "llama-spm", "mpt", "nomic-bert-moe", "phi-3",
    "qwen2", "qwen35", "refact", "starcoder",
]


def fname(short: str) -> str:
    return f"ggml-vocab-{short}.gguf"


# --------------------------------------------------------------------------------------
# Oracle availability
# --------------------------------------------------------------------------------------

@pytest.fixture(scope="module", autouse=True)
def _need_oracle() -> None:
    require_oracle()


# --------------------------------------------------------------------------------------
# paircheck side, in the oracle's vocabulary (the only place that knows paircheck's API)
# --------------------------------------------------------------------------------------

_desc_cache: dict[str, Any] = {}


def pc_describe(path: Path) -> Any:
    """``paircheck.pipeline.describe(path)``, or the ``InputError`` it raised.

    Cached per path for the real files (the 361 pairs reuse 19 descriptions, exactly as
    ``check_pair`` = ``describe`` x2 + ``check_descriptions``); mutated files are written
    under fresh names and dropped from the cache by :func:`pc_forget`.
    """
    from paircheck.errors import InputError
    from paircheck.pipeline import describe

    key = str(path)
    if key not in _desc_cache:
        try:
            _desc_cache[key] = describe(key)
        except InputError as e:
            _desc_cache[key] = e
    return _desc_cache[key]


def pc_forget(path: Path) -> None:
    _desc_cache.pop(str(path), None)


def pc_values(path: Path) -> dict[str, Any]:
    """paircheck's derived values for ``path``, shaped like :func:`oracle.llama_values`."""
    desc = pc_describe(path)
    if isinstance(desc, Exception):
        # Not readable as GGUF at all (paircheck exits 2): llama.cpp must fail too.
        return {"loaded": False, "aborted": None, "error": f"InputError: {desc}"}
    v = desc.vocab
    if v.load_error is not None:
        failure = getattr(v, "failure", None)
        return {"loaded": False, "aborted": getattr(failure, "aborts", None), "error": v.load_error}
    return {
        "loaded": True,
        "aborted": False,
        "vocab_type": v.vocab_type,
        "n_tokens": v.n_tokens,
        "bos": v.bos_id,
        "eos": v.eos_id,
        "add_bos": bool(v.add_bos),
        "add_eos": bool(v.add_eos),
        "texts": list(v.texts),
        "eot": getattr(v, "eot_id", None),
        "eog": sorted(getattr(v, "eog_ids", ()) or ()),
    }


def pc_verdict(target: Path, draft: Path) -> tuple[bool, str | None]:
    """paircheck's (compatible, first failing check name) for a target/draft pair
    (llama.cpp engine, its default method draft-simple).

    A side paircheck cannot read at all (``InputError``) is reported as
    ``(False, "InputError")``; it only counts as agreement when llama.cpp refuses to load
    that side too (see :func:`same_verdict`).
    """
    from paircheck.pipeline import check_descriptions

    dt, dd = pc_describe(target), pc_describe(draft)
    if isinstance(dt, Exception) or isinstance(dd, Exception):
        return False, "InputError"
    report = check_descriptions(dt, dd, "llama.cpp", "draft-simple")
    ff = report.first_failure
    return bool(report.compatible), (None if ff is None else ff.name)


def same_verdict(got: tuple[bool, str | None], want: tuple[bool, str | None]) -> bool:
    """paircheck's verdict equals the oracle's; an InputError stands for "loadable"."""
    if got == (False, "InputError"):
        got = (False, "loadable")
    return got == want


_SCALARS = ("vocab_type", "n_tokens", "bos", "eos", "add_bos", "add_eos")


def value_diff(pc: dict[str, Any], ora: dict[str, Any]) -> list[str]:
    """Human-readable differences between the two derivations (empty = agree).

    Load failures must agree on *whether* the file loads and whether the process
    aborts; the error texts are not compared (paircheck words them its own way).
    """
    if pc["loaded"] != ora["loaded"]:
        return [f"loaded: paircheck={pc['loaded']} ({pc.get('error')!r}) "
                f"llama.cpp={ora['loaded']} ({ora.get('error')!r}, aborted={ora.get('aborted')})"]
    if not ora["loaded"]:
        if pc.get("aborted") is not None and bool(pc["aborted"]) != bool(ora["aborted"]):
            return [f"aborted: paircheck={pc['aborted']} ({pc.get('error')!r}) "
                    f"llama.cpp={ora['aborted']} ({ora.get('error')!r})"]
        return []
    out = [f"{k}: paircheck={pc[k]!r} llama.cpp={ora[k]!r}" for k in _SCALARS if pc[k] != ora[k]]
    if ora["texts"] is not None and pc["texts"] != ora["texts"]:
        pt, ot = pc["texts"], ora["texts"]
        if len(pt) != len(ot):
            out.append(f"texts: len paircheck={len(pt)} llama.cpp={len(ot)}")
        else:
            bad = [i for i in range(len(ot)) if pt[i] != ot[i]]
            out.append(f"texts differ at {len(bad)} ids, first {bad[0]}: "
                       f"paircheck={pt[bad[0]]!r} llama.cpp={ot[bad[0]]!r}")
    return out


# --------------------------------------------------------------------------------------
# a. The 19 real files
# --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def real(corpus: Path) -> dict[str, Path]:
    files = {s: Path(corpus) / fname(s) for s in ALL_FILES}
    missing = [p for p in files.values() if not p.exists()]
    assert not missing, f"corpus incomplete: {missing}"
    return files


@pytest.fixture(scope="module")
def oracle_real(real: dict[str, Path]) -> dict[str, dict[str, Any]]:
    return {s: llama_values(p) for s, p in real.items()}


@pytest.mark.parametrize("short", ALL_FILES)
def test_real_file_values(real: dict[str, Path], oracle_real: dict[str, dict[str, Any]],
                          short: str) -> None:
    """Per file: vocab type, size, bos/eos, add flags and every token text agree."""
    ora = oracle_real[short]
    assert ora["loaded"], ora.get("error")
    pc = pc_values(real[short])
    assert value_diff(pc, ora) == []


@pytest.mark.parametrize("short", ALL_FILES)
def test_real_file_eot_eog(real: dict[str, Path], oracle_real: dict[str, dict[str, Any]],
                           short: str) -> None:
    """Not read by the compatibility check, but paircheck reports them: eot id and the
    end-of-generation set must also match llama.cpp."""
    ora = oracle_real[short]
    pc = pc_values(real[short])
    assert pc["eog"] == ora["eog"]
    from paircheck.pipeline import describe

    vocab = describe(str(real[short])).vocab
    if vocab.eot_ambiguous:
        # With no eot key and several EOT-looking texts, llama.cpp takes the first in its
        # std::unordered_map's iteration order, which the file does not decide: paircheck
        # reports the candidates (eot_id null in --json), and llama.cpp's pick is one.
        assert ora["eot"] in vocab.eot_candidates
        assert set(vocab.eot_candidates) <= set(ora["eog"])
    else:
        assert pc["eot"] == ora["eot"]


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_real_pairs(real: dict[str, Path], oracle_real: dict[str, dict[str, Any]]) -> None:
    """All 19 x 19 ordered pairs: same verdict and same first failing check.

    One test (not 361) so that a failure lists every disagreeing pair at once.
    """
    disagreements = []
    n_ok = 0
    for ts in ALL_FILES:
        for ds in ALL_FILES:
            want = oracle_compatible(oracle_real[ts], oracle_real[ds])
            got = pc_verdict(real[ts], real[ds])
            if not same_verdict(got, want):
                disagreements.append(f"{ts} -> {ds}: paircheck={got} llama.cpp={want}")
            n_ok += want[0]
    assert disagreements == [], "\n".join(disagreements)
    # Sanity: the corpus has compatible pairs besides the diagonal (qwen2/qwen35, ...).
    assert n_ok > len(ALL_FILES)


# --------------------------------------------------------------------------------------
# b. Single mutations of real files
# --------------------------------------------------------------------------------------

#: Small files (< 2 MB) used as mutation bases; qwen2 (6 MB, 152k tokens) only rarely.
SMALL = ["llama-spm", "phi-3", "baichuan", "gpt-2", "deepseek-coder", "bert-bge", "starcoder"]

TOKENIZER_MODELS_VALID = ["llama", "gpt2", "bert", "t5", "rwkv", "plamo2", "test", "no_vocab",
                          "none", "gemma4", "hybriddna", "whitespace"]
TOKENIZER_MODELS_INVALID = ["", "GPT2", "llama ", "spm", "bpe", "unknown", "sentencepiece"]
# A sample of accepted pre values per add_bos class (llamacpp_tables.BPE_PRE_*; section c
# below runs all of them), and unknown ones.
PRE_KNOWN = ["default", "llama-bpe", "llama3", "tekken", "chameleon", "chatglm-bpe", "glm4",
             "gemma4", "granite-embed-multi-311m", "gpt-2", "qwen2", "starcoder",
             "deepseek-coder", "refact", "command-r", "bert-bge"]
PRE_UNKNOWN = ["", "foo", "LLAMA-BPE", "llama_bpe", "qwen-2", "gpt2"]

# general.architecture: the file's own family, others (hparams keys then missing), unknown.
ARCHES = ["llama", "gpt2", "bert", "qwen2", "phi3", "starcoder2", "t5", "foo", ""]

ID_KEYS = ["tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id"]
FLAG_KEYS = ["tokenizer.ggml.add_bos_token", "tokenizer.ggml.add_eos_token"]
DROP_KEYS = ["tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.tokens",
             "tokenizer.ggml.scores", "tokenizer.ggml.token_type", "tokenizer.ggml.merges",
             *ID_KEYS, *FLAG_KEYS, "general.architecture", "<arch>.vocab_size"]


@dataclass(frozen=True)
class Mutation:
    """One change to a base file; ``repr`` is what hypothesis prints for a failure."""

    kind: str
    key: str = ""
    value: Any = None
    vtype: int | None = None

    def apply(self, meta: GGUFMeta) -> None:
        key = self.key
        if key.startswith("<arch>."):
            arch_kv = meta.get("general.architecture")
            arch = arch_kv.decode().decode("utf-8") if arch_kv else "?"
            key = key.replace("<arch>", arch)
        if self.kind == "set":
            meta.set(make_kv(key, self.value, self.vtype))
        elif self.kind == "drop":
            meta.drop(key)
        elif self.kind == "retype":
            old = meta.get(key)
            value = int(old.decode() if old is not None else self.value)
            if self.vtype == VT.UINT16:
                value &= 0xFFFF
            elif self.vtype in (VT.UINT8, VT.BOOL):
                value &= 0xFF
            elif self.vtype == VT.INT32 and value > 0x7FFFFFFF:
                value -= 1 << 32
            meta.set(make_kv(key, value, self.vtype))
        elif self.kind == "resize":
            delta, resize_side_arrays = self.value
            texts = token_texts(meta)
            if delta < 0:
                texts = texts[:delta]
            else:
                texts = texts + [f"<mut_pad_{i}>".encode() for i in range(delta)]
            set_tokens(meta, texts, resize_parallel=resize_side_arrays)
        elif self.kind == "text":
            idx, new = self.value
            texts = token_texts(meta)
            if isinstance(new, tuple):  # ("dup", other id) / ("nul", suffix)
                tag, arg = new
                if tag == "dup":
                    new = texts[arg % len(texts)]
                else:  # keep the original text, then NUL and some junk
                    new = texts[idx] + b"\0" + arg
            texts[idx] = new
            set_tokens(meta, texts, resize_parallel=False)
        else:  # pragma: no cover
            raise ValueError(self.kind)


def mutations(n_tokens: int) -> st.SearchStrategy[Mutation]:
    """All mutation kinds, parameterised by the base file's token count.

    The kind is drawn first with ``sampled_from`` (uniform), so that rare kinds such as
    "drop" are not starved by ``one_of``'s preference for its first branches.
    """
    ids = st.one_of(
        st.integers(0, 20),
        st.integers(0, n_tokens - 1),
        st.integers(n_tokens - 3, n_tokens + 3),
        st.integers(n_tokens, 0xFFFFFFFE),
        st.just(0xFFFFFFFF),
    )
    text_ids = st.one_of(st.integers(0, 10), st.integers(0, n_tokens - 1))
    new_texts = st.one_of(
        st.just(b""),
        st.just(b"\0"),
        st.binary(min_size=1, max_size=6).filter(lambda b: b"\0" in b),
        st.tuples(st.just("nul"), st.binary(max_size=4)),
        st.tuples(st.just("dup"), st.one_of(st.integers(0, 10), st.integers(0, n_tokens - 1))),
        st.binary(min_size=1, max_size=8),
        st.just(b"\xff\xfe"),
        st.integers(0, 12).map(lambda i: f"[EMPTY_{i}]".encode()),
    )
    by_kind: dict[str, st.SearchStrategy[Mutation]] = {
        "set_id": st.builds(Mutation, st.just("set"), st.sampled_from(ID_KEYS), ids,
                            st.just(VT.UINT32)),
        "set_flag": st.builds(Mutation, st.just("set"), st.sampled_from(FLAG_KEYS), st.booleans(),
                              st.just(VT.BOOL)),
        "set_model": st.builds(Mutation, st.just("set"), st.just("tokenizer.ggml.model"),
                               st.sampled_from(TOKENIZER_MODELS_VALID + TOKENIZER_MODELS_INVALID),
                               st.just(VT.STRING)),
        "set_pre": st.builds(Mutation, st.just("set"), st.just("tokenizer.ggml.pre"),
                             st.sampled_from(PRE_KNOWN + PRE_UNKNOWN), st.just(VT.STRING)),
        "set_arch": st.builds(Mutation, st.just("set"), st.just("general.architecture"),
                              st.sampled_from(ARCHES), st.just(VT.STRING)),
        "drop": st.builds(Mutation, st.just("drop"), st.sampled_from(DROP_KEYS)),
        "retype_id": st.builds(Mutation, st.just("retype"), st.sampled_from(ID_KEYS), ids,
                               st.sampled_from([VT.INT32, VT.UINT64, VT.UINT16])),
        "retype_flag": st.builds(Mutation, st.just("retype"), st.sampled_from(FLAG_KEYS),
                                 st.integers(0, 1), st.sampled_from([VT.UINT8, VT.INT32])),
        "resize": st.builds(
            Mutation, st.just("resize"), st.just("tokenizer.ggml.tokens"),
            st.tuples(st.one_of(st.integers(-300, 300), st.integers(-130, -126),
                                st.integers(126, 130)),
                      # False: scores/token_type keep their length (too long or too short)
                      st.sampled_from([True, True, True, False])),
        ),
        "text": st.builds(Mutation, st.just("text"), st.just("tokenizer.ggml.tokens"),
                          st.tuples(text_ids, new_texts)),
    }
    kinds = sorted(by_kind)
    return st.sampled_from(kinds).flatmap(lambda k: by_kind[k])


def _compare_mutation(real: dict[str, Path], mut_dir: Path, short: str, mut: Mutation) -> list[str]:
    """Write ``short`` + ``mut``, compare values and both pair verdicts; return problems."""
    base = real[short]
    dst = mut_dir / f"m{next(_counter)}-{short}.gguf"
    rewrite_gguf(base, dst, mut.apply)
    try:
        ora_m, ora_b = llama_values(dst), llama_values(base)
        problems = [f"[values] {d}" for d in value_diff(pc_values(dst), ora_m)]
        for label, t, d, ot, od in (("base->mut", base, dst, ora_b, ora_m),
                                    ("mut->base", dst, base, ora_m, ora_b)):
            want = oracle_compatible(ot, od)
            got = pc_verdict(t, d)
            if not same_verdict(got, want):
                problems.append(f"[{label}] paircheck={got} llama.cpp={want}")
        return problems
    finally:
        pc_forget(dst)
        dst.unlink(missing_ok=True)


#: Fixed mutations, each of which once separated paircheck from llama.cpp (found by the
#: hypothesis test and by a grid run over all mutation parameters). Kept as explicit
#: cases so that a regression shows up deterministically, whatever hypothesis draws.
PINNED: list[tuple[str, Mutation]] = [
    # A BYTE-typed SPM token (<0x00> at id 3, <0x0A> at id 13) whose text is shorter than
    # 3 bytes: the loader builds the token-to-piece cache, token_to_byte() does
    # text.substr(3, 2) -> std::out_of_range "basic_string::substr" -> load error.
    # (3 or 4 bytes load fine: substr(3, 2) only throws when 3 > size.)
    ("llama-spm", Mutation("text", "tokenizer.ggml.tokens", (3, b"\xff\xfe"))),
    ("phi-3", Mutation("text", "tokenizer.ggml.tokens", (13, b"\xfe"))),
    # SPM token list declared as tokenizer "bert" (WPM): the BYTE-typed tokens reach
    # token_to_byte()'s WPM branch -> GGML_ABORT (llama-vocab.cpp:3207) -> process abort.
    ("llama-spm", Mutation("set", "tokenizer.ggml.model", "bert", VT.STRING)),
    # BPE token list declared as "plamo2": the PLaMo-2 tokenizer needs <0x00>..<0xFF>
    # byte tokens -> load error "Byte token for <0x0> is not set".
    ("gpt-2", Mutation("set", "tokenizer.ggml.model", "plamo2", VT.STRING)),
    # Controls that agree today: NUL truncation, [EMPTY_i], duplicate -> abort, size edge.
    ("llama-spm", Mutation("text", "tokenizer.ggml.tokens", (7, b"\0"))),
    ("llama-spm", Mutation("text", "tokenizer.ggml.tokens", (9, ("dup", 8)))),
    ("gpt-2", Mutation("text", "tokenizer.ggml.tokens", (5, b"[EMPTY_7]"))),
    ("gpt-2", Mutation("resize", "tokenizer.ggml.tokens", (-128, True))),
    ("gpt-2", Mutation("resize", "tokenizer.ggml.tokens", (-129, True))),
    ("phi-3", Mutation("set", "tokenizer.ggml.bos_token_id", 0xFFFFFFFF, VT.UINT32)),
    ("deepseek-coder", Mutation("retype", "tokenizer.ggml.add_bos_token", 1, VT.UINT8)),
]


@pytest.mark.parametrize("short,mut", PINNED, ids=[f"{s}-{m.kind}-{i}" for i, (s, m) in enumerate(PINNED)])
def test_pinned_mutations(real: dict[str, Path], mut_dir: Path, short: str, mut: Mutation) -> None:
    problems = _compare_mutation(real, mut_dir, short, mut)
    assert problems == [], f"{short} + {mut!r}:\n" + "\n".join(problems)


def _examples() -> int:
    return int(os.environ.get("PAIRCHECK_DIFF_EXAMPLES", "200"))


_base_cache: dict[str, int] = {}
_counter = count()


def _n_tokens(path: Path) -> int:
    key = str(path)
    if key not in _base_cache:
        _base_cache[key] = len(token_texts(read_kvs(path)))
    return _base_cache[key]


@pytest.fixture(scope="module")
def mut_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mutations")


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
@settings(
    max_examples=_examples(),
    deadline=None,
    derandomize=bool(os.environ.get("CI")),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
@given(data=st.data())
def test_mutations(real: dict[str, Path], mut_dir: Path, data: st.DataObject) -> None:
    """One mutation of one real file: derived values and both pair verdicts agree."""
    short = data.draw(st.integers(0, 99).map(
        lambda i: "qwen2" if i >= 96 else SMALL[i % len(SMALL)]), label="base")
    mut = data.draw(mutations(_n_tokens(real[short])), label="mutation")
    problems = _compare_mutation(real, mut_dir, short, mut)
    assert problems == [], f"{short} + {mut!r}:\n" + "\n".join(problems)


# --------------------------------------------------------------------------------------
# c. Every BPE pre-tokenizer
# --------------------------------------------------------------------------------------

#: Each pre value is written with these keys on a BPE ("gpt2") vocabulary: the absent key
#: shows the add_bos class, the others the forced classes (Gemma-4 style) and the pre values
#: whose default BOS is none (ChatGLM style).
PRE_VARIANTS: dict[str, dict[str, Any]] = {
    "no keys": {},
    "add_bos false": {"add_bos": False},
    "add_bos true": {"add_bos": True},
    "bos 7": {"bos": 7},
    "eos 9 added": {"eos": 9, "add_eos": True},
}


def test_bpe_pre_table_names_what_the_loader_compares() -> None:
    """BPE_PRE_KNOWN holds exactly the tokenizer.ggml.pre strings that the pinned
    src/llama-vocab.cpp compares (llama_vocab::impl::load): none missing, none invented."""
    from paircheck.llamacpp_tables import BPE_PRE_KNOWN

    source = (llamacpp_build.source_root() / "src" / "llama-vocab.cpp").read_text()
    compared = set(re.findall(r'tokenizer_pre\s*==\s*"([^"]*)"', source))
    assert len(compared) > 80, "the pattern no longer finds the loader's comparisons"
    assert compared == BPE_PRE_KNOWN


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_every_bpe_pre_through_libllama(tmp_path: Path) -> None:
    """All BPE_PRE_KNOWN entries (and a few unknown ones) in every variant: loadable or not,
    vocab type, ids, add flags and texts agree with libllama. One test, so that a failure
    lists every disagreeing value at once."""
    from ggufgen import write_vocab_gguf

    from paircheck import llamacpp_tables as T

    problems: list[str] = []
    classes: dict[str, set[str]] = {"add_bos": set(), "forced": set(), "no_bos": set(), "loaded": set()}
    for i, pre in enumerate(sorted(T.BPE_PRE_KNOWN) + PRE_UNKNOWN):
        for label, keys in PRE_VARIANTS.items():
            path = write_vocab_gguf(tmp_path / f"pre{i}-{label.replace(' ', '-')}.gguf", model="gpt2", pre=pre, **keys)
            ora = llama_values(path)
            problems += [f"pre {pre!r} ({label}): {d}" for d in value_diff(pc_values(path), ora)]
            pc_forget(path)
            if not ora["loaded"]:
                continue
            classes["loaded"].add(pre)
            if label == "no keys" and ora["add_bos"]:
                classes["add_bos"].add(pre)
            if label == "add_bos false" and ora["add_bos"]:
                classes["forced"].add(pre)
            if label == "no keys" and ora["bos"] == -1:
                classes["no_bos"].add(pre)
    assert problems == [], "\n".join(problems)
    # The tables' classes, as llama.cpp itself sorts the entries.
    # An empty string is taken as a missing key (the 'default' pre-tokenizer, with a warning).
    assert classes["loaded"] == T.BPE_PRE_KNOWN | {""}
    assert classes["add_bos"] == T.BPE_PRE_ADD_BOS | T.BPE_PRE_GEMMA4
    assert classes["forced"] == T.BPE_PRE_GEMMA4
    assert classes["no_bos"] == T.BPE_PRE_NO_BOS
