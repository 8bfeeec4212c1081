"""The check consults the registry (paircheck._registry.consult) and cites its sources."""

from __future__ import annotations

import json
from pathlib import Path

from paircheck._registry import consult as RC
from paircheck._registry.identity import identity_from_string
from paircheck._registry.load import default_registry, load_registry
from paircheck.cli import main
from paircheck.fingerprint import fingerprint, fingerprints
from paircheck.pipeline import check_all_engines, check_descriptions, check_pair, describe

LMSTUDIO_DOCS = "https://lmstudio.ai/docs/advanced/speculative-decoding"

QWEN_14B = {
    "general.name": "Qwen2.5 14B Instruct",
    "general.basename": "Qwen2.5",
    "general.size_label": "14B",
    "general.finetune": "Instruct",
}
QWEN_05B = {"general.name": "Qwen2.5 0.5B Instruct", "general.size_label": "0.5B"}


def _codes(findings) -> list[str]:
    return [f.code for f in findings]


def _run(capsys, *args: str) -> tuple[int, str]:
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, capsys.readouterr().out


# --------------------------------------------------------------------------- documented pair


def test_general_name_identifies_a_documented_pair(gguf_factory, capsys) -> None:
    t = gguf_factory("t.gguf", extra_kv=QWEN_14B)
    d = gguf_factory("d.gguf", extra_kv=QWEN_05B)
    report = check_pair(str(t), str(d))
    assert _codes(report.registry) == ["RG001"]
    f = report.finding("RG001")
    assert f is not None
    assert f.details["id"] == "qwen2.5-14b-instruct--qwen2.5-0.5b-instruct"
    assert f.details["source"]["url"] == LMSTUDIO_DOCS
    assert f.details["matched_by"] == {"target": "name", "draft": "name"}
    assert LMSTUDIO_DOCS in f.message and "lmstudio" in f.message

    code, out = _run(capsys, str(t), str(d))
    assert code == 0
    section = out.split("Known pairs", 1)[1]
    assert "RG001 documented_pair" in section and LMSTUDIO_DOCS in section
    # After the warnings, before the next step.
    assert out.index("Known pairs") > out.index("Checks (")
    assert out.index("Known pairs") < out.index("\nNext:")


def test_basename_size_label_alone_are_enough(gguf_factory) -> None:
    t = gguf_factory(
        "t.gguf", extra_kv={"general.basename": "Qwen2.5", "general.size_label": "14B", "general.finetune": "Instruct"}
    )
    d = gguf_factory(
        "d.gguf", extra_kv={"general.basename": "Qwen2.5", "general.size_label": "0.5B", "general.finetune": "Instruct"}
    )
    report = check_pair(str(t), str(d))
    assert [f.details["id"] for f in report.registry] == ["qwen2.5-14b-instruct--qwen2.5-0.5b-instruct"]


def test_repo_url_identifies_by_repo(gguf_factory) -> None:
    t = gguf_factory("a.gguf", extra_kv={"general.repo_url": "https://huggingface.co/Qwen/Qwen2.5-14B-Instruct"})
    d = gguf_factory("b.gguf", extra_kv={"general.repo_url": "https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct"})
    report = check_pair(str(t), str(d))
    assert _codes(report.registry) == ["RG001"]
    assert report.registry[0].details["matched_by"] == {"target": "repo", "draft": "repo"}


def test_file_names_identify_when_metadata_does_not(gguf_factory) -> None:
    t = gguf_factory("Qwen2.5-14B-Instruct-Q4_K_M.gguf")
    d = gguf_factory("qwen2.5-0.5b-instruct-q8_0.gguf")
    report = check_pair(str(t), str(d))
    assert [f.details["id"] for f in report.registry] == ["qwen2.5-14b-instruct--qwen2.5-0.5b-instruct"]


def test_json_carries_the_registry_list(gguf_factory, capsys) -> None:
    t = gguf_factory("t.gguf", extra_kv=QWEN_14B)
    d = gguf_factory("d.gguf", extra_kv=QWEN_05B)
    _, out = _run(capsys, "--json", str(t), str(d))
    doc = json.loads(out)
    assert doc["schema_version"] == 3
    (entry,) = doc["registry"]
    assert entry["code"] == "RG001" and entry["name"] == "documented_pair"
    assert entry["details"]["source"] == {"url": LMSTUDIO_DOCS, "kind": "official-docs", "checked": "2026-12-01"}


