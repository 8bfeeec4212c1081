"""llama.cpp's other speculative types on synthetic heads: draft-eagle3, draft-mtp,
draft-dflash/-dspark and ngram-* as the pinned llama.cpp (llama-cpp-python 0.3.36's
vendor/llama.cpp: common/speculative.cpp, src/llama-model.cpp) loads and initialises them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gguf
import numpy as np
import pytest

from paircheck.findings import FAIL, PASS, SKIP
from paircheck.pipeline import check_descriptions, describe


def write_model(path: Path, arch: str, kv: dict[str, Any], tensors: dict[str, tuple[int, int]] | None = None,
                tokens: list[str] | None = None) -> Path:
    """A tiny GGUF with real tensor infos (and zero data): heads need tensor names and shapes."""
    writer = gguf.GGUFWriter(str(path), arch)
    for key, value in kv.items():
        if isinstance(value, list):
            writer.add_array(key, value)
        elif isinstance(value, bool):
            writer.add_bool(key, value)
        elif isinstance(value, int):
            writer.add_uint32(key, value)
        elif isinstance(value, float):
            writer.add_float32(key, value)
        else:
            writer.add_string(key, value)
    if tokens is not None:
        writer.add_tokenizer_model("llama")
        writer.add_token_list(tokens)
    for name, (rows, cols) in (tensors or {}).items():
        writer.add_tensor(name, np.zeros((rows, cols), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


TOKENS = [f"t{i}" for i in range(64)]


@pytest.fixture
def target(tmp_path: Path) -> Path:
    return write_model(tmp_path / "target.gguf", "llama",
                       {"llama.block_count": 32, "llama.embedding_length": 4096}, tokens=TOKENS)


def eagle3_head(tmp_path: Path, layers: list[int] | None = (2, 16, 29), hidden: int = 4096) -> Path:  # type: ignore[assignment]
    kv: dict[str, Any] = {"eagle3.target_hidden_size": hidden, "eagle3.attention.layer_norm_rms_epsilon": 1e-5}
    if layers is not None:
        kv["eagle3.target_layers"] = list(layers)
    return write_model(tmp_path / "head.gguf", "eagle3", kv, {"fc.weight": (8, 4)}, tokens=TOKENS)


def by_code(report, code):  # type: ignore[no-untyped-def]
    return next(c for c in report.checks if c.code == code)


def test_eagle3_head_fits(tmp_path: Path, target: Path) -> None:
    report = check_descriptions(describe(str(target)), describe(str(eagle3_head(tmp_path))), method="draft-eagle3")
    assert report.compatible, [c.message for c in report.checks]
    assert by_code(report, "LC013").details["target_n_layer"] == 32


def test_eagle3_layer_past_target_aborts(tmp_path: Path, target: Path) -> None:
    report = check_descriptions(describe(str(target)), describe(str(eagle3_head(tmp_path, [2, 16, 33]))),
                                method="draft-eagle3")
    check = by_code(report, "LC013")
    assert check.status == FAIL and check.details["aborts"] and "33" in check.message


def test_eagle3_layer_equal_to_n_layer_is_allowed(tmp_path: Path, target: Path) -> None:
    # An id equal to n_layer reads the pre-norm state: allowed (only larger ids abort).
    report = check_descriptions(describe(str(target)), describe(str(eagle3_head(tmp_path, [2, 16, 32]))),
                                method="draft-eagle3")
    assert by_code(report, "LC013").status == PASS


def test_eagle3_needs_three_layers_and_hidden_size(tmp_path: Path, target: Path) -> None:
    t = describe(str(target))
    two = check_descriptions(t, describe(str(eagle3_head(tmp_path, [2, 16]))), method="draft-eagle3")
    assert by_code(two, "LC011").status == FAIL and "exactly 3" in by_code(two, "LC011").message
    other = check_descriptions(t, describe(str(eagle3_head(tmp_path, hidden=5120))), method="draft-eagle3")
    assert by_code(other, "LC014").status == FAIL and "5120" in by_code(other, "LC014").message


def test_plain_draft_as_eagle3_is_refused(tmp_path: Path, target: Path) -> None:
    report = check_descriptions(describe(str(target)), describe(str(target)), method="draft-eagle3")
    assert report.first_failure.code == "LC010"
    assert "got 0" in report.engine_says
    assert any("ngram" in step for step in report.next_steps)


def test_mtp_needs_nextn_layers_in_target(tmp_path: Path, target: Path) -> None:
    plain = describe(str(target))
    assert check_descriptions(plain, plain, method="draft-mtp").first_failure.code == "LC030"
    mtp = write_model(tmp_path / "q.gguf", "qwen35", {"qwen35.block_count": 25, "qwen35.nextn_predict_layers": 1,
                                                     "qwen35.embedding_length": 2048}, tokens=TOKENS)
    d = describe(str(mtp))
    assert check_descriptions(d, d, method="draft-mtp").compatible


def test_mtp_refuses_a_router_layer(tmp_path: Path) -> None:
    """Pinned src/llama-context.cpp (llama-cpp-python 0.3.36), llama_init_from_model: '// router_layer >= 0
    means n_layer_nextn is repurposed for a router layer, not real MTP' above 'if (params.ctx_type ==
    LLAMA_CONTEXT_TYPE_MTP && (model->hparams.n_layer_nextn == 0 || model->hparams.router_layer >= 0))';
    src/models/granite-switch.cpp sets 'hparams.router_layer = (int32_t) n_real;' and 'hparams.n_layer_nextn
    = 1;' whatever the file says. So a graniteswitch model is refused even when it declares nextn layers,
    and the same file under an MTP architecture is accepted."""
    kv = {"block_count": 40, "nextn_predict_layers": 1, "embedding_length": 2048}
    switch = describe(str(write_model(tmp_path / "g.gguf", "graniteswitch",
                                      {f"graniteswitch.{k}": v for k, v in kv.items()}, tokens=TOKENS)))
    report = check_descriptions(switch, switch, method="draft-mtp")
    assert report.first_failure is not None and report.first_failure.code == "LC030"
    assert "router layer" in report.first_failure.message
    qwen = describe(str(write_model(tmp_path / "q.gguf", "qwen35", {f"qwen35.{k}": v for k, v in kv.items()},
                                    tokens=TOKENS)))
    assert check_descriptions(qwen, qwen, method="draft-mtp").compatible


def test_mtp_head_width_must_match(tmp_path: Path) -> None:
    t = describe(str(write_model(tmp_path / "t.gguf", "qwen35", {
        "qwen35.block_count": 25, "qwen35.nextn_predict_layers": 1, "qwen35.embedding_length": 2048}, tokens=TOKENS)))
    head = describe(str(write_model(tmp_path / "h.gguf", "qwen35", {
        "qwen35.block_count": 1, "qwen35.nextn_predict_layers": 1, "qwen35.embedding_length": 4096}, tokens=TOKENS)))
    report = check_descriptions(t, head, method="draft-mtp")
    assert by_code(report, "LC031").status == FAIL


def test_dspark_needs_markov_tensor(tmp_path: Path, target: Path) -> None:
    kv = {"dflash.target_layers": [1, 8, 20], "dflash.attention.layer_norm_rms_epsilon": 1e-6,
          "dflash.embedding_length": 4096}
    dflash = describe(str(write_model(tmp_path / "df.gguf", "dflash", kv, {"fc.weight": (4, 4)}, tokens=TOKENS)))
    dspark = describe(str(write_model(tmp_path / "ds.gguf", "dflash", kv,
                                      {"fc.weight": (4, 4), "markov_w1.weight": (4, 4)}, tokens=TOKENS)))
    t = describe(str(target))
    assert check_descriptions(t, dflash, method="draft-dflash").compatible
    assert by_code(check_descriptions(t, dflash, method="draft-dspark"), "LC024").status == FAIL
    assert check_descriptions(t, dspark, method="draft-dspark").compatible


def test_dflash_bad_activation_and_range(tmp_path: Path, target: Path) -> None:
    kv = {"dflash.target_layers": [1, 40], "dflash.attention.layer_norm_rms_epsilon": 1e-6,
          "dflash.hidden_activation": "relu"}
    report = check_descriptions(describe(str(target)), describe(str(write_model(tmp_path / "d.gguf", "dflash", kv))),
                                method="draft-dflash")
    assert "unsupported DFlash hidden activation: relu" in by_code(report, "LC021").message
    assert by_code(report, "LC022").status == FAIL


def test_ngram_needs_nothing(target: Path) -> None:
    t = describe(str(target))
    report = check_descriptions(t, t, method="ngram-mod")
    assert report.compatible and "--spec-type ngram-mod" in report.next_steps[0]


def test_draft_simple_failure_suggests_ngram(real_vocab) -> None:  # type: ignore[no-untyped-def]
    report = check_descriptions(describe(str(real_vocab("llama-spm"))), describe(str(real_vocab("qwen2"))))
    assert not report.compatible
    assert any("ngram-mod" in step for step in report.next_steps)


def test_unknown_method_is_input_error(target: Path) -> None:
    from paircheck.errors import InputError

    t = describe(str(target))
    with pytest.raises(InputError):
        check_descriptions(t, t, method="draft-mtp-adaptive")
    assert by_code(check_descriptions(t, t, method="draft-dflash"), "LC020").status == FAIL
    assert SKIP in {c.status for c in check_descriptions(t, t, method="draft-dflash").checks}
