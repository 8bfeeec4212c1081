"""``paircheck bench run TARGET DRAFT``: check, measure the target alone, measure the pair, compare.

Both servers run the same binary with the same context size, one slot and the same
passed-through flags; only speculation differs (``--spec-type none`` against
``--model-draft DRAFT --spec-type draft-simple``). They run one after the other, never
together, so they do not share the machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from paircheck.bench.compare import Comparison, compare
from paircheck.bench.measure import BenchSettings, run_bench
from paircheck.findings import Report
from paircheck.llama_server.process import llama_server, server_args
from paircheck.llama_server.prompts import Prompt

DEFAULT_CTX = 4096


@dataclass
class PairRun:
    check: Report | None
    comparison: Comparison | None  # None when the check refused the pair
    baseline_file: Path | None = None
    draft_file: Path | None = None
    baseline: dict[str, Any] | None = None
    draft: dict[str, Any] | None = None


def run_pair(
    target: str,
    draft: str,
    binary: str,
    out_dir: Path,
    settings: BenchSettings,
    prompts: list[Prompt] | None = None,
    ctx_size: int = DEFAULT_CTX,
    extra: Sequence[str] = (),
    progress: bool = False,
    check: bool = True,
    ready_timeout: float = 600.0,
) -> PairRun:
    """Check the pair (llama.cpp draft-simple); if compatible, bench baseline then draft. A pair
    refused, or predicted to abort the server at run time, is not run (``comparison`` None)."""
    report = None
    if check:
        from paircheck.api import check_pair

        report = check_pair(target, draft, registry=False, fingerprint=False)
        if not report.compatible or report.run_time_aborts:
            return PairRun(report, None)
    out_dir.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict[str, Any]] = {}
    files: dict[str, Path] = {}
    for label, draft_model in (("baseline", None), ("draft", draft)):
        files[label] = out_dir / f"{label}.json"
        args = server_args(target, draft_model, ctx_size, extra)
        with llama_server(binary, args, ready_timeout, log_dir=out_dir) as server:
            results[label] = run_bench(replace(settings, url=server.url), label, files[label], prompts, progress,
                                       {"server_command": server.command})
    comparison = compare(results["baseline"], results["draft"])
    return PairRun(report, comparison, files["baseline"], files["draft"], results["baseline"], results["draft"])
