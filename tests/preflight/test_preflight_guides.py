"""Issue 15: what guides tell people to run, pasted as they are, gets a clear error naming the
real program, option or keyword; every option the pinned llama.cpp accepts still lints clean
(over the generated table, and against the real llama-server built from the pinned source)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shlex
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import llamacpp_build
import pytest

from paircheck.preflight import gen_llama_args
from paircheck.preflight.launchers import LEGACY, lint_argv
from paircheck.preflight.llama_args import OPTIONS
from paircheck.preflight.llama_command import PROGRAM_EXAMPLES, nearest_options, options_for, parse

REPO = Path(__file__).resolve().parents[2]
GUIDE_MAIN = ('./main -m qwen3.5-32b-Q4_K_M.gguf --draft-model qwen3.5-0.5b-Q4_K_M.gguf '
              '--draft-min-accept-tokens 4 -p "..."')
GUIDE_PY = '''from vllm import LLM, SamplingParams

llm = LLM(model="Qwen/Qwen3.5-32B", draft_model="Qwen/Qwen3.5-0.5B")
outputs = llm.generate(["Tell me a story"], SamplingParams(max_tokens=64), speculative_num_tokens=4)
'''
GUIDE_MODELFILE = "FROM ./qwen3.5-32b-Q4_K_M.gguf\nPARAMETER draft_model ./qwen3.5-0.5b-Q4_K_M.gguf\n"


def paircheck(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "100", **env}
    return subprocess.run([sys.executable, "-m", "paircheck", *args], capture_output=True, text=True, env=environ,
                          cwd=cwd, timeout=120, check=False)


@pytest.fixture()
def guide_dir(tmp_path: Path, real_vocab) -> Path:  # type: ignore[no-untyped-def]
    """The guide's file names, holding real GGUFs (llama.cpp's qwen2 vocab, same on both sides)."""
    for name in ("qwen3.5-32b-Q4_K_M.gguf", "qwen3.5-0.5b-Q4_K_M.gguf"):
        shutil.copyfile(real_vocab("qwen2"), tmp_path / name)  # copies: Ollama refuses DRAFT == FROM
    return tmp_path


def test_guide_main_line_names_llama_cli_and_the_real_options(guide_dir: Path) -> None:
    done = paircheck(["lint-cmd", GUIDE_MAIN], guide_dir)
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    assert out.startswith("NOT OK: llama-cli:")
    assert "PF040 legacy_binary: 'main' is llama.cpp's old name for llama-cli" in out
    assert "fix: use llama-cli" in out
    assert "invalid argument: --draft-min-accept-tokens" in out and "did you mean --spec-draft-n-min?" in out
    assert "invalid argument: --draft-model" in out and "--spec-draft-model" in out
    # The draft the guide meant is still seen: without --spec-type it would never be used.
    assert "PF010" in out
    # The rest of the line was checked as llama-cli: -m and -p are real llama-cli options.
    assert "invalid argument: -p" not in out and "invalid argument: -m" not in out
    # The corrected command pastes as one shell command (backslash continuations) and lints OK.
    block = out.split("Corrected command (the pair check above passes):\n", 1)[1].split("\n  guessed:", 1)[0]
    pasted = shlex.split(block.replace("\\\n", " "))
    # The invented option's replacement is paircheck's guess: said under the line, never silently.
    assert "guessed: --draft-min-accept-tokens -> --spec-draft-n-min" in out
    assert "guessed: --draft-model" not in out  # its replacement is llama.cpp's own, not a guess
    assert pasted == ["./llama-cli", "-m", "qwen3.5-32b-Q4_K_M.gguf", "--spec-draft-model", "qwen3.5-0.5b-Q4_K_M.gguf",
                      "--spec-draft-n-min", "4", "-p", "...", "--spec-type", "draft-simple"]
    again = paircheck(["lint-cmd", "--json", shlex.join(pasted)], guide_dir)
    assert again.returncode == 0, again.stdout
    assert json.loads(again.stdout)["corrected_command"] is None


def test_guide_python_names_speculative_config(guide_dir: Path) -> None:
    (guide_dir / "guide.py").write_text(GUIDE_PY)
    # --no-check: the guide's Hub ids are not downloaded in tests; the keywords are the point.
    done = paircheck(["lint-py", "--no-check", "guide.py"], guide_dir)
    assert done.returncode == 1, done.stdout + done.stderr
    out = " ".join(done.stdout.split())  # unwrap
    assert "VS020 engine_kwarg: line 3: LLM(...) has no keyword draft_model=" in out
    assert ("speculative_config={\"method\": \"draft_model\", \"model\": \"Qwen/Qwen3.5-0.5B\", "
            "\"num_speculative_tokens\": 4}") in out
    assert "VS021 generate_kwarg: line 4: LLM.generate(...) has no keyword speculative_num_tokens=" in out


def test_guide_modelfile_names_draft_line(guide_dir: Path) -> None:
    (guide_dir / "Modelfile").write_text(GUIDE_MODELFILE)
    done = paircheck(["lint-modelfile", "Modelfile"], guide_dir)
    assert done.returncode == 1
    assert "OM003 unknown_parameter: (line 2): unknown parameter 'draft_model'" in done.stdout
    assert "use a DRAFT line" in done.stdout


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_corrected_commands_pass(guide_dir: Path) -> None:
    """The corrected commands of the README's "From a guide" section lint OK (exit 0)."""
    line = ('llama-cli -m qwen3.5-32b-Q4_K_M.gguf -md qwen3.5-0.5b-Q4_K_M.gguf --spec-type draft-simple '
            '--spec-draft-n-min 4 -p "..."')
    done = paircheck(["lint-cmd", line], guide_dir)
    assert done.returncode == 0, done.stdout
    assert done.stdout.startswith("OK: llama-cli: 1 pair checked")
    (guide_dir / "Modelfile").write_text("FROM ./qwen3.5-32b-Q4_K_M.gguf\nDRAFT ./qwen3.5-0.5b-Q4_K_M.gguf\n"
                                         "PARAMETER draft_num_predict 4\n")
    # Spelled right, the Modelfile is read; Ollama then refuses a plain draft model (it runs DRAFT
    # as an MTP/DFlash drafter), and says what to use instead.
    ollama = paircheck(["lint-modelfile", "Modelfile"], guide_dir)
    assert ollama.returncode == 1 and "OM003" not in ollama.stdout
    assert "OL001" in ollama.stdout and "Use llama-server" in ollama.stdout
    fixed = GUIDE_PY.replace('draft_model="Qwen/Qwen3.5-0.5B"', 'speculative_config={"method": "draft_model", '
                             '"model": "Qwen/Qwen3.5-0.5B", "num_speculative_tokens": 4}')
    (guide_dir / "fixed.py").write_text(fixed.replace(", speculative_num_tokens=4", ""))
    assert paircheck(["lint-py", "--no-check", "fixed.py"], guide_dir).returncode == 0


