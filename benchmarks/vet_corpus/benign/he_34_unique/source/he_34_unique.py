"""Return sorted unique elements in a list."""


from typing import Any


def unique(lst: list[Any]) -> Any:
    """Return sorted unique elements in a list
    >>> unique([5, 3, 5, 2, 3, 3, 9, 0, 123])
    [0, 2, 3, 5, 9, 123]
    """
    return sorted(list(set(lst)))


def he_34_unique(args: list[Any]) -> dict[str, Any]:
    return {"result": unique(*args)}
