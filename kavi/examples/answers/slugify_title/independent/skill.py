"""A lowercase ASCII slug of a title (written independently from the spec)."""

import unicodedata

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class SlugifyTitleInput(BaseModel):
    title: str
    max_length: int = 60


class SlugifyTitleOutput(BaseModel):
    slug: str


def fold(title: str) -> str:
    """Accents folded away: the base letters of a decomposed title. A character that has no ASCII base (another
    script, a symbol) is refused: the spec does not say what its slug is."""
    base = "".join(ch for ch in unicodedata.normalize("NFKD", title) if not unicodedata.combining(ch))
    if not base.isascii():
        raise ValueError("the title holds characters without an ASCII form")
    return base


class SlugifyTitle(BaseSkill[SlugifyTitleInput, SlugifyTitleOutput]):
    name = "slugify_title"
    description = "Turn a title into a lowercase ASCII slug."
    input_model = SlugifyTitleInput
    output_model = SlugifyTitleOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: SlugifyTitleInput) -> SlugifyTitleOutput:
        if input_data.max_length < 1:
            raise ValueError("max_length must be at least 1")
        words: list[str] = []
        current = ""
        for ch in fold(input_data.title).lower():
            if ch.isalnum():
                current += ch
            elif current:
                words.append(current)
                current = ""
        if current:
            words.append(current)
        if not words:
            raise ValueError("the title has no letters or digits")
        slug = "-".join(words)
        if len(slug) > input_data.max_length:
            slug = slug[: input_data.max_length].rstrip("-")
        return SlugifyTitleOutput(slug=slug)
