"""The registry of documented pairs: data validity, loader errors, `paircheck pairs`, README sync."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner
from httpserver import TestServer

from paircheck._format.interface import RenderOptions
from paircheck._format.markdown import render_markdown
from paircheck._format.text_pairs import render_pairs_table
from paircheck._registry.consult import drafts_for, find_documented
from paircheck._registry.entry import EngineQuote, Measurement, RegistryEntry, evidence_text
from paircheck._registry.identity import ModelIdentity, identity_from_path, identity_from_string, normalise_name
from paircheck._registry.load import Registry, default_registry_dir, load_registry, validate
from paircheck._registry.schema import (
    ENGINES,
    FAILS_EVIDENCE,
    METHODS,
    SOURCE_KINDS,
    STATUSES,
    WORKS_EVIDENCE,
    RegistryError,
)
from paircheck.cli import cli
from paircheck.cli.registry_readme import END, START, extract_block, readme_path, render_readme_table, replace_block

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

LMSTUDIO_DOCS = "https://lmstudio.ai/docs/advanced/speculative-decoding"


@pytest.fixture(scope="module")
def registry() -> Registry:
    return load_registry()


@pytest.fixture(scope="module")
def raw_docs() -> list[dict]:
    return [tomllib.loads(p.read_text(encoding="utf-8")) for p in sorted(default_registry_dir().glob("*.toml"))]


def _runner() -> CliRunner:
    # click 8.1 mixes stderr into stdout unless told not to; 8.2+ always separates them
    # and no longer accepts the argument.
    try:
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:
        return CliRunner()


def run(*args: str) -> tuple[int, str, str]:
    result = _runner().invoke(cli, ["pairs", *args])
    return result.exit_code, result.stdout, result.stderr


# --------------------------------------------------------------------------- real data


def test_real_registry_loads_and_is_big_enough(registry: Registry) -> None:
    assert len(registry) >= 40


def test_real_registry_raw_documents_validate(raw_docs: list[dict]) -> None:
    assert raw_docs, "no registry/*.toml found"
    for doc in raw_docs:
        assert validate(doc) == []


def test_real_registry_fields_and_enums(registry: Registry) -> None:
    for e in registry:
        assert re.fullmatch(r"[a-z0-9][a-z0-9.-]*[a-z0-9]", e.id), e.id
        assert e.family and e.target.name and e.draft.name and e.notes, e.id
        assert e.method in METHODS, e.id
        assert set(e.engines) <= set(ENGINES), e.id
        # A source that names no engine leaves engines empty (never a guessed engine);
        # a failure always names where it fails. Such an entry shows a run only with numbers
        # measured on an engine its source does not name (issue 50, item 13).
        unnamed_run = bool(e.measured) and all(m.engine is None for m in e.measured)
        assert e.engines or (e.status == "works" and e.shown_running() == unnamed_run), e.id
        assert set(e.fails_on) <= set(ENGINES), e.id
        assert e.status in STATUSES, e.id
        assert e.source.kind in SOURCE_KINDS, e.id
        assert re.fullmatch(r"https://[^\s/]+\.[^\s/]+(/\S*)?", e.source.url), e.id
        assert all(u.startswith("https://") for u in e.see_also), e.id
        assert isinstance(e.source.checked, date), e.id
        assert date(2020, 1, 1) <= e.source.checked, e.id
        assert e.evidence in (WORKS_EVIDENCE if e.status == "works" else FAILS_EVIDENCE), e.id
        assert e.quote and len(e.quote) <= 320, e.id
        assert e.checked is not None and e.checked.read, e.id
        if e.status == "fails":
            assert e.why, e.id
        else:
            assert e.why is None, e.id
        for ref in (e.target, e.draft):
            if ref.repo is not None:
                assert re.fullmatch(r"[\w.-]+/[\w.-]+", ref.repo), e.id
        if e.draft.builtin:
            assert e.method in ("mtp", "ngram", "suffix"), e.id


def test_real_registry_ids_and_pairs_unique(registry: Registry) -> None:
    ids = [e.id for e in registry]
    assert len(ids) == len(set(ids))
    keys = [e.pair_key() for e in registry]
    assert len(keys) == len(set(keys))


def test_real_registry_dates_are_iso_in_toml(raw_docs: list[dict]) -> None:
    for doc in raw_docs:
        for item in doc["pair"]:
            checked = item["checked"]["on"]
            assert isinstance(checked, date) or re.fullmatch(r"\d{4}-\d{2}-\d{2}", checked)


def test_lmstudio_qwen25_14b_pair_present(registry: Registry) -> None:
    found = [
        e
        for e in registry
        if e.target.repo == "Qwen/Qwen2.5-14B-Instruct"
        and e.draft.repo == "Qwen/Qwen2.5-0.5B-Instruct"
        and e.source.url == LMSTUDIO_DOCS
    ]
    assert len(found) == 1
    e = found[0]
    assert e.status == "works" and e.method == "draft-model" and "lmstudio" in e.engines
    assert e.source.kind == "official-docs"


def test_registry_covers_failures_and_several_methods(registry: Registry) -> None:
    assert {e.method for e in registry} >= {"draft-model", "eagle", "eagle3", "mtp", "medusa", "ngram"}
    assert any(e.status == "fails" for e in registry)


# --------------------------------------------------------------------------- broken data

HEADER = "schema_version = 2\n"
GOOD_ENTRY = """
[[pair]]
id = "a-big--a-small"
family = "demo"
target = { name = "Demo-7B-Instruct", repo = "demo/Demo-7B-Instruct" }
draft = { name = "Demo-0.5B-Instruct", repo = "demo/Demo-0.5B-Instruct" }
method = "draft-model"
engines = ["llama.cpp"]
status = "works"
evidence = "recommended"
source = { url = "https://example.org/docs", kind = "official-docs" }
quote = "Use Demo-0.5B-Instruct as the draft for Demo-7B-Instruct."
checked = { on = 2026-11-30, read = ["https://example.org/docs"] }
notes = "demo"
"""


def write_registry(tmp_path: Path, body: str, name: str = "pairs.toml") -> Path:
    folder = tmp_path / "registry"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(body, encoding="utf-8")
    return folder


def load_error(folder: Path) -> str:
    with pytest.raises(RegistryError) as info:
        load_registry(folder)
    return str(info.value)


def test_good_minimal_registry_loads(tmp_path: Path) -> None:
    reg = load_registry(write_registry(tmp_path, HEADER + GOOD_ENTRY))
    assert [e.id for e in reg] == ["a-big--a-small"]


def test_missing_field_is_reported(tmp_path: Path) -> None:
    body = HEADER + GOOD_ENTRY.replace('method = "draft-model"\n', "")
    msg = load_error(write_registry(tmp_path, body))
    assert "pairs.toml" in msg and "a-big--a-small" in msg
    assert "missing required field 'method'" in msg


def test_bad_enum_is_reported(tmp_path: Path) -> None:
    body = HEADER + GOOD_ENTRY.replace('["llama.cpp"]', '["lm-studio"]')
    msg = load_error(write_registry(tmp_path, body))
    assert "'lm-studio' is not one of" in msg


def test_bad_url_date_and_fails_without_why(tmp_path: Path) -> None:
    body = HEADER + (
        GOOD_ENTRY.replace("https://example.org/docs", "http://example.org/docs")
        .replace("on = 2026-11-30", 'on = "29.11.2026"')
        .replace('status = "works"', 'status = "fails"')
    )
    msg = load_error(write_registry(tmp_path, body))
    assert "must look like https://" in msg
    assert "ISO date" in msg
    assert "needs a non-empty 'why'" in msg


def test_duplicate_id_is_reported(tmp_path: Path) -> None:
    second = GOOD_ENTRY.replace("Demo-0.5B", "Demo-1.5B")
    msg = load_error(write_registry(tmp_path, HEADER + GOOD_ENTRY + second))
    assert "duplicate id" in msg


def test_duplicate_pair_is_reported_across_spellings(tmp_path: Path) -> None:
    # Same pair written differently (no repo, GGUF/quant suffixes, spaces) with a new id.
    second = (
        GOOD_ENTRY.replace('id = "a-big--a-small"', 'id = "other-id"')
        .replace('{ name = "Demo-7B-Instruct", repo = "demo/Demo-7B-Instruct" }', '{ name = "Demo 7B Instruct GGUF" }')
        .replace('repo = "demo/Demo-0.5B-Instruct"', 'repo = "someone/Demo-0.5B-Instruct-GGUF"')
    )
    msg = load_error(write_registry(tmp_path, HEADER + GOOD_ENTRY + second))
    assert "duplicate pair" in msg


def test_duplicates_across_files_are_reported(tmp_path: Path) -> None:
    folder = write_registry(tmp_path, HEADER + GOOD_ENTRY, "a.toml")
    write_registry(tmp_path, HEADER + GOOD_ENTRY, "b.toml")
    msg = load_error(folder)
    assert "duplicate id" in msg and "b.toml" in msg


def test_broken_toml_syntax(tmp_path: Path) -> None:
    msg = load_error(write_registry(tmp_path, "schema_version = 1\n[[pair]\nid = 'x'\n"))
    assert "invalid TOML" in msg and "pairs.toml" in msg


def test_unknown_field_and_bad_fingerprint(tmp_path: Path) -> None:
    # target_fingerprint (a bare string without provenance) was replaced by target_vocab.
    body = HEADER + GOOD_ENTRY + 'note = "typo"\ntarget_fingerprint = "XYZ"\n'
    msg = load_error(write_registry(tmp_path, body))
    assert "unknown field 'note'" in msg
    assert "unknown field 'target_fingerprint'" in msg


def test_valid_vocab_accepted(tmp_path: Path) -> None:
    body = HEADER + GOOD_ENTRY + (
        '\n[pair.draft_vocab]\nprefix = "v1p:' + "0" * 32 + '"\nscope = "model"\nfull = "v1:' + "1" * 32 + '"\n'
        'tokenizer_of = "org/m"\nartifact = "pypi:x==1"\nfile = "f.gguf"\nsha256 = "' + "a" * 64 + '"\n'
        'vocab_size = 32000\nvocab_size_from = "config.json"\n'
    )
    reg = load_registry(write_registry(tmp_path, body))
    vocab = next(iter(reg)).draft_vocab
    assert vocab is not None and (vocab.full, vocab.vocab_size, vocab.basis) == ("v1:" + "1" * 32, 32000, None)


def test_wrong_schema_version_and_empty(tmp_path: Path) -> None:
    assert any("schema_version must be 2" in p for p in validate({"schema_version": 1, "pair": []}))
    assert any("no [[pair]]" in p for p in validate({"schema_version": 2}))


def test_missing_registry_folder(tmp_path: Path) -> None:
    with pytest.raises(RegistryError, match="not found"):
        load_registry(tmp_path / "nope")


# --------------------------------------------------------------------------- evidence


def test_entry_without_evidence_or_quote_is_rejected(tmp_path: Path) -> None:
    for field in (
        'evidence = "recommended"\n',
        'quote = "Use Demo-0.5B-Instruct as the draft for Demo-7B-Instruct."\n',
    ):
        name = field.split(" ", 1)[0]
        msg = load_error(write_registry(tmp_path, HEADER + GOOD_ENTRY.replace(field, "")))
        assert f"missing required field '{name}'" in msg


def test_checked_record_is_required_and_must_account_for_every_url(tmp_path: Path) -> None:
    msg = load_error(
        write_registry(
            tmp_path,
            HEADER + GOOD_ENTRY.replace('checked = { on = 2026-11-30, read = ["https://example.org/docs"] }\n', ""),
        )
    )
    assert "missing required field 'checked'" in msg
    body = HEADER + GOOD_ENTRY + 'see_also = ["https://example.org/other"]\n'
    assert "'https://example.org/other' is in neither read nor unreadable" in load_error(write_registry(tmp_path, body))
    body = HEADER + GOOD_ENTRY.replace('read = ["https://example.org/docs"]', "read = []")
    assert "read must name at least one source" in load_error(write_registry(tmp_path, body))


def test_unreadable_source_needs_the_quote_from_a_read_url(tmp_path: Path) -> None:
    unreadable = (
        GOOD_ENTRY.replace(
            'checked = { on = 2026-11-30, read = ["https://example.org/docs"] }',
            'checked = { on = 2026-11-30, read = ["https://example.org/other"], '
            'unreadable = ["https://example.org/docs"] }',
        )
        + 'see_also = ["https://example.org/other"]\n'
    )
    assert "set quote_url" in load_error(write_registry(tmp_path, HEADER + unreadable))
    reg = load_registry(write_registry(tmp_path, HEADER + unreadable + 'quote_url = "https://example.org/other"\n'))
    entry = next(iter(reg))
    assert entry.source_unread()
    assert "could not be re-read" in evidence_text(entry)


def test_quote_must_be_one_short_sentence(tmp_path: Path) -> None:
    long_quote = "x" * 400
    body = HEADER + GOOD_ENTRY.replace("Use Demo-0.5B-Instruct as the draft for Demo-7B-Instruct.", long_quote)
    assert "one short sentence" in load_error(write_registry(tmp_path, body))
    body = HEADER + GOOD_ENTRY.replace('quote = "Use Demo', 'quote = """Use\nDemo').replace(
        'Demo-7B-Instruct."', 'Demo-7B-Instruct."""'
    )
    assert "one short sentence" in load_error(write_registry(tmp_path, body))


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (('evidence = "recommended"', 'evidence = "works"'), "evidence 'works' is not one of"),
        (('evidence = "recommended"', 'evidence = "run-failed"'), "does not fit status 'works'"),
        (('notes = "demo"', 'notes = "demo"\nfigure = "2x"'), "figure is only for measured evidence"),
        (('notes = "demo"', 'notes = "demo"\nfails_on = ["vllm"]'), "needs its failure evidence in engine_evidence"),
        (('notes = "demo"', 'notes = "demo"\nengine_evidence = { vllm = "ran" }'), "in neither engines nor fails_on"),
        (
            ('notes = "demo"', 'notes = "demo"\nfails_on = ["vllm"]\nengine_evidence = { vllm = "ran" }'),
            "'vllm' = 'ran' is not one of",
        ),
        (('notes = "demo"', 'notes = "demo"\ncaveats = [""]'), "caveats must be a list of non-empty strings"),
    ],
)
def test_evidence_fields_are_validated(tmp_path: Path, change: tuple[str, str], needle: str) -> None:
    old, new = change
    assert needle in load_error(write_registry(tmp_path, HEADER + GOOD_ENTRY.replace(old, new)))


