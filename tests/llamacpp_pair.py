"""The pair check as the pinned llama-server runs it: the ground truth for paircheck's
llama.cpp draft-simple rule.

``run_pair(binary, target, draft)`` starts ``llama-server -m TARGET -md DRAFT --spec-type
draft-simple`` (the pinned build, see ``llamacpp_build.py``) on runnable models (see
``tiny_model.py``), reads what it logs and how it ends, and returns a :class:`ServerVerdict`:

* ``target_refused`` / ``draft_refused``: ``load_model`` logged "failed to load model" /
  "failed to load draft model" and the server exited (tools/server/server-context.cpp);
* ``aborted_loading``: the process died on a signal (``GGML_ASSERT`` -> abort) while
  reading a model, ``side`` naming the file whose metadata it read last. (With the default
  ``--fit on`` the server reads both files once to fit them into memory before it loads
  the target for real, so a draft that aborts the loader kills the server first thing.)
* ``aborted_checking``: the process died inside the compatibility check itself (after
  "adding speculative implementation 'draft-simple'"), e.g. ``llama_vocab_get_text`` on a
  vocabulary without texts;
* ``incompatible``: ``common_speculative_are_compatible`` (common/speculative.cpp) returned
  false: the server logs "failed to initialize speculative decoding context: ..." and then
  runs WITHOUT speculation. ``check`` is the check whose log line preceded it, ``values``
  the numbers and texts that line quotes, ``level`` its log level ("W" warning, shown by
  default; "D" debug, shown only with ``-lv 5``);
* ``accepted``: the server loaded both models and initialised speculation.

For ``accepted`` and ``incompatible``, with ``prompt`` given, one greedy completion is then
requested: ``ran`` tells whether it answered, ``draft_n`` how many tokens the draft
proposed (None: the server did not speculate), or ``abort`` holds the ``GGML_ABORT`` line
when the process died during it (a token id one model lacks: "get_sub_batch: failed to
add token ...").

The server runs at debug verbosity with level prefixes (``-lv 5 --log-prefix``) so that the
debug-only lines of the size and text checks are visible and every line says its level.

:func:`disagreements` then lists where that differs from paircheck's report on the same two
files (``run_pair`` itself knows nothing of paircheck).
"""

from __future__ import annotations

import json
import os
import re
import resource
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oracle import llama_pieces, llama_values

from paircheck._engine import llamacpp as paircheck_llamacpp
from paircheck.findings import Report
from paircheck.pipeline import check_pair
from paircheck.token_display import show

HOST = "127.0.0.1"
LOAD_TIMEOUT_S = 120.0
RUN_TIMEOUT_S = 120.0

#: One worker thread each: the tests share a 2-core machine, and the models are tiny.
BASE_FLAGS = ("--ctx-size", "256", "--parallel", "1", "--threads", "1", "--threads-batch", "1",
              "-lv", "5", "--log-prefix", "--log-colors", "off")

# The log lines of common_speculative_are_compatible (common/speculative.cpp), in its order.
# --log-prefix writes "M.SS.mmm.uuu L " (time since start, level letter) before each
# message; the SPC_* macros then write "spec <function name cut to 12>: ".
_PREFIX = r"(?:\d+\.\d+\.\d+\.\d+ )?"
_SPEC = r"^" + _PREFIX + r"(?P<level>[WD]) spec [^:]*: "
CHECK_LINES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("vocab_type", re.compile(
        _SPEC + r"draft model vocab type must match target model to use speculation but "
        r"vocab_type_dft = (?P<draft>-?\d+) while vocab_type_tgt = (?P<target>-?\d+)$", re.M)),
    ("bos", re.compile(
        _SPEC + r"draft model bos tokens must match target model to use speculation\. "
        r"add: (?P<target_add>\d+) - (?P<draft_add>\d+), id: (?P<target_id>-?\d+) - (?P<draft_id>-?\d+)\)$", re.M)),
    ("eos", re.compile(
        _SPEC + r"draft model eos tokens must match target model to use speculation\. "
        r"add: (?P<target_add>\d+) - (?P<draft_add>\d+), id: (?P<target_id>-?\d+) - (?P<draft_id>-?\d+)\)$", re.M)),
    ("vocab_size", re.compile(
        _SPEC + r"draft model vocab must closely match target model to use speculation but "
        r"target vocab size (?P<target>\d+) does not match draft vocab size (?P<draft>\d+) - "
        r"difference (?P<difference>\d+), max allowed (?P<max_difference>\d+)$", re.M)),
    # The pieces may hold newlines or quotes: everything up to the line's own ending.
    ("token_text", re.compile(
        _SPEC + r"draft model vocab must match target model to use speculation but "
        r"token (?P<first_id>\d+) content differs - target '(?P<target_piece>.*?)', "
        r"draft '(?P<draft_piece>.*?)'\n(?=" + _PREFIX + r"[IWED] |\Z)", re.M | re.S)),
)
SPEC_INIT_FAILED = "failed to initialize speculative decoding context: "
TARGET_REFUSED = "failed to load model, '"
DRAFT_REFUSED = "failed to load draft model, '"
LOADED = "model loaded"
_ABORT = re.compile(r"^.*(?:GGML_ASSERT|GGML_ABORT|: (?:get_sub_batch|\w+): failed to add token).*$", re.M)
_ADD_TOKEN = re.compile(r"get_sub_batch: failed to add token (?P<id>-?\d+)")


