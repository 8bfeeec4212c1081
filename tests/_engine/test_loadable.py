"""An interrupted download is ``loadable: fail`` (exit 1) with a plain reason and its fix:
locally, over HTTP range reads, from the Hub cache, and for each shard of a split model.

The models are tiny real ones: a real vocabulary (llama.cpp's ggml-vocab files) with
tensors laid out as llama.cpp writes them, cut where an interrupted download cuts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from gguf import GGUFValueType as VT
from gguf_mutate import TensorSpec, build_with_tensors, make_kv, read_kvs
from httpserver import COMMIT, TestServer

from paircheck._source.gguf_reader import GGML_TYPE_COUNT, GGML_TYPES

# 4 MiB of F32 embeddings after a 0.7 MB vocabulary: a 4.9 MB model.
TENSORS = [
    TensorSpec(b"token_embd.weight", [1024, 1024], 0),
    TensorSpec(b"output_norm.weight", [1024], 0),
]


def verdict_of(stdout: str) -> str:
    """The verdict paragraph (wrapped to the terminal's width), as one line."""
    return " ".join(stdout.split("\n  rules:", 1)[0].split())


@pytest.fixture
def whole(real_vocab: Callable[[str], Path], tmp_path: Path) -> Path:
    path = tmp_path / "whole.gguf"
    path.write_bytes(build_with_tensors(read_kvs(real_vocab("llama-spm")), TENSORS).data)
    return path


def cut_copy(whole: Path, dst: Path, keep: int) -> Path:
    with open(whole, "rb") as src:
        dst.write_bytes(src.read(keep))
    return dst


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "paircheck", *args], capture_output=True, text=True, env={**os.environ, **(env or {})}
    )


def lc001(report: dict) -> list[dict]:
    return [c for c in report["checks"] if c["code"] == "LC001" and c["status"] == "fail"]


def test_cut_download_fails_loadable_with_reason_and_fix(whole: Path, tmp_path: Path) -> None:
    cut = cut_copy(whole, tmp_path / "cut.gguf", 3_000_000)
    human = run(str(cut), str(whole))
    assert human.returncode == 1, human.stderr
    # The verdict paragraph (wrapped to the width), up to the rules line.
    first = verdict_of(human.stdout)
    size = whole.stat().st_size
    assert first.startswith("NOT COMPATIBLE")
    reason = f"the file is incomplete: 3.0 MB of {size / 1e6:.1f} MB; the download was probably interrupted"
    assert f"target: {reason}" in first
    assert "tensor 'token_embd.weight' data is not within the file bounds, model is corrupted or incomplete" in first
    assert "Resume the download" in human.stdout
    report = json.loads(run("--json", str(whole), str(cut)).stdout)
    assert report["compatible"] is False
    (fail,) = lc001(report)
    assert fail["details"]["incomplete"] is True and fail["details"]["side"] == "draft"
    assert fail["details"]["file_size"] == 3_000_000 and fail["details"]["needed"] == size
    assert run(str(whole), str(whole)).returncode == 0


def test_a_target_that_does_not_load_gets_no_launch_line(whole: Path, tmp_path: Path) -> None:
    """No method runs on a cut target: the way forward is the download, and llama-server
    fails on the main model (loaded first), not on the draft."""
    from paircheck.pipeline import check_pair

    cut = cut_copy(whole, tmp_path / "cut.gguf", 3_000_000)
    target_cut = check_pair(str(cut), str(whole))
    assert target_cut.next_steps == []
    assert target_cut.engine_says is not None and target_cut.engine_says.startswith("failed to load model")
    draft_cut = check_pair(str(whole), str(cut))
    assert any(step.startswith("llama-server -m ") for step in draft_cut.next_steps)
    assert draft_cut.engine_says is not None and draft_cut.engine_says.startswith("failed to load draft model")


def test_cut_in_the_tensor_list_and_in_the_padding(whole: Path, tmp_path: Path) -> None:
    from paircheck.pipeline import describe

    meta = describe(str(whole)).metadata
    assert meta.tensor_error is None and meta.data_end == whole.stat().st_size
    # Inside the second tensor info, then between the infos and the aligned data start.
    in_list = describe(str(cut_copy(whole, tmp_path / "a.gguf", meta.kv_end + 40))).metadata.tensor_error
    assert in_list is not None and in_list.incomplete and in_list.message == "failed to read tensor info"
    data_start = whole.stat().st_size - 4 * 1024 * 1024 - 4096
    in_pad = describe(str(cut_copy(whole, tmp_path / "b.gguf", data_start - 1))).metadata.tensor_error
    assert in_pad is not None and in_pad.incomplete
    assert in_pad.message == "failed to seek to beginning of data section"
    out = verdict_of(run(str(tmp_path / "a.gguf"), str(whole)).stdout)
    assert "the file is incomplete: it ends after" in out and "inside its list of tensors" in out


