"""Parse a llama-server / llama-cli command line as the reference llama.cpp does.

Mirrors ``common_params_parse_ex`` in common/arg.cpp: environment variables first
(``LLAMA_ARG_*``, and ``LLAMA_ARG_NO_*`` for negatable options), then the arguments left
to right. Only exact option names are known: ``--flag=value`` is not split in this
version (it is an invalid argument), ``_`` in a ``--`` name reads as ``-``, a repeated
option keeps its last value (``--spec-type`` accumulates), removed options throw their
hint. The option table is generated from arg.cpp (gen_llama_args.py).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from paircheck.preflight.llama_args import OPTIONS

SPEC_TYPES = ("none", "draft-simple", "draft-eagle3", "draft-mtp", "draft-dflash", "draft-dspark", "ngram-simple",
              "ngram-map-k", "ngram-map-k4v", "ngram-mod", "ngram-cache")
# Program -> the LLAMA_EXAMPLE_* it passes to common_params_parse (grep common_params_parse in
# tools/ and examples/ of the pinned llama.cpp). Programs absent here parse their own argv.
PROGRAM_EXAMPLES = {
    "llama-server": "SERVER", "llama-cli": "CLI", "llama-completion": "COMPLETION",
    "llama-speculative": "SPECULATIVE", "llama-speculative-simple": "SPECULATIVE", "llama-lookup": "LOOKUP",
    "llama-lookup-create": "LOOKUP", "llama-lookup-stats": "LOOKUP", "llama-lookahead": "COMMON",
    "llama-embedding": "EMBEDDING", "llama-perplexity": "PERPLEXITY", "llama-batched": "BATCHED",
    "llama-parallel": "PARALLEL", "llama-passkey": "PASSKEY", "llama-retrieval": "RETRIEVAL",
    "llama-imatrix": "IMATRIX", "llama-batched-bench": "BENCH", "llama-eval-callback": "COMMON",
    "llama-export-lora": "EXPORT_LORA", "llama-cvector-generator": "CVECTOR_GENERATOR",
    "llama-tokenize": "TOKENIZE", "llama-tts": "TTS", "llama-mtmd-cli": "MTMD", "llama-diffusion-cli": "DIFFUSION",
    "llama-finetune": "FINETUNE", "llama-fit-params": "FIT_PARAMS", "llama-results": "RESULTS",
    "llama-debug": "DEBUG", "llama-idle": "COMMON",
}
# Programs that speculate: draft models (and n-grams), or n-grams only (llama-lookup).
SPECULATING = ("llama-server", "llama-cli", "llama-speculative", "llama-speculative-simple", "llama-lookup")
TRUTHY = ("on", "enabled", "true", "1")
FALSEY = ("off", "disabled", "false", "0")


@dataclass(frozen=True)
class Option:
    args: tuple[str, ...]
    neg: tuple[str, ...]
    kind: str  # void, bool, int, str, str2
    env: str | None
    removed: str | None

    @property
    def key(self) -> str:
        return self.args[0]


@dataclass(frozen=True)
class ParseError:
    """What llama.cpp prints when it stops (it stops at the first one; we collect all)."""

    flag: str
    message: str  # llama.cpp's text
    kind: str  # invalid, removed, missing_value, bad_value
    hint: str = ""  # paircheck's addition
    suggestions: tuple[str, ...] = ()  # nearest real options, best first (for an invalid one)


@dataclass
class LlamaCommand:
    program: str
    example: str
    argv: list[str]
    values: dict[str, str] = field(default_factory=dict)  # option key -> last value ("1"/"0" for flags)
    given_as: dict[str, str] = field(default_factory=dict)  # option key -> spelling or env var used
    spec_types: list[str] = field(default_factory=lambda: ["none"])
    overrides: list[str] = field(default_factory=list)
    errors: list[ParseError] = field(default_factory=list)
    repeated: list[str] = field(default_factory=list)
    env_overridden: list[tuple[str, str]] = field(default_factory=list)  # (env var, flag)
    # The line with every fixable error fixed (renamed, removed and invented options replaced by
    # the current ones, --flag=value split); None when an error has no mechanical fix.
    corrected: list[str] | None = None
    # (given, used): invalid options ``corrected`` replaces by the nearest real one by name,
    # a guess rather than a documented replacement.
    guesses: list[tuple[str, str]] = field(default_factory=list)

    def get(self, key: str) -> str | None:
        return self.values.get(key)

    @property
    def model(self) -> str | None:
        return self.get("-m")

    @property
    def model_hf(self) -> str | None:
        return self.get("-hf")

    @property
    def draft(self) -> str | None:
        return self.get("--spec-draft-model")

    @property
    def draft_hf(self) -> str | None:
        return self.get("--spec-draft-hf")

    @property
    def types_default(self) -> bool:
        return self.spec_types == ["none"]

    @property
    def requested_types(self) -> list[str]:
        return [t for t in self.spec_types if t != "none"]


def options_for(example: str) -> dict[str, tuple[Option, bool]]:
    """Name -> (option, is_positive), as arg_to_options is built for this example."""
    table: dict[str, tuple[Option, bool]] = {}
    for args, neg, kind, examples, excludes, env, removed, preset_only in OPTIONS:
        if preset_only:
            continue
        inherit = example != "DOWNLOAD"
        if not ((example in examples or (inherit and "COMMON" in examples)) and example not in excludes):
            continue
        opt = Option(args, neg, kind, env, removed)
        for name in args:
            table[name] = (opt, True)
        for name in neg:
            table[name] = (opt, False)
    return table


def stoi(text: str) -> int:
    """std::stoi: leading space, sign, digits; trailing junk ignored; no digits -> error."""
    match = re.match(r"\s*([+-]?\d+)", text)
    if not match:
        raise ValueError("stoi")
    value = int(match.group(1))
    if not -(2**31) <= value < 2**31:
        raise ValueError("stoi")
    return value


def _apply(cmd: LlamaCommand, opt: Option, value: str | None, positive: bool, spelled: str) -> None:
    """Run the option's handler as far as paircheck models it; raise ValueError(text) on failure."""
    if opt.removed is not None:
        if opt.kind == "int" and value is not None:
            stoi(value)
        raise ValueError(f"the argument has been removed. {opt.removed}")
    if opt.kind == "int":
        assert value is not None
        number = stoi(value)
        if opt.key == "--spec-draft-n-max" and number < 0:
            raise ValueError("invalid value")
        value = str(number)
    if opt.key == "--spec-type":
        assert value is not None
        types: list[str] = []
        for name in value.split(","):
            if name not in SPEC_TYPES:
                raise ValueError(f"unknown speculative type: {name}")
            if name == "none":
                types = ["none"]
                break
            types.append(name)
        cmd.spec_types += types
    if opt.key == "--override-kv" and value is not None:
        cmd.overrides += [v for v in value.split(",") if v]
    if opt.key in ("--fim-qwen-7b-spec", "--fim-qwen-14b-spec"):
        size = "7B" if "7b" in opt.key else "14B"
        cmd.values["-hf"] = f"ggml-org/Qwen2.5-Coder-{size}-Q8_0-GGUF"
        cmd.values["--spec-draft-hf"] = "ggml-org/Qwen2.5-Coder-0.5B-Q8_0-GGUF"
    if opt.key == "--spec-default":
        cmd.spec_types += ["ngram-mod"]
    cmd.values[opt.key] = value if value is not None else ("1" if positive else "0")
    cmd.given_as[opt.key] = spelled