@dataclass
class ServerVerdict:
    outcome: str  # target_refused, draft_refused, aborted_loading, aborted_checking, incompatible, accepted
    log: str
    returncode: int | None
    side: str | None = None  # for the refusals and aborts: "target" or "draft"
    check: str | None = None  # for "incompatible": the failing check's name
    level: str | None = None  # log level of the failing check's line: "W" or "D"
    line: str | None = None  # that line's message (after "spec <function>: ")
    values: dict[str, Any] = field(default_factory=dict)
    generic_error: str | None = None  # the "failed to initialize speculative ..." line
    ran: bool | None = None  # with a prompt: did the completion answer
    draft_n: int | None = None
    draft_n_accepted: int | None = None
    abort: str | None = None  # the abort line, when the process died
    abort_token: int | None = None  # the id of "failed to add token ID"
    seconds: float = 0.0

    def summary(self) -> str:
        """One line for assertion messages."""
        parts = [self.outcome]
        for name in ("side", "check", "level", "values", "ran", "draft_n", "abort", "returncode"):
            value = getattr(self, name)
            if value not in (None, {}):
                parts.append(f"{name}={value!r}")
        return " ".join(parts)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return ""


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


def _int(value: str) -> int:
    return int(value)


def parse_check(log: str) -> tuple[str | None, str | None, dict[str, Any], str | None]:
    """The check line of common_speculative_are_compatible in ``log``: (name, level, values,
    message)."""
    for name, pattern in CHECK_LINES:
        m = pattern.search(log)
        if m is None:
            continue
        values: dict[str, Any] = {}
        for key, raw in m.groupdict().items():
            if key == "level":
                continue
            values[key] = raw if key.endswith("_piece") else _int(raw)
        for key in ("target_add", "draft_add"):
            if key in values:
                values[key] = bool(values[key])
        message = m.group(0)[m.end("level") - m.start(0):].split(": ", 1)[1].rstrip("\n")
        return name, m["level"], values, message
    return None, None, {}, None


_META = re.compile(r"llama_model_loader: loaded meta data with .* from (?P<path>.*) \(version ")


def _side_loading(log: str, target: Path, draft: Path) -> str | None:
    """Which file the loader read last (its "loaded meta data ... from PATH" line)."""
    paths = _META.findall(log)
    if not paths:
        return None
    last = paths[-1]
    return {str(target): "target", str(draft): "draft"}.get(last)


def _complete(url: str, prompt: str, n_predict: int) -> dict[str, Any]:
    body = json.dumps({"prompt": prompt, "n_predict": n_predict, "temperature": 0.0,
                       "cache_prompt": False}).encode()
    req = urllib.request.Request(f"{url}/completion", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=RUN_TIMEOUT_S) as resp:
        result: dict[str, Any] = json.loads(resp.read())
        return result


def _no_core_dump() -> None:  # pragma: no cover - runs in the child before exec
    # The crash cases abort the server on purpose: no core file in the working directory.
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run_pair(binary: Path | str, target: Path, draft: Path, log_path: Path, prompt: str | None = None,
             n_predict: int = 8, extra: Sequence[str] = (), spec_type: str | None = "draft-simple") -> ServerVerdict:
    """Start llama-server on TARGET + DRAFT (``--spec-type SPEC_TYPE`` unless None) and report
    what happened."""
    flags = [*(("--spec-type", spec_type) if spec_type else ()), *extra]
    for _ in range(3):
        verdict = _run_pair(binary, target, draft, log_path, prompt, n_predict, flags)
        # The free port was taken between our probe and the server's bind: try another.
        if verdict.outcome == "port_taken":
            continue
        if verdict.outcome in ("aborted_loading", "aborted_checking"):
            _settle_abort(binary, target, draft, log_path, verdict)
        return verdict
    raise AssertionError(f"llama-server could not bind a port three times: {log_path}")


