"""Which Hub repos could draft for a target: gathered from the registry, the target's model
tree and its family, within a budget of API calls. Nothing is read here: the scan judges each
candidate from its header afterwards, through the same per-candidate path as a local file.

Where candidates come from (the calls are ``paircheck._source.hub_api``'s, spelled as
huggingface_hub's ``HfApi`` methods):

1. the target's repo: ``model_info(TARGET)``; its ``base_model:quantized:X`` or
   ``base_model:X`` tag names the model it packages or was tuned from, whose publisher and
   name give the family (``Qwen/Qwen2.5-14B-Instruct`` -> ``Qwen``, ``Qwen2.5``);
2. the family: ``list_models(author=PUBLISHER, search=FAMILY)``, the publisher's
   instruct, base and coder variants of every size and their GGUF repos;
3. the drafts the registry documents for the target (by name or vocabulary fingerprint):
   ``model_info(REPO)`` for each one the family listing did not bring;
4. quantized repos of the best smaller siblings, from anyone:
   ``list_models(filter=["gguf", "base_model:quantized:SIBLING"])``, the relation a
   quantizer's model card sets;
5. with a head method (EAGLE-3, MTP, DFlash...): ``list_models(filter="base_model:TARGET")``,
   the heads that name the target as their base model, and head files (``eagle3-*.gguf``)
   beside the target's own GGUFs.

The candidates are then put in reading order: documented by the registry first, one repo
per model before second copies of the same model, the kind the engine loads (GGUF for
llama.cpp, LM Studio, KoboldCpp and Ollama; Hugging Face repos for vLLM, SGLang,
transformers and TensorRT-LLM), the target's variant (an instruct draft for an instruct
target) before the base model before other variants (coder, math), then the smallest,
then the most downloaded. The scan reads as many as its budget allows.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from paircheck._registry.identity import ModelIdentity, normalise_name, size_billions, size_from_name
from paircheck._source import split_name
from paircheck._source.hub import _is_model_gguf, choose_gguf
from paircheck._source.hub_api import CallBudgetSpent, HubApi, Listing, valid_repo_id
from paircheck._source.quant_name import quant_tags
from paircheck.constants import (
    DRAFT_DFLASH,
    DRAFT_DSPARK,
    DRAFT_EAGLE3,
    DRAFT_MTP,
    DRAFT_SIMPLE,
    EAGLE,
    HEAD_METHODS,
    MEDUSA,
    MLP_SPECULATOR,
    canonical_method,
)
from paircheck.errors import InputError
from paircheck.model import ModelDescription

if TYPE_CHECKING:
    from huggingface_hub.hf_api import ModelInfo

    from paircheck._registry.entry import RegistryEntry
    from paircheck.scan.summary import TargetFacts

# Engines that load GGUF files; the others load Hugging Face repos.
GGUF_ENGINES = frozenset({"llama.cpp", "lmstudio", "koboldcpp", "ollama"})
FAMILY_LIMIT = 100  # models asked for in the family listing
QUANT_LIMIT = 20  # models asked for in each quantized-repos listing
HEAD_LIMIT = 50
QUANTIZED_OF = 2  # smaller siblings whose quantized repos are looked for
# Words in a repo name that say it holds a speculative head, by method.
HEAD_WORDS: dict[str, tuple[str, ...]] = {
    DRAFT_EAGLE3: ("eagle3", "eagle-3"),
    DRAFT_MTP: ("mtp",),
    DRAFT_DFLASH: ("dflash",),
    DRAFT_DSPARK: ("dspark",),
    EAGLE: ("eagle",),
    MEDUSA: ("medusa",),
    MLP_SPECULATOR: ("speculator", "mlp-speculator"),
}
ALL_HEAD_WORDS = ("eagle", "medusa", "speculator", "dflash", "dspark", "mtp")
# llama.cpp's head files beside a model's GGUFs (common/download.cpp find_best_eagle3 & co).
SIDECAR_PREFIX = {DRAFT_EAGLE3: "eagle3-", DRAFT_MTP: "mtp-", DRAFT_DFLASH: "dflash-", DRAFT_DSPARK: "dspark-"}
SIZE_MARGIN = 0.8  # a draft is at most this fraction of the target's size (same-size models are not drafts)


@dataclass(frozen=True)
class HubCandidate:
    """One repo to judge: the file read from it (a GGUF, or None for a Hugging Face repo),
    how it was found, and what is needed to download and run it."""

    repo: str
    file: str | None
    found_by: str  # "registry", "family", "quantized", "head"
    shards: tuple[str, ...] = ()  # every file of a split GGUF, first shard first
    others: tuple[str, ...] = ()  # the repo's other quantizations (same vocabulary)
    access: str = "open"  # "open", "gated" (accept the licence), "private"
    sha: str | None = None
    files: tuple[str, ...] = ()  # the repo's files, as listed
    size_b: float | None = None  # parameters, billions (the Hub's count, else the name's label)
    downloads: int = 0
    documented: bool = False  # the registry names this model as a draft for the target

    @property
    def kind(self) -> str:
        return "gguf" if self.file else "hf"

    @property
    def spec(self) -> str:
        """What ``paircheck TARGET SPEC`` accepts for this candidate."""
        return f"{self.repo}/{self.file}" if self.file else self.repo

    @property
    def quant(self) -> str | None:
        return quant_label(self.file) if self.file else None

    @property
    def label(self) -> str:
        """llama.cpp's ``-hf`` spelling, ``REPO:QUANT``, or the repo id."""
        quant = self.quant
        return f"{self.repo}:{quant}" if quant else self.repo

    def download(self) -> str:
        """``hf download REPO FILE...``: exactly the files judged (every shard of a split GGUF),
        or the whole repo for a Hugging Face model."""
        return shlex.join(["hf", "download", self.repo, *(self.shards or ((self.file,) if self.file else ()))])


