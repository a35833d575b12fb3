"""Return median of elements in the list l."""


from typing import Any


def median(lst: list[Any]) -> Any:
    """Return median of elements in the list l.
    >>> median([3, 1, 2, 4, 5])
    3
    >>> median([-10, 4, 6, 1000, 10, 20])
    15.0
    """
    lst = sorted(lst)
    if len(lst) % 2 == 1:
        return lst[len(lst) // 2]
    else:
        return (lst[len(lst) // 2 - 1] + lst[len(lst) // 2]) / 2.0


def he_47_median(args: list[Any]) -> dict[str, Any]:
    return {"result": median(*args)}
