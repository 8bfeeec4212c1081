"""How fast is ``paircheck scan`` over 100 files, cold and warm, against baselines in the same run?

Builds N GGUF files (llama.cpp's 19 real vocab files copied under different names), by default
in the places models are usually kept, under a home of its own: the Hugging Face cache
(snapshots symlinked to blobs), LM Studio's folder, llama.cpp's cache and an Ollama store (blobs
named by manifests), a quarter each; ``--folder`` puts them in one nested folder instead, scanned
with ``--no-default-dirs``. Then it times, as whole processes, in the same run:
  * baseline: ``paircheck TARGET DRAFT`` once per file (what a script without scan would do);
  * serial: a cold scan with ``--jobs 1`` (every file read in the scan's own process);
  * cold: the scan as a user runs it (``--jobs`` by default: the CPUs, at most 4), empty cache;
  * warm: the same scan again (every summary from the cache).
The scans are repeated (``--repeat``, interleaved) and their medians reported, each as wall
time and as CPU time (user + system of the process and of the workers it waited for, from
os.wait4): on a machine others share, wall time measures them too, CPU time much less so; the
ratios against the baselines are taken within this run. The load average before and after is
printed for that reason. Peak memory is each scan's own max RSS, workers included (os.wait4).

Bytecode is cached in a folder of its own (``PYTHONPYCACHEPREFIX``) and warmed by a first,
untimed scan, as an installed paircheck has its .pyc files: with ``PYTHONDONTWRITEBYTECODE``
set, as in some development shells, every run compiles every module again (about 0.15 s here).

    python benchmarks/bench_scan.py [--files 100] [--target qwen2] [--repeat 3] [--folder] [--no-baseline]

Goal (issue 50, after issue 12's 10 s and 1 s): 100 files in the usual folders in at most 3 s
cold and 0.2 s warm on a quiet 2-core machine; ``goal_met`` says whether this run's medians met
it. ``--no-baseline`` skips the 100 pair checks (a minute). Needs the test corpus (downloaded on
first use, see tests/corpus.py).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GOAL_COLD_S, GOAL_WARM_S = 3.0, 0.2  # issue 50: 100 files on a quiet 2-core machine
sys.path.insert(0, str(REPO / "tests"))
# What would point a scan elsewhere than the benchmark's own home.
STORE_VARIABLES = ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME", "LLAMA_CACHE",
                   "OLLAMA_MODELS", "PYTHONDONTWRITEBYTECODE")


@dataclass
class Run:
    returncode: int
    stdout: str
    wall_s: float
    cpu_s: float  # user + system, this process and the children it waited for
    max_rss_mib: float  # the largest of this process and its children (os.wait4)


def _run(args: list[str], env: dict[str, str]) -> Run:
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "paircheck", *args], stdout=out, stderr=subprocess.DEVNULL,
                                env=env, cwd=REPO)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        out.seek(0)
        return Run(os.waitstatus_to_exitcode(status), out.read().decode(), wall, usage.ru_utime + usage.ru_stime,
                   usage.ru_maxrss / 1024)


def _in_stores(home: Path, sources: list[Path], files: int) -> list[Path]:
    """``files`` copies spread over the four stores, as their tools lay them out; the paths a
    scan names them by (an Ollama model by its blob)."""
    placed = []
    for i in range(files):
        src = sources[i % len(sources)]
        store = i % 4
        if store == 0:  # huggingface_hub: bytes in blobs/, a relative symlink in snapshots/
            repo = home / ".cache" / "huggingface" / "hub" / f"models--org{i % 5}--{src.stem}-{i}-GGUF"
            blob = repo / "blobs" / hashlib.sha256(f"blob {i}".encode()).hexdigest()
            blob.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, blob)
            link = repo / "snapshots" / ("a" * 40) / f"{src.stem}-{i}-Q4_K_M.gguf"
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(os.path.relpath(blob, link.parent))
            placed.append(link)
        elif store == 1:  # LM Studio: PUBLISHER/REPO/FILE.gguf
            dest = home / ".lmstudio" / "models" / f"pub{i % 5}" / f"{src.stem}-{i}-GGUF" / f"{src.stem}-Q4_K_M.gguf"
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)
            placed.append(dest)
        elif store == 2:  # llama.cpp's -hf cache: flat, ORG_REPO_FILE.gguf
            dest = home / ".cache" / "llama.cpp" / f"org_{src.stem}-{i}-GGUF_{src.stem}-Q4_K_M.gguf"
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)
            placed.append(dest)
        else:  # Ollama: blobs/sha256-HEX named by manifests/HOST/NAMESPACE/MODEL/TAG
            ollama = home / ".ollama" / "models"
            digest = hashlib.sha256(f"ollama {i}".encode()).hexdigest()
            blob = ollama / "blobs" / f"sha256-{digest}"
            blob.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, blob)
            manifest = ollama / "manifests" / "registry.ollama.ai" / "library" / f"model{i}" / "latest"
            manifest.parent.mkdir(parents=True, exist_ok=True)
            layer = {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{digest}"}
            manifest.write_text(json.dumps({"schemaVersion": 2, "layers": [layer]}), encoding="utf-8")
            placed.append(blob)
    return placed


def _in_folder(models: Path, sources: list[Path], files: int) -> list[Path]:
    placed = []
    for i in range(files):
        src = sources[i % len(sources)]
        dest = models / f"org{i % 7}" / f"repo{i % 13}" / f"{src.stem}-copy{i:03d}.gguf"
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
        placed.append(dest)
    return placed


def _median(runs: list[Run], field: str) -> float:
    return round(statistics.median(getattr(r, field) for r in runs), 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--target", default="qwen2", help="short name of the target's vocab file")
    parser.add_argument("--repeat", type=int, default=3, help="cold, serial and warm scans, each this many times")
    parser.add_argument("--folder", action="store_true", help="one nested folder, not the usual stores")
    parser.add_argument("--no-baseline", action="store_true", help="skip the 100 pair checks (the scans alone)")
    opts = parser.parse_args()

    from corpus import corpus_files

    sources = sorted(corpus_files())
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="paircheck-bench-scan-") as tmp:
        root = Path(tmp)
        home = root / "home"
        target = home / "models" / "target.gguf"  # beside it: nothing else
        target.parent.mkdir(parents=True)
        shutil.copyfile(next(p for p in sources if p.name == f"ggml-vocab-{opts.target}.gguf"), target)
        env = {k: v for k, v in os.environ.items() if k not in STORE_VARIABLES}
        env.update(HOME=str(home), PAIRCHECK_CACHE_HOME=str(root / "cache"), PYTHONPATH=str(REPO),
                   PYTHONPYCACHEPREFIX=str(root / "pycache"))
        if opts.folder:
            drafts = _in_folder(root / "models", sources, opts.files)
            scan = ["scan", "--json", "--no-default-dirs", str(target), str(root / "models")]
        else:
            drafts = _in_stores(home, sources, opts.files)
            scan = ["scan", "--json", str(target)]
        _run([*scan, "--no-cache"], env)  # compiles and caches the bytecode: untimed

        start = time.perf_counter()
        pair_runs = [] if opts.no_baseline else [_run([str(target), str(d)], env) for d in drafts]
        baseline = time.perf_counter() - start
        usable_baseline = {str(d) for d, r in zip(drafts, pair_runs, strict=False) if r.returncode == 0}

        cold: list[Run] = []
        serial: list[Run] = []
        warm: list[Run] = []
        for _ in range(opts.repeat):
            shutil.rmtree(root / "cache", ignore_errors=True)
            serial.append(_run([*scan, "--no-cache", "--jobs", "1"], env))
            cold.append(_run(scan, env))
            warm.append(_run(scan, env))
        cold_data, warm_data = json.loads(cold[0].stdout), json.loads(warm[0].stdout)
        serial_data = json.loads(serial[0].stdout)
        usable_scan = {c["location"] for c in cold_data["candidates"] if c["usable"]}
        same = [p for p in cold_data["same_as_target"] if p != str(target)]  # the target itself, found beside it
        found = len(cold_data["candidates"]) + len(cold_data["unreadable"]) + len(same)
        assert found == opts.files, (found, opts.files)  # every file placed was found, once
        # The same answers, except that the scan leaves out copies of the target itself.
        if pair_runs:
            assert usable_scan == usable_baseline - set(same), (usable_scan, usable_baseline)
        assert warm_data["candidates"] == cold_data["candidates"] == serial_data["candidates"]

    cold_s, warm_s, serial_s = _median(cold, "wall_s"), _median(warm, "wall_s"), _median(serial, "wall_s")
    result = {
        "files": opts.files,
        "layout": "one folder" if opts.folder else "the usual stores (HF cache, LM Studio, llama.cpp, Ollama)",
        "target": opts.target,
        "usable": len(usable_scan),
        "copies_of_target_left_out": len(same),
        "cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "load_average_before_after": [round(load_before[0], 2), round(os.getloadavg()[0], 2)],
        "repeat": opts.repeat,
        "baseline_pair_checks_s": round(baseline, 2),
        "scan_serial_s": serial_s,
        "scan_cold_s": cold_s,
        "scan_warm_s": warm_s,
        "scan_serial_cpu_s": _median(serial, "cpu_s"),
        "scan_cold_cpu_s": _median(cold, "cpu_s"),
        "scan_warm_cpu_s": _median(warm, "cpu_s"),
        "cold_vs_serial": round(cold_s / serial_s, 3),
        "cold_vs_baseline": round(cold_s / baseline, 3) if pair_runs else None,
        "warm_vs_baseline": round(warm_s / baseline, 4) if pair_runs else None,
        "cache_warm": warm_data["cache"],
        "max_rss_mib_one_pair_check": round(max((r.max_rss_mib for r in pair_runs), default=0.0), 1),
        "max_rss_mib_cold_scan": round(max(r.max_rss_mib for r in cold), 1),
        "max_rss_mib_warm_scan": round(max(r.max_rss_mib for r in warm), 1),
        "goal_met": {"cold_le_3s": cold_s <= GOAL_COLD_S, "warm_le_0.2s": warm_s <= GOAL_WARM_S},
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