def test_cut_model_over_http_range_reads_fails_without_downloading_the_data(whole: Path, tmp_path: Path) -> None:
    cut = cut_copy(whole, tmp_path / "cut.gguf", 2_000_000)
    with TestServer() as server:
        url_cut = server.add_file("m/cut.gguf", cut)
        url_whole = server.add_file("m/whole.gguf", whole)
        result = run("--json", url_whole, url_cut, env={"PAIRCHECK_HTTP_TIMEOUT": "5"})
        sent = server.counters.body_bytes
        requests = server.counters.requests
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    (fail,) = lc001(report)
    assert fail["details"]["side"] == "draft" and fail["details"]["file_size"] == 2_000_000
    assert "the file is incomplete: 2.0 MB of 4.9 MB" in fail["message"]
    assert "data is not within the file bounds" in fail["message"]
    assert "server is itself cut short" in fail["fix"]
    # Metadata and tensor infos of both files (0.73 MB each, with the planner's readahead),
    # never the 4 MiB of tensor data.
    assert sent < 2 * 1_000_000, sent
    assert requests <= 6, requests


def test_whole_model_over_http_reads_tensor_infos_in_the_same_requests(whole: Path) -> None:
    from paircheck._source.interface import ReadOptions
    from paircheck._source.remote import describe_remote_gguf

    with TestServer() as server:
        url = server.add_file("m/whole.gguf", whole)
        desc = describe_remote_gguf(url, url, ReadOptions())
    meta = desc.metadata
    assert meta.tensor_error is None and meta.file_size == whole.stat().st_size
    assert [t.name for t in meta.tensors or []] == ["token_embd.weight", "output_norm.weight"]
    assert desc.fetch.requests <= 3
    assert server.counters.body_bytes < meta.kv_end * 1.2 + 64_000


