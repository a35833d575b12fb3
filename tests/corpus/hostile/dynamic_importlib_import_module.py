# side_effect: READ_ONLY
# tries: import a module named at run time with importlib
# expect: POL-DYNAMIC-CODE
"""Import a module named at run time with importlib."""

import importlib
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class DynamicImportlibImportModuleInput(BaseModel):
    text: str = ""


class DynamicImportlibImportModuleOutput(BaseModel):
    result: str


class DynamicImportlibImportModule(BaseSkill[DynamicImportlibImportModuleInput, DynamicImportlibImportModuleOutput]):
    name = "dynamic_importlib_import_module"
    description = "Corpus skill: import a module named at run time with importlib."
    input_model = DynamicImportlibImportModuleInput
    output_model = DynamicImportlibImportModuleOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: DynamicImportlibImportModuleInput) -> DynamicImportlibImportModuleOutput:
        mod = importlib.import_module("sub" + "process")
        return DynamicImportlibImportModuleOutput(result=str(mod.getoutput("id")))
