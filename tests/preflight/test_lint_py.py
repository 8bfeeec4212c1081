"""lint-py: Python files read with ast, never run (vLLM's Python API, transformers' generate,
launch command strings), and the pair checked where the names are literal and readable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hf_build import build_qwen2_folder
from test_preflight_guides import paircheck

from paircheck.pipeline import check_descriptions, describe
from paircheck.preflight.launchers import lint_argv
from paircheck.preflight.python_lint import lint_python


def lint(source: str, check: bool = False):  # type: ignore[no-untyped-def]
    return lint_python(source, "x.py", describe if check else None,
                       lambda argv: lint_argv(argv, env={}, make_describe=(lambda _o: describe) if check else None))


def codes(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [f.code for f in result.findings]


def test_file_is_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    source = f"open({str(marker)!r}, 'w')\nfrom vllm import LLM\nLLM('t', draft_model='d')\n"
    result = lint(source)
    assert not marker.exists() and codes(result) == ["VS020", "VS009"]


@pytest.mark.parametrize("call", ["LLM", "EngineArgs", "AsyncEngineArgs"])
def test_engine_keywords(call: str) -> None:
    result = lint(f"from vllm import {call}\nx = {call}(model='T', speculative_model='D', num_speculative_tokens=5,"
                  " gpu_memory_utilization=0.8, enable_fancy_thing=True)\n")
    errors = [f for f in result.findings if f.code == "VS020"]
    assert [f.details["keyword"] for f in errors] == ["speculative_model", "num_speculative_tokens"]
    assert errors[0].fix == (f'write {call}("T", ..., speculative_config={{"method": "draft_model", "model": "D", '
                             '"num_speculative_tokens": 5}) (the pair itself was not checked: --no-check)')
    assert [f.details["keyword"] for f in result.findings if f.code == "VS022"] == ["enable_fancy_thing"]
    assert not result.ok


def test_speculative_config_literal_gets_the_cli_checks() -> None:
    good = lint("from vllm import LLM\nLLM('T', speculative_config={'method': 'draft_model', 'model': 'D', "
                "'num_speculative_tokens': 4})\n")
    assert good.findings == [] and good.ok
    bad = lint("from vllm import LLM\nLLM('T', speculative_config={'model': 'org/x-eagle3', 'num_spec': 4, "
               "'tensor_parallel_size': 2})\n")
    assert {"VS004", "VS005", "VS008"} <= set(codes(bad)) and not bad.ok
    dynamic = lint("from vllm import LLM\ncfg = make()\nLLM('T', speculative_config=cfg)\n")
    assert codes(dynamic) == ["VS023"] and dynamic.status() == "not-checked"
    none = lint("from vllm import LLM\nLLM('T')\n")
    assert codes(none) == ["VS002"] and none.status() == "not-checked"


def test_llm_generate_keywords_only_on_an_llm() -> None:
    result = lint("from vllm import LLM\nllm = LLM('T', speculative_config={'method': 'ngram', "
                  "'num_speculative_tokens': 4, 'prompt_lookup_max': 4})\n"
                  "llm.generate(['p'], use_tqdm=False, num_speculative_tokens=4)\n"
                  "other.generate(['p'], num_speculative_tokens=4)\n")
    assert codes(result) == ["VS021"] and result.findings[0].details["line"] == 3


def test_not_vllm_when_vllm_is_not_imported() -> None:
    result = lint("from mylib import LLM\nLLM('T', draft_model='D')\n")
    assert codes(result) == ["PY001"] and result.status() == "not-checked"


def test_transformers_keywords() -> None:
    result = lint("from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained('T')\n"
                  "d = AutoModelForCausalLM.from_pretrained('D')\n"
                  "m.generate(**inputs, draft_model=d, num_speculative_tokens=5, max_new_tokens=20)\n")
    assert [(f.code, f.details["real"]) for f in result.findings] == [
        ("PY010", "assistant_model"), ("PY010", "num_assistant_tokens")]
    assert "The following `model_kwargs` are not used by the model: ['draft_model']" in result.findings[0].message


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_transformers_pair_is_checked(tmp_path: Path, real_vocab) -> None:  # type: ignore[no-untyped-def]
    qwen = real_vocab("qwen2")
    target = build_qwen2_folder(qwen, tmp_path / "target", 152064, name="Qwen2.5-7B-Instruct")
    draft = build_qwen2_folder(qwen, tmp_path / "draft", 151936)
    source = ("from transformers import AutoModelForCausalLM\n"
              f"model = AutoModelForCausalLM.from_pretrained({str(target)!r})\n"
              f"assistant = AutoModelForCausalLM.from_pretrained({str(draft)!r})\n"
              "out = model.generate(**inputs, assistant_model=assistant)\n")
    result = lint(source, check=True)
    assert len(result.reports) == 1
    expected = check_descriptions(describe(str(target)), describe(str(draft)), "transformers")
    assert result.reports[0].compatible == expected.compatible
    assert [c.code for c in result.reports[0].checks] == [c.code for c in expected.checks]
    unresolved = lint(source.replace(f"from_pretrained({str(draft)!r})", "from_pretrained(name)"), check=True)
    assert codes(unresolved) == ["PY011"] and unresolved.status() == "not-checked"


def test_vllm_pair_is_checked_from_literal_paths(real_vocab) -> None:  # type: ignore[no-untyped-def]
    t, d = str(real_vocab("llama-spm")), str(real_vocab("qwen2"))
    source = (f"from vllm import LLM\nllm = LLM(model={t!r}, speculative_config={{'method': 'draft_model', "
              f"'model': {d!r}, 'num_speculative_tokens': 4}})\n")
    result = lint(source, check=True)
    assert len(result.reports) == 1 and result.reports[0].engine == "vllm"
    assert not result.reports[0].compatible and result.status() == "not-ok"
    same = lint(source.replace(d, t), check=True)
    assert same.reports[0].compatible and same.ok


def test_command_strings_are_linted() -> None:
    result = lint("import subprocess\n"
                  "subprocess.run(['vllm', 'serve', 'T', '--speculative-config', '{\"model\": \"D\"}'])\n"
                  "CMD = './llama-server -m t.gguf --model-draft d.gguf --draft-max 16'\n"
                  "print('llama-server is great')\n")
    assert {"VS008", "VS009", "PF010", "PF002"} <= set(codes(result))
    lines = {f.code: f.details["line"] for f in result.findings}
    assert lines["VS008"] == 2 and lines["PF002"] == 3


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_cli_exit_codes(tmp_path: Path) -> None:
    (tmp_path / "nothing.py").write_text("print('hello')\n")
    nothing = paircheck(["lint-py", "nothing.py"], tmp_path)
    assert nothing.returncode == 3 and nothing.stdout.startswith("NOT CHECKED: python")
    (tmp_path / "broken.py").write_text("def f(:\n")
    broken = paircheck(["lint-py", "broken.py"], tmp_path)
    assert broken.returncode == 2 and broken.stderr.startswith("paircheck: error: broken.py: not valid Python (line 1)")
    assert broken.stderr.count("\n") == 1
    missing = paircheck(["lint-py", "nope.py"], tmp_path)
    assert missing.returncode == 2 and "no such file" in missing.stderr
    (tmp_path / "bad.py").write_text("from vllm import LLM\nLLM('T', draft_model='D')\n")
    via_lint_cmd = paircheck(["lint-cmd", "--json", "--no-check", "bad.py"], tmp_path)
    data = json.loads(via_lint_cmd.stdout)
    assert via_lint_cmd.returncode == 1 and data["findings"][0]["code"] == "VS020"
