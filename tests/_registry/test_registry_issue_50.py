"""Issue 50, item 13: four entries re-read against their sources on 2026-12-07.

Each test asserts what the source says, where the registry said otherwise before:

* gpt-oss-20b + RedHatAI's speculator.eagle3: the figures are a comparison row on Nebius's card,
  which names no engine for them; they are acceptance lengths (τ), not rates; and the card says
  they were measured under standard rejection sampling (vLLM's old greedy drafting did not
  lower them).
* Llama-4-Maverick + NVIDIA's Eagle3 head: the -Instruct target is named by the EAGLE README at
  commit cb7e0841, which is now cited; the TensorRT-LLM docs say only "Llama 4 Maverick".
* The alamios drafts: their cards are in the stored copies now; the Q4_K_M target is quoted
  again, and the Coder draft's GGUF and safetensors cards describe different training runs.
* mlc-llm issue 3022, unreadable before, is read: a maintainer's suggestion for Llama 3.1 70B.
"""

from __future__ import annotations

import sys
from datetime import date
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_registry import parse_json, run  # noqa: E402

from paircheck._registry.entry import RegistryEntry, evidence_text  # noqa: E402
from paircheck._registry.load import Registry, load_registry  # noqa: E402
from paircheck.speed.documented import measurement_line  # noqa: E402

REDHAT_20B = "gpt-oss-20b--gpt-oss-20b-speculator.eagle3"
NEBIUS_CARD = "https://huggingface.co/nebius/EAGLE3-gpt-oss-20b"
MAVERICK = "llama-4-maverick-17b-128e-instruct--llama-4-maverick-17b-128e-eagle3"
EAGLE_README = "https://github.com/SafeAILab/EAGLE/blob/cb7e0841fe0c206c6ed74a197ad5e2a1f13f5a2b/README.md"
ALAMIOS = "deepseek-r1-distill-qwen-32b--deepseek-r1-draft-qwen2.5-0.5b"
ALAMIOS_CODER = "deepseek-r1-distill-qwen-32b--deepseek-r1-draft-qwen2.5-coder-0.5b"
CODER_GGUF = "https://huggingface.co/alamios/DeepSeek-R1-DRAFT-Qwen2.5-Coder-0.5B-GGUF"
CODER_SAFETENSORS = "https://huggingface.co/alamios/DeepSeek-R1-DRAFT-Qwen2.5-Coder-0.5B"
EAGLE70 = "meta-llama-3-70b-instruct--eagle-llama3-instruct-70b"
MLC_3022 = "https://github.com/mlc-ai/mlc-llm/issues/3022"
REREAD = date(2026, 12, 7)


@pytest.fixture(scope="module")
def registry() -> Registry:
    return load_registry()


def _get(registry: Registry, entry_id: str) -> RegistryEntry:
    entry = registry.get(entry_id)
    assert entry is not None, entry_id
    return entry


# --------------------------------------------------------------------------- gpt-oss-20b + RedHatAI


def test_redhat_gpt_oss_20b_figures_name_no_engine(registry: Registry) -> None:
    e = _get(registry, REDHAT_20B)
    # The card's comparison row names no engine: not "measured on vLLM", and no guessed engine.
    assert e.engines == () and e.evidence_for("vllm") is None and not e.engine_quotes
    assert e.evidence == "measured" and e.shown_running()
    assert [m.engine for m in e.measured] == [None, None, None]
    assert "(no engine named)" in evidence_text(e) and "on vllm" not in evidence_text(e)
    assert [m["engine"] for m in e.to_dict()["measured"]] == [None, None, None]


def test_redhat_gpt_oss_20b_figures_are_acceptance_lengths(registry: Registry) -> None:
    e = _get(registry, REDHAT_20B)
    # τ 2.63 / 2.43 / 3.00 at K = 7: tokens per target pass, not a fraction of drafted tokens.
    assert [(m.quantity, m.value, m.draft_max) for m in e.measured] == [
        ("accepted_per_pass", 2.63, 7), ("accepted_per_pass", 2.43, 7), ("accepted_per_pass", 3.0, 7)]
    assert e.figure is not None and e.figure.startswith("acceptance length 2.43 to 3.00")
    assert "measured acceptance length 2.43 to 3.00" in evidence_text(e)
    assert any("not acceptance rates" in c.text for c in e.caveats)


