"""``paircheck estimate``: Leviathan et al.'s formula against hand-computed numbers, and the
cost ratio from the tensor infos of real GGUF files whose tensor sizes are known."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_exit import exit_code
from gguf import GGMLQuantizationType as Q
from ggufgen import write_vocab_gguf
from tiny_model import write_tiny_llama

from paircheck._engine.pair_size import SIZE_CODE, size_finding, size_warning
from paircheck.errors import InputError
from paircheck.pipeline import describe
from paircheck.speed.acceptance import RATE, per_token
from paircheck.speed.estimate import (
    best_draft_max,
    estimate,
    estimate_pair,
    expected_tokens_per_pass,
    modelled_speedup,
    read_weight_bytes,
)
from paircheck.weights import tensor_bytes, weight_bytes

N_VOCAB = 400  # ggufgen's default vocabulary: small, so the files are written in milliseconds

# Hand-computed per-token weight bytes of write_tiny_llama with TinyShape() (n_embd 64, 2
# layers, n_ff 128) and a 400-token vocabulary. The embedding table is not read per token
# (output.weight exists); norms stay F32 (4 bytes per element).
#   F32:  output 400*64*4 = 102400; per layer: q,k,v,o 4 * 64*64*4 = 65536, gate/up/down
#         3 * 128*64*4 = 98304, two norms 2*64*4 = 512 -> 164352; output_norm 256.
F32_PER_TOKEN = 102400 + 2 * 164352 + 256  # 431_360
#   Q8_0: 34 bytes per 32 elements. output 400*64/32*34 = 27200; per layer: 4 * 64*64/32*34
#         = 17408, 3 * 128*64/32*34 = 26112, norms 512 -> 44032; output_norm 256.
Q8_PER_TOKEN = 27200 + 2 * 44032 + 256  # 115_520
#   Embedding table, read in full only when it is also the output head: F32 400*64*4.
F32_EMBD = 400 * 64 * 4


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("estimate")
    vocab = write_vocab_gguf(root / "vocab.gguf", n_tokens=N_VOCAB)
    return {
        "f32": write_tiny_llama(root / "f32.gguf", vocab, seed=1),
        "q8": write_tiny_llama(root / "q8.gguf", vocab, seed=2, ggml_type=Q.Q8_0),
        "f16": write_tiny_llama(root / "f16.gguf", vocab, seed=3, ggml_type=Q.F16),
        "vocab": vocab,
    }


# --------------------------------------------------------------------------- the formula


@pytest.mark.parametrize(
    ("a", "k", "expected"),
    [
        (0.8, 3, 2.952),  # (1 - 0.8^4) / 0.2 = (1 - 0.4096) / 0.2
        (0.5, 1, 1.5),  # (1 - 0.25) / 0.5
        (0.9, 5, 4.68559),  # (1 - 0.9^6) / 0.1 = (1 - 0.531441) / 0.1
        (1.0, 4, 5.0),  # every draft token accepted: k + 1
        (0.0, 7, 1.0),  # nothing accepted: the target's own token only
    ],
)
def test_expected_tokens_per_pass(a: float, k: int, expected: float) -> None:
    assert expected_tokens_per_pass(a, k) == pytest.approx(expected)


def test_speedup_divides_by_the_cost_of_drafting() -> None:
    assert modelled_speedup(0.8, 3, 0.1) == pytest.approx(2.952 / 1.3)
    # A draft as expensive as the target (the same model): slower than the target alone.
    assert modelled_speedup(0.8, 3, 1.0) == pytest.approx(0.738)
    assert modelled_speedup(1.0, 4, 0.25) == pytest.approx(2.5)  # 5 / (4*0.25 + 1)


def test_best_draft_max_by_hand() -> None:
    # a = 0.8, c = 0.05: speedups for k = 6..9 are 3.951424/1.30 = 3.0396, 4.1611392/1.35 = 3.0823,
    # 4.32891136/1.40 = 3.0921, 4.463129088/1.45 = 3.0780: the best is k = 8.
    assert best_draft_max(0.8, 0.05) == 8
    # a = 0.5, c = 0.266: k=1 1.5/1.266 = 1.185, k=2 1.75/1.532 = 1.142: one token is best.
    assert best_draft_max(0.5, 0.266) == 1


def test_estimate_without_acceptance_is_a_band() -> None:
    est = estimate(0.1, None, 3)
    assert est.acceptance is None and est.speedup is None and est.modelled
    assert [p.acceptance for p in est.band] == [0.5, 0.6, 0.7, 0.8, 0.9]
    assert est.band[-1].speedup == pytest.approx(3.439 / 1.3)  # (1 - 0.9^4) / 0.1 / (3*0.1 + 1)
    assert est.band[0].speedup < est.band[-1].speedup


@pytest.mark.parametrize(
    ("kwargs", "where"),
    [
        ({"cost_ratio": 0.0}, "--cost-ratio"),
        ({"cost_ratio": 0.1, "acceptance": 1.5}, "--acceptance"),
        ({"cost_ratio": 0.1, "draft_max": 0}, "--draft-max"),
    ],
)
def test_estimate_refuses_impossible_inputs(kwargs: dict, where: str) -> None:
    with pytest.raises(InputError) as info:
        estimate(**kwargs)
    assert info.value.where == where


# --------------------------------------------------------------------------- weight bytes


def test_tensor_bytes_follow_the_quantization_block_sizes() -> None:
    assert tensor_bytes((64, 128), Q.Q8_0) == 64 * 128 // 32 * 34
    assert tensor_bytes((256, 2), Q.Q4_K) == 2 * 144
    assert tensor_bytes((10,), Q.F16) == 20
    with pytest.raises(ValueError):
        tensor_bytes((100, 2), Q.Q8_0)  # a row must be whole blocks


def test_tied_output_reads_the_embedding_table() -> None:
    layer = [("blk.0.attn_q.weight", (64, 64), Q.F32)]
    tied = weight_bytes([("token_embd.weight", (64, 400), Q.F32), *layer])
    untied = weight_bytes([("token_embd.weight", (64, 400), Q.F32), *layer, ("output.weight", (64, 400), Q.F16)])
    assert tied.tied_output and tied.per_token == F32_EMBD + 64 * 64 * 4
    assert not untied.tied_output and untied.per_token == 64 * 64 * 4 + 64 * 400 * 2
    assert untied.total == F32_EMBD + 64 * 64 * 4 + 64 * 400 * 2


def test_moe_counts_only_the_active_experts() -> None:
    tensors = [
        ("output.weight", (64, 400), Q.F32),
        ("blk.0.ffn_up_exps.weight", (64, 128, 8), Q.F32),  # 8 experts of 64x128
        ("blk.0.ffn_up_shexp.weight", (64, 128), Q.F32),  # the shared expert: always read
    ]
    wb = weight_bytes(tensors, expert_count=8, expert_used_count=2)
    assert wb.per_token == 64 * 400 * 4 + 64 * 128 * 8 * 4 * 2 // 8 + 64 * 128 * 4
    assert (wb.expert_count, wb.expert_used_count) == (8, 2)
    dense = weight_bytes(tensors)  # no expert counts: everything is read
    assert dense.per_token == wb.total


def test_cost_ratio_from_real_tensor_infos(models: dict[str, Path]) -> None:
    f32, q8 = read_weight_bytes(describe(str(models["f32"]))), read_weight_bytes(describe(str(models["q8"])))
    assert f32.per_token == F32_PER_TOKEN
    assert q8.per_token == Q8_PER_TOKEN
    assert f32.total == F32_PER_TOKEN + F32_EMBD
    est = estimate_pair(describe(str(models["f32"])), describe(str(models["q8"])), 0.8, 3)
    assert est.cost_ratio == pytest.approx(Q8_PER_TOKEN / F32_PER_TOKEN)
    assert est.speedup == pytest.approx(2.952 / (3 * Q8_PER_TOKEN / F32_PER_TOKEN + 1))
    assert est.cost_source == "tensor-infos"


def test_a_vocab_only_file_has_no_weights(models: dict[str, Path]) -> None:
    with pytest.raises(InputError, match="no tensors"):
        read_weight_bytes(describe(str(models["vocab"])))


# --------------------------------------------------------------------------- the size warning


def test_size_finding_cases() -> None:
    assert size_finding(1000, 100, False) is None
    low = size_finding(1000, 400, False)
    assert low is not None and low.code == SIZE_CODE and low.details["cost_ratio"] == 0.4
    big = size_finding(1000, 28000, False)
    assert big is not None and "larger than the target" in big.message
    same = size_finding(None, None, True)
    assert same is not None and same.details == {"same_file": True}
    assert size_finding(None, 5, False) is None  # unknown sizes: nothing to say


def test_size_warning_from_the_tensor_infos_read_with_the_metadata(models: dict[str, Path]) -> None:
    target, draft = describe(str(models["f32"])), describe(str(models["q8"]))
    assert size_warning(target, describe(str(models["f32"]))) is not None  # same file
    # Vocab-only files have no tensors: nothing but the same-file case can be told.
    assert size_warning(describe(str(models["vocab"])), draft) is None
    # Q8 / F32 = 0.268 is below 0.3; the other way round the draft is larger.
    assert size_warning(target, draft) is None
    flipped = size_warning(draft, target)
    assert flipped is not None and flipped.details["cost_ratio"] == pytest.approx(
        F32_PER_TOKEN / Q8_PER_TOKEN, abs=1e-4
    )
    f16 = describe(str(models["f16"]))
    half = size_warning(target, f16)  # F16 weights: about half of F32, above 0.3
    assert half is not None and 0.4 < half.details["cost_ratio"] < 0.6


# --------------------------------------------------------------------------- the command


def test_cli_json_names(models: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["estimate", str(models["f32"]), str(models["q8"]), "--per-token-acceptance", "0.8", "--json"]
    assert exit_code(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["modelled"] is True
    assert data["cost_ratio"] == pytest.approx(Q8_PER_TOKEN / F32_PER_TOKEN)
    assert (data["acceptance"], data["draft_max"]) == (0.8, 3)
    assert data["expected_tokens_per_pass"] == pytest.approx(2.952)
    assert data["best_draft_max"] == best_draft_max(0.8, Q8_PER_TOKEN / F32_PER_TOKEN)
    assert data["speedup"] == pytest.approx(2.952 / (3 * Q8_PER_TOKEN / F32_PER_TOKEN + 1))


def test_cli_text_says_model_and_warns_on_same_file(
    models: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert exit_code(["estimate", str(models["f32"]), str(models["f32"])]) == 0
    out = capsys.readouterr().out
    # Issue 48: without a device, no speedup that reads as a prediction: what it depends on, and
    # the commands that would answer.
    assert out.startswith("NO SPEED PREDICTED") and "x" not in out.split("\n")[0]
    flat = " ".join(out.split())
    assert "--gpu NAME" in flat and "`paircheck probe TARGET DRAFT`" in flat
    assert f"warning {SIZE_CODE}" in out and "same file" in out
    assert "0.50" not in out  # no band of speedups
    # Costs given (--verify-cost): the speedup is a model of those costs, and says so.
    assert exit_code(["estimate", str(models["f32"]), str(models["f32"]), "--verify-cost", "0"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("MODELLED (not measured)")
    assert "0.50" in out and "0.90" in out  # the band, no acceptance given


@pytest.mark.parametrize("gpu", [[], ["--bandwidth", "900", "--vram", "24GiB"]])
@pytest.mark.parametrize("k", ["0", "-1"])
def test_cli_draft_max_below_1_is_refused_with_or_without_a_device(
    models: dict[str, Path], gpu: list[str], k: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # One rule (issue 50): 0 was silently replaced by 3 without a device, refused with one.
    assert exit_code(["estimate", str(models["f32"]), str(models["q8"]), "--per-token-acceptance", "0.8",
                 "--draft-max", k, *gpu]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1, captured
    assert "--draft-max" in captured.err and "Traceback" not in captured.err


def test_cli_acceptance_from_a_bench_result(
    models: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = {
        "schema_version": 1,
        "kind": "paircheck-bench",
        "label": "draft",
        "complete": True,
        "server_command": ["llama-server", "--spec-draft-n-max", "5"],
        "requests": [
            {
                "prompt_id": "p",
                "run": r,
                "client_ms": 10.0,
                "content": "x",
                "timings": {"predicted_n": 64, "predicted_ms": 9.0, "draft_n": 50, "draft_n_accepted": 35},
            }
            for r in range(2)
        ],
    }
    path = tmp_path / "draft.json"
    path.write_text(json.dumps(bench))
    assert exit_code(["estimate", str(models["f32"]), str(models["q8"]), "--from", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    # Issue 48: the bench measured accepted / drafted at its --spec-draft-n-max 5, which is not the
    # per-token rate: it is turned into one at that draft length, as the published points are.
    assert data["reported"]["value"] == pytest.approx(70 / 100)
    assert data["reported"]["kind"] == "accepted/drafted" and data["reported"]["draft_max"] == 5
    assert data["acceptance"] == pytest.approx(per_token(0.7, RATE, 5)) and data["acceptance"] > 0.8
    assert data["draft_max"] == 5  # from the server's command line
    assert data["acceptance_source"] == f"bench:{path}"


EXAMPLE_BENCH = Path(__file__).resolve().parents[2] / "fixtures" / "examples" / "bench" / "draft.json"


def test_cli_a_bench_result_of_other_models_is_named_and_acceptance_1_is_not_extrapolated_silently(
    models: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 50: the example bench result (deep.gguf + shallow.gguf, every draft accepted) gave
    # "best k >=32 ... 11.90x" for an unrelated pair, without a word.
    assert exit_code(["estimate", str(models["f32"]), str(models["q8"]), "--from", str(EXAMPLE_BENCH), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["acceptance"] == 1.0 and data["best_draft_max"] == 32
    codes = [w["code"] for w in data["warnings"]]
    assert codes[:2] == ["EW001", "EW002"], data["warnings"]
    assert "deep.gguf, not f32.gguf" in data["warnings"][0]["message"]
    assert "shallow.gguf, not q8.gguf" in data["warnings"][0]["message"]
    assert exit_code(["estimate", str(models["f32"]), str(models["q8"]), "--from", str(EXAMPLE_BENCH)]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "measured another pair" in text and "extrapolated, not measured" in text
    # The same files (wherever they were when measured): no EW001; a rate below 1: no EW002.
    bench = json.loads(EXAMPLE_BENCH.read_text())
    command = bench["server_command"]
    command[command.index("-m") + 1] = "/elsewhere/f32.gguf"
    command[command.index("--model-draft") + 1] = "/elsewhere/q8.gguf"
    for req in bench["requests"]:
        req["timings"]["draft_n_accepted"] = req["timings"]["draft_n"] // 2
    same = tmp_path / "same.json"
    same.write_text(json.dumps(bench))
    assert exit_code(["estimate", str(models["f32"]), str(models["q8"]), "--from", str(same), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["reported"]["value"] < 0.6 and not [w for w in data["warnings"] if w["code"] in ("EW001", "EW002")]


def test_an_acceptance_of_1_given_is_not_extrapolated_silently() -> None:
    assert [w.code for w in estimate(0.05, 1.0, 3).warnings] == ["EW002"]
    assert estimate(0.05, 0.99, 3).warnings == [] and estimate(0.05, None, 3).warnings == []


def test_cli_vocab_only_file_is_one_error_line(models: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code(["estimate", str(models["f32"]), str(models["vocab"])]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--cost-ratio" in err
    assert (
        exit_code(
            [
                "estimate",
                str(models["f32"]),
                str(models["vocab"]),
                "--cost-ratio",
                "0.1",
                "--per-token-acceptance",
                "0.7",
                "--json",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["speedup"] == pytest.approx(expected_tokens_per_pass(0.7, 3) / 1.3)


def test_the_check_prints_the_size_warning(models: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    def warnings(*argv: str) -> list[dict]:
        assert exit_code(["check", "--json", "--no-registry", *argv]) == 0
        return [w for w in json.loads(capsys.readouterr().out)["warnings"] if w["code"] == SIZE_CODE]

    f32, q8, f16 = str(models["f32"]), str(models["q8"]), str(models["f16"])
    assert warnings(f32, f32)[0]["details"] == {"same_file": True}
    # Every engine's check has the tensor infos (read with the metadata): the same numbers.
    for engine in ("llama.cpp", "vllm"):
        half = warnings(f32, f16, "--engine", engine)
        assert len(half) == 1 and half[0]["details"]["basis"] == "weight_bytes_per_token"
        assert half[0]["details"]["cost_ratio"] == pytest.approx(0.5, abs=0.01)
    assert "larger than the target" in warnings(q8, f32)[0]["message"]
    assert warnings(f32, q8) == []
    # Vocab-only files have no weights: their sizes say nothing.
    assert warnings(str(models["vocab"]), f32) == []
    half = warnings(f32, f16, "--engine", "vllm")
    assert len(half) == 1 and half[0]["details"]["cost_ratio"] == pytest.approx(0.5, abs=0.01)
    assert warnings(f32, q8, "--engine", "vllm") == []
    assert "larger than the target" in warnings(q8, f32, "--engine", "vllm")[0]["message"]


def _write_raw(
    path: Path,
    tensors: dict[str, tuple[tuple[int, ...], Q]],
    kv: dict[str, int] | None = None,
    split_max_tensors: int = 0,
) -> list[Path]:
    """A GGUF with tensors of given numpy shapes and types (zeros), optionally split into shards."""
    import numpy as np
    from gguf import GGUFWriter

    writer = GGUFWriter(str(path), "llama", split_max_tensors=split_max_tensors)
    for key, value in (kv or {}).items():
        writer.add_uint32(key, value)
    for name, (shape, qtype) in tensors.items():
        if qtype == Q.F32:
            writer.add_tensor(name, np.zeros(shape, np.float32))
        else:
            from gguf.quants import quantize

            data = quantize(np.zeros(shape, np.float32), qtype)
            writer.add_tensor(name, data, raw_shape=data.shape, raw_dtype=qtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return sorted(path.parent.glob(f"{path.stem}*.gguf"))


def test_moe_file_reads_active_experts_only(tmp_path: Path) -> None:
    # numpy shape (experts, rows, cols): GGUF shape (cols, rows, experts).
    tensors = {
        "token_embd.weight": ((400, 64), Q.F32),
        "output.weight": ((400, 64), Q.Q8_0),
        "blk.0.ffn_up_exps.weight": ((8, 128, 64), Q.Q8_0),
        "blk.0.ffn_gate_inp.weight": ((8, 64), Q.F32),
    }
    (path,) = _write_raw(tmp_path / "moe.gguf", tensors, {"llama.expert_count": 8, "llama.expert_used_count": 2})
    wb = read_weight_bytes(describe(str(path)))
    experts = 8 * 128 * 64 // 32 * 34
    assert wb.per_token == 400 * 64 // 32 * 34 + experts * 2 // 8 + 8 * 64 * 4
    assert wb.total == 400 * 64 * 4 + 400 * 64 // 32 * 34 + experts + 8 * 64 * 4
    assert (wb.expert_count, wb.expert_used_count) == (8, 2)


def test_split_gguf_sums_every_shard(tmp_path: Path) -> None:
    tensors = {f"blk.{i}.attn_q.weight": ((64, 64), Q.F32) for i in range(3)}
    tensors["output.weight"] = ((400, 64), Q.F32)
    shards = _write_raw(tmp_path / "split.gguf", tensors, split_max_tensors=2)
    assert [p.name for p in shards] == ["split-00001-of-00002.gguf", "split-00002-of-00002.gguf"]
    wb = read_weight_bytes(describe(str(shards[0])))
    assert wb.n_tensors == 4 and wb.per_token == 3 * 64 * 64 * 4 + 400 * 64 * 4


def _holed_safetensors(path: Path, tensors: dict[str, list[int]]) -> None:
    """A BF16 safetensors file with these shapes whose data is a hole (sparse)."""
    import struct

    header: dict[str, object] = {}
    offset = 0
    for name, shape in tensors.items():
        size = 2
        for dim in shape:
            size *= dim
        header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header).encode()
    with open(path, "wb") as handle:
        handle.write(struct.pack("<Q", len(raw)) + raw)
        handle.truncate(8 + len(raw) + offset)


def test_hf_folder_is_sized_from_its_safetensors_headers_with_its_experts(real_vocab, tmp_path: Path) -> None:
    """A mixture-of-experts folder: per token, 2 of its 8 experts (config.json), as the
    converter's ffn_*_exps would be counted; the embedding table is not read (lm_head is)."""
    from hf_build import build_qwen2_folder, write_config

    folder = build_qwen2_folder(real_vocab("qwen2"), tmp_path / "moe", 151936)
    config = json.loads((folder / "config.json").read_text())
    write_config(folder, {**config, "num_experts": 8, "num_experts_per_tok": 2})
    tensors = {"model.embed_tokens.weight": [151936, 64], "lm_head.weight": [151936, 64],
               "model.layers.0.mlp.gate.weight": [8, 64]}
    tensors |= {f"model.layers.0.mlp.experts.{e}.up_proj.weight": [128, 64] for e in range(8)}
    _holed_safetensors(folder / "model.safetensors", tensors)
    wb = read_weight_bytes(describe(str(folder)))
    expert = 128 * 64 * 2
    assert wb.per_token == 151936 * 64 * 2 + 8 * 64 * 2 + 8 * expert * 2 // 8
    assert wb.total == 2 * 151936 * 64 * 2 + 8 * 64 * 2 + 8 * expert
    assert (wb.expert_count, wb.expert_used_count, wb.n_tensors) == (8, 2, 11)


