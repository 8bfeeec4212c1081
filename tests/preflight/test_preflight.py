"""Pre-flight: llama-server command lines parsed as arg.cpp does, vllm serve, Modelfiles,
and `paircheck run` really exec'ing a program (a stand-in for llama-server)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_methods import write_model

from paircheck.pipeline import describe
from paircheck.preflight.lint import lint_llama
from paircheck.preflight.llama_command import parse
from paircheck.preflight.ollama import lint_modelfile
from paircheck.preflight.vllm import detect_method, lint_vllm

REPO = Path(__file__).resolve().parents[2]


def codes(result) -> set[str]:  # type: ignore[no-untyped-def]
    return {f.code for f in result.findings}


def test_every_alias_of_model_and_draft() -> None:
    for m in ("-m", "--model"):
        for md in ("-md", "--model-draft", "--spec-draft-model"):
            cmd = parse(["llama-server", m, "t.gguf", md, "d.gguf"], env={})
            assert (cmd.model, cmd.draft) == ("t.gguf", "d.gguf")
    for hfd in ("-hfd", "-hfrd", "--hf-repo-draft", "--spec-draft-hf"):
        assert parse(["llama-server", "-hf", "a/b", hfd, "c/d"], env={}).draft_hf == "c/d"
    assert parse(["llama-server", "--spec_type", "draft-simple"], env={}).spec_types == ["none", "draft-simple"]


def test_env_vars_and_cli_precedence() -> None:
    env = {"LLAMA_ARG_MODEL": "env.gguf", "LLAMA_ARG_SPEC_DRAFT_MODEL": "d.gguf", "LLAMA_ARG_SPEC_TYPE": "draft-simple"}
    cmd = parse(["llama-server"], env=env)
    assert (cmd.model, cmd.draft, cmd.requested_types) == ("env.gguf", "d.gguf", ["draft-simple"])
    over = parse(["llama-server", "-m", "cli.gguf"], env=env)
    assert over.model == "cli.gguf" and ("LLAMA_ARG_MODEL", "-m") in over.env_overridden
    removed = parse(["llama-server"], env={"LLAMA_ARG_DRAFT_MAX": "8"})
    assert removed.errors[0].message.startswith('error while handling environment variable "LLAMA_ARG_DRAFT_MAX"')


def test_removed_invalid_and_equals_forms() -> None:
    cmd = parse(["llama-server", "-m", "t.gguf", "--draft-min", "2", "--spec-replace", "a", "b", "--port=8080", "-cd",
                 "4096"], env={})
    messages = [e.message for e in cmd.errors]
    assert ('error while handling argument "--draft-min": the argument has been removed. use --spec-draft-n-min '
            "or --spec-ngram-mod-n-min") in messages
    assert "error: invalid argument: --spec-replace" in messages
    assert "error: invalid argument: --port=8080" in messages  # this version does not split on '='
    assert cmd.get("--port") == "8080"  # but the intent is kept for the rest of the check
    assert "error: invalid argument: -cd" in messages and len(cmd.errors) == 5  # 'b' is a stray positional


def test_spec_type_values() -> None:
    assert parse(["llama-server", "--spec-type", "ngram-mod,draft-simple"], env={}).spec_types == [
        "none", "ngram-mod", "draft-simple"]
    assert parse(["llama-server", "--spec-type", "none"], env={}).spec_types == ["none", "none"]
    bad = parse(["llama-server", "--spec-type", "draft-mtp-adaptive"], env={})
    assert "unknown speculative type: draft-mtp-adaptive" in bad.errors[0].message
    assert "invalid value" in parse(["llama-server", "--spec-draft-n-max", "-1"], env={}).errors[0].message
    assert parse(["llama-server", "--spec-draft-n-max", "4x"], env={}).get("--spec-draft-n-max") == "4"  # stoi
    assert parse(["llama-server", "--spec-default"], env={}).requested_types == ["ngram-mod"]


def test_draft_without_spec_type_is_an_error(real_vocab) -> None:  # type: ignore[no-untyped-def]
    t = str(real_vocab("qwen2"))
    result = lint_llama(parse(["llama-server", "-m", t, "-md", t], env={}), describe)
    assert "PF010" in codes(result) and not result.ok
    fixed = lint_llama(parse(["llama-server", "-m", t, "-md", t, "--spec-type", "draft-simple"], env={}), describe)
    assert fixed.ok and fixed.reports[0].compatible


def test_type_needs_draft_and_incompatible_pair(real_vocab) -> None:  # type: ignore[no-untyped-def]
    t, d = str(real_vocab("llama-spm")), str(real_vocab("qwen2"))
    assert "PF011" in codes(lint_llama(parse(["llama-server", "-m", t, "--spec-type", "draft-simple"], env={}), None))
    bad = lint_llama(parse(["llama-server", "-m", t, "-md", d, "--spec-type", "ngram-mod,draft-simple"], env={}),
                     describe)
    assert not bad.ok and not bad.reports[0].compatible and "PF015" in codes(bad)


def test_mtp_draft_is_detected_without_spec_type(tmp_path: Path, real_vocab) -> None:  # type: ignore[no-untyped-def]
    head = write_model(tmp_path / "df.gguf", "dflash", {"dflash.target_layers": [1, 2],
                                                       "dflash.attention.layer_norm_rms_epsilon": 1e-6})
    result = lint_llama(parse(["llama-server", "-m", str(real_vocab("qwen2")), "-md", str(head)], env={}), describe)
    assert "PF013" in codes(result) and "PF010" not in codes(result)
    no_blocks = write_model(tmp_path / "x.gguf", "llama", {})
    aborts = lint_llama(parse(["llama-server", "-m", str(real_vocab("qwen2")), "-md", str(no_blocks)], env={}),
                        describe)
    assert "PF012" in codes(aborts)


def test_vllm_speculative_config(tmp_path: Path) -> None:
    ok = lint_vllm(["vllm", "serve", "Qwen/Qwen2.5-14B", "--speculative-config",
                    '{"method": "draft_model", "model": "Qwen/Qwen2.5-0.5B", "num_speculative_tokens": 4}'], None)
    assert ok.ok, ok.findings
    bad = lint_vllm(["vllm", "serve", "T", "--speculative-config={\"model\": \"org/my-head\", \"num_spec\": 4, "
                     "\"tensor_parallel_size\": 2}"], None)
    assert {"VS004", "VS005", "VS008"} <= codes(bad) and not bad.ok
    assert detect_method("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B") == "eagle3"
    assert detect_method("RedHatAI/Llama-3.1-8B-Instruct-speculator.eagle3") == "eagle3"
    assert detect_method("Qwen/Qwen2.5-0.5B") == "draft_model"


def test_modelfile(tmp_path: Path) -> None:
    kv = {"gemma4-assistant.block_count": 4, "gemma4-assistant.embedding_length": 256,
          "gemma4-assistant.embedding_length_out": 2560}
    write_model(tmp_path / "mtp.gguf", "gemma4-assistant", kv)
    write_model(tmp_path / "base.gguf", "gemma4", {"gemma4.block_count": 30, "gemma4.embedding_length": 2560})
    good = lint_modelfile("FROM ./base.gguf\nDRAFT ./mtp.gguf\nPARAMETER draft_num_predict 3\n", str(tmp_path),
                          describe)
    assert good.ok and good.reports and good.reports[0].compatible
    blog = lint_modelfile("FROM ./base.gguf\nPARAMETER draft_model ./small.gguf\nDRAFT ./missing.gguf\n"
                          "SPECULATE on\n", str(tmp_path), describe)
    assert {"OM001", "OM003", "OM005"} <= codes(blog) and not blog.ok


def _stand_in(tmp_path: Path) -> Path:
    """A fake llama-server: prints its argv as JSON and exits with $STAND_IN_EXIT."""
    exe = tmp_path / "bin" / "llama-server"
    exe.parent.mkdir()
    exe.write_text(f"#!{sys.executable}\nimport json, os, sys\nprint(json.dumps({{'argv': sys.argv[1:], "
                   "'pid': os.getpid()}))\nsys.exit(int(os.environ.get('STAND_IN_EXIT', '0')))\n")
    exe.chmod(0o755)
    return exe


def _paircheck(args: list[str], tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
               "PYTHONPATH": str(REPO), **env}
    return subprocess.run([sys.executable, "-m", "paircheck", *args], capture_output=True, text=True, env=environ,
                          timeout=120)


@pytest.mark.skipif(os.name != "posix", reason="exec semantics")
def test_run_execs_and_passes_exit_code(  # type: ignore[no-untyped-def]
        tmp_path: Path, real_vocab) -> None:
    _stand_in(tmp_path)
    t = str(real_vocab("qwen2"))
    line = ["llama-server", "-m", t, "-md", t, "--spec-type", "draft-simple", "--spec-draft-n-max", "4",
            "--port", "8080"]
    done = _paircheck(["run", "-q", "--", *line], tmp_path, STAND_IN_EXIT="7")
    assert done.returncode == 7, done.stderr
    payload = json.loads(done.stdout.strip().splitlines()[-1])
    assert payload["argv"] == line[1:]  # unchanged


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_run_refuses_and_force(tmp_path: Path, real_vocab) -> None:  # type: ignore[no-untyped-def]
    _stand_in(tmp_path)
    t, d = str(real_vocab("llama-spm")), str(real_vocab("qwen2"))
    line = ["llama-server", "-m", t, "-md", d, "--spec-type", "draft-simple"]
    refused = _paircheck(["run", "--", *line], tmp_path)
    assert refused.returncode == 1 and "argv" not in refused.stdout and "NOT OK" in refused.stdout
    forced = _paircheck(["run", "--force", "--json", "--", *line], tmp_path, STAND_IN_EXIT="0")
    assert forced.returncode == 0 and '"argv"' in forced.stdout
    dry = _paircheck(["run", "--dry-run", "--", "llama-server", "-m", t, "-md", t, "--spec-type", "draft-simple"],
                     tmp_path)
    assert dry.returncode == 0 and "argv" not in dry.stdout
    missing = _paircheck(["run", "--", "no-such-program-xyz", "-m", "x"], tmp_path)
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1


def test_lint_cmd_readme_line(tmp_path: Path) -> None:
    done = _paircheck(["lint-cmd", "--no-check", "llama-server -m t.gguf --model-draft d.gguf --draft-max 16"],
                      tmp_path)
    assert done.returncode == 1
    assert "--spec-draft-n-max" in done.stdout and "PF010" in done.stdout
