"""Every example output in the README (and docs/*.md) is what the code prints now (issue 26,
point 10), the way a docs test or cog does it.

An example is a fenced block whose first line is ``$ paircheck ...``: the command is run
(no shell: its words are split as a shell would) at 80 columns, without colour, and its
output must equal the rest of the block; a last line ``...`` compares only the lines above
it. A comment line before the fence says where it runs:

* ``<!-- example: setup=NAME -->``: in a fresh folder prepared by ``SETUPS[NAME]`` (real files
  the tests can get: llama.cpp's vocab files, the fit shapes, the tiny bench models);
  without one, in the repository's root;
* ``<!-- example-file: NAME -->`` before any fenced block: that block's text is written as
  file NAME into every setup folder (the guide's ``guide.py``, a ``Modelfile``);
* ``<!-- example: illustrative -->``: an output shown but not re-run (say why next to it).

A block that looks like paircheck's output (a verdict word first) but is neither run nor
marked illustrative fails the test, so an example cannot silently stop being checked.

``python tests/test_readme_examples.py`` rewrites every example's output with what the code
prints now (then read the diff before committing it).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^(```+)\s*([\w-]*)\s*$")
MARKER = re.compile(r"^<!--\s*example(-file)?:\s*(.*?)\s*-->\s*$")
# First lines by which a block is recognised as paircheck's output.
OUTPUT_START = re.compile(
    r"^(COMPATIBLE|NOT COMPATIBLE|ABORTS AT RUN TIME|NOT OK|OK:|NOT CHECKED|WARNED|MEASURED|MODELLED|memory:|"
    r"\d+ usable drafts? for|\d+ of \d+ engines accept)"
)
# What a user's environment may hold that would change an example's output.
SCRUBBED = ("COLUMNS", "NO_COLOR", "HF_HOME", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "XDG_CACHE_HOME",
            "LLAMA_CACHE", "OLLAMA_MODELS", "PAIRCHECK_CACHE_HOME", "PAIRCHECK_DEBUG", "HF_TOKEN")


@dataclass
class Block:
    doc: Path
    line: int  # 1-based, of the fence
    info: str
    text: str
    marker: str | None  # the example marker's text, e.g. "setup=fit" or "illustrative"
    file_name: str | None  # from an example-file marker

    @property
    def where(self) -> str:
        return f"{self.doc.relative_to(REPO)}:{self.line}"


def blocks(doc: Path) -> list[Block]:
    lines = doc.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith(m.group(1)) and not lines[j].strip(
            "`"))
        prev = lines[i - 1] if i else ""
        mark = MARKER.match(prev)
        found.append(Block(doc, i + 1, m.group(2), "\n".join(lines[i + 1:end]),
                           mark.group(2) if mark and not mark.group(1) else None,
                           mark.group(2) if mark and mark.group(1) else None))
        i = end + 1
    return found


ALL = [b for doc in DOCS for b in blocks(doc)]
EXAMPLES = [b for b in ALL if b.text.startswith("$ paircheck ")]
FILES = {b.file_name: b.text + "\n" for b in ALL if b.file_name}


# --- setups: real files the tests can get ----------------------------------------------------


def _vocab(name: str) -> Path:
    sys.path.insert(0, str(REPO / "tests"))
    import corpus

    return corpus.corpus_dir() / f"ggml-vocab-{name}.gguf"


def setup_guide(folder: Path) -> dict[str, str]:
    """The guide's model names, holding llama.cpp's real qwen2 vocabulary (the same on both sides)."""
    for name in ("qwen3.5-32b-Q4_K_M.gguf", "qwen3.5-0.5b-Q4_K_M.gguf"):
        shutil.copyfile(_vocab("qwen2"), folder / name)
    return {}


def setup_fit(folder: Path) -> dict[str, str]:
    """Qwen2.5 7B and 0.5B as tests/fit_shapes.py writes them: the real models' tensor infos
    (Q4_K_M-like types), no data."""
    sys.path.insert(0, str(REPO / "tests"))
    import fit_shapes

    fit_shapes.write_shape(fit_shapes.qwen25("7B"), folder / "Qwen2.5-7B-Instruct-Q4_K_M.gguf")
    fit_shapes.write_shape(fit_shapes.qwen25("0.5B"), folder / "Qwen2.5-0.5B-Instruct-Q4_K_M.gguf")
    return {}


def setup_scan_demo(folder: Path) -> dict[str, str]:
    """A models folder of llama.cpp's real vocab files under model names, one of them cut."""
    models = folder / "models"
    models.mkdir()
    for vocab, name in (("qwen2", "Qwen2.5-7B-Instruct-Q4_K_M.gguf"), ("qwen2", "Qwen2.5-7B-Instruct-Q8_0.gguf"),
                        ("qwen35", "Qwen3.5-0.8B-Q8_0.gguf"), ("phi-3", "Phi-3-mini-4k-instruct-q4.gguf"),
                        ("llama-bpe", "Llama-3.2-1B-Instruct-Q4_K_M.gguf")):
        shutil.copyfile(_vocab(vocab), models / name)
    (models / "gemma-3-1b-it-Q4_0.gguf").write_bytes(_vocab("gemma-4").read_bytes()[:100_000])  # cut short
    return {"HOME": str(folder)}


