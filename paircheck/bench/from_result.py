"""``paircheck estimate --from bench.json``: the acceptance a bench run measured, and which
models it measured, so that an estimate of another pair says whose number it borrows.

Here rather than in speed.estimate: the speed model knows nothing of result files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from paircheck.bench.compare import draft_counts
from paircheck.bench.measure import load_bench_result
from paircheck.errors import InputError
from paircheck.findings import Finding, Rule
from paircheck.model import ModelDescription

OTHER_MODELS = Rule(
    "EW001", "bench_other_models",
    "The bench result borrowed for the acceptance measured other models",
    "`estimate --from bench.json` takes the acceptance a `paircheck bench run` measured. "
    "That number belongs to the pair llama-server ran (its -m and -md files, from the "
    "result's server command): for another pair it says nothing about how often this "
    "draft guesses this target's tokens, and a modelled speedup from it is another "
    "pair's. paircheck compares the file names and warns when either differs.",
    "Measure this pair: `paircheck probe TARGET DRAFT` (acceptance for every draft length) "
    "or `paircheck bench run TARGET DRAFT`, then --from that result.",
    kind="warning",
)
RULES = (OTHER_MODELS,)

_TARGET_FLAGS = ("-m", "--model")
_DRAFT_FLAGS = ("-md", "--model-draft")


@dataclass(frozen=True)
class BenchAcceptance:
    """What a bench result measured: its acceptance, its draft length and its two files."""

    acceptance: float
    draft_max: int | None  # --spec-draft-n-max on its command line, when set
    target_file: str | None  # -m as llama-server was started (None: not recorded)
    draft_file: str | None  # -md


def _flag_value(command: list[Any], flags: tuple[str, ...]) -> str | None:
    for i, word in enumerate(command[:-1]):
        if word in flags:
            return str(command[i + 1])
    return None


def acceptance_from(path: str) -> BenchAcceptance:
    """Acceptance rate of a bench result (draft_n_accepted / draft_n), its --spec-draft-n-max
    if set, and the models llama-server was started with."""
    result = load_bench_result(path)
    drafted, accepted, _, seen = draft_counts(result["requests"])
    if not seen or not drafted:
        raise InputError(path, "has no draft_n: not a run with speculative decoding")
    command = [str(w) for w in (result.get("server_command") or [])]
    k = _flag_value(command, ("--spec-draft-n-max",))
    server = result.get("server") if isinstance(result.get("server"), dict) else {}
    target = _flag_value(command, _TARGET_FLAGS) or (server or {}).get("model_path")
    return BenchAcceptance(accepted / drafted, int(k) if k is not None and k.isdigit() else None,
                           str(target) if target else None, _flag_value(command, _DRAFT_FLAGS))


def _file_name(desc: ModelDescription) -> str:
    where = desc.origin.server_file or desc.resolved_path or desc.location
    return os.path.basename(where.rstrip("/"))


def other_models_warning(measured: BenchAcceptance, path: str, target: ModelDescription,
                         draft: ModelDescription) -> Finding | None:
    """A warning when the bench result measured other files than ``target`` and ``draft``
    (by file name: the same model moved to another folder is the same model)."""
    pairs = [(side, os.path.basename(file), _file_name(desc))
             for side, file, desc in (("target", measured.target_file, target), ("draft", measured.draft_file, draft))
             if file]
    differ = [(side, was, now) for side, was, now in pairs if was != now]
    if not differ:
        return None
    said = "; ".join(f"its {side} was {was}, not {now}" for side, was, now in differ)
    return OTHER_MODELS.warn(
        f"{path} measured another pair ({said}): its acceptance is that pair's, and every figure here is "
        "made from it", measured={side: was for side, was, _ in pairs})
