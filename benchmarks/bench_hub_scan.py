"""What does ``paircheck scan --hub`` cost, offline and against a Hub, next to the plain scan?

Builds the stand-in Hub of the tests (tests/hub_standin.py: real Qwen2 vocabulary GGUFs with the
tensor infos of Qwen2.5 0.5B to 14B, a real HTTP server on 127.0.0.1), then times, in the same
run and as whole processes, for the Qwen2.5-14B-Instruct Q4_K_M file as the target:

  * baseline: ``paircheck scan --no-default-dirs TARGET`` (no Hub);
  * offline: the same with ``--hub`` and ``HF_HUB_OFFLINE=1`` (the registry's answer; issue 23:
    under a second);
  * no network: ``--hub`` with HF_ENDPOINT on a port nothing listens on (one line, no retries);
  * cold: ``--hub`` against the stand-in with an empty cache; warm: the same again.

Each is run ``--runs`` times; the medians, their ratio to the baseline, the requests the server
saw and the bytes it sent (against the total size of the files in the repos read) are printed.

    python benchmarks/bench_hub_scan.py [--runs 5]

Needs the test corpus (downloaded on first use, see tests/corpus.py).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "tests"), str(REPO / "fixtures")]

TARGET = ("Qwen/Qwen2.5-14B-Instruct-GGUF", "qwen2.5-14b-instruct-q4_k_m.gguf")


def _time(args: list[str], env: dict[str, str]) -> tuple[float, float, dict[str, object] | None]:
    """Wall and CPU (user + system) seconds of one run, and its JSON when it printed some."""
    start = time.perf_counter()
    before = os.times()
    proc = subprocess.run([sys.executable, "-m", "paircheck", *args], capture_output=True, text=True, env=env)
    after = os.times()
    wall = time.perf_counter() - start
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"paircheck {' '.join(args)} failed: {proc.stderr}")
    return wall, cpu, json.loads(proc.stdout) if proc.stdout.startswith("{") else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    opts = parser.parse_args()

    from corpus import corpus_dir
    from httpserver import TestServer
    from hub_standin import build

    corpus = corpus_dir()
    with tempfile.TemporaryDirectory(prefix="paircheck-bench-hub-") as tmp:
        root = Path(tmp)
        standin = build(root / "hub", lambda name: corpus / f"ggml-vocab-{name}.gguf")
        target = str(standin.local(*TARGET))
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            closed = sock.getsockname()[1]
        base = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
        base.update(PYTHONPATH=str(REPO), HF_HOME=str(root / "hf-home"), HF_TOKEN="")
        with TestServer() as server:
            standin.serve(server)
            rows: dict[str, list[tuple[float, float]]] = {}
            seen: dict[str, tuple[int, int, object]] = {}
            cases = [
                ("baseline (scan, no Hub)", ["scan", "--json", "--no-default-dirs", target], {}),
                ("offline (--hub, HF_HUB_OFFLINE=1)", ["scan", "--hub", "--json", "--no-default-dirs", target],
                 {"HF_HUB_OFFLINE": "1"}),
                ("no network (--hub, refused port)", ["scan", "--hub", "--json", "--no-default-dirs", target],
                 {"HF_ENDPOINT": f"http://127.0.0.1:{closed}"}),
            ]
            for label, args, extra in cases:
                for i in range(opts.runs):
                    env = {**base, "HF_ENDPOINT": server.url, "HF_HUB_CACHE": str(root / f"c{i}"),
                           "PAIRCHECK_CACHE_HOME": str(root / f"p-{label[:4]}{i}"), **extra}
                    server.reset_counters()
                    wall, cpu, _ = _time(args, env)
                    rows.setdefault(label, []).append((wall, cpu))
                    seen[label] = (server.counters.requests, server.counters.body_bytes, None)
            for i in range(opts.runs):
                env = {**base, "HF_ENDPOINT": server.url, "HF_HUB_CACHE": str(root / f"hub{i}"),
                       "PAIRCHECK_CACHE_HOME": str(root / f"pc-hub{i}")}
                for label in ("cold (--hub, stand-in Hub)", "warm (--hub, summaries cached)"):
                    server.reset_counters()
                    wall, cpu, doc = _time(["scan", "--hub", "--json", "--no-default-dirs", target], env)
                    rows.setdefault(label, []).append((wall, cpu))
                    judged = [r for r in (doc or {}).get("candidates", []) if r.get("found_in") == "hub"]  # type: ignore[union-attr]
                    ggufs = sum(r["file_bytes"] or 0 for r in judged)
                    seen[label] = (server.counters.requests, server.counters.body_bytes, (len(judged), ggufs))

    base_wall = statistics.median(w for w, _ in rows["baseline (scan, no Hub)"])
    base_cpu = statistics.median(c for _, c in rows["baseline (scan, no Hub)"])
    print(f"paircheck scan --hub, {opts.runs} runs each, medians (wall / CPU: user + system of the process), "
          f"target {TARGET[1]}")
    print(f"{'':36} {'wall':>8} {'CPU':>8} {'ratio':>13} {'requests':>9} {'bytes sent':>12}")
    for label, values in rows.items():
        wall = statistics.median(w for w, _ in values)
        cpu = statistics.median(c for _, c in values)
        requests, sent, _ = seen[label]
        ratio = f"{wall / base_wall:.2f}x/{cpu / base_cpu:.2f}x"
        print(f"{label:36} {wall:7.2f}s {cpu:7.2f}s {ratio:>13} {requests:9d} {sent:12,d}")
    _, sent, extra = seen["cold (--hub, stand-in Hub)"]
    if isinstance(extra, tuple):
        n, ggufs = extra
        print(f"cold: {n} candidates from the Hub; the server sent {sent / 1e6:.1f} MB in all (API answers and "
              f"tokenizer files included); the GGUF files judged hold {ggufs / 1e9:.1f} GB")


if __name__ == "__main__":
    main()
