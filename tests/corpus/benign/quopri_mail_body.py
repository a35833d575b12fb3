# side_effect: READ_ONLY
# tricky: quopri.decodestring/encodestring on bytes held in memory (not the file functions)
# family: text-formats
"""Decode or encode a quoted-printable mail body."""

import quopri
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class QuopriMailBodyInput(BaseModel):
    body: str
    decode: bool = True


class QuopriMailBodyOutput(BaseModel):
    result: str


class QuopriMailBody(BaseSkill[QuopriMailBodyInput, QuopriMailBodyOutput]):
    name = "quopri_mail_body"
    description = "Decode or encode a quoted-printable mail body."
    input_model = QuopriMailBodyInput
    output_model = QuopriMailBodyOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: QuopriMailBodyInput) -> QuopriMailBodyOutput:
        if input_data.decode:
            result = quopri.decodestring(input_data.body.encode("ascii", "replace")).decode("utf-8", "replace")
        else:
            result = quopri.encodestring(input_data.body.encode("utf-8")).decode("ascii")
        return QuopriMailBodyOutput(result=result)
