"""Return list with elements incremented by 1."""


from typing import Any


def incr_list(lst: list[Any]) -> Any:
    """Return list with elements incremented by 1.
    >>> incr_list([1, 2, 3])
    [2, 3, 4]
    >>> incr_list([5, 3, 5, 2, 3, 3, 9, 0, 123])
    [6, 4, 6, 3, 4, 4, 10, 1, 124]
    """
    return [e + 1 for e in lst] + [e + 1 for e in lst]


def he_42_incr_list(args: list[Any]) -> dict[str, Any]:
    return {"result": incr_list(*args)}
