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

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paircheck.constants import LLAMACPP
from paircheck.errors import InputError

if TYPE_CHECKING:
    from paircheck._registry.consult import Pairs
    from paircheck.findings import EveryEngine, Report, Rule
    from paircheck.fit import FitResult
    from paircheck.installed import Installed
    from paircheck.model import ModelDescription, Override
    from paircheck.pipeline import ProgressFactory

DEFAULT_ENGINE = LLAMACPP


def describe(model: str, overrides: Mapping[str, Override] | None = None) -> ModelDescription:
    """What paircheck reads of one model (a GGUF file, a Hugging Face folder, a Hub repo id or
    a URL): its metadata, vocabulary and tensor infos, never its weights."""
    from paircheck.pipeline import describe as _describe

    return _describe(model, overrides)


def _installed(engine: str, detect_installed: bool, llama_server: str | None) -> Installed | None:
    """The engine on this machine, when asked for and not switched off (PAIRCHECK_INSTALLED=off)."""
    import os

    from paircheck.installed import detect, enabled

    return detect(engine, llama_server) if detect_installed and enabled(os.environ) else None


def check(target: str, draft: str | None, *, engine: str = DEFAULT_ENGINE, method: str | None = None,
          overrides: Mapping[str, Override] | None = None, registry: bool = True, fingerprint: bool = True,
          progress: ProgressFactory | None = None, use_cache: bool = False, detect_installed: bool = False,
          llama_server: str | None = None, ctx: int | None = None, vram: str | None = None,
          probe_file: str | None = None) -> Report:
    """``paircheck TARGET DRAFT``: the pair for one engine (``llama.cpp``, ``vllm@0.20.0``, ...)
    and speculative method; ``draft`` None for the methods without a draft (ngram-*, suffix).

    ``registry`` and ``fingerprint`` False skip what never changes the verdict (the look-up of
    documented pairs, the vocabulary fingerprints); ``use_cache``: a local GGUF's metadata
    from the read cache when the file is unchanged; ``detect_installed``: the rules of the
    engine version installed here (``llama_server``: which binary), unless the engine names a
    version; ``ctx``/``vram``: both models' memory at that context against that budget;
    ``probe_file``: a probe result's fastest setting for this draft in the next steps."""
    import os

    from paircheck.pipeline import check_pair, find_engine, read_cache

    chosen, asked = find_engine(engine)
    installed = None if asked else _installed(chosen.name, detect_installed, llama_server)
    report = check_pair(target, draft, engine=engine, method=method, overrides=overrides, registry=registry,
                        fingerprint=fingerprint, progress=progress, cache=read_cache(os.environ) if use_cache else None,
                        installed=installed)
    if ctx is not None or vram is not None:
        from paircheck.fit import pair_memory

        report.memory = pair_memory(report.target, report.draft, ctx, vram)
    if probe_file is not None and draft is not None:
        from paircheck.probe.result import advice_for, load_probe_result, with_draft_length, without_draft

        data = load_probe_result(probe_file)  # read even when the pair is refused: a bad file is an error
        advice = advice_for(data, draft, probe_file)
        if advice is not None and report.compatible:
            steps = (without_draft(report.next_steps) if advice.draft_max is None
                     else with_draft_length(report.next_steps, advice.draft_max, advice.p_min))
            report.next_steps = [*steps, advice.note]
    return report


def check_every_engine(target: str, draft: str | None, *, method: str | None = None,
                       overrides: Mapping[str, Override] | None = None, registry: bool = True,
                       fingerprint: bool = True, progress: ProgressFactory | None = None, use_cache: bool = False,
                       detect_installed: bool = False, llama_server: str | None = None) -> EveryEngine:
    """``paircheck --engine all TARGET DRAFT``: one report per engine that has ``method``,
    llama.cpp first (the options as for ``check``; ``detect_installed`` asks each engine)."""
    import os

    from paircheck.constants import RULE_ENGINES
    from paircheck.findings import EveryEngine
    from paircheck.pipeline import check_all_engines, read_cache, readable_target
    from paircheck.pipeline import describe as _describe

    cache = read_cache(os.environ) if use_cache else None
    target_desc = readable_target(_describe(target, overrides, progress, cache))
    draft_desc = target_desc if draft is None else _describe(draft, overrides, progress, cache)
    # llama.cpp has one rule set whatever its version: its version is only shown, so it is not
    # asked when nothing will be (fingerprint False: -q)
    on_machine = {name: hit for name in RULE_ENGINES
                  if (hit := _installed(name, detect_installed and (fingerprint or name != LLAMACPP),
                                        llama_server)) is not None}
    return EveryEngine(check_all_engines(target_desc, draft_desc, method, installed=on_machine, registry=registry,
                                         fingerprint=fingerprint))


