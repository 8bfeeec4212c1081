"""The narrow format interface: each format is a name and one renderer per kind of result;
what a format has no renderer for is refused with one line, and a renderer for a kind that
does not exist is a programming error found when the format is defined."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paircheck._format import KINDS, Format, RenderOptions, format_named, formats, render
from paircheck._registry.consult import Pairs
from paircheck.errors import InputError
from paircheck.findings import EveryEngine
from paircheck.pipeline import check_all_engines, check_pair, describe

EXAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "examples"
SPM, BAICHUAN = (str(EXAMPLES / f"ggml-vocab-{n}.gguf") for n in ("llama-spm", "baichuan"))


def test_text_and_json_render_every_kind_and_no_format_names_an_unknown_one() -> None:
    every = formats()
    assert set(every["text"].renderers) == set(KINDS) == set(every["json"].renderers)
    for name, fmt in every.items():
        assert fmt.name == name and fmt.renderers and set(fmt.renderers) <= set(KINDS)


def test_a_format_refuses_what_it_cannot_render_in_one_line() -> None:
    report = check_pair(SPM, BAICHUAN)
    for name in ("csv", "html", "markdown", "sarif", "github"):
        with pytest.raises(InputError) as caught:
            render(name, report, RenderOptions())
        assert str(caught.value) == f"--format: {name} is not available for a pair check"
    with pytest.raises(InputError, match="csv is not available for --engine all"):
        render("csv", EveryEngine(check_all_engines(describe(SPM), describe(BAICHUAN))), RenderOptions())


def test_the_same_result_in_each_format_that_renders_it() -> None:
    report = check_pair(SPM, BAICHUAN)
    text = render("text", report, RenderOptions(width=80))
    assert text.startswith("NOT COMPATIBLE") and text == format_named("text").render(report, RenderOptions(width=80))
    assert json.loads(render("json", report, RenderOptions()))["verdict"] == "refused"
    empty = Pairs([])
    assert render("markdown", empty, RenderOptions()) == "no documented pairs match the filters"
    assert render("csv", empty, RenderOptions()).splitlines()[0].startswith("id,family,target_name,")


def test_a_renderer_for_an_unknown_kind_is_refused_when_the_format_is_defined() -> None:
    with pytest.raises(ValueError, match=r"renderers for unknown kinds \['Reprot'\]"):
        Format("typo", {"Reprot": lambda result, options: ""})


def test_a_subclass_of_a_kind_is_rendered_as_that_kind() -> None:
    class Checked(EveryEngine):
        pass

    result = Checked(check_all_engines(describe(SPM), describe(BAICHUAN)))
    assert render("text", result, RenderOptions()) == render("text", EveryEngine(result.reports), RenderOptions())
    with pytest.raises(InputError, match="csv is not available for --engine all"):
        render("csv", result, RenderOptions())
