"""Record what ``replay`` needs from real llama-servers: the target's tokens, the draft's guesses.

Two steps, each through llama-server's native ``/completion`` (token ids in and out, so
the target and every draft see exactly the same tokens):

1. ``generate``: the target alone, greedy (or sampled), the same request ``bench`` sends
   but with ``return_tokens``. With sampling, ``n_probs`` and ``post_sampling_probs`` also
   give the target's probability of each candidate after its sampler chain.
2. ``teacher_force``: each draft, fed the target's tokens. The pinned llama-server returns
   no prompt log-probabilities ("Only no echo is supported", server-common.cpp), so the
   draft is asked to *generate* greedily from a prefix of the target's output, streamed,
   with ``n_probs: 10`` (its top-10, the set the draft sampler normalises over) and
   ``cache_prompt: true`` (the server reuses the prefix it already holds). While the draft
   generates the target's own next token, each streamed token is the teacher-forced
   prediction at that position, at the cost of one decoded token. At the first token that
   differs, the reader keeps what ``p_min`` needs (the confidences of the draft's own
   continuation), then closes the connection, which makes llama-server cancel the task,
   and asks again from the target's token at that position: one prompt token evaluated.
   So a draft costs one decoded token per target token, plus one request per mismatch.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from paircheck.errors import InputError
from paircheck.llama_server.http import request_json, stream_events
from paircheck.probe.replay import DRAFT_TOP_K, PromptTrace

# The longest tail replay needs: the longest draft (16) minus the token that left the path.
MAX_TAIL = 15
# A generation request never asks for more than this many tokens beyond what it needs.
_STREAM_SLACK = 64
# Two tokens whose log-probabilities lie closer than this are a near tie: the same context
# evaluated in another order (the prompt in one batch or in several, the draft's own decodes
# in the pair's server) moves a logit by a few tenths and may swap them. Measured here
# (2026-12-07, SmolLM2 Q8_0 on an AVX2 CPU): 'list' over 'a' by 0.05 nats when teacher
# forced, 'a' over 'list' by 0.12 nats in the pair's server, and by 0.35 after another
# request had filled the cache; the largest swing seen was 0.40 nats.
NEAR_TIE_NATS = 0.5


@dataclass(frozen=True)
class Generation:
    """The target's output for one prompt, as llama-server produced it."""

    prompt_id: str
    prompt_tokens: tuple[int, ...]
    tokens: tuple[int, ...]
    n_predict: int
    stop_type: str | None
    # With sampling only: per generated token, the target's post-sampler candidates {id: p}.
    candidates: tuple[dict[int, float], ...] | None
    timings: dict[str, Any] | None
    client_ms: float


