# side_effect: READ_ONLY
# tricky: uuid.UUID parsing and uuid4 for fresh request ids
# family: uuids
"""Validate UUID strings, report their versions and mint a request id."""

import uuid
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class UuidParseValidateInput(BaseModel):
    values: list[str]


class UuidParseValidateOutput(BaseModel):
    valid: dict[str, int | None]
    invalid: list[str]
    request_id: str


class UuidParseValidate(BaseSkill[UuidParseValidateInput, UuidParseValidateOutput]):
    name = "uuid_parse_validate"
    description = "Validate UUID strings, report their versions and mint a request id."
    input_model = UuidParseValidateInput
    output_model = UuidParseValidateOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: UuidParseValidateInput) -> UuidParseValidateOutput:
        valid: dict[str, int | None] = {}
        invalid: list[str] = []
        for value in input_data.values:
            try:
                parsed = uuid.UUID(value)
            except ValueError:
                invalid.append(value)
                continue
            valid[str(parsed)] = parsed.version
        return UuidParseValidateOutput(valid=valid, invalid=invalid, request_id=uuid.uuid4().hex)
