"""How to run a documented pair: ``paircheck pairs --for`` and a launch line per engine.

The registry records what sources say and stores no commands, so these lines are
paircheck's own. They use the flags and method spellings of paircheck's engine rules (the
"Next:" steps in paircheck/_engine/, each written from that engine's source), with the
entry's repo ids where the engine loads a Hub repo and TARGET/DRAFT placeholders where it
needs a local file. Draft lengths (num_speculative_tokens, max_draft_len, --draftamount)
are starting values, not documented ones. An engine paircheck has no rules for, or a method
that engine's rules do not cover, gets no line: the source shows how it was run.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass

from paircheck._registry.entry import RegistryEntry
from paircheck._registry.identity import ModelRef
from paircheck._registry.schema import WORKS_EVIDENCE

# The draft length a line starts with (what the engine rules' "Next:" steps print).
DRAFT_LENGTH = 4

# What the page says next to every launch line, so no one takes it for the source's command.
PROVENANCE = (
    "Launch lines are paircheck's, written from its engine rules, not copied from the source; "
    f"the draft length ({DRAFT_LENGTH}) is a starting value to tune."
)


@dataclass(frozen=True)
class LaunchLine:
    """One engine's way to run the pair. ``kind``: "shell", "python" or "ui" (app steps, not a command)."""

    engine: str
    kind: str
    text: str


def pairs_command(entry: RegistryEntry) -> str:
    """``paircheck pairs --for TARGET``: the drafts documented for this entry's target."""
    return shlex.join(["paircheck", "pairs", "--for", entry.target.repo or entry.target.name])


def _has_draft_file(entry: RegistryEntry) -> bool:
    return not entry.draft.builtin and entry.method not in ("ngram", "suffix")


def _hub(ref: ModelRef, placeholder: str) -> str:
    """What an engine that loads Hub repos is given: the repo id, else a placeholder."""
    return ref.repo or placeholder


def _gguf(ref: ModelRef, file_flag: str, hub_flag: str, placeholder: str) -> list[str]:
    # llama.cpp loads GGUF files; a -GGUF repo it can fetch itself (-hf/-hfd), any other repo
    # (safetensors) must be converted first, so the line names a local file.
    if ref.repo and ref.repo.casefold().endswith("-gguf"):
        return [hub_flag, ref.repo]
    return [file_flag, placeholder]


# Registry method -> llama.cpp --spec-type (paircheck/_engine/llamacpp*.py's methods).
LLAMACPP_SPEC_TYPES = {
    "draft-model": "draft-simple",
    "eagle3": "draft-eagle3",
    "mtp": "draft-mtp",
    "dflash": "draft-dflash",
    "dspark": "draft-dspark",
    "ngram": "ngram-mod",
}


def _llamacpp(entry: RegistryEntry) -> LaunchLine | None:
    spec = LLAMACPP_SPEC_TYPES.get(entry.method)
    if spec is None:
        return None
    argv = ["llama-server", *_gguf(entry.target, "-m", "-hf", "TARGET.gguf")]
    if _has_draft_file(entry):
        argv += _gguf(entry.draft, "-md", "-hfd", "DRAFT.gguf")
    # Without --spec-type llama-server loads the draft and never uses it.
    argv += ["--spec-type", spec]
    return LaunchLine("llama.cpp", "shell", shlex.join(argv))


# Registry method -> vLLM speculative_config "method" (paircheck/_engine/vllm.py's methods);
# cross-vocab is draft_model with use_heterogeneous_vocab (vLLM's token-level intersection).
VLLM_METHODS = {
    "draft-model": "draft_model",
    "cross-vocab": "draft_model",
    "eagle": "eagle",
    "eagle3": "eagle3",
    "mtp": "mtp",
    "dflash": "dflash",
    "dspark": "dspark",
    "ngram": "ngram",
    "suffix": "suffix",
}


def _vllm(entry: RegistryEntry) -> LaunchLine | None:
    method = VLLM_METHODS.get(entry.method)
    if method is None:
        return None
    config: dict[str, object] = {"method": method}
    if _has_draft_file(entry):
        # A built-in MTP needs no model: vLLM uses the target's own MTP layers.
        config["model"] = _hub(entry.draft, "DRAFT")
    if method != "suffix":
        config["num_speculative_tokens"] = DRAFT_LENGTH
    if entry.method == "cross-vocab":
        config["use_heterogeneous_vocab"] = True
    argv = ["vllm", "serve", _hub(entry.target, "TARGET"), "--speculative-config", json.dumps(config)]
    return LaunchLine("vllm", "shell", shlex.join(argv))


