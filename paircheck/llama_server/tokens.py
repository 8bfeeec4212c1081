"""What a running llama-server makes of a text: its tokens (``/tokenize``) and a chat rendered
through the model's own template (``/apply-template``).

Both ask the server that will be measured, so a context depth is counted in the target's own
tokens, exactly as ``/completion`` will tokenize the prompt (special tokens added and parsed),
and a chat log is the text the model was trained to answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from paircheck.errors import InputError
from paircheck.llama_server.http import request_json


def tokenize(url: str, text: str, timeout: float) -> list[int]:
    """The token ids of ``text`` as ``/completion`` tokenizes a prompt (add_special and
    parse_special on, as llama-server's tokenize_input_prompts does)."""
    where = url.rstrip("/") + "/tokenize"
    answer = request_json(url, "/tokenize", {"content": text, "add_special": True, "parse_special": True}, timeout)
    tokens = answer.get("tokens") if isinstance(answer, dict) else None
    if not isinstance(tokens, list) or not all(isinstance(t, int) and not isinstance(t, bool) for t in tokens):
        raise InputError(where, 'answer has no "tokens" list of ids (not a llama-server?)')
    return tokens


def token_counter(url: str, timeout: float) -> Callable[[str], int]:
    """A ``count_tokens`` for ``workload.fill_to_depth``: the server's count of a text."""
    return lambda text: len(tokenize(url, text, timeout))


def apply_template(url: str, messages: Sequence[dict[str, Any]], timeout: float) -> str:
    """The chat ``messages`` rendered by the server's chat template, ready for the assistant's
    reply (llama-server adds the generation prompt)."""
    answer = request_json(url, "/apply-template", {"messages": list(messages)}, timeout)
    if not isinstance(answer, dict) or not isinstance(answer.get("prompt"), str):
        raise InputError(url.rstrip("/") + "/apply-template", 'answer has no "prompt" string')
    return answer["prompt"]
