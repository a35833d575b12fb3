# side_effect: READ_ONLY
# tricky: string.Template built in execute from the caller's template text
# family: text-formats
"""Fill a letter template with named fields, reporting missing ones."""

import string
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


PLACEHOLDER_HINT = "use $name or ${name} placeholders"


class StringTemplateLetterInput(BaseModel):
    template: str
    fields: dict[str, str]


class StringTemplateLetterOutput(BaseModel):
    text: str
    missing: list[str]


class StringTemplateLetter(BaseSkill[StringTemplateLetterInput, StringTemplateLetterOutput]):
    name = "string_template_letter"
    description = "Fill a letter template with named fields, reporting missing ones."
    input_model = StringTemplateLetterInput
    output_model = StringTemplateLetterOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: StringTemplateLetterInput) -> StringTemplateLetterOutput:
        template = string.Template(input_data.template)
        if not template.is_valid():
            raise ValueError(f"invalid template: {PLACEHOLDER_HINT}")
        missing = sorted(set(template.get_identifiers()) - set(input_data.fields))
        return StringTemplateLetterOutput(text=template.safe_substitute(input_data.fields), missing=missing)
