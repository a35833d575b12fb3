"""The type-positions family: what pydantic and typing evaluate as code must be a plain type expression — while a
subscript that is a lookup (an enum member by name) is not a type position."""

from kavi.policy.scanner import scan_source
from kavi.skills.base import SideEffectClass
from tests.kavi.policy.test_imports import skill


def rules(imports: str, expr: str) -> set[str]:
    return {v.rule_id for v in scan_source(skill(imports, expr), SideEffectClass.READ_ONLY)}


def test_type_adapter_of_a_string_that_is_code_is_refused() -> None:
    assert "POL-DYNAMIC-CODE" in rules("import pydantic", "pydantic.TypeAdapter('print(text)').validate_python([])")


def test_plain_types_pass() -> None:
    assert rules("import pydantic", "pydantic.TypeAdapter(list[int]).validate_python([1])") == set()


def test_an_enum_member_looked_up_by_name_is_not_a_type() -> None:
    source = skill("import enum", "Level[text.upper()].value").replace(
        "\n\nclass In(BaseModel):", "\n\nclass Level(enum.Enum):\n    LOW = 1\n    HIGH = 2\n\n\nclass In(BaseModel):")
    assert scan_source(source, SideEffectClass.READ_ONLY) == []
