"""The library entry points: describe one model, check a pair for one or every engine.

Everything the CLI does goes through these functions, so a script can do the same:

    from paircheck.pipeline import check_pair
    report = check_pair("target.gguf", "draft.gguf")
    print(report.compatible, report.first_failure)
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paircheck._engine import ENGINES, engine_named, engines, resolve_method
from paircheck._engine.chat_template import template_warning
from paircheck._engine.interface import Engine
from paircheck._engine.pair_size import size_warning
from paircheck._engine.versions import installed_release, pick
from paircheck._source.interface import Progress, ReadOptions
from paircheck._source.read_cache import ReadCache
from paircheck._source.resolve import describe as _describe
from paircheck.cache_home import cache_home
from paircheck.constants import DRAFT_SIMPLE, DRAFTLESS_METHODS, LLAMACPP, canonical_engine, canonical_method
from paircheck.errors import InputError
from paircheck.findings import FAIL, Finding, Report
from paircheck.model import ModelDescription, Override

if TYPE_CHECKING:
    from paircheck._registry.consult import FileVocab
    from paircheck._registry.identity import ModelIdentity

    # Only named here: importing it (subprocess, shutil) is for the commands that ask what is installed.
    from paircheck.installed import Installed

DEFAULT_ENGINE = LLAMACPP
ProgressFactory = Any  # Callable[[str], Progress | None]: one progress callback per model


def describe(
    spec: str,
    overrides: Mapping[str, Override] | None = None,
    progress: ProgressFactory | None = None,
    cache: ReadCache | None = None,
) -> ModelDescription:
    """Read one model (path, folder, repo id or URL) into its normalized description.

    ``progress(label)`` may return a callback ``(bytes_done, bytes_expected)`` for long
    remote reads. A GGUF is read up to the end of its tensor infos (never the tensor data),
    as llama.cpp's loader reads it, however the file was reached. With a ``cache``
    (``read_cache(os.environ)``), a local GGUF read before and unchanged since is not read
    again.
    """
    return _describe(spec, ReadOptions(dict(overrides or {}), progress, cache=cache))


def readable_target(desc: ModelDescription) -> ModelDescription:
    """``desc`` when it can be judged as a target; else the one-line input error (exit 2).

    A target whose metadata is cut would make every check a refusal about the target and
    every scan row the same LC001: the answer is that the input cannot be read."""
    reason = desc.unreadable
    if reason is not None:
        raise InputError(desc.location, reason)
    return desc


def read_cache(env: Mapping[str, str]) -> ReadCache:
    """The read cache in the user's cache folder (``PAIRCHECK_CACHE_HOME``, else
    ``XDG_CACHE_HOME``/paircheck, else ``~/.cache/paircheck``), in ``read/``."""
    return ReadCache(cache_home(env) / "read")


def find_engine(name: str) -> tuple[Engine, str | None]:
    """The engine for an ``--engine`` value in any accepted spelling, and the version asked
    for with ``NAME@VERSION`` (``sglang@0.5.14``: that release's rules), or None."""
    name, _, version = name.partition("@")
    canonical = canonical_engine(name)
    if canonical is None or canonical not in ENGINES:
        raise InputError("--engine", f"unknown engine {name!r} (known: {', '.join(ENGINES)}, all)")
    engine = engine_named(canonical)
    if version:
        if not engine.versions:
            message = f"{engine.name} has one rule set (its pinned reference version): drop @{version}"
            raise InputError("--engine", message)
        try:
            pick(engine.versions, version)
        except ValueError as exc:
            raise InputError("--engine", f"{engine.name}@{version}: {exc}") from None
    return engine, version or None


def annotate(
    reports: list[Report],
    target: ModelDescription,
    draft: ModelDescription,
    registry: bool = True,
    fingerprint: bool = True,
) -> list[Report]:
    """Attach vocabulary fingerprints and registry findings to finished reports.

    Done here, after the engines' pure evaluation, so engines never read the registry
    and the verdict cannot depend on it. Computed once for any number of reports (one
    per engine with ``--engine all``).
    """
    draftless = all(r.draftless for r in reports)
    fps: dict[str, Any] = {}
    if fingerprint:
        from paircheck.fingerprint import fingerprints

        fps = {"target": fingerprints(target.vocab)}
        if not draftless:
            fps["draft"] = fingerprints(draft.vocab)
    findings: list[Finding] = []
    if registry and not draftless:  # documented pairs say nothing about a method without a draft
        from paircheck._registry.consult import R_UNAVAILABLE, consult
        from paircheck._registry.load import default_registry
        from paircheck._registry.schema import RegistryError

        try:
            loaded = default_registry()
        except RegistryError as exc:
            findings = [R_UNAVAILABLE.note(f"the registry of documented pairs could not be read: {exc}")]
        else:
            # One method for every report (each engine spells it its own way): the canonical one.
            method = canonical_method(reports[0].method) if reports else None
            findings = consult(loaded, target, draft, fps, method)
    # The draft's size and prompt format: warnings, never a verdict, from what was already read.
    pair_warnings = [] if draftless else [w for w in (size_warning(target, draft), template_warning(target, draft))
                                          if w is not None]
    for report in reports:
        report.fingerprints = dict(fps)
        report.registry = list(findings)
        if not report.compatible and not draftless:
            # A draft for this target, named when documented, before the draftless n-gram way.
            report.next_steps = [*_draft_steps(report, findings), *report.next_steps]
        for warning in pair_warnings:
            if all(w.code != warning.code for w in report.warnings):
                report.warnings.append(warning)
            if warning.details.get("swapped"):
                # Never a launch line for a pair given in the wrong order: the check in the right one.
                report.next_steps = ["The two look swapped: check them with the target first:",
                                     str(warning.details["swapped"])]
    return reports


def _draft_steps(report: Report, registry: list[Finding]) -> list[str]:
    """For a refused pair: the drafts the registry documents for the target (RG003) and the
    scan that ranks the models at hand as drafts for it. Nothing when the target itself does
    not load: the way forward is its download (the loadable finding's fix)."""
    from paircheck._engine.common import shell_path

    target_fails = any(c.name == "loadable" and c.status == FAIL and c.details.get("side") == "target"
                       for c in report.checks)
    if target_fails or not report.target.vocab.loadable or canonical_method(report.method) != DRAFT_SIMPLE:
        return []  # a head or an MTP layer is not found by ranking the models at hand
    named = next((list(f.details.get("drafts") or []) for f in registry if f.code == "RG003"), [])
    engine = "" if report.engine == LLAMACPP else f"--engine {report.engine} "
    scan = f"paircheck scan {engine}{shell_path(report.target)}"
    if named:
        shown = ", ".join(named[:3]) + (f" and {len(named) - 3} more" if len(named) > 3 else "")
        return [f"Use a draft documented for this target: {shown}; to find one among your models (--hub: on "
                "the Hugging Face Hub too):", scan]
    return ["Use a draft of the target's own tokenizer; to rank the models you have as drafts for it:", scan]


def _evaluate(
    target: ModelDescription, draft: ModelDescription, engine: Engine, method: str | None, version: str | None = None,
    installed: Installed | None = None,
) -> Report:
    resolved = resolve_method(engine, method)
    if resolved is None:
        raise InputError("--method", f"{engine.name} has no method {method!r} (known: {', '.join(engine.methods)})")
    if version is not None or installed is None:  # NAME@VERSION wins over what is installed
        return engine.evaluate(target, draft, resolved, version)
    release = installed_release(engine.versions, installed.version)
    report = engine.evaluate(target, draft, resolved, release)
    report.installed = installed
    if engine.name == LLAMACPP:
        from paircheck._engine.llamacpp import installed_note

        report.engine_version = f"{installed_note(installed.version, installed.summary)}; {report.engine_version}"
    elif release is None:
        report.engine_version = (f"{installed.summary}: no rules read for that version, the newest apply; "
                                 f"{report.engine_version}")
    else:
        report.engine_version = f"{installed.summary}: {report.engine_version}"
    return report


def check_descriptions(
    target: ModelDescription,
    draft: ModelDescription,
    engine: str = DEFAULT_ENGINE,
    method: str | None = None,
    registry: bool = True,
    fingerprint: bool = True,
    installed: Installed | None = None,
) -> Report:
    """One engine's report, with fingerprints and what the registry documents.

    ``installed``: the engine found on this machine (``paircheck.installed.detect``); its
    version picks the rules unless ``engine`` names one (``vllm@0.17.0``)."""
    report = _evaluate(target, draft, *_engine_and_method(engine, method), installed=installed)
    annotate([report], target, draft, registry, fingerprint)
    return report


def check_all_engines(
    target: ModelDescription,
    draft: ModelDescription,
    method: str | None = None,
    registry: bool = True,
    fingerprint: bool = True,
    installed: Mapping[str, Installed] | None = None,
) -> list[Report]:
    """One report per engine that has ``method`` (each in its own terms); llama.cpp first.
    ``installed`` maps engine names to what was found of them on this machine."""
    reports = [
        _evaluate(target, draft, engine, method, installed=(installed or {}).get(engine.name))
        for engine in engines().values()
        if resolve_method(engine, method) is not None
    ]
    if not reports:
        raise InputError("--method", f"no engine has method {method!r}")
    return annotate(reports, target, draft, registry, fingerprint)


def _engine_and_method(engine: str, method: str | None) -> tuple[Engine, str | None, str | None]:
    chosen, version = find_engine(engine)
    return chosen, method, version


def needs_draft(method: str | None) -> bool:
    """False for the methods that draft from the text itself (ngram-*, suffix)."""
    return method is None or canonical_method(method) not in DRAFTLESS_METHODS


def check_pair(
    target: str,
    draft: str | None,
    engine: str = DEFAULT_ENGINE,
    method: str | None = None,
    overrides: Mapping[str, Override] | None = None,
    registry: bool = True,
    fingerprint: bool = True,
    progress: ProgressFactory | None = None,
    cache: ReadCache | None = None,
    installed: Installed | None = None,
) -> Report:
    """Check TARGET and DRAFT for one engine and speculative method.

    ``draft`` may be None for the methods without a draft model (ngram-*, suffix).
    ``registry=False`` skips the look-up of documented pairs, ``fingerprint=False``
    the vocabulary fingerprints (neither changes the verdict).
    """
    if draft is None and needs_draft(method):
        raise InputError("DRAFT", "missing: only the methods without a draft model (ngram-*, suffix) take TARGET alone")
    find_engine(engine)  # an unknown engine or version fails before anything is read
    target_desc = readable_target(describe(target, overrides, progress, cache))
    draft_desc = target_desc if draft is None else describe(draft, overrides, progress, cache)
    return check_descriptions(target_desc, draft_desc, engine, method, registry, fingerprint, installed)


__all__ = [
    "DEFAULT_ENGINE",
    "Progress",
    "ReadCache",
    "annotate",
    "check_all_engines",
    "check_descriptions",
    "check_pair",
    "describe",
    "find_engine",
    "identities_for",
    "needs_draft",
    "read_cache",
    "readable_target",
]


def identities_for(spec: str) -> tuple[tuple[ModelIdentity, ...], FileVocab | None]:
    """Every identity ``spec`` names for the registry, and its vocabulary fingerprints and size if read.

    An existing GGUF file or Hugging Face folder is read (metadata only) so that its
    ``general.name``, ``general.repo_url``, basename/size/finetune and its fingerprint are
    used, not just its file name. A missing path is an error; anything else (a repo id, a
    model name) is taken as text; a URL is read, and one that cannot be is an error.
    """
    from paircheck._registry.consult import file_vocab, identities
    from paircheck._registry.identity import identity_from_path, identity_from_string

    path = Path(spec).expanduser()
    if spec.startswith(("http://", "https://")):
        # A URL names a file to read, never a name to look up: one that cannot be read is
        # an input error, as in every other command (not "no documented drafts for x").
        desc = describe(spec)
        return tuple(dict.fromkeys((*identities(desc), identity_from_string(spec)))), file_vocab(desc)
    if not path.exists():
        # ./x.gguf, /models/x, ~/x: a path that is not there. A bare file or repo name
        # (qwen2.5-14b-instruct-q4_k_m.gguf) is a name to look up.
        if spec.startswith((".", "/", "~")) or "\\" in spec:
            raise InputError(spec, "no such file or folder")
        return (identity_from_string(spec),), None
    try:
        desc = describe(spec)
    except InputError:
        return (identity_from_path(path),), None  # unreadable: its name still identifies it
    found = (*identities(desc), identity_from_path(path))
    return tuple(dict.fromkeys(found)), file_vocab(desc)
