"""Notes of the vault that carry a tag (written independently from the spec)."""

import json
import re
from typing import Any

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass

# A tag as this version understands one; anything else is refused rather than matched by a guess.
TAG_WORD = re.compile(r"[a-z0-9][a-z0-9_-]*")
BODY_TAG = re.compile(r"(?:^|(?<=[^\w#]))#([A-Za-z][\w-]*)")


class ReadNotesByTagInput(BaseModel):
    tag: str
    limit: int = 50


class ReadNotesByTagOutput(BaseModel):
    results: list[dict[str, Any]]
    paths: list[str]
    count: int


def front_matter(text: str) -> tuple[list[str], str]:
    """The lines between the two leading '---' lines, and what follows them."""
    lines = text.split("\n")
    if not lines or lines[0] != "---":
        return [], text
    for i in range(1, len(lines)):
        if lines[i].startswith("---"):
            return lines[1:i], "\n".join(lines[i + 1 :])
    return [], text


def field_of(header: list[str], key: str) -> str | None:
    for line in header:
        name, colon, value = line.partition(":")
        if colon and name.strip() == key:
            return value.strip()
    return None


def note_info(path: str, text: str) -> dict[str, Any]:
    header, body = front_matter(text)
    tags: set[str] = set()
    listed = field_of(header, "tags")
    if listed:
        try:
            values = json.loads(listed)
        except json.JSONDecodeError:
            values = [v.strip().strip("'\"") for v in listed.strip("[]").split(",")]
        if isinstance(values, list):
            tags.update(str(v).lstrip("#").lower() for v in values if str(v).strip())
    tags.update(m.lower() for m in BODY_TAG.findall(body))
    title = field_of(header, "title") or ""
    if title:
        try:
            title = str(json.loads(title))
        except json.JSONDecodeError:
            title = title.strip("'\"")
    if not title:
        for line in body.split("\n"):
            if line.startswith("# ") and line[2:].strip():
                title = line[2:].strip()
                break
    if not title:
        title = path.split("/")[-1][: -len(".md")]
    return {"path": path, "title": title, "tags": sorted(tags)}


class ReadNotesByTag(BaseSkill[ReadNotesByTagInput, ReadNotesByTagOutput]):
    name = "read_notes_by_tag"
    description = "List the vault's markdown notes carrying a tag."
    input_model = ReadNotesByTagInput
    output_model = ReadNotesByTagOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ReadNotesByTagInput) -> ReadNotesByTagOutput:
        wanted = input_data.tag.strip().lstrip("#").lower()
        if not TAG_WORD.fullmatch(wanted):
            raise ValueError(f"{input_data.tag!r} is not a tag")
        if not 1 <= input_data.limit <= 1000:
            raise ValueError("limit must be between 1 and 1000")
        hits = [info for path in sorted(self.vault.list_files("**/*.md"))
                if wanted in (info := note_info(path, self.vault.read_text(path)))["tags"]]
        shown = hits[: input_data.limit]
        return ReadNotesByTagOutput(results=shown, paths=[h["path"] for h in shown], count=len(hits))
