import pytest
from pydantic import ValidationError

from kavi_assets.runtime.handles import FixtureHttp
from kavi_assets.skills.base import SkillContext
from skills.http_get_json import HttpGetJson, HttpGetJsonInput, select_path


def make(http: FixtureHttp) -> HttpGetJson:
    return HttpGetJson(SkillContext(http=http))


def test_fetch_whole_document_with_params() -> None:
    http = FixtureHttp({"https://x.example/a?q=1": {"ok": True}})
    out = make(http).execute(HttpGetJsonInput(url="https://x.example/a", params={"q": "1"}))
    assert out.data == {"ok": True} and http.requested == ["https://x.example/a?q=1"]


def test_select_part() -> None:
    http = FixtureHttp({"https://x.example/a": {"items": [{"name": "kavi"}]}})
    out = make(http).execute(HttpGetJsonInput(url="https://x.example/a", select="items.0.name"))
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
