"""``paircheck scan``: which models on this machine can draft for a target, ranked.

Each candidate is described, checked and reduced to a small summary before the next one is
read, so memory stays bounded by one file's metadata whatever the number of files (one per
worker when the files are read ``jobs`` at a time, paircheck.scan.workers). A file that cannot
be read is listed with its one-line reason and never stops the scan.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from paircheck.constants import LLAMACPP
from paircheck.errors import InputError
from paircheck.findings import ABORTS, ACCEPTED, FAIL, REFUSED, Report
from paircheck.fingerprint import fingerprints
from paircheck.model import ModelDescription
from paircheck.pipeline import DEFAULT_ENGINE, check_all_engines, check_descriptions, describe, readable_target
from paircheck.scan.cache import ScanCache, cache_path, context_key, file_stamp
from paircheck.scan.discover import Candidate, Place, Unlisted, discover
from paircheck.weights import WeightBytes, description_weight_bytes, parameter_count

if TYPE_CHECKING:  # the registry is imported when a scan runs, not at start-up
    from paircheck._registry.consult import FileVocab


@dataclass
class CandidateResult:
    """The summary kept for one candidate (never its description)."""

    location: str
    name: str | None
    where: str
    usable: bool | None  # accepted / refused / undecided for the chosen engine
    verdict: str
    first_failure: str | None  # the failing check's code
    reason: str | None  # its one-line message
    documented: bool
    file_bytes: int | None
    cost_ratio: float | None  # draft per-token weight bytes / the target's (None: unknown)
    size_warning: str | None
    engines: dict[str, str] = field(default_factory=dict)  # engine -> verdict (--engine all)
    # What holds the draft (its source says): "gguf" or "hf-folder" (which llama-server
    # cannot load). Shown as ``source_kind`` in the JSON.
    form: str = "gguf"
    # MODELLED, not measured: Leviathan et al.'s speedup at REFERENCE_ACCEPTANCE with the best
    # draft length for this cost ratio (paircheck.speed.estimate); None without tensor infos.
    modelled_speedup: float | None = None
    modelled_draft_max: int | None = None
    # Memory of target + draft as llama-server allocates it at the target's training context
    # (paircheck.fit, device + host bytes); None when either file has no tensor infos.
    memory_bytes: int | None = None
    # How the registry recognised the pair when documented: "name" (repo ids or names) or
    # "vocabulary" (a side known only by its vocabulary fingerprint, as the check's RG001 says).
    documented_by: str | None = None
    # With `scan --probe N`: MEASURED on llama-server by paircheck probe (the share of
    # positions where this draft's top token is the target's), the fastest setting for it,
    # and the tokens/s and speedup paircheck.speed predicts there from the costs the probe
    # measured on this machine (or, with --no-calibrate, the assumed ones).
    measured_acceptance: float | None = None
    measured_draft_max: int | None = None
    measured_p_min: float | None = None
    measured_speedup: float | None = None
    predicted_tokens_per_s: float | None = None
    # What one evaluation of the draft reads (paircheck.speed.roofline.Shape as a dict), for a
    # prediction on a GPU; None without tensor infos.
    shape: dict[str, float | str] | None = None
    # With `scan --gpu` (or a GPU found here): PREDICTED on that device by paircheck.speed's
    # roofline, at the best draft length, from the acceptance said by ``gpu_acceptance_basis``
    # (measured by a probe, else assumed); whether target + draft fit its memory.
    gpu_tokens_per_s: float | None = None
    gpu_speedup: float | None = None
    gpu_draft_max: int | None = None
    gpu_p_min: float | None = None
    gpu_fits: bool | None = None
    gpu_acceptance_basis: str | None = None
    # How near an unusable draft came, so that none ranks above a nearer one for no reason
    # (a file's size says nothing about a draft that cannot run): how many of the engine's
    # checks, in its order, passed before the first failure (all of them for one accepted at
    # load and predicted to abort), then the share of the target's token texts its vocabulary
    # has (at any id; estimated from a sample of the draft's ids, _shared_texts). Both None for
    # a usable or unchecked draft.
    checks_passed: int | None = None
    shared_texts: float | None = None

    @property
    def probed_slower(self) -> bool:
        """The probe predicts no setting of this draft faster than the target alone."""
        from paircheck.speed.model import MIN_GAIN

        return self.measured_speedup is not None and self.measured_speedup < MIN_GAIN

    @property
    def gpu_slower(self) -> bool:
        """Predicted on the named GPU at no draft length faster than the target alone (or not
        fitting its memory)."""
        from paircheck.speed.model import MIN_GAIN

        return self.gpu_speedup is not None and (self.gpu_speedup < MIN_GAIN or self.gpu_fits is False)

    @property
    def speedup(self) -> float | None:
        """The measured-acceptance speedup when probed, else the one at the reference acceptance."""
        return self.measured_speedup if self.measured_speedup is not None else self.modelled_speedup

    @property
    def accepted_by(self) -> list[str]:
        """With ``--engine all``: the engines that accept the pair."""
        return [name for name, verdict in self.engines.items() if verdict == ACCEPTED]

    def sort_key(self) -> tuple[int, int, int, int, int, float, float, float, str]:
        usable = {True: 0, None: 1, False: 2}[self.usable]
        # On a named GPU (scan --gpu) the drafts predicted there come first, fastest first, a
        # pair that does not fit its memory after those that do; then, as without a GPU, the
        # best modelled (or probed) speedup, a candidate without one (no tensor infos) after.
        on_gpu = 0 if self.gpu_speedup is not None else 1
        if self.gpu_speedup is not None:
            speed = -self.gpu_speedup if self.gpu_fits is not False else 1e9 - self.gpu_speedup
        else:
            speed = -self.speedup if self.speedup is not None else float("inf")
        size = float(self.file_bytes) if self.file_bytes is not None else float("inf")
        # --engine all: a draft more engines accept first (0 for a single engine).
        # Documented by name before documented only by vocabulary (a family's), before undocumented.
        documented = 0 if self.documented and self.documented_by != "vocabulary" else (1 if self.documented else 2)
        near = -(self.checks_passed or 0), -(self.shared_texts or 0.0)
        return usable, -len(self.accepted_by), on_gpu, documented, *near, speed, size, self.location


@dataclass(frozen=True)
class Unreadable:
    location: str
    error: str


@dataclass
class ScanResult:
    target: ModelDescription  # the one description kept whole
    engine: str
    candidates: list[CandidateResult]
    unreadable: list[Unreadable]
    skipped_same_model: list[str]
    searched: list[str]
    cache_hits: int = 0
    cache_misses: int = 0
    probe_file: str | None = None  # with --probe: the probe's result file
    # With --gpu (or a GPU found here): the device (speed.on_gpu's "gpu" object), how it was
    # chosen, the target alone's predicted tokens/s there, and the context predicted at.
    device: dict[str, Any] | None = None
    # With no usable draft: what the check of such a pair offers instead (draftless_steps).
    next_steps: list[str] = field(default_factory=list)
    # Where a scan of this machine looked (given folders, beside the target, the stores);
    # None for candidates given one by one.
    places: list[Place] | None = None

    @property
    def usable(self) -> list[CandidateResult]:
        return [c for c in self.candidates if c.usable]

    @property
    def unchecked(self) -> list[CandidateResult]:
        """Candidates with no verdict: not read (offline, a documented draft the Hub search did
        not reach, a repo that needs access) or undecided."""
        return [c for c in self.candidates if c.usable is None]

    @property
    def best(self) -> CandidateResult | None:
        usable = self.usable
        return usable[0] if usable else None

    @property
    def best_for_llamacpp(self) -> CandidateResult | None:
        """The best GGUF draft llama.cpp itself accepts (for the ready ``llama-server`` line)."""
        for c in self.usable:
            accepted = c.engines.get(LLAMACPP) == ACCEPTED if c.engines else self.engine == LLAMACPP
            if accepted and c.form == "gguf":
                return c
        return None


def _file_bytes(path: str | None) -> int | None:
    if not path:
        return None
    try:
        if os.path.isdir(path):
            return sum(e.stat().st_size for e in os.scandir(path) if e.is_file())
        return os.path.getsize(path)
    except OSError:
        return None


# scan --hub's budget by default; here, not in hub_scan, so that the scan command's options
# do not import the Hub's code for a scan of this machine.
DEFAULT_CALLS = 10  # API calls (searches and model infos; each page of a listing is one)
DEFAULT_READS = 8  # candidates read (one GGUF header, or one repo's tokenizer and config files)


# The acceptance rate the ranking's modelled speedup assumes: a stated reference point of
# `paircheck estimate`'s band (0.5-0.9), the same for every candidate, so the ranking depends
# only on the cost ratio. Labelled MODELLED wherever it is shown.
REFERENCE_ACCEPTANCE = 0.7
NO_TENSORS = "- : a file without tensor infos (a vocab-only file) has no weights to model speed or memory from"


def _modelled(ratio: float | None) -> tuple[float | None, int | None]:
    from paircheck.speed.model import best_assumed

    if ratio is None or ratio <= 0:
        return None, None
    k, speedup = best_assumed(REFERENCE_ACCEPTANCE, ratio)
    return round(speedup, 3), k


def _memory(target: ModelDescription, draft: ModelDescription) -> int | None:
    """Target + draft bytes as llama-server allocates them (paircheck.fit), at the target's
    training context as the pair check uses; None when a side lacks tensor infos."""
    from paircheck.fit import DraftOptions, FitOptions, fit

    for desc in (target, draft):
        count = desc.metadata.get("split.count")
        if not desc.metadata.tensors or (isinstance(count, int) and count > 1):
            return None
    arch = target.metadata.get("general.architecture")
    ctx = target.metadata.get(f"{arch}.context_length")
    try:
        result = fit(target.metadata, draft.metadata, FitOptions(ctx=int(ctx) if isinstance(ctx, int) else 4096),
                     DraftOptions(), None, (target.display_name, draft.display_name))
    except (InputError, ValueError, KeyError, TypeError):
        return None  # an architecture the memory model does not know: no figure rather than a wrong one
    return int(result.total_device_bytes + result.total_host_bytes)


def draftless_steps(target: ModelDescription, engine: str, candidates: Iterable[CandidateResult]) -> list[str]:
    """With no usable draft, what the check of a refused pair offers instead: llama.cpp's
    n-gram methods, which need no draft (the check's own lines, ``ngram_suggestion``; none
    when the target itself does not load). Nothing when a draft is usable, or for another
    engine than llama.cpp."""
    from paircheck._engine.llamacpp_methods import ngram_suggestion

    if engine not in (LLAMACPP, "all") or any(c.usable for c in candidates):
        return []
    return ngram_suggestion(check_descriptions(target, target, LLAMACPP, None, registry=False, fingerprint=False))


# Draft ids sampled to estimate shared_texts: counting every text of a 150k-token vocabulary
# took about 50 ms a candidate (3x the rest of its summary); 4096 lookups take about 1 ms.
_TEXT_SAMPLE = 4096


def _shared_texts(target: frozenset[bytes], draft: list[bytes]) -> float | None:
    """The share of the target's token texts the draft's vocabulary has, estimated from evenly
    spaced draft ids: the draft's size x the sample's share found in the target / the target's
    size (at most 1). Exact for a draft of at most 4096 tokens."""
    if not target or not draft:
        return None
    sample = draft[::max(1, len(draft) // _TEXT_SAMPLE)]
    found = sum(1 for text in sample if text in target)
    return round(min(1.0, len(draft) * found / len(sample) / len(target)), 4)


def _usable(report: Report) -> bool | None:
    # A pair accepted at load that is predicted to abort at run time is not a usable draft.
    return {ACCEPTED: True, REFUSED: False, ABORTS: False}.get(report.verdict)


@dataclass(frozen=True)
class TargetFacts:
    """What every candidate is compared with, computed once per scan (not once per file)."""

    fingerprint: str | None
    identities: tuple[Any, ...]
    vocab: FileVocab  # the target's fingerprints and size, for registry look-ups
    weights: WeightBytes | None
    file_bytes: int | None
    registry: Any  # a loaded registry, or None when it cannot be read
    texts: frozenset[bytes]  # the target's token texts, for an unusable draft's shared_texts

    @classmethod
    def of(cls, target: ModelDescription) -> TargetFacts:
        from paircheck._registry.consult import file_vocab, identities
        from paircheck._registry.load import default_registry
        from paircheck._registry.schema import RegistryError

        try:
            registry = default_registry()
        except RegistryError:
            registry = None  # "documented" is then false for all; the verdicts do not depend on it
        fps = fingerprints(target.vocab)
        return cls(fps.full, identities(target), file_vocab(target, fps), description_weight_bytes(target),
                   _file_bytes(target.resolved_path), registry, frozenset(target.vocab.texts or ()))


def _same_model(target: ModelDescription, facts: TargetFacts, draft: ModelDescription, draft_bytes: int | None,
                draft_fp: str | None) -> bool:
    """The target itself, or a copy of it: the same real path, or the same size, vocabulary
    and every key and tensor info alike. A size and a vocabulary are not an identity: a
    family's models share the vocabulary, and two of them can have the same file size."""
    tp, dp = target.resolved_path, draft.resolved_path
    if tp and dp and os.path.realpath(tp) == os.path.realpath(dp):
        return True
    if facts.file_bytes is None or facts.file_bytes != draft_bytes:
        return False
    if facts.fingerprint is None or facts.fingerprint != draft_fp:
        return False
    t, d = target.metadata, draft.metadata
    return t.kv_end == d.kv_end and t.kv == d.kv and t.tensors == d.tensors


