"""Small model descriptions built in memory, for the engine rules' fast tests.

The engine rules are pure functions of two ModelDescriptions; the tests in tests/_engine
build those from real GGUF and Hugging Face files, which is what a rule must agree with but
too slow to run hundreds of times (the mutation run tests every planted bug against its
tests). These describe only what a rule reads: a vocabulary, a few GGUF keys, tensor names,
Hugging Face facts. No files, no processes.
"""

from __future__ import annotations

from typing import Any

from paircheck import llamacpp_tables as T
from paircheck.model import (
    GGUFMetadata,
    HFFacts,
    Identity,
    LlamaVocab,
    LocalCopy,
    ModelDescription,
    Origin,
    TensorInfo,
)

F32 = 0  # ggml type of a float32 tensor


def texts(n: int, prefix: str = "t") -> list[bytes]:
    return [f"{prefix}{i}".encode() for i in range(n)]


def vocab(n: int = 300, *, vocab_type: int = T.VOCAB_BPE, bos: int = 1, eos: int = 2, add_bos: bool = False,
          add_eos: bool = False, token_texts: list[bytes] | None = None, **more: Any) -> LlamaVocab:
    return LlamaVocab(
        tokenizer_model="gpt2" if vocab_type == T.VOCAB_BPE else "llama", pre="qwen2", vocab_type=vocab_type,
        n_tokens=n, bos_id=bos, eos_id=eos, add_bos=add_bos, add_eos=add_eos,
        texts=token_texts if token_texts is not None else texts(n), **more)


def tensors(names: list[str] | tuple[str, ...], rows: int | None = None, n_embd: int = 64) -> list[TensorInfo]:
    out = [TensorInfo(name, (n_embd, n_embd), F32, 0) for name in names]
    if rows is not None:
        out.insert(0, TensorInfo("token_embd.weight", (n_embd, rows), F32, 0))
    return out


def desc(name: str = "model.gguf", *, arch: str | None = "llama", v: LlamaVocab | None = None,
         kv: dict[str, Any] | None = None, tensor_list: list[TensorInfo] | None = None,
         hf: HFFacts | None = None, form: str = "gguf", size_label: str | None = None,
         local_copy: LocalCopy | None = None, hf_ref: str | None = None, server_file: str | None = "same",
         source_kind: str = "gguf") -> ModelDescription:
    """A model: ``kv`` holds GGUF keys (values only; types are not read by the rules)."""
    keys = {key: (0, value) for key, value in (kv or {}).items()}
    if arch is not None:
        keys.setdefault("general.architecture", (0, arch))
    meta = GGUFMetadata(3, "<", len(tensor_list or ()), keys, 0, tensors=tensor_list)
    origin = Origin(command_name=name, form=form, server_file=name if server_file == "same" else server_file,
                    hf_ref=hf_ref, local_copy=local_copy)
    return ModelDescription(location=name, source_kind=source_kind, metadata=meta,
                            vocab=v if v is not None else vocab(), identity=Identity(architecture=arch, name=name,
                                                                                     size_label=size_label),
                            origin=origin, resolved_path=None, hf=hf)


def hf_desc(name: str = "org/model", *, model_type: str = "qwen2", archs: tuple[str, ...] = ("Qwen2ForCausalLM",),
            rows: int | None = 300, tok_len: int | None = 300, base: int | None = 290,
            config: dict[str, Any] | None = None, arch: str | None = "qwen2", v: LlamaVocab | None = None,
            tensor_list: list[TensorInfo] | None = None, **extra: Any) -> ModelDescription:
    """A Hugging Face folder: its three vocabulary sizes, model type and config.json."""
    cfg = {"model_type": model_type, "architectures": list(archs), **(config or {})}
    if rows is not None:
        cfg.setdefault("vocab_size", rows)
    facts = HFFacts(rows, tok_len, base, model_type, archs, {"config": cfg, **extra})
    return desc(name, arch=arch, v=v if v is not None else vocab(tok_len or 300), hf=facts, form="hf-folder",
                server_file=None, source_kind="hf-folder", tensor_list=tensor_list)


def statuses(report: Any) -> list[tuple[str, str]]:
    """(code, status) of each check, in order."""
    return [(c.code, c.status) for c in report.checks]