def _ids(value: Any, where: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(isinstance(t, int) and not isinstance(t, bool) for t in value):
        raise InputError(where, "the answer has no list of token ids (not a llama-server, or too old?)")
    return tuple(value)


def tokenize(url: str, text: str, timeout: float) -> tuple[int, ...]:
    """The tokens ``/completion`` would make of ``text``: special tokens parsed, BOS added as the
    model says (tokenize_input_prompts uses add_special and parse_special)."""
    answer = request_json(url, "/tokenize", {"content": text, "add_special": True, "parse_special": True}, timeout)
    return _ids(answer.get("tokens") if isinstance(answer, dict) else None, url.rstrip("/") + "/tokenize")


def apply_template(url: str, text: str, timeout: float) -> str:
    """The prompt llama-server's chat endpoint would build from one user message (its own template)."""
    answer = request_json(url, "/apply-template", {"messages": [{"role": "user", "content": text}]}, timeout)
    if not isinstance(answer, dict) or not isinstance(answer.get("prompt"), str):
        raise InputError(url.rstrip("/") + "/apply-template", 'answer has no "prompt" string')
    return answer["prompt"]


def generate(url: str, prompt_id: str, prompt: Sequence[int], n_predict: int, temperature: float, seed: int,
             timeout: float, cache_prompt: bool = False) -> Generation:
    """One generation by the target, without prefix reuse (as bench measures it) unless
    ``cache_prompt`` (a deep context: the server keeps it for the calibration that follows)."""
    body: dict[str, Any] = {
        "prompt": list(prompt),
        "n_predict": n_predict,
        "temperature": temperature,
        "seed": seed,
        "cache_prompt": cache_prompt,
        "stream": False,
        "return_tokens": True,
    }
    if temperature > 0:
        # Every candidate the target's sampler keeps: top_k defaults to 40 (common/common.h).
        body.update({"n_probs": 40, "post_sampling_probs": True})
    start = time.perf_counter()
    answer = request_json(url, "/completion", body, timeout)
    client_ms = (time.perf_counter() - start) * 1000.0
    where = url.rstrip("/") + "/completion"
    if not isinstance(answer, dict):
        raise InputError(where, "answer is not a JSON object")
    tokens = _ids(answer.get("tokens"), where)
    candidates = None
    if temperature > 0:
        probs = answer.get("completion_probabilities")
        if not isinstance(probs, list) or len(probs) != len(tokens):
            raise InputError(where, "answer lacks one completion_probabilities entry per token")
        candidates = tuple(
            {int(c["id"]): float(c["prob"]) for c in entry.get("top_probs", []) if "id" in c and "prob" in c}
            for entry in probs
        )
    timings = answer.get("timings")
    return Generation(
        prompt_id, tuple(prompt), tokens, n_predict, answer.get("stop_type"), candidates,
        timings if isinstance(timings, dict) else None, round(client_ms, 3),
    )


@dataclass(frozen=True)
class Guess:
    """The draft's greedy token at one position, its draft-sampler confidence, and its
    runner-up when that is within NEAR_TIE_NATS of it (None otherwise)."""

    token: int
    confidence: float
    runner_up: int | None = None


def _token_and_confidence(event: dict[str, Any], where: str) -> list[Guess]:
    """The draft's guess for each token of one streamed event.

    The confidence is the draft sampler's ``cur_p->data[0].p``: the top token's probability
    renormalised over the 10 most likely tokens (top-k 10, then softmax), computed from
    the server's full-softmax log-probabilities of those 10.
    """
    out = []
    probs = event.get("completion_probabilities")
    if not isinstance(probs, list):
        raise InputError(where, "a streamed token has no completion_probabilities (n_probs not honoured?)")
    for entry in probs:
        top = entry.get("top_logprobs") if isinstance(entry, dict) else None
        if not isinstance(top, list) or not top or not isinstance(entry.get("id"), int):
            raise InputError(where, "a streamed token has no top_logprobs")
        ranked = sorted(((float(t["logprob"]), t.get("id")) for t in top[:DRAFT_TOP_K]
                         if isinstance(t, dict) and "logprob" in t), key=lambda v: -v[0])
        best = ranked[0][0]
        total = sum(math.exp(v - best) for v, _ in ranked)
        token = int(entry["id"])
        # the best other token: the streamed token is the greedy one, but its logprob may be
        # listed a hair below a tied token's
        others = [(v, t) for v, t in ranked if t != token and isinstance(t, int)]
        mine = next((v for v, t in ranked if t == token), best)
        near = others[0][1] if others and mine - others[0][0] < NEAR_TIE_NATS else None
        out.append(Guess(token, 1.0 / total, near))
    return out


@dataclass
class ForceStats:
    """What teacher forcing cost: requests sent and tokens the draft decoded (wasted ones too)."""

    requests: int = 0
    decoded: int = 0
    # (prompt id, position, token) where the draft proposed an id the target lacks: there
    # llama-server aborts (the check's LW101), so no speedup exists for the pair.
    foreign: list[tuple[str, int, int]] = field(default_factory=list)


@contextmanager
def _draft_tokens(url: str, body: dict[str, Any], timeout: float, stats: ForceStats
                  ) -> Iterator[Iterator[Guess]]:
    """Stream the draft's greedy tokens with their confidences; leaving the block cancels it."""
    where = url.rstrip("/") + "/completion"
    stats.requests += 1
    with stream_events(url, "/completion", body, timeout) as events:

        def tokens() -> Iterator[Guess]:
            for event in events:
                if "completion_probabilities" in event:
                    for guess in _token_and_confidence(event, where):
                        stats.decoded += 1
                        yield guess
                if event.get("stop") is True:
                    return

        yield tokens()


def _request(prefix: list[int], n_predict: int) -> dict[str, Any]:
    return {"prompt": prefix, "n_predict": n_predict, "temperature": 0.0, "n_probs": DRAFT_TOP_K,
            "cache_prompt": True}


def teacher_force(url: str, gen: Generation, tail_limit: float, timeout: float,
                  stats: ForceStats | None = None, target_vocab: int | None = None) -> PromptTrace:
    """The draft's top token and confidence at every position of ``gen``, and the tails.

    ``tail_limit``: after the draft leaves the target's path, record its own continuation
    while its confidence stays at or above this (the smallest p_min > 0 to be replayed;
    above 1 when none is wanted: then no tail is recorded).
    """
    target = gen.tokens
    n = len(target)
    top = [0] * n
    conf = [0.0] * n
    tails: dict[int, tuple[float, ...]] = {}
    near_ties: dict[int, int] = {}
    stats = stats if stats is not None else ForceStats()
    j = 1
    while j < n:
        left_at: int | None = None  # where the draft left the target's path (or its last token)
        tail: list[tuple[int, float]] = []
        pos = j
        with _draft_tokens(url, _request(list(gen.prompt_tokens) + list(target[:j]), n - j + _STREAM_SLACK),
                           timeout, stats) as tokens:
            for guess in tokens:
                token, c = guess.token, guess.confidence
                if target_vocab is not None and token >= target_vocab:
                    stats.foreign.append((gen.prompt_id, pos if left_at is None else left_at, token))
                if left_at is None:
                    top[pos], conf[pos] = token, c
                    # a near tie matters where swapping the two decides whether the target's token is drafted
                    if guess.runner_up is not None and target[pos] in (token, guess.runner_up):
                        near_ties[pos] = guess.runner_up
                    if token == target[pos] and pos < n - 1:
                        pos += 1
                        continue
                    left_at = pos
                    if c < tail_limit:
                        break  # no p_min to replay drafts this token, so none drafts past it
                    continue
                tail.append((token, c))
                if c < tail_limit or len(tail) >= MAX_TAIL:
                    break
        if left_at is None:
            if pos == j:
                raise InputError(url, f"the draft generated nothing at position {j} of {gen.prompt_id!r} "
                                      "(context full? give a larger --ctx-size)")
            j = pos  # its stream ended on the path (n_predict): ask again from there
            continue
        if conf[left_at] >= tail_limit:
            tails[left_at] = _complete_tail(url, gen, left_at, top[left_at], tail, tail_limit, timeout, stats)
        j = left_at + 1
    return PromptTrace(
        target=target, draft_top=tuple(top), draft_conf=tuple(conf), tails=tails,
        n_predict=gen.n_predict, prompt_tokens=len(gen.prompt_tokens), tail_limit=tail_limit, near_ties=near_ties,
    )


def _complete_tail(url: str, gen: Generation, at: int, token: int, tail: list[tuple[int, float]],
                   tail_limit: float, timeout: float, stats: ForceStats) -> tuple[float, ...]:
    """Finish a tail whose stream ended early: the draft's own end of generation ends the
    server's generation, not draft-simple's drafting, so ask again after that token."""
    for _ in range(MAX_TAIL):
        if len(tail) >= MAX_TAIL or (tail and tail[-1][1] < tail_limit):
            break
        prefix = list(gen.prompt_tokens) + list(gen.tokens[:at]) + [token] + [t for t, _ in tail]
        got = 0
        with _draft_tokens(url, _request(prefix, MAX_TAIL - len(tail)), timeout, stats) as tokens:
            for guess in tokens:
                got += 1
                tail.append((guess.token, guess.confidence))
                if guess.confidence < tail_limit or len(tail) >= MAX_TAIL:
                    break
        if got == 0:
            break  # nothing more can be generated here (context full): drafting would stop too
    return tuple(c for _, c in tail)
