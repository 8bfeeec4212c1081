"""The machine-readable shape of a Report (documented in the README, versioned).

schema_version 1. Fields are only ever added within a version; a removal or a change
of meaning bumps it.
"""

from __future__ import annotations

import json
from typing import Any

from paircheck import __version__
from paircheck.model import ModelDescription
from paircheck.report import CheckResult, Finding, Report

SCHEMA_VERSION = 1


def describe_side(desc: ModelDescription, fingerprints: Any = None) -> dict[str, Any]:
    v = desc.vocab
    ident = desc.identity
    side = {
        "location": desc.location,
        "path": desc.resolved_path,
        "source_kind": desc.source_kind,
        "identity": {
            "architecture": ident.architecture,
            "name": ident.name,
            "basename": ident.basename,
            "size_label": ident.size_label,
            "finetune": ident.finetune,
            "repo": ident.repo,
            "base_models": list(ident.base_models),
        },
        "vocab": {
            "loadable": v.loadable,
            "load_error": v.load_error,
            "tokenizer_model": v.tokenizer_model,
            "pre": v.pre,
            "vocab_type": v.vocab_type,
            "vocab_type_name": v.vocab_type_name,
            "n_tokens": v.n_tokens,
            "bos_id": v.bos_id,
            "add_bos": v.add_bos,
            "eos_id": v.eos_id,
            "add_eos": v.add_eos,
            "eot_id": v.eot_id,
            "eom_id": v.eom_id,
            "eog_ids": sorted(v.eog_ids),
        },
        "gguf_version": desc.metadata.version,
        "metadata_bytes": desc.metadata_bytes,
        "notes": list(desc.notes),
    }
    # Vocabulary fingerprints (paircheck.fingerprint): null when not computed or when
    # the vocabulary has none (not loadable, no token texts).
    side["fingerprint"] = getattr(fingerprints, "full", None)
    side["fingerprint_prefix"] = getattr(fingerprints, "prefix", None)
    side["fingerprint_prefix_end"] = getattr(fingerprints, "prefix_end", None)
    return side


def _check(check: CheckResult) -> dict[str, Any]:
    return {
        "code": check.code,
        "name": check.name,
        "status": check.status,
        "message": check.message,
        "details": check.details,
        "fix": check.fix,
    }


def _finding(finding: Finding) -> dict[str, Any]:
    return {
        "code": finding.code,
        "name": finding.name,
        "message": finding.message,
        "details": finding.details,
        "fix": finding.fix,
    }


def report_to_dict(report: Report) -> dict[str, Any]:
    first = report.first_failure
    return {
        "schema_version": SCHEMA_VERSION,
        "paircheck_version": __version__,
        "engine": report.engine,
        "engine_version": report.engine_version,
        "method": report.method,
        "compatible": report.compatible,
        "first_failure": None if first is None else first.name,
        "target": describe_side(report.target, report.fingerprints.get("target")),
        "draft": describe_side(report.draft, report.fingerprints.get("draft")),
        "checks": [_check(c) for c in report.checks],
        "warnings": [_finding(w) for w in report.warnings],
        "next_steps": list(report.next_steps),
        # What the registry of documented pairs says (never part of the verdict).
        "registry": [_finding(f) for f in report.registry],
    }


def render_json(report: Report) -> str:
    doc = report_to_dict(report)
    if report.memory is not None:
        doc["memory"] = report.memory.to_json()  # schema paircheck.fit/1, as `paircheck fit --json`
    return json.dumps(doc, indent=2, ensure_ascii=False)