def test_redhat_gpt_oss_20b_greedy_note_follows_the_card(registry: Registry) -> None:
    e = _get(registry, REDHAT_20B)
    # The card: "The acceptance metrics reported above were measured under standard rejection
    # sampling". The greedy drafting of older vLLM did not lower these figures.
    note = e.checked.note or ""
    assert "applies to these figures" not in note
    assert "standard rejection sampling" in note
    greedy = [c for c in e.caveats if "greedily" in c.text]
    assert greedy and all(c.url == NEBIUS_CARD and "standard rejection sampling" in (c.quote or "")
                          and "standard rejection sampling" in c.text for c in greedy)
    assert e.checked.on == REREAD


def test_a_number_without_an_engine_says_so_where_it_is_cited(registry: Registry) -> None:
    e = _get(registry, REDHAT_20B)
    line = measurement_line(e.measured[0], e)
    assert line == ("accepted per pass 2.63 measured on an engine the source does not name; draft max 7 "
                    f"({NEBIUS_CARD})")
    code, out, _ = run("--for", "openai/gpt-oss-20b")
    assert code == 0
    assert "2.63 tokens per target pass (acceptance length) (no engine named; draft length 7)" in out
    code, out, _ = run("--for", "openai/gpt-oss-20b", "--format", "json")
    row = next(r for r in parse_json(out) if r["id"] == REDHAT_20B)
    assert row["engines"] == [] and {m["engine"] for m in row["measured"]} == {None}


def test_acceptance_length_figures_say_length(registry: Registry) -> None:
    # A figure of acceptance lengths reads as one: "acceptance 2.43" reads as a rate.
    lengths = [e for e in registry if e.figure and e.measured
               and {m.quantity for m in e.measured} == {"accepted_per_pass"}]
    assert len(lengths) >= 3
    for e in lengths:
        assert "acceptance length" in (e.figure or ""), e.id


# --------------------------------------------------------------------------- Llama 4 Maverick


def test_maverick_instruct_target_cites_the_eagle_readme(registry: Registry) -> None:
    e = _get(registry, MAVERICK)
    assert e.target.name == "Llama-4-Maverick-17B-128E-Instruct"
    # The TensorRT-LLM docs say "Llama 4 Maverick"; the EAGLE README at cb7e0841 names the
    # -Instruct model (and its repo) for this head.
    assert "Llama 4 Maverick" in e.quote and "Instruct" not in e.quote
    assert EAGLE_README in e.see_also and EAGLE_README in e.checked.read
    readme = [c for c in e.caveats if c.url == EAGLE_README]
    assert len(readme) == 1 and readme[0].basis == "source"
    assert readme[0].quote is not None
    assert readme[0].quote.startswith(
        "LLaMA-4-Maverick-17B-128E-Instruct meta-llama/Llama-4-Maverick-17B-128E-Instruct | ")
    assert "nvidia/Llama-4-Maverick-17B-128E-Eagle3 | No" in readme[0].quote
    assert e.target.repo == "meta-llama/Llama-4-Maverick-17B-128E-Instruct"
    assert e.checked.on == REREAD


# --------------------------------------------------------------------------- alamios drafts


@pytest.mark.parametrize("entry_id", [ALAMIOS, ALAMIOS_CODER])
def test_alamios_cards_are_read_again(registry: Registry, entry_id: str) -> None:
    e = _get(registry, entry_id)
    assert e.checked.on == REREAD and not e.checked.unreadable
    assert "Re-read 2026-12-07" in (e.checked.note or "")
    # The detail dropped while the cards could not be read, quoted again from the card.
    q4 = [c for c in e.caveats if "Q4_K_M" in c.text]
    assert q4 and all("16k context" in c.text for c in q4)
    assert e.engines == ()


def test_alamios_coder_cards_describe_different_training_runs(registry: Registry) -> None:
    e = _get(registry, ALAMIOS_CODER)
    by_url = {c.url: c for c in e.caveats if c.quote and "epochs" in c.quote}
    assert set(by_url) == {CODER_GGUF, CODER_SAFETENSORS}
    assert "trained for 2 epochs on 2.5k unique examples" in (by_url[CODER_GGUF].quote or "")
    assert "Updated to v1" in (by_url[CODER_GGUF].quote or "")
    assert "trained for 4 epochs on 1400 unique examples" in (by_url[CODER_SAFETENSORS].quote or "")
    assert "different training run" in by_url[CODER_SAFETENSORS].text
    assert "not in the stored copies" not in (e.checked.note or "").split("Re-read 2026-12-07")[1]