@dataclass(frozen=True)
class DocumentedDraft:
    """A draft the registry documents for the target: its entry and how the target matched."""

    entry: RegistryEntry
    how: str  # "repo", "name", "vocabulary+size", "vocabulary"

    @property
    def by_vocabulary(self) -> bool:
        return self.how.startswith("vocabulary")


@dataclass
class Gathered:
    target_repo: str | None = None
    target_sha: str | None = None
    publisher: str | None = None
    family: str | None = None
    candidates: list[HubCandidate] = field(default_factory=list)  # in reading order
    notes: list[str] = field(default_factory=list)  # one line per call that failed or was cut
    unreachable: str | None = None  # the Hub could not be reached at all: why, on one line
    calls_cut: int = 0  # searches not made because the call budget was spent
    unreadable: list[str] = field(default_factory=list)  # repos found that hold nothing paircheck reads


def quant_label(filename: str) -> str | None:
    """``qwen2.5-0.5b-instruct-q4_k_m.gguf`` -> ``Q4_K_M``; split suffixes ignored."""
    base = filename.rsplit("/", 1)[-1]
    split = split_name.parse(base)
    name = split.prefix + split_name.EXTENSION if split is not None else base
    found = quant_tags(name)
    return found[-1] if found else None


def size_of(info: ModelInfo) -> float | None:
    """A repo's model size: the Hub's parameter count (safetensors or GGUF), else its name."""
    for source in (getattr(info, "safetensors", None), getattr(info, "gguf", None)):
        total = source.get("total") if isinstance(source, dict) else None
        if isinstance(total, int) and not isinstance(total, bool) and total > 0:
            return total / 1e9
    return size_from_name(info.id.split("/", 1)[1])


def family_stem(name: str) -> str | None:
    """The family part of a model name, before its size: ``Qwen2.5-14B-Instruct`` -> ``Qwen2.5``."""
    base = name.rsplit("/", 1)[-1]
    parts = re.split(r"([-_ ])", base)
    for i in range(0, len(parts), 2):
        if size_billions(parts[i]) is not None:
            stem = "".join(parts[: max(0, i - 1)])
            return stem or None
    return None


