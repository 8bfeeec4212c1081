"""The registry lint's findings as whoever adds an entry reads them: every line in full, and
the edges of the rules the class-level tests in ``test_registry_lint.py`` do not pin (which
quote backs which engine, a card's URL naming its own model, the order of several findings).

Fast and in-process (entries parsed from a few lines of TOML), so that a mutation run of
``_registry/lint.py`` tests its mutants in a fraction of a second each.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import test_registry_lint as P  # noqa: E402
from test_registry import HEADER, write_registry  # noqa: E402

from paircheck._registry import lint as L  # noqa: E402
from paircheck._registry.identity import ModelRef  # noqa: E402

ID = "demo-7b--demo-0.5b"
QUOTE = 'quote = "Serve demo/Demo-7B with demo/Demo-0.5B as its draft model."'
READ = 'read = ["https://docs.vllm.ai/en/latest/demo.html"]'


def _lines(tmp_path: Path, body: str) -> list[str]:
    return [str(f) for f in L.lint_entry(P._one(tmp_path, body))]


def _quote(text: str) -> str:
    return P.CLEAN.replace(QUOTE, f'quote = "{text}"')


def _read_also(body: str, *urls: str) -> str:
    listed = ", ".join(f'"{u}"' for u in urls)
    return body.replace(READ, READ[:-1] + ", " + listed + "]").replace(
        'notes = "demo"', f"see_also = [{listed}]\nnotes = \"demo\"")


@pytest.mark.parametrize(("plant", "lines"), [
    ("PLANT_ENGINE", [f"{ID}: RL101 engine-unbacked: sglang is named by no quote and no quote comes from its own docs "
                      "or repository: add an [[pair.engine_quote]] that names it, or drop the engine"]),
    ("PLANT_CUT", [f"{ID}: RL102 cut-unmarked: quote is cut ('...') or joins table cells (' | '); "
                   "say so in checked.note"]),
    ("PLANT_GENERIC", [f"{ID}: RL103 quote-names-no-pair: the quote does not name both sides of the pair "
                       "(a generic sentence is not the pair's quote)"]),
    ("PLANT_BORROWED", [
        f"{ID}: RL104 negative-not-exact: no quote shows vllm failing for this exact pair (level code-refuses): "
        "quote one that does, or record it as 'sibling' (reported for a sibling pair)",
        # the failure's own quote names the FP8 build: a variant the target's name lacks
        f"{ID}: RL105 identity-drift: the entry names 'Demo-7B-FP8' but the target is 'Demo-7B': name the variant"]),
    ("PLANT_QAT", [f"{ID}: RL105 identity-drift: the entry names 'Demo-7B-qat' but the target is 'Demo-7B': "
                   "name the variant"]),
    ("PLANT_REPO", [f"{ID}: RL105 identity-drift: target repo demo/Demo-7B-AWQ is a awq build; its name must say so"]),
    ("PLANT_NO_DATA", [f"{ID}: RL106 measured-without-data: vllm is 'measured' but has no [[pair.measured]] numbers"]),
    ("PLANT_NUMBER", [f"{ID}: RL107 number-not-in-quote: measured[0] value 2.2 (speedup) is not written in its quote"]),
    ("PLANT_LEVEL", [f"{ID}: RL108 level-below-quote: quote reports a figure but its level is recommended: measured?"]),
    ("PLANT_RAN", [f"{ID}: RL108 level-below-quote: quote says its author ran the pair but its level is recommended: "
                   "ran?"]),
    ("PLANT_CAVEAT", [f"{ID}: RL109 caveat-unsupported: caveat 0 ('The draft is itself a 106B MoE.'...) states 106b, "
                      "not written in any quote of the entry"]),
])
def test_each_planted_mistake_in_full(tmp_path: Path, plant: str, lines: list[str]) -> None:
    assert _lines(tmp_path, getattr(P, plant)) == lines


def test_several_cut_quotes_are_named_together(tmp_path: Path) -> None:
    body = P.PLANT_CUT.replace('engines = ["vllm"]', 'engines = ["vllm", "sglang"]') + """