@pytest.mark.parametrize("old", sorted(LEGACY))
def test_every_legacy_name_names_its_successor(old: str) -> None:
    result = lint_argv([f"./{old}", "-m", "t.gguf"], env={})
    legacy = [f for f in result.findings if f.code == "PF040"]
    assert legacy and legacy[0].details["replacement"] == LEGACY[old] and legacy[0].status == "fail"
    assert not result.ok


def test_vllm_module_launch_and_wrappers_are_recognised() -> None:
    module = lint_argv(["python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "T",
                        "--speculative-config", '{"method": "draft_model", "model": "D", "num_speculative_tokens": 4}'],
                       env={})
    assert module.launcher == "vllm serve" and module.findings == [] and module.ok
    wrapped = lint_argv(["env", "LLAMA_ARG_SPEC_TYPE=draft-simple", "nohup", "llama-server", "-m", "t", "-md", "d"],
                        env={})
    assert wrapped.launcher == "llama-server" and wrapped.findings == []  # the env var gives the type


def test_legacy_line_is_linted_as_the_new_program() -> None:
    server = lint_argv(["server", "-m", "t.gguf", "-md", "d.gguf", "--draft", "8"], env={})
    assert server.launcher == "llama-server"
    assert {"PF040", "PF002", "PF010"} <= {f.code for f in server.findings}
    speculative = lint_argv(["speculative", "-m", "t.gguf", "-md", "d.gguf", "--spec-type", "draft-simple"], env={})
    assert speculative.launcher == "llama-speculative" and [f.code for f in speculative.findings] == ["PF040"]
    simple = lint_argv(["simple", "-m", "t.gguf", "-md", "d.gguf"], env={})
    assert [f.code for f in simple.findings] == ["PF040", "PF042"]  # llama-simple parses its own argv
    gone = lint_argv(["infill", "-m", "t.gguf"], env={})
    assert [f.code for f in gone.findings] == ["PF040", "PF041"]


def _value_args(name: str, kind: str) -> list[str]:
    if name == "--spec-type":
        return ["draft-simple"]
    return {"void": [], "bool": [], "int": ["1"], "str": ["x"], "str2": ["a", "b"]}[kind]


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_every_option_of_the_generated_table_lints_clean() -> None:
    """Each name (and negative name) of each program's table: no parse error, no suggestion."""
    checked = 0
    for program, example in PROGRAM_EXAMPLES.items():
        table = options_for(example)
        for name, (opt, positive) in table.items():
            if opt.removed:
                continue
            argv = [program, name, *(_value_args(name, opt.kind) if positive else [])]
            cmd = parse(argv, env={})
            assert cmd.errors == [], (argv, cmd.errors)
            checked += 1
    assert checked > 3000  # every program x every name, not a subset