def base_models(info: ModelInfo) -> list[tuple[str, str]]:
    """(relation, repo) of the ``base_model:`` tags the Hub derives from a model card:
    ``base_model:quantized:X``, ``base_model:finetune:X``, ``base_model:adapter:X``,
    ``base_model:merge:X`` and the plain ``base_model:X``."""
    out: list[tuple[str, str]] = []
    tags = info.tags if isinstance(info.tags, list) else []
    for tag in tags:
        if not isinstance(tag, str) or not tag.startswith("base_model:"):
            continue
        rest = tag[len("base_model:"):]
        relation, _, repo = rest.partition(":")
        if not repo:
            relation, repo = "", rest
        if valid_repo_id(repo) and (relation, repo) not in out:
            out.append((relation, repo))
    return out


def access_of(info: ModelInfo) -> str:
    if info.private:
        return "private"
    return "gated" if info.gated in ("auto", "manual") else "open"


def registry_drafts(facts: TargetFacts, method: str) -> list[DocumentedDraft]:
    """The drafts the registry documents as working for the target with this method: those of
    the target recognised by name, else (a file that names no model) those of every target with
    its vocabulary fingerprint; best match first."""
    from paircheck._registry.consult import target_matches

    if facts.registry is None:
        return []
    out = []
    for entry, how in target_matches(facts.registry, facts.identities, facts.vocab):
        if entry.status != "works" or entry.draft.builtin:
            continue
        if (canonical_method(entry.method) or entry.method) != method:
            continue
        out.append(DocumentedDraft(entry, how))
    if any(not d.by_vocabulary for d in out):
        # Recognised by name: drafts documented only for another model of the same vocabulary
        # would be noise (as the check's RG001 leaves them out).
        out = [d for d in out if not d.by_vocabulary]
    return out


def _is_head_name(repo: str, method: str | None = None) -> bool:
    name = repo.split("/", 1)[1].casefold()
    words = HEAD_WORDS.get(method or "", ALL_HEAD_WORDS) if method else ALL_HEAD_WORDS
    return any(w in name for w in words)


def pick_file(files: Sequence[str], method: str) -> tuple[str | None, tuple[str, ...], tuple[str, ...]]:
    """(the GGUF to read, its shards, the other quantizations) of a repo's files; the file is
    None when the repo is a Hugging Face model (tokenizer and config) or holds nothing to read.

    A draft method reads the model GGUF llama.cpp's ``-hf`` would pick (Q4_K_M, then Q8_0, then
    the first); a head method reads the head file llama.cpp looks for beside a model
    (``eagle3-*.gguf``), else a GGUF named for the method, else the repo's model GGUF (a head
    repo that names its file plainly)."""
    names = list(files)
    chosen: str | None = None
    if method in HEAD_METHODS:
        prefix = SIDECAR_PREFIX.get(method, "\0")
        words = HEAD_WORDS.get(method, ())
        chosen = next((f for f in names if f.endswith(".gguf") and split_name.is_first_or_whole(f) and (
            f.rsplit("/", 1)[-1].startswith(prefix) or any(w in f.casefold() for w in words))), None)
    if chosen is None:
        chosen = choose_gguf(names, None)  # None when the repo holds no model GGUF
    if chosen is None:
        return None, (), ()
    shards: tuple[str, ...] = ()
    split = split_name.parse(chosen)
    if split is not None:
        shards = tuple(sorted(f for f in names
                              if (other := split_name.parse(f)) is not None and other.prefix == split.prefix
                              and other.count == split.count))
    # The other quantizations of the same thing (model files for a model, head files for a head).
    model = _is_model_gguf(chosen)
    quant = quant_label(chosen)
    others = sorted({q for f in names if f.endswith(".gguf") and split_name.is_first_or_whole(f)
                     and _is_model_gguf(f) == model and (q := quant_label(f)) and q != quant})
    return chosen, shards, tuple(others)


def _has_hf_model(files: Iterable[str]) -> bool:
    names = set(files)
    return "config.json" in names and bool(names & {"tokenizer.json", "tokenizer.model"})


