"""Launch lines against the --help of the llama.cpp build that will run them.

Two real builds: the pinned llama-server (llama-cpp-python 0.3.36's llama.cpp, tests/
llamacpp_build.py) and a second one of another release (0.3.16's, August 2025), whose --help
differs: it has --draft-max, which the pinned source removed ('the argument has been removed.
use --spec-draft-n-max or --spec-ngram-mod-n-max'), and no --spec-draft-n-max. The second
build's answers (--version, --help, and its error for each flag it lacks) were recorded from
its real binary (``python tests/llamacpp_build.py --record-other``, kept in
fixtures/llamacpp-other/), and a program replays them byte for byte; an argument list that was
not recorded makes it fail loudly (exit 97).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import llamacpp_build
import pytest
from click.testing import CliRunner

from paircheck.cli import cli
from paircheck.installed import help_flags
from paircheck.preflight.build_help import read_build
from paircheck.preflight.entry import lint_argv
from paircheck.preflight.llama_command import options_for

REPO = Path(__file__).resolve().parents[2]
SPM = str(REPO / "fixtures" / "examples" / "ggml-vocab-llama-spm.gguf")


@pytest.fixture(scope="module")
def pinned() -> str:
    return str(llamacpp_build.ensure_tools()["llama-server"])


@pytest.fixture(scope="module")
def other() -> str:
    return str(llamacpp_build.other_server_path())


def test_the_recorded_build_answers_only_what_was_recorded(other: str) -> None:
    """The replay is the real binary's bytes and exit codes, and nothing more: an argument list
    nobody recorded is not answered with a guess."""
    import json
    import subprocess

    doc = json.loads(llamacpp_build.RECORDING.read_text())
    assert [tuple(r["argv"]) for r in doc["runs"]] == list(llamacpp_build.RECORDED_ARGVS)
    for run in doc["runs"]:
        done = subprocess.run([other, *run["argv"]], capture_output=True, check=False)
        assert (done.returncode, done.stdout.decode(), done.stderr.decode()) == (
            run["exit"], run["stdout"], run["stderr"])
    unknown = subprocess.run([other, "--draft-max", "9", "--help"], capture_output=True, text=True, check=False)
    assert unknown.returncode == llamacpp_build.NOT_RECORDED_EXIT and "not recorded" in unknown.stderr
    assert f"llama-cpp-python {llamacpp_build.OTHER_VERSION}" in doc["release"]


def _codes(result) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return [(f.code, f.status) for f in result.findings]


@pytest.mark.slow  # runs the pinned llama-server
def test_the_pinned_build_lists_every_option_of_the_pinned_table(pinned: str) -> None:
    """The --help reader against the binary built from the source the table was generated
    from: every llama-server option of llama_args.py that it accepts is in that binary's usage,
    the removed stubs ('the argument has been removed. use --spec-draft-n-max ...', still
    printed) are not read as flags, and nothing the usage lists is missing from the table."""
    flags = help_flags(pinned)
    assert flags is not None
    table = options_for("SERVER")
    accepted = {name for name, (opt, _) in table.items() if opt.removed is None}
    assert accepted - flags == set()
    assert flags & {name for name in table if name not in accepted} == set()
    assert "--draft-max" in table and "--draft-max" not in flags
    assert flags - set(table) == set()


@pytest.mark.slow  # runs the pinned llama-server
def test_a_line_the_pinned_build_accepts_has_no_build_finding(pinned: str) -> None:
    argv = [pinned, "-m", SPM, "-md", SPM, "--spec-type", "draft-simple", "--spec-draft-n-max", "8", "--seed", "-1"]
    result = lint_argv(argv, check=False, installed_build=True)
    assert not [c for c, _ in _codes(result) if c in ("PF050", "PF051")]
    # The removed --draft-max: the pinned table and the pinned build agree (PF002, its own hint).
    old = lint_argv([pinned, "-m", SPM, "-md", SPM, "--spec-type", "draft-simple", "--draft-max", "8"],
                    check=False, installed_build=True)
    assert ("PF002", "fail") in _codes(old) and not [c for c, _ in _codes(old) if c in ("PF050", "PF051")]


def test_something_else_named_llama_server_is_not_read_as_a_build(tmp_path: Path) -> None:
    script = tmp_path / "llama-server"
    script.write_text("#!/bin/sh\necho 'usage: a wrapper'\n")
    script.chmod(0o755)
    assert read_build(str(script)) is None
    assert read_build(str(tmp_path / "absent")) is None


def test_the_other_build_says_which_flags_it_lacks_in_its_own_words(other: str) -> None:
    build = read_build(other)
    assert build is not None and "--draft-max" in build.flags and "--spec-draft-n-max" not in build.flags
    assert build.version == "b0 (commit unknown)"  # its sdist has no git either: 'version: 0 (unknown)'
    new = lint_argv([other, "-m", SPM, "-md", SPM, "--spec-type", "draft-simple", "--spec-draft-n-max", "8"],
                    check=False, installed_build=True)
    lacking = {f.details["argument"]: f for f in new.findings if f.code == "PF050"}
    assert set(lacking) == {"--spec-type", "--spec-draft-n-max"}  # that release had neither
    finding = lacking["--spec-draft-n-max"]
    assert finding.status == "fail" and "error: invalid argument: --spec-draft-n-max" in finding.message
    # The pinned table's removal hint for --draft-max names --spec-draft-n-max: the build's spelling.
    assert finding.details["did_you_mean"][0] == "--draft-max"
    assert new.status(pair_check=False) == "not-ok" and new.corrected is None
    # The pinned spelling's predecessor: refused by the pinned table, accepted by this build.
    old = lint_argv([other, "-m", SPM, "-md", SPM, "--spec-type", "draft-simple", "--draft-max", "8"],
                    check=False, installed_build=True)
    assert ("PF051", "info") in _codes(old) and "PF002" not in [c for c, _ in _codes(old)]


def test_run_checks_against_the_build_on_path(other: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """run/lint-cmd with the program by name: the one on PATH is the one whose --help counts."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shutil.copy2(other, bin_dir / "llama-server")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.delenv("PAIRCHECK_INSTALLED", raising=False)
    runner = CliRunner()
    line = ["llama-server", "-m", SPM, "-md", SPM, "--spec-type", "draft-simple", "--spec-draft-n-max", "8"]
    refused = runner.invoke(cli, ["run", "--dry-run", "--", *line])
    assert refused.exit_code == 1 and "PF050" in refused.output, refused.output
    monkeypatch.setenv("PAIRCHECK_INSTALLED", "off")  # the pinned table alone accepts the line
    assert "PF050" not in runner.invoke(cli, ["lint-cmd", "--", *line]).output