[[pair.engine_quote]]
engine = "sglang"
quote = "SGLang | Demo-7B | Demo-0.5B"
url = "https://docs.vllm.ai/en/latest/demo.html"
"""
    assert _lines(tmp_path, body) == [
        f"{ID}: RL102 cut-unmarked: quote, engine_quote (sglang) is cut ('...') or joins table cells (' | '); "
        "say so in checked.note"]


MEASURED_ROW = """
[[pair.measured]]
quantity = "{quantity}"
value = {value}
engine = "vllm"
quote = "{quote}"
{url}"""

BENCH, CARD = "https://example.org/bench", "https://huggingface.co/demo/Demo-7B"


def _measured(*rows: tuple[str, float, str, str | None]) -> str:
    body = _read_also(P.CLEAN.replace('evidence = "recommended"', 'evidence = "measured"'), BENCH, CARD)
    for quantity, value, quote, url in rows:
        body += MEASURED_ROW.format(quantity=quantity, value=value, quote=quote,
                                    url=f'url = "{url}"\n' if url else "")
    return body


def test_numbers_from_another_page_name_the_pair_or_for_a_baseline_the_target(tmp_path: Path) -> None:
    body = _measured(
        ("speedup", 2.15, "Demo-7B + Demo-0.5B: 2.15x", None),  # the quote's own page: not looked at again
        ("baseline_tokens_per_second", 50, "Some model alone: 50 tok/s", BENCH),
        ("speedup", 2.15, "Demo-7B alone vs with a draft: 2.15x", BENCH),
        # the target's own Hub card names it ("this model"); the draft is named in words
        ("baseline_tokens_per_second", 50, "This model alone: 50 tok/s", CARD),
        ("speedup", 2.15, "With Demo-0.5B as its draft: 2.15x", CARD),
    )
    assert _lines(tmp_path, body) == [
        f"{ID}: RL103 quote-names-no-pair: measured[1] comes from another page than the quote and does not name "
        "the target",
        f"{ID}: RL103 quote-names-no-pair: measured[2] comes from another page than the quote and does not name "
        "the pair"]


VLLM_DOCS = "https://docs.vllm.ai/en/latest/demo.html"
NO_EXACT = ("no quote shows {engine} failing for this exact pair (level {level}): quote one that does, "
            "or record it as 'sibling' (reported for a sibling pair)")
FP8 = f"{ID}: RL105 identity-drift: the entry names 'Demo-7B-FP8' but the target is 'Demo-7B': name the variant"


def test_a_sibling_failure_does_not_stop_the_next_engines_check(tmp_path: Path) -> None:
    body = P.CLEAN.replace('evidence = "recommended"', 'evidence = "recommended"\nfails_on = ["llama.cpp", "sglang"]\n'
                           'engine_evidence = { "llama.cpp" = "sibling", sglang = "stated" }') + f"""
[[pair.engine_quote]]
engine = "llama.cpp"
quote = "llama.cpp fails with a draft for Demo-14B."
url = "{VLLM_DOCS}"

[[pair.engine_quote]]
engine = "sglang"
quote = "SGLang fails with a draft."
url = "{VLLM_DOCS}"
"""
    assert _lines(tmp_path, body) == [f"{ID}: RL104 negative-not-exact: " + NO_EXACT.format(engine="sglang",
                                                                                           level="stated")]


def test_a_fails_entry_fails_on_its_engines(tmp_path: Path) -> None:
    # status "fails": the engines are where it fails, and the entry's quote is their failure's
    body = P.CLEAN.replace('status = "works"', 'status = "fails"\nwhy = "vocab sizes differ"').replace(
        'evidence = "recommended"', 'evidence = "stated"').replace(
        "Serve demo/Demo-7B with demo/Demo-0.5B as its draft model.",
        "vLLM refuses demo/Demo-7B-FP8 with demo/Demo-0.5B as its draft.")
    assert _lines(tmp_path, body) == [
        f"{ID}: RL104 negative-not-exact: " + NO_EXACT.format(engine="vllm", level="stated"), FP8]
    exact = body.replace("demo/Demo-7B-FP8", "demo/Demo-7B")
    assert _lines(tmp_path, exact) == []


def test_only_the_failing_engines_own_quote_shows_its_failure(tmp_path: Path) -> None:
    # llama.cpp's quote names the exact pair, but it is not vLLM's failure
    body = P.PLANT_BORROWED + f"""
