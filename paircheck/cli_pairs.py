"""``paircheck pairs``: browse the registry of documented target/draft pairs.

Rendering lives here (not in the click command) so the README generator reuses the
exact markdown the CLI prints.
"""

from __future__ import annotations

import csv
import io
import json
import textwrap
from collections.abc import Sequence
from pathlib import Path

import click
from tabulate import tabulate

from paircheck.registry import (
    ENGINES,
    EVIDENCE,
    METHODS,
    STATUSES,
    ModelIdentity,
    RegistryEntry,
    RegistryError,
    engines_label,
    evidence_label,
    evidence_text,
    identity_from_path,
    identity_from_string,
    load_registry,
)

FORMATS = ("table", "markdown", "json", "csv")
TABLE_WIDTH = 100
_MIN_COL = 8
_ELLIPSIS = "..."

CSV_FIELDS = (
    "id",
    "family",
    "target_name",
    "target_repo",
    "draft_name",
    "draft_repo",
    "draft_builtin",
    "method",
    "engines",
    "status",
    "evidence",
    "engine_evidence",
    "figure",
    "why",
    "fails_on",
    "source_url",
    "source_kind",
    "checked",
    "quote",
    "quote_url",
    "caveats",
    "read",
    "unreadable",
    "see_also",
    "notes",
)


# --------------------------------------------------------------------------- rendering


# Short source kinds keep the terminal table narrow; json/csv/markdown use the full enum.
_KIND_SHORT = {"official-docs": "docs", "model-card": "card"}


def _truncate_end(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - len(_ELLIPSIS), 1)] + _ELLIPSIS


def _truncate_middle(text: str, width: int) -> str:
    # Model names differ at both ends (family at the start, size/finetune at the end),
    # so cut the middle rather than the tail.
    if len(text) <= width:
        return text
    room = max(width - len(_ELLIPSIS), 2)
    head = room // 2
    return text[:head] + _ELLIPSIS + text[len(text) - (room - head) :]


def _fit_widths(
    rows: Sequence[Sequence[str]], headers: Sequence[str], total: int, gap: int, caps: Sequence[int | None]
) -> list[int]:
    """Column widths whose sum (plus gaps) fits ``total``: shrink the widest first.

    Shrinking the widest column keeps short columns (method, status) intact, which
    are the ones a reader scans.
    """
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    widths = [min(w, c) if c else w for w, c in zip(widths, caps)]
    budget = total - gap * (len(headers) - 1)
    while sum(widths) > budget:
        i = max(range(len(widths)), key=lambda k: widths[k])
        if widths[i] <= _MIN_COL:
            break
        widths[i] -= 1
    return widths


def render_table(entries: Sequence[RegistryEntry], width: int = TABLE_WIDTH) -> str:
    """Terminal table, at most ``width`` columns wide (family/notes: see json/csv)."""
    headers = ["target", "draft", "method", "evidence", "engines", "source"]
    rows = [
        [
            e.target.name,
            e.draft.name,
            e.method,
            # Never "works": the strongest evidence level says how much a source showed
            # (figures and quotes are in --format json, and below the table with --for).
            evidence_label(e, with_figure=False),
            # "!" marks engines documented as refusing the pair, so one column tells both.
            engines_label(e),
            _KIND_SHORT.get(e.source.kind, e.source.kind),
        ]
        for e in entries
    ]
    # tabulate pads columns beyond the text (gap and header padding), so measure the
    # rendered table and tighten the budget until it really fits.
    text = ""
    for budget in range(width, 30, -1):
        widths = _fit_widths(rows, headers, budget, gap=2, caps=[None, None, None, 12, 18, None])
        cut = [
            [_truncate_middle(r[0], widths[0]), _truncate_middle(r[1], widths[1])]
            + [_truncate_end(c, w) for c, w in zip(r[2:], widths[2:])]
            for r in rows
        ]
        text = tabulate(cut, headers=headers, tablefmt="simple", disable_numparse=True)
        if max(len(line) for line in text.splitlines()) <= width:
            break
    return text


