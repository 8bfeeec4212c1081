"""Rules, what they find, and the report of one pair: the vocabulary rules, formats and
the catalog share.

A ``Rule`` is declared once (stable code, name, one-line title, explanation, fix) and
``paircheck explain CODE`` prints it. Everything a rule says about a pair or a command
line is a ``Finding`` with a status: ``pass``/``fail``/``skip`` for checks that decide a
verdict, ``warn`` for what does not change it but costs the user, ``info`` for notes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# The verdicts (Report.verdict) are declared in constants and named here for every reader.
from paircheck.constants import ABORTS, ACCEPTED, DRAFTLESS_METHODS, REFUSED, UNKNOWN, canonical_method
from paircheck.model import ModelDescription

PASS, FAIL, SKIP, WARN, INFO = "pass", "fail", "skip", "warn", "info"
# What the engine does when a check fails (Rule.effect, Report.outcome): it stops with an
# error; it starts and runs without speculation (a fallback, e.g. KoboldCpp); or it starts
# with speculation on while the draft proposes other tokens (nothing reports it).
STOPS, RUNS_WITHOUT_SPECULATION, RUNS_USELESS, RUNS = (
    "stops", "runs_without_speculation", "runs_useless_draft", "runs")


@dataclass(frozen=True)
class Rule:
    code: str  # stable, e.g. "LC003"
    name: str  # stable, e.g. "bos"
    title: str  # one line
    explanation: str  # what it checks and why it matters
    fix: str  # what to do when it fails
    kind: str = "check"  # "check" (changes the verdict), "warning" or "note"
    # Where the rule comes from: the engine's repository, path and commit, with its own
    # error text. Printed by ``paircheck explain``.
    source: str = ""
    # What the engine does when this check fails: STOPS, RUNS_WITHOUT_SPECULATION or RUNS_USELESS.
    effect: str = STOPS

    def result(self, status: str, message: str, **details: object) -> Finding:
        """A check's outcome; the fix is attached only to a failure."""
        return Finding(self.code, self.name, status, message, dict(details), self.fix if status == FAIL else None,
                       self.effect)

    def warn(self, message: str, **details: object) -> Finding:
        return Finding(self.code, self.name, WARN, message, dict(details), self.fix or None)

    def note(self, message: str, fix: str | None = None, **details: object) -> Finding:
        return Finding(self.code, self.name, INFO, message, dict(details), fix)


@dataclass
class Finding:
    """What one rule says. ``status``: pass, fail, skip (checks), warn, info."""

    code: str
    name: str
    status: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)
    fix: str | None = None
    effect: str = STOPS  # what the engine does when this check fails (Rule.effect)


@dataclass
class Report:
    engine: str
    method: str
    target: ModelDescription
    draft: ModelDescription
    checks: list[Finding]
    warnings: list[Finding] = field(default_factory=list)
    # What to do next when the pair is fine (e.g. the flags that turn speculation on).
    next_steps: list[str] = field(default_factory=list)
    engine_version: str = ""
    # What the engine itself would print for the first failure, when known.
    engine_says: str | None = None
    # What the registry of documented pairs says; never part of the verdict. Filled by
    # the api after the engine's pure evaluation.
    registry: list[Finding] = field(default_factory=list)
    # Vocabulary fingerprints (paircheck.fingerprint) by side: "target", "draft".
    fingerprints: dict[str, Any] = field(default_factory=dict)
    # Memory of the pair at a context (a paircheck.fit.FitResult) when --ctx/--vram were
    # given; never part of the verdict.
    memory: Any = None
    # The engine found on this machine whose version picked the rules (a
    # paircheck.installed.Installed), when the api was given one.
    installed: Any = None

    @property
    def compatible(self) -> bool:
        return all(check.status != FAIL for check in self.checks)

    @property
    def draftless(self) -> bool:
        """The method drafts from the text itself (n-gram, suffix): there is no draft model,
        and ``draft`` is the target again."""
        return canonical_method(self.method) in DRAFTLESS_METHODS

    @property
    def unknowns(self) -> list[Finding]:
        """Checks that could not be decided from what was read (status skip, with a reason)."""
        return [check for check in self.checks if check.status == SKIP and "not used" not in check.message]

    @property
    def run_time_aborts(self) -> list[Finding]:
        """Warnings that predict a process abort after the pair was accepted at load (their
        ``details["aborts"]`` is true): llama-server starts, then dies."""
        return [w for w in self.warnings if w.details.get("aborts") is True]

    @property
    def verdict(self) -> str:
        """``refused`` (a check failed), ``aborts`` (accepted at load, predicted to abort at
        run time), ``unknown`` (none failed but a deciding check could not be made), or
        ``accepted``. A predicted abort outranks an unknown: it is what paircheck knows."""
        if not self.compatible:
            return REFUSED
        if self.run_time_aborts:
            return ABORTS
        return UNKNOWN if self.unknowns else ACCEPTED

    @property
    def outcome(self) -> str | None:
        """What the engine does with the pair: RUNS when compatible, ABORTS when it is predicted
        to abort at run time, else the first failure's effect (STOPS, RUNS_WITHOUT_SPECULATION,
        RUNS_USELESS); None when unknown."""
        first = self.first_failure
        if first is not None:
            return first.effect
        if self.run_time_aborts:
            return ABORTS  # it starts, then the process aborts
        return None if self.unknowns else RUNS

    @property
    def failures(self) -> list[Finding]:
        return [check for check in self.checks if check.status == FAIL]

    @property
    def first_failure(self) -> Finding | None:
        """The failure the engine itself would stop at (checks are in its order)."""
        failures = self.failures
        return failures[0] if failures else None

    @property
    def different_tokenizers(self) -> Finding | None:
        """The token_text failure when most compared ids differ and another check failed
        first: the two vocabularies are different tokenizers altogether, which is the cause
        to name first, while the first failure (a BOS flag, a token count) stays the rule
        the engine refuses the pair by."""
        first = self.first_failure
        for check in self.failures:
            differing, compared = check.details.get("differing"), check.details.get("compared")
            if (check.name == "token_text" and check is not first and isinstance(differing, int)
                    and isinstance(compared, int) and compared > 0 and differing * 2 > compared):
                return check
        return None

    def finding(self, code: str) -> Finding | None:
        """The check or warning with this code, if the report has it."""
        for item in (*self.checks, *self.warnings, *self.registry):
            if item.code == code:
                return item
        return None


@dataclass(frozen=True)
class EveryEngine:
    """``paircheck --engine all``: one report per engine that has the method, llama.cpp first."""

    reports: list[Report]