def test_cut_file_in_the_hub_cache_names_the_download_command(whole: Path, tmp_path: Path) -> None:
    cache = tmp_path / "hub"
    repo_dir = cache / "models--org--tiny-GGUF"
    (repo_dir / "refs").mkdir(parents=True)
    (repo_dir / "refs" / "main").write_text(COMMIT)
    (repo_dir / "snapshots" / COMMIT).mkdir(parents=True)
    cut_copy(whole, repo_dir / "snapshots" / COMMIT / "tiny-F32.gguf", 4_000_000)
    env = {"HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(cache), "HF_ENDPOINT": "http://127.0.0.1:9"}
    result = run("--json", "org/tiny-GGUF/tiny-F32.gguf", str(whole), env=env)
    assert result.returncode == 1, result.stderr
    (fail,) = lc001(json.loads(result.stdout))
    assert fail["fix"] == "Download it again: huggingface-cli download org/tiny-GGUF tiny-F32.gguf --force-download"


def _split(real_vocab: Callable[[str], Path], folder: Path) -> list[Path]:
    """Two shards as gguf-split writes them: all metadata in the first, a tensor in each."""
    meta = read_kvs(real_vocab("llama-spm"))
    # Types as gguf-split writes them: u16 count and index, i32 tensor count.
    split_keys = [("split.count", 2, VT.UINT16), ("split.tensors.count", 2, VT.INT32)]
    first = type(meta)(meta.version, 0, list(meta.kvs))
    for key, value, vtype in split_keys:
        first.set(make_kv(key, value, vtype))
    first.set(make_kv("split.no", 0, VT.UINT16))
    second = type(meta)(meta.version, 0, [])
    for key, value, vtype in split_keys:
        second.set(make_kv(key, value, vtype))
    second.set(make_kv("split.no", 1, VT.UINT16))
    paths = [folder / "tiny-00001-of-00002.gguf", folder / "tiny-00002-of-00002.gguf"]
    paths[0].write_bytes(build_with_tensors(first, [TensorSpec(b"token_embd.weight", [64, 32], 0)]).data)
    paths[1].write_bytes(build_with_tensors(second, [TensorSpec(b"output.weight", [64, 32], 0)]).data)
    return paths


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_each_shard_of_a_split_model_is_checked_against_its_own_size(real_vocab, tmp_path: Path) -> None:
    from oracle import clear_cache, llama_values, require_oracle

    from paircheck.pipeline import describe

    first, second = _split(real_vocab, tmp_path)
    assert describe(str(first)).metadata.tensor_error is None
    whole_second = second.read_bytes()
    second.write_bytes(whole_second[:-100])
    error = describe(str(first)).metadata.tensor_error
    assert error is not None and error.incomplete and error.file == str(second)
    bounds = "data is not within the file bounds, model is corrupted or incomplete"
    assert error.message == f"tensor 'output.weight' {bounds}"
    out = verdict_of(run(str(first), str(first)).stdout)
    assert "tiny-00002-of-00002.gguf is incomplete" in out
    second.unlink()
    missing = describe(str(first)).metadata.tensor_error
    assert missing is not None and "failed to load GGUF split from" in missing.message
    # llama.cpp agrees on all three states (the cache only knows the first shard's hash).
    require_oracle()
    second.write_bytes(whole_second)
    assert llama_values(first)["loaded"] is True
    clear_cache()
    second.write_bytes(whole_second[:-100])
    cut = llama_values(first)
    assert cut["loaded"] is False and error.message in cut["error"]
    clear_cache()
    second.unlink()
    assert llama_values(first)["loaded"] is False


def test_type_table_is_libggmls() -> None:
    """GGML_TYPES is what the pinned libggml says of every type id (name, block, size)."""
    from oracle import child_env, require_oracle

    require_oracle()
    script = (
        "import ctypes, glob, json, os, llama_cpp\n"
        "libdir = os.environ.get('LLAMA_CPP_LIB_PATH') or os.path.join(os.path.dirname(llama_cpp.__file__), 'lib')\n"
        "lib = ctypes.CDLL(glob.glob(os.path.join(libdir, 'libggml-base.so*'))[0])\n"
        "lib.ggml_blck_size.restype = ctypes.c_int64\n"
        "lib.ggml_type_size.restype = ctypes.c_size_t\n"
        "lib.ggml_type_name.restype = ctypes.c_char_p\n"
        "row = lambda t: [lib.ggml_type_name(t).decode(), lib.ggml_blck_size(t), lib.ggml_type_size(t)]\n"
        f"print(json.dumps([row(t) for t in range({GGML_TYPE_COUNT})]))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         env=child_env()).stdout
    assert [tuple(x) for x in json.loads(out)] == [GGML_TYPES[t] for t in range(GGML_TYPE_COUNT)]


SPLIT_MUTATIONS = {
    "second-shard-no=0": lambda first, second: second.set(make_kv("split.no", 0, VT.UINT16)),
    "second-shard-no-missing": lambda first, second: second.drop("split.no"),
    "first-shard-no=1": lambda first, second: first.set(make_kv("split.no", 1, VT.UINT16)),
    "count-as-i16": lambda first, second: first.set(make_kv("split.count", 2, VT.INT16)),
    "count=1": lambda first, second: first.set(make_kv("split.count", 1, VT.UINT16)),
    "count=3": lambda first, second: first.set(make_kv("split.count", 3, VT.UINT16)),
    "tensors-count=3": lambda first, second: first.set(make_kv("split.tensors.count", 3, VT.INT32)),
    "tensors-count-as-u32": lambda first, second: first.set(make_kv("split.tensors.count", 2, VT.UINT32)),
    "tensors-count-missing": lambda first, second: first.drop("split.tensors.count"),
}


@pytest.mark.parametrize("mutation", [*SPLIT_MUTATIONS, "dup-name", "second-bad-offset"])
def test_split_mutations_agree_with_llamacpp(real_vocab, tmp_path: Path, mutation: str) -> None:
    """Split keys, shard indexes, counts and cross-shard names, against llama.cpp's loader."""
    from oracle import clear_cache, llama_values, require_oracle

    from paircheck._engine.llamacpp import check_loadable
    from paircheck.findings import PASS
    from paircheck.pipeline import describe

    require_oracle()
    meta = read_kvs(real_vocab("llama-spm"))
    first = type(meta)(meta.version, 0, list(meta.kvs))
    second = type(meta)(meta.version, 0, [])
    for m, no in ((first, 0), (second, 1)):
        m.set(make_kv("split.count", 2, VT.UINT16))
        m.set(make_kv("split.tensors.count", 2, VT.INT32))
        m.set(make_kv("split.no", no, VT.UINT16))
    if mutation in SPLIT_MUTATIONS:
        SPLIT_MUTATIONS[mutation](first, second)
    names = [b"token_embd.weight", b"token_embd.weight" if mutation == "dup-name" else b"output.weight"]
    offset = 32 if mutation == "second-bad-offset" else None
    paths = [tmp_path / "tiny-00001-of-00002.gguf", tmp_path / "tiny-00002-of-00002.gguf"]
    paths[0].write_bytes(build_with_tensors(first, [TensorSpec(names[0], [64, 32], 0)]).data)
    paths[1].write_bytes(build_with_tensors(second, [TensorSpec(names[1], [64, 32], 0, offset=offset)]).data)
    clear_cache()
    ora = llama_values(paths[0])
    desc = describe(str(paths[0]))
    loads = check_loadable("target", desc.vocab, desc).status == PASS
    assert loads == ora["loaded"], (desc.metadata.tensor_error, ora.get("error"))
    error = desc.metadata.tensor_error
    if error is not None and not ora["loaded"]:
        # The path in llama.cpp's message is the one it built; compare the words.
        assert error.message.split(" /")[0] in ora["error"], (error.message, ora["error"])
