"""What ``paircheck scan`` answers: one summary per candidate draft (never its description), the
files it could not read, and the ranking with what was searched."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from paircheck.constants import LLAMACPP
from paircheck.findings import ACCEPTED
from paircheck.model import ModelDescription
from paircheck.scan.discover import Place


@dataclass
class CandidateResult:
    """The summary kept for one candidate (never its description)."""

    location: str
    name: str | None
    where: str
    usable: bool | None  # accepted / refused / undecided for the chosen engine
    verdict: str
    first_failure: str | None  # the failing check's code
    reason: str | None  # its one-line message
    documented: bool
    file_bytes: int | None
    cost_ratio: float | None  # draft per-token weight bytes / the target's (None: unknown)
    size_warning: str | None
    engines: dict[str, str] = field(default_factory=dict)  # engine -> verdict (--engine all)
    # What holds the draft (its source says): "gguf" or "hf-folder" (which llama-server
    # cannot load). Shown as ``source_kind`` in the JSON.
    form: str = "gguf"
    # MODELLED, not measured: Leviathan et al.'s speedup at REFERENCE_ACCEPTANCE with the best
    # draft length for this cost ratio (paircheck.speed.estimate); None without tensor infos.
    modelled_speedup: float | None = None
    modelled_draft_max: int | None = None
    # Memory of target + draft as llama-server allocates it at the target's training context
    # (paircheck.fit, device + host bytes); None when either file has no tensor infos.
    memory_bytes: int | None = None
    # How the registry recognised the pair when documented: "name" (repo ids or names) or
    # "vocabulary" (a side known only by its vocabulary fingerprint, as the check's RG001 says).
    documented_by: str | None = None
    # With `scan --probe N`: MEASURED on llama-server by paircheck probe (the share of
    # positions where this draft's top token is the target's), the fastest setting for it,
    # and the tokens/s and speedup paircheck.speed predicts there from the costs the probe
    # measured on this machine (or, with --no-calibrate, the assumed ones).
    measured_acceptance: float | None = None
    measured_draft_max: int | None = None
    measured_p_min: float | None = None
    measured_speedup: float | None = None
    predicted_tokens_per_s: float | None = None
    # What one evaluation of the draft reads (paircheck.speed.roofline.Shape as a dict), for a
    # prediction on a GPU; None without tensor infos.
    shape: dict[str, float | str] | None = None
    # With `scan --gpu` (or a GPU found here): PREDICTED on that device by paircheck.speed's
    # roofline, at the best draft length, from the acceptance said by ``gpu_acceptance_basis``
    # (measured by a probe, else assumed); whether target + draft fit its memory.
    gpu_tokens_per_s: float | None = None
    gpu_speedup: float | None = None
    gpu_draft_max: int | None = None
    gpu_p_min: float | None = None
    gpu_fits: bool | None = None
    gpu_acceptance_basis: str | None = None
    # How near an unusable draft came, so that none ranks above a nearer one for no reason
    # (a file's size says nothing about a draft that cannot run): how many of the engine's
    # checks, in its order, passed before the first failure (all of them for one accepted at
    # load and predicted to abort), then the share of the target's token texts its vocabulary
    # has (at any id; estimated from a sample of the draft's ids, _shared_texts). Both None for
    # a usable or unchecked draft.
    checks_passed: int | None = None
    shared_texts: float | None = None

    @property
    def probed_slower(self) -> bool:
        """The probe predicts no setting of this draft faster than the target alone."""
        from paircheck.speed.model import MIN_GAIN

        return self.measured_speedup is not None and self.measured_speedup < MIN_GAIN

    @property
    def gpu_slower(self) -> bool:
        """Predicted on the named GPU at no draft length faster than the target alone (or not
        fitting its memory)."""
        from paircheck.speed.model import MIN_GAIN

        return self.gpu_speedup is not None and (self.gpu_speedup < MIN_GAIN or self.gpu_fits is False)

    @property
    def speedup(self) -> float | None:
        """The measured-acceptance speedup when probed, else the one at the reference acceptance."""
        return self.measured_speedup if self.measured_speedup is not None else self.modelled_speedup

    @property
    def accepted_by(self) -> list[str]:
        """With ``--engine all``: the engines that accept the pair."""
        return [name for name, verdict in self.engines.items() if verdict == ACCEPTED]

    def sort_key(self) -> tuple[int, int, int, int, int, float, float, float, str]:
        usable = {True: 0, None: 1, False: 2}[self.usable]
        # On a named GPU (scan --gpu) the drafts predicted there come first, fastest first, a
        # pair that does not fit its memory after those that do; then, as without a GPU, the
        # best modelled (or probed) speedup, a candidate without one (no tensor infos) after.
        on_gpu = 0 if self.gpu_speedup is not None else 1
        if self.gpu_speedup is not None:
            speed = -self.gpu_speedup if self.gpu_fits is not False else 1e9 - self.gpu_speedup
        else:
            speed = -self.speedup if self.speedup is not None else float("inf")
        size = float(self.file_bytes) if self.file_bytes is not None else float("inf")
        # --engine all: a draft more engines accept first (0 for a single engine).
        # Documented by name before documented only by vocabulary (a family's), before undocumented.
        documented = 0 if self.documented and self.documented_by != "vocabulary" else (1 if self.documented else 2)
        near = -(self.checks_passed or 0), -(self.shared_texts or 0.0)
        return usable, -len(self.accepted_by), on_gpu, documented, *near, speed, size, self.location


@dataclass(frozen=True)
class Unreadable:
    location: str
    error: str


@dataclass
class ScanResult:
    target: ModelDescription  # the one description kept whole
    engine: str
    candidates: list[CandidateResult]
    unreadable: list[Unreadable]
    skipped_same_model: list[str]
    searched: list[str]
    cache_hits: int = 0
    cache_misses: int = 0
    probe_file: str | None = None  # with --probe: the probe's result file
    # With --gpu (or a GPU found here): the device (speed.on_gpu's "gpu" object), how it was
    # chosen, the target alone's predicted tokens/s there, and the context predicted at.
    device: dict[str, Any] | None = None
    # With no usable draft: what the check of such a pair offers instead (draftless_steps).
    next_steps: list[str] = field(default_factory=list)
    # Where a scan of this machine looked (given folders, beside the target, the stores);
    # None for candidates given one by one.
    places: list[Place] | None = None

    @property
    def usable(self) -> list[CandidateResult]:
        return [c for c in self.candidates if c.usable]

    @property
    def unchecked(self) -> list[CandidateResult]:
        """Candidates with no verdict: not read (offline, a documented draft the Hub search did
        not reach, a repo that needs access) or undecided."""
        return [c for c in self.candidates if c.usable is None]

    @property
    def best(self) -> CandidateResult | None:
        usable = self.usable
        return usable[0] if usable else None

    @property
    def best_for_llamacpp(self) -> CandidateResult | None:
        """The best GGUF draft llama.cpp itself accepts (for the ready ``llama-server`` line)."""
        for c in self.usable:
            accepted = c.engines.get(LLAMACPP) == ACCEPTED if c.engines else self.engine == LLAMACPP
            if accepted and c.form == "gguf":
                return c
        return None


# scan --hub's budget by default; here, not in hub_scan, so that the scan command's options
# do not import the Hub's code for a scan of this machine.
DEFAULT_CALLS = 10  # API calls (searches and model infos; each page of a listing is one)


DEFAULT_READS = 8  # candidates read (one GGUF header, or one repo's tokenizer and config files)


# The acceptance rate the ranking's modelled speedup assumes: a stated reference point of
# `paircheck estimate`'s band (0.5-0.9), the same for every candidate, so the ranking depends
# only on the cost ratio. Labelled MODELLED wherever it is shown.
REFERENCE_ACCEPTANCE = 0.7


NO_TENSORS = "- : a file without tensor infos (a vocab-only file) has no weights to model speed or memory from"
