# side_effect: READ_ONLY
# tricky: html escaping and difflib similarity
"""Html escaping and difflib similarity."""

import difflib
import html
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class HtmlDifflibInput(BaseModel):
    text: str = ""


class HtmlDifflibOutput(BaseModel):
    result: str


class HtmlDifflib(BaseSkill[HtmlDifflibInput, HtmlDifflibOutput]):
    name = "html_difflib"
    description = "Corpus skill: html escaping and difflib similarity."
    input_model = HtmlDifflibInput
    output_model = HtmlDifflibOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: HtmlDifflibInput) -> HtmlDifflibOutput:
        left, _, right = input_data.text.partition("|")
        ratio = difflib.SequenceMatcher(None, left, right).ratio()
        return HtmlDifflibOutput(result=html.escape(f"<{left}> vs <{right}>: {ratio:.2f}"))
