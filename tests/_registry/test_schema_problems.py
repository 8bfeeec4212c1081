# ruff: noqa: E501  (the expected problems are whole lines, as validate gives them)
"""The registry schema's problems as whoever adds an entry reads them: one malformed field at a
time on a valid entry, and the full list of lines ``validate`` gives for it (an empty list: the
entry is valid, an edge that must stay accepted).

In-process on parsed TOML (no files), so that a mutation run of ``_registry/schema.py`` tests
its mutants in a fraction of a second each.
"""

from __future__ import annotations

import copy
import datetime as dt
import sys
from pathlib import Path
from typing import Any

import pytest
import tomllib

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_registry import GOOD_ENTRY, HEADER  # noqa: E402

from paircheck._registry.load import validate  # noqa: E402

E = "p.toml: pair[0] (id 'a-big--a-small'): "
VOCAB = {"prefix": "v1p:" + "0" * 32, "scope": "model", "full": "v1:" + "1" * 32, "tokenizer_of": "org/m",
         "artifact": "pypi:x==1", "file": "f.gguf", "sha256": "a" * 64, "vocab_size": 32000,
         "vocab_size_from": "config.json"}
MEAS = {"quantity": "speedup", "value": 2.15, "quote": "2.15x", "engine": "llama.cpp"}


def _base() -> dict[str, Any]:
    return tomllib.loads(HEADER + GOOD_ENTRY)


def test_the_base_entry_is_valid() -> None:
    assert validate(_base(), "p.toml") == []


