"""PW001 without tensor infos (issue 26, point 7): a vocab-only GGUF or a Hugging Face folder
without safetensors headers still says how large the model is, in ``general.size_label`` or
in its config.json, so a 14B "draft" for a 0.5B target is not passed silently."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hf_build import build_qwen2_folder

from paircheck.pipeline import check_pair
from paircheck.weights import config_parameters, label_parameters

# Published hyperparameters (config.json of Qwen/Qwen2.5-0.5B-Instruct and Qwen2.5-14B-Instruct).
QWEN_05B = {"hidden_size": 896, "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2,
            "intermediate_size": 4864, "tie_word_embeddings": True}
QWEN_14B = {"hidden_size": 5120, "num_hidden_layers": 48, "num_attention_heads": 40, "num_key_value_heads": 8,
            "intermediate_size": 13824, "tie_word_embeddings": False}


def _size(report) -> dict[str, object] | None:  # type: ignore[no-untyped-def]
    found = report.finding("PW001")
    return None if found is None else {"message": found.message, **found.details}


@pytest.mark.parametrize(("label", "count"), [("14B", 14_000_000_000), ("0.5B", 500_000_000), ("135M", 135_000_000),
                                              ("8x7B", None), ("E2B", None), ("", None)])
def test_size_labels(label: str, count: int | None) -> None:
    assert label_parameters(label) == count


def test_config_estimates_are_close_to_the_published_sizes() -> None:
    small = config_parameters({**QWEN_05B, "vocab_size": 151936})
    large = config_parameters({**QWEN_14B, "vocab_size": 152064})
    assert small is not None and large is not None
    assert 0.45e9 < small < 0.55e9  # Qwen2.5-0.5B: 0.49B
    assert 13.5e9 < large < 15e9  # Qwen2.5-14B: 14.7B
    assert config_parameters({"hidden_size": 896}) is None  # not enough to say


def test_vocab_only_files_with_size_labels(gguf_factory) -> None:  # type: ignore[no-untyped-def]
    small = gguf_factory("small.gguf", extra_kv={"general.size_label": "0.5B"})
    large = gguf_factory("large.gguf", extra_kv={"general.size_label": "14B"})
    mid = gguf_factory("mid.gguf", extra_kv={"general.size_label": "3B"})
    tiny = gguf_factory("tiny.gguf", extra_kv={"general.size_label": "1.5B"})
    found = _size(check_pair(str(small), str(large)))
    assert found is not None and found["basis"] == "parameters"
    assert "larger than the target" in str(found["message"]) and "general.size_label 14B" in str(found["message"])
    big = gguf_factory("big.gguf", extra_kv={"general.size_label": "7B"})
    found = _size(check_pair(str(big), str(mid)))  # 43%: little or no speedup
    assert found is not None and "little or no speedup" in str(found["message"])
    assert _size(check_pair(str(big), str(tiny))) is None  # 21%: a good draft
    assert _size(check_pair(str(large), str(small))) is None
    unlabelled = gguf_factory("plain.gguf")
    assert _size(check_pair(str(small), str(unlabelled))) is None  # nothing says: nothing claimed


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_hf_folders_without_weights_use_their_config(tmp_path: Path, real_vocab) -> None:  # type: ignore[no-untyped-def]
    folders = {}
    for name, config, rows in (("Qwen2.5-0.5B-Instruct", QWEN_05B, 151936), ("Qwen2.5-14B-Instruct", QWEN_14B, 152064)):
        folder = build_qwen2_folder(real_vocab("qwen2"), tmp_path / name, rows, name)
        data = json.loads((folder / "config.json").read_text())
        (folder / "config.json").write_text(json.dumps({**data, **config}))
        assert not list(folder.glob("*.safetensors"))
        folders[name] = folder
    report = check_pair(str(folders["Qwen2.5-0.5B-Instruct"]), str(folders["Qwen2.5-14B-Instruct"]))
    found = _size(report)
    assert found is not None and "config.json, estimated" in str(found["message"])
    assert found["draft_parameters"] > 20 * found["target_parameters"]  # type: ignore[operator]
    assert _size(check_pair(str(folders["Qwen2.5-14B-Instruct"]), str(folders["Qwen2.5-0.5B-Instruct"]))) is None
