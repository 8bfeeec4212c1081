"""Source: a local Hugging Face model folder, described as llama.cpp would see it after
``convert_hf_to_gguf.py`` (llama-cpp-python 0.3.36), plus the HF-native numbers.

This module reads the folder (config.json, tokenizer_config.json, the safetensors headers)
and says how to get a GGUF of it; what the converter would write is ``hf_convert``'s.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from paircheck._source.hf_convert import convert_folder, json_file
from paircheck._source.hf_tensors import folder_tensors
from paircheck._source.interface import ReadOptions
from paircheck._source.safetensors_header import check_folder as check_safetensors_folder
from paircheck._source.split_name import is_first_or_whole
from paircheck.errors import InputError
from paircheck.model import (
    Download,
    GGUFMetadata,
    HFFacts,
    Identity,
    LocalCopy,
    ModelDescription,
    Origin,
    Override,
    TensorInfo,
)
from paircheck.vocab import derive_llama_vocab

# Eight times the largest real vocabulary (262,144 tokens): the padding is bounded.
MAX_CONFIG_VOCAB = 1 << 21


HF_FILES = (
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "generation_config.json",
    "tokenizer.model",
    "added_tokens.json",
    # The chat template, where newer repos keep it instead of tokenizer_config.json (PW002).
    "chat_template.jinja",
    "chat_template.json",
)


def is_hf_folder(path: Path) -> bool:
    return path.is_dir() and any(
        (path / name).is_file() for name in ("config.json", "tokenizer.json", "tokenizer.model")
    )


def describe_hf_folder(
    folder: Path,
    location: str,
    source_kind: str = "hf-folder",
    overrides: Mapping[str, Override] | None = None,
    repo_id: str | None = None,
) -> ModelDescription:
    config = json_file(folder / "config.json", location) or {}
    tok_config = json_file(folder / "tokenizer_config.json", location)
    tok_json_path = folder / "tokenizer.json"
    if not (folder / "tokenizer.model").is_file() and not tok_json_path.is_file():
        raise InputError(location, "no tokenizer.json or tokenizer.model in this folder: cannot tell its vocabulary")
    nested = config.get("text_config")
    text_config: dict[str, Any] = nested if isinstance(nested, dict) else {}
    config_vocab = config.get("vocab_size") or text_config.get("vocab_size")
    config_vocab = config_vocab if isinstance(config_vocab, int) and config_vocab > 0 else None
    if config_vocab is not None and config_vocab > MAX_CONFIG_VOCAB:
        # The converter pads the vocabulary up to vocab_size: a hostile number would make
        # paircheck allocate that many padding tokens (found by fuzz/).
        limit = f"{MAX_CONFIG_VOCAB:,}"
        raise InputError(location, f"config.json vocab_size {config_vocab} is implausible (more than {limit})")

    conv = convert_folder(folder, location, config, tok_config, config_vocab, repo_id)
    kv, notes, arch, base_vocab, full_vocab = conv.kv, conv.notes, conv.arch, conv.base_vocab, conv.full_vocab
    meta = GGUFMetadata(version=3, byte_order="<", tensor_count=0, kv=kv, kv_end=0)
    # The weights as the safetensors loader checks them (headers only): a cut or missing shard.
    meta.tensor_error = next(check_safetensors_folder(folder, location), None)

    hf = HFFacts(
        config_vocab_size=config_vocab,
        tokenizer_len=len(full_vocab) if full_vocab is not None else None,
        base_vocab_size=len(base_vocab) if base_vocab is not None else None,
        model_type=config.get("model_type") if isinstance(config.get("model_type"), str) else None,
        architectures=tuple(a for a in config.get("architectures") or () if isinstance(a, str)),
        # The whole config.json: engines read keys the converter ignores (MTP layer counts,
        # vision_config, model_type rewrites).
        extra={"tokenizer_class": (tok_config or {}).get("tokenizer_class"), "config": config},
    )
    notes.append(
        "judged as the GGUF that convert_hf_to_gguf.py (llama.cpp of llama-cpp-python 0.3.36) would write "
        "from this folder"
    )
    identity = Identity(
        architecture=arch,
        name=repo_id or folder.name,
        repo=repo_id,
        base_models=(),
    )
    # `hf download` resumes: it fetches only what is missing or cut, into the Hub cache for
    # a repo read from the Hub, into the folder itself for a local one.
    if repo_id is not None:
        download = Download((f"hf download {repo_id}", f"huggingface-cli download {repo_id}"), resumes=True)
    else:
        local = f"hf download REPO --local-dir {shlex.quote(location)}"
        download = Download((local,), resumes=True, placeholder="REPO: the model's Hub id")
    return ModelDescription(
        location=location,
        source_kind=source_kind,
        metadata=meta,
        vocab=derive_llama_vocab(meta, overrides),
        identity=identity,
        origin=Origin(command_name=location, form="hf-folder", download=download,
                      local_copy=_conversion(location, folder, repo_id)),
        resolved_path=str(folder),
        hf=hf,
        notes=notes,
    )


def _conversion(location: str, folder: Path, repo_id: str | None) -> LocalCopy:
    """llama-server opens GGUF files only: the commands that write one from this folder
    (llama.cpp's converter, which needs the weights: a Hub repo is downloaded whole first)."""
    why = ("llama-server opens GGUF files only, not a Hugging Face folder: convert it with "
           "convert_hf_to_gguf.py from llama.cpp's repository (or use a GGUF of the same model)")
    if repo_id is not None:
        name = repo_id.rsplit("/", 1)[-1]
        commands: tuple[str, ...] = (f"hf download {repo_id} --local-dir {shlex.quote(name)}",
                                     f"python convert_hf_to_gguf.py {shlex.quote(name)} --outfile "
                                     f"{shlex.quote(name + '.gguf')}")
    else:
        name = folder.resolve().name or "model"
        commands = (f"python convert_hf_to_gguf.py {shlex.quote(location)} --outfile {shlex.quote(name + '.gguf')}",)
    return LocalCopy(why, commands, name + ".gguf")


class HFFolderSource:
    """A Hugging Face model folder: judged as the GGUF the pinned converter would write."""

    name = "hf-folder"

    def claims(self, spec: str) -> bool:
        return Path(spec).expanduser().is_dir()

    def describe(self, spec: str, options: ReadOptions) -> ModelDescription:
        path = Path(spec).expanduser()
        if not is_hf_folder(path):
            ggufs = sorted(p.name for p in path.glob("*.gguf") if is_first_or_whole(p.name))
            if ggufs:
                # A folder of models, not one: say what is in it and which command takes a folder.
                some = ", ".join(ggufs[:3]) + (", ..." if len(ggufs) > 3 else "")
                raise InputError(spec, f"is a directory of {len(ggufs)} GGUF file{'s' if len(ggufs) != 1 else ''} "
                                 f"({some}), not one model: give one of them, or rank them all as drafts "
                                 "with `paircheck scan TARGET FOLDER`")
            raise InputError(
                spec,
                "is a directory without config.json, tokenizer.json or tokenizer.model "
                "(expected a .gguf file or a Hugging Face model folder)",
            )
        return describe_hf_folder(path, spec, self.name, options.overrides)

    def tensors(self, desc: ModelDescription) -> list[TensorInfo]:
        return folder_tensors(Path(desc.resolved_path or desc.location), desc.location)
