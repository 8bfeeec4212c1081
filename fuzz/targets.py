"""Fuzz targets: one function per parser, each taking raw bytes.

The property every target checks: for any input the parser returns a description (or
lint result) or raises exactly one ``InputError`` whose message is one line. Any other
exception escapes and is a crash. Time and memory per input are bounded by the driver
(libFuzzer's ``-timeout`` and ``-rss_limit_mb`` in ``fuzz/run.py``).

Seeds are built here too (``seeds(name)``), from the real vocab files of tests/corpus.py
and small hand-made tokenizer folders, so the campaign needs nothing from ../shared.
"""

from __future__ import annotations

import json
import os
import shlex
import struct
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for _p in (ROOT / "tests", ROOT / "fixtures"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from paircheck.errors import InputError  # noqa: E402


class PropertyViolation(AssertionError):
    """An InputError whose message is not one line (the CLI promises one line)."""


def _one_line(exc: InputError) -> None:
    if "\n" in str(exc):
        raise PropertyViolation(f"multi-line InputError: {str(exc)[:300]!r}")


class BytesSource:
    """An in-memory ByteSource (the reader's fastest path; same checks as a file)."""

    def __init__(self, data: bytes, known_size: bool = True) -> None:
        self.name = "fuzz.gguf"
        self.data = data
        self.known_size = known_size

    @property
    def size(self) -> int | None:
        return len(self.data) if self.known_size else None

    def read_at(self, offset: int, length: int) -> bytes:
        return self.data[offset : offset + length]


# -- GGUF-facing parsers ---------------------------------------------------------------


def gguf_mem(data: bytes) -> None:
    """The GGUF header reader + vocab derivation over an in-memory source (size known),
    then again as a stream of unknown size (a pipe), then the tensor infos after it."""
    import io

    from paircheck._source.gguf_file import describe_source
    from paircheck._source.gguf_reader import GGUFFormatError, read_tensor_infos_after
    from paircheck._source.interface import ReadOptions
    from paircheck._source.resolve import StreamSource

    for known in (True, False):
        # Size unknown: the pipe reader over a buffered stream, as `<(cat D.gguf)` is read.
        source = BytesSource(data) if known else StreamSource("pipe", io.BufferedReader(io.BytesIO(data)))  # type: ignore[arg-type]
        try:
            # Tensor infos read right after the key/value section, as every source does.
            desc = describe_source(source, "fuzz", "gguf", ReadOptions())
        except InputError as exc:
            _one_line(exc)
            continue
        if known:
            try:
                read_tensor_infos_after(BytesSource(data), desc.metadata)
            except GGUFFormatError as exc:
                if "\n" in str(exc):
                    raise PropertyViolation(str(exc)[:300]) from None


class _SplitDir:
    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="paircheck-fuzz-split-"))
        (self.dir / "m-00002-of-00003.gguf").write_bytes(b"")


_split: _SplitDir | None = None


def gguf_split(data: bytes) -> None:
    """A local file given as shard 2 of a split model: resolve finds shard 1 (the input)
    and reads it through the real file path (FileSource)."""
    global _split
    if _split is None:
        _split = _SplitDir()
    (_split.dir / "m-00001-of-00003.gguf").write_bytes(data)
    from paircheck._source.resolve import describe

    try:
        describe(str(_split.dir / "m-00002-of-00003.gguf"))
    except InputError as exc:
        _one_line(exc)


class _Remote:
    def __init__(self) -> None:
        from httpserver import TestServer

        self.server = TestServer()
        self.server.__enter__()
        self.url = self.server.add_file("f.gguf", b"")


_remote: _Remote | None = None


def gguf_remote(data: bytes) -> None:
    """The remote reader (planner + range requests) against a real server on 127.0.0.1."""
    global _remote
    if _remote is None:
        os.environ.setdefault("PAIRCHECK_HTTP_TIMEOUT", "5")
        _remote = _Remote()
    _remote.server.files["/f.gguf"] = data
    from paircheck._source.interface import ReadOptions
    from paircheck._source.remote import describe_remote_gguf

    try:
        describe_remote_gguf(_remote.url, "fuzz", ReadOptions())
    except InputError as exc:
        _one_line(exc)


