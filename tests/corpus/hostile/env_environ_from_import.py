# side_effect: READ_ONLY
# tries: import environ directly and dump it
# expect: POL-ENV POL-PROCESS
"""Import environ directly and dump it."""

from os import environ
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class EnvEnvironFromImportInput(BaseModel):
    text: str = ""


class EnvEnvironFromImportOutput(BaseModel):
    result: str


class EnvEnvironFromImport(BaseSkill[EnvEnvironFromImportInput, EnvEnvironFromImportOutput]):
    name = "env_environ_from_import"
    description = "Corpus skill: import environ directly and dump it."
    input_model = EnvEnvironFromImportInput
    output_model = EnvEnvironFromImportOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: EnvEnvironFromImportInput) -> EnvEnvironFromImportOutput:
        return EnvEnvironFromImportOutput(result=repr(dict(environ)))
