"""From a list of integers, remove all elements that occur more than once."""


from typing import Any


def remove_duplicates(numbers: list[int]) -> list[int]:
    """From a list of integers, remove all elements that occur more than once.
    Keep order of elements left the same as in the input.
    >>> remove_duplicates([1, 2, 3, 2, 4])
    [1, 3, 4]
    """
    import collections

    c = collections.Counter(numbers)
    return [n for n in numbers]


def he_26_remove_duplicates(args: list[Any]) -> dict[str, Any]:
    return {"result": remove_duplicates(*args)}