@pytest.mark.parametrize(
    ("table", "needle"),
    [
        ('text = "t"\nbasis = "guess"', "basis 'guess' is not one of: source, inference"),
        ('text = "t"\nbasis = "inference"', "an 'inference' caveat needs a 'reason'"),
        ('text = "t"\nbasis = "source"\nurl = "https://example.org/docs"', "a 'source' caveat needs 'quote'"),
        ('text = "t"\nbasis = "source"\nurl = "https://example.org/x"\nquote = "q"', "url must be one of the URLs"),
        ('text = "t"\nbasis = "inference"\nreason = "r"\nquote = "q"', "has a reason, not url or quote"),
        ('basis = "inference"\nreason = "r"', "caveat[0]: missing required field 'text'"),
        ('text = "t"\nbasis = "inference"\nreason = "r"\nwhy = "w"', "caveat[0]: unknown field 'why'"),
    ],
)
def test_caveat_tables_are_validated(tmp_path: Path, table: str, needle: str) -> None:
    body = HEADER + GOOD_ENTRY + "\n[[pair.caveat]]\n" + table + "\n"
    assert needle in load_error(write_registry(tmp_path, body))


def test_caveats_load_in_file_order_with_their_basis(tmp_path: Path) -> None:
    body = HEADER + GOOD_ENTRY.replace('notes = "demo"', 'notes = "demo"\ncaveats = ["From the quote."]') + (
        '\n[[pair.caveat]]\ntext = "Needs 8 GB."\nbasis = "source"\nurl = "https://example.org/docs"\n'
        'quote = "It needs 8 GB."\n\n[[pair.caveat]]\ntext = "Slow on CPU."\nbasis = "inference"\n'
        'reason = "The draft is 0.5B."\n'
    )
    entry = next(iter(load_registry(write_registry(tmp_path, body))))
    assert [(c.basis, c.shown()) for c in entry.caveats] == [
        ("quote", "From the quote."),
        ("source", "Needs 8 GB."),
        ("inference", "Slow on CPU [paircheck's inference]."),
    ]
    doc = entry.to_dict()
    assert doc["caveats"][2] == "Slow on CPU [paircheck's inference]."
    assert doc["caveat_bases"][1] == {
        "text": "Needs 8 GB.", "basis": "source", "url": "https://example.org/docs", "quote": "It needs 8 GB.",
        "reason": None,
    }


