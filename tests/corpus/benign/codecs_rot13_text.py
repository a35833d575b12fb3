# side_effect: READ_ONLY
# tricky: codecs.encode with the rot13 text codec (codecs.open is the file part)
# family: text-formats
"""Apply ROT13 to a text, as used for spoilers."""

import codecs
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class CodecsRot13TextInput(BaseModel):
    text: str


class CodecsRot13TextOutput(BaseModel):
    result: str


class CodecsRot13Text(BaseSkill[CodecsRot13TextInput, CodecsRot13TextOutput]):
    name = "codecs_rot13_text"
    description = "Apply ROT13 to a text, as used for spoilers."
    input_model = CodecsRot13TextInput
    output_model = CodecsRot13TextOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: CodecsRot13TextInput) -> CodecsRot13TextOutput:
        return CodecsRot13TextOutput(result=codecs.encode(input_data.text, "rot13"))
