"""Filter an input list of strings only for ones that contain given substring."""


from typing import Any


def filter_by_substring(strings: list[str], substring: str) -> list[str]:
    """Filter an input list of strings only for ones that contain given substring
    >>> filter_by_substring([], 'a')
    []
    >>> filter_by_substring(['abc', 'bacd', 'cde', 'array'], 'a')
    ['abc', 'bacd', 'array']
    """
    return [x for x in strings if substring in x]


def he_7_filter_by_substring(args: list[Any]) -> dict[str, Any]:
    return {"result": filter_by_substring(*args)}
