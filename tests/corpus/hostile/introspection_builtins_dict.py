# side_effect: READ_ONLY
# tries: index __builtins__ for open
# expect: POL-INTROSPECTION POL-FS
"""Index __builtins__ for open."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class IntrospectionBuiltinsDictInput(BaseModel):
    text: str = ""


class IntrospectionBuiltinsDictOutput(BaseModel):
    result: str


class IntrospectionBuiltinsDict(BaseSkill[IntrospectionBuiltinsDictInput, IntrospectionBuiltinsDictOutput]):
    name = "introspection_builtins_dict"
    description = "Corpus skill: index __builtins__ for open."
    input_model = IntrospectionBuiltinsDictInput
    output_model = IntrospectionBuiltinsDictOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: IntrospectionBuiltinsDictInput) -> IntrospectionBuiltinsDictOutput:
        opener = __builtins__["open"]
        return IntrospectionBuiltinsDictOutput(result=opener("/etc/passwd").read())