# Registry method -> SGLang --speculative-algorithm (paircheck/_engine/sglang.py's methods).
SGLANG_ALGORITHMS = {"draft-model": "STANDALONE", "eagle3": "EAGLE3", "ngram": "NGRAM"}


def _sglang(entry: RegistryEntry) -> LaunchLine | None:
    algorithm = SGLANG_ALGORITHMS.get(entry.method)
    if algorithm is None:
        return None
    argv = ["python", "-m", "sglang.launch_server", "--model-path", _hub(entry.target, "TARGET"),
            "--speculative-algorithm", algorithm]
    if _has_draft_file(entry):
        argv += ["--speculative-draft-model-path", _hub(entry.draft, "DRAFT")]
    return LaunchLine("sglang", "shell", shlex.join(argv))


def _transformers(entry: RegistryEntry) -> LaunchLine | None:
    if entry.method not in ("draft-model", "cross-vocab"):
        return None
    draft = json.dumps(_hub(entry.draft, "DRAFT"))  # a Python string literal, quotes escaped
    lines = [
        f"# model, tok, inputs: {entry.target.repo or entry.target.name} loaded as usual",
        f"draft = AutoModelForCausalLM.from_pretrained({draft})",
    ]
    if entry.method == "cross-vocab":
        # Universal Assisted Decoding: both tokenizers, so the texts can be translated.
        lines += [
            f"draft_tok = AutoTokenizer.from_pretrained({draft})",
            "model.generate(**inputs, assistant_model=draft, tokenizer=tok, assistant_tokenizer=draft_tok)",
        ]
    else:
        lines.append("model.generate(**inputs, assistant_model=draft)")
    return LaunchLine("transformers", "python", "\n".join(lines))


def _lmstudio(entry: RegistryEntry) -> LaunchLine | None:
    if entry.method != "draft-model":
        return None
    return LaunchLine("lmstudio", "ui", f"Load {entry.target.name}; in the chat sidebar (Power User mode): "
                      f"Speculative Decoding -> Draft Model: {entry.draft.name}")


def _koboldcpp(entry: RegistryEntry) -> LaunchLine | None:
    if entry.method != "draft-model":
        return None
    argv = ["koboldcpp", "--model", "TARGET.gguf", "--draftmodel", "DRAFT.gguf", "--draftamount", str(DRAFT_LENGTH)]
    return LaunchLine("koboldcpp", "shell", shlex.join(argv))


# Registry method -> TensorRT-LLM decoding_type (paircheck/_engine/tensorrt_llm.py's methods).
TRTLLM_DECODING = {"draft-model": "DraftTarget", "eagle3": "Eagle3"}


def _tensorrt_llm(entry: RegistryEntry) -> LaunchLine | None:
    decoding = TRTLLM_DECODING.get(entry.method)
    if decoding is None:
        return None
    target = shlex.quote(_hub(entry.target, "TARGET"))
    # The speculative settings live in a YAML file; a here-document keeps it one paste.
    text = "\n".join([
        "cat > spec.yaml <<'EOF'",
        "speculative_config:",
        f"  decoding_type: {decoding}",
        f"  speculative_model: {json.dumps(_hub(entry.draft, 'DRAFT'))}",
        f"  max_draft_len: {DRAFT_LENGTH}",
        "EOF",
        f"trtllm-serve {target} --config spec.yaml",
    ])
    return LaunchLine("tensorrt-llm", "shell", text)


_BUILDERS: dict[str, Callable[[RegistryEntry], LaunchLine | None]] = {
    "llama.cpp": _llamacpp,
    "vllm": _vllm,
    "sglang": _sglang,
    "transformers": _transformers,
    "lmstudio": _lmstudio,
    "koboldcpp": _koboldcpp,
    "tensorrt-llm": _tensorrt_llm,
}


def launch_lines(entry: RegistryEntry) -> tuple[LaunchLine, ...]:
    """A line for each engine the pair is documented to work on, where paircheck knows one.

    Engines the pair fails on (``fails_on``, a "fails" entry) get none: there is nothing to run.
    """
    if entry.status != "works":
        return ()
    found = []
    for engine in entry.engines:
        build = _BUILDERS.get(engine)
        if build is None or entry.evidence_for(engine) not in WORKS_EVIDENCE:
            continue
        line = build(entry)
        if line is not None:
            found.append(line)
    return tuple(found)


def engines_without_line(entry: RegistryEntry) -> tuple[str, ...]:
    """Working engines that get no launch line (no rules for them, or not for this method)."""
    if entry.status != "works":
        return ()
    have = {line.engine for line in launch_lines(entry)}
    return tuple(e for e in entry.engines if e not in have)
