# side_effect: READ_ONLY
# tricky: html.unescape and html.escape with a tag-stripping regex
# family: text-formats
"""Turn an HTML fragment into plain text and back into safe HTML."""

import html
import re
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


TAG = re.compile(r"<[^>]+>")
SPACE = re.compile(r"\s+")


class HtmlUnescapePlaintextInput(BaseModel):
    fragment: str


class HtmlUnescapePlaintextOutput(BaseModel):
    text: str
    escaped: str


class HtmlUnescapePlaintext(BaseSkill[HtmlUnescapePlaintextInput, HtmlUnescapePlaintextOutput]):
    name = "html_unescape_plaintext"
    description = "Turn an HTML fragment into plain text and back into safe HTML."
    input_model = HtmlUnescapePlaintextInput
    output_model = HtmlUnescapePlaintextOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: HtmlUnescapePlaintextInput) -> HtmlUnescapePlaintextOutput:
        text = SPACE.sub(" ", html.unescape(TAG.sub(" ", input_data.fragment))).strip()
        return HtmlUnescapePlaintextOutput(text=text, escaped=html.escape(text, quote=True))
