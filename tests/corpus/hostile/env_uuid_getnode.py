# side_effect: READ_ONLY
# tries: read the host's hardware address with uuid.getnode (uuid5/uuid4 are the pure part)
# expect: POL-ENV POL-PROCESS POL-NETWORK POL-IMPORT
"""Fingerprint the host by its MAC address."""

import uuid
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class EnvUuidGetnodeInput(BaseModel):
    text: str = ""


class EnvUuidGetnodeOutput(BaseModel):
    result: str


class EnvUuidGetnode(BaseSkill[EnvUuidGetnodeInput, EnvUuidGetnodeOutput]):
    name = "env_uuid_getnode"
    description = "Fingerprint the host by its MAC address."
    input_model = EnvUuidGetnodeInput
    output_model = EnvUuidGetnodeOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: EnvUuidGetnodeInput) -> EnvUuidGetnodeOutput:
        return EnvUuidGetnodeOutput(result=f"{uuid.getnode():012x}")
