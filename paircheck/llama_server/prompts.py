"""The prompts a bench replays: three built in (code, prose, a structured list), or the user's.

Built-in prompts are fixed text so two runs (baseline and draft, or two machines) send
exactly the same bytes. They are sent raw (no chat template) unless asked otherwise.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from paircheck.errors import InputError

MAX_PROMPTS = 1000
MAX_PROMPT_FILE_BYTES = 16 << 20


@dataclass(frozen=True)
class Prompt:
    id: str
    text: str
    kind: str = "user"
    n_predict: int | None = None  # None: the bench's --n-predict


BUILTIN_PROMPTS: tuple[Prompt, ...] = (
    Prompt(
        "code",
        "# Python 3\n"
        "def merge_sorted(a: list[int], b: list[int]) -> list[int]:\n"
        '    """Merge two sorted lists into one sorted list in linear time."""\n',
        "code",
    ),
    Prompt(
        "prose",
        "The lighthouse keeper had not seen a ship in eleven days when the storm finally broke. "
        "On the morning of the twelfth day,",
        "prose",
    ),
    Prompt(
        "list",
        "A checklist for moving to a new apartment:\n1. Measure the doorways and the large furniture.\n2.",
        "structured",
    ),
)


def load_prompts(path: str) -> list[Prompt]:
    """Read JSON lines: ``{"id": ..., "prompt": ..., "n_predict": ...}`` (id and n_predict optional)."""
    file = Path(path)
    try:
        if file.stat().st_size > MAX_PROMPT_FILE_BYTES:
            raise InputError(path, f"prompt file larger than {MAX_PROMPT_FILE_BYTES >> 20} MiB")
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except UnicodeDecodeError:
        raise InputError(path, "not UTF-8 text (expected JSON lines)") from None
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
    prompts: list[Prompt] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{number}", f"not JSON: {exc.msg}") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("prompt"), str):
            raise InputError(f"{path}:{number}", 'expected an object with a "prompt" string')
        pid = obj.get("id", f"p{len(prompts) + 1}")
        n_predict = obj.get("n_predict")
        if not isinstance(pid, str) or not pid:
            raise InputError(f"{path}:{number}", '"id" must be a non-empty string')
        if pid in seen:
            raise InputError(f"{path}:{number}", f"duplicate id {pid!r}")
        if n_predict is not None and (not isinstance(n_predict, int) or isinstance(n_predict, bool) or n_predict < 1):
            raise InputError(f"{path}:{number}", '"n_predict" must be a positive integer')
        seen.add(pid)
        prompts.append(Prompt(pid, obj["prompt"], "user", n_predict))
        if len(prompts) > MAX_PROMPTS:
            raise InputError(path, f"more than {MAX_PROMPTS} prompts")
    if not prompts:
        raise InputError(path, "no prompts in the file")
    return prompts
