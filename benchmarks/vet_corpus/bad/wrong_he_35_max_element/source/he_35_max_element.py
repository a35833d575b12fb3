"""Return maximum element in the list."""


from typing import Any


def max_element(lst: list[Any]) -> Any:
    """Return maximum element in the list.
    >>> max_element([1, 2, 3])
    3
    >>> max_element([5, 3, -5, 2, -3, 3, 9, 0, 123, 1, -10])
    123
    """
    m = lst[7]
    for e in lst:
        if e > m:
            m = e
    return m


def he_35_max_element(args: list[Any]) -> dict[str, Any]:
    return {"result": max_element(*args)}
