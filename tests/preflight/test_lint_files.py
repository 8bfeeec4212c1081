"""``paircheck lint``: launch commands found in compose files, systemd units, Kubernetes manifests,
shell scripts and Dockerfiles (fixtures/launch/, each shaped after an engine's documentation),
judged as lint-cmd judges them, every finding at the line and column of the word it is about."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from launch_files import REPO, launch_folder, place

from paircheck.errors import InputError
from paircheck.preflight.lint import FAIL, OK, UNCHECKED
from paircheck.preflight.lint_files import CommandLint, lint_paths


def found(result, path: Path) -> list[CommandLint]:  # type: ignore[no-untyped-def]
    return [c for c in result.commands if Path(c.command.file).resolve() == path.resolve()]


def at(command: CommandLint, code: str) -> list[tuple[int, int]]:
    return [(p.line, p.column) for f, p in zip(command.result.findings, command.places, strict=True) if f.code == code]


def cli(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "80", **env}
    return subprocess.run([sys.executable, "-m", "paircheck", *args], capture_output=True, text=True, cwd=cwd,
                          env=environ, timeout=300)


def test_compose_findings_point_at_their_words_and_the_pair_is_read_through_the_volume(  # type: ignore[no-untyped-def]
        tmp_path: Path, real_vocab) -> None:
    folder = launch_folder(tmp_path, real_vocab)
    compose = folder / "compose-bad" / "docker-compose.yml"
    (command,) = found(lint_paths([str(compose)], environ={}), compose)  # nginx is not a launcher
    assert command.command.argv[:3] == ["/app/llama-server", "-md", "/models/draft.gguf"]  # the image's ENTRYPOINT
    assert at(command, "PF001") == [place(compose, '"--draft-n-max"')]
    assert at(command, "PF002") == [place(compose, '"--draft-max"')]
    assert at(command, "LF001") == [place(compose, '"${DRAFT_MAX}"')]
    assert at(command, "PF010") == [place(compose, '"-md"')]
    assert command.result.status() == FAIL
    # LLAMA_ARG_MODEL=/models/target.gguf and -md /models/draft.gguf, read through ./models:/models
    (report,) = command.result.reports
    assert report.compatible and report.method == "draft-simple"
    assert Path(report.draft.location).resolve() == (compose.parent / "models" / "draft.gguf").resolve()


def test_compose_variables_come_from_the_environment_first_then_dot_env(  # type: ignore[no-untyped-def]
        tmp_path: Path, real_vocab) -> None:
    folder = launch_folder(tmp_path, real_vocab)
    compose = folder / "compose-bad" / "docker-compose.yml"
    (compose.parent / ".env").write_text("# as docker compose reads it\nDRAFT_MAX=4\nTARGET='nowhere.gguf'\n")
    (command,) = found(lint_paths([str(compose)], environ={"TARGET": "draft.gguf"}), compose)
    assert command.command.argv[-2:] == ["--draft-max", "4"] and at(command, "LF001") == []
    assert command.command.env["LLAMA_ARG_MODEL"] == "/models/draft.gguf"  # the environment beat .env
    (command,) = found(lint_paths([str(compose)], environ={}), compose)
    assert command.command.env["LLAMA_ARG_MODEL"] == "/models/nowhere.gguf"
    assert [f.code for f in command.result.findings if f.code == "PF021"] == ["PF021"]  # no such file: an error
    assert at(command, "PF021") == [place(compose, "/models/${TARGET")]  # where the variable is set


def test_a_required_variable_that_is_unset_is_an_error(tmp_path: Path) -> None:
    compose = tmp_path / "compose.yaml"
    compose.write_text("services:\n  llm:\n    image: ghcr.io/ggml-org/llama.cpp:server\n"
                       "    command: -m ${MODEL:?give the model} --port 8080\n")
    (command,) = lint_paths([str(compose)], check=False, environ={}).commands
    assert at(command, "LF002") == [place(compose, "${MODEL")]
    assert command.result.status(False) == FAIL
    (command,) = lint_paths([str(compose)], check=False, environ={"MODEL": "/m.gguf"}).commands
    assert at(command, "LF002") == [] and command.command.argv[1:3] == ["-m", "/m.gguf"]


def test_a_model_on_a_named_volume_is_unreachable_not_an_error(  # type: ignore[no-untyped-def]
        tmp_path: Path, real_vocab) -> None:
    folder = launch_folder(tmp_path, real_vocab)
    compose = folder / "compose-good" / "docker-compose.yml"
    compose.write_text(compose.read_text().replace("./models:/models", "gguf:/models"))
    result = lint_paths([str(compose)], environ={})
    (command,) = result.commands
    # the target is named by LLAMA_ARG_MODEL: placed where it is set
    assert at(command, "PF022") == [place(compose, "/models/target.gguf"), place(compose, "/models/draft.gguf")]
    assert all(f.status == "info" for f in command.result.findings if f.code == "PF022")
    assert result.status() == UNCHECKED and command.result.reports == []
    assert lint_paths([str(compose)], check=False, environ={}).status(False) == OK  # --no-check: flags only


def test_the_good_compose_file_passes_and_a_bad_pair_is_placed_at_the_draft(  # type: ignore[no-untyped-def]
        tmp_path: Path, real_vocab) -> None:
    folder = launch_folder(tmp_path, real_vocab)
    compose = folder / "compose-good" / "docker-compose.yml"
    result = lint_paths([str(compose)], environ={})
    assert result.status() == OK and [r.compatible for r in result.commands[0].result.reports] == [True]
    assert result.commands[0].command.argv[-1] == "16"  # ${DRAFT_MAX:-16}
    bad = launch_folder(tmp_path / "bad", real_vocab, draft="llama-bpe")
    compose = bad / "compose-good" / "docker-compose.yml"
    (command,) = lint_paths([str(compose)], environ={}).commands
    assert command.result.status() == FAIL and not command.result.reports[0].compatible
    assert (command.pair_place.line, command.pair_place.column) == place(compose, "-md")


def test_systemd_unit_continuations_environment_and_working_directory(  # type: ignore[no-untyped-def]
        tmp_path: Path, real_vocab) -> None:
    folder = launch_folder(tmp_path, real_vocab)
    unit = folder / "llama-server.service"
    (command,) = lint_paths([str(unit)]).commands
    assert command.kind == "systemd" and command.command.argv[-4:] == ["--draft", "8", "--port", "8080"]
    assert at(command, "PF002") == [place(unit, "--draft 8")]  # on the third line of ExecStart=
    assert command.command.env == {"LLAMA_ARG_CTX_SIZE": "8192", "LLAMA_ARG_N_GPU_LAYERS": "99"}
    (report,) = command.result.reports  # target.gguf and draft.gguf read from WorkingDirectory=
    assert report.compatible
    assert command.result.corrected is not None and "--spec-draft-n-max" in command.result.corrected


def test_kubernetes_manifests_every_document_and_sh_c_args(  # type: ignore[no-untyped-def]
        tmp_path: Path, real_vocab) -> None:
    folder = launch_folder(tmp_path, real_vocab)
    llama, vllm = folder / "k8s" / "llama-server.yaml", folder / "k8s" / "vllm.yaml"
    result = lint_paths([str(folder / "k8s")])
    (server,) = found(result, llama)
    # no command: the image's ENTRYPOINT; $(DRAFT_PATH) and $(N_MAX) from the container's env
    assert server.command.argv[:5] == ["/app/llama-server", "-m", "/models/target.gguf", "-md", "/models/draft.gguf"]
    assert server.command.argv[6] == "16"
    assert at(server, "PF010") == [place(llama, '"-md"')]
    assert at(server, "PF022") == [place(llama, '"/models/target.gguf"'), place(llama, '"$(DRAFT_PATH)"')]
    assert "Deployment 'llama-server' container 'server'" == server.command.where
    (serve,) = found(lint_paths([str(vllm)], check=False), vllm)
    assert serve.command.argv[:3] == ["vllm", "serve", "mistralai/Mistral-7B-Instruct-v0.3"]
    assert at(serve, "VS001") == [place(vllm, "--speculative-model"), place(vllm, "--num-speculative-tokens")]


def test_shell_script_variables_continuations_and_here_documents(  # type: ignore[no-untyped-def]
        tmp_path: Path, real_vocab) -> None:
    folder = launch_folder(tmp_path, real_vocab)
    script = folder / "serve.sh"
    (command,) = lint_paths([str(script)]).commands
    assert command.command.argv[:6] == ["exec", "llama-server", "-m", "target.gguf", "-md", "draft.gguf"]
    assert command.command.env == {"LLAMA_ARG_CTX_SIZE": "4096"}
    assert at(command, "PF001") == [place(script, "--draft-min-accept-tokens")]
    assert at(command, "LF003") == [place(script, "$EXTRA_ARGS")]  # left out: any number of words
    assert "$EXTRA_ARGS" not in command.command.argv and command.command.argv[-1] == "8080"
    assert [r.compatible for r in command.result.reports] == [True]  # read from the script's folder
    other = tmp_path / "other.sh"
    other.write_text("#!/bin/bash\ncat > /tmp/x <<'EOF'\nllama-server -m a.gguf --draft 3\nEOF\n"
                     "main() { echo; }\nmain \"$@\"\n# llama-cli -m x.gguf --draft 3, then ./server\n"
                     "llama-cli -m x.gguf --draft 3 | tee log; ./server -m y.gguf\n")
    commands = lint_paths([str(other)], check=False).commands
    assert [c.command.argv[0] for c in commands] == ["llama-cli", "./server"]  # not the here-document, not main
    # placed where the words are, not where the same text appears first (the comment)
    assert at(commands[0], "PF002") == [place(other, "--draft 3", nth=2)]
    assert at(commands[1], "PF040") == [place(other, "./server", nth=1)]


def test_dockerfile_cmd_after_the_base_images_entrypoint(  # type: ignore[no-untyped-def]
        tmp_path: Path, real_vocab) -> None:
    folder = launch_folder(tmp_path, real_vocab)
    dockerfile = folder / "Dockerfile"
    (command,) = lint_paths([str(dockerfile)]).commands
    assert command.command.argv[0] == "/app/llama-server" and command.command.env["LLAMA_ARG_CTX_SIZE"] == "4096"
    assert at(command, "PF004") == [place(dockerfile, '"--spec-draft-n-max"')]
    assert len(at(command, "PF022")) == 2  # baked into the image: not on this machine


def test_a_folder_finds_every_kind_and_the_cli_exit_code_is_the_worst(  # type: ignore[no-untyped-def]
        tmp_path: Path, real_vocab) -> None:
    folder = launch_folder(tmp_path, real_vocab)
    done = cli(["lint", "--json", "--no-check", "."], folder)
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    assert {f["kind"] for f in data["files"]} == {"compose", "systemd", "kubernetes", "shell", "dockerfile"}
    assert data["status"] == "not-ok" and data["exit_code"] == 1
    good = next(c for c in data["commands"] if c["file"] == "compose-good/docker-compose.yml")
    assert good["status"] == "ok"
    bad = next(c for c in data["commands"] if c["file"] == "compose-bad/docker-compose.yml")
    loc = next(f["location"] for f in bad["findings"] if f["code"] == "PF001")
    assert (loc["line"], loc["column"]) == place(folder / "compose-bad" / "docker-compose.yml", '"--draft-n-max"')
    text = cli(["lint", "--no-check", "compose-bad"], folder)
    line, column = place(folder / "compose-bad" / "docker-compose.yml", '"--draft-n-max"')
    assert text.returncode == 1 and f"{line}:{column}: error PF001" in text.stdout
    assert text.stdout.startswith("NOT OK: 1 launch command in 1 launch file: 1 not ok\n")
    assert all(len(row) <= 80 for row in text.stdout.splitlines())


def test_no_launch_command_is_not_checked_unless_allowed(tmp_path: Path) -> None:
    (tmp_path / "docker-compose.yml").write_text("services:\n  db:\n    image: postgres\n")
    (tmp_path / "notes.txt").write_text("llama-server -m x.gguf\n")
    assert cli(["lint", "."], tmp_path).returncode == 3
    done = cli(["lint", "--allow-empty", "."], tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("OK: no launch command found in 1 launch file")


@pytest.mark.parametrize("name, content, said", [
    ("compose.yaml", "services:\n  a: [\n", "not valid YAML (line 3, column 1)"),
    ("run.sh", "llama-server -m 'x.gguf\n", "cannot split a command like a shell"),
    ("compose.yaml", "services:\n  a:\n    command: \"-m 'x\"\n", "cannot split a command like a shell"),
    ("u.service", "[Service]\nExecStart=llama-server \"unclosed\n", "cannot split a command like a shell"),
    ("Dockerfile", "FROM x\0\n", "NUL byte"),
    ("app.service", "\xff\xfe", "not UTF-8"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, name: str, content: str, said: str) -> None:
    (tmp_path / name).write_bytes(content.encode("latin-1"))
    with pytest.raises(InputError, match=re.escape(said)):
        lint_paths([str(tmp_path / name)])
    done = cli(["lint", name], tmp_path)
    assert done.returncode == 2 and done.stdout == "" and said in done.stderr and len(done.stderr.splitlines()) == 1
    assert cli(["lint", "missing.yml"], tmp_path).returncode == 2


def test_aliases_are_walked_once_not_expanded(tmp_path: Path) -> None:
    """A 'billion laughs' manifest: nine levels of nine aliases would be 9**9 nodes expanded."""
    lines = ["apiVersion: v1", "kind: List", 'a0: &a0 {containers: [{name: x, command: ["llama-server", "-x"]}]}']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    (tmp_path / "laughs.yaml").write_text("\n".join(lines) + "\n")
    result = lint_paths([str(tmp_path / "laughs.yaml")], check=False)
    assert len(result.commands) == 1  # the one container, once (expanded, the walk would not finish)


def test_docker_run_in_a_script_is_read_as_the_container_it_starts(  # type: ignore[no-untyped-def]
        tmp_path: Path, real_vocab) -> None:
    """llama.cpp docs/docker.md's ``docker run -v ...:/models IMAGE -m /models/...`` lines."""
    (tmp_path / "models").mkdir()
    for name in ("target.gguf", "draft.gguf"):
        (tmp_path / "models" / name).write_bytes(real_vocab("qwen2").read_bytes())
    script = tmp_path / "run.sh"
    script.write_text(
        "#!/bin/sh\n# llama.cpp docs/docker.md, with a draft\n"
        "docker run -d --rm -p 8080:8080 -v ./models:/models -e LLAMA_ARG_CTX_SIZE=4096 \\\n"
        "  ghcr.io/ggml-org/llama.cpp:server -m /models/target.gguf -md /models/draft.gguf --draft 8\n"
        "docker run -v /path/to/models:/models ghcr.io/ggml-org/llama.cpp:full --run -m /models/7B/m.gguf\n"
        "docker run --entrypoint /bin/ls -v x:/y ghcr.io/ggml-org/llama.cpp:server -la\n"
        "docker run --gpus all -v llms:/llms local/llama.cpp:server-cuda -m /llms/gemma.gguf\n")
    server, cli_run = lint_paths([str(script)]).commands  # not ls, not an image paircheck does not know
    assert server.command.argv[:3] == ["/app/llama-server", "-m", "/models/target.gguf"]
    assert server.command.env == {"LLAMA_ARG_CTX_SIZE": "4096", "LLAMA_ARG_HOST": "0.0.0.0"}
    assert at(server, "PF002") == [place(script, "--draft 8")]
    assert [r.compatible for r in server.result.reports] == [True]  # read through -v ./models:/models
    # the full image's tools.sh --run is llama-cli; the bind mount's host folder has no such file
    assert cli_run.command.argv[:2] == ["./llama-cli", "-m"]
    assert at(cli_run, "PF021") == [place(script, "/models/7B/m.gguf")]


