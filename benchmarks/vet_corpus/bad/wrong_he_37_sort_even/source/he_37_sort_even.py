"""This function takes a list l and returns a list l' such that l' is identical to l in the o."""


from typing import Any


def sort_even(lst: list[Any]) -> Any:
    """This function takes a list l and returns a list l' such that
    l' is identical to l in the odd indicies, while its values at the even indicies are equal
    to the values of the even indicies of l, but sorted.
    >>> sort_even([1, 2, 3])
    [1, 2, 3]
    >>> sort_even([5, 6, 3, 4])
    [3, 6, 5, 4]
    """
    evens = lst[::2]
    odds = lst[1::2]
    evens.sort()
    ans = []
    for e, o in zip(evens, odds, strict=False):
        ans.extend([e, o])
    if len(evens) >= len(odds):
        ans.append(evens[-1])
    return ans


def he_37_sort_even(args: list[Any]) -> dict[str, Any]:
    return {"result": sort_even(*args)}
