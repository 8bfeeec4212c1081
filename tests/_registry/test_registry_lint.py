"""The registry lint (issue 25): the shipped data passes every rule, and each rule catches
the mistake it is for.

Each class of the round-3 audit that a rule can check has two tests here: the real
registry has no finding of that class, and a planted entry with exactly that mistake is
caught. ``test_one_planted_example_of_each_class_is_caught`` plants them all at once.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_registry import HEADER, write_registry  # noqa: E402

from paircheck._registry import lint as L  # noqa: E402
from paircheck._registry.entry import Caveat, Measurement, RegistryEntry  # noqa: E402
from paircheck._registry.load import Registry, load_registry  # noqa: E402
from paircheck._registry.schema import QUANTITIES, RegistryError  # noqa: E402


@pytest.fixture(scope="module")
def registry() -> Registry:
    return load_registry()


@pytest.fixture(scope="module")
def findings(registry: Registry) -> list[L.LintFinding]:
    return L.lint_registry(registry)


def _codes(found: list[L.LintFinding]) -> set[str]:
    return {f.rule.code for f in found}


def _real(findings: list[L.LintFinding], rule: L.LintRule) -> list[str]:
    return [str(f) for f in findings if f.rule == rule]


# A clean entry to plant mistakes in: vLLM's docs, a quote naming both sides.
CLEAN = """
[[pair]]
id = "demo-7b--demo-0.5b"
family = "demo"
target = { name = "Demo-7B", repo = "demo/Demo-7B" }
draft = { name = "Demo-0.5B", repo = "demo/Demo-0.5B" }
method = "draft-model"
engines = ["vllm"]
status = "works"
evidence = "recommended"
source = { url = "https://docs.vllm.ai/en/latest/demo.html", kind = "official-docs" }
quote = "Serve demo/Demo-7B with demo/Demo-0.5B as its draft model."
checked = { on = 2026-12-01, read = ["https://docs.vllm.ai/en/latest/demo.html"] }
notes = "demo"
"""


def _load(tmp_path: Path, *bodies: str) -> Registry:
    return load_registry(write_registry(tmp_path, HEADER + "".join(bodies)))


def _one(tmp_path: Path, body: str) -> RegistryEntry:
    (entry,) = _load(tmp_path, body)
    return entry


def _lint(tmp_path: Path, body: str) -> set[str]:
    return _codes(L.lint_entry(_one(tmp_path, body)))


def test_the_clean_example_is_clean(tmp_path: Path) -> None:
    assert L.lint_entry(_one(tmp_path, CLEAN)) == []


def test_the_shipped_registry_passes_the_lint(findings: list[L.LintFinding]) -> None:
    assert findings == [], "\n".join(map(str, findings))


# --------------------------------------------------------------------------- RL101


# An engine no quote names, on a page that is not the engine's own.
PLANT_ENGINE = (
    CLEAN.replace("https://docs.vllm.ai/en/latest/demo.html", "https://example.org/blog")
    .replace('engines = ["vllm"]', 'engines = ["sglang"]')
    .replace('kind = "official-docs"', 'kind = "blog"')
)


def test_every_engine_is_backed_by_a_quote(findings: list[L.LintFinding], tmp_path: Path) -> None:
    assert _real(findings, L.R_ENGINE) == []
    assert L.R_ENGINE.code in _lint(tmp_path, PLANT_ENGINE)
    # The engine's own docs back it without naming it; a quote naming it backs it anywhere.
    assert L.R_ENGINE.code not in _lint(tmp_path, CLEAN)
    named = PLANT_ENGINE.replace("as its draft model.", "as its draft model in SGLang.")
    assert L.R_ENGINE.code not in _lint(tmp_path, named)


def test_engine_words_and_homes() -> None:
    assert L.names_engine("llama-server -m a.gguf -md b.gguf", "llama.cpp")
    assert L.names_engine("pipe(..., assistant_model=draft)", "transformers")
    assert not L.names_engine("Use vllm-project docs", "sglang")
    assert L.is_engine_home("https://github.com/ggml-org/llama.cpp/pull/10455", "llama.cpp")
    assert L.is_engine_home("https://github.com/SafeAILab/EAGLE/issues/198", "research")
    assert not L.is_engine_home("https://github.com/abetlen/llama-cpp-python/issues/675", "llama.cpp")


# --------------------------------------------------------------------------- RL102

PLANT_CUT = CLEAN.replace(
    'quote = "Serve demo/Demo-7B with demo/Demo-0.5B as its draft model."',
    'quote = "Serve demo/Demo-7B ... with demo/Demo-0.5B as its draft model."',
)


def test_a_cut_quote_says_so(findings: list[L.LintFinding], tmp_path: Path) -> None:
    assert _real(findings, L.R_CUT) == []
    assert L.R_CUT.code in _lint(tmp_path, PLANT_CUT)
    said = PLANT_CUT.replace(
        'read = ["https://docs.vllm.ai/en/latest/demo.html"] }',
        'read = ["https://docs.vllm.ai/en/latest/demo.html"], note = "Quote cut (\'...\') between two sentences." }',
    )
    assert L.R_CUT.code not in _lint(tmp_path, said)


# --------------------------------------------------------------------------- RL103

# The page's generic introduction, which names neither side.
PLANT_GENERIC = CLEAN.replace(
    'quote = "Serve demo/Demo-7B with demo/Demo-0.5B as its draft model."',
    'quote = "Speculative decoding speeds up generation with a smaller draft model."',
)


def test_the_quote_names_the_pair(findings: list[L.LintFinding], tmp_path: Path) -> None:
    assert _real(findings, L.R_PAIR) == []
    assert L.R_PAIR.code in _lint(tmp_path, PLANT_GENERIC)


def test_naming_a_side() -> None:
    from paircheck._registry.identity import ModelRef

    gemma = ModelRef(name="gemma-3-27b-it")
    assert L.names_side("Gemma 3 27B will run with Gemma 3 1B as its draft", gemma)  # "it" may be left out
    assert not L.names_side("Gemma 3 4B", gemma)
    phind = ModelRef(name="phind-codellama-34b-v2")
    assert L.names_side("./speculative -m ./models/phind-codellama-34b-v2.Q4_K_M.gguf", phind)
    card = ModelRef(name="EAGLE3-gpt-oss-20b", repo="nebius/EAGLE3-gpt-oss-20b")
    assert L.names_side("This is a draft model.", card, "https://huggingface.co/nebius/EAGLE3-gpt-oss-20b")


# --------------------------------------------------------------------------- RL104

# vLLM refused the FP8 build of the target; the entry is the BF16 pair.
PLANT_BORROWED = CLEAN.replace('engines = ["vllm"]', 'engines = ["llama.cpp"]').replace(
    'evidence = "recommended"',
    'evidence = "recommended"\nengine_evidence = { vllm = "code-refuses" }\nfails_on = ["vllm"]',
).replace(
    'quote = "Serve demo/Demo-7B with demo/Demo-0.5B as its draft model."',
    'quote = "Run demo/Demo-7B with demo/Demo-0.5B as its draft in llama-server."',
) + """
[[pair.engine_quote]]
engine = "vllm"
quote = "vLLM rejects demo/Demo-7B-FP8 with demo/Demo-0.5B as draft: vocab sizes differ."
url = "https://docs.vllm.ai/en/latest/demo.html"
"""


def test_a_failure_names_the_exact_pair_or_is_a_sibling_report(findings: list[L.LintFinding], tmp_path: Path) -> None:
    assert _real(findings, L.R_NEGATIVE) == []
    assert L.R_NEGATIVE.code in _lint(tmp_path, PLANT_BORROWED)
    sibling = PLANT_BORROWED.replace('vllm = "code-refuses"', 'vllm = "sibling"')
    assert L.R_NEGATIVE.code not in _lint(tmp_path, sibling)
    # A sibling report is not read as naming this pair's variant either.
    assert L.R_IDENTITY.code not in _lint(tmp_path, sibling)


# --------------------------------------------------------------------------- RL105

# The source names the QAT checkpoint; the entry records the plain model.
PLANT_QAT = CLEAN.replace(
    'quote = "Serve demo/Demo-7B with demo/Demo-0.5B as its draft model."',
    'quote = "Serve demo/Demo-7B-qat with demo/Demo-0.5B as its draft model."',
)
# The repo is an AWQ build; the name says nothing of it.
PLANT_REPO = CLEAN.replace('repo = "demo/Demo-7B"', 'repo = "demo/Demo-7B-AWQ"')


def test_sides_carry_their_variant(findings: list[L.LintFinding], tmp_path: Path) -> None:
    assert _real(findings, L.R_IDENTITY) == []
    assert L.R_IDENTITY.code in _lint(tmp_path, PLANT_QAT)
    assert L.R_IDENTITY.code in _lint(tmp_path, PLANT_REPO)
    named = PLANT_QAT.replace('name = "Demo-7B"', 'name = "Demo-7B-qat"')
    assert L.R_IDENTITY.code not in _lint(tmp_path, named)


def test_variant_markers() -> None:
    from paircheck._registry.identity import ModelRef

    assert L.weight_markers("gemma-4-31B-it-qat") == {"qat"}
    assert L.quant_markers("Qwen2.5-Coder-7B-Q8_0-GGUF") == {"q8_0"}
    assert L.drift("uses mlx-community/Qwen3-0.6B-4bit", ModelRef(name="Qwen3-0.6B")) == ["Qwen3-0.6B-4bit"]
    # Another model that merely contains the name is not a variant of it.
    assert L.drift("Qwen3-0.6B-Base-AWQ-extra", ModelRef(name="Qwen3-0.6B")) == []


# --------------------------------------------------------------------------- RL106 / RL107

MEASURED = """
[[pair.measured]]
quantity = "speedup"
value = 2.15
engine = "vllm"
quote = "Demo-7B + Demo-0.5B: 159.1 tok/s (+115% speedup)"
"""
MEASURED_ENTRY = CLEAN.replace('evidence = "recommended"', 'evidence = "measured"') + MEASURED
PLANT_NO_DATA = CLEAN.replace('evidence = "recommended"', 'evidence = "measured"')
PLANT_NUMBER = MEASURED_ENTRY.replace("value = 2.15", "value = 2.2")


def test_measured_evidence_has_its_numbers(findings: list[L.LintFinding], tmp_path: Path) -> None:
    assert _real(findings, L.R_MEASURED) == []
    assert L.R_MEASURED.code in _lint(tmp_path, PLANT_NO_DATA)
    assert L.lint_entry(_one(tmp_path, MEASURED_ENTRY)) == []
    # Numbers on an engine whose level is not measured.
    assert L.R_MEASURED.code in _lint(tmp_path, CLEAN + MEASURED)


def test_each_measured_number_is_written_in_its_quote(findings: list[L.LintFinding], tmp_path: Path) -> None:
    assert _real(findings, L.R_NUMBER) == []
    assert L.R_NUMBER.code in _lint(tmp_path, PLANT_NUMBER)


@pytest.mark.parametrize(
    ("quantity", "value", "quote"),
    [
        ("speedup", 2.15, "159.1 tok/s (+115% speedup)"),
        ("speedup", 1.7, "| 258.61 | 440.15 | 1.70× |"),
        ("speedup", 1.22, "| 304.93 | 371.90 | +22.0% |"),
        ("speedup", 1.88, "Только CPU - 1.88x (3.3-->6.2)"),
        ("acceptance_rate", 0.4, "Acceptance rate: 40.0%"),
        ("acceptance_rate", 0.72055, "accept    = 72.055%"),
        ("accepted_per_pass", 3.0, "| 2.63 | 2.43 | 3.00"),
        ("tokens_per_second", 371.9, "| 304.93 | 371.90 | +22.0% |"),
        ("baseline_tokens_per_second", 3.3, "1.88x (3.3-->6.2)"),
        ("tokens_per_second", 6.2, "1.88x (3.3-->6.2)"),
        ("tokens_per_second", 128256, "128,256 tokens"),
    ],
)
def test_number_in_quote_accepts_the_written_forms(quantity: str, value: float, quote: str) -> None:
    assert L.number_in_quote(quantity, value, quote)


@pytest.mark.parametrize(
    ("quantity", "value", "quote"),
    [
        ("speedup", 2.15, "+11.5% speedup"),  # a different number
        ("speedup", 1.5, "+150% speedup"),  # 150% is 2.5x
        ("tokens_per_second", 15.2, "15.22 tokens/second"),  # rounded is not written
        ("acceptance_rate", 0.16, "-16.0%"),  # a decrease is not a rate
        ("accepted_per_pass", 2.4, "speedup 1.24x"),
    ],
)
def test_number_in_quote_rejects_numbers_not_written(quantity: str, value: float, quote: str) -> None:
    assert not L.number_in_quote(quantity, value, quote)


def test_real_measured_numbers_are_sane(registry: Registry) -> None:
    rows = [(e.id, m) for e in registry for m in e.measured]
    assert len(rows) >= 60  # 85 numbers in 27 entries when written
    for entry_id, m in rows:
        assert isinstance(m, Measurement)
        assert m.quantity in QUANTITIES, entry_id
        assert L.number_in_quote(m.quantity, m.value, m.quote), (entry_id, m)
        if m.quantity == "acceptance_rate":
            assert 0 < m.value <= 1, entry_id
        elif m.quantity == "accepted_per_pass":
            assert 1 <= m.value < 20, entry_id
        else:
            assert m.value > 0, entry_id
        # An engine the entry names, or none when its source names none (issue 50, item 13).
        assert m.engine in registry.get(entry_id).engines or (m.engine is None and not registry.get(entry_id).engines)


# --------------------------------------------------------------------------- RL108

# The author says they ran it and gives a speed, and the entry files it as a recommendation.
PLANT_LEVEL = CLEAN.replace(
    'quote = "Serve demo/Demo-7B with demo/Demo-0.5B as its draft model."',
    'quote = "I did some tests with demo/Demo-7B and demo/Demo-0.5B in vLLM: 65 t/s."',
)
PLANT_RAN = CLEAN.replace(
    'quote = "Serve demo/Demo-7B with demo/Demo-0.5B as its draft model."',
    'quote = "I tested demo/Demo-7B with demo/Demo-0.5B in vLLM and it is faster."',
)


def test_the_level_is_not_below_the_quote(findings: list[L.LintFinding], tmp_path: Path) -> None:
    assert _real(findings, L.R_LEVEL) == []
    assert L.R_LEVEL.code in _lint(tmp_path, PLANT_LEVEL)
    assert L.R_LEVEL.code in _lint(tmp_path, PLANT_RAN)
    ran = PLANT_RAN.replace('evidence = "recommended"', 'evidence = "ran"')
    assert L.R_LEVEL.code not in _lint(tmp_path, ran)
    # "8x H100" is hardware, not a ratio.
    hardware = CLEAN.replace("as its draft model.", "as its draft model on 8x H100.")
    assert L.R_LEVEL.code not in _lint(tmp_path, hardware)


# --------------------------------------------------------------------------- RL109

# A caveat that states a size no quote of the entry gives (the audit's "106B total").
PLANT_CAVEAT = CLEAN.replace('notes = "demo"', 'caveats = ["The draft is itself a 106B MoE."]\nnotes = "demo"')
# The same fact, quoted from a page the entry read.
SOURCED_CAVEAT = CLEAN + """
[[pair.caveat]]
text = "The draft is itself a 106B MoE."
basis = "source"
url = "https://docs.vllm.ai/en/latest/demo.html"
quote = "Demo-0.5B is distilled from a 106B total MoE."
"""
INFERRED_CAVEAT = CLEAN + """
[[pair.caveat]]
text = "Both pad to 152064 rows, so vLLM accepts them."
basis = "inference"
reason = "Both configs' vocab_size is 152064 (the entries' vocab records)."
"""


def test_a_caveat_states_only_what_it_rests_on(findings: list[L.LintFinding], tmp_path: Path) -> None:
    assert _real(findings, L.R_CAVEAT) == []
    found = L.lint_entry(_one(tmp_path, PLANT_CAVEAT))
    assert [f.rule for f in found] == [L.R_CAVEAT] and "states 106b" in found[0].message
    # Supported by the entry's own quote: the plain string is enough.
    quoted = PLANT_CAVEAT.replace("as its draft model.", "as its draft model; the draft is a 106B MoE.")
    assert L.lint_entry(_one(tmp_path, quoted)) == []
    # Supported by a quoted page the entry read, or marked inference with a reason stating it.
    assert L.lint_entry(_one(tmp_path, SOURCED_CAVEAT)) == []
    assert L.lint_entry(_one(tmp_path, INFERRED_CAVEAT)) == []
    # An inference whose reason does not state its number is caught too.
    vague = INFERRED_CAVEAT.replace("Both configs' vocab_size is 152064", "Both configs pad the same way")
    assert [f.rule for f in L.lint_entry(_one(tmp_path, vague))] == [L.R_CAVEAT]
    # A source quote that does not hold the number does not support it.
    unsupported = SOURCED_CAVEAT.replace("a 106B total MoE", "a large MoE")
    assert [f.rule for f in L.lint_entry(_one(tmp_path, unsupported))] == [L.R_CAVEAT]
    # A cut in a caveat's quote is said in checked.note, like any quote's (RL102).
    cut = SOURCED_CAVEAT.replace("distilled from a 106B", "distilled ... from a 106B")
    assert [f.rule for f in L.lint_entry(_one(tmp_path, cut))] == [L.R_CUT]


def test_an_inference_without_its_basis_is_refused(tmp_path: Path) -> None:
    # The schema refuses it before the lint runs ...
    no_reason = re.sub(r"^reason = .*\n", "", INFERRED_CAVEAT, flags=re.M)
    with pytest.raises(RegistryError, match="an 'inference' caveat needs a 'reason'"):
        _load(tmp_path, no_reason)
    # ... and the lint catches one built without it (a registry loaded another way).
    entry = _one(tmp_path, CLEAN)
    bare = dataclasses.replace(entry, caveats=(Caveat("Slow on CPUs.", "inference"),))
    found = L.lint_entry(bare)
    assert [f.rule for f in found] == [L.R_CAVEAT] and "gives no reason" in found[0].message


def test_a_pr_number_is_supported_by_the_cited_pr_and_a_name_by_the_sides() -> None:
    support = L.fact_words("https://github.com/sgl-project/sglang/pull/4716 Llama-3.3-70B-Instruct")
    assert L.unsupported_facts(Caveat("Needs PR 4716 for the 70B."), support) == []
    assert L.unsupported_facts(Caveat("Needs PR 4717 for the 70B."), support) == ["4717"]


@pytest.mark.parametrize(
    ("caveat", "quote"),
    [
        ("152064 vs 151936", "vocab 152,064 and 151,936"),  # thousands separators
        ("up to 1.14x", "1.05-1.14× on SWE-bench"),  # a ratio sign
        ("vLLM before 0.18.0", "introduced in v0.18.0"),  # a version's v
        ("a Q8_0 31B", "-m models/Gemma4-31B-Q8_0.gguf"),  # a file name's quantization and size
        ("EXL2 4.0bpw", "exl2/4.0bpw"),  # case
    ],
)
def test_fact_words_match_as_written(caveat: str, quote: str) -> None:
    assert L.fact_words(caveat) <= L.fact_words(quote)


def test_fact_words_do_not_match_other_numbers() -> None:
    assert L.fact_words("V0 engine") == {"v0"}  # an engine generation is not a version
    assert not L.fact_words("vLLM 0.9") <= L.fact_words("the vLLM 0.9.1 docs")
    assert not L.fact_words("a 150 W limit") <= L.fact_words("at 150W")  # written differently: reword it


# --------------------------------------------------------------------------- all together


PLANTS = {
    L.R_ENGINE: PLANT_ENGINE,
    L.R_CUT: PLANT_CUT,
    L.R_PAIR: PLANT_GENERIC,
    L.R_NEGATIVE: PLANT_BORROWED,
    L.R_IDENTITY: PLANT_QAT,
    L.R_MEASURED: PLANT_NO_DATA,
    L.R_NUMBER: PLANT_NUMBER,
    L.R_LEVEL: PLANT_LEVEL,
    L.R_CAVEAT: PLANT_CAVEAT,
}


def _planted_registry_text() -> str:
    bodies = []
    for n, (rule, body) in enumerate(PLANTS.items()):
        # Distinct ids and targets so the entries load side by side.
        bodies.append(
            body.replace("demo-7b--demo-0.5b", f"{rule.slug}--demo-0.5b").replace("Demo-7B", f"Demo{n}-7B")
        )
    return HEADER + "".join(bodies)


def test_one_planted_example_of_each_class_is_caught(tmp_path: Path) -> None:
    assert set(PLANTS) == set(L.LINT_RULES)
    reg = load_registry(write_registry(tmp_path, _planted_registry_text()))
    found = L.lint_registry(reg)
    for rule in L.LINT_RULES:
        assert any(f.rule == rule and f.entry_id == f"{rule.slug}--demo-0.5b" for f in found), rule


def test_lint_module_runs_as_a_script(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert L.main([]) == 0
    assert "0 finding(s)" in capsys.readouterr().err
    planted = write_registry(tmp_path, _planted_registry_text())
    assert L.main([str(planted)]) == 1
    out = capsys.readouterr().out
    assert all(rule.code in out for rule in L.LINT_RULES)
    (tmp_path / "b").mkdir()
    broken = write_registry(tmp_path / "b", "not toml [")
    assert L.main([str(broken)]) == 2
    assert "error" in capsys.readouterr().err


def test_findings_print_the_rule(tmp_path: Path) -> None:
    (finding,) = [f for f in L.lint_entry(_one(tmp_path, PLANT_GENERIC)) if f.rule == L.R_PAIR]
    assert str(finding).startswith("demo-7b--demo-0.5b: RL103 quote-names-no-pair: ")


def test_a_registry_error_is_not_a_lint_finding(tmp_path: Path) -> None:
    with pytest.raises(RegistryError):
        load_registry(write_registry(tmp_path, HEADER + CLEAN.replace('status = "works"', 'status = "maybe"')))


# --------------------------------------------------------------------------- holes (issue 37)
# Each case below is one a mutation audit found unplanted: the rule's branch could be
# deleted and every test above still passed.


def _messages(tmp_path: Path, body: str, rule: L.LintRule) -> list[str]:
    return [f.message for f in L.lint_entry(_one(tmp_path, body)) if f.rule == rule]


def test_rl101_a_quote_attributed_to_another_engine_backs_only_that_engine(tmp_path: Path) -> None:
    # vLLM's docs back vLLM; the engine quote naming SGLang is vLLM's, so it backs SGLang not
    body = CLEAN.replace('engines = ["vllm"]', 'engines = ["vllm", "sglang"]') + """
