"""One candidate reduced to its summary: checked against the target (whose facts are computed
once per scan, ``TargetFacts``), the registry consulted, its memory and modelled speed."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from paircheck.constants import LLAMACPP
from paircheck.errors import InputError
from paircheck.findings import ABORTS, ACCEPTED, FAIL, REFUSED, Report
from paircheck.fingerprint import fingerprints
from paircheck.model import ModelDescription
from paircheck.pipeline import DEFAULT_ENGINE, check_all_engines, check_descriptions
from paircheck.scan.discover import Candidate
from paircheck.scan.result import REFERENCE_ACCEPTANCE, CandidateResult
from paircheck.weights import WeightBytes, description_weight_bytes, parameter_count

if TYPE_CHECKING:  # the registry is imported when a scan runs, not at start-up
    from paircheck._registry.consult import FileVocab




def _file_bytes(path: str | None) -> int | None:
    if not path:
        return None
    try:
        if os.path.isdir(path):
            return sum(e.stat().st_size for e in os.scandir(path) if e.is_file())
        return os.path.getsize(path)
    except OSError:
        return None


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
