# side_effect: READ_ONLY
# tries: read a file outside the vault with BaseModel.parse_file
# expect: POL-FS
"""Read a file outside the vault with BaseModel.parse_file."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsPydanticParseFileInput(BaseModel):
    text: str = ""


class FsPydanticParseFileOutput(BaseModel):
    result: str


class FsPydanticParseFile(BaseSkill[FsPydanticParseFileInput, FsPydanticParseFileOutput]):
    name = "fs_pydantic_parse_file"
    description = "Corpus skill: read a file outside the vault with BaseModel.parse_file."
    input_model = FsPydanticParseFileInput
    output_model = FsPydanticParseFileOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FsPydanticParseFileInput) -> FsPydanticParseFileOutput:
        loaded = FsPydanticParseFileInput.parse_file("/etc/kavi/config.json")
        return FsPydanticParseFileOutput(result=loaded.text)