def test_modelfiles_and_python_files_keep_their_own_lines(tmp_path: Path) -> None:
    (tmp_path / "Modelfile").write_text("FROM ./t.gguf\n# a guide's spelling\nPARAMETER draft_model ./d.gguf\n")
    (tmp_path / "serve.py").write_text('from vllm import LLM\n\nllm = LLM(model="a/b", draft_model="c/d")\n')
    (tmp_path / "util.py").write_text("print('no launcher here')\n")
    modelfile, python = lint_paths([str(tmp_path / "Modelfile"), str(tmp_path / "serve.py"),
                                    str(tmp_path / "util.py")], check=False).commands
    assert modelfile.kind == "modelfile" and at(modelfile, "OM003") == [(3, 1)]
    assert python.kind == "python" and at(python, "VS020") == [(3, 1)]
    # a folder's Python files are not launch files (a project's code is not walked)
    assert [c.kind for c in lint_paths([str(tmp_path)], check=False).commands] == ["modelfile"]


@pytest.mark.parametrize("text, env, argv", [
    # Compose: $$ is a literal $, ${VAR:+alt}, ${VAR-default} (set but empty: empty, so no word once
    # the interpolated string is split)
    ("llama-server -m $$HOME/m.gguf --alias ${NAME:+named} --port ${PORT-1}", {"NAME": "x", "PORT": ""},
     ["llama-server", "-m", "$HOME/m.gguf", "--alias", "named", "--port"]),
    # quotes keep spaces; an unquoted expansion is split; redirections are not arguments
    ("llama-server -p 'a b' $ARGS 2>&1 >log", {"ARGS": "-c 4096"}, ["llama-server", "-p", "a b", "-c", "4096"]),
])
def test_compose_command_strings_are_split_as_compose_does(text: str, env: dict[str, str], argv: list[str],
                                                          tmp_path: Path) -> None:
    compose = tmp_path / "compose.yaml"
    compose.write_text(f"services:\n  llm:\n    command: {json.dumps(text)}\n")
    (command,) = lint_paths([str(compose)], check=False, environ=env).commands
    assert command.command.argv == argv


