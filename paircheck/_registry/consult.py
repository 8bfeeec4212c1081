"""What the registry of documented pairs says about one target/draft pair.

Pure: two ModelDescriptions and a Registry in, a list of Findings out. The findings
never change a verdict (the engines' rules decide); they cite the source that
documents the pair, say when it is documented as failing, point at the family's
documented pairs, and flag an EAGLE/MTP/DFlash head documented for another target.

Each side is identified from everything its description knows: the GGUF
``general.repo_url``/``general.source.repo_url`` (as a Hub repo id), ``general.name``,
``general.basename`` + ``size_label`` + ``finetune``, a Hugging Face cache folder
(``models--Org--Name``) in the path, and the path, URL or repo id the user typed.
``general.base_model.*`` is deliberately not used: a fine-tune of X is not X.
Registry entries that carry vocabulary fingerprints (``target_vocab``/``draft_vocab``)
also match a file by its vocabulary, weakest of all: a vocabulary is shared by a family,
so such a match says "a model with the vocabulary of X", narrowed to X's side only when
the file's size (``general.size_label`` or its tensor infos) is X's.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from paircheck._registry.entry import RegistryEntry, VocabPrint, evidence_text
from paircheck._registry.identity import ModelIdentity, ModelRef, identity_from_string, size_billions
from paircheck._registry.load import Registry, fingerprint_matches, match_model
from paircheck.constants import canonical_method
from paircheck.findings import INFO, Finding, Rule
from paircheck.fingerprint import Fingerprints, fingerprints, prefix_end
from paircheck.model import ModelDescription

# Methods whose draft is a head trained for one specific target.
HEAD_METHODS = frozenset({"eagle", "eagle3", "medusa", "mlp-speculator", "dflash", "dspark", "mtp"})

R_DOCUMENTED = Rule(
    "RG001",
    "documented_pair",
    "The pair is documented by a credible source",
    "paircheck's registry (registry/*.toml, `paircheck pairs`) lists this target and draft, "
    "with the source, the engines it names and how strong its evidence is: measured (a run "
    "with figures), ran (a run without figures), recommended (suggested, no run shown) or "
    "computed (an acceptance rate or compatibility worked out, nothing ran). Only the first "
    "two show the pair working. Caveats the registry records for the pair are shown with it. "
    "It never changes the engine's verdict, which comes from the files themselves.",
    "Nothing; read the source for the settings it used.",
    kind="registry",
)
R_DOCUMENTED_FAILING = Rule(
    "RG002",
    "documented_failing",
    "The pair is documented as failing",
    "A source in the registry reports this pair failing (for example vLLM refusing padded "
    "vocabularies), with the reason and how the failure is documented: shown in a run, "
    "refused by the engine's code, or only stated.",
    "Follow the reason given, or pick a draft from `paircheck pairs --for TARGET`.",
    kind="registry",
)
R_FAMILY = Rule(
    "RG003",
    "family_documented",
    "Drafts are documented for this target or its family",
    "The pair itself is not in the registry, but the target or its family is: the "
    "documented drafts are a good place to start.",
    "See `paircheck pairs --for TARGET` or `paircheck pairs --family FAMILY`.",
    kind="registry",
)
R_HEAD_ELSEWHERE = Rule(
    "RG004",
    "head_for_other_target",
    "The draft is a head documented for another target",
    "EAGLE/EAGLE-3, MTP and DFlash drafts are trained on one target's hidden states; the "
    "registry documents this one for a different target than the one given.",
    "Use the head with the target it was trained for, or a standalone draft model.",
    kind="registry",
)
R_UNAVAILABLE = Rule(
    "RG000",
    "registry_unavailable",
    "The registry of documented pairs could not be read",
    "paircheck ships its registry as TOML files (registry/*.toml in a checkout, package data "
    "in an installed wheel). When they are missing or invalid the check still runs and the "
    "verdict is unchanged; only the notes on documented pairs are missing.",
    "Reinstall paircheck, or fix the TOML file the message names (`pytest tests/_registry/test_registry.py` "
    "validates a checkout).",
    kind="registry",
)
RULES = (R_UNAVAILABLE, R_DOCUMENTED, R_DOCUMENTED_FAILING, R_FAMILY, R_HEAD_ELSEWHERE)
DOCUMENTED = (R_DOCUMENTED.code, R_DOCUMENTED.name)
DOCUMENTED_FAILING = (R_DOCUMENTED_FAILING.code, R_DOCUMENTED_FAILING.name)
FAMILY = (R_FAMILY.code, R_FAMILY.name)
HEAD_ELSEWHERE = (R_HEAD_ELSEWHERE.code, R_HEAD_ELSEWHERE.name)

MAX_PAIRS = 3  # documented-pair findings shown; the rest are in `paircheck pairs`

_HF_CACHE_RE = re.compile(r"^models--([^-].*?)--(.+)$")
# A repo id beats a name, which beats a vocabulary fingerprint: a fingerprint names a
# vocabulary that a whole family shares (Llama 3.1 8B and 70B), narrowed by a size if any.
_STRENGTH = {"repo": 0, "name": 1, "vocabulary+size": 2, "vocabulary": 3}


# --------------------------------------------------------------------------- identity


@dataclass(frozen=True)
class Pairs:
    """``paircheck pairs``' answer: the documented pairs chosen, the model asked about (with
    ``--for``), and what the registry says of that model's vocabulary."""

    entries: list[RegistryEntry]
    query: ModelIdentity | None = None
    note: str | None = None