def parse(argv: list[str], env: Mapping[str, str] | None = None) -> LlamaCommand:
    """``argv[0]`` is the program; ``env`` defaults to os.environ."""
    env = os.environ if env is None else env
    program = os.path.basename(argv[0]) if argv else "llama-server"
    example = PROGRAM_EXAMPLES.get(program.removesuffix(".exe"), "SERVER")
    cmd = LlamaCommand(program, example, list(argv))
    table = options_for(example)
    seen_opts = list(dict.fromkeys(opt for opt, _ in table.values()))  # option order, once each
    # 1. environment variables, in option order
    for opt in seen_opts:
        if opt.env is None:
            continue
        neg_env = opt.env.replace("LLAMA_ARG_", "LLAMA_ARG_NO_") if opt.neg else None
        if neg_env and neg_env in env:
            env_value, name = "0", neg_env
        elif opt.env in env:
            env_value, name = env[opt.env], opt.env
        else:
            continue
        try:
            if opt.kind == "void":
                if env_value.lower() in TRUTHY:
                    _apply(cmd, opt, None, True, name)
            elif opt.kind == "bool":
                if env_value.lower() not in TRUTHY + FALSEY:
                    raise ValueError("invalid boolean value")
                _apply(cmd, opt, None, env_value.lower() in TRUTHY, name)
            else:
                _apply(cmd, opt, env_value, True, name)
        except ValueError as exc:
            cmd.errors.append(ParseError(name, f'error while handling environment variable "{name}": {exc}',
                                         "removed" if opt.removed else "bad_value"))
    # 2. the command line
    seen: set[str] = set()
    args = argv[1:]
    fixed: list[str] | None = [argv[0]] if argv else []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg.startswith("--"):
            arg = arg.replace("_", "-")
        if arg not in table:
            hint, near = _invalid_hint(arg, table)
            cmd.errors.append(ParseError(arg, f"error: invalid argument: {arg}", "invalid", hint, near))
            name, eq, inline = arg.partition("=")
            has_value = i < len(args) and not args[i].startswith("-")
            replacement: list[str] | None = None
            if arg in GONE_INTENT and GONE_INTENT[arg] in table and i < len(args):
                # The old spelling of a current option: keep its value, as for --flag=value.
                try:
                    _apply(cmd, table[GONE_INTENT[arg]][0], args[i], True, arg)
                except ValueError:
                    pass
                replacement = [GONE_INTENT[arg], args[i]]
                i += 1
            elif eq and name in table:
                # llama.cpp refuses it, but the user's intent is clear: keep the value so the
                # pair can still be checked.
                try:
                    _apply(cmd, table[name][0], inline, True, arg)
                except ValueError:
                    pass
                replacement = [name, inline]
            else:
                value_word = args[i] if has_value else None
                if has_value:
                    i += 1  # the unknown flag's value: not a second error
                replacement = _replace_invalid(arg, value_word, near, table)
                if replacement:
                    cmd.guesses.append((arg, replacement[0]))
            fixed = fixed + replacement if fixed is not None and replacement is not None else None
            continue
        if arg in seen and arg != "--spec-type":
            cmd.repeated.append(arg)
        seen.add(arg)
        opt, positive = table[arg]
        if opt.env and (opt.env in env or (opt.neg and opt.env.replace("LLAMA_ARG_", "LLAMA_ARG_NO_") in env)):
            cmd.env_overridden.append((opt.env, arg))
        start = i - 1
        value: str | None = None
        if opt.kind in ("int", "str", "str2"):
            if i >= len(args):
                cmd.errors.append(ParseError(arg, f'error while handling argument "{arg}": expected value for '
                                             "argument", "missing_value"))
                fixed = None
                break
            value = args[i]
            i += 1
            if opt.kind == "str2":
                if i >= len(args):
                    cmd.errors.append(ParseError(arg, f'error while handling argument "{arg}": expected value '
                                                 "for argument", "missing_value"))
                    fixed = None
                    break
                i += 1
        words = list(args[start:i])
        if opt.removed:
            current = re.search(r"--[a-z0-9-]+", opt.removed)
            words = [current.group(0), *words[1:]] if current and current.group(0) in table else []
            if not words:
                fixed = None
        try:
            _apply(cmd, opt, value, positive, arg)
        except ValueError as exc:
            cmd.errors.append(ParseError(arg, f'error while handling argument "{arg}": {exc}',
                                         "removed" if opt.removed else "bad_value"))
            if not opt.removed:
                fixed = None
        if fixed is not None:
            fixed += words
    if cmd.errors and fixed is not None:
        cmd.corrected = fixed
    return cmd


