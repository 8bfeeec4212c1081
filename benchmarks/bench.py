"""How fast is a whole ``paircheck`` process, against two baselines measured in the same run?

Baselines, on the same pairs of llama.cpp's largest real vocab files:
  * gguf-py: a check built on ``gguf.GGUFReader`` (reads tokens and keys of both files);
  * llama.cpp: its own C++ vocab-only load of both files (llama-cpp-python), timed
    around the two load calls only (the process start is not counted for it).

The paircheck/llama.cpp ratio is given in wall time and in CPU time (the whole paircheck
process against the two loads): on a machine shared with other jobs, CPU time moves less.

paircheck is timed as a whole process (interpreter start, imports, output), because
that is what a launch script pays, twice: a first check (an empty cache folder: both
files are read, and their read-cache entries written) and a repeat check of the same
unchanged files (both described from the read cache, as at a launch script's next
launch). Peak memory is the child's max RSS. Start-up is shown on its own:
``paircheck --version`` and a bare interpreter as whole processes, and the import time
of ``paircheck.cli`` (``python -X importtime``), the part paircheck controls.

    python benchmarks/bench.py [--runs 5]

Needs the test corpus (downloaded on first use, see tests/corpus.py) and, for the
llama.cpp baseline, the ``oracle`` extra (llama-cpp-python).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

PAIRS = [("gemma-4", "command-r"), ("qwen2", "qwen35"), ("command-r", "qwen2")]

GGUF_PY_CHECK = r"""
import sys
from gguf import GGUFReader
def load(path):
    r = GGUFReader(path)
    f = r.fields
    toks = f["tokenizer.ggml.tokens"]
    texts = [bytes(toks.parts[i]) for i in toks.data]
    model = bytes(f["tokenizer.ggml.model"].parts[-1])
    return model, texts
(tm, tt), (dm, dt) = load(sys.argv[1]), load(sys.argv[2])
n = min(len(tt), len(dt))
ok = tm == dm and abs(len(tt) - len(dt)) <= 128 and tt[5:n] == dt[5:n]
sys.exit(0 if ok else 1)
"""

LLAMA_LOAD = r"""
import ctypes, sys, time
from llama_cpp import llama_cpp as L
L.llama_backend_init()
@ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)
def quiet(level, text, user):
    pass
L.llama_log_set(quiet, None)
params = L.llama_model_default_params()
params.vocab_only = True
start, cpu = time.perf_counter(), time.process_time()
for path in sys.argv[1:]:
    model = L.llama_model_load_from_file(path.encode(), params)
    if not model:
        sys.exit(3)
    L.llama_model_free(model)
print(time.perf_counter() - start, time.process_time() - cpu)
"""


def run_child(argv: list[str], cache: Path | None = None) -> tuple[float, int, str, float]:
    """Wall time, peak RSS (KiB), stdout and CPU time (user + system) of one child process,
    with its caches in ``cache`` (a folder of the run's own, never the user's)."""
    env = {**CHILD_ENV, "PAIRCHECK_CACHE_HOME": str(cache or SCRATCH / "unused-cache")}
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    out = proc.stdout.read() if proc.stdout else ""
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    return time.perf_counter() - start, usage.ru_maxrss, out, usage.ru_utime + usage.ru_stime


# Children run as from an installed package: with compiled bytecode. Some sandboxes
# set PYTHONDONTWRITEBYTECODE, which makes every run recompile paircheck's modules.
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
# llama.cpp's loader is the pinned build's (tests/llamacpp_build.py: its bindings and libllama)
CHILD_ENV.update(__import__("llamacpp_build").oracle_env() or {})
SCRATCH = Path(tempfile.mkdtemp(prefix="paircheck-bench-"))


def import_ms(module: str) -> float:
    """Cumulative import time of ``module`` in a fresh interpreter (``-X importtime``), ms."""
    err = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"],
                         capture_output=True, text=True, env=CHILD_ENV).stderr
    for line in reversed(err.splitlines()):
        parts = [p.strip() for p in line.split("|")]
        if len(parts) == 3 and parts[2] == module:
            return int(parts[1]) / 1000
    raise RuntimeError(f"no import time for {module}")


def startup_table(runs: int) -> None:
    """What a command pays before it reads anything, against the bare interpreter."""
    bare = statistics.median(run_child([sys.executable, "-c", "pass"])[0] for _ in range(runs))
    version = statistics.median(run_child([sys.executable, "-m", "paircheck", "--version"])[0] for _ in range(runs))
    imports = statistics.median(import_ms("paircheck.cli") for _ in range(runs))
    print(f"\n{'start-up':<34} {'median':>9}")
    print(f"{'python -c pass (the interpreter)':<34} {bare * 1000:>7.1f}ms")
    print(f"{'paircheck --version':<34} {version * 1000:>7.1f}ms")
    print(f"{'import paircheck.cli (importtime)':<34} {imports:>7.1f}ms   target < 50 ms")


def metadata_mib(target: Path, draft: Path) -> float:
    """Metadata bytes of both files, asked of a child: describing them here would grow
    this process, and forked children report the parent's resident memory as theirs."""
    out = subprocess.run(
        [sys.executable, "-m", "paircheck", "--json", "--no-registry", "--no-cache", str(target), str(draft)],
        capture_output=True, text=True, env=CHILD_ENV,
    ).stdout
    report = json.loads(out)
    return (report["target"]["metadata_bytes"] + report["draft"]["metadata_bytes"]) / 2**20


