"""What a source is: something that recognises a model spec, describes that model, and
gives what else can be read of it.

One module per source (``gguf_file``: a local GGUF or split GGUF; ``hf_folder``: a
Hugging Face model folder; ``remote``: a GGUF over HTTP range reads; ``hub``: a Hub repo
id, from the local cache first). ``resolve.describe`` asks each source in turn whether
it claims a spec. Sources know nothing of rules or output: they return a
ModelDescription (whose ``origin`` says what the source can give: how to name the model
in a command, a local file llama-server can open, how to download it again), or raise
InputError with one line for the user. Only this folder knows the kinds of source:
elsewhere ``source_kind`` is a label to show, never a question to ask.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from paircheck.model import ModelDescription, Override, TensorInfo

if TYPE_CHECKING:
    from paircheck._source.read_cache import ReadCache


class Progress(Protocol):
    """Told how a long remote read advances; ``finish`` once it ends, however it ends."""

    def __call__(self, done: int, expected: int | None) -> None: ...

    def finish(self) -> None: ...



@dataclass(frozen=True)
class ReadOptions:
    """What the caller wants read, and how to report progress."""

    overrides: Mapping[str, Override] = field(default_factory=dict)
    # Makes a progress callback for one model (its label); None: no progress shown.
    # Drawing belongs to the caller (the CLI), never to a source.
    progress: Callable[[str], Progress | None] | None = None
    # Called before each HTTP request a source sends (retries and redirects included), so
    # a caller can count requests and stop at a budget by raising InputError from it.
    on_request: Callable[[], None] | None = None
    # Where what was read of a local GGUF is kept for the next look at the same file;
    # None: read every file (the library's default: it writes nothing unless asked).
    cache: ReadCache | None = None

    def progress_for(self, label: str) -> Progress | None:
        return self.progress(label) if self.progress is not None else None


class Source(Protocol):
    """One way of reaching a model."""

    name: str  # the ModelDescription.source_kind it produces, e.g. "gguf"

    def claims(self, spec: str) -> bool:
        """True when this source is the one to read ``spec`` (checked in order)."""
        ...

    def describe(self, spec: str, options: ReadOptions) -> ModelDescription: ...

    def tensors(self, desc: ModelDescription) -> list[TensorInfo]:
        """Every tensor of a model this source described: all shards of a split GGUF,
        or a folder's safetensors headers; never tensor data. InputError when it has none."""
        ...
