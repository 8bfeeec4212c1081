"""The safetensors header check against ``safetensors.safe_open`` itself (the oracle).

Real files are written by the safetensors package, then mutated: cuts at many offsets
(inside the length, the header and the data), extra bytes, header lengths, and header
JSON edits (dtypes, shapes, offsets, missing fields, bad UTF-8, NaN, ...). For every
file, paircheck's verdict (no error) must equal "safe_open opens it and every tensor can
be read", and paircheck's text must be the loader's own (for JSON syntax errors, whose
detail is serde's, the loader's prefix). Then the folder and the report: a cut shard is
LC001 failing with the plain-words reason and the `hf download` fix, exit 1.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hf_build import build_qwen2_folder
from httpserver import COMMIT, TestServer
from safetensors import safe_open
from safetensors.numpy import save_file

from paircheck._source.safetensors_header import INDEX_NAME, MAX_HEADER_SIZE, PREFIX, check_local_file
from paircheck.cli import cli
from paircheck.findings import FAIL, PASS
from paircheck.pipeline import check_pair, describe


def oracle(path: Path) -> tuple[bool, str | None]:
    """safe_open's verdict: (loadable, error text)."""
    try:
        with safe_open(str(path), framework="numpy") as handle:
            for key in handle.keys():
                handle.get_tensor(key)
    except Exception as exc:  # the oracle's own exception types vary (SafetensorError, OSError)
        return False, str(exc)
    return True, None


def base_file(path: Path) -> bytes:
    save_file(
        {
            "model.embed_tokens.weight": np.arange(24, dtype=np.float32).reshape(6, 4),
            "model.norm.weight": np.ones(7, dtype=np.float16),
            "lm_head.bias": np.arange(3, dtype=np.int64),
            "scalar": np.array(5, dtype=np.int8),
            "empty": np.zeros((0, 3), dtype=np.float32),
        },
        str(path),
        metadata={"format": "pt"},
    )
    return path.read_bytes()


def split(data: bytes) -> tuple[dict, bytes]:
    n = struct.unpack("<Q", data[:8])[0]
    return json.loads(data[8 : 8 + n]), data[8 + n :]


def join(header: dict | bytes, body: bytes, length: int | None = None) -> bytes:
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(raw) if length is None else length) + raw + body


def _edit(fn: Callable[[dict], None]) -> Callable[[bytes], bytes]:
    def mutate(data: bytes) -> bytes:
        header, body = split(data)
        fn(header)
        return join(header, body)

    return mutate


def _set(name: str, key: str, value: object) -> Callable[[dict], None]:
    def fn(h: dict) -> None:
        h[name][key] = value

    return fn


EMB = "model.embed_tokens.weight"
NORM = "model.norm.weight"


