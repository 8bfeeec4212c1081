"""paircheck as a library: one function per command, each returning the result object that
command renders. ``import paircheck`` gives the same names, loaded on first use (so that the
command line's start stays fast). ``scan`` and ``fit`` are ``scan_drafts`` and ``fit_pair``:
``paircheck.scan`` and ``paircheck.fit`` are the packages that do the work.

    import paircheck
    report = paircheck.check("target.gguf", "draft.gguf")
    print(report.verdict, report.first_failure)

Every function takes what its command takes, as Python values (paths, Hub repo ids or URLs
for models), reads what it needs, and raises ``paircheck.errors.InputError`` (one line, the
command's exit 2) for input it cannot use. The pipeline under them (sources -> descriptions ->
engine rules -> report) is ``paircheck.pipeline``; the command line (``paircheck.cli``) only
parses options, calls these and picks a format.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from paircheck.constants import LLAMACPP
from paircheck.errors import InputError

if TYPE_CHECKING:
    from paircheck._registry.consult import Pairs
    from paircheck.findings import EveryEngine, Report, Rule
    from paircheck.fit import FitResult
    from paircheck.model import ModelDescription, Override
    from paircheck.preflight.lint import LintResult
    from paircheck.scan import ScanResult
    from paircheck.speed.estimate import Estimate

DEFAULT_ENGINE = LLAMACPP


def describe(model: str, overrides: Mapping[str, Override] | None = None) -> ModelDescription:
    """What paircheck reads of one model (a GGUF file, a Hugging Face folder, a Hub repo id or
    a URL): its metadata, vocabulary and tensor infos, never its weights."""
    from paircheck.pipeline import describe as _describe

    return _describe(model, overrides)


def check(target: str, draft: str | None, *, engine: str = DEFAULT_ENGINE, method: str | None = None,
          overrides: Mapping[str, Override] | None = None, registry: bool = True) -> Report:
    """``paircheck TARGET DRAFT``: the pair for one engine (``llama.cpp``, ``vllm@0.20.0``, ...)
    and speculative method; ``draft`` None for the methods without a draft (ngram-*, suffix)."""
    from paircheck.pipeline import check_pair

    return check_pair(target, draft, engine=engine, method=method, overrides=overrides, registry=registry)


def check_every_engine(target: str, draft: str, *, method: str | None = None) -> EveryEngine:
    """``paircheck --engine all TARGET DRAFT``: one report per engine that has ``method``,
    llama.cpp first."""
    from paircheck.findings import EveryEngine
    from paircheck.pipeline import check_all_engines, readable_target

    return EveryEngine(check_all_engines(readable_target(describe(target)), describe(draft), method))


def scan_drafts(target: str, folders: Sequence[str] = (), *, default_folders: bool = True, engine: str = DEFAULT_ENGINE,
         method: str | None = None) -> ScanResult:
    """``paircheck scan TARGET [FOLDER...]``: every model found in ``folders``, beside the
    target and (``default_folders``) in the usual model stores, ranked as a draft for it."""
    from paircheck.scan import scan as _scan

    return _scan(target, list(folders), default_folders, engine, method)


def fit_pair(target: str, draft: str, *, ctx: int | None = None, vram: str | None = None) -> FitResult:
    """``paircheck fit TARGET DRAFT``: both models' memory as llama-server allocates it with its
    defaults, at ``ctx`` tokens (default: the target's training context), against ``vram``
    ("24GiB"; default: no budget)."""
    from paircheck.fit import pair_memory

    return pair_memory(describe(target), describe(draft), ctx, vram)


def estimate(target: str, draft: str, *, acceptance: float | None = None, draft_max: int | None = None) -> Estimate:
    """``paircheck estimate TARGET DRAFT``: the modelled speedup from both models' weight bytes,
    at ``acceptance`` (a per-token rate; default: a documented one for this pair, else the
    assumed band), labelled as a model."""
    from paircheck.speed.estimate import DEFAULT_DRAFT_MAX, estimate_pair

    if draft_max is not None and draft_max < 1:
        raise InputError("draft_max", f"must be at least 1, got {draft_max}")
    return estimate_pair(describe(target), describe(draft), acceptance, draft_max or DEFAULT_DRAFT_MAX)


def pairs(for_target: str | None = None, *, family: str | None = None, method: str | None = None,
          engine: str | None = None, status: str | None = None, evidence: str | None = None,
          search: str | None = None, registry_path: Path | None = None) -> Pairs:
    """``paircheck pairs``: the registry's documented pairs that match every filter given, or
    (``for_target``: a file, folder, Hub repo id or model name) the drafts documented for one
    target."""
    from paircheck._registry.consult import Pairs, family_of, target_matches, vocabulary_note
    from paircheck._registry.load import load_registry
    from paircheck.pipeline import identities_for

    registry = load_registry(registry_path)
    if family and not any(f == family or f.startswith(family) for f in registry.families()):
        raise InputError("--family", f"{family!r} matches no family (known: {', '.join(registry.families())})")
    chosen = registry.filter(family=family, method=method, engine=engine, status=status, search=search,
                             evidence=evidence)
    if for_target is None:
        return Pairs(list(chosen))
    if not for_target.strip():
        raise InputError("--for", "TARGET is empty")
    found, fp = identities_for(for_target)
    if (fp is None and not _repo_id_shaped(for_target) and not Path(for_target).expanduser().exists()
            and family_of(registry, found) is None):
        # Neither a file, a Hub repo id, nor a name of any family the registry documents:
        # most likely a mistyped path, which every other command refuses; "no documented
        # drafts" with exit 0 would read as an answer about a model.
        raise InputError("--for", f"{for_target}: no such file, and no model of that name in the registry")
    allowed = {e.id for e in chosen}
    matches = [(e, how) for e, how in target_matches(registry, found, fp) if e.id in allowed]
    return Pairs([e for e, _ in matches], found[0], vocabulary_note(matches, fp))


def _repo_id_shaped(spec: str) -> bool:
    """``org/name`` (a tag after ``:`` allowed) or ``org/name/file.gguf``, as the check reads
    them from the Hub; ``models/x.gguf`` is a path, not a repo."""
    parts = spec.split("/")
    if len(parts) == 2:
        return all(parts) and not parts[1].casefold().endswith(".gguf")
    return len(parts) == 3 and all(parts) and parts[2].casefold().endswith(".gguf")


def lint_command(argv: Sequence[str], *, check_models: bool = True) -> LintResult:
    """``paircheck lint-cmd -- llama-server ...``: a launch command's speculative-decoding
    flags, and (``check_models``) the pair it names, before anything starts."""
    from paircheck.preflight.entry import lint_argv

    return lint_argv(list(argv), check=check_models, installed_build=False)


def explain(code: str) -> Rule:
    """``paircheck explain CODE``: the rule with this code (LC003) or name (bos)."""
    from paircheck.catalog import find_rule

    rule = find_rule(code)
    if rule is None:
        raise InputError(code, "no such rule; `paircheck explain` lists them")
    return rule


def rules() -> list[Rule]:
    """``paircheck explain``: every rule, each code once, llama.cpp's first."""
    from paircheck.catalog import all_rules

    return all_rules()


__all__ = [
    "DEFAULT_ENGINE",
    "check",
    "check_every_engine",
    "describe",
    "estimate",
    "explain",
    "fit_pair",
    "lint_command",
    "pairs",
    "rules",
    "scan_drafts",
]
