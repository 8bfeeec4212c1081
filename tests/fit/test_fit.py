"""paircheck fit: placement by -ngl, draft sizing, the VRAM verdict, the CLI and its JSON,
remote header-only reads, bad input. The figures themselves are checked against llama.cpp
in test_fit_llamacpp.py; here the rules around them."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import fit_shapes
import numpy as np
import pytest
from httpserver import TestServer

from paircheck._source.remote import RANGE_CHUNK
from paircheck.errors import InputError
from paircheck.fit import DraftOptions, FitOptions, fit, model_memory, parse_size, with_tensor_infos
from paircheck.fit.ggml_types import tensor_bytes
from paircheck.fit.result import FIT_MARGIN
from paircheck.pipeline import describe

MiB = 1 << 20


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fit-shapes")


def _meta(shapes: Path, label: str):
    return with_tensor_infos(describe(str(fit_shapes.write(label, shapes)))).metadata


def _bytes(meta, predicate) -> int:
    return sum(tensor_bytes(t.ggml_type, t.shape) for t in meta.tensors if predicate(t.name))


def _layer(name: str) -> int:
    return int(name.split(".")[1]) if name.startswith("blk.") else -1


def run(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "paircheck", *map(str, args)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


# --- placement (llama-model.cpp load_tensors: i_gpu_start = n_layer + 1 - ngl) ---------------


@pytest.mark.parametrize("ngl", [0, 1, 2, 17, 32, 33, 99, -1])
def test_ngl_offloads_the_last_layers_then_the_output(shapes: Path, ngl: int) -> None:
    meta = _meta(shapes, "llama3-8b")  # 32 layers
    mem = model_memory(meta, FitOptions(ctx=4096, ngl=ngl, parallel=1))
    n_all = 33 if ngl < 0 else min(ngl, 33)
    start = 33 - n_all  # first offloaded layer index; 32 is the output layer
    expected_dev = _bytes(meta, lambda n: start <= _layer(n) < 32)
    if n_all >= 1:
        expected_dev += _bytes(meta, lambda n: not n.startswith(("blk.", "token_embd")))
    assert mem.weights_device == expected_dev
    assert mem.layers_on_device == max(0, n_all - 1)
    assert mem.output_on_device == (n_all >= 1)
    # the token embedding never leaves the host
    assert mem.weights_host >= _bytes(meta, lambda n: n.startswith("token_embd"))
    # KV of offloaded layers only: 8 KV heads x 128 x (K+V) x f16 x 4096 cells = 16 MiB a layer
    assert mem.kv_device == 16 * MiB * max(0, n_all - 1)
    assert mem.kv_device + mem.kv_host == 32 * 16 * MiB


def test_tied_embeddings_are_duplicated_on_the_device_for_the_output(shapes: Path) -> None:
    meta = _meta(shapes, "qwen2.5-0.5b")  # no output.weight
    embd = _bytes(meta, lambda n: n == "token_embd.weight")
    total = _bytes(meta, lambda n: True)
    on_gpu = model_memory(meta, FitOptions(ctx=4096))
    on_cpu = model_memory(meta, FitOptions(ctx=4096, ngl=0))
    assert on_cpu.weights_host == total and on_cpu.weights_device == 0
    assert on_gpu.weights_host == embd
    assert on_gpu.weights_device == total - embd + embd  # every layer, plus the output's copy
    assert any("tied" in note for note in on_gpu.notes)


def test_llama_server_defaults_four_slots_share_one_cache(shapes: Path) -> None:
    meta = _meta(shapes, "gemma3-1b")
    auto = model_memory(meta, FitOptions(ctx=16384))  # -np auto: 4 slots, unified
    split = model_memory(meta, FitOptions(ctx=16384, parallel=4))
    one = model_memory(meta, FitOptions(ctx=16384, parallel=1))
    assert (auto.n_seq_max, auto.kv_unified) == (4, True)
    # full layers: the same 16384 cells either way; SWA layers: 512*4+512 cells unified,
    # 4 streams of 512+512 split, 512+512 for one sequence (llama-kv-cache-iswa.cpp)
    full, swa = 4, 22
    per_cell = 256 * 2 * 2  # one KV head of 256, K and V, f16
    assert auto.kv_bytes == per_cell * (full * 16384 + swa * 2560)
    assert split.kv_bytes == per_cell * (full * 16384 + swa * 4 * 1024)
    assert one.kv_bytes == per_cell * (full * 16384 + swa * 1024)


def test_draft_context_follows_the_padded_target_context(shapes: Path) -> None:
    target, draft = _meta(shapes, "qwen2.5-7b"), _meta(shapes, "qwen2.5-0.5b")
    result = fit(target, draft, FitOptions(ctx=5000))
    assert result.target.n_ctx == 5120 and result.draft is not None and result.draft.n_ctx == 5120
    own = fit(target, draft, FitOptions(ctx=5000), DraftOptions(ctx=1024))
    assert own.draft is not None and own.draft.n_ctx == 1024
    assert own.draft.kv_bytes == result.draft.kv_bytes * 1024 // 5120


def test_draft_cache_type_and_layers_are_its_own(shapes: Path) -> None:
    target, draft = _meta(shapes, "llama3-8b"), _meta(shapes, "qwen2.5-0.5b")
    opts = FitOptions(ctx=8192, cache_type_k="q8_0", cache_type_v="q8_0")
    result = fit(target, draft, opts, DraftOptions(ngl=0))
    assert result.draft is not None
    assert result.draft.device_bytes == 0 and result.draft.host_bytes > 0
    # llama-server's draft cache type defaults to f16 whatever -ctk says (-ctkd/-ctvd)
    assert result.draft.kv_bytes == model_memory(draft, FitOptions(ctx=8192)).kv_bytes
    assert result.total_device_bytes == result.target.device_bytes


def test_verdict_largest_context_and_advice(shapes: Path) -> None:
    target, draft = _meta(shapes, "llama3-8b"), _meta(shapes, "qwen2.5-0.5b")
    opts = FitOptions(ctx=32768)
    vram = 8 * 1024 * MiB
    result = fit(target, draft, opts, vram=vram)
    assert result.fits is False and result.margin_bytes is not None and result.margin_bytes < 0
    best = result.max_ctx_that_fits
    assert best is not None and 0 < best < 32768 and best % 256 == 0
    assert fit(target, draft, FitOptions(ctx=best), vram=vram).fits is True
    assert fit(target, draft, FitOptions(ctx=best + 256), vram=vram).fits is False
    # The advice leaves llama.cpp's --fit margin free: at the bare largest context there are
    # only MiBs to spare, which --fit then takes back by shrinking the context or offloading.
    advised = result.advised_ctx
    assert advised is not None and 0 < advised < best and advised % 256 == 0
    assert fit(target, draft, FitOptions(ctx=advised), vram=vram - FIT_MARGIN).fits is True
    assert fit(target, draft, FitOptions(ctx=advised + 256), vram=vram - FIT_MARGIN).fits is False
    assert any(f"-c {advised} fits with 1,024 MiB free" in a for a in result.advice)
    assert not any(f"-c {best} " in a for a in result.advice)
    assert result.to_json()["advised_ctx"] == advised and result.to_json()["fit_margin_bytes"] == FIT_MARGIN
    roomy = fit(target, draft, opts, vram=24 * 1024 * MiB)
    assert roomy.fits is True and roomy.margin_bytes == 24 * 1024 * MiB - roomy.total_device_bytes
    assert roomy.max_ctx_that_fits is not None and roomy.max_ctx_that_fits >= 32768
    assert fit(target, draft, opts).fits is None


def test_quantized_cache_advice_when_it_is_what_fits(shapes: Path) -> None:
    target = _meta(shapes, "llama3-8b")
    f16 = fit(target, None, FitOptions(ctx=32768))
    q8 = fit(target, None, FitOptions(ctx=32768, cache_type_k="q8_0", cache_type_v="q8_0"))
    # f16 does not fit; q8_0 does with llama.cpp's --fit margin free (the advice leaves it).
    gap = f16.total_device_bytes - q8.total_device_bytes - FIT_MARGIN
    assert gap > 0
    budget = q8.total_device_bytes + FIT_MARGIN + gap // 2
    result = fit(target, None, FitOptions(ctx=32768), vram=budget)
    assert result.fits is False
    assert any("-ctk q8_0 -ctv q8_0" in a for a in result.advice)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("24GiB", 24 << 30),
        ("24G", 24 << 30),
        ("24GB", 24 * 10**9),
        ("8192MiB", 8 << 30),
        ("1.5g", 3 << 29),
        # A bare number is GiB, as a GPU's memory is sold: `--vram 8` was once 8 bytes.
        ("8", 8 << 30),
        ("1000B", 1000),
    ],
)
def test_sizes(text: str, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "lots", "24 parsecs", "-3G"])
def test_bad_sizes(text: str) -> None:
    with pytest.raises(InputError):
        parse_size(text)


# --- the command --------------------------------------------------------------------------


def test_cli_json_names(shapes: Path) -> None:
    t, d = fit_shapes.write("llama3-8b", shapes), fit_shapes.write("qwen2.5-0.5b", shapes)
    out = run("fit", t, d, "--ctx", "16384", "--vram", "24GiB", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["schema"] == "paircheck.fit/1"
    for side in ("target", "draft"):
        for key in ("weights_bytes", "kv_bytes", "compute_bytes", "device_bytes", "host_bytes"):
            assert isinstance(doc[side][key], int)
        assert doc[side]["device_bytes"] + doc[side]["host_bytes"] == (
            doc[side]["weights_bytes"] + doc[side]["kv_bytes"] + doc[side]["compute_bytes"]
        )
    assert doc["total_device_bytes"] == doc["target"]["device_bytes"] + doc["draft"]["device_bytes"]
    assert doc["vram_bytes"] == 24 << 30 and doc["fits"] is True
    assert doc["max_ctx_that_fits"] >= 16384
    alone = json.loads(run("fit", t, "-c", "16384", "--json").stdout)
    assert alone["draft"] is None and alone["vram_bytes"] is None and alone["fits"] is None
    assert alone["max_ctx_that_fits"] is None


def test_cli_text_and_exit_code_when_it_does_not_fit(shapes: Path) -> None:
    t, d = fit_shapes.write("llama3-8b", shapes), fit_shapes.write("qwen2.5-0.5b", shapes)
    out = run("fit", t, d, "-c", "32768", "--vram", "8GiB", "-ngld", "99", "-ub", "512")
    assert out.returncode == 1, out.stderr
    first = out.stdout.splitlines()[0]
    assert first.startswith("memory: target + draft at -c 32768 does not fit in 8,192 MiB")
    assert "target device" in out.stdout and "draft host" in out.stdout
    assert "largest context that fits:" in out.stdout


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["-c", "4096", "-ctk", "q3_k"], "unsupported cache type"),
        (["-c", "4096", "--vram", "huge"], "not a memory size"),
        (["-c", "0"], "must be positive"),
        (["-c", "4096", "-fa", "maybe"], "on, off or auto"),
    ],
)
def test_cli_bad_flags_are_one_line(shapes: Path, args: list[str], fragment: str) -> None:
    out = run("fit", fit_shapes.write("qwen2.5-0.5b", shapes), *args)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and fragment in out.stderr, out.stderr


def test_cli_truncated_tensor_infos_are_one_line(shapes: Path, tmp_path: Path) -> None:
    src = fit_shapes.write("qwen2.5-0.5b", shapes)
    meta = describe(str(src)).metadata
    cut = tmp_path / "cut.gguf"
    with open(src, "rb") as handle:
        cut.write_bytes(handle.read(meta.kv_end + 5000))  # ends inside the tensor infos
    out = run("fit", cut, "-c", "4096")
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr, out.stderr


def test_cli_hf_folder_is_refused_clearly(tmp_path: Path) -> None:
    folder = tmp_path / "hf"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", "architectures": ["LlamaForCausalLM"]}))
    out = run("fit", folder, "-c", "4096")
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr


# --- remote: headers only -------------------------------------------------------------------


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_remote_fit_reads_only_headers(shapes: Path) -> None:
    path = fit_shapes.write("qwen3-30b-a3b", shapes)  # 19.8 GB of tensor data
    local = _meta(shapes, "qwen3-30b-a3b")
    expected = model_memory(local, FitOptions(ctx=32768))
    info_bytes = sum(8 + len(t.name) + 4 + 8 * len(t.shape) + 4 + 8 for t in local.tensors)
    env = {**os.environ, "PAIRCHECK_HTTP_TIMEOUT": "5"}
    with TestServer() as server:
        url = server.add_file("m/qwen3.gguf", path)
        describe(url)  # what the pair check reads: header, key/values and tensor infos
        baseline = server.counters.body_bytes
        server.reset_counters()
        out = run("fit", url, "-c", "32768", "--json", env=env)
        received = server.counters.body_bytes
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["target"]["weights_bytes"] == expected.weights_bytes
    assert doc["target"]["kv_bytes"] == expected.kv_bytes
    # fit reads what the check reads (the tensor infos are part of it, as llama.cpp reads
    # them), at most plus two range chunks of read-ahead; nothing near the 19.8 GB of data
    assert info_bytes < baseline <= received <= baseline + 2 * RANGE_CHUNK
    assert os.path.getsize(path) > 4000 * received


def test_remote_fit_without_range_support_stops_after_the_tensor_infos(shapes: Path) -> None:
    path = fit_shapes.write("qwen2.5-0.5b", shapes)
    env = {**os.environ, "PAIRCHECK_HTTP_TIMEOUT": "5"}
    with TestServer() as server:
        url = server.add_file("m/q.gguf", path)
        server.fault("m/q.gguf", "norange")
        out = run("fit", url, "-c", "4096", env=env)
        received = server.counters.body_bytes
    # The body is read as a stream up to the end of the tensor infos, then cut off.
    assert out.returncode == 0, out.stderr
    assert received < 64 << 20 and os.path.getsize(path) > 10 * received


# --- the pair check with --ctx/--vram -----------------------------------------------------


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_check_prints_one_memory_line_and_the_table_with_v(shapes: Path) -> None:
    t, d = fit_shapes.write("qwen2.5-7b", shapes), fit_shapes.write("qwen2.5-0.5b", shapes)
    plain = run("--ctx", "32768", "--vram", "24GiB", t, d)
    assert plain.returncode == 0, plain.stderr
    lines = plain.stdout.splitlines()
    assert lines[0].startswith("COMPATIBLE")
    assert lines[1].startswith("memory: target + draft at -c 32768 fits in 24,576 MiB")
    assert sum(line.startswith("memory:") for line in lines) == 1 and "target device" not in plain.stdout
    verbose = run("-v", "--ctx", "32768", "--vram", "24GiB", t, d)
    assert "target device" in verbose.stdout and "KV cache + state" in verbose.stdout
    small = run("--ctx", "32768", "--vram", "6GiB", t, d)
    assert small.returncode == 0  # memory never changes the compatibility verdict
    assert "does not fit in 6,144 MiB" in small.stdout.splitlines()[1]
    assert "memory:" not in run(t, d).stdout


def test_check_json_has_the_memory_object(shapes: Path) -> None:
    t, d = fit_shapes.write("qwen2.5-7b", shapes), fit_shapes.write("qwen2.5-0.5b", shapes)
    doc = json.loads(run("--json", "--ctx", "8192", "--vram", "16GiB", t, d).stdout)
    memory = doc["memory"]
    assert memory["schema"] == "paircheck.fit/1" and memory["fits"] is True
    assert memory["target"]["n_ctx"] == 8192 and memory["draft"]["n_ctx"] == 8192
    fit_doc = json.loads(run("fit", t, d, "-c", "8192", "--vram", "16GiB", "--json").stdout)
    assert memory == fit_doc
    assert "memory" not in json.loads(run("--json", t, d).stdout)


def test_split_gguf_counts_every_shard(shapes: Path, tmp_path: Path) -> None:
    whole = model_memory(_meta(shapes, "qwen2.5-0.5b"), FitOptions(ctx=4096))
    shards = fit_shapes.write_split("qwen2.5-0.5b", tmp_path, max_tensors=100)
    assert len(shards) >= 3
    for shard in (shards[0], shards[-1]):  # any shard names the model, as with llama.cpp
        split = model_memory(with_tensor_infos(describe(str(shard))).metadata, FitOptions(ctx=4096))
        assert (split.weights_device, split.weights_host, split.kv_bytes) == (
            whole.weights_device,
            whole.weights_host,
            whole.kv_bytes,
        )
    shards[1].unlink()
    out = run("fit", shards[0], "-c", "4096")
    assert out.returncode == 2 and "missing" in out.stderr and out.stderr.count("\n") == 1, out.stderr


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_remote_split_gguf_fits_as_the_local_set(shapes: Path, tmp_path: Path) -> None:
    whole = model_memory(_meta(shapes, "qwen2.5-0.5b"), FitOptions(ctx=4096))
    shards = fit_shapes.write_split("qwen2.5-0.5b", tmp_path, max_tensors=100)
    env = {**os.environ, "PAIRCHECK_HTTP_TIMEOUT": "5"}
    with TestServer() as server:
        urls = [server.add_file(f"m/{shard.name}", shard) for shard in shards]
        out = run("fit", urls[0], "-c", "4096", "--json", env=env)
        received = server.counters.body_bytes
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)["target"]
    assert (doc["weights_bytes"], doc["kv_bytes"]) == (whole.weights_bytes, whole.kv_bytes)
    assert received * 100 < sum(shard.stat().st_size for shard in shards)  # headers only


def test_quantized_v_cache_without_flash_attention_is_refused_as_llamacpp_does(shapes: Path) -> None:
    out = run("fit", fit_shapes.write("qwen2.5-0.5b", shapes), "-c", "4096", "-ctv", "q8_0", "-fa", "off")
    assert out.returncode == 2 and "quantized V cache requires flash_attn" in out.stderr, out.stderr
    ok = run("fit", fit_shapes.write("qwen2.5-0.5b", shapes), "-c", "4096", "-ctk", "q8_0", "-fa", "off")
    assert ok.returncode == 0, ok.stderr


def _hf_name(name: str) -> str:
    for gguf_prefix, hf_prefix in (
        ("token_embd.", "model.embed_tokens."),
        ("output_norm.", "model.norm."),
        ("output.", "lm_head."),
    ):
        if name.startswith(gguf_prefix):
            return hf_prefix + name[len(gguf_prefix) :]
    return "model.layers." + name[len("blk.") :] if name.startswith("blk.") else name


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_hf_folder_is_sized_from_config_and_safetensors_headers(real_vocab, shapes: Path, tmp_path: Path) -> None:
    """A Qwen2.5-0.5B folder (config.json, tokenizer, one safetensors file whose data is a
    hole) sizes as the GGUF of the same shape and dtypes."""
    import hf_build

    folder = hf_build.build_qwen2_folder(real_vocab("qwen2"), tmp_path / "Qwen2.5-0.5B", 151936)
    config = json.loads((folder / "config.json").read_text())
    config.update(
        num_hidden_layers=24, hidden_size=896, intermediate_size=4864, num_attention_heads=14,
        num_key_value_heads=2, max_position_embeddings=32768, tie_word_embeddings=True,
    )  # fmt: skip
    (folder / "config.json").write_text(json.dumps(config))
    gguf_path = fit_shapes.write("qwen2.5-0.5b", shapes, scheme="f16")
    gguf_meta = with_tensor_infos(describe(str(gguf_path))).metadata
    header: dict[str, object] = {}
    offset = 0
    for t in gguf_meta.tensors:
        dtype, width = ("F32", 4) if t.ggml_type == 0 else ("F16", 2)
        nbytes = width * int(np.prod(t.shape))
        header[_hf_name(t.name)] = {
            "dtype": dtype,
            "shape": list(reversed(t.shape)),
            "data_offsets": [offset, offset + nbytes],
        }
        offset += nbytes
    raw = json.dumps(header).encode()
    weights = folder / "model.safetensors"
    weights.write_bytes(struct.pack("<Q", len(raw)) + raw)
    with open(weights, "r+b") as out:
        out.truncate(8 + len(raw) + offset)
    opts = FitOptions(ctx=8192)
    ours = model_memory(with_tensor_infos(describe(str(folder))).metadata, opts)
    ref = model_memory(gguf_meta, opts)
    assert (ours.weights_device, ours.weights_host, ours.kv_bytes) == (
        ref.weights_device,
        ref.weights_host,
        ref.kv_bytes,
    )
    out = run("fit", folder, "-c", "8192", "--json")
    assert out.returncode == 0 and json.loads(out.stdout)["target"]["kv_bytes"] == ref.kv_bytes, out.stderr