# Flags that no longer exist (no stub), with what replaced them
# (common/arg.cpp of the pinned llama.cpp, where each removal left its hint).
GONE = {
    "-cd": "the draft context always has the target's size; drop it (-c sets both)",
    "--ctx-size-draft": "the draft context always has the target's size; drop it (-c sets both)",
    "--spec-replace": "vocab translation was removed (PR #22787): use a draft with the target's vocabulary",
    "--spec-draft-replace": "vocab translation was removed (PR #22787): use a draft with the target's vocabulary",
    "--draft-model": "use -md / --model-draft / --spec-draft-model",
}


def _replace_invalid(arg: str, value: str | None, near: tuple[str, ...],
                     table: Mapping[str, tuple[Option, bool]]) -> list[str] | None:
    """What an invalid option becomes in the corrected line: [] (dropped), words, or None (no fix)."""
    if arg in GONE_DROP:
        return []
    if len(near) == 0 or not arg.startswith("-"):
        return None
    opt = table[near[0]][0]
    if opt.kind in ("void", "bool"):
        return [near[0]] if value is None else None
    if value is None or opt.kind == "str2":
        return None
    return [near[0], value]


# Options that are gone with nothing to replace them: the corrected line drops them.
GONE_DROP = ("-cd", "--ctx-size-draft")
# Old spellings whose meaning is one current option: the value is kept, so the rest of the
# check (PF010, the pair) sees the draft the user meant.
GONE_INTENT = {"--draft-model": "--spec-draft-model"}


