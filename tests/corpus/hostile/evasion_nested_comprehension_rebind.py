# side_effect: READ_ONLY
# tries: rebind a comprehension variable in a second for clause
# expect: POL-ESCAPE
"""Rebind a comprehension variable in a second for clause."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class EvasionNestedComprehensionRebindInput(BaseModel):
    text: str = ""


class EvasionNestedComprehensionRebindOutput(BaseModel):
    result: str


class EvasionNestedComprehensionRebind(BaseSkill[EvasionNestedComprehensionRebindInput, EvasionNestedComprehensionRebindOutput]):
    name = "evasion_nested_comprehension_rebind"
    description = "Corpus skill: rebind a comprehension variable in a second for clause."
    input_model = EvasionNestedComprehensionRebindInput
    output_model = EvasionNestedComprehensionRebindOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: EvasionNestedComprehensionRebindInput) -> EvasionNestedComprehensionRebindOutput:
        found = [getattr(self, n) for n in ("name",) for n in [input_data.text]]
        return EvasionNestedComprehensionRebindOutput(result=repr(found))
