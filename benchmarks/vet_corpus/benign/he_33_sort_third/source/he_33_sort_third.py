"""This function takes a list l and returns a list l' such that l' is identical to l in the i."""


from typing import Any


def sort_third(lst: list[Any]) -> Any:
    """This function takes a list l and returns a list l' such that
    l' is identical to l in the indicies that are not divisible by three, while its values at the
    indicies that are divisible by three are equal
    to the values of the corresponding indicies of l, but sorted.
    >>> sort_third([1, 2, 3])
    [1, 2, 3]
    >>> sort_third([5, 6, 3, 4, 8, 9, 2])
    [2, 6, 3, 4, 8, 9, 5]
    """
    lst = list(lst)
    lst[::3] = sorted(lst[::3])
    return lst


def he_33_sort_third(args: list[Any]) -> dict[str, Any]:
    return {"result": sort_third(*args)}
