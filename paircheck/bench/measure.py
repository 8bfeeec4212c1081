"""``paircheck bench``: measure a running llama-server through its native ``/completion``.

Method (one result file per server configuration and workload, compared later by ``compare``):
one warm-up pass over the prompts, then ``runs`` measured passes; greedy sampling
(``temperature: 0``), a fixed ``n_predict`` and a fixed ``seed``; prompts sent raw (no chat
template unless asked; a chat log always through it). Each request records the client's wall
time and when it was sent in its pass, the server's ``timings`` object as it came, the slot
that served it, the output text and the stop fields; each run records ``/props``,
``/health``, the client's version and the machine.

The workload (``paircheck.workload``): at ``context_tokens`` 0 every prompt is sent as given
with ``cache_prompt: false`` (no prefix reuse: each request evaluates its whole prompt). At a
depth above 0 each prompt is filled to that many of the target's tokens (counted by the
server's ``/tokenize``) with a document before it, and sent with ``cache_prompt: true``: the
warm-up pass evaluates the prefix once and the measured passes reuse it from the slot's
cache, as a served agent or chat resending its growing context does; the measurement is then
of replying at that depth, not of evaluating it again every time. ``parallel`` N: N clients
(threads) at once, each sending every prompt of the pass (client c starting at prompt c, so
different prompts are in flight) to its own slot (``id_slot`` c, so each slot's cache sees the
same requests in the same order on every server), against a server with at least N slots.
``together``: each pass's N requests go as one request of N prompts (``"prompt": [...]``),
which llama-server launches in one step, so every slot generates from the same step on, as
the slots of a server under steady load do. N clients' requests reach the server apart: on
this project's 2-core machine 100-230 ms (server logs, 2026-12-07), and the server then starts
the later one a step or two after the others, whose rounds it shares only in part; with
32-token replies and long drafts that start and end are a quarter of the run (two slots,
512 tokens: 2,857 ms for the slots started together, 3,209-3,390 for those started apart). Each
prompt is recorded as its client's request, with the one request's send time and wall time.

Not measured: streaming time to first token and GPU memory.

The result file is rewritten atomically after every request, so an interrupted run
(Ctrl-C, a server that dies) leaves what was measured, marked ``"complete": false``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from paircheck.errors import InputError
from paircheck.llama_server.http import machine_info, request_json
from paircheck.llama_server.prompts import BUILTIN_PROMPTS, Prompt
from paircheck.llama_server.tokens import apply_template, token_counter
from paircheck.result_file import now, read_json, recording, write_json
from paircheck.version import __version__
from paircheck.workload import fill_to_depth

SCHEMA_VERSION = 1
KIND = "paircheck-bench"
DEFAULT_URL = "http://127.0.0.1:8080"
NOT_MEASURED = ("streaming time to first token", "GPU memory")


@dataclass(frozen=True)
class BenchSettings:
    url: str = DEFAULT_URL
    runs: int = 5
    warmup: int = 1
    n_predict: int = 128
    seed: int = 42
    chat_template: bool = False
    timeout: float = 300.0  # seconds per socket operation of one request
    context_tokens: int = 0  # fill every prompt to this many target tokens (0: as given)
    parallel: int = 1  # requests at once (one client thread each)
    # the ``parallel`` requests of each pass as one request of that many prompts: llama-server
    # starts them in the same step (see the module's docstring)
    together: bool = False

    @property
    def cache_prompt(self) -> bool:
        """Prefix reuse between requests: only at a context depth (see the module's docstring)."""
        return self.context_tokens > 0


@dataclass(frozen=True)
class Prepared:
    """A prompt as it is sent: filled to the depth and through the template when asked."""

    id: str
    text: str
    context_tokens: int | None  # the target's tokens of ``text`` (None: not counted, at depth 0)
    repeated: bool  # the document was shorter than the depth and was repeated
    template: bool  # sent through the server's chat template

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "context_tokens": self.context_tokens, "repeated": self.repeated,
                "template": self.template, "text": self.text}


# --------------------------------------------------------------------------- result file


# --------------------------------------------------------------------------- the measurement


def completion_body(text: str, n_predict: int, seed: int, cache_prompt: bool = False,
                    slot: int | None = None) -> dict[str, Any]:
    """The /completion request: greedy, fixed length and seed, no streaming; prefix reuse
    only when asked (at a context depth); ``slot``: the server slot to use (``id_slot``)."""
    body: dict[str, Any] = {
        "prompt": text,
        "n_predict": n_predict,
        "temperature": 0.0,
        "seed": seed,
        "cache_prompt": cache_prompt,
        "stream": False,
    }
    if slot is not None:
        body["id_slot"] = slot
    return body


