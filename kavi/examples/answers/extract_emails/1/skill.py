"""Extract e-mail addresses from a text."""

import re

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass

# A match starts only where a run of address characters starts: linear in the text.
EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


class ExtractEmailsInput(BaseModel):
    text: str


class ExtractEmailsOutput(BaseModel):
    emails: list[str]


class ExtractEmails(BaseSkill[ExtractEmailsInput, ExtractEmailsOutput]):
    name = "extract_emails"
    description = "Extract the distinct e-mail addresses of a text, in order of appearance."
    input_model = ExtractEmailsInput
    output_model = ExtractEmailsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ExtractEmailsInput) -> ExtractEmailsOutput:
        return ExtractEmailsOutput(emails=list(dict.fromkeys(EMAIL.findall(input_data.text))))
