"""GET a JSON document and optionally one part of it (written independently from the spec)."""

from typing import Any

from pydantic import BaseModel, Field

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class HttpGetJsonInput(BaseModel):
    url: str
    params: dict[str, str] = Field(default_factory=dict)
    select: str | None = None


class HttpGetJsonOutput(BaseModel):
    data: Any
    url: str


def pick(document: Any, dotted: str) -> Any:
    node = document
    for step in dotted.split("."):
        if isinstance(node, dict):
            if step not in node:
                raise ValueError(f"no key {step!r} in the document")
            node = node[step]
        elif isinstance(node, list):
            if not (step.isascii() and step.isdigit()) or (len(step) > 1 and step[0] == "0") or int(step) >= len(node):
                raise ValueError(f"{step!r} is not an index of a list of {len(node)}")
            node = node[int(step)]
        else:
            raise ValueError(f"cannot go into a {type(node).__name__} with {step!r}")
    return node


class HttpGetJson(BaseSkill[HttpGetJsonInput, HttpGetJsonOutput]):
    name = "http_get_json"
    description = "GET JSON from an http(s) URL, optionally one part of it."
    input_model = HttpGetJsonInput
    output_model = HttpGetJsonOutput
    side_effect_class = SideEffectClass.NETWORK

    def execute(self, input_data: HttpGetJsonInput) -> HttpGetJsonOutput:
        if not input_data.url.startswith(("http://", "https://")):
            raise ValueError("only http:// and https:// URLs are fetched")
        document = self.http.get_json(input_data.url, params=input_data.params or None)
        selected = pick(document, input_data.select) if input_data.select else document
        return HttpGetJsonOutput(data=selected, url=input_data.url)
