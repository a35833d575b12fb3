# side_effect: READ_ONLY
# tricky: unicodedata.normalize/combining/category over each character
# family: text-formats
"""Remove accents and report the Unicode categories present in a text."""

import collections
import unicodedata
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class UnicodedataStripAccentsInput(BaseModel):
    text: str


class UnicodedataStripAccentsOutput(BaseModel):
    ascii_text: str
    categories: dict[str, int]


class UnicodedataStripAccents(BaseSkill[UnicodedataStripAccentsInput, UnicodedataStripAccentsOutput]):
    name = "unicodedata_strip_accents"
    description = "Remove accents and report the Unicode categories present in a text."
    input_model = UnicodedataStripAccentsInput
    output_model = UnicodedataStripAccentsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: UnicodedataStripAccentsInput) -> UnicodedataStripAccentsOutput:
        decomposed = unicodedata.normalize("NFKD", input_data.text)
        stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
        categories = collections.Counter(unicodedata.category(c) for c in input_data.text)
        return UnicodedataStripAccentsOutput(ascii_text=stripped.encode("ascii", "ignore").decode("ascii"), categories=dict(categories))