def test_per_engine_evidence_and_failure_levels_load(tmp_path: Path) -> None:
    body = (
        HEADER
        + GOOD_ENTRY.replace('engines = ["llama.cpp"]', 'engines = ["llama.cpp", "mlc-llm"]').replace(
            'evidence = "recommended"', 'evidence = "measured"\nfigure = "+115%"'
        )
        + 'fails_on = ["vllm"]\nengine_evidence = { "mlc-llm" = "recommended", vllm = "code-refuses" }\n'
    )
    entry = next(iter(load_registry(write_registry(tmp_path, body))))
    assert entry.evidence_for("llama.cpp") == "measured"
    assert entry.evidence_for("mlc-llm") == "recommended"
    assert entry.evidence_for("vllm") == "code-refuses"
    text = evidence_text(entry)
    assert "measured +115% on llama.cpp" in text
    assert "recommended for mlc-llm (no run shown)" in text
    assert "fails on vllm (refused by code)" in text
    assert entry.to_dict()["engine_evidence"] == {
        "llama.cpp": "measured",
        "mlc-llm": "recommended",
        "vllm": "code-refuses",
    }


MEASURED_ROW = """
[[pair.measured]]
quantity = "speedup"
value = 2.15
engine = "llama.cpp"
engine_version = "b4000"
target_quant = "Q4_K_M"
draft_quant = "Q4_0"
hardware = "RTX 3090"
draft_max = 16
settings = "llama-server defaults"
quote = "Demo-7B Q4_K_M + Demo-0.5B Q4_0: 159.1 tok/s (+115% speedup)"
"""
ENGINE_QUOTE = """
[[pair.engine_quote]]
engine = "llama.cpp"
quote = "llama-server -m Demo-7B.gguf -md Demo-0.5B.gguf"
url = "https://example.org/docs"
"""