def test_hf_folder_without_weights_asks_for_the_cost_ratio(real_vocab, tmp_path: Path) -> None:
    from hf_build import build_qwen2_folder

    folder = build_qwen2_folder(real_vocab("qwen2"), tmp_path / "bare", 151936)
    with pytest.raises(InputError, match=r"no \*\.safetensors files.*give --cost-ratio"):
        read_weight_bytes(describe(str(folder)))


def test_without_tensors_the_advice_fits_the_question(capsys: pytest.CaptureFixture[str]) -> None:
    """A vocab-only file has no weight bytes: without --gpu, --cost-ratio gives c by hand; on a
    GPU the roofline needs both models' shapes, so --cost-ratio is no way out and is not
    offered as one (given, it changes nothing: the same line)."""
    vocab = str(Path(__file__).resolve().parents[2] / "fixtures" / "examples" / "ggml-vocab-llama-spm.gguf")
    assert exit_code(["estimate", vocab, vocab]) == 2
    assert capsys.readouterr().err.strip().endswith("has no tensors (a vocab-only file?); give --cost-ratio")
    for extra in ([], ["--cost-ratio", "0.2"]):
        assert exit_code(["estimate", vocab, vocab, "--gpu", "4090", *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "give --cost-ratio" not in err, err
        assert err.endswith("a prediction on a GPU reads both models' tensor lists (without --gpu, --cost-ratio "
                            "gives c by hand)"), err