def setup_tiny_pair(folder: Path) -> dict[str, str]:
    """benchmarks/bench_speculative.py's pair (deep.gguf, shallow.gguf) and the draft run it
    measured (fixtures/examples/bench/draft.json, as results/draft.json)."""
    sys.path.insert(0, str(REPO / "tests"))
    sys.path.insert(0, str(REPO / "benchmarks"))
    from bench_speculative import DRAFT, TARGET, VOCAB
    from tiny_model import write_tiny_llama

    write_tiny_llama(folder / "deep.gguf", VOCAB, seed=3, shape=TARGET, residual=False)
    write_tiny_llama(folder / "shallow.gguf", VOCAB, seed=3, shape=DRAFT, residual=False)
    (folder / "results").mkdir()
    shutil.copyfile(REPO / "fixtures" / "examples" / "bench" / "draft.json", folder / "results" / "draft.json")
    return {}


_SERVERS: list[object] = []  # the `hub` setup's stand-in Hub, served until the run ends


def setup_hub(folder: Path) -> dict[str, str]:
    """The stand-in Hub of tests/hub_standin.py (real Qwen2 vocabulary GGUFs with the tensor infos
    of Qwen2.5 0.5B to 14B, a cut upload, a gated repo), served on 127.0.0.1 and named by
    HF_ENDPOINT, with empty Hugging Face and scan caches."""
    sys.path.insert(0, str(REPO / "tests"))
    from httpserver import TestServer
    from hub_standin import build

    server = TestServer().__enter__()  # a daemon thread: it stops with the process
    build(folder / "hub", _vocab).serve(server)
    _SERVERS.append(server)
    return {"HF_ENDPOINT": server.url, "HF_HUB_CACHE": str(folder / "hf-cache"), "HF_HUB_OFFLINE": "0",
            "TRANSFORMERS_OFFLINE": "0", "PAIRCHECK_CACHE_HOME": str(folder / "scan-cache")}


SETUPS: dict[str, Callable[[Path], dict[str, str]]] = {
    "guide": setup_guide, "fit": setup_fit, "scan-demo": setup_scan_demo, "tiny-pair": setup_tiny_pair,
    "hub": setup_hub,
}


# --- the tests ---------------------------------------------------------------------------------


def _setup_name(block: Block) -> str | None:
    if block.marker and block.marker.startswith("setup="):
        return block.marker.split("=", 1)[1].strip()
    return None


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str | None], tuple[Path, dict[str, str]]]:
    made: dict[str | None, tuple[Path, dict[str, str]]] = {}

    def get(name: str | None) -> tuple[Path, dict[str, str]]:
        if name is None:
            return REPO, {}
        if name not in made:
            folder = tmp_path_factory.mktemp(f"example-{name}")
            env = SETUPS[name](folder)
            for file_name, text in FILES.items():
                (folder / file_name).write_text(text, encoding="utf-8")
            made[name] = (folder, env)
        return made[name]

    return get