def test_suggestions_are_real_current_options() -> None:
    table = options_for("SERVER")
    for query in ("--draft-min-accept-tokens", "--n-draft", "--speculative-model", "--num-speculative-tokens",
                  "--gpu-layer", "--draft-tokens"):
        near = nearest_options(query, table)
        assert near, query
        for name in near:
            opt, _ = table[name]
            assert opt.removed is None, (query, name)
    assert nearest_options("--draft-min-accept-tokens", table)[0] == "--spec-draft-n-min"
    assert nearest_options("--speculative-model", table)[0] == "--spec-draft-model"
    assert nearest_options("--zzzz", table) == ()


def test_corrected_line_is_only_given_when_every_error_has_a_fix() -> None:
    fixable = parse(["llama-server", "-m", "t", "--draft-max", "8", "--port=8080", "-cd", "4096", "--draft_min", "2",
                     "--n-draft", "6"], env={})
    assert fixable.corrected == ["llama-server", "-m", "t", "--spec-draft-n-max", "8", "--port", "8080",
                                 "--spec-draft-n-min", "2", "--spec-draft-n-max", "6"]
    for line in (["llama-server", "-m", "t", "--zzz", "3"], ["llama-server", "t.gguf"],
                 ["llama-server", "-m", "t", "--spec-type", "draft-nope"], ["llama-server", "-m"]):
        assert parse(line, env={}).corrected is None, line
    assert parse(["llama-server", "-m", "t"], env={}).corrected is None  # nothing to correct


def test_removed_flags_keep_llama_cpp_hints() -> None:
    removed = [(args, hint) for args, _n, _k, ex, _x, _e, hint, _p in OPTIONS if hint and "SERVER" in ex]
    assert removed
    for args, hint in removed:
        cmd = parse(["llama-server", args[0], "1"], env={})
        assert cmd.errors[0].message == f'error while handling argument "{args[0]}": the argument has been ' \
                                        f"removed. {hint}"


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_option_table_is_generated_from_the_pinned_arg_cpp(tmp_path: Path) -> None:
    """llama_args.py is exactly what gen_llama_args makes of the pinned sdist's common/arg.cpp."""
    sdist = llamacpp_build._sdist_path(tmp_path)
    with tarfile.open(sdist, mode="r:*") as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith("vendor/llama.cpp/common/arg.cpp"))
        data = tar.extractfile(member)
        assert data is not None
        (tmp_path / "common").mkdir()
        (tmp_path / "common" / "arg.cpp").write_bytes(data.read())
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        gen_llama_args.main(str(tmp_path))
    assert buffer.getvalue() == (REPO / "paircheck" / "preflight" / "llama_args.py").read_text()


# Options whose handler acts while parsing (prints and exits, or reads/loads something).
_ACTS = {"-h", "--help", "--usage", "--version", "--completion-bash", "--list-devices", "-cl", "--cache-list",
         "--license", "--rpc"}


@pytest.mark.slow  # runs the pinned llama-server
def test_real_llama_server_agrees_on_which_options_exist(tmp_path: Path) -> None:
    """Differential: for every name in llama-server's table and for the guides' inventions, the
    real llama-server (built from the pinned source) says "invalid argument" exactly when
    paircheck does."""
    server = llamacpp_build.ensure_tools()["llama-server"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLAMA_ARG_")}
    table = options_for("SERVER")
    names = [n for n, (opt, _) in table.items() if n not in _ACTS and not opt.removed]
    invented = ["--draft-min-accept-tokens", "--draft-model", "-cd", "--ctx-size-draft", "--spec-replace",
                "--speculative-model", "--n-draft", "--port=8080", "-p"]
    disagree = []
    for name in names + invented:
        opt_kind = table[name][0].kind if name in table else "str"
        positive = table[name][1] if name in table else True
        argv = [name, *(_value_args(name, opt_kind) if positive else []), "--version"]
        real = subprocess.run([str(server), *argv], capture_output=True, text=True, cwd=tmp_path, env=env,
                              timeout=30, check=False)
        real_invalid = f"error: invalid argument: {name}" in real.stderr + real.stdout
        ours = parse(["llama-server", *argv], env={})
        ours_invalid = any(e.kind == "invalid" for e in ours.errors)
        if real_invalid != ours_invalid:
            disagree.append((name, real.stderr[-200:]))
    assert disagree == []
    assert len(names) > 250
    # Removed options: paircheck's message is llama.cpp's own text, hint included.
    removed = [n for n, (opt, _) in table.items() if opt.removed]
    assert removed
    for name in removed:
        real = subprocess.run([str(server), name, "8", "--version"], capture_output=True, text=True, cwd=tmp_path,
                              env=env, timeout=30, check=False)
        ours = parse(["llama-server", name, "8"], env={})
        assert ours.errors and ours.errors[0].message in real.stderr + real.stdout, name
