"""The package's layers, checked by walking every import (including those inside functions).

Data flows one way: sources -> model description -> rules -> report -> formats -> CLI.
The table below is the README's "Architecture" section as data: a module may import
only from its own layer and the layers listed for it. Lazy imports inside functions
count too, because a cycle hidden in a function is still a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "paircheck"

# layer -> layers it may import (besides itself). Order is bottom to top.
ALLOWED: dict[str, set[str]] = {
    "base": set(),
    "derive": {"base"},
    "source": {"base", "derive"},
    "engine": {"base", "derive"},
    "registry": {"base", "derive"},
    # starting and talking to llama-server: knows nothing of models, rules or output
    "server": {"base"},
    # the GPU table and this machine's GPU tools: knows nothing of models or speed
    "hardware": {"base", "registry"},
    "preflight": {"base", "derive", "registry", "engine", "pipeline"},
    "capability": {"base", "derive", "engine", "registry", "source", "server", "pipeline", "hardware"},
    "catalog": {"base", "derive", "engine", "registry", "preflight", "capability"},
    "format": {"base", "derive", "registry", "preflight", "capability", "catalog", "hardware"},
    "pipeline": {"base", "derive", "source", "engine", "registry"},
    # the public face: one function per command, over everything but the command line
    "face": {"base", "derive", "source", "engine", "registry", "server", "hardware", "preflight", "capability",
             "catalog", "pipeline"},
    # the command line parses options, calls the face and picks a format: nothing else (issue 49)
    "cli": {"base", "format", "face"},
}

# The package's own module re-exports the face on first use (``paircheck.check``): the one
# import that runs up, from a function (``__getattr__``); no module of the package imports the
# package's own module (its version is paircheck.version), so this makes no circle.
FACE_REEXPORT = ("paircheck", "paircheck.api")


# Modules of a folder that import nothing of paircheck and only name things, so that any
# layer may use them: split-model file names and quantization tags are parsed in _source/
# alone, and the registry's name matching reads them with the same code.
PURE_NAMING = frozenset({"paircheck._source.split_name", "paircheck._source.quant_name"})


def layer_of(module: str) -> str:
    """The layer of a dotted module name inside the package."""
    if module in PURE_NAMING:
        return "base"
    if module == "paircheck.sizes":  # memory sizes as written (--vram 24GiB) and shown; imports only errors
        return "base"
    parts = module.split(".")[1:]  # drop "paircheck"
    head = parts[0] if parts else "__init__"
    if head in ("__init__", "version", "constants", "model", "errors", "llamacpp_tables", "token_display", "findings",
                "atomic", "cache_home", "result_file", "outcome", "installed", "workload"):
        return "base"
    if head in ("vocab", "fingerprint", "weights"):
        return "derive"
    if head == "_source":
        return "source"
    if head == "_engine":
        return "engine"
    if head == "_registry":
        return "registry"
    if head == "llama_server":
        return "server"
    if head == "hardware":
        return "hardware"
    if head == "preflight":
        return "preflight"
    if head in ("bench", "fit", "scan", "probe", "speed"):
        return "capability"
    if head == "catalog":
        return "catalog"
    if head == "_format":
        return "format"
    if head == "pipeline":
        return "pipeline"
    if head == "api":
        return "face"
    if head in ("cli", "__main__") or head.startswith("cli_"):
        return "cli"
    raise AssertionError(f"{module}: no layer assigned; add it to tests/test_architecture.py and the README")


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1] if len(parts) > 1 else parts
    return ".".join(parts)


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, module) for every import of a paircheck module, at any depth."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "paircheck"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "paircheck":
                continue
            # `from paircheck import x` may name a submodule: count the submodule.
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                sub = PACKAGE.parent.joinpath(*candidate.split("."))
                found.append((node.lineno, candidate if sub.with_suffix(".py").exists() or sub.is_dir() else target))
    return found


def all_modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "_registry_data" not in p.parts)


def test_every_module_has_a_layer() -> None:
    for path in all_modules():
        layer_of(module_name(path))


@pytest.mark.parametrize("path", all_modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_follow_the_layers(path: Path) -> None:
    me = module_name(path)
    mine = layer_of(me)
    bad = []
    for line, target in imports_of(path):
        theirs = layer_of(target)
        if (me, target) == FACE_REEXPORT:
            continue
        if theirs != mine and theirs not in ALLOWED[mine]:
            bad.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {mine} imports {target} ({theirs})")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("path", all_modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_only_the_cli_imports_click(path: Path) -> None:
    if layer_of(module_name(path)) == "cli":
        return
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        assert not any(n.split(".")[0] == "click" for n in names), f"{path}:{node.lineno} imports click"


def folder_of(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else parts[0]


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_no_cycles_between_folders() -> None:
    """Top-level modules and sub-packages form a DAG (imports inside functions included)."""
    graph: dict[str, set[str]] = {}
    for path in all_modules():
        me = folder_of(module_name(path))
        for _, target in imports_of(path):
            other = folder_of(target)
            if other != me and other != "paircheck":
                graph.setdefault(me, set()).add(other)
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt):] + [nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)


def test_pure_naming_modules_import_nothing_of_paircheck() -> None:
    for module in PURE_NAMING:
        path = PACKAGE.parent.joinpath(*module.split(".")).with_suffix(".py")
        assert imports_of(path) == [], f"{module} is in PURE_NAMING but imports paircheck modules"


def _module_of(target: str, known: set[str]) -> str:
    """The module an import names (``paircheck.x.NAME`` -> ``paircheck.x``)."""
    while target not in known and "." in target:
        target = target.rpartition(".")[0]
    return target


# Circles already known and being removed by another change; each names where. Delete an
# entry when that change lands: the test then guards that the circle stays gone.
KNOWN_CIRCLES: dict[frozenset[str], str] = {}


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_no_cycles_between_modules() -> None:
    """No two modules import each other, directly or through others (imports inside
    functions and under TYPE_CHECKING included: a circle a function hides is still one)."""
    paths = all_modules()
    known = {module_name(p) for p in paths}
    graph: dict[str, set[str]] = {}
    for path in paths:
        me = module_name(path)
        for _, target in imports_of(path):
            other = _module_of(target, known)
            if other != me:
                graph.setdefault(me, set()).add(other)
    # Tarjan's strongly connected components: each one with two or more modules is a circle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    new = [c for c in circles if frozenset(c) not in KNOWN_CIRCLES]
    assert not new, "import circles (move the piece they share to a module below both):\n" + "\n".join(
        " <-> ".join(c) for c in new
    )


# Outside _source/, ``source_kind`` is a label to show (a JSON field, a message), never a
# question to ask: where it may appear.
_LABEL_PARENTS = (ast.Dict, ast.keyword, ast.FormattedValue)


@pytest.mark.parametrize("path", all_modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_only_the_sources_ask_which_source_read_a_model(path: Path) -> None:
    """Deciding how to read more of a model, how to name it in a command or how to get it
    again by testing ``source_kind`` spreads the source axis into every capability, and the
    next source would have to be taught to each of them. The source says what it can give
    instead: ``desc.origin`` (command_name, server_file, remote, download, form) and
    ``paircheck._source.tensors.model_tensors(desc)`` for every tensor of every shard."""
    if layer_of(module_name(path)) == "source":
        return
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "source_kind" and isinstance(node.ctx, ast.Load):
            parent = parents.get(node)
            if isinstance(parent, ast.Dict) and node not in parent.values:
                parent = None  # as a key it would be a lookup
            if not isinstance(parent, _LABEL_PARENTS):
                bad.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert not bad, (
        "reads source_kind to decide something outside _source/ (there it is only a label to show); "
        "ask the source instead: desc.origin or _source.tensors.model_tensors(desc):\n" + "\n".join(bad)
    )


@pytest.mark.parametrize("path", all_modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_capabilities_ask_for_the_config_not_for_hugging_face_facts(path: Path) -> None:
    """``desc.hf`` is what a Hugging Face folder's source read for the engines' rules (their
    vocabulary sizes, model types). A capability that tests ``desc.hf is None`` to decide how
    to size a model asks which kind of source read it; it asks ``desc.config`` (the config.json,
    when there is one) and ``desc.origin`` instead (issue 49: fit, speed and weights did)."""
    if layer_of(module_name(path)) in ("source", "engine") or module_name(path) == "paircheck.model":
        return
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bad = [f"{path.relative_to(PACKAGE.parent)}:{node.lineno}" for node in ast.walk(tree)
           if isinstance(node, ast.Attribute) and node.attr == "hf" and isinstance(node.ctx, ast.Load)]
    assert not bad, "reads a model's Hugging Face facts outside the sources and engines; ask desc.config or " \
                    "desc.origin:\n" + "\n".join(bad)


# The speed model has one home (paircheck/speed/); the capabilities that print speeds use it and
# never each other's copies of it: the probe reads nothing of bench/, and speed/ nothing of the
# capabilities that use it. speed/ reads a model's KV cache width through fit's hyperparameters
# (the one reading of them), so fit/ in turn must know nothing of speeds.
SPEED_USERS_APART = {"paircheck.probe": {"paircheck.bench"},
                     "paircheck.speed": {"paircheck.bench", "paircheck.probe", "paircheck.scan"},
                     "paircheck.fit": {"paircheck.speed"}}


@pytest.mark.parametrize("path", all_modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_the_speed_model_is_used_not_copied(path: Path) -> None:
    folder = folder_of(module_name(path))
    banned = SPEED_USERS_APART.get(folder, set())
    bad = [f"{path.relative_to(PACKAGE.parent)}:{line}: imports {target}" for line, target in imports_of(path)
           if folder_of(target) in banned]
    assert not bad, "\n".join(bad)