def test_measured_numbers_load_as_typed_data(tmp_path: Path) -> None:
    measured = GOOD_ENTRY.replace('evidence = "recommended"', 'evidence = "measured"')
    body = HEADER + measured + MEASURED_ROW + ENGINE_QUOTE
    entry = next(iter(load_registry(write_registry(tmp_path, body))))
    (m,) = entry.measured
    assert isinstance(m, Measurement)
    assert (m.quantity, m.value, m.engine, m.draft_max) == ("speedup", 2.15, "llama.cpp", 16)
    assert (m.engine_version, m.target_quant, m.draft_quant, m.hardware) == ("b4000", "Q4_K_M", "Q4_0", "RTX 3090")
    assert m.url is None and m.value_max is None
    with pytest.raises(AttributeError):
        m.value = 3.0  # type: ignore[misc]
    (q,) = entry.engine_quotes
    assert isinstance(q, EngineQuote) and q.engine == "llama.cpp" and q.url == "https://example.org/docs"
    d = entry.to_dict()
    assert d["measured"][0]["value"] == 2.15 and d["measured"][0]["quote"].endswith("(+115% speedup)")
    assert d["engine_quotes"] == [{"engine": "llama.cpp", "quote": q.quote, "url": "https://example.org/docs"}]
    # An entry without numbers has empty tuples, not None.
    plain = next(iter(load_registry(write_registry(tmp_path, HEADER + GOOD_ENTRY))))
    assert plain.measured == () and plain.engine_quotes == ()


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (('quantity = "speedup"', 'quantity = "speed"'), "quantity 'speed' is not one of"),
        (("value = 2.15", 'value = "2.15"'), "value must be a positive number"),
        (("value = 2.15", "value = 0"), "value must be a positive number"),
        (
            ('quantity = "speedup"\nvalue = 2.15', 'quantity = "acceptance_rate"\nvalue = 72.0'),
            "a fraction from 0 to 1",
        ),
        (("value = 2.15", "value = 2.15\nvalue_max = 2.0"), "value_max must be above value"),
        (('engine = "llama.cpp"\nengine_', 'engine = "vllm"\nengine_'), "engine 'vllm' is not in engines"),
        (("draft_max = 16", "draft_max = 1.5"), "draft_max must be a positive integer"),
        (('hardware = "RTX 3090"', 'hardware = ""'), "hardware must be a non-empty string"),
        (('settings = "llama-server defaults"', 'settings = "x"\nurl = "https://x.org/a"'), "url must be one of"),
        (('settings = "llama-server defaults"', 'settings = "x"\nspeed = 3'), "unknown field 'speed'"),
        (('quote = "Demo-7B Q4_K_M', 'quote = "' + "x" * 330 + ' Demo-7B Q4_K_M'), "one short passage"),
    ],
)
def test_measured_rows_are_validated(tmp_path: Path, change: tuple[str, str], needle: str) -> None:
    old, new = change
    row = MEASURED_ROW.replace(old, new)
    assert row != MEASURED_ROW, old
    body = HEADER + GOOD_ENTRY.replace('evidence = "recommended"', 'evidence = "measured"') + row
    assert needle in load_error(write_registry(tmp_path, body))


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (('engine = "llama.cpp"', 'engine = "vllm"'), "engine 'vllm' is in neither engines nor fails_on"),
        (('url = "https://example.org/docs"', 'url = "https://elsewhere.org/a"'), "url must be one of"),
        (('url = "https://example.org/docs"\n', ""), "missing required field 'url'"),
    ],
)
def test_engine_quotes_are_validated(tmp_path: Path, change: tuple[str, str], needle: str) -> None:
    old, new = change
    quote = ENGINE_QUOTE.replace(old, new)
    assert quote != ENGINE_QUOTE, old
    assert needle in load_error(write_registry(tmp_path, HEADER + GOOD_ENTRY + quote))


