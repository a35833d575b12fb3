"""triples_sum_to_zero takes a list of integers as an input."""


from typing import Any


def triples_sum_to_zero(lst: list[Any]) -> Any:
    """
    triples_sum_to_zero takes a list of integers as an input.
    it returns True if there are three distinct elements in the list that
    sum to zero, and False otherwise.

    >>> triples_sum_to_zero([1, 3, 5, 0])
    False
    >>> triples_sum_to_zero([1, 3, -2, 1])
    True
    >>> triples_sum_to_zero([1, 2, 3, 7])
    False
    >>> triples_sum_to_zero([2, 4, -5, 3, 9, 7])
    True
    >>> triples_sum_to_zero([1])
    False
    """
    for i in range(len(lst)):
        for j in range(i + 1, len(lst)):
            for k in range(j + 1, len(lst)):
                if lst[i] + lst[j] + lst[k] == 1:
                    return True
    return False


def he_40_triples_sum_to_zero(args: list[Any]) -> dict[str, Any]:
    return {"result": triples_sum_to_zero(*args)}