# Lines of the pinned llama-server's own answers (llama-cpp-python 0.3.36's llama.cpp, built
# by tests/llamacpp_build.py): its --version (on stderr) and the --help lines of the flags a
# draft-simple line uses, byte for byte. A program that prints them is a build with those
# flags; the pinned binary itself is only run by the slow tests above.
PINNED_VERSION = "version: 0.5.0-dev (build 0, commit unknown)\nbuilt with GNU 12.2.0 for Linux x86_64\n"
PINNED_HELP_LINES = """----- common params -----

-h,    --help, --usage                  print usage and exit
--version                               show version and build info
-m,    --model FNAME                    model path to load
                                        (env: LLAMA_ARG_MODEL)
--spec-draft-model, -md, --model-draft FNAME
                                        draft model for speculative decoding (default: unused)
                                        (env: LLAMA_ARG_SPEC_DRAFT_MODEL)
--spec-type none,draft-simple,draft-eagle3,draft-mtp,draft-dflash,draft-dspark,ngram-simple,\
ngram-map-k,ngram-map-k4v,ngram-mod,ngram-cache
                                        comma-separated list of types of speculative decoding to use (default:
                                        none)
--spec-draft-n-max N                    number of tokens to draft for speculative decoding (default: 3)
                                        (env: LLAMA_ARG_SPEC_DRAFT_N_MAX)
"""


def test_the_ok_line_names_the_build_the_flags_were_checked_against(tmp_path: Path) -> None:
    """Issue 50, item 10: the build was named only when a flag failed; an OK is an OK for that
    build, so it says which (path and --version, as llama-server reports it)."""
    import json
    import subprocess
    import sys

    server = tmp_path / "llama-server"
    server.write_text(
        f"#!{sys.executable}\nimport sys\n"
        f"if sys.argv[1:] == ['--version']:\n    sys.stderr.write({PINNED_VERSION!r})\n"
        f"elif sys.argv[-1:] == ['--help']:\n    sys.stdout.write({PINNED_HELP_LINES!r})\n"
        "else:\n    sys.exit(97)\n"
    )
    server.chmod(0o755)
    line = [str(server), "-m", SPM, "-md", SPM, "--spec-type", "draft-simple", "--spec-draft-n-max", "4"]
    env = {**os.environ, "COLUMNS": "200"}
    env.pop("PAIRCHECK_INSTALLED", None)
    done = subprocess.run([sys.executable, "-m", "paircheck", "run", "--dry-run", "--", *line],
                          capture_output=True, text=True, env=env, timeout=60, check=False)
    first = done.stdout.splitlines()[0]
    assert done.returncode == 0 and first.startswith("OK: llama-server: 1 pair checked"), done.stdout + done.stderr
    assert first.endswith(f"; flags as {server}, version: 0.5.0-dev (build 0, commit unknown) lists them"), first
    as_json = subprocess.run([sys.executable, "-m", "paircheck", "lint-cmd", "--json", "--", *line],
                             capture_output=True, text=True, env=env, timeout=60, check=False)
    assert json.loads(as_json.stdout)["checked_against_build"] == (
        f"{server}, version: 0.5.0-dev (build 0, commit unknown)")
