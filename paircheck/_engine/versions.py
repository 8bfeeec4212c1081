"""Engine rules keyed by version ranges: ``--engine NAME@VERSION`` picks one range.

Each non-llama.cpp engine module lists its ranges newest first; every range names where
its rules were read (repository and path at a commit, or a release's wheel). Without a
version the newest range applies. A version is compared as a tuple of integers, so
"0.5.15", "v1.115" and "0.5.15.post1" all work; anything else is refused.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from paircheck.findings import Report, Rule
from paircheck.model import ModelDescription

_NUMBER = re.compile(r"\d+")


def parse_version(text: str) -> tuple[int, ...]:
    """(0, 5, 15) for "0.5.15", "v0.5.15" or "0.5.15.post1"; ValueError for anything else."""
    cleaned = text.strip().lower().removeprefix("v")
    parts: list[int] = []
    for piece in cleaned.split("."):
        match = _NUMBER.match(piece)
        if match is None:
            break  # "post1", "rc0", "dev": the release part is what the ranges use
        parts.append(int(match.group()))
        if match.end() != len(piece):
            break
    if not parts:
        raise ValueError(f"{text!r} is not a version number")
    return tuple(parts)


def _key(text: str) -> tuple[int, ...]:
    parts = parse_version(text)
    return parts + (0,) * (6 - len(parts))


@dataclass(frozen=True)
class VersionRange:
    """Releases ``low`` (inclusive) up to ``high`` (exclusive); None is open-ended."""

    engine: str  # display name, e.g. "SGLang"
    low: str | None
    high: str | None
    source: str  # where these rules were read: repository, path, commit or release
    cite: str = ""  # the same in a few words, for the report's engine_version
    # The releases whose source was read for this range (wheels or tags); empty where the
    # range was read at a commit. A version past the newest one read is said to be unread.
    read: tuple[str, ...] = ()

    def reaches(self, release: str) -> bool:
        """Every version in this range is ``release`` or later: the rules that appeared in
        ``release`` apply. Rule functions ask this instead of naming a range object, so a
        range can be split at a new boundary without touching them."""
        return self.low is not None and _key(self.low) >= _key(release)

    def contains(self, version: str) -> bool:
        key = _key(version)
        return (self.low is None or key >= _key(self.low)) and (self.high is None or key < _key(self.high))

    @property
    def label(self) -> str:
        if self.low and self.high:
            return f"{self.engine} {self.low} to before {self.high}"
        if self.low:
            return f"{self.engine} >= {self.low}"
        if self.high:
            return f"{self.engine} < {self.high}"
        return f"{self.engine} (all versions)"


# (first release or None, where the rules were read, short citation, releases read)
Boundary = tuple[str | None, str, str, tuple[str, ...]]


def ranges(engine: str, boundaries: tuple[Boundary, ...]) -> tuple[VersionRange, ...]:
    """Consecutive ranges, newest first, from (low, source, cite, releases read) rows given
    oldest first: each range ends where the next one starts."""
    out: list[VersionRange] = []
    for index, (low, source, cite, read) in enumerate(boundaries):
        high = boundaries[index + 1][0] if index + 1 < len(boundaries) else None
        out.append(VersionRange(engine, low, high, source, cite, read))
    return tuple(reversed(out))


def read_note(all_ranges: tuple[VersionRange, ...], version: str | None) -> str:
    """What paircheck has not read: "; rules read up to 0.5.23 (0.5.24 not read)" for a
    version past the newest release read, "; rules read from 0.5.10 on (...)" for one before
    the oldest; nothing without a version (the newest range's citation names what was read)."""
    read = sorted({r for each in all_ranges for r in each.read}, key=_key)
    if not read or version is None:
        return ""
    newest = parse_version(read[-1])
    if _key(version) > _key(read[-1]) and parse_version(version)[: len(newest)] != newest:
        return f"; rules read up to {read[-1]} ({version} not read: its source may differ)"
    if _key(version) < _key(read[0]):
        return f"; rules read from {read[0]} on ({version} not read: its source may differ)"
    return ""


def pick(ranges: tuple[VersionRange, ...], version: str | None) -> VersionRange:
    """The range holding ``version`` (the newest, ranges[0], when None)."""
    if version is None:
        return ranges[0]
    parse_version(version)  # raises ValueError on garbage
    for candidate in ranges:
        if candidate.contains(version):
            return candidate
    known = "; ".join(r.label for r in ranges)
    raise ValueError(f"no rules for version {version} (known: {known})")


# A rule function: (target, draft, method, the chosen range) -> Report.
RuleFunction = Callable[[ModelDescription, ModelDescription, str, VersionRange], Report]


@dataclass(frozen=True)
class VersionedEngine:
    """An engine defined by a function per method, evaluated for one version range.

    ``aliases`` maps llama.cpp's method names to this engine's, so ``--engine all
    --method draft-eagle3`` asks every engine the same question in its own terms.
    """

    name: str
    methods: tuple[str, ...]
    default_method: str
    rules: tuple[Rule, ...]
    functions: Mapping[str, RuleFunction]
    versions: tuple[VersionRange, ...]
    aliases: Mapping[str, str] | None = None
    versioned: bool = True

    @property
    def boundaries(self) -> str:
        """The releases where this engine's rules change, oldest first: "< 0.15.0, 0.15.0, ..."."""
        lows = [r.low for r in reversed(self.versions) if r.low]
        first = [f"< {lows[0]}"] if lows and self.versions[-1].low is None else []
        return ", ".join(first + lows) or "all versions"

    def resolve(self, method: str | None) -> str | None:
        if method is None:
            return self.default_method
        if method in self.methods:
            return method
        return (self.aliases or {}).get(method)

    def evaluate(
        self, target: ModelDescription, draft: ModelDescription, method: str, version: str | None = None
    ) -> Report:
        resolved = self.resolve(method)
        if resolved is None:
            raise ValueError(f"{self.name} has no method {method!r}")
        chosen = pick(self.versions, version)
        report = self.functions[resolved](target, draft, resolved, chosen)
        report.engine_version = (f"{chosen.label}, rules read from {chosen.cite or chosen.source}"
                                 f"{read_note(self.versions, version)}")
        return report


def installed_release(all_ranges: tuple[VersionRange, ...], version: str) -> str | None:
    """``version`` of an installed engine when a range can be picked for it, else None (a
    version string these ranges cannot compare, such as a local build tag)."""
    if not all_ranges:
        return None
    try:
        pick(all_ranges, version)
    except ValueError:
        return None
    return version