def identities(desc: ModelDescription) -> tuple[ModelIdentity, ...]:
    """Every identity a description offers, most specific first, without duplicates."""
    ident = desc.identity
    found: list[ModelIdentity] = []
    repo = None
    if ident.repo:
        # general.repo_url is a URL ("https://huggingface.co/Qwen/Qwen2.5-14B-Instruct");
        # an HF folder or Hub source already gives the repo id.
        repo = identity_from_string(ident.repo).repo
    if repo or ident.name or ident.basename:
        found.append(
            ModelIdentity(
                repo=repo,
                name=ident.name,
                basename=ident.basename,
                size_label=ident.size_label,
                finetune=ident.finetune,
            )
        )
    for text in (desc.resolved_path, desc.location):
        cached = _hf_cache_identity(text)
        if cached is not None:
            found.append(cached)
    if desc.location:
        found.append(identity_from_string(desc.location))
    unique: list[ModelIdentity] = []
    for item in found:
        if item not in unique and (item.repo or item.name_keys()):
            unique.append(item)
    return tuple(unique)


def _hf_cache_identity(path: str | None) -> ModelIdentity | None:
    """``.../models--Org--Name/snapshots/<hash>/...`` names the repo it caches."""
    if not path:
        return None
    for part in reversed(re.split(r"[\\/]", path)):
        m = _HF_CACHE_RE.match(part)
        if m:
            return ModelIdentity(repo=f"{m.group(1)}/{m.group(2)}", name=m.group(2))
    return None


# Two sizes are "the same model size" within this relative distance: a label rounds
# (Qwen2.5-7B has 7.6B parameters) and a parameter count includes the embeddings.
SIZE_TOLERANCE = 0.2


@dataclass(frozen=True)
class FileVocab:
    """What a file offers to be recognised by vocabulary when its name says nothing.

    ``full``/``prefix`` are its fingerprints (paircheck.fingerprint); ``size_b`` its
    parameter count in billions from ``general.size_label`` or its tensor infos, with
    ``size_from`` saying which; None when the file has neither (a vocab-only file).
    """

    full: str | None = None
    prefix: str | None = None
    prefix_end: int | None = None
    size_b: float | None = None
    size_from: str | None = None


def file_vocab(desc: ModelDescription, fps: Fingerprints | None = None) -> FileVocab:
    """The fingerprints and size of one description (fingerprints computed when not given)."""
    got = fps if fps is not None else fingerprints(desc.vocab)
    size_b, size_from = None, None
    label = desc.identity.size_label
    if size_billions(label) is not None:
        size_b, size_from = size_billions(label), f"general.size_label {label}"
    elif desc.metadata.tensors:
        count = desc.metadata.get("split.count")
        if not (isinstance(count, int) and count > 1):  # the first shard holds only part
            n = sum(math.prod(t.shape) for t in desc.metadata.tensors)
            if n:
                size_b, size_from = n / 1e9, f"tensor infos: {n / 1e9:.2f}B parameters"
    return FileVocab(got.full, got.prefix, got.prefix_end, size_b, size_from)


def _as_file_vocab(value: FileVocab | str | None) -> FileVocab | None:
    # A bare string is a full fingerprint (the older calling convention).
    return FileVocab(full=value) if isinstance(value, str) else value


