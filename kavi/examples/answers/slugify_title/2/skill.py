"""Turn a title into a URL slug."""

import re
import unicodedata

from pydantic import BaseModel, Field

from kavi_assets.skills.base import BaseSkill, SideEffectClass

NON_WORD = re.compile(r"[^a-z0-9]+")


class SlugifyTitleInput(BaseModel):
    title: str
    max_length: int = Field(default=60, ge=1)


class SlugifyTitleOutput(BaseModel):
    slug: str


class SlugifyTitle(BaseSkill[SlugifyTitleInput, SlugifyTitleOutput]):
    name = "slugify_title"
    description = "Turn a title into a lowercase ASCII slug joined by hyphens."
    input_model = SlugifyTitleInput
    output_model = SlugifyTitleOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: SlugifyTitleInput) -> SlugifyTitleOutput:
        ascii_title = unicodedata.normalize("NFKD", input_data.title).encode("ascii", "ignore").decode()
        slug = NON_WORD.sub("-", ascii_title.lower()).strip("-")
        if len(slug) > input_data.max_length:
            slug = slug[: input_data.max_length].rstrip("-")
        return SlugifyTitleOutput(slug=slug)
