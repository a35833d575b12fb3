# side_effect: READ_ONLY
# tricky: string.Template substitution and textwrap
"""String.Template substitution and textwrap."""

import string
import textwrap
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


GREETING = string.Template("Hello, $name!")


class TextwrapStringTemplateInput(BaseModel):
    text: str = ""


class TextwrapStringTemplateOutput(BaseModel):
    result: str


class TextwrapStringTemplate(BaseSkill[TextwrapStringTemplateInput, TextwrapStringTemplateOutput]):
    name = "textwrap_string_template"
    description = "Corpus skill: string.Template substitution and textwrap."
    input_model = TextwrapStringTemplateInput
    output_model = TextwrapStringTemplateOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TextwrapStringTemplateInput) -> TextwrapStringTemplateOutput:
        text = GREETING.safe_substitute(name=input_data.text or "world")
        return TextwrapStringTemplateOutput(result=textwrap.fill(textwrap.dedent(text), width=40) + string.ascii_letters[:3])