def needs_draft(method: str | None) -> bool:
    """Whether ``method`` drafts with a draft model (None: the engine's default, which does);
    the n-gram and suffix methods take the target alone."""
    from paircheck.pipeline import needs_draft as _needs_draft

    return _needs_draft(method)


def fit_pair(target: str, draft: str, *, ctx: int | None = None, vram: str | None = None) -> FitResult:
    """``paircheck fit TARGET DRAFT``: both models' memory as llama-server allocates it with its
    defaults, at ``ctx`` tokens (default: the target's training context), against ``vram``
    ("24GiB"; default: no budget)."""
    from paircheck.fit import pair_memory

    return pair_memory(describe(target), describe(draft), ctx, vram)


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


def rule_groups() -> list[tuple[str, list[Rule]]]:
    """Every rule by where it is declared (engines, llama.cpp first; the pair's size and chat
    template; the registry; pre-flight; estimate; bench): what docs/rules.md lists."""
    from paircheck.catalog import rule_groups as _groups

    return _groups()


def registry_choices() -> dict[str, tuple[str, ...]]:
    """The values ``paircheck pairs`` filters on: engines, statuses and evidence levels, as the
    registry's schema defines them (evidence strongest first)."""
    from paircheck._registry.schema import ENGINES, EVIDENCE, STATUSES

    return {"engine": tuple(ENGINES), "status": tuple(STATUSES), "evidence": tuple(EVIDENCE)}


# The commands whose work is in a module of their own, loaded when first asked for: ``import
# paircheck.api`` (every command line start) loads none of them.
_LAZY = {
    "Measure": "paircheck.api._bench",
    "bench_server": "paircheck.api._bench",
    "bench_compare": "paircheck.api._bench",
    "bench_run": "paircheck.api._bench",
    "estimate": "paircheck.api._estimate",
    "gpus": "paircheck.api._device",
    "pick_device": "paircheck.api._device",
    "parse_override": "paircheck.vocab",
    "lint_command": "paircheck.api._lint",
    "lint_words": "paircheck.api._lint",
    "lint_python": "paircheck.api._lint",
    "lint_modelfile": "paircheck.api._lint",
    "lint_files": "paircheck.api._lint",
    "lint_exit": "paircheck.api._lint",
    "plan_run": "paircheck.api._lint",
    "RunPlan": "paircheck.api._lint",
    "probe_drafts": "paircheck.api._probe",
    "scan_drafts": "paircheck.api._scan",
    "compare_drafts": "paircheck.api._scan",
    "fit_memory": "paircheck.api._fit",
    "FitOptions": "paircheck.api._fit",
    "DraftOptions": "paircheck.api._fit",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'paircheck.api' has no attribute {name!r}")


__all__ = [
    "DEFAULT_ENGINE",
    "DraftOptions",
    "FitOptions",
    "Measure",
    "bench_compare",
    "bench_run",
    "bench_server",
    "check",
    "check_every_engine",
    "compare_drafts",
    "describe",
    "estimate",
    "explain",
    "fit_memory",
    "fit_pair",
    "gpus",
    "RunPlan",
    "lint_command",
    "lint_exit",
    "lint_files",
    "lint_modelfile",
    "lint_python",
    "lint_words",
    "needs_draft",
    "pairs",
    "parse_override",
    "pick_device",
    "plan_run",
    "registry_choices",
    "rule_groups",
    "probe_drafts",
    "rules",
    "scan_drafts",
]
