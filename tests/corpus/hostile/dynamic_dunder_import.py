# side_effect: READ_ONLY
# tries: import os through __import__
# expect: POL-DYNAMIC-CODE
"""Import os through __import__."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class DynamicDunderImportInput(BaseModel):
    text: str = ""


class DynamicDunderImportOutput(BaseModel):
    result: str


class DynamicDunderImport(BaseSkill[DynamicDunderImportInput, DynamicDunderImportOutput]):
    name = "dynamic_dunder_import"
    description = "Corpus skill: import os through __import__."
    input_model = DynamicDunderImportInput
    output_model = DynamicDunderImportOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: DynamicDunderImportInput) -> DynamicDunderImportOutput:
        mod = __import__("o" + "s")
        return DynamicDunderImportOutput(result=str(mod.getcwd()))