[[pair.engine_quote]]
engine = "vllm"
quote = "vLLM serves demo/Demo-7B with demo/Demo-0.5B the way SGLang does."
url = "https://docs.vllm.ai/en/latest/demo.html"
"""
    found = _messages(tmp_path, body, L.R_ENGINE)
    assert len(found) == 1 and found[0].startswith("sglang is named by no quote")
    # the same words in a quote of its own (unattributed, or SGLang's) back it
    own = body.replace('quote = "Serve demo/Demo-7B with demo/Demo-0.5B as its draft model."',
                       'quote = "Serve demo/Demo-7B with demo/Demo-0.5B as its draft model, as in SGLang."')
    assert _messages(tmp_path, own, L.R_ENGINE) == []


def test_rl104_a_sibling_failure_without_any_quote(tmp_path: Path) -> None:
    # recorded as a sibling report, but nothing quotes what was reported
    body = CLEAN.replace('engines = ["vllm"]', 'engines = ["llama.cpp"]').replace(
        'evidence = "recommended"',
        'evidence = "recommended"\nengine_evidence = { vllm = "sibling" }\nfails_on = ["vllm"]',
    ).replace(
        'quote = "Serve demo/Demo-7B with demo/Demo-0.5B as its draft model."',
        'quote = "Run demo/Demo-7B with demo/Demo-0.5B as its draft in llama-server; vLLM refuses a sibling."',
    )
    assert _messages(tmp_path, body, L.R_NEGATIVE) == ["the sibling failure on vllm has no quote saying what was "
                                                       "reported"]
    quoted = body + """
