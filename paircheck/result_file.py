"""The JSON result files paircheck writes and reads back (``bench``'s and ``probe``'s).

Written whole or not at all (``atomic``), so Ctrl-C or a dying server never leaves half a
file; read with a size bound and one clear line for every way a file is not the result
asked for (missing, a folder, not UTF-8 or JSON, another kind, another schema version).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from paircheck.atomic import write_text_atomic
from paircheck.errors import InputError

MAX_RESULT_BYTES = 256 << 20


def now() -> str:
    """A result's time stamps: UTC, to the second."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@contextmanager
def recording(result: dict[str, Any], save: Callable[[], None]) -> Iterator[None]:
    """Around a measurement: the result says how it ended (``complete``, or the ``error`` that
    stopped it, Ctrl-C included), when (``finished_at``), and is saved however it ended."""
    try:
        yield
        result["complete"] = True
    except InputError as exc:
        result["error"] = str(exc)
        raise
    except KeyboardInterrupt:
        result["error"] = "interrupted"
        raise
    finally:
        result["finished_at"] = now()
        save()


def write_json(path: Path, data: dict[str, Any]) -> None:
    write_text_atomic(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")


def read_json(path: str, kind: str, schema_version: int, what: str) -> dict[str, Any]:
    """The result file at ``path``: a JSON object whose ``kind`` and ``schema_version`` are
    the ones given; ``what`` names it in errors ("bench result", "probe result")."""
    file = Path(path)
    try:
        if file.stat().st_size > MAX_RESULT_BYTES:
            raise InputError(path, f"larger than {MAX_RESULT_BYTES >> 20} MiB: not a {what}")
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except IsADirectoryError:
        raise InputError(path, f"is a folder, not a {what}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(path, f"not a JSON {what}: {exc}") from None
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
    if not isinstance(data, dict) or data.get("kind") != kind:
        raise InputError(path, f'not a paircheck {what} (no "kind": "{kind}")')
    if data.get("schema_version") != schema_version:
        raise InputError(path, f"schema_version {data.get('schema_version')!r} is not {schema_version}")
    return data
