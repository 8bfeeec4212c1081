"""Recompute a registry side's vocabulary fingerprints from the files they came from.

Every ``target_vocab``/``draft_vocab`` in registry/*.toml names a pinned artifact, a file
in it with its sha256, and the model's config ``vocab_size``. Here the file is fetched
(through tests/corpus.py: the llama-cpp-python 0.3.36 sdist from PyPI), checked against
that sha256, turned into the Hugging Face folder the model ships (tokenizer files rebuilt
from the GGUF's own texts, merges and scores by tests/hf_build.py, config.json with the
side's ``vocab_size``) and described by paircheck's own HF-folder reader, as a user's
folder would be. The fingerprints of that description are what the registry must store.

Gemma 4's file (GGUF_DIRECT) is described as the GGUF itself: there is no HF-folder recipe for
its tokenizer here, and llama.cpp reads the GGUF.

Also a script: ``python tests/_registry/vocab_sources.py FILE VOCAB_SIZE`` prints both
fingerprints, which is how the stored values were computed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

_TESTS = Path(__file__).resolve().parents[1]
if str(_TESTS) not in sys.path:
    sys.path.insert(0, str(_TESTS))

import corpus  # noqa: E402
import hf_build  # noqa: E402

from paircheck.fingerprint import Fingerprints, fingerprints  # noqa: E402
from paircheck.pipeline import describe  # noqa: E402

#: The artifact string the registry uses for files of the corpus, and where in it they are.
CORPUS_ARTIFACT = f"pypi:{corpus.SDIST_PROJECT}=={corpus.SDIST_VERSION} sdist (sha256 {corpus.SDIST_SHA256})"
CORPUS_PREFIX = "vendor/llama.cpp/models/"

# Llama 3's published tokenizer.json pre-tokenizer and post-processor (the regex is the one
# llama.cpp's llama-vocab.cpp keeps, commented, for LLAMA_VOCAB_PRE_TYPE_LLAMA3): with them
# the converter's pre-tokenizer hash gives "llama-bpe", as for Meta-Llama-3-8B itself.
LLAMA3_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_LLAMA3_PRE = {
    "type": "Sequence",
    "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": LLAMA3_SPLIT}, "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
    ],
}
_BOS = "<|begin_of_text|>"
_LLAMA3_POST = {
    "type": "Sequence",
    "processors": [
        {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": _BOS, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [
                {"SpecialToken": {"id": _BOS, "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
                {"SpecialToken": {"id": _BOS, "type_id": 1}},
                {"Sequence": {"id": "B", "type_id": 1}},
            ],
            "special_tokens": {_BOS: {"id": _BOS, "ids": [128000], "tokens": [_BOS]}},
        },
    ],
}


def build_llama3_folder(gguf: Path, out: Path, vocab_size: int) -> Path:
    """A Llama-3-style folder (byte-level BPE with ignore_merges, BOS added by the template)."""
    data = json.loads(hf_build.bpe_tokenizer_json(gguf, _LLAMA3_PRE))
    data["model"]["ignore_merges"] = True
    data["post_processor"] = _LLAMA3_POST
    out.mkdir(parents=True, exist_ok=True)
    (out / "tokenizer.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    (out / "tokenizer_config.json").write_text(
        json.dumps({"bos_token": _BOS, "eos_token": "<|end_of_text|>", "tokenizer_class": "PreTrainedTokenizerFast"}),
        encoding="utf-8",
    )
    (out / "config.json").write_text(
        json.dumps(
            {
                "architectures": ["LlamaForCausalLM"],
                "model_type": "llama",
                "bos_token_id": 128000,
                "eos_token_id": 128001,
                "vocab_size": vocab_size,
            }
        ),
        encoding="utf-8",
    )
    return out


# The corpus files the registry cites, each with the builder of the folder its model ships.
BUILDERS = {
    "ggml-vocab-qwen2.gguf": lambda g, o, n: hf_build.build_qwen2_folder(g, o, n, name="qwen"),
    "ggml-vocab-llama-bpe.gguf": build_llama3_folder,
    "ggml-vocab-llama-spm.gguf": lambda g, o, n: hf_build.build_llama_spm_folder(g, o, n),
}


def corpus_file(file: str) -> Path:
    """The verified corpus file a registry ``file`` value names."""
    if not file.startswith(CORPUS_PREFIX) or file[len(CORPUS_PREFIX):] not in corpus.CORPUS_FILES:
        raise ValueError(f"{file!r} is not a corpus file (expected {CORPUS_PREFIX}ggml-vocab-*.gguf)")
    return corpus.corpus_dir() / file[len(CORPUS_PREFIX):]


# Corpus files described as the GGUF itself (what llama.cpp reads), not through a rebuilt HF
# folder: tests/hf_build.py has no recipe for Gemma 4's tokenizer. The side's config
# vocab_size must then equal the file's token count, or the stored full fingerprint (a
# function of the size) would not be the model's.
GGUF_DIRECT = frozenset({"ggml-vocab-gemma-4.gguf"})


def recompute(file: str, vocab_size: int, workdir: Path) -> Fingerprints:
    """Fingerprints of the HF folder rebuilt from ``file`` with config ``vocab_size``
    (for a GGUF_DIRECT file: of the GGUF itself, whose token count must be ``vocab_size``)."""
    gguf = corpus_file(file)
    name = gguf.name
    if name in GGUF_DIRECT:
        vocab = describe(str(gguf)).vocab
        got = fingerprints(vocab)
        count = vocab.n_tokens if vocab is not None else 0
        if count != vocab_size:
            raise ValueError(f"{name} holds {count} tokens, not the side's vocab_size {vocab_size}")
        return got
    if name not in BUILDERS:
        raise ValueError(f"no HF-folder builder for {name}")
    folder = BUILDERS[name](gguf, workdir / f"{gguf.stem}-{vocab_size}", vocab_size)
    return fingerprints(describe(str(folder)).vocab)


if __name__ == "__main__":  # pragma: no cover - a helper for whoever adds fingerprints
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        got = recompute(sys.argv[1], int(sys.argv[2]), Path(tmp))
        print(got.prefix, got.full, got.prefix_end)
