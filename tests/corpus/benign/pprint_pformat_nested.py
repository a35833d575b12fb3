# side_effect: READ_ONLY
# tricky: pprint.pformat (not pprint.pprint to stdout) and reprlib.Repr for a short preview
# family: algorithms
"""Pretty-print a nested structure and give a truncated one-line preview."""

import pprint
import reprlib
from typing import Any
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class PprintPformatNestedInput(BaseModel):
    data: Any
    width: int = 80


class PprintPformatNestedOutput(BaseModel):
    pretty: str
    preview: str


class PprintPformatNested(BaseSkill[PprintPformatNestedInput, PprintPformatNestedOutput]):
    name = "pprint_pformat_nested"
    description = "Pretty-print a nested structure and give a truncated one-line preview."
    input_model = PprintPformatNestedInput
    output_model = PprintPformatNestedOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: PprintPformatNestedInput) -> PprintPformatNestedOutput:
        short = reprlib.Repr()
        short.maxlist = 4
        short.maxdict = 3
        short.maxstring = 20
        return PprintPformatNestedOutput(pretty=pprint.pformat(input_data.data, width=max(20, input_data.width), sort_dicts=True),
                   preview=short.repr(input_data.data))