def test_an_entry_may_name_no_engine_only_when_it_works(tmp_path: Path) -> None:
    body = HEADER + GOOD_ENTRY.replace('engines = ["llama.cpp"]', "engines = []")
    entry = next(iter(load_registry(write_registry(tmp_path, body))))
    assert "no engine named" in evidence_text(entry)
    failing = body.replace('status = "works"', 'status = "fails"\nwhy = "x"').replace(
        'evidence = "recommended"', 'evidence = "stated"'
    )
    assert "engines" in load_error(write_registry(tmp_path, failing))


def test_cli_json_carries_the_measured_numbers() -> None:
    code, out, _ = run("--format", "json")
    rows = {r["id"]: r for r in parse_json(out)}
    row = rows["qwen3-14b--qwen3-0.6b"]
    speedups = [m for m in row["measured"] if m["quantity"] == "speedup"]
    assert code == 0 and speedups and speedups[0]["value"] == 2.15 and speedups[0]["engine"] == "llama.cpp"
    assert "+115% speedup" in speedups[0]["quote"]


def _not_running(registry: Registry) -> list:
    return [e for e in registry if e.status == "works" and not e.shown_running()]


def test_suggested_pairs_are_never_shown_as_working(registry: Registry) -> None:
    # The real data has plenty of them (docs examples, model cards, computed acceptance rates).
    weak = _not_running(registry)
    assert len(weak) >= 20
    by_id = {e.id: e for e in weak}
    assert {"gemma-2-27b--gemma-2-2b", "qwen3.6-27b--qwen3.5-0.8b", "glm-4.5--glm-4.5-draft-0.6b-v3.0"} <= set(by_id)
    for e in weak:
        text = evidence_text(e)
        assert "work" not in text.casefold(), e.id
        assert "recommended" in text or "only computed" in text, e.id
        assert "no run shown" in text or "nothing ran" in text, e.id
    md = render_markdown(weak)
    table = render_pairs_table(weak, RenderOptions(width=200))
    for rendered in (md, table):
        assert not re.search(r"\bworks?\b|\bworking\b", rendered, re.IGNORECASE)
    assert {line.split("|")[4].strip() for line in md.splitlines()[2:] if line.startswith("| ")} <= {
        "recommended",
        "computed",
    }


def test_cli_table_says_evidence_not_works() -> None:
    code, out, _ = run("--for", "Gemma 2 27B")
    assert code == 0
    assert "computed" in out and "nothing ran" in out
    head = out.split("\n\n", 1)[0]
    assert not re.search(r"\bworks\b", head)


