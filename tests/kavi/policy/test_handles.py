"""The handles family: the vault, HTTP client, secrets and model endpoint only as self.<handle>.<method>(...), each
method only for the class that may use it."""

import pytest

from kavi.policy.scanner import scan_source
from kavi.skills.base import SideEffectClass
from tests.kavi.policy.test_imports import skill


def rules(expr: str, cls: SideEffectClass = SideEffectClass.READ_ONLY, secrets: tuple[str, ...] = ()) -> set[str]:
    source = skill("", expr).replace("SideEffectClass.READ_ONLY", f"SideEffectClass.{cls.value}")
    return {v.rule_id for v in scan_source(source, cls, declared_secrets=secrets)}


@pytest.mark.parametrize(("expr", "cls", "secrets"), [
    ("self.vault.read_text('notes/a.md')", SideEffectClass.READ_ONLY, ()),
    ("self.vault.write_text('out.md', text)", SideEffectClass.FILE_WRITE, ()),
    ("self.http.get_json('https://example.org')", SideEffectClass.NETWORK, ()),
    ("self.secrets.get('token')", SideEffectClass.SECRET_READ, ("token",)),
])
def test_direct_handle_calls_of_the_right_class_pass(expr: str, cls: SideEffectClass,
                                                     secrets: tuple[str, ...]) -> None:
    assert rules(expr, cls, secrets) == set()


@pytest.mark.parametrize(("expr", "rule"), [
    ("self.vault.write_text('out.md', text)", "POL-FS-WRITE"),
    ("self.http.get_text(text)", "POL-NETWORK"),
    ("self.secrets.get('token')", "POL-SECRET"),
    ("self.vault.read_text('../etc/passwd')", "POL-FS"),
    ("self.vault.remove('a')", "POL-HANDLE"),
    ("(lambda v: v)(self.vault)", "POL-HANDLE"),
])
def test_handles_beyond_the_class_or_around_the_call_are_refused(expr: str, rule: str) -> None:
    assert rule in rules(expr)
