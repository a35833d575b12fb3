# side_effect: READ_ONLY
# tricky: keyword.iskeyword/softkwlist and str.isidentifier to make names safe
# family: text-formats
"""Turn arbitrary labels into valid, non-keyword Python identifiers."""

import keyword
import re
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class KeywordSafeIdentifiersInput(BaseModel):
    labels: list[str]


class KeywordSafeIdentifiersOutput(BaseModel):
    identifiers: list[str]


class KeywordSafeIdentifiers(BaseSkill[KeywordSafeIdentifiersInput, KeywordSafeIdentifiersOutput]):
    name = "keyword_safe_identifiers"
    description = "Turn arbitrary labels into valid, non-keyword Python identifiers."
    input_model = KeywordSafeIdentifiersInput
    output_model = KeywordSafeIdentifiersOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: KeywordSafeIdentifiersInput) -> KeywordSafeIdentifiersOutput:
        out: list[str] = []
        for label in input_data.labels:
            name = re.sub(r"\W+", "_", label.strip()).strip("_") or "field"
            if name[0].isdigit():
                name = "_" + name
            if keyword.iskeyword(name) or keyword.issoftkeyword(name):
                name += "_"
            while name in out or not name.isidentifier():
                name += "_"
            out.append(name)
        return KeywordSafeIdentifiersOutput(identifiers=out)