_hub: _Remote | None = None


def hub_api(data: bytes) -> None:
    """The Hub's model-info answer (file list, commit), served by a real server on
    127.0.0.1, read by the same code as for huggingface.co."""
    global _hub
    if _hub is None:
        os.environ.setdefault("PAIRCHECK_HTTP_TIMEOUT", "5")
        _hub = _Remote()
    _hub.server.files["/api/models/org/m/revision/main"] = data
    from paircheck._source.hub import HubRef, HubSettings, _list_files

    settings = HubSettings(endpoint=_hub.server.url, token=None, offline=False, cache_dir=Path("/nonexistent"))
    try:
        files, _commit = _list_files(HubRef("org/m"), settings, "fuzz")
    except InputError as exc:
        _one_line(exc)
        return
    if not all(isinstance(f, str) for f in files):
        raise PropertyViolation(f"non-string file names: {files[:5]!r}")


# -- Hugging Face folder files ---------------------------------------------------------


def _small_tokenizer_json() -> dict[str, object]:
    alphabet = [chr(c) for c in range(ord("a"), ord("z") + 1)] + ["Ġ", "Ċ"]
    vocab = {t: i for i, t in enumerate(alphabet)}
    merges = ["a b", "ab c", "Ġ a", "t h", "th e"]
    for m in merges:
        vocab.setdefault(m.replace(" ", ""), len(vocab))
    n = len(vocab)
    return {
        "version": "1.0",
        "added_tokens": [
            {"id": n, "content": "<|endoftext|>", "special": True, "lstrip": False, "rstrip": False,
             "normalized": False, "single_word": False},
            {"id": n + 1, "content": "<|im_start|>", "special": True, "lstrip": False, "rstrip": False,
             "normalized": False, "single_word": False},
        ],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "vocab": vocab,
                  "merges": merges},
    }


def _small_sentencepiece() -> bytes:
    from hf_build import sentencepiece_model

    pieces = [(b"<unk>", 0.0, 2), (b"<s>", 0.0, 3), (b"</s>", 0.0, 3)]
    pieces += [(f"<0x{b:02X}>".encode(), 0.0, 6) for b in range(256)]
    pieces += [(w.encode(), -float(i), 1) for i, w in enumerate(["\u2581the", "\u2581a", "he", "th", "e", "t"])]
    return sentencepiece_model(pieces)


SMALL_CONFIG = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "vocab_size": 40,
                "bos_token_id": 33, "eos_token_id": 34}
SMALL_TOK_CONFIG = {"add_bos_token": False, "add_eos_token": False, "bos_token": "<|endoftext|>",
                    "eos_token": "<|im_start|>", "tokenizer_class": "Qwen2Tokenizer",
                    "added_tokens_decoder": {"33": {"content": "<|endoftext|>", "special": True}}}


class _Folder:
    """A temp folder holding valid small files; the target overwrites one with the input."""

    def __init__(self, fuzzed: str) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="paircheck-fuzz-hf-"))
        self.fuzzed = fuzzed
        (self.dir / "config.json").write_text(json.dumps(SMALL_CONFIG))
        if fuzzed == "tokenizer.model":
            (self.dir / "tokenizer.model").write_bytes(_small_sentencepiece())
        else:
            (self.dir / "tokenizer.json").write_text(json.dumps(_small_tokenizer_json()))
            (self.dir / "tokenizer_config.json").write_text(json.dumps(SMALL_TOK_CONFIG))


_folders: dict[str, _Folder] = {}


def _hf_target(name: str) -> Callable[[bytes], None]:
    def target(data: bytes) -> None:
        folder = _folders.get(name)
        if folder is None:
            folder = _folders[name] = _Folder(name)
        (folder.dir / name).write_bytes(data)
        from paircheck._source.hf_folder import describe_hf_folder

        try:
            describe_hf_folder(folder.dir, "fuzz")
        except InputError as exc:
            _one_line(exc)

    target.__name__ = "hf_" + name.replace(".", "_")
    return target


hf_config_json = _hf_target("config.json")
hf_tokenizer_json = _hf_target("tokenizer.json")
hf_tokenizer_config_json = _hf_target("tokenizer_config.json")
hf_tokenizer_model = _hf_target("tokenizer.model")