class _Calls:
    """The API calls of one gathering: failures become one line each; after a failure that
    says the Hub cannot be reached or will not answer (no connection, a timeout, a rate
    limit, a server error, a refused token), no further call is made."""

    def __init__(self, api: HubApi, out: Gathered) -> None:
        self.api = api
        self.out = out
        self.stopped = False

    def info(self, repo: str, what: str) -> ModelInfo | None:
        if self.stopped:
            return None
        try:
            return self.api.model_info(repo)
        except CallBudgetSpent:
            self.out.calls_cut += 1
            return None
        except InputError as exc:
            self._failed(what, exc)
            return None

    def listing(self, what: str, **query: Any) -> list[ModelInfo]:
        if self.stopped:
            return []
        result: Listing = self.api.list_models(**query)
        if result.cut and not result.models:
            self.out.calls_cut += 1
        elif result.cut:
            self.out.notes.append(f"{what}: cut after {len(result.models)} models (the call budget is spent)")
        if result.dropped:
            self.out.notes.append(f"{what}: {result.dropped} entries left out (not a model paircheck can name safely)")
        if result.error is not None:
            kept = f" (the first {len(result.models)} models kept)" if result.models else ""
            self._failed(what, result.error, kept)
        return result.models

    def _failed(self, what: str, exc: InputError, kept: str = "") -> None:
        message = exc.message
        fatal = not message.startswith("no such repository")
        if fatal and not self.out.notes and self.api.calls <= 1 and _unreachable(message):
            self.out.unreachable = message
        else:
            self.out.notes.append(f"{what}: {message}{kept}")
        self.stopped = self.stopped or fatal


def _unreachable(message: str) -> bool:
    return message.startswith(("cannot resolve host", "cannot connect", "no answer from", "gave up after"))


def gather(
    target: ModelDescription,
    facts: TargetFacts,
    api: HubApi,
    method: str | None,
    engine: str,
    documented: Sequence[DocumentedDraft],
) -> Gathered:
    """Hub repos that could draft for ``target``, in reading order, within ``api``'s call budget."""
    from paircheck._registry.load import match_model

    method = canonical_method(method or DRAFT_SIMPLE) or DRAFT_SIMPLE
    heads = method in HEAD_METHODS
    out = Gathered()
    calls = _Calls(api, out)
    seen: dict[str, tuple[ModelInfo, str]] = {}  # repo -> (info, how found)

    def keep(infos: Iterable[ModelInfo], how: str) -> None:
        for info in infos:
            seen.setdefault(info.id, (info, how))

    hub_file = target.origin.hub_file
    target_repo = hub_file[0] if hub_file else next((i.repo for i in facts.identities if i.repo), None)
    target_repo = target_repo if valid_repo_id(target_repo) else None
    out.target_repo = target_repo
    origin = target_repo  # the model the target packages or was tuned from, for its family
    quantized_from: str | None = None
    target_info = calls.info(target_repo, f"model info of {target_repo}") if target_repo else None
    if target_info is not None:
        out.target_sha = target_info.sha
        parents = base_models(target_info)
        quantized_from = next((repo for rel, repo in parents if rel == "quantized"), None)
        origin = quantized_from or next((repo for rel, repo in parents if rel in ("finetune", "")), target_repo)
    name = origin or target.identity.name or target.identity.basename or target.display_name
    # A repo's name gives the family (Qwen2.5-14B-Instruct -> Qwen2.5); a file that names no repo
    # gives it in general.basename, as llama.cpp's converter writes it.
    family = (target.identity.basename if not origin else None) or family_stem(name or "") or target.identity.basename
    publisher = origin.split("/", 1)[0] if origin else None
    out.publisher, out.family = publisher, family
    target_size = facts.vocab.size_b or (size_from_name(name) if name else None)
    if target_size is None and target_info is not None:
        target_size = size_of(target_info)
    target_keys = {normalise_name(r) for r in (target_repo, origin, quantized_from) if r}
    if not target_keys and name:
        target_keys.add(normalise_name(name))

    if family:
        what = f"models by {publisher} named {family}" if publisher else f"models named {family}"
        keep(calls.listing(what, author=publisher, search=family, limit=FAMILY_LIMIT), "family")
    for draft in documented:
        repo = draft.entry.draft.repo
        if repo and valid_repo_id(repo) and repo not in seen:
            info = calls.info(repo, f"model info of {repo} (documented draft)")
            if info is not None:
                keep([info], "registry")

    def is_documented(repo: str) -> bool:
        ident = ModelIdentity(repo=repo)
        return any(match_model(d.entry.draft, ident) is not None for d in documented if not d.by_vocabulary)

    def smaller(info: ModelInfo) -> bool:
        size = size_of(info)
        return size is None or target_size is None or size <= SIZE_MARGIN * target_size

    def same_as_target(repo: str) -> bool:
        return repo == target_repo or normalise_name(repo) in target_keys

    if not heads:
        # Quantized repos (anyone's) of the best smaller Hugging Face siblings.
        originals = [info for info, _ in seen.values()
                     if _has_hf_model(_files(info)) and not same_as_target(info.id) and smaller(info)
                     and not _is_head_name(info.id)
                     and not any(rel == "quantized" for rel, _ in base_models(info))]
        originals.sort(key=lambda i: (not is_documented(i.id), _variant_rank(i.id, target_keys, family),
                                      size_of(i) or float("inf"), -(i.downloads or 0)))
        for info in originals[:QUANTIZED_OF]:
            keep(calls.listing(f"quantized repos of {info.id}", filters=["gguf", f"base_model:quantized:{info.id}"],
                               limit=QUANT_LIMIT), "quantized")
    else:
        for base in dict.fromkeys(r for r in (origin, target_repo) if r):
            keep(calls.listing(f"models based on {base}", filters=[f"base_model:{base}"], limit=HEAD_LIMIT), "head")

    candidates: list[HubCandidate] = []
    for repo, (info, how) in seen.items():
        files = _files(info)
        if heads:
            # The target's own GGUF repo may hold a head file beside the model (eagle3-*.gguf).
            if not _is_head_name(repo, method) and not (same_as_target(repo) and any(
                    f.rsplit("/", 1)[-1].startswith(SIDECAR_PREFIX.get(method, "\0")) for f in files)):
                continue
        elif same_as_target(repo) or not smaller(info) or _is_head_name(repo):
            continue
        chosen, shards, others = pick_file(files, method)
        if chosen is None and not _has_hf_model(files):
            out.unreadable.append(repo)  # nothing paircheck reads: no GGUF, no tokenizer (a PyTorch head, ONNX)
            continue
        candidates.append(HubCandidate(
            repo=repo, file=chosen, found_by=how, shards=shards, others=others, access=access_of(info),
            sha=info.sha if isinstance(info.sha, str) else None, files=tuple(files), size_b=size_of(info),
            downloads=info.downloads if isinstance(info.downloads, int) else 0, documented=is_documented(repo),
        ))
    out.candidates = _reading_order(candidates, engine, target_keys, family)
    return out