def _settle_abort(binary: Path | str, target: Path, draft: Path, log_path: Path, verdict: ServerVerdict) -> None:
    """Where an abort happened, from what each file does alone, not from the log.

    llama.cpp logs through a worker thread (common/log.cpp), so the lines written just before
    an abort (the "adding speculative implementation" line, the file being read) may never
    reach the log. Each file is loaded alone, without a draft: one that aborts on its own
    aborted the pair while loading; when both load alone, the abort was in the pair check.
    """
    alone = []
    for side, path in (("target", target), ("draft", draft)):
        solo = _run_pair(binary, path, path, log_path.with_suffix(f".{side}-alone.log"), None, 1, ["--spec-type",
                         "none"], with_draft=False)
        alone.append((side, solo.outcome))
    aborted = [side for side, outcome in alone if outcome == "aborted_loading"]
    if aborted:
        verdict.outcome, verdict.side = "aborted_loading", aborted[0]
    else:
        verdict.outcome, verdict.side = "aborted_checking", None


def _run_pair(binary: Path | str, target: Path, draft: Path, log_path: Path, prompt: str | None,
              n_predict: int, extra: Sequence[str], with_draft: bool = True) -> ServerVerdict:
    start = time.monotonic()
    port = _free_port()
    command = [str(binary), "--host", HOST, "--port", str(port), "-m", str(target),
               *(("-md", str(draft)) if with_draft else ()), *BASE_FLAGS, *extra]
    # GGML_NO_BACKTRACE: an abort would otherwise attach gdb for a backtrace (seconds).
    env = dict(os.environ, GGML_NO_BACKTRACE="1")
    with open(log_path, "wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env, start_new_session=True, preexec_fn=_no_core_dump)
    try:
        deadline = time.monotonic() + LOAD_TIMEOUT_S
        while True:
            code = proc.poll()
            log = _read(log_path)
            if code is not None or LOADED in log:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"llama-server neither loaded nor exited in {LOAD_TIMEOUT_S:g} s: {log_path}")
            time.sleep(0.05)
        if code is not None:
            proc.wait()
            log = _read(log_path)
            verdict = ServerVerdict("", log, code)
            if TARGET_REFUSED in log:
                verdict.outcome, verdict.side = "target_refused", "target"
            elif DRAFT_REFUSED in log:
                verdict.outcome, verdict.side = "draft_refused", "draft"
            elif code < 0:
                checking = "adding speculative implementation 'draft-simple'" in log
                verdict.outcome = "aborted_checking" if checking else "aborted_loading"
                verdict.side = None if checking else _side_loading(log, target, draft)
                m = _ABORT.search(log)
                verdict.abort = m.group(0).strip() if m else f"signal {-code}"
            elif "couldn't bind HTTP server socket" in log:
                verdict.outcome = "port_taken"
            else:
                raise AssertionError(f"llama-server exited with {code} for an unknown reason: {log_path}")
            verdict.seconds = time.monotonic() - start
            return verdict

        verdict = ServerVerdict("accepted", log, None)
        generic = next((ln for ln in log.splitlines() if SPEC_INIT_FAILED in ln), None)
        if generic is not None:
            verdict.outcome = "incompatible"
            verdict.generic_error = generic
            verdict.check, verdict.level, verdict.values, verdict.line = parse_check(log)
        if prompt is not None:
            try:
                result = _complete(f"http://{HOST}:{port}", prompt, n_predict)
                timings = result.get("timings", {})
                verdict.ran = True
                verdict.draft_n = timings.get("draft_n")
                verdict.draft_n_accepted = timings.get("draft_n_accepted")
            except (urllib.error.URLError, ConnectionError, OSError):
                verdict.ran = False
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    pass
        _stop(proc)
        verdict.returncode = proc.returncode
        verdict.log = _read(log_path)
        if verdict.ran is False:
            m = _ABORT.search(verdict.log)
            verdict.abort = m.group(0).strip() if m else None
            t = _ADD_TOKEN.search(verdict.log)
            verdict.abort_token = int(t["id"]) if t else None
        verdict.seconds = time.monotonic() - start
        return verdict
    finally:
        _stop(proc)


# --------------------------------------------------------------------------------------
# Comparing with paircheck
# --------------------------------------------------------------------------------------

