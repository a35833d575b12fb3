# side_effect: READ_ONLY
# tricky: email.utils.getaddresses/formataddr and email.message.EmailMessage built in memory
# family: text-formats
"""Normalise a recipient list and render a draft message as text."""

from email.message import EmailMessage
from email.utils import formataddr, getaddresses
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class EmailUtilsRecipientsInput(BaseModel):
    to: list[str]
    subject: str
    body: str


class EmailUtilsRecipientsOutput(BaseModel):
    recipients: list[str]
    message_text: str


class EmailUtilsRecipients(BaseSkill[EmailUtilsRecipientsInput, EmailUtilsRecipientsOutput]):
    name = "email_utils_recipients"
    description = "Normalise a recipient list and render a draft message as text."
    input_model = EmailUtilsRecipientsInput
    output_model = EmailUtilsRecipientsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: EmailUtilsRecipientsInput) -> EmailUtilsRecipientsOutput:
        seen: set[str] = set()
        recipients: list[str] = []
        for name, address in getaddresses(input_data.to):
            key = address.lower()
            if address and key not in seen:
                seen.add(key)
                recipients.append(formataddr((name, key)))
        message = EmailMessage()
        message["To"] = ", ".join(recipients)
        message["Subject"] = input_data.subject
        message.set_content(input_data.body)
        return EmailUtilsRecipientsOutput(recipients=recipients, message_text=message.as_string())
