"""Where the shipped registry's files are, without loading them.

Its own module so that what only needs the folder (the scan cache's key, the GPU table's and
the speed points' paths) does not import the registry's loader, entries and schema (about a
sixth of a warm scan's start-up).
"""

from __future__ import annotations

from pathlib import Path


def default_registry_dir() -> Path:
    """Where the shipped registry lives.

    A source checkout has ``registry/`` beside the package; an installed wheel is
    expected to carry the same files as package data (``paircheck/_registry_data`` or
    ``paircheck/registry``), which packaging wires up. Kept in one function so that is
    the only place to change.
    """
    checkout = Path(__file__).resolve().parents[2] / "registry"
    if checkout.is_dir():
        return checkout
    from importlib import resources  # only for an installed wheel: ~10 ms to import

    for sub in ("_registry_data", "registry"):
        try:
            candidate = resources.files("paircheck").joinpath(sub)
        except (ModuleNotFoundError, TypeError):  # pragma: no cover - odd loaders
            break
        if candidate.is_dir():
            return Path(str(candidate))
    return checkout  # load_registry reports it missing with this path
