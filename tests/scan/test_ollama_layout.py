"""Ollama's store as its source writes it (ollama/ollama at fb30760996871fa9460115c753afd2c60d4ab0f7;
the files and functions are named in paircheck/scan/discover.py): one test per verified rule."""

from __future__ import annotations

import json
from pathlib import Path

from paircheck.scan.discover import Candidate, Unlisted, ollama_dir, ollama_display_name, ollama_models

HEX = "ab" * 32


def _store(tmp_path: Path) -> Path:
    store = tmp_path / "models"
    (store / "manifests").mkdir(parents=True)
    (store / "blobs").mkdir()
    return store


def _manifest(store: Path, host: str, namespace: str, model: str, tag: str, digest: str,
              media: str = "application/vnd.ollama.image.model") -> Path:
    path = store / "manifests" / host / namespace / model / tag
    path.parent.mkdir(parents=True, exist_ok=True)
    layers = [{"mediaType": "application/vnd.ollama.image.license", "digest": "sha256:" + "cd" * 32, "size": 1},
              {"mediaType": media, "digest": digest, "size": 4}]
    path.write_text(json.dumps({"schemaVersion": 2, "layers": layers}), encoding="utf-8")
    return path


def test_store_location_env_trimmed_like_envconfig_var(tmp_path: Path) -> None:
    # envconfig.Var trims spaces, then quotes; Models() falls back to ~/.ollama/models on every OS.
    assert ollama_dir({"OLLAMA_MODELS": ' "/srv/ollama" ', "HOME": "/h"}) == Path("/srv/ollama")
    assert ollama_dir({"OLLAMA_MODELS": "'/srv/o'"}) == Path("/srv/o")
    assert ollama_dir({"OLLAMA_MODELS": "  ", "HOME": "/h"}) == Path("/h/.ollama/models")
    assert ollama_dir({"HOME": "/h"}) == Path("/h/.ollama/models")


def test_display_shortest_rules() -> None:
    # Name.DisplayShortest: default host and namespace dropped (case-insensitively), tag always shown.
    assert ollama_display_name("registry.ollama.ai", "library", "qwen2.5", "0.5b") == "qwen2.5:0.5b"
    assert ollama_display_name("Registry.Ollama.AI", "Library", "llama3", "latest") == "llama3:latest"
    assert ollama_display_name("registry.ollama.ai", "jmorgan", "draft", "q4") == "jmorgan/draft:q4"
    assert ollama_display_name("hf.co", "bartowski", "Qwen2.5-0.5B-GGUF", "Q8_0") == (
        "hf.co/bartowski/Qwen2.5-0.5B-GGUF:Q8_0"
    )


def test_manifest_path_and_blob_naming(tmp_path: Path) -> None:
    # manifests/HOST/NAMESPACE/MODEL/TAG; the layer digest sha256:HEX is the file blobs/sha256-HEX.
    store = _store(tmp_path)
    _manifest(store, "registry.ollama.ai", "library", "qwen2.5", "0.5b", "sha256:" + HEX)
    (store / "blobs" / f"sha256-{HEX}").write_bytes(b"GGUF")
    (found,) = list(ollama_models(store))
    assert found == Candidate(str(store / "blobs" / f"sha256-{HEX}"), "qwen2.5:0.5b", "ollama")


def test_old_colon_blob_names_are_found(tmp_path: Path) -> None:
    # Older releases stored blobs/sha256:HEX; fixBlobs renames them only when the server next starts.
    store = _store(tmp_path)
    _manifest(store, "registry.ollama.ai", "library", "old", "latest", "sha256:" + HEX)
    (store / "blobs" / f"sha256:{HEX}").write_bytes(b"GGUF")
    (found,) = list(ollama_models(store))
    assert isinstance(found, Candidate) and found.location.endswith(f"sha256:{HEX}") and found.name == "old:latest"


def test_only_the_model_layer_is_the_gguf(tmp_path: Path) -> None:
    # application/vnd.ollama.image.model is the weights; a manifest without it (only a draft
    # layer, application/vnd.ollama.image.draft) is listed with its reason, not guessed.
    store = _store(tmp_path)
    path = _manifest(store, "registry.ollama.ai", "library", "x", "latest", "sha256:" + HEX,
                     media="application/vnd.ollama.image.draft")
    (store / "blobs" / f"sha256-{HEX}").write_bytes(b"GGUF")
    (found,) = list(ollama_models(store))
    assert isinstance(found, Unlisted) and found.location == str(path) and "no model layer" in found.error
