# side_effect: READ_ONLY
# tries: dict(zip(KEYS, map(os.getenv, KEYS))) at module level: a pure-looking table that reads the environment
# expect: POL-ENV POL-PROCESS POL-IMPORT-TIME POL-ESCAPE POL-IMPORT
"""Read named environment variables into a module table."""

import os
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


KEYS = ("HOME", "API_TOKEN", "DATABASE_URL")
SETTINGS = dict(zip(KEYS, map(os.getenv, KEYS), strict=True))


class EnvDictZipGetenvInput(BaseModel):
    key: str = "API_TOKEN"


class EnvDictZipGetenvOutput(BaseModel):
    result: str | None


class EnvDictZipGetenv(BaseSkill[EnvDictZipGetenvInput, EnvDictZipGetenvOutput]):
    name = "env_dict_zip_getenv"
    description = "Read named environment variables into a module table."
    input_model = EnvDictZipGetenvInput
    output_model = EnvDictZipGetenvOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: EnvDictZipGetenvInput) -> EnvDictZipGetenvOutput:
        return EnvDictZipGetenvOutput(result=SETTINGS.get(input_data.key))
