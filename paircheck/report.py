"""The result of checking one pair for one engine and method: what formats render."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from paircheck.model import ModelDescription

PASS, FAIL, SKIP = "pass", "fail", "skip"


@dataclass
class CheckResult:
    """One rule applied to the pair. ``status`` is pass, fail or skip."""

    code: str
    name: str
    status: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)
    fix: str | None = None


@dataclass
class Finding:
    """Something that does not change the verdict but that the user should know."""

    code: str
    name: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)
    fix: str | None = None


@dataclass
class Report:
    engine: str
    method: str
    target: ModelDescription
    draft: ModelDescription
    checks: list[CheckResult]
    warnings: list[Finding] = field(default_factory=list)
    # What to do next when the pair is fine (e.g. the flags that turn speculation on).
    next_steps: list[str] = field(default_factory=list)
    engine_version: str = ""
    # What the engine itself would print for the first failure, when known.
    engine_says: str | None = None
    # What the registry of documented pairs says (paircheck.registry_consult); never
    # part of the verdict. Filled by the api after the engine's pure evaluation.
    registry: list[Finding] = field(default_factory=list)
    # Vocabulary fingerprints (paircheck.fingerprint) by side: "target", "draft".
    fingerprints: dict[str, Any] = field(default_factory=dict)
    # Memory of the pair at a context (a paircheck.fit.FitResult) when --ctx/--vram were
    # given; never part of the verdict.
    memory: Any = None

    @property
    def compatible(self) -> bool:
        return all(check.status != FAIL for check in self.checks)

    @property
    def failures(self) -> list[CheckResult]:
        return [check for check in self.checks if check.status == FAIL]

    @property
    def first_failure(self) -> CheckResult | None:
        """The failure the engine itself would stop at (checks are in its order)."""
        failures = self.failures
        return failures[0] if failures else None
