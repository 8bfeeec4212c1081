"""The pure parts of the Hub search: what a listing entry is allowed to be, which file of a repo is
read, how a model's family, size and relations are read from its name and tags, and the order
the candidates are read in."""

from __future__ import annotations

import shlex
import subprocess

from paircheck._source.hub_api import parse_model_info, valid_filename, valid_repo_id
from paircheck._source.split_name import all_shards
from paircheck.constants import DRAFT_EAGLE3, DRAFT_SIMPLE
from paircheck.scan.hub_candidates import (
    HubCandidate,
    _reading_order,
    base_models,
    family_stem,
    pick_file,
    quant_label,
    size_from_name,
    size_of,
)

QUANTS = ["m-q2_k.gguf", "m-q4_k_m.gguf", "m-q8_0.gguf", "m-bf16-00001-of-00002.gguf", "m-bf16-00002-of-00002.gguf",
          "mmproj-m-f16.gguf", "README.md"]


def test_hostile_listing_entries_are_left_out() -> None:
    assert parse_model_info({"id": "../../etc/passwd"}) is None
    assert parse_model_info({"id": "org/name; rm -rf ~"}) is None
    assert parse_model_info({"id": 5}) is None and parse_model_info("org/name") is None
    assert parse_model_info({"id": "org/name", "siblings": "not a list"}) is None
    assert parse_model_info({"id": "org/name", "safetensors": {"no": "total"}}) is None  # ModelInfo's own KeyError
    info = parse_model_info({"id": "org/name", "siblings": [
        {"rfilename": "ok-Q4_K_M.gguf"}, {"rfilename": "\x1b[31mred.gguf"}, {"rfilename": "../up.gguf"},
        {"rfilename": "/abs.gguf"}, {"nofilename": 1}, "x"]})
    assert info is not None and [s.rfilename for s in info.siblings] == ["ok-Q4_K_M.gguf"]
    assert valid_repo_id("Qwen/Qwen2.5-0.5B-Instruct") and not valid_repo_id("Qwen/..")
    assert valid_filename("sub/dir/a b.gguf") and not valid_filename("a/../b.gguf")


def test_download_words_are_shell_safe() -> None:
    """A file name with spaces, quotes and $ survives the shell exactly (bash itself splits it)."""
    c = HubCandidate("org/name", "we ird $(x) 'q4_k_m'.gguf", "family")
    argv = subprocess.run(["bash", "-c", f"printf '%s\\n' {c.download()}"], capture_output=True, text=True)
    assert argv.stdout.splitlines() == ["hf", "download", "org/name", "we ird $(x) 'q4_k_m'.gguf"]
    assert shlex.split(HubCandidate("org/name", None, "family").download()) == ["hf", "download", "org/name"]


def test_pick_file_as_llamacpp_picks_and_names_the_others() -> None:
    file, shards, others = pick_file(QUANTS, DRAFT_SIMPLE)
    assert (file, shards) == ("m-q4_k_m.gguf", ())
    assert others == ("BF16", "Q2_K", "Q8_0")  # the projector is not a quantization of the model
    split, shards, _ = pick_file([f for f in QUANTS if "bf16" in f], DRAFT_SIMPLE)
    assert split == "m-bf16-00001-of-00002.gguf" and shards == ("m-bf16-00001-of-00002.gguf",
                                                                 "m-bf16-00002-of-00002.gguf")
    assert all_shards(split) == shards  # composed where every split name is: _source/split_name
    assert pick_file(["config.json", "tokenizer.json"], DRAFT_SIMPLE) == (None, (), ())
    # A head method reads the head beside the model, as llama.cpp's find_best_eagle3 looks for it.
    head, _, others = pick_file([*QUANTS, "eagle3-m-q8_0.gguf", "eagle3-m-f16.gguf"], DRAFT_EAGLE3)
    assert head == "eagle3-m-q8_0.gguf" and others == ("F16",)


def test_names_tags_and_sizes() -> None:
    assert family_stem("Qwen/Qwen2.5-14B-Instruct") == "Qwen2.5"
    assert family_stem("meta-llama/Llama-3.1-8B-Instruct") == "Llama-3.1"
    assert family_stem("gemma-2-9b-it") == "gemma-2" and family_stem("Phi-3-mini-4k-instruct") is None
    assert quant_label("Qwen2.5-0.5B-Instruct-IQ4_XS.gguf") == "IQ4_XS"
    assert quant_label("qwen2.5-14b-instruct-fp16-00001-of-00003.gguf") == "FP16"
    assert size_from_name("SmolLM2-135M-Instruct") == 0.135 and size_from_name("Qwen2.5-Coder") is None
    info = parse_model_info({"id": "bartowski/Qwen2.5-1.5B-Instruct-GGUF", "tags": [
        "gguf", "base_model:Qwen/Qwen2.5-1.5B-Instruct", "base_model:quantized:Qwen/Qwen2.5-1.5B-Instruct",
        "base_model:quantized:bad id", 7], "gguf": {"total": 1_543_714_304}})
    assert info is not None
    assert base_models(info) == [("", "Qwen/Qwen2.5-1.5B-Instruct"), ("quantized", "Qwen/Qwen2.5-1.5B-Instruct")]
    assert size_of(info) == 1.543714304  # the Hub's parameter count before the name's label


def test_reading_order() -> None:
    """Documented first; one repo per model before second copies; the kind the engine loads; the
    target's variant before the base model before other variants; then the smallest."""
    keys = {frozenset({"qwen2.5", "14b", "instruct"})}
    c = [
        HubCandidate("Qwen/Qwen2.5-3B-Instruct-GGUF", "a-q4_k_m.gguf", "family", size_b=3.0),
        HubCandidate("Qwen/Qwen2.5-0.5B", None, "family", size_b=0.5),
        HubCandidate("Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF", "c-q4_k_m.gguf", "family", size_b=0.5),
        HubCandidate("Qwen/Qwen2.5-1.5B-Instruct", None, "family", size_b=1.5),
        HubCandidate("bartowski/Qwen2.5-1.5B-Instruct-GGUF", "b-q4_k_m.gguf", "quantized", size_b=1.5),
        HubCandidate("Qwen/Qwen2.5-7B-Instruct-GGUF", "d-q4_k_m.gguf", "registry", size_b=7.0, documented=True),
    ]
    order = [x.repo for x in _reading_order(c, "llama.cpp", keys, "Qwen2.5")]
    assert order == ["Qwen/Qwen2.5-7B-Instruct-GGUF", "bartowski/Qwen2.5-1.5B-Instruct-GGUF",
                     "Qwen/Qwen2.5-3B-Instruct-GGUF", "Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF", "Qwen/Qwen2.5-0.5B",
                     "Qwen/Qwen2.5-1.5B-Instruct"]
    # vLLM loads Hugging Face repos: those first.
    order = [x.repo for x in _reading_order(c, "vllm", keys, "Qwen2.5")]
    assert order[1:3] == ["Qwen/Qwen2.5-1.5B-Instruct", "Qwen/Qwen2.5-0.5B"]