def _md(text: str) -> str:
    # A "|" inside a cell would end it in GitHub markdown.
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(entries: Sequence[RegistryEntry]) -> str:
    """A GitHub table one row per pair, with sources as numbered reference links below it.

    Rows are not padded to a common width and URLs sit under the table, so each line stays
    short enough to read in a terminal or a diff (repos and notes are in --format json).
    """
    # No family column: rows are sorted by family, and the names carry it.
    headers = ["Target", "Draft", "Method", "Evidence", "Engines", "Source"]
    refs: dict[str, int] = {}
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for e in entries:
        ref = refs.setdefault(e.source.url, len(refs) + 1)
        evidence = evidence_label(e)
        if e.status == "fails":
            evidence = f"**{evidence}**"
        cells = [
            _md(e.target.name),
            _md(e.draft.name),
            e.method,
            evidence,
            _md(engines_label(e, sep=", ")),
            f"[{_KIND_SHORT.get(e.source.kind, e.source.kind)}][{ref}]",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines += [f"[{n}]: {url}" for url, n in refs.items()]
    return "\n".join(lines)


def render_details(entries: Sequence[RegistryEntry], width: int = TABLE_WIDTH) -> str:
    """Per entry: what the source shows (never "works" for a suggestion), the quote and the caveats."""
    blocks = []
    for e in entries:
        lines = [f"{e.target.name} + {e.draft.name} ({e.method}): {evidence_text(e)}"]
        lines.append(f'  "{e.quote}"')
        lines += [f"  caveat: {c}" for c in e.caveats]
        wrapped = [
            textwrap.fill(line, width, subsequent_indent="    ", break_on_hyphens=False, break_long_words=False)
            for line in lines
        ]
        # A URL cannot be wrapped; on a line of its own it still copies cleanly.
        blocks.append("\n".join(wrapped + ["  source:", f"    {e.source.url}"]))
    return "\n".join(blocks)


def render_json(entries: Sequence[RegistryEntry], query: ModelIdentity | None = None) -> str:
    doc: dict[str, object] = {"schema_version": 1}
    if query is not None:
        doc["for"] = {
            "repo": query.repo,
            "name": query.name,
            "basename": query.basename,
            "size_label": query.size_label,
            "finetune": query.finetune,
        }
    doc["pairs"] = [e.to_dict() for e in entries]
    return json.dumps(doc, indent=2, ensure_ascii=False)


def render_csv(entries: Sequence[RegistryEntry]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    for e in entries:
        writer.writerow(
            {
                "id": e.id,
                "family": e.family,
                "target_name": e.target.name,
                "target_repo": e.target.repo or "",
                "draft_name": e.draft.name,
                "draft_repo": e.draft.repo or "",
                "draft_builtin": "true" if e.draft.builtin else "false",
                "method": e.method,
                # ";" inside a cell so list columns never clash with the CSV separator.
                "engines": ";".join(e.engines),
                "status": e.status,
                "evidence": e.evidence,
                "engine_evidence": ";".join(f"{x}={e.evidence_for(x)}" for x in (*e.engines, *e.fails_on)),
                "figure": e.figure or "",
                "why": e.why or "",
                "fails_on": ";".join(e.fails_on),
                "source_url": e.source.url,
                "source_kind": e.source.kind,
                "checked": e.source.checked.isoformat(),
                "quote": e.quote,
                "quote_url": e.quote_url or e.source.url,
                "caveats": ";".join(e.caveats),
                "read": ";".join(e.checked.read) if e.checked else "",
                "unreadable": ";".join(e.checked.unreadable) if e.checked else "",
                "see_also": ";".join(e.see_also),
                "notes": e.notes,
            }
        )
    return buf.getvalue().rstrip("\n")


def render(entries: Sequence[RegistryEntry], fmt: str, query: ModelIdentity | None = None) -> str:
    if fmt == "table":
        return render_table(entries)
    if fmt == "markdown":
        return render_markdown(entries)
    if fmt == "json":
        return render_json(entries, query)
    if fmt == "csv":
        return render_csv(entries)
    raise ValueError(f"unknown format {fmt!r}")


def identity_for_argument(arg: str) -> ModelIdentity:
    """``--for`` value: an existing file/folder is named by its path, else parsed as text."""
    path = Path(arg).expanduser()
    if arg and path.exists():
        return identity_from_path(path)
    return identity_from_string(arg)


def identities_for_argument(arg: str) -> tuple[tuple[ModelIdentity, ...], str | None]:
    """Every identity ``--for`` names, and the vocabulary fingerprint when it was read.

    An existing GGUF file or Hugging Face folder is read (metadata only) so that its
    ``general.name``, ``general.repo_url``, basename/size/finetune and the model's
    fingerprint are used, not just its file name. If it cannot be read, its name is.
    """
    path = Path(arg).expanduser()
    if not (arg and path.exists()):
        return (identity_from_string(arg),), None
    from paircheck.errors import InputError

    try:
        from paircheck.api import describe
        from paircheck.fingerprint import fingerprint
        from paircheck.registry_consult import identities

        desc = describe(arg)
    except InputError:
        return (identity_from_path(path),), None
    found = identities(desc) + (identity_from_path(path),)
    return tuple(dict.fromkeys(found)), fingerprint(desc.vocab)


# --------------------------------------------------------------------------- command


class _RegistryLoadError(click.ClickException):
    # Same exit code as paircheck's other input errors (errors.InputError -> 2).
    exit_code = 2


def _lower(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    return value.strip().casefold() if value else value


@click.command("pairs")
@click.option("--family", callback=_lower, metavar="FAMILY", help="Model family, exact or prefix (gemma -> gemma2, gemma3, gemma4).")
@click.option("--method", type=click.Choice(METHODS, case_sensitive=False), help="Speculation method.")
@click.option(
    "--engine",
    type=click.Choice(ENGINES, case_sensitive=False),
    help="Engine the pair is documented for (working or failing).",
)
@click.option("--status", type=click.Choice(STATUSES, case_sensitive=False), help="Documented as working or failing.")
@click.option(
    "--evidence",
    type=click.Choice(EVIDENCE, case_sensitive=False),
    help="Evidence level for at least one engine (measured, ran: shown running; recommended, computed: not).",
)
@click.option("--search", metavar="TEXT", help="Words that must all occur in names, repos, notes or URLs.")
@click.option("--for", "for_target", metavar="TARGET", help="List documented drafts for TARGET (repo id, file, folder or name).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS, case_sensitive=False),
    default="table",
    show_default=True,
    help="Output format.",
)
@click.option(
    "--registry",
    "registry_path",
    type=click.Path(exists=True, path_type=Path),
    help="Registry folder or TOML file (default: the shipped registry).",
)
def pairs(
    family: str | None,
    method: str | None,
    engine: str | None,
    status: str | None,
    evidence: str | None,
    search: str | None,
    for_target: str | None,
    fmt: str,
    registry_path: Path | None,
) -> None:
    """List documented target/draft pairs, or the drafts documented for one target."""
    try:
        registry = load_registry(registry_path)
    except RegistryError as exc:
        raise _RegistryLoadError(f"registry: {exc}") from exc
    fmt = fmt.casefold()

    if family and not any(f == family or f.startswith(family) for f in registry.families()):
        raise click.BadParameter(
            f"{family!r} matches no family (known: {', '.join(registry.families())})",
            param_hint="'--family'",
        )

    query: ModelIdentity | None = None
    if for_target is not None:
        if not for_target.strip():
            raise click.BadParameter("TARGET is empty", param_hint="'--for'")
        from paircheck.registry_consult import drafts_for

        found, fp = identities_for_argument(for_target)
        query = found[0]
        allowed = {e.id for e in registry.filter(
            family=family, method=method, engine=engine, status=status, search=search, evidence=evidence
        )}
        entries: list[RegistryEntry] = [e for e in drafts_for(registry, found, fp) if e.id in allowed]
        empty_message = f"no documented drafts for {query.display()}"
    else:
        entries = list(registry.filter(
            family=family, method=method, engine=engine, status=status, search=search, evidence=evidence
        ))
        empty_message = "no documented pairs match the filters"

    if not entries and fmt in ("table", "markdown"):
        click.echo(empty_message)
        return
    if not entries:
        # Machine formats stay parseable (empty list / header only); the note goes to stderr.
        click.echo(empty_message, err=True)
    if query is not None and fmt == "table":
        click.echo(f"Documented drafts for {query.display()}:")
    click.echo(render(entries, fmt, query))
    if fmt == "table":
        if query is not None:
            # One target's drafts are few: say what each source shows and what to watch for.
            click.echo("\n" + render_details(entries))
        click.echo(
            f"\n{len(entries)} pair(s). Evidence: measured, ran = a source shows the pair running;\n"
            "recommended, computed = nothing shown running; fails = documented failing;\n"
            "!engine = documented to fail there. --format json adds quotes, caveats and notes."
        )
