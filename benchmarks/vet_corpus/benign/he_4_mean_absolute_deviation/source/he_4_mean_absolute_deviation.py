"""For a given list of input numbers, calculate Mean Absolute Deviation around the mean of th."""


from typing import Any


def mean_absolute_deviation(numbers: list[float]) -> float:
    """For a given list of input numbers, calculate Mean Absolute Deviation
    around the mean of this dataset.
    Mean Absolute Deviation is the average absolute difference between each
    element and a centerpoint (mean in this case):
    MAD = average | x - x_mean |
    >>> mean_absolute_deviation([1.0, 2.0, 3.0, 4.0])
    1.0
    """
    mean = sum(numbers) / len(numbers)
    return sum(abs(x - mean) for x in numbers) / len(numbers)


def he_4_mean_absolute_deviation(args: list[Any]) -> dict[str, Any]:
    return {"result": mean_absolute_deviation(*args)}
