"""Differential test: paircheck's HF-folder reading against the pinned converter itself.

paircheck judges a Hugging Face folder as the GGUF that ``convert_hf_to_gguf.py`` of the
llama.cpp vendored in llama-cpp-python 0.3.36 would write (``paircheck/_source/hf_convert.py``).
Here that converter runs, with ``--vocab-only``, on folders the tests build from llama.cpp's
real vocab files (``tests/hf_build.py``), each under ``config.json``s of several architectures,
because the converter picks the vocabulary path, special tokens and padding per architecture.
For every folder paircheck's description must equal the one it reads from the converter's
GGUF (through its own GGUF reader), and for every ordered pair of folders the llama.cpp
verdict and first failing check must equal those of the pair of converted GGUFs.

The converter runs from the pinned source tree extracted by ``tests/llamacpp_build.py``
(sha256-checked sdist; set PAIRCHECK_SDIST to a local copy), with its own ``gguf-py`` first
on PYTHONPATH, in one subprocess for all folders (its imports cost most of the time).
It needs torch, numpy, sentencepiece and transformers (the ``transformers-oracle`` extra);
with PAIRCHECK_REQUIRE_TRANSFORMERS_ORACLE=1 (CI) a missing dependency fails instead of
skipping.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from gguf_mutate import read_kvs
from hf_build import (
    LLAMA3_SPLIT,
    build_bert_folder,
    build_bpe_folder,
    build_llama_spm_folder,
    build_qwen2_folder,
    build_xlmr_unigram_folder,
    split_byte_level,
    write_config,
)

from paircheck.model import ModelDescription
from paircheck.pipeline import check_descriptions, describe

pytestmark = [pytest.mark.corpus, pytest.mark.slow]  # runs llama.cpp's converter (torch)

_CONVERT_TIMEOUT_S = 1800

# What every architecture's __init__/set_gguf_parameters reads (the converter's vocab-only
# run still writes the hyperparameters); tiny values, no weights.
_BASE = {
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 1,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "max_position_embeddings": 2048,
    "rms_norm_eps": 1e-6,
    "rope_theta": 10000.0,
}
_ARCH: dict[str, dict[str, Any]] = {
    "LlamaForCausalLM": {"model_type": "llama"},
    "MistralForCausalLM": {"model_type": "mistral"},
    "Qwen2ForCausalLM": {"model_type": "qwen2"},
    "Qwen3ForCausalLM": {"model_type": "qwen3", "head_dim": 32},
    "Qwen3MoeForCausalLM": {
        "model_type": "qwen3_moe",
        "head_dim": 32,
        "num_experts": 4,
        "num_experts_per_tok": 2,
        "moe_intermediate_size": 32,
    },
    "Qwen2MoeForCausalLM": {
        "model_type": "qwen2_moe",
        "num_experts": 4,
        "num_experts_per_tok": 2,
        "moe_intermediate_size": 32,
        "shared_expert_intermediate_size": 64,
    },
    "GPTBigCodeForCausalLM": {
        "model_type": "gpt_bigcode",
        "n_positions": 2048,
        "n_embd": 64,
        "n_head": 2,
        "n_layer": 1,
        "layer_norm_epsilon": 1e-5,
    },
    "GemmaForCausalLM": {"model_type": "gemma", "head_dim": 32},
    "Gemma2ForCausalLM": {
        "model_type": "gemma2",
        "head_dim": 32,
        "sliding_window": 512,
        "attn_logit_softcapping": 50.0,
        "final_logit_softcapping": 30.0,
        "query_pre_attn_scalar": 32,
    },
    "Gemma3ForCausalLM": {"model_type": "gemma3_text", "head_dim": 32, "sliding_window": 512},
    "Phi3ForCausalLM": {"model_type": "phi3"},
    "DeepseekV3ForCausalLM": {
        "model_type": "deepseek_v3",
        "kv_lora_rank": 16,
        "q_lora_rank": 16,
        "qk_nope_head_dim": 16,
        "qk_rope_head_dim": 16,
        "v_head_dim": 16,
        "n_routed_experts": 4,
        "n_shared_experts": 1,
        "num_experts_per_tok": 2,
        "moe_intermediate_size": 32,
        "first_k_dense_replace": 1,
        "routed_scaling_factor": 2.5,
        "norm_topk_prob": True,
        "scoring_func": "sigmoid",
    },
    # No model_type: transformers 5's AutoConfig drops rotary_pct, which GPTNeoXModel reads; without
    # model_type AutoConfig fails and load_hparams falls back to the raw config.json.
    "GPTNeoXForCausalLM": {"rotary_pct": 0.25, "layer_norm_eps": 1e-5},
    "FalconForCausalLM": {"model_type": "falcon", "layer_norm_epsilon": 1e-5},
    "Starcoder2ForCausalLM": {"model_type": "starcoder2", "norm_epsilon": 1e-5},
    "CohereForCausalLM": {"model_type": "cohere", "logit_scale": 0.0625, "layer_norm_eps": 1e-5},
    "BertModel": {"model_type": "bert", "type_vocab_size": 2, "layer_norm_eps": 1e-12},
    "XLMRobertaModel": {
        "model_type": "xlm-roberta",
        "max_position_embeddings": 514,
        "type_vocab_size": 1,
        "layer_norm_eps": 1e-5,
    },
}


def _config(folder: Path, arch: str, **extra: Any) -> dict[str, Any]:
    """The builder's own config.json (vocab_size, special ids) under another architecture."""
    own = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    keep = {k: v for k, v in own.items() if k.endswith("_token_id") or k in ("vocab_size", "type_vocab_size")}
    return {**_BASE, **keep, "architectures": [arch], **_ARCH[arch], **extra}


