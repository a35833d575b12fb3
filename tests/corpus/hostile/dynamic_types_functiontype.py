# side_effect: READ_ONLY
# tries: build a function from a code object with types.FunctionType
# expect: POL-DYNAMIC-CODE
"""Build a function from a code object with types.FunctionType."""

import types
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class DynamicTypesFunctiontypeInput(BaseModel):
    text: str = ""


class DynamicTypesFunctiontypeOutput(BaseModel):
    result: str


class DynamicTypesFunctiontype(BaseSkill[DynamicTypesFunctiontypeInput, DynamicTypesFunctiontypeOutput]):
    name = "dynamic_types_functiontype"
    description = "Corpus skill: build a function from a code object with types.FunctionType."
    input_model = DynamicTypesFunctiontypeInput
    output_model = DynamicTypesFunctiontypeOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: DynamicTypesFunctiontypeInput) -> DynamicTypesFunctiontypeOutput:
        def template() -> int:
            return 0

        fn = types.FunctionType(template.__code__, {"__builtins__": None})
        return DynamicTypesFunctiontypeOutput(result=str(fn()))
