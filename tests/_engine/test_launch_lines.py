"""Every llama-server launch line the check prints is one the pinned llama-server accepts as
printed: run as printed, it loads both models and sets up speculation.

llama-server opens GGUF files (-m / -md), a Hub GGUF repo (-hf / -hfd ``org/name:QUANT``)
and, for the target only, a URL (-mu); never a Hugging Face folder
(``gguf_init_from_reader: failed to read magic``, exit 1). A model it cannot open as named
comes with the steps that make a GGUF of it (a folder: ``convert_hf_to_gguf.py``), and the
line names the file those steps write.

The models are tiny runnable llamas with llama.cpp's real llama-spm vocabulary
(tests/tiny_model.py), the server the pinned build (tests/llamacpp_build.py), one thread.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import llamacpp_build
import pytest
from hf_build import build_llama_spm_folder, write_config
from tiny_model import TinyShape, write_tiny_llama

from paircheck.errors import InputError
from paircheck.llama_server.process import llama_server

REPO = Path(__file__).resolve().parents[2]
VOCAB = REPO / "fixtures" / "examples" / "ggml-vocab-llama-spm.gguf"
# Small, one thread, no AMX repack (llama.cpp#20824 on this machine's CPU).
SERVER_FLAGS = ["-c", "256", "--parallel", "1", "-t", "1", "-tb", "1", "--no-repack"]


@pytest.fixture(scope="module")
def binary() -> str:
    return str(llamacpp_build.ensure_tools()["llama-server"])


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("launch")
    folder = build_llama_spm_folder(VOCAB, root / "Tiny-Llama-HF")
    write_config(folder, {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 32000,
                          "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 1,
                          "num_attention_heads": 4, "num_key_value_heads": 4, "bos_token_id": 1,
                          "eos_token_id": 2, "max_position_embeddings": 512})
    return {
        "target": write_tiny_llama(root / "target.gguf", VOCAB, seed=0),
        "draft": write_tiny_llama(root / "draft.gguf", VOCAB, seed=3, shape=TinyShape(n_layer=1, n_ff=64)),
        "folder": folder,
    }


def _next_steps(*args: str | Path, cwd: Path) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "PAIRCHECK_DEBUG"}
    proc = subprocess.run([sys.executable, "-m", "paircheck", "--json", *map(str, args)], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    steps: list[str] = json.loads(proc.stdout)["next_steps"]
    return steps


def _launch(steps: list[str]) -> list[str]:
    lines = [s for s in steps if s.startswith("llama-server ")]
    assert len(lines) == 1, steps
    return shlex.split(lines[0])


def _loads(binary: str, argv: list[str], cwd: Path) -> None:
    """Run the printed line (its own options, then this machine's small ones) in ``cwd`` until
    llama-server answers /health; it fails on any option or model it cannot use."""
    assert argv[0] == "llama-server"
    here = os.getcwd()
    os.chdir(cwd)  # relative paths, as the user pastes the line where paircheck ran
    try:
        with llama_server(binary, [*argv[1:], *SERVER_FLAGS], ready_timeout=120, log_dir=cwd) as server:
            log = server.log.read_text(errors="replace")
    finally:
        os.chdir(here)
    assert "failed to initialize speculative decoding" not in log, log


@pytest.mark.slow  # runs the pinned llama-server
def test_gguf_files_launch_as_printed(binary: str, models: dict[str, Path], tmp_path: Path) -> None:
    steps = _next_steps(models["target"], models["draft"], cwd=tmp_path)
    argv = _launch(steps)
    assert argv[1:5] == ["-m", str(models["target"]), "-md", str(models["draft"])]
    _loads(binary, argv, tmp_path)


@pytest.mark.slow  # runs the pinned llama-server
def test_a_hugging_face_folder_is_converted_first(binary: str, models: dict[str, Path], tmp_path: Path) -> None:
    folder = models["folder"]
    steps = _next_steps(models["target"], folder, cwd=tmp_path)
    argv = _launch(steps)
    # Never the folder after -md: llama-server cannot open it ("failed to read magic", exit 1).
    assert str(folder) not in argv
    convert = next(shlex.split(s) for s in steps if s.startswith("python convert_hf_to_gguf.py "))
    assert convert[:3] == ["python", "convert_hf_to_gguf.py", str(folder)]
    written = convert[convert.index("--outfile") + 1]
    assert argv[argv.index("-md") + 1] == written  # the line names the file the conversion writes
    assert any("llama-server opens GGUF files only" in s for s in steps), steps
    # What the converter writes is a GGUF llama-server opens: with it in place, the line runs.
    write_tiny_llama(tmp_path / written, VOCAB, seed=3, shape=TinyShape(n_layer=1, n_ff=64))
    _loads(binary, argv, tmp_path)


def test_a_folder_as_the_target_is_converted_too(models: dict[str, Path], tmp_path: Path) -> None:
    steps = _next_steps(models["folder"], models["draft"], cwd=tmp_path)
    argv = _launch(steps)
    assert str(models["folder"]) not in argv and argv[1] == "-m" and argv[2].endswith(".gguf")


@pytest.mark.slow  # runs the pinned llama-server
def test_the_folder_itself_is_refused_by_llama_server(binary: str, models: dict[str, Path], tmp_path: Path) -> None:
    """Why the line above must not name the folder: the pinned server exits on it."""
    with pytest.raises(InputError, match="exited with code 1"):
        with llama_server(binary, ["-m", str(models["target"]), "-md", str(models["folder"]),
                                   "--spec-type", "draft-simple", *SERVER_FLAGS], ready_timeout=120, log_dir=tmp_path):
            pass


def test_one_folder_as_both_sides_is_converted_once(models: dict[str, Path], tmp_path: Path) -> None:
    steps = _next_steps(models["folder"], models["folder"], cwd=tmp_path)
    assert sum(s.startswith("python convert_hf_to_gguf.py ") for s in steps) == 1


# --- the Hub: -hf / -hfd, and a Hugging Face repo converted -------------------------------

@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory, real_vocab: Callable[[str], Path]) -> Iterator[str]:
    from httpserver import TestServer
    from hub_standin import build

    standin = build(tmp_path_factory.mktemp("hub"), real_vocab)
    with TestServer() as server:
        standin.serve(server)
        yield server.url


def _hub_steps(url: str, tmp: Path, *args: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING", "PAIRCHECK_DEBUG"))}
    env.update(HF_ENDPOINT=url, HF_HOME=str(tmp / "hf-home"), HF_HUB_CACHE=str(tmp / "hf-cache"),
               PAIRCHECK_CACHE_HOME=str(tmp / "pc-cache"), HF_TOKEN="", PAIRCHECK_HTTP_TIMEOUT="10")
    proc = subprocess.run([sys.executable, "-m", "paircheck", "--json", *args], capture_output=True, text=True,
                          env=env, cwd=tmp, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    steps: list[str] = json.loads(proc.stdout)["next_steps"]
    return steps


def _server_options(binary: str) -> set[str]:
    """Every option the pinned llama-server's --help lists."""
    out = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=60, check=False)
    return set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", out.stdout + out.stderr))


