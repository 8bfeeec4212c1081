"""Run one fuzz target under atheris (libFuzzer, coverage-guided).

    python fuzz/run.py TARGET [libFuzzer flags...]     # fuzz (seeds written first)
    python fuzz/run.py TARGET CRASH_FILE...            # replay inputs (libFuzzer does this for file args)

Defaults added unless given: ``-timeout=10`` (a hang is an input slower than 10 s),
``-rss_limit_mb=1536`` (memory bound of the whole process, Python included),
``-max_len`` (64 KiB for GGUF targets, 16 KiB otherwise). The corpus grows in
``fuzz/work/TARGET/corpus``; crashes are written to ``fuzz/work/TARGET/``.
fuzz/campaign.sh runs every target with the campaign's input counts.
"""

from __future__ import annotations

import sys
from pathlib import Path

import atheris

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

with atheris.instrument_imports(include=["paircheck"]):
    import paircheck._registry.load  # noqa: F401
    import paircheck._source.gguf_file  # noqa: F401
    import paircheck._source.gguf_reader  # noqa: F401
    import paircheck._source.hf_folder  # noqa: F401
    import paircheck._source.hub  # noqa: F401
    import paircheck._source.remote  # noqa: F401
    import paircheck._source.resolve  # noqa: F401
    import paircheck.preflight.entry  # noqa: F401
    import paircheck.preflight.ollama  # noqa: F401
    import paircheck.vocab  # noqa: F401

import targets  # noqa: E402


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in targets.TARGETS:
        sys.exit(f"usage: run.py TARGET [flags]; targets: {', '.join(targets.TARGETS)}")
    name = sys.argv[1]
    flags = sys.argv[2:]
    work = HERE / "work" / name
    corpus = work / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    replay = any(not f.startswith("-") for f in flags)
    if not replay:
        for i, seed in enumerate(targets.seeds(name)):
            (corpus / f"seed-{i:03d}").write_bytes(seed)
    defaults = {
        "-timeout": "10",
        "-rss_limit_mb": "1536",
        "-max_len": str(64 << 10 if name in targets.GGUF_TARGETS else 16 << 10),
        "-artifact_prefix": str(work) + "/",
        "-print_final_stats": "1",
    }
    for key, value in defaults.items():
        if not any(f.startswith(key + "=") for f in flags):
            flags.append(f"{key}={value}")
    args = [sys.argv[0], *flags] + ([] if replay else [str(corpus)])
    target = targets.TARGETS[name]
    atheris.Setup(args, target)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