def mutations(base: bytes) -> dict[str, bytes]:
    out: dict[str, bytes] = {"whole": base}
    n = struct.unpack("<Q", base[:8])[0]
    # Cuts: inside the length, the header, at the header's end, inside the data, one short.
    for cut in sorted({0, 1, 4, 7, 8, 9, 20, n // 2, n + 7, n + 8, n + 9, n + 40, len(base) - 1}):
        out[f"cut{cut}"] = base[:cut]
    for cut in range(8 + n, len(base), max(1, (len(base) - 8 - n) // 9)):
        out[f"cutdata{cut}"] = base[:cut]
    out["extra1"] = base + b"\0"
    out["extra100"] = base + b"x" * 100
    header, body = split(base)
    out["len_too_large"] = join(header, body, MAX_HEADER_SIZE + 1)
    out["len_max_cut"] = join(header, body, MAX_HEADER_SIZE)
    out["len_huge"] = join(header, body, (1 << 64) - 1)
    out["len_short"] = join(json.dumps(header).encode(), body, n - 5)
    out["padded_header"] = join(json.dumps(header).encode() + b"       ", body)
    edits: dict[str, Callable[[dict], None]] = {
        "dtype_f64": _set(EMB, "dtype", "F64"),
        "dtype_f16": _set(EMB, "dtype", "F16"),
        "dtype_unknown": _set(EMB, "dtype", "F12"),
        "dtype_lower": _set(EMB, "dtype", "f32"),
        "dtype_f4_odd": _set(NORM, "dtype", "F4"),
        "shape_bigger": _set(EMB, "shape", [6, 5]),
        "shape_smaller": _set(EMB, "shape", [6, 3]),
        "shape_reordered": _set(EMB, "shape", [4, 6]),
        "shape_negative": _set(EMB, "shape", [-6, -4]),
        "shape_float": _set(EMB, "shape", [6.0, 4]),
        "shape_bool": _set(EMB, "shape", [True, 24]),
        "shape_overflow": _set(EMB, "shape", [1 << 40, 1 << 40]),
        "shape_bits_overflow": _set(EMB, "shape", [1 << 62, 1]),
        "shape_u64_max": _set(EMB, "shape", [(1 << 64) - 1]),
        "shape_too_big_int": _set(EMB, "shape", [1 << 64]),
        "offsets_shift": _set(EMB, "data_offsets", [1, 97]),
        "offsets_reversed": _set(NORM, "data_offsets", [14, 0]),
        "offsets_three": _set(EMB, "data_offsets", [0, 96, 100]),
        "offsets_string": _set(EMB, "data_offsets", ["0", "96"]),
        "no_dtype": lambda h: h[EMB].pop("dtype"),
        "no_shape": lambda h: h[EMB].pop("shape"),
        "no_offsets": lambda h: h[EMB].pop("data_offsets"),
        "extra_field": _set(EMB, "note", "kept"),
        "metadata_int": lambda h: h.__setitem__("__metadata__", {"format": 1}),
        "metadata_null": lambda h: h.__setitem__("__metadata__", None),
        "metadata_list": lambda h: h.__setitem__("__metadata__", ["pt"]),
        "tensor_not_map": lambda h: h.__setitem__(EMB, [1, 2]),
        "tensor_removed": lambda h: h.pop(NORM),
    }
    for name, fn in edits.items():
        out[name] = _edit(fn)(base)
    raw = json.dumps(header).encode()
    out["not_utf8"] = join(raw.replace(b'"pt"', b'"\xff\xfe"'), body)
    out["not_json"] = join(raw[:-1] + b",", body)
    out["json_array"] = join(b"[" + b" " * (len(raw) - 2) + b"]", body)
    out["nan"] = join(raw.replace(b'"format": "pt"', b'"format": NaN '), body)
    out["lone_surrogate"] = join(raw.replace(b'"pt"', b'"\\ud800"'), body)
    out["duplicate_metadata"] = join(raw.replace(b'{"__metadata__"', b'{"__metadata__": {}, "__metadata__"'), body)
    out["duplicate_dtype"] = join(raw.replace(b'"dtype": "F32"', b'"dtype": "F32", "dtype": "F32"', 1), body)
    out["duplicate_tensor"] = join(raw.replace(b', "lm_head.bias"', b', "scalar": {"dtype": "I8", "shape": [], '
                                               b'"data_offsets": [0, 1]}, "lm_head.bias"'), body)
    out["empty_header"] = join(b"{}", b"")
    out["empty_header_with_body"] = join(b"{}", b"abc")
    out["zero_length"] = join(b"", body)
    return out


def test_header_check_agrees_with_safe_open_on_every_mutation(tmp_path: Path) -> None:
    base = base_file(tmp_path / "base.safetensors")
    cases = mutations(base)
    assert len(cases) >= 60
    disagree, wrong_text = [], []
    failing = 0
    for name, data in cases.items():
        path = tmp_path / f"{name}.safetensors"
        path.write_bytes(data)
        loads, said = oracle(path)
        found = check_local_file(path)
        ours = found.error
        if (ours is None) != loads:
            disagree.append((name, said, ours and ours.message))
            continue
        if ours is None:
            continue
        failing += 1
        assert said is not None
        if ours.message.startswith(PREFIX + "invalid JSON in header:") or ours.message.startswith(
            PREFIX + "invalid UTF-8 in header:"
        ):
            # The detail after the kind is serde's / Rust's wording.
            if not said.startswith(ours.message.split(":", 2)[0] + ":" + ours.message.split(":", 2)[1]):
                wrong_text.append((name, said, ours.message))
        elif said != ours.message:
            wrong_text.append((name, said, ours.message))
    assert not disagree, disagree
    assert not wrong_text, wrong_text
    assert failing >= 45  # the mutations really break files, and both sides see it


def test_cut_files_are_incomplete_with_sizes(real_vocab, tmp_path: Path) -> None:
    base = base_file(tmp_path / "base.safetensors")
    n = struct.unpack("<Q", base[:8])[0]
    for cut in (9, n // 2, n + 8, len(base) - 1):
        path = tmp_path / "cut.safetensors"
        path.write_bytes(base[:cut])
        error = check_local_file(path).error
        assert error is not None and error.incomplete, cut
        assert error.file_size == cut
        assert error.needed == (8 + n if cut < 8 + n else len(base))
    # Extra bytes are refused too, but they are not an interrupted download.
    (tmp_path / "long.safetensors").write_bytes(base + b"\0" * 10)
    error = check_local_file(tmp_path / "long.safetensors").error
    assert error is not None and not error.incomplete and "longer than its header says" in (error.reason or "")
    folder = build_qwen2_folder(real_vocab("qwen2"), tmp_path / "m", 151936)
    (folder / "model.safetensors").write_bytes(base + b"\0" * 10)
    check = check_pair(str(folder), str(folder)).checks[0]
    assert check.status == FAIL and check.message.startswith(
        "target: model.safetensors is 10 bytes longer than its header says (extra bytes at the end). "
        "safetensors refuses to load it: Error while deserializing header: incomplete metadata, file not fully covered"
    ), check.message


def test_huge_header_claim_reads_nothing_of_it(tmp_path: Path) -> None:
    """A header length of 99 MB in a 1 KB file: refused from the sizes alone."""
    path = tmp_path / "claim.safetensors"
    path.write_bytes(struct.pack("<Q", MAX_HEADER_SIZE - 1) + b"{" + b" " * 1000)
    reads: list[int] = []
    from paircheck._source.safetensors_header import check_header

    def read(offset: int, length: int) -> bytes:
        reads.append(length)
        return path.read_bytes()[offset : offset + length]

    found = check_header(read, path.stat().st_size, str(path))
    assert found.error is not None and found.error.message == PREFIX + "invalid header length"
    assert reads == [8]


def _model_folder(real_vocab: Callable[[str], Path], root: Path, shards: int) -> tuple[Path, list[bytes]]:
    folder = build_qwen2_folder(real_vocab("qwen2"), root / "Qwen2.5-0.5B-Instruct", 151936)
    datas = []
    weight_map = {}
    for i in range(shards):
        name = f"model-{i + 1:05d}-of-{shards:05d}.safetensors"
        tensor = f"model.layers.{i}.weight"
        save_file({tensor: np.full((64, 64), i, dtype=np.float32)}, str(folder / name))
        datas.append((folder / name).read_bytes())
        weight_map[tensor] = name
    (folder / INDEX_NAME).write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    return folder, datas


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_cut_shard_in_a_folder_fails_loadable_with_reason_and_fix(real_vocab, tmp_path: Path) -> None:
    folder, datas = _model_folder(real_vocab, tmp_path, 4)
    whole = check_pair(str(folder), str(folder))
    assert [c.status for c in whole.checks[:2]] == [PASS, PASS]
    shard = folder / "model-00002-of-00004.safetensors"
    shard.write_bytes(datas[1][: len(datas[1]) // 2])
    assert oracle(shard)[0] is False
    report = check_pair(str(folder), str(folder))
    target = report.checks[0]
    assert target.status == FAIL and report.first_failure is not None
    assert target.message.startswith(
        "target: file model-00002-of-00004.safetensors is incomplete: 8.2 KB of 16.5 KB; "
        "the download was probably interrupted."
    ), target.message
    assert "safetensors refuses to load it: Error while deserializing header: incomplete metadata" in target.message
    assert target.fix is not None and "hf download" in target.fix and "--local-dir" in target.fix
    # The vocabulary checks still ran: the tokenizer files are whole.
    assert all(c.status == PASS for c in report.checks[2:])
    result = CliRunner().invoke(cli, [str(folder), str(folder)])
    assert result.exit_code == 1, result.output
    assert "incomplete" in result.output


def test_missing_shard_named_by_the_index(real_vocab, tmp_path: Path) -> None:
    folder, _ = _model_folder(real_vocab, tmp_path, 3)
    (folder / "model-00003-of-00003.safetensors").unlink()
    check = check_pair(str(folder), str(folder)).checks[0]
    assert check.status == FAIL
    assert "shard model-00003-of-00003.safetensors named in model.safetensors.index.json is missing (2 of 3" in (
        check.message
    )
    # No shard at all (only tokenizer and config were fetched, as paircheck caches a Hub
    # repo): the weights are not judged, the vocabulary is.
    for name in folder.glob("*.safetensors"):
        name.unlink()
    assert describe(str(folder)).metadata.tensor_error is None


@pytest.mark.parametrize("garbage", [b"", b"\x01\x02", b"<html>not a model</html>" * 3])
def test_garbage_safetensors_is_lc001_not_a_crash(real_vocab, tmp_path: Path, garbage: bytes) -> None:
    folder = build_qwen2_folder(real_vocab("qwen2"), tmp_path / "m", 151936)
    (folder / "model.safetensors").write_bytes(garbage)
    check = check_pair(str(folder), str(folder)).checks[0]
    assert check.status == FAIL
    assert oracle(folder / "model.safetensors")[0] is False


def _hub_run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "paircheck", *args], capture_output=True, text=True,
                          env={**os.environ, **env})


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_hub_repo_headers_against_the_listed_sizes_with_range_reads(real_vocab, tmp_path: Path) -> None:
    folder, datas = _model_folder(real_vocab, tmp_path, 4)
    small = {p.name: p.read_bytes() for p in folder.iterdir() if not p.name.endswith(".safetensors")}
    shards = {f"model-{i + 1:05d}-of-00004.safetensors": data for i, data in enumerate(datas)}
    cut = dict(shards)
    cut["model-00002-of-00004.safetensors"] = datas[1][:5000]
    (tmp_path / "cut.safetensors").write_bytes(datas[1][:5000])
    assert oracle(tmp_path / "cut.safetensors")[0] is False
    missing = {k: v for k, v in shards.items() if not k.startswith("model-00003")}
    with TestServer() as server:
        server.add_repo("org/whole", small | shards)
        server.add_repo("org/cut", small | cut)
        server.add_repo("org/missing", small | missing)
        env = {"HF_ENDPOINT": server.url, "HF_HUB_CACHE": str(tmp_path / "cache"), "HF_TOKEN": "",
               "HF_HUB_DISABLE_TELEMETRY": "1", "PAIRCHECK_HTTP_TIMEOUT": "5"}
        whole = _hub_run(["--json", "org/whole", "org/whole"], env)
        sent = sum(n for path, n in server.counters.by_path.items() if path.endswith(".safetensors"))
        cut_run = _hub_run(["--json", "org/whole", "org/cut"], env)
        missing_run = _hub_run(["--json", "org/missing", "org/whole"], env)
    assert whole.returncode == 0, whole.stdout + whole.stderr
    doc = json.loads(whole.stdout)
    assert doc["target"]["loadable"] is True and doc["draft"]["loadable"] is True
    # Each header was read twice (once per side), 8 + ~130 bytes each: never the 16 KB of data.
    assert 0 < sent < 8 * 400, sent
    assert cut_run.returncode == 1, cut_run.stderr
    doc = json.loads(cut_run.stdout)
    (fail,) = [c for c in doc["checks"] if c["status"] == "fail"]
    assert fail["details"]["side"] == "draft" and fail["details"]["loader"] == "safetensors"
    assert fail["message"].startswith(
        "draft: file model-00002-of-00004.safetensors is incomplete: 5.0 KB of 16.5 KB; "
        "the download was probably interrupted."
    ), fail["message"]
    assert "Error while deserializing header: incomplete metadata, file not fully covered" in fail["message"]
    assert "copy on the Hub is itself incomplete" in fail["fix"]
    assert doc["draft"]["loadable"] is False and doc["draft"]["incomplete"] is True
    assert doc["draft"]["vocab"]["vocab_loadable"] is True
    assert missing_run.returncode == 1, missing_run.stderr
    (fail,) = [c for c in json.loads(missing_run.stdout)["checks"] if c["status"] == "fail"]
    assert "model-00003-of-00004.safetensors (named in model.safetensors.index.json, not in the repository)" in (
        fail["message"]
    )


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_cut_shard_in_the_hub_cache_names_hf_download(real_vocab, tmp_path: Path) -> None:
    """A repo downloaded into the Hub cache with one shard cut: `hf download REPO` resumes it."""
    folder, datas = _model_folder(real_vocab, tmp_path, 2)
    snap = tmp_path / "cache" / "models--org--model" / "snapshots" / COMMIT
    snap.mkdir(parents=True)
    (snap.parents[1] / "refs").mkdir()
    (snap.parents[1] / "refs" / "main").write_text(COMMIT)
    for path in folder.iterdir():
        (snap / path.name).write_bytes(path.read_bytes())
    (snap / "model-00001-of-00002.safetensors").write_bytes(datas[0][:3000])
    env = {"HF_HUB_CACHE": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    result = _hub_run(["--json", "org/model", "org/model"], env)
    assert result.returncode == 1, result.stderr
    fail = [c for c in json.loads(result.stdout)["checks"] if c["status"] == "fail"][0]
    assert fail["fix"] == "Resume the download: hf download org/model (or: huggingface-cli download org/model)"
    assert "file model-00001-of-00002.safetensors is incomplete: 3.0 KB of 16.5 KB" in fail["message"]


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_broken_index_fails_loadable_and_still_describes_the_folder(real_vocab, tmp_path: Path) -> None:
    folder, _ = _model_folder(real_vocab, tmp_path, 2)
    (folder / INDEX_NAME).write_text('{"metadata": {}, "weight_map": [')
    check = check_pair(str(folder), str(folder)).checks[0]
    assert check.status == FAIL and "model.safetensors.index.json is not valid JSON" in check.message
    (folder / INDEX_NAME).write_text('{"metadata": {}}')
    check = check_pair(str(folder), str(folder)).checks[0]
    assert check.status == FAIL and "Can't load 'weight_map' from 'model.safetensors.index.json'" in check.message
