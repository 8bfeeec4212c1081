"""Mutation score of paircheck's pure modules: how many small planted bugs their tests catch.

mutmut (``pip install -e .[test,dev]``) rewrites one module at a time into mutants (an
operator flipped, a constant changed, an argument dropped, ...), runs that module's fast
tests against each, and counts a mutant *killed* when a test fails. A *survivor* is a
change to the code that no test notices: a missing test, or a change that cannot alter
behaviour (an equivalent mutant, listed with its reason in docs/mutation.md).

    python benchmarks/mutation.py                 # every module below, one after another
    python benchmarks/mutation.py outcome vocab   # some of them (names from the table)
    python benchmarks/mutation.py --survivors     # and print each survivor's diff

Each module runs in a scratch copy of the repository (``.mutation/<name>/``, not tracked),
so the working tree is never changed; the copy keeps mutmut's results until the next run
of that module (``mutmut results`` / ``mutmut show NAME`` there). Runs are ``nice``d and
use one test process by default (``--jobs``): the machine this is measured on has 2 cores.
Not in CI: the whole table takes tens of minutes (docs/mutation.md has the last figures).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRATCH = REPO / ".mutation"


@dataclass(frozen=True)
class Target:
    name: str
    module: str  # the file mutmut mutates, relative to the repository
    tests: tuple[str, ...]  # the fast tests that cover it (pytest node ids or files)


# The engine rules' selection: tests/_engine/test_rules_<module>.py per module, built on small
# descriptions in memory (tests/rule_desc.py). tests/_engine's other files read real GGUF and
# Hugging Face files (minutes in all), far too slow to run once per mutant; vllm and versions
# add test_engine_boundaries.py, which is pure too.
_ENGINE_MODULES = ("versions", "chat_template", "pair_size", "tensorrt_llm", "lmstudio", "ollama", "koboldcpp",
                   "common", "transformers", "sglang", "vllm", "llamacpp_methods", "llamacpp")
_WITH_BOUNDARIES = ("versions", "vllm")


def _engine_tests(module: str) -> tuple[str, ...]:
    own = f"tests/_engine/test_rules_{module}.py"
    return (own, "tests/_engine/test_engine_boundaries.py") if module in _WITH_BOUNDARIES else (own,)

_PROBE_TESTS = ("tests/probe/test_replay.py", "tests/probe/test_replay_edges.py", "tests/probe/test_summary.py")

# test_llamacpp_cases.py without its libllama and llama-server halves (those start processes and
# take minutes): paircheck's own verdict on each case.
_LLAMACPP_CASES_FAST = tuple(f"tests/_engine/test_llamacpp_cases.py::{t}" for t in (
    "test_section9_case",
    "test_case_14_15_wrong_key_types_fail_the_load",
    "test_loader_defaults",
    "test_case_24_nul_duplicate_aborts_and_nul_is_cut",
    "test_case_26_no_vocab",
    "test_case_29_override_applies_to_both",
    "test_text_failure_names_id_and_both_texts",
    "test_vocab_tail_warning_names_the_range",
    "test_big_endian_file_is_read_but_llamacpp_refuses_it",
    "test_gguf_v2_reads_like_v3",
    "test_bos_override_is_suggested_only_when_it_makes_the_pair_pass",
))

# Every schema problem in full (test_schema_problems.py), the validation tests of test_registry.py
# (a raw document in, its problems out) and the
# shipped registry's own validation; not the CLI and lookup tests, which load it again and again.
_SCHEMA_TESTS = ("tests/_registry/test_schema_problems.py", *(f"tests/_registry/test_registry.py::{t}" for t in (
    "test_real_registry_raw_documents_validate",
    "test_good_minimal_registry_loads",
    "test_missing_field_is_reported",
    "test_bad_enum_is_reported",
    "test_bad_url_date_and_fails_without_why",
    "test_duplicate_id_is_reported",
    "test_broken_toml_syntax",
    "test_unknown_field_and_bad_fingerprint",
    "test_valid_vocab_accepted",
    "test_wrong_schema_version_and_empty",
    "test_entry_without_evidence_or_quote_is_rejected",
    "test_checked_record_is_required_and_must_account_for_every_url",
    "test_unreadable_source_needs_the_quote_from_a_read_url",
    "test_quote_must_be_one_short_sentence",
    "test_evidence_fields_are_validated",
    "test_caveat_tables_are_validated",
    "test_per_engine_evidence_and_failure_levels_load",
    "test_measured_rows_are_validated",
    "test_engine_quotes_are_validated",
    "test_an_entry_may_name_no_engine_only_when_it_works",
)))

# The pure modules (no files, no network, no processes) and their fast tests. The slow,
# process-starting tests (llama-server, the oracles) are left out on purpose: a mutant they
# alone would catch shows up as a survivor here and gets a fast test of its own.
TARGETS: tuple[Target, ...] = (
    Target("outcome", "paircheck/outcome.py", ("tests/test_outcome_verdicts.py",)),
    Target("findings", "paircheck/findings.py", ("tests/test_outcome_verdicts.py", "tests/_engine/test_engines.py")),
    Target("vocab", "paircheck/vocab.py", ("tests/test_vocab_derive.py", *_LLAMACPP_CASES_FAST)),
    Target("read_cache", "paircheck/_source/read_cache.py", ("tests/_source/test_read_cache.py",)),
    Target("registry.lint", "paircheck/_registry/lint.py",
           ("tests/_registry/test_registry_lint.py", "tests/_registry/test_lint_messages.py")),
    Target("registry.schema", "paircheck/_registry/schema.py", _SCHEMA_TESTS),
    Target("probe.replay", "paircheck/probe/replay.py", _PROBE_TESTS),
    Target("probe.summary", "paircheck/probe/summary.py", _PROBE_TESTS),
    Target("speed.model", "paircheck/speed/model.py", ("tests/speed", "tests/probe/test_replay.py")),
    *(Target(f"engine.{m}", f"paircheck/_engine/{m}.py", _engine_tests(m)) for m in _ENGINE_MODULES),
)

# mutmut's exit codes per mutant (mutmut.stats.status_by_exit_code), grouped.
_KILLED = {1, 3}
_TIMEOUT = {36, -24, 24, 152, 255}
_SURVIVED = {0}
_NO_TESTS = {5, 33}


@dataclass
class Score:
    target: Target
    killed: int
    timeout: int
    survived: list[str]
    no_tests: list[str]
    other: int
    seconds: float

    @property
    def total(self) -> int:
        return self.killed + self.timeout + len(self.survived) + len(self.no_tests) + self.other

    @property
    def percent(self) -> float:
        # a timeout is a caught mutant (the tests did not pass); a mutant no test reaches is not
        return 100.0 * (self.killed + self.timeout) / self.total if self.total else 100.0


def _prepare(target: Target, work: Path) -> None:
    """A scratch copy of the tracked files, with mutmut's settings for this one module."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, check=True, capture_output=True).stdout
    for rel in filter(None, files.decode().split("\0")):
        src = REPO / rel
        if src.is_file():
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, work / rel)
    settings = {
        "source_paths": ["paircheck"],
        "only_mutate": [target.module],
        "also_copy": ["fixtures", "registry", "docs"],  # docs: tests that check a table there
        "pytest_add_cli_args_test_selection": list(target.tests),
        # a temporary folder of its own: pytest's shared /tmp/pytest-of-USER/pytest-current link,
        # moved by another session's pytest mid-test, fails a test (a mutant counted as killed)
        "pytest_add_cli_args": ["-p", "no:cacheprovider", "--basetemp", str(work / "tmp")],
        # the suite's tests are quick: a mutant that makes them 10x slower loops
        "timeout_multiplier": 10.0,
        "use_git_change_detection": False,
    }
    # mutmut writes the mutated package here; made now, so that the PYTHONPATH entry below
    # exists when Python starts (a path missing at start-up is cached as "nothing there")
    (work / "mutants").mkdir()
    with open(work / "pyproject.toml", "a", encoding="utf-8") as f:
        f.write("\n[tool.mutmut]\n")
        for key, value in settings.items():
            f.write(f"{key} = {json.dumps(value)}\n")


