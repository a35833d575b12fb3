# side_effect: READ_ONLY
# tricky: textwrap.wrap, indent and shorten on paragraphs of the input
# family: text-formats
"""Reflow paragraphs to a width, indent them and make a one-line summary."""

import textwrap
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class TextwrapParagraphsInput(BaseModel):
    text: str
    width: int = 72
    prefix: str = ""


class TextwrapParagraphsOutput(BaseModel):
    body: str
    summary: str


class TextwrapParagraphs(BaseSkill[TextwrapParagraphsInput, TextwrapParagraphsOutput]):
    name = "textwrap_paragraphs"
    description = "Reflow paragraphs to a width, indent them and make a one-line summary."
    input_model = TextwrapParagraphsInput
    output_model = TextwrapParagraphsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TextwrapParagraphsInput) -> TextwrapParagraphsOutput:
        width = max(10, input_data.width)
        paragraphs = [p for p in input_data.text.split("\n\n") if p.strip()]
        wrapped = ["\n".join(textwrap.wrap(" ".join(p.split()), width=width)) for p in paragraphs]
        body = textwrap.indent("\n\n".join(wrapped), input_data.prefix)
        return TextwrapParagraphsOutput(body=body, summary=textwrap.shorten(input_data.text, width=width, placeholder=" ..."))
