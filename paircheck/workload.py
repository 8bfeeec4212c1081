"""The workload a speed answer is for: how deep the context is when a reply starts, how long
the reply runs, and how many requests are served at once.

``probe``, ``bench run`` and ``estimate`` take the same options (``--context-tokens``,
``--n-predict``, ``--parallel``), each a comma-separated list; the grid is every combination,
in the order given. Context filling is pure: it takes the target's own token counter (the
running server's ``/tokenize``), so the depth is the target's tokens, not characters.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources

from paircheck.errors import InputError

MAX_CONTEXT_TOKENS = 1 << 20
MAX_PARALLEL = 256
MAX_N_PREDICT = 1 << 16
MAX_GRID = 64  # points: each costs real measurement time
# Between the document and the request, as a user pasting a document before a question would.
DOCUMENT_HEAD = "Here is a document for context.\n\n"
DOCUMENT_TAIL = "\n\nWith that document in mind: "


@dataclass(frozen=True)
class Workload:
    """One grid point. ``context_tokens`` 0: the prompt alone, as the user wrote it."""

    context_tokens: int = 0
    n_predict: int = 128
    parallel: int = 1

    @property
    def label(self) -> str:
        depth = f"ctx {self.context_tokens}" if self.context_tokens else "short prompt"
        return f"{depth}, {self.n_predict} tokens, {self.parallel} at once"

    def to_dict(self) -> dict[str, int]:
        return {"context_tokens": self.context_tokens, "n_predict": self.n_predict, "parallel": self.parallel}


def _ints(option: str, text: str, low: int, high: int) -> list[int]:
    values: list[int] = []
    for part in text.split(","):
        part = part.strip().lower().replace("_", "")
        scale = 1024 if part.endswith("k") else 1
        digits = part[:-1] if part.endswith("k") else part
        if not digits.isdigit():
            raise InputError(option, f"expected whole numbers separated by commas, got {text!r}")
        value = int(digits) * scale
        if not low <= value <= high:
            raise InputError(option, f"{value} is outside {low}..{high}")
        if value not in values:
            values.append(value)
    return values


def parse_grid(context_tokens: str = "0", n_predict: str = "128", parallel: str = "1") -> list[Workload]:
    """Every combination of the three comma-separated lists (``8k`` is 8192), context depth
    outermost; refused (InputError) past MAX_GRID points."""
    grid = [Workload(c, n, p) for c, n, p in itertools.product(
        _ints("--context-tokens", context_tokens, 0, MAX_CONTEXT_TOKENS),
        _ints("--n-predict", n_predict, 1, MAX_N_PREDICT),
        _ints("--parallel", parallel, 1, MAX_PARALLEL))]
    if len(grid) > MAX_GRID:
        raise InputError("--context-tokens/--n-predict/--parallel", f"{len(grid)} grid points; at most {MAX_GRID}")
    return grid


MAX_DOCUMENT_BYTES = 16 << 20


def read_document(path: str) -> str:
    """A user's text to fill contexts with (UTF-8, at most MAX_DOCUMENT_BYTES); InputError else."""
    from pathlib import Path

    file = Path(path)
    try:
        if file.stat().st_size > MAX_DOCUMENT_BYTES:
            raise InputError(path, f"larger than {MAX_DOCUMENT_BYTES >> 20} MiB")
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except IsADirectoryError:
        raise InputError(path, "is a folder, not a text file") from None
    except UnicodeDecodeError:
        raise InputError(path, "not UTF-8 text") from None
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
    if not text.strip():
        raise InputError(path, "the file is empty")
    return text


def builtin_document() -> str:
    """Fixed text to fill a context with when the user gives none: paircheck's own
    documentation as of the release (prose, tables, code and commands, about 150 KB, MIT),
    so that two runs and two machines fill the same depth with the same bytes."""
    return resources.files("paircheck.llama_server").joinpath("context.md").read_text(encoding="utf-8")


@dataclass(frozen=True)
class Filled:
    text: str
    tokens: int  # the target's tokens of ``text`` as count_tokens counts them
    repeated: bool  # the document was shorter than the depth and was repeated


def fill_to_depth(request: str, depth: int, count_tokens: Callable[[str], int],
                  document: str | None = None) -> Filled:
    """The request with a document before it, cut so that the whole text is ``depth`` tokens
    of the target (within one word), and how many tokens it is. A document shorter than
    the depth is repeated (a repeated context is easier to draft for: the caller says so).
    ``depth`` at or below the request's own length gives the request unchanged."""
    own = count_tokens(request)
    if depth <= own:
        return Filled(request, own, False)
    text = document if document is not None else builtin_document()
    if not text.strip():
        raise InputError("context", "the document to fill the context with is empty")

    def whole(cut: int) -> str:
        return DOCUMENT_HEAD + body[:cut] + DOCUMENT_TAIL + request

    # Characters per token from the document's start, so that only about as much text as the
    # depth needs is ever tokenized (a 1M-character document for a 512-token context would
    # otherwise be tokenized whole at every step of the search below).
    sample = text[:32768]
    per_token = len(sample) / max(1, count_tokens(sample))
    limit = int(depth * per_token * 1.3) + 256
    body = "\n\n".join([text] * max(1, -(-limit // len(text))))
    while count_tokens(whole(min(limit, len(body)))) < depth:  # the sample's rate was too low
        limit *= 2
        while len(body) < limit:
            body += "\n\n" + text
    # The longest word-boundary cut whose whole text is within the depth: bisect on the
    # boundaries, counting the whole text (a chat template's own tokens included).
    limit = min(limit, len(body))
    cuts = [0] + [i for i, ch in enumerate(body[:limit]) if ch in " \n"] + [limit]
    lo, hi = 0, len(cuts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count_tokens(whole(cuts[mid])) <= depth:
            lo = mid
        else:
            hi = mid - 1
    full = whole(cuts[lo])
    return Filled(full, count_tokens(full), cuts[lo] > len(text))


def describe_grid(grid: Sequence[Workload]) -> str:
    """One line: what the grid varies, for a heading."""
    parts = []
    for name, values in (("context", sorted({w.context_tokens for w in grid})),
                         ("reply", sorted({w.n_predict for w in grid})),
                         ("parallel", sorted({w.parallel for w in grid}))):
        parts.append(f"{name} {', '.join(map(str, values))}")
    return "; ".join(parts)