def test_launchers_without_flag_rules_are_found_and_not_checked(tmp_path: Path) -> None:
    """SGLang and KoboldCpp lines are launch commands too: never skipped, never a silent pass."""
    compose = tmp_path / "compose.yaml"
    compose.write_text("services:\n  sglang:\n    image: lmsysorg/sglang:latest\n"
                       "    command: python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B"
                       " --speculative-algorithm EAGLE\n"
                       "  kobold:\n    image: koboldai/koboldcpp\n    entrypoint: [koboldcpp, --model, m.gguf]\n")
    result = lint_paths([str(compose)], check=False)
    assert [c.command.where for c in result.commands] == ["service 'sglang'", "service 'kobold'"]
    assert all(at(c, "PF030") == [(c.command.pos.line, c.command.pos.column)]
               for c in result.commands)
    assert result.status(False) == UNCHECKED


def test_github_workflow_run_steps(tmp_path: Path, real_vocab) -> None:  # type: ignore[no-untyped-def]
    """A smoke-test job that starts llama-server (the runner runs ``run:`` with bash, from the
    repository's root): found by walking the repository, .github included."""
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (tmp_path / "models").mkdir()
    for name in ("t.gguf", "d.gguf"):
        (tmp_path / "models" / name).write_bytes(real_vocab("qwen2").read_bytes())
    workflow = workflows / "smoke.yml"
    workflow.write_text(
        "name: smoke\non: [push]\njobs:\n  serve:\n    runs-on: ubuntu-latest\n    env:\n"
        "      LLAMA_ARG_CTX_SIZE: 2048\n      TOKEN: ${{ secrets.HF_TOKEN }}\n    steps:\n"
        "      - uses: actions/checkout@v4\n      - name: start the server\n        run: |\n"
        "          echo starting\n          llama-server -m models/t.gguf -md models/d.gguf \\\n"
        "            --spec-type draft-simple --draft-max 8 &\n          sleep 5\n")
    (command,) = lint_paths([str(tmp_path)]).commands
    assert command.kind == "workflow" and command.command.where == "job 'serve' step 'start the server'"
    assert command.command.env == {"LLAMA_ARG_CTX_SIZE": "2048"}  # not the ${{ }} expression
    assert at(command, "PF002") == [place(workflow, "--draft-max")]
    assert [r.compatible for r in command.result.reports] == [True]  # models/ read from the repository's root