CASES: list[tuple[str, str, list[str]]] = [
    ('top level not a table', 'DOC = []', [
        'p.toml: top level must be a table',
    ]),
    ('unknown top-level key and wrong version', "doc['extra'] = 1; doc['schema_version'] = 3", [
        "p.toml: unknown top-level key 'extra'",
        'p.toml: schema_version must be 2, got 3',
    ]),
    ('no version', "del doc['schema_version']", [
        'p.toml: schema_version must be 2, got None',
    ]),
    ('no pairs', "del doc['pair']", [
        'p.toml: no [[pair]] entries',
    ]),
    ('empty pairs', "doc['pair'] = []", [
        'p.toml: no [[pair]] entries',
    ]),
    ('pair not a table', "doc['pair'] = ['x']", [
        'p.toml: pair[0]: must be a table',
    ]),
    ('id not a string', "e['id'] = 3", [
        'p.toml: pair[0]: id must be a non-empty string',
    ]),
    ('id blank', "e['id'] = '  '", [
        "p.toml: pair[0] (id '  '): id must be a non-empty string",
    ]),
    ('id not a slug', "e['id'] = 'A--b'", [
        "p.toml: pair[0] (id 'A--b'): id 'A--b' is not a slug (lowercase letters, digits, '.', '-')",
    ]),
    ('id with three dashes', "e['id'] = 'a---b'", [
        "p.toml: pair[0] (id 'a---b'): id 'a---b' is not a slug (lowercase letters, digits, '.', '-')",
    ]),
    ('family not a slug', "e['family'] = 'Demo'", [
        E + "family 'Demo' is not a lowercase slug",
    ]),
    ('family blank', "e['family'] = ''", [
        E + 'family must be a non-empty string',
    ]),
    ('missing fields and unknown ones', "del e['method']; del e['notes']; e['zzz'] = 1; e['aaa'] = 2", [
        E + "missing required field 'method'",
        E + "missing required field 'notes'",
        E + "unknown field 'aaa'",
        E + "unknown field 'zzz'",
    ]),
    ('target not a table', "e['target'] = 'x'", [
        E + "target: must be a table with 'name' (and optional 'repo')",
    ]),
    ('model fields', "e['target'] = {'name': ' ', 'repo': 'bad repo', 'extra': 1, 'builtin': 'yes'}", [
        E + "target: unknown field 'extra'",
        E + "target: missing or empty 'name'",
        E + "target: repo 'bad repo' is not a Hub repo id like 'org/name'",
        E + 'target: builtin must be true or false',
    ]),
    ('builtin target', "e['target'] = {'name': 'T', 'builtin': True}", [
        E + 'target: only the draft can be builtin',
    ]),
    ('builtin draft with repo', "e['draft'] = {'name': 'D', 'repo': 'a/b', 'builtin': True}", [
        E + 'draft: a builtin draft has no repo',
    ]),
    ('builtin draft ok', "e['draft'] = {'name': 'D', 'builtin': True}", [
    ]),
    ('bad method', "e['method'] = 'eagle-3'", [
        E + "method 'eagle-3' is not one of: draft-model, eagle, eagle3, medusa, mlp-speculator, dflash, dspark, mtp, ngram, suffix, cross-vocab",
    ]),
    ('engines not a list', "e['engines'] = 'vllm'", [
        E + 'engines must be a list',
    ]),
    ('engines empty, works', "e['engines'] = []", [
    ]),
    ('engines empty, fails', "e['engines'] = []; e['status'] = 'fails'; e['why'] = 'w'; e['evidence'] = 'stated'", [
        E + 'engines must be a non-empty list',
    ]),
    ('engine twice and unknown', "e['engines'] = ['vllm', 'vllm', 'lm-studio']", [
        E + "engines entry 'lm-studio' is not one of: llama.cpp, lmstudio, vllm, transformers, sglang, koboldcpp, ollama, tensorrt-llm, localai, text-generation-webui, tensorrt-edge-llm, tgi, mlc-llm, mlx-lm, exllama, tabbyapi, research",
        E + 'engines lists an engine twice',
    ]),
    ('fails_on not a list', "e['fails_on'] = 'vllm'", [
        E + 'fails_on must be a list',
    ]),
    ('source not a table', "e['source'] = 'https://example.org/docs'", [
        E + 'source must be a table with url and kind',
        E + "checked: 'https://example.org/docs' is neither the source nor in see_also",
    ]),
    ('source fields', "e['source'] = {'url': 'http://x', 'kind': 'tweet', 'extra': 1}", [
        E + "source: unknown field 'extra'",
        E + "source: url 'http://x' must look like https://host/path",
        E + "source: kind 'tweet' is not one of: official-docs, model-card, paper, issue, blog, code",
        E + "checked: 'https://example.org/docs' is neither the source nor in see_also",
        E + "checked: 'http://x' is in neither read nor unreadable (say whether it was read)",
    ]),
    ('source missing', "e['source'] = {}", [
        E + "source: missing required field 'kind'",
        E + "source: missing required field 'url'",
        E + "checked: 'https://example.org/docs' is neither the source nor in see_also",
    ]),
    ('status bad', "e['status'] = 'maybe'", [
        E + "status 'maybe' is not one of: works, fails",
    ]),
    ('fails without why', "e['status'] = 'fails'; e['evidence'] = 'stated'", [
        E + "status 'fails' needs a non-empty 'why'",
    ]),
    ('fails blank why', "e['status'] = 'fails'; e['evidence'] = 'stated'; e['why'] = ' '", [
        E + "status 'fails' needs a non-empty 'why'",
    ]),
    ('works with why', "e['why'] = 'x'", [
        E + "'why' is only for status 'fails' (use notes)",
    ]),
    ('notes not a string', "e['notes'] = 3", [
        E + 'notes must be a string',
    ]),
    ('see_also not a list', "e['see_also'] = 'https://example.org/x'", [
        E + 'see_also must be a list of URLs',
    ]),
    ('see_also bad url', "e['see_also'] = ['ftp://x', 'https://nohost']; e['checked']['unreadable'] = ['ftp://x', 'https://nohost']", [
        E + "see_also: url 'ftp://x' must look like https://host/path",
        E + "see_also: url 'https://nohost' must look like https://host/path",
    ]),
    ('caveats not strings', "e['caveats'] = ['ok', ' ']", [
        E + 'caveats must be a list of non-empty strings',
    ]),
    ('caveats not a list', "e['caveats'] = 'x'", [
        E + 'caveats must be a list of non-empty strings',
    ]),
    ('caveat too long', "e['caveats'] = ['x' * 241, 'y' * 240]", [
        E + "caveat longer than 240 characters: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'...",
    ]),
    ('vocab not a table', "e['target_vocab'] = 'x'", [
        E + 'target_vocab: must be a table',
    ]),
    ('vocab empty', "e['draft_vocab'] = {'zz': 1}", [
        E + "draft_vocab: missing required field 'prefix'",
        E + "draft_vocab: missing required field 'scope'",
        E + "draft_vocab: missing required field 'tokenizer_of'",
        E + "draft_vocab: missing required field 'artifact'",
        E + "draft_vocab: missing required field 'file'",
        E + "draft_vocab: missing required field 'sha256'",
        E + "draft_vocab: missing required field 'vocab_size'",
        E + "draft_vocab: missing required field 'vocab_size_from'",
        E + "draft_vocab: unknown field 'zz'",
    ]),
    ('vocab bad values', "e['target_vocab'] = dict(VOCAB, prefix='v1p:ABC', full='v1:' + 'g' * 32, scope='org', tokenizer_of='x', artifact=' ', file=3, vocab_size_from='', sha256='A' * 64, vocab_size=True)", [
        E + "target_vocab: prefix must be a prefix fingerprint: 'v1p:' and 32 lowercase hex digits",
        E + "target_vocab: full must be a fingerprint: 'v1:' and 32 lowercase hex digits",
        E + "target_vocab: scope 'org' is not one of: model, family",
        E + 'target_vocab: tokenizer_of must be a Hugging Face repo id (org/name)',
        E + 'target_vocab: artifact must be a non-empty string',
        E + 'target_vocab: file must be a non-empty string',
        E + 'target_vocab: vocab_size_from must be a non-empty string',
        E + "target_vocab: sha256 must be 64 lowercase hex digits (of the file named in 'file')",
        E + "target_vocab: vocab_size must be a positive integer (the model's config vocab_size)",
    ]),
    ('vocab size zero', "e['target_vocab'] = dict(VOCAB, vocab_size=0)", [
        E + "target_vocab: vocab_size must be a positive integer (the model's config vocab_size)",
    ]),
    ('vocab size float', "e['target_vocab'] = dict(VOCAB, vocab_size=3.0)", [
        E + "target_vocab: vocab_size must be a positive integer (the model's config vocab_size)",
    ]),
    ('vocab prefix not a string', "e['target_vocab'] = dict(VOCAB, prefix=3, full=3, sha256=3, tokenizer_of=3)", [
        E + "target_vocab: prefix must be a prefix fingerprint: 'v1p:' and 32 lowercase hex digits",
        E + "target_vocab: full must be a fingerprint: 'v1:' and 32 lowercase hex digits",
        E + 'target_vocab: tokenizer_of must be a Hugging Face repo id (org/name)',
        E + "target_vocab: sha256 must be 64 lowercase hex digits (of the file named in 'file')",
    ]),
    ('vocab family scope', "e['target_vocab'] = dict(VOCAB, scope='family')", [
        E + "target_vocab: full is only for scope 'model': a sibling release's special tokens differ",
        E + "target_vocab: scope 'family' needs a 'basis': why the model shares the vocabulary up to the prefix end",
    ]),
    ('vocab family scope with basis', "v = dict(VOCAB, scope='family', basis='same tokenizer'); del v['full']; e['target_vocab'] = v", [
    ]),
    ('vocab family blank basis', "v = dict(VOCAB, scope='family', basis=' '); del v['full']; e['target_vocab'] = v", [
        E + "target_vocab: scope 'family' needs a 'basis': why the model shares the vocabulary up to the prefix end",
    ]),
    ('vocab ok', "e['target_vocab'] = dict(VOCAB)", [
    ]),
    ('builtin draft with vocab', "e['draft'] = {'name': 'D', 'builtin': True}; e['draft_vocab'] = dict(VOCAB)", [
        E + 'draft_vocab: a builtin draft has no vocabulary of its own',
    ]),
    ('evidence bad', "e['evidence'] = 'proven'", [
        E + "evidence 'proven' is not one of: measured, ran, recommended, computed, run-failed, code-refuses, stated, sibling",
    ]),
    ('evidence not for status', "e['evidence'] = 'stated'", [
        E + "evidence 'stated' does not fit status 'works' (use one of: measured, ran, recommended, computed)",
    ]),
    ('fails evidence not for status', "e['status'] = 'fails'; e['why'] = 'w'", [
        E + "evidence 'recommended' does not fit status 'fails' (use one of: run-failed, code-refuses, stated, sibling)",
    ]),
    ('engine_evidence not a table', "e['engine_evidence'] = 'x'", [
        E + 'engine_evidence must be a table of engine = evidence',
    ]),
    ('engine_evidence names others', "e['engine_evidence'] = {'vllm': 'ran', 'llama.cpp': 'stated'}", [
        E + "engine_evidence names 'vllm', which is in neither engines nor fails_on",
        E + "engine_evidence 'llama.cpp' = 'stated' is not one of: measured, ran, recommended, computed",
    ]),
    ('fails_on without evidence', "e['fails_on'] = ['vllm']", [
        E + "fails_on engine 'vllm' needs its failure evidence in engine_evidence",
    ]),
    ('fails_on with evidence', "e['fails_on'] = ['vllm']; e['engine_evidence'] = {'vllm': 'ran'}", [
        E + "engine_evidence 'vllm' = 'ran' is not one of: run-failed, code-refuses, stated, sibling",
    ]),
    ('fails_on ok', "e['fails_on'] = ['vllm']; e['engine_evidence'] = {'vllm': 'sibling', 'llama.cpp': 'ran'}", [
    ]),
    ('fails entry engine_evidence', "e['status'] = 'fails'; e['why'] = 'w'; e['evidence'] = 'stated'; e['engine_evidence'] = {'llama.cpp': 'ran'}", [
        E + "engine_evidence 'llama.cpp' = 'ran' is not one of: run-failed, code-refuses, stated, sibling",
    ]),
    ('figure not measured', "e['figure'] = '2x'", [
        E + 'figure is only for measured evidence',
    ]),
    ('figure blank and long', "e['figure'] = ' '", [
        E + 'figure must be a short non-empty string (at most 48 characters)',
    ]),
    ('figure long', "e['figure'] = 'x' * 49", [
        E + 'figure must be a short non-empty string (at most 48 characters)',
    ]),
    ('figure measured', "e['figure'] = 'x' * 48; e['evidence'] = 'measured'; e['measured'] = [dict(MEAS)]", [
    ]),
    ('figure measured by engine', "e['figure'] = '2x'; e['engines'] = ['llama.cpp', 'vllm']; e['engine_evidence'] = {'vllm': 'measured'}; e['measured'] = [dict(MEAS, engine='vllm')]", [
    ]),
    # Issue 50: a source that measured the pair without naming the engine (a comparison row on
    # another head's card): the entry names no engine and its numbers carry none.
    ('figure measured, no engine named', "e['figure'] = 'acceptance length 2.43'; e['engines'] = []; e['evidence'] = 'measured'; e['measured'] = [{k: v for k, v in MEAS.items() if k != 'engine'}]", [
    ]),
    ('figure, no engine named, not measured', "e['figure'] = '2x'; e['engines'] = []", [
        E + 'figure is only for measured evidence',
    ]),
    ('measured without engine beside named engines', "e['evidence'] = 'measured'; e['measured'] = [{k: v for k, v in MEAS.items() if k != 'engine'}]", [
        E + "measured[0]: missing required field 'engine'",
    ]),
    ('measured engine in an entry naming none', "e['engines'] = []; e['evidence'] = 'measured'; e['measured'] = [dict(MEAS)]", [
        E + "measured[0]: engine 'llama.cpp' is not in engines",
    ]),
    ('quote not a string', "e['quote'] = 3", [
        E + 'quote must be a non-empty string (a sentence from the source)',
    ]),
    ('quote blank', "e['quote'] = ' '", [
        E + 'quote must be a non-empty string (a sentence from the source)',
    ]),
    ('quote long', "e['quote'] = 'x' * 321", [
        E + 'quote must be one short sentence (at most 320 characters, no line breaks)',
    ]),
    ('quote max', "e['quote'] = 'x' * 320", [
    ]),
    ('quote two lines', "e['quote'] = 'a\\nb'", [
        E + 'quote must be one short sentence (at most 320 characters, no line breaks)',
    ]),
    ('quote trailing newline', "e['quote'] = 'a b\\n'", [
    ]),
    ('checked not a table', "e['checked'] = 'x'", [
        E + 'checked must be a table: { on = DATE, read = [URLs], unreadable = [URLs], note = TEXT }',
    ]),
    ('checked fields', "e['checked'] = {'zz': 1, 'note': ' ', 'on': '2026-13-40'}", [
        E + "checked: unknown field 'zz'",
        E + "checked: missing required field 'read'",
        E + "checked: on must be an ISO date (YYYY-MM-DD), got '2026-13-40'",
        E + 'checked: note must be a non-empty string',
        E + 'checked: read must name at least one source that was read (the quote comes from it)',
        E + "checked: 'https://example.org/docs' is in neither read nor unreadable (say whether it was read)",
    ]),
    ('checked on datetime', "e['checked']['on'] = dt.datetime(2026, 1, 2, 3, 4)", [
        E + 'checked: on must be an ISO date (YYYY-MM-DD), got datetime.datetime(2026, 1, 2, 3, 4)',
    ]),
    ('checked on string', "e['checked']['on'] = '2026-11-30'", [
    ]),
    ('checked on bad string', "e['checked']['on'] = '30.11.2026'", [
        E + "checked: on must be an ISO date (YYYY-MM-DD), got '30.11.2026'",
    ]),
    ('checked on number', "e['checked']['on'] = 20261130", [
        E + 'checked: on must be an ISO date (YYYY-MM-DD), got 20261130',
    ]),
    ('checked read not a list', "e['checked']['read'] = 'https://example.org/docs'; e['checked']['unreadable'] = [3]", [
        E + 'checked: read must be a list of URLs',
        E + 'checked: unreadable must be a list of URLs',
        E + 'checked: read must name at least one source that was read (the quote comes from it)',
        E + "checked: 'https://example.org/docs' is in neither read nor unreadable (say whether it was read)",
    ]),
    ('checked urls', "e['see_also'] = ['https://example.org/a', 'https://example.org/b']; e['checked']['read'] = ['https://example.org/docs', 'https://example.org/a', 'https://example.org/c']; e['checked']['unreadable'] = ['https://example.org/a']", [
        E + "checked: 'https://example.org/c' is neither the source nor in see_also",
        E + "checked: 'https://example.org/a' is listed both as read and unreadable",
        E + "checked: 'https://example.org/b' is in neither read nor unreadable (say whether it was read)",
    ]),
    ('quote_url not read', "e['quote_url'] = 'https://example.org/x'", [
        E + 'quote_url must be one of the URLs in checked.read',
    ]),
    ('source unreadable', "e['see_also'] = ['https://example.org/a']; e['checked']['read'] = ['https://example.org/a']; e['checked']['unreadable'] = ['https://example.org/docs']", [
        E + 'the source could not be read: set quote_url to the read URL the quote comes from',
    ]),
    ('source unreadable with quote_url', "e['see_also'] = ['https://example.org/a']; e['checked']['read'] = ['https://example.org/a']; e['checked']['unreadable'] = ['https://example.org/docs']; e['quote_url'] = 'https://example.org/a'", [
    ]),
    ('engine_quote not a list', "e['engine_quote'] = {'engine': 'llama.cpp'}", [
        E + 'engine_quote must be a list of tables ([[pair.engine_quote]])',
    ]),
    ('engine_quote empty', "e['engine_quote'] = []", [
        E + 'engine_quote must be a list of tables ([[pair.engine_quote]])',
    ]),
    ('engine_quote rows', "e['engine_quote'] = ['x', {'zz': 1}, {'engine': 'vllm', 'quote': ' ', 'url': 'https://example.org/x'}, {'engine': 'llama.cpp', 'quote': 'q', 'url': 'https://example.org/docs'}]", [
        E + 'engine_quote[0]: must be a table with engine, quote and url',
        E + "engine_quote[1]: unknown field 'zz'",
        E + "engine_quote[1]: missing required field 'engine'",
        E + "engine_quote[1]: missing required field 'quote'",
        E + "engine_quote[1]: missing required field 'url'",
        E + "engine_quote[2]: engine 'vllm' is in neither engines nor fails_on",
        E + 'engine_quote[2]: quote must be a non-empty string (words of the source)',
        E + 'engine_quote[2]: url must be one of the URLs in checked.read',
    ]),
    ('engine_quote on fails_on', "e['fails_on'] = ['vllm']; e['engine_evidence'] = {'vllm': 'stated'}; e['engine_quote'] = [{'engine': 'vllm', 'quote': 'x' * 321, 'url': 'https://example.org/docs'}]", [
        E + 'engine_quote[0]: quote must be one short passage (at most 320 characters, no line breaks)',
    ]),
    ('measured not a list', "e['measured'] = {}", [
        E + 'measured must be a list of tables ([[pair.measured]])',
    ]),
    ('measured empty', "e['measured'] = []", [
        E + 'measured must be a list of tables ([[pair.measured]])',
    ]),
    ('measured rows', "e['measured'] = [3, {'zz': 1}]", [
        E + 'measured[0]: must be a table with quantity, value, quote and engine',
        E + "measured[1]: unknown field 'zz'",
        E + "measured[1]: missing required field 'quantity'",
        E + "measured[1]: missing required field 'value'",
        E + "measured[1]: missing required field 'quote'",
        E + "measured[1]: missing required field 'engine'",
    ]),
    ('measured values', "e['measured'] = [dict(MEAS, quantity='speed', value=True, value_max='3', draft_max=0, hardware=' ', url=3)]", [
        E + "measured[0]: quantity 'speed' is not one of: speedup, acceptance_rate, accepted_per_pass, tokens_per_second, baseline_tokens_per_second",
        E + 'measured[0]: value must be a positive number',
        E + 'measured[0]: value_max must be a positive number',
        E + 'measured[0]: hardware must be a non-empty string',
        E + 'measured[0]: url must be a non-empty string',
        E + 'measured[0]: draft_max must be a positive integer (draft tokens per step)',
    ]),
    ('measured value zero', "e['measured'] = [dict(MEAS, value=0, value_max=-1, draft_max=True)]", [
        E + 'measured[0]: value must be a positive number',
        E + 'measured[0]: value_max must be a positive number',
        E + "measured[0]: value_max must be above value (value is a range's low end)",
        E + 'measured[0]: draft_max must be a positive integer (draft tokens per step)',
    ]),
    ('measured acceptance', "e['measured'] = [dict(MEAS, quantity='acceptance_rate', value=1.5, value_max=2)]", [
        E + 'measured[0]: an acceptance rate is a fraction from 0 to 1, got 1.5',
        E + 'measured[0]: an acceptance rate is a fraction from 0 to 1, got 2',
    ]),
    ('measured acceptance one', "e['measured'] = [dict(MEAS, quantity='acceptance_rate', value=1)]", [
    ]),
    ('measured range', "e['measured'] = [dict(MEAS, value=2, value_max=2)]", [
        E + "measured[0]: value_max must be above value (value is a range's low end)",
    ]),
    ('measured range ok', "e['measured'] = [dict(MEAS, value=2, value_max=2.5, draft_max=8, url='https://example.org/docs', settings='s')]", [
    ]),
    ('measured engine and url', "e['measured'] = [dict(MEAS, engine='vllm', url='https://example.org/x', quote='a\\nb')]", [
        E + 'measured[0]: quote must be one short passage (at most 320 characters, no line breaks)',
        E + "measured[0]: engine 'vllm' is not in engines",
        E + 'measured[0]: url must be one of the URLs in checked.read',
    ]),
    ('measured float draft_max', "e['measured'] = [dict(MEAS, draft_max=2.0)]", [
        E + 'measured[0]: draft_max must be a positive integer (draft tokens per step)',
    ]),
    ('caveat tables not a list', "e['caveat'] = {}", [
        E + 'caveat must be a list of tables ([[pair.caveat]])',
    ]),
    ('caveat tables empty', "e['caveat'] = []", [
        E + 'caveat must be a list of tables ([[pair.caveat]])',
    ]),
    ('caveat rows', "e['caveat'] = ['x', {'zz': 1}]", [
        E + 'caveat[0]: must be a table with text and basis',
        E + "caveat[1]: unknown field 'zz'",
        E + "caveat[1]: missing required field 'text'",
        E + "caveat[1]: missing required field 'basis'",
    ]),
    ('caveat bad values', "e['caveat'] = [{'text': ' ', 'basis': 'guess', 'url': 3, 'quote': '', 'reason': ' '}]", [
        E + 'caveat[0]: text must be a non-empty string',
        E + 'caveat[0]: url must be a non-empty string',
        E + 'caveat[0]: quote must be a non-empty string',
        E + 'caveat[0]: reason must be a non-empty string',
        E + "caveat[0]: basis 'guess' is not one of: source, inference (a caveat its entry's quotes support is a plain string in caveats)",
    ]),
    ('caveat text long', "e['caveat'] = [{'text': 'x' * 241, 'basis': 'inference', 'reason': 'r' * 241}]", [
        E + 'caveat[0]: text longer than 240 characters',
        E + 'caveat[0]: reason longer than 240 characters',
    ]),
    ('caveat text max', "e['caveat'] = [{'text': 'x' * 240, 'basis': 'inference', 'reason': 'r' * 240}]", [
    ]),
    ('source caveat', "e['caveat'] = [{'text': 't', 'basis': 'source', 'reason': 'r'}]", [
        E + "caveat[0]: a 'source' caveat needs 'url'",
        E + "caveat[0]: a 'source' caveat needs 'quote'",
        E + "caveat[0]: reason is for an 'inference' caveat (a 'source' one quotes its page)",
    ]),
    ('source caveat url and quote', "e['caveat'] = [{'text': 't', 'basis': 'source', 'url': 'https://example.org/x', 'quote': 'x' * 321}]", [
        E + 'caveat[0]: quote must be one short passage (at most 320 characters, no line breaks)',
        E + 'caveat[0]: url must be one of the URLs in checked.read',
    ]),
    ('source caveat url not a string', "e['caveat'] = [{'text': 't', 'basis': 'source', 'url': 3, 'quote': 'q'}]", [
        E + 'caveat[0]: url must be a non-empty string',
    ]),
    ('source caveat ok', "e['caveat'] = [{'text': 't', 'basis': 'source', 'url': 'https://example.org/docs', 'quote': 'q'}]", [
    ]),
    ('inference caveat', "e['caveat'] = [{'text': 't', 'basis': 'inference', 'url': 'https://example.org/docs'}]", [
        E + "caveat[0]: an 'inference' caveat needs a 'reason': what paircheck concludes it from",
        E + "caveat[0]: an 'inference' caveat has a reason, not url or quote (quoted words: 'source')",
    ]),
    ('inference caveat quote', "e['caveat'] = [{'text': 't', 'basis': 'inference', 'reason': 'r', 'quote': 'q'}]", [
        E + "caveat[0]: an 'inference' caveat has a reason, not url or quote (quoted words: 'source')",
    ]),
]


@pytest.mark.parametrize(("case", "edit", "problems"), CASES, ids=[c[0] for c in CASES])
def test_problems_in_full(case: str, edit: str, problems: list[str]) -> None:
    doc = _base()
    scope: dict[str, Any] = {"doc": doc, "e": doc["pair"][0], "VOCAB": VOCAB, "MEAS": MEAS, "DOC": None, "dt": dt,
                             "copy": copy}
    exec(edit, scope)  # noqa: S102 - the edits above, one statement list per case
    raw = scope["DOC"] if scope["DOC"] is not None else doc
    assert validate(raw, "p.toml") == problems

