"""A llama.cpp launch line against the --help of the binary that will run it.

paircheck parses a line with the pinned llama.cpp's option table (llama_args.py). The user's
build may be older or newer: a flag the pinned table knows may be missing from it (older
builds say --draft-max where the pinned one says --spec-draft-n-max), and a flag the pinned
table refuses may still be there. When the program is on this machine, its ``--help`` says
which flags it has (``paircheck.installed.help_flags``), and running it with one flag and
``--help`` gives its own error for a flag it lacks: llama.cpp parses every argument, in
order, before it loads anything, and ``--help`` prints the usage and exits.

``read_build`` runs the binary (the CLI's side); ``lint_against_build`` is pure.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field

from paircheck.installed import help_flags, llama_server, run_capped
from paircheck.preflight import codes as C
from paircheck.preflight.codes import ERROR, INFO, emit
from paircheck.preflight.lint import LintResult
from paircheck.preflight.llama_command import LlamaCommand, Option, options_for

_NUMBER = re.compile(r"-?\d")
_ERROR_LINE = re.compile(r"^(?:error\b|.*invalid argument|.*has been removed|.*is deprecated).*$",
                         re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class BuildHelp:
    """The flags of the llama.cpp program a line will start, from its own --help."""

    path: str
    version: str  # its --version answer, "" when it gives none
    flags: frozenset[str]
    # The build's own words for one flag (and its value): runs ``path WORDS --help``.
    says: Callable[[list[str]], str | None] = field(compare=False, repr=False)


def program_path(argv0: str) -> str | None:
    """What os.execvp would start: a path as given, else the name on PATH."""
    if os.sep in argv0:
        return argv0 if os.access(argv0, os.X_OK) else None
    return shutil.which(argv0)


def build_says(path: str, words: list[str]) -> str | None:
    """The error line ``path WORDS --help`` prints, or None when it has none."""
    text = run_capped([path, *words, "--help"])
    if not text:
        return None
    match = _ERROR_LINE.search(text)
    return match.group(0).strip() if match else None


def read_build(argv0: str) -> BuildHelp | None:
    """The program's --help flags, or None when it is not here or its --help is not llama.cpp's
    (a wrapper script, another program of the same name: then the pinned table alone is used)."""
    path = program_path(argv0)
    if path is None:
        return None
    flags = help_flags(path)
    if not flags or not {"-m", "--model"} & flags or "--help" not in flags:
        return None
    found = llama_server(path)
    return BuildHelp(path, found.shown if found else "", flags, lambda words: build_says(path, words))


def _flags_used(cmd: LlamaCommand) -> list[tuple[str, list[str]]]:
    """(flag, the words to give it) for every flag of the line, in order, as the pinned table
    reads values; a flag it does not know takes the next word when that is no flag."""
    table = options_for(cmd.example)
    args = cmd.argv[1:]
    out: list[tuple[str, list[str]]] = []
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if not word.startswith("-") or _NUMBER.match(word):
            continue
        name = word.replace("_", "-") if word.startswith("--") else word
        if name in table:
            kind = table[name][0].kind
            count = 2 if kind == "str2" else 1 if kind in ("int", "str") else 0
        else:
            count = 1 if i < len(args) and not args[i].startswith("-") else 0
        out.append((name, [word, *args[i:i + count]]))
        i += count
    return out


def _build_spellings(flag: str, table: dict[str, tuple[Option, bool]], build: BuildHelp) -> list[str]:
    """The build's names for ``flag``: the pinned options removed in its favour ('the argument
    has been removed. use --spec-draft-n-max ...') that the build still has, then the
    closest names of its --help."""
    renamed = [name for name, (opt, _) in table.items()
               if opt.removed and re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", opt.removed)
               and name in build.flags]
    close = difflib.get_close_matches(flag, sorted(build.flags), n=3, cutoff=0.75)
    return list(dict.fromkeys(sorted(renamed, key=len, reverse=True) + close))[:3]  # long names first


def lint_against_build(cmd: LlamaCommand, result: LintResult, build: BuildHelp) -> None:
    """Add PF050 for flags the build lacks; turn the pinned table's refusal of a flag the build
    has into PF051 (info). The corrected line is dropped when it uses a flag the build lacks."""
    table = options_for(cmd.example)
    where = f"{build.path}" + (f", {build.version}" if build.version else "")
    # Said on every verdict, not only with a refused flag: an OK means "OK for this build".
    result.build = f"{build.path}, " + (f"version: {build.version}" if build.version else "no --version answer")
    for flag, words in dict(_flags_used(cmd)).items():  # each flag once, with its last words
        pinned_refuses = flag not in table or table[flag][0].removed is not None
        if flag in build.flags or flag in ("-h", "--help"):
            if pinned_refuses:  # the pinned table refused it: this build does not
                refused = [f for f in result.findings if f.details.get("argument") == flag and f.status == ERROR]
                for finding in refused:
                    result.findings.remove(finding)
                if refused:
                    result.findings.append(emit(C.PF051, INFO, f"{flag}: the pinned llama.cpp refuses it, but the "
                                                f"llama-server that will run ({where}) lists it in --help",
                                                argument=flag, binary=build.path))
            continue
        if pinned_refuses:
            continue  # refused by both: PF001/PF002 already says so
        said = build.says(words)
        near = _build_spellings(flag, table, build)
        message = (f"{flag}: the llama-server that will run ({where}) has no such flag in its --help"
                   + (f"; it says: '{said}'" if said else ""))
        fix = f"use its spelling: {', '.join(near)}" if near else "see its --help, or update llama.cpp"
        result.findings.append(emit(C.PF050, ERROR, message, fix, argument=flag, binary=build.path,
                                    did_you_mean=near))
    if result.corrected is not None and any(
            w.startswith("-") and not _NUMBER.match(w) and w not in build.flags for w in result.corrected[1:]):
        result.corrected = None  # a line the build that will run would refuse is no fix