# -- launch command lines, Modelfiles, registry TOML -----------------------------------


def launch_cmd(data: bytes) -> None:
    """`lint-cmd` without reading models: the command-line parsers of llama.cpp and vLLM."""
    from paircheck.preflight.entry import lint_argv

    text = data.decode("utf-8", "replace")
    try:
        argv = shlex.split(text)
    except ValueError:
        return  # the CLI reports a shlex error itself before any parser runs
    try:
        lint_argv(argv, env={}, check=False)
    except InputError as exc:
        _one_line(exc)


def modelfile(data: bytes) -> None:
    from paircheck.preflight.ollama import lint_modelfile

    try:
        lint_modelfile(data.decode("utf-8", "replace"), "/nonexistent", None)
    except InputError as exc:
        _one_line(exc)


_launch_dir: Path | None = None
# The first byte of a launch_files input picks the kind of file the rest is written as.
LAUNCH_NAMES = ("docker-compose.yml", "deploy.yaml", "llama.service", "serve.sh", "Dockerfile")


def launch_files(data: bytes) -> None:
    """`paircheck lint` without reading models: the finders of compose files, manifests,
    units, scripts and Dockerfiles (YAML nodes, the shell tokenizer, word places)."""
    global _launch_dir
    if _launch_dir is None:
        _launch_dir = Path(tempfile.mkdtemp(prefix="paircheck-fuzz-launch-"))
    from paircheck.preflight.lint_files import lint_paths

    path = _launch_dir / LAUNCH_NAMES[data[0] % len(LAUNCH_NAMES) if data else 0]
    path.write_bytes(data[1:])
    try:
        lint_paths([str(path)], check=False, environ={})
    except InputError as exc:
        _one_line(exc)
    finally:
        path.unlink()


_toml_dir: Path | None = None


def registry_toml(data: bytes) -> None:
    """A registry file: validation must name problems, never crash. (The message lists
    every problem on its own line by design, so the one-line check does not apply.)"""
    global _toml_dir
    if _toml_dir is None:
        _toml_dir = Path(tempfile.mkdtemp(prefix="paircheck-fuzz-toml-"))
    path = _toml_dir / "r.toml"
    path.write_bytes(data)
    from paircheck._registry.load import load_registry

    try:
        load_registry(path)
    except InputError:
        pass


TARGETS: dict[str, Callable[[bytes], None]] = {
    "gguf_mem": gguf_mem,
    "gguf_split": gguf_split,
    "gguf_remote": gguf_remote,
    "hub_api": hub_api,
    "config_json": hf_config_json,
    "tokenizer_json": hf_tokenizer_json,
    "tokenizer_config_json": hf_tokenizer_config_json,
    "tokenizer_model": hf_tokenizer_model,
    "launch_cmd": launch_cmd,
    "modelfile": modelfile,
    "launch_files": launch_files,
    "registry_toml": registry_toml,
}
GGUF_TARGETS = ("gguf_mem", "gguf_split", "gguf_remote")


# -- seeds -------------------------------------------------------------------------------


def _hostile_ggufs() -> list[bytes]:
    """Headers whose counts claim far more than exists (2^62 arrays, 2^63 strings, 2^40 kvs)."""
    head = b"GGUF" + struct.pack("<I", 3) + struct.pack("<Q", 0)

    def key(k: bytes) -> bytes:
        return struct.pack("<Q", len(k)) + k

    out = [
        head + struct.pack("<Q", 1 << 40),
        head + struct.pack("<Q", 1) + key(b"a") + struct.pack("<IIQ", 9, 4, 1 << 62),
        head + struct.pack("<Q", 1) + key(b"a") + struct.pack("<IQ", 8, 1 << 63),
        head + struct.pack("<Q", 1) + key(b"a") + struct.pack("<IIQ", 9, 8, 1 << 62) + struct.pack("<Q", 1 << 63),
        head + struct.pack("<Q", 1) + key(b"a") + struct.pack("<IIQ", 9, 9, 3)
        + struct.pack("<IQ", 9, 1 << 60) * 3,
        b"GGUF" + struct.pack("<I", 3) + struct.pack("<Q", 1 << 40) + struct.pack("<Q", 0),
        b"GGUF" + struct.pack(">I", 3) + struct.pack(">Q", 0) + struct.pack(">Q", 1) + struct.pack(">Q", 1) + b"a"
        + struct.pack(">IIQ", 9, 8, 1 << 62),
    ]
    return out


