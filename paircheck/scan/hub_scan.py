"""``paircheck scan TARGET --hub``: drafts the user does not have yet, found on the Hugging Face
Hub and judged from their headers, ranked with the models already on this machine.

1. The target is read, and the local scan runs as ``paircheck scan`` runs it.
2. ``hub_candidates.gather`` asks the Hub for candidate repos (at most ``calls`` API calls).
3. The first ``reads`` candidates are read by a small pool of threads, each the least that
   decides: one GGUF's header by range requests (``_source.hub.describe_hub`` with the file
   list already known), or a Hugging Face repo's tokenizer and config files; each is judged
   by ``summarize``, the same per-candidate path as a local file, and only its summary kept.
   Summaries are cached in scan's cache under the repo's commit, so a repo that has not
   changed is not read again.
4. A gated or private repo the token cannot read is "needs access", not a failure; the
   registry's documented drafts that no candidate covers are listed as documented and not
   checked; every failed or cut call is one line.

Offline (``HF_HUB_OFFLINE`` set, or the first call cannot reach the Hub) the scan gives the
local ranking and the registry's documented drafts, and one line that says so.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING

from paircheck._source.hub_settings import DEFAULT_ENDPOINT
from paircheck._source.split_name import all_shards
from paircheck.constants import DRAFT_SIMPLE, canonical_method
from paircheck.errors import InputError
from paircheck.findings import UNKNOWN
from paircheck.model import ModelDescription
from paircheck.pipeline import DEFAULT_ENGINE
from paircheck.scan import (
    DEFAULT_CALLS,
    DEFAULT_READS,
    CandidateResult,
    Progress,
    ScanResult,
    TargetFacts,
    Unreadable,
    default_jobs,
    draftless_steps,
    rank,
    summarize,
    target_folder,
)
from paircheck.scan.cache import ScanCache, cache_path, context_key, file_stamp
from paircheck.scan.discover import Candidate, discover, places
from paircheck.scan.hub_candidates import DocumentedDraft, Gathered, HubCandidate, gather, registry_drafts
from paircheck.scan.rank import _from_cache, _one_line

if TYPE_CHECKING:
    from paircheck._source.hub import HubSettings

WORKERS = 4  # candidates read at the same time
# Requests one read may send: a GGUF header takes 3 to 5, a Hugging Face repo its file list,
# up to 7 small files and 2 per safetensors shard. More means a misbehaving server: stop it.
READ_REQUESTS = 40


@dataclass(frozen=True)
class HubOptions:
    """The budget of a Hub search: API calls, candidates read, reads at a time."""

    calls: int = DEFAULT_CALLS
    reads: int = DEFAULT_READS
    workers: int = WORKERS


@dataclass(frozen=True)
class HubFacts:
    """What a candidate is on the Hub: the JSON's ``repo``, ``file``, ``download``, ``access``."""

    repo: str | None
    file: str | None
    download: str | None
    access: str | None
    shards: tuple[str, ...] = ()
    others: tuple[str, ...] = ()  # other quantizations in the repo, same vocabulary
    label: str | None = None  # REPO:QUANT, as llama.cpp's -hf spells it (the repo for a Hugging Face repo)


@dataclass
class HubReport:
    endpoint: str
    offline: str | None = None  # why the Hub was not searched, on one line (None: it was)
    requests: int = 0  # every HTTP request made, the target's read included
    api_calls: int = 0
    reads: int = 0  # candidates read over the network
    cached: int = 0  # candidates whose summary came from the scan's cache (the repo's commit unchanged)
    not_read: list[str] = field(default_factory=list)  # candidates over the read budget (specs)
    notes: list[str] = field(default_factory=list)  # one line per call that failed or was cut
    facts: dict[str, HubFacts] = field(default_factory=dict)  # by candidate location
    target_files: tuple[str, tuple[str, ...]] | None = None  # (repo, files) of a Hub GGUF target
    urls: list[str] = field(default_factory=list)  # every API call made
    budget: HubOptions = field(default_factory=HubOptions)
    method: str = DRAFT_SIMPLE