def test_registry_never_changes_the_verdict(gguf_factory, capsys) -> None:
    # Named as a documented pair, but the vocabularies differ at id 5.
    t = gguf_factory("t.gguf", extra_kv=QWEN_14B)
    d = gguf_factory("d.gguf", extra_kv=QWEN_05B, replace={5: "other"})
    report = check_pair(str(t), str(d))
    assert not report.compatible and _codes(report.registry) == ["RG001"]
    code, out = _run(capsys, str(t), str(d))
    assert code == 1 and "NOT COMPATIBLE" in out and "Known pairs" in out


def test_no_registry_flag_and_api_switch(gguf_factory, capsys) -> None:
    t = gguf_factory("t.gguf", extra_kv=QWEN_14B)
    d = gguf_factory("d.gguf", extra_kv=QWEN_05B)
    assert check_pair(str(t), str(d), registry=False).registry == []
    _, out = _run(capsys, "--no-registry", str(t), str(d))
    assert "Known pairs" not in out and "fingerprint" in out
    _, out = _run(capsys, "--json", "--no-registry", str(t), str(d))
    assert json.loads(out)["registry"] == []


def test_engine_all_reports_share_one_consultation(gguf_factory) -> None:
    t = describe(str(gguf_factory("t.gguf", extra_kv=QWEN_14B)))
    d = describe(str(gguf_factory("d.gguf", extra_kv=QWEN_05B)))
    reports = check_all_engines(t, d)
    assert len(reports) > 1
    assert all(_codes(r.registry) == ["RG001"] for r in reports)
    assert len({r.fingerprints["target"].full for r in reports}) == 1


# --------------------------------------------------------------------------- documented failing


def test_documented_failing_pair_gets_the_failing_note(gguf_factory, capsys) -> None:
    t = gguf_factory("t.gguf", extra_kv={"general.name": "QwQ 32B"})
    d = gguf_factory("d.gguf", extra_kv={"general.name": "DeepSeek R1 Distill Qwen 1.5B"})
    report = check_pair(str(t), str(d))
    assert _codes(report.registry) == ["RG002"]
    f = report.finding("RG002")
    assert f is not None
    assert f.name == "documented_failing"
    assert f.details["id"] == "qwq-32b--deepseek-r1-distill-qwen-1.5b"
    assert "vocab-size assertion" in f.message and "shown failing on vllm" in f.message
    # Re-read in round 3 (issue 25): the report of the failing run is the source again.
    assert f.message.endswith("https://github.com/ruipeterpan/specreason/issues/10")
    _, out = _run(capsys, str(t), str(d))
    assert "RG002 documented_failing" in out


def test_works_entry_with_fails_on_says_so(gguf_factory) -> None:
    t = gguf_factory("t.gguf", extra_kv={"general.name": "DeepSeek-R1-Distill-Qwen-32B"})
    d = gguf_factory("d.gguf", extra_kv={"general.name": "DeepSeek-R1-Distill-Qwen-1.5B"})
    (f,) = check_pair(str(t), str(d)).registry
    # vLLM's refusal was reported for the FP8 build of the 32B: a sibling pair, said as such.
    assert f.code == "RG001" and "fails on vllm (reported for a sibling pair)" in f.message
    # LM Studio's docs only list the pair: the message must not present it as working.
    assert "recommended by the docs for lmstudio, llama.cpp (no run shown)" in f.message
    assert "working" not in f.message and f.details["shown_running"] is False
    assert f.details["engine_evidence"] == {
        "lmstudio": "recommended",
        "llama.cpp": "recommended",
        "vllm": "sibling",
    }


# --------------------------------------------------------------------------- heads


