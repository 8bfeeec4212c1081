"""Differential test: paircheck's transformers verdict against real ``generate(assistant_model=...)``.

Tiny random-weight models (CPU torch) are built from folders holding real tokenizer files
(tests/hf_build.py: Qwen2 byte-level BPE at two paddings, Llama 2 SentencePiece, a Qwen2
tokenizer with two tokens swapped, and a stateful Mamba). For every ordered pair, greedy
and sampling, generation runs once without and once with ``tokenizer``/``assistant_tokenizer``;
what transformers does (runs, or which ValueError it raises) must be what paircheck's
report predicts. Needs the ``transformers-oracle`` extra; with
PAIRCHECK_REQUIRE_TRANSFORMERS_ORACLE=1 (CI, once it installs the extra) a missing extra
fails instead of skipping.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hf_build import build_llama_spm_folder, build_qwen2_folder

from paircheck._engine import transformers as tf_rules
from paircheck.findings import REFUSED, Report
from paircheck.pipeline import check_descriptions, describe

pytestmark = [pytest.mark.corpus, pytest.mark.slow]  # runs torch and transformers

OK, UAD_REFUSAL, SAME_REFUSAL, STATEFUL = "runs", "needs tokenizers", "assistant_tokenizer not required", "stateful"
SAMPLING_CRASH = "AttributeError assistant_overlap_token_ids"
SAME_MESSAGE = "`assistant_tokenizer` is not required when the main and assistant models use the same tokenizer"


def _require_torch() -> Any:
    try:
        import torch
        import transformers
    except ImportError as exc:
        if os.environ.get("PAIRCHECK_REQUIRE_TRANSFORMERS_ORACLE") == "1":
            pytest.fail(f"transformers oracle required (PAIRCHECK_REQUIRE_TRANSFORMERS_ORACLE=1) but {exc}; "
                        "install with: pip install -e '.[transformers-oracle]'", pytrace=False)
        pytest.skip(f"transformers oracle unavailable ({exc}); pip install -e '.[transformers-oracle]'")
    return torch, transformers


def _edit_config(folder: Path, **entries: Any) -> Path:
    data = json.loads((folder / "config.json").read_text())
    data.update(entries)
    (folder / "config.json").write_text(json.dumps(data))
    return folder


def _swap_tokens(folder: Path, a: int, b: int) -> Path:
    """The same tokenizer with ids ``a`` and ``b`` exchanged: equal sizes, other mapping."""
    path = folder / "tokenizer.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    vocab = data["model"]["vocab"]
    by_id = {i: t for t, i in vocab.items()}
    vocab[by_id[a]], vocab[by_id[b]] = b, a
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tf-oracle")
    qwen, spm = corpus / "ggml-vocab-qwen2.gguf", corpus / "ggml-vocab-llama-spm.gguf"
    return {
        "qwen-151936": build_qwen2_folder(qwen, root / "qwen-151936", 151936),
        "qwen-152064": build_qwen2_folder(qwen, root / "qwen-152064", 152064),
        "qwen-swapped": _swap_tokens(build_qwen2_folder(qwen, root / "qwen-swapped", 151936), 1000, 1001),
        "llama-32000": build_llama_spm_folder(spm, root / "llama-32000"),
        "mamba": _edit_config(build_qwen2_folder(qwen, root / "mamba", 151936),
                              model_type="mamba", architectures=["MambaForCausalLM"]),
    }


def _tiny(torch: Any, transformers: Any, folder: Path) -> Any:
    config = transformers.AutoConfig.from_pretrained(folder)
    small = {"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2,
             "num_key_value_heads": 1, "max_position_embeddings": 128, "state_size": 4, "expand": 2}
    for key, value in small.items():
        setattr(config, key, value)
    torch.manual_seed(0)
    return transformers.AutoModelForCausalLM.from_config(config).eval()


def _observe(torch: Any, transformers: Any, target: Path, draft: Path, inputs: Any, sample: bool,
             **kwargs: Any) -> tuple[str, str]:
    """One generate() call on fresh models. Fresh, because UAD with sampling prunes the
    assistant's lm_head in place, and transformers caches its vocabulary translator per
    tokenizer pair whatever the model or sampling mode: each call must start as a new
    process would."""
    from transformers.generation.candidate_generator import (
        AssistantVocabTranslatorCache,
    )

    AssistantVocabTranslatorCache._cache.clear()
    target_model, draft_model = _tiny(torch, transformers, target), _tiny(torch, transformers, draft)
    torch.manual_seed(0)
    try:
        target_model.generate(**inputs, assistant_model=draft_model, max_new_tokens=3, do_sample=sample, **kwargs)
    except AttributeError as exc:
        if "assistant_overlap_token_ids" in str(exc):
            return SAMPLING_CRASH, str(exc)
        raise
    except ValueError as exc:
        text = str(exc)
        if text == tf_rules.UAD_ERROR:
            return UAD_REFUSAL, text
        if text.startswith(SAME_MESSAGE):
            return SAME_REFUSAL, text
        if text.startswith("assisted generation is not supported with stateful models"):
            return STATEFUL, text
        return f"ValueError: {text}", text
    return OK, ""


def _predict(report: Report, sample: bool) -> tuple[str, str]:
    """(without tokenizers, with both tokenizers) as paircheck's report implies."""
    if report.verdict == REFUSED:
        first = report.first_failure
        assert first is not None
        outcome = STATEFUL if first.code == tf_rules.R_STATE.code else "refused"
        return outcome, outcome
    path = next(c for c in report.checks if c.code == tf_rules.R_PATH.code)
    if not path.details.get("uad"):
        return OK, SAME_REFUSAL
    crashes = any(w.code == tf_rules.W_SAMPLING.code for w in report.warnings)
    return UAD_REFUSAL, SAMPLING_CRASH if sample and crashes else OK