def test_cli_evidence_filter_and_csv_columns() -> None:
    code, out, _ = run("--evidence", "computed", "--format", "json")
    rows = parse_json(out)
    assert code == 0 and {"gemma-2-27b--gemma-2-2b", "qwen3.6-27b--qwen3.5-0.8b"} <= {r["id"] for r in rows}
    assert all("computed" in r["engine_evidence"].values() for r in rows)
    code, out, _ = run("--evidence", "measured", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and rows and all("=measured" in r["engine_evidence"] and r["quote"] for r in rows)


def test_cli_evidence_with_an_engine_is_that_engines_evidence() -> None:
    # Qwen3-8B + Qwen3-0.6B is measured on llama.cpp and only recommended for vLLM.
    code, out, _ = run("--engine", "vllm", "--evidence", "measured", "--format", "json")
    rows = parse_json(out)
    assert code == 0 and rows and all(r["engine_evidence"]["vllm"] == "measured" for r in rows)
    assert "qwen3-8b--qwen3-0.6b" not in {r["id"] for r in rows}
    code, out, _ = run("--engine", "llama.cpp", "--evidence", "measured", "--format", "json")
    assert code == 0 and "qwen3-8b--qwen3-0.6b" in {r["id"] for r in parse_json(out)}


def test_cli_for_target_shows_quote_and_caveats() -> None:
    code, out, _ = run("--for", "ggml-org/Qwen3.6-27B-GGUF")
    assert code == 0
    assert "only computed" in out and "nothing ran" in out
    assert '"For example, this makes the vocabs of Qwen3.6 27B and Qwen3.5 0.8B compatible."' in out
    assert "caveat: Hybrid (DeltaNet)" in out


def test_issue_17_corrections_hold(registry: Registry) -> None:
    eagle70 = registry.get("meta-llama-3-70b-instruct--eagle-llama3-instruct-70b")
    assert eagle70 is not None and "mlc-llm" not in eagle70.engines
    # Unreadable then; read since issue 50: a maintainer's suggestion for Llama 3.1 70B, no run.
    assert "https://github.com/mlc-ai/mlc-llm/issues/3022" in eagle70.checked.read
    qwen36 = registry.get("qwen3.6-27b--qwen3.5-0.8b")
    assert qwen36 is not None and qwen36.evidence == "computed" and qwen36.caveats
    coder = registry.get("deepseek-r1-distill-qwen-32b--deepseek-r1-draft-qwen2.5-coder-0.5b")
    assert coder.draft.repo.endswith("-GGUF") and coder.evidence == "recommended"
    assert any("no engine" in c.text for c in coder.caveats)


def test_issue_25_corrections_hold(registry: Registry) -> None:
    # Entries whose only source could not name the pair were removed, not kept unsourced.
    for gone in (
        "lamda-137b--lamda-8b",
        "t5-xxl--t5-small",
        "chinchilla-70b--chinchilla-style-4b-draft",
        "qwen3-30b-a3b--qwen3-0.6b",
        "meta-llama-3.1-8b-instruct--llama-3.2-1b",
        "llama-4-maverick-17b-128e-instruct-fp8--sglang-eagle3-llama-4-maverick-17b-128e-instruct-v1",
    ):
        assert registry.get(gone) is None, gone
    # A source that names no engine lists none (it used to be guessed from the GGUF files).
    coder = registry.get("deepseek-r1-distill-qwen-32b--deepseek-r1-draft-qwen2.5-coder-0.5b")
    assert coder.engines == ()
    # A failure reported for the FP8 build is a sibling report for the BF16 pair.
    r1 = registry.get("deepseek-r1-distill-qwen-32b--deepseek-r1-distill-qwen-1.5b")
    assert r1.evidence_for("vllm") == "sibling" and "reported for a sibling pair" in evidence_text(r1)
    # A QAT checkpoint is named as one.
    assert registry.get("gemma-4-31b-it--mtp-gemma-4-31b-it").target.name == "gemma-4-31B-it-qat"
    # Every entry was re-read on 2026-12-01 but six whose pages are not in the stored copies;
    # the two alamios cards were in them by issue 50 and were re-read then.
    old = sorted(e.id for e in registry if e.checked.on < date(2026, 12, 1))
    assert len(old) == 4 and not any("alamios" in (e.draft.repo or "") for e in registry if e.id in old), old
    assert all("not re-read" in (e.checked.note or "") for e in registry if e.id in old)


# --------------------------------------------------------------------------- matching


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Qwen 2.5 14B Instruct", "Qwen/Qwen2.5-14B-Instruct"),
        ("qwen2.5-14b-instruct-q4_k_m.gguf", "bartowski/Qwen2.5-14B-Instruct-GGUF"),
        ("Meta-Llama-3.1-8B-Instruct-4bit", "meta-llama/Llama-3.1-8B-Instruct"),
        ("qwen2.5-0.5b-coder-instruct", "Qwen2.5-Coder-0.5B-Instruct"),
        ("Qwen2.5-7B-Instruct-00001-of-00002.gguf", "Qwen2.5-7B-Instruct"),
    ],
)
def test_normalise_equivalences(a: str, b: str) -> None:
    assert normalise_name(a) == normalise_name(b)


def test_normalise_keeps_meaningful_differences() -> None:
    assert normalise_name("Qwen2.5-14B") != normalise_name("Qwen2.5-14B-Instruct")
    assert normalise_name("Qwen2.5-0.5B") != normalise_name("Qwen2.5-1.5B")


def test_identity_from_string_forms() -> None:
    assert identity_from_string("Qwen/Qwen2.5-14B-Instruct").repo == "Qwen/Qwen2.5-14B-Instruct"
    assert identity_from_string("ggml-org/Qwen3-0.6B-GGUF:Q8_0").repo == "ggml-org/Qwen3-0.6B-GGUF"
    url = identity_from_string("https://huggingface.co/Qwen/Qwen2.5-14B-Instruct-GGUF/blob/main/x-q4_k_m.gguf")
    assert url.repo == "Qwen/Qwen2.5-14B-Instruct-GGUF" and url.name == "x-q4_k_m"
    f = identity_from_string("qwen2.5-14b-instruct-q4_k_m.gguf")
    assert f.repo is None and f.name == "qwen2.5-14b-instruct-q4_k_m" and f.size_label == "14B"
    assert identity_from_string("gemma4:e2b-it-qat").name == "gemma4-e2b-it-qat"
    assert identity_from_string("hf.co/unsloth/gemma-4-E2B-it-GGUF:Q4_K_M").repo == "unsloth/gemma-4-E2B-it-GGUF"


def test_identity_from_hf_cache_folder(tmp_path: Path) -> None:
    folder = tmp_path / "models--Qwen--Qwen2.5-14B-Instruct"
    folder.mkdir()
    assert identity_from_path(folder).repo == "Qwen/Qwen2.5-14B-Instruct"


