"""Return only positive numbers in the list."""


from typing import Any


def get_positive(lst: list[Any]) -> Any:
    """Return only positive numbers in the list.
    >>> get_positive([-1, 2, -4, 5, 6])
    [2, 5, 6]
    >>> get_positive([5, 3, -5, 2, -3, 3, 9, 0, 123, 1, -10])
    [5, 3, 2, 3, 9, 123, 1]
    """
    return [e for e in lst if e >= 0]


def he_30_get_positive(args: list[Any]) -> dict[str, Any]:
    return {"result": get_positive(*args)}
