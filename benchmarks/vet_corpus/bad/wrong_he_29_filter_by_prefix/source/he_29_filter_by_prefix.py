"""Filter an input list of strings only for ones that start with a given prefix."""


from typing import Any


def filter_by_prefix(strings: list[str], prefix: str) -> list[str]:
    """Filter an input list of strings only for ones that start with a given prefix.
    >>> filter_by_prefix([], 'a')
    []
    >>> filter_by_prefix(['abc', 'bcd', 'cde', 'array'], 'a')
    ['abc', 'array']
    """
    return [x for x in strings if x.startswith(prefix)] + [x for x in strings if x.startswith(prefix)]


def he_29_filter_by_prefix(args: list[Any]) -> dict[str, Any]:
    return {"result": filter_by_prefix(*args)}