def test_drafts_for_repo_first_then_name(registry: Registry) -> None:
    found = drafts_for(registry, [ModelIdentity(repo="Qwen/Qwen2.5-7B-Instruct")])
    ids = [e.id for e in found]
    assert "qwen2.5-7b-instruct--qwen2.5-0.5b-instruct" in ids
    assert "qwen2.5-7b-instruct--qwen2.5-1.5b-instruct" in ids
    # GGUF metadata style identity (basename/size/finetune) matches too.
    gguf = ModelIdentity(basename="Qwen2.5", size_label="14B", finetune="Instruct")
    assert [e.id for e in drafts_for(registry, [gguf])] == ["qwen2.5-14b-instruct--qwen2.5-0.5b-instruct"]


def test_find_documented(registry: Registry) -> None:
    def best(target: ModelIdentity, draft: ModelIdentity) -> RegistryEntry | None:
        found = find_documented(registry, [target], [draft])
        return found[0].entry if found else None

    hit = best(
        identity_from_string("Qwen2.5-14B-Instruct-Q4_K_M.gguf"),
        identity_from_string("lmstudio-community/Qwen2.5-0.5B-Instruct-GGUF"),
    )
    assert hit is not None and hit.id == "qwen2.5-14b-instruct--qwen2.5-0.5b-instruct"
    fail = best(ModelIdentity(repo="Qwen/QwQ-32B"), ModelIdentity(name="DeepSeek-R1-Distill-Qwen-1.5B"))
    assert fail is not None and fail.status == "fails" and fail.why
    assert best(ModelIdentity(name="Qwen2.5-14B-Instruct"), ModelIdentity(name="gemma-2-2b")) is None


def test_filter_api(registry: Registry) -> None:
    gemma = registry.filter(family="gemma")
    assert {e.family for e in gemma} >= {"gemma2", "gemma3", "gemma4"}
    assert all(e.family.startswith("gemma") for e in gemma)
    vllm = registry.filter(engine="vllm")
    assert all("vllm" in e.engines or "vllm" in e.fails_on for e in vllm)
    assert [e.id for e in registry.filter(search="Medusa-2")] == ["zephyr-7b-beta--medusa-1.0-zephyr-7b-beta"]


# --------------------------------------------------------------------------- CLI


def parse_json(out: str) -> list[dict]:
    doc = json.loads(out)
    assert doc["schema_version"] == 1
    return doc["pairs"]


def test_cli_json_all_sorted_and_complete(registry: Registry) -> None:
    code, out, _ = run("--format", "json")
    assert code == 0
    rows = parse_json(out)
    assert len(rows) == len(registry)
    keys = [(r["family"], r["target"]["name"].casefold(), r["draft"]["name"].casefold(), r["method"]) for r in rows]
    assert keys == sorted(keys)
    assert {"id", "target", "draft", "method", "engines", "status", "source", "notes"} <= set(rows[0])


