"""A stand-in for the Hugging Face Hub, for ``paircheck scan --hub``: a real HTTP server on
127.0.0.1 (tests/httpserver.py) answering the Hub API's calls in their real shapes, serving
real tokenizer and GGUF bytes.

The bytes come from llama.cpp's real vocab files (tests/corpus.py): every Qwen GGUF carries the
real Qwen2 vocabulary (ggml-vocab-qwen2.gguf, 151936 tokens), padded with ``[PAD<id>]`` tokens
to 152064 for the 7B and 14B as llama.cpp's converter pads them to ``config.json``'s
``vocab_size``, and the tensor infos of the real model (names and shapes as llama.cpp's loader
creates them for Qwen2.5 at the published sizes), so the scan models speed and memory from
them. The tensor data is a hole (a sparse file): range reads never touch it, and the Hub's
sizes are the real ones. The Hugging Face repos hold tokenizer.json, tokenizer_config.json and
config.json rebuilt from the same vocabulary (tests/hf_build.py).

The Hub it stands for:

* the target family: Qwen2.5 from Qwen, instruct, base and coder variants at 0.5B to 14B, as
  Hugging Face repos and as GGUF repos with many quantization files (and a split fp16);
* a sibling with differently padded embeddings: the 0.5B to 3B have 151936 token rows, the 7B
  and 14B 152064 (llama.cpp allows 128 apart, vLLM none);
* a third-party GGUF repo of a sibling (bartowski) whose Q4_K_M is cut: its header declares
  more tensor data than the file holds;
* a gated repo (a GGUF of the 0.5B, "manual" approval, token ``secret``);
* an unrelated family with a similar name (``qwen-fans/Qwen2.5-Lite-0.5B-GGUF``: a Llama SPM
  vocabulary) and a gated Llama repo from another publisher;
* EAGLE-3 heads that name their target as base model: one for the 14B (hidden size 5120) and
  one mis-tagged for it that was trained for the 7B (hidden size 3584).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fit_shapes import QWEN25, Shape, T, _attn, _ffn, _name, _pick_type
from fit_shapes import qwen25 as qwen25_shape
from gguf import GGUFValueType as VT
from gguf_mutate import TensorSpec, build_with_tensors, make_kv, read_kvs, set_tokens, tensor_nbytes, token_texts
from hf_build import build_qwen2_folder
from httpserver import TestServer

ALIGN = 32
QUANTS = ("Q2_K", "Q3_K_M", "Q4_0", "Q4_K_M", "Q5_0", "Q5_K_M", "Q6_K", "Q8_0")
TOKEN = "secret"  # the token that has been granted the gated repo


def eagle3_shape(hidden: int, layers: list[int], n_vocab: int) -> Shape:
    """An EAGLE-3 head as llama.cpp's converter writes one (architecture eagle3): one decoder
    layer over 3 x the target's hidden states, its target layers and hidden size."""
    s = Shape("EAGLE3", "eagle3", n_vocab, {
        "block_count": 1, "context_length": 32768, "embedding_length": hidden, "feed_forward_length": hidden * 3,
        "attention.head_count": hidden // 128, "attention.head_count_kv": 8, "rope.freq_base": 1000000.0,
        "attention.layer_norm_rms_epsilon": 1e-6, "target_hidden_size": hidden, "target_layers": layers,
    })  # fmt: skip
    s.add("fc.weight", (hidden * 3, hidden))
    _attn(s, 0, hidden * 2, hidden, 8 * 128)
    _ffn(s, 0, hidden, hidden * 3)
    s.add(_name(T.OUTPUT_NORM), (hidden,))
    return s


