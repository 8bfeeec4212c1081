"""YAML with line numbers: PyYAML's composed node graph (every node keeps its start mark), never
a regex. Anchors and aliases stay shared nodes (nothing is expanded, so a hostile file of
aliases costs no memory), and ``<<`` merge keys are followed when a key is looked up.
"""

from __future__ import annotations

from collections.abc import Iterator

from paircheck.errors import InputError
from paircheck.preflight.files.words import LineIndex, Pos, SpanPlaces


def load_documents(text: str, name: str) -> list[object]:
    """Every document's root node (yaml.Node) of a YAML stream; broken YAML is one clear line."""
    import yaml

    try:
        return [doc for doc in yaml.compose_all(text, Loader=yaml.SafeLoader) if doc is not None]
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        raise InputError(name, f"not valid YAML{where}: {exc.problem or exc.context}") from None
    except (yaml.YAMLError, RecursionError) as exc:
        raise InputError(name, f"not valid YAML: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") \
            from None


def is_mapping(node: object) -> bool:
    import yaml

    return isinstance(node, yaml.MappingNode)


def is_sequence(node: object) -> bool:
    import yaml

    return isinstance(node, yaml.SequenceNode)


def scalar(node: object) -> str | None:
    """A scalar's text (None for a mapping, a sequence or null)."""
    import yaml

    if isinstance(node, yaml.ScalarNode) and node.tag != "tag:yaml.org,2002:null":
        return str(node.value)
    return None


def pairs(node: object, depth: int = 0) -> Iterator[tuple[str, object]]:
    """A mapping's (key, value node), merge keys (``<<: *base``) first so that own keys win."""
    if not is_mapping(node) or depth > 20:
        return
    own: list[tuple[str, object]] = []
    for key_node, value in node.value:  # type: ignore[attr-defined]
        key = scalar(key_node)
        if key == "<<":
            merged = value.value if is_sequence(value) else [value]
            for base in merged:
                yield from pairs(base, depth + 1)
        elif key is not None:
            own.append((key, value))
    yield from own


def get(node: object, key: str) -> object | None:
    found = None
    for name, value in pairs(node):
        if name == key:
            found = value
    return found


def key_node(node: object, key: str) -> object | None:
    """The node of the key itself (where ``key:`` is written)."""
    if not is_mapping(node):
        return None
    for k, _ in node.value:  # type: ignore[attr-defined]
        if scalar(k) == key:
            return k
    return None


def items(node: object) -> list[object]:
    return list(node.value) if is_sequence(node) else []  # type: ignore[attr-defined]


def pos(node: object) -> Pos:
    mark = node.start_mark  # type: ignore[attr-defined]
    return Pos(mark.line + 1, mark.column + 1)


def places(source: str, index: LineIndex, node: object) -> SpanPlaces:
    """Where the words of a scalar's value were written (see words.SpanPlaces): exactly, for a
    scalar written as its value (plain, on one line)."""
    start, end = node.start_mark.index, node.end_mark.index  # type: ignore[attr-defined]
    return SpanPlaces(source, index, start, end, exact=source[start:end] == scalar(node))
