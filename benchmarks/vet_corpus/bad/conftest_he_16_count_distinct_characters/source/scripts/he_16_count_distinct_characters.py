"""Given a string, find out how many distinct characters (regardless of case) does it consist."""


from typing import Any


def count_distinct_characters(string: str) -> int:
    """Given a string, find out how many distinct characters (regardless of case) does it consist of
    >>> count_distinct_characters('xyzXYZ')
    3
    >>> count_distinct_characters('Jerry')
    4
    """
    return len(set(string.lower()))


def he_16_count_distinct_characters(args: list[Any]) -> dict[str, Any]:
    return {"result": count_distinct_characters(*args)}
