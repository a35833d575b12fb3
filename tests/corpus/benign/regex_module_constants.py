# side_effect: READ_ONLY
# tricky: compiled regexes and flag combinations as module constants
"""Compiled regexes and flag combinations as module constants."""

import re
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+", re.IGNORECASE | re.MULTILINE)
SPACES: re.Pattern[str] = re.compile(r"\s+")


class RegexModuleConstantsInput(BaseModel):
    text: str = ""


class RegexModuleConstantsOutput(BaseModel):
    result: str


class RegexModuleConstants(BaseSkill[RegexModuleConstantsInput, RegexModuleConstantsOutput]):
    name = "regex_module_constants"
    description = "Corpus skill: compiled regexes and flag combinations as module constants."
    input_model = RegexModuleConstantsInput
    output_model = RegexModuleConstantsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: RegexModuleConstantsInput) -> RegexModuleConstantsOutput:
        emails = EMAIL.findall(SPACES.sub(" ", input_data.text))
        return RegexModuleConstantsOutput(result=",".join(sorted(set(emails))))