def paircheck_report(target: Path, draft: Path, **kwargs: Any) -> Report:
    """paircheck's llama.cpp draft-simple report on the two files (no registry, no fingerprint)."""
    return check_pair(str(target), str(draft), registry=False, fingerprint=False, **kwargs)


def disagreements(report: Report, got: ServerVerdict, target: Path, draft: Path) -> list[str]:
    """Where llama-server's behaviour differs from what paircheck says (empty: agree)."""
    first = report.first_failure
    out: list[str] = []

    def differ(what: str, paircheck: object, server: object) -> None:
        if paircheck != server:
            out.append(f"{what}: paircheck {paircheck!r}, llama-server {server!r}")

    if first is None:
        differ("outcome", "accepted", got.outcome)
        if got.outcome != "accepted":
            return out
        tail = next((w for w in report.warnings if w.name == "vocab_tail"), None)
        if got.ran is None:  # only loaded: nothing ran to compare
            return out
        if got.ran:
            differ("speculation ran (draft tokens proposed)", True, bool(got.draft_n))
        elif tail is None:
            out.append(f"the server died running a pair paircheck accepts without a warning: {got.abort}")
        elif got.abort_token is None or not tail.details["first_id"] <= got.abort_token <= tail.details["last_id"]:
            out.append(f"abort {got.abort!r} is not for an id in {tail.details['first_id']}..{tail.details['last_id']}")
        return out

    details = first.details
    says = report.engine_says or ""
    if details.get("aborts"):
        # paircheck says the process dies on an assertion, with no error line: the same one fires.
        if first.name == "loadable":
            differ("outcome", "aborted_loading", got.outcome)
            differ("side", details["side"], got.side)
        else:
            differ("outcome", "aborted_checking", got.outcome)
        said = re.search(r"GGML_ASSERT\((.*)\) failed", says)
        if "no error line" not in says or said is None or got.abort is None or said.group(0) not in got.abort:
            out.append(f"the process aborts on {got.abort!r}; paircheck says llama.cpp prints {says!r}")
        return out
    if first.name == "loadable":
        side = details["side"]
        differ("outcome", f"{side}_refused", got.outcome)
        line = next((ln for ln in got.log.splitlines() if "error loading model" in ln), "")
        if details["error"] not in line:
            out.append(f"loader error: paircheck {details['error']!r}, llama-server {line!r}")
        # What paircheck says llama-server prints: every fixed part is in its error lines.
        errors = [ln.split(": ", 1)[-1] for ln in got.log.splitlines() if " E " in ln[:16]]
        # its parts are separated by "..." or ", then: " (llama.cpp prints them on separate lines)
        claimed = [part.strip(" ,'") for part in re.split(r"\.\.\.|, then: ", says) if part.strip(" ,'")]
        missing = [part for part in claimed if not any(part in ln for ln in errors)]
        if not claimed or missing:
            out.append(f"paircheck says llama.cpp prints {says!r}; its error lines are {errors}")
        return out

    differ("outcome", "incompatible", got.outcome)
    differ("failing check", first.name, got.check)
    if got.outcome != "incompatible" or got.check != first.name:
        return out
    if first.name == "token_text":
        differ("first differing id", details["first_id"], got.values["first_id"])
        i = got.values["first_id"]
        # The server quotes pieces (llama_token_to_piece); paircheck quotes texts. Both
        # must be those of the same id in the same file, as libllama derives them.
        for side, path in (("target", target), ("draft", draft)):
            piece = llama_pieces(path, [i])[i].decode("utf-8", "replace")
            differ(f"{side} piece of id {i}", piece, got.values[f"{side}_piece"])
            differ(f"{side} text of id {i}", show(llama_values(path)["texts"][i]), details[f"{side}_text"])
    else:
        for key, value in got.values.items():
            differ(key, details.get(key), value)
    # The log level paircheck claims, and the line it says llama.cpp prints.
    differ("generic error", paircheck_llamacpp.SPEC_INIT_FAILED,
           (got.generic_error or "").split("load_model: ", 1)[-1])
    if got.level == "D":
        if "debug level" not in says:
            out.append(f"the reason is logged at debug level only, paircheck says {says!r}")
    else:
        if not got.line or got.line not in says:
            out.append(f"llama-server warns {got.line!r}; paircheck says {says!r}")
    if got.ran is not None:
        # Refused pairs are not fatal: the server serves, without the draft.
        differ("serves without speculation", (True, None), (got.ran, got.draft_n))
        if "without speculation" not in says:
            out.append(f"paircheck does not say that the server runs without speculation: {says!r}")
    return out
