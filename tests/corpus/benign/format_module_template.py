# side_effect: READ_ONLY
# tricky: str.format on a literal and on a module-level template constant
"""Str.format on a literal and on a module-level template constant."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


TEMPLATE = "{name} has {count:>4} words ({ratio:.1%})"


class FormatModuleTemplateInput(BaseModel):
    text: str = ""


class FormatModuleTemplateOutput(BaseModel):
    result: str


class FormatModuleTemplate(BaseSkill[FormatModuleTemplateInput, FormatModuleTemplateOutput]):
    name = "format_module_template"
    description = "Corpus skill: str.format on a literal and on a module-level template constant."
    input_model = FormatModuleTemplateInput
    output_model = FormatModuleTemplateOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FormatModuleTemplateInput) -> FormatModuleTemplateOutput:
        words = input_data.text.split()
        line = TEMPLATE.format(name="text", count=len(words), ratio=len(set(words)) / max(len(words), 1))
        return FormatModuleTemplateOutput(result=line + " | " + "{0}-{1}".format(*(words + ["", ""])[:2]))
