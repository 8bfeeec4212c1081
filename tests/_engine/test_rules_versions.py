"""paircheck._engine.versions on its own: version parsing, ranges, the read note, picking a
range and a VersionedEngine's evaluate. In process and file-free, so the mutation run
(benchmarks/mutation.py engine.versions) tests each planted bug in well under a second."""

from __future__ import annotations

import pytest
from rule_desc import desc

from paircheck._engine.versions import (
    VersionedEngine,
    VersionRange,
    installed_release,
    parse_version,
    pick,
    ranges,
    read_note,
)
from paircheck.findings import PASS, Report, Rule

RULE = Rule("XX001", "x", "X", "why", "fix")


@pytest.mark.parametrize(("text", "parsed"), [
    ("0.5.15", (0, 5, 15)), ("v0.5.15", (0, 5, 15)), (" V1.115 ", (1, 115)), ("0.5.15.post1", (0, 5, 15)),
    ("1.2rc3.4", (1, 2)), ("2", (2,)), ("0.10.1.dev5", (0, 10, 1)),
])
def test_parse_version(text: str, parsed: tuple[int, ...]) -> None:
    assert parse_version(text) == parsed


@pytest.mark.parametrize("text", ["abc", "", "post1.2", "v"])
def test_parse_version_refuses_garbage(text: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse_version(text)
    assert str(raised.value) == f"{text!r} is not a version number"


BOUNDS = (
    (None, "src-old", "old cite", ()),
    ("0.5.10", "src-mid", "", ("0.5.10", "0.5.12")),
    ("0.5.15", "src-new", "new cite", ("0.5.15", "0.5.23")),
)


def test_ranges_are_consecutive_newest_first() -> None:
    new, mid, old = ranges("Eng", BOUNDS)
    assert new == VersionRange("Eng", "0.5.15", None, "src-new", "new cite", ("0.5.15", "0.5.23"))
    assert mid == VersionRange("Eng", "0.5.10", "0.5.15", "src-mid", "", ("0.5.10", "0.5.12"))
    assert old == VersionRange("Eng", None, "0.5.10", "src-old", "old cite", ())
    assert len(ranges("Eng", BOUNDS)) == 3


def test_contains_low_inclusive_high_exclusive() -> None:
    new, mid, old = ranges("Eng", BOUNDS)
    assert mid.contains("0.5.10") and mid.contains("0.5.14.9") and not mid.contains("0.5.15")
    assert not mid.contains("0.5.9") and old.contains("0.0.1") and old.contains("0.5.9")
    assert not old.contains("0.5.10") and new.contains("9.0") and new.contains("0.5.15.post1")
    # "0.5.10" and "0.5.10.0" are one version (padded to six parts)
    assert mid.contains("0.5.10.0.0") and not old.contains("0.5.10.0")
    assert VersionRange("E", "1.0.0", None, "s").contains("1.0")


def test_reaches() -> None:
    new, mid, old = ranges("Eng", BOUNDS)
    assert new.reaches("0.5.15") and new.reaches("0.5.10") and not new.reaches("0.5.16")
    assert mid.reaches("0.5.10") and not mid.reaches("0.5.15")
    assert not old.reaches("0.0.1")  # an open-ended low reaches nothing


def test_labels() -> None:
    new, mid, old = ranges("Eng", BOUNDS)
    assert new.label == "Eng >= 0.5.15"
    assert mid.label == "Eng 0.5.10 to before 0.5.15"
    assert old.label == "Eng < 0.5.10"
    assert VersionRange("Eng", None, None, "s").label == "Eng (all versions)"


def test_read_note() -> None:
    all_ranges = ranges("Eng", BOUNDS)
    assert read_note(all_ranges, None) == ""
    assert read_note(all_ranges, "0.5.12") == ""
    assert read_note(all_ranges, "0.5.23") == "" and read_note(all_ranges, "0.5.23.post1") == ""
    assert read_note(all_ranges, "0.5.23.4") == ""  # a patch of the newest release read
    assert read_note(all_ranges, "0.5.24") == "; rules read up to 0.5.23 (0.5.24 not read: its source may differ)"
    assert read_note(all_ranges, "0.6") == "; rules read up to 0.5.23 (0.6 not read: its source may differ)"
    assert read_note(all_ranges, "0.5.9") == "; rules read from 0.5.10 on (0.5.9 not read: its source may differ)"
    assert read_note(all_ranges, "0.5.10") == ""
    assert read_note(all_ranges, "0.5.20") == ""  # between releases read: the newest is what counts
    # "0.5.23" is the release "0.5.23.0" read, though its parts are fewer
    assert read_note((VersionRange("E", None, None, "s", read=("0.5.23.0",)),), "0.5.23") == ""
    # sorted by version, not as text: 0.5.9 is older than 0.5.10
    shuffled = (VersionRange("E", None, None, "s", read=("0.5.10", "0.5.9")),)
    assert read_note(shuffled, "0.5.9.1") == ""
    assert read_note(shuffled, "0.5.8") == "; rules read from 0.5.9 on (0.5.8 not read: its source may differ)"
    assert read_note(shuffled, "0.5.11") == "; rules read up to 0.5.10 (0.5.11 not read: its source may differ)"
    assert read_note((VersionRange("E", None, None, "s"),), "1.0") == ""  # nothing read: nothing said


def test_pick() -> None:
    new, mid, old = all_ranges = ranges("Eng", BOUNDS)
    assert pick(all_ranges, None) is new
    assert pick(all_ranges, "0.5.11") is mid and pick(all_ranges, "0.1") is old and pick(all_ranges, "1") is new
    with pytest.raises(ValueError, match="is not a version number"):
        pick(all_ranges, "latest")
    with pytest.raises(ValueError) as raised:
        pick((new, mid), "0.1")
    assert str(raised.value) == "no rules for version 0.1 (known: Eng >= 0.5.15; Eng 0.5.10 to before 0.5.15)"


def test_installed_release() -> None:
    all_ranges = ranges("Eng", BOUNDS)
    assert installed_release(all_ranges, "0.5.11") == "0.5.11"
    assert installed_release(all_ranges, "b1234-local") is None
    assert installed_release(all_ranges[:1], "0.1") is None  # no range holds it
    assert installed_release((), "0.5.11") is None


def _fn(target, draft, method, version):  # type: ignore[no-untyped-def]
    return Report("Eng", method, target, draft, [RULE.result(PASS, f"{method} in {version.label}")])


ENGINE = VersionedEngine("eng", ("a", "b"), "a", (RULE,), {"a": _fn, "b": _fn}, ranges("Eng", BOUNDS),
                         {"draft-simple": "b"})


def test_versioned_engine_resolve_and_boundaries() -> None:
    assert ENGINE.resolve(None) == "a" and ENGINE.resolve("b") == "b" and ENGINE.resolve("draft-simple") == "b"
    assert ENGINE.resolve("draft-eagle3") is None
    assert VersionedEngine("e", ("a",), "a", (), {}, ()).resolve("x") is None  # no aliases
    assert ENGINE.boundaries == "< 0.5.10, 0.5.10, 0.5.15"
    two = VersionedEngine("e", ("a",), "a", (), {}, ranges("E", BOUNDS[1:]))
    assert two.boundaries == "0.5.10, 0.5.15"  # the oldest range starts at a release
    assert VersionedEngine("e", ("a",), "a", (), {}, ()).boundaries == "all versions"
    assert VersionedEngine("e", ("a",), "a", (), {}, (VersionRange("E", None, None, "s"),)).boundaries == \
        "all versions"


def test_versioned_engine_evaluate() -> None:
    t, d = desc("t.gguf"), desc("d.gguf")
    report = ENGINE.evaluate(t, d, "draft-simple", "0.5.11")
    assert report.target is t and report.draft is d
    assert report.method == "b" and report.checks[0].message == "b in Eng 0.5.10 to before 0.5.15"
    assert report.engine_version == "Eng 0.5.10 to before 0.5.15, rules read from src-mid"
    newest = ENGINE.evaluate(t, d, "a")
    assert newest.engine_version == "Eng >= 0.5.15, rules read from new cite"
    assert ENGINE.evaluate(t, d, "a", "0.9").engine_version == (
        "Eng >= 0.5.15, rules read from new cite; rules read up to 0.5.23 (0.9 not read: its source may differ)")
    with pytest.raises(ValueError) as raised:
        ENGINE.evaluate(t, d, "c")
    assert str(raised.value) == "eng has no method 'c'"
