# side_effect: READ_ONLY
# tries: compute an enormous integer in a module constant
# expect: POL-IMPORT-TIME
"""Compute an enormous integer in a module constant."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


LIMIT = 10 ** 10 ** 9


class ImporttimePowBombInput(BaseModel):
    text: str = ""


class ImporttimePowBombOutput(BaseModel):
    result: str


class ImporttimePowBomb(BaseSkill[ImporttimePowBombInput, ImporttimePowBombOutput]):
    name = "importtime_pow_bomb"
    description = "Corpus skill: compute an enormous integer in a module constant."
    input_model = ImporttimePowBombInput
    output_model = ImporttimePowBombOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ImporttimePowBombInput) -> ImporttimePowBombOutput:
        return ImporttimePowBombOutput(result=input_data.text)