def test_head_for_a_different_target_is_flagged(gguf_factory, capsys) -> None:
    t = gguf_factory("t.gguf", extra_kv={"general.name": "Llama 3.1 8B Instruct"})
    head = gguf_factory(
        "head.gguf",
        arch="eagle3",
        extra_kv={"general.repo_url": "https://huggingface.co/RedHatAI/Qwen3-8B-speculator.eagle3"},
    )
    report = check_pair(str(t), str(head))
    assert "RG004" in _codes(report.registry)
    f = next(f for f in report.registry if f.code == "RG004")
    assert f.name == "head_for_other_target"
    assert f.details["documented_targets"] == ["Qwen/Qwen3-8B"]
    assert "an EAGLE-3 head for Qwen/Qwen3-8B" in f.message
    _, out = _run(capsys, str(t), str(head))
    assert "RG004 head_for_other_target" in out


def test_head_for_its_own_target_is_a_documented_pair(gguf_factory) -> None:
    t = gguf_factory(
        "t.gguf", extra_kv={"general.name": "Qwen3 8B", "general.repo_url": "https://huggingface.co/Qwen/Qwen3-8B"}
    )
    head = gguf_factory(
        "head.gguf",
        arch="eagle3",
        extra_kv={"general.repo_url": "https://huggingface.co/RedHatAI/Qwen3-8B-speculator.eagle3"},
    )
    codes = _codes(check_pair(str(t), str(head)).registry)
    assert codes == ["RG001"]


# --------------------------------------------------------------------------- family


def test_family_is_pointed_at_when_the_pair_is_not_documented(gguf_factory) -> None:
    t = gguf_factory("t.gguf", extra_kv={"general.name": "Qwen2.5 3B Instruct"})
    d = gguf_factory("d.gguf", extra_kv={"general.name": "Qwen2.5 0.5B Instruct"})
    (f,) = check_pair(str(t), str(d)).registry
    assert f.code == "RG003" and f.details["family"] == "qwen2.5"
    assert f.fix == "paircheck pairs --family qwen2.5 --method draft-simple"  # the method checked


def test_documented_drafts_for_the_target_are_pointed_at(gguf_factory) -> None:
    t = gguf_factory("t.gguf", extra_kv={"general.name": "Llama-3.1-8B-Instruct"})
    d = gguf_factory("d.gguf", extra_kv={"general.name": "Some Tiny Draft"})
    (f,) = check_pair(str(t), str(d)).registry
    assert f.code == "RG003"
    assert "llama-3.1-8b-instruct--llama-3.2-1b-instruct" in f.details["target_entries"]
    assert f.fix is not None and f.fix.startswith("paircheck pairs --for ")
    assert "documented for this target:" in f.message  # recognised by name


def test_drafts_found_by_vocabulary_are_not_said_to_be_for_this_target(gguf_factory, tmp_path: Path) -> None:
    t = describe(str(gguf_factory("x.gguf")))
    d = describe(str(gguf_factory("y.gguf", n_tokens=401, extra_kv={"tokenizer.ggml.bos_token_id": 3})))
    tfp = fingerprints(t.vocab)
    reg = load_registry(_registry_with_fingerprints(tmp_path, tfp.prefix, "v1p:" + "1" * 32))
    (f,) = RC.consult(reg, t, d, {"target": tfp, "draft": fingerprints(d.vocab)})
    assert f.code == "RG003"
    assert "documented for targets with this vocabulary (recognised by fingerprint, not by name)" in f.message
    assert "this target" not in f.message


def test_family_of_prefers_the_most_specific_slug() -> None:
    reg = default_registry()

    assert RC.family_of(reg, [identity_from_string("Qwen3.5-0.8B")]) == "qwen3.5"
    assert RC.family_of(reg, [identity_from_string("Qwen3-0.6B")]) == "qwen3"
    assert RC.family_of(reg, [identity_from_string("Meta-Llama-3.1-8B")]) == "llama3"
    assert RC.family_of(reg, [identity_from_string("Qwen3-Next-80B-A3B-Instruct")]) == "qwen3-next"
    assert RC.family_of(reg, [identity_from_string("totally-unknown-model")]) is None


def test_unknown_models_get_nothing(gguf_factory) -> None:
    t = gguf_factory("alpha.gguf", extra_kv={"general.name": "Alpha"})
    d = gguf_factory("beta.gguf", extra_kv={"general.name": "Beta"})
    assert check_pair(str(t), str(d)).registry == []


