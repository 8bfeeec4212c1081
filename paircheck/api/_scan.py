"""``paircheck scan`` as a library function: the local scan or the Hub's, then (asked for) a
probe of the best drafts on llama-server and the ranking on a GPU; and the candidates mode
of the check (``paircheck T D1 D2 ...``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from paircheck.constants import LLAMACPP
from paircheck.errors import InputError
from paircheck.scan.result import DEFAULT_CALLS, DEFAULT_READS

if TYPE_CHECKING:
    from paircheck.api._probe import ProbeProgress
    from paircheck.scan.result import ScanResult

__all__ = ["DEFAULT_CALLS", "DEFAULT_READS", "DEFAULT_N_PREDICT", "compare_drafts", "scan_drafts"]

DEFAULT_N_PREDICT = 128


def scan_drafts(target: str, folders: Sequence[str] = (), *, default_folders: bool = True, engine: str = LLAMACPP,
                method: str | None = None, progress: Callable[[str], None] | None = None, use_cache: bool = True,
                jobs: int | None = None, hub: bool = False, hub_calls: int = DEFAULT_CALLS,
                hub_reads: int = DEFAULT_READS, probe: int = 0, llama_server: str | None = None,
                probe_output: str | None = None, n_predict: int = DEFAULT_N_PREDICT, server_args: Sequence[str] = (),
                probe_progress: ProbeProgress | None = None, gpu: str | None = None, bandwidth: float | None = None,
                vram: str | None = None, context: int | None = None, detect: bool = False) -> ScanResult:
    """``paircheck scan TARGET [FOLDER...]``: every model found in ``folders``, beside a local
    target and (``default_folders``) in the usual model stores, ranked as a draft for it.

    ``hub``: also the Hugging Face Hub's drafts, judged from their headers (at most
    ``hub_calls`` API calls and ``hub_reads`` candidates read). ``probe`` N: the acceptance of
    the N best usable GGUF drafts measured on llama-server (``server_args`` passed to it) and
    ranked by it. A device (``gpu``, ``bandwidth``, or with ``detect`` the GPU found here):
    tokens/s PREDICTED for each candidate at ``context`` tokens of context and replies of
    ``n_predict``. ``progress`` is called with each file as it is read."""
    from paircheck.api._device import pick_device
    from paircheck.scan import scan

    result: ScanResult
    if hub:
        from paircheck.scan.hub_scan import HubOptions, scan_hub

        options = HubOptions(calls=hub_calls, reads=hub_reads)
        result = scan_hub(target, list(folders), default_folders, engine, method, progress=progress,
                          use_cache=use_cache, options=options, jobs=jobs)
    else:
        result = scan(target, list(folders), default_folders, engine, method, progress=progress, use_cache=use_cache,
                      jobs=jobs)
    if probe:
        result = _probe_best(result, probe, llama_server, probe_output, n_predict, tuple(server_args), probe_progress)
    picked = pick_device(gpu, bandwidth, vram, detect)
    if picked is not None and picked.hardware is not None:
        from paircheck.scan.gpu_ranking import predict_candidates
        from paircheck.workload import Workload

        result = predict_candidates(result, picked.hardware, picked.basis, picked.note,
                                    Workload(context_tokens=context or 0, n_predict=n_predict))
    return result


def _probe_best(result: ScanResult, count: int, binary: str | None, output: str | None, n_predict: int,
                server_args: tuple[str, ...], progress: ProbeProgress | None) -> ScanResult:
    """``scan --probe N``: the probe's measurement of the N best drafts, folded into the ranking."""
    from paircheck.api._probe import result_path
    from paircheck.llama_server.process import find_llama_server
    from paircheck.probe.run import Endpoints, ProbeSettings, probe_drafts
    from paircheck.scan import probe_best

    settings = ProbeSettings(n_predict=n_predict, server_args=server_args)
    endpoints = Endpoints(binary=find_llama_server(binary))
    path = result_path(output)

    def run(target: str, drafts: list[str]) -> list[object]:
        try:
            return list(probe_drafts(target, drafts, settings, endpoints, path, progress=progress).summaries)
        except KeyboardInterrupt:
            raise InputError(str(path), "interrupted; what was measured is kept there (complete: false)") from None

    return probe_best(result, count, run, str(path))


def compare_drafts(target: str, drafts: Sequence[str], *, engine: str = LLAMACPP,
                   method: str | None = None) -> ScanResult:
    """``paircheck TARGET D1 D2 ...``: the given drafts ranked as ``scan`` ranks them."""
    from paircheck.scan import compare

    return compare(target, list(drafts), engine, method)
