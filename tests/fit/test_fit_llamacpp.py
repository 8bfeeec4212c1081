"""paircheck's memory model against llama.cpp's own projection.

Ground truth: ``llama-fit-params --fit-print on`` built from the pinned llama.cpp
(tests/llamacpp_build.py). It loads the model with ``no_alloc`` (no weight is read, no
buffer allocated) and prints llama.cpp's memory breakdown (``llama_get_memory_breakdown``:
model, context, compute) per device and for the host, in MiB rounded down. On this CPU-only
build everything is on the host, so the test compares paircheck's totals (``-ngl 0``).
Weight repacking is disabled (``--no-repack``): repacked CPU weights live in a buffer type
that is neither a device nor the host, so the breakdown would leave them out.

Second ground truth: llama-server itself, with its defaults (4 slots sharing one unified
KV cache, outputs sized for the slots and the draft), started until it listens: the buffer
sizes it logs (MiB with two decimals) for the model, KV cache, recurrent state and
compute, for single models and for a target with its draft.

The GGUFs have the exact tensor infos of real models and no data (tests/fit_shapes.py).
Bounds (issue 11): weights within 2 %, context (KV + recurrent state) within 5 %, compute
within the stated bound of paircheck.fit.compute (10 % or 32 MiB).
"""

from __future__ import annotations

import re
import signal
import subprocess
import time
from pathlib import Path

import fit_shapes
import llamacpp_build
import pytest

from paircheck.fit import DraftOptions, FitOptions, fit, model_memory, with_tensor_infos
from paircheck.fit.compute import COMPUTE_BOUND_ABS, COMPUTE_BOUND_REL
from paircheck.pipeline import describe

pytestmark = pytest.mark.slow  # runs the pinned llama-fit-params

MiB = 1 << 20

# (shape, ctx, cache type, extra llama.cpp flags); every shape at two contexts and two cache types
BASE = [(s, c, t, ()) for s in fit_shapes.SHAPES for c in (4096, 32768) for t in ("f16", "q8_0")]
# what else moves the figures: parallel sequences (per-sequence streams, SWA window per
# stream), ubatch (compute, SWA cells), flash attention off (transposed V, attention scores)
VARIANTS = [
    (s, c, "f16", extra)
    for s in ("llama3-8b", "gemma3-1b", "deepseek-v2-lite", "qwen2.5-0.5b")
    for c, extra in (
        (16384, ("-np", "4")),
        (4096, ("-ub", "256")),
        (4096, ("-ub", "2048", "-b", "2048")),
        (32768, ("-fa", "off")),
        (16384, ("-np", "4", "-fa", "off")),
    )
]


@pytest.fixture(scope="session")
def fit_params() -> Path:
    return llamacpp_build.ensure_tools()["llama-fit-params"]


@pytest.fixture(scope="session")
def shape_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fit-shapes")


def _options(ctx: int, cache: str, extra: tuple[str, ...]) -> FitOptions:
    flags = dict(zip(extra[::2], extra[1::2], strict=False))
    return FitOptions(
        ctx=ctx,
        ngl=0,
        cache_type_k=cache,
        cache_type_v=cache,
        parallel=int(flags.get("-np", "1")),  # llama-fit-params' default is one sequence
        ubatch=int(flags.get("-ub", "512")),
        batch=int(flags.get("-b", "2048")),
        flash_attn=flags.get("-fa", "auto") != "off",
        n_outputs=0,  # llama-fit-params keeps llama.cpp's default: a whole batch of outputs
    )


def _llamacpp(binary: Path, model: Path, ctx: int, cache: str, extra: tuple[str, ...]) -> tuple[int, int, int]:
    args = [str(binary), "-m", str(model), "-c", str(ctx), "-ctk", cache, "-ctv", cache, "--no-repack"]
    if "-np" not in extra:
        args += ["-np", "1"]
    out = subprocess.run([*args, *extra, "--fit-print", "on"], check=False, capture_output=True, text=True, timeout=300)
    host = [line.split() for line in out.stdout.splitlines() if line.startswith("Host ")]
    assert out.returncode == 0 and host, f"llama-fit-params failed: {out.stderr[-2000:]}"
    _, model_mib, context_mib, compute_mib = host[0]
    return int(model_mib), int(context_mib), int(compute_mib)


def _close(ours: int, theirs_mib: int, rel: float, abs_bytes: int = 0) -> bool:
    """llama.cpp prints MiB rounded down: its true figure is in [m, m+1) MiB."""
    low, high = theirs_mib * MiB, (theirs_mib + 1) * MiB
    slack = max(rel * theirs_mib * MiB, abs_bytes)
    return low - slack <= ours < high + slack


@pytest.mark.parametrize(("shape", "ctx", "cache", "extra"), BASE + VARIANTS)
def test_memory_matches_llamacpp(
    fit_params: Path, shape_dir: Path, shape: str, ctx: int, cache: str, extra: tuple[str, ...]
) -> None:
    path = fit_shapes.write(shape, shape_dir)
    mem = model_memory(with_tensor_infos(describe(str(path))).metadata, _options(ctx, cache, extra))
    model_mib, context_mib, compute_mib = _llamacpp(fit_params, path, ctx, cache, extra)
    got = (mem.weights_bytes / MiB, mem.kv_bytes / MiB, mem.compute_bytes / MiB)
    assert mem.device_bytes == 0 and mem.host_bytes == mem.weights_bytes + mem.kv_bytes + mem.compute_bytes
    assert _close(mem.weights_bytes, model_mib, 0.02), f"weights {got[0]:.1f} vs llama.cpp {model_mib} MiB"
    assert _close(mem.kv_bytes, context_mib, 0.05), f"context {got[1]:.1f} vs llama.cpp {context_mib} MiB"
    assert _close(mem.compute_bytes, compute_mib, COMPUTE_BOUND_REL, COMPUTE_BOUND_ABS), (
        f"compute {got[2]:.1f} vs llama.cpp {compute_mib} MiB"
    )


