"""A GGUF reached through the Hugging Face cache is judged exactly as the same file by path.

Before sources declared what they read, a GGUF found in the Hub cache (``org/name:Q8_0``)
was read without its tensor infos, so engines that need embedding rows (vLLM,
transformers, SGLang) answered "unknown" for it while the same file by path passed. The
test lays out a real huggingface_hub cache (refs/main -> snapshots/<commit>/file) with
offline mode on, and compares every engine's verdict and reasons.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

from gguf_mutate import read_kvs

COMMIT = "0123456789abcdef0123456789abcdef01234567"
ALIGN = 32


def with_embedding(src: Path, dst: Path, rows: int, n_embd: int = 4) -> Path:
    """``src``'s metadata plus one F32 ``token_embd.weight`` of ``rows`` x ``n_embd`` (zeros)."""
    meta = read_kvs(src)
    parts = [b"GGUF", struct.pack("<IQQ", 3, 1, len(meta.kvs))]
    for kv in meta.kvs:
        key = kv.key.encode()
        parts += [struct.pack("<Q", len(key)) + key + struct.pack("<I", kv.vtype), kv.raw]
    name = b"token_embd.weight"
    # GGUF lists dimensions fastest-first: (n_embd, n_vocab); type 0 = F32; offset 0.
    parts.append(struct.pack("<Q", len(name)) + name + struct.pack("<IQQIQ", 2, n_embd, rows, 0, 0))
    head = b"".join(parts)
    head += b"\0" * (-len(head) % ALIGN)
    dst.write_bytes(head + b"\0" * (rows * n_embd * 4))
    return dst


def cache_repo(cache: Path, repo: str, files: dict[str, Path]) -> None:
    """Lay files out as huggingface_hub does: blobs, a snapshot of links, refs/main."""
    root = cache / ("models--" + repo.replace("/", "--"))
    snap = root / "snapshots" / COMMIT
    snap.mkdir(parents=True)
    (root / "blobs").mkdir()
    for name, path in files.items():
        blob = root / "blobs" / f"blob-{name}"
        blob.write_bytes(path.read_bytes())
        (snap / name).symlink_to(os.path.relpath(blob, snap))
    (root / "refs").mkdir()
    (root / "refs" / "main").write_text(COMMIT)


def check_all(target: str, draft: str, cache: Path) -> dict:
    env = {**os.environ, "HF_HUB_CACHE": str(cache), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "paircheck", "--engine", "all", "--json", "--no-registry", target, draft],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def verdicts(data: dict) -> dict[str, list[tuple[str, str, str]]]:
    return {
        row["engine"]: [(c["code"], c["status"], c["message"]) for c in row["checks"]]
        for row in data["engines"]
    }


def test_hub_cache_gguf_is_judged_as_the_same_file_by_path(real_vocab, tmp_path: Path) -> None:
    vocab = real_vocab("llama-spm")
    target = with_embedding(vocab, tmp_path / "target-Q8_0.gguf", rows=32000)
    draft = with_embedding(vocab, tmp_path / "draft-Q8_0.gguf", rows=32016)  # padded rows
    cache = tmp_path / "hub"
    cache_repo(cache, "org/target-GGUF", {"target-Q8_0.gguf": target})
    cache_repo(cache, "org/draft-GGUF", {"draft-Q8_0.gguf": draft})

    by_path = verdicts(check_all(str(target), str(draft), cache))
    by_hub = verdicts(check_all("org/target-GGUF:Q8_0", "org/draft-GGUF:Q8_0", cache))

    assert by_hub == by_path
    # The rows really were read: vLLM compares them and refuses 32000 vs 32016.
    vllm = {code: status for code, status, _ in by_hub["vllm"]}
    assert "skip" not in vllm.values()
    assert "fail" in vllm.values()
