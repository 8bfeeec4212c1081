"""A command imports what it uses: the modules a real process has loaded when it exits.

Start-up is most of a pair check's time (the speed benchmark, benchmarks/bench.py, times
it against llama.cpp's own vocabulary load); these tests hold the line that keeps it
short: a check of two GGUFs loads no scan, fit, bench, registry-table, pre-flight, Hub,
HTTP, Hugging Face folder or safetensors code unless its inputs or options ask for it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from httpserver import TestServer

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "fixtures" / "examples"
SPM = EXAMPLES / "ggml-vocab-llama-spm.gguf"
PHI3 = EXAMPLES / "ggml-vocab-phi-3.gguf"

# Runs the CLI as ``python -m paircheck`` does, then writes the loaded module names.
_PROBE = """
import atexit, sys
out = sys.argv.pop(1)
def dump():
    with open(out, "w") as handle:
        handle.write("\\n".join(sorted(sys.modules)))
atexit.register(dump)
from paircheck.cli import main
main(sys.argv[1:])
"""

# Whole areas a command loads only when it uses them.
SCAN, FIT, BENCH = "paircheck.scan", "paircheck.fit", "paircheck.bench"
REGISTRY, PREFLIGHT, SERVER = "paircheck._registry", "paircheck.preflight", "paircheck.llama_server"
HUB, REMOTE = "paircheck._source.hub", "paircheck._source.remote"
FOLDER, SAFETENSORS = "paircheck._source.hf_folder", "paircheck._source.safetensors_header"
THIRD_PARTY = ("huggingface_hub", "tokenizers", "safetensors", "numpy", "gguf", "tabulate", "http.client", "ssl")
OTHER_ENGINES = tuple(f"paircheck._engine.{m}" for m in (
    "vllm", "sglang", "transformers", "lmstudio", "koboldcpp", "ollama", "tensorrt_llm"))
NEVER_FOR_A_GGUF_CHECK = (SCAN, FIT, BENCH, PREFLIGHT, SERVER, HUB, REMOTE, FOLDER, SAFETENSORS,
                          "paircheck._source.hf_tensors", "paircheck._source.tensors", "paircheck._source.http_client",
                          "paircheck._source.hf_convert", *OTHER_ENGINES)


def loaded(tmp_path: Path, *args: str | Path, env: dict[str, str] | None = None) -> set[str]:
    out = tmp_path / "modules.txt"
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, str(out), *map(str, args)],
        capture_output=True, text=True, timeout=120, env={**os.environ, **(env or {})},
    )
    assert result.returncode in (0, 1, 4), result.stderr  # 4: llama-spm + phi-3 aborts at run time
    return set(out.read_text().split("\n"))


def within(modules: set[str], *areas: str) -> list[str]:
    return sorted(m for m in modules if any(m == a or m.startswith(a + ".") for a in areas))


def test_version_loads_nothing_but_the_command_line(tmp_path: Path) -> None:
    modules = loaded(tmp_path, "--version")
    ours = {m for m in modules if m.startswith("paircheck")}
    # outcome: the exit codes and --fail-on levels the options name (it imports only constants)
    # version: the version string alone (the face, paircheck.api, is not loaded)
    assert ours <= {"paircheck", "paircheck.version", "paircheck.cli", "paircheck.cli.options", "paircheck.errors",
                    "paircheck.constants", "paircheck.outcome", "paircheck._format", "paircheck._format.interface"}, \
        sorted(ours)


def test_a_quiet_check_loads_no_format_registry_or_other_command(tmp_path: Path) -> None:
    modules = loaded(tmp_path, "-q", SPM, PHI3)
    assert "paircheck._source.gguf_file" in modules  # what it does use
    assert not within(modules, *NEVER_FOR_A_GGUF_CHECK, REGISTRY, *THIRD_PARTY, "paircheck._format.text",
                      "paircheck._format.json_format")


def test_text_and_json_checks_load_their_format_and_the_registry_only(tmp_path: Path) -> None:
    text = loaded(tmp_path, SPM, PHI3)
    # No tabulate since issue 50: the side table is text_base's, measured in terminal columns.
    assert {"paircheck._format.text", "paircheck._registry.consult"} <= text
    assert not within(text, *NEVER_FOR_A_GGUF_CHECK, "paircheck._format.json_format", "paircheck._format.markdown",
                      "paircheck._format.csv_format", "paircheck._format.scan_render")
    as_json = loaded(tmp_path, "--json", "--no-registry", SPM, PHI3)
    assert "paircheck._format.json_format" in as_json
    assert not within(as_json, *NEVER_FOR_A_GGUF_CHECK, REGISTRY, "paircheck._format.text", "tabulate")


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_inputs_and_options_load_what_they_ask_for(tmp_path: Path, real_vocab) -> None:
    from hf_build import build_qwen2_folder

    folder = build_qwen2_folder(real_vocab("qwen2"), tmp_path / "hf", 151936)
    with_folder = loaded(tmp_path, "-q", folder, folder)
    assert {FOLDER, SAFETENSORS} <= with_folder
    assert not within(with_folder, HUB, REMOTE, SCAN, FIT, BENCH, "huggingface_hub", "http.client")
    with TestServer() as server:
        url = server.add_file("m/spm.gguf", SPM)
        with_url = loaded(tmp_path, "-q", url, PHI3, env={"PAIRCHECK_HTTP_TIMEOUT": "5"})
    assert REMOTE in with_url and not within(with_url, HUB, FOLDER, SCAN, FIT, "huggingface_hub")
    from tiny_model import write_tiny_llama  # --ctx sizes weights: files with tensor infos

    model = write_tiny_llama(tmp_path / "tiny.gguf", SPM)
    with_ctx = loaded(tmp_path, "-v", "--ctx", "4096", model, model)
    assert "paircheck.fit.memory" in with_ctx and not within(with_ctx, SCAN, BENCH, HUB, REMOTE)


def test_the_engine_table_names_each_engine_as_it_names_itself() -> None:
    from paircheck._engine import ENGINES, engine_named
    from paircheck.constants import RULE_ENGINES

    assert tuple(ENGINES) == RULE_ENGINES
    assert [engine_named(name).name for name in ENGINES] == list(ENGINES)


def test_every_engine_is_loaded_for_engine_all(tmp_path: Path) -> None:
    modules = loaded(tmp_path, "-q", "--engine", "all", SPM, PHI3)
    assert set(OTHER_ENGINES) <= modules


def test_a_warm_scan_reads_the_target_from_the_read_cache_and_loads_no_hub_code(tmp_path: Path) -> None:
    # Issue 50, item 12: a warm scan (every summary cached) read the whole target again (the
    # check keeps it in the read cache; scan did not), loaded the registry and the target's
    # texts for candidates it never read, and imported the Hub's code to render a scan of
    # this machine.
    # The shipped files: a file changed in the last two seconds is never kept in the read cache.
    cache = tmp_path / "cache"
    env = {"PAIRCHECK_CACHE_HOME": str(cache), "HOME": str(tmp_path), "PAIRCHECK_INSTALLED": "off"}
    args = ("scan", "--no-default-dirs", SPM, EXAMPLES)
    cold = loaded(tmp_path, *args, env=env)
    assert within(cold, "paircheck.scan.cache")
    kept = [p for p in (cache / "read").rglob("*") if p.is_file()]
    assert len(kept) == 1, kept  # the target's entry; candidates are summarized, not kept whole
    warm = loaded(tmp_path, *args, env=env)
    assert within(warm, HUB, REMOTE, "paircheck.scan.hub_scan", "paircheck.scan.hub_candidates",
                  "paircheck._format.hub_scan_render") == []
    # Nor what it has no use for, which was most of what is left of a warm scan's time: the
    # installed engines (importlib.metadata, email: a quarter of it), the registry's loader (the
    # cache key needs only its folder), the memory model (to format a size) and the workers (no
    # file is read).
    assert within(warm, "paircheck.installed", "importlib.metadata", "email", "paircheck._registry.load",
                  "paircheck._registry.entry", FIT, "paircheck.scan.workers", "multiprocessing",
                  "concurrent.futures") == []