def synthetic_model(vocab: Path, folder: Path, n_layers: int = 80) -> Path:
    """The largest real vocabulary with the tensor infos of an 80-layer dense model
    (9 tensors a layer, 723 in all); their data is declared, not written."""
    from gguf_mutate import TensorSpec, build_with_tensors, read_kvs

    specs = [TensorSpec(b"token_embd.weight", [8192, 262144], 12), TensorSpec(b"output_norm.weight", [8192], 0)]
    layer = (("attn_norm", [8192], 0), ("attn_q", [8192, 8192], 12), ("attn_k", [8192, 1024], 12),
             ("attn_v", [8192, 1024], 14), ("attn_output", [8192, 8192], 12), ("ffn_norm", [8192], 0),
             ("ffn_gate", [8192, 28672], 12), ("ffn_up", [8192, 28672], 12), ("ffn_down", [28672, 8192], 14))
    for i in range(n_layers):
        specs += [TensorSpec(f"blk.{i}.{name}.weight".encode(), dims, kind) for name, dims, kind in layer]
    specs.append(TensorSpec(b"output.weight", [8192, 262144], 14))
    path = folder / f"{vocab.stem}-80L.gguf"
    path.write_bytes(build_with_tensors(read_kvs(vocab), specs, max_written=0).data)
    return path


def tensor_info_cost(paths: list[Path], runs: int) -> None:
    """What reading and checking the tensor infos adds to reading a file's metadata, in
    one process: the key/value section and the tensor section are timed separately in
    each run (best of ``runs`` each), so the ratio does not drown in the machine's noise."""
    from paircheck._source.gguf_file import KEEP_ARRAYS
    from paircheck._source.gguf_reader import FileSource, read_metadata, read_tensor_infos

    print(f"\n{'file':<36} {'tensors':>8} {'infos KiB':>10} {'kv section':>11} {'tensor infos':>13} {'infos/kv':>9}")
    for path in paths:
        kv_times, info_times = [], []
        for _ in range(runs):
            with open(path, "rb") as handle:
                start = time.perf_counter()
                meta, cur = read_metadata(FileSource(path, handle), KEEP_ARRAYS)
                middle = time.perf_counter()
                read_tensor_infos(meta, cur)
                end = time.perf_counter()
            kv_times.append(middle - start)
            info_times.append(end - middle)
        kv, infos = min(kv_times), min(info_times)
        print(f"{path.name[:36]:<36} {len(meta.tensors or ()):>8} {(cur.pos - meta.kv_end) / 1024:>10.1f} "
              f"{kv * 1000:>9.1f}ms {infos * 1000:>11.2f}ms {infos / kv:>9.3f}")


def tensor_info_table(vocab: Path, models: list[Path], runs: int) -> None:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="paircheck-bench-") as folder:
        tensor_info_cost([synthetic_model(vocab, Path(folder)), *models], runs)


