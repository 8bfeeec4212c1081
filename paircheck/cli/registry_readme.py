"""Generate the README's known-pairs table from the registry.

``python -m paircheck.cli.registry_readme`` rewrites the block between the markers in
README.md; tests/_registry/test_registry.py fails when the README and the registry drift apart,
so the table is never edited by hand.
"""

from __future__ import annotations

import sys
import textwrap
from collections import Counter
from pathlib import Path

from paircheck._format.markdown import render_markdown
from paircheck._registry.load import load_registry
from paircheck._registry.schema import EVIDENCE
from paircheck.atomic import write_text_atomic

START = "<!-- pairs:start -->"
END = "<!-- pairs:end -->"


def readme_path() -> Path:
    return Path(__file__).resolve().parents[2] / "README.md"


def render_readme_table(registry_path: Path | None = None) -> str:
    """The exact text that belongs between the markers (without the markers)."""
    registry = load_registry(registry_path)
    counts = Counter(e.best_evidence() for e in registry)
    shown = ", ".join(f"{counts[level]} {level}" for level in EVIDENCE if counts[level])
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
            "Generated from `registry/` by `python -m paircheck.cli.registry_readme`; do not edit by hand. "
            "`paircheck pairs --help` filters them; `--format json` adds repos, quotes, caveats, notes "
            "and the measured numbers."
        ),
    )
    intro = "\n\n".join(textwrap.fill(text, 100, break_on_hyphens=False) for text in paragraphs)
    return f"{intro}\n\n{render_markdown(list(registry))}\n"


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


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0]) if args else None
    try:
        changed = update_readme(path)
    except ValueError as exc:
        print(f"paircheck.cli.registry_readme: error: {exc}", file=sys.stderr)
        return 2
    print(f"{path or readme_path()}: {'updated' if changed else 'already up to date'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
