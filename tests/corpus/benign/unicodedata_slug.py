# side_effect: READ_ONLY
# tricky: unicodedata normalisation into a slug
"""Unicodedata normalisation into a slug."""

import re
import unicodedata
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class UnicodedataSlugInput(BaseModel):
    text: str = ""


class UnicodedataSlugOutput(BaseModel):
    result: str


class UnicodedataSlug(BaseSkill[UnicodedataSlugInput, UnicodedataSlugOutput]):
    name = "unicodedata_slug"
    description = "Corpus skill: unicodedata normalisation into a slug."
    input_model = UnicodedataSlugInput
    output_model = UnicodedataSlugOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: UnicodedataSlugInput) -> UnicodedataSlugOutput:
        plain = unicodedata.normalize("NFKD", input_data.text).encode("ascii", "ignore").decode()
        slug = re.sub(r"[^a-z0-9]+", "-", plain.lower()).strip("-")
        return UnicodedataSlugOutput(result=slug or unicodedata.name("a").lower())