def run_example(block: Block, folder: Path, extra: dict[str, str], home: Path) -> subprocess.CompletedProcess[str]:
    words = shlex.split(block.text.split("\n", 1)[0][2:])
    assert words[0] == "paircheck", block.where
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
    env.update({"COLUMNS": "80", "PYTHONPATH": str(REPO), "HOME": str(home), **extra})
    return subprocess.run([sys.executable, "-m", "paircheck", *words[1:]], capture_output=True, text=True,
                          cwd=folder, env=env, timeout=300)


@pytest.mark.parametrize("block", [b for b in EXAMPLES if b.marker != "illustrative"], ids=lambda b: b.where)
def test_example_output_is_what_the_code_prints(block: Block, folders, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    command, *expected = block.text.split("\n")
    folder, extra = folders(_setup_name(block))
    done = run_example(block, folder, extra, tmp_path)
    got = [line.rstrip() for line in done.stdout.rstrip("\n").split("\n")]
    want = [line.rstrip() for line in expected]
    if want and want[-1] == "...":
        want = want[:-1]
        got = got[: len(want)]
    assert "\n".join(got) == "\n".join(want), (
        f"{block.where}: the example's output drifted; run it and paste:\n$ {command[2:]}\n{done.stdout}"
        f"{done.stderr}"
    )


def test_every_output_block_is_an_example_or_marked() -> None:
    unchecked = [b.where for b in ALL if OUTPUT_START.match(b.text) and b.marker != "illustrative"]
    assert unchecked == [], f"output blocks without a `$ paircheck` line or an illustrative marker: {unchecked}"


def test_the_markers_name_known_setups_and_examples_exist() -> None:
    assert len(EXAMPLES) >= 8
    for b in ALL:
        name = _setup_name(b)
        assert name is None or name in SETUPS, f"{b.where}: unknown setup {name!r}"
        if b.marker and b.marker not in ("illustrative",) and name is None:
            raise AssertionError(f"{b.where}: unknown example marker {b.marker!r}")
    # Every example fits 80 columns, like the output it shows (commands excepted, and a web
    # address longer than a line, which is put on a line of its own rather than cut).
    for b in EXAMPLES:
        for line in b.text.split("\n")[1:]:
            alone_url = " " not in line.strip() and line.strip().lstrip("(").startswith(("https://", "http://"))
            assert len(line) <= 80 or alone_url or line.lstrip().startswith(("llama-server", "paircheck ", "hf ")), (
                b.where, line)


def regenerate() -> None:
    """Rewrite every example's output in place with what the code prints now."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="paircheck-examples-") as tmp:
        made: dict[str | None, tuple[Path, dict[str, str]]] = {None: (REPO, {})}
        for doc in DOCS:
            lines = doc.read_text(encoding="utf-8").split("\n")
            for block in reversed([b for b in EXAMPLES if b.doc == doc and b.marker != "illustrative"]):
                name = _setup_name(block)
                if name not in made:
                    folder = Path(tmp) / str(name)
                    folder.mkdir()
                    env = SETUPS[name](folder)  # type: ignore[index]
                    for file_name, text in FILES.items():
                        (folder / file_name).write_text(text, encoding="utf-8")
                    made[name] = (folder, env)
                home = Path(tmp) / "home"
                home.mkdir(exist_ok=True)
                done = run_example(block, *made[name], home)
                old = block.text.split("\n")
                keep_prefix = old[-1] == "..."
                new = [line.rstrip() for line in done.stdout.rstrip("\n").split("\n")]
                if keep_prefix:
                    new = new[: len(old) - 2] + ["..."]
                start = block.line  # the fence is line block.line (1-based): content starts at that index
                lines[start:start + len(old)] = [old[0], *new]
            doc.write_text("\n".join(lines), encoding="utf-8")
            print(f"rewrote the examples of {doc.relative_to(REPO)}")


if __name__ == "__main__":
    regenerate()