def measure_one(url: str, text: str, n_predict: int, seed: int, timeout: float,
                cache_prompt: bool = False, slot: int | None = None) -> dict[str, Any]:
    """One request: client wall time, the server's timings as they came, output and stop fields,
    and the slot that served it."""
    start = time.perf_counter()
    answer = request_json(url, "/completion", completion_body(text, n_predict, seed, cache_prompt, slot), timeout)
    client_ms = (time.perf_counter() - start) * 1000.0
    if not isinstance(answer, dict) or not isinstance(answer.get("content"), str):
        raise InputError(url.rstrip("/") + "/completion", "answer has no \"content\" string (not a llama-server?)")
    return _record(answer, client_ms)


def measure_together(url: str, texts: Sequence[str], n_predict: int, seed: int, timeout: float,
                     cache_prompt: bool = False) -> list[dict[str, Any]]:
    """One request of several prompts (BenchSettings.together): one record per prompt, in
    order, as measure_one's, each with the request's wall time."""
    where = url.rstrip("/") + "/completion"
    body = completion_body(texts[0], n_predict, seed, cache_prompt)
    body["prompt"] = list(texts)
    start = time.perf_counter()
    answer = request_json(url, "/completion", body, timeout)
    client_ms = (time.perf_counter() - start) * 1000.0
    if not isinstance(answer, list) or len(answer) != len(texts) \
            or not all(isinstance(a, dict) and isinstance(a.get("content"), str) for a in answer):
        raise InputError(where, f"answered no list of {len(texts)} results with a \"content\" string for "
                                f"{len(texts)} prompts in one request (not a llama-server?)")
    return [_record(a, client_ms) for a in answer]


def _record(answer: dict[str, Any], client_ms: float) -> dict[str, Any]:
    timings = answer.get("timings")
    return {
        "client_ms": round(client_ms, 3),
        "timings": timings if isinstance(timings, dict) else None,
        "content": answer["content"],
        "stop_type": answer.get("stop_type"),
        "stopping_word": answer.get("stopping_word"),
        "tokens_predicted": answer.get("tokens_predicted"),
        "truncated": answer.get("truncated"),
        "id_slot": answer.get("id_slot"),
        "tokens_evaluated": answer.get("tokens_evaluated"),
    }


def _filled_message(messages: Sequence[dict[str, str]]) -> int:
    """Which message of a chat the context goes into: the first user message (a document
    pasted before the question, as retrieval and agents do)."""
    return next(i for i, m in enumerate(messages) if m["role"] == "user")


def prepare(url: str, prompt: Prompt, depth: int, chat_template: bool, timeout: float,
            document: str | None = None) -> Prepared:
    """``prompt`` as it will be sent: through the server's chat template when it is a chat log
    or ``chat_template`` is on, and at ``depth`` > 0 filled with ``document`` (default: the
    built-in one) to that many of the target's tokens, counted by the server's ``/tokenize``.

    A chat's document goes into its first user message; the template's own tokens and the
    other messages count towards the depth."""
    templated = chat_template or prompt.messages is not None
    if not templated:
        if depth <= 0:
            return Prepared(prompt.id, prompt.text, None, False, False)
        filled = fill_to_depth(prompt.text, depth, token_counter(url, timeout), document)
        return Prepared(prompt.id, filled.text, filled.tokens, filled.repeated, False)
    messages = [dict(m) for m in prompt.messages] if prompt.messages else [{"role": "user", "content": prompt.text}]
    at = _filled_message(messages)
    own = messages[at]["content"]

    def render(content: str) -> str:
        messages[at]["content"] = content
        return apply_template(url, messages, timeout)

    if depth <= 0:
        return Prepared(prompt.id, render(own), None, False, True)
    count = token_counter(url, timeout)
    overhead = count(render(own)) - count(own)  # the template and the other messages
    filled = fill_to_depth(own, depth - overhead, count, document)
    text = render(filled.text)
    return Prepared(prompt.id, text, count(text), filled.repeated, True)


