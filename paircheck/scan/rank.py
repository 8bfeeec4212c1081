"""The scan itself: find the candidates, read each (``jobs`` at a time in forked workers, or
from the summary cache when the file is unchanged), summarize and rank them."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from paircheck.constants import LLAMACPP
from paircheck.errors import InputError
from paircheck.findings import ACCEPTED
from paircheck.model import ModelDescription
from paircheck.pipeline import DEFAULT_ENGINE, describe, readable_target
from paircheck.scan.cache import ScanCache, cache_path, context_key, file_stamp
from paircheck.scan.discover import Candidate, Unlisted, discover
from paircheck.scan.result import CandidateResult, ScanResult, Unreadable
from paircheck.scan.summary import TargetFacts, draftless_steps, summarize

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