[[pair.engine_quote]]
engine = "llama.cpp"
quote = "llama-server runs demo/Demo-7B with demo/Demo-0.5B."
url = "{VLLM_DOCS}"
"""
    assert _lines(tmp_path, body) == [
        f"{ID}: RL104 negative-not-exact: " + NO_EXACT.format(engine="vllm", level="code-refuses"), FP8]


def test_variant_markers_of_the_draft_and_of_a_repos_name_part(tmp_path: Path) -> None:
    # the org of a repo is not its build ("qat-lab" names no QAT checkpoint); a plain mention
    # before a variant one does not hide it; "dynamic" may trail a variant's name
    body = P.CLEAN.replace('repo = "demo/Demo-7B"', 'repo = "qat-lab/Demo-7B"').replace(
        'repo = "demo/Demo-0.5B"', 'repo = "demo/Demo-0.5B-AWQ-INT4"').replace(
        'notes = "demo"', 'notes = "Demo-0.5B, then Demo-0.5B-GPTQ and Demo-7B-QAT-dynamic."')
    assert _lines(tmp_path, body) == [
        f"{ID}: RL105 identity-drift: the entry names 'Demo-7B-QAT-dynamic' but the target is 'Demo-7B': "
        "name the variant",
        f"{ID}: RL105 identity-drift: draft repo demo/Demo-0.5B-AWQ-INT4 is a awq/int4 build; its name must say so",
        f"{ID}: RL105 identity-drift: the entry names 'Demo-0.5B-GPTQ' but the draft is 'Demo-0.5B': name the variant"]


def test_value_and_value_max_are_each_looked_for(tmp_path: Path) -> None:
    body = P.MEASURED_ENTRY.replace("value = 2.15", "value = 2.2\nvalue_max = 3")
    assert _lines(tmp_path, body) == [
        f"{ID}: RL107 number-not-in-quote: measured[0] value 2.2 (speedup) is not written in its quote",
        f"{ID}: RL107 number-not-in-quote: measured[0] value_max 3 (speedup) is not written in its quote"]


def test_the_level_of_each_quote_is_its_engines(tmp_path: Path) -> None:
    # the entry's quote is at every engine's level; an engine quote at its engine's
    both = P.CLEAN.replace('engines = ["vllm"]', 'engines = ["vllm", "sglang"]').replace(
        'evidence = "recommended"', 'evidence = "recommended"\nengine_evidence = { sglang = "computed" }').replace(
        "as its draft model.", "as its draft model: 65 t/s.") + f"""
[[pair.engine_quote]]
engine = "sglang"
quote = "We tested it in SGLang."
url = "{VLLM_DOCS}"
"""
    assert _lines(tmp_path, both) == [
        f"{ID}: RL108 level-below-quote: quote reports a figure but its level is computed/recommended: measured?",
        f"{ID}: RL108 level-below-quote: engine_quote (sglang) says its author ran the pair but its level is "
        "computed: ran?"]
    # the engine's own level, not the entry's, decides
    own = P.CLEAN.replace('evidence = "recommended"',
                          'evidence = "measured"\nengine_evidence = { vllm = "recommended" }').replace(
        "as its draft model.", "as its draft model: 65 t/s.")
    assert _lines(tmp_path, own) == [
        f"{ID}: RL108 level-below-quote: quote reports a figure but its level is recommended: measured?"]
    # a measured row's quote is a figure by nature: RL106 speaks for it, not RL108
    ran = P.CLEAN.replace('evidence = "recommended"', 'evidence = "ran"') + P.MEASURED
    assert _lines(tmp_path, ran) == [f"{ID}: RL106 measured-without-data: measured[0] is on vllm, whose level is ran"]


def test_a_measured_row_backs_its_own_engine_only(tmp_path: Path) -> None:
    # vLLM's numbers come from vLLM's docs (which back vLLM without naming it); naming SGLang
    # in vLLM's row does not back SGLang
    body = P.CLEAN.replace(VLLM_DOCS, "https://example.org/blog").replace(
        'kind = "official-docs"', 'kind = "blog"').replace(
        'engines = ["vllm"]', 'engines = ["vllm", "sglang"]').replace(
        'evidence = "recommended"', 'evidence = "measured"\nengine_evidence = { sglang = "recommended" }').replace(
        'read = ["https://example.org/blog"]', 'read = ["https://example.org/blog", "https://docs.vllm.ai/x"]').replace(
        'notes = "demo"', 'see_also = ["https://docs.vllm.ai/x"]\nnotes = "demo"') + """