def vocab_matches(vocab: VocabPrint | None, fv: FileVocab | None) -> bool:
    """Whether a file has the vocabulary a registry side documents (prefix, or full when given)."""
    if vocab is None or fv is None:
        return False
    return fingerprint_matches(vocab.prefix, fv.prefix) or fingerprint_matches(vocab.full, fv.full)


def vocab_differs(vocab: VocabPrint | None, fv: FileVocab | None) -> bool:
    """True only when the prefix fingerprints prove different vocabularies: same prefix end
    (every id below it is compared), different value. Different ends prove nothing."""
    if vocab is None or fv is None or not fv.prefix or fv.prefix_end is None:
        return False
    return prefix_end(vocab.vocab_size) == fv.prefix_end and not fingerprint_matches(vocab.prefix, fv.prefix)


def _side_match(
    ref: ModelRef, vocab: VocabPrint | None, idents: Sequence[ModelIdentity], fv: FileVocab | None
) -> str | None:
    best = None
    for ident in idents:
        how = match_model(ref, ident)
        if how == "repo":
            return how
        best = best or how
    if best is not None or not vocab_matches(vocab, fv):
        return best
    assert fv is not None
    # The vocabulary is shared by a whole family: a size narrows it to this side, a
    # different size rules this side out, no size leaves "a model with this vocabulary".
    documented = size_billions(identity_from_string(ref.name).size_label)
    if fv.size_b is None or documented is None:
        return "vocabulary"
    if abs(fv.size_b - documented) <= SIZE_TOLERANCE * documented:
        return "vocabulary+size"
    return None


# --------------------------------------------------------------------------- matching


@dataclass(frozen=True)
class PairMatch:
    entry: RegistryEntry
    target_by: str
    draft_by: str

    def strength(self) -> int:
        return max(_STRENGTH[self.target_by], _STRENGTH[self.draft_by])

    def by_vocabulary(self) -> list[str]:
        """The sides recognised by vocabulary fingerprint, not by name."""
        return [side for side, how in (("target", self.target_by), ("draft", self.draft_by)) if how.startswith("vocab")]


def find_documented(
    registry: Registry,
    target: Sequence[ModelIdentity],
    draft: Sequence[ModelIdentity],
    target_fp: FileVocab | str | None = None,
    draft_fp: FileVocab | str | None = None,
) -> list[PairMatch]:
    """Entries documenting this target/draft pair, best match first."""
    t_fv, d_fv = _as_file_vocab(target_fp), _as_file_vocab(draft_fp)
    out: list[PairMatch] = []
    for e in registry.entries:
        t = _side_match(e.target, e.target_vocab, target, t_fv)
        if t is None:
            continue
        d = _side_match(e.draft, e.draft_vocab, draft, d_fv)
        if d is not None:
            out.append(PairMatch(e, t, d))
    out.sort(key=lambda m: (m.strength(), m.entry.status != "works", m.entry.sort_key()))
    if out and out[0].strength() < _STRENGTH["vocabulary+size"]:
        # Recognised by name: entries that share only the vocabulary would be noise.
        out = [m for m in out if m.strength() < _STRENGTH["vocabulary+size"]]
    return out


def target_matches(
    registry: Registry, target: Sequence[ModelIdentity], target_fp: FileVocab | str | None = None
) -> list[tuple[RegistryEntry, str]]:
    """Entries whose target is this model, each with how it matched, best match first."""
    fv = _as_file_vocab(target_fp)
    scored = []
    for e in registry.entries:
        how = _side_match(e.target, e.target_vocab, target, fv)
        if how is not None:
            scored.append((_STRENGTH[how], e.status != "works", e.sort_key(), e, how))
    scored.sort(key=lambda item: item[:3])
    if not scored:
        return []
    by_name = scored[0][0] < _STRENGTH["vocabulary+size"]
    # Recognised by name, the entries for that name only (a GGUF of the model lists what its
    # repo id lists); by vocabulary only, every entry of that vocabulary.
    return [(item[3], item[4]) for item in scored if (item[0] < _STRENGTH["vocabulary+size"]) == by_name]


def drafts_for(
    registry: Registry, target: Sequence[ModelIdentity], target_fp: FileVocab | str | None = None
) -> list[RegistryEntry]:
    """Entries whose target is this model (any of its identities), best match first."""
    return [e for e, _ in target_matches(registry, target, target_fp)]


