"""How fast is ``paircheck scan`` over 100 files, cold and warm, against ``paircheck T D`` once per file?

Builds a folder of N GGUF files (llama.cpp's 19 real vocab files copied under different names
in nested folders), then times, in the same run and as whole processes:
  * baseline: ``paircheck TARGET DRAFT`` once per file (what a script without scan would do);
  * cold: ``paircheck scan --no-default-dirs TARGET DIR`` with an empty cache;
  * warm: the same scan again (every summary from the cache).
Peak memory is each child's own max RSS (os.wait4): the scan's should stay near one pair
check's, whatever the number of files (summaries are kept, descriptions are not).

    python benchmarks/bench_scan.py [--files 100] [--target qwen2] [--no-baseline]

Goal (issue 50, after issue 12's 10 s and 1 s): 100 files in at most 3 s cold and 0.2 s warm
on a quiet 2-core machine; ``goal_met`` says whether this run met it. ``--no-baseline`` skips
the 100 pair checks (a minute): the scan alone. Needs the test corpus (downloaded on first
use, see tests/corpus.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GOAL_COLD_S, GOAL_WARM_S = 3.0, 0.2  # issue 50: 100 files on a quiet 2-core machine
sys.path.insert(0, str(REPO / "tests"))


@dataclass
class Run:
    returncode: int
    stdout: str
    max_rss_mib: float  # this child's own peak (os.wait4), not the maximum over all children


def _run(args: list[str], env: dict[str, str]) -> Run:
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen([sys.executable, "-m", "paircheck", *args], stdout=out, stderr=subprocess.DEVNULL,
                                env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        return Run(proc.returncode, out.read().decode(), usage.ru_maxrss / 1024)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--target", default="qwen2", help="short name of the target's vocab file")
    parser.add_argument("--no-baseline", action="store_true", help="skip the 100 pair checks (the scan alone)")
    opts = parser.parse_args()

    from corpus import corpus_files

    sources = sorted(corpus_files())
    with tempfile.TemporaryDirectory(prefix="paircheck-bench-scan-") as tmp:
        root = Path(tmp)
        target = root / "target" / "target.gguf"
        target.parent.mkdir()
        shutil.copyfile(next(p for p in sources if p.name == f"ggml-vocab-{opts.target}.gguf"), target)
        models = root / "models"
        drafts = []
        for i in range(opts.files):
            src = sources[i % len(sources)]
            dest = models / f"org{i % 7}" / f"repo{i % 13}" / f"{src.stem}-copy{i:03d}.gguf"
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)
            drafts.append(dest)
        env = {**os.environ, "PAIRCHECK_CACHE_HOME": str(root / "cache"), "PYTHONPATH": str(REPO)}

        start = time.perf_counter()
        pair_runs = [] if opts.no_baseline else [_run([str(target), str(d)], env) for d in drafts]
        baseline = time.perf_counter() - start
        usable_baseline = {str(d) for d, r in zip(drafts, pair_runs, strict=False) if r.returncode == 0}
        rss_pair = max((r.max_rss_mib for r in pair_runs), default=0.0)

        start = time.perf_counter()
        cold_proc = _run(["scan", "--json", "--no-default-dirs", str(target), str(models)], env)
        cold = time.perf_counter() - start
        start = time.perf_counter()
        warm_proc = _run(["scan", "--json", "--no-default-dirs", str(target), str(models)], env)
        warm = time.perf_counter() - start
        cold_data, warm_data = json.loads(cold_proc.stdout), json.loads(warm_proc.stdout)
        usable_scan = {c["location"] for c in cold_data["candidates"] if c["usable"]}
        # The same answers, except that the scan leaves out copies of the target itself.
        if pair_runs:
            assert usable_scan == usable_baseline - set(cold_data["same_as_target"]), (usable_scan, usable_baseline)
        assert warm_data["candidates"] == cold_data["candidates"]

    result = {
        "files": opts.files,
        "target": opts.target,
        "usable": len(usable_scan),
        "copies_of_target_left_out": len(cold_data["same_as_target"]),
        "baseline_pair_checks_s": round(baseline, 2),
        "scan_cold_s": round(cold, 2),
        "scan_warm_s": round(warm, 2),
        "cold_vs_baseline": round(cold / baseline, 3) if pair_runs else None,
        "warm_vs_baseline": round(warm / baseline, 4) if pair_runs else None,
        "cache_warm": warm_data["cache"],
        "max_rss_mib_one_pair_check": round(rss_pair, 1),
        "max_rss_mib_cold_scan": round(cold_proc.max_rss_mib, 1),
        "max_rss_mib_warm_scan": round(warm_proc.max_rss_mib, 1),
        "goal_met": {"cold_le_3s": cold <= GOAL_COLD_S, "warm_le_0.2s": warm <= GOAL_WARM_S},
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
