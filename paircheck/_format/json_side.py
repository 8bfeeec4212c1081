"""One model (a side of a pair, a scan's target) as every JSON shape describes it.

Below json_format and scan_render, which both embed it, so neither imports the other for it.
"""

from __future__ import annotations

from typing import Any

from paircheck.model import ModelDescription


def describe_side(desc: ModelDescription, fingerprints: Any = None) -> dict[str, Any]:
    v = desc.vocab
    ident = desc.identity
    error = desc.metadata.tensor_error
    side = {
        "location": desc.location,
        "path": desc.resolved_path,
        "source_kind": desc.source_kind,
        # LC001 for this file: llama.cpp loads it (kv section, tensor infos, data within
        # the file, vocabulary); for a Hugging Face folder also its safetensors headers.
        "loadable": error is None and v.loadable,
        "load_error": error.message if error is not None else v.load_error,
        # true: the file (or a shard) ends before what its header declares (a cut download).
        "incomplete": error is not None and error.incomplete,
        "identity": {
            "architecture": ident.architecture,
            "name": ident.name,
            "basename": ident.basename,
            "size_label": ident.size_label,
            "finetune": ident.finetune,
            "repo": ident.repo,
            "base_models": list(ident.base_models),
        },
        "vocab": {
            # The vocabulary alone (schema 1's vocab.loadable): false also when the file's
            # keys could not all be read.
            "vocab_loadable": v.loadable,
            "vocab_load_error": v.load_error,
            "tokenizer_model": v.tokenizer_model,
            "pre": v.pre,
            "vocab_type": v.vocab_type,
            "vocab_type_name": v.vocab_type_name,
            "n_tokens": v.n_tokens,
            "bos_id": v.bos_id,
            "add_bos": v.add_bos,
            "eos_id": v.eos_id,
            "add_eos": v.add_eos,
            # null when several EOT-looking tokens exist: llama.cpp picks one of
            # eot_candidates in its hash map's order, which the file does not decide.
            "eot_id": None if v.eot_ambiguous else v.eot_id,
            "eot_candidates": list(v.eot_candidates),
            "eom_id": v.eom_id,
            "eog_ids": sorted(v.eog_ids),
        },
        "gguf_version": desc.metadata.version,
        "metadata_bytes": desc.metadata_bytes,
        "notes": list(desc.notes),
    }
    # Vocabulary fingerprints (paircheck.fingerprint): null when not computed or when
    # the vocabulary has none (not loadable, no token texts).
    side["fingerprint"] = getattr(fingerprints, "full", None)
    side["fingerprint_prefix"] = getattr(fingerprints, "prefix", None)
    side["fingerprint_prefix_end"] = getattr(fingerprints, "prefix_end", None)
    return side
