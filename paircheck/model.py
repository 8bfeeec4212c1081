"""The data every layer shares: a GGUF's metadata as stored, the vocabulary llama.cpp's
loader derives from it, and the normalized description of one model.

Sources produce these, rules read them, formats show them. This module imports nothing
of paircheck but the other bottom modules (constants, llamacpp_tables).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from paircheck import llamacpp_tables as T

# A value given with --override-kv: ("bool" | "int" | "float" | "str", value).
Override = tuple[str, Any]


@dataclass(frozen=True)
class GGUFArray:
    """An array value. ``values`` is None when the array was counted but not kept;
    ``head`` then holds its first raw bytes (enough for llama.cpp's size checks)."""

    elem_type: int
    count: int
    values: list[Any] | None
    head: bytes = b""


@dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: tuple[int, ...]
    ggml_type: int
    offset: int


@dataclass(frozen=True)
class TensorSectionError:
    """Why llama.cpp refuses a file's tensor infos or data section, as the reader found it.

    ``message`` is llama.cpp's own text (gguf_init_from_reader or the model loader),
    with the tensor's name. ``incomplete`` means the file ends before what its own header
    declares (the tensor list or the data of a tensor): a cut file, typically an
    interrupted download, rather than a corrupt one.
    """

    message: str
    file: str  # the file it concerns (a shard, for a split model)
    file_size: int | None  # bytes the file has
    needed: int | None  # bytes the file must have to load, when known
    incomplete: bool = False
    # Who refuses: "llama.cpp" for a GGUF; "safetensors" for a Hugging Face folder's
    # weights (the converter and every engine open them with the safetensors package).
    loader: str = "llama.cpp"
    # A plain-words reason the source knows better than the sizes tell (a missing shard,
    # a file that ends inside its metadata); None: derived from file_size and needed.
    reason: str | None = None
    # The file ends where its tensor data begins, with every tensor info read and valid: a
    # header-only GGUF (its tensor list without the weights). llama.cpp refuses to load it,
    # but the tensor list is whole, so fit and estimate can size the model it describes.
    header_only: bool = False


@dataclass
class GGUFMetadata:
    """The header and key/value section of one GGUF file, as stored."""

    version: int
    byte_order: str  # "<" or ">"
    tensor_count: int
    kv: dict[str, tuple[int, Any]]  # key -> (value type, value)
    kv_end: int  # offset of the first byte after the kv section
    duplicate_keys: list[str] = field(default_factory=list)
    tensors: list[TensorInfo] | None = None  # filled by read_tensor_infos
    # The tensor section as llama.cpp's loader checks it (filled with the tensor infos):
    # the file's size (filesystem, or the server's Content-Range/Content-Length total),
    # where the last tensor's data ends, and the first problem llama.cpp would stop at.
    file_size: int | None = None
    data_end: int | None = None
    tensor_error: TensorSectionError | None = None
    # False when the file ends inside its key/value section: ``kv`` then holds only the
    # keys read before the cut, and nothing can be derived from them.
    kv_complete: bool = True

    def get(self, key: str, default: Any = None) -> Any:
        entry = self.kv.get(key)
        return default if entry is None else entry[1]

    def type_of(self, key: str) -> int | None:
        entry = self.kv.get(key)
        return None if entry is None else entry[0]

    @property
    def big_endian(self) -> bool:
        return self.byte_order == ">"


@dataclass(frozen=True)
class LoadFailure:
    """Why llama.cpp would refuse this file, in its own words where it has them."""

    message: str
    aborts: bool = False  # the process dies (GGML_ASSERT) instead of reporting an error


@dataclass
class LlamaVocab:
    """The values ``common_speculative_are_compatible`` reads, as the loader derives them."""

    tokenizer_model: str | None = None
    pre: str | None = None  # the pre-tokenizer in effect (BPE only)
    vocab_type: int = T.VOCAB_NONE
    n_tokens: int = 0
    bos_id: int = -1
    eos_id: int = -1
    eot_id: int = -1
    # EOT ids found by text when no key names one; more than one means llama.cpp's choice
    # among them depends on its hash map's order (see vocab._detect_eot_eom).
    eot_candidates: tuple[int, ...] = ()
    eom_id: int = -1
    add_bos: bool = False
    add_eos: bool = False
    texts: list[bytes] = field(default_factory=list)
    eog_ids: frozenset[int] = frozenset()
    failure: LoadFailure | None = None
    # WARN-level lines the loader would log: what the file relies on silently.
    loader_warnings: list[str] = field(default_factory=list)

    @property
    def eot_ambiguous(self) -> bool:
        return len(self.eot_candidates) > 1

    @property
    def loadable(self) -> bool:
        return self.failure is None

    @property
    def load_error(self) -> str | None:
        return None if self.failure is None else self.failure.message

    @property
    def vocab_type_name(self) -> str:
        return T.VOCAB_TYPE_NAMES.get(self.vocab_type, str(self.vocab_type))

    def text(self, token_id: int) -> bytes | None:
        if 0 <= token_id < len(self.texts):
            return self.texts[token_id]
        return None


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
    """The three numbers engines other than llama.cpp compare: embedding rows (config
    ``vocab_size``), ``len(tokenizer)`` and ``tokenizer.vocab_size``."""

    config_vocab_size: int | None = None  # embedding rows
    tokenizer_len: int | None = None  # len(tokenizer): base plus added tokens
    base_vocab_size: int | None = None  # tokenizer.vocab_size: without added tokens
    model_type: str | None = None
    architectures: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def config(self) -> dict[str, Any] | None:
        """The whole config.json (``extra["config"]``), when it is an object."""
        config = self.extra.get("config")
        return config if isinstance(config, dict) else None


@dataclass(frozen=True)
class Download:
    """How to download a model's files again, to where paircheck read them from."""

    commands: tuple[str, ...]  # shell commands, best first; the others are alternatives
    resumes: bool  # True: completes a partial download; False: fetches the file anew
    placeholder: str | None = None  # what an upper-case word in the command stands for


@dataclass(frozen=True)
class LocalCopy:
    """How to make a GGUF on this machine that llama-server can open, from a model it cannot
    open as named (a Hugging Face folder or repo: convert it; a draft at a URL: download it)."""

    why: str  # one sentence: why the model must be made into a local GGUF first
    commands: tuple[str, ...]  # shell commands, run in order
    file: str  # the GGUF they write, as a launch line then names it


@dataclass(frozen=True)
class Origin:
    """What the source that read a model can give besides its description.

    Filled by the source (``_source/``), the one place that knows the kinds of source:
    rules and capabilities ask these questions instead of testing ``source_kind``. The
    model's tensors (every shard, or a folder's safetensors headers) are the source's to
    read as well: ``paircheck._source.tensors.model_tensors``.
    """

    # The model as a command line names it: a local file (a split model's first shard),
    # a folder, a URL or a Hub reference, unquoted.
    command_name: str
    # What holds the model: "gguf" (a file, or a split set) or "hf-folder" (config.json,
    # tokenizer and safetensors files, as Hugging Face lays them out).
    form: str
    # A GGUF on this machine that llama-server can open with -m (None: a folder, a URL).
    server_file: str | None = None
    # Read over HTTP: what was read is the server's copy, not a download on this machine.
    remote: bool = False
    # How to download it again where it was read from (None: not a download, or unknown).
    download: Download | None = None
    # A GGUF read from a Hub repo: (repo id, file in the repo), what `hf download` takes.
    hub_file: tuple[str, str] | None = None
    # A GGUF in a Hub repo as llama-server's -hf / -hfd name it ("org/name:Q4_K_M"), when a
    # quant tag picks exactly that file (None: not a Hub GGUF, or no tag names it).
    hf_ref: str | None = None
    # A URL llama-server's -mu fetches the model from (it has no such option for a draft).
    model_url: str | None = None
    # What makes a GGUF llama-server can open, when it cannot open the model as named.
    local_copy: LocalCopy | None = None


@dataclass
class ModelDescription:
    """One side of a pair, normalized.

    ``metadata`` holds GGUF-style keys: read from the file for a GGUF, or what
    llama.cpp's converter would write for a Hugging Face folder. ``vocab`` is what
    llama.cpp's loader derives from them.
    """

    location: str  # what the user gave
    # The source that read it ("gguf", "hf-folder", "hub", "remote-gguf"): a label to
    # show. Outside _source/ nothing branches on it; ``origin`` says what the source gives.
    source_kind: str
    metadata: GGUFMetadata
    vocab: LlamaVocab
    identity: Identity
    origin: Origin
    resolved_path: str | None = None  # the file or folder actually read
    metadata_bytes: int = 0
    hf: HFFacts | None = None
    # Caveats a source wants the user to see (e.g. a converter choice it cannot know).
    notes: list[str] = field(default_factory=list)
    # For a remote read: requests made and bytes received (an http_client.FetchStats).
    fetch: Any = None

    @property
    def config(self) -> dict[str, Any] | None:
        """The model's config.json, when its source read one (a Hugging Face folder or repo):
        what llama.cpp's converter writes the GGUF hyperparameters from. None for a GGUF, whose
        keys hold them. Capabilities ask this, never which kind of source read the model."""
        return self.hf.config if self.hf is not None else None

    @property
    def display_name(self) -> str:
        ident = self.identity
        return ident.name or ident.basename or self.location

    @property
    def unreadable(self) -> str | None:
        """Why nothing can be judged of this model, or None: a file that ends inside its
        metadata has no vocabulary at all. As a draft that is a finding (LC001); as the
        target, every rule and every candidate would fail on it, so it is an input error."""
        if self.metadata.kv_complete:
            return None
        error = self.metadata.tensor_error
        reason = error.reason if error is not None and error.reason else "the file ends inside its metadata"
        if self.origin.remote and reason.endswith(": the download was probably interrupted"):
            # Read over HTTP, nothing was downloaded here: the server's copy is the cut one.
            reason = reason.rsplit(": ", 1)[0] + ": the file on the server is itself cut short"
        return reason