@pytest.mark.parametrize("command", [
    'sh -c "exec llama-server -m /m/t.gguf --draft 3"',
    '["/bin/sh", "-c", "exec llama-server -m /m/t.gguf --draft 3"]',
    '>\n      sh -c "exec llama-server\n      -m /m/t.gguf --draft 3"',
])
def test_sh_c_in_compose_is_read_as_its_script(command: str, tmp_path: Path) -> None:
    compose = tmp_path / "compose.yaml"
    compose.write_text(f"services:\n  llm:\n    image: x\n    command: {command}\n")
    (found_command,) = lint_paths([str(compose)], check=False, environ={}).commands
    assert found_command.command.argv == ["exec", "llama-server", "-m", "/m/t.gguf", "--draft", "3"]
    assert at(found_command, "PF002") == [place(compose, "--draft")]


def test_vllm_image_runs_its_openai_server_entrypoint(tmp_path: Path) -> None:
    """vLLM's docs/deployment/docker.md: ``docker run ... vllm/vllm-openai:latest --model ...``,
    with the V0 speculative flags older guides add."""
    script = tmp_path / "vllm.sh"
    script.write_text(
        "#!/bin/sh\ndocker run --runtime nvidia --gpus all -v ~/.cache/huggingface:/root/.cache/huggingface \\\n"
        '    --env "HUGGING_FACE_HUB_TOKEN=secret" -p 8000:8000 --ipc=host vllm/vllm-openai:latest \\\n'
        "    --model Qwen/Qwen3-8B --speculative-model Qwen/Qwen3-0.6B --num-speculative-tokens 5\n")
    (command,) = lint_paths([str(script)], check=False).commands
    assert command.command.argv[:5] == ["python3", "-m", "vllm.entrypoints.openai.api_server", "--model",
                                        "Qwen/Qwen3-8B"]
    assert command.command.env == {"HUGGING_FACE_HUB_TOKEN": "secret"}
    assert at(command, "VS001") == [place(script, "--speculative-model"), place(script, "--num-speculative-tokens")]
    assert command.result.corrected is not None and "--speculative-config" in command.result.corrected


