"""An acceptance as people read it, and the drafting it implies: the one conversion every
speed answer uses (``estimate --acceptance-rate``, the published points, a documented figure).

What engines print is not the per-token rate the speed model needs:

* llama-server's ``draft acceptance = 0.74000 (  296 accepted /   400 generated)``,
  llama-speculative's ``accept``, draftbench's ``acceptance_rate``: accepted / drafted, at the
  ``--spec-draft-n-max`` (k), ``--spec-draft-p-min`` (p) and ``--spec-draft-n-min`` they ran
  with (``RATE``);
* LM Studio's "accepted draft tokens": the share of the generated tokens that came from the
  draft (``SHARE``);
* an "acceptance length": the tokens a target pass yields (``PER_PASS``);
* the per-token rate ``a`` itself (``PER_TOKEN``): the chance that a drafted token is the
  target's, position after position (Leviathan et al., section 3), at p-min 0.

**The model of drafting** (ASSUMED, one parameter): the draft's confidence in its top token
at each position is independent of the others and distributed as ``Beta(t, 1)`` (density
``t c^(t-1)``), and the draft is calibrated: a token drafted with confidence ``c`` is the
target's with probability ``c``. Then ``a = t / (t + 1)``, and at a p-min ``p``:

* a position is drafted (the draft goes on) with probability ``q = 1 - p^t``;
* it is drafted and accepted with probability ``s = a (1 - p^(t+1))``;

so a round drafts ``D = min(k, the first unconfident position - 1)`` tokens (a draft shorter
than n-min is dropped: the target decodes one token), the target accepts the leading run of
them, ``P(A >= i | D >= i) = (s/q)^i``, and verifies ``D + 1``. At p-min 0 this is Leviathan's
i.i.d. model exactly (``q = 1``, ``s = a``). Each reported figure is turned into ``a`` by
solving the figure the model gives at the reported k, p-min and n-min for it (bisection: every
figure rises with ``a``); a prediction at another setting then comes from the same ``a``.
Pure functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

from paircheck.speed.model import Work

PER_TOKEN = "per-token"
RATE = "accepted/drafted"
SHARE = "draft share of output"
PER_PASS = "tokens per pass"
KINDS = (PER_TOKEN, RATE, SHARE, PER_PASS)
# What each kind is, in the words the output and --help use.
MEANING = {
    PER_TOKEN: "the per-token rate a (the chance each drafted token is the target's, at p-min 0)",
    RATE: "accepted / drafted, as llama-server prints it (draft acceptance = accepted / generated)",
    SHARE: "the share of the output that came from the draft, as LM Studio prints it",
    PER_PASS: "tokens per target pass (the acceptance length)",
}


@dataclass(frozen=True)
class Drafting:
    """What a draft does per round at a per-token rate ``a`` (see the module docstring)."""

    a: float

    def _probabilities(self, p_min: float) -> tuple[float, float]:
        """``(q, s)``: a position drafted; drafted and accepted."""
        a = min(max(self.a, 0.0), 1.0)
        if p_min <= 0:
            return 1.0, a
        if a >= 1.0:
            return 1.0, 1.0
        if a <= 0.0:
            return 0.0, 0.0
        t = a / (1.0 - a)
        return 1.0 - p_min ** t, a * (1.0 - p_min ** (t + 1.0))

    def rounds(self, k: int, p_min: float = 0.0, n_min: int = 0) -> list[tuple[float, int, float, int]]:
        """Every way a round can go: ``(probability, drafted D, expected accepted, draft decodes)``.

        A draft shorter than ``n_min`` (or empty) is dropped: that round verifies nothing. The
        draft decodes the last sampled token and each drafted token it goes on from:
        ``min(D + 1, k)`` decodes (llama.cpp's ``draft_simple::draft``)."""
        q, s = self._probabilities(p_min)
        alpha = s / q if q > 0 else 0.0  # accepted, given drafted
        out = []
        run = [0.0]  # run[j]: expected accepted of a kept draft of j tokens, sum of alpha^i, i = 1..j
        for i in range(1, k + 1):
            run.append(run[-1] + alpha ** i)
        for d in range(k + 1):
            prob = q ** d * (1.0 - q) if d < k else q ** k
            if prob <= 0:
                continue
            kept = d if d >= max(n_min, 1) else 0
            out.append((prob, kept, run[kept], min(d + 1, k)))
        return out

    def per_round(self, k: int, p_min: float = 0.0, n_min: int = 0) -> tuple[float, float, float]:
        """Expected ``(drafted, accepted, draft decodes)`` per round."""
        rs = self.rounds(k, p_min, n_min)
        return (sum(p * d for p, d, _, _ in rs), sum(p * a for p, _, a, _ in rs), sum(p * n for p, _, _, n in rs))

    def reported(self, kind: str, k: int, p_min: float = 0.0, n_min: int = 0) -> float:
        """The figure of ``kind`` a run at (k, p_min, n_min) would print."""
        if kind == PER_TOKEN:
            return self.a
        drafted, accepted, _ = self.per_round(k, p_min, n_min)
        if kind == RATE:
            return accepted / drafted if drafted > 0 else 0.0
        if kind == SHARE:
            return accepted / (accepted + 1.0)
        if kind == PER_PASS:
            return accepted + 1.0
        raise ValueError(f"unknown acceptance kind {kind!r}")

    def work(self, k: int, p_min: float = 0.0, n_min: int = 0, tokens: float = 1000.0) -> Work:
        """The expected work of ``tokens`` tokens at (k, p_min, n_min), for the speed model:
        the target's batches of ``D + 1`` by how often each ``D`` comes, and the draft's decodes."""
        rs = self.rounds(k, p_min, n_min)
        per_round = sum(p * (a + 1.0) for p, _, a, _ in rs)
        rounds = (tokens - 1.0) / per_round
        batches = [0.0] * (k + 1)
        for p, d, _, _ in rs:
            batches[d] += rounds * p
        return Work(tokens, tuple(batches), rounds * sum(p * n for p, _, _, n in rs))


@lru_cache(maxsize=1024)
def _lowest(kind: str, draft_max: int, p_min: float, n_min: int) -> float:
    """The per-token rate at which ``kind``'s figure is lowest (0 where it only rises; ``a = 0``
    itself drafts nothing, so it has no rate to compare)."""
    if kind != RATE or (p_min <= 0 and n_min <= 1):
        return 0.0  # rises with a: the share and tokens per pass always, accepted / drafted at p-min 0
    grid = [i / 400 for i in range(1, 400)]
    values = [Drafting(a).reported(kind, draft_max, p_min, n_min) for a in grid]
    i = min(range(len(grid)), key=lambda i: (values[i], -i))
    return 0.0 if i == 0 else grid[i]


@lru_cache(maxsize=4096)  # pure; a fit asks the same published figures thousands of times
def per_token(value: float, kind: str = PER_TOKEN, draft_max: int = 0, p_min: float = 0.0, n_min: int = 0) -> float:
    """The per-token rate ``a`` that gives ``value`` (of ``kind``) at the setting it was
    measured at; 1 when even ``a = 1`` gives less (a perfect draft).

    Accepted / drafted at a p-min above 0 falls and then rises with ``a``: a weak draft drafts
    only the few tokens it is sure of, and most of those are right; a strong one drafts long
    runs, whose tail the target cuts. Such a figure has two readings; the stronger draft's is
    taken (ASSUMED: a draft someone runs is one that drafts), and a figure below the lowest
    the model can give reads as the draft at that lowest point."""
    if kind not in KINDS:
        raise ValueError(f"unknown acceptance kind {kind!r}")
    if kind == PER_TOKEN:
        return min(max(value, 0.0), 1.0)
    if draft_max < 1:
        raise ValueError(f"{kind} needs the draft length it was measured at")
    lo, hi = _lowest(kind, draft_max, p_min, n_min), 1.0
    if Drafting(hi).reported(kind, draft_max, p_min, n_min) <= value:
        return 1.0
    if value <= Drafting(lo).reported(kind, draft_max, p_min, n_min):
        return lo
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if Drafting(mid).reported(kind, draft_max, p_min, n_min) < value else (lo, mid)
    return (lo + hi) / 2


@dataclass(frozen=True)
class Acceptance:
    """An acceptance as it was measured, given or assumed, and the setting it was measured at.

    ``basis``: ``measured`` (a bench or probe result), ``documented`` (a published figure),
    ``given`` (the command line) or ``assumed``; ``note`` says where it comes from."""

    value: float
    kind: str = PER_TOKEN
    draft_max: int = 0  # the draft length it was measured at (0: not needed, per-token)
    p_min: float = 0.0
    draft_min: int = 0
    basis: str = "given"
    note: str | None = None

    @cached_property
    def per_token(self) -> float:
        return per_token(self.value, self.kind, self.draft_max, self.p_min, self.draft_min)

    @property
    def drafting(self) -> Drafting:
        return Drafting(self.per_token)

    def said(self) -> str:
        """The figure and what it is, for a headline: "acceptance rate 0.74 (accepted/drafted at
        draft max 16, p-min 0.75)"."""
        if self.kind == PER_TOKEN:
            return f"per-token acceptance {self.value:.2f}"
        at = f"draft max {self.draft_max}" + (f", p-min {self.p_min:g}" if self.p_min else "") + (
            f", n-min {self.draft_min}" if self.draft_min else "")
        name = {RATE: "acceptance rate", SHARE: "draft share", PER_PASS: "tokens per pass"}[self.kind]
        return f"{name} {self.value:.2f} ({self.kind} at {at}; per-token {self.per_token:.2f})"

    def to_dict(self) -> dict[str, object]:
        return {"value": self.value, "kind": self.kind, "draft_max": self.draft_max or None, "p_min": self.p_min,
                "draft_min": self.draft_min, "per_token": round(self.per_token, 4), "basis": self.basis,
                "note": self.note}
