"""The diff allowlist: exactly the skill file and its test file, nothing else, no escapes."""

import pytest

from kavi.build.allowlist import check_allowlist

GOOD = [("skills/word_count.py", "x = 1\n"), ("tests/test_skill_word_count.py", "def test(): pass\n")]


def test_exact_pair_accepted() -> None:
    res = check_allowlist("word_count", GOOD)
    assert res.ok
    assert set(res.files) == {"skills/word_count.py", "tests/test_skill_word_count.py"}


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (("../escape.py", "x"), "'..'"),
        (("skills/../../escape.py", "x"), "'..'"),
        (("/etc/passwd", "x"), "absolute"),
        (("skills/helpers.py", "x"), "not on the allowlist"),
        (("skills\\word_count.py", "x"), "backslashes"),
        (("skills/./word_count.py", "x"), "normalised"),
    ],
)
def test_escapes_and_extra_files_refused(extra: tuple[str, str], needle: str) -> None:
    res = check_allowlist("word_count", [*GOOD, extra])
    assert not res.ok
    assert res.files == {}, "nothing is accepted when any file violates"
    assert any(needle in v for v in res.violations)


def test_missing_test_file_refused() -> None:
    res = check_allowlist("word_count", GOOD[:1])
    assert not res.ok
    assert any("tests/test_skill_word_count.py" in v and "missing" in v for v in res.violations)


def test_duplicate_refused() -> None:
    res = check_allowlist("word_count", [*GOOD, GOOD[0]])
    assert any("twice" in v for v in res.violations)
