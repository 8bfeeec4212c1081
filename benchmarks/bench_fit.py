"""How fast is ``paircheck fit`` on the biggest test shape, against baselines in the same run?

The shape is Qwen3-30B-A3B (19.8 GB of Q4_K_M weights, 579 tensors, 151936 tokens), written
by tests/fit_shapes.py as a sparse file: real header, no data. ``fit`` must stay a header
read, so its time must not depend on the weights. Baselines, on the same file:

  * llama.cpp: ``llama-fit-params --fit-print on`` (its own no-alloc projection, a whole
    process; built by tests/llamacpp_build.py);
  * gguf-py: ``gguf.GGUFReader`` opening the file and summing the tensor sizes (a whole
    process, the obvious Python way).

Also the same target with Qwen2.5-0.5B as the draft, and ``--vram`` (which adds the
largest-context search). Peak memory is the child's max RSS.

    python benchmarks/bench_fit.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "fixtures"))

GGUF_PY_SUM = r"""
import sys
from gguf import GGUFReader
r = GGUFReader(sys.argv[1])
print(sum(int(t.n_bytes) for t in r.tensors))
"""

CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run_child(argv: list[str]) -> tuple[float, int]:
    """Wall time and peak RSS (KiB) of one child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=CHILD_ENV)
    _, _, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - start, usage.ru_maxrss


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    import fit_shapes

    folder = Path(tempfile.mkdtemp(prefix="paircheck-bench-fit-"))
    target = fit_shapes.write("qwen3-30b-a3b", folder)
    draft = fit_shapes.write("qwen2.5-0.5b", folder)
    try:
        import llamacpp_build

        fit_params: Path | None = llamacpp_build.ensure_tools()["llama-fit-params"]
    except Exception as exc:  # noqa: BLE001 - the baseline is optional here, said so below
        print(f"llama-fit-params unavailable ({exc}): the llama.cpp baseline is skipped")
        fit_params = None

    pc = [sys.executable, "-m", "paircheck", "fit"]
    cases = {
        "paircheck fit T -c 32768": [*pc, str(target), "-c", "32768", "--json"],
        "paircheck fit T D -c 32768": [*pc, str(target), str(draft), "-c", "32768", "--json"],
        "paircheck fit T D --vram 24GiB": [*pc, str(target), str(draft), "-c", "32768", "--vram", "24GiB", "--json"],
        "gguf-py GGUFReader sum": [sys.executable, "-c", GGUF_PY_SUM, str(target)],
    }
    if fit_params is not None:
        cases["llama-fit-params --fit-print"] = [
            str(fit_params), "-m", str(target), "-c", "32768", "--fit-print", "on", "--no-repack",
        ]  # fmt: skip
    for argv in cases.values():
        run_child(argv)  # warm caches and bytecode
    times: dict[str, list[float]] = {name: [] for name in cases}
    peaks: dict[str, int] = dict.fromkeys(cases, 0)
    for _ in range(args.runs):
        for name, argv in cases.items():
            wall, rss = run_child(argv)
            times[name].append(wall)
            peaks[name] = max(peaks[name], rss)
    base = statistics.median(times["paircheck fit T -c 32768"])
    print(f"shape: Qwen3-30B-A3B, {target.stat().st_size / 1e9:.1f} GB file (sparse), medians of {args.runs} runs")
    print(f"{'case':<34} {'time':>8} {'peak MiB':>9} {'fit T / case':>13}")
    for name in cases:
        med = statistics.median(times[name])
        print(f"{name:<34} {med:>7.3f}s {peaks[name] / 1024:>9.1f} {base / med:>13.2f}")
    print("\ntarget: `paircheck fit T` well under a second, and no slower than llama-fit-params")
    return 0


if __name__ == "__main__":
    sys.exit(main())
