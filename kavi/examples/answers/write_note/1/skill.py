"""Write a markdown note with a small front matter into the vault, through the vault handle."""

import json
import re

from pydantic import BaseModel, Field

from kavi_assets.skills.base import BaseSkill, SideEffectClass

NON_WORD = re.compile(r"[^a-z0-9]+")
TAG = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


class WriteNoteInput(BaseModel):
    title: str = Field(min_length=1, max_length=200)
    body: str
    tags: list[str] = Field(default_factory=list)
    overwrite: bool = False


class WriteNoteOutput(BaseModel):
    path: str
    written: bool
    size: int


def slugify(title: str) -> str:
    slug = NON_WORD.sub("-", title.lower()).strip("-")
    if not slug:
        raise ValueError(f"title {title!r} has no letters or digits to name the note by")
    return slug[:80].rstrip("-")


def normalize_tags(tags: list[str]) -> list[str]:
    seen: dict[str, None] = {}  # insertion-ordered, and a lookup does not scan the tags kept so far
    for raw in tags:
        tag = raw.strip().lstrip("#").lower()
        if not TAG.match(tag):
            raise ValueError(f"tag {raw!r} must be letters, digits, '-' or '_'")
        seen.setdefault(tag)
    return list(seen)


def render(title: str, body: str, tags: list[str]) -> str:
    front = f"---\ntitle: {json.dumps(title)}\ntags: {json.dumps(tags)}\n---\n\n"
    return front + body.rstrip("\n") + "\n"


class WriteNote(BaseSkill[WriteNoteInput, WriteNoteOutput]):
    name = "write_note"
    description = "Write a markdown note into the vault at notes/<slug>.md."
    input_model = WriteNoteInput
    output_model = WriteNoteOutput
    side_effect_class = SideEffectClass.FILE_WRITE

    def execute(self, input_data: WriteNoteInput) -> WriteNoteOutput:
        path = f"notes/{slugify(input_data.title)}.md"
        content = render(input_data.title, input_data.body, normalize_tags(input_data.tags))
        size = len(content.encode("utf-8"))
        if not input_data.overwrite:
            # An exclusive create: of two writers racing for one title, exactly one writes.
            try:
                stored = self.vault.write_text(path, content, overwrite=False)
            except FileExistsError:
                if self.vault.read_text(path) == content:
                    return WriteNoteOutput(path=path, written=False, size=size)
                message = f"{path} holds a different note; pass overwrite=true to replace it"
                raise FileExistsError(message) from None
            return WriteNoteOutput(path=stored, written=True, size=size)
        if self.vault.exists(path) and self.vault.read_text(path) == content:
            return WriteNoteOutput(path=path, written=False, size=size)
        stored = self.vault.write_text(path, content)
        return WriteNoteOutput(path=stored, written=True, size=size)