def _files(info: ModelInfo) -> list[str]:
    return [s.rfilename for s in info.siblings or []]


def _variant_rank(repo: str, target_keys: set[frozenset[str]], family: str | None) -> int:
    """0: the target's variant (instruct for instruct), 1: the base model, 2: another variant."""
    fixed = normalise_name(family) if family else frozenset()

    def extra(key: frozenset[str]) -> frozenset[str]:
        return frozenset(t for t in key if t not in fixed and size_billions(t) is None)

    mine = extra(normalise_name(repo))
    wanted = [extra(k) for k in target_keys]
    if any(mine == w for w in wanted):
        return 0
    return 1 if not mine or any(mine < w for w in wanted) else 2


def _reading_order(
    candidates: list[HubCandidate], engine: str, target_keys: set[frozenset[str]], family: str | None
) -> list[HubCandidate]:
    def kind_rank(c: HubCandidate) -> int:
        if engine == "all":
            return 0
        return 0 if (c.kind == "gguf") == (engine in GGUF_ENGINES) else 1

    def base_key(c: HubCandidate) -> tuple[Any, ...]:
        return (not c.documented, kind_rank(c), _variant_rank(c.repo, target_keys, family),
                c.size_b if c.size_b is not None else float("inf"), -c.downloads, c.repo)

    ordered = sorted(candidates, key=base_key)
    # One repo per model before second copies of a model (another quantizer's GGUF repo).
    copies: dict[frozenset[str], int] = {}
    nth: dict[str, int] = {}
    for c in ordered:
        key = normalise_name(c.repo)
        nth[c.repo] = copies.get(key, 0)
        copies[key] = nth[c.repo] + 1
    return sorted(ordered, key=lambda c: (not c.documented, nth[c.repo], *base_key(c)[1:]))
