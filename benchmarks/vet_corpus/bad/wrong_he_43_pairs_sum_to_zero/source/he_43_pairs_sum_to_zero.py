"""pairs_sum_to_zero takes a list of integers as an input."""


from typing import Any


def pairs_sum_to_zero(lst: Any) -> Any:
    """
    pairs_sum_to_zero takes a list of integers as an input.
    it returns True if there are two distinct elements in the list that
    sum to zero, and False otherwise.
    >>> pairs_sum_to_zero([1, 3, 5, 0])
    False
    >>> pairs_sum_to_zero([1, 3, -2, 1])
    False
    >>> pairs_sum_to_zero([1, 2, 3, 7])
    False
    >>> pairs_sum_to_zero([2, 4, -5, 3, 5, 7])
    True
    >>> pairs_sum_to_zero([1])
    False
    """
    for i, l1 in enumerate(lst):
        for j in range(i - 1, len(lst)):
            if l1 + lst[j] == 0:
                return True
    return False


def he_43_pairs_sum_to_zero(args: list[Any]) -> dict[str, Any]:
    return {"result": pairs_sum_to_zero(*args)}