def new_result(settings: BenchSettings, label: str, prompts: list[Prompt],
               context_source: str = "built-in") -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": KIND,
        "label": label,
        "complete": False,
        "error": None,
        "paircheck_version": __version__,
        "started_at": now(),
        "finished_at": None,
        "url": settings.url,
        "settings": {
            "runs": settings.runs,
            "warmup": settings.warmup,
            "n_predict": settings.n_predict,
            "seed": settings.seed,
            "temperature": 0.0,
            "cache_prompt": settings.cache_prompt,
            "chat_template": settings.chat_template,
            "timeout_s": settings.timeout,
            "context_tokens": settings.context_tokens,
            "parallel": settings.parallel,
            "together": settings.together and settings.parallel > 1,
            "context_source": context_source if settings.context_tokens > 0 else None,
        },
        "not_measured": list(NOT_MEASURED),
        "machine": machine_info(),
        "health": None,
        "server": None,
        "prompts": [asdict(p) for p in prompts],
        "prepared": [],
        "requests": [],
    }


class BenchSession:
    """One server's measurement, one pass over the prompts at a time, so that two servers'
    passes can be interleaved (``bench run``) and more passes added while the runs vary."""

    def __init__(self, settings: BenchSettings, label: str, output: Path | None, prompts: list[Prompt] | None = None,
                 extra_fields: dict[str, Any] | None = None, document: str | None = None,
                 context_source: str = "built-in") -> None:
        if settings.runs < 1 or settings.warmup < 0 or settings.n_predict < 1:
            raise InputError("bench", "--runs and --n-predict must be >= 1, --warmup >= 0")
        if settings.parallel < 1 or settings.context_tokens < 0:
            raise InputError("bench", "--parallel must be >= 1, --context-tokens >= 0")
        self.settings = settings
        self.output = output
        self.prompts = list(prompts or BUILTIN_PROMPTS)
        self.document = document
        self.result = new_result(settings, label, self.prompts, context_source)
        self.result.update(extra_fields or {})  # e.g. the server's command line when paircheck started it
        self.texts: dict[str, str] = {}
        self._lock = threading.Lock()
        self._stopped = False  # set when a pass ends early: client threads still running record nothing more

    def save(self) -> None:
        if self.output is not None:
            with self._lock:
                write_json(self.output, self.result)

    def start(self, prepared: Sequence[Prepared] | None = None) -> list[Prepared]:
        """The server's health and properties, and the prompts as they will be sent (``prepared``:
        already made by another server of the same target, so both send the same bytes)."""
        s = self.settings
        self.result["health"] = request_json(s.url, "/health", timeout=min(s.timeout, 30.0))
        self.result["server"] = request_json(s.url, "/props", timeout=min(s.timeout, 30.0))
        slots = self.result["server"].get("total_slots") if isinstance(self.result["server"], dict) else None
        if isinstance(slots, int) and not isinstance(slots, bool) and 0 < slots < s.parallel:
            raise InputError(s.url, f"the server has {slots} slot{'s' if slots != 1 else ''} (/props total_slots): "
                             f"{s.parallel} requests at once would wait for each other; start it with "
                             f"--parallel {s.parallel}")
        self.save()
        if prepared is None:
            prepared = [prepare(s.url, p, s.context_tokens, s.chat_template, s.timeout, self.document)
                        for p in self.prompts]
        self.result["prepared"] = [p.to_dict() for p in prepared]
        self.texts = {p.id: p.text for p in prepared}
        return list(prepared)

    def _request(self, run: int, client: int, prompt: Prompt, run_start: float, tick: Any) -> None:
        s = self.settings
        sent = time.perf_counter()
        # With several clients, client c always uses slot c: each slot then sees the same requests in
        # the same order on every server, so what its cache reuses (and so the outputs) does not
        # depend on which request happened to arrive first.
        record = measure_one(s.url, self.texts[prompt.id], prompt.n_predict or s.n_predict, s.seed, s.timeout,
                             s.cache_prompt, client if s.parallel > 1 else None)
        with self._lock:
            if self._stopped:
                return
            if tick is not None:
                tick(1)
            if run < 0:
                return
            self.result["requests"].append({"prompt_id": prompt.id, "run": run, "client": client,
                                            "sent_ms": round((sent - run_start) * 1000.0, 3), **record})
        self.save()

    def run_pass(self, run: int, tick: Any = None) -> None:
        """One pass over every prompt (by each of ``parallel`` clients at once); ``run`` below 0
        is a warm-up, not recorded."""
        start = time.perf_counter()
        if self.settings.parallel == 1:
            for p in self.prompts:
                self._request(run, 0, p, start, tick)
            return
        if self.settings.together:
            self._together_pass(run, start, tick)
            return
        self._concurrent_pass(run, start, tick)

    def _together_pass(self, run: int, start: float, tick: Any) -> None:
        """As _concurrent_pass's clients, each step of them as one request of their prompts
        (client c's prompt at position c)."""
        s, n, m = self.settings, self.settings.parallel, len(self.prompts)
        for i in range(m):
            prompts = [self.prompts[(c + i) % m] for c in range(n)]
            lengths = {p.n_predict or s.n_predict for p in prompts}
            if len(lengths) > 1:
                raise InputError("--together", "prompts of different reply lengths cannot be sent as one request")
            sent = time.perf_counter()
            records = measure_together(s.url, [self.texts[p.id] for p in prompts], lengths.pop(), s.seed, s.timeout,
                                       s.cache_prompt)
            with self._lock:
                for c, (prompt, record) in enumerate(zip(prompts, records, strict=True)):
                    if tick is not None:
                        tick(1)
                    if run >= 0:
                        self.result["requests"].append({"prompt_id": prompt.id, "run": run, "client": c,
                                                        "sent_ms": round((sent - start) * 1000.0, 3), **record})
            self.save()

    def _concurrent_pass(self, run: int, start: float, tick: Any) -> None:
        """``parallel`` client threads, released together, each sending every prompt in turn
        (client c from prompt c on, so that different prompts are in flight at once)."""
        n, m = self.settings.parallel, len(self.prompts)
        errors: list[BaseException] = []
        gate = threading.Barrier(n)

        def client(c: int) -> None:
            try:
                gate.wait()
                for i in range(m):
                    if self._stopped or errors:
                        return
                    self._request(run, c, self.prompts[(c + i) % m], start, tick)
            except threading.BrokenBarrierError:
                return
            except BaseException as exc:  # noqa: BLE001 - re-raised in the measuring thread
                errors.append(exc)

        threads = [threading.Thread(target=client, args=(c,), daemon=True, name=f"bench-client-{c}")
                   for c in range(n)]
        try:
            for t in threads:
                t.start()
            for t in threads:
                while t.is_alive() and not errors:
                    t.join(0.2)
        except BaseException:
            self._stopped = True  # Ctrl-C: what the other clients finish now is not recorded
            gate.abort()
            raise
        if errors:
            self._stopped = True
            gate.abort()
            raise errors[0]


