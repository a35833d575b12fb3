"""Find the vault's markdown notes that carry a tag, in front matter or as #tags in the body."""

import json
import re

from pydantic import BaseModel, Field

from kavi_assets.skills.base import BaseSkill, SideEffectClass

INLINE_TAG = re.compile(r"(?<![\w#])#([A-Za-z][\w-]*)")
HEADING = re.compile(r"^#\s+(.+?)\s*$", re.MULTILINE)


class ReadNotesByTagInput(BaseModel):
    tag: str = Field(min_length=1)
    limit: int = Field(default=50, ge=1, le=1000)


class NoteRef(BaseModel):
    path: str
    title: str
    tags: list[str]


class ReadNotesByTagOutput(BaseModel):
    results: list[NoteRef]
    paths: list[str]
    count: int


def split_front_matter(text: str) -> tuple[dict[str, str], str]:
    """The front matter's `key: value` lines and the body after it."""
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---", 4)
    if end == -1:
        return {}, text
    fields: dict[str, str] = {}
    for line in text[4:end].splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields[key.strip()] = value.strip()
    return fields, text[end + 4 :].lstrip("\n")


def front_tags(raw: str) -> list[str]:
    try:
        value = json.loads(raw)
    except ValueError:
        value = [part.strip(" '\"") for part in raw.strip("[]").split(",")]
    if not isinstance(value, list):
        return []
    return [str(v).lstrip("#").lower() for v in value if str(v).strip()]


def describe(path: str, text: str) -> NoteRef:
    front, body = split_front_matter(text)
    tags = set(front_tags(front.get("tags", "[]")))
    tags.update(t.lower() for t in INLINE_TAG.findall(body))
    title = ""
    if front.get("title"):
        raw = front["title"]
        try:
            title = str(json.loads(raw))
        except ValueError:
            title = raw.strip("'\"")
    if not title:
        heading = HEADING.search(body)
        title = heading.group(1) if heading else path.rsplit("/", 1)[-1].removesuffix(".md")
    return NoteRef(path=path, title=title, tags=sorted(tags))


class ReadNotesByTag(BaseSkill[ReadNotesByTagInput, ReadNotesByTagOutput]):
    name = "read_notes_by_tag"
    description = "List the vault's markdown notes that carry a tag."
    input_model = ReadNotesByTagInput
    output_model = ReadNotesByTagOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ReadNotesByTagInput) -> ReadNotesByTagOutput:
        wanted = input_data.tag.strip().lstrip("#").lower()
        matches = []
        for path in sorted(self.vault.list_files("**/*.md")):
            note = describe(path, self.vault.read_text(path))
            if wanted in note.tags:
                matches.append(note)
        kept = matches[: input_data.limit]
        return ReadNotesByTagOutput(results=kept, paths=[n.path for n in kept], count=len(matches))
