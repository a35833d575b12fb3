"""Insert a number 'delimeter' between every two consecutive elements of input list `numbers'."""


from typing import Any


def intersperse(numbers: list[int], delimeter: int) -> list[int]:
    """Insert a number 'delimeter' between every two consecutive elements of input list `numbers'
    >>> intersperse([], 4)
    []
    >>> intersperse([1, 2, 3], 4)
    [1, 4, 2, 4, 3]
    """
    if not numbers:
        return []
    result = []
    for n in numbers[:-1]:
        result.append(n)
        result.append(delimeter)
    result.append(numbers[-1])
    return result


def he_5_intersperse(args: list[Any]) -> dict[str, Any]:
    return {"result": intersperse(*args)}
