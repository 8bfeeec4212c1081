"""llama.cpp's rule for a separate draft model (``--spec-type draft-simple``).

The checks are those of ``common_speculative_are_compatible`` in common/speculative.cpp
of the reference version, in its order, preceded by "can each file be loaded at all".
All of them are evaluated, so a user sees every problem at once; the first failure is
the one llama.cpp itself stops at. The warnings cover what llama.cpp accepts but then
pays for at run time, and never says.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from paircheck import constants as K
from paircheck import llamacpp_tables as T
from paircheck._engine.common import finding, llama_server_line, result, shell_path
from paircheck._engine.versions import VersionRange, parse_version
from paircheck.findings import FAIL, PASS, SKIP, Finding, Report, Rule
from paircheck.model import LlamaVocab, ModelDescription, TensorSectionError
from paircheck.token_display import show

ENGINE = "llama.cpp"
METHOD = "draft-simple"

SAME_FAMILY_FIX = (
    "Use a draft from the same tokenizer family as the target (for example the smallest "
    "model of the same series), converted with the same llama.cpp version."
)

R_LOADABLE = Rule(
    "LC001",
    "loadable",
    "llama.cpp can load the file",
    "llama.cpp's loader refuses some files outright. Before anything else, even for a "
    "vocab-only load, it reads every tensor info and checks it (name length and "
    "uniqueness, dimensions and their overflow, a known ggml type whose block size divides "
    "the row, offsets that follow one another with the file's alignment) and that each "
    "tensor's data lies inside the file: a file cut short, typically an interrupted "
    "download, fails here with 'tensor ... data is not within the file bounds, model is "
    "corrupted or incomplete'; a file cut inside its keys fails with 'failed to read key-value pairs' "
    "(then nothing of its vocabulary can be judged). For a Hugging Face folder, the weights are "
    "checked as the safetensors loader checks them (each header against its file's size, every "
    "shard of model.safetensors.index.json present). Then the vocabulary: unknown tokenizer model or BPE "
    "pre-tokenizer, special-token ids or add flags stored with the wrong GGUF type "
    "(ids must be UINT32, flags BOOL), missing merges for a BPE vocab, duplicate token "
    "texts (a process abort), an unknown architecture, big-endian files, duplicate keys. "
    "For a draft this is a hard failure: llama-server exits with 'failed to load draft "
    "model', or, where the loader aborts (duplicate texts), dies on the assertion before it "
    "has loaded the target (with the default --fit on it reads both files first).",
    "For an incomplete file, resume or repeat the download (for a Hub file: "
    "`huggingface-cli download REPO FILE`; for a Hugging Face folder: `hf download REPO`). "
    "Otherwise reconvert the model with a current "
    "convert_hf_to_gguf.py, or use a newer llama.cpp if the tokenizer or architecture is "
    "newer than your build.",
    source="ggml-org/llama.cpp as vendored by llama-cpp-python 0.3.36: ggml/src/gguf.cpp "
    "gguf_init_from_reader ('failed to read tensor info', 'tensor '%s' has offset %lu, "
    "expected %zu', ...), src/llama-model-loader.h llama_tensor_weight ('tensor '%s' data is "
    "not within the file bounds, model is corrupted or incomplete'); huggingface/safetensors "
    "v0.8.0-rc.0 safetensors/src/tensor.rs SafeTensors::read_metadata, Metadata::validate "
    "('incomplete metadata, file not fully covered', ...)",
)
R_VOCAB_TYPE = Rule(
    "LC002",
    "vocab_type",
    "Both vocabularies are of the same type",
    "llama.cpp compares the vocab type its loader derives from tokenizer.ggml.model: "
    "SPM (llama), BPE (gpt2, gemma4, ...), WPM (bert), UGM (t5), RWKV, PLAMO2. Different "
    "model strings can map to the same type; only the type matters. llama.cpp names this "
    "failure at its default log level (a warning), as it names the BOS and EOS ones; after "
    "any failed compatibility check llama-server logs 'failed to initialize speculative "
    "decoding context', unloads the draft and serves without speculation.",
    SAME_FAMILY_FIX,
)
R_BOS = Rule(
    "LC003",
    "bos",
    "BOS handling matches",
    "Both models must agree on whether a BOS token is added to the prompt; when both add "
    "one, the BOS ids must be equal. The values are the loader's: a missing "
    "add_bos_token key means true for SPM, WPM and some BPE pre-tokenizers (llama-bpe, "
    "tekken, ...), Gemma-4 is forced to true, and an out-of-range id falls back to the "
    "type default.",
    "Use a draft from the same family. When the add_bos flag is all that stands in the way, "
    "paircheck names the --override-kv tokenizer.ggml.add_bos_token=bool:... value that makes "
    "the pair pass (it applies to both models, so one of them then sees prompts it was not "
    "trained on); it never suggests it when another check would still fail.",
)
R_EOS = Rule(
    "LC004",
    "eos",
    "EOS handling matches",
    "Both models must agree on whether an EOS token is appended; when both append one, "
    "the EOS ids must be equal (UGM/t5 vocabularies append EOS by default).",
    SAME_FAMILY_FIX,
)
R_VOCAB_SIZE = Rule(
    "LC005",
    "vocab_size",
    "Token counts differ by at most 128",
    "The number of entries in tokenizer.ggml.tokens may differ by at most 128 "
    "(SPEC_VOCAB_MAX_SIZE_DIFFERENCE); 128 passes, 129 fails. Family members padded to "
    "different sizes (151936 vs 152064) pass. llama.cpp reports this failure only at "
    "debug level, behind the message 'draft model vocab type must match target model'.",
    SAME_FAMILY_FIX,
)
R_TOKEN_TEXT = Rule(
    "LC006",
    "token_text",
    "Token texts are byte-equal from id 5 up",
    "For every id from 5 up to the smaller token count, the token texts must be "
    "byte-equal (after the loader cuts each text at its first NUL byte and replaces an "
    "empty text with [EMPTY_<id>]). Ids 0-4 and the tail of the larger vocabulary are "
    "not compared. llama.cpp reports this failure only at debug level.",
    SAME_FAMILY_FIX + " Fine-tunes that add tokens (chat markers, tools) need a draft "
    "fine-tuned with the same added tokens.",
)

W_VOCAB_TAIL = Rule(
    "LW101",
    "vocab_tail",
    "Token ids exist in one model but not the other",
    "llama.cpp accepts token counts up to 128 apart, but in the reference version any id "
    "present in one model and not the other aborts llama-server (GGML_ABORT "
    "'get_sub_batch: failed to add token ...'): a target token past the draft's "
    "vocabulary cannot be mirrored into the draft, a drafted id past the target's "
    "vocabulary cannot be verified. With padding entries ([PAD...]) that are never "
    "sampled this rarely happens, and it stays a warning; with real tokens it will, so the "
    "verdict is ABORTS AT RUN TIME (JSON verdict \"aborts\", exit code 4; `--fail-on refused` "
    "lets a launch script go on anyway).",
    "Prefer a draft with exactly the target's token count; otherwise make sure the extra "
    "ids are padding that is never produced.",
    kind="warning",
)
W_EOG = Rule(
    "LW102",
    "end_of_generation",
    "End-of-generation tokens differ",
    "llama.cpp stops generating at the target's end-of-generation tokens (EOS, EOT, EOM "
    "and texts such as <|im_end|>). If the draft does not treat the same tokens as the "
    "end, it keeps proposing past the target's end and its drafts are wasted.",
    "Prefer the instruct/chat variant of the draft that matches the target's variant.",
    kind="warning",
)
W_LOADER = Rule(
    "LW103",
    "loader_defaults",
    "llama.cpp silently replaces stored values",
    "The loader ignores an out-of-range special-token id (and keeps the type default), "
    "disables a default id past the vocabulary, replaces empty token texts, guesses a "
    "missing pre-tokenizer and forces add_bos for Gemma-4. paircheck shows where the "
    "values it compared came from.",
    "Usually nothing: the check already used the values llama.cpp will use. Reconvert "
    "the file if the stored metadata looks wrong.",
    kind="warning",
)
W_TOKENIZATION = Rule(
    "LW104",
    "tokenization",
    "Same token texts, different tokenization rules",
    "llama.cpp does not compare BPE pre-tokenizers or merges. Two vocabularies with "
    "identical texts but different merge rules or pre-tokenizers were trained on "
    "different token sequences, so the draft's guesses are accepted less often.",
    "Prefer a draft converted from the same tokenizer as the target.",
    kind="warning",
)
W_HEAD = Rule(
    "LW105",
    "draft_is_head",
    "The draft is a speculative head, not a standalone model",
    "EAGLE-3, DFlash/DSpark and MTP-assistant files are heads that read the target's "
    "hidden states. draft-simple runs the draft as a standalone model, which a head "
    "cannot be.",
    "Use the head's own method: --spec-type draft-eagle3, draft-dflash, draft-dspark or "
    "draft-mtp.",
    kind="warning",
)
W_NONE_ABORT = Rule(
    "LW106",
    "no_vocab_abort",
    "Two vocabularies without token texts",
    "Both files declare no vocabulary (tokenizer.ggml.model no_vocab/none). llama.cpp "
    "asserts when it reads a text of such a vocabulary, so the check aborts the process "
    "as soon as the smaller count exceeds 5.",
    "Use GGUF files that carry their tokenizer.",
    kind="warning",
)

RULES: tuple[Rule, ...] = (
    R_LOADABLE, R_VOCAB_TYPE, R_BOS, R_EOS, R_VOCAB_SIZE, R_TOKEN_TEXT,
    W_VOCAB_TAIL, W_EOG, W_LOADER, W_TOKENIZATION, W_HEAD, W_NONE_ABORT,
)


def _size_text(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def _incomplete_reason(error: TensorSectionError, desc: ModelDescription | None) -> str:
    """The plain-words reason for a file that ends before what its header declares."""
    if error.reason is not None:
        return error.reason
    have, need = error.file_size, error.needed
    # A split model or a folder: name the file that is cut, not what the user gave.
    other = desc is not None and desc.resolved_path is not None and error.file != desc.resolved_path
    base = error.file.replace(chr(92), "/").rsplit("/", 1)[-1]
    what = f"{'shard' if error.loader == 'llama.cpp' else 'file'} {base}" if other else "the file"
    if have is not None and need is not None and need > have:
        a, b = _size_text(have), _size_text(need)
        if a == b:
            a, b = f"{have:,} bytes", f"{need:,} bytes"
        return f"{what} is incomplete: {a} of {b}; the download was probably interrupted"
    where = "" if have is None else f" after {_size_text(have)}"
    inside = "its header" if error.loader != "llama.cpp" else "its list of tensors"
    return f"{what} is incomplete: it ends{where} inside {inside}; the download was probably interrupted"


def _incomplete_fix(desc: ModelDescription | None, error: TensorSectionError) -> str:
    if desc is not None and error.loader != "llama.cpp" and error.file.startswith(("http://", "https://")):
        # A Hugging Face folder whose weights were checked on the Hub itself.
        return ("The copy on the Hub is itself incomplete (its header declares more than the Hub holds): "
                "tell the repository's owners, or use another repository.")
    if desc is not None and desc.origin.remote:
        return "The file on the server is itself cut short: tell its publisher, or take another copy or quant."
    download = desc.origin.download if desc is not None else None
    if download is not None:
        # `hf download` resumes a folder; a GGUF in the Hub cache is fetched anew.
        verb = "Resume the download" if download.resumes else "Download it again"
        alternative = f" (or: {download.commands[1]})" if len(download.commands) > 1 else ""
        placeholder = f" ({download.placeholder})" if download.placeholder else ""
        return f"{verb}: {download.commands[0]}{alternative}{placeholder}"
    return (
        f"Resume the download (e.g. `wget -c URL -O {error.file}` or `curl -C - -o {error.file} URL`) "
        "or download the file again."
    )


def check_loadable(side: str, vocab: LlamaVocab, desc: ModelDescription | None = None) -> Finding:
    error = desc.metadata.tensor_error if desc is not None else None
    if error is None and vocab.failure is None:
        return result(R_LOADABLE, PASS, f"{side}: llama.cpp loads the vocabulary", side=side)
    if error is not None:
        # llama.cpp reads the tensor section right after the keys (gguf_init_from_reader)
        # and checks the data bounds in the loader's constructor, before the vocabulary.
        # A cut inside the keys leaves no vocabulary to judge: its failure is the same cut.
        kv_cut = desc is not None and not desc.metadata.kv_complete
        also = f" (and then: {vocab.failure.message})" if vocab.failure is not None and not kv_cut else ""
        said = f"{error.loader} refuses to load it: {error.message}{also}"
        if error.incomplete:
            message = f"{side}: {_incomplete_reason(error, desc)}. {said}"
        else:
            message = f"{side}: {error.reason}. {said}" if error.reason else f"{side}: {said}"
        found = result(
            R_LOADABLE, FAIL, message, side=side, error=error.message, aborts=False,
            incomplete=error.incomplete, file=error.file, file_size=error.file_size, needed=error.needed,
            loader=error.loader,
        )
        if error.incomplete:
            found.fix = _incomplete_fix(desc, error)
        return found
    assert vocab.failure is not None
    how = "aborts the process while loading" if vocab.failure.aborts else "refuses to load"
    # A vision projector (mmproj) has no vocabulary: name the file for what it is first.
    what = ("a vision projector (mmproj: general.architecture clip), not a language model; "
            if desc is not None and desc.identity.architecture == "clip" else "")
    found = result(
        R_LOADABLE,
        FAIL,
        f"{side}: {what}llama.cpp {how} it: {vocab.failure.message}",
        side=side,
        error=vocab.failure.message,
        aborts=vocab.failure.aborts,
    )
    if what:
        found.fix = (f"Give the language model itself as the {side}; a projector goes to llama-server "
                     "beside its model, with --mmproj.")
    return found


def _skip(rule: Rule) -> Finding:
    return result(rule, SKIP, "not checked: a file does not load")


def check_vocab_type(t: LlamaVocab, d: LlamaVocab) -> Finding:
    details = dict(target=t.vocab_type, draft=d.vocab_type, target_name=t.vocab_type_name, draft_name=d.vocab_type_name)
    if t.vocab_type == d.vocab_type:
        return result(R_VOCAB_TYPE, PASS, f"both are {t.vocab_type_name}", **details)
    return result(
        R_VOCAB_TYPE,
        FAIL,
        f"vocab types differ: target {t.vocab_type_name} ({t.tokenizer_model}), "
        f"draft {d.vocab_type_name} ({d.tokenizer_model})",
        **details,
    )


def _check_special(rule: Rule, what: str, t_add: bool, d_add: bool, t_id: int, d_id: int) -> Finding:
    details = dict(target_add=t_add, draft_add=d_add, target_id=t_id, draft_id=d_id)
    if t_add != d_add:
        verb = "adds" if what == "BOS" else "appends"
        return result(
            rule,
            FAIL,
            f"the target {'' if t_add else 'never '}{verb} {what}, the draft "
            f"{'' if d_add else 'never '}{verb} it (add: {int(t_add)} - {int(d_add)})",
            **details,
        )
    if t_add and t_id != d_id:
        return result(rule, FAIL, f"both add {what} but the ids differ: target {t_id}, draft {d_id}", **details)
    if not t_add:
        return result(rule, PASS, f"neither adds {what} (ids not compared)", **details)
    return result(rule, PASS, f"both add {what} {t_id}", **details)


def check_bos(t: LlamaVocab, d: LlamaVocab) -> Finding:
    return _check_special(R_BOS, "BOS", t.add_bos, d.add_bos, t.bos_id, d.bos_id)


def check_eos(t: LlamaVocab, d: LlamaVocab) -> Finding:
    return _check_special(R_EOS, "EOS", t.add_eos, d.add_eos, t.eos_id, d.eos_id)


def check_vocab_size(t: LlamaVocab, d: LlamaVocab) -> Finding:
    diff = abs(t.n_tokens - d.n_tokens)
    limit = T.SPEC_VOCAB_MAX_SIZE_DIFFERENCE
    details = dict(target=t.n_tokens, draft=d.n_tokens, difference=diff, max_difference=limit)
    if diff <= limit:
        message = f"{t.n_tokens} vs {d.n_tokens} tokens (difference {diff} <= {limit})"
        return result(R_VOCAB_SIZE, PASS, message, **details)
    return result(
        R_VOCAB_SIZE,
        FAIL,
        f"token counts differ by {diff}: target {t.n_tokens}, draft {d.n_tokens} (at most {limit} allowed)",
        **details,
    )


def first_text_difference(t: LlamaVocab, d: LlamaVocab) -> int | None:
    """The first id >= 5 below the smaller count whose texts differ, or None."""
    start = T.SPEC_VOCAB_CHECK_START_TOKEN_ID
    end = min(t.n_tokens, d.n_tokens)
    if end <= start or t.texts[start:end] == d.texts[start:end]:
        return None
    # Compare in blocks so the search stays in C for long equal stretches.
    step = 4096
    for block in range(start, end, step):
        stop = min(block + step, end)
        if t.texts[block:stop] != d.texts[block:stop]:
            for i in range(block, stop):
                if t.texts[i] != d.texts[i]:
                    return i
    return None


def check_token_text(t: LlamaVocab, d: LlamaVocab) -> Finding:
    start = T.SPEC_VOCAB_CHECK_START_TOKEN_ID
    end = min(t.n_tokens, d.n_tokens)
    if t.vocab_type == T.VOCAB_NONE or d.vocab_type == T.VOCAB_NONE:
        if t.vocab_type == d.vocab_type and end > start:
            return result(
                R_TOKEN_TEXT, FAIL,
                "neither vocabulary has token texts: llama.cpp aborts (GGML_ASSERT) when it reads them",
                first_id=start, aborts=True,
            )
        return result(R_TOKEN_TEXT, SKIP if end > start else PASS, "no token texts to compare (vocab type NONE)")
    index = first_text_difference(t, d)
    if index is None:
        compared = max(0, end - start)
        return result(R_TOKEN_TEXT, PASS, f"{compared} token texts equal (ids {start}..{end - 1})", compared=compared)
    differing = sum(map(operator.ne, t.texts[index:end], d.texts[index:end]))
    return result(
        R_TOKEN_TEXT,
        FAIL,
        f"token {index} differs: target {show(t.texts[index])}, draft {show(d.texts[index])} "
        f"({differing} of {end - start} compared ids differ)",
        first_id=index,
        target_text=show(t.texts[index]),
        draft_text=show(d.texts[index]),
        differing=differing,
        compared=end - start,
    )


# (rule, function of the two vocabs); loadable comes first, then llama.cpp's order.
PAIR_CHECKS: tuple[tuple[Rule, Callable[[LlamaVocab, LlamaVocab], Finding]], ...] = (
    (R_VOCAB_TYPE, check_vocab_type),
    (R_BOS, check_bos),
    (R_EOS, check_eos),
    (R_VOCAB_SIZE, check_vocab_size),
    (R_TOKEN_TEXT, check_token_text),
)


def run_checks(
    t: LlamaVocab, d: LlamaVocab, target: ModelDescription | None = None, draft: ModelDescription | None = None
) -> list[Finding]:
    checks = [check_loadable("target", t, target), check_loadable("draft", d, draft)]
    both_load = t.loadable and d.loadable
    for rule, check in PAIR_CHECKS:
        checks.append(check(t, d) if both_load else _skip(rule))
    _bos_fix(t, d, checks)
    return checks


def _bos_fix(t: LlamaVocab, d: LlamaVocab, checks: list[Finding]) -> None:
    """Give a failed BOS check the --override-kv that makes the whole pair pass, if one does.

    --override-kv applies to both models, so both get the same add_bos; the suggestion is
    made only when every check then passes (else it would only move the failure).
    """
    bos = next((c for c in checks if c.code == R_BOS.code and c.status == FAIL), None)
    if bos is None:
        return
    for value in (False, True):
        t2, d2 = replace(t, add_bos=value), replace(d, add_bos=value)
        if all(c.status != FAIL for rule, check in PAIR_CHECKS for c in [check(t2, d2)]):
            bos.fix = (f"--override-kv tokenizer.ggml.add_bos_token=bool:{str(value).lower()} makes the pair pass "
                       "(llama-server applies it to both models, so one of them then sees prompts it was not "
                       "trained on); a draft from the same family needs no override.")
            return
    bos.fix = SAME_FAMILY_FIX


_PADDING_PREFIXES = (
    b"[PAD", b"<|PAD", b"<pad", b"[pad", b"<unused", b"[UNUSED", b"<|unused", b"<|reserved", b"<|extra_",
)


def _is_padding(text: bytes) -> bool:
    return text.startswith(_PADDING_PREFIXES)


def warn_vocab_tail(t: LlamaVocab, d: LlamaVocab) -> Finding | None:
    """Ids one vocabulary has and the other lacks. With real tokens among them llama-server
    is predicted to abort at run time (``aborts``: the report's verdict is then ABORTS);
    padding that is never sampled only stays a warning."""
    if t.n_tokens == d.n_tokens or abs(t.n_tokens - d.n_tokens) > T.SPEC_VOCAB_MAX_SIZE_DIFFERENCE:
        return None
    larger, smaller, who = (d, t, "draft") if d.n_tokens > t.n_tokens else (t, d, "target")
    lo, hi = smaller.n_tokens, larger.n_tokens - 1
    tail = larger.texts[lo:] if larger.texts else []
    real = [i for i, text in enumerate(tail, start=lo) if not _is_padding(text)]
    sample = ", ".join(f"{i} {show(larger.text(i))}" for i in (real or list(range(lo, hi + 1)))[:3])
    n_real = f"{len(real)} real token{'s' if len(real) != 1 else ''}"
    if who == "draft":
        effect = (
            f"the draft has ids {lo}..{hi} that the target lacks; llama-server aborts "
            f"(get_sub_batch: failed to add token) the first time the draft proposes one"
        )
        summary = f"llama-server loads the pair, then aborts the first time the draft proposes one of the {n_real} " \
                  f"the target lacks among ids {lo}..{hi}"
    else:
        effect = (
            f"target ids {lo}..{hi} cannot be mirrored by the draft; llama-server aborts "
            f"(get_sub_batch: failed to add token) when the prompt or output contains one"
        )
        summary = f"llama-server loads the pair, then aborts when the prompt or output contains one of the " \
                  f"target's {n_real} the draft lacks among ids {lo}..{hi}"
    kind = (f"{len(real)} of them are real tokens" if real else
            "all of them look like padding, which is never sampled: harmless, --strict does not fail on it")
    found = finding(
        W_VOCAB_TAIL,
        f"{effect} ({kind}; e.g. {sample})",
        larger=who, first_id=lo, last_id=hi, real_tokens=len(real), real_ids=real[:20], aborts=bool(real),
    )
    if not real and tail:  # padding only, every text read: nothing that can hurt
        found.details["harmless"] = True
    if real:
        found.details["abort"] = summary
    return found


def _eog_texts(v: LlamaVocab) -> set[bytes]:
    return {v.texts[i] for i in v.eog_ids if 0 <= i < len(v.texts)}


def warn_end_of_generation(t: LlamaVocab, d: LlamaVocab) -> Finding | None:
    if not t.texts or not d.texts:
        return None
    t_eog, d_eog = _eog_texts(t), _eog_texts(d)
    missing = sorted(t_eog - d_eog)
    if not missing and t.eos_id == d.eos_id:
        return None
    if not missing:
        if t.text(t.eos_id) == d.text(d.eos_id):
            return None
        message = f"EOS differs: target {t.eos_id} {show(t.text(t.eos_id))}, draft {d.eos_id} {show(d.text(d.eos_id))}"
    else:
        message = (
            "the draft does not stop at the target's end-of-generation token(s) "
            + ", ".join(show(x) for x in missing[:4])
            + ": it keeps drafting past the target's end"
        )
    return finding(
        W_EOG,
        message,
        target_eog=sorted(show(x) for x in t_eog),
        draft_eog=sorted(show(x) for x in d_eog),
        target_eos=t.eos_id,
        draft_eos=d.eos_id,
    )


def warn_loader_defaults(side: str, v: LlamaVocab) -> Finding | None:
    notes = [w for w in v.loader_warnings if not w.startswith("empty token at index")]
    empties = len(v.loader_warnings) - len(notes)
    if empties:
        notes.append(f"{empties} empty token text(s) replaced with [EMPTY_<id>]")
    if not notes:
        return None
    return finding(W_LOADER, f"{side}: " + "; ".join(notes[:4]), side=side, loader_warnings=notes)


def warn_tokenization(target: ModelDescription, draft: ModelDescription) -> Finding | None:
    t, d = target.vocab, draft.vocab
    if t.vocab_type != T.VOCAB_BPE or d.vocab_type != T.VOCAB_BPE:
        return None
    t_merges = _count(target, K.MERGES)
    d_merges = _count(draft, K.MERGES)
    if t.pre == d.pre and t_merges == d_merges:
        return None
    pre = f"pre-tokenizer {t.pre!r} vs {d.pre!r}" if t.pre != d.pre else f"the same pre-tokenizer {t.pre!r}"
    merges = (f"{t_merges} vs {d_merges} merges" if t_merges != d_merges
              else f"the same number of merges ({t_merges})")
    return finding(
        W_TOKENIZATION,
        f"{pre}, {merges}",
        target_pre=t.pre, draft_pre=d.pre, target_merges=t_merges, draft_merges=d_merges,
    )


def _count(desc: ModelDescription, key: str) -> int | None:
    value = desc.metadata.get(key)
    return getattr(value, "count", None)


HEAD_ARCHITECTURES = {"eagle3": "draft-eagle3", "dflash": "draft-dflash", "gemma4-assistant": "draft-mtp"}


def warn_head(draft: ModelDescription) -> Finding | None:
    arch = draft.identity.architecture or ""
    method = HEAD_ARCHITECTURES.get(arch)
    if method is None:
        return None
    return finding(
        W_HEAD,
        f"the draft's architecture is {arch!r}: it is a head for {method}, not a standalone draft",
        architecture=arch, method=method,
    )


def warn_none(t: LlamaVocab, d: LlamaVocab) -> Finding | None:
    if t.vocab_type == d.vocab_type == T.VOCAB_NONE and min(t.n_tokens, d.n_tokens) > 5:
        return finding(W_NONE_ABORT, "both files have no vocabulary; llama.cpp aborts while comparing them")
    return None


GENERIC = "draft model vocab type must match target model to use speculation"
# What llama-server does with a pair common_speculative_are_compatible refuses
# (tools/server/server-context.cpp load_model): it catches the exception, logs this
# error, frees the draft and serves without speculation: slower, and no exit code says so.
SPEC_INIT_FAILED = f"failed to initialize speculative decoding context: {GENERIC}"
SERVES_WITHOUT = "and the server then runs without speculation (the draft is unloaded)"


def engine_message(first: Finding, target: ModelDescription, draft: ModelDescription) -> str | None:
    """What llama-server prints at its default log level when ``first`` is the first failure.

    The check lines are those of common_speculative_are_compatible (common/speculative.cpp),
    with the values llama.cpp prints: the type and BOS/EOS lines are warnings (default
    level), the size and text lines are debug only (``-lv 5``). A loader abort prints no
    error line at all: the process dies on the assertion (with the default ``--fit on`` even
    before the target is loaded for real, since both files are read to fit them first).
    """
    name, d = first.name, first.details
    if name == "loadable":
        if d.get("aborts"):
            return f"no error line: the process aborts while reading the {d['side']} ({_assertion(d['error'])})"
        # llama-server loads the main model first (server-context.cpp load_model); the path is its own.
        side, what = (target, "model") if d.get("side") == "target" else (draft, "draft model")
        path = side.resolved_path or side.location
        return f"failed to load {what}, '{path}', then: exiting due to model loading error"
    if name == "vocab_type":
        line = f"{GENERIC} but vocab_type_dft = {d['draft']} while vocab_type_tgt = {d['target']}"
    elif name in ("bos", "eos"):
        # The closing parenthesis without an opening one is llama.cpp's own.
        line = (f"draft model {name} tokens must match target model to use speculation. "
                f"add: {int(d['target_add'])} - {int(d['draft_add'])}, id: {d['target_id']} - {d['draft_id']})")
    elif name == "token_text" and d.get("aborts"):
        return ("no error line: the process aborts in the check (GGML_ASSERT(pimpl->type != "
                "LLAMA_VOCAB_TYPE_NONE) failed, in llama_vocab::token_get_text)")
    elif name in ("vocab_size", "token_text"):
        return f"only '{SPEC_INIT_FAILED}' (the reason is logged at debug level only), {SERVES_WITHOUT}"
    else:
        return None
    return f"'{line}', then '{SPEC_INIT_FAILED}', {SERVES_WITHOUT}"


def _assertion(error: str) -> str:
    """The GGML_ASSERT/GGML_ABORT a loader failure message names."""
    for marker in ("GGML_ASSERT(", "GGML_ABORT"):
        start = error.find(marker)
        if start >= 0:
            return error[start:].removesuffix(" aborts the process") + (" failed" if marker == "GGML_ASSERT(" else "")
    return "GGML_ASSERT"


def installed_note(version: str, summary: str) -> str:
    """What the installed llama-server means for the pinned rules, in one line's words."""
    reference = T.REFERENCE_LLAMA_VERSION
    if version == reference:
        return (f"{summary}: llama.cpp {version}, the version of the pinned reference (a build of it may differ "
                "from the vendored source)")
    try:
        newer = parse_version(version) > parse_version(reference)
    except ValueError:
        newer = False
    if newer:
        return (f"{summary}: newer than the pinned reference ({reference}), and no later llama.cpp source was "
                "read, so the pinned rules apply as they are (common_speculative_are_compatible may have changed)")
    return f"{summary}: not the pinned reference ({reference}); the pinned rules apply as they are"


def evaluate(target: ModelDescription, draft: ModelDescription, method: str = METHOD) -> Report:
    t, d = target.vocab, draft.vocab
    checks = run_checks(t, d, target, draft)
    found: list[Finding | None] = [warn_head(draft)]
    # Pair warnings only matter for a pair that works; for a refused pair they are noise.
    if t.loadable and d.loadable and all(c.status != FAIL for c in checks):
        found += [
            warn_vocab_tail(t, d),
            warn_end_of_generation(t, d),
            warn_tokenization(target, draft),
            warn_none(t, d),
        ]
    found += [warn_loader_defaults("target", t), warn_loader_defaults("draft", d)]
    report = Report(
        engine=ENGINE,
        method=method,
        target=target,
        draft=draft,
        checks=checks,
        warnings=[f for f in found if f is not None],
        engine_version=T.REFERENCE_VERSION,
    )
    first = report.first_failure
    if first is not None:
        report.engine_says = engine_message(first, target, draft)
    if report.run_time_aborts:
        # Never the launch line of a server predicted to die: what to use instead.
        report.next_steps += [
            "Use a draft with exactly the target's token count, e.g. the smallest model of the same series; "
            "to rank the models you have:",
            f"paircheck scan {shell_path(target)}",
        ]
    elif report.compatible:
        report.next_steps += [
            *llama_server_line(target, draft, "--spec-type draft-simple"),
            "Without --spec-type the draft is loaded but never used, silently.",
        ]
    return report


def _methods() -> tuple[str, ...]:
    from paircheck._engine import llamacpp_methods as M

    return (METHOD, *M.HEAD_METHODS, *M.NGRAM_METHODS)


def _method_rules() -> tuple[Rule, ...]:
    from paircheck._engine import llamacpp_methods as M

    return M.RULES


@dataclass(frozen=True)
class LlamaCppEngine:
    name: str = ENGINE
    methods: tuple[str, ...] = field(default_factory=_methods)
    default_method: str = METHOD
    rules: tuple[Rule, ...] = field(default_factory=lambda: RULES + _method_rules())

    def resolve(self, method: str | None) -> str | None:
        if method is None:
            return self.default_method
        return method if method in self.methods else None

    versions: tuple[VersionRange, ...] = ()  # one rule set: the pinned reference version

    def evaluate(
        self, target: ModelDescription, draft: ModelDescription, method: str, version: str | None = None
    ) -> Report:
        if method != METHOD:
            from paircheck._engine.llamacpp_methods import evaluate_method

            return evaluate_method(target, draft, method)
        report = evaluate(target, draft, method)
        if not report.compatible or report.run_time_aborts:
            # The draft-simple verdict itself is unchanged; only a way forward is added.
            from paircheck._engine.llamacpp_methods import ngram_suggestion

            report.next_steps += ngram_suggestion(report)
        return report
