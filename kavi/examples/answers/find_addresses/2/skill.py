"""Find the e-mail addresses in a text, in the order they appear, repeats included.

An address starts where a run of the characters a local part may hold starts (the lookbehind):
the pattern is tried in full only there, so the time grows linearly with the text instead of
scanning the rest of it again from every position.
"""

import re

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass

ADDRESS = re.compile(
    r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"
)


class FindAddressesInput(BaseModel):
    text: str


class FindAddressesOutput(BaseModel):
    addresses: list[str]


class FindAddresses(BaseSkill[FindAddressesInput, FindAddressesOutput]):
    name = "find_addresses"
    description = "Find the e-mail addresses in a text, in the order they appear, repeats included."
    input_model = FindAddressesInput
    output_model = FindAddressesOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FindAddressesInput) -> FindAddressesOutput:
        return FindAddressesOutput(addresses=ADDRESS.findall(input_data.text))
