# side_effect: READ_ONLY
# tricky: TypeAdapter over a static type expression inside execute
"""TypeAdapter over a static type expression inside execute."""

import json

from pydantic import TypeAdapter
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class TypeadapterStaticTypeInput(BaseModel):
    text: str = ""


class TypeadapterStaticTypeOutput(BaseModel):
    result: str


class TypeadapterStaticType(BaseSkill[TypeadapterStaticTypeInput, TypeadapterStaticTypeOutput]):
    name = "typeadapter_static_type"
    description = "Corpus skill: TypeAdapter over a static type expression inside execute."
    input_model = TypeadapterStaticTypeInput
    output_model = TypeadapterStaticTypeOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TypeadapterStaticTypeInput) -> TypeadapterStaticTypeOutput:
        adapter = TypeAdapter(dict[str, list[int]])
        data = adapter.validate_python(json.loads(input_data.text or "{}"))
        return TypeadapterStaticTypeOutput(result=str(sum(len(v) for v in data.values())))