[[pair.engine_quote]]
engine = "vllm"
quote = "vLLM rejects demo/Demo-7B-FP8 with demo/Demo-0.5B as draft: vocab sizes differ."
url = "https://docs.vllm.ai/en/latest/demo.html"
"""
    assert _messages(tmp_path, quoted, L.R_NEGATIVE) == []


def test_rl106_measured_numbers_on_an_engine_at_another_level(tmp_path: Path) -> None:
    # two engines, only one of them measured: the numbers must be on that one
    two = MEASURED_ENTRY.replace('engines = ["vllm"]', 'engines = ["vllm", "sglang"]').replace(
        'evidence = "measured"', 'evidence = "measured"\nengine_evidence = { sglang = "recommended" }').replace(
        "as its draft model.", "as its draft model, in vLLM and SGLang.")
    assert _messages(tmp_path, two, L.R_MEASURED) == []
    on_sglang = two.replace('engine = "vllm"\nquote = "Demo-7B', 'engine = "sglang"\nquote = "Demo-7B')
    assert _messages(tmp_path, on_sglang, L.R_MEASURED) == [
        "vllm is 'measured' but has no [[pair.measured]] numbers",
        "measured[0] is on sglang, whose level is recommended"]


def test_rl106_measured_without_an_engine(tmp_path: Path) -> None:
    # A source that measured the pair without naming the engine: the entry names none, and its
    # numbers carry none; measured evidence still needs the numbers (issue 50, item 13).
    entry = dataclasses.replace(_one(tmp_path, PLANT_NO_DATA), engines=())
    assert [f.message for f in L.lint_entry(entry) if f.rule == L.R_MEASURED] == [
        "measured evidence needs its [[pair.measured]] numbers"]
    measured = _one(tmp_path, CLEAN + MEASURED)
    unnamed = tuple(dataclasses.replace(m, engine=None) for m in measured.measured)
    assert unnamed
    ok = dataclasses.replace(measured, engines=(), measured=unnamed, evidence="measured")
    assert [f.message for f in L.lint_entry(ok) if f.rule == L.R_MEASURED] == []
    # a number without an engine beside engines the entry names, or at a level below measured
    named = dataclasses.replace(ok, engines=("vllm",))
    assert [f.message for f in L.lint_entry(named) if f.rule == L.R_MEASURED] == [
        "vllm is 'measured' but has no [[pair.measured]] numbers",
        "measured[0] names no engine, but the entry names vllm"]
    lower = dataclasses.replace(ok, evidence="ran")
    assert [f.message for f in L.lint_entry(lower) if f.rule == L.R_MEASURED] == [
        "measured[0] names no engine and the entry's level is ran"]


def test_rl108_each_level_below_what_the_quote_shows(tmp_path: Path) -> None:
    # a figure is measured evidence: filed as "ran" or "computed" it is below it
    for level in ("ran", "computed", "recommended"):
        figure = PLANT_LEVEL.replace('evidence = "recommended"', f'evidence = "{level}"')
        found = _messages(tmp_path, figure, L.R_LEVEL)
        assert found == [f"quote reports a figure but its level is {level}: measured?"], level
    # an author who ran it is "ran" evidence at least: "computed" is below it too
    computed = PLANT_RAN.replace('evidence = "recommended"', 'evidence = "computed"')
    assert _messages(tmp_path, computed, L.R_LEVEL) == [
        "quote says its author ran the pair but its level is computed: ran?"]
    measured = PLANT_RAN.replace('evidence = "recommended"', 'evidence = "measured"')
    assert _messages(tmp_path, measured, L.R_LEVEL) == []
