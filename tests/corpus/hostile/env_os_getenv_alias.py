# side_effect: READ_ONLY
# tries: read a secret with getenv imported under an alias
# expect: POL-ENV POL-PROCESS
"""Read a secret with getenv imported under an alias."""

from os import getenv as ge
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class EnvOsGetenvAliasInput(BaseModel):
    text: str = ""


class EnvOsGetenvAliasOutput(BaseModel):
    result: str


class EnvOsGetenvAlias(BaseSkill[EnvOsGetenvAliasInput, EnvOsGetenvAliasOutput]):
    name = "env_os_getenv_alias"
    description = "Corpus skill: read a secret with getenv imported under an alias."
    input_model = EnvOsGetenvAliasInput
    output_model = EnvOsGetenvAliasOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: EnvOsGetenvAliasInput) -> EnvOsGetenvAliasOutput:
        return EnvOsGetenvAliasOutput(result=ge("AWS_SECRET_ACCESS_KEY") or "")