@dataclass
class HubScanResult(ScanResult):
    hub: HubReport | None = None


class RequestCounter:
    """Counts every HTTP request of a scan (threads included); a read that sends more than
    ``READ_REQUESTS`` is stopped with one line."""

    def __init__(self) -> None:
        self.total = 0
        self._lock = threading.Lock()

    def __call__(self) -> None:
        with self._lock:
            self.total += 1

    def for_read(self, location: str) -> _ReadCounter:
        return _ReadCounter(self, location)


class _ReadCounter:
    def __init__(self, counter: RequestCounter, location: str) -> None:
        self.counter, self.location, self.sent = counter, location, 0

    def __call__(self) -> None:
        if self.sent >= READ_REQUESTS:
            raise InputError(self.location, f"more than {READ_REQUESTS} requests for one model's metadata: stopped")
        self.sent += 1
        self.counter()


def scan_hub(
    target: str,
    dirs: list[str] | None = None,
    use_default_dirs: bool = True,
    engine: str = DEFAULT_ENGINE,
    method: str | None = None,
    env: Mapping[str, str] | None = None,
    progress: Progress | None = None,
    use_cache: bool = True,
    options: HubOptions | None = None,
    jobs: int | None = None,
) -> HubScanResult:
    """The local scan plus the Hub's candidates (see the module's docstring)."""
    from paircheck._source.hub import HubSettings
    from paircheck._source.interface import ReadOptions
    from paircheck._source.resolve import describe

    env = os.environ if env is None else env
    options = options or HubOptions()
    wanted = canonical_method(method or DRAFT_SIMPLE) or DRAFT_SIMPLE
    counter = RequestCounter()
    desc = describe(target, ReadOptions(on_request=counter))
    beside = target_folder(desc)
    where = places(list(dirs or []), use_default_dirs, env, beside)
    cache = ScanCache.load(cache_path(env)) if use_cache else None
    local = rank(desc, discover(list(dirs or []), use_default_dirs, env, beside), engine, method, progress=progress,
                 searched=[p.path for p in where], cache=cache, jobs=default_jobs() if jobs is None else jobs)
    facts = TargetFacts.of(desc)
    documented = registry_drafts(facts, wanted)
    settings = HubSettings.from_env()
    report = HubReport(settings.endpoint, budget=options, method=wanted)
    gathered = Gathered()
    if settings.offline:
        report.offline = "offline (HF_HUB_OFFLINE is set): the Hub was not searched"
    else:
        gathered = _gather(desc, facts, settings, options, counter, wanted, engine, documented, report)
    if desc.origin.hub_file is not None:
        repo, file = desc.origin.hub_file
        report.target_files = (repo, all_shards(file))
    hub_results, unreadable = _read_all(desc, facts, gathered, local, engine, method, options, counter, report,
                                        progress, cache, settings)
    covered = [*local.candidates, *hub_results]
    hub_results += _documented_only(documented, covered, gathered, report)
    report.requests = counter.total
    results = sorted([*local.candidates, *hub_results], key=CandidateResult.sort_key)
    if cache is not None:
        cache.save()
    return HubScanResult(
        target=desc,
        engine=engine,
        candidates=results,
        unreadable=[*local.unreadable, *unreadable],
        skipped_same_model=local.skipped_same_model,
        searched=[*local.searched, *report.urls],
        places=where,
        cache_hits=cache.hits if cache is not None else 0,
        cache_misses=cache.misses if cache is not None else 0,
        hub=report,
        next_steps=draftless_steps(desc, engine, results),
    )


def _gather(
    desc: ModelDescription,
    facts: TargetFacts,
    settings: HubSettings,
    options: HubOptions,
    counter: RequestCounter,
    method: str,
    engine: str,
    documented: list[DocumentedDraft],
    report: HubReport,
) -> Gathered:
    from paircheck._source.hub_api import HubApi

    api = HubApi(settings, options.calls, counter)
    try:
        gathered = gather(desc, facts, api, method, engine, documented)
    finally:
        api.close()
    report.api_calls = api.calls
    report.urls = list(api.urls)
    report.notes += gathered.notes
    if gathered.calls_cut:
        report.notes.append(f"{gathered.calls_cut} searches not made: the budget of {options.calls} API calls is "
                            "spent (raise it with --hub-calls)")
    if gathered.unreachable is not None:
        report.offline = f"the Hub at {settings.endpoint} could not be reached ({gathered.unreachable})"
    return gathered


