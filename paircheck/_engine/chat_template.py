"""PW002: does the draft know the target's prompt format? An engine-neutral warning.

With a chat request, every engine applies the *target's* chat template, and the draft
drafts that text: role markers, turn separators, system prompt layout. A draft trained on
another format (a base model with none, or another family's template) meets those markers
cold and its guesses are accepted less often. Nothing refuses such a pair; the speedup is
what suffers.

Pure: it reads ``tokenizer.chat_template`` from both descriptions (a GGUF's key, or what
convert_hf_to_gguf.py writes from a Hugging Face folder); the templates are read as text
and never rendered.
"""

from __future__ import annotations

from paircheck.constants import CHAT_TEMPLATE
from paircheck.findings import WARN, Finding, Rule
from paircheck.model import ModelDescription

TEMPLATE_CODE, TEMPLATE_NAME = "PW002", "chat_template"
TEMPLATE_FIX = (
    "Use a draft trained on the target's prompt format: the instruct/chat variant of the draft for an "
    "instruct target, or a small model of the target's own family (same template)."
)
TEMPLATE_RULE = Rule(
    TEMPLATE_CODE, TEMPLATE_NAME, "The draft was trained on the target's prompt format (chat template)",
    "A chat request is formatted with the target's chat template (tokenizer.chat_template), and the draft "
    "predicts that text: role markers, turn separators, the system prompt's layout. A draft whose own "
    "template is of another family (ChatML vs Llama 3 vs Gemma ...), or which has none (a base model "
    "drafting for an instruct target), meets those markers cold, so fewer of its tokens are accepted. "
    "paircheck names each template's family from the markers it contains (<|im_start|>: ChatML, "
    "<|start_header_id|>: Llama 3, <start_of_turn>: Gemma, [INST]: Llama 2/Mistral, ...); two templates "
    "of one family with other details (a system default, tool calls) are not flagged. Raw completion "
    "requests (no template) are not affected.",
    TEMPLATE_FIX, kind="warning",
)
RULES = (TEMPLATE_RULE,)

# (family, markers that must all occur), most specific first. Markers come from the templates
# the families publish (tokenizer_config.json on the Hub).
FAMILIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("gpt-oss (harmony)", ("<|start|>", "<|channel|>")),
    ("Llama 4", ("<|header_start|>",)),
    ("Llama 3", ("<|start_header_id|>",)),
    ("ChatML", ("<|im_start|>",)),
    ("Gemma 4", ("<|turn>",)),
    ("Gemma", ("<start_of_turn>",)),
    ("Command-R", ("<|START_OF_TURN_TOKEN|>",)),
    ("Granite", ("<|start_of_role|>",)),
    ("DeepSeek", ("<｜User｜>",)),
    ("GLM", ("[gMASK]",)),
    ("Phi-3", ("<|user|>", "<|end|>")),
    ("Zephyr", ("<|user|>",)),
    ("Llama 2", ("[INST]", "<<SYS>>")),
    ("Mistral", ("[INST]",)),
)
NONE = "none"
OTHER = "another format"


def template_text(desc: ModelDescription) -> str | None:
    value = desc.metadata.get(CHAT_TEMPLATE)
    return value if isinstance(value, str) and value.strip() else None


def template_family(text: str | None) -> str:
    """The family a chat template belongs to, from its markers: "none" when there is none."""
    if not text:
        return NONE
    for family, markers in FAMILIES:
        if all(marker in text for marker in markers):
            return family
    return OTHER


def template_warning(target: ModelDescription, draft: ModelDescription) -> Finding | None:
    """PW002 when the target has a chat template and the draft's is of another family or absent.
    Nothing when the target has none (raw text, as for the draft) or both are of one family."""
    t_text, d_text = template_text(target), template_text(draft)
    if t_text is None or t_text == d_text:
        return None
    t_family, d_family = template_family(t_text), template_family(d_text)
    if t_family == d_family and t_family != OTHER:
        return None
    details = {"target_template": t_family, "draft_template": d_family}
    if d_family == NONE:
        message = (f"the target formats chat prompts with a {t_family} template and the draft has no chat "
                   "template (a base model?): it has not seen that format and will be accepted less; use "
                   "the draft's instruct/chat variant")
    elif t_family == d_family:  # two templates paircheck cannot place, and they differ
        message = ("target and draft have different chat templates of a format paircheck does not know: the "
                   "draft may not have seen the target's prompt format")
    else:
        message = (f"the target's chat template is {t_family}, the draft's is {d_family}: with chat prompts the "
                   f"draft sees a format it was not trained on and will be accepted less; use a draft with a "
                   f"{t_family} template (a small model of the target's family)")
    return Finding(TEMPLATE_CODE, TEMPLATE_NAME, WARN, message, details, TEMPLATE_FIX)