def write_gguf(vocab: Path, dst: Path, shape: Shape, general: dict[str, str], keep: float | None = None) -> Path:
    """``vocab``'s real tokenizer keys (padded with [PAD<id>] to the shape's rows) with the shape's
    architecture keys and tensor infos; the data is a hole up to the file's full size, or the
    file stops at ``keep`` of it (a cut upload)."""
    meta = read_kvs(vocab)
    old_arch = meta.get("general.architecture").decode().decode()  # type: ignore[union-attr]
    meta.kvs = [kv for kv in meta.kvs if not kv.key.startswith(f"{old_arch}.")]
    texts = token_texts(meta)
    texts += [f"[PAD{i}]".encode() for i in range(len(texts), shape.n_vocab)]
    set_tokens(meta, texts)
    meta.set(make_kv("general.architecture", shape.arch, VT.STRING))
    for key, value in general.items():
        meta.set(make_kv(f"general.{key}", value, VT.STRING))
    meta.set(make_kv("general.file_type", 15, VT.UINT32))
    for key, value in shape.keys.items():
        full = f"{shape.arch}.{key}"
        if isinstance(value, list):
            meta.set(make_kv(full, value, VT.ARRAY, VT.INT32))
        elif isinstance(value, float):
            meta.set(make_kv(full, value, VT.FLOAT32))
        else:
            meta.set(make_kv(full, value, VT.UINT32))
    tensors = [TensorSpec(name.encode(), list(ne), int(_pick_type(ne, role, "q4_k_m"))) for name, ne, role in
               shape.tensors]
    layout = build_with_tensors(meta, tensors, ALIGN, max_written=-1)
    total = layout.data_start + sum(-(-(tensor_nbytes(t) or 0) // ALIGN) * ALIGN for t in tensors)
    dst.write_bytes(layout.data)
    with open(dst, "r+b") as out:
        out.truncate(int(total * keep) if keep else total)
    return dst


def gguf_info(base: str | None, params: int, downloads: int, gated: str | bool = False) -> dict[str, Any]:
    tags = ["gguf", "text-generation", "conversational", "en", "license:apache-2.0"]
    if base:
        tags += [f"base_model:{base}", f"base_model:quantized:{base}"]
    return {"library_name": "gguf", "tags": tags, "downloads": downloads, "gated": gated,
            "gguf": {"total": params, "architecture": "qwen2", "context_length": 32768},
            "cardData": {"base_model": base, "license": "apache-2.0"} if base else {"license": "apache-2.0"}}


def hf_info(base: str | None, params: int, downloads: int, relation: str = "finetune") -> dict[str, Any]:
    tags = ["transformers", "safetensors", "qwen2", "text-generation", "conversational", "en",
            "license:apache-2.0"]
    if base:
        tags += [f"base_model:{base}", f"base_model:{relation}:{base}"]
    return {"library_name": "transformers", "tags": tags, "downloads": downloads, "pipeline_tag": "text-generation",
            "safetensors": {"parameters": {"BF16": params}, "total": params},
            "cardData": {"base_model": base, "license": "apache-2.0"} if base else {"license": "apache-2.0"}}


def head_info(base: str, downloads: int) -> dict[str, Any]:
    return {"library_name": "gguf", "tags": ["gguf", "eagle3", "speculative-decoding", f"base_model:{base}",
                                             f"base_model:adapter:{base}"], "downloads": downloads}


@dataclass
class Standin:
    """The built files (for the expected verdicts: the same bytes, read locally) and the repos."""

    folder: Path
    gguf: dict[str, Path] = field(default_factory=dict)  # label -> local GGUF
    repos: dict[str, tuple[dict[str, Path | bytes], dict[str, Any], str | None]] = field(default_factory=dict)

    def add(self, repo: str, files: dict[str, Path | bytes], info: dict[str, Any], token: str | None = None) -> None:
        self.repos[repo] = (files, info, token)

    def serve(self, server: TestServer) -> None:
        for repo, (files, info, token) in self.repos.items():
            server.add_repo(repo, files, gated_token=token, info=info,
                            commit=hashlib.sha1(repo.encode()).hexdigest())

    def local(self, repo: str, file: str) -> Path:
        """The local path of the bytes the stand-in serves as REPO/FILE."""
        content = self.repos[repo][0][file]
        assert isinstance(content, Path)
        return content


def _quant_files(stem: str, path: Path, quants: tuple[str, ...] = QUANTS) -> dict[str, Path | bytes]:
    return {f"{stem}-{q.lower()}.gguf": path for q in quants}


def build(folder: Path, real_vocab: Callable[[str], Path]) -> Standin:
    """Write the stand-in's files under ``folder`` and describe its repos (about 10 s, 40 MB)."""
    folder.mkdir(parents=True, exist_ok=True)
    qwen, spm = real_vocab("qwen2"), real_vocab("llama-spm")
    st = Standin(folder)
    st.gguf["vocab"] = qwen  # the real vocab-only file itself: small enough to download in a test
    for size in QWEN25:
        st.gguf[size] = write_gguf(qwen, folder / f"qwen2.5-{size.lower()}-instruct.gguf", qwen25_shape(size), {
            "name": f"Qwen2.5 {size} Instruct", "basename": "Qwen2.5", "size_label": size, "finetune": "Instruct"})
    st.gguf["coder-1.5B"] = write_gguf(qwen, folder / "qwen2.5-coder-1.5b-instruct.gguf", qwen25_shape("1.5B"), {
        "name": "Qwen2.5 Coder 1.5B Instruct", "basename": "Qwen2.5-Coder", "size_label": "1.5B",
        "finetune": "Instruct"})
    st.gguf["cut-1.5B"] = write_gguf(qwen, folder / "cut-qwen2.5-1.5b-instruct.gguf", qwen25_shape("1.5B"), {
        "name": "Qwen2.5 1.5B Instruct", "basename": "Qwen2.5", "size_label": "1.5B", "finetune": "Instruct"},
        keep=0.4)
    st.gguf["lite"] = write_gguf(spm, folder / "qwen2.5-lite-0.5b.gguf", qwen25_shape("0.5B", "llama", 32000), {
        "name": "Qwen2.5 Lite 0.5B", "basename": "Qwen2.5-Lite", "size_label": "0.5B"})
    st.gguf["eagle3-14B"] = write_gguf(qwen, folder / "eagle3-14b.gguf", eagle3_shape(5120, [2, 23, 44], 152064), {
        "name": "Qwen2.5 14B Instruct EAGLE3", "basename": "Qwen2.5-EAGLE3", "size_label": "14B"})
    st.gguf["eagle3-7B"] = write_gguf(qwen, folder / "eagle3-7b.gguf", eagle3_shape(3584, [2, 13, 24], 152064), {
        "name": "Qwen2.5 7B Instruct EAGLE3", "basename": "Qwen2.5-EAGLE3", "size_label": "7B"})
    hf: dict[int, Path] = {}
    for rows in (151936, 152064):
        hf[rows] = build_qwen2_folder(qwen, folder / f"hf-{rows}", rows)

    def hf_files(size: str, name: str) -> dict[str, Path | bytes]:
        rows = QWEN25[size][5]
        config = (hf[rows] / "config.json").read_text().replace("Qwen2.5-0.5B-Instruct", name)
        return {"config.json": config.encode(), "tokenizer.json": hf[rows] / "tokenizer.json",
                "tokenizer_config.json": hf[rows] / "tokenizer_config.json", "README.md": b"# " + name.encode()}

    params = {size: v[7] for size, v in QWEN25.items()}
    downloads = {"0.5B": 900_000, "1.5B": 700_000, "3B": 400_000, "7B": 2_000_000, "14B": 600_000}
    for size in QWEN25:
        base, inst = f"Qwen/Qwen2.5-{size}", f"Qwen/Qwen2.5-{size}-Instruct"
        st.add(base, hf_files(size, base.split("/")[1]), hf_info(None, params[size], downloads[size] // 2))
        st.add(inst, hf_files(size, inst.split("/")[1]), hf_info(base, params[size], downloads[size]))
        if size == "1.5B":
            continue  # the publisher has no GGUF of it: a quantizer does (cut)
        files = _quant_files(f"qwen2.5-{size.lower()}-instruct", st.gguf[size])
        if size == "14B":
            for i in (1, 2, 3):  # a split fp16, as large uploads are
                files[f"qwen2.5-14b-instruct-fp16-{i:05d}-of-00003.gguf"] = st.gguf[size]
        files["README.md"] = b"# GGUF"
        st.add(f"{inst}-GGUF", files, gguf_info(inst, params[size], downloads[size] // 3))
    coder = "Qwen/Qwen2.5-Coder-1.5B-Instruct"
    st.add(coder, hf_files("1.5B", coder.split("/")[1]), hf_info("Qwen/Qwen2.5-Coder-1.5B", params["1.5B"], 300_000))
    st.add(f"{coder}-GGUF", _quant_files("qwen2.5-coder-1.5b-instruct", st.gguf["coder-1.5B"]),
           gguf_info(coder, params["1.5B"], 100_000))
    st.add("bartowski/Qwen2.5-1.5B-Instruct-GGUF",
           {"Qwen2.5-1.5B-Instruct-Q4_K_M.gguf": st.gguf["cut-1.5B"], "Qwen2.5-1.5B-Instruct-Q8_0.gguf":
            st.gguf["1.5B"], "Qwen2.5-1.5B-Instruct-IQ4_XS.gguf": st.gguf["1.5B"]},
           gguf_info("Qwen/Qwen2.5-1.5B-Instruct", params["1.5B"], 250_000))
    st.add("lmstudio-community/Qwen2.5-0.5B-Instruct-GGUF",
           _quant_files("Qwen2.5-0.5B-Instruct", st.gguf["0.5B"], ("Q4_K_M", "Q8_0")),
           gguf_info("Qwen/Qwen2.5-0.5B-Instruct", params["0.5B"], 50_000, gated="manual"), token=TOKEN)
    st.add("qwen-fans/Qwen2.5-Lite-0.5B-GGUF", {"qwen2.5-lite-0.5b-q4_k_m.gguf": st.gguf["lite"]},
           gguf_info(None, params["0.5B"], 20_000))
    st.add("meta-llama/Llama-3.2-1B-Instruct", {"config.json": b"{}", "tokenizer.json": b"{}"},
           {**hf_info(None, 1_235_814_400, 3_000_000), "gated": "manual"}, token="meta")
    st.add("AngelSlim/Qwen2.5-14B-Instruct-EAGLE3-GGUF",
           {"qwen2.5-14b-instruct-eagle3-q8_0.gguf": st.gguf["eagle3-14B"]},
           head_info("Qwen/Qwen2.5-14B-Instruct", 8_000))
    st.add("someone/Qwen2.5-eagle3-head-GGUF", {"eagle3-q8_0.gguf": st.gguf["eagle3-7B"]},
           head_info("Qwen/Qwen2.5-14B-Instruct", 500))  # trained for the 7B, tagged for the 14B
    return st


def main() -> None:
    """Serve the stand-in until interrupted: ``python tests/hub_standin.py`` prints its URL, for
    ``HF_ENDPOINT=URL paircheck scan --hub ...`` (the README's example)."""
    import argparse
    import sys
    import tempfile
    import time

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--seconds", type=float, default=3600, help="how long to serve")
    opts = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fixtures"))
    from corpus import corpus_dir

    vocab = corpus_dir()
    with tempfile.TemporaryDirectory(prefix="paircheck-hub-") as tmp, TestServer() as server:
        build(Path(tmp), lambda name: vocab / f"ggml-vocab-{name}.gguf").serve(server)
        print(f"the stand-in Hub serves {len(server.repos)} repos at {server.url} (HF_ENDPOINT={server.url})",
              flush=True)
        time.sleep(opts.seconds)


if __name__ == "__main__":
    main()