@dataclass(frozen=True)
class Folder:
    name: str
    build: Callable[[Path, Callable[[str], Path]], Path]


def _qwen(vocab_size: int, arch: str) -> Callable[[Path, Callable[[str], Path]], Path]:
    def build(out: Path, real_vocab: Callable[[str], Path]) -> Path:
        folder = build_qwen2_folder(real_vocab("qwen2"), out, vocab_size)
        return write_config(folder, _config(folder, arch))

    return build


def _byte_fallback(arch: str) -> Callable[[Path, Callable[[str], Path]], Path]:
    """Qwen2's tokenizer.json marked as a SentencePiece-style BPE (byte_fallback, a Sequence
    decoder), as Gemma 3's and Mistral's tokenizer.json are, with no tokenizer.model."""

    def build(out: Path, real_vocab: Callable[[str], Path]) -> Path:
        folder = build_qwen2_folder(real_vocab("qwen2"), out, 151936)
        data = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
        data["model"]["byte_fallback"] = True
        data["decoder"] = {"type": "Sequence", "decoders": [data["decoder"]]}
        (folder / "tokenizer.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        return write_config(folder, _config(folder, arch))

    return build


def _spm(arch: str, **extra: Any) -> Callable[[Path, Callable[[str], Path]], Path]:
    def build(out: Path, real_vocab: Callable[[str], Path]) -> Path:
        folder = build_llama_spm_folder(real_vocab("llama-spm"), out)
        return write_config(folder, _config(folder, arch, **extra))

    return build


def _bpe(
    vocab: str, arch: str, pre: dict[str, Any] | None, tok_config: dict[str, Any], specials_in_model: bool, **extra: Any
) -> Any:
    def build(out: Path, real_vocab: Callable[[str], Path]) -> Path:
        folder = build_bpe_folder(real_vocab(vocab), out, pre, tok_config)
        if specials_in_model:
            # GPT-2 and StarCoder list their special tokens in the model vocab too (Llama 3
            # and Qwen2 do not): otherwise tokenizers moves them past the model's ids.
            data = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
            data["model"]["vocab"].update({t["content"]: t["id"] for t in data["added_tokens"]})
            (folder / "tokenizer.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        return write_config(folder, {**_BASE, "architectures": [arch], **_ARCH[arch], **extra})

    return build


def _bert(out: Path, real_vocab: Callable[[str], Path]) -> Path:
    folder = build_bert_folder(real_vocab("bert-bge"), out)
    return write_config(folder, _config(folder, "BertModel"))


def _xlmr(out: Path, real_vocab: Callable[[str], Path]) -> Path:
    gguf = real_vocab("nomic-bert-moe")
    folder = build_xlmr_unigram_folder(gguf, out)
    # XLMRobertaModel's tokenizer.json path reads normalizer.precompiled_charsmap (the real
    # XLM-R normalizer); the charsmap is the one the GGUF carries.
    charsmap = read_kvs(gguf).get("tokenizer.ggml.precompiled_charsmap")
    assert charsmap is not None
    data = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    data["normalizer"] = {
        "type": "Precompiled",
        "precompiled_charsmap": base64.b64encode(bytes(b & 0xFF for b in charsmap.decode())).decode(),
    }
    (folder / "tokenizer.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return write_config(folder, _config(folder, "XLMRobertaModel"))


_BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
_GPT2_TOK = {"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "tokenizer_class": "GPT2Tokenizer"}
_LLAMA3_TOK = {
    "bos_token": "<|begin_of_text|>",
    "eos_token": "<|end_of_text|>",
    "tokenizer_class": "PreTrainedTokenizerFast",
}
_LLAMA3_PRE = split_byte_level(LLAMA3_SPLIT)

FOLDERS = [
    Folder("qwen2.5-0.5b", _qwen(151936, "Qwen2ForCausalLM")),
    Folder("qwen2.5-14b", _qwen(152064, "Qwen2ForCausalLM")),
    Folder("qwen3", _qwen(151936, "Qwen3ForCausalLM")),
    Folder("qwen3-moe", _qwen(151936, "Qwen3MoeForCausalLM")),
    Folder("qwen2-moe", _qwen(151936, "Qwen2MoeForCausalLM")),
    Folder("gemma3-bpe", _qwen(151936, "Gemma3ForCausalLM")),
    Folder("llama-bpe-as-qwen", _qwen(151936, "LlamaForCausalLM")),
    Folder("gemma3-byte-fallback", _byte_fallback("Gemma3ForCausalLM")),
    Folder("llama-hf-byte-fallback", _byte_fallback("LlamaForCausalLM")),
    Folder("llama2", _spm("LlamaForCausalLM")),
    Folder("mistral", _spm("MistralForCausalLM")),
    Folder("codellama", _spm("LlamaForCausalLM", vocab_size=32016)),
    Folder("granite-small", _bpe("starcoder", "LlamaForCausalLM", _BYTE_LEVEL, _GPT2_TOK, True, vocab_size=49152)),
    Folder("gemma3-spm", _spm("Gemma3ForCausalLM")),
    Folder("gemma", _spm("GemmaForCausalLM")),
    Folder("gemma2", _spm("Gemma2ForCausalLM")),
    Folder("qwen2-spm", _spm("Qwen2ForCausalLM")),
    Folder("phi3", _spm("Phi3ForCausalLM")),
    Folder(
        "llama3",
        _bpe(
            "llama-bpe",
            "LlamaForCausalLM",
            _LLAMA3_PRE,
            _LLAMA3_TOK,
            False,
            vocab_size=128256,
            bos_token_id=128000,
            eos_token_id=128001,
        ),
    ),
    Folder(
        "deepseek-v3",
        _bpe(
            "llama-bpe",
            "DeepseekV3ForCausalLM",
            _LLAMA3_PRE,
            {**_LLAMA3_TOK, "add_bos_token": True},
            False,
            vocab_size=128256,
        ),
    ),
    Folder("phi4-gpt2", _bpe("gpt-2", "Phi3ForCausalLM", _BYTE_LEVEL, _GPT2_TOK, True, vocab_size=50257)),
    Folder("gpt-neox", _bpe("gpt-2", "GPTNeoXForCausalLM", _BYTE_LEVEL, _GPT2_TOK, True, vocab_size=50257)),
    Folder("falcon", _bpe("gpt-2", "FalconForCausalLM", _BYTE_LEVEL, _GPT2_TOK, True, vocab_size=50257)),
    Folder("starcoder", _bpe("starcoder", "GPTBigCodeForCausalLM", _BYTE_LEVEL, _GPT2_TOK, True, vocab_size=49152)),
    Folder("starcoder2", _bpe("starcoder", "Starcoder2ForCausalLM", _BYTE_LEVEL, _GPT2_TOK, True, vocab_size=49152)),
    Folder("command-r", _bpe("gpt-2", "CohereForCausalLM", _BYTE_LEVEL, _GPT2_TOK, True, vocab_size=50257)),
    Folder("bge-small", _bert),
    Folder("xlmr", _xlmr),
]

# --------------------------------------------------------------------------------------
# Running the pinned converter
# --------------------------------------------------------------------------------------

_DRIVER = r"""
import json, sys, traceback
root, jobs_file, result_file = sys.argv[1:4]
sys.path[0] = root  # as if started as root/convert_hf_to_gguf.py (_set_vocab_builtin reads sys.path[0])
sys.argv = ["convert_hf_to_gguf.py"]
import convert_hf_to_gguf as conv
import gguf
results = {"gguf": gguf.__file__, "runs": {}}
for folder, out in json.load(open(jobs_file)):
    sys.argv = ["convert_hf_to_gguf.py", "--vocab-only", "--outfile", out, folder]
    try:
        conv.main()
        results["runs"][folder] = None
    except BaseException as exc:  # SystemExit from main(), any error of a set_vocab
        results["runs"][folder] = f"{type(exc).__name__}: {exc}"
        traceback.print_exc()
json.dump(results, open(result_file, "w"))
"""


def _require_converter_deps() -> None:
    missing = []
    for module in ("torch", "numpy", "sentencepiece", "transformers"):
        try:
            __import__(module)
        except ImportError as exc:
            missing.append(f"{module} ({exc})")
    if not missing:
        return
    why = f"the converter needs {', '.join(missing)}; install with: pip install -e '.[transformers-oracle]'"
    if os.environ.get("PAIRCHECK_REQUIRE_TRANSFORMERS_ORACLE") == "1":
        pytest.fail(f"converter oracle required (PAIRCHECK_REQUIRE_TRANSFORMERS_ORACLE=1) but {why}", pytrace=False)
    pytest.skip(why)


@dataclass
class Converted:
    folders: dict[str, Path]
    ggufs: dict[str, Path]
    errors: dict[str, str]
    gguf_module: str
    root: Path


@pytest.fixture(scope="session")
def converted(tmp_path_factory: pytest.TempPathFactory, real_vocab: Callable[[str], Path]) -> Converted:
    """Every folder of FOLDERS and the GGUF the pinned converter wrote from it (one run each)."""
    _require_converter_deps()
    import llamacpp_build

    root = llamacpp_build.source_root()
    base = tmp_path_factory.mktemp("converter-oracle")
    folders = {f.name: f.build(base / "hf" / f.name, real_vocab) for f in FOLDERS}
    out_dir = base / "gguf"
    out_dir.mkdir()
    jobs = [[str(path), str(out_dir / f"{name}.gguf")] for name, path in folders.items()]
    (base / "jobs.json").write_text(json.dumps(jobs))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root / "gguf-py"), os.environ.get("PYTHONPATH", "")]))
    env.pop("NO_LOCAL_GGUF", None)
    proc = subprocess.run(
        [sys.executable, "-c", _DRIVER, str(root), str(base / "jobs.json"), str(base / "result.json")],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=_CONVERT_TIMEOUT_S,
        check=False,
    )
    (base / "converter.log").write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0 or not (base / "result.json").is_file():
        pytest.fail(f"the converter driver failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}", pytrace=False)
    result = json.loads((base / "result.json").read_text())
    errors = {name: result["runs"][str(path)] for name, path in folders.items() if result["runs"][str(path)]}
    ggufs = {name: out_dir / f"{name}.gguf" for name in folders if name not in errors}
    return Converted(folders, ggufs, errors, result["gguf"], root)


