"""PW002 (paircheck._engine.chat_template) on in-memory descriptions: each family's markers,
and the warning's three messages. File-free, for the mutation run (engine.chat_template)."""

from __future__ import annotations

import pytest
from rule_desc import desc

from paircheck._engine import chat_template as C
from paircheck.constants import CHAT_TEMPLATE
from paircheck.findings import WARN
from paircheck.model import ModelDescription


def with_template(text: object) -> ModelDescription:
    return desc(kv={} if text is None else {CHAT_TEMPLATE: text})


@pytest.mark.parametrize(("text", "family"), [
    ("<|start|>user<|channel|>final", "gpt-oss (harmony)"),
    ("<|start|>only the start", C.OTHER),
    ("<|header_start|>user<|header_end|>", "Llama 4"),
    ("<|start_header_id|>user<|end_header_id|>", "Llama 3"),
    ("<|im_start|>user\n<|im_end|>", "ChatML"),
    ("<|turn>user", "Gemma 4"),
    ("<start_of_turn>user", "Gemma"),
    ("<|START_OF_TURN_TOKEN|><|USER_TOKEN|>", "Command-R"),
    ("<|start_of_role|>user<|end_of_role|>", "Granite"),
    ("<｜User｜>hi<｜Assistant｜>", "DeepSeek"),
    ("[gMASK]<sop><|user|>", "GLM"),
    ("<|user|>\nhi<|end|>", "Phi-3"),
    ("<|user|>\nhi</s>", "Zephyr"),
    ("[INST] <<SYS>>", "Llama 2"),
    ("[INST] hi [/INST]", "Mistral"),
    ("{{ messages }}", C.OTHER),
    ("", C.NONE),
    (None, C.NONE),
])
def test_family(text: str | None, family: str) -> None:
    assert C.template_family(text) == family


def test_template_text() -> None:
    assert C.template_text(with_template("<|im_start|>")) == "<|im_start|>"
    assert C.template_text(with_template("   \n")) is None  # blank is none
    assert C.template_text(with_template(7)) is None  # not text
    assert C.template_text(with_template(None)) is None


CHATML, LLAMA3 = "<|im_start|>{{ m }}<|im_end|>", "<|start_header_id|>{{ m }}"


def test_no_warning_without_a_target_template_or_for_one_family() -> None:
    assert C.template_warning(with_template(None), with_template(CHATML)) is None
    assert C.template_warning(with_template("  "), with_template(None)) is None
    assert C.template_warning(with_template(CHATML), with_template(CHATML)) is None
    assert C.template_warning(with_template(CHATML), with_template(CHATML + " tools")) is None
    assert C.template_warning(with_template("{{ a }}"), with_template("{{ a }}")) is None  # identical unknowns


def test_base_draft() -> None:
    found = C.template_warning(with_template(CHATML), with_template(None))
    assert found is not None
    assert (found.code, found.name, found.status, found.fix) == ("PW002", "chat_template", WARN, C.TEMPLATE_FIX)
    assert found.details == {"target_template": "ChatML", "draft_template": "none"}
    assert found.message == ("the target formats chat prompts with a ChatML template and the draft has no chat "
                             "template (a base model?): it has not seen that format and will be accepted less; use "
                             "the draft's instruct/chat variant")


def test_two_unknown_templates() -> None:
    found = C.template_warning(with_template("{{ a }}"), with_template("{{ b }}"))
    assert found is not None and found.details == {"target_template": C.OTHER, "draft_template": C.OTHER}
    assert found.message == ("target and draft have different chat templates of a format paircheck does not know: "
                             "the draft may not have seen the target's prompt format")


def test_another_family() -> None:
    found = C.template_warning(with_template(LLAMA3), with_template(CHATML))
    assert found is not None and found.details == {"target_template": "Llama 3", "draft_template": "ChatML"}
    assert found.message == ("the target's chat template is Llama 3, the draft's is ChatML: with chat prompts the "
                             "draft sees a format it was not trained on and will be accepted less; use a draft with a "
                             "Llama 3 template (a small model of the target's family)")
    unknown = C.template_warning(with_template(CHATML), with_template("{{ b }}"))
    assert unknown is not None and unknown.details["draft_template"] == C.OTHER


def test_rule() -> None:
    assert C.RULES == (C.TEMPLATE_RULE,)
    assert (C.TEMPLATE_RULE.code, C.TEMPLATE_RULE.name, C.TEMPLATE_RULE.kind) == ("PW002", "chat_template", "warning")