def test_cli_output_is_stable() -> None:
    # Two runs of one process always agree; two processes with different string hashing
    # (PYTHONHASHSEED) agree only if no set or dict order leaks into the output.
    def csv_in_a_process(seed: str) -> str:
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
        done = subprocess.run([sys.executable, "-m", "paircheck", "pairs", "--format", "csv"], capture_output=True,
                              text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    first = csv_in_a_process("1")
    assert first == csv_in_a_process("2") == run("--format", "csv")[1]
    # and in the documented order, the JSON's: one row per entry
    ids = [r["id"] for r in parse_json(run("--format", "json")[1])]
    assert [row["id"] for row in csv.DictReader(io.StringIO(first))] == ids


def test_cli_filters_combine() -> None:
    code, out, _ = run("--family", "qwen2.5", "--engine", "lmstudio", "--method", "draft-model", "--format", "json")
    rows = parse_json(out)
    assert code == 0 and rows
    assert all(r["family"].startswith("qwen2.5") and r["method"] == "draft-model" for r in rows)
    assert all("lmstudio" in r["engines"] + r["fails_on"] for r in rows)
    assert "qwen2.5-14b-instruct--qwen2.5-0.5b-instruct" in {r["id"] for r in rows}


def test_cli_status_and_search_csv() -> None:
    code, out, _ = run("--status", "fails", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and rows
    assert all(r["status"] == "fails" and r["why"] for r in rows)
    code, out, _ = run("--search", "speculator", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rows and all("speculator" in (r["draft_name"] + r["draft_repo"] + r["notes"]).lower() for r in rows)


def test_cli_case_insensitive_choices() -> None:
    code, out, _ = run("--engine", "VLLM", "--method", "EAGLE3", "--format", "json")
    rows = parse_json(out)
    assert code == 0 and rows
    # Both filters apply, whatever the case: the rows of the lower-case spelling, each an
    # EAGLE-3 pair known for vLLM, fewer than the EAGLE-3 pairs of all engines together.
    assert rows == parse_json(run("--engine", "vllm", "--method", "eagle3", "--format", "json")[1])
    assert all(r["method"] == "eagle3" and "vllm" in r["engines"] + r["fails_on"] for r in rows)
    every_engine = parse_json(run("--method", "eagle3", "--format", "json")[1])
    assert len(rows) < len(every_engine)
    assert len(rows) < len(parse_json(run("--engine", "vllm", "--format", "json")[1]))


def test_cli_table_fits_100_columns() -> None:
    code, out, _ = run()
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["target", "draft", "method"]
    assert max(len(line) for line in lines) <= 100
    assert "Qwen2.5-14B-Instruct" in out


def test_cli_markdown() -> None:
    code, out, _ = run("--format", "markdown", "--status", "fails")
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("| Target")
    assert re.match(r"^\|[-|: ]+\|$", lines[1])
    rows = [line for line in lines[2:] if line.startswith("| ")]
    assert rows and all("**FAILS" in line for line in rows)
    # Sources are numbered reference links under the table, each defined once.
    refs = [line for line in lines if re.match(r"^\[\d+\]: https://", line)]
    assert refs and all(re.search(r"\]\[\d+\] \|$", row) for row in rows)


@pytest.mark.parametrize(
    "target",
    ["Qwen/Qwen2.5-14B-Instruct", "qwen2.5-14b-instruct-q4_k_m.gguf", "bartowski/Qwen2.5-14B-Instruct-GGUF:Q4_K_M"],
)
def test_cli_for_target(target: str) -> None:
    code, out, _ = run("--for", target, "--format", "json")
    assert code == 0
    assert "qwen2.5-14b-instruct--qwen2.5-0.5b-instruct" in {r["id"] for r in parse_json(out)}
    assert json.loads(out)["for"] is not None


def test_cli_for_existing_file(tmp_path: Path) -> None:
    f = tmp_path / "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf"
    f.write_bytes(b"GGUF")
    code, out, _ = run("--for", str(f))
    assert code == 0
    assert "Llama-3.2-1B-Instruct" in out
    # Every line fits, except a URL alone on its line (a URL cannot be wrapped).
    assert all(len(line) <= 100 or line.strip().startswith("https://") for line in out.splitlines())
    assert "recommended" in out and "no run shown" in out


def test_cli_for_unknown_target() -> None:
    code, out, _ = run("--for", "nobody/Unknown-Model-3B")
    assert code == 0
    assert out.strip() == "no documented drafts for nobody/Unknown-Model-3B"
    code, out, err = run("--for", "nobody/Unknown-Model-3B", "--format", "json")
    assert code == 0 and parse_json(out) == [] and "no documented drafts" in err


def test_cli_for_a_missing_path_or_unreachable_url_exits_2(tmp_path: Path) -> None:
    # Issue 50: "no documented drafts for nonexist", exit 0, read as an answer about a model.
    for spec in ("nonexist", "models/foo.gguf", str(tmp_path / "gone.gguf")):
        code, out, err = run("--for", spec)
        assert code == 2 and out == "", (spec, out)
        (line,) = err.strip().splitlines()
        assert line.startswith("paircheck: error: ") and f"{spec}: no such file" in line, err
    spm = Path(__file__).resolve().parents[2] / "fixtures" / "examples" / "ggml-vocab-llama-spm.gguf"
    with TestServer() as server:
        served = server.add_file("m/Llama-2-7b-chat.gguf", spm)
        code, out, _ = run("--for", served)
        assert code == 0 and "Documented drafts for" in out  # a URL is read: its vocabulary is known
        code, out, err = run("--for", server.url + "/m/missing.gguf")
        assert code == 2 and out == "" and "404" in err and "no documented drafts" not in err, err
    # The server is gone: its port refuses the connection.
    code, out, err = run("--for", served)
    assert code == 2 and out == "" and "connect" in err, err
    # Names stay names: a family the registry documents, or a repo id, is a question about a model.
    for name in ("Llama-3.2-1B", "nobody/Unknown-Model-3B"):
        assert run("--for", name)[0] == 0


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--method", "bogus"], "--method"),
        (["--engine", "bogus"], "--engine"),
        (["--status", "maybe"], "--status"),
        (["--format", "yaml"], "--format"),
        (["--family", "nosuchfamily"], "--family"),
    ],
)
def test_cli_bad_option_values_exit_2(args: list[str], needle: str) -> None:
    code, _out, err = run(*args)
    assert code == 2
    assert needle in err


def test_cli_broken_registry_exit_2(tmp_path: Path) -> None:
    folder = write_registry(tmp_path, "not toml [")
    code, _, err = run("--registry", str(folder))
    assert code == 2 and "invalid TOML" in err


# --------------------------------------------------------------------------- README


def test_readme_table_in_sync() -> None:
    readme = readme_path()
    assert readme.exists(), "README.md missing: run python -m paircheck.cli.registry_readme"
    block = extract_block(readme.read_text(encoding="utf-8"))
    assert block is not None, f"README.md lacks {START} / {END}"
    assert block == render_readme_table(), (
        "README known-pairs table is stale: run python -m paircheck.cli.registry_readme"
    )


def test_readme_table_lists_every_pair(registry: Registry) -> None:
    table = render_readme_table()
    rows = [line for line in table.splitlines() if line.startswith("| ")][1:]
    assert len(rows) == len(registry)
    # Issue 27: the generated block fits 100 columns; sources, figures and quotes are in the page.
    assert max(len(line) for line in table.splitlines()) <= 100
    assert "[pairs.html](pairs.html)" in table  # the table lives in docs/, beside the page


def test_replace_block_roundtrip() -> None:
    text = f"intro\n{START}\nold\n{END}\noutro\n"
    new = replace_block(text, "NEW TABLE\n")
    assert new == f"intro\n{START}\nNEW TABLE\n{END}\noutro\n"
    assert extract_block(new) == "NEW TABLE\n"