# --------------------------------------------------------------------------- mlc-llm issue 3022


def test_mlc_issue_3022_is_read(registry: Registry) -> None:
    e = _get(registry, EAGLE70)
    assert MLC_3022 in e.checked.read and MLC_3022 not in e.checked.unreadable
    # A maintainer's suggestion for LLaMA 3.1 70B, no run: not an engine of this Llama 3 pair.
    assert "mlc-llm" not in e.engines
    mlc = [c for c in e.caveats if c.url == MLC_3022]
    assert len(mlc) == 1 and mlc[0].quote is not None
    assert "LLaMA 3.1 70B" in mlc[0].quote
    assert "yuhuili/EAGLE-LLaMA3-Instruct-70B as the eagle model for the 70B model" in mlc[0].quote
    assert e.checked.on == REREAD
    # No entry is left unreadable for this issue.
    assert all(MLC_3022 not in x.checked.unreadable for x in registry)


# --------------------------------------------------------------------------- other unreadable sources

# Sources marked unreadable before issue 50 that the stored copies now hold: each was read, and
# the entry says what it shows (none changed a level or an engine).
NOW_READ = [
    ("qwen2.5-7b-instruct--qwen2.5-0.5b-instruct", "https://lmstudio.ai/docs/typescript/llm-prediction/speculative-decoding"),
    ("opt-6.7b--opt-125m", "https://docs.vllm.ai/en/v0.14.0/features/spec_decode/"),
    ("qwen2.5-coder-32b-instruct--qwen2.5-coder-1.5b-instruct",
     "https://huggingface.co/ggml-org/Qwen2.5-Coder-1.5B-32B-speculative-GGUF"),
    ("deepseek-r1--deepseek-r1-draft-0.5b-v1.0", "https://huggingface.co/jukofyork/DeepSeek-R1-DRAFT-0.5B"),
    ("glm-4.5--glm-4.5-draft-0.6b-v3.0", "https://featherless.ai/models/jukofyork/GLM-4.5-DRAFT-0.6B-v3.0/reviews"),
    ("glm-4.5-air--glm-4.5-draft-0.6b-v3.0", "https://featherless.ai/models/jukofyork/GLM-4.5-DRAFT-0.6B-v3.0/reviews"),
    ("glm-4-32b-0414--glm-4.5-draft-0.6b-v3.0", "https://featherless.ai/models/jukofyork/GLM-4.5-DRAFT-0.6B-v3.0/reviews"),
    (EAGLE70, MLC_3022),
]


@pytest.mark.parametrize(("entry_id", "url"), NOW_READ)
def test_sources_now_in_the_stored_copies_are_read(registry: Registry, entry_id: str, url: str) -> None:
    e = _get(registry, entry_id)
    assert url in e.checked.read and url not in e.checked.unreadable
    assert "2026-12-07 (issue 50)" in (e.checked.note or "")


def test_sources_still_unreadable_were_searched_for_again(registry: Registry) -> None:
    # What is still marked unreadable was looked for again in this round, and the note says so.
    unread = [e for e in registry if e.checked.unreadable]
    assert unread
    for e in unread:
        note = e.checked.note or ""
        assert "2026-12-07 (issue 50)" in note and "still not in the stored copies" in note, e.id


def test_an_earlier_build_naming_llama_cpp_does_not_make_it_an_engine(registry: Registry) -> None:
    # The earlier DeepSeek-R1-DRAFT-0.5B card points to a GGUF "ready for use with llama.cpp";
    # that is not this v1.0 draft, so the entry still names no engine and says why in a caveat.
    e = _get(registry, "deepseek-r1--deepseek-r1-draft-0.5b-v1.0")
    assert e.engines == ()
    earlier = [c for c in e.caveats if c.url == "https://huggingface.co/jukofyork/DeepSeek-R1-DRAFT-0.5B"]
    assert len(earlier) == 1 and "ready for use with llama.cpp" in (earlier[0].quote or "")
    assert "not this v1.0" in earlier[0].text