@pytest.mark.slow  # runs the pinned llama-server
def test_hub_ggufs_are_named_as_llama_server_fetches_them(hub: str, binary: str, tmp_path: Path) -> None:
    target = "Qwen/Qwen2.5-7B-Instruct-GGUF:Q4_K_M"
    draft = "Qwen/Qwen2.5-0.5B-Instruct-GGUF/qwen2.5-0.5b-instruct-q8_0.gguf"  # a file: its quant tag names it
    argv = _launch(_hub_steps(hub, tmp_path, target, draft))
    assert argv == ["llama-server", "-hf", target, "-hfd", "Qwen/Qwen2.5-0.5B-Instruct-GGUF:Q8_0",
                    "--spec-type", "draft-simple"]
    known = _server_options(binary)
    assert all(word in known for word in argv[1:] if word.startswith("-")), known


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_a_hub_repo_of_safetensors_is_downloaded_and_converted(hub: str, tmp_path: Path) -> None:
    steps = _hub_steps(hub, tmp_path, "Qwen/Qwen2.5-7B-Instruct-GGUF:Q4_K_M", "Qwen/Qwen2.5-0.5B-Instruct")
    argv = _launch(steps)
    assert "Qwen/Qwen2.5-0.5B-Instruct" not in argv
    assert "hf download Qwen/Qwen2.5-0.5B-Instruct --local-dir Qwen2.5-0.5B-Instruct" in steps
    assert "python convert_hf_to_gguf.py Qwen2.5-0.5B-Instruct --outfile Qwen2.5-0.5B-Instruct.gguf" in steps
    assert argv[argv.index("-md") + 1] == "Qwen2.5-0.5B-Instruct.gguf"
