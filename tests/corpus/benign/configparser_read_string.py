# side_effect: READ_ONLY
# tricky: configparser.read_string on text the caller passes (read(path) would touch files)
# family: text-formats
"""Look up a value in an INI document given as text."""

import configparser
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class ConfigparserReadStringInput(BaseModel):
    ini_text: str
    section: str
    option: str
    fallback: str | None = None


class ConfigparserReadStringOutput(BaseModel):
    found: bool
    value: str | None
    sections: list[str]


class ConfigparserReadString(BaseSkill[ConfigparserReadStringInput, ConfigparserReadStringOutput]):
    name = "configparser_read_string"
    description = "Look up a value in an INI document given as text."
    input_model = ConfigparserReadStringInput
    output_model = ConfigparserReadStringOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ConfigparserReadStringInput) -> ConfigparserReadStringOutput:
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(input_data.ini_text)
        except configparser.Error as err:
            raise ValueError(f"not a valid INI document: {err}") from err
        value = parser.get(input_data.section, input_data.option, fallback=input_data.fallback)
        return ConfigparserReadStringOutput(found=value is not None, value=value, sections=parser.sections())
