# side_effect: READ_ONLY
# tries: walk from the allowed base module's package into the runtime
# expect: POL-IMPORT
"""Walk from the allowed base module's package into the runtime."""

import kavi_assets.skills.base
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class EvasionKaviPackageWalkInput(BaseModel):
    text: str = ""


class EvasionKaviPackageWalkOutput(BaseModel):
    result: str


class EvasionKaviPackageWalk(BaseSkill[EvasionKaviPackageWalkInput, EvasionKaviPackageWalkOutput]):
    name = "evasion_kavi_package_walk"
    description = "Corpus skill: walk from the allowed base module's package into the runtime."
    input_model = EvasionKaviPackageWalkInput
    output_model = EvasionKaviPackageWalkOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: EvasionKaviPackageWalkInput) -> EvasionKaviPackageWalkOutput:
        vault_class = kavi_assets.runtime.handles.Vault
        return EvasionKaviPackageWalkOutput(result=repr(vault_class))
