"""The prompts llama-server is sent: bench's and probe's built-in sets, or the user's file.

Built-in prompts are fixed text so two runs (baseline and draft, two drafts, or two
machines) send exactly the same bytes. ``bench`` sends its own raw (no chat template)
unless asked; ``probe`` sends its set through the target's chat template unless ``--raw``,
so its texts are written as a user's requests, one per kind of work whose acceptance
differs (code is predictable, prose much less).
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
    # A chat log ({"messages": [...]} in a prompt file): sent through the target's chat template;
    # ``text`` is then its last user message, for display.
    messages: tuple[dict[str, str], ...] | None = None


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


PROBE_PROMPTS: tuple[Prompt, ...] = (
    Prompt(
        "code",
        "Write a Python function merge_sorted(a, b) that merges two sorted lists of integers into one "
        "sorted list in linear time, with a docstring and two doctest examples.",
        "code",
    ),
    Prompt(
        "chat",
        "I have a free Saturday in Lisbon and I like old neighbourhoods, views and good food. "
        "What would you suggest I do, from morning to evening?",
        "chat",
    ),
    Prompt(
        "maths",
        "A train leaves at 14:40 and travels 210 km at an average speed of 84 km/h. At what time does it "
        "arrive? Reason step by step, then give the answer.",
        "reasoning",
    ),
    Prompt(
        "prose",
        "Write the opening paragraph of a short story about a lighthouse keeper who has not seen a ship "
        "for eleven days when the storm finally breaks.",
        "prose",
    ),
    Prompt(
        "list",
        "Give a numbered checklist of ten things to do when moving to a new apartment, one short line each.",
        "structured",
    ),
)


def _messages(value: object, where: str) -> tuple[dict[str, str], ...]:
    """A chat log's messages: a non-empty list of ``{"role": str, "content": str}``."""
    if not isinstance(value, list) or not value:
        raise InputError(where, '"messages" must be a non-empty list of {"role", "content"} objects')
    out = []
    for i, msg in enumerate(value):
        if not (isinstance(msg, dict) and isinstance(msg.get("role"), str) and msg["role"]
                and isinstance(msg.get("content"), str)):
            raise InputError(where, f'message #{i + 1} is not {{"role": "...", "content": "..."}} with text content')
        out.append({"role": msg["role"], "content": msg["content"]})
    if not any(m["role"] == "user" for m in out):
        raise InputError(where, 'the chat log has no "user" message')
    return tuple(out)


def load_prompts(path: str, allow_messages: bool = False) -> list[Prompt]:
    """Read JSON lines: ``{"id": ..., "prompt": ..., "kind": ..., "n_predict": ...}`` (all but prompt optional).

    ``allow_messages``: also chat logs, ``{"id": ..., "messages": [{"role", "content"}, ...]}``, which
    the caller must send through the target's chat template (``Prompt.messages``); refused otherwise."""
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
        messages = None
        if isinstance(obj, dict) and "messages" in obj:
            if not allow_messages:
                raise InputError(f"{path}:{number}", 'chat logs ({"messages": [...]}) are not read here; '
                                 'give {"prompt": "..."} lines')
            if "prompt" in obj:
                raise InputError(f"{path}:{number}", 'give "prompt" or "messages", not both')
            messages = _messages(obj["messages"], f"{path}:{number}")
            obj = {**obj, "prompt": next(m["content"] for m in reversed(messages) if m["role"] == "user")}
        if not isinstance(obj, dict) or not isinstance(obj.get("prompt"), str):
            raise InputError(f"{path}:{number}", 'expected an object with a "prompt" string'
                             + (' or a "messages" list' if allow_messages else ""))
        pid = obj.get("id", f"p{len(prompts) + 1}")
        n_predict = obj.get("n_predict")
        if not isinstance(pid, str) or not pid:
            raise InputError(f"{path}:{number}", '"id" must be a non-empty string')
        if pid in seen:
            raise InputError(f"{path}:{number}", f"duplicate id {pid!r}")
        if n_predict is not None and (not isinstance(n_predict, int) or isinstance(n_predict, bool) or n_predict < 1):
            raise InputError(f"{path}:{number}", '"n_predict" must be a positive integer')
        kind = obj.get("kind", "user")
        if not isinstance(kind, str) or not kind:
            raise InputError(f"{path}:{number}", '"kind" must be a non-empty string')
        seen.add(pid)
        prompts.append(Prompt(pid, obj["prompt"], kind, n_predict, messages))
        if len(prompts) > MAX_PROMPTS:
            raise InputError(path, f"more than {MAX_PROMPTS} prompts")
    if not prompts:
        raise InputError(path, "no prompts in the file")
    return prompts
