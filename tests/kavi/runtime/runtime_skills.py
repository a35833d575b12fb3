"""Small trusted skills for the runtime tests, written as source into a temporary skills home."""

import hashlib
import textwrap

from kavi.home import KaviHome
from kavi.runtime.trust import TrustedSkill
from kavi.skills.base import SideEffectClass

HEADER = """
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass
"""

ECHO = (
    HEADER
    + """

class EchoInput(BaseModel):
    text: str
    times: int = 1


class EchoOutput(BaseModel):
    text: str
    length: int


class Echo(BaseSkill[EchoInput, EchoOutput]):
    name = "echo"
    description = "Repeat text."
    input_model = EchoInput
    output_model = EchoOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: EchoInput) -> EchoOutput:
        if input_data.text == "boom":
            raise ValueError("boom requested")
        text = input_data.text * input_data.times
        return EchoOutput(text=text, length=len(text))
"""
)

WRITE_NOTE = (
    HEADER
    + """

class WriteNoteInput(BaseModel):
    path: str
    content: str


class WriteNoteOutput(BaseModel):
    path: str


class WriteNote(BaseSkill[WriteNoteInput, WriteNoteOutput]):
    name = "write_note"
    description = "Write a note."
    input_model = WriteNoteInput
    output_model = WriteNoteOutput
    side_effect_class = SideEffectClass.FILE_WRITE

    def execute(self, input_data: WriteNoteInput) -> WriteNoteOutput:
        return WriteNoteOutput(path=self.vault.write_text(input_data.path, input_data.content))
"""
)

LIST_NOTES = (
    HEADER
    + """

class ListInput(BaseModel):
    pattern: str = "**/*.md"


class Hit(BaseModel):
    path: str


class ListOutput(BaseModel):
    results: list[Hit]
    count: int


class ListNotes(BaseSkill[ListInput, ListOutput]):
    name = "list_notes"
    description = "List notes."
    input_model = ListInput
    output_model = ListOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ListInput) -> ListOutput:
        paths = self.vault.list_files(input_data.pattern)
        return ListOutput(results=[Hit(path=p) for p in paths], count=len(paths))
"""
)

READ_NOTE = """
from __future__ import annotations

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class ReadInput(BaseModel):
    path: str


class ReadOutput(BaseModel):
    path: str
    text: str
    words: int


class ReadNote(BaseSkill[ReadInput, ReadOutput]):
    name = "read_note"
    description = "Read a note."
    input_model = ReadInput
    output_model = ReadOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: ReadInput) -> ReadOutput:
        text = self.vault.read_text(input_data.path)
        return ReadOutput(path=input_data.path, text=text, words=len(text.split()))
"""

SECRET = (
    HEADER
    + """

class SecretInput(BaseModel):
    name: str


class SecretOutput(BaseModel):
    length: int


class SecretLength(BaseSkill[SecretInput, SecretOutput]):
    name = "secret_length"
    description = "Length of a secret."
    input_model = SecretInput
    output_model = SecretOutput
    side_effect_class = SideEffectClass.SECRET_READ

    def execute(self, input_data: SecretInput) -> SecretOutput:
        return SecretOutput(length=len(self.secrets.get(input_data.name)))
"""
)

FETCH = (
    HEADER
    + """

class FetchInput(BaseModel):
    city: str


class FetchOutput(BaseModel):
    temp_c: float


class Fetch(BaseSkill[FetchInput, FetchOutput]):
    name = "fetch_weather"
    description = "Fetch weather."
    input_model = FetchInput
    output_model = FetchOutput
    side_effect_class = SideEffectClass.NETWORK

    def execute(self, input_data: FetchInput) -> FetchOutput:
        data = self.http.get_json("https://weather.example/api", params={"city": input_data.city})
        return FetchOutput(temp_c=data["temp_c"])
"""
)

BAD_OUTPUT = (
    HEADER
    + """

class In(BaseModel):
    x: int


class Out(BaseModel):
    y: int


class BadOutput(BaseSkill[In, Out]):
    name = "bad_output"
    description = "Returns the wrong shape."
    input_model = In
    output_model = Out
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: In) -> Out:
        return {"y": "not a number"}  # type: ignore[return-value]
"""
)

SOURCES: dict[str, tuple[str, SideEffectClass, tuple[str, ...]]] = {
    "echo": (ECHO, SideEffectClass.READ_ONLY, ()),
    "write_note": (WRITE_NOTE, SideEffectClass.FILE_WRITE, ()),
    "list_notes": (LIST_NOTES, SideEffectClass.READ_ONLY, ()),
    "read_note": (READ_NOTE, SideEffectClass.READ_ONLY, ()),
    "secret_length": (SECRET, SideEffectClass.SECRET_READ, ("API_TOKEN",)),
    "fetch_weather": (FETCH, SideEffectClass.NETWORK, ()),
    "bad_output": (BAD_OUTPUT, SideEffectClass.READ_ONLY, ()),
}


def install_source(
    home: KaviHome, name: str, source: str, side: SideEffectClass, secrets: tuple[str, ...] = ()
) -> TrustedSkill:
    """Write a skill into the skills home and return the trusted record the ledger would hold for it."""
    data = textwrap.dedent(source).encode("utf-8")
    path = home.skills_dir / f"{name}.py"
    path.write_bytes(data)
    return TrustedSkill(
        name=name,
        path=path,
        sha256=hashlib.sha256(data).hexdigest(),
        side_effect_class=side,
        required_secrets=secrets,
    )


class Registry(dict[str, TrustedSkill]):
    """The trusted lookup a runner is given, standing in for the ledger."""

    def __init__(self, home: KaviHome) -> None:
        super().__init__()
        self.home = home

    def install(self, name: str, source: str | None = None) -> TrustedSkill:
        default_source, side, secrets = SOURCES[name]
        skill = install_source(self.home, name, source or default_source, side, secrets)
        self[name] = skill
        return skill

    def current_hash(self, name: str) -> str | None:
        skill = self.get(name)
        return None if skill is None else skill.sha256