# --- llama-server's real allocation, with its defaults (4 slots, one unified cache, few outputs)

_BUFFER = re.compile(r"\b(model|KV|RS|compute) buffer size =\s*([\d.]+) MiB")
SERVER_CASES = [(s, ("-c", "4096")) for s in fit_shapes.SHAPES] + [
    (s, ("-c", "16384", "-ctk", "q8_0", "-ctv", "q8_0")) for s in fit_shapes.SHAPES
]


def _server(binary: Path, model: Path, draft: Path | None, extra: tuple[str, ...], log: Path) -> list[dict[str, float]]:
    """Start llama-server until it listens, stop it, and return each model's buffers (MiB).

    ``--no-warmup`` and ``--no-repack`` keep it from reading the (zero) weights; ``--fit
    off`` keeps the flags as given. The KV cache and compute buffers are really allocated.
    """
    args = [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", "0", "--no-warmup", "--no-repack"]
    args += ["--fit", "off", "-lv", "4", *extra]
    if draft is not None:
        args += ["-md", str(draft)]
    for _attempt in range(2):
        # once, on this shared 2-core machine, llama-server died while mapping the model
        # (SIGILL from a GGML_ABORT without a message): start it a second time before failing
        text = _start_and_stop(args, log)
        if "listening on" in text:
            break
    assert "listening on" in text, f"llama-server did not start: {text[-2000:]}"
    models: list[dict[str, float]] = []
    last = ""
    for kind, mib in _BUFFER.findall(text):
        if kind == "model" and last != "model":
            models.append({"model": 0.0, "context": 0.0, "compute": 0.0})
        key = "context" if kind in ("KV", "RS") else kind
        models[-1][key] += float(mib)
        last = kind
    return models


def _start_and_stop(args: list[str], log: Path) -> str:
    with open(log, "w") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline and proc.poll() is None:
                if "listening on" in log.read_text(errors="replace"):
                    break
                time.sleep(0.2)
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return log.read_text(errors="replace") + f"\n(exit code {proc.returncode})"


def _assert_close_mib(mem, theirs: dict[str, float], label: str) -> None:
    got = {"model": mem.weights_bytes / MiB, "context": mem.kv_bytes / MiB, "compute": mem.compute_bytes / MiB}
    assert abs(got["model"] - theirs["model"]) <= 0.02 * theirs["model"] + 0.01, (label, got, theirs)
    assert abs(got["context"] - theirs["context"]) <= 0.05 * theirs["context"] + 0.01, (label, got, theirs)
    bound = max(COMPUTE_BOUND_REL * theirs["compute"], COMPUTE_BOUND_ABS / MiB)
    assert abs(got["compute"] - theirs["compute"]) <= bound, (label, got, theirs)


@pytest.fixture(scope="session")
def llama_server() -> Path:
    return llamacpp_build.ensure_tools()["llama-server"]


@pytest.mark.parametrize(("shape", "extra"), SERVER_CASES)
def test_memory_matches_llama_server(
    llama_server: Path, shape_dir: Path, tmp_path: Path, shape: str, extra: tuple[str, ...]
) -> None:
    path = fit_shapes.write(shape, shape_dir)
    (theirs,) = _server(llama_server, path, None, extra, tmp_path / "server.log")
    flags = dict(zip(extra[::2], extra[1::2], strict=False))
    opts = FitOptions(
        ctx=int(flags["-c"]), ngl=0, cache_type_k=flags.get("-ctk", "f16"), cache_type_v=flags.get("-ctv", "f16")
    )
    mem = model_memory(with_tensor_infos(describe(str(path))).metadata, opts)  # llama-server's defaults
    _assert_close_mib(mem, theirs, shape)


def test_pair_matches_llama_server(llama_server: Path, shape_dir: Path, tmp_path: Path) -> None:
    """The draft gets the target's context and its own f16 cache; the target sizes its
    outputs for verifying the draft's tokens."""
    target, draft = fit_shapes.write("qwen2.5-7b", shape_dir), fit_shapes.write("qwen2.5-0.5b", shape_dir)
    extra = ("-c", "8192", "-ctk", "q8_0", "-ctv", "q8_0")
    theirs_t, theirs_d = _server(llama_server, target, draft, extra, tmp_path / "server.log")
    result = fit(
        with_tensor_infos(describe(str(target))).metadata,
        with_tensor_infos(describe(str(draft))).metadata,
        FitOptions(ctx=8192, ngl=0, cache_type_k="q8_0", cache_type_v="q8_0"),
        DraftOptions(ngl=0),
    )
    assert result.draft is not None
    _assert_close_mib(result.target, theirs_t, "target")
    _assert_close_mib(result.draft, theirs_d, "draft")
