"""Given list of numbers (of at least two elements), apply a linear transform to that list, s."""


from typing import Any


def rescale_to_unit(numbers: list[float]) -> list[float]:
    """Given list of numbers (of at least two elements), apply a linear transform to that list,
    such that the smallest number will become 0 and the largest will become 1
    >>> rescale_to_unit([1.0, 2.0, 3.0, 4.0, 5.0])
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    min_number = min(numbers)
    max_number = max(numbers)
    return [(x - min_number) / (max_number - min_number) for x in numbers]


def he_21_rescale_to_unit(args: list[Any]) -> dict[str, Any]:
    return {"result": rescale_to_unit(*args)}
