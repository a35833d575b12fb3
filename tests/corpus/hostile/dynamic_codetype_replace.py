# side_effect: READ_ONLY
# tries: swap the constants of a code object
# expect: POL-DYNAMIC-CODE POL-INTROSPECTION
"""Swap the constants of a code object."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class DynamicCodetypeReplaceInput(BaseModel):
    text: str = ""


class DynamicCodetypeReplaceOutput(BaseModel):
    result: str


class DynamicCodetypeReplace(BaseSkill[DynamicCodetypeReplaceInput, DynamicCodetypeReplaceOutput]):
    name = "dynamic_codetype_replace"
    description = "Corpus skill: swap the constants of a code object."
    input_model = DynamicCodetypeReplaceInput
    output_model = DynamicCodetypeReplaceOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: DynamicCodetypeReplaceInput) -> DynamicCodetypeReplaceOutput:
        def probe() -> str:
            return "safe"

        probe.__code__ = probe.__code__.replace(co_consts=(None, input_data.text))
        return DynamicCodetypeReplaceOutput(result=probe())
