"""The names family: builtins that escape, reflection by name (getattr and its relatives), pydantic options that
read attributes by name, and writes into shared objects."""

import pytest

from kavi.policy.scanner import scan_source
from kavi.skills.base import SideEffectClass
from tests.kavi.policy.test_imports import skill


def found(imports: str, expr: str) -> list[str]:
    return [v.why for v in scan_source(skill(imports, expr), SideEffectClass.READ_ONLY)]


@pytest.mark.parametrize(("imports", "expr", "alternative"), [
    ("", "eval(text)", "ast.literal_eval"),
    ("", "open(text).read()", "self.vault.read_text"),
    ("", "getattr(input_data, text)", "literal names"),
    ("", "vars(input_data)", "model_dump"),
    ("import operator", "operator.attrgetter(text)(input_data)", "literal names"),
    ("import json", "json.loads(text).__class__", "pass values"),
])
def test_escapes_by_name_are_refused_with_the_allowed_way(imports: str, expr: str, alternative: str) -> None:
    whys = found(imports, expr)
    assert whys and any(alternative in w for w in whys), whys


@pytest.mark.parametrize(("imports", "expr"), [
    ("", "getattr(input_data, 'text')"),
    ("import operator", "operator.itemgetter(0)(text)"),
    ("import ast", "ast.literal_eval(text)"),
])
def test_literal_reflection_and_pure_replacements_pass(imports: str, expr: str) -> None:
    assert found(imports, expr) == []
