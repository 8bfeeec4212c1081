"""``bench compare`` arithmetic on hand-written result files: medians, spreads, speedup on
equal work, acceptance, accepted tokens per target pass, first differing position.
(The same comparison on real llama-server output is in test_bench_llamacpp.py.)"""

from __future__ import annotations

from typing import Any

import pytest

from paircheck._format.json_format import comparison_to_dict as to_json
from paircheck._format.text_bench import render_comparison as render_table
from paircheck.bench.compare import compare, first_difference
from paircheck.errors import InputError
from paircheck.llama_server.prompts import load_prompts


def _req(pid: str, run: int, ms: float, content: str, pred: int, pred_ms: float,
         drafted: int | None = None, accepted: int | None = None) -> dict[str, Any]:
    timings: dict[str, Any] = {"prompt_n": 4, "prompt_ms": 1.0, "predicted_n": pred, "predicted_ms": pred_ms}
    if drafted is not None:
        timings.update(draft_n=drafted, draft_n_accepted=accepted)
    return {"prompt_id": pid, "run": run, "client_ms": ms, "timings": timings, "content": content, "stop_type": "limit"}


def _result(label: str, requests: list[dict[str, Any]], complete: bool = True) -> dict[str, Any]:
    return {"schema_version": 1, "kind": "paircheck-bench", "label": label, "complete": complete, "error": None,
            "settings": {"n_predict": 32, "seed": 42, "temperature": 0.0, "cache_prompt": False,
                         "chat_template": False},
            "machine": {"cpu_count": 2}, "server": {"model_path": "t.gguf"}, "requests": requests}


BASE = _result("baseline", [
    _req("a", 0, 100.0, "hello world", 32, 80.0), _req("a", 1, 120.0, "hello world", 32, 80.0),
    _req("a", 2, 110.0, "hello world", 32, 80.0),
    _req("b", 0, 200.0, "xyz", 32, 160.0), _req("b", 1, 210.0, "xyz", 32, 160.0),
    _req("b", 2, 190.0, "xyz", 32, 160.0),
])
DRAFT = _result("draft", [
    _req("a", 0, 50.0, "hello world", 32, 40.0, 30, 24), _req("a", 1, 60.0, "hello world", 32, 40.0, 30, 24),
    _req("a", 2, 55.0, "hello world", 32, 40.0, 30, 24),
    _req("b", 0, 100.0, "xyz", 32, 80.0, 40, 16), _req("b", 1, 105.0, "xyz", 32, 80.0, 40, 16),
    _req("b", 2, 95.0, "xyz", 32, 80.0, 40, 16),
])


def test_equal_work_numbers_by_hand() -> None:
    comp = compare(BASE, DRAFT)
    a, b = comp.prompts
    assert (a.baseline_ms.median, a.baseline_ms.min, a.baseline_ms.max) == (110.0, 100.0, 120.0)
    assert a.draft_ms.median == 55.0 and a.speedup == pytest.approx(2.0)
    assert a.baseline_tokens_per_second.median == pytest.approx(400.0)  # 32 tokens / 80 ms
    assert a.acceptance_rate == pytest.approx(72 / 90)
    # 32 tokens with 24 accepted: 8 target passes, 3 accepted tokens per pass.
    assert a.accepted_per_pass == pytest.approx(3.0)
    assert b.acceptance_rate == pytest.approx(0.4) and b.accepted_per_pass == pytest.approx(16 / 16)
    # Overall: per-run totals 300/330/300 vs 150/165/150: medians 300 / 150.
    assert comp.speedup == pytest.approx(2.0) and comp.outputs_equal
    assert comp.acceptance_rate == pytest.approx((72 + 48) / (90 + 120))
    assert comp.baseline_run_ms.median == 300.0 and comp.draft_run_ms.median == 150.0
    assert comp.warnings == []
    data = to_json(comp)
    assert {"speedup", "acceptance_rate", "outputs_equal", "prompts", "schema_version"} <= set(data)


def test_different_output_is_located_and_not_a_speedup() -> None:
    changed = _result("draft", [dict(r, content="hello World") if r["prompt_id"] == "a" else r
                                for r in DRAFT["requests"]])
    comp = compare(BASE, changed)
    a, b = comp.prompts
    assert not a.outputs_equal and a.speedup is None and a.time_ratio == pytest.approx(2.0)
    assert a.difference is not None and a.difference.position == 6
    assert b.outputs_equal and b.speedup == pytest.approx(2.0)
    assert comp.speedup is None and comp.time_ratio == pytest.approx(2.0) and not comp.outputs_equal
    text = render_table(comp)
    assert "outputs differ at char 6" in text and "not a speedup on equal work" in text


def test_first_difference() -> None:
    assert first_difference("abc", "abc") is None
    assert first_difference("abc", "abd") == 2
    assert first_difference("abc", "abcdef") == 3  # one is a prefix of the other: where it ends


def test_warnings_for_no_drafting_incomplete_and_mismatched_settings() -> None:
    partial = _result("draft", BASE["requests"][:4], complete=False)
    partial["settings"] = dict(partial["settings"], seed=7)
    comp = compare(BASE, partial)
    text = " | ".join(comp.warnings)
    assert "no draft_n" in text and "incomplete" in text and "different seed" in text
    # Prompt b has one draft run only, a has three: medians over what exists, run 2 left out overall.
    assert comp.prompts[1].draft_ms.n == 1
    assert comp.draft_run_ms.n == 1


def test_prompt_file_errors(tmp_path: Any) -> None:
    bad = tmp_path / "p.jsonl"
    for text, needle in [
        ('{"prompt": "x"}\nnot json\n', ":2"),
        ('{"id": "a", "prompt": "x"}\n{"id": "a", "prompt": "y"}\n', "duplicate id"),
        ('{"prompt": "x", "n_predict": 0}\n', "n_predict"),
        ("\n\n", "no prompts"),
    ]:
        bad.write_text(text)
        with pytest.raises(InputError, match=needle):
            load_prompts(str(bad))


def test_an_empty_run_is_nothing_to_compare_exit_2(tmp_path: Any) -> None:
    # Issue 50: an empty draft run gave exit 0, "nothing comparable" and "0 baseline runs"
    # when the baseline had 5.
    import json
    import subprocess
    import sys
    from pathlib import Path

    bench = Path(__file__).resolve().parents[2] / "fixtures" / "examples" / "bench"
    empty = json.loads((bench / "draft.json").read_text())
    empty["requests"] = []
    path = tmp_path / "empty.json"
    path.write_text(json.dumps(empty))

    def run(*args: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "paircheck", "bench", "compare", *map(str, args)],
                              capture_output=True, text=True, timeout=60, check=False)

    done = run(bench / "baseline.json", path)
    assert done.returncode == 2 and done.stdout == "", done.stdout
    assert done.stderr.count("\n") == 1 and done.stderr.endswith(
        "nothing to compare: the draft run measured no request (the baseline has 5 runs)\n"), done.stderr
    # Runs over no prompt in common are no runs at all, not runs of 0 ms.
    other = json.loads((bench / "draft.json").read_text())
    for req in other["requests"]:
        req["prompt_id"] = "elsewhere"
    path.write_text(json.dumps(other))
    done = run(bench / "baseline.json", path)
    assert done.returncode == 2 and "no prompt was measured on both sides" in done.stderr, done.stderr
    base = json.loads((bench / "baseline.json").read_text())
    comp = compare(base, other)
    assert comp.baseline_run_ms is None and comp.baseline.runs == 0