# --------------------------------------------------------------------------------------
# The comparisons
# --------------------------------------------------------------------------------------

# What llama.cpp's compatibility check reads, and what paircheck derives from it.
VOCAB_FIELDS = (
    "tokenizer_model",
    "pre",
    "vocab_type",
    "n_tokens",
    "bos_id",
    "eos_id",
    "eot_id",
    "eom_id",
    "add_bos",
    "add_eos",
    "eog_ids",
    "texts",
)
# Special-token keys as written (unk and pad are not read by the check but show the choice).
SPECIAL_KEYS = (
    "tokenizer.ggml.model",
    "tokenizer.ggml.pre",
    "tokenizer.ggml.bos_token_id",
    "tokenizer.ggml.eos_token_id",
    "tokenizer.ggml.unknown_token_id",
    "tokenizer.ggml.padding_token_id",
    "tokenizer.ggml.eot_token_id",
    "tokenizer.ggml.add_bos_token",
    "tokenizer.ggml.add_eos_token",
    "tokenizer.ggml.add_space_prefix",
)

# Folders the pinned converter refuses, with the error it gives (asserted exactly).
CONVERTER_REFUSES: dict[str, str] = {}


@dataclass
class Described:
    hf: dict[str, ModelDescription]
    gguf: dict[str, ModelDescription]


