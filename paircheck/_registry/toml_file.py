"""Reading one of the registry's TOML data files: one clear error for a file that cannot be
read or is not TOML, whichever file it is (the GPU table, the speed points)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from paircheck._registry.schema import RegistryError


def read_toml(path: Path, what: str) -> dict[str, Any]:
    """The parsed file; RegistryError (exit 2) naming ``path`` when it cannot be read."""
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise RegistryError(str(path), f"cannot read {what}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RegistryError(str(path), f"invalid TOML: {exc}") from None