def test_findings_are_listed_in_the_file_s_line_order(tmp_path: Path) -> None:
    # Issue 50: the checks find PF002 (line 3) before PF010 (line 2), and the text printed
    # them in that order, "3:3" above "2:29".
    script = tmp_path / "start.sh"
    script.write_text("#!/bin/sh\nllama-server -m /srv/t.gguf -md /srv/d.gguf \\\n  --draft-max 16 --port 8080\n")
    done = subprocess.run([sys.executable, "-m", "paircheck", "lint", "--no-check", str(script)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1, done.stderr
    places = re.findall(r"^    (\d+):(\d+): error (PF\d+)", done.stdout, re.M)
    assert places == [("2", "29", "PF010"), ("3", "3", "PF002")], done.stdout


def test_a_compose_file_s_next_line_is_in_the_container_s_terms(tmp_path: Path) -> None:
    # Issue 50: the n-gram line offered for a refused pair in a compose file mixed this
    # machine's path of the model (read through the volume) with the container's program.
    examples = REPO / "fixtures" / "examples"
    (tmp_path / "t.gguf").write_bytes((examples / "ggml-vocab-llama-spm.gguf").read_bytes())
    (tmp_path / "d.gguf").write_bytes((examples / "ggml-vocab-baichuan.gguf").read_bytes())
    (tmp_path / "docker-compose.yml").write_text(
        "services:\n  llm:\n    image: ghcr.io/ggml-org/llama.cpp:server\n    volumes:\n      - .:/models\n"
        '    command: ["-m", "/models/t.gguf", "-md", "/models/d.gguf", "--spec-type", "draft-simple"]\n')
    done = subprocess.run([sys.executable, "-m", "paircheck", "lint", "--format", "json",
                           str(tmp_path / "docker-compose.yml")], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    text = json.dumps(doc)
    steps = [s for s in re.findall(r'"((?:/app/)?llama-server [^"]*)"', text) if "ngram" in s]
    assert steps == ["/app/llama-server -m /models/t.gguf --spec-type ngram-mod"], steps
    human = subprocess.run([sys.executable, "-m", "paircheck", "lint", str(tmp_path / "docker-compose.yml")],
                           capture_output=True, text=True, timeout=60, check=False).stdout
    assert "      /app/llama-server -m /models/t.gguf --spec-type ngram-mod" in human.splitlines(), human
    assert f"paircheck scan {tmp_path / 't.gguf'}" in human  # run here: this machine's path