def test_transformers_verdicts_match_generate(folders: dict[str, Path]) -> None:
    torch, transformers = _require_torch()
    tokenizers = {name: transformers.AutoTokenizer.from_pretrained(folder) for name, folder in folders.items()}
    descriptions = {name: describe(str(folder)) for name, folder in folders.items()}
    seen: set[tuple[str, str]] = set()
    mismatches = []
    pairs = [(t, d) for t in folders for d in folders if d != "mamba" or t == "mamba"]
    # (a stateful assistant is not what this checks; a stateful target is)
    for t_name, d_name in pairs:
        t_folder, d_folder = folders[t_name], folders[d_name]
        report = check_descriptions(descriptions[t_name], descriptions[d_name], "transformers",
                                    registry=False, fingerprint=False)
        inputs = tokenizers[t_name]("Speculative decoding checks", return_tensors="pt")
        for sample in (False, True):
            plain = _observe(torch, transformers, t_folder, d_folder, inputs, sample)
            both = _observe(torch, transformers, t_folder, d_folder, inputs, sample,
                            tokenizer=tokenizers[t_name], assistant_tokenizer=tokenizers[d_name])
            observed, expected = (plain[0], both[0]), _predict(report, sample)
            seen.add(observed)
            if observed != expected:
                mismatches.append((t_name, d_name, "sampling" if sample else "greedy", expected, observed))
            if report.verdict == REFUSED:
                assert report.engine_says is not None
                assert plain[1].startswith(report.engine_says.split(" such as ")[0])
    assert mismatches == []
    # The pairs reach every path: same tokenizer, UAD, the sampling crash and the stateful refusal.
    assert {(OK, SAME_REFUSAL), (UAD_REFUSAL, OK), (UAD_REFUSAL, SAMPLING_CRASH), (STATEFUL, STATEFUL)} <= seen


def test_equal_rows_other_tokens_is_the_silent_case(folders: dict[str, Path]) -> None:
    """paircheck's TF102: transformers takes the same-tokenizer path for a remapped tokenizer."""
    report = check_descriptions(describe(str(folders["qwen-151936"])), describe(str(folders["qwen-swapped"])),
                                "transformers", registry=False, fingerprint=False)
    assert [w.code for w in report.warnings] == ["TF102"] and _predict(report, True) == (OK, SAME_REFUSAL)
