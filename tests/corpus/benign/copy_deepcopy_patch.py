# side_effect: READ_ONLY
# tricky: copy.deepcopy so the caller's document is never modified
# family: algorithms
"""Apply a JSON-merge-patch style update to a document without mutating the input."""

import copy
from typing import Any
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


def _apply(target: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            _apply(target[key], value)
        else:
            target[key] = copy.deepcopy(value)
    return target


class CopyDeepcopyPatchInput(BaseModel):
    document: dict[str, Any]
    patch: dict[str, Any]


class CopyDeepcopyPatchOutput(BaseModel):
    result: dict[str, Any]
    unchanged_input: bool


class CopyDeepcopyPatch(BaseSkill[CopyDeepcopyPatchInput, CopyDeepcopyPatchOutput]):
    name = "copy_deepcopy_patch"
    description = "Apply a JSON-merge-patch style update to a document without mutating the input."
    input_model = CopyDeepcopyPatchInput
    output_model = CopyDeepcopyPatchOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: CopyDeepcopyPatchInput) -> CopyDeepcopyPatchOutput:
        before = copy.deepcopy(input_data.document)
        result = _apply(copy.deepcopy(input_data.document), input_data.patch)
        return CopyDeepcopyPatchOutput(result=result, unchanged_input=before == input_data.document)