def vocabulary_note(matches: Sequence[tuple[RegistryEntry, str]], fv: FileVocab | str | None) -> str | None:
    """One sentence when the target was recognised by vocabulary only, saying how far that goes."""
    fv = _as_file_vocab(fv)
    by_vocab = [(e, how) for e, how in matches if how.startswith("vocabulary")]
    if not by_vocab or len(by_vocab) != len(matches):
        return None
    names = list(dict.fromkeys(e.target.name for e, _ in by_vocab))
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    fp = fv.prefix if fv and fv.prefix else "?"
    if all(how == "vocabulary+size" for _, how in by_vocab) and fv and fv.size_from:
        return (f"recognised by vocabulary fingerprint ({fp}) and size ({fv.size_from}), not by name: "
                f"a model with the vocabulary and size of {shown}")
    return (f"recognised by vocabulary fingerprint ({fp}) only, not by name: a model with the vocabulary of "
            f"{shown}; the file carries no size that narrows it to one model")


def family_of(registry: Registry, idents: Iterable[ModelIdentity]) -> str | None:
    """The registry family a model's name belongs to, or None.

    A family slug matches a name token exactly or as a version prefix ("llama3" matches
    "llama3.1"); multi-word slugs ("qwen3-next") need every word. The most specific
    family wins, so "qwen3.5" beats "qwen3" for Qwen3.5-0.8B.
    """
    token_sets = [keys for ident in idents for keys in ident.name_keys()]
    best: tuple[int, int, str] | None = None
    for family in registry.families():
        head, *rest = family.split("-")
        for tokens in token_sets:
            if not all(w in tokens for w in rest):
                continue
            if any(t == head or t.startswith(head + ".") for t in tokens):
                score = (len(rest), len(family), family)
                if best is None or score > best:
                    best = score
    return best[2] if best else None


# --------------------------------------------------------------------------- findings


def _model(ref: ModelRef) -> str:
    return ref.repo or ref.name


def _source(e: RegistryEntry) -> str:
    # Last in the message and without a trailing period, so the URL copies cleanly.
    if e.source_unread() and e.quote_url:
        return (
            f"The cited source could not be re-read: {e.source.url} . "
            f"Evidence read {e.source.checked.isoformat()}: {e.quote_url}"
        )
    return f"Source ({e.source.kind}, checked {e.source.checked.isoformat()}): {e.source.url}"


# How to name a head method in a sentence, with its article.
_HEAD_NAMES = {
    "eagle": "an EAGLE",
    "eagle3": "an EAGLE-3",
    "medusa": "a Medusa",
    "mlp-speculator": "an MLP-speculator",
    "dflash": "a DFlash",
    "dspark": "a DSpark",
    "mtp": "an MTP",
}


def _entry_details(e: RegistryEntry, **extra: object) -> dict[str, object]:
    return {
        "id": e.id,
        "family": e.family,
        "target": _model(e.target),
        "draft": _model(e.draft),
        "method": e.method,
        "engines": list(e.engines),
        "fails_on": list(e.fails_on),
        "status": e.status,
        "why": e.why,
        "evidence": e.evidence,
        "engine_evidence": {x: e.evidence_for(x) for x in (*e.engines, *e.fails_on)},
        "figure": e.figure,
        "shown_running": e.shown_running(),
        "quote": e.quote,
        "caveats": [c.shown() for c in e.caveats],
        "source": {"url": e.source.url, "kind": e.source.kind, "checked": e.source.checked.isoformat()},
        "see_also": list(e.see_also),
        **extra,
    }


def _recognised(m: PairMatch, fvs: Mapping[str, FileVocab | None]) -> str:
    """How far a vocabulary match goes, said before the pair so no one reads it as a name match."""
    parts = []
    for side in m.by_vocabulary():
        ref = m.entry.target if side == "target" else m.entry.draft
        fv = fvs.get(side)
        documented = m.entry.target_vocab if side == "target" else m.entry.draft_vocab
        # Matched on the prefix fingerprint (the first ids) without the whole vocabulary's
        # agreeing, the file may hold another release of the family: say the prefix, no more.
        whole = documented is not None and fv is not None and fingerprint_matches(documented.full, fv.full)
        vocab = "vocabulary" if whole else "vocabulary prefix"
        if getattr(m, f"{side}_by") == "vocabulary+size" and fv and fv.size_from:
            parts.append(f"the {side} has the {vocab} and size ({fv.size_from}) of {ref.name}")
        elif whole:
            parts.append(f"the {side} is a model with the vocabulary of {ref.name} (no size in the file narrows it)")
        else:
            ids = f" (ids below {fv.prefix_end:,})" if fv is not None and fv.prefix_end else ""
            parts.append(f"the {side} shares the vocabulary prefix{ids} of {ref.name} (no size in the file "
                         "narrows it)")
    if not parts:
        return ""
    return f"Recognised by vocabulary fingerprint, not by name: {'; '.join(parts)}. Documented pair: "


