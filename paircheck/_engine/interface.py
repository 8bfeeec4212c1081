"""What an engine's rule set looks like.

Each engine module exposes one object with this shape: its name, its methods in its own
spelling, its rules (printed by ``paircheck explain``), what it needs read from each model
for a method, and ``evaluate``, a pure function from two ModelDescriptions to a Report.
Engines know nothing of files or output: they import only the bottom layer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from paircheck.findings import Report, Rule
from paircheck.model import ModelDescription

if TYPE_CHECKING:
    from paircheck._engine.versions import VersionRange


@dataclass(frozen=True)
class Needs:
    """What an engine's checks for one method read from a model's description.

    The vocabulary is always read. ``tensor_infos``: names, shapes and types of the
    tensors (embedding rows, head tensors, loadability); every GGUF source can give them
    however the file was reached (path, Hub cache, HTTP).
    """

    tensor_infos: bool = True


class Engine(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def methods(self) -> tuple[str, ...]:
        """The methods in this engine's own spelling."""
        ...

    @property
    def default_method(self) -> str: ...

    @property
    def rules(self) -> tuple[Rule, ...]: ...

    @property
    def versions(self) -> tuple[VersionRange, ...]:
        """Version ranges with their own rules, newest first; empty: one rule set."""
        ...

    def resolve(self, method: str | None) -> str | None:
        """This engine's name for ``method`` (its own or a canonical spelling), or None."""
        ...

    def needs(self, method: str) -> Needs: ...

    def evaluate(
        self, target: ModelDescription, draft: ModelDescription, method: str, version: str | None = None
    ) -> Report:
        """The pure verdict; ``version`` picks one of ``versions`` (None: the newest)."""
        ...
