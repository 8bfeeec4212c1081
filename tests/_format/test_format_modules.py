"""The formats folder: one renderer module per kind of result, with no import circle
between them (imports inside functions count: a circle hidden in a function is still one).

text.py once rendered every kind in 760 lines, and text.py, scan_render.py and
json_format.py imported each other; the shared pieces now sit lower (text_base for
wrapping and cells, json_side for a model's JSON description).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from test_architecture import PACKAGE, imports_of, module_name  # noqa: E402

FORMAT = PACKAGE / "_format"


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in sorted(FORMAT.glob("*.py")):
        me = module_name(path)
        graph[me] = {t for _, t in imports_of(path) if t.startswith("paircheck._format.") and t != me}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_no_import_circle_between_format_modules() -> None:
    cycle = _cycle(_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_the_text_format_is_split_by_result_kind() -> None:
    # Every renderer module stays readable; text.py only picks one.
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in FORMAT.glob("*.py")}
    assert sizes["text.py"] < 100, sizes
    assert max(sizes.values()) < 400, sizes
    for kind in ("text_report", "text_pairs", "text_bench", "text_lint", "text_fit", "scan_render"):
        assert f"{kind}.py" in sizes
