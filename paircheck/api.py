"""The library entry points: describe one model, check a pair."""

from __future__ import annotations

from paircheck._engine import engines, resolve_method
from paircheck._source.resolve import describe as _describe
from paircheck.errors import InputError
from paircheck.model import ModelDescription
from paircheck.report import Finding, Report
from paircheck.vocab import Override

DEFAULT_ENGINE = "llama.cpp"


def describe(spec: str, overrides: dict[str, Override] | None = None, progress: bool = False) -> ModelDescription:
    """Read one model (path, folder, repo id or URL) into its normalized description."""
    return _describe(spec, overrides, progress)


def _with_tensor_infos(desc: ModelDescription) -> ModelDescription:
    """Read a local GGUF's tensor infos (names, shapes) when a rule needs them.

    Sources stop after the key/value section to stay fast; embedding rows (vLLM,
    transformers) and head tensors (DSpark's markov_w1, DFlash2's selector) are only in
    the tensor infos, so those engines and methods read them here, once, and only then.
    """
    from paircheck._source.gguf_reader import FileSource, GGUFFormatError, read_tensor_infos_after

    if desc.metadata.tensors is not None or desc.source_kind != "gguf" or not desc.resolved_path:
        return desc
    try:
        with open(desc.resolved_path, "rb") as handle:
            read_tensor_infos_after(FileSource(desc.resolved_path, handle), desc.metadata)
    except (OSError, GGUFFormatError):
        pass  # rules then say the rows are unknown; the vocab verdict stands
    return desc


# Checks that read only the vocabulary: no tensor infos needed. (KoboldCpp is not one: its
# draft type tells DSpark from DFlash by the dspark_markov_w1 tensor.)
_VOCAB_ONLY = {("llama.cpp", "draft-simple"), ("lmstudio", "draft")}


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
    fps: dict = {}
    if fingerprint:
        from paircheck.fingerprint import fingerprints

        fps = {"target": fingerprints(target.vocab), "draft": fingerprints(draft.vocab)}
    findings: list[Finding] = []
    if registry:
        from paircheck.registry import RegistryError, default_registry
        from paircheck.registry_consult import consult

        try:
            loaded = default_registry()
        except RegistryError as exc:
            findings = [Finding("RG000", "registry_unavailable", f"the registry of documented pairs could not be read: {exc}")]
        else:
            findings = consult(loaded, target, draft, {side: fp.full for side, fp in fps.items()})
    for report in reports:
        report.fingerprints = dict(fps)
        report.registry = list(findings)
    return reports


def _evaluate(
    target: ModelDescription,
    draft: ModelDescription,
    engine: str = DEFAULT_ENGINE,
    method: str | None = None,
) -> Report:
    # "sglang@0.5.14": that engine's rules for that release (engines with version ranges only).
    engine, _, version = engine.partition("@")
    chosen = engines().get(engine)
    if chosen is None:
        raise InputError("--engine", f"unknown engine {engine!r} (known: {', '.join(engines())}, all)")
    resolved = resolve_method(chosen, method)
    if resolved is None:
        raise InputError("--method", f"{engine} has no method {method!r} (known: {', '.join(chosen.methods)})")
    if version:
        from paircheck._engine.versions import pick

        ranges = getattr(chosen, "versions", None)
        if not ranges:
            raise InputError("--engine", f"{engine} has one rule set (its pinned reference version): drop @{version}")
        try:
            pick(ranges, version)
        except ValueError as exc:
            raise InputError("--engine", f"{engine}@{version}: {exc}") from None
    if (engine, resolved) not in _VOCAB_ONLY and not resolved.startswith("ngram"):
        _with_tensor_infos(target)
        _with_tensor_infos(draft)
    if version:
        return chosen.evaluate(target, draft, resolved, version=version)  # type: ignore[call-arg]
    return chosen.evaluate(target, draft, resolved)


def check_descriptions(
    target: ModelDescription,
    draft: ModelDescription,
    engine: str = DEFAULT_ENGINE,
    method: str | None = None,
    registry: bool = True,
    fingerprint: bool = True,
) -> Report:
    """One engine's report, with fingerprints and what the registry documents."""
    report = _evaluate(target, draft, engine, method)
    annotate([report], target, draft, registry, fingerprint)
    return report


def check_all_engines(
    target: ModelDescription,
    draft: ModelDescription,
    method: str | None = None,
    registry: bool = True,
    fingerprint: bool = True,
) -> list[Report]:
    """One report per engine that has ``method`` (each in its own terms); llama.cpp first."""
    reports = []
    for name, engine in engines().items():
        if resolve_method(engine, method) is not None:
            reports.append(_evaluate(target, draft, name, method))
    return annotate(reports, target, draft, registry, fingerprint)


def check_pair(
    target: str,
    draft: str,
    engine: str = DEFAULT_ENGINE,
    method: str | None = None,
    overrides: dict[str, Override] | None = None,
    registry: bool = True,
    fingerprint: bool = True,
    progress: bool = False,
) -> Report:
    """Check TARGET and DRAFT for one engine and speculative method.

    ``registry=False`` skips the look-up of documented pairs, ``fingerprint=False``
    the vocabulary fingerprints (neither changes the verdict). ``progress`` shows a
    progress line on a terminal for long remote reads.
    """
    return check_descriptions(
        describe(target, overrides, progress),
        describe(draft, overrides, progress),
        engine,
        method,
        registry,
        fingerprint,
    )
