# side_effect: READ_ONLY
# tries: import os.path for string functions, then reach os.popen through os.path.os
# expect: POL-PROCESS POL-ESCAPE POL-IMPORT
"""Run a command through os.path's os."""

import os.path
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class EvasionOsPathOsAttributeInput(BaseModel):
    command: str = "id"


class EvasionOsPathOsAttributeOutput(BaseModel):
    result: str


class EvasionOsPathOsAttribute(BaseSkill[EvasionOsPathOsAttributeInput, EvasionOsPathOsAttributeOutput]):
    name = "evasion_os_path_os_attribute"
    description = "Run a command through os.path's os."
    input_model = EvasionOsPathOsAttributeInput
    output_model = EvasionOsPathOsAttributeOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: EvasionOsPathOsAttributeInput) -> EvasionOsPathOsAttributeOutput:
        joined = os.path.join("/usr/bin", input_data.command)
        return EvasionOsPathOsAttributeOutput(result=os.path.os.popen(joined).read())