def summarize(
    target: ModelDescription,
    draft: ModelDescription,
    found: Candidate,
    engine: str = DEFAULT_ENGINE,
    method: str | None = None,
    facts: TargetFacts | None = None,
) -> CandidateResult | None:
    """One candidate's summary, or None when it is the target itself (or a copy of it).

    The verdicts are the api's (``check_descriptions``, ``check_all_engines``); the registry
    look-up and the size warning are made here as ``api.annotate`` makes them, with the
    target's fingerprint, identities and weight bytes computed once per scan."""
    from paircheck._engine.pair_size import parameter_finding, same_file, size_finding
    from paircheck._registry.consult import file_vocab, find_documented, identities

    facts = facts or TargetFacts.of(target)
    if engine == "all":
        reports = check_all_engines(target, draft, method, registry=False, fingerprint=False)
        main = reports[0]
        verdicts = {r.engine: r.verdict for r in reports}
        accepted = [r for r in reports if r.verdict == ACCEPTED]
        usable: bool | None = True if accepted else (
            False if all(r.verdict in (REFUSED, ABORTS) for r in reports) else None)
    else:
        main = check_descriptions(target, draft, engine, method, registry=False, fingerprint=False)
        verdicts, usable = {main.engine: main.verdict}, _usable(main)
    draft_bytes = _file_bytes(draft.resolved_path)
    draft_fps = fingerprints(draft.vocab)
    draft_fp = draft_fps.full
    dw = description_weight_bytes(draft)
    if _same_model(target, facts, draft, draft_bytes, draft_fp):
        return None
    # The check llama.cpp stops at, else the warning that predicts the abort at run time.
    failure = main.first_failure or next(iter(main.run_time_aborts), None)
    tw = facts.weights
    ratio = round(dw.per_token / tw.per_token, 4) if tw and dw and tw.per_token else None
    size = size_finding(tw.per_token if tw else None, dw.per_token if dw else None, same_file(target, draft))
    if size is None and (tw is None or dw is None):
        # As the check's size warning: parameter counts where a side has no tensor infos.
        t_params, d_params = parameter_count(target), parameter_count(draft)
        size = parameter_finding(t_params, d_params) if t_params and d_params else None
    speedup, draft_max = _modelled(ratio)
    shape = _shape(draft, dw)
    memory = _memory(target, draft) if dw is not None and tw is not None else None
    # The same look-up as the check's (api.annotate -> consult): by name, else by vocabulary.
    matches = (
        find_documented(facts.registry, facts.identities, identities(draft), facts.vocab,
                        file_vocab(draft, draft_fps))
        if facts.registry is not None else []
    )
    documented = bool(matches)
    documented_by = ("vocabulary" if matches[0].by_vocabulary() else "name") if matches else None
    passed = shared = None
    if usable is False:
        fails = [i for i, c in enumerate(main.checks) if c.status == FAIL]
        passed = fails[0] if fails else len(main.checks)
        shared = _shared_texts(facts.texts, draft.vocab.texts or [])
    return CandidateResult(
        location=found.location,
        name=found.name,
        where=found.where,
        usable=usable,
        verdict=main.verdict if engine != "all" else ("accepted" if usable else main.verdict),
        first_failure=failure.code if failure else None,
        reason=failure.message if failure else None,
        documented=documented,
        file_bytes=draft_bytes,
        cost_ratio=ratio,
        size_warning=size.message if size else None,
        engines=verdicts if engine == "all" else {},
        form=draft.origin.form,
        modelled_speedup=speedup,
        modelled_draft_max=draft_max,
        memory_bytes=memory,
        documented_by=documented_by,
        shape=shape,
        checks_passed=passed,
        shared_texts=shared,
    )