[[pair.measured]]
quantity = "speedup"
value = 2.15
engine = "vllm"
quote = "Demo-7B + Demo-0.5B, as in SGLang: 2.15x"
url = "https://docs.vllm.ai/x"
"""
    assert _lines(tmp_path, body) == [
        f"{ID}: RL101 engine-unbacked: sglang is named by no quote and no quote comes from its own docs or repository: "
        "add an [[pair.engine_quote]] that names it, or drop the engine"]


def test_caveat_findings_in_full(tmp_path: Path) -> None:
    from paircheck._registry.entry import Caveat

    entry = P._one(tmp_path, P.CLEAN)
    caveats = (
        Caveat("Slow on CPUs.", "inference"),
        Caveat("A 13B draft and a 106B target fit on 2 cards of 80GB each."),
        Caveat("Needs 4 cards.", "source", url=VLLM_DOCS, quote="It needs several cards."),
        Caveat("Needs 4 cards.", "inference", reason="Two cards hold one model."),
        Caveat("Needs 2 cards.", "inference", reason="  "),
    )
    found = [str(f) for f in L.lint_entry(dataclasses.replace(entry, caveats=caveats))]
    assert found == [
        f"{ID}: RL109 caveat-unsupported: caveat 0 is marked inference but gives no reason (what paircheck "
        "concludes it from)",
        # the first 40 characters, the facts in the order the caveat states them
        f"{ID}: RL109 caveat-unsupported: caveat 1 ('A 13B draft and a 106B target fit on 2 c'...) states 13b, 106b, "
        "2, 80gb, not written in any quote of the entry",
        f"{ID}: RL109 caveat-unsupported: caveat 2 ('Needs 4 cards.'...) states 4, not written in its quote or the "
        "entry's",
        f"{ID}: RL109 caveat-unsupported: caveat 3 ('Needs 4 cards.'...) states 4, not written in its reason or the "
        "entry's quotes",
        f"{ID}: RL109 caveat-unsupported: caveat 4 is marked inference but gives no reason (what paircheck "
        "concludes it from)"]


def test_an_entry_without_a_checked_record_is_linted(tmp_path: Path) -> None:
    # a registry built another way than from the TOML files need not have one
    entry = dataclasses.replace(P._one(tmp_path, P.PLANT_CUT), checked=None)
    assert [str(f) for f in L.lint_entry(entry)] == [
        f"{ID}: RL102 cut-unmarked: quote is cut ('...') or joins table cells (' | '); say so in checked.note"]


def test_the_script_reads_its_arguments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    planted = write_registry(tmp_path, HEADER + P.PLANT_QAT)
    monkeypatch.setattr(sys, "argv", ["lint", str(planted)])
    assert L.main() == 1
    assert capsys.readouterr().out.splitlines() == [
        f"{ID}: RL105 identity-drift: the entry names 'Demo-7B-qat' but the target is 'Demo-7B': name the variant"]


# --------------------------------------------------------------------------- the helpers' edges


def test_naming_a_side_by_its_card() -> None:
    ref = ModelRef(name="Demo-7B", repo="demo/Demo-7B")
    for url in ("https://huggingface.co/demo/Demo-7B", "https://HuggingFace.co/demo/demo-7b/",
                "https://hf.co/demo/Demo-7B/discussions/3", "https://www.huggingface.co/demo/Demo-7B"):
        assert L.names_side("this model", ref, url), url
    for url in ("https://huggingface.co/demo/Demo-7B-GGUF", "https://example.org/demo/Demo-7B", None, ""):
        assert not L.names_side("this model", ref, url), url
    # a side without a repo has no card
    assert not L.names_side("this model", ModelRef(name="Demo-7B"), "https://huggingface.co/demo/Demo-7B")
    # words naming exactly the side name it
    assert L.names_side("Demo-7B", ModelRef(name="Demo-7B"))
    assert L.names_side("Demo 7B", ModelRef(name="Demo-7B-Instruct"))


def test_a_builtin_draft_is_named_by_its_method(tmp_path: Path) -> None:
    entry = dataclasses.replace(P._one(tmp_path, P.CLEAN), draft=ModelRef(name="MTP", builtin=True), method="mtp")
    assert L.names_pair(entry, "Demo-7B with its MTP head")
    assert L.names_pair(entry, "Demo-7B with multi-token prediction")
    assert not L.names_pair(entry, "Demo-7B with a draft")
    unknown = dataclasses.replace(entry, method="medusa")  # no words known for it
    assert not L.names_pair(unknown, "Demo-7B with Medusa heads")


def test_written_numbers_with_a_sign() -> None:
    # a speedup below 1 is a loss: "20% slower" and "-20%" (or the minus sign) write 0.8
    assert L.number_in_quote("speedup", 0.8, "20% slower")
    assert L.number_in_quote("speedup", 0.8, "\u221220% on long prompts")
    assert L.number_in_quote("speedup", 0.8, "-20% on long prompts")
    assert not L.number_in_quote("speedup", 1.2, "\u221220% on long prompts")
    assert not L.number_in_quote("speedup", 1.2, "-20% on long prompts")


def test_file_extensions_in_any_case() -> None:
    assert L.fact_words("Gemma4-31B-Q8_0.GGUF") == {"gemma4", "31b", "q8_0"}
    assert L.fact_words("an X2 card") == {"x2"}
    assert L.text_tokens("demo/Demo-7B.GGUF") == L.text_tokens("demo/Demo-7B") == L.text_tokens("Demo-7B.gguf")
    assert L.quant_markers("Demo-7B-Q4_K_M.GGUF") == {"q4_k_m"}
    assert L.quant_markers("Demo-7B-AWQ.gguf") == {"awq"}
    assert L.drift("Try demo/Demo-7B-qat.", ModelRef(name="Demo-7B")) == ["Demo-7B-qat"]


def test_an_engine_without_homes_has_none() -> None:
    assert not L.is_engine_home("https://example.org/", "no-such-engine")
    assert not L.names_engine("no-such-engine", "no-such-engine")


def test_a_file_name_inside_a_sentence_names_its_model() -> None:
    assert L.text_tokens("run Demo-7B.gguf now") == {"run", "demo", "7b", "now"}
    assert L.text_tokens("Demo-7B.GGUF and more") == {"demo", "7b", "and", "more"}


def test_only_slashes_end_a_card_url() -> None:
    ref = ModelRef(name="Demo-X", repo="demo/Demo-X")
    assert L.names_side("this model", ref, "https://huggingface.co/demo/Demo-X/")


def test_a_name_that_goes_on_is_another_model() -> None:
    assert L.drift("Demo-7B-qat-X", ModelRef(name="Demo-7B")) == []


def test_a_failure_quoted_from_the_targets_card(tmp_path: Path) -> None:
    # the card names its own model: a quote on it naming the draft names the exact pair
    card = "https://huggingface.co/demo/Demo-7B"
    body = _read_also(P.CLEAN.replace('evidence = "recommended"', 'evidence = "recommended"\nfails_on = ["sglang"]\n'
                                      'engine_evidence = { sglang = "code-refuses" }'), card) + f"""
[[pair.engine_quote]]
engine = "sglang"
quote = "SGLang refuses it with Demo-0.5B as the draft."
url = "{card}"
"""
    assert _lines(tmp_path, body) == []
    elsewhere = body.replace(f'url = "{card}"\n', f'url = "{VLLM_DOCS}"\n')
    assert _lines(tmp_path, elsewhere) == [
        f"{ID}: RL104 negative-not-exact: " + NO_EXACT.format(engine="sglang", level="code-refuses")]


def test_a_run_at_several_levels_names_them_all(tmp_path: Path) -> None:
    body = P.CLEAN.replace('engines = ["vllm"]', 'engines = ["vllm", "sglang"]').replace(
        'evidence = "recommended"', 'evidence = "recommended"\nengine_evidence = { sglang = "computed" }').replace(
        "Serve demo/Demo-7B with demo/Demo-0.5B as its draft model.",
        "I tested demo/Demo-7B with demo/Demo-0.5B in vLLM and SGLang.")
    assert _lines(tmp_path, body) == [
        f"{ID}: RL108 level-below-quote: quote says its author ran the pair but its level is "
        "computed/recommended: ran?"]
