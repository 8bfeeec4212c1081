"""Which launcher a command line is for, and lint it as that launcher reads it.

llama.cpp renamed its programs on 2024-06-12 (PR #7809, examples/deprecation-warning/README.md
of the pinned llama.cpp): ``main`` became ``llama-cli``, every other ``X`` became ``llama-X``.
The pinned version builds none of the old names (no CMake target; the Makefile only stops
with "The Makefile build has been replaced by CMake"); a leftover 2024 stub prints "WARNING:
The binary 'main' is deprecated. Please use 'llama-cli' instead." and exits 1. Guides still
show the old names, so a legacy name is an error naming the new program, and the rest of the
line is linted as that program.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from paircheck.preflight import codes as C
from paircheck.preflight.codes import ERROR, INFO, emit
from paircheck.preflight.lint import Describe, LintResult, lint_llama
from paircheck.preflight.llama_command import PROGRAM_EXAMPLES, SPECULATING
from paircheck.preflight.llama_command import parse as parse_llama
from paircheck.preflight.vllm import lint_vllm

if TYPE_CHECKING:
    from paircheck.preflight.build_help import BuildHelp

# The table of examples/deprecation-warning/README.md (old name -> new name). None: the new
# program does not exist in the pinned llama.cpp (no CMake target), with what replaced it.
LEGACY: dict[str, str] = {
    "main": "llama-cli", "server": "llama-server", "embedding": "llama-embedding", "quantize": "llama-quantize",
    "tokenize": "llama-tokenize", "export-lora": "llama-export-lora", "baby-llama": "llama-baby-llama",
    "batched": "llama-batched", "batched-bench": "llama-batched-bench",
    "benchmark-matmult": "llama-benchmark-matmult", "convert-llama2c-to-ggml": "llama-convert-llama2c-to-ggml",
    "eval-callback": "llama-eval-callback", "gbnf-validator": "llama-gbnf-validator", "gguf": "llama-gguf",
    "gguf-split": "llama-gguf-split", "gritlm": "llama-gritlm", "imatrix": "llama-imatrix",
    "infill": "llama-infill", "llava-cli": "llama-llava-cli", "lookahead": "llama-lookahead",
    "lookup": "llama-lookup", "lookup-create": "llama-lookup-create", "lookup-merge": "llama-lookup-merge",
    "lookup-stats": "llama-lookup-stats", "parallel": "llama-parallel", "passkey": "llama-passkey",
    "perplexity": "llama-perplexity", "q8dot": "llama-q8dot", "quantize-stats": "llama-quantize-stats",
    "retrieval": "llama-retrieval", "save-load-state": "llama-save-load-state", "simple": "llama-simple",
    "speculative": "llama-speculative", "vdot": "llama-vdot",
}
# New names that are gone from the pinned llama.cpp, with what to use instead.
GONE_PROGRAMS: dict[str, str] = {
    "llama-baby-llama": "llama-finetune", "llama-benchmark-matmult": "llama-bench",
    "llama-gbnf-validator": "llama-cli --grammar-file", "llama-gritlm": "llama-embedding",
    "llama-infill": "llama-server (its /infill endpoint)", "llama-q8dot": "llama-bench",
    "llama-quantize-stats": "llama-quantize", "llama-save-load-state": "llama-server (--slot-save-path)",
    "llama-vdot": "llama-bench",
    # Built from tools/mtmd/deprecation-warning.cpp: "Please use 'llama-mtmd-cli' instead."
    "llama-llava-cli": "llama-mtmd-cli", "llama-gemma3-cli": "llama-mtmd-cli",
    "llama-minicpmv-cli": "llama-mtmd-cli", "llama-qwen2vl-cli": "llama-mtmd-cli",
}
# Programs of the pinned llama.cpp that parse their own argv (not common/arg.cpp).
OWN_ARGV = {"llama-simple": "-m MODEL [-n N] [-ngl N] [prompt]", "llama-simple-chat": "-m MODEL [-c N] [-ngl N]",
            "llama-quantize": "[options] IN.gguf [OUT.gguf] TYPE", "llama-gguf-split": "[options] IN OUT",
            "llama-bench": "[options]", "llama-gguf": "FILE r|w", "llama-gguf-hash": "[options] FILE",
            "llama-lookup-merge": "a.bin b.bin ... out.bin", "llama-convert-llama2c-to-ggml": "[options]"}
WRAPPERS = ("env", "nohup", "exec", "time", "nice", "stdbuf", "taskset", "numactl", "sudo", "command")


def program_name(argv0: str) -> str:
    name = os.path.basename(argv0)
    return name[:-4] if name.lower().endswith(".exe") else name


def strip_wrappers(argv: list[str]) -> tuple[list[str], dict[str, str]]:
    """Drop ``env A=B``, ``nohup``, ... in front of the real program; return the env they set."""
    env: dict[str, str] = {}
    i = 0
    while i < len(argv):
        word = argv[i]
        if program_name(word) in WRAPPERS:
            i += 1
            continue
        if "=" in word and not word.startswith("-") and word.split("=", 1)[0].isidentifier():
            key, _, value = word.partition("=")
            env[key] = value
            i += 1
            continue
        if i > 0 and word.startswith("-") and program_name(argv[i - 1]) in WRAPPERS:
            i += 1  # a wrapper's own option (nice -n 5 is not handled: rare in launch lines)
            continue
        break
    return argv[i:], env


def launcher_of(argv: list[str]) -> str:
    """'llama.cpp', 'vllm' or '' (unknown), after legacy names are mapped."""
    if not argv:
        return ""
    name = program_name(argv[0])
    name = LEGACY.get(name, name)
    if name.startswith("vllm") or (name.startswith("python") and argv[1:2] == ["-m"]
                                   and argv[2:3] and argv[2].startswith("vllm.")):
        return "vllm"
    if name.startswith("llama-") or name in PROGRAM_EXAMPLES:
        return "llama.cpp"
    return ""


def lint_argv(argv: list[str], env: Mapping[str, str] | None = None,
              make_describe: Callable[[list[str]], Describe] | None = None,
              build_for: Callable[[str], BuildHelp | None] | None = None) -> LintResult:
    """Lint a launch command. ``make_describe(overrides)`` gives the model reader (None: flags only);
    ``build_for(program)`` the --help flags of the llama.cpp program that will run (None: the
    pinned table alone)."""
    argv, wrapper_env = strip_wrappers(list(argv))
    if not argv:
        result = LintResult("(empty)")
        result.findings.append(emit(C.PF030, INFO, "no program in the command: nothing was checked"))
        return result
    environment = {**(os.environ if env is None else env), **wrapper_env}
    name = program_name(argv[0])
    legacy_finding = None
    if name in LEGACY:
        new = LEGACY[name]
        legacy_finding = emit(
            C.PF040, ERROR, f"'{name}' is llama.cpp's old name for {new} (renamed 2024-06-12, PR #7809): the pinned "
            f"llama.cpp builds no '{name}', and the old stub only prints \"The binary '{name}' is deprecated. "
            f"Please use '{new}' instead.\" and exits 1; the rest of the line is checked as {new}",
            f"use {new}", program=name, replacement=new)
        argv = [os.path.join(os.path.dirname(argv[0]), new), *argv[1:]]
        name = new
    if launcher_of(argv) == "vllm":
        return lint_vllm(argv, make_describe([]) if make_describe else None)
    if launcher_of(argv) != "llama.cpp":
        result = LintResult(name)
        script = next((w for w in argv[1:] if w.endswith(".py")), None)
        fix = f"paircheck lint-py {script} reads a Python script without running it" if script else None
        result.findings.append(emit(C.PF030, INFO, f"'{name}' is not a launcher paircheck knows: nothing was checked",
                                    fix, program=name))
        return result
    if name in GONE_PROGRAMS:
        result = LintResult(name)
        if legacy_finding is not None:
            result.findings.append(legacy_finding)
        result.findings.append(emit(C.PF041, ERROR, f"{name} does not exist in the pinned llama.cpp (or only prints "
                                    "a deprecation warning)", f"use {GONE_PROGRAMS[name]}", program=name))
        return result
    if name not in PROGRAM_EXAMPLES:
        result = LintResult(name)
        if legacy_finding is not None:
            result.findings.append(legacy_finding)
        usage = OWN_ARGV.get(name)
        result.findings.append(emit(
            C.PF042, INFO, f"{name} " + (f"parses its own arguments ({name} {usage}) and " if usage else "")
            + "has no speculative decoding: the line was not checked further",
            "use llama-server or llama-cli with -md DRAFT --spec-type draft-simple", program=name))
        return result
    cmd = parse_llama(argv, environment)
    result = lint_llama(cmd, make_describe(cmd.overrides) if make_describe else None)
    build = build_for(argv[0]) if build_for is not None else None
    if build is not None:
        from paircheck.preflight.build_help import lint_against_build

        lint_against_build(cmd, result, build)
    if legacy_finding is not None:
        result.findings.insert(0, legacy_finding)
    if name not in SPECULATING and not any(f.code == C.PF008.code for f in result.findings):
        result.findings.append(emit(C.PF042, INFO, f"{name} has no speculative decoding",
                                    "use llama-server or llama-cli with -md DRAFT --spec-type draft-simple",
                                    program=name))
    return result
