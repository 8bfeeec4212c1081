"""Facts several engines' rules share: the three vocab sizes, the drafter's kind, helpers.

Pure functions of ModelDescriptions. A value that cannot be known from what was read is
None, never a guess.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from paircheck.findings import FAIL, Finding, Rule
from paircheck.model import ModelDescription
from paircheck.token_display import show


def result(rule: Rule, status: str, message: str, **details: object) -> Finding:
    return rule.result(status, message, **details)


def finding(rule: Rule, message: str, **details: object) -> Finding:
    """A warning: it does not change the verdict."""
    return rule.warn(message, **details)


def shell_path(desc: ModelDescription) -> str:
    """The model as a launch line names it (as its source says), quoted for a shell."""
    return shlex.quote(desc.origin.command_name)


# llama-server's options naming the target and the draft: (a file, a Hub GGUF, a URL).
_SERVER_FLAGS = {"target": ("-m", "-hf", "-mu"), "draft": ("-md", "-hfd", None)}


def server_model(desc: ModelDescription, role: str) -> tuple[list[str], str]:
    """How a llama-server launch line names ``desc`` as the target or the draft:
    (the steps to run first, as prose then commands; the option and its value). A model
    llama-server cannot open as named (a Hugging Face folder, a draft at a URL) is first
    made into a local GGUF, as its source says (``origin.local_copy``)."""
    file_flag, hub_flag, url_flag = _SERVER_FLAGS[role]
    origin = desc.origin
    if origin.hf_ref is not None:
        return [], f"{hub_flag} {shlex.quote(origin.hf_ref)}"
    if origin.server_file is not None:
        return [], f"{file_flag} {shell_path(desc)}"
    if url_flag is not None and origin.model_url is not None:
        return [], f"{url_flag} {shlex.quote(origin.model_url)}"
    copy = origin.local_copy
    if copy is not None:
        return [f"The {role}: {copy.why}:", *copy.commands], f"{file_flag} {shlex.quote(copy.file)}"
    return [], f"{file_flag} {shell_path(desc)}"


def llama_server_line(target: ModelDescription, draft: ModelDescription | None, options: str) -> list[str]:
    """The llama-server launch line (with ``options``), preceded by whatever must run first
    so that llama-server can open both models as the line names them."""
    steps, t_arg = server_model(target, "target")
    line = f"llama-server {t_arg}"
    if draft is not None:
        d_steps, d_arg = server_model(draft, "draft")
        if draft.origin.local_copy is None or draft.origin.local_copy != target.origin.local_copy:
            steps += d_steps  # one model as both sides is made once
        line += f" {d_arg}"
    if steps:
        steps.append("Then:")
    return [*steps, f"{line} {options}".rstrip()]


def architecture(desc: ModelDescription) -> str:
    return desc.identity.architecture or ""


def arch_value(desc: ModelDescription, suffix: str) -> Any:
    """``<general.architecture>.<suffix>`` as stored, or None."""
    arch = architecture(desc)
    return desc.metadata.get(f"{arch}.{suffix}") if arch else None


def tensor_names(desc: ModelDescription) -> frozenset[str] | None:
    """Names of the file's tensors when they were read, else None (unknown)."""
    tensors = desc.metadata.tensors
    if tensors is None:
        return None
    return frozenset(t.name for t in tensors)


@dataclass(frozen=True)
class Rows:
    """Embedding rows (config ``vocab_size``, or the ``token_embd`` tensor's row count)."""

    value: int | None
    source: str  # where the number came from, or why it is unknown


def embedding_rows(desc: ModelDescription) -> Rows:
    if desc.hf is not None and desc.hf.config_vocab_size is not None:
        return Rows(desc.hf.config_vocab_size, "config.json vocab_size")
    for tensor in desc.metadata.tensors or ():
        if tensor.name == "token_embd.weight" and len(tensor.shape) >= 2:
            # GGUF lists dimensions fastest-first: (n_embd, n_vocab).
            return Rows(int(tensor.shape[1]), "token_embd.weight rows")
    stored = arch_value(desc, "vocab_size")
    if isinstance(stored, int) and not isinstance(stored, bool):
        return Rows(stored, f"{architecture(desc)}.vocab_size")
    if desc.metadata.tensors is None:
        return Rows(None, "embedding rows unknown: tensor infos were not read")
    if desc.metadata.tensor_count == 0 and desc.vocab.n_tokens:
        # A vocab-only file: convert_hf_to_gguf.py pads the token list to the config's
        # vocab_size, so the token count is the row count the model file would have.
        return Rows(desc.vocab.n_tokens, "token count (vocab-only file; the converter pads tokens to vocab_size)")
    return Rows(None, "embedding rows unknown: no token_embd.weight tensor")


