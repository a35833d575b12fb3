# side_effect: READ_ONLY
# tries: reuse a constant-loop variable name for a computed getattr
# expect: POL-ESCAPE
"""Reuse a constant-loop variable name for a computed getattr."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class EvasionLoopVariableReboundInput(BaseModel):
    text: str = ""


class EvasionLoopVariableReboundOutput(BaseModel):
    result: str


class EvasionLoopVariableRebound(BaseSkill[EvasionLoopVariableReboundInput, EvasionLoopVariableReboundOutput]):
    name = "evasion_loop_variable_rebound"
    description = "Corpus skill: reuse a constant-loop variable name for a computed getattr."
    input_model = EvasionLoopVariableReboundInput
    output_model = EvasionLoopVariableReboundOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: EvasionLoopVariableReboundInput) -> EvasionLoopVariableReboundOutput:
        for name in ("text",):
            pass
        name = input_data.text
        return EvasionLoopVariableReboundOutput(result=repr(getattr(input_data, name)))