def _score(target: Target, work: Path, seconds: float) -> Score:
    meta = work / "mutants" / (target.module + ".meta")
    codes: dict[str, int | None] = json.loads(meta.read_text())["exit_code_by_key"] if meta.exists() else {}
    survived = sorted(k for k, c in codes.items() if c in _SURVIVED)
    no_tests = sorted(k for k, c in codes.items() if c in _NO_TESTS)
    killed = sum(1 for c in codes.values() if c in _KILLED)
    timeout = sum(1 for c in codes.values() if c in _TIMEOUT)
    other = len(codes) - killed - timeout - len(survived) - len(no_tests)
    return Score(target, killed, timeout, survived, no_tests, other, seconds)


def run(target: Target, jobs: int, verbose: bool) -> Score | None:
    work = SCRATCH / target.name
    _prepare(target, work)
    env = dict(os.environ)
    # processes a test starts (python -m paircheck) import the mutated copy too
    env["PYTHONPATH"] = str(work / "mutants")
    mutmut = [sys.executable, "-c", "import sys; from mutmut.__main__ import cli; sys.exit(cli())"]
    start = time.monotonic()
    proc = subprocess.run(["nice", "-n", "10", *mutmut, "run", "--max-children", str(jobs)], cwd=work, env=env,
                          stdout=None if verbose else subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        tail = "" if verbose else "\n".join(proc.stdout.splitlines()[-20:])
        print(f"mutmut failed on {target.module} (exit {proc.returncode}):\n{tail}", file=sys.stderr)
        return None
    return _score(target, work, seconds)


def _show(target: Target, names: list[str]) -> None:
    mutmut = [sys.executable, "-c", "import sys; from mutmut.__main__ import cli; sys.exit(cli())"]
    for name in names:
        out = subprocess.run([*mutmut, "show", name], cwd=SCRATCH / target.name, capture_output=True, text=True)
        print(out.stdout.rstrip())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="modules to run (default: all): " +
                        ", ".join(t.name for t in TARGETS))
    parser.add_argument("--jobs", type=int, default=1, help="mutants tested at once (default 1)")
    parser.add_argument("--survivors", action="store_true", help="print each survivor's diff")
    parser.add_argument("--verbose", action="store_true", help="show mutmut's own progress")
    parser.add_argument("--json", type=Path, help="also write the scores to this file")
    args = parser.parse_args()
    by_name = {t.name: t for t in TARGETS}
    unknown = [n for n in args.names if n not in by_name]
    if unknown:
        parser.error(f"unknown module {', '.join(unknown)} (known: {', '.join(by_name)})")
    chosen = [by_name[n] for n in args.names] if args.names else list(TARGETS)

    scores: list[Score] = []
    failed: list[str] = []
    head = f"{'module':<24} {'mutants':>7} {'killed':>6} {'surv.':>5} {'untested':>8} {'score':>6} {'time':>7}"
    print(head)
    for target in chosen:
        s = run(target, args.jobs, args.verbose)
        if s is None:
            failed.append(target.name)
            continue
        scores.append(s)
        print(f"{target.name:<24} {s.total:>7} {s.killed + s.timeout:>6} {len(s.survived):>5} "
              f"{len(s.no_tests):>8} {s.percent:>5.1f}% {s.seconds:>6.0f}s", flush=True)
        if args.survivors:
            _show(target, s.survived + s.no_tests)
        if args.json:  # after each module: a long run stopped half-way keeps what it measured
            _write_json(args.json, scores)
    total = sum(s.seconds for s in scores)
    print(f"{len(scores)} modules in {total / 60:.1f} min; score = (killed + timed out) / mutants; "
          f"'untested': no selected test reaches the mutated function")
    if failed:
        print(f"mutmut could not run on: {', '.join(failed)}")
    return 1 if failed else 0


def _write_json(path: Path, scores: list[Score]) -> None:
    path.write_text(json.dumps([{
        "module": s.target.module, "mutants": s.total, "killed": s.killed, "timeout": s.timeout,
        "survived": s.survived, "no_tests": s.no_tests, "score": round(s.percent, 1),
        "seconds": round(s.seconds)} for s in scores], indent=2) + "\n")


if __name__ == "__main__":
    sys.exit(main())