# --------------------------------------------------------------------------- identities


def test_identities_from_metadata_cache_folder_and_location(gguf_factory, tmp_path: Path) -> None:
    folder = tmp_path / "models--Qwen--Qwen2.5-0.5B-Instruct" / "snapshots" / "abc123"
    folder.mkdir(parents=True)
    path = gguf_factory(extra_kv={"general.name": "Renamed", "general.repo_url": "https://huggingface.co/org/repo"})
    target = folder / "model.gguf"
    path.rename(target)
    ids = RC.identities(describe(str(target)))
    repos = [i.repo for i in ids]
    assert repos[0] == "org/repo" and ids[0].name == "Renamed"
    assert "Qwen/Qwen2.5-0.5B-Instruct" in repos


# --------------------------------------------------------------------------- fingerprints in entries


def _vocab_table(side: str, prefix: str) -> str:
    return (
        f'\n[pair.{side}_vocab]\nprefix = "{prefix}"\nscope = "family"\ntokenizer_of = "org/model"\n'
        f'artifact = "pypi:x==1"\nfile = "f.gguf"\nsha256 = "{"a" * 64}"\nvocab_size = 400\n'
        f'vocab_size_from = "config.json"\nbasis = "test"\n'
    )


def _registry_with_fingerprints(tmp_path: Path, target_fp: str, draft_fp: str) -> Path:
    body = '''schema_version = 2

[[pair]]
id = "fp-target--fp-draft"
family = "testfam"
target = { name = "Some Target Nobody Names 7B" }
draft = { name = "Some Draft Nobody Names 1B" }
method = "draft-model"
engines = ["llama.cpp"]
status = "works"
evidence = "ran"
source = { url = "https://example.org/fp", kind = "blog" }
quote = "The target ran with this draft."
checked = { on = 2026-11-30, read = ["https://example.org/fp"] }
notes = "test"
''' + _vocab_table("target", target_fp) + _vocab_table("draft", draft_fp)
    path = tmp_path / "reg.toml"
    path.write_text(body)
    return path


def test_registry_fingerprints_identify_a_vocabulary_not_a_model(gguf_factory, tmp_path: Path) -> None:
    t = describe(str(gguf_factory("x.gguf")))
    d = describe(str(gguf_factory("y.gguf", n_tokens=401, extra_kv={"tokenizer.ggml.bos_token_id": 3})))
    tfp, dfp = fingerprints(t.vocab), fingerprints(d.vocab)
    assert tfp.prefix and dfp.prefix and tfp.prefix != dfp.prefix
    reg = load_registry(_registry_with_fingerprints(tmp_path, tfp.prefix, dfp.prefix))
    (f,) = RC.consult(reg, t, d, {"target": tfp, "draft": dfp})
    assert f.code == "RG001" and f.details["matched_by"] == {"target": "vocabulary", "draft": "vocabulary"}
    # Matched by the prefix fingerprint only: no more is claimed than the prefix (issue 34).
    assert "the target shares the vocabulary prefix (ids below 5) of Some Target Nobody Names 7B" in f.message
    # Without fingerprints (or with the files swapped) nothing matches.
    assert RC.consult(reg, t, d, {}) == []
    assert RC.consult(reg, d, t, {"target": dfp, "draft": tfp}) == []


def test_name_match_with_a_different_documented_fingerprint_is_noted(gguf_factory, tmp_path: Path) -> None:
    t = describe(str(gguf_factory("Some-Target-Nobody-Names-7B.gguf")))
    d = describe(str(gguf_factory("Some-Draft-Nobody-Names-1B.gguf")))
    fps = {"target": fingerprints(t.vocab), "draft": fingerprints(d.vocab)}
    assert fps["target"].prefix_end == fps["draft"].prefix_end  # the same end: a different value is proof
    reg = load_registry(_registry_with_fingerprints(tmp_path, "v1p:" + "0" * 32, "v1p:" + "1" * 32))
    (f,) = RC.consult(reg, t, d, fps)
    assert f.code == "RG001" and f.details["fingerprint_differs"] == ["target", "draft"]
    assert f.details["matched_by"] == {"target": "name", "draft": "name"}
    assert "fingerprint differs" in f.message


