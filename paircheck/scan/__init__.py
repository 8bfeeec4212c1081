"""``paircheck scan``: which models on this machine can draft for a target, ranked.

Each candidate is described, checked and reduced to a small summary before the next one is
read, so memory stays bounded by one file's metadata whatever the number of files (one per
worker when the files are read ``jobs`` at a time, paircheck.scan.workers). A file that cannot
be read is listed with its one-line reason and never stops the scan.

The package's names, from its modules: ``result`` (what a scan answers), ``summary`` (one
candidate's summary), ``rank`` (the scan, its workers and cache); ``discover`` finds the
files, ``hub_scan`` and ``hub_candidates`` search the Hub, ``gpu_ranking`` predicts speed.
"""

from __future__ import annotations

from paircheck.scan.rank import (
    MAX_JOBS,
    Describer,
    Progress,
    compare,
    default_jobs,
    probe_best,
    rank,
    scan,
    target_folder,
)
from paircheck.scan.result import (
    DEFAULT_CALLS,
    DEFAULT_READS,
    NO_TENSORS,
    REFERENCE_ACCEPTANCE,
    CandidateResult,
    ScanResult,
    Unreadable,
)
from paircheck.scan.summary import TargetFacts, draftless_steps, summarize

__all__ = [
    "DEFAULT_CALLS", "DEFAULT_READS", "MAX_JOBS", "NO_TENSORS", "REFERENCE_ACCEPTANCE", "CandidateResult", "Describer",
    "Progress", "ScanResult", "TargetFacts", "Unreadable", "compare", "default_jobs", "draftless_steps", "probe_best",
    "rank", "scan", "summarize", "target_folder",
]
