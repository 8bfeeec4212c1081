"""``paircheck scan`` and candidates mode on a fake home holding real vocab files in the layouts
the tools themselves write: a Hugging Face cache (snapshots symlinked to blobs), LM Studio's
current and older folders, llama.cpp's cache and an Ollama store with real manifests."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pytest
from gguf import GGUFValueType
from gguf_mutate import make_kv, rewrite_gguf
from oracle import llama_values, oracle_compatible, require_oracle

from paircheck import pipeline
from paircheck._format.scan_render import launch_line
from paircheck.findings import ACCEPTED
from paircheck.scan import ScanResult, compare, scan
from paircheck.scan.cache import CACHE_FORMAT, cache_path
from paircheck.scan.discover import Candidate, discover

REPO = Path(__file__).resolve().parents[2]


@dataclass
class FakeHome:
    env: dict[str, str]
    given: Path
    target: Path
    placed: list[Path] = field(default_factory=list)  # every candidate, as the scan should find it
    same_as_target: Path | None = None
    broken: Path | None = None
    ollama_names: dict[str, str] = field(default_factory=dict)  # blob path -> name:tag
    not_candidates: list[Path] = field(default_factory=list)


def _copy(src: Path, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)
    return dest


def _hf_cache_file(hub: Path, repo: str, revision: str, name: str, src: Path) -> Path:
    """As huggingface_hub stores a download: the bytes in blobs/ (named by hash), a relative
    symlink in snapshots/REVISION/."""
    root = hub / f"models--{repo.replace('/', '--')}"
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    _copy(src, root / "blobs" / digest)
    link = root / "snapshots" / revision / name
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(os.path.relpath(root / "blobs" / digest, link.parent))
    (root / "refs").mkdir(exist_ok=True)
    (root / "refs" / "main").write_text(revision)
    return link


def _ollama_model(store: Path, host: str, namespace: str, model: str, tag: str, src: Path) -> Path:
    """As `ollama pull` stores a model: blobs/sha256-HEX and an OCI manifest naming them."""
    data = src.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    blob = _copy(src, store / "blobs" / f"sha256-{digest}")
    template = b"{{ .Prompt }}"
    t_digest = hashlib.sha256(template).hexdigest()
    (store / "blobs" / f"sha256-{t_digest}").write_bytes(template)
    config = json.dumps({"model_format": "gguf", "model_family": model}).encode()
    c_digest = hashlib.sha256(config).hexdigest()
    (store / "blobs" / f"sha256-{c_digest}").write_bytes(config)
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
        "config": {"mediaType": "application/vnd.docker.container.image.v1+json",
                   "digest": f"sha256:{c_digest}", "size": len(config)},
        "layers": [
            {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{digest}", "size": len(data)},
            {"mediaType": "application/vnd.ollama.image.template", "digest": f"sha256:{t_digest}",
             "size": len(template)},
        ],
    }
    path = store / "manifests" / host / namespace / model / tag
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest))
    return blob


@pytest.fixture
def fake_home(tmp_path: Path, real_vocab: Callable[[str], Path]) -> FakeHome:
    home = tmp_path / "home dir"  # a space: the launch line must quote it
    target = _copy(real_vocab("llama-spm"), tmp_path / "target" / "Llama-2-7B.Q4_K_M.gguf")
    env = {
        "HOME": str(home),
        "HF_HOME": str(home / ".hf"),  # the hub cache is HF_HOME/hub
        "LLAMA_CACHE": str(tmp_path / "llama cache"),
        "OLLAMA_MODELS": str(tmp_path / "ollama"),
        "PATH": os.environ.get("PATH", ""),
    }
    given = tmp_path / "given"
    fh = FakeHome(env, given, target)
    hub = home / ".hf" / "hub"
    fh.placed.append(_hf_cache_file(hub, "microsoft/Phi-3-mini-4k-instruct-gguf", "a" * 40,
                                    "Phi-3-mini-4k-instruct-q4.gguf", real_vocab("phi-3")))
    fh.placed.append(_hf_cache_file(hub, "Qwen/Qwen2.5-7B-Instruct-GGUF", "b" * 40,
                                    "qwen2.5-7b-instruct-q4_k_m-00001-of-00002.gguf", real_vocab("qwen2")))
    fh.not_candidates.append(_hf_cache_file(hub, "Qwen/Qwen2.5-7B-Instruct-GGUF", "b" * 40,
                                            "qwen2.5-7b-instruct-q4_k_m-00002-of-00002.gguf", real_vocab("gpt-2")))
    lms = home / ".lmstudio" / "models"
    fh.placed.append(_copy(real_vocab("gpt-neox"), lms / "lmstudio-community" / "pythia-GGUF" / "pythia-Q8_0.gguf"))
    fh.not_candidates.append(_copy(real_vocab("phi-3"), lms / "lmstudio-community" / "pythia-GGUF" / "mmproj-f16.gguf"))
    # A chat fine-tune with the target's own vocabulary (another name, so not a copy of it): the
    # usable draft. (phi-3 shares llama-spm's texts but its 11 extra real tokens abort llama-server.)
    chat = lms / "TheBloke" / "Llama-2-7B-Chat-GGUF" / "llama-2-7b-chat.Q2_K.gguf"
    chat.parent.mkdir(parents=True)

    def rename(meta):  # type: ignore[no-untyped-def]
        at = meta.index("general.name")
        meta.kvs[at] = make_kv("general.name", "llama-2-7b-chat", GGUFValueType.STRING)

    rewrite_gguf(real_vocab("llama-spm"), chat, rename)
    fh.placed.append(chat)
    old_lms = home / ".cache" / "lm-studio" / "models"
    fh.placed.append(_copy(real_vocab("baichuan"), old_lms / "TheBloke" / "Baichuan-GGUF" / "baichuan.Q4_0.gguf"))
    cache = Path(env["LLAMA_CACHE"])
    fh.placed.append(_copy(real_vocab("mpt"), cache / "ggml-org_mpt-7b-GGUF_mpt-7b-Q8_0.gguf"))
    fh.same_as_target = _copy(real_vocab("llama-spm"), cache / "TheBloke_Llama-2-7B-GGUF_llama-2-7b.Q4_K_M.gguf")
    data = real_vocab("phi-3").read_bytes()
    fh.broken = cache / "truncated-Q4_K_M.gguf"
    # Cut before its counts end: unreadable. (A cut inside the keys is described, and
    # refused by loadable, like any file llama.cpp cannot load.)
    fh.broken.write_bytes(data[:20])
    store = Path(env["OLLAMA_MODELS"])
    blob = _ollama_model(store, "registry.ollama.ai", "library", "phi3", "mini", real_vocab("llama-spm"))
    # The same bytes as the target: not a candidate (Ollama's copy of the target itself).
    fh.not_candidates.append(blob)
    blob = _ollama_model(store, "registry.ollama.ai", "library", "gemma3", "1b", real_vocab("gemma-4"))
    fh.placed.append(blob)
    fh.ollama_names[str(blob)] = "gemma3:1b"
    blob = _ollama_model(store, "registry.ollama.ai", "someone", "tinyphi", "q4", real_vocab("phi-3"))
    fh.placed.append(blob)
    fh.ollama_names[str(blob)] = "someone/tinyphi:q4"
    fh.placed.append(_copy(real_vocab("bert-bge"), given / "bge.gguf"))
    return fh


def _expected_usable(target: Path, paths: list[Path]) -> set[str]:
    """What llama.cpp itself says of each file as a draft for the target, not paircheck: the
    values libllama derives from both files, through common_speculative_are_compatible
    (tests/oracle.py). So a bug in paircheck's pair check cannot hide in scan's test."""
    require_oracle()
    t = llama_values(target)
    return {str(p) for p in paths
            if oracle_compatible(t, llama_values(p))[0] and not _proposes_ids_the_target_lacks(t, llama_values(p))}


def _proposes_ids_the_target_lacks(t: dict[str, Any], d: dict[str, Any]) -> bool:
    """A draft with real tokens past the target's last id: llama-server accepts the pair at load
    and aborts the first time the draft proposes one of them (tests/_engine/test_llamacpp_binary.py
    shows it on the real binary), so it is no usable draft. Placeholder texts (padding, unused
    and reserved slots) are never proposed by a trained model."""
    tail = (d["texts"] or [])[t["n_tokens"]:]
    placeholder = (b"[PAD", b"<|PAD", b"<pad", b"[pad", b"<unused", b"[UNUSED", b"<|unused", b"<|reserved",
                   b"<|extra_")
    return any(not text.startswith(placeholder) for text in tail)


def test_scan_finds_exactly_the_drafts_llamacpp_accepts(fake_home: FakeHome) -> None:
    fh = fake_home
    result = scan(str(fh.target), [str(fh.given)], env=fh.env)
    expected = _expected_usable(fh.target, fh.placed)
    assert expected, "the fake home must hold at least one usable draft"
    assert expected != {str(p) for p in fh.placed}, "and at least one refused one"
    assert {c.location for c in result.candidates} == {str(p) for p in fh.placed}
    assert {c.location for c in result.usable} == expected
    # Ranked: every usable draft before every refused one; refusals carry their reason.
    flags = [c.usable for c in result.candidates]
    assert flags == sorted(flags, key=lambda u: {True: 0, None: 1, False: 2}[u])
    for c in result.candidates:
        assert (c.usable is False) == (c.reason is not None and c.first_failure is not None)
    names = {c.location: c.name for c in result.candidates if c.where == "ollama"}
    assert names == fh.ollama_names
    hf = {c.location: c.name for c in result.candidates if c.where == "huggingface"}
    assert set(hf.values()) == {"microsoft/Phi-3-mini-4k-instruct-gguf", "Qwen/Qwen2.5-7B-Instruct-GGUF"}
    # The target's copies are not candidates; the broken file is listed with its reason.
    assert str(fh.same_as_target) in result.skipped_same_model
    assert [u.location for u in result.unreadable] == [str(fh.broken)]
    assert result.unreadable[0].error and "\n" not in result.unreadable[0].error
    assert str(fh.broken) not in result.unreadable[0].error  # said once, not twice


def test_no_default_dirs_scans_only_what_is_given(fake_home: FakeHome) -> None:
    fh = fake_home
    result = scan(str(fh.target), [str(fh.given)], use_default_dirs=False, env=fh.env)
    assert [c.location for c in result.candidates] == [str(fh.given / "bge.gguf")]
    assert result.usable == [] and result.unreadable == []


def test_discover_first_shards_only_and_no_projectors(fake_home: FakeHome) -> None:
    found = [c.location for c in discover([], env=fake_home.env) if isinstance(c, Candidate)]
    for path in fake_home.not_candidates[:2]:  # the second shard, the projector
        assert str(path) not in found
    assert any(p.endswith("-00001-of-00002.gguf") for p in found)


def test_broken_ollama_manifest_is_listed_not_fatal(fake_home: FakeHome) -> None:
    store = Path(fake_home.env["OLLAMA_MODELS"])
    bad = store / "manifests" / "registry.ollama.ai" / "library" / "broken" / "latest"
    bad.parent.mkdir(parents=True)
    bad.write_text("{not json")
    result = scan(str(fake_home.target), [], env=fake_home.env)
    assert str(bad) in [u.location for u in result.unreadable]
    assert {c.location for c in result.usable} == _expected_usable(fake_home.target, fake_home.placed)


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {**env, "PYTHONPATH": str(REPO), "COLUMNS": "100"}
    return subprocess.run([sys.executable, "-m", "paircheck", *args], capture_output=True, text=True, env=full,
                          timeout=300)


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_cli_scan_json_names_and_exit_code(fake_home: FakeHome) -> None:
    fh = fake_home
    proc = _run(["scan", "--json", str(fh.target), str(fh.given)], fh.env)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["target"]["path"] == str(fh.target)
    # A fresh home: every file read (candidates, the target's copy, the broken file), none cached.
    assert data["cache"]["hits"] == 0 and data["cache"]["misses"] == (
        len(data["candidates"]) + len(data["same_as_target"]) + len(data["unreadable"]))
    again = json.loads(_run(["scan", "--json", str(fh.target), str(fh.given)], fh.env).stdout)
    assert again["cache"] == {"hits": data["cache"]["misses"], "misses": 0}
    assert again["candidates"] == data["candidates"]
    bypass = json.loads(_run(["scan", "--json", "--no-cache", str(fh.target), str(fh.given)], fh.env).stdout)
    assert bypass["cache"] == {"hits": 0, "misses": 0} and bypass["candidates"] == data["candidates"]
    expected = _expected_usable(fh.target, fh.placed)
    ranked = data["candidates"]
    assert {c["location"] for c in ranked if c["usable"] is True} == expected
    assert set(ranked[0]) >= {"location", "name", "usable", "first_failure", "reason", "documented"}
    assert ranked[0]["usable"] is True and ranked[-1]["usable"] is False
    assert {c["name"] for c in ranked} >= set(fh.ollama_names.values())
    assert data["unreadable"] == [{"location": str(fh.broken), "error": data["unreadable"][0]["error"]}]


def test_cli_scan_text_has_a_runnable_launch_line(fake_home: FakeHome) -> None:
    fh = fake_home
    proc = _run(["scan", str(fh.target), str(fh.given)], fh.env)
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stdout.splitlines() if x.startswith("llama-server "))
    argv = shlex.split(line)
    best = argv[argv.index("-md") + 1]
    assert argv[argv.index("-m") + 1] == str(fh.target)
    assert best in _expected_usable(fh.target, fh.placed) and Path(best).is_file()
    assert argv[-2:] == ["--spec-type", "draft-simple"]
    assert "unreadable (left out):" in proc.stdout and f"  {fh.broken}\n" in proc.stdout


def test_cli_scan_none_usable_exits_1_and_bad_target_exits_2(fake_home: FakeHome, tmp_path: Path) -> None:
    fh = fake_home
    proc = _run(["scan", "--no-default-dirs", "-q", str(fh.target), str(fh.given)], fh.env)
    assert proc.returncode == 1 and proc.stdout == ""
    missing = _run(["scan", str(tmp_path / "nope.gguf")], fh.env)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr and missing.stderr.count("\n") == 1


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_candidates_mode_ranks_the_given_drafts(fake_home: FakeHome, real_vocab: Callable[[str], Path]) -> None:
    fh = fake_home
    chat = next(p for p in fh.placed if p.name == "llama-2-7b-chat.Q2_K.gguf")
    drafts = [str(real_vocab(n)) for n in ("gpt-2", "phi-3", "baichuan")] + [str(chat)]
    result = compare(str(fh.target), drafts)
    expected = _expected_usable(fh.target, [Path(d) for d in drafts])
    assert {c.location for c in result.usable} == expected
    assert [c.location for c in result.candidates][: len(expected)] == sorted(expected)
    proc = _run(["--json", str(fh.target), *drafts], fh.env)
    assert proc.returncode == 0, proc.stderr
    assert [c["location"] for c in json.loads(proc.stdout)["candidates"] if c["usable"]] == sorted(expected)
    refused = [d for d in drafts if d not in expected]
    proc = _run([str(fh.target), *refused], fh.env)
    assert proc.returncode == 1 and "0 usable drafts" in proc.stdout
    # One draft: the pair check exactly as before, not the ranking.
    proc = _run([str(fh.target), drafts[1]], fh.env)
    assert proc.stdout.startswith("ABORTS AT RUN TIME") and "usable draft" not in proc.stdout


def _summaries(result: ScanResult) -> list[dict[str, object]]:
    return [asdict(c) for c in result.candidates]


def test_cache_hits_unchanged_files_and_misses_changed_ones(
    fake_home: FakeHome, real_vocab: Callable[[str], Path]
) -> None:
    fh = fake_home
    cold = scan(str(fh.target), [str(fh.given)], env=fh.env)
    read = len(cold.candidates) + len(cold.skipped_same_model) + len(cold.unreadable)
    assert (cold.cache_hits, cold.cache_misses) == (0, read)
    warm = scan(str(fh.target), [str(fh.given)], env=fh.env)
    assert (warm.cache_hits, warm.cache_misses) == (read, 0)
    assert _summaries(warm) == _summaries(cold) and warm.unreadable == cold.unreadable
    # Touched (same bytes, new time): read again, same answer.
    touched = fh.given / "bge.gguf"
    st = touched.stat()
    os.utime(touched, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    after_touch = scan(str(fh.target), [str(fh.given)], env=fh.env)
    assert (after_touch.cache_hits, after_touch.cache_misses) == (read - 1, 1)
    assert _summaries(after_touch) == _summaries(cold)
    # Rewritten with other bytes and another size: the new file's verdict, not the cached one.
    changed = next(p for p in fh.placed if p.name.startswith("ggml-org_mpt"))
    shutil.copyfile(next(p for p in fh.placed if p.name == "llama-2-7b-chat.Q2_K.gguf"), changed)
    after_change = scan(str(fh.target), [str(fh.given)], env=fh.env)
    assert after_change.cache_misses == 1
    fresh = _expected_usable(fh.target, [changed])
    was = next(c for c in cold.candidates if c.location == str(changed))
    now = next(c for c in after_change.candidates if c.location == str(changed))
    assert (now.usable is True) == (str(changed) in fresh) and now.usable != was.usable


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_corrupt_cache_is_ignored_and_rebuilt(fake_home: FakeHome) -> None:
    fh = fake_home
    cold = scan(str(fh.target), [str(fh.given)], env=fh.env)
    path = cache_path(fh.env)
    for garbage in (b"\x00\xff not json", b'{"format": 1, "entries": [1, 2]}', b'{"format": 99, "entries": {}}'):
        path.write_bytes(garbage)
        result = scan(str(fh.target), [str(fh.given)], env=fh.env)
        assert result.cache_hits == 0 and _summaries(result) == _summaries(cold)
        assert json.loads(path.read_text())["format"] == CACHE_FORMAT  # rebuilt, readable again
    assert scan(str(fh.target), [str(fh.given)], env=fh.env).cache_misses == 0
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]  # no temporary file left


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_engine_all_usable_when_one_engine_accepts(fake_home: FakeHome) -> None:
    fh = fake_home
    result = scan(str(fh.target), [str(fh.given)], engine="all", env=fh.env, use_cache=False)
    assert len(result.candidates) == len(fh.placed)
    t = pipeline.describe(str(fh.target))
    for c in result.candidates:
        reports = pipeline.check_all_engines(t, pipeline.describe(c.location), registry=False)
        assert c.engines == {r.engine: r.verdict for r in reports}
        assert c.usable == any(r.verdict == ACCEPTED for r in reports)
    # The launch line only ever names a draft llama.cpp itself accepts.
    best = result.best_for_llamacpp
    assert best is not None and best.engines["llama.cpp"] == ACCEPTED
    assert best.location in _expected_usable(fh.target, fh.placed)


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_hf_model_folders_in_the_hub_cache_are_candidates(
    fake_home: FakeHome, real_vocab: Callable[[str], Path]
) -> None:
    """A Hugging Face snapshot holding a model folder (config + tokenizer, as `hf download`
    leaves it) is one candidate, named by its repo; the check decides it like any other."""
    from hf_build import build_llama_spm_folder, build_qwen2_folder

    hub = Path(fake_home.env["HF_HOME"]) / "hub"
    spm = build_llama_spm_folder(real_vocab("llama-spm"), hub / "models--meta-llama--Llama-2-7b-hf" / "snapshots"
                                 / ("c" * 40))
    qwen = build_qwen2_folder(real_vocab("qwen2"), hub / "models--Qwen--Qwen2.5-0.5B-Instruct" / "snapshots"
                              / ("d" * 40), 151936)
    result = scan(str(fake_home.target), [], env=fake_home.env, use_cache=False)
    found = {c.location: c for c in result.candidates}
    assert found[str(spm)].name == "meta-llama/Llama-2-7b-hf" and found[str(qwen)].name == "Qwen/Qwen2.5-0.5B-Instruct"
    # Each folder carries the tokenizer of a real vocab file (hf_build): llama.cpp judges the
    # folder as it judges that file (the converter's own differential test holds that).
    made_from = {str(spm): real_vocab("llama-spm"), str(qwen): real_vocab("qwen2")}
    expected = {loc for loc, vocab in made_from.items() if _expected_usable(fake_home.target, [vocab])}
    assert expected == {str(spm)}
    assert {loc for loc in made_from if found[loc].usable} == expected
    # A folder cannot be given to llama-server -md: the launch line names a GGUF file.
    line = launch_line(result)
    assert line is not None and Path(shlex.split(line)[4]).is_file()


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_documented_and_size_warning_agree_with_the_pair_check(fake_home: FakeHome) -> None:
    """The scan computes the target's facts once; each candidate's registry and size findings
    must still be what `paircheck T D` reports for that pair."""
    fh = fake_home
    result = scan(str(fh.target), [str(fh.given)], env=fh.env, use_cache=False)
    t = pipeline.describe(str(fh.target))
    for c in result.candidates:
        report = pipeline.check_descriptions(t, pipeline.describe(c.location))
        assert c.documented == (report.finding("RG001") is not None)
        size = report.finding("PW001")
        assert c.size_warning == (size.message if size else None)
        # The check llama.cpp stops at, else the warning that predicts an abort at run time.
        stop = report.first_failure or next(iter(report.run_time_aborts), None)
        assert c.first_failure == (stop.code if stop else None)


def test_documented_pair_ranks_first_among_usable(tmp_path: Path, real_vocab: Callable[[str], Path]) -> None:
    """Two copies of the same usable draft: the one the registry documents (known by its Hub
    cache path, Qwen/Qwen2.5-0.5B-Instruct for Qwen/Qwen2.5-7B-Instruct) ranks first."""
    hub = tmp_path / "hub"
    target = _hf_cache_file(hub, "Qwen/Qwen2.5-7B-Instruct", "e" * 40, "qwen2.5-7b-instruct-q4_k_m.gguf",
                            real_vocab("qwen2"))
    documented = _hf_cache_file(hub, "Qwen/Qwen2.5-0.5B-Instruct", "f" * 40, "qwen2.5-0.5b-instruct-q8_0.gguf",
                                real_vocab("qwen35"))
    plain = _copy(real_vocab("qwen35"), tmp_path / "a-models" / "aaa-draft.gguf")  # sorts first by path
    result = compare(str(target), [str(plain), str(documented)])
    t = pipeline.describe(str(target))
    report = pipeline.check_descriptions(t, pipeline.describe(str(documented)))
    assert report.finding("RG001") is not None and report.verdict == ACCEPTED
    # The plain copy has the Qwen vocabulary, so it is documented too, but only by vocabulary:
    # a pair documented by name ranks before it.
    assert [(c.location, c.documented_by) for c in result.candidates] == [
        (str(documented), "name"), (str(plain), "vocabulary")
    ]


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_modelled_speedup_and_memory_where_tensor_infos_exist(
    tmp_path: Path, real_vocab: Callable[[str], Path]
) -> None:
    """Files with tensor infos get the MODELLED speedup (speed.estimate's formula) and the pair's
    memory (fit's model); a vocab-only file gets neither, shown as "-" with the reason once."""
    sys.path.insert(0, str(REPO / "tests"))
    import fit_shapes

    from paircheck._format.interface import RenderOptions
    from paircheck._format.scan_render import render_scan_text, scan_to_dict
    from paircheck.fit import DraftOptions, FitOptions, fit
    from paircheck.scan import NO_TENSORS, REFERENCE_ACCEPTANCE
    from paircheck.speed.estimate import best_draft_max, modelled_speedup

    target = fit_shapes.write_shape(fit_shapes.qwen25("7B"), tmp_path / "t.gguf")
    draft = fit_shapes.write_shape(fit_shapes.qwen25("0.5B"), tmp_path / "d.gguf")
    vocab_only = _copy(real_vocab("llama-spm"), tmp_path / "v.gguf")
    result = compare(str(target), [str(vocab_only), str(draft)])
    by_loc = {c.location: c for c in result.candidates}
    c, v = by_loc[str(draft)], by_loc[str(vocab_only)]
    assert c.cost_ratio is not None and 0 < c.cost_ratio < 0.2
    k = best_draft_max(REFERENCE_ACCEPTANCE, c.cost_ratio)
    assert c.modelled_draft_max == k
    assert c.modelled_speedup == round(modelled_speedup(REFERENCE_ACCEPTANCE, k, c.cost_ratio), 3) > 1
    t, d = pipeline.describe(str(target)), pipeline.describe(str(draft))
    expected = fit(t.metadata, d.metadata, FitOptions(ctx=32768), DraftOptions(), None, ("t", "d"))
    assert c.memory_bytes == expected.total_device_bytes + expected.total_host_bytes > 0
    assert (v.modelled_speedup, v.memory_bytes) == (None, None)
    doc = scan_to_dict(result)
    row = next(x for x in doc["candidates"] if x["location"] == str(draft))
    assert (row["modelled_speedup"], row["memory_bytes"]) == (c.modelled_speedup, c.memory_bytes)
    assert doc["modelled_acceptance"] == REFERENCE_ACCEPTANCE
    text = render_scan_text(result, RenderOptions(width=200))
    assert "MODELLED" in text and f"{c.modelled_speedup:.2f}x" in text and NO_TENSORS in text
    assert text.count(NO_TENSORS) == 1
    # At 80 columns the table still fits, long paths shortened from the left.
    narrow = render_scan_text(result, RenderOptions(width=80))
    # (the launch line is never wrapped, so it can be pasted)
    too_long = [line for line in narrow.splitlines() if len(line) > 80 and not line.startswith("llama-server")]
    assert too_long == []
    assert "MODELLED" in narrow and f"{c.modelled_speedup:.2f}x" in narrow


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_ranking_prefers_the_best_modelled_speedup(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "tests"))
    import fit_shapes

    target = fit_shapes.write_shape(fit_shapes.qwen25("7B"), tmp_path / "t.gguf")
    small = fit_shapes.write_shape(fit_shapes.qwen25("0.5B"), tmp_path / "z-small.gguf")
    big = fit_shapes.write_shape(fit_shapes.qwen25("0.5B"), tmp_path / "a-big.gguf", scheme="f16")
    result = compare(str(target), [str(big), str(small)])
    speeds = [c.modelled_speedup for c in result.candidates]
    assert all(s is not None for s in speeds) and speeds == sorted(speeds, reverse=True)  # type: ignore[type-var]
    assert result.candidates[0].location == str(small)  # q4 reads fewer bytes than f16: faster, despite its name


def _run_with_tty_stderr(args: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    """Run the CLI with stderr on a real pseudo-terminal (stdout a pipe); return code, stdout, stderr."""
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    # A new pseudo-terminal is 0x0; give it a real terminal's size, as a terminal window has.
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    full = {**env, "PYTHONPATH": str(REPO), "COLUMNS": "100"}
    try:
        proc = subprocess.Popen([sys.executable, "-m", "paircheck", *args], stdout=subprocess.PIPE, stderr=slave,
                                stdin=subprocess.DEVNULL, env=full)
        os.close(slave)
        chunks: list[bytes] = []
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed its end
                break
            if not data:
                break
            chunks.append(data)
        out = proc.stdout.read().decode() if proc.stdout else ""
        code = proc.wait(timeout=300)
    finally:
        os.close(master)
    return code, out, b"".join(chunks).decode(errors="replace")


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_progress_bar_on_a_terminal_only(fake_home: FakeHome) -> None:
    fh = fake_home
    code, out, err = _run_with_tty_stderr(["scan", "--no-cache", str(fh.target), str(fh.given)], fh.env)
    assert code == 0 and "usable draft" in out
    assert "reading" in err and " files" in err  # tqdm's bar: "reading: N files [...]"
    for quiet in (["--json"], ["--quiet"]):
        code, out, err = _run_with_tty_stderr(["scan", "--no-cache", *quiet, str(fh.target), str(fh.given)], fh.env)
        assert code == 0 and "reading" not in err, (quiet, err)
    # stderr a pipe: nothing either (the ordinary runner captures stderr through a pipe).
    proc = _run(["scan", "--no-cache", str(fh.target), str(fh.given)], fh.env)
    assert proc.returncode == 0 and "reading" not in proc.stderr


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_documented_by_vocabulary_agrees_with_the_check(tmp_path: Path, real_vocab: Callable[[str], Path]) -> None:
    """Renamed Llama 3 vocab files with size labels: the scan calls the pair documented by
    vocabulary exactly when the check's RG001 recognises it by vocabulary fingerprint."""
    sys.path.insert(0, str(REPO / "tests"))
    from gguf_mutate import VT, make_kv, rewrite_gguf

    def renamed(dst: Path, size: str) -> Path:
        def mutate(meta) -> None:  # type: ignore[no-untyped-def]
            meta.drop("general.name")
            meta.set(make_kv("general.size_label", size, VT.STRING))

        rewrite_gguf(real_vocab("llama-bpe"), dst, mutate)
        return dst

    target = renamed(tmp_path / "t0.gguf", "8B")
    # Labels of another length than the target's: same-size copies of the target are left out.
    small, other = renamed(tmp_path / "d1.gguf", "1.0B"), renamed(tmp_path / "d2.gguf", "3.0B")
    result = compare(str(target), [str(other), str(small)])
    by = {c.location: c for c in result.candidates}
    assert (by[str(small)].documented, by[str(small)].documented_by) == (True, "vocabulary")
    assert (by[str(other)].documented, by[str(other)].documented_by) == (False, None)  # no 3B draft documented
    assert result.candidates[0].location == str(small)  # documented ranks first among usable
    t = pipeline.describe(str(target))
    for c in result.candidates:
        report = pipeline.check_descriptions(t, pipeline.describe(c.location))
        assert c.documented == (report.finding("RG001") is not None)
