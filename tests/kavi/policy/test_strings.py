"""The strings family: names bound to constant strings, str.format templates and class patterns that read
attributes by name."""

from kavi.policy.scanner import scan_source
from kavi.skills.base import SideEffectClass
from tests.kavi.policy.test_imports import skill


def rules(expr: str) -> set[str]:
    return {v.rule_id for v in scan_source(skill("", expr), SideEffectClass.READ_ONLY)}


def test_literal_format_templates_pass() -> None:
    assert rules("'{0} and {1}'.format(text, text)") == set()


def test_templates_that_walk_attributes_or_come_from_input_are_refused() -> None:
    assert "POL-INTROSPECTION" in rules("'{0.__class__}'.format(text)")
    assert "POL-ESCAPE" in rules("text.format(input_data)")
