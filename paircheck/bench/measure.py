"""``paircheck bench``: measure a running llama-server through its native ``/completion``.

Method (one result file per server configuration, compared later by ``compare``):
one warm-up pass over the prompts, then ``runs`` measured passes; every request with
``cache_prompt: false`` (no prefix reuse between requests), greedy sampling
(``temperature: 0``), a fixed ``n_predict`` and a fixed ``seed``; prompts sent raw (no
chat template unless asked). Each request records the client's wall time, the server's
``timings`` object as it came, the output text and the stop fields; each run records
``/props``, ``/health``, the client's version and the machine.

Not measured: streaming time to first token and GPU memory.

The result file is rewritten atomically after every request, so an interrupted run
(Ctrl-C, a server that dies) leaves what was measured, marked ``"complete": false``.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from paircheck import __version__
from paircheck.errors import InputError
from paircheck.llama_server.http import machine_info, request_json
from paircheck.llama_server.prompts import BUILTIN_PROMPTS, Prompt
from paircheck.result_file import now, read_json, recording, write_json

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


# --------------------------------------------------------------------------- result file


# --------------------------------------------------------------------------- the measurement


def completion_body(text: str, n_predict: int, seed: int) -> dict[str, Any]:
    """The /completion request: greedy, fixed length and seed, no prefix reuse, no streaming."""
    return {
        "prompt": text,
        "n_predict": n_predict,
        "temperature": 0.0,
        "seed": seed,
        "cache_prompt": False,
        "stream": False,
    }


def measure_one(url: str, text: str, n_predict: int, seed: int, timeout: float) -> dict[str, Any]:
    """One request: client wall time, the server's timings as they came, output and stop fields."""
    start = time.perf_counter()
    answer = request_json(url, "/completion", completion_body(text, n_predict, seed), timeout)
    client_ms = (time.perf_counter() - start) * 1000.0
    if not isinstance(answer, dict) or not isinstance(answer.get("content"), str):
        raise InputError(url.rstrip("/") + "/completion", "answer has no \"content\" string (not a llama-server?)")
    timings = answer.get("timings")
    return {
        "client_ms": round(client_ms, 3),
        "timings": timings if isinstance(timings, dict) else None,
        "content": answer["content"],
        "stop_type": answer.get("stop_type"),
        "stopping_word": answer.get("stopping_word"),
        "tokens_predicted": answer.get("tokens_predicted"),
        "truncated": answer.get("truncated"),
    }


def _apply_chat_template(url: str, text: str, timeout: float) -> str:
    answer = request_json(url, "/apply-template", {"messages": [{"role": "user", "content": text}]}, timeout)
    if not isinstance(answer, dict) or not isinstance(answer.get("prompt"), str):
        raise InputError(url.rstrip("/") + "/apply-template", "answer has no \"prompt\" string")
    return answer["prompt"]


def new_result(settings: BenchSettings, label: str, prompts: list[Prompt]) -> dict[str, Any]:
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
            "cache_prompt": False,
            "chat_template": settings.chat_template,
            "timeout_s": settings.timeout,
        },
        "not_measured": list(NOT_MEASURED),
        "machine": machine_info(),
        "health": None,
        "server": None,
        "prompts": [asdict(p) for p in prompts],
        "requests": [],
    }


class BenchSession:
    """One server's measurement, one pass over the prompts at a time, so that two servers'
    passes can be interleaved (``bench run``) and more passes added while the runs vary."""

    def __init__(self, settings: BenchSettings, label: str, output: Path | None, prompts: list[Prompt] | None = None,
                 extra_fields: dict[str, Any] | None = None) -> None:
        if settings.runs < 1 or settings.warmup < 0 or settings.n_predict < 1:
            raise InputError("bench", "--runs and --n-predict must be >= 1, --warmup >= 0")
        self.settings = settings
        self.output = output
        self.prompts = list(prompts or BUILTIN_PROMPTS)
        self.result = new_result(settings, label, self.prompts)
        self.result.update(extra_fields or {})  # e.g. the server's command line when paircheck started it
        self.texts: dict[str, str] = {}

    def save(self) -> None:
        if self.output is not None:
            write_json(self.output, self.result)

    def start(self) -> None:
        """The server's health and properties, and the prompts as they will be sent."""
        s = self.settings
        self.result["health"] = request_json(s.url, "/health", timeout=min(s.timeout, 30.0))
        self.result["server"] = request_json(s.url, "/props", timeout=min(s.timeout, 30.0))
        self.save()
        self.texts = {p.id: _apply_chat_template(s.url, p.text, s.timeout) if s.chat_template else p.text
                      for p in self.prompts}

    def run_pass(self, run: int, tick: Any = None) -> None:
        """One pass over every prompt; ``run`` below 0 is a warm-up, not recorded."""
        s = self.settings
        for p in self.prompts:
            record = measure_one(s.url, self.texts[p.id], p.n_predict or s.n_predict, s.seed, s.timeout)
            if tick is not None:
                tick(1)
            if run < 0:
                continue
            self.result["requests"].append({"prompt_id": p.id, "run": run, **record})
            self.save()


def run_bench(
    settings: BenchSettings,
    label: str,
    output: Path | None,
    prompts: list[Prompt] | None = None,
    progress: bool = False,
    extra_fields: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Measure the server at ``settings.url``; write the result to ``output`` as it grows.

    On an error the partial result is saved with ``complete: false`` and ``error`` set,
    then the InputError propagates; on Ctrl-C likewise with KeyboardInterrupt.
    """
    session = BenchSession(settings, label, output, prompts, extra_fields)
    bar = None
    with recording(session.result, session.save):
        try:
            session.start()
            if progress:
                from tqdm import tqdm

                bar = tqdm(total=(settings.warmup + settings.runs) * len(session.prompts), desc=f"bench {label}",
                           unit="req", leave=False)
            for run in range(-settings.warmup, settings.runs):
                session.run_pass(run, None if bar is None else bar.update)
        finally:
            if bar is not None:
                bar.close()
    return session.result


def load_result(path: str) -> dict[str, Any]:
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