def _shape(desc: ModelDescription, wb: WeightBytes | None) -> dict[str, float | str] | None:
    """What one evaluation of ``desc`` reads, kept in the summary for a GPU prediction."""
    from paircheck.speed.on_gpu import shape_of

    return None if wb is None else asdict(shape_of(desc, wb))


Describer = Callable[[str], ModelDescription]
Progress = Callable[[str], None]


def rank(
    target: ModelDescription,
    candidates: Iterable[Candidate | Unlisted],
    engine: str = DEFAULT_ENGINE,
    method: str | None = None,
    describer: Describer = describe,
    progress: Progress | None = None,
    searched: list[str] | None = None,
    cache: ScanCache | None = None,
    jobs: int = 1,
) -> ScanResult:
    """Describe, check and summarize each candidate; rank the summaries.

    With a ``cache``, a candidate whose file (and the target's) is unchanged since a previous
    scan with the same engine and method is not read again. ``jobs`` > 1: the files to read
    are read that many at a time, each in a worker process (``_read_all``); the ranking is
    the same, summaries are made the same way and kept in the order found."""
    readable_target(target)  # a cut target: one input error, not the same LC001 on every row
    target_stamp = file_stamp(target.resolved_path or target.location)
    context = context_key(engine, method) if cache is not None else ""
    # What each candidate came to, in the order found: ("result", CandidateResult),
    # ("same", location) or ("unreadable", Unreadable); None until a file to read is read.
    outcomes: list[tuple[str, Any] | None] = []
    to_read: list[tuple[int, Candidate, str | None]] = []
    for found in candidates:
        if isinstance(found, Unlisted):
            outcomes.append(("unreadable", Unreadable(found.location, found.error)))
            continue
        key = cache.key(found.location, target_stamp, context) if cache is not None else None
        cached = cache.get(key) if cache is not None else None
        if cached is not None:
            outcome = _from_cache(cached, found)
            if outcome is not None:
                outcomes.append(outcome)
                continue
            cache.hits, cache.misses = cache.hits - 1, cache.misses + 1  # type: ignore[union-attr]
        to_read.append((len(outcomes), found, key))
        outcomes.append(None)
    for (slot, found, key), (kind, value) in zip(
        to_read, _read_all(target, [found for _, found, _ in to_read], engine, method, describer, progress, jobs),
        strict=True,
    ):
        if kind == "error":  # an InputError: the file's own fault, the same next time
            outcomes[slot] = ("unreadable", Unreadable(found.location, value))
            if cache is not None:
                cache.put(key, {"kind": "error", "error": value})
        elif kind == "unreadable":  # not cached: an OSError may pass
            outcomes[slot] = ("unreadable", Unreadable(found.location, value))
        else:
            if cache is not None:
                cache.put(key, {"kind": "same"} if value is None else {"kind": "result", **asdict(value)})
            outcomes[slot] = ("same", found.location) if value is None else ("result", value)
    results = [value for kind, value in filter(None, outcomes) if kind == "result"]
    results.sort(key=CandidateResult.sort_key)
    if cache is not None:
        cache.save()
    return ScanResult(
        target=target,
        engine=engine,
        candidates=results,
        unreadable=[value for kind, value in filter(None, outcomes) if kind == "unreadable"],
        skipped_same_model=[value for kind, value in filter(None, outcomes) if kind == "same"],
        searched=list(searched or []),
        cache_hits=cache.hits if cache is not None else 0,
        cache_misses=cache.misses if cache is not None else 0,
        next_steps=draftless_steps(target, engine, results),
    )


