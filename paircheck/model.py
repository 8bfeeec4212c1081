"""The normalized description of one model: what every source produces and rules read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from paircheck._source.gguf_reader import GGUFMetadata
from paircheck.vocab import LlamaVocab


@dataclass(frozen=True)
class Identity:
    """What the model says it is (for display and the registry), never for verdicts."""

    architecture: str | None = None
    name: str | None = None
    basename: str | None = None
    size_label: str | None = None
    finetune: str | None = None
    organization: str | None = None
    repo: str | None = None  # a Hub repo id or URL, when known
    base_models: tuple[str, ...] = ()


@dataclass(frozen=True)
class HFFacts:
    """Hugging Face numbers other engines compare (see ecosystem.md, section 0.1)."""

    config_vocab_size: int | None = None  # embedding rows
    tokenizer_len: int | None = None  # len(tokenizer): base plus added tokens
    base_vocab_size: int | None = None  # tokenizer.vocab_size: without added tokens
    model_type: str | None = None
    architectures: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class ModelDescription:
    """One side of a pair, normalized.

    ``metadata`` holds GGUF-style keys: read from the file for a GGUF, or what
    llama.cpp's converter would write for a Hugging Face folder. ``vocab`` is what
    llama.cpp's loader derives from them.
    """

    location: str  # what the user gave
    source_kind: str  # "gguf", "hf-folder", "hub", "remote-gguf"
    metadata: GGUFMetadata
    vocab: LlamaVocab
    identity: Identity
    resolved_path: str | None = None  # the file or folder actually read
    metadata_bytes: int = 0
    hf: HFFacts | None = None
    # Caveats a source wants the user to see (e.g. a converter choice it cannot know).
    notes: list[str] = field(default_factory=list)
    # For a remote read: requests made and bytes received (a remote.FetchStats).
    fetch: Any = None

    @property
    def display_name(self) -> str:
        ident = self.identity
        return ident.name or ident.basename or self.location