def _local_copies(local: ScanResult) -> set[tuple[str, str]]:
    """(repo, file name) of the models already in the Hugging Face cache; a folder is (repo, "")."""
    out = set()
    for c in local.candidates:
        if c.where == "huggingface" and c.name:
            out.add((c.name, "" if os.path.isdir(c.location) else os.path.basename(c.location)))
    return out


def _read_all(
    target: ModelDescription,
    facts: TargetFacts,
    gathered: Gathered,
    local: ScanResult,
    engine: str,
    method: str | None,
    options: HubOptions,
    counter: RequestCounter,
    report: HubReport,
    progress: Progress | None,
    cache: ScanCache | None,
    settings: HubSettings,
) -> tuple[list[CandidateResult], list[Unreadable]]:
    """Judge the gathered candidates: cached summaries first, then up to ``options.reads``
    reads in a pool of ``options.workers`` threads."""
    results: list[CandidateResult] = []
    unreadable: list[Unreadable] = []
    here = _local_copies(local)
    target_key = _target_key(target, gathered)
    context = context_key(engine, method) if cache is not None else ""
    queue: list[tuple[HubCandidate, str | None]] = []
    judged = 0
    for c in gathered.candidates:
        if (c.repo, os.path.basename(c.file or "")) in here:
            continue  # already on this machine: ranked by the local scan
        report.facts[c.spec] = HubFacts(c.repo, c.file, c.download(), c.access, c.shards, c.others, c.label)
        if c.access != "open" and not settings.token:
            results.append(_needs_access(c, settings))
            continue
        # The budget is the first `reads` candidates in reading order, cached or not: a second
        # run answers the same from the cache instead of reading the next ones.
        if judged >= options.reads:
            report.not_read.append(c.spec)
            continue
        judged += 1
        key = _cache_key(settings.endpoint, c, target_key, context) if cache is not None else None
        cached = cache.get(key) if cache is not None and key is not None else None
        if cached is not None:
            outcome = _from_cache(cached, Candidate(c.spec, c.label, "hub"))
            if outcome is not None:
                kind, value = outcome
                if kind == "result":
                    results.append(value)
                elif kind == "unreadable":
                    unreadable.append(value)
                report.cached += 1
                continue
            cache.hits, cache.misses = cache.hits - 1, cache.misses + 1  # type: ignore[union-attr]
        queue.append((c, key))
    report.reads = len(queue)

    def read(c: HubCandidate) -> CandidateResult | None:
        from paircheck._source.hub import HubRef, describe_hub
        from paircheck._source.interface import ReadOptions

        read_options = ReadOptions(on_request=counter.for_read(c.spec))
        listing = (list(c.files), c.sha, dict.fromkeys(c.files)) if c.file else None
        draft = describe_hub(c.spec, HubRef(c.repo, "main", None, c.file), read_options, listing)
        summary = summarize(target, draft, Candidate(c.spec, c.label, "hub"), engine, method, facts)
        if summary is None:
            return None
        # Only the summary leaves the thread: the description is dropped here. A remote GGUF's
        # size is the Hub's (Content-Range), not a local file's.
        size = summary.file_bytes if summary.file_bytes is not None else draft.metadata.file_size
        return replace(summary, form="gguf" if c.file else "hf-folder", file_bytes=size if c.file else None)

    with ThreadPoolExecutor(max_workers=max(1, options.workers)) as pool:
        futures = {pool.submit(read, c): (c, key) for c, key in queue}
        for future in as_completed(futures):
            c, key = futures[future]
            if progress is not None:
                progress(c.spec)
            try:
                summary = future.result()
            except InputError as exc:
                error = _one_line(str(exc), c.spec)
                if exc.message.startswith("access denied"):
                    results.append(_needs_access(c, settings, error))
                else:
                    unreadable.append(Unreadable(c.spec, error))
                continue
            except (OSError, ValueError, MemoryError) as exc:  # a hostile answer must not stop the scan
                unreadable.append(Unreadable(c.spec, _one_line(f"{type(exc).__name__}: {exc}", c.spec)))
                continue
            if cache is not None and key is not None:
                cache.put(key, {"kind": "same"} if summary is None else {"kind": "result", **asdict(summary)})
            if summary is not None:
                results.append(summary)
    return results, unreadable


