# side_effect: READ_ONLY
# tricky: getattr(self, name) over a literal tuple of the skill's own fields
"""Getattr(self, name) over a literal tuple of the skill's own fields."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class GetattrConstantTupleLoopInput(BaseModel):
    text: str = ""


class GetattrConstantTupleLoopOutput(BaseModel):
    result: str


class GetattrConstantTupleLoop(BaseSkill[GetattrConstantTupleLoopInput, GetattrConstantTupleLoopOutput]):
    name = "getattr_constant_tuple_loop"
    description = "Corpus skill: getattr(self, name) over a literal tuple of the skill's own fields."
    input_model = GetattrConstantTupleLoopInput
    output_model = GetattrConstantTupleLoopOutput
    side_effect_class = SideEffectClass.READ_ONLY

    prefix = ">"
    suffix = "<"

    def execute(self, input_data: GetattrConstantTupleLoopInput) -> GetattrConstantTupleLoopOutput:
        parts = []
        for name in ("prefix", "suffix"):
            parts.append(getattr(self, name))
        return GetattrConstantTupleLoopOutput(result=parts[0] + input_data.text + parts[1])