def sparse_safetensors_shards(folder: Path, n_layers: int = 80, shards: int = 4) -> int:
    """The safetensors headers of an 80-layer dense model in ``shards`` files (BF16, 723
    tensors), each file extended to its declared size without writing the data (sparse)."""
    import struct

    names = [("model.embed_tokens.weight", [262144, 8192]), ("model.norm.weight", [8192]),
             ("lm_head.weight", [262144, 8192])]
    layer = (("input_layernorm", [8192]), ("self_attn.q_proj", [8192, 8192]), ("self_attn.k_proj", [1024, 8192]),
             ("self_attn.v_proj", [1024, 8192]), ("self_attn.o_proj", [8192, 8192]),
             ("post_attention_layernorm", [8192]), ("mlp.gate_proj", [28672, 8192]),
             ("mlp.up_proj", [28672, 8192]), ("mlp.down_proj", [8192, 28672]))
    for i in range(n_layers):
        names += [(f"model.layers.{i}.{name}.weight", dims) for name, dims in layer]
    weight_map = {}
    per = -(-len(names) // shards)
    for s in range(shards):
        file = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
        header: dict[str, object] = {"__metadata__": {"format": "pt"}}
        offset = 0
        for name, dims in names[s * per : (s + 1) * per]:
            size = 2 * dims[0] * (dims[1] if len(dims) > 1 else 1)
            header[name] = {"dtype": "BF16", "shape": dims, "data_offsets": [offset, offset + size]}
            offset += size
            weight_map[name] = file
        raw = json.dumps(header).encode()
        with open(folder / file, "wb") as handle:
            handle.write(struct.pack("<Q", len(raw)) + raw)
            handle.truncate(8 + len(raw) + offset)
    (folder / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    return len(names)


def safetensors_header_cost(runs: int) -> None:
    """What checking a Hugging Face folder's safetensors headers adds to describing the
    folder (its tokenizer converted as llama.cpp's converter would), best of ``runs``."""
    import tempfile

    from corpus import corpus_dir
    from hf_build import build_qwen2_folder

    from paircheck._source.hf_folder import describe_hf_folder
    from paircheck._source.safetensors_header import check_folder

    with tempfile.TemporaryDirectory(prefix="paircheck-bench-") as tmp:
        folder = build_qwen2_folder(corpus_dir() / "ggml-vocab-qwen2.gguf", Path(tmp) / "Qwen2-80L", 151936)
        n = sparse_safetensors_shards(folder)
        header_kib = 0.0
        for shard in folder.glob("*.safetensors"):
            with open(shard, "rb") as handle:  # the file is sparse and huge: read the length only
                header_kib += (8 + int.from_bytes(handle.read(8), "little")) / 1024
        checks, describes = [], []
        for _ in range(runs):
            start = time.perf_counter()
            assert next(check_folder(folder, "bench"), None) is None
            middle = time.perf_counter()
            describe_hf_folder(folder, "bench")
            end = time.perf_counter()
            checks.append(middle - start)
            describes.append(end - middle)
        check, whole = min(checks), min(describes)
    print(f"\n{'HF folder (4 shards)':<24} {'tensors':>8} {'headers KiB':>12} {'header check':>13} "
          f"{'whole folder':>13} {'check/whole':>12}")
    print(f"{'qwen2 vocab + 80 layers':<24} {n:>8} {header_kib:>12.1f} {check * 1000:>11.2f}ms "
          f"{whole * 1000:>11.1f}ms {check / whole:>12.3f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--models", nargs="*", type=Path, default=[],
                        help="real model GGUFs (with tensors) for the tensor-info cost table")
    parser.add_argument("--tensor-infos-only", action="store_true",
                        help="only the tensor-info and safetensors-header cost tables")
    parser.add_argument("--check-only", action="store_true",
                        help="only the pair check against its baselines, and start-up")
    args = parser.parse_args()

    from corpus import corpus_dir

    if args.tensor_infos_only:
        tensor_info_table(corpus_dir() / "ggml-vocab-gemma-4.gguf", args.models, args.runs)
        safetensors_header_cost(args.runs)
        return 0

    from corpus import corpus_dir

    root = corpus_dir()
    have_llama = subprocess.run([sys.executable, "-c", "import llama_cpp"], env=CHILD_ENV,
                                capture_output=True).returncode == 0
    if not have_llama:
        print("llama.cpp's loader is not built: the llama.cpp baseline is skipped (python tests/llamacpp_build.py)")

    print(f"{'pair':<22} {'first':>7} {'repeat':>7} {'gguf-py':>8} {'llama.cpp':>9} {'first/llama':>11} "
          f"{'(CPU)':>5} {'repeat/llama':>12} {'(CPU)':>5} {'peak MiB':>8} {'meta MiB':>8} {'peak/(2m+60)':>12}")
    worst = worst_cpu = worst_repeat = worst_repeat_cpu = 0.0
    for target_name, draft_name in PAIRS:
        t = root / f"ggml-vocab-{target_name}.gguf"
        d = root / f"ggml-vocab-{draft_name}.gguf"
        check = [sys.executable, "-m", "paircheck", "-q", str(t), str(d)]
        first, first_cpu, repeat, repeat_cpu, peaks, gp_times, ll_times, ll_cpu = [], [], [], [], [], [], [], []
        kept = SCRATCH / f"kept-{target_name}-{draft_name}"
        run_child(check, kept)  # warms the bytecode cache, and keeps both files' entries for the repeats
        for i in range(args.runs):
            # A first check: an empty cache folder, so the files are read (and their entries written).
            wall, rss, _, cpu = run_child(check, SCRATCH / f"empty-{target_name}-{draft_name}-{i}")
            first.append(wall)
            first_cpu.append(cpu)
            peaks.append(rss)
            # A repeat check of the same, unchanged files (a launch script at its next launch).
            wall, rss, _, cpu = run_child(check, kept)
            repeat.append(wall)
            repeat_cpu.append(cpu)
            peaks.append(rss)
            gp_times.append(run_child([sys.executable, "-c", GGUF_PY_CHECK, str(t), str(d)])[0])
            if have_llama:
                ll_wall, ll_used = run_child([sys.executable, "-c", LLAMA_LOAD, str(t), str(d)])[2].split()
                ll_times.append(float(ll_wall))
                ll_cpu.append(float(ll_used))
        pc, rp = statistics.median(first), statistics.median(repeat)
        gp = statistics.median(gp_times)
        ll = statistics.median(ll_times) if ll_times else float("nan")
        # CPU time as well: on a shared machine it moves less with the other jobs than wall time.
        ll_c = statistics.median(ll_cpu) if ll_cpu else float("nan")
        cpu_ratio, repeat_cpu_ratio = statistics.median(first_cpu) / ll_c, statistics.median(repeat_cpu) / ll_c
        meta = metadata_mib(t, d)
        peak = max(peaks) / 1024
        budget = peak / (2 * meta + 60)
        if have_llama:
            worst, worst_cpu = max(worst, pc / ll), max(worst_cpu, cpu_ratio)
            worst_repeat, worst_repeat_cpu = max(worst_repeat, rp / ll), max(worst_repeat_cpu, repeat_cpu_ratio)
        print(f"{target_name + ' + ' + draft_name:<22} {pc:>6.3f}s {rp:>6.3f}s {gp:>7.2f}s {ll:>8.3f}s "
              f"{pc / ll:>11.2f} {cpu_ratio:>5.2f} {rp / ll:>12.2f} {repeat_cpu_ratio:>5.2f} {peak:>8.1f} "
              f"{meta:>8.1f} {budget:>12.2f}")
    print(f"\nmedians of {args.runs} runs of `paircheck -q T D`: first, with an empty cache folder (both files "
          "read, their entries written); repeat, the same files again (both from the read cache)")
    print("targets: paircheck/llama.cpp <= 0.25, peak/(2*meta+60) <= 1.00")
    if have_llama:
        print(f"worst paircheck/llama.cpp ratio: first check {worst:.2f} (CPU time: {worst_cpu:.2f}), "
              f"repeat check {worst_repeat:.2f} (CPU time: {worst_repeat_cpu:.2f})")
    startup_table(args.runs)
    if args.check_only:
        return 0
    # llama.cpp reads the tensor infos even for a vocab-only load, so paircheck does too.
    tensor_info_table(root / "ggml-vocab-gemma-4.gguf", args.models, args.runs)
    # A Hugging Face folder: the safetensors headers are read and checked, never the weights.
    safetensors_header_cost(args.runs)
    return 0


if __name__ == "__main__":
    try:
        code = main()
    finally:
        shutil.rmtree(SCRATCH, ignore_errors=True)
    sys.exit(code)