def test_check_descriptions_attaches_both(gguf_factory) -> None:
    t = describe(str(gguf_factory("t.gguf", extra_kv=QWEN_14B)))
    d = describe(str(gguf_factory("d.gguf", extra_kv=QWEN_05B)))
    report = check_descriptions(t, d)
    assert report.fingerprints["target"].full == fingerprint(t.vocab)
    assert _codes(report.registry) == ["RG001"]
    bare = check_descriptions(t, d, registry=False, fingerprint=False)
    assert bare.registry == [] and bare.fingerprints == {}


# --------------------------------------------------------------------------- pairs --for FILE


def test_pairs_for_reads_the_files_identity(gguf_factory, capsys) -> None:
    t = gguf_factory("anonymous.gguf", extra_kv={"general.name": "Qwen2.5 14B Instruct"})
    code, out = _run(capsys, "pairs", "--for", str(t), "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["for"]["name"] == "Qwen2.5 14B Instruct"
    assert "qwen2.5-14b-instruct--qwen2.5-0.5b-instruct" in [p["id"] for p in doc["pairs"]]


def test_fast_default_load_equals_the_validating_load() -> None:
    # The check skips validation for speed; the data it sees must be the same.
    assert default_registry() == load_registry()
    assert default_registry() is default_registry()  # loaded once per process


# --------------------------------------------------------------------------- evidence and caveats


def test_documented_pair_message_carries_the_measured_figure(gguf_factory) -> None:
    t = gguf_factory("Qwen3-14B-Q4_K_M.gguf")
    d = gguf_factory("Qwen3-0.6B-Q4_0.gguf")
    (f,) = check_pair(str(t), str(d)).registry
    assert f.details["id"] == "qwen3-14b--qwen3-0.6b"
    assert "documented: measured +115% (159.1 tok/s) on llama.cpp" in f.message
    assert f.details["evidence"] == "measured" and f.details["shown_running"] is True
    assert f.details["quote"].startswith("Qwen3-14B Q4_K_M + Qwen3-0.6B Q4_0")


def test_caveats_appear_for_a_matching_pair_of_real_vocab_files(real_vocab, tmp_path: Path, capsys) -> None:
    # The real Qwen3.5 vocabulary under the names users download: the pair is only computed
    # compatible (PR 22358) and the registry warns about hybrid-model slowdowns.
    qwen35 = real_vocab("qwen35").read_bytes()
    target, draft = tmp_path / "Qwen3.6-27B-Q8_0.gguf", tmp_path / "Qwen3.5-0.8B-Q8_0.gguf"
    target.write_bytes(qwen35)
    draft.write_bytes(qwen35)
    report = check_pair(str(target), str(draft))
    (f,) = [x for x in report.registry if x.code == "RG001"]
    assert f.details["id"] == "qwen3.6-27b--qwen3.5-0.8b"
    assert "only computed" in f.message and "nothing ran" in f.message
    assert "Caveat: Hybrid (DeltaNet)" in f.message and "no net speedup" in f.message
    assert any("PR 22358" in c for c in f.details["caveats"])
    _code, out = _run(capsys, str(target), str(draft))
    section = out.split("Known pairs", 1)[1]
    assert "Caveat: Hybrid" in section.replace("\n    ", " ")


def test_no_caveat_text_when_the_entry_has_none(gguf_factory) -> None:
    t = gguf_factory("t.gguf", extra_kv={"general.name": "gemma-2-9b"})
    d = gguf_factory("d.gguf", extra_kv={"general.name": "vicuna-68m"})
    (f,) = check_pair(str(t), str(d)).registry
    assert f.details["id"] == "gemma-2-9b--vicuna-68m" and f.details["caveats"] == []
    assert "Caveat:" not in f.message and "measured 1.76x" in f.message


def test_explain_states_the_evidence_levels(capsys) -> None:
    code, out = _run(capsys, "explain", "RG001")
    assert code == 0
    text = " ".join(out.split())
    assert "recommended (suggested, no run shown)" in text and "Only the first two show the pair working" in text
