"""llama.cpp itself as the test oracle (through llama-cpp-python's ctypes bindings).

paircheck re-implements, from GGUF metadata alone, what llama.cpp's vocab loader derives
and what ``common_speculative_are_compatible`` (common/speculative.cpp) decides. The
differential tests compare it with the real thing: this module loads a file with
``vocab_only=True`` through libllama and reads back the values that function compares.

Why a worker process: some malformed files make llama.cpp kill the whole process
(``GGML_ASSERT`` -> ``abort()``; e.g. two token texts that are equal after NUL truncation).
That must not take pytest down, and it is itself an observable outcome ("aborted"). So the
library is only ever loaded in a child process running this file as a script
(``python oracle.py --worker``). The child is long-lived (spawning one per file would cost
the interpreter start and the library load every time) and is restarted after a crash.

Protocol (parent -> child, one JSON line per request): ``{"path": str, "overrides": [...],
"pieces": [id, ...]}`` (``pieces``: ids whose ``llama_token_to_piece`` is wanted too).
Child -> parent, on a private copy of fd 1 (fd 1 itself is pointed at stderr so stray C
prints cannot corrupt the stream): an 8-byte little-endian header length, a JSON header,
an 8-byte blob length, then the blob: all token texts joined with NUL. The texts are
C strings (``llama_vocab_get_text``), so they cannot contain NUL themselves, which makes
NUL a safe separator and the transfer a single bytes object.

``oracle_compatible`` is a line-by-line transcription of ``common_speculative_are_compatible``
working on those dicts. It deliberately shares no code with paircheck.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

#: Constants from common/speculative.cpp (reference version: llama-cpp-python 0.3.36).
SPEC_VOCAB_MAX_SIZE_DIFFERENCE = 128
SPEC_VOCAB_CHECK_START_TOKEN_ID = 5

#: enum ggml_log_level values used by the worker's log filter.
_WARN, _ERROR = 3, 4

#: llama_vocab_type values (include/llama.h).
LLAMA_VOCAB_TYPE_NONE = 0

#: An override is (key, value); the value's Python type picks the llama_model_kv_override
#: tag: bool -> BOOL, int -> INT, float -> FLOAT, str -> STR (as ``--override-kv key=type:v``).
Override = tuple[str, Any]


def child_env() -> dict[str, str]:
    """The environment of a child that imports llama_cpp: the pinned build's bindings and
    libllama (tests/llamacpp_build.py), when they are built."""
    import llamacpp_build

    return {**os.environ, **(llamacpp_build.oracle_env() or {})}


def llama_cpp_available() -> tuple[bool, str]:
    """Whether ``llama_cpp`` can be imported *in a child process* (the way the oracle uses
    it); returns (ok, reason). Checked in a child so a broken native library cannot crash
    the test session."""
    proc = subprocess.run(
        [sys.executable, "-c", "import llama_cpp, sys; sys.stdout.write(llama_cpp.__version__)"],
        capture_output=True, text=True, timeout=120, env=child_env(),
    )
    if proc.returncode != 0:
        tail = (proc.stderr or "").strip().splitlines()[-1:] or ["?"]
        return False, f"llama_cpp not importable: {tail[0]}"
    return True, f"llama_cpp {proc.stdout.strip()}"


# --------------------------------------------------------------------------------------
# Parent side
# --------------------------------------------------------------------------------------

class _Worker:
    """One long-lived child process running :func:`_worker_main`."""

    def __init__(self) -> None:
        self._stderr = tempfile.TemporaryFile()
        # GGML_NO_BACKTRACE: on abort ggml would otherwise attach gdb to print a backtrace
        # (seconds per crash, and it buries the assertion message).
        env = dict(child_env(), GGML_NO_BACKTRACE="1")
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
            bufsize=0, env=env,
        )

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _read_exact(self, n: int) -> bytes | None:
        assert self.proc.stdout is not None
        chunks = []
        while n:
            b = self.proc.stdout.read(n)
            if not b:
                return None
            chunks.append(b)
            n -= len(b)
        return b"".join(chunks)

    def _read_frame(self) -> bytes | None:
        head = self._read_exact(8)
        if head is None:
            return None
        (n,) = struct.unpack("<Q", head)
        return self._read_exact(n)

    def stderr_tail(self, n_lines: int = 4) -> str:
        """The abort message (``...: GGML_ASSERT(...) failed``) if there is one, else the
        last lines the child wrote to stderr."""
        self._stderr.seek(0)
        lines = self._stderr.read().decode("utf-8", "replace").strip().splitlines()
        marked = [ln for ln in lines if "GGML_ASSERT" in ln or "GGML_ABORT" in ln
                  or "terminate called" in ln or "what():" in ln]
        return "\n".join(marked or lines[-n_lines:])

    def request(self, path: str, overrides: Sequence[Override], pieces: Sequence[int] = ()) -> dict[str, Any]:
        """Send one request; on a crash return ``{"loaded": False, "aborted": True}``."""
        assert self.proc.stdin is not None
        # Reset the stderr capture so a crash report shows only this request's output.
        self._stderr.seek(0)
        self._stderr.truncate()
        msg = json.dumps({"path": path, "overrides": [[k, _tag(v), v] for k, v in overrides],
                          "pieces": list(pieces)})
        try:
            self.proc.stdin.write(msg.encode("utf-8") + b"\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        header = self._read_frame()
        blob = self._read_frame() if header is not None else None
        if header is None or blob is None:
            rc = self.proc.wait(timeout=60)
            return {"loaded": False, "aborted": True, "returncode": rc,
                    "error": self.stderr_tail()}
        res: dict[str, Any] = json.loads(header)
        if res.get("loaded") and res.get("texts_present"):
            texts = blob.split(b"\0")
            assert len(texts) == res["n_tokens"], "text blob does not match n_tokens"
            res["texts"] = texts
        elif res.get("loaded"):
            res["texts"] = None  # vocab type NONE: llama.cpp cannot return texts
        del res["texts_present"]
        if "pieces" in res:  # latin-1 carries the piece bytes through JSON unchanged
            res["pieces"] = {int(i): v.encode("latin-1") for i, v in res["pieces"].items()}
        return res

    def close(self) -> None:
        if self.alive():
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.close()
                self.proc.wait(timeout=10)
            except Exception:
                self.proc.kill()
        self._stderr.close()


def _tag(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "str"
    raise TypeError(f"unsupported override value {v!r}")


_lock = threading.Lock()
_worker: _Worker | None = None
_cache: dict[tuple[str, tuple[tuple[str, str, Any], ...]], dict[str, Any]] = {}


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def llama_values(path: Path | str, kv_overrides: Iterable[Override] | Mapping[str, Any] | None = None
                 ) -> dict[str, Any]:
    """What llama.cpp's loader derives for ``path`` (loaded with ``vocab_only``).

    Returns, on success::

        {"loaded": True, "aborted": False, "vocab_type": int, "n_tokens": int,
         "bos": int, "eos": int, "eot": int, "add_bos": bool, "add_eos": bool,
         "eog": list[int], "texts": list[bytes] | None, "log": list[str]}

    ``texts`` are the raw ``llama_vocab_get_text`` C strings for every id (``None`` for
    vocab type NONE, where llama.cpp asserts instead of returning a text). On a load
    error: ``{"loaded": False, "aborted": False, "error": <loader message>}``; when the
    process aborted: ``{"loaded": False, "aborted": True, "error": <stderr tail>}``.

    Results are cached per (file sha256, overrides); treat them as read-only.
    """
    global _worker
    path = Path(path)
    if isinstance(kv_overrides, Mapping):
        ov: list[Override] = list(kv_overrides.items())
    else:
        ov = list(kv_overrides or [])
    key = (_sha256(path), tuple((k, _tag(v), v) for k, v in ov))
    with _lock:
        hit = _cache.get(key)
        if hit is not None:
            return hit
        if _worker is None or not _worker.alive():
            if _worker is not None:
                _worker.close()
            _worker = _Worker()
        res = _worker.request(str(path.resolve()), ov)
        if res.get("aborted"):
            _worker.close()
            _worker = None
        _cache[key] = res
        return res


def llama_pieces(path: Path | str, ids: Sequence[int]) -> dict[int, bytes]:
    """``llama_token_to_piece(vocab, id, ..., lstrip=0, special=true)`` for each id: the
    text llama.cpp shows for a token (``common_token_to_piece``, which the server's log
    lines quote), not the stored token text. Not cached."""
    global _worker
    with _lock:
        if _worker is None or not _worker.alive():
            if _worker is not None:
                _worker.close()
            _worker = _Worker()
        res = _worker.request(str(Path(path).resolve()), [], ids)
        if res.get("aborted"):
            _worker.close()
            _worker = None
    if not res.get("loaded"):
        raise ValueError(f"{path} does not load: {res.get('error')}")
    pieces: dict[int, bytes] = res["pieces"]
    return pieces


def clear_cache() -> None:
    """Forget cached results: for files whose verdict depends on other files (the other
    shards of a split model), which the cache key (the first file's hash) cannot see."""
    with _lock:
        _cache.clear()


def shutdown() -> None:
    """Stop the worker process (also registered with atexit)."""
    global _worker
    with _lock:
        if _worker is not None:
            _worker.close()
            _worker = None


import atexit  # noqa: E402  (kept next to its only use)

atexit.register(shutdown)


def oracle_compatible(t: Mapping[str, Any], d: Mapping[str, Any]) -> tuple[bool, str | None]:
    """Transcription of ``common_speculative_are_compatible(model_tgt, model_dft)``.

    ``t``/``d`` are :func:`llama_values` results. Returns ``(ok, first_failed_check)``
    with the check names "loadable", "vocab_type", "bos", "eos", "vocab_size",
    "token_text". "loadable" is not in the C++ function: there, a side that fails to load
    (or aborts) never reaches it; the server exits instead.

    Vocab type NONE on both sides with ``min(n) > 5`` makes the C++ loop call
    ``llama_vocab_get_text``, which ``GGML_ASSERT``s (a process abort); that is reported
    as a "token_text" failure, since no speculation happens either way.
    """
    if not t.get("loaded") or not d.get("loaded"):
        return False, "loadable"

    # if (vocab_type_tgt != vocab_type_dft) return false;
    if t["vocab_type"] != d["vocab_type"]:
        return False, "vocab_type"

    # if (add_bos(tgt) != add_bos(dft) || (add_bos(tgt) && bos(tgt) != bos(dft)))
    if t["add_bos"] != d["add_bos"] or (t["add_bos"] and t["bos"] != d["bos"]):
        return False, "bos"

    # same with eos
    if t["add_eos"] != d["add_eos"] or (t["add_eos"] and t["eos"] != d["eos"]):
        return False, "eos"

    n_tgt, n_dft = t["n_tokens"], d["n_tokens"]
    vocab_diff = n_tgt - n_dft if n_tgt > n_dft else n_dft - n_tgt
    if vocab_diff > SPEC_VOCAB_MAX_SIZE_DIFFERENCE:
        return False, "vocab_size"

    n_min = min(n_tgt, n_dft)
    if n_min > SPEC_VOCAB_CHECK_START_TOKEN_ID:
        tt, dt = t["texts"], d["texts"]
        if tt is None or dt is None:  # type NONE: get_text asserts -> abort
            return False, "token_text"
        for i in range(SPEC_VOCAB_CHECK_START_TOKEN_ID, n_min):
            # std::strcmp on C strings; the texts are already NUL-free.
            if tt[i] != dt[i]:
                return False, "token_text"

    return True, None


# --------------------------------------------------------------------------------------
# Child side (runs as ``python oracle.py --worker``; never imported into pytest's process
# in a way that loads libllama)
# --------------------------------------------------------------------------------------

def _worker_main() -> None:  # pragma: no cover - runs in the child
    import ctypes

    proto = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)  # anything the C side prints to stdout goes to the stderr capture

    import llama_cpp as L

    log_lines: list[tuple[int, str]] = []

    @L.llama_log_callback
    def _log(level: int, text: bytes, _ud: ctypes.c_void_p) -> None:
        # enum ggml_log_level (ggml/include/ggml.h of this version):
        # 0 NONE, 1 DEBUG, 2 INFO, 3 WARN, 4 ERROR, 5 CONT.
        # Keep WARN/ERROR (and their continuations) to report the loader's messages.
        if level in (_WARN, _ERROR):
            log_lines.append((level, text.decode("utf-8", "replace")))
        elif level == 5 and log_lines:
            lv, prev = log_lines[-1]
            log_lines[-1] = (lv, prev + text.decode("utf-8", "replace"))

    L.llama_log_set(_log, ctypes.c_void_p(0))
    L.llama_backend_init()

    get_text = L.llama_vocab_get_text
    is_eog = L.llama_vocab_is_eog

    def send(header: dict[str, Any], blob: bytes = b"") -> None:
        hb = json.dumps(header).encode("utf-8")
        proto.write(struct.pack("<Q", len(hb)) + hb + struct.pack("<Q", len(blob)) + blob)

    for line in sys.stdin:
        req = json.loads(line)
        log_lines.clear()
        params = L.llama_model_default_params()
        params.vocab_only = True
        overrides = req.get("overrides") or []
        ov_arr = None
        if overrides:
            ov_arr = (L.llama_model_kv_override * (len(overrides) + 1))()
            for i, (k, tag, v) in enumerate(overrides):
                o = ov_arr[i]
                o.key = k.encode("utf-8")
                if tag == "bool":
                    o.tag = L.LLAMA_KV_OVERRIDE_TYPE_BOOL
                    o.value.val_bool = bool(v)
                elif tag == "int":
                    o.tag = L.LLAMA_KV_OVERRIDE_TYPE_INT
                    o.value.val_i64 = int(v)
                elif tag == "float":
                    o.tag = L.LLAMA_KV_OVERRIDE_TYPE_FLOAT
                    o.value.val_f64 = float(v)
                else:
                    o.tag = L.LLAMA_KV_OVERRIDE_TYPE_STR
                    o.value.val_str = str(v).encode("utf-8")
            ov_arr[len(overrides)].key = b""  # terminator
            params.kv_overrides = ctypes.cast(ov_arr, ctypes.POINTER(L.llama_model_kv_override))

        model = L.llama_model_load_from_file(req["path"].encode("utf-8"), params)
        if not model:
            errors = [t.strip() for lv, t in log_lines if lv == _ERROR]
            send({"loaded": False, "aborted": False, "error": "\n".join(errors),
                  "log": [t.strip() for _, t in log_lines], "texts_present": False})
            continue

        vocab = L.llama_model_get_vocab(model)
        vtype = int(L.llama_vocab_type(vocab))
        n = int(L.llama_vocab_n_tokens(vocab))
        texts_present = vtype != LLAMA_VOCAB_TYPE_NONE
        blob = b"\0".join(get_text(vocab, i) for i in range(n)) if texts_present else b""
        pieces = {}
        for tok in req.get("pieces") or []:
            buf = ctypes.create_string_buffer(256)
            size = L.llama_token_to_piece(vocab, tok, buf, len(buf), 0, True)
            if size < 0:  # too small: -size is the size needed
                buf = ctypes.create_string_buffer(-size)
                size = L.llama_token_to_piece(vocab, tok, buf, len(buf), 0, True)
            pieces[str(tok)] = buf.raw[:size].decode("latin-1")
        header = {
            "loaded": True,
            "aborted": False,
            "vocab_type": vtype,
            "n_tokens": n,
            "bos": int(L.llama_vocab_bos(vocab)),
            "eos": int(L.llama_vocab_eos(vocab)),
            "eot": int(L.llama_vocab_eot(vocab)),
            "add_bos": bool(L.llama_vocab_get_add_bos(vocab)),
            "add_eos": bool(L.llama_vocab_get_add_eos(vocab)),
            "eog": [i for i in range(n) if is_eog(vocab, i)] if texts_present else [],
            "log": [t.strip() for _, t in log_lines],
            "texts_present": texts_present,
        }
        if req.get("pieces"):
            header["pieces"] = pieces
        L.llama_model_free(model)
        send(header, blob)


if __name__ == "__main__":
    if sys.argv[1:] == ["--worker"]:
        _worker_main()
    else:  # debugging aid: python tests/oracle.py FILE... prints the derived values
        for p in sys.argv[1:]:
            r = dict(llama_values(p))
            texts = r.pop("texts", None)
            r.pop("eog", None)
            print(p, json.dumps(r), "texts[:8]=", texts[:8] if texts else texts)


def require_oracle() -> None:
    """Fail (CI, ``PAIRCHECK_REQUIRE_ORACLE=1``) or skip (local) without llama_cpp."""
    import pytest

    ok, why = llama_cpp_available()
    if not ok:
        if os.environ.get("PAIRCHECK_REQUIRE_ORACLE") == "1":
            pytest.fail(f"oracle required (PAIRCHECK_REQUIRE_ORACLE=1) but {why}; "
                        "build it with: python tests/llamacpp_build.py", pytrace=False)
        pytest.skip(f"llama.cpp oracle unavailable ({why}); python tests/llamacpp_build.py")