def tokenizer_len(desc: ModelDescription) -> int:
    """len(tokenizer): base plus added tokens (the GGUF token list has all of them)."""
    if desc.hf is not None and desc.hf.tokenizer_len is not None:
        return desc.hf.tokenizer_len
    return desc.vocab.n_tokens


def base_vocab_size(desc: ModelDescription) -> int | None:
    """tokenizer.vocab_size (without added tokens); only a Hugging Face folder has it."""
    return desc.hf.base_vocab_size if desc.hf is not None else None


@dataclass(frozen=True)
class TextComparison:
    first_difference: int | None  # first id (from 0) whose texts differ, None if all equal
    compared: int
    target_text: str = ""
    draft_text: str = ""


def compare_texts(target: ModelDescription, draft: ModelDescription) -> TextComparison | None:
    """Token texts compared from id 0 over the shared range; None if either has none."""
    t, d = target.vocab.texts, draft.vocab.texts
    if not t or not d:
        return None
    end = min(len(t), len(d))
    if t[:end] == d[:end]:
        return TextComparison(None, end)
    for i in range(end):
        if t[i] != d[i]:
            return TextComparison(i, end, show(t[i]), show(d[i]))
    return TextComparison(None, end)  # pragma: no cover - slices differ so a loop hit exists


# Drafter classes. "model" is an independent draft LM; the rest are heads trained for one target.
MODEL, EAGLE, EAGLE3, DFLASH, DSPARK, MTP_HEAD, MEDUSA, MLP_SPECULATOR = (
    "model", "eagle", "eagle3", "dflash", "dspark", "mtp-head", "medusa", "mlp_speculator",
)
_HEAD_KINDS = frozenset({EAGLE, EAGLE3, DFLASH, DSPARK, MTP_HEAD, MEDUSA, MLP_SPECULATOR})


def drafter_kind(desc: ModelDescription) -> str:
    """What kind of drafter a file or folder is, from its declared architecture."""
    arch = architecture(desc).lower()
    if arch == "eagle3":
        return EAGLE3
    if arch == "dflash":
        names = tensor_names(desc)
        return DSPARK if names is not None and "markov_w1.weight" in names else DFLASH
    if arch.endswith("-assistant") or arch.endswith("_mtp"):
        return MTP_HEAD
    if desc.hf is not None:
        words = " ".join([desc.hf.model_type or "", *desc.hf.architectures]).lower()
        for needle, kind in (
            ("eagle3", EAGLE3), ("dspark", DSPARK), ("dflash", DFLASH), ("eagle", EAGLE),
            ("medusa", MEDUSA), ("mlp_speculator", MLP_SPECULATOR), ("mlpspeculator", MLP_SPECULATOR),
            ("assistant", MTP_HEAD), ("_mtp", MTP_HEAD), ("mtpmodel", MTP_HEAD),
        ):
            if needle in words:
                return kind
    return MODEL


def is_head(desc: ModelDescription) -> bool:
    return drafter_kind(desc) in _HEAD_KINDS


# Architectures whose state is recurrent or hybrid (llama.cpp names): they cannot drop
# rejected draft tokens the way an attention KV cache can.
RECURRENT_ARCHITECTURES = frozenset({
    "mamba", "mamba2", "rwkv6", "rwkv6qwen2", "rwkv7", "arwkv7", "jamba", "falcon-h1",
    "granitehybrid", "nemotron-h", "nemotron_h_moe", "lfm2", "lfm2moe", "qwen3next", "qwen35",
    "qwen35moe", "plamo2", "kimi-linear",
})


def is_recurrent(desc: ModelDescription) -> bool:
    if architecture(desc).lower() in RECURRENT_ARCHITECTURES:
        return True
    if desc.hf is not None:
        mt = (desc.hf.model_type or "").lower()
        return any(word in mt for word in ("mamba", "rwkv", "jamba", "qwen3_next", "qwen3_5", "lfm2"))
    return False


def rows_detail(target: ModelDescription, draft: ModelDescription) -> tuple[Rows, Rows]:
    return embedding_rows(target), embedding_rows(draft)


def kind_check(rule: Rule, draft: ModelDescription, allowed: tuple[str, ...], what: str, instead: str) -> Finding:
    """Pass when the draft's class is one this method runs; say what it is otherwise."""
    from paircheck.findings import PASS

    kind = drafter_kind(draft)
    if kind in allowed:
        return result(rule, PASS, f"the draft is {'an independent model' if kind == MODEL else 'a ' + kind + ' head'}",
                      drafter=kind)
    shown = "an independent model" if kind == MODEL else f"a {kind} head"
    return result(rule, FAIL, f"the draft is {shown}; {what} {instead}", drafter=kind)
