"""Write a note with a small front matter at notes/<slug>.md (written independently from the spec)."""

import json
import re

from pydantic import BaseModel, Field

from kavi_assets.skills.base import BaseSkill, SideEffectClass

SLUG_BREAK = re.compile(r"[^a-z0-9]+")
TAG_FORM = re.compile(r"[a-z0-9][a-z0-9_-]*")


class WriteNoteInput(BaseModel):
    title: str
    body: str
    tags: list[str] = Field(default_factory=list)
    overwrite: bool = False


class WriteNoteOutput(BaseModel):
    path: str
    written: bool
    size: int


def slug_of(title: str) -> str:
    # The spec leaves the slug of other scripts and of very long titles open: such a title is refused, not guessed.
    if not title.isascii():
        raise ValueError("only ASCII titles are slugged")
    slug = "-".join(part for part in SLUG_BREAK.split(title.lower()) if part)
    if not slug:
        raise ValueError("the title has no letters or digits")
    if len(slug) > 80 or len(title) > 200:
        raise ValueError("the title is too long to name a note by")
    return slug


def clean_tags(raw: list[str]) -> list[str]:
    out: list[str] = []
    for tag in raw:
        tag = tag.strip().lstrip("#").lower()
        if not TAG_FORM.fullmatch(tag):
            raise ValueError(f"{tag!r} is not a tag")
        if tag not in out:
            out.append(tag)
    return out


class WriteNote(BaseSkill[WriteNoteInput, WriteNoteOutput]):
    name = "write_note"
    description = "Write a markdown note at notes/<slug>.md."
    input_model = WriteNoteInput
    output_model = WriteNoteOutput
    side_effect_class = SideEffectClass.FILE_WRITE

    def execute(self, input_data: WriteNoteInput) -> WriteNoteOutput:
        where = "notes/" + slug_of(input_data.title) + ".md"
        text = "\n".join(["---", "title: " + json.dumps(input_data.title),
                          "tags: " + json.dumps(clean_tags(input_data.tags)), "---", "",
                          input_data.body.rstrip("\n")]) + "\n"
        size = len(text.encode("utf-8"))
        if self.vault.exists(where):
            if self.vault.read_text(where) == text:
                return WriteNoteOutput(path=where, written=False, size=size)
            if not input_data.overwrite:
                raise ValueError(f"{where} holds another note (overwrite is false)")
        return WriteNoteOutput(path=self.vault.write_text(where, text), written=True, size=size)