def _pair_finding(m: PairMatch, fvs: Mapping[str, FileVocab | None]) -> Finding:
    e = m.entry
    pair = _recognised(m, fvs) + f"{e.target.name} + {e.draft.name} ({e.method})"
    mismatched = [
        side
        for side, documented in (("target", e.target_vocab), ("draft", e.draft_vocab))
        if vocab_differs(documented, fvs.get(side))
    ]
    caveat = (
        f" The documented {' and '.join(mismatched)} vocabulary fingerprint differs from this file's."
        if mismatched
        else ""
    )
    details = _entry_details(e, matched_by={"target": m.target_by, "draft": m.draft_by}, fingerprint_differs=mismatched)
    caveats = "".join(f" Caveat: {c.shown().rstrip('.')}." for c in e.caveats)
    if e.status == "fails":
        code, name = DOCUMENTED_FAILING
        message = f"{pair} is {evidence_text(e)}: {e.why}.{caveats}{caveat} {_source(e)}"
        fix = "Read the source before relying on this pair; `paircheck pairs --for TARGET` lists documented drafts."
        return Finding(code, name, INFO, message, details, fix)
    code, name = DOCUMENTED
    # evidence_text never says "works": recommended/computed entries say nothing was shown running.
    message = f"{pair} is {evidence_text(e)}.{caveats}{caveat} {_source(e)}"
    return Finding(code, name, INFO, message, details, None)


def _same_method(e: RegistryEntry, method: str | None) -> bool:
    """Whether a documented pair uses the method being checked (any spelling)."""
    if method is None:
        return True
    wanted = canonical_method(method) or method
    return (canonical_method(e.method) or e.method) == wanted


def _offered(e: RegistryEntry) -> str:
    engines = ", ".join((*e.engines, *(f"!{x}" for x in e.fails_on)))
    return f"{e.draft.name} ({e.method}; {engines})" if engines else f"{e.draft.name} ({e.method})"


def _family_finding(
    registry: Registry,
    target_ids: Sequence[ModelIdentity],
    draft_ids: Sequence[ModelIdentity],
    target_fp: FileVocab | None,
    location: str,
    method: str | None = None,
) -> Finding | None:
    """RG003. Only drafts documented for the method being checked are offered as drafts; a
    pair documented for another method (an EAGLE head when draft-simple is checked) is
    named as such, never offered for this one."""
    matches = target_matches(registry, target_ids, target_fp)
    every = [e for e, _ in matches]
    for_target = [e for e in every if _same_method(e, method)]
    others = [e for e in every if not _same_method(e, method)]
    code, name = FAMILY
    kind = f"{method} " if method else ""
    if every:
        # A vocabulary match names a family, not this model: say so rather than "this target".
        whom = ("this target" if matches[0][1] in ("repo", "name")
                else "targets with this vocabulary (recognised by fingerprint, not by name)")
        where = f"paircheck pairs --for {_quote(location)}"
        details: dict[str, object] = {
            "target_entries": [e.id for e in for_target],
            # The drafts themselves, by name, for the way forward of a refused pair.
            "drafts": list(dict.fromkeys(e.draft.name for e in for_target if not e.draft.builtin)),
            "other_methods": [e.id for e in others],
            "family": every[0].family,
            "method": method,
        }
        if for_target:
            shown = ", ".join(dict.fromkeys(_offered(e) for e in for_target[:3]))
            more = f" and {len(for_target) - 3} more" if len(for_target) > 3 else ""
            also = f" ({len(others)} more for other methods)" if others else ""
            message = (f"this exact pair is not documented, but {len(for_target)} {kind}draft(s) are documented "
                       f"for {whom}: {shown}{more}{also}.")
            fix = f"{where} --method {method}" if method else where
        else:
            shown = ", ".join(dict.fromkeys(_offered(e) for e in others[:3]))
            more = f" and {len(others) - 3} more" if len(others) > 3 else ""
            message = (f"this exact pair is not documented, and no {kind}draft is documented for {whom}; "
                       f"the registry has {len(others)} for other methods, which {method or 'this method'} cannot "
                       f"use: {shown}{more}.")
            fix = where
        return Finding(code, name, INFO, message, details, fix)
    family = family_of(registry, target_ids)
    if family is None:
        return None
    entries = [e for e in registry.entries if e.family == family]
    draft_family = family_of(registry, draft_ids)
    same = "" if draft_family in (None, family) else f" (the draft looks like {draft_family})"
    # The method being checked makes the best example; then a classic draft; then any working pair.
    example = min(entries, key=lambda e: (not _same_method(e, method), e.status != "works", e.draft.builtin,
                                          e.method != "draft-model"))
    note = "" if _same_method(example, method) else f"; none for {method}"
    return Finding(
        code,
        name,
        INFO,
        f"this exact pair is not documented; the registry has {len(entries)} pair(s) for the {family} "
        f"family{same}, e.g. {example.target.name} + {example.draft.name} ({example.method}){note}.",
        {"family": family, "draft_family": draft_family, "entries": [e.id for e in entries], "method": method},
        f"paircheck pairs --family {family}" + (f" --method {method}" if method and not note else ""),
    )


