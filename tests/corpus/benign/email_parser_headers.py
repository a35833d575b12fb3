# side_effect: READ_ONLY
# tricky: email.parser over a raw message string, email.utils to decode the date
# family: text-formats
"""Extract the sender, subject, date and body of a raw email message."""

from email import policy
from email.parser import Parser
from email.utils import parseaddr, parsedate_to_datetime
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class EmailParserHeadersInput(BaseModel):
    raw: str


class EmailParserHeadersOutput(BaseModel):
    sender_name: str
    sender_address: str
    subject: str
    date_iso: str | None
    body: str


class EmailParserHeaders(BaseSkill[EmailParserHeadersInput, EmailParserHeadersOutput]):
    name = "email_parser_headers"
    description = "Extract the sender, subject, date and body of a raw email message."
    input_model = EmailParserHeadersInput
    output_model = EmailParserHeadersOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: EmailParserHeadersInput) -> EmailParserHeadersOutput:
        message = Parser(policy=policy.default).parsestr(input_data.raw)
        name, address = parseaddr(str(message.get("From", "")))
        date = message.get("Date")
        date_iso = parsedate_to_datetime(str(date)).isoformat() if date else None
        part = message.get_body(preferencelist=("plain",))
        body = part.get_content() if part is not None else ""
        return EmailParserHeadersOutput(sender_name=name, sender_address=address, subject=str(message.get("Subject", "")),
                   date_iso=date_iso, body=body.strip())