def _target_key(target: ModelDescription, gathered: Gathered) -> list[object] | None:
    """What the target is, for cache keys: a local file's stamp, or a Hub file at a commit."""
    stamp = file_stamp(target.resolved_path) if target.resolved_path and "://" not in target.resolved_path else None
    if stamp is not None:
        return list(stamp)
    if target.origin.hub_file is not None and gathered.target_sha:
        return ["hub", *target.origin.hub_file, gathered.target_sha]
    return None


def _cache_key(endpoint: str, c: HubCandidate, target_key: list[object] | None, context: str) -> str | None:
    if target_key is None or not c.sha:
        return None
    return json.dumps(["hub", endpoint, c.repo, c.file or "", c.sha, *target_key, context])


def _needs_access(c: HubCandidate, settings: HubSettings, error: str | None = None) -> CandidateResult:
    if c.access == "private":
        why = "a private repo: log in with a token that can read it (`hf auth login` or HF_TOKEN)"
    else:
        # The page to accept it on, for the Hub itself (a mirror's pages may live elsewhere).
        page = f" ({settings.endpoint}/{c.repo})" if settings.endpoint == DEFAULT_ENDPOINT else ""
        why = f"accept the licence on the Hub{page}, then log in (`hf auth login`) or set HF_TOKEN"
    return CandidateResult(
        location=c.spec, name=c.label, where="hub", usable=None, verdict=UNKNOWN, first_failure=None,
        reason=f"needs access: {why}" + (f" (the Hub said: {error})" if error and "HF_TOKEN" not in error else ""),
        documented=c.documented, file_bytes=None, cost_ratio=None, size_warning=None,
        form="gguf" if c.file else "hf-folder", documented_by="name" if c.documented else None,
    )


def _documented_only(
    documented: list[DocumentedDraft], covered: list[CandidateResult], gathered: Gathered, report: HubReport
) -> list[CandidateResult]:
    """The registry's documented drafts that no listed candidate is a copy of: documented, not
    checked (offline, not found, or not read)."""
    from paircheck._registry.identity import normalise_name, ref_key

    keys = {normalise_name(c.name or c.location) for c in covered}
    keys |= {normalise_name(c.repo) for c in gathered.candidates}
    if report.offline is None:
        default = "no copy of it came back from the Hub search"
    else:
        default = "offline" if report.offline.startswith("offline") else "the Hub could not be reached"
    out: list[CandidateResult] = []
    seen: set[str] = set()
    for d in documented:
        ref = d.entry.draft
        label = ref.repo or ref.name
        if ref_key(ref) in keys or label in seen:
            continue
        seen.add(label)
        why = default
        if ref.repo in gathered.unreadable:
            why = "its repo holds neither a GGUF nor tokenizer files, which is what paircheck reads"
        report.facts[label] = HubFacts(ref.repo, None, None, None)
        engines = ", ".join(d.entry.engines)
        out.append(CandidateResult(
            location=label, name=None, where="registry", usable=None, verdict=UNKNOWN, first_failure=None,
            reason=f"{label} is documented ({d.entry.method} on {engines}, {d.entry.best_evidence()}); "
                   f"not checked: {why}",
            documented=True, file_bytes=None, cost_ratio=None, size_warning=None,
            # Not read: what the repo's name says (GGUF repos are named so by convention).
            form="gguf" if "gguf" in label.casefold() else "hf-folder",
            documented_by="vocabulary" if d.by_vocabulary else "name",
        ))
    return out
