from collections.abc import Mapping
from typing import Any

import pytest
from pydantic import ValidationError

from skills.http_get_json import HttpGetJson, HttpGetJsonInput, select_path


class CannedHttp:
    def __init__(self, responses: dict[str, Any]) -> None:
        self.responses = responses
        self.calls: list[tuple[str, dict[str, str]]] = []

    def get_json(self, url: str, params: Mapping[str, str] | None = None) -> Any:
        self.calls.append((url, dict(params or {})))
        return self.responses[url]

    def get_text(self, url: str, params: Mapping[str, str] | None = None) -> str:
        return str(self.get_json(url, params))


class Ctx:
    def __init__(self, http: CannedHttp) -> None:
        self.vault = None
        self.http = http
        self.secrets = None


def test_fetch_whole_document_with_params() -> None:
    http = CannedHttp({"https://x.example/a": {"ok": True}})
    out = HttpGetJson(Ctx(http)).execute(HttpGetJsonInput(url="https://x.example/a", params={"q": "1"}))
    assert out.data == {"ok": True} and http.calls == [("https://x.example/a", {"q": "1"})]


def test_select_part() -> None:
    http = CannedHttp({"https://x.example/a": {"items": [{"name": "kavi"}]}})
    out = HttpGetJson(Ctx(http)).execute(HttpGetJsonInput(url="https://x.example/a", select="items.0.name"))
    assert out.data == "kavi"


def test_select_errors_and_negative_index() -> None:
    assert select_path([1, 2, 3], "-1") == 3
    with pytest.raises(KeyError):
        select_path({"a": 1}, "b")
    with pytest.raises(KeyError):
        select_path([1], "5")


def test_only_http_schemes() -> None:
    with pytest.raises(ValidationError):
        HttpGetJsonInput(url="file:///etc/passwd")
    with pytest.raises(ValidationError):
        HttpGetJsonInput(url="no-scheme-at-all")