# At most this many worker processes, whatever the CPUs: each holds one file's metadata (tens
# of MB for a 250k-token vocabulary) besides the target's.
MAX_JOBS = 4
# Fewer files than this are read in this process: starting workers costs more than it saves.
_MIN_FILES_FOR_WORKERS = 4


def default_jobs() -> int:
    """Files read at a time by default: the CPUs this process may use (at most MAX_JOBS), on
    Linux only, where a worker is a fork of this process and starts at once; elsewhere 1 (a
    worker would start a new interpreter and import paircheck again)."""
    if not sys.platform.startswith("linux"):
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(MAX_JOBS, cpus))


@dataclass(frozen=True)
class _Job:
    """What reading one candidate needs besides the candidate: the same for every file."""

    target: ModelDescription
    engine: str
    method: str | None
    describer: Describer
    facts: TargetFacts | None


def _read_one(job: _Job, found: Candidate) -> tuple[str, Any]:
    """One candidate read and summarized: ("result", CandidateResult or None for a copy of the
    target), ("error", line) for an InputError, ("unreadable", line) for another failure."""
    try:
        facts = job.facts or TargetFacts.of(job.target)
        # The description goes out of scope here: only the summary is kept.
        return "result", summarize(job.target, job.describer(found.location), found, job.engine, job.method, facts)
    except InputError as exc:
        return "error", _one_line(str(exc), found.location)
    except (OSError, ValueError, MemoryError) as exc:  # a hostile file must not stop the scan
        return "unreadable", _one_line(f"{type(exc).__name__}: {exc}", found.location)


