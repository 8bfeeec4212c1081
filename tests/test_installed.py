"""The engine the user has installed picks the rules, and the verdict says which and how.

Real programs and packages: the pinned llama-server (built by tests/llamacpp_build.py) asked
with --version, and SGLang 0.5.14 really installed by pip (``--no-deps --target``, into the
test cache: the engine is never imported, only its metadata read). The llama.cpp --version
format is the pinned source's common/build-info.cpp.in: 'fprintf(stream, "version: %s (build
%d, commit %s)\\n", llama_version, llama_build_number(), llama_commit());'.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import corpus
import llamacpp_build
import pytest
from click.testing import CliRunner
from hf_build import build_qwen2_folder

from paircheck import installed
from paircheck import llamacpp_tables as T
from paircheck.cli import cli

REPO = Path(__file__).resolve().parent.parent
SPM = REPO / "fixtures" / "examples" / "ggml-vocab-llama-spm.gguf"
SGLANG_RELEASE = "0.5.14"  # before the 0.5.15 size check: the same pair is accepted there


@pytest.fixture
def detecting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(installed.SWITCH, raising=False)  # conftest turns detection off for the rest


@pytest.fixture(scope="module")
def llama_server_bin() -> str:
    return str(llamacpp_build.ensure_tools()["llama-server"])


@pytest.mark.slow  # runs the pinned llama-server
def test_the_pinned_llama_server_says_its_version(llama_server_bin: str) -> None:
    found = installed.llama_server(llama_server_bin)
    assert found is not None and found.where == llama_server_bin and found.how == "llama-server --version"
    # The sdist has no git: build 0, commit unknown; LLAMA_VERSION is its CMakeLists.txt's.
    assert (found.version, found.shown) == (T.REFERENCE_LLAMA_VERSION, "0.5.0-dev (build 0, commit unknown)")
    assert installed.llama_server(str(REPO / "no-such-llama-server")) is None


@pytest.mark.slow  # runs the pinned llama-server
def test_the_verdict_names_the_llama_server_that_would_run(llama_server_bin: str, detecting: None,
                                                           tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    given = runner.invoke(cli, ["--no-registry", "--llama-server", llama_server_bin, str(SPM), str(SPM)])
    assert given.exit_code == 0, given.output
    rules = " ".join(given.output.split())  # the rules: line, wrapped at 80 columns
    assert "llama-server 0.5.0-dev (build 0, commit unknown) installed (llama-server --version" in rules
    assert "the version of the pinned reference" in rules
    # Without --llama-server: the one on PATH, as run/bench/probe would start it.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # a link: the pinned build's tools find their shared libraries beside their real path ($ORIGIN)
    (bin_dir / "llama-server").symlink_to(llama_server_bin)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    as_json = json.loads(runner.invoke(cli, ["--json", "--no-registry", str(SPM), str(SPM)]).output)
    assert as_json["installed"] == {"engine": "llama.cpp", "version": "0.5.0-dev",
                                    "shown": "0.5.0-dev (build 0, commit unknown)",
                                    "how": "llama-server --version", "where": str(bin_dir / "llama-server")}
    monkeypatch.setenv(installed.SWITCH, "off")
    assert json.loads(runner.invoke(cli, ["--json", "--no-registry", str(SPM), str(SPM)]).output)["installed"] is None


def test_another_llama_cpp_build_is_named_as_not_the_pinned_one(detecting: None) -> None:
    """The second real build (llama-cpp-python 0.3.16's llama.cpp, its answers recorded)
    prints the older 'version: %d (%s)' (build 0, commit unknown: its sdist has no git either).
    The verdict names it and says the pinned rules are applied to a build they were not read from."""
    other = llamacpp_build.other_server_path()  # its recorded answers (fixtures/llamacpp-other/)
    found = installed.llama_server(str(other))
    assert found is not None and (found.version, found.shown) == ("b0", "b0 (commit unknown)")
    out = CliRunner().invoke(cli, ["--no-registry", "--llama-server", str(other), str(SPM), str(SPM)])
    text = " ".join(out.output.split())
    assert out.exit_code == 0 and "llama-server b0 (commit unknown) installed" in text
    assert f"not the pinned reference ({T.REFERENCE_LLAMA_VERSION}); the pinned rules apply as they are" in text


def _sglang_site() -> Path:
    """SGLang 0.5.14 installed by pip into the test cache (52 MB, no dependencies)."""
    target = corpus.cache_root() / f"installed-sglang-{SGLANG_RELEASE}"
    if not (target / f"sglang-{SGLANG_RELEASE}.dist-info").is_dir():
        shutil.rmtree(target, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-compile",
                        "--target", str(target), f"sglang=={SGLANG_RELEASE}"], check=True, timeout=600)
    return target


def _paircheck(args: list[str], site: Path, extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != installed.SWITCH}
    env.update({"COLUMNS": "80", "PYTHONPATH": os.pathsep.join([str(REPO), str(site)]), **extra})
    probe = ("import sys, atexit\n"
             "atexit.register(lambda: print('SGLANG_IMPORTED' if 'sglang' in sys.modules else '', file=sys.stderr))\n"
             "from paircheck.cli import main\nmain(sys.argv[1:])\n")
    return subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, env=env,
                          timeout=120)


@pytest.mark.slow  # pip-installs SGLang
def test_an_installed_sglang_picks_its_release_rules(tmp_path: Path, real_vocab) -> None:
    """Qwen2.5-14B (152064 rows) + 0.5B (151936): SGLang 0.5.15 and later refuse the padded sizes
    (standalone_worker_v2.py:223 'if target_vocab_size != draft_vocab_size:'); 0.5.14 has no such
    check. With 0.5.14 installed, paircheck judges by 0.5.14's rules and says so."""
    site = _sglang_site()
    target = build_qwen2_folder(real_vocab("qwen2"), tmp_path / "Qwen2.5-14B-Instruct", 152064)
    draft = build_qwen2_folder(real_vocab("qwen2"), tmp_path / "Qwen2.5-0.5B-Instruct", 151936)
    args = ["--engine", "sglang", "--no-registry", str(target), str(draft)]
    judged = _paircheck(args, site, {})
    assert judged.returncode == 0, judged.stdout + judged.stderr
    text = " ".join(judged.stdout.split())
    assert f"sglang {SGLANG_RELEASE} installed (package metadata of sglang, {site}" in text
    assert "SGLang 0.5.13 to before 0.5.15" in text
    assert "SGLANG_IMPORTED" not in judged.stderr  # its metadata only: the engine is never imported
    # The line that names the installed release, not the word: tmp_path itself holds "installed".
    said_installed = f"sglang {SGLANG_RELEASE} installed"
    newest = _paircheck(args, site, {installed.SWITCH: "off"})
    assert newest.returncode == 1 and said_installed not in " ".join(newest.stdout.split())
    asked = _paircheck(["--engine", "sglang@0.5.23", *args[2:]], site, {})  # NAME@VERSION wins
    assert asked.returncode == 1 and said_installed not in " ".join(asked.stdout.split())
    as_json = json.loads(_paircheck(["--json", *args], site, {}).stdout)
    assert as_json["installed"]["version"] == SGLANG_RELEASE and as_json["verdict"] == "accepted"


def test_a_release_newer_than_every_table_says_so(tmp_path: Path, real_vocab) -> None:
    """An installed version past the newest read gets the newest rules and the line that says
    they were not read for it (versions.read_note)."""
    from paircheck.pipeline import check_descriptions, describe

    folder = build_qwen2_folder(real_vocab("qwen2"), tmp_path / "Qwen2.5-0.5B-Instruct", 151936)
    desc = describe(str(folder))
    newer = installed.Installed("vllm", "0.35.1", "0.35.1", "package metadata of vllm", "/site")
    report = check_descriptions(desc, desc, "vllm", registry=False, fingerprint=False, installed=newer)
    assert report.engine_version.startswith("vllm 0.35.1 installed (package metadata of vllm, /site): vLLM >= 0.33.0")
    assert "rules read up to 0.33.0 (0.35.1 not read: its source may differ)" in report.engine_version
    local = installed.Installed("vllm", "main", "main", "package metadata of vllm", "/site")
    odd = check_descriptions(desc, desc, "vllm", registry=False, fingerprint=False, installed=local)
    assert "no rules read for that version, the newest apply" in odd.engine_version


def test_version_answers_of_the_other_programs() -> None:
    """Ollama's cmd/cmd.go versionHandler: 'fmt.Printf("ollama version is %s\\n", serverVersion)' (the
    server's, which runs the models), and 'fmt.Printf("Warning: client version is %s\\n",
    version.Version)' when no server answers or it differs; llama.cpp's format before build-info
    printed LLAMA_VERSION was 'version: %d (%s)' (build number, commit). KoboldCpp's answer was not
    read: the first dotted number is taken."""
    assert installed.parse_ollama_version("ollama version is 0.12.3\n") == "0.12.3"
    assert installed.parse_ollama_version("Warning: could not connect to a running Ollama instance\n"
                                          "Warning: client version is 0.30.1\n") == "0.30.1"
    old = installed.parse_llama_version("version: 5234 (9f2da587)\nbuilt with cc")
    assert old == ("b5234", "b5234 (commit 9f2da587)")
    assert installed.parse_llama_version("llama-server: unknown option") is None
    assert installed.parse_plain_version("koboldcpp 1.98.1\n") == "1.98.1"
