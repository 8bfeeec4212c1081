"""A suggestion passes paircheck's own check for the engine and method it is offered for, or
says why it is listed anyway (issue 26, point 3)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from paircheck._registry.consult import consult
from paircheck._registry.load import default_registry
from paircheck.fingerprint import fingerprints
from paircheck.pipeline import check_pair, describe

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "fixtures" / "examples"
SPM = EXAMPLES / "ggml-vocab-llama-spm.gguf"
PHI3 = EXAMPLES / "ggml-vocab-phi-3.gguf"


def run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "80"}
    return subprocess.run([sys.executable, "-m", "paircheck", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=120)


def words(text: str) -> str:
    return " ".join(text.split())


def test_a_draft_simple_check_never_offers_a_head_as_its_draft() -> None:
    # llama-spm's vocabulary is documented only with an EAGLE head for SGLang.
    (rg3,) = [f for f in check_pair(str(SPM), str(PHI3)).registry if f.code == "RG003"]
    assert rg3.details["target_entries"] == [] and rg3.details["other_methods"]
    assert "no draft-simple draft is documented" in rg3.message
    assert "which draft-simple cannot use: sglang-EAGLE-llama2-chat-7B (eagle; sglang)" in rg3.message
    # Consulted for that head's own method, the same entry is what is offered.
    t, d = describe(str(SPM)), describe(str(PHI3))
    fps = {"target": fingerprints(t.vocab), "draft": fingerprints(d.vocab)}
    (rg3,) = [f for f in consult(default_registry(), t, d, fps, "eagle") if f.code == "RG003"]
    assert rg3.details["target_entries"] and not rg3.details["other_methods"]
    assert "eagle draft(s) are documented" in rg3.message and "cannot use" not in rg3.message


def test_the_family_example_uses_the_method_checked(gguf_factory) -> None:  # type: ignore[no-untyped-def]
    t = gguf_factory("t.gguf", extra_kv={"general.name": "Qwen3 32B"})  # its family only is documented
    d = gguf_factory("d.gguf", extra_kv={"general.name": "Tiny Other"})
    (f,) = check_pair(str(t), str(d), method="draft-eagle3").registry
    example = f.message.split("e.g. ", 1)[1]
    assert "(eagle3)" in example, f.message
    (f,) = check_pair(str(t), str(d)).registry
    assert "(draft-model)" in f.message.split("e.g. ", 1)[1], f.message


def _guide(folder: Path) -> Path:
    shutil.copyfile(SPM, folder / "t.gguf")
    shutil.copyfile(PHI3, folder / "d.gguf")  # 64 more embedding rows: vLLM refuses the pair (VL002)
    (folder / "guide.py").write_text('from vllm import LLM\n\nllm = LLM(model="t.gguf", draft_model="d.gguf")\n')
    return folder / "guide.py"


def test_lint_py_does_not_offer_a_config_vllm_refuses_without_saying_so(tmp_path: Path) -> None:
    _guide(tmp_path)
    data = json.loads(run("lint-py", "--json", "guide.py", cwd=tmp_path).stdout)
    assert data["pairs"][0]["verdict"] == "refused" and data["pairs"][0]["engine"] == "vllm"
    (vs020,) = [f for f in data["findings"] if f["code"] == "VS020"]
    assert "speculative_config=" in vs020["fix"]
    assert "but vLLM refuses this pair (VL002" in vs020["fix"] and "--engine vllm" in vs020["fix"]
    # Not read (--no-check): it says the pair behind the rewrite was not checked.
    data = json.loads(run("lint-py", "--json", "--no-check", "guide.py", cwd=tmp_path).stdout)
    (vs020,) = [f for f in data["findings"] if f["code"] == "VS020"]
    assert vs020["fix"].endswith("(the pair itself was not checked: --no-check)")


def test_vllm_serve_rewrite_says_the_same(tmp_path: Path) -> None:
    _guide(tmp_path)
    done = run("lint-cmd", "vllm serve t.gguf --speculative-model d.gguf --num-speculative-tokens 4", cwd=tmp_path)
    out = words(done.stdout)
    assert "replace the old flags by --speculative-config" in out and "but vLLM refuses this pair (VL002" in out
    assert "Corrected command (flags only: the pair check above still fails it):" in done.stdout