def _read_all(
    target: ModelDescription, found: list[Candidate], engine: str, method: str | None, describer: Describer,
    progress: Progress | None, jobs: int,
) -> Iterator[tuple[str, Any]]:
    """``_read_one`` of each candidate, in order. The target's facts (its registry look-up, its
    texts) are computed once, only when there is a file to read (a warm scan reads none).

    With ``jobs`` > 1 and enough files, each file is read in one of ``jobs`` worker processes,
    forks of this one (paircheck.scan.workers: they share the target and its facts without
    copying them); only the summaries come back. A process that cannot fork (not Linux), or
    runs other threads, reads the files itself, one at a time."""
    if not found:
        return
    try:
        facts: TargetFacts | None = TargetFacts.of(target)
    except (InputError, OSError, ValueError, MemoryError):
        facts = None  # each candidate then says why, as when it is read in this process
    job = _Job(target, engine, method, describer, facts)
    from paircheck.scan.workers import can_fork, forked_map

    workers = min(jobs, len(found)) if len(found) >= _MIN_FILES_FOR_WORKERS and facts is not None else 1
    if workers <= 1 or not can_fork():
        for candidate in found:
            if progress is not None:
                progress(candidate.location)
            yield _read_one(job, candidate)
        return
    # A forked worker that uses tokenizers (a Hugging Face folder) after this process did would
    # warn on stderr about parallelism; paircheck never needs tokenizers' threads.
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    for candidate, outcome in zip(found, forked_map(functools.partial(_read_one, job), found, workers), strict=True):
        if progress is not None:
            progress(candidate.location)
        yield outcome


