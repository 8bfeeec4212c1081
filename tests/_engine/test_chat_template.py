"""PW002: a draft that does not know the target's prompt format (issue 26, "Chat template"):
a base model drafting for an instruct target, or another family's template. Both families
are named and the matching variant suggested; one family's templates are never flagged."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hf_build import build_qwen2_folder

from paircheck.catalog import find_rule
from paircheck.pipeline import check_pair

# Shortened from the templates the families publish (tokenizer_config.json on the Hub).
CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + "
          "'<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")
CHATML_2 = CHATML.replace("{% for", "{%- if messages[0]['role'] != 'system' %}{{- '<|im_start|>system\\nYou are "
                          "Qwen.<|im_end|>\\n' }}{%- endif %}{% for", 1)
LLAMA3 = ("{% for message in messages %}{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + "
          "message['content'] | trim + '<|eot_id|>' }}{% endfor %}")
GEMMA = "{% for m in messages %}<start_of_turn>{{ m['role'] }}\n{{ m['content'] }}<end_of_turn>\n{% endfor %}"


def _pw002(target: Path, draft: Path) -> dict[str, object] | None:
    found = check_pair(str(target), str(draft)).finding("PW002")
    return None if found is None else {"message": found.message, **found.details}


def _gguf(make: Callable[..., Path], name: str, template: str | None) -> Path:
    return make(name, extra_kv={"tokenizer.chat_template": template} if template else None)


def test_base_draft_for_an_instruct_target(gguf_factory) -> None:  # type: ignore[no-untyped-def]
    found = _pw002(_gguf(gguf_factory, "t.gguf", CHATML), _gguf(gguf_factory, "d.gguf", None))
    assert found is not None and found["target_template"] == "ChatML" and found["draft_template"] == "none"
    assert "instruct/chat variant" in str(found["message"])


def test_another_family_is_named(gguf_factory) -> None:  # type: ignore[no-untyped-def]
    found = _pw002(_gguf(gguf_factory, "t.gguf", LLAMA3), _gguf(gguf_factory, "d.gguf", CHATML))
    assert found is not None and (found["target_template"], found["draft_template"]) == ("Llama 3", "ChatML")
    assert "Llama 3" in str(found["message"]) and "ChatML" in str(found["message"])
    assert _pw002(_gguf(gguf_factory, "g.gguf", GEMMA), _gguf(gguf_factory, "l.gguf", LLAMA3)) is not None


@pytest.mark.parametrize(("target", "draft"), [(CHATML, CHATML_2), (CHATML, CHATML), (None, CHATML), (None, None)])
def test_one_family_or_no_target_template_is_not_flagged(gguf_factory, target, draft) -> None:  # type: ignore[no-untyped-def]
    assert _pw002(_gguf(gguf_factory, "t.gguf", target), _gguf(gguf_factory, "d.gguf", draft)) is None


def test_real_files(real_vocab: Callable[[str], Path]) -> None:
    # Qwen2 and Qwen3.5 share ChatML; Phi-3's own template is not Command-R's.
    assert _pw002(real_vocab("qwen2"), real_vocab("qwen35")) is None
    found = _pw002(real_vocab("command-r"), real_vocab("phi-3"))
    assert found is not None and (found["target_template"], found["draft_template"]) == ("Command-R", "Phi-3")


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_hf_folders_take_the_template_as_the_converter_does(tmp_path: Path, real_vocab) -> None:  # type: ignore[no-untyped-def]
    instruct = build_qwen2_folder(real_vocab("qwen2"), tmp_path / "Qwen2.5-7B-Instruct", 151936, chat_template=False)
    config = json.loads((instruct / "tokenizer_config.json").read_text())
    (instruct / "tokenizer_config.json").write_text(json.dumps({**config, "chat_template": CHATML}))
    base = build_qwen2_folder(real_vocab("qwen2"), tmp_path / "Qwen2.5-0.5B", 151936, chat_template=False)
    found = _pw002(instruct, base)
    assert found is not None and found["target_template"] == "ChatML" and found["draft_template"] == "none"
    # A template in chat_template.jinja (newer transformers) counts as well.
    (base / "chat_template.jinja").write_text(LLAMA3)
    found = _pw002(instruct, base)
    assert found is not None and found["draft_template"] == "Llama 3"


def test_explained() -> None:
    rule = find_rule("PW002")
    assert rule is not None and rule.name == "chat_template" and "ChatML" in rule.explanation