def _invalid_hint(arg: str, table: Mapping[str, tuple[Option, bool]]) -> tuple[str, tuple[str, ...]]:
    """paircheck's hint for an option llama.cpp does not know, and the nearest real options."""
    if arg in GONE:
        return GONE[arg], ()
    name, eq, _ = arg.partition("=")
    if eq and name.replace("_", "-") in table:
        return f"this llama.cpp does not accept {name}=VALUE: write {name} VALUE (two arguments)", ()
    if not arg.startswith("-"):
        return "llama-server takes no positional arguments: the model needs -m", ()
    near = nearest_options(name, table)
    if not near:
        return "", ()
    also = f" (or {', '.join(near[1:])})" if len(near) > 1 else ""
    return f"no such option in this llama.cpp; did you mean {near[0]}?{also}", near


# How guides spell the words llama.cpp's option names use.
_SYNONYMS = {"tokens": "n", "token": "n", "num": "n", "number": "n", "count": "n", "speculative": "spec",
             "speculation": "spec", "speculate": "spec", "assistant": "draft", "drafter": "draft",
             "context": "ctx", "minimum": "min", "maximum": "max", "layers": "layers", "gpu": "gpu"}


def _words(name: str) -> list[str]:
    return [_SYNONYMS.get(w, w) for w in re.split(r"[-_]+", name.lower().lstrip("-")) if w]


def _similarity(query: list[str], candidate: list[str]) -> float:
    """Share of words in common (a word matches a close spelling), Dice-style."""
    if not query or not candidate:
        return 0.0
    from difflib import SequenceMatcher

    left = list(candidate)
    matched = 0.0
    for word in query:
        best, at = 0.0, -1
        for j, other in enumerate(left):
            score = 1.0 if word == other else SequenceMatcher(None, word, other).ratio()
            if score > best:
                best, at = score, j
        if best >= 0.8:
            matched += best
            left.pop(at)
    return 2 * matched / (len(query) + len(candidate))


def nearest_options(name: str, table: Mapping[str, tuple[Option, bool]], limit: int = 3) -> tuple[str, ...]:
    """The real options closest to ``name``, best first: by the words they share, then by spelling.

    A removed option that matches stands for its replacement (the first option its hint
    names), so --draft-min-accept-tokens leads to --spec-draft-n-min, not to --draft-min."""
    from difflib import SequenceMatcher

    query = _words(name)
    scores: dict[str, float] = {}
    for spelled, (opt, _) in table.items():
        if not spelled.startswith("--"):
            continue
        score = _similarity(query, _words(spelled)) + 0.2 * SequenceMatcher(None, name, spelled).ratio()
        target = _long_name(opt)
        if opt.removed:
            replacement = re.search(r"--[a-z0-9-]+", opt.removed)
            if replacement is None or replacement.group(0) not in table:
                continue
            target = _long_name(table[replacement.group(0)][0])
        if score > scores.get(target, 0.0):
            scores[target] = score
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    if not ranked or ranked[0][1] < 0.45:
        return ()
    best = ranked[0][1]
    return tuple(option for option, score in ranked[:limit] if score >= 0.85 * best)


def _long_name(opt: Option) -> str:
    return next((a for a in opt.args if a.startswith("--")), opt.args[0])
