"""What an engine's rule set looks like.

Each engine module exposes an ``Engine``: its rules (stable code, name, title,
explanation, fix; printed by ``paircheck explain``) and ``evaluate``, a pure function
from two ModelDescriptions to a Report. Engines know nothing of files or output.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from paircheck.findings import Report
from paircheck.model import ModelDescription


@dataclass(frozen=True)
class Rule:
    code: str  # stable, e.g. "LC003"
    name: str  # stable, e.g. "bos"
    title: str  # one line
    explanation: str  # what it checks and why it matters
    fix: str  # what to do when it fails
    kind: str = "check"  # "check" (changes the verdict) or "warning"


class Engine(Protocol):
    name: str
    methods: tuple[str, ...]
    default_method: str
    rules: tuple[Rule, ...]

    def evaluate(self, target: ModelDescription, draft: ModelDescription, method: str) -> Report: ...