@pytest.fixture(scope="session")
def described(converted: Converted) -> Described:
    return Described(
        {name: describe(str(path)) for name, path in converted.folders.items()},
        {name: describe(str(path)) for name, path in converted.ggufs.items()},
    )


def test_the_converter_runs_from_the_pinned_tree_with_its_own_gguf_py(converted: Converted) -> None:
    assert Path(converted.gguf_module).resolve().is_relative_to((converted.root / "gguf-py").resolve())
    assert converted.errors == CONVERTER_REFUSES
    assert len(converted.ggufs) == len(FOLDERS) - len(CONVERTER_REFUSES) >= 18


def _fields(desc: ModelDescription) -> dict[str, Any]:
    v = desc.vocab
    values: dict[str, Any] = {f: getattr(v, f) for f in VOCAB_FIELDS}
    values["load_error"] = v.load_error
    values["architecture"] = desc.identity.architecture
    for key in SPECIAL_KEYS:
        entry = desc.metadata.kv.get(key)
        values[key] = None if entry is None else entry[1]
    token_types = desc.metadata.kv.get("tokenizer.ggml.token_type")
    values["n_token_types"] = None if token_types is None else token_types[1].count
    return values


@pytest.mark.parametrize("name", [f.name for f in FOLDERS])
def test_description_equals_the_converted_gguf(described: Described, name: str) -> None:
    if name in CONVERTER_REFUSES:
        pytest.skip(f"the converter refuses this folder: {CONVERTER_REFUSES[name]}")
    hf, gguf = _fields(described.hf[name]), _fields(described.gguf[name])
    diff = {k: (hf[k], gguf[k]) for k in hf if hf[k] != gguf[k] and k != "texts"}
    if hf["texts"] != gguf["texts"]:
        at = [i for i, (a, b) in enumerate(zip(hf["texts"], gguf["texts"], strict=False)) if a != b][:5]
        diff["texts"] = (len(hf["texts"]), len(gguf["texts"]), [(i, hf["texts"][i], gguf["texts"][i]) for i in at])
    assert diff == {}, diff


def _verdict(report: Any) -> tuple[Any, ...]:
    first = report.first_failure
    return (
        report.compatible,
        None if first is None else first.name,
        tuple((c.name, c.status) for c in report.checks),
    )


def test_every_ordered_pair_gets_the_verdict_of_the_converted_ggufs(described: Described) -> None:
    names = sorted(described.gguf)
    differ = {}
    verdicts = set()
    for target in names:
        for draft in names:
            if target == draft:
                continue
            on_hf = _verdict(check_descriptions(described.hf[target], described.hf[draft], registry=False))
            on_gguf = _verdict(check_descriptions(described.gguf[target], described.gguf[draft], registry=False))
            verdicts.add(on_gguf[:2])
            if on_hf != on_gguf:
                differ[(target, draft)] = (on_hf[:2], on_gguf[:2])
    print(f"\n{len(names)} folders, {len(names) * (len(names) - 1)} ordered pairs, {len(differ)} disagreements")
    assert differ == {}
    # The set exercises both outcomes and several different first failures.
    assert {v[0] for v in verdicts} == {True, False} and len({v[1] for v in verdicts}) >= 4, verdicts