def _from_cache(value: dict[str, object], found: Candidate) -> tuple[str, Any] | None:
    """A cached summary as an outcome; None when it does not fit today's fields (read the file again)."""
    kind = value.pop("kind", None)
    if kind == "same":
        return "same", found.location
    if kind == "error":
        return "unreadable", Unreadable(found.location, str(value.get("error")))
    if kind == "result":
        if "modelled_speedup" not in value or "checks_passed" not in value:
            return None  # written before these fields existed: read the file again
        # The path as found this time (a symlink, an Ollama blob): the key is the real path.
        value.update(location=found.location, name=found.name, where=found.where)
        try:
            return "result", CandidateResult(**value)  # type: ignore[arg-type]
        except TypeError:
            return None
    return None


def _one_line(text: str, location: str) -> str:
    """The error on one line, without the location it is listed under."""
    text = " ".join(text.split())
    return text[len(location) + 2:] if text.startswith(f"{location}: ") else text


def scan(
    target: str,
    dirs: list[str] | None = None,
    use_default_dirs: bool = True,
    engine: str = DEFAULT_ENGINE,
    method: str | None = None,
    env: Mapping[str, str] | None = None,
    progress: Progress | None = None,
    use_cache: bool = True,
    jobs: int | None = None,
) -> ScanResult:
    """Rank every model found in ``dirs`` (and the default stores) as a draft for ``target``;
    ``use_cache``: reuse the summaries of unchanged files (see paircheck.scan.cache); ``jobs``:
    files read at a time (None: ``default_jobs()``)."""
    from paircheck.pipeline import read_cache
    from paircheck.scan.discover import places

    env = os.environ if env is None else env
    # The target through the read cache, as the check reads it: a warm scan reads no file at all.
    desc = describe(target, cache=read_cache(env) if use_cache else None)
    where = places(list(dirs or []), use_default_dirs, env, target_folder(desc))
    found = discover(list(dirs or []), use_default_dirs, env, target_folder(desc))
    cache = ScanCache.load(cache_path(env)) if use_cache else None
    result = rank(desc, found, engine, method, progress=progress, searched=[p.path for p in where], cache=cache,
                  jobs=default_jobs() if jobs is None else jobs)
    result.places = where
    return result


