"""GET a JSON document over HTTP(S) through the runtime's HTTP client, optionally selecting part of it."""

from typing import Any

from pydantic import BaseModel, Field, field_validator

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class HttpGetJsonInput(BaseModel):
    url: str = Field(min_length=8, max_length=2000)
    params: dict[str, str] = Field(default_factory=dict)
    select: str | None = None

    @field_validator("url")
    @classmethod
    def http_only(cls, value: str) -> str:
        scheme = value.split("://", 1)[0].lower() if "://" in value else ""
        if scheme not in ("http", "https"):
            raise ValueError(f"url {value!r} must start with http:// or https://")
        return value


class HttpGetJsonOutput(BaseModel):
    data: Any
    url: str


def in_range(items: list[Any], index: int) -> bool:
    return -len(items) <= index < len(items)


def select_path(document: Any, path: str) -> Any:
    """Follow a dot path: names index objects, integers index lists."""
    current = document
    walked: list[str] = []
    for part in path.split("."):
        walked.append(part)
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.lstrip("-").isdigit() and in_range(current, int(part)):
            current = current[int(part)]
        else:
            raise KeyError(f"the document has nothing at {'.'.join(walked)!r}")
    return current


class HttpGetJson(BaseSkill[HttpGetJsonInput, HttpGetJsonOutput]):
    name = "http_get_json"
    description = "GET a JSON document from an http(s) URL, optionally selecting part of it by dot path."
    input_model = HttpGetJsonInput
    output_model = HttpGetJsonOutput
    side_effect_class = SideEffectClass.NETWORK

    def execute(self, input_data: HttpGetJsonInput) -> HttpGetJsonOutput:
        document = self.http.get_json(input_data.url, params=input_data.params or None)
        data = select_path(document, input_data.select) if input_data.select else document
        return HttpGetJsonOutput(data=data, url=input_data.url)
