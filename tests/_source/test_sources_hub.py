"""Hub repo ids and GGUFs in repos, against a Hub-shaped server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from gguf_mutate import read_kvs, set_tokens, token_texts, write_kvs
from hf_build import build_qwen2_folder
from httpserver import COMMIT, TestServer

from paircheck._source.hub import choose_gguf, parse_hub_spec

TAIL = 32 << 20


def _padded(src: Path, dst: Path, n_tokens: int) -> Path:
    """The qwen2 vocab padded like the 14B (152064 tokens), plus fake tensor bytes."""
    meta = read_kvs(src)
    texts = token_texts(meta)
    texts += [f"[PAD{i}]".encode() for i in range(len(texts), n_tokens)]
    set_tokens(meta, texts)
    write_kvs(meta, dst)
    with open(dst, "ab") as handle:
        handle.write(b"\0" * TAIL)
    return dst


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "paircheck", *args], capture_output=True, text=True, env={**os.environ, **env}
    )


def test_parse_hub_spec() -> None:
    assert parse_hub_spec("Qwen/Qwen2.5-0.5B-Instruct").repo_id == "Qwen/Qwen2.5-0.5B-Instruct"
    ref = parse_hub_spec("Qwen/Qwen2.5-14B-Instruct-GGUF:Q4_K_M")
    assert (ref.repo_id, ref.tag) == ("Qwen/Qwen2.5-14B-Instruct-GGUF", "Q4_K_M")
    ref = parse_hub_spec("hf://org/name/sub/file.gguf")
    assert (ref.repo_id, ref.filename) == ("org/name", "sub/file.gguf")
    assert parse_hub_spec("./x.gguf") is None


def test_choose_gguf_as_llama_cpp() -> None:
    files = ["a-Q8_0.gguf", "a-q4_k_m-00002-of-00002.gguf", "a-q4_k_m-00001-of-00002.gguf", "mmproj-a-Q4_K_M.gguf"]
    assert choose_gguf(files, None) == "a-q4_k_m-00001-of-00002.gguf"
    assert choose_gguf(files, "Q8_0") == "a-Q8_0.gguf"
    assert choose_gguf(files, "Q2_K") is None


def _weights(tmp_path: Path) -> bytes:
    """A real safetensors file (its header is checked against the size the Hub lists)."""
    import numpy as np
    from safetensors.numpy import save_file

    save_file({"w": np.zeros(256, dtype=np.float32)}, str(tmp_path / "w.safetensors"))
    return (tmp_path / "w.safetensors").read_bytes()


@pytest.fixture
def hub(real_vocab, tmp_path: Path):
    qwen = real_vocab("qwen2")
    big = _padded(qwen, tmp_path / "q14.gguf", 152064)
    small = tmp_path / "q05.gguf"
    small.write_bytes(qwen.read_bytes() + b"\0" * TAIL)
    with TestServer() as server:
        server.add_repo("Qwen/Qwen2.5-14B-Instruct-GGUF", {
            "qwen2.5-14b-instruct-q4_k_m.gguf": big, "qwen2.5-14b-instruct-q8_0.gguf": big, "README.md": b"x"})
        server.add_repo("Qwen/Qwen2.5-0.5B-Instruct-GGUF", {
            "qwen2.5-0.5b-instruct-q4_k_m.gguf": small, "qwen2.5-0.5b-instruct-q8_0.gguf": small})
        folder = build_qwen2_folder(qwen, tmp_path / "hf05", 151936)
        server.add_repo("Qwen/Qwen2.5-0.5B-Instruct", {
            p.name: p.read_bytes() for p in folder.iterdir()} | {"model.safetensors": _weights(tmp_path)})
        server.add_repo("gated/model-GGUF", {"m-Q4_K_M.gguf": small}, gated_token="secret")
        env = {"HF_ENDPOINT": server.url, "HF_HUB_CACHE": str(tmp_path / "cache"), "HF_TOKEN": "",
               "HF_HUB_DISABLE_TELEMETRY": "1", "PAIRCHECK_HTTP_TIMEOUT": "5"}
        yield server, env, tmp_path


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_quant_selector_pair_reads_only_headers(hub) -> None:
    server, env, _ = hub
    result = _run(["--json", "Qwen/Qwen2.5-14B-Instruct-GGUF:Q4_K_M", "Qwen/Qwen2.5-0.5B-Instruct-GGUF:Q8_0"], env)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["compatible"] is True
    # Two files of ~5.9 MB metadata each, behind 32 MiB of tensor bytes.
    assert server.counters.body_bytes < 2 * 5_928_681 * 1.05 + 64_000
    gets = [entry for entry in server.counters.log if "/resolve/" in entry[1]]
    assert len(gets) <= 6


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_hub_folder_repo_downloads_only_small_files(hub) -> None:
    server, env, _ = hub
    result = _run(["Qwen/Qwen2.5-14B-Instruct-GGUF:Q4_K_M", "Qwen/Qwen2.5-0.5B-Instruct"], env)
    assert result.returncode == 0, result.stdout + result.stderr
    # The weights' header is read with range requests (its length, then the header), never the data.
    weights = [entry for entry in server.counters.log if "safetensors" in entry[1]]
    assert len(weights) == 2 and all(entry[2] is not None for entry in weights), weights
    sent = sum(n for path, n in server.counters.by_path.items() if "safetensors" in path)
    assert 0 < sent < 200, sent  # 8 + the header's ~70 bytes; the 1 KB of data never


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_gated_repo_says_to_log_in(hub) -> None:
    _, env, _ = hub
    denied = _run(["gated/model-GGUF:Q4_K_M", "gated/model-GGUF:Q4_K_M"], env)
    assert denied.returncode == 2 and "HF_TOKEN" in denied.stderr and denied.stderr.count("\n") == 1
    allowed = _run(["gated/model-GGUF:Q4_K_M", "gated/model-GGUF:Q4_K_M"], {**env, "HF_TOKEN": "secret"})
    assert allowed.returncode == 0, allowed.stderr


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_missing_repo_and_quant(hub) -> None:
    _, env, _ = hub
    missing = _run(["nobody/nothing", "nobody/nothing"], env)
    assert missing.returncode == 2 and "no such repository" in missing.stderr
    noquant = _run(["Qwen/Qwen2.5-0.5B-Instruct-GGUF:Q2_K", "Qwen/Qwen2.5-0.5B-Instruct-GGUF"], env)
    assert noquant.returncode == 2 and "Q2_K" in noquant.stderr


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_offline_cache_as_huggingface_hub_lays_it_out(real_vocab, tmp_path: Path) -> None:
    cache = tmp_path / "hub"
    for repo, size in (("Qwen/Qwen2.5-14B-Instruct", 152064), ("Qwen/Qwen2.5-0.5B-Instruct", 151936)):
        repo_dir = cache / ("models--" + repo.replace("/", "--"))
        (repo_dir / "refs").mkdir(parents=True)
        (repo_dir / "refs" / "main").write_text(COMMIT)
        build_qwen2_folder(real_vocab("qwen2"), repo_dir / "snapshots" / COMMIT, size)
    env = {"HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(cache), "HF_ENDPOINT": "http://127.0.0.1:9"}
    result = _run(["Qwen/Qwen2.5-14B-Instruct", "Qwen/Qwen2.5-0.5B-Instruct"], env)
    assert result.returncode == 0, result.stdout + result.stderr
    missing = _run(["Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-0.5B-Instruct"], env)
    assert missing.returncode == 2 and "HF_HUB_OFFLINE" in missing.stderr


def test_mistyped_local_path_with_folders_says_no_such_file_first(tmp_path: Path, gguf_factory) -> None:
    model = gguf_factory()
    with TestServer() as server:  # a Hub that has no such repo: the Hub reading is tried, fast
        result = subprocess.run([sys.executable, "-m", "paircheck", str(model), "models/qwen/x.gguf"],
                                capture_output=True, text=True, cwd=tmp_path,
                                env={**os.environ, "HF_ENDPOINT": server.url, "HF_HUB_CACHE": str(tmp_path / "c"),
                                     "PAIRCHECK_HTTP_TIMEOUT": "2"})
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "models/qwen/x.gguf: no such file (and as a Hub file in models/qwen: no such repository" in result.stderr


def test_pipe_is_read_as_a_stream(gguf_factory) -> None:
    model = gguf_factory()
    # bash's <(...) gives /dev/fd/N: a pipe, readable once, whose size is unknown.
    result = subprocess.run(["bash", "-c", f'"{sys.executable}" -m paircheck --json "{model}" <(cat "{model}")'],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["compatible"] is True
    truncated = subprocess.run(
        ["bash", "-c", f'"{sys.executable}" -m paircheck "{model}" <(head -c 1000 "{model}")'],
        capture_output=True, text=True)
    # Cut inside the keys (the size of a pipe is unknown): loadable fails, exit 1.
    assert truncated.returncode == 1 and "ends inside its metadata" in " ".join(truncated.stdout.split())
