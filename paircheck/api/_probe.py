"""``paircheck probe`` as a library function: every input read and every pair checked before
a server is started, then the measurement of ``paircheck.probe``; what was measured before an
error or Ctrl-C is kept in the result file (complete: false)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from paircheck.errors import InputError

if TYPE_CHECKING:
    from paircheck.probe.run import ProbeOutcome

# (what: "target" or a draft's path, prompts done, prompts in all), as the probe reports it
ProbeProgress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Probed:
    """A probe's outcome (the result file's content and each draft's summary) and its file."""

    outcome: ProbeOutcome
    path: Path


def p_mins(text: str) -> tuple[float, ...]:
    """``--p-min`` as written ("0,0.5,0.75"): the values to replay, 0 (the default) always among them."""
    try:
        values = tuple(float(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise InputError("--p-min", f"expected numbers separated by commas, got {text!r}") from None
    if 0.0 not in values:
        values = (0.0, *values)  # the pinned default is always reported
    return tuple(sorted(set(values)))


def result_path(output: str | None, kind: str = "probe") -> Path:
    """The result file: ``output``, else ./paircheck-KIND-TIME.json."""
    return Path(output) if output else Path(f"paircheck-{kind}-{datetime.now():%Y%m%d-%H%M%S}.json")


def probe_drafts(target: str, drafts: Sequence[str], *, n_predict: str = "128", context_tokens: str = "0",
          parallel: str = "1", context_file: str | None = None, p_min: str = "0,0.5,0.75,0.9",
          temperature: float = 0.0, seed: int = 42, raw: bool = False, ctx_size: int = 4096,
          timeout: float = 300.0, ready_timeout: float = 600.0, server_args: Sequence[str] = (),
          port: int | None = None, calibrate: bool = True, prompts_file: str | None = None,
          llama_server: str | None = None, target_url: str | None = None, draft_urls: Sequence[str] = (),
          output: str | None = None, progress: ProbeProgress | None = None) -> Probed:
    """``paircheck probe TARGET DRAFT...``: MEASURE on llama-server how many draft tokens TARGET
    accepts from each draft for every draft length and p-min, time each step here (unless
    ``calibrate`` is False), and PREDICT tokens/s per setting and workload (``n_predict``,
    ``context_tokens``, ``parallel``: comma-separated lists). Servers are started from
    ``llama_server`` (else the one on PATH) unless running ones are given (``target_url``,
    ``draft_urls`` in the order of ``drafts``)."""
    from paircheck.llama_server.process import find_llama_server
    from paircheck.probe.run import Endpoints, ProbeSettings, check_drafts, probe_drafts
    from paircheck.workload import parse_grid, read_document

    grid = parse_grid(context_tokens, n_predict, parallel)
    settings = ProbeSettings(
        n_predict=max(w.n_predict for w in grid), workloads=tuple(grid),
        context_document=read_document(context_file) if context_file else None,
        p_min=p_mins(p_min), temperature=temperature, seed=seed, raw=raw,
        ctx_size=ctx_size, timeout=timeout, ready_timeout=ready_timeout,
        server_args=tuple(server_args), port=port, calibrate=calibrate,
    )
    if len(draft_urls) > len(drafts):
        raise InputError("--draft-url", f"{len(draft_urls)} given for {len(drafts)} drafts")
    settings.validate()
    prompts = None
    if prompts_file is not None:
        from paircheck.llama_server.prompts import load_prompts

        prompts = load_prompts(prompts_file)
    # The inputs first (a file that cannot be read, a pair that is refused), then the server:
    # nothing is loaded or written before every pair passes the check.
    checked = check_drafts(target, list(drafts))
    needs_binary = target_url is None or len(draft_urls) < len(drafts)
    endpoints = Endpoints(
        binary=find_llama_server(llama_server) if needs_binary else None,
        target_url=target_url,
        draft_urls=dict(enumerate(draft_urls)),
    )
    path = result_path(output)
    before = path.stat().st_mtime_ns if path.exists() else None
    try:
        outcome = probe_drafts(target, list(drafts), settings, endpoints, path, prompts, progress, checked)
    except KeyboardInterrupt:
        raise InputError(str(path), "interrupted; what was measured is kept there (complete: false)") from None
    except InputError as exc:
        if path.exists() and path.stat().st_mtime_ns != before:
            raise InputError(exc.where, f"{exc.message} (what was measured is kept in {path})") from None
        raise
    return Probed(outcome, path)
