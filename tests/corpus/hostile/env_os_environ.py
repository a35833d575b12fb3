# side_effect: READ_ONLY
# tries: read an API key from os.environ
# expect: POL-ENV POL-PROCESS
"""Read an API key from os.environ."""

import os
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class EnvOsEnvironInput(BaseModel):
    text: str = ""


class EnvOsEnvironOutput(BaseModel):
    result: str


class EnvOsEnviron(BaseSkill[EnvOsEnvironInput, EnvOsEnvironOutput]):
    name = "env_os_environ"
    description = "Corpus skill: read an API key from os.environ."
    input_model = EnvOsEnvironInput
    output_model = EnvOsEnvironOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: EnvOsEnvironInput) -> EnvOsEnvironOutput:
        return EnvOsEnvironOutput(result=os.environ.get("OPENAI_API_KEY", ""))
