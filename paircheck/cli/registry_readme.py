"""Generate the known-pairs table (docs/known-pairs.md) and the pairs page from the registry.

``python -m paircheck.cli.registry_readme`` rewrites the block between the markers in
docs/known-pairs.md and the page docs/pairs.html (``paircheck pairs --format html`` over the whole
registry); tests/_registry/test_registry.py fails when either drifts from the registry, so
neither is ever edited by hand.
"""

from __future__ import annotations

import sys
import textwrap
from collections import Counter
from pathlib import Path

from paircheck._format.html import render_html
from paircheck._format.markdown import render_markdown_summary
from paircheck.api import pairs, registry_choices
from paircheck.atomic import write_text_atomic

START = "<!-- pairs:start -->"
END = "<!-- pairs:end -->"


WIDTH = 100  # the README's generated lines fit this many columns


def readme_path() -> Path:
    """Where the known-pairs table lives: docs/known-pairs.md (the README links to it)."""
    return Path(__file__).resolve().parents[2] / "docs" / "known-pairs.md"


def page_path() -> Path:
    return Path(__file__).resolve().parents[2] / "docs" / "pairs.html"


def render_page(registry_path: Path | None = None) -> str:
    """The page's exact text, as ``paircheck pairs --format html --output FILE`` writes it."""
    return render_html(pairs(registry_path=registry_path).entries) + "\n"


def render_readme_table(registry_path: Path | None = None) -> str:
    """The exact text that belongs between the markers (without the markers)."""
    registry = pairs(registry_path=registry_path).entries
    counts = Counter(e.best_evidence() for e in registry)
    shown = ", ".join(f"{counts[level]} {level}" for level in registry_choices()["evidence"] if counts[level])
    running = sum(1 for e in registry if e.shown_running())
    paragraphs = (
        (
            f"{len(registry)} documented pairs, by their strongest evidence: {shown}. "
        f"Only measured and ran ({running} pairs) mean a source shows the pair running; "
        "recommended and computed do not, and the FAILS levels say how a failure is documented "
        "(registry/README.md defines each). Engines with weaker evidence than their row follow "
            "their own level (`recommended: lmstudio`); `!engine` is documented to fail there."
        ),
        (
            "Generated from `registry/` by `python -m paircheck.cli.registry_readme` (with the page "
            "[pairs.html](pairs.html)); do not edit by hand. To fit 100 columns a long draft name "
            "loses the words it shares with its target, or its middle, to \"…\"; the page, `paircheck pairs` "
            "and `--format json` give whole names, figures, measured numbers, repos, quotes, caveats and notes."
        ),
    )
    intro = "\n\n".join(textwrap.fill(text, WIDTH, break_on_hyphens=False) for text in paragraphs)
    return f"{intro}\n\n{render_markdown_summary(list(registry), WIDTH)}\n"


def extract_block(text: str) -> str | None:
    """Current content between the markers, or None when a marker is missing."""
    start = text.find(START)
    end = text.find(END, start + len(START)) if start != -1 else -1
    if start == -1 or end == -1:
        return None
    return text[start + len(START) : end].strip("\n") + "\n"


def replace_block(text: str, table: str) -> str:
    start = text.find(START)
    end = text.find(END, start + len(START)) if start != -1 else -1
    if start == -1 or end == -1:
        raise ValueError(f"README lacks the {START} / {END} markers")
    return text[: start + len(START)] + "\n" + table.rstrip("\n") + "\n" + text[end:]


def update_readme(path: Path | None = None) -> bool:
    """Rewrite the block; returns True when the file changed."""
    target = path or readme_path()
    if target.exists():
        old = target.read_text(encoding="utf-8")
    else:
        # The lead owns README.md; until it exists, write just the markers to merge later.
        old = f"{START}\n{END}\n"
    if START not in old or END not in old:
        raise ValueError(f"{target}: missing {START} / {END} markers")
    new = replace_block(old, render_readme_table())
    if new != old:
        write_text_atomic(target, new)  # an interrupted run leaves the old README whole
        return True
    return False


def update_page(path: Path | None = None) -> bool:
    """Rewrite the page; returns True when the file changed."""
    target = path or page_path()
    new = render_page()
    if target.exists() and target.read_text(encoding="utf-8") == new:
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(target, new)
    return True


def main(argv: list[str] | None = None) -> int:
    """``[TABLE_DOC [PAGE]]``: both default to the repository's docs/known-pairs.md and docs/pairs.html."""
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0]) if args else None
    page = Path(args[1]) if len(args) > 1 else None
    try:
        changed = update_readme(path)
        page_changed = update_page(page)
    except ValueError as exc:
        print(f"paircheck.cli.registry_readme: error: {exc}", file=sys.stderr)
        return 2
    print(f"{path or readme_path()}: {'updated' if changed else 'already up to date'}")
    print(f"{page or page_path()}: {'updated' if page_changed else 'already up to date'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
