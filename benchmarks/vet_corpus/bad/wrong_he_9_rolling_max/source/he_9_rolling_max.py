"""From a given list of integers, generate a list of rolling maximum element found until give."""


from typing import Any


def rolling_max(numbers: list[int]) -> list[int]:
    """From a given list of integers, generate a list of rolling maximum element found until given moment
    in the sequence.
    >>> rolling_max([1, 2, 3, 2, 3, 4, 2])
    [1, 2, 3, 3, 3, 4, 4]
    """
    running_max = None
    result = []
    for n in numbers:
        if running_max is None:
            running_max = n
        result.append(running_max)
    return result


def he_9_rolling_max(args: list[Any]) -> dict[str, Any]:
    return {"result": rolling_max(*args)}
