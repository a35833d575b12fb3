# side_effect: READ_ONLY
# tries: rebind getattr so the call is not seen as getattr
# expect: POL-ESCAPE
"""Rebind getattr so the call is not seen as getattr."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class EvasionGetattrReboundInput(BaseModel):
    text: str = ""


class EvasionGetattrReboundOutput(BaseModel):
    result: str


class EvasionGetattrRebound(BaseSkill[EvasionGetattrReboundInput, EvasionGetattrReboundOutput]):
    name = "evasion_getattr_rebound"
    description = "Corpus skill: rebind getattr so the call is not seen as getattr."
    input_model = EvasionGetattrReboundInput
    output_model = EvasionGetattrReboundOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: EvasionGetattrReboundInput) -> EvasionGetattrReboundOutput:
        g = getattr
        ctx = g(self, "_con" + "text")
        return EvasionGetattrReboundOutput(result=repr(ctx))
