"""At 80 columns the tables stay compact and lose nothing (issue 34, item 13): the pairs table
cuts a long name in the middle ('phind-…-34b-v2', never 'phind-codellam' / 'a-34b-v2'), at a
cut that still tells it apart from every other name in its column; and `--engine all` points
to each engine's own error text, printed whole below the table, instead of a dozen-line cell."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
E = REPO / "fixtures" / "examples"
SPM, PHI3 = (E / f"ggml-vocab-{n}.gguf" for n in ("llama-spm", "phi-3"))


def _run(*args: str) -> str:
    env = {**os.environ, "COLUMNS": "80"}
    done = subprocess.run([sys.executable, "-m", "paircheck", *args], capture_output=True, text=True, env=env,
                          timeout=120, check=False)
    assert done.returncode in (0, 1, 4), done.stderr
    return done.stdout


def _columns(dashes: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(r"-+", dashes)]


def _shown(names: list[str], cut: str) -> str | None:
    """The one name among ``names`` that the shown cell can be read as, if exactly one."""
    if "…" not in cut:
        return cut if cut in names else None
    start, end = cut.split("…")
    matches = [n for n in names if n.startswith(start) and n.endswith(end)]
    return matches[0] if len(matches) == 1 else None


def test_distinct_cut_keeps_what_tells_two_names_apart() -> None:
    from paircheck._format.text_base import distinct_cut

    names = ["Qwen2.5-0.5B-Instruct", "Qwen2.5-1.5B-Instruct", "Qwen2.5-Coder-0.5B-Instruct"]
    for name in names:
        for width in range(8, 22):
            cut = distinct_cut(name, names, width)
            if cut is None:  # no cut at this width tells it apart: the table wraps it
                continue
            assert len(cut) <= width and _shown(names, cut) == name, (name, width, cut)
    # The plain middle cut would show 'Qwen2…nstruct' for both sizes.
    assert distinct_cut("Qwen2.5-0.5B-Instruct", names, 14) != distinct_cut("Qwen2.5-1.5B-Instruct", names, 14)
    assert distinct_cut("phind-codellama-34b-v2", ["phind-codellama-34b-v2"], 16) == "phind-…ma-34b-v2"
    assert distinct_cut("short", names, 14) == "short"


def test_pairs_table_cuts_long_names_and_every_row_names_its_pair() -> None:
    out = _run("pairs").splitlines()
    pairs = json.loads(_run("pairs", "--format", "json"))["pairs"]
    targets = list(dict.fromkeys(p["target"]["name"] for p in pairs))
    drafts = list(dict.fromkeys(p["draft"]["name"] for p in pairs))
    head = out.index(next(line for line in out if line.startswith("------")))
    spans = _columns(out[head])
    body = out[head + 1:out.index("", head)]

    def cells(line: str) -> list[str]:
        return [line[a:b if i < len(spans) - 1 else None].strip() for i, (a, b) in enumerate(spans)]

    rows: list[list[list[str]]] = []  # per row, per column, its lines
    for line in body:
        c = cells(line)
        if c[2]:  # the method: one line, on every row's first line
            rows.append([[x] if x else [] for x in c])
        else:
            for i, x in enumerate(c):
                if x:
                    rows[-1][i].append(x)
    assert len(rows) == len(pairs)
    phind = next(r for r, p in zip(rows, pairs, strict=True) if p["target"]["name"] == "phind-codellama-34b-v2")
    assert len(phind[0]) == 1 and "…" in phind[0][0] and phind[0][0].endswith("-34b-v2"), phind
    from paircheck._format.text_base import distinct_cut

    cut, wrapped = 0, set()
    for row, pair in zip(rows, pairs, strict=True):
        for i, names, name in ((0, targets, pair["target"]["name"]), (1, drafts, pair["draft"]["name"])):
            shown = row[i]
            if len(shown) > 1:  # wrapped: only where no cut at this width tells it apart
                wrapped.add(name)
                assert "".join(shown) == name.replace(" ", ""), (shown, name)
                assert distinct_cut(name, names, spans[i][1] - spans[i][0]) is None, name
            else:
                cut += "…" in shown[0]
                assert _shown(names, shown[0]) == name, (shown, name)
    # Only the few names that differ deep inside wrap (8 of the 144 at this commit).
    assert cut > 20 and len(wrapped) <= 10, (cut, wrapped)
    assert all(len(line) <= 80 for line in out)
    assert "cut in the middle" in " ".join(out) and "--format json" in " ".join(out)


def test_engine_all_cells_are_short_and_each_engine_error_is_printed_whole_below() -> None:
    from paircheck.pipeline import check_all_engines, describe

    reports = check_all_engines(describe(str(SPM)), describe(str(PHI3)))
    says = {r.engine: r.engine_says for r in reports if r.first_failure is not None and r.engine_says}
    assert {"vllm", "sglang"} <= set(says)
    out = _run("--engine", "all", str(SPM), str(PHI3))
    lines = out.splitlines()
    head = lines.index(next(line for line in lines if line.startswith("------")))
    fails = _columns(lines[head])[3]
    body = lines[head + 1:lines.index("", head)]
    # Each engine's row is its first line and what follows with an empty engine cell.
    starts = [i for i, line in enumerate(body) if line[:1].strip()]
    heights = [b - a for a, b in zip(starts, [*starts[1:], len(body)], strict=True)]
    assert max(heights) <= 5, "\n".join(body)
    # The "how it fails" cell is at most two lines in every row, however long the engine's text.
    for a, h in zip(starts, heights, strict=True):
        assert sum(bool(line[fails[0]:].strip()) for line in body[a:a + h]) <= 2, "\n".join(body[a:a + h])
    flat = " ".join(out.split())
    for engine, text in says.items():
        assert f"{engine}: {' '.join(text.split())}" in flat, engine
