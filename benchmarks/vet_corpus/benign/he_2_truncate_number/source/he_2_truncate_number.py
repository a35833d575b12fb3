"""Given a positive floating point number, it can be decomposed into and integer part (larges."""


from typing import Any


def truncate_number(number: float) -> float:
    """Given a positive floating point number, it can be decomposed into
    and integer part (largest integer smaller than given number) and decimals
    (leftover part always smaller than 1).

    Return the decimal part of the number.
    >>> truncate_number(3.5)
    0.5
    """
    return number % 1.0


def he_2_truncate_number(args: list[Any]) -> dict[str, Any]:
    return {"result": truncate_number(*args)}
