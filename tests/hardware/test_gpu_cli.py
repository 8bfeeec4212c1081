"""`paircheck gpus` and `estimate --gpu` as a user runs them: the documented JSON names, the
text's labels, one line and exit 2 for a bad device, and a mixture of experts priced by the
experts a batch uses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import fit_shapes
import pytest

from paircheck.hardware.table import find_gpu, load_gpus
from paircheck.speed.roofline import FITTED

REPO = Path(__file__).resolve().parents[2]


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "80", "PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}  # no GPU tools
    return subprocess.run([sys.executable, "-m", "paircheck", *map(str, args)], capture_output=True, text=True,
                          timeout=120, env=env)


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("gpu-shapes")
    return {name: fit_shapes.write(name, folder) for name in ("qwen2.5-7b", "qwen2.5-0.5b", "qwen3-30b-a3b")}


def test_gpus_lists_the_table_and_one_row_with_its_source() -> None:
    out = run("gpus", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["schema_version"] == 1 and len(doc["gpus"]) == len(load_gpus())
    assert set(doc["gpus"][0]) == {"name", "bandwidth_gbs", "memory_gib", "source", "vendor", "kind", "aliases",
                                   "quote", "note"}
    one = run("gpus", "m4 max")
    row = find_gpu("m4 max", load_gpus())
    assert one.returncode == 0 and row.name in one.stdout and f"source: {row.source}" in " ".join(one.stdout.split())
    detected = json.loads(run("gpus", "--detect", "--json").stdout)["detected"]
    assert detected == {"command": "", "problems": [], "devices": []}  # no tool on this PATH
    assert "detected here: no GPU" in run("gpus", "--detect").stdout


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_estimate_on_a_gpu_gives_the_documented_names(models: dict[str, Path]) -> None:
    out = run("estimate", models["qwen2.5-7b"], models["qwen2.5-0.5b"], "--gpu", "RTX 3090", "--json")
    assert out.returncode == 0, out.stderr
    pred = json.loads(out.stdout)["predicted"]
    row = find_gpu("RTX 3090", load_gpus())
    assert pred["gpu"] == {"name": row.name, "bandwidth_gbs": row.bandwidth_gbs, "memory_gib": row.memory_gib,
                           "source": row.source}
    for key in ("target_tokens_per_s", "pair_tokens_per_s", "speedup", "draft_max", "acceptance",
                "acceptance_basis"):
        assert key in pred
    assert pred["acceptance_basis"] == "assumed" and pred["acceptance"] == 0.7 and len(pred["band"]) == 5
    assert pred["pair_tokens_per_s"] == pytest.approx(pred["target_tokens_per_s"] * pred["speedup"], rel=1e-2)
    given = json.loads(run("estimate", models["qwen2.5-7b"], models["qwen2.5-0.5b"], "--gpu", "3090",
                           "--per-token-acceptance", "0.9", "--draft-max", "5", "--json").stdout)["predicted"]
    assert (given["acceptance_basis"], given["draft_max"], given["band"]) == ("given", 5, [])
    # Twice the bandwidth: the target alone nearly twice as fast (the fixed cost per decode stays).
    slow = json.loads(run("estimate", models["qwen2.5-7b"], models["qwen2.5-0.5b"], "--bandwidth", "500",
                          "--json").stdout)["predicted"]
    fast = json.loads(run("estimate", models["qwen2.5-7b"], models["qwen2.5-0.5b"], "--bandwidth", "1000",
                          "--json").stdout)["predicted"]
    assert slow["hardware_basis"] == "given" and slow["gpu"]["source"] == "--bandwidth"
    # each decode's memory time halves, its fixed cost (FITTED.fixed_ms) stays
    slow_ms, fast_ms = 1000 / slow["target_tokens_per_s"], 1000 / fast["target_tokens_per_s"]
    assert fast_ms - FITTED.fixed_ms == pytest.approx((slow_ms - FITTED.fixed_ms) / 2, rel=0.02)
    assert 1.5 < slow_ms / fast_ms < 2.0


def test_estimate_text_says_what_is_predicted_and_what_assumed(models: dict[str, Path]) -> None:
    out = run("estimate", models["qwen2.5-7b"], models["qwen2.5-0.5b"], "--gpu", "4090",
              "--per-token-acceptance", "0.8")
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())
    assert text.startswith(("PREDICTED on GeForce RTX 4090: ", "RUN WITHOUT A DRAFT on GeForce RTX 4090: "))
    assert "per-token acceptance 0.80 GIVEN" in text and "device: GPU table: GeForce RTX 4090" in text
    assert "docs/estimate.md: the error per published point" in text
    for line in out.stdout.splitlines():
        assert len(line) <= 80 or line.strip().lstrip("(").startswith("https://"), line


@pytest.mark.parametrize(("args", "said"), [
    (["--gpu", "RTX 3095"], "--gpu: 'RTX 3095' is not in the GPU table; did you mean"),
    (["--bandwidth", "0"], "--bandwidth: must be > 0 GB/s"),
    (["--gpu", "3090", "--draft-max", "0"], "--draft-max: must be at least 1, got 0"),
])
def test_a_bad_device_is_one_line_and_exit_2(models: dict[str, Path], args: list[str], said: str) -> None:
    out = run("estimate", models["qwen2.5-7b"], models["qwen2.5-0.5b"], *args)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and said in out.stderr, out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_a_mixture_of_experts_pays_for_the_experts_a_batch_uses(models: dict[str, Path]) -> None:
    """Qwen3-30B-A3B (128 experts, 8 per token) reads about 3B parameters per token, but a
    verification batch reads the experts all its tokens use: each more drafted token costs it
    far more, relative to one decode, than it costs a dense target."""
    def costs(target: Path) -> dict[int, float]:
        pred = json.loads(run("estimate", target, models["qwen2.5-0.5b"], "--gpu", "3090",
                              "--per-token-acceptance", "0.8", "--json").stdout)["predicted"]
        return {p["draft_max"]: p["speedup"] for p in pred["by_draft_max"]}

    moe, dense = costs(models["qwen3-30b-a3b"]), costs(models["qwen2.5-7b"])
    from paircheck.pipeline import describe
    from paircheck.speed.on_gpu import shapes

    shape, _ = shapes(describe(str(models["qwen3-30b-a3b"])), describe(str(models["qwen2.5-0.5b"])), None, None)
    assert shape.experts == 128 and shape.experts_used == 8
    assert shape.experts_read(8) > 6 * shape.experts_read(1)  # 8 tokens read ~6x the experts of one
    # Longer drafts lose more on the MoE target than on the dense one.
    assert moe[16] / moe[2] < dense[16] / dense[2]


def test_gpus_names_its_own_argument_not_an_option_it_does_not_have() -> None:
    # Issue 50: `paircheck gpus "RTX 9999"` said `--gpu: ...` and offered --bandwidth and
    # --vram, none of which `gpus` takes.
    out = run("gpus", "RTX 9999")
    assert out.returncode == 2 and out.stdout == "", out.stdout
    assert out.stderr == ("paircheck: error: NAME: 'RTX 9999' is not in the GPU table (`paircheck gpus` lists "
                          "it)\n"), out.stderr
    close = run("gpus", "RTX 409")
    assert close.stderr.startswith("paircheck: error: NAME: 'RTX 409' is not in the GPU table; did you mean "), close
    assert "--gpu" not in close.stderr and "--bandwidth" not in close.stderr