def _head_findings(
    registry: Registry,
    target_ids: Sequence[ModelIdentity],
    draft_ids: Sequence[ModelIdentity],
    target_fp: FileVocab | None,
    draft_fp: FileVocab | None,
) -> list[Finding]:
    heads = [
        e
        for e in registry.entries
        if e.method in HEAD_METHODS and _side_match(e.draft, e.draft_vocab, draft_ids, draft_fp) is not None
    ]
    if not heads or any(_side_match(e.target, e.target_vocab, target_ids, target_fp) for e in heads):
        return []
    code, name = HEAD_ELSEWHERE
    e = heads[0]
    targets = ", ".join(dict.fromkeys(_model(h.target) for h in heads))
    return [
        Finding(
            code,
            name,
            INFO,
            f"the draft is documented as {_HEAD_NAMES.get(e.method, 'a ' + e.method)} head for {targets}, and "
            f"this target does not look like that model: a head only works with the model it was trained "
            f"for. {_source(e)}",
            _entry_details(e, documented_targets=[_model(h.target) for h in heads]),
            f"Use the head with {_model(e.target)}, or look for one made for your target: "
            f"paircheck pairs --for TARGET --method {e.method}",
        )
    ]


def consult(
    registry: Registry,
    target: ModelDescription,
    draft: ModelDescription,
    fingerprints: Mapping[str, Fingerprints | str | None] | None = None,
    method: str | None = None,
) -> list[Finding]:
    """The registry's findings for this pair (empty when it knows nothing).

    ``fingerprints`` maps "target"/"draft" to their paircheck.fingerprint.Fingerprints
    (or a bare full fingerprint), used for entries that carry vocabulary fingerprints;
    a side without one is not matched by vocabulary. ``method``: the speculative method
    being checked (any spelling); drafts documented for another method are never offered
    for it.
    """
    given = dict(fingerprints or {})
    fvs: dict[str, FileVocab | None] = {}
    for side, desc in (("target", target), ("draft", draft)):
        value = given.get(side)
        fvs[side] = file_vocab(desc, value) if isinstance(value, Fingerprints) else _as_file_vocab(value)
    t_fp, d_fp = fvs["target"], fvs["draft"]
    target_ids, draft_ids = identities(target), identities(draft)
    pairs = find_documented(registry, target_ids, draft_ids, t_fp, d_fp)
    if pairs:
        return [_pair_finding(m, fvs) for m in pairs[:MAX_PAIRS]]
    found = _head_findings(registry, target_ids, draft_ids, t_fp, d_fp)
    family = _family_finding(registry, target_ids, draft_ids, t_fp, target.location, method)
    if family is not None:
        found.append(family)
    return found


def _quote(text: str) -> str:
    return text if re.fullmatch(r"[A-Za-z0-9_./:@%+=,-]+", text) else "'" + text.replace("'", "'\\''") + "'"


__all__ = [
    "HEAD_METHODS",
    "PairMatch",
    "consult",
    "FileVocab",
    "drafts_for",
    "family_of",
    "file_vocab",
    "target_matches",
    "vocabulary_note",
    "find_documented",
    "identities",
]
