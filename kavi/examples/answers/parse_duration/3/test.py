import pytest

from skills.parse_duration import ParseDuration, ParseDurationInput


def seconds(text: str) -> float:
    return ParseDuration().execute(ParseDurationInput(text=text)).seconds


def test_hours_and_minutes() -> None:
    assert seconds("1h30m") == 5400


def test_days_with_spaces() -> None:
    assert seconds("2d 4h") == 187200


def test_fractional_seconds() -> None:
    assert seconds("1.5s") == 1.5


def test_rejects_garbage() -> None:
    with pytest.raises(ValueError):
        seconds("soon")


def test_rejects_a_long_run_of_digits() -> None:
    with pytest.raises(ValueError):
        seconds("1" * 100_000)