def run_bench(
    settings: BenchSettings,
    label: str,
    output: Path | None,
    prompts: list[Prompt] | None = None,
    progress: bool = False,
    extra_fields: dict[str, Any] | None = None,
    document: str | None = None,
    context_source: str = "built-in",
) -> dict[str, Any]:
    """Measure the server at ``settings.url``; write the result to ``output`` as it grows.

    On an error the partial result is saved with ``complete: false`` and ``error`` set,
    then the InputError propagates; on Ctrl-C likewise with KeyboardInterrupt.
    """
    session = BenchSession(settings, label, output, prompts, extra_fields, document, context_source)
    bar = None
    with recording(session.result, session.save):
        try:
            session.start()
            if progress:
                from tqdm import tqdm

                bar = tqdm(total=(settings.warmup + settings.runs) * len(session.prompts) * settings.parallel,
                           desc=f"bench {label}",
                           unit="req", leave=False)
            for run in range(-settings.warmup, settings.runs):
                session.run_pass(run, None if bar is None else bar.update)
        finally:
            if bar is not None:
                bar.close()
    return session.result


def load_bench_result(path: str) -> dict[str, Any]:
    """Read a bench result file and check the fields ``compare`` relies on."""
    data = read_json(path, KIND, SCHEMA_VERSION, "bench result")
    requests = data.get("requests")
    if not isinstance(requests, list):
        raise InputError(path, "\"requests\" is not a list")
    for i, req in enumerate(requests):
        ok = (
            isinstance(req, dict)
            and isinstance(req.get("prompt_id"), str)
            and isinstance(req.get("client_ms"), (int, float))
            and isinstance(req.get("content"), str)
            and (req.get("timings") is None or isinstance(req.get("timings"), dict))
        )
        if not ok:
            raise InputError(path, f"request #{i} lacks prompt_id, client_ms, content or timings")
    return data
