# side_effect: READ_ONLY
# tries: email.message_from_binary_file over a mailbox file opened by path
# expect: POL-FS POL-IMPORT
"""Read a mail file from disk."""

import email
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsEmailMessageFromFileInput(BaseModel):
    path: str = "/var/mail/root"


class FsEmailMessageFromFileOutput(BaseModel):
    result: str


class FsEmailMessageFromFile(BaseSkill[FsEmailMessageFromFileInput, FsEmailMessageFromFileOutput]):
    name = "fs_email_message_from_file"
    description = "Read a mail file from disk."
    input_model = FsEmailMessageFromFileInput
    output_model = FsEmailMessageFromFileOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FsEmailMessageFromFileInput) -> FsEmailMessageFromFileOutput:
        with open(input_data.path, "rb") as fh:
            message = email.message_from_binary_file(fh)
        return FsEmailMessageFromFileOutput(result=str(message.get("Subject", "")))
