"""paircheck's memory model against llama.cpp's own projection.

Ground truth: ``llama-fit-params --fit-print on`` built from the pinned llama.cpp
(tests/llamacpp_build.py). It loads the model with ``no_alloc`` (no weight is read, no
buffer allocated) and prints llama.cpp's memory breakdown (``llama_get_memory_breakdown``:
model, context, compute) per device and for the host, in MiB rounded down. On this CPU-only
build everything is on the host, so the test compares paircheck's totals (``-ngl 0``).
Weight repacking is disabled (``--no-repack``): repacked CPU weights live in a buffer type
that is neither a device nor the host, so the breakdown would leave them out.

The GGUFs have the exact tensor infos of real models and no data (tests/fit_shapes.py).
Bounds (issue 11): weights within 2 %, context (KV + recurrent state) within 5 %, compute
within the stated bound of paircheck.fit.compute (10 % or 32 MiB).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import fit_shapes
import llamacpp_build
import pytest

from paircheck.api import describe
from paircheck.fit import FitOptions, model_memory, with_tensor_infos
from paircheck.fit.compute import COMPUTE_BOUND_ABS, COMPUTE_BOUND_REL

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
    flags = dict(zip(extra[::2], extra[1::2]))
    return FitOptions(
        ctx=ctx,
        ngl=0,
        cache_type_k=cache,
        cache_type_v=cache,
        parallel=int(flags.get("-np", "1")),  # llama-fit-params' default is one sequence
        ubatch=int(flags.get("-ub", "512")),
        batch=int(flags.get("-b", "2048")),
        flash_attn=flags.get("-fa", "auto") != "off",
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
def test_memory_matches_llamacpp(fit_params: Path, shape_dir: Path, shape: str, ctx: int, cache: str, extra: tuple[str, ...]) -> None:
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
