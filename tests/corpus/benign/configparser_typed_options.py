# side_effect: READ_ONLY
# tricky: ConfigParser.read_dict plus getint/getboolean on in-memory data
# family: text-formats
"""Read typed options from an INI document with defaults."""

import configparser
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class ConfigparserTypedOptionsInput(BaseModel):
    ini_text: str


class ConfigparserTypedOptionsOutput(BaseModel):
    retries: int
    verbose: bool
    timeout_s: float


class ConfigparserTypedOptions(BaseSkill[ConfigparserTypedOptionsInput, ConfigparserTypedOptionsOutput]):
    name = "configparser_typed_options"
    description = "Read typed options from an INI document with defaults."
    input_model = ConfigparserTypedOptionsInput
    output_model = ConfigparserTypedOptionsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ConfigparserTypedOptionsInput) -> ConfigparserTypedOptionsOutput:
        parser = configparser.ConfigParser()
        parser.read_dict({"job": {"retries": "1", "verbose": "no", "timeout_s": "30"}})
        parser.read_string(input_data.ini_text)
        job = parser["job"]
        return ConfigparserTypedOptionsOutput(retries=job.getint("retries"), verbose=job.getboolean("verbose"),
                   timeout_s=job.getfloat("timeout_s"))