def target_folder(desc: ModelDescription) -> str | None:
    """The folder of a target on this machine (its source says), searched beside the stores."""
    local = desc.origin.server_file
    return None if local is None or desc.origin.remote else (os.path.dirname(local) or os.curdir)


def compare(
    target: str,
    drafts: list[str],
    engine: str = DEFAULT_ENGINE,
    method: str | None = None,
) -> ScanResult:
    """Candidates mode (``paircheck T D1 D2 ...``): the same ranking for the given drafts."""
    desc = describe(target)
    return rank(desc, [Candidate(d) for d in drafts], engine, method, searched=list(drafts), jobs=default_jobs())


def probe_best(result: ScanResult, count: int, run: Callable[[str, list[str]], list[Any]], probe_file: str
               ) -> ScanResult:
    """Measure the acceptance of the ``count`` best usable GGUF drafts for llama.cpp and rank again.

    ``run(target, drafts)`` is the probe (paircheck.probe.run.probe_drafts with the caller's
    settings), returning one summary per draft in order; the probe checks each pair again
    and refuses before loading anything, as it does on its own.
    """
    target = result.target.resolved_path or result.target.location
    # Files on this machine only: a draft found on the Hub (scan --hub) is not downloaded to be probed.
    picks = [c for c in result.usable if c.form == "gguf" and os.path.isfile(c.location)
             and (c.engines.get(LLAMACPP) == ACCEPTED if c.engines else result.engine == LLAMACPP)][:count]
    if not picks:
        return result
    for c, summary in zip(picks, run(target, [c.location for c in picks]), strict=True):
        c.measured_acceptance = summary.acceptance_rate
        best = summary.best
        if best is not None and best.predicted is not None:
            c.measured_draft_max, c.measured_p_min = best.draft_max, best.p_min
            c.measured_speedup = round(best.predicted.speedup, 3)
            c.predicted_tokens_per_s = best.predicted.pair_tokens_per_s
    result.candidates.sort(key=CandidateResult.sort_key)
    result.probe_file = probe_file
    return result


__all__ = [
    "NO_TENSORS", "REFERENCE_ACCEPTANCE", "CandidateResult", "ScanResult", "Unreadable", "compare",
    "draftless_steps", "probe_best", "rank", "scan", "summarize",
]
