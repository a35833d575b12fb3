# side_effect: READ_ONLY
# tricky: string.capwords, string.punctuation and string.whitespace constants
# family: text-formats
"""Make a title-cased heading and a URL slug from a phrase."""

import string
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


STRIP_PUNCT = str.maketrans("", "", string.punctuation)


class StringCapwordsSlugInput(BaseModel):
    phrase: str


class StringCapwordsSlugOutput(BaseModel):
    heading: str
    slug: str


class StringCapwordsSlug(BaseSkill[StringCapwordsSlugInput, StringCapwordsSlugOutput]):
    name = "string_capwords_slug"
    description = "Make a title-cased heading and a URL slug from a phrase."
    input_model = StringCapwordsSlugInput
    output_model = StringCapwordsSlugOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: StringCapwordsSlugInput) -> StringCapwordsSlugOutput:
        heading = string.capwords(input_data.phrase.strip())
        words = input_data.phrase.translate(STRIP_PUNCT).lower().split(string.whitespace[0])
        slug = "-".join(w for w in words if w)
        return StringCapwordsSlugOutput(heading=heading, slug=slug)