def seeds(name: str) -> list[bytes]:
    if name in GGUF_TARGETS:
        import ggufgen

        out = _hostile_ggufs()
        tmp = Path(tempfile.mkdtemp(prefix="paircheck-fuzz-seed-"))
        for i, kwargs in enumerate([
            {"n_tokens": 40},
            {"model": "gpt2", "pre": "qwen2", "n_tokens": 300, "merges": True},
            {"n_tokens": 40, "endian": "big"},
            {"n_tokens": 40, "version": 2, "extra_kv": {"split.count": 3, "x.nested": [[1, 2], [3]]}},
            {"model": "bert", "n_tokens": 60},
        ]):
            try:
                out.append(ggufgen.write_vocab_gguf(tmp / f"s{i}.gguf", **kwargs).read_bytes())
            except Exception as exc:  # a generator option this checkout lacks: skip that seed
                print(f"seed {i} skipped: {exc}", file=sys.stderr)
        # The first 16 KiB of two real vocab files: real key layouts, truncated mid-tokens.
        for real in ("ggml-vocab-llama-spm.gguf", "ggml-vocab-phi-3.gguf"):
            path = ROOT / "fixtures" / "examples" / real
            if path.is_file():
                out.append(path.read_bytes()[: 16 << 10])
        return out
    if name == "hub_api":
        return [
            json.dumps({"id": "org/m", "sha": "0123456789abcdef0123456789abcdef01234567",
                        "siblings": [{"rfilename": "m-Q4_K_M.gguf"}, {"rfilename": "tokenizer.json"}]}).encode(),
            b'{"siblings": []}',
        ]
    if name == "config_json":
        nested = {**SMALL_CONFIG, "text_config": {"vocab_size": 50}}
        return [json.dumps(SMALL_CONFIG).encode(), json.dumps(nested).encode()]
    if name == "tokenizer_json":
        return [json.dumps(_small_tokenizer_json()).encode()]
    if name == "tokenizer_config_json":
        return [json.dumps(SMALL_TOK_CONFIG).encode()]
    if name == "tokenizer_model":
        return [_small_sentencepiece()]
    if name == "launch_cmd":
        return [
            b"llama-server -m t.gguf -md d.gguf --draft-max 16 -ngld 99 --spec-type draft",
            b"llama-speculative -m t.gguf -md d.gguf -c 4096 --override-kv tokenizer.ggml.add_bos_token=bool:false",
            b"vllm serve Qwen/Qwen2.5-7B --speculative-config '{\"model\": \"x\", \"num_speculative_tokens\": 5}'",
            b"LLAMA_ARG_MODEL=t.gguf llama-server -hf org/x:Q4_K_M -hfd org/y:Q8_0",
        ]
    if name == "launch_files":
        launch = ROOT / "fixtures" / "launch"
        kinds = {"docker-compose.yml": 0, "llama-server.yaml": 1, "vllm.yaml": 1, "llama-server.service": 2,
                 "serve.sh": 3, "Dockerfile": 4}
        return [bytes([kinds[p.name]]) + p.read_bytes() for p in sorted(launch.rglob("*")) if p.name in kinds]
    if name == "modelfile":
        return [
            b'FROM ./t.gguf\nPARAMETER num_ctx 4096\nTEMPLATE """{{ .Prompt }}\n"""\nSYSTEM hi\n',
            b"FROM llama3\nDRAFT ./d.gguf\nPARAMETER stop <|eot_id|>\n",
        ]
    if name == "registry_toml":
        reg = ROOT / "registry"
        files = sorted(reg.glob("*.toml")) if reg.is_dir() else []
        return [f.read_bytes()[:8192] for f in files[:3]] or [b'[[pair]]\nid = "x"\n']
    raise KeyError(name)
