# side_effect: FILE_WRITE
# tries: use the HTTP client from a FILE_WRITE skill
# expect: POL-NETWORK
"""Use the HTTP client from a FILE_WRITE skill."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class HandleHttpFromFileWriteInput(BaseModel):
    text: str = ""


class HandleHttpFromFileWriteOutput(BaseModel):
    result: str


class HandleHttpFromFileWrite(BaseSkill[HandleHttpFromFileWriteInput, HandleHttpFromFileWriteOutput]):
    name = "handle_http_from_file_write"
    description = "Corpus skill: use the HTTP client from a FILE_WRITE skill."
    input_model = HandleHttpFromFileWriteInput
    output_model = HandleHttpFromFileWriteOutput
    side_effect_class = SideEffectClass.FILE_WRITE

    def execute(self, input_data: HandleHttpFromFileWriteInput) -> HandleHttpFromFileWriteOutput:
        page = self.http.get_text("https://example.org/")
        return HandleHttpFromFileWriteOutput(result=self.vault.write_text("page.html", page))
