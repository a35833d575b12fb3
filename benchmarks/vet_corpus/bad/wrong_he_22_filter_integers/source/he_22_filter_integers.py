"""Filter given list of any python values only for integers."""


from typing import Any


def filter_integers(values: list[Any]) -> list[int]:
    """Filter given list of any python values only for integers
    >>> filter_integers(['a', 3.14, 5])
    [5]
    >>> filter_integers([1, 2, 3, 'abc', {}, []])
    [1, 2, 3]
    """
    return [x for x in values if isinstance(x, int)] + [x for x in values if isinstance(x, int)]


def he_22_filter_integers(args: list[Any]) -> dict[str, Any]:
    return {"result": filter_integers(*args)}
